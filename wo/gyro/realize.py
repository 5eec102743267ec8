"""GYRO realisation: phrase-based word ordering by pruned parsing and generation (de Gispert,
Tomalin & Byrne 2014, sections 2.1-2.4, Algorithm 3), with OpenFst lattices through pynini.

A bag Ω of N words is parsed with the generation grammar of section 2.1: one nonterminal per
sub-multiset of Ω (the paper's bit strings, with repeated words counted instead of told apart,
so two copies of "the" give one cell, not two equivalent ones), phrase rules I(A) -> u for
every phrase u of the index whose words are the multiset A, and concatenation rules
I(A) -> I(B) I(C) for B + C = A.  Cells are filled row by row (row x = cells of x words); each
cell holds an unweighted acceptor of its strings (the union of its phrases and of the
concatenations of its sub-cells' acceptors).  From row r upwards every row is pruned as in
Algorithm 3: the union of the row's acceptors is composed with the n-gram LM G, pruned at
weight beta (log10 units) from its best path, and every cell is intersected with the strings
that survived, so cells whose strings all lost disappear.  The top cell composed with G (with
``</s>``) is the output lattice; its best path (and n-best) are the realisations.

G is the LM restricted to the bag's words, built exactly (``NgramModel.bag_automaton``: one arc
per LM state and bag word with the backed-off probability), so every path of F o G carries the
LM's own log10 probability (as ``wo lm score`` computes it).  Rows are scored from the empty
context (a fragment is not a sentence start); the top cell from ``<s>`` with ``</s>``.

Fallbacks (section 3.2: 91.4 / 7.2 / 1.4 % of the paper's bags): when the phrase rules
(n = 3..5 by default) give no parse, bigram rules are added, then unigram rules (every word
alone), which always parse; a bag word the text collection never saw gets a unigram rule at
every level (no phrase can contain it).  So every bag gets an output with each word once.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import system
from ..eval.mbr import linear_bleu_gains

LEVELS = ("phrases", "bigram", "unigram", "weighted")
PAPER_LEVELS = ("phrases", "bigram", "unigram")       # section 3.2's fallbacks
DEFAULT_LEVELS = ("unigram",)      # best on EWT dev with text-en (bench/results/gyro/README.md)
ENGINES = ("chart", "fst")
DEFAULT_DEP_WEIGHT = 0.3      # "+depLM" weight of the dependency model score (EWT dev: bench/bag_rerank.py)
DEFAULT_DEP_NBEST = 20        # strings the dependency model reranks
DEFAULT_ROW_CAP = 500         # strings kept per pruned row (EWT dev bags: 2000 -> 500, 31.65 -> 31.63 BLEU, 25x faster)
DEFAULT_JOIN_SLACK = 0.5      # the chart's bigram join filter (log10; EWT dev: BLEU within 0.1, 1.7x faster)
DEFAULT_TIMEOUT = 30.0        # seconds per bag, then the greedy LM order (480 words the LM does not know ran 5+ minutes)


class GyroLimit(Exception):
    """A bag's parse grew past the memory bound (``max_states``)."""


@dataclass
class GyroResult(system.Result):
    """One realisation (a :class:`wo.system.Result`): tokens (the words in output order; also
    :attr:`text`, joined by spaces), score (the LM's log10 p, with ``<s>`` and ``</s>``; also
    :attr:`log10_prob`), level (phrases | bigram | unigram | weighted | greedy: the grammar
    that parsed), nbest (list of (text, log10 prob), best first), cells (cells built), states
    (acceptor states built, the memory proxy), pool_mb (chart engine: peak MB of its pools);
    with a dependency model (``GyroRealizer(dep=...)``): heads (1-based head position of each
    output word, 0 = root: the model's tree of the output) and dep_score (its scaled score of
    that tree), pos (its POS per output word), parse (the reranking model's whole parse of the
    output: its ``Result``, e.g. a CCG derivation; None without one); seconds (wall clock), status (ok | timeout | limit: the last level ran out of
    states and the greedy LM order is returned | error), message by keyword."""

    level: str = ""
    nbest: List[Tuple[str, float]] = field(default_factory=list)
    cells: int = 0
    states: int = 0
    pool_mb: float = 0.0
    heads: List[int] = field(default_factory=list)
    dep_score: float = 0.0
    pos: List[str] = field(default_factory=list)
    parse: object = None

    @property
    def log10_prob(self) -> float:
        """The LM log10 probability of the realisation (its score)."""
        return self.score


def _weight(fst, cost: float):
    import pynini

    return pynini.Weight(fst.weight_type(), cost)


def _path(labels: Sequence[int]):
    """The acceptor of one label sequence."""
    import pynini

    f = pynini.Fst()
    s = f.add_state()
    f.set_start(s)
    one = pynini.Weight.one(f.weight_type())
    for lab in labels:
        t = f.add_state()
        f.add_arc(s, pynini.Arc(lab, lab, one, t))
        s = t
    f.set_final(s)
    return f


def _strings(f) -> List[Tuple[List[int], float]]:
    """(labels, cost) of every path of an acyclic acceptor (tropical costs)."""
    out = []
    it = f.paths()
    while not it.done():
        out.append(([lab for lab in it.ilabels() if lab], float(str(it.weight()))))
        it.next()
    return out


class BagLM:
    """G for one bag: the LM restricted to the bag's distinct words as OpenFst acceptors over
    labels 1..D (tropical costs = -log10 p).  ``start_bos`` (sentence: ``<s>`` start, ``</s>``
    final costs) and ``free`` (fragment: empty-context start, every state final at cost 0)."""

    def __init__(self, lm, words: Sequence[str], max_states: int = 200_000):
        import pynini

        ids = np.ascontiguousarray(lm.word_ids(list(words)), dtype=np.int32)
        self.sentence = self._build(pynini, *lm.core.bag_automaton(ids, True, max_states), True)
        self.fragment = self._build(pynini, *lm.core.bag_automaton(ids, False, max_states), False)

    @staticmethod
    def _build(pynini, src, wd, dst, lp, fin, final_costs: bool):
        f = pynini.Fst()
        S = len(fin)
        for _ in range(S):
            f.add_state()
        f.set_start(0)
        wt = f.weight_type()
        for s in range(S):
            f.set_final(s, pynini.Weight(wt, -float(fin[s])) if final_costs else pynini.Weight.one(wt))
        for a in range(len(src)):
            lab = int(wd[a]) + 1
            f.add_arc(int(src[a]), pynini.Arc(lab, lab, pynini.Weight(wt, -float(lp[a])), int(dst[a])))
        f.arcsort("ilabel")
        return f


def _flat(phrases: Sequence[Sequence[int]]) -> Tuple[np.ndarray, np.ndarray]:
    """Label lists (1-based) as flat 0-based int32 tokens and int64 offsets for GyroChart.parse."""
    off = np.zeros(len(phrases) + 1, dtype=np.int64)
    if phrases:
        np.cumsum([len(p) for p in phrases], out=off[1:])
    flat = np.fromiter((lab - 1 for p in phrases for lab in p), dtype=np.int32, count=int(off[-1]))
    return flat, off


def mbr_rerank(finals: Sequence[Tuple[List[str], float]], scale: float = 1.0, order: int = 4):
    """Minimum Bayes risk reranking of a lattice's strings (Tromble et al. 2008; the "+LMBR" of
    de Gispert et al. 2014, Table 2): the posterior of a string is proportional to
    10^(scale * log10 prob) over the given strings (the whole output lattice of the chart
    engine, or an n-best list), an n-gram's posterior is the total posterior of the strings
    containing it, and strings are reordered by their linear BLEU gain
    sum_n theta_n sum_{u in e} #u(e) p(u) (all strings of a bag have one length, so theta_0
    drops out).  finals: [(tokens, log10 prob)]; returns the list reordered, each with its
    gain in place of the probability."""
    gains = linear_bleu_gains([t for t, _ in finals], [lp for _, lp in finals], scale, order)
    idx = sorted(range(len(finals)), key=lambda i: (-gains[i], i))
    return [(finals[i][0], gains[i]) for i in idx]


class GyroRealizer(system.System):
    """GYRO over a phrase index and an n-gram LM (de Gispert et al. 2014, Algorithm 3).

    index: :class:`wo.gyro.index.PhraseIndex` (None when levels is ("unigram",)); lm:
    :class:`wo.lm.model.LanguageModel` (used while parsing); rescore_lm: a higher-order LM for
    the final lattice (Table 2, "+5g"), or None; r: first pruned row; beta: pruning weight in
    log10 units; nbest: realisations returned; min_n / max_n: phrase lengths of the first
    grammar; levels: the grammars tried in turn (``PAPER_LEVELS`` = phrases, bigram, unigram:
    section 3.2's fallbacks; "unigram" alone: permutation under the LM, the default chosen on
    EWT dev; "weighted": every phrase and word a rule costing rule_penalty log10 each);
    max_states: memory bound per bag (chart: strings of the unpruned rows; fst: acceptor
    states; past it the level fails and the next runs, the last returns the greedy LM order);
    engine: "chart" (``wo._fast._gyro.GyroChart``, explicit LM-scored cells in C pools) or
    "fst" (pynini/OpenFst acceptors); row_cap (chart): strings kept per pruned row; keep
    (chart): distinct sentences kept as the output lattice; future (chart): prune rows by
    score plus an estimate of the words left out; row_states (fst): states kept by a row's
    pruning; mbr / mbr_scale: minimum Bayes risk reranking of the output lattice
    (:func:`mbr_rerank`, posterior scale); join_slack, max_split (chart): the join filter and
    split bound of ``GyroChart.parse`` (its ``slack`` and ``max_split``).  dep: a :class:`wo.dep.linearizer.Linearizer`
    that reranks the dep_nbest best strings (section 3's "+depLM" rescoring, with wo's
    dependency model in place of a parser and a dependency LM): each is parsed with its order
    fixed (``Linearizer.parse``) and scored log10 p(string) + dep_weight * F, F the model's
    score of its best tree (scaled score x (2n - 1)), log10 p from rescore_lm if given, else lm;
    dep_own adds the dependency model's own output for the bag to the candidates; dep_budget:
    pops per word of each parse.
    Raises ValueError for bad parameters (and for phrase levels without an index).
    """

    def __init__(self, index, lm, rescore_lm=None, r: int = 3, beta: float = 4.0, nbest: int = 1,
                 min_n: int = 3, max_n: int = 5, max_states: int = 2_000_000, min_count: int = 1,
                 levels: Sequence[str] = DEFAULT_LEVELS, row_states: int = 20_000, engine: str = "chart",
                 row_cap: int = DEFAULT_ROW_CAP, keep: int = 1000, future: bool = True, mbr: bool = False,
                 mbr_scale: float = 1.0, rule_penalty: float = 0.5, dep=None, dep_weight: float = DEFAULT_DEP_WEIGHT,
                 dep_nbest: int = DEFAULT_DEP_NBEST, dep_own: bool = True, timeout: float = DEFAULT_TIMEOUT,
                 join_slack: float = DEFAULT_JOIN_SLACK, max_split: int = 0, dep_budget: float = 200.0):
        if r < 1 or beta <= 0 or nbest < 1 or not 1 <= min_n <= max_n or row_cap < 1 or keep < 1:
            raise ValueError("need r >= 1, beta > 0, nbest >= 1, 1 <= min_n <= max_n, row_cap >= 1, keep >= 1")
        if dep_nbest < 1 or dep_weight < 0:
            raise ValueError("need dep_nbest >= 1 and dep_weight >= 0")
        self.dep, self.dep_weight, self.dep_nbest, self.dep_own = dep, dep_weight, dep_nbest, dep_own
        self.timeout = timeout
        if max_split < 0:
            raise ValueError("need max_split >= 0")
        if dep_budget <= 0:
            raise ValueError("need dep_budget > 0")
        self.join_slack, self.max_split, self.dep_budget = join_slack, max_split, dep_budget
        self._t0 = 0.0
        if any(lv not in LEVELS for lv in levels) or not levels:
            raise ValueError(f"levels: a sequence of {LEVELS}")
        if engine not in ENGINES:
            raise ValueError(f"engine: one of {ENGINES}")
        if engine == "fst":
            from ..extras import require

            require("fst", "the fst engine (--engine fst)")
        self.engine, self.row_cap, self.keep, self.future = engine, row_cap, keep, future
        self.mbr, self.mbr_scale, self.rule_penalty = mbr, mbr_scale, rule_penalty
        self._pool_mb = 0.0
        if "weighted" in levels and engine != "chart":
            raise ValueError("the weighted grammar needs the chart engine")
        self.index, self.lm, self.rescore_lm = index, lm, rescore_lm
        self.r, self.beta, self.nbest = r, beta, nbest
        if index is None and any(lv != "unigram" for lv in levels):
            raise ValueError("a phrase index (--index) is needed unless the levels are 'unigram' alone")
        self.min_n, self.max_n = min_n, min(max_n, index.max_n) if index is not None else max_n
        self.max_states, self.min_count, self.levels = max_states, min_count, tuple(levels)
        self.row_states = row_states

    name = "gyro"
    errors = (MemoryError,)

    @classmethod
    def load(cls, path: Optional[str] = None, verify: bool = True, index: Optional[str] = None,
             rescore_lm: Optional[str] = None, dep_model: Optional[str] = None, dep_system=None,
             **options) -> "GyroRealizer":
        """A realizer over the LM file at ``path`` (None: the shipped English 4-gram,
        :func:`wo.model.default_model` "lm"), the phrase index file ``index``, the rescoring LM
        file ``rescore_lm`` and the reranking model file ``dep_model`` (each optional);
        verify: check the files' checksums; options: the constructor's (``dep``: a loaded
        reranking linearizer).  The model of ``dep_model`` is loaded by ``dep_system``, the
        linearizer class of its system (:class:`wo.dep.Linearizer` for a dependency model, as
        ``wo gyro realize --dep-model`` passes; GYRO imports no other system), with that
        system's own search for bags (``bag_search=dep_system.name``).  Raises LMError,
        PhraseIndexError, ModelError, FileNotFoundError, ValueError (also for a ``dep_model``
        without ``dep_system``)."""
        from ..lm.model import LanguageModel
        from ..model import default_model
        from .index import PhraseIndex

        if dep_model:
            if dep_system is None:
                raise ValueError("dep_model needs dep_system, the linearizer class of its system (wo.dep.Linearizer "
                                 "for a dependency model); or pass dep=Linearizer.load(path, bag_search='dep')")
            # its own search (dep_own), not the GYRO search the model may name for bags
            options["dep"] = dep_system.load(dep_model, bag_search=dep_system.name)
        return cls(PhraseIndex.load(index, verify=verify) if index else None,
                   LanguageModel.load(path or default_model("lm"), verify=verify),
                   LanguageModel.load(rescore_lm, verify=verify) if rescore_lm else None, **options)

    def decode_item(self, item) -> GyroResult:
        """:meth:`realize` of a bag (list of words)."""
        return self.realize(item)

    def fallback(self, item, message: str) -> GyroResult:
        """A bag that ran out of memory: the greedy LM order (status "limit")."""
        toks = self._greedy(item)
        return GyroResult(list(toks), "greedy", score=self.lm.score(toks), status="limit",
                          message=message or "out of memory")

    # -------------------------------------------------------------------------------- parsing
    def realize(self, bag: Sequence[str]) -> GyroResult:
        """The best realisation of ``bag`` (list of str; each word used exactly once)."""
        t0 = self._t0 = time.perf_counter()
        bag = list(bag)
        if not bag:
            return GyroResult([], score=0.0, status="error", message="empty bag")
        words = sorted(set(bag))
        mult = [bag.count(w) for w in words]
        if self.levels[-1] == "unigram" and self.r < 2:
            raise ValueError("r must be >= 2 with unigram rules (row 1 keeps every word)")
        wid = {w: i for i, w in enumerate(words)}
        unseen = [i for i, w in enumerate(words) if self.index is None or not self.index.knows(w)]
        self._pool_mb = 0.0
        if self.engine == "chart":
            from .._fast._gyro import BagTooLarge

            try:
                finals, level, total_cells, total_states = self._run_chart(bag, words, mult, wid, unseen)
            except BagTooLarge as exc:   # too many distinct words for the chart's keys: the greedy order
                toks = self._greedy(bag)
                return GyroResult(list(toks), "greedy", score=self.lm.score(toks), seconds=time.perf_counter() - t0,
                                  status="limit", message=f"{exc}: the greedy LM order")
        else:
            finals, level, total_cells, total_states = self._run_fst(bag, words, mult, wid, unseen)
        if not finals:
            # the bound was hit at every level, or the time ran out: the greedy LM order (each word once)
            toks = self._greedy(bag)
            late = level == "timeout"
            return GyroResult(list(toks), "greedy", [], total_cells, total_states, score=self.lm.score(toks),
                              seconds=time.perf_counter() - t0, status="timeout" if late else "limit",
                              message=f"--timeout {self.timeout:g} s reached" if late else
                              "state bound reached at every level")
        if self.rescore_lm is not None and self.engine == "chart":
            # the rescoring LM replaces the parsing LM's part of each score; only the weighted
            # grammar's scores hold more (its rule penalties, which stay)
            pen = (lambda t, sc: sc - self.lm.score(t)) if level == "weighted" else (lambda t, sc: 0.0)
            finals = sorted(((t, pen(t, sc) + self.rescore_lm.score(t)) for t, sc in finals),
                            key=lambda x: -x[1])
        if self.mbr and len(finals) > 1:
            finals = mbr_rerank(finals, self.mbr_scale)
        heads, dep_score, tags, pops, tree = [], 0.0, [], 0, None
        if self.dep is not None:
            finals, tree, pops = self._dep_rerank(bag, [t for t, _ in finals[:self.dep_nbest]])
            if tree is not None:
                heads, dep_score, tags = tree.heads, tree.score, tree.pos
        nb = [(" ".join(t), self.lm.score(t)) for t, _ in finals[:self.nbest]]
        text, lp = nb[0]
        return GyroResult(text.split(" ") if text else [], level, nb, total_cells, total_states,
                          round(self._pool_mb, 3), heads, dep_score, tags, tree, score=lp, pops=pops,
                          seconds=time.perf_counter() - t0)

    def _dep_rerank(self, bag, cands):
        """Rerank candidate strings (token lists, best first) by log10 p + dep_weight * F (see the
        class doc).  Returns (finals [(tokens, combined score)] best first, the model's parse of
        the best (a :class:`wo.dep.linearizer.Result`: heads, POS, scaled score) or None, the pops
        of all the parses).  A candidate the parse cannot cover within its budget is
        dropped; when none is left the candidates keep their order."""
        if self.dep_own:
            own = self.dep.linearize(bag).tokens
            if own not in cands:
                cands = cands + [own]
        lm = self.rescore_lm or self.lm
        scored, pops = [], 0
        for t in cands:
            p = self.dep.parse(t, budget_factor=self.dep_budget)
            pops += p.pops
            if p.parsed_score() is not None:
                scored.append((lm.score(t) + self.dep_weight * p.parsed_score(), t, p))
        if not scored:
            return [(t, lm.score(t)) for t in cands], None, pops
        scored.sort(key=lambda x: -round(x[0], 6))  # stable: ties (to float error) keep the LM's order
        return [(t, sc) for sc, t, _ in scored], scored[0][2], pops

    def _run_chart(self, bag, words, mult, wid, unseen):
        """Algorithm 3 in C pools (``wo._fast._gyro.GyroChart``), level by level.  Returns
        (finals: [(tokens, log10 prob)] best first, level, cells, strings)."""
        from .._fast._gyro import GyroChart

        lmid = np.ascontiguousarray(self.lm.word_ids(words), dtype=np.int32)
        chart = GyroChart(self.lm.core, lmid, np.asarray(mult, dtype=np.int32))
        cells = strings = 0
        for lv in self.levels:
            if lv == "weighted":
                rules = self._phrases(bag, wid, unseen, 2) + [[i + 1] for i in range(len(wid)) if i not in unseen]
            else:
                lo = {"phrases": self.min_n, "bigram": min(2, self.min_n), "unigram": 1}[lv]
                rules = self._phrases(bag, wid, unseen, lo)
            flat, off = _flat(rules)
            left = 0.0
            if self.timeout > 0:
                left = self.timeout - (time.perf_counter() - self._t0)
                if left <= 0:
                    return [], "timeout", cells, strings
            status, toks, scores = chart.parse(flat, off, r=self.r, beta=self.beta, row_cap=self.row_cap,
                                               max_strings=self.max_states, keep=self.keep,
                                               future=self.future,
                                               penalty=self.rule_penalty if lv == "weighted" else 0.0,
                                               max_seconds=left, max_split=self.max_split,
                                               slack=self.join_slack)
            cells += chart.cells_built
            strings += chart.strings
            self._pool_mb = chart.pool_bytes / 2 ** 20
            if status == 0:
                return [([words[i] for i in row], float(sc)) for row, sc in zip(toks, scores)], lv, cells, strings
            if status == 3:
                return [], "timeout", cells, strings
        return [], "", cells, strings

    def _run_fst(self, bag, words, mult, wid, unseen):
        """Algorithm 3 with OpenFst acceptors (pynini), level by level.  Returns (finals, level,
        cells, states) as :meth:`_run_chart`; the rescoring LM, when given, is composed with the
        final lattice."""
        import pynini

        G = BagLM(self.lm, words)
        G5 = BagLM(self.rescore_lm, words) if self.rescore_lm is not None else None
        total_cells = total_states = 0
        for lv in self.levels:
            lo = {"phrases": self.min_n, "bigram": min(2, self.min_n), "unigram": 1}[lv]
            try:
                top, cells, states = self._parse(len(bag), mult, self._phrases(bag, wid, unseen, lo), G)
            except GyroLimit:
                top, cells, states = None, 0, self.max_states
            total_cells += cells
            total_states += states
            if top is not None:
                lat = pynini.compose(top, (G5 or G).sentence)
                n = max(self.nbest, self.keep if self.mbr else 1, self.dep_nbest if self.dep is not None else 1)
                best = pynini.shortestpath(lat, nshortest=n, unique=True)
                outs = sorted(_strings(best), key=lambda x: x[1])
                return [([words[lab - 1] for lab in labels], -c) for labels, c in outs], lv, total_cells, total_states
        return [], "", total_cells, total_states

    def _phrases(self, bag, wid, unseen, lo) -> List[List[int]]:
        """The phrase rules of one grammar level as label lists (label = distinct word index +
        1): the index's phrases of lo..max_n words made of the bag's words, and unigram rules
        (every word when lo = 1, else the words the text never saw).  With unigram rules the
        language is every permutation, so longer phrases would add no string: none are looked up."""
        if lo <= 1:
            return [[i + 1] for i in range(len(wid))]
        out = [[wid[w] + 1 for w in ph]
               for ph in self.index.lookup(bag, min_n=max(lo, 2), max_n=self.max_n, min_count=self.min_count)]
        out += [[i + 1] for i in (range(len(wid)) if lo <= 1 else unseen)]
        return out

    def language(self, bag: Sequence[str], phrases: Sequence[Sequence[str]],
                 engine: Optional[str] = None) -> List[str]:
        """Every string the generation grammar of section 2.1 derives from ``bag`` with the
        phrase rules ``phrases`` (lists of words), unpruned (the paper's Figure 1; exponential:
        small bags only), by ``engine`` (default: this realizer's).  Returns the strings sorted."""
        bag = list(bag)
        words = sorted(set(bag))
        wid = {w: i for i, w in enumerate(words)}
        mult = [bag.count(w) for w in words]
        labels = [[wid[w] + 1 for w in ph] for ph in phrases if all(w in wid for w in ph)]
        if (engine or self.engine) == "chart":
            from .._fast._gyro import GyroChart

            chart = GyroChart(self.lm.core, np.ascontiguousarray(self.lm.word_ids(words), dtype=np.int32),
                              np.asarray(mult, dtype=np.int32))
            status, toks, _ = chart.parse(*_flat(labels), prune=False, keep=1 << 24, max_strings=self.max_states)
            return sorted(" ".join(words[i] for i in row) for row in toks) if status == 0 else []
        top, _, _ = self._parse(len(bag), mult, labels, None)
        return sorted(" ".join(words[lab - 1] for lab in p) for p, _ in _strings(top)) if top is not None else []

    def _parse(self, N, mult, phrase_labels, G):
        """Algorithm 3 over a bag of N tokens (mult: multiplicity of each distinct word) with
        the given phrase rules (label lists); G None = no pruning.  Returns (the top cell's
        acceptor or None, cells built, states built).  Raises GyroLimit past max_states."""
        import pynini

        D = len(mult)
        width = max(m.bit_length() for m in mult) + 1          # + guard bit per field
        shift = [width * i for i in range(D)]
        guard = sum(1 << (width - 1 + s) for s in shift)
        off = sum(((1 << (width - 1)) - 1 - m) << s for m, s in zip(mult, shift))
        unit = [1 << s for s in shift]
        full = sum(m << s for m, s in zip(mult, shift))
        rows: Dict[int, Dict[int, object]] = {x: {} for x in range(1, N + 1)}
        phrases: Dict[int, List[List[int]]] = {}
        for labels in phrase_labels:
            key = sum(unit[lab - 1] for lab in labels)
            if not (key + off) & guard:
                phrases.setdefault(key, []).append(list(labels))
        for key, lst in phrases.items():
            x = len(lst[0])
            if x <= N:
                rows[x][key] = pynini.union(*[_path(p) for p in lst]).optimize() if len(lst) > 1 else _path(lst[0])
        states = sum(f.num_states() for r in rows.values() for f in r.values())
        cells = sum(len(r) for r in rows.values())
        if N == 1:
            return rows[1].get(full), cells, states
        for x in range(2, N + 1):
            pending: Dict[int, List] = {}
            for i in range(1, x):
                left, right = rows[i], rows[x - i]
                if not left or not right:
                    continue
                for kb, fb in left.items():
                    for kc, fc in right.items():
                        ka = kb + kc
                        if (ka + off) & guard:
                            continue                    # uses a word more often than the bag has it
                        pending.setdefault(ka, []).append(pynini.concat(fb, fc))
            for ka, parts in pending.items():
                if ka in rows[x]:
                    parts.append(rows[x][ka])
                f = pynini.union(*parts) if len(parts) > 1 else parts[0]
                f = f.rmepsilon()
                f = pynini.determinize(f).minimize()
                rows[x][ka] = f
                states += f.num_states()
                if states > self.max_states:
                    raise GyroLimit()
            cells += len(pending)
            if G is not None and x >= self.r and x < N and rows[x]:
                self._prune_row(rows[x], G)
            if x == N:
                return rows[x].get(full), cells, states
            # rows above x never need cells that cannot complete... (all may combine later)
        return None, cells, states

    def _prune_row(self, row: Dict[int, object], G) -> None:
        """Algorithm 2/3's PRUNE-ROW: union of the row, composed with G, pruned at beta; every
        cell intersected with the surviving strings (cells left empty are removed)."""
        import pynini

        u = pynini.union(*row.values()) if len(row) > 1 else next(iter(row.values())).copy()
        u = u.rmepsilon()
        scored = pynini.compose(u, G.fragment)
        pruned = pynini.prune(scored, weight=self.beta * 1.0, nstate=self.row_states)
        survivors = pynini.arcmap(pruned, map_type="rmweight").rmepsilon()
        survivors = pynini.determinize(survivors).minimize().arcsort("ilabel")
        for k in list(row):
            f = pynini.intersect(row[k].arcsort("olabel"), survivors)
            f.connect()
            if f.num_states() == 0:
                del row[k]
            else:
                row[k] = f.minimize() if f.num_states() > 1 else f

    def _greedy(self, bag: Sequence[str]) -> List[str]:
        """Left to right, the most probable next word under the LM (each word once; ties to the
        alphabetically last): ``wo._fast._gyro.greedy_order`` in C."""
        from .._fast._gyro import greedy_order

        if not bag:
            return []
        words = sorted(set(bag))
        count = {}
        for w in bag:
            count[w] = count.get(w, 0) + 1
        lmid = np.ascontiguousarray(self.lm.word_ids(words), dtype=np.int32)
        idx = greedy_order(self.lm.core, lmid, np.array([count[w] for w in words], dtype=np.int32))
        return [words[i] for i in idx]


# ------------------------------------------------------------------ batch (CLI)
def to_json(res: GyroResult) -> str:
    """The JSONL record of a realisation: the common fields (:meth:`wo.system.Result.base_record`:
    tokens, score, status, seconds, pops, message) and text, log10_prob (the score; null, as the
    score, for an error), level, nbest (objects of text and log10_prob), cells, states, pool_mb,
    and with a dependency model heads and dep_score."""
    import json

    d = {"text": res.text, **res.base_record(), "log10_prob": system.json_number(res.score), "level": res.level,
         "nbest": res.nbest, "cells": res.cells, "states": res.states, "pool_mb": res.pool_mb, "heads": res.heads,
         "dep_score": res.dep_score}
    if not d["heads"]:                         # no dependency model: no tree
        d.pop("heads")
        d.pop("dep_score")
    d["nbest"] = [{"text": t, "log10_prob": p} for t, p in res.nbest]
    return json.dumps(d, ensure_ascii=False)


def run(index_path: Optional[str], lm_path: Optional[str], input_path: str, output_path: str, rescore_path: Optional[str] = None,
        input_format: str = "auto", output_format: str = "text", jobs: int = 1, seed: int = 1,
        on_error: str = "fallback", backend: str = "loky", scheduler: Optional[str] = None,
        report=lambda m: None, progress=None, **opts):
    """Realise every bag of ``input_path`` (one bag per line, or CoNLL-U whose forms are read
    and shuffled per sentence with ``seed``, as every evaluation input) into ``output_path``,
    one record per input sentence, in order, written atomically (the batch spine,
    :func:`wo.io.batch.process`); a bad sentence is reported as ``file:line: message`` and its
    record follows ``on_error`` (fallback: its words in input order, status error; skip: an
    empty line, jsonl keeps the record; fail: nothing written).  jobs, backend ("loky" or
    "dask"), scheduler (a Dask address): :func:`wo.io.batch.map_batches`.  lm_path None: the
    shipped 4-gram.  opts: :meth:`GyroRealizer.load` parameters (dep_model: a reranking model
    file, with dep_system: its linearizer class).  Returns the batch Summary.  Raises
    ValueError for a bad option or format, PhraseIndexError/LMError/FileNotFoundError for the
    index and LMs (also for a checksum mismatch: the parent verifies every file it loads,
    the LM, the rescoring LM, the phrase index and the reranking model), FailFast /
    Interrupted as :func:`wo.io.batch.process`.
    jobs as joblib counts them (-1 every core, -2 all but one, capped at the cores:
    :func:`wo.io.batch.resolve_jobs`); ValueError for jobs 0, SameFileError (a ValueError) for an
    output that is the input.
    """
    from ..io.batch import resolve_jobs

    jobs = resolve_jobs(jobs)   # -1: every core; 0 refused (ValueError) before any work
    from ..io.batch import decode_system, load_system, process
    from ..io.items import read_items
    from ..model import default_model

    lm_path = lm_path or default_model("lm")
    from ..io.trees import permutation

    if output_format not in ("text", "jsonl"):
        raise ValueError("output format: text or jsonl")
    opts = dict(opts, index=index_path, rescore_lm=rescore_path)
    # fail early on the files (their checksums verified, as wo idl realize and wo lm score do) and the options
    load_system(GyroRealizer, lm_path, opts, verify=True)
    items, fmt = read_items(input_path, input_format)

    def prepare(i, it):
        if it.error:
            return it.error
        if not it.forms:
            return "empty bag"
        perm = permutation(len(it.forms), seed, i)
        return it, [it.forms[j] for j in perm]

    def decode_many(payloads, on_batch):
        decode_system(GyroRealizer, lm_path, opts, payloads, on_batch, jobs=jobs, chunk=2, backend=backend,
                      scheduler=scheduler, cost=lambda b: 2.0 ** min(len(b), 40))

    def fallback(it, msg):
        return GyroResult(list(it.forms), score=float("nan"), status="error", message=msg)

    def fmt_record(it, r):
        return to_json(r) if output_format == "jsonl" else r.text

    summ = process(items, input_path, output_path, prepare=prepare, decode_many=decode_many,
                   fallback=fallback, format_record=fmt_record, on_error=on_error,
                   keep_skipped=output_format == "jsonl", report=report, progress=progress)
    summ.input_format = fmt
    return summ
