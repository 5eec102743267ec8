"""Phrase-based baselines for Chinese->English synthesis: monotone and LM-ordered decoding.

Both decoders use the same translation options (:class:`wo.smt.options.Option`) and the same
n-gram LM as the synthesis decoder, and the same linear model (all terms in log10 units):

    score = w_lm * log10 P_LM(e)                 (with <s> ... </s>)
          + w_tm * sum log10 P(trans)            (one term per option used)
          + w_wp * |e|                           (number of target words; > 0 is a bonus)
          + w_unk * (number of skipped source words)   (< 0 is a penalty)

* :func:`decode_monotone` - phrase-based decoding without reordering (Koehn, Och & Marcu 2003,
  with the distortion limit 0): target phrases come out in source order; a dynamic program
  (Viterbi) over source positions with hypothesis recombination on (position, LM context).
* :func:`decode_lm_order` - the same options in any order, ordered by the LM (and the
  translation probability) alone: no distortion limit and no distortion cost.  Multi-stack
  beam search in the style of Pharaoh (Koehn 2004): stack k holds hypotheses covering k
  source words, hypotheses are recombined on (coverage vector, LM context) and pruned by
  histogram (``stack_limit``) and optionally by a threshold (``beam``) on score + future cost;
  the future cost of the uncovered source words is the standard estimate of Koehn 2004
  (best option per span, its LM scored in isolation, combined over spans by dynamic programming).

Source words.  A source word can be *skipped* (dropped from the output) at cost ``w_unk``
when no translation option starting at it fits the uncovered gap it is in: in the monotone
decoder that means "no option starts there"; in the LM-order decoder it also covers words
whose only options overlap words already translated (so no hypothesis is ever a dead end).
Skipped words are not passed through: the output is English and the source is Chinese.

Language-model context.  The wo LM has no per-state query in Python, so the cost of
appending a phrase is computed by scoring ``context + phrase`` (context = the last order-1
word ids of the hypothesis, ``<s>`` included at the sentence start) with
``NgramModel.word_scores(..., bos=False, eos=False)`` and summing the phrase part; with
backoff states truncated to order-1 words this is exactly the phrase's share of the LM score
of the whole sentence.  Costs are memoised per (context, option) for one sentence, and the
options missing for a context are scored in one call (one sequence of ``context + phrase``
segments: after ``<s>`` or a full context of order-1 words the LM state does not depend on
the words before, so the segments do not interact).

Options.  Options with the same span and target words are merged (highest P(trans) kept);
``option_limit`` keeps the best options per span by w_tm*log10 P + w_wp*len + w_lm*(LM of the
phrase alone), as Pharaoh's translation-table limit.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .options import Option

#: floor of P(trans) (log10 of 0 would be -inf)
MIN_PROB = 1e-10
NEG = -1e30


@dataclass
class BaselineWeights:
    """Weights of the linear model of both baselines (all feature values are log10 or counts).

    w_lm: weight of the LM log10 probability of the output (``<s>``/``</s>`` included).
    w_tm: weight of the sum of log10 P(trans) of the options used.
    w_wp: per target word (word "penalty"; a positive value rewards longer output, which
        balances the LM's preference for short sentences).
    w_unk: per skipped (untranslated) source word; negative = a penalty.
    """

    w_lm: float = 1.0
    w_tm: float = 1.0
    w_wp: float = 0.5
    w_unk: float = -5.0

    def as_dict(self) -> dict:
        """The weights as a plain dict (for JSON)."""
        return {"w_lm": self.w_lm, "w_tm": self.w_tm, "w_wp": self.w_wp, "w_unk": self.w_unk}


@dataclass
class Decoding:
    """A decoder's best derivation.

    tokens: the target tokens; score: its model score (log10 units, ``</s>`` included);
    steps: the derivation in output order, each an :class:`Option` or ``("skip", i)`` for
    the skipped source word i; lm: its LM log10 probability; hyps: hypotheses created.
    """

    tokens: List[str]
    score: float
    steps: list = field(default_factory=list)
    lm: float = 0.0
    hyps: int = 0


class _Sentence:
    """Per-sentence tables shared by both decoders: deduplicated options with LM ids,
    log10 P(trans), isolated LM scores, options by start position, future costs and the
    memo of LM costs per (context, option)."""

    def __init__(self, options: Sequence[Option], n_src: int, lm, w: BaselineWeights,
                 option_limit: Optional[int]):
        self.n = n_src
        self.lm = lm
        self.core = lm.core
        self.w = w
        self.nctx = max(0, lm.order - 1)
        self.bos = int(self.core.bos)
        # one entry per (span, target words): the highest P(trans) (the phrase table may give
        # several options with the same words and different syntax on the target side)
        best: Dict[tuple, Option] = {}
        for o in options:
            if not (0 <= o.src_lo < o.src_hi <= n_src) or not o.words:
                continue
            k = (o.src_lo, o.src_hi, tuple(o.words))
            if k not in best or o.prob > best[k].prob:
                best[k] = o
        by_span: Dict[Tuple[int, int], list] = {}
        for (lo, hi, words), o in best.items():
            ids = tuple(int(x) for x in lm.word_ids(list(words)))
            tm = math.log10(max(float(o.prob), MIN_PROB))
            iso = float(self.core.word_scores(np.asarray(ids, dtype=np.int32), False, False).sum())
            static = w.w_tm * tm + w.w_wp * len(ids) + w.w_lm * iso
            by_span.setdefault((lo, hi), []).append((static, o, ids, tm))
        self.opts: List[Option] = []
        self.ids: List[tuple] = []
        self.tm: List[float] = []
        self.local: List[float] = []    # w_tm * tm + w_wp * len (the LM part is contextual)
        static_l, lo_l, hi_l = [], [], []
        for (lo, hi) in sorted(by_span):
            cand = sorted(by_span[(lo, hi)], key=lambda t: (-t[0], t[1].words))
            if option_limit is not None:
                cand = cand[:option_limit]
            for static, o, ids, tm in cand:
                self.opts.append(o)
                self.ids.append(ids)
                self.tm.append(tm)
                self.local.append(w.w_tm * tm + w.w_wp * len(ids))
                static_l.append(static)
                lo_l.append(lo)
                hi_l.append(hi)
        self.static = np.asarray(static_l, dtype=np.float64)
        self.lo = np.asarray(lo_l, dtype=np.int64)
        self.hi = np.asarray(hi_l, dtype=np.int64)
        # options by start position, sorted by end (so "fits before gap end b" is a prefix)
        self.starts: List[List[int]] = [[] for _ in range(n_src)]
        for oi in sorted(range(len(self.opts)), key=lambda i: (lo_l[i], hi_l[i])):
            self.starts[lo_l[oi]].append(oi)
        self.lens = np.asarray([len(x) for x in self.ids], dtype=np.int64)
        self.off = np.zeros(len(self.ids), dtype=np.int64)
        if len(self.ids):
            self.off[1:] = np.cumsum(self.lens)[:-1]
        self.flat = np.asarray([t for x in self.ids for t in x], dtype=np.int32)
        self.vec: Dict[tuple, np.ndarray] = {}
        self.templates: Dict[int, tuple] = {}
        self.local_a = np.asarray(self.local, dtype=np.float64)
        self.widths = [h - l for l, h in zip(lo_l, hi_l)]
        self.masks = [((1 << (h - l)) - 1) << l for l, h in zip(lo_l, hi_l)]
        self.starts_a = [np.asarray(x, dtype=np.int64) for x in self.starts]
        self.eos_memo: Dict[tuple, float] = {}
        self._future()

    def _future(self) -> None:
        """fc[i, j]: the best score of covering source span [i, j) on its own (Koehn 2004):
        the best option of the span (LM of the phrase without context) or a split of the span;
        a single word can always be skipped (``w_unk``) in the estimate."""
        n = self.n
        fc = np.full((n + 1, n + 1), NEG)
        for i in range(n + 1):
            fc[i, i] = 0.0
        for oi in range(len(self.opts)):
            a, b = int(self.lo[oi]), int(self.hi[oi])
            fc[a, b] = max(fc[a, b], self.static[oi])
        for i in range(n):
            fc[i, i + 1] = max(fc[i, i + 1], self.w.w_unk)
        for span in range(2, n + 1):
            for i in range(0, n - span + 1):
                j = i + span
                fc[i, j] = max(fc[i, j], float((fc[i, i + 1:j] + fc[i + 1:j, j]).max()))
        self.fc = fc

    def start_context(self) -> tuple:
        """LM context of an empty hypothesis: ``<s>``."""
        return (self.bos,) if self.nctx else ()

    def lm_scores(self, ctx: tuple, cand: np.ndarray) -> np.ndarray:
        """LM log10 of the words of options ``cand`` (int array) after context ``ctx``:
        float64[len(cand)].  Memoised per (context, option); the options not yet known for
        this context are scored in one call, as one sequence of ``ctx + phrase`` segments.
        Exact: the LM state after a full context of order-1 words (or after ``<s>``) does not
        depend on what precedes it, so the segments do not interact."""
        ent = self.vec.get(ctx)
        if ent is None:
            ent = np.full(len(self.opts), np.nan)
            self.vec[ctx] = ent
        vals = ent[cand]
        missing = np.isnan(vals)
        if missing.any():
            miss = cand[missing]
            if len(self.opts) <= 1000 or 4 * len(miss) >= len(self.opts):
                self._score_all(ctx, ent)
            else:
                self._score_some(ctx, ent, miss)
            vals = ent[cand]
        return vals

    def _segments(self, idx: np.ndarray, c: int):
        """The ``ctx + phrase`` segments of options ``idx`` for a context of c words, with the
        context slots open: (word ids int32[T], context slot positions, context word index of
        each slot, segment starts)."""
        L = self.lens[idx]
        seg = L + c
        ends = np.cumsum(seg)
        starts = ends - seg
        inner = np.arange(int(L.sum())) - np.repeat(np.cumsum(L) - L, L)
        ppos = np.repeat(starts + c, L) + inner
        seq = np.empty(int(ends[-1]), dtype=np.int32)
        mask = np.ones(len(seq), dtype=bool)
        mask[ppos] = False
        seq[ppos] = self.flat[np.repeat(self.off[idx], L) + inner]
        return seq, np.nonzero(mask)[0], np.tile(np.arange(c), len(L)), starts

    def _fill(self, ctx: tuple, ent: np.ndarray, idx: np.ndarray, tpl) -> None:
        """``ent[idx]`` = LM of each option's phrase after ``ctx``, from segments ``tpl``."""
        seq, cpos, csrc, starts = tpl
        seq = seq.copy()
        if len(ctx):
            seq[cpos] = np.asarray(ctx, dtype=np.int32)[csrc]
        sc = self.core.word_scores(seq, False, False)
        if len(ctx):
            sc[cpos] = 0.0
        ent[idx] = np.add.reduceat(sc, starts)

    def _score_some(self, ctx: tuple, ent: np.ndarray, miss: np.ndarray) -> None:
        """Fill ``ent[miss]`` (LM of options ``miss`` after ``ctx``) with one LM call."""
        self._fill(ctx, ent, miss, self._segments(miss, len(ctx)))

    def lm_scores_at(self, ctx: tuple, i: int) -> np.ndarray:
        """:meth:`lm_scores` of the options starting at source position i (``starts_a[i]``)."""
        ent = self.vec.get(ctx)
        if ent is None:
            ent = np.full(len(self.opts), np.nan)
            self.vec[ctx] = ent
        idx = self.starts_a[i]
        vals = ent[idx]
        if np.isnan(vals).any():
            self._score_template(ctx, ent, i, idx)
            vals = ent[idx]
        return vals

    def _score_all(self, ctx: tuple, ent: np.ndarray) -> None:
        """Fill ``ent`` for every option after ``ctx``."""
        self._score_template(ctx, ent, -1, np.arange(len(self.opts)))

    def _score_template(self, ctx: tuple, ent: np.ndarray, key: int, idx: np.ndarray) -> None:
        """Fill ``ent[idx]`` with one LM call from a template cached per (context length,
        key): the ``ctx + phrase`` segments of options ``idx`` with the context slots open."""
        c = len(ctx)
        tpl = self.templates.get((c, key))
        if tpl is None:
            tpl = self.templates[(c, key)] = self._segments(idx, c)
        self._fill(ctx, ent, idx, tpl)

    def next_context(self, ctx: tuple, oi: int) -> tuple:
        """The LM context (last order-1 word ids) after appending option oi to ``ctx``."""
        if not self.nctx:
            return ()
        return (ctx + self.ids[oi])[-self.nctx:]

    def final(self, ctx: tuple) -> float:
        """LM log10 p(``</s>`` | ctx); memoised."""
        r = self.eos_memo.get(ctx)
        if r is None:
            s = self.core.word_scores(np.asarray(ctx, dtype=np.int32), False, True)
            r = float(s[-1])
            self.eos_memo[ctx] = r
        return r


def score_derivation(steps: Sequence, n_src: int, lm, weights: BaselineWeights) -> float:
    """The model score of a derivation (options and ``("skip", i)`` in output order) under the
    baselines' linear model, computed from scratch with ``lm.score`` (for tests and checks).
    Does not check coverage."""
    words: List[str] = []
    tm = 0.0
    skipped = 0
    for st in steps:
        if isinstance(st, Option):
            words.extend(st.words)
            tm += math.log10(max(float(st.prob), MIN_PROB))
        else:
            skipped += 1
    w = weights
    return (w.w_lm * lm.score(words, bos=True, eos=True) + w.w_tm * tm + w.w_wp * len(words)
            + w.w_unk * skipped)


def _tokens(steps) -> List[str]:
    """The target words of a derivation."""
    out: List[str] = []
    for st in steps:
        if isinstance(st, Option):
            out.extend(st.words)
    return out


def decode_monotone(options: Sequence[Option], n_src: int, lm, weights: Optional[BaselineWeights] = None,
                    beam: Optional[int] = 100, option_limit: Optional[int] = 20, full: bool = False):
    """Monotone phrase-based decoding (Koehn, Och & Marcu 2003 without reordering).

    Left to right over source positions: from position i the next step is an option starting
    at i, or skipping word i (cost ``w_unk``) when no option starts there.  Viterbi over
    states (position, LM context of the last order-1 words), which recombines hypotheses
    exactly; ``</s>`` is scored at the end.

    options: translation options of the sentence; n_src: its number of source words;
    lm: a :class:`wo.lm.model.LanguageModel`; weights: :class:`BaselineWeights` (defaults);
    beam: the number of states kept per position (histogram pruning; None = all, exact);
    option_limit: options kept per source span, best by w_tm*log10 P + w_wp*len + w_lm*LM
    of the phrase alone (None = all); full: return a :class:`Decoding` instead of the tokens.

    Returns the target tokens (list of str), or a :class:`Decoding`.
    """
    w = weights or BaselineWeights()
    S = _Sentence(options, n_src, lm, w, option_limit)
    # states[i]: ctx -> (score, prev_i, prev_ctx, step); step = option index or -1 - i (skip)
    states: List[Dict[tuple, tuple]] = [dict() for _ in range(n_src + 1)]
    states[0][S.start_context()] = (0.0, -1, None, None)
    his = S.hi.tolist()
    created = 1
    for i in range(n_src):
        cur = states[i]
        if not cur:
            continue
        items = list(cur.items())
        if beam is not None and len(items) > beam:
            items = heapq.nlargest(beam, items, key=lambda kv: kv[1][0])
        starts = S.starts[i]
        starts_a = S.starts_a[i]
        for ctx, (sc, _, _, _) in items:
            if starts:
                vs = (sc + w.w_lm * S.lm_scores_at(ctx, i) + S.local_a[starts_a]).tolist()
                for oi, v in zip(starts, vs):
                    nctx = S.next_context(ctx, oi)
                    tgt = states[his[oi]]
                    old = tgt.get(nctx)
                    created += 1
                    if old is None or v > old[0]:
                        tgt[nctx] = (v, i, ctx, oi)
            else:
                v = sc + w.w_unk
                tgt = states[i + 1]
                old = tgt.get(ctx)
                created += 1
                if old is None or v > old[0]:
                    tgt[ctx] = (v, i, ctx, -1 - i)
    best, best_ctx = NEG * 2, None
    for ctx, st in states[n_src].items():
        v = st[0] + w.w_lm * S.final(ctx)
        if v > best:
            best, best_ctx = v, ctx
    steps: list = []
    i, ctx = n_src, best_ctx
    while i > 0:
        sc, pi, pctx, step = states[i][ctx]
        steps.append(S.opts[step] if step >= 0 else ("skip", -1 - step))
        i, ctx = pi, pctx
    steps.reverse()
    toks = _tokens(steps)
    if not full:
        return toks
    return Decoding(toks, best, steps, lm.score(toks, bos=True, eos=True), created)


def _gaps(cov: int, n: int):
    """Per position: (start, end) of the uncovered gap holding it (end = -1 if covered)."""
    gs = np.zeros(n, dtype=np.int64)
    ge = np.full(n, -1, dtype=np.int64)
    i = 0
    spans = []
    while i < n:
        if cov >> i & 1:
            i += 1
            continue
        j = i
        while j < n and not (cov >> j & 1):
            j += 1
        gs[i:j] = i
        ge[i:j] = j
        spans.append((i, j))
        i = j
    return gs, ge, spans


def _coverage_info(S: "_Sentence", cov: int):
    """What the expansions of every hypothesis with coverage ``cov`` share: the options that
    fit (start uncovered, end within their gap), their w_tm/w_wp part, their priority without
    score and LM (that part + future cost of the new coverage), their width - 1, and the
    skippable words with the future cost of their new coverage."""
    n = S.n
    fc = S.fc
    gs, ge, spans = _gaps(cov, n)
    fc_cov = float(sum(fc[a, b] for a, b in spans))
    if len(S.opts):
        cand = np.nonzero(S.hi <= ge[S.lo])[0]
    else:
        cand = np.zeros(0, dtype=np.int64)
    clo, chi = S.lo[cand], S.hi[cand]
    a, b = gs[clo], ge[clo]
    local = S.local_a[cand]
    stat = local + (fc[a, clo] + fc[chi, b] - fc[a, b]) + fc_cov
    width = chi - clo - 1
    skips = []
    for a, b in spans:
        for i in range(a, b):
            st = S.starts[i]
            if st and S.hi[st[0]] <= b:
                continue
            skips.append((i, fc_cov - float(fc[a, b]) + float(fc[a, i]) + float(fc[i + 1, b])))
    return cand, local, stat, width, skips


def decode_lm_order(options: Sequence[Option], n_src: int, lm, weights: Optional[BaselineWeights] = None,
                    beam: Optional[float] = None, stack_limit: Optional[int] = 100,
                    option_limit: Optional[int] = 20, expand_limit: Optional[int] = None,
                    full: bool = False):
    """Phrase-based decoding with free reordering, ordered by the LM (Koehn 2004 stacks).

    Any option that does not overlap the source words already covered may come next (no
    distortion limit, no distortion cost); the score has the same terms as the monotone
    decoder.  Stack k holds hypotheses covering k source words (skipped words count as
    covered); hypotheses with the same (coverage, LM context) are recombined (the best
    kept); each stack is pruned by score + future cost of its uncovered words.

    options, n_src, lm, weights, option_limit, full: as :func:`decode_monotone`.
    beam: threshold pruning: drop hypotheses whose score + future cost is more than ``beam``
        (log10) below the best of their stack (None = off).
    stack_limit: hypotheses expanded per stack (histogram pruning; None = all).
    expand_limit: per hypothesis, create only the ``expand_limit`` new hypotheses with the
        best score + future cost (all are scored, in one vectorised LM call); None = all.

    With pruning on, new hypotheses are discarded early when their score + future cost is
    below the stack_limit-th best (or more than ``beam`` below the best) already in their
    stack (the bound also counts entries later replaced by recombination, so it can be
    slightly aggressive); options whose score without the LM term (LM <= 0) is already
    below that bound are not scored by the LM at all.
        With beam, stack_limit and expand_limit None the search is exact.

    Returns the target tokens (list of str), or a :class:`Decoding`.
    """
    w = weights or BaselineWeights()
    S = _Sentence(options, n_src, lm, w, option_limit)
    n = n_src
    full_cov = (1 << n) - 1
    fc = S.fc
    # a hypothesis: (score, cov, ctx, prev hypothesis, step); step = option index or -1 - i
    root = (0.0, 0, S.start_context(), None, None)
    stacks: List[Dict[tuple, tuple]] = [dict() for _ in range(n + 1)]
    prio: List[Dict[tuple, float]] = [dict() for _ in range(n + 1)]
    stacks[0][(0, root[2])] = root
    prio[0][(0, root[2])] = float(fc[0, n])
    created = 1
    prune = stack_limit is not None or beam is not None
    cap = stack_limit if stack_limit is not None else 1 << 62
    bw = beam if beam is not None else -NEG
    W = max([1] + S.widths)                                    # widest option
    heaps: List[List[float]] = [[] for _ in range(n + 1 + W)]   # best prios so far, per stack
    tops = [NEG] * (n + 1 + W)
    cov_info: Dict[int, tuple] = {}
    for k in range(n):
        if not stacks[k]:
            continue
        keys = list(stacks[k].keys())
        pk = prio[k]
        if beam is not None:
            top = max(pk[x] for x in keys)
            keys = [x for x in keys if pk[x] >= top - beam]
        if stack_limit is not None and len(keys) > stack_limit:
            keys = heapq.nlargest(stack_limit, keys, key=pk.__getitem__)
        for key in keys:
            hyp = stacks[k][key]
            sc, cov, ctx = hyp[0], hyp[1], hyp[2]
            info = cov_info.get(cov)
            if info is None:
                info = cov_info[cov] = _coverage_info(S, cov)
            cand, local, stat, width, skips = info
            if len(cand):
                # priority (score + future cost) without the LM term: an upper bound, LM <= 0
                base = sc + stat
                if prune:
                    # early discarding: below the stack_limit-th best (or more than beam below
                    # the best) of its target stack so far, a new hypothesis cannot survive
                    bars = [max(h[0] if len(h) >= cap else NEG, top - bw)
                            for h, top in zip(heaps[k + 1:k + 1 + W], tops[k + 1:k + 1 + W])]
                    bar = np.asarray(bars)[width]
                    if w.w_lm >= 0:
                        ok = base >= bar
                        if not ok.all():
                            cand, local, base, bar = cand[ok], local[ok], base[ok], bar[ok]
            if len(cand):
                lmv = w.w_lm * S.lm_scores(ctx, cand)
                pr = base + lmv
                vs = sc + local + lmv
                if prune:
                    ok = pr >= bar
                    if not ok.all():
                        cand, vs, pr = cand[ok], vs[ok], pr[ok]
                if expand_limit is not None and len(cand) > expand_limit:
                    sel = np.argpartition(-pr, expand_limit - 1)[:expand_limit]
                    cand, vs, pr = cand[sel], vs[sel], pr[sel]
                for oi, v, p in zip(cand.tolist(), vs.tolist(), pr.tolist()):
                    nctx = S.next_context(ctx, oi)
                    ncov = cov | S.masks[oi]
                    nk = k + S.widths[oi]
                    kk = (ncov, nctx)
                    created += 1
                    old = stacks[nk].get(kk)
                    if old is None or v > old[0]:
                        stacks[nk][kk] = (v, ncov, nctx, hyp, oi)
                        prio[nk][kk] = p
                        if prune:
                            h = heaps[nk]
                            if len(h) < cap:
                                heapq.heappush(h, p)
                            elif p > h[0]:
                                heapq.heapreplace(h, p)
                            if p > tops[nk]:
                                tops[nk] = p
            # skips: uncovered words none of whose options fits their gap
            v = sc + w.w_unk
            for i, adj in skips:
                ncov = cov | (1 << i)
                kk = (ncov, ctx)
                created += 1
                old = stacks[k + 1].get(kk)
                if old is None or v > old[0]:
                    stacks[k + 1][kk] = (v, ncov, ctx, hyp, -1 - i)
                    prio[k + 1][kk] = v + adj
    best, best_h = NEG * 2, None
    for (cov, ctx), h in stacks[n].items():
        v = h[0] + w.w_lm * S.final(ctx)
        if v > best:
            best, best_h = v, h
    steps: list = []
    h = best_h
    while h is not None and h[4] is not None:
        step = h[4]
        steps.append(S.opts[step] if step >= 0 else ("skip", -1 - step))
        h = h[3]
    steps.reverse()
    assert best_h is None or best_h[1] == full_cov
    toks = _tokens(steps)
    if not full:
        return toks
    return Decoding(toks, best, steps, lm.score(toks, bos=True, eos=True), created)
