"""Realisation of T1 input: candidate forms, search instances, the :class:`Realizer`, batch runs
and the SR submission writer (Zhang & Clark 2015, section 5.7 on the shared search core)."""
from __future__ import annotations

import dataclasses
import os
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from .. import system
from ..dep.instance import QUESTION_MARKS, ROOT, SearchArrays, gold_arrays
from ..io.conllu import Sentence
from ..io.trees import is_projective, projectivize
from ..model import atom
from .inflect import Lexicon
from .t1 import SRSentence, lin_values

DEFAULT_SR_BEAM_FACTOR = 16.0
DEFAULT_SR_BUDGET_FACTOR = 200.0
DEFAULT_SR_COMPLETE_BEAM = 32
DEFAULT_SR_RERANK_WEIGHT = 1.0   # F + w * log10 p over the popped goals (EWT dev: 85.39 with the shipped 4-gram)
DEFAULT_SR_FORM_PENALTY = 1.0    # local orderer: log10 LM cost of each rank down the candidate list of a form
# ---------------------------------------------------------------------------------- alignment
def align(s: SRSentence, ref: Sequence[str], lex: Lexicon, max_steps: int = 20000) -> Optional[List[int]]:
    """Gold positions of the tokens of ``s`` in the reference tokens ``ref`` (section 5.7).

    Each token may take a reference position whose word (lower-cased) is one of its candidate
    forms, its lemma or its gold form; ambiguities are resolved by a depth-first search, most
    constrained token first, that keeps only assignments whose tree is projective in the
    reference order and respects ``lin``.  Returns a list of 1-based positions, or None when no
    alignment exists within ``max_steps``.
    """
    n = len(s)
    if len(ref) != n:
        return None
    low = [w.lower() for w in ref]
    opts = []
    for i in range(n):
        c = {f.lower() for f in lex.candidates(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])[0]}
        c.add(s.lemmas[i].lower())
        if s.forms[i]:
            c.add(s.forms[i].lower())
        o = [p for p in range(n) if low[p] in c]
        if not o:
            return None
        opts.append(o)
    order = sorted(range(n), key=lambda i: (len(opts[i]), i))
    pos = [-1] * n
    used = [False] * n
    steps = 0

    def ok_full() -> bool:
        sh = [0] * n
        for i in range(n):
            sh[pos[i]] = 0 if s.heads[i] == 0 else pos[s.heads[i] - 1] + 1
        if not is_projective(sh):
            return False
        surf = [0] * n
        for i in range(n):
            surf[pos[i]] = i
        lin = lin_values(sh, [s.deprels[surf[p]] for p in range(n)])
        return all(lin[pos[i]] == s.lin[i] for i in range(n) if s.lin[i])

    def dfs(k: int) -> bool:
        nonlocal steps
        steps += 1
        if steps > max_steps:
            return False
        if k == n:
            return ok_full()
        i = order[k]
        for p in opts[i]:
            if not used[p]:
                used[p] = True
                pos[i] = p
                if dfs(k + 1):
                    return True
                used[p] = False
        pos[i] = -1
        return False

    if dfs(0):
        return [p + 1 for p in pos]
    return None
# ---------------------------------------------------------------------------------- instances
@dataclass
class SRInstance(SearchArrays):
    """Search arrays of one T1 sentence, tokens in canonical order (input order irrelevant).

    arrays(): (tok_word uint32[n], given_head int32[n], given_ndeps int32[n], leaf_tok int32[L],
    leaf_pos uint32[L]); extra(): dict(leaf_word uint32[L], tok_label uint32[n], tok_lin int32[n]);
    leaf_form: list[str] of length L; canon int64[n]: canonical token c = input token canon[c];
    gold: optional 6-tuple of reference arrays (see ``DepSearch.forced``).
    """

    tok_word: np.ndarray
    given_head: np.ndarray
    given_ndeps: np.ndarray
    leaf_tok: np.ndarray
    leaf_pos: np.ndarray
    leaf_word: np.ndarray
    tok_label: np.ndarray
    tok_lin: np.ndarray
    leaf_form: List[str]
    canon: np.ndarray
    gold: Optional[tuple] = None
    added_gold: int = 0
    lifted: bool = False

    def extra(self) -> dict:
        """The keyword ``DepSearch`` arguments for SR input."""
        return {"leaf_word": self.leaf_word, "tok_label": self.tok_label, "tok_lin": self.tok_lin}


def _output_tree(s: SRSentence, idx: Sequence[int]):
    """The UPOS (list of n str) and heads (list of n int: 0-based output positions, -1 for the
    root or a head not in the output) of the tokens of ``s`` in the output order ``idx``."""
    at = {t: p for p, t in enumerate(idx)}
    return [s.upos[i] for i in idx], [at.get(s.heads[i] - 1, -1) if s.heads[i] else -1 for i in idx]


def _rerank(heads: Sequence[int], lin: Sequence[int]) -> List[int]:
    """Renumber ``lin`` ranks 1..K per head and side, keeping their order (input may have gaps)."""
    groups: Dict[tuple, List[int]] = defaultdict(list)
    for i, v in enumerate(lin):
        if v:
            groups[(heads[i], v > 0)].append(i)
    out = [0] * len(lin)
    for (_, right), ids in groups.items():
        for r, i in enumerate(sorted(ids, key=lambda i: (abs(lin[i]), i)), 1):
            out[i] = r if right else -r
    return out


def training_tree(s: SRSentence, gold_positions: Optional[Sequence[int]]):
    """The tree a sentence is trained on: (heads 1-based, lin, was_lifted).  A tree that is not
    projective in the reference order (``gold_positions``, 1-based per token) is projectivised
    by lifting (:func:`wo.io.trees.projectivize`), and ``lin`` is recomputed on the lifted tree
    for the tokens that carry it; ``lin`` ranks are then renumbered per head and side."""
    n = len(s)
    heads, lin = list(s.heads), list(s.lin)
    was_lifted = False
    if gold_positions is not None:
        surf = [0] * n
        for i, p in enumerate(gold_positions):
            surf[p - 1] = i
        sh = [0 if heads[surf[p]] == 0 else gold_positions[heads[surf[p]] - 1] for p in range(n)]
        was_lifted = not is_projective(sh)
        if was_lifted:
            lifted = projectivize(sh)
            heads = [0 if lifted[gold_positions[i] - 1] == 0 else surf[lifted[gold_positions[i] - 1] - 1] + 1
                     for i in range(n)]
            # lin is relative to the head: recompute it on the lifted tree for lin-marked tokens
            lv = lin_values(lifted, [s.deprels[surf[p]] for p in range(n)])
            lin = [lv[gold_positions[i] - 1] if s.lin[i] else 0 for i in range(n)]
    return heads, _rerank(heads, lin), was_lifted


def _pos(s: SRSentence, i: int) -> str:
    return s.xpos[i] if s.xpos[i] != "_" else s.upos[i]


def question_heads(s: SRSentence) -> List[bool]:
    """Per token: True if it heads a question clause, i.e. has a ``punct`` dependent whose
    lemma is a question mark (UD attaches the "?" to the clause it ends)."""
    out = [False] * len(s)
    for i in range(len(s)):
        h = s.heads[i]
        if h > 0 and s.deprels[i] == "punct" and s.lemmas[i] in QUESTION_MARKS:
            out[h - 1] = True
    return out


def sr_instance(s: SRSentence, lex: Lexicon, gold_positions: Optional[Sequence[int]] = None,
                question_labels: bool = False, gold_forms: bool = False) -> SRInstance:
    """Build the search arrays for a T1 sentence.

    question_labels: the label of every dependent of a question clause's head
    (:func:`question_heads`) gets a "?" mark, so the label-conjoined templates learn question
    order apart from statement order ("do you know", "what is it"); models record whether they
    were trained so (``header["sr"]["question_labels"]``).

    With ``gold_positions`` (1-based reference position per token, e.g. ``s.orig``) and gold
    forms in ``s.forms``, the reference arrays are added for training; a gold form missing from
    the candidates is added (counted in ``added_gold``).  gold_forms (decoding only): when every
    token has its gold form in column 3 (``wo sr make-input --with-gold``), that form is its only
    candidate, so the search orders the given words (ordering measured apart from inflection,
    as the peers' "gold forms" figures are); a reference tree that is not projective
    in the reference order is projectivised by lifting, and the lifted heads become the given
    heads, so no word is lost.  Raises ValueError on an empty sentence.
    """
    n = len(s)
    if n == 0:
        raise ValueError("empty sentence")
    use_gold = gold_forms and gold_positions is None and n > 0 and all(s.forms)
    heads, lin, was_lifted = training_tree(s, gold_positions)
    cands, gold_form, added = [], [""] * n, 0
    for i in range(n):
        if use_gold:   # ordering only: the T1 input's gold forms are the candidates
            cands.append([s.forms[i]])
            continue
        c, _ = lex.candidates(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])
        if gold_positions is not None and s.forms[i]:
            g = s.forms[i]
            if g not in c:   # the sentence-initial capital is not part of the candidates
                g = Lexicon.surface(g, s.lemmas[i], gold_positions[i] - 1)
                if g not in c:
                    c = c + [g]
                    added += 1
            gold_form[i] = g
        cands.append(c)
    key = []
    for i in range(n):
        h = heads[i]
        hk = "<ROOT>" if h == 0 else s.lemmas[h - 1] + "\t" + s.deprels[h - 1]
        ndep = sum(1 for x in heads if x == i + 1)
        key.append((s.lemmas[i], _pos(s, i), s.deprels[i], hk, lin[i], ndep, tuple(cands[i]), s.feats[i]))
    order = sorted(range(n), key=lambda i: key[i])
    canon = np.asarray(order, dtype=np.int64)
    where = np.empty(n, dtype=np.int64)
    where[canon] = np.arange(n)
    tok_word = np.array([atom(s.lemmas[i]) for i in order], dtype=np.uint32)
    given_head = np.empty(n, dtype=np.int32)
    for c, i in enumerate(order):
        given_head[c] = ROOT if heads[i] == 0 else where[heads[i] - 1]
    given_ndeps = np.zeros(n, dtype=np.int32)
    for c in range(n):
        if given_head[c] >= 0:
            given_ndeps[given_head[c]] += 1
    qh = [False] * n
    if question_labels:
        q = question_heads(s)
        qh = [heads[i] > 0 and q[heads[i] - 1] for i in range(n)]
    leaf_tok, leaf_form, leaf_pos = [], [], []
    for c, i in enumerate(order):
        for f in cands[i]:
            leaf_tok.append(c)
            leaf_form.append(f)
            leaf_pos.append(atom(_pos(s, i)))
    inst = SRInstance(tok_word, given_head, given_ndeps, np.asarray(leaf_tok, dtype=np.int32),
                      np.asarray(leaf_pos, dtype=np.uint32),
                      np.array([atom(f) for f in leaf_form], dtype=np.uint32),
                      np.array([atom("dep:" + s.deprels[i] + ("?" if qh[i] else "")) for i in order],
                               dtype=np.uint32),
                      np.array([lin[i] for i in order], dtype=np.int32), leaf_form, canon,
                      added_gold=added, lifted=gold_positions is not None and was_lifted)
    if gold_positions is not None:
        g = Sentence([s.forms[i] or "" for i in range(n)], list(s.lemmas), list(s.upos),
                     [_pos(s, i) for i in range(n)], list(s.feats), heads, list(s.deprels),
                     ["_"] * n, meta={"_gold_pos": [p - 1 for p in gold_positions]})
        arrs = gold_arrays(g, order, where)
        inst.gold = arrs + (np.array([atom(gold_form[i]) for i in order], dtype=np.uint32),)
    return inst


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

    def surface_tokens(self) -> List[str]:
        """The surface tokens: multiword tokens contracted (:mod:`wo.sr.mwt`); the syntactic
        words when the model has no contractions."""
        return list(self.surface) if self.surface is not None else list(self.tokens)


class Realizer(system.System):
    """Joint inflection and ordering of T1 input with a trained SR model (section 5.7).

    Parameters: model (:class:`wo.model.Model` whose header holds ``sr.lexicon``); beam_factor
    (chart k*n), budget_factor (pops per word), complete_beam, timeout (seconds per sentence),
    patience_factor (pops per word spent after the first goal looking for a better one); lm:
    the n-gram LM over the candidate forms (Zhang, Blackwood & Clark 2012), as
    :func:`wo.model.resolve_lm` takes it (None: the model's own, if it was trained with one);
    articles: apply the language module's rules to the realised tokens
    (:meth:`wo.sr.lang.Language.postprocess`; English: a/an agree with the following output word,
    :func:`wo.sr.lang.en.agree_articles`, since the search itself picks a/an as often as the
    features allow, which is rarely right before unseen words); rerank_lm (a
    :class:`wo.lm.LanguageModel` or a path) and rerank_weight: rerank the goal edges the search
    popped by F + rerank_weight * log10 p of their realised strings
    (:func:`wo.dep.linearizer.rerank_goals`; chosen on EWT dev, ``bench/sr_eval.py``); None =
    the model header's ``decode.rerank_lm`` / ``rerank_weight`` (:func:`rerank_lm_of`), "none" =
    no reranking.  gold_forms: a T1 sentence that carries every gold form (column 3) is ordered
    with those forms (no inflection; ``wo sr make-input --with-gold``).  The model header's
    ``sr.lang`` selects the language module (:mod:`wo.sr.lang`) and ``sr.mwt`` the multiword
    token contractions (:mod:`wo.sr.mwt`) of :attr:`SRResult.surface`; ``sr.lift`` the lifting
    model of non-projective orders (:mod:`wo.sr.nonproj`): tokens it lifts are re-attached to an
    ancestor before the search (lift_threshold: its probability threshold, None = the model's,
    above 1 = no lifting; the output tree is always the given one).  rerank_lms: (LM or path,
    weight) pairs of LMs over views of the tree (:mod:`wo.lm.views`, e.g. the order of each
    head's dependents, ``wo lm train --conllu --view dep-mix``) added to the reranking score;
    None = the header's ``decode.rerank_lms``, "none" = none (``rerank_lm="none"`` turns both off).
    max_memory: search memory per sentence in MiB of the search orderer (default 1536; past it
    the search stops, status "memory", see :class:`wo.dep.Linearizer`; the local orderer's
    memory is linear in the sentence).  allomorph_weight: weight of the neighbour-character
    evidence of the lexicon's :class:`wo.sr.inflect.Allomorphs` table in the choice of forms
    (:func:`choose_forms`; local orderer; None = the header's ``decode.allomorph_weight``, 0 =
    off); context_weight: likewise for the scores of the lexicon's
    :class:`wo.sr.inflect.FormContext` model (the neighbours' lemmas and UPOS, the relation;
    ``decode.context_weight``); lexicon: the :class:`wo.sr.inflect.Lexicon` of the header's
    ``sr.lexicon``, already built (training decodes dev every epoch with the same one and keeps
    its memoised candidates).
    Raises ValueError if the model is not an SR model, max_memory is not positive or a
    context_weight is given to a model without a context model, ModelError if its LM is missing.
    """

    def __init__(self, model, beam_factor: Optional[float] = None, budget_factor: Optional[float] = None,
                 complete_beam: Optional[int] = None, timeout: float = 0.0,
                 patience_factor: Optional[float] = None, lm=None, articles: bool = True,
                 rerank_lm=None, rerank_weight: Optional[float] = None, gold_forms: bool = True,
                 lift_threshold: Optional[float] = None, rerank_lms=None, form_penalty: Optional[float] = None,
                 max_memory: Optional[float] = None, allomorph_weight: Optional[float] = None,
                 lexicon: Optional[Lexicon] = None, context_weight: Optional[float] = None):
        from .._fast._search import edges_for_memory
        from ..dep.core import DepSearch
        from .mwt import Contractions
        from ..model import decode_option, resolve_lm

        if "sr" not in model.header:
            raise ValueError(f"{model.path or 'model'} is not an SR model (train one with `wo sr train`)")
        self.model = model
        self.lexicon = lexicon if lexicon is not None else Lexicon.from_json(model.header["sr"]["lexicon"])
        self.question_labels = bool(model.header["sr"].get("question_labels", False))
        self.contractions = Contractions.from_json(model.header["sr"].get("mwt", {}))
        from .nonproj import LiftModel
        lift = model.header["sr"].get("lift")
        self.lift = LiftModel.from_json(lift) if lift else None
        self.lift_threshold = lift_threshold
        self.articles = articles
        self.gold_forms = gold_forms
        dec = model.header.get("decode", {})
        self.beam_factor = decode_option(beam_factor, dec, "beam_factor", DEFAULT_SR_BEAM_FACTOR)
        self.budget_factor = decode_option(budget_factor, dec, "budget_factor", DEFAULT_SR_BUDGET_FACTOR)
        self.complete_beam = decode_option(complete_beam, dec, "complete_beam", DEFAULT_SR_COMPLETE_BEAM, int)
        self.patience_factor = decode_option(patience_factor, dec, "patience_factor", 0.0)
        self.timeout = timeout
        self.rerank_lm = rerank_lm_of(model, rerank_lm)
        self.rerank_lms = rerank_lms_of(model, "none" if rerank_lm == "none" else rerank_lms)
        self.rerank_weight = decode_option(rerank_weight, dec, "rerank_weight", DEFAULT_SR_RERANK_WEIGHT)
        self.form_penalty = decode_option(form_penalty, dec, "form_penalty", DEFAULT_SR_FORM_PENALTY)
        self.allomorph_weight = decode_option(allomorph_weight, dec, "allomorph_weight", 0.0)
        self.context_weight = decode_option(context_weight, dec, "context_weight", 0.0)
        if context_weight and self.lexicon.context is None:
            raise ValueError(f"{model.path or 'model'} has no form context model for --context-weight "
                             f"(train it with `wo sr train --form-context`)")
        self.local = None
        order = model.header["sr"].get("order")
        if order and order.get("kind") == "local":   # the local orderer (wo.sr.order), not the search
            from .order import FEATURE_SET as ORDER_FEATURES, LocalOrderer

            if order.get("feature_set") != ORDER_FEATURES:
                raise ValueError(f"{model.path or 'model'}: local-order feature set {order.get('feature_set')!r}, "
                                 f"expected {ORDER_FEATURES!r} (retrain with this version of wo)")
            self.local = LocalOrderer.from_table(model.weights, model.hash_bits, order)
            self.lm, self.core = None, None
            return
        self.lm = resolve_lm(model, lm)
        self.core = DepSearch(model.weights, model.hash_bits, lm=self.lm)
        self.core.search.edge_limit = edges_for_memory(max_memory)

    name = "sr"

    @classmethod
    def load(cls, path: Optional[str] = None, verify: bool = True, **options) -> "Realizer":
        """Load an SR model file (memory-mapped; None: the shipped English model); verify: check
        the weights' checksum.  Raises ModelError / ValueError."""
        from ..model import Model, default_model

        return cls(Model.load(path or default_model("sr"), verify=verify), **options)

    def decode_item(self, item: SRSentence) -> SRResult:
        """:meth:`realize` of one T1 sentence."""
        return self.realize(item)

    def fallback(self, item: SRSentence, message: str) -> SRResult:
        """The lemmas of a failed sentence in input order (:func:`fallback_result`)."""
        return fallback_result(item, message)

    def _decode(self, s: SRSentence):
        """Decode one sentence: (inst, the sentence searched (lifted heads), the given one,
        (order, idx, heads, score), status, pops, edges, tokens_of)."""
        if s.error:
            raise ValueError(s.error)
        n = len(s)
        gold = self.gold_forms and n > 0 and all(s.forms)
        given = s
        if self.lift is not None:
            lifted = self.lift.predict(s.heads, s.deprels, s.upos, s.lin, self.lift_threshold)
            if lifted != s.heads:   # linearize the lifted tree: a non-projective order of the given one
                s = dataclasses.replace(s, heads=lifted)
        inst = sr_instance(s, self.lexicon, question_labels=self.question_labels, gold_forms=gold)
        beam = max(1, int(round(self.beam_factor * n)))
        budget = max(8, int(self.budget_factor * n))
        from ..dep.linearizer import decode_instance

        order, idx, heads, score, status, pops, edges = decode_instance(
            self.core, inst, beam, budget, self.timeout, self.complete_beam, int(self.patience_factor * n))
        lang = self.lexicon.language
        searched = s

        def tokens_of(o, ix):
            forms = [inst.leaf_form[leaf] for leaf in o]
            if self.articles and not gold:
                forms = lang.postprocess(forms, [searched.lemmas[i] for i in ix], *_output_tree(searched, ix))
            return lang.capitalise(forms)

        return inst, s, given, (order, idx, heads, score), status, pops, edges, tokens_of

    def _realize_local(self, s: SRSentence, t0: float) -> SRResult:
        """Realise one sentence with the local orderer: every token takes its gold form (T1
        column 3, when all are given and ``gold_forms``) or its first candidate form, then the
        (lifted) tree is ordered domain by domain (:meth:`wo.sr.order.LocalOrderer.linearize`)."""
        if s.error:
            raise ValueError(s.error)
        n = len(s)
        if n == 0:
            raise ValueError("empty sentence")
        gold = self.gold_forms and all(s.forms)
        if gold:
            cands = [[f] for f in s.forms]
        else:
            cands = [self.lexicon.candidates(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])[0] for i in range(n)]
        forms = [c[0] for c in cands]
        heads = s.heads
        if self.lift is not None:
            heads = self.lift.predict(s.heads, s.deprels, s.upos, s.lin, self.lift_threshold)
        low = [f.lower() for f in forms]
        idx, score = self.local.linearize(heads, s.lemmas, s.upos, s.deprels, s.feats, _rerank(heads, s.lin), low,
                                          rescore=self._domain_rescore(s, heads, low),
                                          deadline=t0 + self.timeout if self.timeout > 0 else None)
        status = "timeout" if self.local.timed_out else "ok"
        upos_out, head_pos = _output_tree(s, idx)   # per output position: UPOS, the head's position (-1: root)
        allo = self.lexicon.allomorphs if self.allomorph_weight else None
        fc = self.lexicon.context if self.context_weight else None
        if (self.rerank_lm is not None or allo is not None or fc is not None) and not gold:
            keys = [Lexicon.keys(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])[1] for i in idx] if allo else None
            ordered = [cands[i] for i in idx]
            ctx = None
            if fc is not None:
                ctx = fc.scores([s.lemmas[i] for i in idx], upos_out, [s.deprels[i] for i in idx], head_pos, ordered)
            out = choose_forms(self.rerank_lm, ordered, self.form_penalty, keys=keys,
                               allomorphs=allo, allomorph_weight=self.allomorph_weight,
                               context=ctx, context_weight=self.context_weight)
        else:
            out = [forms[i] for i in idx]
        lang = self.lexicon.language
        if self.articles and not gold:
            out = lang.postprocess(out, [s.lemmas[i] for i in idx], upos_out, head_pos)
        toks = lang.capitalise(out)
        return SRResult(toks, idx, [h + 1 for h in head_pos], [s.deprels[i] for i in idx], 0,
                        self.contractions.apply(toks) if len(self.contractions) else None,
                        score=float(score), status=status, pops=0, seconds=time.perf_counter() - t0)

    def _domain_rescore(self, s: SRSentence, heads: Sequence[int], low: Sequence[str]):
        """The LM scores the local orderer adds to each complete order of a domain: the word LM
        (``rerank_weight`` x log10 p of the subtree's words, with sentence boundaries at the
        root) and each view LM of ``rerank_lms`` on the domain (:mod:`wo.lm.views`: ``dep-mix``
        and ``dep-word`` score the head's sequence, ``words`` and ``pos`` the subtree's).
        Returns rescore(h, span, order) for :meth:`wo.sr.order.LocalOrderer.linearize`, or None
        without LMs."""
        from ..lm.views import CLOSED_TAGS, view_of

        wl = self.rerank_lm if self.rerank_weight else None
        views = [(lm, w, view_of(lm)) for lm, w in self.rerank_lms if w]
        if wl is None and not views:
            return None
        tags = [_pos(s, i) for i in range(len(s))]
        n = len(s)
        # the sentence's words mapped to each LM's ids once (KenLM's vocabulary ids), gathered per order
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

        def rescore(h: int, span: List[int], order: List[int]) -> float:
            root = heads[h] == 0
            v = 0.0
            if wids is not None:
                v += self.rerank_weight * wl.core.total(wids[span], root, root)
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

    def _views(self, s: SRSentence):
        """extra(order, tokens, idx, heads): the weighted view-LM scores of a candidate."""
        if not self.rerank_lms:
            return None
        from ..lm.views import score_view

        def extra(order, toks, idx, heads):
            tags = [_pos(s, i) for i in idx]
            return sum(w * score_view(lm, toks, tags, heads) for lm, w in self.rerank_lms)
        return extra

    def nbest(self, s: SRSentence, k: int = 20) -> List[tuple]:
        """The plain decode's n-best, the candidates reranking chooses from: a list of up to k
        (F the model's score, tokens list[str], idx list[int] input token per output position,
        heads list[int] 1-based output positions of the searched tree; for the local orderer,
        its one output with score 0 and the given tree).  Raises ValueError for an unusable
        sentence."""
        from ..dep.linearizer import goal_candidates

        if self.local is not None:   # the local orderer keeps no sentence-level n-best: its one output
            r = self._realize_local(s, time.perf_counter())
            return [(0.0, r.tokens, r.order, r.heads)]
        inst, _, _, first, status, _, _, tokens_of = self._decode(s)
        return [(f, toks, cand[1], cand[2]) for f, cand, toks in
                goal_candidates(self.core.search, inst, first, tokens_of, k)]

    def realize(self, s: SRSentence) -> SRResult:
        """Realise one T1 sentence.  Raises ValueError for an unusable sentence."""
        t0 = time.perf_counter()
        if self.local is not None:
            return self._realize_local(s, t0)
        from ..dep.linearizer import rerank_goals

        inst, s, given, first, status, pops, edges, tokens_of = self._decode(s)
        order, idx, heads, score = first
        if (self.rerank_lm is not None or self.rerank_lms) and status == "ok":
            order, idx, heads, score = rerank_goals(self.core.search, inst, first, tokens_of, self.rerank_lm,
                                                    self.rerank_weight if self.rerank_lm is not None else 0.0,
                                                    extra=self._views(s))
        toks = tokens_of(order, idx)
        if s is not given:   # the output tree is the given one, not the lifted one
            at = {t: p for p, t in enumerate(idx)}
            heads = [0 if given.heads[t] == 0 else at[given.heads[t] - 1] + 1 for t in idx]
            s = given
        return SRResult(toks, idx, heads, [s.deprels[i] for i in idx], edges,
                        self.contractions.apply(toks) if len(self.contractions) else None,
                        score=float(score), status=status, pops=pops, seconds=time.perf_counter() - t0)


def choose_forms(lm, cands: Sequence[Sequence[str]], penalty: float, beam: int = 8,
                 keys: Optional[Sequence[str]] = None, allomorphs=None, allomorph_weight: float = 0.0,
                 context: Optional[Sequence[Sequence[float]]] = None, context_weight: float = 0.0) -> List[str]:
    """The form of each token of an ordered sentence, chosen among its candidates (best first)
    by a left-to-right beam search under the word LM ``lm`` (lower-cased forms, log10 p with
    sentence boundaries; None: no LM term) minus ``penalty`` per rank down a token's candidate
    list, plus ``allomorph_weight`` x the neighbour-character evidence of the
    :class:`wo.sr.inflect.Allomorphs` table for the tokens' lexicon ``keys`` (each form against
    the previous word's last character and last vowel and the next word's first character),
    plus ``context_weight`` x ``context[pos][rank]`` (per output position, one score per
    candidate: :meth:`wo.sr.inflect.FormContext.scores`).

    cands: per output position, a non-empty list of str; keys: per output position, the
    lexicon key (:meth:`wo.sr.inflect.Lexicon.keys` [1]).  Returns list[str], one per position.
    """
    allo = allomorphs if allomorph_weight and allomorphs is not None and keys is not None else None
    # the LM's word ids of every candidate, mapped once
    cids = [lm.word_ids([f.lower() for f in c]) for c in cands] if lm is not None else None
    # a hypothesis: (score, node); a node (form, previous node, forms so far, the LM ids of the
    # last three forms) or None before the first form
    hyps: list = [(0.0, None)]
    for pos, c in enumerate(cands):
        ids = cids[pos].tolist() if cids is not None else None
        if len(c) == 1 and len(hyps) == 1:   # one hypothesis, one form: nothing to choose
            sc, node = hyps[0]
            n, hist = (node[2], node[3]) if node is not None else (0, ())
            hyps = [(sc, (c[0], node, n + 1, (hist + (ids[0],))[-3:] if ids is not None else ()))]
            continue
        nxt = []
        terms: Dict[Optional[str], List[float]] = {}   # the allomorph terms of c after a previous form
        for sc, node in hyps:
            n, hist = (node[2], node[3]) if node is not None else (0, ())
            # log10 p of each candidate after the last three forms (after <s> near the start)
            lp = lm.core.next_scores(np.array(hist, dtype=np.int32), cids[pos], n < 4).tolist() \
                if lm is not None else [0.0] * len(c)
            if allo is not None:
                prev = node[0] if node is not None else None
                at = terms.get(prev)
                if at is None:
                    at = terms[prev] = [allomorph_weight * a for a in _allomorph_terms(allo, keys, pos, c, prev)]
                lp = [x + y for x, y in zip(lp, at)]
            for r, f in enumerate(c):
                p = lp[r]
                if context is not None:
                    p += context_weight * context[pos][r]
                nxt.append((sc + p - penalty * r, (f, node, n + 1, (hist + (ids[r],))[-3:] if ids is not None else ())))
        nxt.sort(key=lambda x: -x[0])
        hyps = nxt[:beam]
    if allo is not None and cands and keys[-1] in allo and len(hyps) > 1:
        hyps = sorted(((sc + allomorph_weight * allo.score(keys[-1], node[0], allo.EOS, "next"), node)
                       for sc, node in hyps), key=lambda x: -x[0])
    out: List[str] = []
    node = hyps[0][1]
    while node is not None:
        out.append(node[0])
        node = node[1]
    return out[::-1]


def _allomorph_terms(allo, keys: Sequence[str], pos: int, cands: Sequence[str], prev: Optional[str]) -> List[float]:
    """:func:`choose_forms`' allomorph evidence of each candidate form at output position
    ``pos`` after the form ``prev`` (None at the start): the form against the previous word's
    last character and last vowel, and the previous form against the candidate's first
    character (unweighted sums, one per candidate)."""
    out = []
    mine, theirs = keys[pos] in allo, prev is not None and keys[pos - 1] in allo
    last = prev[-1:].lower() if prev is not None else allo.BOS
    v = allo.last_vowel(prev) if prev is not None and mine else None
    for f in cands:
        a = 0.0
        if mine:
            a += allo.score(keys[pos], f, last, "prev")
            if v is not None:   # tables counted without vowel keys score 0 here
                a += allo.score(keys[pos], f, v, "prev")
        if theirs:
            a += allo.score(keys[pos - 1], prev, f[:1].lower(), "next")
        out.append(a)
    return out


def rerank_lms_of(model, rerank_lms=None) -> list:
    """The view LMs a model reranks with: ``rerank_lms`` ((LM or path, weight) pairs; "none" or
    [] for none), or with None the model header's ``decode.rerank_lms`` ([[file, weight], ...],
    files beside the model or in the shipped model directory).  Returns [(LanguageModel,
    weight)].  Raises ModelError for a named file that is missing, LMError for a bad LM."""
    from ..dep.linearizer import load_rerankers
    from ..model import named_file

    if rerank_lms == "none":
        return []
    if rerank_lms is None:
        spec = model.header.get("decode", {}).get("rerank_lms") or []
        rerank_lms = [(named_file(model, f, "sr", "decode.rerank_lms", "--rerank-lm none"), float(w))
                      for f, w in spec]
    return load_rerankers(list(rerank_lms), [])[0]


def rerank_lm_of(model, rerank_lm=None):
    """The reranking LM of a model: ``rerank_lm`` (a :class:`wo.lm.LanguageModel`, a path, or
    "none"), or with None the file named by the model header's ``decode.rerank_lm``, looked up
    beside the model file and in the shipped model directory (None when the header names none).
    Raises ModelError when the named file is missing, LMError for a bad LM file."""
    from ..lm.model import LanguageModel
    from ..model import named_file

    if rerank_lm is None:
        name = model.header.get("decode", {}).get("rerank_lm")
        if not name:
            return None
        rerank_lm = named_file(model, name, "sr", "decode.rerank_lm", "--rerank-lm PATH (or --rerank-lm none)")
    if isinstance(rerank_lm, str):
        if rerank_lm == "none":
            return None
        rerank_lm = LanguageModel.shared(rerank_lm)
    return rerank_lm


def fallback_result(s: SRSentence, message: str) -> SRResult:
    """Error output: the lemmas in input order (status "error")."""
    n = len(s)
    return SRResult(list(s.lemmas), list(range(n)), [0] + [1] * (n - 1) if n else [], list(s.deprels),
                    status="error", message=message)


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
    return f"# sent_id = {s.sent_id}\n# text = {detok(r.surface_tokens())}\n"


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

    return json.dumps({"sent_id": s.sent_id, "text": detok(r.surface_tokens()), **r.base_record(),
                       "surface": r.surface_tokens(), "order": list(r.order), "heads": list(r.heads),
                       "labels": list(r.labels), "edges": r.edges}, ensure_ascii=False)


OUTPUT_FORMATS = ("text", "jsonl")


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
    given instead of T1 input."""
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
    detok = language(first.lexicon.lang).detokenize
    jsonl = output_format == "jsonl"
    twin = tok_path(output_path, tok) if not (jsonl and tok == "auto") else None

    def prepare(i, s):
        return s.error if s.error else (s, s)

    def decode_many(payloads, on_batch):
        realize_many(model_path, payloads, jobs=jobs, backend=backend, scheduler=scheduler, on_batch=on_batch,
                     **opts)

    def record(s, r):
        return (json_record(s, r, detok) if jsonl else submission_record(s, r, detok), r.text)

    def skipped(s):
        return (f"# sent_id = {s.sent_id}\n# text = \n", "")

    return process(sents, input_path, output_path, prepare=prepare, decode_many=decode_many,
                   fallback=fallback_result, format_record=record, on_error=on_error, keep_skipped=jsonl,
                   report=report, progress=progress, summary=Summary(input_format="T1"), skipped=skipped,
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
