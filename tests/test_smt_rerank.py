"""The SMT n-best reranker: word lexicons (alignment-link lexical weights and EM model 1),
their IBM-1 scores, the reranking features of real n-best lists of the shipped model, and the
PRO tuner."""
import gzip
import json
import math
import os

import numpy as np
import pytest

from wo.eval.mbr import linear_bleu_gains
from wo.smt.lexicon import FLOOR, NULL, Lexicon
from wo.smt.rerank import FEATURES, pro, weights_vector

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODEL = os.path.join(ROOT, "corpora", "models", "wo-tatoeba-smt.wo")
DEV_TSV = os.path.join(ROOT, "corpora", "tatoeba-zh-en", "dev.tsv.xz")


def test_link_lexicon_relative_frequencies():
    """w(e|f) and w(f|e) are link counts over the source and target word's totals, NULL for
    unaligned words (Koehn et al. 2003)."""
    lex = Lexicon.from_links([
        (["我", "爱", "猫"], ["i", "love", "cats"], [(0, 0), (1, 1), (2, 2)]),
        (["我", "爱", "狗"], ["i", "love", "the", "dogs"], [(0, 0), (1, 1), (2, 3)]),
        (["我", "走", "了"], ["i", "left"], [(0, 0), (1, 1)]),
    ])
    assert lex.e_given_f[("i", "我")] == 1.0
    assert lex.e_given_f[("love", "爱")] == 1.0
    assert lex.f_given_e[("left", "走")] == 1.0
    assert lex.e_given_f[(NULL, "了")] == 1.0            # unaligned source word
    assert lex.e_given_f[("the", NULL)] == 1.0           # unaligned target word
    assert lex.f_given_e[("the", NULL)] == 1.0


def test_model1_em_learns_the_consistent_pairs():
    """EM on pairs where each word co-occurs with its translation in every sentence and with
    others only sometimes puts the most probability on the consistent pairs."""
    pairs = [("a b".split(), "x y".split()), ("a c".split(), "x z".split()),
             ("b c".split(), "y z".split()), ("a".split(), "x".split())]
    m1 = Lexicon.model1(pairs, iterations=10, prune=0.0)
    for e, f in (("x", "a"), ("y", "b"), ("z", "c")):
        assert m1.e_given_f[(e, f)] == max(v for (e2, f2), v in m1.e_given_f.items() if f2 == f)
        assert m1.f_given_e[(e, f)] == max(v for (e2, f2), v in m1.f_given_e.items() if e2 == e)
    for f in ("a", "b", "c", NULL):      # each t(.|f) is a distribution
        assert sum(v for (e, f2), v in m1.e_given_f.items() if f2 == f) == pytest.approx(1.0)


def test_ibm1_scores_match_the_formula():
    """:meth:`Lexicon.ibm1_many` over an n-best list equals IBM model 1 written out."""
    lex = Lexicon.load(os.path.join(ROOT, "corpora", "models", "smt", "model1.tsv.gz"))
    src = "我 想 吃 苹果 。".split()
    tgts = ["i want to eat apples .".split(), "apples want i".split(), ["qqq"], []]
    got = lex.ibm1_many(src, tgts)
    for t, (a, b) in zip(tgts, got):
        fs, es = src + [NULL], t + [NULL]
        a_ref = sum(math.log10(max(FLOOR, sum(lex.e_given_f.get((e, f), 0.0) for f in fs) / len(fs))) for e in t)
        b_ref = sum(math.log10(max(FLOOR, sum(lex.f_given_e.get((e, f), 0.0) for e in es) / len(es))) for f in src)
        assert (a, b) == pytest.approx((a_ref, b_ref), abs=1e-9)
        assert lex.ibm1(src, t) == pytest.approx((a_ref, b_ref), abs=1e-9)
    # the translation explains the source better than a partial one or junk, and its words
    # are likelier per word than an unknown one
    assert got[0, 1] > got[1, 1] > got[2, 1]
    assert got[0, 0] / 6 > got[2, 0]


def test_lexicon_file_round_trip_and_errors(tmp_path):
    lex = Lexicon.model1([("a b".split(), "x y".split()), ("a".split(), "x".split())], prune=0.0)
    p = tmp_path / "m1.tsv.gz"
    lex.save(str(p))
    back = Lexicon.load(str(p))
    assert back.kind == "model1"
    assert set(back.e_given_f) == set(lex.e_given_f)
    for k, v in lex.e_given_f.items():
        assert back.e_given_f[k] == pytest.approx(v, rel=1e-5)
    bad = tmp_path / "bad.tsv.gz"
    bad.write_bytes(gzip.compress(b"hello\n"))
    with pytest.raises(ValueError, match="not a wo lexicon"):
        Lexicon.load(str(bad))
    bad.write_bytes(gzip.compress(b"#wo-lexicon\t2\tlinks\nx\ta\t0.5\t0.5\nx\ta\tzero\t1\n"))
    with pytest.raises(ValueError, match=r"bad.tsv.gz:3"):
        Lexicon.load(str(bad))


@pytest.mark.slow
def test_features_of_real_nbest_lists():
    """The shipped model's n-best lists on Tatoeba dev: 12 features per candidate, the
    lexicon and MBR columns as their own functions compute them, and the reranked choice is
    the argmax of the weighted features."""
    import lzma

    from wo.smt.rerank import features
    from wo.smt.translate import Translator

    tr = Translator(MODEL)
    lines = lzma.open(DEV_TSV, "rt", encoding="utf-8").read().splitlines()[1:9]
    from wo.smt.prep import segment_zh
    from wo.smt.synth import Source, build_instance

    sents = [segment_zh(x.split("\t")[1]) for x in lines]
    parses = tr.parser.parse(sents)
    n_multi = 0
    for s, p in zip(sents, parses):
        src = Source(list(s), list(p.pos), list(p.heads), list(p.labels))
        o = tr.opts
        inst = build_instance(src, tr.table.options(src.tokens, max_len=o["max_len"], lam=o["lam"]), o["beta"], tr.lm)
        tr.core.decode(inst, max(1, int(o["beam_factor"] * inst.n)), o["max_pops"], o["complete_beam"])
        cands = tr.core.candidates(inst, tr.nbest)
        f = features(cands, src.tokens, inst.options, tr.lm, tr.lexicon, tr.model1, tr.lmbr_scale)
        assert f.shape == (len(cands), len(FEATURES)) and np.isfinite(f).all()
        toks = [c.tokens for c in cands]
        assert np.allclose(f[:, FEATURES.index("lmbr")], linear_bleu_gains(toks, f[:, 0], tr.lmbr_scale))
        assert np.allclose(f[:, 10:12], tr.model1.ibm1_many(src.tokens, toks))
        assert np.allclose(f[:, 2], [tr.lm.score(t) for t in toks])
        assert (f[:, FEATURES.index("words")] == [len(t) for t in toks]).all()
        n_multi += len(cands) > 1
        best = cands[int(np.argmax(f @ tr.rerank))]
        assert tr.translate_parsed(src).tokens == best.tokens
    assert n_multi >= 6


def test_pro_recovers_a_linear_preference():
    """Sentence BLEU that grows with feature 1 and falls with feature 2: PRO weights them
    positive and negative, and ignores a noise feature."""
    rng = np.random.default_rng(0)
    nbest, sb = [], []
    for _ in range(200):
        f = rng.normal(size=(30, 4))
        nbest.append(f)
        sb.append(20 + 8 * f[:, 1] - 5 * f[:, 2] + rng.normal(scale=0.5, size=30))
    w = pro(nbest, sb)
    assert abs(w[0]) == pytest.approx(1.0)
    assert w[1] > 0 > w[2] and abs(w[1]) > 5 * abs(w[3]) and abs(w[2]) > 3 * abs(w[3])
    with pytest.raises(ValueError):
        pro([np.zeros((3, 2))], [np.full(3, 10.0)])
    assert weights_vector({"lmbr": 2.0})[FEATURES.index("lmbr")] == 2.0
