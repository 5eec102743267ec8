"""Lexical transfer for syntactic SMT: phrase extraction, the phrase table, symmetrisation, corpus prep.

Hand-made alignments and trees only (no parsers); one small real eflomal run when eflomal exists.
"""
import itertools
import pathlib
import random

import pytest

from wo.smt.align import grow_diag_final_and, symmetrize
from wo.smt.options import Option
from wo.smt.phrases import PhrasePair, PhraseTable, extract, target_span_ok
from wo.smt.prep import EnglishTokenizer, Truecaser, detokenize, read_pairs, segment_zh

ROOT = pathlib.Path(__file__).resolve().parent.parent
TATOEBA = pathlib.Path("/work/shared/corpora/tatoeba-zh-en")

# 他 昨天 喝 了 热 茶 / he drank hot tea yesterday
ZH = ["他", "昨天", "喝", "了", "热", "茶"]
EN = ["he", "drank", "hot", "tea", "yesterday"]
EN_POS = ["PRP", "VBD", "JJ", "NN", "NN"]
EN_HEADS = [1, -1, 3, 1, 1]
LINKS = [(0, 0), (1, 4), (2, 1), (4, 2), (5, 3)]  # 了 unaligned


def spans(pairs):
    return sorted((p.src_lo, p.src_hi, p.tgt_lo, p.tgt_hi) for p in pairs)


def test_extract_exact_pairs():
    pairs = extract(len(ZH), EN, EN_POS, EN_HEADS, LINKS, max_len=5)
    assert spans(pairs) == sorted([
        (0, 1, 0, 1),                  # 他 / he
        (2, 3, 1, 2), (2, 4, 1, 2),    # 喝 (了) / drank: unaligned 了 extends the source
        (2, 6, 1, 4),                  # 喝 了 热 茶 / drank hot tea
        (1, 6, 1, 5),                  # 昨天 ... 茶 / drank hot tea yesterday
        (4, 5, 2, 3), (3, 5, 2, 3),    # (了) 热 / hot
        (4, 6, 2, 4), (3, 6, 2, 4),    # (了) 热 茶 / hot tea
        (5, 6, 3, 4),                  # 茶 / tea: a root may leave dependents outside
        (1, 2, 4, 5),                  # 昨天 / yesterday
    ])
    got = {(p.src_lo, p.src_hi, p.tgt_lo, p.tgt_hi): p for p in pairs}
    p = got[(2, 6, 1, 4)]
    assert p.words == ("drank", "hot", "tea") and p.pos == ("VBD", "JJ", "NN")
    assert p.heads == (-1, 2, 0) and p.root == 0
    assert got[(4, 6, 2, 4)].heads == (1, -1) and got[(4, 6, 2, 4)].root == 1
    # "he drank": cohesive (one root) but inconsistent: 昨天 inside [0, 2] links to "yesterday"
    assert target_span_ok(EN_HEADS, 0, 2) == 1
    assert not any(p.tgt_lo == 0 and p.tgt_hi == 2 for p in pairs)
    # "drank hot": consistent (喝 了 热) but two roots ("hot" hangs on "tea" outside)
    assert target_span_ok(EN_HEADS, 1, 3) is None
    assert not any(p.tgt_lo == 1 and p.tgt_hi == 3 for p in pairs)
    # the whole sentence: 6 source words > max_len 5; with max_len 6 it is there
    assert (0, 6, 0, 5) in spans(extract(len(ZH), EN, EN_POS, EN_HEADS, LINKS, max_len=6))


def test_extract_max_len():
    pairs = extract(len(ZH), EN, EN_POS, EN_HEADS, LINKS, max_len=2)
    assert spans(pairs) == sorted([(0, 1, 0, 1), (2, 3, 1, 2), (2, 4, 1, 2), (4, 5, 2, 3), (3, 5, 2, 3),
                                   (4, 6, 2, 4), (5, 6, 3, 4), (1, 2, 4, 5)])


def test_strict_cohesion_only_the_root_keeps_outside_dependents():
    # 狗 在 房子 / dog in the house: "dog in" is connected and single-rooted, but "in" keeps its
    # object "house" outside; the decoder only joins head words, so strict extraction drops it.
    en, pos, heads = ["dog", "in", "the", "house"], ["NN", "IN", "DT", "NN"], [-1, 0, 3, 1]
    links = [(0, 0), (1, 1), (2, 3)]
    strict = spans(extract(3, en, pos, heads, links))
    loose = spans(extract(3, en, pos, heads, links, strict=False))
    assert (0, 2, 0, 2) not in strict and (0, 2, 0, 2) in loose
    assert (2, 3, 2, 4) in strict and (1, 3, 1, 4) in strict and (0, 3, 0, 4) in strict
    assert (2, 3, 3, 4) in strict  # "house" alone: a root with "the" left outside


def test_non_projective_and_multi_root_spans_rejected():
    # a b c d with b <- d crossing c <- a: the whole span has one root but a crossing arc
    heads = [-1, 3, 0, 0]
    assert target_span_ok(heads, 0, 4) is None
    assert target_span_ok(heads, 0, 4, strict=False) is None
    assert target_span_ok(heads, 1, 4) is None       # c and d both hang outside: two roots
    assert target_span_ok(heads, 2, 4) is None       # two roots
    assert target_span_ok(heads, 2, 3) == 2
    pairs = extract(4, list("abcd"), ["X"] * 4, heads, [(i, i) for i in range(4)])
    assert (0, 4, 0, 4) not in spans(pairs)
    assert (0, 3, 0, 3) not in spans(pairs)          # b hangs on d outside: two roots
    # the projective variant of the same tree (b <- c) gives the whole sentence
    pairs = extract(4, list("abcd"), ["X"] * 4, [-1, 2, 0, 0], [(i, i) for i in range(4)])
    assert (0, 4, 0, 4) in spans(pairs)


def _reference_extract(src_len, heads, links, max_len):
    """Brute force from the definitions: every box, consistency, cohesion, no unaligned-edge rule
    needed since all source spans are enumerated (a source span is valid iff the links of the
    target span's words lie in it, its edges beyond the minimal span are unaligned, and it is
    consistent)."""
    n = len(heads)
    out = set()
    for lo, hi in itertools.combinations(range(n + 1), 2):
        if hi - lo > max_len or target_span_ok(heads, lo, hi) is None:
            continue
        for fl, fh in itertools.combinations(range(src_len + 1), 2):
            if fh - fl > max_len:
                continue
            inside = [(i, j) for i, j in links if fl <= i < fh and lo <= j < hi]
            cross = [(i, j) for i, j in links if (fl <= i < fh) != (lo <= j < hi)]
            if inside and not cross:
                out.add((fl, fh, lo, hi))
    return sorted(out)


def _random_projective_tree(rng, n):
    # random projective tree: recursively pick a head for each interval
    heads = [0] * n

    def build(lo, hi, parent):
        if lo >= hi:
            return
        r = rng.randrange(lo, hi)
        heads[r] = parent
        build(lo, r, r)
        build(r + 1, hi, r)

    build(0, n, -1)
    return heads


def test_extract_matches_brute_force():
    rng = random.Random(7)
    for _ in range(300):
        n, m = rng.randint(1, 7), rng.randint(1, 7)
        heads = _random_projective_tree(rng, n)
        links = sorted({(rng.randrange(m), rng.randrange(n)) for _ in range(rng.randint(0, 7))})
        got = spans(extract(m, ["w"] * n, ["X"] * n, heads, links, max_len=4))
        assert got == _reference_extract(m, heads, links, 4), (heads, links)


def _pp(words, pos=None, heads=None):
    n = len(words)
    pos = pos or ("NN",) * n
    heads = heads or tuple([-1] + [0] * (n - 1))
    return PhrasePair(0, 1, 0, n, tuple(words), tuple(pos), tuple(heads), heads.index(-1))


def _table():
    t = PhraseTable()
    for _ in range(2):
        t.add(["茶"], [_pp(["tea"])])
    t.add(["茶"], [_pp(["tea"], pos=("VB",))])          # minority analysis: NN is kept
    t.add(["茶"], [_pp(["the", "tea"], pos=("DT", "NN"), heads=(1, -1))])
    t.add(["茶"], [_pp(["teas"], pos=("NNS",))])
    t.add(["喝", "水"], [PhrasePair(0, 1, 0, 1, ("drink",), ("VB",), (-1,), 0),
                        PhrasePair(1, 2, 1, 2, ("water",), ("NN",), (-1,), 0)])
    t.add(["喝", "茶"], [PhrasePair(0, 2, 0, 2, ("drink", "tea"), ("VB", "NN"), (-1, 0), 0)])
    return t


def test_phrase_table_probabilities_and_lambda(tmp_path):
    t = _table()
    assert len(t) == 6 and t.n_sources == 4 and t.total_count() == 8
    opts = t.options(["茶"], lam=0.3)
    assert [(o.words, round(o.prob, 6), o.count) for o in opts] == [
        (("tea",), 0.6, 3), (("teas",), 0.2, 1), (("the", "tea"), 0.2, 1)]  # ties: by words
    assert opts[0].pos == ("NN",) and opts[2].heads == (1, -1) and opts[2].root == 1
    assert [o.words for o in t.options(["茶"], lam=0.5)] == [("tea",)]       # 0.2 < 0.5 * 0.6
    assert [o.words for o in t.options(["茶"], lam=0.3, max_per_span=2)] == [("tea",), ("teas",)]
    opts = t.options(["喝", "茶", "茶"], lam=0.1)
    assert [(o.src_lo, o.src_hi, o.words) for o in opts] == [
        (0, 1, ("drink",)), (0, 2, ("drink", "tea")),
        (1, 2, ("tea",)), (1, 2, ("teas",)), (1, 2, ("the", "tea")),
        (2, 3, ("tea",)), (2, 3, ("teas",)), (2, 3, ("the", "tea"))]
    assert opts[0] == Option(0, 1, ("drink",), ("VB",), (-1,), 0, 1.0, 1)
    assert opts[1] == Option(0, 2, ("drink", "tea"), ("VB", "NN"), (-1, 0), 0, 1.0, 1)
    assert t.options(["喝", "茶"], max_len=1) == [o for o in t.options(["喝", "茶"]) if o.src_hi - o.src_lo == 1]
    path = tmp_path / "phrases.tsv.gz"
    t.save(str(path))
    t2 = PhraseTable.load(str(path))
    assert t2.options(["喝", "茶", "茶"], lam=0.1) == opts
    t2.save(str(tmp_path / "again.tsv.gz"))
    assert (tmp_path / "again.tsv.gz").read_bytes() == path.read_bytes()


def test_grow_diag_final_and():
    fwd = [(0, 0), (1, 1), (2, 1), (4, 3)]
    rev = [(0, 0), (1, 1), (1, 2), (3, 3)]
    # grow-diag adds (2, 1) and (1, 2) (neighbours of (1, 1) with an unaligned word);
    # final-and adds (4, 3) (both words unaligned), not (3, 3) (target 3 is aligned by then)
    assert grow_diag_final_and(fwd, rev) == [(0, 0), (1, 1), (1, 2), (2, 1), (4, 3)]
    assert symmetrize(fwd, rev, "intersection") == [(0, 0), (1, 1)]
    assert symmetrize(fwd, rev, "grow-diag") == [(0, 0), (1, 1), (1, 2), (2, 1)]
    assert symmetrize(fwd, rev, "union") == [(0, 0), (1, 1), (1, 2), (2, 1), (3, 3), (4, 3)]
    # a neighbour is not added when both its words are already aligned
    assert grow_diag_final_and([(0, 0), (1, 1), (0, 1)], [(0, 0), (1, 1)]) == [(0, 0), (1, 1)]


def test_read_pairs_errors(tmp_path):
    head = b"en\tzh\tattribution\n"
    good = tmp_path / "good.tsv"
    good.write_bytes(head + "Hi.\t嗨。\tCC-BY x\n".encode() + b"Run.\t\xe8\xb7\x91\xe3\x80\x82\tCC\n\n")
    pairs = read_pairs(str(good))
    assert [(p.en, p.zh, p.attribution) for p in pairs] == [("Hi.", "嗨。", "CC-BY x"), ("Run.", "跑。", "CC")]
    cases = {
        "cols.tsv": (head + "Hi.\t嗨。\tx\n".encode() + b"Bad line\tonly two\n", ":3:", "3 tab-separated"),
        "utf8.tsv": (head + b"Hi.\t\xff\xfe\tx\n", ":2:", "UTF-8"),
        "empty_en.tsv": (head + " \t嗨。\tx\n".encode(), ":2:", "empty English"),
        "empty_zh.tsv": (head + b"Hi.\t\tx\n", ":2:", "empty Chinese"),
        "header.tsv": (b"zh\ten\tattribution\n", ":1:", "header"),
    }
    for name, (data, where, what) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(ValueError) as e:
            read_pairs(str(path))
        assert str(path) + where in str(e.value) and what in str(e.value), str(e.value)


def test_segment_zh():
    assert segment_zh("他不可能生病了。") == ["他", "不", "可能", "生病", "了", "。"]
    # stray spaces of raw text are not segmentation; Latin words stay whole
    assert segment_zh("他是一个 DJ 。") == ["他", "是", "一个", "DJ", "。"]
    assert segment_zh("你喜欢吗 ?") == ["你", "喜欢", "吗", "?"]
    # already segmented input is split on whitespace, even where jieba would differ
    assert segment_zh("他 不可能 生病 了 。") == ["他", "不可能", "生病", "了", "。"]
    assert segment_zh("他不可能 生病了。", presegmented=True) == ["他不可能", "生病了。"]
    assert segment_zh("  ") == []


def test_truecase_round_trip(tmp_path):
    tok = EnglishTokenizer()
    raw = ["The dog barks.", "I saw the dog.", "Tom saw the dog.", "The cat saw Tom.",
           "\"The cat is here,\" said Tom.", "She doesn't like the US."]
    sents = [tok(s) for s in raw]
    assert sents[-1] == ["She", "does", "n't", "like", "the", "US", "."]  # PTB clitics, not "doesn 't"
    assert tok("I can't, won't, Don't at 5 o'clock.") == [
        "I", "ca", "n't", ",", "wo", "n't", ",", "Do", "n't", "at", "5", "o'clock", "."]
    tc = Truecaser().train(sents)
    path = tmp_path / "truecase.json.gz"
    tc.save(str(path))
    tc2 = Truecaser.load(str(path))
    assert tc2.casing == tc.casing and tc2._mt.model["best"] == tc._mt.model["best"]
    truecased = EnglishTokenizer(tc2)
    assert truecased("The dog barks.") == ["the", "dog", "barks", "."]
    assert truecased("Tom saw the cat.") == ["Tom", "saw", "the", "cat", "."]
    assert truecased("\"The dog,\" said Tom.") == ['"', "the", "dog", ",", '"', "said", "Tom", "."]
    assert truecased("Unknown Word here.") == ["Unknown", "Word", "here", "."]
    for s in ["The dog barks.", "Tom saw the cat.", "She doesn't like the US.", "\"The dog,\" said Tom.",
              "I can't, won't, don't at 5 o'clock.", "It's Tom's."]:
        assert detokenize(truecased(s)) == s
    assert detokenize(["3", "dogs", "."]) == "3 dogs."


@pytest.mark.skipif(not (TATOEBA / "train.tsv").exists(), reason="Tatoeba corpus not present")
def test_eflomal_real_slice_is_seeded():
    eflomal = pytest.importorskip("eflomal")  # noqa: F841
    from wo.smt.align import align, seed_shim_available

    pairs = read_pairs(str(TATOEBA / "train.tsv"))[:2000]
    tok = EnglishTokenizer()
    zh = [segment_zh(p.zh) for p in pairs]
    en = [tok(p.en) for p in pairs]
    links = align(zh, en, seed=1)
    assert len(links) == 2000
    assert all(0 <= i < len(z) and 0 <= j < len(e) for z, e, ls in zip(zh, en, links) for i, j in ls)
    assert sum(len(ls) for ls in links) > 0.8 * sum(len(e) for e in en)
    # 他不可能生病了。 / He can't be ill.
    k = next(k for k, p in enumerate(pairs) if p.zh == "他不可能生病了。")
    assert (0, 0) in links[k] and (3, en[k].index("ill")) in links[k]
    if seed_shim_available():
        assert align(zh, en, seed=1) == links
