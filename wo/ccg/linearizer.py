"""CCG word ordering front end: :class:`Linearizer` (Python API) and the batch run behind
``wo ccg linearize`` (Zhang & Clark 2015, §3, decoding Algorithm 1 with DP-signature pruning).

A CCG model is a :class:`wo.model.Model` whose header has ``system: "ccg"`` and ``ccg``: the
grammar read off the training derivations (:meth:`wo.ccg.grammar.Grammar.to_json`), the head
child of every binary rule instance and the lexical options (:class:`wo.ccg.instance.CCGTables`).
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence

import numpy as np

from .. import system
from ..io.batch import Summary, decode_system, load_system, process
from ..io.items import Item, read_items, validate
from ..io.trees import permutation, remap_heads
from ..model import Model, ModelError, decode_option, resolve_lm
from .auto import format_derivation, read_auto
from .core import CCGSearch
from .grammar import Grammar
from .instance import CCGTables, build_tree, dependency_heads, glue, make_instance

STATUS_NAMES = {0: "ok", 1: "fallback", 2: "timeout", 3: "completed", 4: "glued", 5: "memory"}
DEFAULT_BEAM_FACTOR = 6.0
DEFAULT_BUDGET_FACTOR = 30.0
DEFAULT_COMPLETE_BEAM = 16
BAG_SEARCHES = ("model", "ccg")   # bag_search: the search the model names, or its own
SYSTEM = "ccg"
CCG_FEATURE_SET = "zc2015-table1-v1"
INPUT_FORMATS = ("auto", "bag", "conllu")
OUTPUT_FORMATS = ("text", "auto", "jsonl")


def tables_of(model: Model) -> CCGTables:
    """The :class:`CCGTables` stored in a CCG model's header (cached on the model object).
    Raises ModelError when the model is not a CCG model."""
    got = getattr(model, "_ccg_tables", None)
    if got is not None:
        return got
    head = model.header
    name = model.path or "the model"
    if head.get("system") != SYSTEM or "ccg" not in head:
        raise ModelError(f"{name} is not a CCG model (train one with 'wo ccg train')")
    ent = head["ccg"]
    if ent.get("feature_set") != CCG_FEATURE_SET:
        raise ModelError(f"{name}: CCG feature set {ent.get('feature_set')!r}, expected {CCG_FEATURE_SET!r}")
    try:
        g = Grammar.from_json(ent["grammar"])
        heads = {(l, r, p): int(h) for l, r, p, h in ent["heads"]}
        opts = ent.get("options", {})
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{name}: bad CCG grammar in the header ({exc})") from None
    t = CCGTables(g, heads, model.tagdict, **opts)
    model._ccg_tables = t
    return t


@dataclass
class Result(system.Result):
    """One linearized sentence (a :class:`wo.system.Result`; ``Result(tokens, order, heads, pos,
    categories, derivation, edges, score=..., status=..., pops=..., seconds=..., message=...)``).

    tokens: list[str] in output order; order: list[int], order[j] = input index of output
    token j; heads: list[int] 1-based heads read off the derivation (0 = root); pos: list[str];
    categories: list[str] lexical category per output token; derivation: the tree
    (:class:`wo.ccg.auto.Node`/``Leaf``; pieces of a fallback output joined by glue nodes of
    category ``X``; None for an error); score: scaled score F(e)/|e|; status: "ok" (goal
    popped), "completed" (goal built by the completion phases), "glued" (built by the last
    completion pass, which may join pieces no rule combines with glue nodes of category X),
    "fallback" (greedy default output, section 3.4), "timeout", "error"; pops, edges: int; seconds: float; message: str.
    """

    order: List[int]
    heads: List[int]
    pos: List[str]
    categories: List[str] = field(default_factory=list)
    derivation: object = None
    edges: int = 0

    def parsed_score(self) -> Optional[float]:
        """For a :meth:`Linearizer.parse` result: the model's unscaled score F (scaled x
        |derivation actions|) of its best derivation of the given order, or None when the parse
        could not keep that order (or built no goal: pieces joined by glue)."""
        if self.order != list(range(len(self.tokens))) or self.status not in ("ok", "completed"):
            return None
        d = self.derivation      # one action per node: lexical assignment, binary or unary rule
        actions = len(d.leaves()) + (len(d.nodes()) if hasattr(d, "nodes") else 0)
        return self.score * actions

    @classmethod
    def input_order(cls, words: Sequence[str], pos, message: str) -> "Result":
        """The error fallback: the words in input order, status "error", no derivation."""
        n = len(words)
        return cls(list(words), list(range(n)), [0] + [1] * (n - 1) if n else [],
                   [p or "_" for p in (pos or [None] * n)], [], None, 0, score=0.0, status="error", pops=0,
                   seconds=0.0, message=message)


class Linearizer(system.System):
    """CCG word orderer over a trained model (Zhang & Clark 2015, §3, Algorithm 1).

    model: a CCG :class:`wo.model.Model`; beam_factor k: chart of k*n edges (one per
    DP-signature); budget_factor: pops per input word (or max_pops absolute); timeout: seconds
    per sentence (0 none); complete_beam: beam of the completion phases run when the budget
    ends without a goal (every output contains each input word exactly once either way); lm:
    the n-gram LM whose scores are features (a :class:`wo.lm.LanguageModel`, a path, "none";
    default: the model's own, see :func:`wo.model.resolve_lm`); patience_factor: pops per word
    spent after the first goal edge looking for a better-scored one (0: stop at the first goal,
    as Algorithm 1); max_memory: search memory per sentence in MiB (default 1536; past it the
    search stops, status "memory", see :class:`wo.dep.Linearizer`).  Options left None take
    the model header's ``decode`` values.  bag_search: "model" (default): a bag of words with
    no POS given is decoded by the search the model's decode settings name (``decode.bag``,
    :func:`wo.model.bag_spec`: GYRO's n-best under an n-gram LM, each string parsed by this
    model with its order fixed, :meth:`parse`, and reranked by log10 p + w F; the output is
    the best string's derivation), when it names one; "ccg": always this model's own search.
    Raises ModelError when the model is not a CCG model, or its LM or its bag search's LM is
    missing or does not fit; ValueError for a max_memory not positive or another bag_search.
    """

    def __init__(self, model: Model, beam_factor: Optional[float] = None,
                 budget_factor: Optional[float] = None, max_pops: Optional[int] = None,
                 timeout: float = 0.0, complete_beam: Optional[int] = None, lm=None,
                 patience_factor: Optional[float] = None, max_memory: Optional[float] = None,
                 bag_search: str = "model"):
        from .._fast._search import edges_for_memory

        self.model = model
        self.tables = tables_of(model)
        dec = model.header.get("decode", {})
        self.beam_factor = decode_option(beam_factor, dec, "beam_factor", DEFAULT_BEAM_FACTOR)
        self.budget_factor = decode_option(budget_factor, dec, "budget_factor", DEFAULT_BUDGET_FACTOR)
        self.max_pops = max_pops
        self.timeout = float(timeout or 0.0)
        self.complete_beam = decode_option(complete_beam, dec, "complete_beam", DEFAULT_COMPLETE_BEAM, int)
        self.patience_factor = decode_option(patience_factor, dec, "patience_factor", 0.0)
        self.lm = resolve_lm(model, lm)
        self.core = CCGSearch(self.tables, model.weights, model.hash_bits, lm=self.lm)
        self.core.search.edge_limit = edges_for_memory(max_memory)
        from ..model import bag_spec
        if bag_search not in BAG_SEARCHES:
            raise ValueError(f"bag_search: one of {BAG_SEARCHES}")
        self.bag_search = bag_search
        spec = bag_spec(model) if bag_search == "model" else None
        self.bag = None
        if spec:
            from ..gyro.bag import make_bag_search

            self.bag = make_bag_search(self, spec, timeout=self.timeout, system="ccg", option="--bag-search ccg")

    name = "ccg"

    @classmethod
    def load(cls, path: Optional[str] = None, verify: bool = True, **options) -> "Linearizer":
        """Load a model file (memory-mapped; None: the shipped CCG model) and build a linearizer;
        see :class:`Linearizer`.  verify: check the weights' checksum."""
        from ..model import default_model

        return cls(Model.load(path or default_model("ccg"), verify=verify), **options)

    def decode_item(self, item) -> Result:
        """:meth:`linearize` of a batch item (words, pos)."""
        return self.linearize(*item)

    def fallback(self, item, message: str) -> Result:
        """The words of a failed batch item (words, pos) in input order (status "error")."""
        return Result.input_order(item[0], item[1], message)

    def budget(self, n: int) -> int:
        """Pop budget for an n-word input (pops)."""
        return int(self.max_pops) if self.max_pops else max(8, int(self.budget_factor * n))

    def linearize(self, words: Sequence[str], pos: Optional[Sequence[Optional[str]]] = None) -> Result:
        """Order a bag of words; pos: optional n str-or-None (given POS tags).  Returns a
        :class:`Result`.  Raises ValueError for an empty input or a pos list of another length.
        A bag with no POS given goes to the model's bag search when it names one (the class
        doc); when none of its strings can be parsed, to this model's own search."""
        if self.bag is not None and len(words) > 1 and (pos is None or all(p is None for p in pos)):
            t0 = time.perf_counter()
            got = self.bag.realize(list(words))
            if got is not None:
                idx, res = got
                p = res.parse
                toks = [words[i] for i in idx]
                status = "ok"
                if p is None:   # no string parsed: GYRO's best, with pieces glued in its order if they keep it
                    p = self.parse(toks, budget_factor=self.bag.gyro.dep_budget)
                    status = p.status
                if p.order == list(range(len(toks))):
                    return Result(toks, idx, p.heads, p.pos, p.categories, p.derivation, p.edges,
                                  score=p.score, status=status, pops=res.pops + (p.pops if status != "ok" else 0),
                                  seconds=time.perf_counter() - t0)
        return self._decode(words, pos)

    def parse(self, words: Sequence[str], pos: Optional[Sequence[Optional[str]]] = None,
              budget_factor: float = 200.0) -> Result:
        """The model's best derivation of the words in the order given: the same search, with
        edges combining only when adjacent in ``words`` (a best-first CCG parser under the
        word-ordering model).  Its :meth:`Result.parsed_score` rates that string, so candidates
        of other systems (GYRO's n-best, :mod:`wo.gyro.bag`) can be reranked by it.

        words: list of n str in surface order; pos: optional n str-or-None; budget_factor: pops
        per word.  Returns a :class:`Result` whose order is 0..n-1 unless the search ran out of
        budget (its completion may then reorder).  Raises ValueError as :meth:`linearize`."""
        return self._decode(words, pos, budget_factor=budget_factor, fixed=True)

    def _decode(self, words, pos, budget_factor: Optional[float] = None, fixed: bool = False) -> Result:
        """One search over ``words`` (``fixed``: in their order, :meth:`parse`)."""
        n = len(words)
        if n == 0:
            raise ValueError("empty input")
        pos = list(pos) if pos is not None else [None] * n
        if len(pos) != n:
            raise ValueError("pos must have one entry per word")
        t0 = time.perf_counter()
        inst = make_instance(words, pos, self.tables)
        beam = max(1, int(round(self.beam_factor * n)))
        budget = self.budget(n) if budget_factor is None else max(8, int(budget_factor * n))
        order, trees, score, status, pops, edges = self.core.decode(
            inst, beam, budget, self.timeout, self.complete_beam,
            goal_patience=0 if fixed else int(self.patience_factor * n),
            tok_order=np.asarray(inst.canon, dtype=np.int32) if fixed else None)
        pieces, idx = [], []
        for t in trees:
            tree, ix = build_tree(t, inst, self.tables, words)
            pieces.append(tree)
            idx.extend(ix)
        root = glue(pieces)
        leaves = root.leaves()
        return Result([words[i] for i in idx], idx, dependency_heads(root), [x.pos for x in leaves],
                      [str(x.cat) for x in leaves], root, int(edges), score=float(score),
                      status=STATUS_NAMES[int(status)], pops=int(pops), seconds=time.perf_counter() - t0)


# ------------------------------------------------------------------ batch runs
def read_ccg_items(path: str, fmt: Optional[str] = None):
    """Read input sentences as :class:`wo.io.items.Item` (bags with their POS); returns (items,
    format used).  fmt: "auto" (CCGbank ``.auto``: the leaves' words and POS; a malformed
    derivation is an item with its ``file:line`` error), "bag", "conllu", or None (``.auto``
    when the first non-blank line starts with ``ID=``, else :func:`wo.io.items.read_items`'s
    detection).  Raises FileNotFoundError, ValueError for an unknown format."""
    from ..io.items import first_lines

    if fmt is not None and fmt not in INPUT_FORMATS:
        raise ValueError(f"unknown input format {fmt!r} (one of {INPUT_FORMATS})")
    if fmt is None:   # an invalid byte or a BOM does not change the format (the bad line is reported later)
        fmt = "bag"
        for raw in first_lines(path, 2000):
            ln = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
            if ln.strip():
                fmt = "auto" if ln.startswith("ID=") else None
                break
    if fmt == "auto":
        items = []
        for d in read_auto(path):
            if d.error is not None:
                items.append(Item([], [], [], d.sent_id, d.line, d.error))
            else:
                n = len(d)
                items.append(Item(d.words, d.pos, [-1] * n, d.sent_id, d.line))
        return items, "auto"
    return read_items(path, fmt or "auto")


def shuffle_item(item: Item, seed: int, index: int) -> Item:
    """An item's tokens shuffled with the fixed-seed permutation of sentence ``index``
    (:func:`wo.io.trees.permutation`, the shuffle of every evaluation input)."""
    perm = permutation(len(item.forms), seed, index)
    return Item([item.forms[p] for p in perm], [item.pos[p] for p in perm],
                remap_heads(item.heads, perm), item.sent_id, item.line, item.error)


def format_record(item: Item, res: Result, fmt: str) -> str:
    """One output record (no trailing newline): ``text`` tokens; ``auto`` the ID line and the
    derivation line (an error item: its words in input order under glue nodes of category X
    with lexical category X, or an empty line when it has no words, e.g. a malformed ``.auto``
    derivation); ``jsonl`` one JSON object (sent_id, tokens, heads, pos,
    categories, derivation, score, status, seconds, pops, edges, message)."""
    from .auto import Leaf

    if fmt == "text":
        return " ".join(res.tokens)
    root = res.derivation
    if root is None and res.tokens:
        root = glue([Leaf("X", p or "X", w) for w, p in zip(res.tokens, res.pos)])
    line = format_derivation(root) if root is not None else ""
    if fmt == "auto":
        return f"ID={item.sent_id} PARSER=WO NUMPARSE=1\n{line}"
    return json.dumps({"sent_id": item.sent_id, "tokens": res.tokens, "heads": res.heads, "pos": res.pos,
                       "categories": res.categories, "derivation": line, "score": res.score,
                       "status": res.status, "seconds": round(res.seconds, 6), "pops": res.pops,
                       "edges": res.edges, "message": res.message}, ensure_ascii=False)


def run(model_path: str, input_path: str, output_path: str, *, input_format: Optional[str] = None,
        output_format: str = "text", seed: int = 1, jobs: int = 1, on_error: str = "fallback",
        max_length: int = 200, backend: str = "loky", scheduler: Optional[str] = None,
        progress: Optional[Callable[[int], None]] = None,
        report: Callable[[str], None] = lambda m: print(f"wo: {m}", file=sys.stderr),
        **decode_opts) -> Summary:
    """Linearize every sentence of ``input_path`` into ``output_path`` (``-`` = stdin/stdout).

    Each sentence is shuffled with the fixed-seed permutation (``seed``, as every evaluation
    input) and decoded as a bag of words with its POS tags; one record per input sentence in
    input order (:func:`wo.io.batch.process`), ``output_format`` text, auto or jsonl; a bad
    sentence (malformed ``.auto`` derivation, empty, too long) is reported as
    ``file:line: message`` and its record follows ``on_error``.  jobs, backend ("loky" or
    "dask") and scheduler (a Dask address): :func:`wo.io.batch.map_batches`.  decode_opts: beam_factor,
    budget_factor, max_pops, timeout, complete_beam, patience_factor, lm (a path or "none").  Raises FileNotFoundError, ModelError,
    ValueError (bad format), FailFast / Interrupted as :func:`wo.io.batch.process`.
    Returns a :class:`wo.io.batch.Summary`.
    jobs as joblib counts them (-1 every core, -2 all but one, capped at the cores:
    :func:`wo.io.batch.resolve_jobs`); ValueError for jobs 0, SameFileError (a ValueError) for an
    output that is the input.
    """
    from ..io.batch import resolve_jobs

    jobs = resolve_jobs(jobs)   # -1: every core; 0 refused (ValueError) before any work
    if output_format not in OUTPUT_FORMATS:
        raise ValueError(f"unknown output format {output_format!r} (one of {OUTPUT_FORMATS})")
    # not a CCG model, a missing or unfit LM: fail before any work; loaded once here, and with
    # jobs=1 this linearizer decodes (wo.io.batch.load_system)
    from ..model import default_model

    model_path = model_path or default_model("ccg")
    load_system(Linearizer, model_path, decode_opts, verify=True)
    items, fmt = read_ccg_items(input_path, input_format)

    def prepare(i, it):
        msg = it.error or validate(it, max_length)
        if msg is not None:
            return msg
        sh = shuffle_item(it, seed, i)
        return sh, (sh.forms, sh.pos)

    def decode_many(payloads, on_batch):
        decode_system(Linearizer, model_path, decode_opts, payloads, on_batch, jobs=jobs, chunk=16,
                      backend=backend, scheduler=scheduler, cost=lambda it: len(it[0]) ** 2)

    where = {id(it): i for i, it in enumerate(items)}

    def fallback(it, msg):   # the same fixed-seed shuffle as decoding: an .auto file is the reference order
        perm = permutation(len(it.forms), seed, where[id(it)])   # heads are not read: they may be bad
        return Result.input_order([it.forms[j] for j in perm], [it.pos[j] for j in perm] if it.pos else None, msg)

    return process(items, input_path, output_path, prepare=prepare, decode_many=decode_many,
                   fallback=fallback,
                   format_record=lambda it, res: format_record(it, res, output_format),
                   on_error=on_error, keep_skipped=output_format == "jsonl", report=report,
                   progress=progress, summary=Summary(input_format=fmt))
