"""Phrase-based baselines (wo.smt.baseline): monotone and LM-ordered decoding on hand-made
translation options with the shipped English 4-gram LM."""
import itertools
import pathlib

import pytest

from wo.smt.baseline import BaselineWeights, decode_lm_order, decode_monotone, score_derivation
from wo.smt.options import Option

LM_PATH = pathlib.Path(__file__).resolve().parent.parent / "corpora" / "models" / "wo-en-4gram.wolm"


@pytest.fixture(scope="module")
def lm():
    from wo.lm.model import LanguageModel

    return LanguageModel.load(str(LM_PATH))


def O(lo, hi, words, prob):
    ws = tuple(words.split())
    return Option(lo, hi, ws, ("NN",) * len(ws), (-1,) + (0,) * (len(ws) - 1), 0, prob)


# 我 昨天 买了 一本 书 ("I yesterday bought a book"): English prefers "yesterday" last
BOOK = [O(0, 1, "I", 0.8), O(0, 1, "me", 0.2), O(1, 2, "yesterday", 0.9), O(2, 3, "bought", 0.7),
        O(2, 3, "buy", 0.3), O(3, 4, "a", 0.6), O(4, 5, "book", 0.9), O(3, 5, "a book", 0.8),
        O(1, 3, "bought yesterday", 0.1)]
# overlapping options everywhere, including ones that can block each other ([0,2) vs [1,3))
OVERLAP = [O(0, 2, "the cat", 0.5), O(1, 3, "cat sat", 0.5), O(0, 1, "the", 0.6),
           O(2, 3, "sat", 0.4), O(1, 2, "dog", 0.3), O(2, 4, "on the mat", 0.2),
           O(3, 4, "mat", 0.9)]
WEIGHTS = [BaselineWeights(), BaselineWeights(1.0, 3.0, 0.0, -2.0), BaselineWeights(0.5, 1.0, 2.0, -1.0),
           BaselineWeights(1.0, 0.2, -1.0, -0.5), BaselineWeights(2.0, 1.0, 1.0, 0.0)]


def covered(steps, n):
    """How often each source word is covered (options or skips)."""
    c = [0] * n
    for st in steps:
        if isinstance(st, Option):
            for i in range(st.src_lo, st.src_hi):
                c[i] += 1
        else:
            c[st[1]] += 1
    return c


def test_scores_are_exact_sentence_scores(lm):
    """The decoders' incremental LM (context + phrase, memoised) adds up to lm.score of the output."""
    for f in (decode_monotone, decode_lm_order):
        for w in WEIGHTS:
            d = f(BOOK, 5, lm, w, full=True)
            assert d.score == pytest.approx(score_derivation(d.steps, 5, lm, w), abs=1e-6)
            assert d.lm == pytest.approx(lm.score(d.tokens), abs=1e-9)
            assert d.tokens == f(BOOK, 5, lm, w)


def test_monotone_keeps_source_order(lm):
    d = decode_monotone(BOOK, 5, lm, full=True)
    spans = [(s.src_lo, s.src_hi) for s in d.steps]
    assert spans[0][0] == 0 and spans[-1][1] == 5
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert d.tokens[:2] == ["I", "yesterday"]
    # the LM-ordered decoder is free to move "yesterday" to the end, and does
    r = decode_lm_order(BOOK, 5, lm, full=True)
    assert r.tokens == ["I", "bought", "a", "book", "yesterday"]
    assert r.score > d.score


@pytest.mark.parametrize("w", WEIGHTS)
def test_each_source_word_covered_once(lm, w):
    for opts, n in ((BOOK, 5), (OVERLAP, 4), (OVERLAP, 5), (OVERLAP[:2], 3), (BOOK[3:], 5)):
        for f, kw in ((decode_monotone, {}), (decode_monotone, {"beam": 1}), (decode_lm_order, {}),
                      (decode_lm_order, {"stack_limit": 2, "expand_limit": 2, "beam": 1.0})):
            d = f(opts, n, lm, w, full=True, **kw)
            assert covered(d.steps, n) == [1] * n, (f.__name__, kw, d.steps)
            assert d.tokens == [t for s in d.steps if isinstance(s, Option) for t in s.words]


def test_monotone_is_best_monotone_segmentation(lm):
    """Exhaustive check: the best score over all left-to-right segmentations."""
    for w in WEIGHTS:
        def best(i):
            if i == 4:
                return [[]]
            starts = [o for o in OVERLAP if o.src_lo == i]
            if not starts:
                return [[("skip", i)] + r for r in best(i + 1)]
            return [[o] + r for o in starts for r in best(o.src_hi)]

        want = max(score_derivation(s, 4, lm, w) for s in best(0))
        d = decode_monotone(OVERLAP, 4, lm, w, beam=None, option_limit=None, full=True)
        assert d.score == pytest.approx(want, abs=1e-9)


def brute_force_subsets(opts, n, lm, w):
    """Best score over every set of non-overlapping options covering all coverable words, in
    every order (words no option covers are skipped)."""
    uncoverable = [("skip", i) for i in range(n) if not any(o.src_lo <= i < o.src_hi for o in opts)]
    need = n - len(uncoverable)
    best = None
    for r in range(1, len(opts) + 1):
        for sub in itertools.combinations(opts, r):
            if sum(o.src_hi - o.src_lo for o in sub) != need:
                continue
            if any(max(c) > 1 for c in [covered(list(sub), n)]):
                continue
            for perm in itertools.permutations(sub):
                s = score_derivation(list(perm) + uncoverable, n, lm, w)
                best = s if best is None or s > best else best
    return best


def test_lm_order_finds_best_permutation(lm):
    """Exact search (no pruning) equals brute force over all option subsets and orders when
    skipping is expensive enough never to pay."""
    opts = [O(0, 1, "book", 0.9), O(1, 2, "a", 0.6), O(2, 3, "read", 0.5), O(2, 3, "reads", 0.3),
            O(3, 4, "she", 0.9), O(0, 2, "a book", 0.7), O(1, 3, "read a", 0.1)]
    for w in WEIGHTS:
        w = BaselineWeights(w.w_lm, w.w_tm, w.w_wp, -50.0)
        want = brute_force_subsets(opts, 4, lm, w)
        d = decode_lm_order(opts, 4, lm, w, stack_limit=None, option_limit=None, full=True)
        assert d.score == pytest.approx(want, abs=1e-9)
        assert all(isinstance(s, Option) for s in d.steps)
    d = decode_lm_order(opts, 4, lm, BaselineWeights(w_unk=-50.0), stack_limit=None, option_limit=None)
    assert d == ["she", "reads", "a", "book"] or d == ["she", "read", "a", "book"]


def test_lm_order_exhaustive_with_skips(lm):
    """Exact search equals a depth-first enumeration of the whole search space, skips included
    (a word may be skipped when none of its options fits its uncovered gap)."""
    n = 5

    def dfs(cov, steps, w, out):
        if all(cov):
            out.append(score_derivation(steps, n, lm, w))
            return
        for o in OVERLAP:
            if not any(cov[o.src_lo:o.src_hi]):
                c = list(cov)
                c[o.src_lo:o.src_hi] = [True] * (o.src_hi - o.src_lo)
                dfs(c, steps + [o], w, out)
        for i in range(n):
            if cov[i]:
                continue
            if not any(o.src_lo == i and not any(cov[i:o.src_hi]) for o in OVERLAP):
                c = list(cov)
                c[i] = True
                dfs(c, steps + [("skip", i)], w, out)

    for w in WEIGHTS:
        out = []
        dfs([False] * n, [], w, out)
        d = decode_lm_order(OVERLAP, n, lm, w, stack_limit=None, option_limit=None, full=True)
        assert d.score == pytest.approx(max(out), abs=1e-9)


def test_weights_change_the_choice(lm):
    opts = [O(0, 1, "the", 0.9), O(1, 2, "house", 0.05), O(1, 2, "home", 0.95)]
    # the translation model alone picks the likely translation; the LM alone may not
    tm_only = BaselineWeights(w_lm=0.0, w_tm=1.0, w_wp=0.0)
    assert decode_monotone(opts, 2, lm, tm_only) == ["the", "home"]
    lm_only = BaselineWeights(w_lm=1.0, w_tm=0.0, w_wp=0.0)
    assert lm.score(["the", "house"]) > lm.score(["the", "home"])
    assert decode_monotone(opts, 2, lm, lm_only) == ["the", "house"]
    assert decode_lm_order(opts, 2, lm, lm_only) == ["the", "house"]
    # word bonus: a long option beats shorter ones
    opts2 = [O(0, 2, "the old house", 0.5), O(0, 2, "home", 0.5)]
    assert decode_monotone(opts2, 2, lm, BaselineWeights(w_wp=5.0)) == ["the", "old", "house"]
    assert decode_monotone(opts2, 2, lm, BaselineWeights(w_wp=-5.0)) == ["home"]
    # skip cost: word 1 has no option of its own, only the unlikely [0, 2)
    opts3 = [O(0, 2, "the cat", 0.001), O(0, 1, "the", 0.9)]
    cheap = BaselineWeights(w_unk=0.0, w_wp=0.0)
    dear = BaselineWeights(w_unk=-100.0, w_wp=0.0)
    for f in (decode_monotone, decode_lm_order):
        assert f(opts3, 2, lm, cheap) == ["the"]
        assert f(opts3, 2, lm, dear) == ["the", "cat"]


def test_uncoverable_and_empty(lm):
    opts = [O(0, 1, "I", 0.9), O(2, 3, "books", 0.9)]
    for f in (decode_monotone, decode_lm_order):
        d = f(opts, 4, lm, full=True)
        assert d.tokens == ["I", "books"]
        assert sorted(s[1] for s in d.steps if not isinstance(s, Option)) == [1, 3]
        assert f([], 3, lm) == []
        assert f([], 0, lm) == []


def test_option_limit_and_duplicates(lm):
    """Options with the same span and words are one (highest P); option_limit keeps the best."""
    opts = [O(0, 1, "house", 0.1), O(0, 1, "house", 0.6), O(0, 1, "home", 0.3)]
    d = decode_monotone(opts, 1, lm, BaselineWeights(w_lm=0.0), full=True)
    assert d.steps[0].prob == 0.6
    assert decode_lm_order(opts, 1, lm, BaselineWeights(w_lm=0.0, w_tm=1.0), option_limit=1) == ["house"]


def test_batched_lm_costs_match_direct_scoring(lm):
    """The batched LM costs (all options at once, or a subset) equal scoring context + phrase."""
    import numpy as np

    from wo.smt.baseline import _Sentence

    S = _Sentence(BOOK + OVERLAP, 5, lm, BaselineWeights(), None)
    words = ["the", "a", "book", "bought", "zzzunknownzzz"]
    ctxs = [S.start_context(), (S.bos, int(lm.ids["I"]))] + [
        tuple(int(lm.word_ids([w])[0]) for w in c) for c in itertools.product(words, repeat=3)][:40]
    for j, ctx in enumerate(ctxs):
        cand = np.arange(len(S.opts)) if j % 2 else np.arange(0, len(S.opts), 3)
        got = S.lm_scores(ctx, cand)
        for oi, g in zip(cand.tolist(), got.tolist()):
            seq = np.asarray(ctx + S.ids[oi], dtype=np.int32)
            want = float(lm.core.word_scores(seq, False, False)[len(ctx):].sum())
            assert g == pytest.approx(want, abs=1e-9)
        ent = np.full(len(S.opts), np.nan)
        S._score_some(ctx, ent, cand)          # the subset path (used for large option sets)
        assert np.allclose(ent[cand], got, atol=1e-9, rtol=0)
        for i in range(5):
            got = S.lm_scores_at(ctx, i)
            for oi, g in zip(S.starts[i], got.tolist()):
                seq = np.asarray(ctx + S.ids[oi], dtype=np.int32)
                assert g == pytest.approx(float(lm.core.word_scores(seq, False, False)[len(ctx):].sum()),
                                          abs=1e-9)
    # with <s> as the context the phrase is scored as a sentence start
    oi = 0
    assert S.lm_scores(S.start_context(), np.array([oi]))[0] == pytest.approx(
        lm.score(list(S.opts[oi].words), bos=True, eos=False), abs=1e-9)


@pytest.mark.parametrize("w", WEIGHTS)
def test_lm_order_space_contains_monotone(lm, w):
    """Every monotone derivation is an LM-order derivation, so exact LM-order search scores at
    least as well as exact monotone search."""
    for opts, n in ((BOOK, 5), (OVERLAP, 4), (OVERLAP, 5), (BOOK[3:], 5)):
        m = decode_monotone(opts, n, lm, w, beam=None, option_limit=None, full=True)
        r = decode_lm_order(opts, n, lm, w, stack_limit=None, option_limit=None, full=True)
        assert r.score >= m.score - 1e-9
