"""Realisation of T1 input with a trained SR model: the :class:`Realizer`, which runs the
model's stages (:mod:`wo.sr.stages`) on each sentence, batch runs and the SR submission writer
(Zhang & Clark 2015, section 5.7; Bohnet et al. 2010 for the local orderer)."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

from .. import system
from .inflect import Lexicon
from .stages import SRState, Stage, apply_settings, load_stages
from .t1 import SRSentence, is_deep


# ---------------------------------------------------------------------------------- realising
@dataclass
class SRResult(system.Result):
    """One realised sentence (a :class:`wo.system.Result`): tokens (list[str], output order,
    sentence-initial capital), order (list[int]: input token index of each output token), heads
    (1-based output positions, 0 root), labels (list[str]), edges (int), surface (list[str] or
    None: the surface tokens with multiword tokens contracted, see :meth:`surface_tokens`); score
    (the search's scaled model score, or the local orderer's), status ("ok", "completed",
    "fallback", "timeout", "memory", "error"), pops, seconds, message by keyword."""

    order: List[int]
    heads: List[int]
    labels: List[str]
    edges: int = 0
    surface: Optional[List[str]] = None
    words: Optional[List[tuple]] = None
    ranges: Optional[List[tuple]] = None

    # words: per output token (lemma, UPOS, XPOS, FEATS) of the realised tree (a deep-track
    # sentence's completed tree: generated words and predicted features included), for
    # ``--format conllu``; None when unknown.  ranges: the multiword tokens, (first, last
    # output position, 0-based and inclusive, surface form); None when the model has no
    # contractions.

    def surface_xpos(self) -> Optional[List[str]]:
        """The XPOS of each surface token (for the detokenizer's intra-word hyphens; ``_`` for
        a multiword token), or None when unknown."""
        if not self.words or len(self.words) != len(self.tokens):
            return None
        xpos = [w[2] or "_" for w in self.words]
        if self.ranges:
            from .mwt import surface_tokens

            xpos = surface_tokens(xpos, [(a, b, "_") for a, b, _ in self.ranges])
        if self.surface is not None and len(self.surface) != len(xpos):
            return None
        return xpos

    def surface_tokens(self) -> List[str]:
        """The surface tokens: multiword tokens contracted (:mod:`wo.sr.mwt`); the syntactic
        words when the model has no contractions."""
        return list(self.surface) if self.surface is not None else list(self.tokens)


class Realizer(system.System):
    """Realisation of T1 input with a trained SR model: the model's stages
    (:mod:`wo.sr.stages`: lifting, candidate forms, order, choice of forms, language rules,
    contractions) run on each sentence in the order the model file records them.

    model: a :class:`wo.model.Model` with an ``sr`` header.  settings: {role: {key: value}}
    set on the loaded stages (:func:`wo.sr.stages.apply_settings`; ``wo sr realize --set
    ROLE.KEY=VALUE``).  timeout: seconds per sentence (0 = none; past it the order stage cuts
    its search short, status "timeout").  The other keyword options are the stages' own
    (each stage takes those it knows, :meth:`wo.sr.stages.Stage.from_json`):

    * lift_threshold: the lifting model's probability threshold (above 1: no lifting);
    * gold_forms: a sentence that carries every gold form (T1 column 3) is ordered with them;
      lexicon: the :class:`wo.sr.inflect.Lexicon` of the candidates stage, already built;
    * rerank_lm (a :class:`wo.lm.LanguageModel`, a path, or "none": off) and rerank_weight:
      the word LM of the order stage's rescoring (local orderer: each domain's final beam;
      search orderer: the popped goal edges) and of the choice of forms; rerank_lms: (LM or
      path, weight) pairs of view LMs (:mod:`wo.lm.views`), or "none";
    * form_penalty, allomorph_weight, context_weight: the forms stage's weights (a
      context_weight for a model without a context model raises ValueError);
    * articles: the language stage's rules (English a/an, ...);
    * search orderer only: beam_factor (chart k x n), budget_factor (pops per word),
      complete_beam, patience_factor (pops per word after the first goal), lm (the search's
      own n-gram features: path, LM or "none"), max_memory (MiB of search memory per sentence,
      default 1536; past it the search stops, status "memory").

    Every option left None takes the model's value.  Raises ValueError if the model is not an
    SR model or an option or setting is bad, ModelError if a file the model names is missing,
    LMError for a bad LM.
    """

    name = "sr"

    def __init__(self, model, timeout: float = 0.0, settings: Optional[dict] = None, **options):
        if "sr" not in model.header:
            raise ValueError(f"{model.path or 'model'} is not an SR model (train one with `wo sr train`)")
        unknown = set(options) - STAGE_OPTIONS
        if unknown:
            raise TypeError(f"Realizer: unknown option(s) {', '.join(sorted(unknown))}")
        mm = options.get("max_memory")
        if mm is not None and not float(mm) > 0:
            raise ValueError(f"max_memory must be positive MiB, not {mm!r}")
        self.model = model
        self.timeout = float(timeout)
        self.stages: List[Stage] = load_stages(model, options)
        if settings:
            apply_settings(self.stages, settings)

    def stage(self, role: str) -> Optional[Stage]:
        """The model's stage of ``role`` (:data:`wo.sr.stages.ROLES`), or None."""
        return next((st for st in self.stages if st.role == role), None)

    @property
    def lexicon(self) -> Lexicon:
        """The candidates stage's lexicon (its ``lang`` selects the detokenizer)."""
        return self.stage("candidates").lexicon

    @property
    def contractions(self):
        """The multiword-token table (:class:`wo.sr.mwt.Contractions`; empty when the model has none)."""
        from .mwt import Contractions

        st = self.stage("contractions")
        return st.table if st is not None else Contractions({})

    @property
    def track(self) -> str:
        """``deep`` for a deep-track model (its first stage is completion), else ``shallow``."""
        return "deep" if self.stages and self.stages[0].role == "completion" else "shallow"

    @property
    def lang(self) -> str:
        """The model's language code (the language stage's)."""
        st = self.stage("language")
        return st.lang if st is not None else self.lexicon.lang

    def detokenize(self, r: "SRResult") -> str:
        """A realised sentence as running text, as the submission file's ``# text`` line gives
        it: its surface tokens (multiword tokens contracted) detokenized for the model's
        language (:meth:`wo.sr.lang.Language.detokenize`: sacremoses' Moses detokenizer, or
        the tokens joined without spaces in scripts written so).  Raises nothing of its own."""
        from .lang import language

        return language(self.lang).detokenize(r.surface_tokens(), r.surface_xpos())

    @classmethod
    def load(cls, path: Optional[str] = None, verify: bool = True, lang: Optional[str] = None,
             track: str = "shallow", **options) -> "Realizer":
        """Load an SR model, memory-mapped, resolved as ``wo sr realize --model/--lang`` does
        (:func:`wo.sr.models.find_model`): ``path`` a model file or a shipped model's code
        (``"pt_bosque"``, ``"en_partut-deep"``), or ``lang`` a treebank or language code
        (``lang="pt"``: the language's default treebank) of ``track`` ("shallow" or "deep");
        neither: the shipped English model.  verify: check the weights' checksum.  Raises
        FileNotFoundError (naming what was asked and how to list the shipped models) when
        nothing matches, ModelError / ValueError for a bad model or option."""
        from ..model import Model, default_model
        from .models import resolve_model

        if track not in ("shallow", "deep"):
            raise ValueError(f"track: shallow or deep, not {track!r}")
        want = path if path is not None else lang
        found = default_model("sr") if want is None else resolve_model(want, track)
        return cls(Model.load(found, verify=verify), **options)

    def __repr__(self) -> str:
        import os

        return (f"<Realizer {os.path.basename(self.model.path or '?')} lang={self.lang!r} track={self.track!r} "
                f"stages={[st.role for st in self.stages]}>")

    def decode_item(self, item: SRSentence) -> SRResult:
        """:meth:`realize` of one T1 sentence."""
        return self.realize(item)

    def check_item(self, item) -> None:
        """A batch item is an :class:`wo.sr.t1.SRSentence`.  Raises TypeError naming what to
        call instead."""
        if not isinstance(item, SRSentence):
            raise TypeError(f"decode_batch takes SRSentence items, not {type(item).__name__}: use realize(x) or "
                            f"pipe(items), which also take parses")

    def prepare(self, x) -> SRSentence:
        """A :meth:`pipe` item as T1 input: an :class:`wo.sr.t1.SRSentence` (read by
        :func:`wo.sr.t1.read_t1`), or one sentence of a parse: a ``conllu.TokenList`` or
        CoNLL-U text, a spaCy ``Span`` (or a one-sentence ``Doc``), a stanza ``Sentence``
        (:func:`wo.sr.interop.to_sentences`: the words shuffled, seed 1).  Raises TypeError for
        anything else, ValueError for an item holding several sentences (pass them one by one,
        e.g. ``doc.sents``) or a word without a head."""
        from .interop import to_sentences

        got = to_sentences(x)
        if len(got) != 1:
            raise ValueError(f"one sentence per item, got {len(got)} (iterate over doc.sents / the sentences)")
        return got[0]

    def fallback(self, item: SRSentence, message: str) -> SRResult:
        """The lemmas of a failed sentence in input order (:func:`fallback_result`)."""
        return fallback_result(item, message)

    def start(self, s: SRSentence) -> SRState:
        """The state of a sentence before the first stage.  Raises ValueError for an unusable
        sentence (a reader's error, no tokens)."""
        if s.error:
            raise ValueError(s.error)
        if len(s) == 0:
            raise ValueError("empty sentence")
        if self.stages[0].role != "completion" and is_deep(s):
            raise ValueError("deep-track (T2) input, but this model realises shallow-track (T1) input: "
                             "use a deep-track model (wo sr models)")
        t0 = time.perf_counter()
        return SRState(s, list(s.heads), deadline=t0 + self.timeout if self.timeout > 0 else None)

    def realize(self, s) -> SRResult:
        """Realise one T1 sentence: every stage in turn.  ``s``: an :class:`wo.sr.t1.SRSentence`,
        or one parsed sentence :meth:`prepare` takes (conllu, spaCy, stanza).  Raises
        ValueError for an unusable sentence, TypeError for input of another kind."""
        if not isinstance(s, SRSentence):
            s = self.prepare(s)
        t0 = time.perf_counter()
        state = self.start(s)
        for st in self.stages:
            st(state)
        t = state.sentence
        return SRResult(state.tokens, list(state.order), state.output_heads(),
                        [t.deprels[i] for i in state.order],
                        state.edges, state.surface, [(t.lemmas[i], t.upos[i], t.xpos[i], t.feats[i]) for i in state.order],
                        state.ranges,
                        score=float(state.score), status=state.status, pops=state.pops,
                        seconds=time.perf_counter() - t0)

    def nbest(self, s: SRSentence, k: int = 20) -> List[tuple]:
        """The order stage's n-best, the candidates reranking chooses from: a list of up to k
        (F the model's score, tokens list[str], idx list[int] input token per output position,
        heads list[int] 1-based output positions); an order stage that keeps no sentence-level
        n-best (the local orderer) gives its one output with score 0 and the given tree.
        Raises ValueError for an unusable sentence."""
        state = self.start(s)
        for st in self.stages:
            if st.role == "order" and hasattr(st, "nbest"):
                return st.nbest(state, k)
            st(state)
        return [(0.0, state.tokens, list(state.order), state.output_heads())]


# the keyword options the stages take (Realizer)
STAGE_OPTIONS = {"lift_threshold", "gold_forms", "lexicon", "rerank_lm", "rerank_weight", "rerank_lms",
                 "form_penalty", "allomorph_weight", "context_weight", "articles", "beam_factor", "budget_factor",
                 "complete_beam", "patience_factor", "lm", "max_memory"}


def fallback_result(s: SRSentence, message: str) -> SRResult:
    """Error output: the lemmas in input order (status "error"; a deep-track sentence's `_`
    nodes, which stand for no word, left out)."""
    idx = [i for i, x in enumerate(s.lemmas) if x != "_"] if is_deep(s) else list(range(len(s)))
    n = len(idx)
    return SRResult([s.lemmas[i] for i in idx], idx, [0] + [1] * (n - 1) if n else [],
                    [s.deprels[i] for i in idx], 0, None,
                    [(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i]) for i in idx], status="error", message=message)


def realize_many(model_path: Optional[str], sents: Sequence[SRSentence], jobs: int = 1, chunk: int = 32,
                 progress: Optional[Callable[[int], None]] = None, backend: str = "loky",
                 scheduler: Optional[str] = None, on_batch: Optional[Callable[[list], None]] = None,
                 **opts) -> List[SRResult]:
    """Realise sentences with ``jobs`` joblib processes (or a Dask cluster, see
    :func:`wo.io.batch.map_batches`) through the shared worker (:func:`wo.io.batch.system_worker`,
    one cached :class:`Realizer` per process); output in input order, identical for any jobs.
    progress(k) and on_batch(results) are called as results come, in input order.  A sentence
    that cannot be realised gets :func:`fallback_result` (status "error").  KeyboardInterrupt
    passes through (what ``on_batch`` was given stands)."""
    from ..io.batch import decode_system

    def take(res):
        if on_batch:
            on_batch(res)
        if progress:
            progress(len(res))

    return decode_system(Realizer, model_path, opts, sents, take, jobs=jobs, chunk=chunk, backend=backend,
                         scheduler=scheduler, cost=lambda s: len(s) ** 2)


def submission_record(s: SRSentence, r: SRResult, detok) -> str:
    """The SR submission record of a sentence (no final newline): ``# sent_id`` and ``# text``
    (the surface tokens detokenized by ``detok``), then the blank line that ends it."""
    return f"# sent_id = {s.sent_id}\n# text = {detok(r.surface_tokens(), r.surface_xpos())}\n"


def tok_path(output: str, tok: Optional[str] = "auto") -> Optional[str]:
    """The tokenized twin of an SR output: ``tok`` when given (None: none), with "auto"
    ``OUTPUT.tok`` beside a regular (or not yet existing) file, none for ``-``, a pipe or a
    device (no ``/dev/null.tok``)."""
    from ..io.text import STDIO

    if tok != "auto":
        return tok
    if output == STDIO or not (os.path.isfile(output) or not os.path.exists(output)):
        return None
    return output + ".tok"


def json_record(s: SRSentence, r: SRResult, detok) -> str:
    """The JSON lines record of a realised sentence (one line): sent_id, text (the ``# text``
    of the submission: the surface tokens detokenized by ``detok``), the common fields
    (:meth:`wo.system.Result.base_record`: tokens, the inflected words in output order, score,
    status, seconds, pops, message), surface (multiword tokens contracted), order (input token
    index, 0-based, of each output token), heads (1-based output positions, 0 root), labels,
    edges."""
    import json

    return json.dumps({"sent_id": s.sent_id, "text": detok(r.surface_tokens(), r.surface_xpos()), **r.base_record(),
                       "surface": r.surface_tokens(), "order": list(r.order), "heads": list(r.heads),
                       "labels": list(r.labels), "edges": r.edges}, ensure_ascii=False)


def conllu_record(s: SRSentence, r: SRResult, detok) -> str:
    """The CoNLL-U block of a realised sentence (no final blank line): ``# sent_id``, ``# text``
    (the surface tokens detokenized by ``detok``), ``# wo_status`` when it is not "ok", then one
    line per syntactic word in output order: ID, FORM (the realised word), LEMMA, UPOS, XPOS,
    FEATS (a deep-track sentence's completed tree: generated words, predicted relations and
    features), HEAD (output position, 0 root), DEPREL, ``_``, MISC (``SpaceAfter=No`` where
    ``# text`` glues the token to the next; :func:`wo.io.text.space_after`), and before the
    words of each multiword token (:attr:`SRResult.ranges`) its range line with the surface
    form: valid at the UD validator's level 2.  When the detokenizer rewrote a token, ``# text``
    is the surface tokens joined by spaces.  A failed sentence (status error) is its lemmas in
    input order attached flat to the first (root, dep).  Tabs and line
    breaks inside a field become spaces; an empty field is ``_``."""
    def f(x) -> str:
        x = " ".join(str(x if x is not None else "").split()) if x else ""
        return x or "_"

    from ..io.text import space_after
    from .mwt import surface_tokens

    ranges = [(a, b, sf) for a, b, sf in (r.ranges or ()) if 0 <= a < b < len(r.tokens)]
    surface = [f(x) for x in surface_tokens(r.tokens, ranges)]
    text = " ".join(detok(surface, r.surface_xpos()).split())
    glued = space_after(text, surface)
    if glued is None:   # the detokenizer changed a token: the text the token lines spell
        text, glued = " ".join(surface), [False] * len(surface)
    lines = [f"# sent_id = {s.sent_id}", f"# text = {text}"]
    if r.status != "ok":
        lines.append(f"# wo_status = {r.status}")
    words = r.words or [(t, None, None, None) for t in r.tokens]
    labels = r.labels if r.status != "error" else ["root"] + ["dep"] * (len(r.tokens) - 1)   # the flat fallback tree
    first = {a: (b, sf) for a, b, sf in ranges}
    inside, k = -1, 0   # the last word of the multiword token being written; surface token index
    for j, (tok, (lemma, upos, xpos, feats), head, rel) in enumerate(zip(r.tokens, words, r.heads, labels)):
        misc = "_"
        if j in first:
            inside = first[j][0]
            lines.append("\t".join([f"{j + 1}-{inside + 1}", surface[k], *["_"] * 7,
                                    "SpaceAfter=No" if glued[k] else "_"]))
            k += 1
        elif j > inside:
            misc = "SpaceAfter=No" if glued[k] else "_"
            k += 1
        lines.append("\t".join([str(j + 1), f(tok), f(lemma), f(upos), f(xpos), f(feats), str(head), f(rel), "_", misc]))
    return "\n".join(lines) + "\n"


OUTPUT_FORMATS = ("text", "jsonl", "conllu")


def run(model_path: Optional[str], input_path: str, output_path: str, *, tok: Optional[str] = "auto",
        output_format: str = "text", jobs: int = 1, on_error: str = "fallback", backend: str = "loky",
        scheduler: Optional[str] = None, progress: Optional[Callable[[int], None]] = None,
        report: Callable[[str], None] = lambda m: None, **opts):
    """Realise every T1 sentence of ``input_path`` into the SR submission file ``output_path``
    and its tokenized twin (:func:`tok_path`), on the shared batch spine
    (:func:`wo.io.batch.process`): one record per sentence in input order in both files, written
    atomically; a bad sentence is reported as ``file:line: message`` and its record follows
    ``on_error`` (fallback: its lemmas in input order; skip: its ``# sent_id`` with an empty
    ``# text`` and an empty ``.tok`` line; fail: nothing written); Ctrl-C keeps the finished
    prefix in both files (or, before the first, the files already there).  output_format
    "jsonl": one :func:`json_record` per sentence instead of the submission (a failed sentence
    keeps its record, status error, also under skip), and a tokenized twin only when ``tok``
    names one.  jobs, backend ("loky" or "dask"), scheduler (a Dask address):
    :func:`wo.io.batch.map_batches`.  opts: :class:`Realizer` options.  Returns the batch
    Summary (input_format "T1").  Raises ModelError/LMError/ValueError for the model, options
    and format (before any work), FailFast, Interrupted; ValueError (one line) for a UD file
    given instead of T1 input.
    jobs as joblib counts them (-1 every core, -2 all but one, capped at the cores:
    :func:`wo.io.batch.resolve_jobs`); ValueError for jobs 0, SameFileError (a ValueError) for an
    output that is the input.
    """
    from ..io.batch import resolve_jobs

    jobs = resolve_jobs(jobs)   # -1: every core; 0 refused (ValueError) before any work
    from ..io.batch import Summary, load_system, process
    from ..io.text import display_name
    from ..model import default_model
    from .lang import language
    from .t1 import looks_like_ud, read_t1

    if output_format not in OUTPUT_FORMATS:
        raise ValueError(f"unknown output format {output_format!r} (one of {OUTPUT_FORMATS})")
    model_path = model_path or default_model("sr")
    first = load_system(Realizer, model_path, opts, verify=True)   # bad model or LM: fail early
    if looks_like_ud(input_path):
        raise ValueError(f"{display_name(input_path)}: a UD CoNLL-U file (forms in column 2, # text lines, no lin), "
                         f"not T1 input; make T1 input with `wo sr make-input --ud {input_path}`")
    sents = read_t1(input_path)
    detok = language(first.lang).detokenize
    jsonl = output_format == "jsonl"
    twin = tok_path(output_path, tok) if not (jsonl and tok == "auto") else None

    def prepare(i, s):
        return s.error if s.error else (s, s)

    def decode_many(payloads, on_batch):
        realize_many(model_path, payloads, jobs=jobs, backend=backend, scheduler=scheduler, on_batch=on_batch,
                     **opts)

    def record(s, r):
        return ((json_record if jsonl else conllu_record if output_format == "conllu" else submission_record)(
            s, r, detok), r.text)

    def skipped(s):
        return (f"# sent_id = {s.sent_id}\n# text = \n", "")

    return process(sents, input_path, output_path, prepare=prepare, decode_many=decode_many,
                   fallback=fallback_result, format_record=record, on_error=on_error, keep_skipped=jsonl,
                   report=report, progress=progress, summary=Summary(input_format="T2" if first.track == "deep" else "T1"),
                   skipped=skipped,
                   also=(twin,))


def write_submission(path: str, sents: Sequence[SRSentence], results: Sequence[SRResult],
                     tok: Optional[str] = "auto", lang: Optional[str] = "en") -> None:
    """Write the SR submission file (``# sent_id`` and ``# text`` = the surface tokens,
    multiword tokens contracted, detokenized for ``lang`` (:meth:`wo.sr.lang.Language.detokenize`)
    per sentence, blank line after each) and the tokenized twin ``tok`` (one tokenized sentence per
    line; "auto" = ``path + '.tok'``, none when ``path`` is ``-`` or tok is None).  Both are
    written atomically.  Raises OSError when a file cannot be written."""
    from ..io.text import STDIO, AtomicWriter
    from .lang import language

    detok = language(lang).detokenize

    if tok == "auto":
        tok = None if path == STDIO else path + ".tok"
    writers = [AtomicWriter(path)] + ([AtomicWriter(tok)] if tok else [])
    try:
        for s, r in zip(sents, results):
            writers[0].write(submission_record(s, r, detok))
            if tok:
                writers[1].write(r.text)
        for w in writers:
            w.commit()
    except BaseException:
        for w in writers:
            w.abort()
        raise
