"""Decoding front end: :class:`Linearizer` (Python API) and the parallel corpus driver.

Per-sentence decoding runs in the Cython core (``wo._fast._search.Search`` with the dependency grammar ``wo._fast._dep.DepGrammar``); joblib
spreads sentences over processes that memory-map the model weights.
"""
from __future__ import annotations

import dataclasses

import random
import sys
import time
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

import numpy as np

from .. import system
from ..io.batch import Summary, decode_system, load_system, process
from ..io.items import Item, format_result, read_items, validate
from ..io.trees import permutation, remap_heads
from ..io.conllu import Sentence
from ..lm.views import score_view
from ..model import Model, decode_option, named_file  # noqa: F401  (decode_option re-exported)
from .core import DepSearch, resolve_lm
from .instance import choose_given, make_instance, reveal

STATUS_NAMES = {0: "ok", 1: "fallback", 2: "timeout", 3: "completed", 5: "memory"}
DEFAULT_BEAM_FACTOR = 6.0
DEFAULT_BUDGET_FACTOR = 30.0
DEFAULT_COMPLETE_BEAM = 32
DEFAULT_TREE_BEAM_FACTOR = 32.0
DEFAULT_TREE_BUDGET_FACTOR = 1000.0
DEFAULT_RERANK_WEIGHT = 0.8    # F + w * log10 p over the popped goals (EWT dev trees, text-en+ewt 5-gram)
BAG_SEARCHES = ("model", "dep")   # bag_search: the search the model names, or its own
DEFAULT_RERANK_NBEST = 20      # distinct strings reranked (EWT dev: 10, 20, all popped goals within 0.04)


def decode_instance(core: DepSearch, inst, beam: int, budget: int, timeout: float, complete_beam: int,
                    patience: int = 0, tok_order=None):
    """Decode one instance and map the output back to the caller's token order.

    inst: :class:`wo.data.Instance` or :class:`wo.sr.SRInstance`; beam: chart size (edges);
    budget: pops; timeout: seconds (0 = none); patience: pops spent after the first goal
    looking for a better one (``Search.decode`` ``goal_patience``).  Returns (order int32[n] leaf ids in output
    order, idx list[int] caller's token index per output position, heads list[int] 1-based
    output positions (0 = root), scaled score float, status name str, pops int, edges int).
    tok_order: optional int32[n], the fixed surface position of every canonical token (the
    search then parses that string; ``DepSearch.decode``).
    """
    order, hd, score, status, pops, edges = core.decode(
        *inst.arrays(), beam, budget, timeout, complete_beam, goal_patience=patience,
        tok_order=tok_order, **core.kwargs(inst))
    idx, heads = map_output(inst, order, hd)
    return order, idx, heads, float(score), STATUS_NAMES[int(status)], int(pops), int(edges)


def goal_candidates(search, inst, first, tokens_of, nbest: int = DEFAULT_RERANK_NBEST):
    """The n-best of the last decode of ``inst``: the decoder's output, then the goal edges it
    popped in order of F, one per distinct string, up to ``nbest`` strings.

    search: the ``Search`` of that decode; first: (order, idx, heads, scaled score) of the
    decoder's output; tokens_of(order, idx): a goal's output string (list[str]).  Returns a
    list of (F, (order int32[n] leaf ids, idx list[int], heads list[int] 1-based output
    positions, scaled score), tokens), F the model's unscaled score (scaled x (2n - 1)).
    """
    ids, F, S = search.popped_goals()
    order, idx, heads, score = first
    toks = tokens_of(order, idx)
    out = [(float(score) * (2 * inst.n - 1), first, toks)]
    seen = {tuple(toks)}
    for k in np.argsort(-F, kind="stable"):
        if len(seen) >= nbest:
            break
        o, hd = search.output_of(int(ids[k]))
        ix, hs = map_output(inst, o, hd)
        toks = tokens_of(o, ix)
        if tuple(toks) in seen:
            continue
        seen.add(tuple(toks))
        out.append((float(F[k]), (o, ix, hs, float(S[k])), toks))
    return out


def rerank_goals(search, inst, first, tokens_of, lm, weight: float, nbest: int = DEFAULT_RERANK_NBEST,
                 extra=None, late=None, late_top: int = 0):
    """Rerank the goal edges the last decode popped (its n-best, :func:`goal_candidates`) by
    F + weight * log10 p (+ extra(order, tokens, idx, heads) when given: other scores of the
    same string and tree; + late(order, tokens, idx, heads), a costlier score such as another
    model's parse, for the ``late_top`` best candidates by the other terms only, the rest then
    left out; 0 = for all).

    search, inst, first, tokens_of, nbest: as for :func:`goal_candidates`; lm:
    :class:`wo.lm.LanguageModel` or None; scores are compared to 1e-6, ties keep the decoder's
    output (the earlier candidate).  Returns the best (order, idx, heads, scaled score).
    Source: n-best rescoring with a larger LM, as de Gispert et al. (2014, section 3) rescore
    GYRO's lattices with a 5-gram.
    """
    scored = []
    for f, cand, toks in goal_candidates(search, inst, first, tokens_of, nbest):
        v = f + (weight * lm.score(toks) if lm is not None else 0.0)
        scored.append([round(v + (extra(cand[0], toks, cand[1], cand[2]) if extra is not None else 0.0), 6),
                       cand, toks])
    if late is not None:
        keep = range(len(scored))
        if 0 < late_top < len(scored):
            keep = sorted(sorted(range(len(scored)), key=lambda i: -scored[i][0])[:late_top])
        kept = []
        for i in keep:
            v, cand, toks = scored[i]
            kept.append([round(v + late(cand[0], toks, cand[1], cand[2]), 6), cand, toks])
        scored = kept
    best = None
    for v, cand, _ in scored:
        if best is None or v > best[0]:
            best = (v, cand)
    return best[1]


def tree_rerankers_of(model) -> tuple:
    """([(LM path, weight)], [(model path, weight)]): the rerankers a model's header names for
    tree inputs (``decode.tree_rerank``: {"lms": [[file, weight], ...], "models": [...]}, files
    beside the model or in the shipped model directory; the header's entry updated by the
    model's sidecar file, :func:`wo.model.decode_settings`); empty lists when it names none.
    Raises ModelError for a named file that is missing or a bad sidecar file."""
    from ..model import decode_settings

    spec = decode_settings(model).get("tree_rerank") or {}

    def where(name):
        return named_file(model, name, "dep", "decode.tree_rerank",
                          "--no-tree-rerank, or --rerank-lm/--rerank-model instead")

    return ([(where(n), float(w)) for n, w in spec.get("lms", [])],
            [(where(n), float(w)) for n, w in spec.get("models", [])])


def load_rerankers(lms, models):
    """([(LanguageModel, weight)], [(Linearizer, weight)]) of (LM or path, weight) and (model or
    path, weight) pairs.  Raises FileNotFoundError, LMError, ModelError for bad files."""
    from ..lm.model import LanguageModel

    return ([(LanguageModel.shared(m) if isinstance(m, str) else m, float(w)) for m, w in lms],
            [(Linearizer.load(m) if isinstance(m, str) else m, float(w)) for m, w in models])


def map_output(inst, order, hd):
    """(idx list[int] caller's token index per output position, heads list[int] 1-based output
    positions, 0 = root) of a search output: order int32[n] leaf ids in output order, hd
    int32[n] head token (canonical index) or -1 per canonical token."""
    toks_c = inst.leaf_tok[order]
    outpos = np.empty(inst.n, dtype=np.int64)
    outpos[toks_c] = np.arange(inst.n)
    idx = [int(inst.canon[c]) for c in toks_c]
    heads = [0 if hd[c] < 0 else int(outpos[hd[c]]) + 1 for c in toks_c]
    return idx, heads


@dataclass
class Result(system.Result):
    """One linearized sentence (a :class:`wo.system.Result`).

    tokens: list[str] in output order; order: list[int], order[j] = input index (0-based) of
    output token j; heads: list[int] 1-based head position in the output (0 = root);
    pos: list[str] POS per output token; edges: int (edges built); score: scaled model score
    F(e)/|e| of the output edge; status: "ok" (goal edge popped), "fallback" (pop budget
    exhausted, greedy default output of Zhang & Clark 2015 section 3.4), "timeout", "memory" or
    "error"; pops: int; seconds: float (wall clock); message: str (error text, else "").
    Construction: ``Result(tokens, order, heads, pos, edges, score=..., status=..., ...)``.
    """

    order: List[int]
    heads: List[int]
    pos: List[str]
    edges: int = 0

    def parsed_score(self) -> Optional[float]:
        """For a :meth:`Linearizer.parse` result: the model's unscaled score F (scaled x
        (2n - 1)) of its best tree for the given order, or None when the parse could not keep
        that order within its budget."""
        n = len(self.tokens)
        return self.score * (2 * n - 1) if self.order == list(range(n)) else None

    @classmethod
    def input_order(cls, words: Sequence[str], pos: Optional[Sequence[Optional[str]]], message: str,
                    perm: Optional[Sequence[int]] = None) -> "Result":
        """The error fallback: the words in input order, or in the order ``perm`` (perm[j] = input
        index of output word j: the fixed-seed shuffle, so that a reference given as input is
        not given back), chained to the first word, status "error"."""
        n = len(words)
        order = list(perm) if perm is not None else list(range(n))
        pos = list(pos or [None] * n)
        return cls([words[i] for i in order], order, [0] + [1] * (n - 1) if n else [],
                   [pos[i] or "_" for i in order], 0, score=0.0, status="error", pops=0, seconds=0.0,
                   message=message)


class Linearizer(system.System):
    """Word orderer over a trained model (Zhang & Clark 2015, Algorithm 4 with section 4 grammar).

    Parameters: model (:class:`Model`); beam_factor k (chart size k*n); budget: pop budget per
    sentence as pops per input word (``budget_factor``) or absolute ``max_pops``;
    timeout: seconds per sentence (0 = none); complete_beam: beam of the completion phase run
    when the budget is exhausted (0 = the greedy default output of section 3.4 only);
    patience_factor: pops per word spent after the first goal edge looking for a better-scored
    one (0 = stop at the first goal, as Algorithm 4); lm: the n-gram LM whose scores are
    features (a :class:`wo.lm.LanguageModel`, a path, "none"; default: the model's own, see
    :func:`wo.dep.core.resolve_lm`); rerank_lm: an n-gram LM (:class:`wo.lm.LanguageModel` or
    a path) that reranks the goal edges the search popped (its n-best: with goal patience,
    full-tree inputs pop hundreds) by F + rerank_weight * log10 p(string), F the model's
    unscaled score; a larger LM than the model's own feature LM adds what the features lack
    (chosen on EWT dev); rerank_lms: sequence of (LM or path, weight), more reranking LMs, each
    scoring a candidate in the view it was estimated on (:mod:`wo.lm.views`: words, POS, or the
    dependents of each head, a dependency LM); rerank_models: sequence of (model path or
    :class:`Linearizer`, weight): other word-ordering models whose scores of each candidate's
    string and tree are added, weighted (an ensemble by reranking); tree_rerank: when true,
    tree inputs (at least half of the heads given) that get no reranker from the caller are
    reranked by the ones the model's decode settings name (``decode.tree_rerank``,
    :func:`tree_rerankers_of`; its ``models_top``: the rerank models parse only that many best
    candidates by F and the LMs), None: when those settings say ``"default": true`` (the
    shipped LM model: the large 4-gram, three EWT view LMs and the no-LM model for the 5 best;
    EWT test trees 81.04 BLEU, chosen on dev, ``bench/tree_rerank.py``).
    Unless beam or budget are given, inputs with at least half of their heads given use the
    model's tree defaults (``tree_beam_factor``, ``tree_budget_factor``): each pop is cheap there.
    bag_search: "model" (default): a bag (no POS, no head given) is decoded by the search the
    model names (:func:`wo.model.bag_spec`: the shipped model names GYRO's n-best under the large
    English 4-gram, reranked by this model), when it names one and no reranker is given;
    "dep": always this model's own search.
    max_memory: search memory per sentence in MiB (default 1536: a worker stays under about
    2 GB); past it the search and its completions stop and the output is what they have (status
    "memory"; every word still appears once).  Raises ModelError via :meth:`load`, ValueError
    for a max_memory that is not positive.
    """

    def __init__(self, model: Model, beam_factor: Optional[float] = None,
                 budget_factor: Optional[float] = None, max_pops: Optional[int] = None,
                 timeout: float = 0.0, complete_beam: Optional[int] = None,
                 patience_factor: Optional[float] = None, lm=None, rerank_lm=None,
                 rerank_weight: float = DEFAULT_RERANK_WEIGHT, rerank_models=(), rerank_lms=(),
                 tree_rerank: Optional[bool] = None, max_memory: Optional[float] = None, bag_search: str = "model"):
        from .._fast._search import edges_for_memory
        from ..model import require_system

        require_system(model, "dep")
        self.model = model
        if rerank_lm == "none":
            rerank_lm = None
        lms = ([(rerank_lm, rerank_weight)] if rerank_lm is not None else []) + list(rerank_lms)
        self.rerank_lms, self.rerank_models = load_rerankers(lms, rerank_models)
        from ..model import decode_settings

        dec = decode_settings(model)   # the header's decode settings updated by the sidecar file
        # the model's own rerankers of tree inputs (decode.tree_rerank), when asked for (None: as
        # its "default" entry says) and the caller gave none
        if tree_rerank is None:
            tree_rerank = bool((dec.get("tree_rerank") or {}).get("default", False))
        self.tree_rerank = bool(tree_rerank)
        self.tree_rerank_lms, self.tree_rerank_models = [], []
        # the rerank models parse only the best candidates by F and the LMs (0: every candidate)
        self.tree_rerank_top = int((dec.get("tree_rerank") or {}).get("models_top", 0))
        if self.tree_rerank and not (self.rerank_lms or self.rerank_models):
            self.tree_rerank_lms, self.tree_rerank_models = load_rerankers(*tree_rerankers_of(model))
        self.patience_factor = decode_option(patience_factor, dec, "patience_factor", 0.0)
        self.tree_patience_factor = decode_option(patience_factor, dec, "tree_patience_factor", 0.0)
        self.beam_factor = decode_option(beam_factor, dec, "beam_factor", DEFAULT_BEAM_FACTOR)
        self.budget_factor = decode_option(budget_factor, dec, "budget_factor", DEFAULT_BUDGET_FACTOR)
        self.max_pops = max_pops
        self.timeout = float(timeout or 0.0)
        self.complete_beam = decode_option(complete_beam, dec, "complete_beam", DEFAULT_COMPLETE_BEAM, int)
        # tree linearization is cheap per pop: inputs with most heads given get a larger search
        # unless the caller fixed the budget (tuned on EWT dev, see bench/results)
        self._fixed = beam_factor is not None or budget_factor is not None or max_pops is not None
        self.tree_beam_factor = float(dec.get("tree_beam_factor", DEFAULT_TREE_BEAM_FACTOR))
        self.tree_budget_factor = float(dec.get("tree_budget_factor", DEFAULT_TREE_BUDGET_FACTOR))
        self.lm = resolve_lm(model, lm)
        self.question_labels = bool(model.header.get("question_labels", False))
        self.core = DepSearch(model.weights, model.hash_bits, lm=self.lm)
        self.max_memory = max_memory
        self.core.search.edge_limit = edges_for_memory(max_memory)
        # bags (no POS, no head given): the search the model names (wo.model.bag_spec, built by
        # wo.gyro.bag.make_bag_search), else its own
        from ..model import bag_spec
        if bag_search not in BAG_SEARCHES:
            raise ValueError(f"bag_search: one of {BAG_SEARCHES}")
        self.bag_search = bag_search
        spec = bag_spec(model) if bag_search == "model" and not (self.rerank_lms or self.rerank_models) else None
        self.bag = None
        if spec:
            from ..gyro.bag import make_bag_search

            self.bag = make_bag_search(self, spec, timeout=self.timeout)

    name = "dep"

    @classmethod
    def load(cls, path: Optional[str] = None, verify: bool = True, **options) -> "Linearizer":
        """Load a model file (memory-mapped; None: the shipped dependency model) and build a
        linearizer; see :class:`Linearizer`.  verify: check the weights' checksum."""
        from ..model import default_model

        return cls(Model.load(path or default_model("dep"), verify=verify), **options)

    def decode_item(self, item) -> Result:
        """:meth:`linearize` of a batch item (words, pos, heads)."""
        return self.linearize(*item)

    def check_item(self, item) -> None:
        """A batch item is a prepared (words, pos, heads) triple (:meth:`prepare` makes one).
        Raises TypeError naming what to call instead."""
        if not (isinstance(item, tuple) and len(item) == 3 and isinstance(item[0], (list, tuple))
                and all(isinstance(w, str) for w in item[0])):
            raise TypeError(f"decode_batch takes prepared (words, pos, heads) items, not {type(item).__name__} "
                            f"{str(item)[:40]}: use linearize(words) or pipe(bags)")

    def prepare(self, x):
        """A :meth:`pipe` item: a bag (list of words), a (words, pos, heads) tuple as
        :meth:`linearize` takes them, or one parsed sentence (a conllu TokenList or CoNLL-U
        text, a spaCy Span, a stanza Sentence: :func:`wo.io.interop.to_ud`), linearized with its
        tree and XPOS given (``--given full``).  Raises TypeError for a plain string or anything
        else, ValueError for an item of several sentences."""
        if isinstance(x, tuple) and len(x) == 3 and not isinstance(x[0], str):
            _check_words(x[0])
            return x
        parsed = type(x).__module__.split(".")[0] in ("conllu", "spacy", "stanza")   # a TokenList is a list
        if not parsed and (isinstance(x, (list, tuple)) or (isinstance(x, str) and "\t" not in x)):
            _check_words(x)
            return (list(x), None, None)
        from ..io.interop import to_ud

        got = to_ud(x)
        if len(got) != 1:
            raise ValueError(f"one sentence per item, got {len(got)} (iterate over doc.sents / the sentences)")
        s = got[0]
        return (list(s.forms), [None if t == "_" else t for t in s.xpos], list(s.heads))

    def fallback(self, item, message: str) -> Result:
        """The words of a failed batch item (words, pos, heads) in input order (status "error")."""
        return Result.input_order(item[0], item[1], message)

    def budget(self, n: int) -> int:
        """Pop budget for an n-word input (pops)."""
        if self.max_pops:
            return int(self.max_pops)
        return max(8, int(self.budget_factor * n))

    def linearize(self, words: Sequence[str], pos: Optional[Sequence[Optional[str]]] = None,
                  heads: Optional[Sequence[int]] = None) -> Result:
        """Order a bag of words.

        words: list of n str; pos: optional list of n str-or-None (given POS); heads: optional
        list of n int (1-based index into ``words`` of the given head, 0 = root, -1 = unknown).
        Returns a :class:`Result`.  Raises ValueError for an empty input or heads out of range,
        TypeError for ``words`` that is a string (a bag is a list of words: a string would be
        ordered character by character) or not a sequence of str.
        """
        t0 = time.perf_counter()
        _check_words(words)
        pos, heads = self._inputs(words, pos, heads)
        if self.bag is not None and len(words) > 1 and all(p is None for p in pos) and all(h < 0 for h in heads):
            got = self.bag.realize(words)
            if got is not None and got[1].parse is not None:   # else no string parsed: the own search
                idx, res = got
                return Result(list(res.tokens), idx, list(res.heads), list(res.pos), 0, score=res.dep_score,
                              status="ok", pops=res.pops,
                              seconds=time.perf_counter() - t0)
        inst, tree, first, status, pops, edges = self._search(words, pos, heads)
        lms, models, top = self.rerank_lms, self.rerank_models, 0
        if tree and not (lms or models):
            lms, models, top = self.tree_rerank_lms, self.tree_rerank_models, self.tree_rerank_top
        if (lms or models) and status == "ok":
            first = self._rerank(inst, words, pos, first, lms, models, top)
        order, idx, out_heads, score = first
        return Result([words[i] for i in idx], idx, out_heads, [inst.leaf_tag[leaf] for leaf in order], edges,
                      score=score, status=status, pops=pops, seconds=time.perf_counter() - t0)

    def nbest(self, words: Sequence[str], pos: Optional[Sequence[Optional[str]]] = None,
              heads: Optional[Sequence[int]] = None, k: int = DEFAULT_RERANK_NBEST) -> List[tuple]:
        """The n-best of one decode without reranking (what the rerankers choose from): the
        output, then the popped goal edges by F, one per distinct string, up to ``k`` strings
        (:func:`goal_candidates`; only the output when no goal was popped).

        words, pos, heads: as in :meth:`linearize`.  Returns list of (F, :class:`Result`), F
        the model's unscaled score (scaled x (2n - 1)); each Result carries the candidate's
        tokens, order, heads and POS.  Raises ValueError as :meth:`linearize`.
        """
        pos, heads = self._inputs(words, pos, heads)
        inst, _, first, status, pops, edges = self._search(words, pos, heads)
        if status == "ok":
            cands = goal_candidates(self.core.search, inst, first, lambda o, ix: [words[i] for i in ix], k)
        else:
            cands = [(first[3] * (2 * inst.n - 1), first, [words[i] for i in first[1]])]
        return [(f, Result(toks, ix, hs, [inst.leaf_tag[leaf] for leaf in o], edges, score=sc, status=status,
                           pops=pops))
                for f, (o, ix, hs, sc), toks in cands]

    def _inputs(self, words, pos, heads):
        """(pos, heads) as full lists; raises ValueError for an empty input, wrong lengths or
        heads out of range."""
        n = len(words)
        if n == 0:
            raise ValueError("empty input")
        pos = list(pos) if pos is not None else [None] * n
        heads = list(heads) if heads is not None else [-1] * n
        if len(pos) != n or len(heads) != n:
            raise ValueError("pos and heads must have one entry per word")
        for h in heads:
            if h < -1 or h > n:
                raise ValueError(f"head {h} out of range for {n} words")
        return pos, heads

    def _search(self, words, pos, heads):
        """One decode with the settings of the input type: (instance, tree input?, (order, idx,
        heads, scaled score) of the output, status, pops, edges).  Inputs with at least half of
        their heads given use the tree settings."""
        n = len(words)
        inst = make_instance(words, pos, heads, self.model.tagdict, question_labels=self.question_labels)
        beam = max(1, int(round(self.beam_factor * n)))
        budget = self.budget(n)
        patience = int(self.patience_factor * n)
        tree = 2 * sum(1 for h in heads if h >= 0) >= n
        if tree:
            patience = int(self.tree_patience_factor * n)
            if not self._fixed:
                beam = max(1, int(round(self.tree_beam_factor * n)))
                budget = max(8, int(self.tree_budget_factor * n))
        order, idx, out_heads, score, status, pops, edges = decode_instance(
            self.core, inst, beam, budget, self.timeout, self.complete_beam, patience)
        return inst, tree, (order, idx, out_heads, score), status, pops, edges

    def _rerank(self, inst, words, pos, first, lms, models, models_top: int = 0):
        """The popped goal with the best F + sum of w_i log10 p_i + sum of w_j F_j: p_i the
        probability of the candidate under reranking LM i in its view (:func:`wo.lm.views.score_view`;
        tags are the output's POS), F_j the score of rerank model j of the same string and tree
        (:meth:`parse` with those heads), computed for the ``models_top`` best candidates by the
        other terms only (0: for all; :func:`rerank_goals`' ``late``)."""
        memos = [{} for _ in lms]   # per LM: the distinct sequences of this input's candidates

        def extra(o, toks, ix, hs):
            tags = [inst.leaf_tag[leaf] for leaf in o]
            v = 0.0
            for (lm, w), memo in zip(lms, memos):
                v += w * score_view(lm, toks, tags, hs, memo)
            return v

        def late(o, toks, ix, hs):
            v = 0.0
            for other, w in models:
                f = other.parse(toks, [pos[i] for i in ix], heads=hs).parsed_score()
                v += w * (f if f is not None else -1e9)
            return v

        return rerank_goals(self.core.search, inst, first, lambda o, ix: [words[i] for i in ix], None, 0.0,
                            extra=extra, late=late if models else None, late_top=models_top)

    def parse(self, words: Sequence[str], pos: Optional[Sequence[Optional[str]]] = None,
              budget_factor: float = 200.0, heads: Optional[Sequence[int]] = None) -> Result:
        """The model's best tree for the words in the order given: the same search, with edges
        combining only when adjacent in ``words`` (a best-first parser under the word-ordering
        model).  Its ``score`` (scaled, comparable between orders of one bag) is how this model
        rates that string, so candidates of other systems can be reranked by it.

        words: list of n str in surface order; pos: optional list of n str-or-None (given POS);
        heads: optional list of n int (given heads as in :meth:`linearize`: the model's score of
        that tree in that order); budget_factor: pops per word.  Returns a :class:`Result` whose order is 0..n-1 unless the
        search ran out of budget (status "fallback"/"timeout": its order may differ).
        Raises ValueError for an empty input.
        """
        n = len(words)
        if n == 0:
            raise ValueError("empty input")
        pos = list(pos) if pos is not None else [None] * n
        t0 = time.perf_counter()
        inst = make_instance(words, pos, list(heads) if heads is not None else [-1] * n, self.model.tagdict,
                             question_labels=self.question_labels)
        tok_order = np.empty(n, dtype=np.int32)
        tok_order[:] = np.asarray(inst.canon, dtype=np.int32)   # canonical token c sits at canon[c]
        beam = max(1, int(round(self.beam_factor * n)))
        order, idx, out_heads, score, status, pops, edges = decode_instance(
            self.core, inst, beam, max(8, int(budget_factor * n)), self.timeout, self.complete_beam,
            0, tok_order)
        return Result([words[i] for i in idx], idx, out_heads, [inst.leaf_tag[leaf] for leaf in order], edges,
                      score=score, status=status, pops=pops, seconds=time.perf_counter() - t0)

    def linearize_file(self, input_path: str, output_path: str, **options):
        """Linearize a whole file with this linearizer's model; see :func:`run`.

        options: input_format, output_format, given, reveal_pos, reveal_heads, seed, jobs,
        on_error, max_length, backend, scheduler.  Returns a :class:`wo.io.batch.Summary`.
        Raises ValueError if the model was not loaded from a file (workers need its path).
        """
        if not self.model.path:
            raise ValueError("linearize_file needs a model loaded from a file (Linearizer.load)")
        opts = {"beam_factor": self.beam_factor, "budget_factor": self.budget_factor,
                "max_pops": self.max_pops, "timeout": self.timeout, "complete_beam": self.complete_beam,
                "max_memory": self.max_memory,
                "patience_factor": self.patience_factor,
                "lm": self.lm.path if self.lm is not None and self.lm.path else (None if self.lm else "none")}
        if self.rerank_lms:
            if not all(lm.path for lm, _ in self.rerank_lms):
                raise ValueError("linearize_file needs rerank LMs loaded from files")
            opts["rerank_lms"] = tuple((lm.path, w) for lm, w in self.rerank_lms)
        if self.rerank_models:
            opts["rerank_models"] = tuple((m.model.path, w) for m, w in self.rerank_models)
        opts["tree_rerank"] = self.tree_rerank
        opts["bag_search"] = self.bag_search
        opts.update({k: v for k, v in options.items() if k in opts})
        rest = {k: v for k, v in options.items() if k not in opts}
        return run(self.model.path, input_path, output_path, **rest, **opts)


def given_for(sent: Sentence, given: str, reveal_pos: float, reveal_heads: float, seed: int, index: int):
    """(pos, heads) constraints for sentence ``index`` (deterministic in seed and index)."""
    rng = random.Random(seed * 7_000_003 + index + 1)
    return choose_given(sent, given, reveal_pos, reveal_heads, rng)


def _check_words(words) -> None:
    """Raise TypeError unless ``words`` is a sequence of str (a string itself is refused)."""
    if isinstance(words, (str, bytes)):
        raise TypeError(f"a bag is a list of words, not a string: pass {str(words)[:40]!r}.split() "
                        "(or words from a tokenizer)")
    if not isinstance(words, Sequence) or not all(isinstance(w, str) for w in words):
        raise TypeError(f"a bag is a list of str, not {type(words).__name__}"
                        + (" of " + ", ".join(sorted({type(w).__name__ for w in words if not isinstance(w, str)}))
                           if isinstance(words, Sequence) else ""))


def linearize_many(model_path: str, items: Sequence[tuple], jobs: int = 1, chunk: int = 32,
                   progress=None, on_batch=None, backend: str = "loky",
                   scheduler: Optional[str] = None, **opts) -> List[Result]:
    """Linearize ``items`` = [(words, pos, heads), ...] with ``jobs`` joblib workers.

    Output order is input order and results are identical for any ``jobs`` and backend (each
    sentence is decoded independently with a deterministic pop budget).  Workers load the
    model from ``model_path`` (memory-mapped, cached per process).  ``backend``: "loky"
    (local processes) or "dask" (joblib's Dask backend on the cluster at ``scheduler``, an
    address such as tcp://127.0.0.1:8786; the model path must be readable by the workers).
    ``progress(k)`` and ``on_batch(results)`` are called as batches finish, in order.
    Workers are :func:`wo.io.batch.system_worker` (one cached :class:`Linearizer` per process).
    """
    def take(res):
        if on_batch:
            on_batch(res)
        if progress:
            progress(len(res))

    # decoding time grows about quadratically with the sentence length (pops per word x chart)
    return decode_system(Linearizer, model_path, opts, items, take, jobs=jobs, chunk=chunk, backend=backend,
                         scheduler=scheduler, cost=lambda it: len(it[0]) ** 2)


def shuffle_item(item: Item, seed: int, index: int) -> Item:
    """Shuffle an item's tokens with the fixed-seed permutation of :func:`wo.io.trees.scramble`."""
    perm = permutation(len(item.forms), seed, index)
    heads = remap_heads(item.heads, perm)
    gold = item.gold
    if gold is not None and (len(gold) != len(perm) or not all(-1 <= h <= len(perm) for h in gold.heads)):
        gold = None                                   # a malformed tree: the output keeps no annotation of it
    if gold is not None:   # the CoNLL-U sentence, shuffled alike (--format conllu)
        pick = lambda xs: [xs[p] for p in perm]  # noqa: E731
        gold = dataclasses.replace(gold, forms=pick(gold.forms), lemmas=pick(gold.lemmas), upos=pick(gold.upos),
                                   xpos=pick(gold.xpos), feats=pick(gold.feats), heads=remap_heads(gold.heads, perm),
                                   deprels=pick(gold.deprels), misc=pick(gold.misc))
    return Item([item.forms[p] for p in perm], [item.pos[p] for p in perm], heads, item.sent_id,
                item.line, item.error, [item.units[p] for p in perm] if item.units else None, gold)



def select_given(item: Item, given: str, reveal_pos: float, reveal_heads: float, seed: int, index: int):
    """The trusted (pos, heads) of an item under ``--given`` and ``--reveal-*`` (Table 7)."""
    return reveal(item.pos, item.heads, given, reveal_pos, reveal_heads,
                  random.Random(seed * 7_000_003 + index + 1))



def run(model_path: str, input_path: str, output_path: str, *, input_format: str = "auto",
        output_format: str = "text", given: str = "none", reveal_pos: float = 1.0,
        reveal_heads: float = 1.0, seed: int = 1, jobs: int = 1, on_error: str = "fallback",
        max_length: int = 200, backend: str = "loky", scheduler: Optional[str] = None,
        progress: Optional[Callable[[int], None]] = None,
        report: Callable[[str], None] = lambda m: print(f"wo: {m}", file=sys.stderr),
        **decode_opts) -> Summary:
    """Linearize every sentence of ``input_path`` into ``output_path`` (``-`` = stdin/stdout).

    Every sentence is shuffled with the fixed-seed permutation (``seed``) before decoding and
    its trusted columns chosen by ``given`` / ``reveal_*``; one record per input sentence in
    input order (:func:`wo.io.batch.process`): ``output_format`` text, detok, conllu or jsonl;
    a bad sentence's record follows ``on_error`` (its words in input order, an empty line, or
    stop before writing).  Raises FileNotFoundError / ModelError for a missing input or a bad
    model, FailFast under ``on_error='fail'``, Interrupted on Ctrl-C.  Returns a
    :class:`wo.io.batch.Summary`.
    jobs as joblib counts them (-1 every core, -2 all but one, capped at the cores:
    :func:`wo.io.batch.resolve_jobs`); ValueError for jobs 0, SameFileError (a ValueError) for an
    output that is the input.
    """
    from ..io.batch import resolve_jobs

    jobs = resolve_jobs(jobs)   # -1: every core; 0 refused (ValueError) before any work
    # the model, its LM and rerankers are loaded here, once: a bad file fails before any work,
    # and with jobs=1 this is the linearizer that decodes (wo.io.batch.load_system)
    from ..model import default_model

    model_path = model_path or default_model("dep")
    model = load_system(Linearizer, model_path, decode_opts, verify=True).model
    items, fmt = read_items(input_path, input_format)
    known = model.tagdict.all_tags() if given in ("pos", "full") else None

    def prepare(i, it):
        if it.error:
            return it.error
        if given == "full" and fmt == "bag":   # a bag has no tree to give: --given full would be ignored
            return ("--given full needs the tree of each sentence (CoNLL-U or ZGen input); a bag line has none "
                    "(--given pos takes word/TAG bags)")
        if given == "none":   # only FORM is read: a bad tree or tag cannot fail the sentence
            n = len(it.forms)
            it = dataclasses.replace(it, heads=[-1] * n, pos=[None] * n)
        msg = validate(it, max_length, known)
        if msg is not None:
            return msg
        sh = shuffle_item(it, seed, i)
        pos, heads = select_given(sh, given, reveal_pos, reveal_heads, seed, i)
        return sh, (sh.forms, pos, heads)

    def decode_many(payloads, on_batch):
        linearize_many(model_path, payloads, jobs=jobs, on_batch=on_batch, backend=backend,
                       scheduler=scheduler, **decode_opts)

    where = {id(it): i for i, it in enumerate(items)}

    def fallback(it, msg):   # the same fixed-seed shuffle as decoding: CoNLL-U input is the reference
        return Result.input_order(it.forms, it.pos, msg, permutation(len(it.forms), seed, where[id(it)]))

    return process(items, input_path, output_path, prepare=prepare, decode_many=decode_many,
                   fallback=fallback,
                   format_record=lambda it, res: format_result(it, res, output_format),
                   on_error=on_error, keep_skipped=output_format == "jsonl", report=report,
                   progress=progress, summary=Summary(input_format=fmt))
