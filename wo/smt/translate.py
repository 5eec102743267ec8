"""Chinese->English translation with a trained synthesis model: the Python front end of
``wo smt translate`` (segmentation, source parsing, translation options, best-first synthesis
on the shared core, detokenization), batch-parallel over sentences.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .. import system
from ..model import Model, ModelError, resolve_lm
from .synth import DEFAULTS, SYSTEM, SMTSearch, Source, build_instance

SHIPPED_MODEL = "wo-tatoeba-smt.wo"
MAX_LENGTH = 100


def default_model_path() -> str:
    """The shipped SMT model ``wo-tatoeba-smt.wo`` in the model directories of
    :func:`wo.resources.model_dirs` (``$WO_MODEL_DIR``, ``corpora/models`` of a clone, the
    wo-models-smt package).  Raises ModelError naming the package to install when absent."""
    from ..model import require_model

    return require_model(SHIPPED_MODEL, "SMT model")


def _beside(model: Model, name: str) -> str:
    """A file named in the model header, looked up beside the model file."""
    if os.path.isabs(name) and os.path.exists(name):
        return name
    base = os.path.dirname(os.path.abspath(model.path or "."))
    p = os.path.join(base, name)
    if not os.path.exists(p):
        raise ModelError(f"{model.path}: needs {name}, which is not beside it ({p})")
    return p


@dataclass
class Translation(system.Result):
    """One output (a :class:`wo.system.Result`): tokens (English, output order), detok (them
    detokenized; also :attr:`text`), heads (0-based, -1 root), options (translation options
    used); score, status ("ok", "completed", "fallback", "timeout", "memory", "error"), pops,
    seconds, message by keyword; unknown (the source words no phrase-table entry covers: they
    have no translation and are left out of the text, or copied when no word of the sentence
    has one; jsonl output lists them)."""

    detok: str = ""
    heads: List[int] = field(default_factory=list)
    options: int = 0
    unknown: List[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The output as one string: the detokenized English (:attr:`detok`)."""
        return self.detok

    @classmethod
    def error(cls, message: str) -> "Translation":
        """The record of a sentence that could not be translated (empty, status "error")."""
        return cls([], "", [], 0, status="error", message=message)


_STATUS = {0: "ok", 3: "completed", 1: "fallback", 2: "timeout", 4: "completed", 5: "memory"}


class Translator(system.System):
    """A loaded SMT system: model, phrase table, LM and the Chinese parser.

    model: path (default: the shipped model); lm: path, "none", a LanguageModel, or None (the
    model's own LM, beside it); table: a PhraseTable or path (default: the model's);
    parser: a :class:`wo.smt.parse.Parser` or None (the shipped Chinese parser); decoding
    settings default to the model header's; rerank: apply the model's n-best reranking
    weights (``header["rerank"]``, :mod:`wo.smt.rerank`) when it has them; lexicon, model1:
    the reranker's link and EM :class:`wo.smt.lexicon.Lexicon` (default: the model's files,
    beside it); timeout: seconds per sentence of the search (0 = none; its completions stop at
    1.5 x); max_memory: the search's memory per sentence in MiB (default 1536, status "memory").
    Raises ModelError for a model that is not an SMT model or whose files are missing, and
    naming the file for a phrase table that is cut, corrupt or not a wo phrase table.
    """

    def __init__(self, model: Optional[str] = None, lm=None, table=None, parser=None,
                 beam_factor: Optional[float] = None, max_pops: Optional[int] = None,
                 beta: Optional[float] = None, complete_beam: Optional[int] = None, rerank: bool = True,
                 lexicon=None, model1=None, timeout: float = 0.0, max_memory: Optional[float] = None):
        from .._fast._search import edges_for_memory
        from .phrases import PhraseTable

        if parser is None:            # the shipped Chinese parser and segmenter: the smt extra
            from ..extras import require

            require("smt", "wo smt translate", modules=["spacy", "jieba", "opencc"])
        m = model if isinstance(model, Model) else Model.load(model or default_model_path())
        if m.header.get("system") != SYSTEM:
            raise ModelError(f"{m.path}: not an SMT model (system {m.header.get('system')!r})")
        self.model = m
        smt, dec = m.header["smt"], m.header.get("decode", {})
        self.opts = dict(DEFAULTS, max_len=smt["max_len"], lam=smt["lam"], beta=smt["beta"],
                         beam_factor=dec.get("beam_factor", DEFAULTS["beam_factor"]),
                         max_pops=dec.get("max_pops", DEFAULTS["max_pops"]),
                         complete_beam=dec.get("complete_beam", DEFAULTS["complete_beam"]))
        for k, v in (("beam_factor", beam_factor), ("max_pops", max_pops), ("beta", beta),
                     ("complete_beam", complete_beam)):
            if v is not None:
                self.opts[k] = v
        if table is None or isinstance(table, str):
            try:
                table = PhraseTable.load(table or _beside(m, smt["phrase_table"]))
            except ValueError as exc:   # a cut, corrupt or foreign table: a bad model file, named
                raise ModelError(str(exc)) from None
        self.table = table
        self.lm = resolve_lm(m, lm)
        self._parser = parser
        self.core = SMTSearch(m.weights, m.hash_bits, None, self.lm)
        self.core.search.edge_limit = edges_for_memory(max_memory)
        self.timeout = float(timeout or 0.0)
        from .rerank import LMBR_SCALE, weights_vector
        rr = m.header.get("rerank")
        self.nbest = int(m.header.get("rerank_nbest", 50))
        self.lmbr_scale = float(m.header.get("rerank_lmbr_scale", LMBR_SCALE))
        self.rerank = weights_vector(rr) if (rr and rerank) else None
        # the reranker's lexicons: their paths checked here, the files read at first use
        self._lexicon_paths = {}
        if self.rerank is not None:
            for name, given in (("lexicon", lexicon), ("model1", model1)):
                if given is None and smt.get(name):
                    self._lexicon_paths[name] = _beside(m, smt[name])
        self._lexicon, self._model1 = lexicon, model1

    def _load_lexicon(self, name: str):
        from .lexicon import Lexicon

        return Lexicon.load(self._lexicon_paths[name])

    @property
    def lexicon(self):
        """The reranker's link lexicon (:class:`wo.smt.lexicon.Lexicon`; read at first use) or None."""
        if self._lexicon is None and "lexicon" in self._lexicon_paths:
            self._lexicon = self._load_lexicon("lexicon")
        return self._lexicon

    @property
    def model1(self):
        """The reranker's IBM model 1 tables (read at first use) or None."""
        if self._model1 is None and "model1" in self._lexicon_paths:
            self._model1 = self._load_lexicon("model1")
        return self._model1

    name = "smt"
    errors = (Exception,)

    @classmethod
    def load(cls, path: Optional[str] = None, verify: bool = True, **options) -> "Translator":
        """A translator of the model at ``path`` (None: the shipped model); options: the
        constructor's (lm, beam_factor, ...).  Raises ModelError and what loading its files raises."""
        return cls(Model.load(path or default_model_path(), verify=verify), **options)

    def decode_item(self, item) -> Translation:
        """The translation of one segmented sentence (list of Chinese tokens)."""
        return self.translate_tokens([item])[0]

    def fallback(self, item, message: str) -> Translation:
        """The error record of a sentence that failed."""
        return Translation.error(message)

    def decode_batch(self, batch) -> List[Translation]:
        """Translate a batch of segmented sentences with one parser call; a failing batch is
        retried sentence by sentence, so one bad sentence gets an "error" result (the
        exception's type and text) and the others are kept."""
        try:
            return self.translate_tokens(list(batch))
        except Exception:               # noqa: BLE001 - retried one by one below
            res = []
            for toks in batch:
                try:
                    res.append(self.decode_item(toks))
                except Exception as e:  # noqa: BLE001 - reported per sentence
                    res.append(self.fallback(toks, f"{type(e).__name__}: {e}"))
            return res

    @property
    def parser(self):
        """The Chinese parser (loaded at first use)."""
        if self._parser is None:
            from .parse import load_parser
            self._parser = load_parser("zh")
        return self._parser

    def translate_parsed(self, src: Source) -> Translation:
        """Translate a segmented and parsed source sentence."""
        import time

        from .prep import detokenize

        t0 = time.perf_counter()
        o = self.opts
        options = self.table.options(src.tokens, max_len=int(o["max_len"]), lam=float(o["lam"]))
        if not options:   # nothing the phrase table knows: the source words are copied (an error record)
            toks = list(src.tokens)
            return Translation(toks, " ".join(toks), [0] + [1] * (len(toks) - 1) if toks else [], 0, status="error",
                               message="no translation options for any source word (copied untranslated)",
                               unknown=toks, seconds=time.perf_counter() - t0)
        covered = bytearray(len(src.tokens))
        for op in options:
            covered[op.src_lo:op.src_hi] = b"\1" * (op.src_hi - op.src_lo)
        unknown = [w for w, c in zip(src.tokens, covered) if not c]
        inst = build_instance(src, options, float(o["beta"]), self.lm)
        d = self.core.decode(inst, max(1, int(o["beam_factor"] * inst.n)), int(o["max_pops"]),
                             int(o["complete_beam"]), timeout=self.timeout)
        if self.rerank is not None and d.status == 0:
            cands = self.core.candidates(inst, self.nbest)
            if cands:
                from .rerank import pick
                c = cands[pick(self._features(cands, src, inst), self.rerank)]
                d.tokens, d.heads, d.options, d.score = c.tokens, c.heads, c.options, c.score
        return Translation(d.tokens, detokenize(d.tokens), d.heads, len(d.options), score=float(d.score),
                           status=_STATUS.get(d.status, "fallback"), pops=d.pops, unknown=unknown,
                           seconds=time.perf_counter() - t0)

    def _features(self, cands, src: Source, inst) -> np.ndarray:
        from .rerank import features
        return features(cands, src.tokens, inst.options, self.lm, self.lexicon, self.model1, self.lmbr_scale)

    def nbest_features(self, src: Source):
        """(features float64[K, 12], detokenized texts) of the decoder's n-best candidates of a
        parsed source sentence (for tuning the reranker); empty when it has no options."""
        from .prep import detokenize
        from .rerank import FEATURES

        o = self.opts
        options = self.table.options(src.tokens, max_len=int(o["max_len"]), lam=float(o["lam"]))
        if not options:
            return np.zeros((0, len(FEATURES))), []
        inst = build_instance(src, options, float(o["beta"]), self.lm)
        d = self.core.decode(inst, max(1, int(o["beam_factor"] * inst.n)), int(o["max_pops"]),
                             int(o["complete_beam"]))
        cands = self.core.candidates(inst, self.nbest) if d.status == 0 else []
        if not cands:
            cands = [d]
        return self._features(cands, src, inst), [detokenize(x.tokens) for x in cands]

    def translate_tokens(self, sents: Sequence[Sequence[str]]) -> List[Translation]:
        """Translate segmented sentences (lists of Chinese tokens); parsed here in one batch."""
        parses = self.parser.parse([list(s) for s in sents])
        return [self.translate_parsed(Source(list(s), list(p.pos), list(p.heads), list(p.labels)))
                for s, p in zip(sents, parses)]

    def translate(self, lines: Sequence[str]) -> List[Translation]:
        """Translate raw (or space-segmented) Chinese sentences."""
        from .prep import segment_zh
        return self.translate_tokens([segment_zh(x, simplify=True) for x in lines])


def corpus_bleu_of(model, records: Sequence[dict], table, lm, opts: dict) -> Tuple[float, List[str]]:
    """BLEU (sacrebleu, 13a tokenization on detokenized text, as ``wo smt evaluate``) of a
    model on parsed corpus records (``en_raw`` references), and the outputs.  Used on dev
    during training."""
    from ..eval.metrics import score
    from .synth import source_of

    tr = Translator(model, lm=lm if lm is not None else "none", table=table, parser=False,
                    beam_factor=opts.get("beam_factor"), max_pops=opts.get("max_pops"),
                    beta=opts.get("beta"), complete_beam=opts.get("complete_beam"))
    hyps = [tr.translate_parsed(source_of(r)).text for r in records]
    return score(hyps, [r["en_raw"] for r in records], tokenize="13a").bleu, hyps


# ---------------------------------------------------------------------- batch (CLI)
@dataclass
class Line:
    """One input line: text (None if not UTF-8), 1-based line number, error message or None."""

    text: Optional[str]
    line: int
    error: Optional[str] = None


TSV_HEADER = "en\tzh\tattribution"


def read_lines(path: str, column: str = "zh", with_format: bool = False):
    """Input sentences, one per line (``-`` = standard input; ``.xz``/``.gz`` read
    transparently; a leading byte order mark is dropped); invalid UTF-8, empty lines and lines
    with nothing visible (only control, format or space characters such as NUL or U+200B)
    become items with an error.  A file whose first line is the Tatoeba TSV header
    ``en<TAB>zh<TAB>attribution`` is read as pairs and ``column`` ("zh" or "en") is taken from
    each line (a line without it: an error item).  Returns list[Line], or with ``with_format``
    (list[Line], whether the file was a TSV).  Raises FileNotFoundError (and OSError) for an
    input that cannot be read."""
    from ..io.text import raw_lines

    raw = raw_lines(path)
    tsv = bool(raw) and raw[0].rstrip(b"\r") == TSV_HEADER.encode()
    col = ("en", "zh").index(column)
    out = []
    for no, r in enumerate(raw, 1):
        if tsv and no == 1:
            continue
        if r.endswith(b"\r"):
            r = r[:-1]
        try:
            t = r.decode("utf-8")
        except UnicodeDecodeError:
            out.append(Line(None, no, "invalid UTF-8"))
            continue
        if tsv:
            cols = t.split("\t")
            if len(cols) != 3:
                out.append(Line(None, no, "expected 3 tab-separated columns (en, zh, attribution)"))
                continue
            t = cols[col]
        out.append(Line(t, no, _line_error(t)))
    return (out, tsv) if with_format else out


def _line_error(text: str) -> Optional[str]:
    """Why a line cannot be a sentence (None if it can): empty, or nothing visible in it."""
    import unicodedata

    if not text.strip():
        return "empty line"
    if all(unicodedata.category(c)[0] in "CZ" for c in text):
        return "no visible characters (only control, format or space characters)"
    return None


def run(input_path: str, output_path: str, model: Optional[str] = None, lm=None, jobs: int = 1,
        tokenized: bool = False, output_format: str = "text", max_length: int = MAX_LENGTH,
        on_error: str = "fallback", backend: str = "loky", scheduler: Optional[str] = None,
        report=lambda m: None, progress=None, **opts):
    """Translate every line of ``input_path`` (or the zh column of a Tatoeba TSV) into
    ``output_path`` (one line per input line, in order, written atomically).  A bad line (not UTF-8, empty, longer than ``max_length``
    source words) is reported as ``file:line: message`` and its record follows ``on_error``
    (fallback: an empty line, the error has no English; skip: an empty line also for a
    sentence the decoder could not translate, whose fallback copies the source words; fail:
    nothing written); the others are translated.  tokenized: write tokenized English instead
    of detokenized text; output_format "jsonl" writes one JSON object per line (text, tokens,
    score, status, seconds, pops, message, heads, unknown: the source words without a
    translation).  jobs, backend ("loky" or "dask"), scheduler (a Dask address):
    :func:`wo.io.batch.map_batches`.  Traditional characters are converted to
    Simplified ones first (:func:`wo.smt.prep.to_simplified`).  When some sentences have source
    words without a translation, one line saying how many goes to ``report``.
    Returns the batch Summary.  Raises ModelError for model problems (before any work).
    jobs as joblib counts them (-1 every core, -2 all but one, capped at the cores:
    :func:`wo.io.batch.resolve_jobs`); ValueError for jobs 0, SameFileError (a ValueError) for an
    output that is the input.
    """
    from ..io.batch import resolve_jobs

    jobs = resolve_jobs(jobs)   # -1: every core; 0 refused (ValueError) before any work
    import json

    from ..io.batch import decode_system, load_system, process
    from .prep import segment_zh

    if output_format not in ("text", "jsonl"):
        raise ValueError("output format: text or jsonl")
    from ..extras import require

    require("smt", "wo smt translate", modules=["spacy", "jieba", "opencc"])   # before the model's lookup
    path = model or default_model_path()
    options = dict({k: v for k, v in opts.items() if v is not None}, lm=lm)
    load_system(Translator, path, options, verify=True)   # fail early on the model and its files
    items, tsv = read_lines(input_path, with_format=True)

    def prepare(i, it):
        if it.error:
            return it.error
        toks = segment_zh(it.text, simplify=True)
        if len(toks) > max_length:
            return f"sentence too long ({len(toks)} words > --max-length {max_length})"
        return it, toks

    def decode_many(payloads, on_batch):
        decode_system(Translator, path, options, payloads, on_batch, jobs=jobs, chunk=32, backend=backend,
                      scheduler=scheduler)

    def fallback(it, msg):
        return Translation.error(msg)

    with_unknown = [0]                    # sentences with source words that have no translation

    def fmt(it, r):
        if r.unknown:
            with_unknown[0] += 1
        if output_format == "jsonl":
            return json.dumps({"text": r.text, **r.base_record(), "heads": r.heads, "unknown": r.unknown},
                              ensure_ascii=False)
        return " ".join(r.tokens) if tokenized else r.text

    summ = process(items, input_path, output_path, prepare=prepare, decode_many=decode_many,
                   fallback=fallback, format_record=fmt, on_error=on_error,
                   keep_skipped=output_format == "jsonl", report=report, progress=progress)
    summ.input_format = "a Tatoeba TSV (its zh column)" if tsv else "Chinese lines"
    if with_unknown[0]:
        report(f"{with_unknown[0]} of {len(items)} sentences have source words with no translation in the phrase "
               f"table (left out of the English; --format jsonl lists them per line under \"unknown\")")
    return summ
