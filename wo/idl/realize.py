"""Realise IDL-expressions (or bags of words) with an n-gram LM: the Python front end of the
Cython search (wo/_fast/_idl.pyx; Soricut & Marcu 2005, sections 3-4) and the batch run.

>>> from wo.lm.model import LanguageModel
>>> r = IDLRealizer(LanguageModel.load("lm.wolm"), algorithm="astar")
>>> r.realize(parse("I(finally, C(L(C(the, captives)), were, released))")).text
'finally the captives were released'
"""
from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from .. import system

from .expr import BOS, EOS, Expr, IDLSyntaxError, bag, parse, sentence_wrapped
from .graph import compile_expr, bag_unfolding

ALGORITHMS = ("astar", "greedy-astar", "beam", "bfs")
INPUT_FORMATS = ("idl", "bag")
OUTPUT_FORMATS = ("text", "jsonl")


@dataclass
class Realization(system.Result):
    """One realisation (a :class:`wo.system.Result`).  tokens: the words (``<s>``/``</s>`` left
    out); score: their LM log10 probability with ``<s>`` and ``</s>`` (as ``wo lm score
    --per-sentence``; also :attr:`log10_prob`); states: states unfolded; full_unfolding: states
    of the full unfolding (exact when full_unfolding_exact, else a lower bound: the count
    stopped at its cap); seconds: wall clock of the search (compiling the graph and the
    heuristic's tables included, counting the full unfolding not); status: ok | max-states |
    timeout | no-path | error; message: what went wrong (status error); search_seconds: the
    unfolding alone (Cython)."""

    states: int = 0
    full_unfolding: int = -1
    full_unfolding_exact: bool = False
    search_seconds: float = 0.0

    @property
    def log10_prob(self) -> float:
        """The LM log10 probability of the realisation (its score)."""
        return self.score

    @classmethod
    def error(cls, message: str) -> "Realization":
        """The record of an expression that could not be realised (status "error")."""
        return cls([], score=float("nan"), status="error", message=message)

    def to_json(self) -> str:
        """The JSONL record: the common fields (:meth:`wo.system.Result.base_record`: tokens,
        score, status, seconds, pops, message) and text, log10_prob (the score; null, as the
        score, for an error), states, full_unfolding, full_unfolding_exact, search_seconds."""
        d = {"text": self.text, **self.base_record(), "log10_prob": system.json_number(self.score),
             "states": self.states, "full_unfolding": self.full_unfolding,
             "full_unfolding_exact": self.full_unfolding_exact, "search_seconds": self.search_seconds}
        return json.dumps(d, ensure_ascii=False)


DEFAULT_TIMEOUT = 30.0        # seconds per expression: a 5,000-word bag ends in the greedy completion within a minute
DEFAULT_MAX_MEMORY = 1536.0   # MiB of search memory per expression (as wo linearize's dependency search)


class IDLRealizer(system.System):
    """Search for the most probable string of an IDL-expression under an n-gram LM.

    lm: :class:`wo.lm.model.LanguageModel` (order 1-6); algorithm: astar (IDL-NGLM-A*,
    exact), greedy-astar (A*_k with ``k``), beam (B_p with ``beam`` = p, e.g. 0.1), bfs
    (IDL-NGLM-BFS, exhaustive); max_states: bound on the states created; max_memory: MiB of
    search memory per expression (default 1536, so a worker stays under about 2 GB; None or 0:
    none); timeout: seconds per expression (default 30; 0 = none); past a bound the best
    completed path, else the greedy completion of the longest state, is returned (status
    max-states or timeout); count_unfolding: also count the full unfolding (bags:
    a closed form; other expressions: an unscored unfolding of at most ``count_cap`` states);
    heuristic_limit: bound on candidate contexts x types of the A* heuristic (beyond it the
    heuristic uses shorter contexts and is no longer admissible).
    Raises ValueError for an unknown algorithm or a bad parameter.
    """

    def __init__(self, lm, algorithm: str = "astar", k: int = 5, beam: float = 0.1,
                 max_states: int = 1_000_000, timeout: float = DEFAULT_TIMEOUT, count_unfolding: bool = True,
                 count_cap: int = 200_000, heuristic_limit: int = 4_000_000, lookahead: bool = True,
                 max_memory: Optional[float] = DEFAULT_MAX_MEMORY):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {algorithm!r} ({', '.join(ALGORITHMS)})")
        if not 0.0 < beam <= 1.0:
            raise ValueError(f"--beam must be a probability in (0, 1], got {beam}")
        if k < 0 or max_states < 1:
            raise ValueError("--k must be >= 0 and --max-states >= 1")
        self.lm, self.algorithm, self.k, self.beam = lm, algorithm, k, beam
        if max_memory is not None and not max_memory >= 0:
            raise ValueError(f"--max-memory must be >= 0 MiB, got {max_memory}")
        if not timeout >= 0:
            raise ValueError(f"--timeout must be >= 0 seconds, got {timeout}")
        self.max_states, self.timeout = max_states, timeout
        self.max_memory = float(max_memory or 0.0)
        self.count_unfolding, self.count_cap, self.heuristic_limit = count_unfolding, count_cap, heuristic_limit
        self.lookahead = lookahead

    name = "idl"
    errors = (MemoryError,)

    @classmethod
    def load(cls, path: Optional[str] = None, verify: bool = True, **options) -> "IDLRealizer":
        """A realizer over the LM file at ``path`` (None: the shipped English 4-gram,
        :func:`wo.model.default_model` "lm"); verify: check the LM's checksum; options: the
        constructor's.  Raises LMError, FileNotFoundError, ModelError (no shipped LM), ValueError."""
        from ..lm.model import LanguageModel
        from ..model import default_model

        return cls(LanguageModel.load(path or default_model("lm"), verify=verify), **options)

    def decode_item(self, item) -> "Realization":
        """The realisation of a batch item (text, line, input format) (:func:`expression_of`)."""
        text, line, fmt = item
        return self.realize(expression_of(text, line, fmt))

    def fallback(self, item, message: str) -> "Realization":
        """The error record of an item that failed (out of memory)."""
        return Realization.error(message or "out of memory")

    def search_for(self, e: Expr):
        """(compiled graph, IDLSearch) for an expression wrapped in ``<s>`` ... ``</s>``."""
        from .._fast._idl import IDLSearch, build_candidates

        g = compile_expr(sentence_wrapped(e))
        type_lm = self.lm.word_ids(g.types)
        tid = {t: i for i, t in enumerate(g.types)}
        bos_t, eos_t = tid.get(BOS, -1), tid.get(EOS, -1)
        alphabet = np.array([i for i, t in enumerate(g.types) if t not in (BOS, EOS)], dtype=np.int32)
        K = min(self.lm.order - 1, 5)
        while K > 0 and len(g.types) * (max(len(alphabet), 1) ** K) > self.heuristic_limit:
            K -= 1
        if self.algorithm == "bfs":
            K = 0                                       # BFS uses no heuristic
        ctx, lp, order = build_candidates(self.lm.core, type_lm, alphabet, bos_t, K)
        tok_lm = type_lm[g.tok_type]
        return g, IDLSearch(g, self.lm.core, tok_lm, ctx, lp, order, bos_t, eos_t, True, alphabet)

    def realize(self, e: Expr) -> Realization:
        """The best realisation of ``e`` (see the class docstring).  Raises MemoryError."""
        t0 = time.perf_counter()
        g, s = self.search_for(e)
        res = s.run(self.algorithm, self.k, float(np.log10(self.beam)), self.max_states, self.timeout,
                    False, self.lookahead, self.max_memory)
        secs = time.perf_counter() - t0
        toks = [g.tokens[t] for t in res["tokens"]]
        words = [t for t in toks if t not in (BOS, EOS)]
        full, exact = -1, False
        if self.count_unfolding:
            if self.algorithm == "bfs" and res["status"] == "ok":
                full, exact = res["created"], True
            elif g.is_bag:
                cnt = Counter(t for t in g.tokens if t not in (BOS, EOS))
                full, exact = bag_unfolding(list(cnt.values()), self.lm.order - 1), True
            else:   # an unscored unfolding, within what is left of the expression's time
                left = self.timeout - (time.perf_counter() - t0) if self.timeout > 0 else 0.0
                if self.timeout <= 0 or left > 0:
                    c = s.run("bfs", 0, 0.0, self.count_cap, max(left, 0.0), True, True, self.max_memory)
                    full, exact = c["created"], c["status"] == "ok"
        return Realization(words, res["states"], full, exact, res["seconds"], score=self.lm.score(words),
                           seconds=secs, status=res["status"])


# ------------------------------------------------------------------ batch (CLI)
@dataclass
class Line:
    """One input line: its number (1-based) and text (None: not valid UTF-8)."""

    line: int
    text: Optional[str]


def read_lines(path: str) -> List[Line]:
    """Every line of a text file (``-`` = stdin; .gz/.xz read transparently); a line that is not
    valid UTF-8 has text None (its expression fails alone, :func:`expression_of`)."""
    from ..io.text import raw_lines

    raws = raw_lines(path)
    out = []
    for i, raw in enumerate(raws):
        try:
            out.append(Line(i + 1, raw.decode("utf-8").rstrip("\r")))
        except UnicodeDecodeError:
            out.append(Line(i + 1, None))
    return out


MAX_DEPTH = 200   # operators nested deeper than this are refused (the parser and the IDL-graph recurse)


def _depth(text: str) -> int:
    """The deepest nesting of parentheses in a line (an upper bound of the operator nesting)."""
    d = most = 0
    for ch in text:
        if ch == "(":
            d += 1
            most = max(most, d)
        elif ch == ")":
            d -= 1
    return most


def expression_of(text: str, line: int, input_format: str) -> Expr:
    """Parse one input line: an IDL-expression or a bag (space-separated words).
    Raises IDLSyntaxError (with line:column: also for a line that is not UTF-8, text None, and
    one nested deeper than MAX_DEPTH) or ValueError (empty bag)."""
    if text is None:
        raise IDLSyntaxError("invalid UTF-8", line, 1)
    if input_format == "bag":
        toks = text.split()
        if not toks:
            raise ValueError("empty bag")
        return bag(toks)
    if not text.strip():
        raise IDLSyntaxError("empty line: expression expected", line, 1)
    if _depth(text) > MAX_DEPTH:
        raise IDLSyntaxError(f"expression nested more than {MAX_DEPTH} levels deep", line, 1)
    return parse(text, line)


def run(lm_path: Optional[str], input_path: str, output_path: str, input_format: str = "idl",
        output_format: str = "text", jobs: int = 1, on_error: str = "fallback", backend: str = "loky",
        scheduler: Optional[str] = None, report=lambda m: None, progress=None, **opts):
    """Realise every line of ``input_path`` into ``output_path`` (one record per input line, in
    order, written atomically, on the batch spine :func:`wo.io.batch.process`).  A malformed
    line is reported as ``file:line:column: message`` and its record follows ``on_error``: an
    empty line (text; an expression that cannot be read has no words to fall back on, so
    fallback and skip write the same) or a record with status "error" (jsonl), or with "fail"
    nothing is written; the other lines are realised.  lm_path None: the shipped 4-gram.
    jobs, backend ("loky" or "dask"), scheduler (a Dask address): :func:`wo.io.batch.map_batches`.
    opts: :class:`IDLRealizer` parameters.  Returns the batch Summary (input_format
    "IDL-expressions" or "bags").
    Raises ValueError for a bad format or option, LMError/FileNotFoundError for the LM,
    FailFast / Interrupted as :func:`wo.io.batch.process`.
    jobs as joblib counts them (-1 every core, -2 all but one, capped at the cores:
    :func:`wo.io.batch.resolve_jobs`); ValueError for jobs 0, SameFileError (a ValueError) for an
    output that is the input.
    """
    from ..io.batch import resolve_jobs

    jobs = resolve_jobs(jobs)   # -1: every core; 0 refused (ValueError) before any work
    from ..io.batch import decode_system, load_system, process
    from ..model import default_model

    lm_path = lm_path or default_model("lm")
    if input_format not in INPUT_FORMATS or output_format not in OUTPUT_FORMATS:
        raise ValueError(f"formats: input {INPUT_FORMATS}, output {OUTPUT_FORMATS}")
    # fail early on the LM and the options; with --jobs 1 this realizer decodes
    load_system(IDLRealizer, lm_path, opts, verify=True)
    items = read_lines(input_path)

    def prepare(i, it):
        try:
            expression_of(it.text, it.line, input_format)
        except IDLSyntaxError as exc:
            it.line = f"{it.line}:{exc.column}"          # reported as file:line:column
            return exc.message
        except ValueError as exc:
            return str(exc)
        return it, (it.text, it.line, input_format)

    def decode_many(payloads, on_batch):
        decode_system(IDLRealizer, lm_path, opts, payloads, on_batch, jobs=jobs, chunk=4, backend=backend,
                      scheduler=scheduler, cost=lambda p: len(p[0]))

    def fallback(it, msg):
        return Realization.error(msg)

    def fmt(it, r):
        return r.to_json() if output_format == "jsonl" else r.text

    summ = process(items, input_path, output_path, prepare=prepare, decode_many=decode_many,
                   fallback=fallback, format_record=fmt, on_error=on_error,
                   keep_skipped=output_format == "jsonl", report=report, progress=progress)
    summ.input_format = "IDL-expressions" if input_format == "idl" else "bags"
    return summ
