"""Synthesis on the shared core for SMT (Zhang et al. 2014, section 2.2): oracle derivations,
forced decoding, coverage exclusivity, training on a toy example, source-path features."""
import itertools
import random

import numpy as np
import pytest

from wo.lm.model import LanguageModel
from wo.smt.options import Option
from wo.smt.synth import (SMTSearch, Source, build_instance, find_oracle, projectivize, source_paths,
                          subtree_spans)
from wo.model import atom

LM_PATH = "corpora/models/wo-en-4gram.wolm"


@pytest.fixture(scope="module")
def lm():
    return LanguageModel.load(LM_PATH)


def _toy():
    src = Source(["我", "喜欢", "猫", "。"], ["PRON", "VERB", "NOUN", "PUNCT"], [1, -1, 1, 1],
                 ["nsubj", "root", "obj", "punct"])
    opts = [Option(0, 1, ("I",), ("PRP",), (-1,), 0, 0.9),
            Option(1, 2, ("like",), ("VBP",), (-1,), 0, 0.7),
            Option(1, 3, ("like", "cats"), ("VBP", "NNS"), (-1, 0), 0, 0.3),
            Option(2, 3, ("cats",), ("NNS",), (-1,), 0, 0.8),
            Option(2, 3, ("the", "cat"), ("DT", "NN"), (1, -1), 1, 0.2),
            Option(3, 4, (".",), (".",), (-1,), 0, 1.0)]
    return src, opts


def test_oracle_tiles_reference_with_cohesive_leaves():
    src, opts = _toy()
    ref, heads = ["I", "like", "cats", "."], [1, -1, 1, 1]
    tiles = find_oracle(opts, ref, heads)
    assert [i for i, _ in tiles] == [0, 2, 5]          # the larger tile "like cats" first
    assert [a for _, a in tiles] == [0, 1, 3]
    # "like cats" is no valid leaf when "cats" heads "." (its subtree leaves the tile)
    tiles = find_oracle(opts, ref, [1, -1, 1, 2])
    assert [i for i, _ in tiles] == [0, 1, 3, 5]
    # overlapping source spans are never both used: "like cats" (1-3) with "cats" (2-3)
    tiles = find_oracle([opts[0], opts[2], opts[3], opts[5]], ["I", "like", "cats", "cats", "."],
                        [1, -1, 1, 1, 1])
    assert tiles is None


def test_projectivize_and_spans():
    h = [2, 3, -1, 2, 1]          # 4 -> 1 crosses the arc 3 -> 2
    p = projectivize(h)
    assert p == [2, 2, -1, 2, 2]     # 1 lifted to 2, then 4 (now crossing 2's arcs) to 2

    def projective(h):
        for d, a in enumerate(h):
            if a >= 0:
                for k in range(min(a, d) + 1, max(a, d)):
                    x = k
                    while x not in (-1, a):
                        x = h[x]
                    if x != a:
                        return False
        return True
    assert not projective(h) and projective(p)
    lo, hi = subtree_spans(p)
    for i in range(len(p)):
        assert lo[i] <= i < hi[i]
    assert projectivize([1, -1, 1]) == [1, -1, 1]


def test_source_paths_len_and_labels():
    src = Source(["a", "b", "c"], ["X", "Y", "Z"], [1, -1, 1], ["l1", "root", "l2"])
    plen, plab, plpos = source_paths(src)
    n = 3
    assert plen[0 * n + 2] == atom("LEN|2")
    assert plab[0 * n + 2] == atom("LAB|l1^|l2v")
    assert plpos[0 * n + 2] == atom("LP|l1^|l2v|X|Y|Z")
    assert plen[1 * n + 0] == atom("LEN|1") and plab[1 * n + 0] == atom("LAB|l1v")


def test_forced_decoding_and_training_reach_the_reference(lm):
    src, opts = _toy()
    inst = build_instance(src, opts, 0.8, lm, ["I", "like", "cats", "."], [1, -1, 1, 1])
    assert inst.oracle == [0, 2, 5]
    bits = 18
    W, U = np.zeros(1 << bits, dtype=np.float32), np.zeros(1 << bits)
    core = SMTSearch(W, bits, U, lm)
    assert core.forced(inst)
    for _ in range(10):
        core.train_one(inst, 64, 200)
        core.avg_count += 1
    d = core.decode(inst, 64, 200)
    assert d.tokens == ["I", "like", "cats", "."]
    assert d.heads == [1, -1, 1, 1]
    assert d.options == [0, 2, 5]


def test_no_source_word_is_translated_twice(lm):
    """Random weights, overlapping options: every output uses options with disjoint spans."""
    rng = random.Random(3)
    toks = ["w%d" % i for i in range(7)]
    src = Source(toks, ["X"] * 7, [1, -1, 1, 2, 1, 4, 1], ["d"] * 7)
    words = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "."]
    opts = []
    for lo in range(7):
        for hi in range(lo + 1, min(7, lo + 3) + 1):
            for _ in range(2):
                k = rng.randint(1, 3)
                ws = tuple(rng.choice(words) for _ in range(k))
                opts.append(Option(lo, hi, ws, ("NN",) * k, tuple([-1] + [0] * (k - 1)), 0, rng.random()))
    bits = 16
    for seed in range(5):
        W = np.random.RandomState(seed).normal(0, 1, 1 << bits).astype(np.float32)
        core = SMTSearch(W, bits, None, lm)
        inst = build_instance(src, opts, 0.8, lm)
        d = core.decode(inst, 16 * 7, 200)
        spans = [(opts[i].src_lo, opts[i].src_hi) for i in d.options]
        cov = [0] * 7
        for a, b in spans:
            for j in range(a, b):
                cov[j] += 1
        assert max(cov) == 1
        assert sum(cov) >= 6 or d.status != 0            # a goal covers >= ceil(0.8 * 7) words
        assert sum(len(opts[i].words) for i in d.options) == len(d.tokens)
        assert sorted(d.heads).count(-1) == 1


def test_lm_features_sum_to_the_sentence_log10(lm):
    """The in-string LM feature sums to log10 p(w) without <s>/</s>, the sentence feature adds
    exactly the <s> and </s> n-grams, over any derivation the decoder returns."""
    from wo._fast._search import feature_hash

    src, opts = _toy()
    bits = 16
    i_lm, i_s = (int(x) for x in feature_hash(np.array([[300], [301]], dtype=np.uint32), bits))
    for seed in range(6):
        W = np.random.RandomState(seed).normal(0, 1, 1 << bits).astype(np.float32)
        core = SMTSearch(W, bits, None, lm)
        d = core.decode(build_instance(src, opts, 0.8, lm), 64, 200)
        rf = core.search.real_features_of(core.search.last_goal)
        assert rf[i_lm] == pytest.approx(lm.score(d.tokens, False, False), abs=1e-4)
        assert rf[i_lm] + rf[i_s] == pytest.approx(lm.score(d.tokens), abs=1e-4)
