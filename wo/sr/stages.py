"""Surface realisation as a list of stages: one protocol, one decoding path.

A sentence's :class:`SRState` goes through the stages of a model in the order its file records
them (``header["sr"]["stages"]``, a list of JSON objects each naming its stage class):

0. ``completion`` (:class:`CompletionStage`, deep-track models only): the function words, UD
   relations and surface features a deep-track (T2) input leaves out (:mod:`wo.sr.complete`):
   the deep sentence becomes the T1 sentence the other stages realise;
1. ``lift`` (:class:`LiftStage`): tokens of a non-projective order re-attached to an ancestor
   (:mod:`wo.sr.nonproj`), so the order stage linearises a projective tree;
2. ``candidates`` (:class:`CandidateStage`): each token's candidate forms, best first
   (:class:`wo.sr.inflect.Lexicon`: the treebank's lexicon, then the learned inflection), or its
   gold form when the input carries every one;
3. ``order`` (:class:`LocalOrderStage`, each head's domain ordered by a linear model with beam
   search, Bohnet et al. 2010; or :class:`SearchOrderStage`, the best-first search over the whole
   tree with joint inflection, Zhang & Clark 2015 section 5.7): the output order (and, for the
   search, the forms);
   ``punctuation`` (:class:`PunctuationStage`, deep-track models only): the comma inserted
   between ordered words (:mod:`wo.sr.punct`);
4. ``forms`` (:class:`FormStage`): the form of each ordered token among its candidates, by a
   word LM, the neighbours' characters (allomorphs) and the form context
   (:func:`wo.sr.forms.choose_forms`);
5. ``language`` (:class:`LanguageStage`): the language module's rules over the realised tokens
   (English a/an, the Greek enclitic accent, ...) and the sentence-initial capital;
6. ``contractions`` (:class:`ContractionStage`): multiword tokens contracted (fr *de le* ->
   *du*, :mod:`wo.sr.mwt`).

Every stage has the same small interface (after spaCy's pipeline components): ``__call__(state)``
applies it to one sentence, ``fit(data, log)`` learns it from training data (:class:`TrainingData`),
``to_json()`` / ``from_json(d, model, options)`` save and load it in the model header, and
:attr:`Stage.SETTINGS` names what an expert may set (``wo sr train/realize --set ROLE.KEY=VALUE``,
:func:`apply_settings`).  A new stage is a subclass registered with :func:`register` (see
docs/extending.md).  Models written before the stage list (``sr.lexicon``, ``sr.order``,
``decode``) load through :func:`legacy_stages`.
"""
from __future__ import annotations

import dataclasses
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Type

from .forms import choose_forms
from .inflect import Allomorphs, FormContext, Lexicon
from .instance import output_tree, rerank_lin, sr_instance, tag_of
from .t1 import SRSentence

DEFAULT_SR_BEAM_FACTOR = 16.0
DEFAULT_SR_BUDGET_FACTOR = 200.0
DEFAULT_SR_COMPLETE_BEAM = 32
DEFAULT_SR_RERANK_WEIGHT = 1.0   # F + w * log10 p over the popped goals (EWT dev: 85.39 with the shipped 4-gram)
DEFAULT_SR_FORM_PENALTY = 1.0    # local orderer: log10 LM cost of each rank down the candidate list of a form
ROLES = ("completion", "lift", "candidates", "order", "punctuation", "forms", "language", "contractions")


# ---------------------------------------------------------------------------------- the state
@dataclass
class SRState:
    """One sentence on its way through the stages (:class:`Stage`).

    sentence: the given T1 sentence (n tokens, input order); heads: 1-based heads (0 root) of
    the tree the order stage linearises (the given tree, or the lifted one); deadline: a
    ``time.perf_counter()`` value (seconds) after which stages cut their search short, or None;
    gold: every token carries its gold form and the model orders with those (no inflection);
    cands: per input token, its candidate forms (list of non-empty lists of str, best first);
    order: the input token index of each output position (list of n int); forms: the form of
    each output position (list of n str) before the language rules; tokens: the realised
    tokens (list of n str: language rules applied, sentence-initial capital); surface: the
    surface tokens (multiword tokens contracted) or None when the model has no contractions;
    ranges: the multiword tokens, (first, last output position, 0-based and inclusive, surface
    form), or None likewise; score: the order stage's model score; status: "ok" or "timeout"; pops, edges: the search
    orderer's counts (0 for the local orderer).
    """

    sentence: SRSentence
    heads: List[int]
    deadline: Optional[float] = None
    gold: bool = False
    cands: Optional[List[List[str]]] = None
    order: Optional[List[int]] = None
    forms: Optional[List[str]] = None
    tokens: Optional[List[str]] = None
    surface: Optional[List[str]] = None
    ranges: Optional[List[tuple]] = None
    score: float = 0.0
    status: str = "ok"
    pops: int = 0
    edges: int = 0
    extra: Dict[str, Any] = field(default_factory=dict)

    def output_heads(self) -> List[int]:
        """The given tree in output order: per output position the 1-based output position of
        its head (0 for the root).  The output tree is always the given one, lifted or not."""
        s, idx = self.sentence, self.order
        at = {t: p for p, t in enumerate(idx)}
        return [0 if s.heads[t] == 0 else at[s.heads[t] - 1] + 1 for t in idx]


# ---------------------------------------------------------------------------------- the protocol
class Stage:
    """One step of realisation (module docstring).

    Subclasses set ``role`` (one of :data:`ROLES`: where the stage runs), ``name`` (the registry
    name written to the model file) and ``SETTINGS`` (key -> type of what ``--set
    ROLE.KEY=VALUE`` may change; each key is an attribute of the stage and a key of its JSON
    form), and implement ``__call__`` and the JSON pair.  ``fit`` learns the stage from
    training data (default: nothing to learn); ``files`` names the files it reads beside the
    model (LMs).
    """

    role: ClassVar[str] = ""
    name: ClassVar[str] = ""
    SETTINGS: ClassVar[Dict[str, Callable[[str], Any]]] = {}

    def __call__(self, state: SRState) -> None:
        """Apply the stage to one sentence's state (in place)."""
        raise NotImplementedError

    def fit(self, data: "TrainingData", log: Callable[[str], None] = lambda m: None) -> dict:
        """Learn the stage from training data; returns a record for the training summary."""
        return {}

    def to_json(self) -> dict:
        """The stage as stored in the model header: ``{"stage": name, **settings and tables}``."""
        return {"stage": self.name}

    @classmethod
    def from_json(cls, d: dict, model=None, options: Optional[dict] = None) -> "Stage":
        """The stage of a model header entry ``d``; ``model``: the :class:`wo.model.Model` (its
        weights, its path for the files it names); ``options``: the realiser's keyword options
        (:class:`wo.sr.realizer.Realizer`), of which the stage takes its own."""
        raise NotImplementedError

    def files(self) -> List[str]:
        """The file names (beside the model) this stage reads."""
        return []

    def bind(self, stages: Sequence["Stage"]) -> None:
        """Called once the model's stages are loaded, with all of them (a stage that needs
        another's service finds it here)."""


STAGES: Dict[str, Type[Stage]] = {}


def register(cls: Type[Stage]) -> Type[Stage]:
    """Class decorator: make a :class:`Stage` subclass loadable by its ``name``.  Raises
    ValueError for a name already taken or a role not in :data:`ROLES`."""
    if cls.role not in ROLES:
        raise ValueError(f"stage {cls.__name__}: role {cls.role!r} is not one of {ROLES}")
    if cls.name in STAGES and STAGES[cls.name] is not cls:
        raise ValueError(f"stage name {cls.name!r} is taken by {STAGES[cls.name].__name__}")
    STAGES[cls.name] = cls
    return cls


def _lm(model, name: Optional[str], key: str):
    """The LM a stage names (``name`` beside the model or in the shipped directory), shared per
    process; None for no name.  Raises ModelError when it is missing, LMError for a bad file."""
    from ..lm.model import LanguageModel
    from ..model import named_file

    if not name:
        return None
    return LanguageModel.shared(named_file(model, name, "sr", key, "--set order.words_lm=PATH (or none)"))


def _lm_option(value):
    """A realiser's ``rerank_lm`` option as an LM: a :class:`wo.lm.LanguageModel`, a path, or
    "none" (None)."""
    from ..lm.model import LanguageModel

    if isinstance(value, str):
        return None if value == "none" else LanguageModel.shared(value)
    return value


def flag(value) -> bool:
    """``--set`` type of a switch: true/false (also 1/0, yes/no, on/off).  Raises ValueError."""
    v = str(value).lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise ValueError(value)


flag.__name__ = "true/false"


def lm_setting(value: str):
    """``--set`` type of an LM key: "none" (no LM) or the path of an LM file, loaded (shared per
    process).  Raises ValueError for a file that is not an LM."""
    from ..lm.model import LanguageModel, LMError

    if value in ("none", "", None):
        return None
    try:
        return LanguageModel.shared(value)
    except (OSError, LMError) as e:
        raise ValueError(f"{value}: {e}") from None


def view_lms_setting(value: str) -> List[tuple]:
    """``--set`` type of view LMs: "none", or PATH:WEIGHT pairs separated by commas (each LM
    loaded, shared per process).  Raises ValueError for a malformed pair or a bad LM."""
    if value in ("none", "", None):
        return []
    out = []
    for part in value.split(","):
        path, colon, w = part.rpartition(":")
        if not colon or not path:
            raise ValueError(f"{part!r}: expected PATH:WEIGHT")
        out.append((lm_setting(path), float(w)))
    return out


lm_setting.__name__ = "LM path or none"
view_lms_setting.__name__ = "PATH:WEIGHT,... or none"


def _file_name(lm) -> Optional[str]:
    """The file name (no directory) of a loaded LM, as a stage records it."""
    import os

    return os.path.basename(lm.path) if lm is not None and getattr(lm, "path", None) else None


# ---------------------------------------------------------------------------------- 1. lifting
@register
class CompletionStage(Stage):
    """Completion of deep-track input (:class:`wo.sr.complete.Completer`): the state's deep
    sentence (SR'19 T2) is replaced by its T1 sentence (function words generated, UD relations
    and features predicted; ``extra["deep"]`` keeps the given one).  Raises ValueError for
    shallow-track input (one line, per sentence)."""

    role, name = "completion", "completion"
    SETTINGS = {"alternatives": flag}

    def __init__(self, completer=None, alternatives: bool = True, assoc=None):
        self.completer = completer
        self.alternatives = bool(alternatives)
        self.assoc = assoc   # for fit: the association table (wo.sr.complete.Assoc) the completer learns to use

    def __call__(self, state: SRState) -> None:
        from .complete import check_deep

        check_deep(state.sentence)
        state.extra["deep"] = state.sentence
        alts: list = []
        state.sentence = self.completer.complete(state.sentence, alts if self.alternatives else None)
        state.heads = list(state.sentence.heads)
        first = len(state.sentence) - len(alts)   # the generated words follow the kept nodes
        state.extra["alternatives"] = {first + w: a for w, a in enumerate(alts) if a}

    def fit(self, data: "TrainingData", log: Callable[[str], None] = lambda m: None) -> dict:
        """Learn from ``data.deep`` (aligned :class:`wo.sr.complete.DeepExample` list)."""
        from .complete import Completer

        t0 = time.perf_counter()
        self.completer = Completer.fit(data.deep, log=log, assoc=self.assoc)
        rec = {"examples": len(data.deep), "seconds": round(time.perf_counter() - t0, 1)}
        if self.assoc is not None:
            rec["assoc"] = dict(self.assoc.source, kept={k: len(v) for k, v in self.assoc.tables.items()})
        return rec

    def to_json(self) -> dict:
        return {"stage": self.name, "alternatives": self.alternatives, **self.completer.to_json()}

    @classmethod
    def from_json(cls, d: dict, model=None, options: Optional[dict] = None) -> "CompletionStage":
        from .complete import Completer

        return cls(Completer.from_json(d), d.get("alternatives", True))


@register
class LiftStage(Stage):
    """Lifting for non-projective orders (:class:`wo.sr.nonproj.LiftModel`): a token whose
    context was lifted in training at least ``threshold`` of the time is re-attached to an
    ancestor before ordering (above 1: never).  Settings: threshold."""

    role, name = "lift", "lift"
    SETTINGS = {"threshold": float}

    def __init__(self, model=None, threshold: float = 0.5):
        self.model = model
        self.threshold = float(threshold)

    def __call__(self, state: SRState) -> None:
        if self.model is None:
            return
        s = state.sentence
        state.heads = self.model.predict(state.heads, s.deprels, s.upos, s.lin, self.threshold)

    def fit(self, data: "TrainingData", log=lambda m: None) -> dict:
        """Learn the lifting model from the training trees in reference order."""
        from .nonproj import LiftModel, lift_steps

        trees = []
        for s, pos in zip(data.sentences, data.positions):
            n = len(s)
            surf = [0] * n
            for i, p in enumerate(pos):
                surf[p - 1] = i
            sh = [0 if s.heads[surf[q]] == 0 else pos[s.heads[surf[q]] - 1] for q in range(n)]
            try:
                st = lift_steps(sh)
            except ValueError:
                continue
            trees.append((list(s.heads), list(s.deprels), list(s.upos), list(s.lin),
                          [st[pos[i] - 1] for i in range(n)]))
        self.model = LiftModel.build(trees, self.threshold)
        return {"lift_contexts": len(self.model.table)}

    def to_json(self) -> dict:
        d = self.model.to_json() if self.model is not None else {}
        return {"stage": self.name, **d, "threshold": self.threshold}

    @classmethod
    def from_json(cls, d: dict, model=None, options=None) -> "LiftStage":
        from .nonproj import LiftModel

        lm = LiftModel.from_json(d) if "table" in d else None
        th = (options or {}).get("lift_threshold")
        return cls(lm, d.get("threshold", 0.5) if th is None else th)


# ---------------------------------------------------------------------------------- 2. candidates
@register
class CandidateStage(Stage):
    """Candidate forms of every token, best first (:meth:`wo.sr.inflect.Lexicon.candidates`:
    the treebank's lexicon, the language module's dictionary, the learned inflection).  With
    ``gold_forms`` a sentence that carries every gold form (T1 column 3, ``wo sr make-input
    --with-gold``) keeps those as its only candidates, so only the order is predicted.
    Settings: gold_forms."""

    role, name = "candidates", "candidates"
    SETTINGS = {"gold_forms": flag}

    def __init__(self, lexicon: Optional[Lexicon] = None, gold_forms: bool = True, lang: str = "xx",
                 context: bool = False):
        self.lexicon = lexicon
        self.gold_forms = bool(gold_forms)
        self.lang = lang
        self.context = context   # while training: also learn the form context models (FormStage)

    def __call__(self, state: SRState) -> None:
        s = state.sentence
        state.gold = self.gold_forms and len(s) > 0 and all(s.forms)
        if state.gold:
            state.cands = [[f] for f in s.forms]
        else:
            lex = self.lexicon
            state.cands = [lex.candidates(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])[0] for i in range(len(s))]
            for i, alts in state.extra.get("alternatives", {}).items():   # the completion's runners-up
                have = state.cands[i] = list(state.cands[i])
                for a in alts:
                    f = lex.candidates(a, s.upos[i], s.xpos[i], s.feats[i])[0][0]
                    if f not in have:
                        have.append(f)

    def fit(self, data: "TrainingData", log=lambda m: None) -> dict:
        """Build the lexicon and the learned inflection model from the training sentences."""
        self.lexicon = data.lexicon if data.lexicon is not None else Lexicon.build(
            data.gold, lang=self.lang, context=self.context)
        return {}

    def to_json(self) -> dict:
        lx = {k: v for k, v in self.lexicon.to_json().items() if k not in ("allomorphs", "context", "context_next")}
        return {"stage": self.name, "lexicon": lx, "gold_forms": self.gold_forms}

    @classmethod
    def from_json(cls, d: dict, model=None, options=None) -> "CandidateStage":
        o = options or {}
        lex = o.get("lexicon") or Lexicon.from_json(d["lexicon"])
        gf = o.get("gold_forms")
        return cls(lex, d.get("gold_forms", True) if gf is None else gf, lex.lang)


# ---------------------------------------------------------------------------------- 3. order
@register
class LocalOrderStage(Stage):
    """The local orderer (:class:`wo.sr.order.LocalOrderer`): each head's domain ordered by a
    hashed linear model with beam search, bottom-up, each domain's final beam rescored by
    ``words_weight`` x the word LM's log10 p of the subtree's words and by the view LMs
    ``view_lms`` ((LM, weight) pairs, :mod:`wo.lm.views`).  The ordering model's weights are the
    model file's table.  Settings: beam, words_weight."""

    role, name = "order", "order-local"
    SETTINGS = {"beam": int, "words_lm": lm_setting, "words_weight": float, "view_lms": view_lms_setting}

    def __init__(self, orderer=None, spec: Optional[dict] = None, words_lm=None,
                 words_weight: float = DEFAULT_SR_RERANK_WEIGHT, view_lms: Sequence[tuple] = ()):
        from .order import FEATURE_SET

        self.orderer = orderer
        self.spec = dict(spec or {"feature_set": FEATURE_SET, "beam": 16})
        self.words_lm = words_lm
        self.words_weight = float(words_weight)
        self.view_lms = list(view_lms)

    @property
    def beam(self) -> int:
        """States kept per step of the domain search."""
        return int(self.spec.get("beam", 16))

    @beam.setter
    def beam(self, v: int) -> None:
        self.spec["beam"] = int(v)
        if self.orderer is not None:
            self.orderer.beam = int(v)
            self.orderer.core.beam = int(v)
            if self.orderer.r2l is not None:
                self.orderer.r2l.beam = int(v)

    def __call__(self, state: SRState) -> None:
        s, heads = state.sentence, state.heads
        low = [c[0].lower() for c in state.cands]
        lo = self.orderer
        idx, score = lo.linearize(heads, s.lemmas, s.upos, s.deprels, s.feats, rerank_lin(heads, s.lin), low,
                                  rescore=self.rescorer(s, heads, low), deadline=state.deadline)
        state.order, state.score = idx, float(score)
        state.status = "timeout" if lo.timed_out else "ok"

    def rescorer(self, s: SRSentence, heads: Sequence[int], low: Sequence[str]):
        """The LM scores added to each complete order of a domain: ``words_weight`` x log10 p of
        the subtree's words (sentence boundaries at the root) and each view LM on the domain
        (``dep-mix`` and ``dep-word`` score the head's sequence, ``words`` and ``pos`` the
        subtree's).  Returns rescore(h, span, order) for
        :meth:`wo.sr.order.LocalOrderer.linearize`, or None without LMs."""
        import numpy as np

        from ..lm.views import CLOSED_TAGS, view_of

        wl = self.words_lm if self.words_weight else None
        views = [(lm, w, view_of(lm)) for lm, w in self.view_lms if w]
        if wl is None and not views:
            return None
        n = len(s)
        tags = [tag_of(s, i) for i in range(n)]
        wids = wl.word_ids(low) if wl is not None else None
        scorers = []   # per view LM: (core, weight, kind, item ids, head-item ids, G_ ids of each head)
        for lm, w, view in views:
            if view in ("dep-mix", "dep-word"):
                lex = view == "dep-word"
                items = lm.word_ids([low[i] if lex or tags[i] in CLOSED_TAGS else tags[i] for i in range(n)])
                hitems = lm.word_ids(["H_" + (low[i] if lex else tags[i]) for i in range(n)])
                gs = lm.word_ids(["G_" + (tags[heads[i] - 1] if heads[i] > 0 else "ROOT") for i in range(n)])
                scorers.append((lm.core, w, "dep", items, hitems, gs))
            else:
                scorers.append((lm.core, w, "span", lm.word_ids(tags if view == "pos" else low), None, None))
        ww = self.words_weight

        def rescore(h: int, span: List[int], order: List[int]) -> float:
            root = heads[h] == 0
            v = 0.0
            if wids is not None:
                v += ww * wl.core.total(wids[span], root, root)
            for core, w, kind, items, hitems, gs in scorers:
                if kind == "dep":
                    q = np.empty(len(order) + 1, dtype=np.int32)
                    q[0] = gs[h]
                    q[1:] = items[order]
                    q[1 + order.index(h)] = hitems[h]
                    v += w * core.total(q, True, True)
                else:
                    v += w * core.total(items[span], root, root)
            return v
        return rescore

    def to_json(self) -> dict:
        return {"stage": self.name, **self.spec, "words_lm": _file_name(self.words_lm),
                "words_weight": self.words_weight,
                "view_lms": [[_file_name(lm), w] for lm, w in self.view_lms]}

    def files(self) -> List[str]:
        return [f for f in [_file_name(self.words_lm)] + [_file_name(lm) for lm, _ in self.view_lms] if f]

    @classmethod
    def from_json(cls, d: dict, model=None, options=None) -> "LocalOrderStage":
        from .order import FEATURE_SET, LocalOrderer

        o = options or {}
        where = (model.path if model is not None else None) or "model"
        if d.get("feature_set") != FEATURE_SET:
            raise ValueError(f"{where}: local-order feature set {d.get('feature_set')!r}, "
                             f"expected {FEATURE_SET!r} (retrain with this version of wo)")
        spec = {k: v for k, v in d.items() if k not in ("stage", "words_lm", "words_weight", "view_lms")}
        orderer = LocalOrderer.from_table(model.weights, model.hash_bits, spec) if model is not None else None
        rl = o.get("rerank_lm")
        words = _lm_option(rl) if rl is not None else _lm(model, d.get("words_lm"), "order.words_lm")
        views = _view_lms(model, d.get("view_lms") or [], o)
        ww = o.get("rerank_weight")
        return cls(orderer, spec, words, d.get("words_weight", DEFAULT_SR_RERANK_WEIGHT) if ww is None else ww, views)


def _view_lms(model, named: Sequence, options: dict) -> List[tuple]:
    """The (LM, weight) pairs of a stage's view LMs: the realiser's ``rerank_lms`` option
    ((LM or path, weight) pairs, or "none"), else the stage's ``named`` [[file, weight], ...];
    none when ``rerank_lm`` is "none"."""
    from ..lm.model import LanguageModel

    if options.get("rerank_lm") == "none" or options.get("rerank_lms") == "none":
        return []
    given = options.get("rerank_lms")
    if given is not None:
        return [(LanguageModel.shared(m) if isinstance(m, str) else m, float(w)) for m, w in given]
    return [(_lm(model, f, "order.view_lms"), float(w)) for f, w in named]


@register
class SearchOrderStage(Stage):
    """The search orderer: the best-first search over the whole tree with joint inflection
    (Zhang & Clark 2015, section 5.7, on :class:`wo.dep.core.DepSearch`), its goal edges
    reranked by ``rerank_weight`` x the word LM's log10 p of the realised strings and the view
    LMs (:func:`wo.dep.linearizer.rerank_goals`).  It chooses the forms too.  Settings:
    beam_factor (chart k x n), budget_factor (pops per word), complete_beam, patience_factor
    (pops per word after the first goal), rerank_lm, rerank_weight, view_lms."""

    role, name = "order", "order-search"
    SETTINGS = {"beam_factor": float, "budget_factor": float, "complete_beam": int, "patience_factor": float,
                "rerank_lm": lm_setting, "rerank_weight": float, "view_lms": view_lms_setting}

    def __init__(self, core=None, lm_entry: Optional[dict] = None, question_labels: bool = True,
                 beam_factor: float = DEFAULT_SR_BEAM_FACTOR, budget_factor: float = DEFAULT_SR_BUDGET_FACTOR,
                 complete_beam: int = DEFAULT_SR_COMPLETE_BEAM, patience_factor: float = 0.0, rerank_lm=None,
                 rerank_weight: float = DEFAULT_SR_RERANK_WEIGHT, view_lms: Sequence[tuple] = ()):
        self.core = core
        self.lm = core.lm if core is not None else None   # the search's own n-gram features
        self.lm_entry = lm_entry
        self.question_labels = bool(question_labels)
        self.beam_factor, self.budget_factor = float(beam_factor), float(budget_factor)
        self.complete_beam, self.patience_factor = int(complete_beam), float(patience_factor)
        self.rerank_lm, self.rerank_weight = rerank_lm, float(rerank_weight)
        self.view_lms = list(view_lms)
        self.finish = None   # the language stage's tokens_of (bind)

    def bind(self, stages: Sequence[Stage]) -> None:
        lang = next((st for st in stages if st.role == "language"), None)
        self.finish = lang.tokens_of if lang is not None else None

    def _decode(self, state: SRState):
        """The search of one sentence: (inst, first (order, idx, heads, score), tokens_of)."""
        from ..dep.linearizer import decode_instance

        s = state.sentence
        n = len(s)
        searched = dataclasses.replace(s, heads=list(state.heads)) if list(state.heads) != list(s.heads) else s
        inst = sr_instance(searched, None, question_labels=self.question_labels, cands=state.cands)
        beam = max(1, int(round(self.beam_factor * n)))
        budget = max(8, int(self.budget_factor * n))
        timeout = 0.0
        if state.deadline is not None:
            timeout = max(1e-3, state.deadline - time.perf_counter())
        order, idx, heads, score, status, pops, edges = decode_instance(
            self.core, inst, beam, budget, timeout, self.complete_beam, int(self.patience_factor * n))
        state.status, state.pops, state.edges = status, pops, edges
        finish = self.finish

        def tokens_of(o, ix):
            forms = [inst.leaf_form[leaf] for leaf in o]
            return finish(state, forms, ix) if finish is not None else forms

        return inst, (order, idx, heads, score), tokens_of

    def __call__(self, state: SRState) -> None:
        from ..dep.linearizer import rerank_goals

        inst, first, tokens_of = self._decode(state)
        order, idx, heads, score = first
        if (self.rerank_lm is not None or self.view_lms) and state.status == "ok":
            order, idx, heads, score = rerank_goals(
                self.core.search, inst, first, tokens_of, self.rerank_lm,
                self.rerank_weight if self.rerank_lm is not None else 0.0, extra=self._views(state.sentence))
        state.order, state.score = list(idx), float(score)
        state.forms = [inst.leaf_form[leaf] for leaf in order]

    def nbest(self, state: SRState, k: int) -> List[tuple]:
        """The plain decode's n-best, the candidates reranking chooses from: up to k (F the
        model's score, tokens, idx input token per output position, heads 1-based output
        positions of the searched tree)."""
        from ..dep.linearizer import goal_candidates

        inst, first, tokens_of = self._decode(state)
        return [(f, toks, cand[1], cand[2]) for f, cand, toks in
                goal_candidates(self.core.search, inst, first, tokens_of, k)]

    def _views(self, s: SRSentence):
        """extra(order, tokens, idx, heads): the weighted view-LM scores of a candidate."""
        if not self.view_lms:
            return None
        from ..lm.views import score_view

        def extra(order, toks, idx, heads):
            tags = [tag_of(s, i) for i in idx]
            return sum(w * score_view(lm, toks, tags, heads) for lm, w in self.view_lms)
        return extra

    def to_json(self) -> dict:
        return {"stage": self.name, "question_labels": self.question_labels, "beam_factor": self.beam_factor,
                "budget_factor": self.budget_factor, "complete_beam": self.complete_beam,
                "patience_factor": self.patience_factor, "rerank_lm": _file_name(self.rerank_lm),
                "rerank_weight": self.rerank_weight, "view_lms": [[_file_name(lm), w] for lm, w in self.view_lms],
                **({"lm": self.lm_entry} if self.lm_entry else {})}

    def files(self) -> List[str]:
        return [f for f in [_file_name(self.rerank_lm)] + [_file_name(lm) for lm, _ in self.view_lms] if f]

    @classmethod
    def from_json(cls, d: dict, model=None, options=None) -> "SearchOrderStage":
        from .._fast._search import edges_for_memory
        from ..dep.core import DepSearch
        from ..model import resolve_lm

        o = options or {}
        core = None
        if model is not None:
            lm = resolve_lm(model, o.get("lm"))
            core = DepSearch(model.weights, model.hash_bits, lm=lm)
            core.search.edge_limit = edges_for_memory(o.get("max_memory"))

        def pick(key, default, cast=float):
            v = o.get(key)
            return cast(v if v is not None else d.get(key, default))

        rl = o.get("rerank_lm")
        rerank = _lm_option(rl) if rl is not None else _lm(model, d.get("rerank_lm"), "order.rerank_lm")
        return cls(core, d.get("lm"), d.get("question_labels", True), pick("beam_factor", DEFAULT_SR_BEAM_FACTOR),
                   pick("budget_factor", DEFAULT_SR_BUDGET_FACTOR), pick("complete_beam", DEFAULT_SR_COMPLETE_BEAM, int),
                   pick("patience_factor", 0.0), rerank, pick("rerank_weight", DEFAULT_SR_RERANK_WEIGHT),
                   _view_lms(model, d.get("view_lms") or [], o))


# ---------------------------------------------------------------------------------- 4. forms
@register
class PunctuationStage(Stage):
    """Punctuation inserted into the ordered sentence (:class:`wo.sr.punct.PunctModel`): at
    each gap one of the model's marks (the comma; hyphens and dashes) or nothing; an inserted
    mark becomes a token of the state's sentence (relation ``punct``, attached to the subtree
    after it) with itself as its only candidate form.  Settings: bias (added to the first mark's score of inserting; above 0
    more commas)."""

    role, name = "punctuation", "punctuation"
    SETTINGS = {"bias": float}

    def __init__(self, model=None, bias: Optional[float] = None):
        self.model = model
        self.bias = float(model.bias if bias is None and model is not None else bias or 0.0)

    def __call__(self, state: SRState) -> None:
        from .punct import right_subtree, spans

        s, order = state.sentence, state.order
        if self.model is None or not order:
            return
        heads = state.output_heads()
        lem, up, rel = [s.lemmas[i] for i in order], [s.upos[i] for i in order], [s.deprels[i] for i in order]
        found = self.model.gaps(lem, up, rel, heads, self.bias)
        if not found:
            return
        lo, _ = spans(heads)
        gaps, marks = [p for p, _ in found], [m for _, m in found]
        n = len(s)
        new_heads = [order[right_subtree(p, heads, lo)] + 1 for p in gaps]
        k = len(gaps)
        state.sentence = dataclasses.replace(
            s, lemmas=s.lemmas + marks, upos=s.upos + ["PUNCT"] * k, xpos=s.xpos + ["_"] * k,
            feats=s.feats + ["_"] * k, heads=s.heads + new_heads, deprels=s.deprels + ["punct"] * k,
            lin=s.lin + [0] * k, forms=s.forms + [None] * k, orig=None)
        state.heads = list(state.heads) + new_heads
        if state.cands is not None:
            state.cands = list(state.cands) + [[m] for m in marks]
        at = set(gaps)
        out, j = [], 0
        for p, t in enumerate(order):
            if p in at:
                out.append(n + j)
                j += 1
            out.append(t)
        state.order = out

    def set_bias(self, mark: str, bias: float) -> None:
        """The bias of ``mark`` (one of the model's marks): the stage's own ``bias`` for the
        first (the comma, which ``--set punctuation.bias`` sets), the model's for the others.
        Raises KeyError for a mark the model does not insert."""
        if mark == self.model.mark:
            self.bias = float(bias)
        else:
            self.model.set_bias(mark, float(bias))

    def to_json(self) -> dict:
        d = self.model.to_json() if self.model is not None else {}
        return {"stage": self.name, **d, "bias": self.bias}

    @classmethod
    def from_json(cls, d: dict, model=None, options=None) -> "PunctuationStage":
        from .punct import PunctModel

        return cls(PunctModel.from_json(d) if "weights" in d else None, d.get("bias"))


@register
class FormStage(Stage):
    """The form of each ordered token among its candidates (:func:`wo.sr.forms.choose_forms`):
    a left-to-right beam search under the word LM ``lm`` with ``penalty`` log10 per rank down a
    token's candidate list, plus ``allomorph_weight`` x the neighbour-character evidence of the
    :class:`wo.sr.inflect.Allomorphs` table and ``context_weight`` x the scores of the
    :class:`wo.sr.inflect.FormContext` model.  Without any of them (or with gold forms) each
    token takes its first candidate.  A stage before it may have chosen the forms already (the
    search orderer): then it does nothing.  Settings: lm, penalty, allomorph_weight, context_weight."""

    role, name = "forms", "forms"
    SETTINGS = {"lm": lm_setting, "penalty": float, "allomorph_weight": float, "context_weight": float}

    def __init__(self, lm=None, penalty: float = DEFAULT_SR_FORM_PENALTY, allomorphs: Optional[Allomorphs] = None,
                 allomorph_weight: float = 0.0, context: Optional[FormContext] = None, context_weight: float = 0.0):
        self.lm = lm
        self.penalty = float(penalty)
        self.allomorphs, self.allomorph_weight = allomorphs, float(allomorph_weight)
        self.context, self.context_weight = context, float(context_weight)

    def __call__(self, state: SRState) -> None:
        if state.forms is not None:
            return
        s, idx = state.sentence, state.order
        allo = self.allomorphs if self.allomorph_weight else None
        fc = self.context if self.context_weight else None
        if state.gold or (self.lm is None and allo is None and fc is None):
            state.forms = [state.cands[i][0] for i in idx]
            return
        keys = [Lexicon.keys(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])[1] for i in idx] if allo else None
        ordered = [state.cands[i] for i in idx]
        ctx = None
        if fc is not None:
            upos_out, head_pos = output_tree(s, idx)
            ctx = fc.scores([s.lemmas[i] for i in idx], upos_out, [s.deprels[i] for i in idx], head_pos, ordered)
        state.forms = choose_forms(self.lm, ordered, self.penalty, keys=keys, allomorphs=allo,
                                   allomorph_weight=self.allomorph_weight, context=ctx,
                                   context_weight=self.context_weight)

    def fit(self, data: "TrainingData", log=lambda m: None) -> dict:
        """Count the allomorph table from the training sentences (its weight stays 0 until
        tuned); the form context models come with the lexicon when it learned them."""
        self.allomorphs = Allomorphs.build(data.gold)
        return {"allomorph_keys": len(self.allomorphs)}

    def to_json(self) -> dict:
        return {"stage": self.name, "lm": _file_name(self.lm), "penalty": self.penalty,
                "allomorph_weight": self.allomorph_weight, "context_weight": self.context_weight,
                **({"allomorphs": self.allomorphs.to_json()} if self.allomorphs is not None else {}),
                **({"context": self.context.to_json()} if self.context is not None else {})}

    def files(self) -> List[str]:
        return [f for f in [_file_name(self.lm)] if f]

    @classmethod
    def from_json(cls, d: dict, model=None, options=None) -> "FormStage":
        o = options or {}
        rl = o.get("rerank_lm")
        lm = _lm_option(rl) if rl is not None else _lm(model, d.get("lm"), "forms.lm")
        allo = Allomorphs.from_json(d["allomorphs"]) if d.get("allomorphs") else None
        ctx = FormContext.from_json(d["context"]) if d.get("context") else None
        cw = o.get("context_weight")
        if cw and ctx is None:
            where = (model.path if model is not None else None) or "model"
            raise ValueError(f"{where} has no form context model for a context weight "
                             f"(`wo sr train` learns one where dev says so)")

        def pick(key, default):
            v = o.get({"penalty": "form_penalty"}.get(key, key))
            return float(v if v is not None else d.get(key, default))

        return cls(lm, pick("penalty", DEFAULT_SR_FORM_PENALTY), allo, pick("allomorph_weight", 0.0), ctx,
                   pick("context_weight", 0.0))


# ---------------------------------------------------------------------------------- 5. language
@register
class LanguageStage(Stage):
    """The language module's rules over the realised tokens (:meth:`wo.sr.lang.Language.postprocess`:
    English a/an agree with the next word, the Greek enclitic accent, ...; not for gold forms)
    and the sentence-initial capital (:meth:`wo.sr.lang.Language.capitalise`).  Settings: rules."""

    role, name = "language", "language"
    SETTINGS = {"rules": flag}

    def __init__(self, lang: str = "xx", rules: bool = True):
        from .lang import language

        self.lang = lang or "xx"
        self.language = language(self.lang)
        self.rules = bool(rules)

    def tokens_of(self, state: SRState, forms: Sequence[str], idx: Sequence[int]) -> List[str]:
        """The realised tokens of ``forms`` (one per output position, input token ``idx[p]`` at
        position p) of the sentence of ``state``: rules, then the capital."""
        s = state.sentence
        out = list(forms)
        if self.rules and not state.gold:
            upos_out, head_pos = output_tree(s, idx)
            out = self.language.postprocess(out, [s.lemmas[i] for i in idx], upos_out, head_pos)
        return self.language.capitalise(out)

    def __call__(self, state: SRState) -> None:
        if state.forms is None:
            state.forms = [state.cands[i][0] for i in state.order]
        state.tokens = self.tokens_of(state, state.forms, state.order)

    def to_json(self) -> dict:
        return {"stage": self.name, "lang": self.lang, "rules": self.rules}

    @classmethod
    def from_json(cls, d: dict, model=None, options=None) -> "LanguageStage":
        o = options or {}
        return cls(d.get("lang", "xx"), d.get("rules", True) if o.get("articles") is None else o["articles"])


# ---------------------------------------------------------------------------------- 6. contractions
@register
class ContractionStage(Stage):
    """Multiword tokens contracted in the surface tokens (:class:`wo.sr.mwt.Contractions`,
    learned from the multiword-token lines of UD files: fr *de le* -> *du*)."""

    role, name = "contractions", "contractions"

    def __init__(self, table=None, files: Sequence[str] = ()):
        from .mwt import Contractions

        self.table = table if table is not None else Contractions({})
        self.sources = list(files)

    def __call__(self, state: SRState) -> None:
        from .mwt import surface_tokens

        if len(self.table):
            ranges = self.table.ranges(state.tokens)
            state.surface = surface_tokens(state.tokens, ranges)
            state.ranges = ranges
        else:
            state.surface = state.ranges = None

    def fit(self, data: "TrainingData", log=lambda m: None) -> dict:
        """Learn the table from ``data.mwt_files`` (UD CoNLL-U paths)."""
        from .mwt import Contractions

        if data.mwt_files:
            self.table = Contractions.build(data.mwt_files)
        return {"contractions": len(self.table)}

    def to_json(self) -> dict:
        return {"stage": self.name, **self.table.to_json()}

    @classmethod
    def from_json(cls, d: dict, model=None, options=None) -> "ContractionStage":
        from .mwt import Contractions

        return cls(Contractions.from_json({k: v for k, v in d.items() if k != "stage"}))


# ---------------------------------------------------------------------------------- loading
def legacy_stages(header: dict) -> List[dict]:
    """The stage list of a model written before the stage list (``sr.lexicon``, ``sr.lift``,
    ``sr.order``, ``sr.mwt``, ``decode``): the same decoding, stage by stage."""
    sr, dec = header["sr"], header.get("decode", {})
    lx = dict(sr["lexicon"])
    lang = sr.get("lang") or lx.get("lang") or ("en" if lx.get("english") else "xx")
    out: List[dict] = []
    if sr.get("lift"):
        out.append({"stage": "lift", **sr["lift"]})
    out.append({"stage": "candidates", "lexicon": {k: v for k, v in lx.items()
                                                   if k not in ("allomorphs", "context", "context_next")}})
    views = [[f, w] for f, w in dec.get("rerank_lms") or []]
    order = sr.get("order") or {}
    if order.get("kind") == "local":
        out.append({"stage": "order-local", **{k: v for k, v in order.items() if k != "kind"},
                    "words_lm": dec.get("rerank_lm"), "words_weight": dec.get("rerank_weight", DEFAULT_SR_RERANK_WEIGHT),
                    "view_lms": views})
        out.append({"stage": "forms", "lm": dec.get("rerank_lm"),
                    "penalty": dec.get("form_penalty", DEFAULT_SR_FORM_PENALTY),
                    "allomorph_weight": dec.get("allomorph_weight", 0.0),
                    "context_weight": dec.get("context_weight", 0.0),
                    **({"allomorphs": lx["allomorphs"]} if lx.get("allomorphs") else {}),
                    **({"context": lx["context"]} if lx.get("context") else {})})
    else:
        out.append({"stage": "order-search", "question_labels": bool(sr.get("question_labels", False)),
                    "beam_factor": dec.get("beam_factor", DEFAULT_SR_BEAM_FACTOR),
                    "budget_factor": dec.get("budget_factor", DEFAULT_SR_BUDGET_FACTOR),
                    "complete_beam": dec.get("complete_beam", DEFAULT_SR_COMPLETE_BEAM),
                    "patience_factor": dec.get("patience_factor", 0.0), "rerank_lm": dec.get("rerank_lm"),
                    "rerank_weight": dec.get("rerank_weight", DEFAULT_SR_RERANK_WEIGHT), "view_lms": views})
    out.append({"stage": "language", "lang": lang, "rules": True})
    if sr.get("mwt"):
        out.append({"stage": "contractions", **sr["mwt"]})
    return out


def stage_list(header: dict) -> List[dict]:
    """The stage entries of an SR model header (``sr.stages``, or :func:`legacy_stages`)."""
    sr = header.get("sr", {})
    return [dict(d) for d in sr["stages"]] if "stages" in sr else legacy_stages(header)


def named_files(header: dict) -> List[str]:
    """The file names (LMs) the stages of an SR model header read beside the model."""
    out = []
    for d in stage_list(header):
        for k in ("words_lm", "lm", "rerank_lm"):
            if isinstance(d.get(k), str) and d[k]:
                out.append(d[k])
        out += [f for f, _ in d.get("view_lms") or []]
    return list(dict.fromkeys(out))


def parse_settings(pairs: Sequence[str]) -> Dict[str, Dict[str, str]]:
    """``ROLE.KEY=VALUE`` strings (``--set``) -> {role: {key: value str}}.  Raises ValueError
    naming a malformed pair."""
    out: Dict[str, Dict[str, str]] = {}
    for p in pairs:
        key, eq, value = p.partition("=")
        role, dot, k = key.strip().partition(".")
        if not eq or not dot or not k or not role:
            raise ValueError(f"--set {p!r}: expected ROLE.KEY=VALUE (e.g. lift.threshold=0.7)")
        out.setdefault(role, {})[k] = value.strip()
    return out


def settable() -> Dict[str, Dict[str, str]]:
    """What ``--set`` can change: {role: {key: "stage names: type"}} over the registered stages
    (a key two stages of a role share lists both)."""
    out: Dict[str, Dict[str, str]] = {}
    for name, cls in STAGES.items():
        for k, t in cls.SETTINGS.items():
            tn = getattr(t, "__name__", "value")
            prev = out.setdefault(cls.role, {}).get(k)
            out[cls.role][k] = f"{prev.split(':')[0]}, {name}: {tn}" if prev else f"{name}: {tn}"
    return out


def apply_settings(stages: Sequence[Stage], settings: Dict[str, Dict[str, Any]]) -> None:
    """Set ``settings`` ({role: {key: value}}, values str or typed) on the loaded ``stages``.
    Raises ValueError for a role the model has no stage for, a key the stage does not take, or
    a value of the wrong type."""
    by_role: Dict[str, Stage] = {}
    for st in stages:   # the first stage of a role, as Realizer.stage
        by_role.setdefault(st.role, st)
    for role, kv in settings.items():
        st = by_role.get(role)
        if st is None:
            raise ValueError(f"--set {role}.*: this model has no {role!r} stage (it has: {', '.join(by_role)})")
        for k, v in kv.items():
            cast = st.SETTINGS.get(k)
            if cast is None:
                keys = ", ".join(sorted(st.SETTINGS)) or "none"
                raise ValueError(f"--set {role}.{k}: the {st.name} stage has no setting {k!r} (settable: {keys})")
            try:
                value = cast(v)
            except (TypeError, ValueError) as e:
                raise ValueError(f"--set {role}.{k}={v}: not a {getattr(cast, '__name__', 'value')}"
                                 f"{': ' + str(e) if cast in (lm_setting, view_lms_setting) else ''}") from None
            bad = _bad_setting(cast, k, value)
            if bad:
                raise ValueError(f"--set {role}.{k}={v}: not {bad}")
            if k == "context_weight" and value and getattr(st, "context", None) is None:
                raise ValueError("--set forms.context_weight: this model has no form context model")
            setattr(st, k, value)


def _bad_setting(cast, key: str, v) -> Optional[str]:
    """What a typed stage setting ``key`` = ``v`` should be but is not, or None when it is
    fine: an int setting an integer (at least 1 for a beam, else at least 0), a float setting
    a finite number, a switch true or false; any other float finite.  One rule for ``--set``
    (:func:`apply_settings`, after the cast) and for a model header
    (:func:`check_stage_settings`)."""
    if cast is int:
        low = 1 if "beam" in key else 0
        if not isinstance(v, int) or isinstance(v, bool) or v < low:
            return f"an integer of at least {low}"
    elif cast is float or (cast is None and isinstance(v, float)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            return "a finite number"
    elif cast is flag and not isinstance(v, bool):
        return "true or false"
    return None


def check_stage_settings(cls: Type["Stage"], d: dict, where: str) -> None:
    """The settings a model header gives stage ``cls`` (its dict ``d``), checked by the rule of
    ``--set`` (:func:`_bad_setting`).  Raises ModelError naming ``where`` (the model file), the
    stage and the key."""
    from ..model import ModelError

    for k, v in d.items():
        bad = _bad_setting(cls.SETTINGS.get(k), k, v)
        if bad:
            raise ModelError(f"{where}: stage {d.get('stage')!r}: setting {k} = {json.dumps(v)} is not {bad} "
                             "(a damaged or hand-edited model header)")


def load_stages(model, options: Optional[dict] = None) -> List[Stage]:
    """The stages of an SR model, in the order they run, loaded with the realiser's keyword
    ``options``.  Raises ValueError for an unknown stage name, ModelError for a stage setting
    of the wrong type (:func:`check_stage_settings`), ModelError/LMError for a missing or bad
    file it names."""
    stages = []
    for d in stage_list(model.header):
        cls = STAGES.get(d.get("stage"))
        if cls is None:
            raise ValueError(f"{model.path or 'model'}: unknown stage {d.get('stage')!r} (known: {', '.join(STAGES)}): "
                             f"import the module that registers it (wo.sr.stages.register) before loading the model")
        check_stage_settings(cls, d, model.path or "model")
        stages.append(cls.from_json(d, model, options or {}))
    for st in stages:
        st.bind(stages)
    return stages


# ---------------------------------------------------------------------------------- training data
@dataclass
class TrainingData:
    """What the stages learn from (:meth:`Stage.fit`).

    sentences: the usable training T1 sentences (gold forms filled in); positions: per
    sentence, the 1-based reference position of each token; gold: the same sentences in
    reference order (:class:`wo.io.conllu.Sentence`, plus any reference UD sentences) for the
    lexicon, the allomorphs and the LMs; mwt_files: UD CoNLL-U files with multiword-token
    lines (contractions); lexicon: a lexicon already built (else the candidates stage builds
    one); dropped: sentences left out, by reason; deep: aligned deep-track examples
    (:class:`wo.sr.complete.DeepExample`) for the completion stage.
    """

    sentences: List[SRSentence]
    positions: List[List[int]]
    gold: list
    mwt_files: List[str] = field(default_factory=list)
    lexicon: Optional[Lexicon] = None
    dropped: Dict[str, int] = field(default_factory=dict)
    deep: list = field(default_factory=list)
