"""The trie LM format (wo.lm.trie, wo._fast._lmtrie) on real data: the exact trie gives the
probing tables' log10 probability and state for every n-gram of an LM trained on EWT text, the
8-bit quantized trie stays close on EWT dev sentences, the decoders give the same output with
either file, and a damaged file is one LMError naming it."""
import os

import numpy as np
import pytest

from tests.conftest import EWT, conllu_blocks, write_blocks
from wo.lm import LMError, LanguageModel, save_tables, train
from wo.lm.estimation import BOS_ID
from wo.lm.trie import encode, file_format, make_bins


@pytest.fixture(scope="module")
def lms(tmp_path_factory, ewt_train):
    """An order-4 LM of 3000 EWT train sentences written as probing, trie and trie-q8 files, and
    the two tries with compressed pointers."""
    d = tmp_path_factory.mktemp("trie")
    tr = d / "train.txt"
    tr.write_text("\n".join(" ".join(s.forms) for s in ewt_train[:3000]) + "\n", encoding="utf-8")
    t = train([str(tr)], 4, log=lambda m: None)
    paths = {}
    for fmt in ("probing", "trie", "trie-q8", "trie-a", "trie-q8-a"):
        paths[fmt] = str(d / f"lm.{fmt}.wolm")
        save_tables(t, paths[fmt], fmt)
    return t, paths


@pytest.fixture(scope="module")
def dev_lines(ewt_dev):
    return [" ".join(s.forms) for s in ewt_dev[:600]]


def _last_word_scores(lm, rows):
    """log10 p(w_n | w_1 .. w_n-1) of every n-gram row (a leading <s> is the sentence start)."""
    out = np.empty(rows.shape[0])
    for i, r in enumerate(rows):
        bos = r[0] == BOS_ID and r.shape[0] > 1
        ids = np.ascontiguousarray(r[1:] if bos else r, dtype=np.int32)
        out[i] = lm.core.word_scores(ids, bos, False)[-1]
    return out


def test_the_file_decides_the_format_and_the_trie_is_smaller(lms):
    t, paths = lms
    assert [file_format(p) for p in paths.values()] == list(paths)
    got = {f: LanguageModel.load(p) for f, p in paths.items()}
    assert {f: m.format for f, m in got.items()} == {f: f for f in paths}
    assert all(m.order == 4 and m.vocab == t.vocab for m in got.values())
    size = {f: os.path.getsize(p) for f, p in paths.items()}
    assert size["trie-q8"] < 0.4 * size["probing"] and size["trie"] < 0.75 * size["probing"], size
    assert size["trie-q8-a"] < 0.9 * size["trie-q8"] and size["trie-a"] < size["trie"], size


def test_compressed_pointers_give_the_same_states_and_scores(lms, dev_lines):
    _, paths = lms
    for plain, arr in (("trie", "trie-a"), ("trie-q8", "trie-q8-a")):
        a, b = LanguageModel.load(paths[plain]), LanguageModel.load(paths[arr])
        assert [o.get("hbits", 0) for o in b.header["trie"]["orders"]][:2] != [0, 0]
        _same_states_and_scores(a, b, dev_lines)


def test_bhiksha_split_keeps_every_pointer():
    from wo.lm.trie import MAX_HIGH_BITS, bhiksha_split

    rng = np.random.default_rng(3)
    ptrs = np.concatenate([[0], np.cumsum(rng.integers(0, 40, 50_000))]).astype(np.uint64)
    ptrs[20_000:] += np.uint64(5_000)              # one record with many extensions
    width = int(ptrs[-1]).bit_length()
    h, low, off = bhiksha_split(ptrs, width)
    assert 0 < h <= MAX_HIGH_BITS and off.shape == ((1 << h) + 1,) and off[0] == 0 and off[-1] == ptrs.size
    j = np.arange(ptrs.size)
    high = np.searchsorted(off, j, side="right") - 1
    assert np.array_equal((high.astype(np.uint64) << np.uint64(width - h)) | low, ptrs)
    assert bhiksha_split(np.arange(10, dtype=np.uint64), 4)[0] == 0        # too few records to save bits
    with pytest.raises(ValueError):
        bhiksha_split(np.array([0, 5, 3], dtype=np.uint64), 3)


def test_exact_trie_gives_the_probing_log10_probability_of_every_ngram(lms):
    t, paths = lms
    probing, trie = LanguageModel.load(paths["probing"]), LanguageModel.load(paths["trie"])
    assert trie.header["trie"]["dropped"] == [0, 0, 0]      # Kneser-Ney keeps every suffix
    for n in range(1, t.order + 1):
        rows = t.ngrams[n - 1]
        a, b = _last_word_scores(probing, rows), _last_word_scores(trie, rows)
        assert np.array_equal(a, b), n
        if n > 1:          # an n-gram of the model is found, not backed off: its own probability
            np.testing.assert_array_equal(b.astype(np.float32), t.prob[n - 1])


def _same_states_and_scores(a, b, dev_lines):
    """Two LMs walk the same states on 200 dev lines and score all of them identically."""
    for line in dev_lines[:200]:
        ids = a.word_ids(line.split())
        assert a.core.state_walk(ids) == b.core.state_walk(ids)
    x, cx = a.score_lines(dev_lines)
    y, cy = b.score_lines(dev_lines)
    assert np.array_equal(x, y) and cx == cy


def test_exact_trie_walks_the_same_states_and_scores_text_identically(lms, dev_lines):
    _, paths = lms
    _same_states_and_scores(LanguageModel.load(paths["probing"]), LanguageModel.load(paths["trie"]), dev_lines)


def test_quantized_trie_scores_dev_sentences_within_a_small_tolerance(lms, dev_lines):
    _, paths = lms
    probing, q8 = LanguageModel.load(paths["probing"]), LanguageModel.load(paths["trie-q8"])
    a, ca = probing.score_lines(dev_lines)
    b, cb = q8.score_lines(dev_lines)
    tokens = np.array([len(x.split()) + 1 for x in dev_lines])
    # 8-bit bins: at most 0.15 log10 per token on any sentence, 0.01 on average
    assert np.all(np.abs(a - b) <= 0.15 * tokens), np.max(np.abs(a - b) / tokens)
    assert np.abs(a - b).sum() / tokens.sum() < 0.01, np.abs(a - b).sum() / tokens.sum()
    assert abs(cb.perplexity / ca.perplexity - 1) < 0.02, (ca.perplexity, cb.perplexity)


def test_bins_have_equal_population_and_mean_centres(lms):
    t, _ = lms
    p = t.prob[2].astype(np.float64)
    c = make_bins(p, 256)
    assert np.all(np.diff(c) >= 0)
    s = np.sort(p)
    k = len(s) // 256
    assert abs(c[0] - s[:k].mean()) < 1e-5 and abs(c[-1] - s[-(len(s) - 255 * len(s) // 256):].mean()) < 1e-5
    codes = encode(p, c)
    err = np.abs(c[codes] - p)
    assert np.all(err <= np.abs(c[np.clip(codes.astype(np.int64) + 1, 0, 255)] - p) + 1e-7)
    assert err.mean() < 0.01


def test_decoders_give_the_same_output_with_the_exact_trie(lms, tmp_path, dev_lines):
    """`wo linearize` (dependency search with LM features) and `wo idl realize` (LM search with
    prefetching), and the bag automaton of GYRO: identical with the probing or the trie file."""
    from wo.cli import main

    _, paths = lms
    conllu = write_blocks(tmp_path / "train.conllu", conllu_blocks(str(EWT / "en_ewt-ud-train.conllu.xz"))[:60])
    model = tmp_path / "m.wo"
    assert main(["dep", "train", "--train", str(conllu), "--epochs", "1", "--hash-bits", "16",
                 "--model", str(model), "--lm", paths["probing"]]) == 0
    bags = tmp_path / "bags.txt"
    bags.write_text("\n".join([x for x in dev_lines if 4 <= len(x.split()) <= 9][:8]) + "\n", encoding="utf-8")
    out = {}
    for f in ("probing", "trie"):
        o = tmp_path / f"lin.{f}.txt"
        assert main(["linearize", "--model", str(model), "--lm", paths[f], "--input", str(bags),
                     "--output", str(o)]) == 0
        i = tmp_path / f"idl.{f}.txt"
        assert main(["idl", "realize", "--lm", paths[f], "--input-format", "bag", "--input", str(bags),
                     "--output", str(i)]) == 0
        out[f] = (o.read_text(encoding="utf-8"), i.read_text(encoding="utf-8"))
    assert out["probing"] == out["trie"] and out["trie"][0].count("\n") == 8
    probing, trie = LanguageModel.load(paths["probing"]), LanguageModel.load(paths["trie"])
    ids = np.unique(probing.word_ids("the man saw a dog in the park .".split())).astype(np.int32)
    for a, b in zip(probing.core.bag_automaton(ids, True), trie.core.bag_automaton(ids, True)):
        assert np.array_equal(a, b)


def test_damaged_trie_files_are_one_lm_error_naming_the_file(lms, tmp_path, dev_lines):
    import json
    import struct

    _, paths = lms
    data = open(paths["trie-q8"], "rb").read()
    hlen = struct.unpack("<I", data[12:16])[0]
    header = json.loads(data[16:16 + hlen])
    cut = tmp_path / "cut.wolm"
    cut.write_bytes(data[:len(data) // 2])
    with pytest.raises(LMError, match="cut.wolm.*truncated"):
        LanguageModel.load(str(cut))
    for verify in (True, False):          # pointers of the unigrams overwritten
        bad = bytearray(data)
        off, n = header["sections"]["uptr"]
        bad[off + n // 2:off + n // 2 + 64] = b"\xff" * 64
        p = tmp_path / "bad.wolm"
        p.write_bytes(bytes(bad))
        with pytest.raises(LMError, match="bad.wolm.*(checksum|damaged)"):
            LanguageModel.load(str(p), verify=verify)
    rng = np.random.default_rng(7)      # random bytes in the records: an error or a usable model, never a crash
    off, n = header["sections"]["order2"]
    for trial in range(20):
        bad = bytearray(data)
        for j in rng.integers(off, off + n, 8):
            bad[j] = int(rng.integers(0, 256))
        p = tmp_path / f"fuzz{trial}.wolm"
        p.write_bytes(bytes(bad))
        try:
            m = LanguageModel.load(str(p), verify=False)
        except LMError as exc:
            assert p.name in str(exc)
        else:
            assert np.all(np.isfinite(m.score_lines(dev_lines[:50])[0]))
    hdr = dict(header)
    del hdr["trie"]
    hb = json.dumps(hdr).encode()
    p = tmp_path / "nohdr.wolm"
    p.write_bytes(data[:12] + struct.pack("<I", len(hb)) + hb + data[16 + hlen:])
    with pytest.raises(LMError, match="nohdr.wolm"):
        LanguageModel.load(str(p), verify=False)

    def edit(name, change):        # a header of the same length that lies about the arrays
        h = json.loads(json.dumps(header))
        change(h)
        hb = json.dumps(h, separators=(",", ":")).encode()
        p = tmp_path / f"{name}.wolm"
        p.write_bytes(data[:16] + hb + b" " * (hlen - len(hb)) + data[16 + hlen:])
        with pytest.raises(LMError, match=f"{name}.wolm.*damaged"):
            LanguageModel.load(str(p), verify=False)

    edit("negative", lambda h: h["trie"]["orders"][0].update(count=-5))
    edit("huge", lambda h: h["trie"]["orders"][0].update(count=10 ** 30))
    edit("width", lambda h: h["trie"]["orders"][1].update(wbits=3))
    edit("orders", lambda h: h["trie"]["orders"].pop())
    edit("quant", lambda h: h.update(quant_bits=12))

    data = open(paths["trie-q8-a"], "rb").read()    # compressed pointers: offsets out of order
    hlen = struct.unpack("<I", data[12:16])[0]
    header = json.loads(data[16:16 + hlen])
    bad = bytearray(data)
    off, n = header["sections"]["offsets2"]
    bad[off + 4 * 5:off + 4 * 6] = b"\xff\xff\xff\x7f"
    p = tmp_path / "offsets.wolm"
    p.write_bytes(bytes(bad))
    with pytest.raises(LMError, match="offsets.wolm.*damaged"):
        LanguageModel.load(str(p), verify=False)


@pytest.mark.slow
def test_cli_writes_every_format_and_refuses_a_binary_input(tmp_path, dev_lines, capsys, ewt_train):
    from wo.cli import main

    tr = tmp_path / "t.txt"
    tr.write_text("\n".join(" ".join(s.forms) for s in ewt_train[:800]) + "\n", encoding="utf-8")
    arpa, q8, trie = str(tmp_path / "a.arpa"), str(tmp_path / "a.q8.wolm"), str(tmp_path / "a.trie.wolm")
    assert main(["lm", "train", "--text", str(tr), "--order", "3", "--out", arpa, "--quiet"]) == 0
    assert main(["lm", "train", "--text", str(tr), "--order", "3", "--out", q8, "--format", "trie-q8", "--quiet"]) == 0
    assert main(["lm", "convert", arpa, trie, "--format", "trie"]) == 0
    assert main(["lm", "convert", arpa, str(tmp_path / "a.q8a.wolm"), "--format", "trie-q8-a"]) == 0
    assert (file_format(q8), file_format(trie)) == ("trie-q8", "trie")
    assert file_format(str(tmp_path / "a.q8a.wolm")) == "trie-q8-a"
    dev = tmp_path / "dev.txt"
    dev.write_text("\n".join(dev_lines[:100]) + "\n", encoding="utf-8")
    capsys.readouterr()
    for lm in (arpa, trie):
        assert main(["lm", "score", "--lm", lm, "--input", str(dev), "--json"]) == 0
    a, b = capsys.readouterr().out.splitlines()
    assert a == b                                   # ARPA read into probing tables = the exact trie
    assert main(["lm", "convert", q8, str(tmp_path / "x.wolm")]) == 2
    assert "a.q8.wolm" in capsys.readouterr().err
    assert main(["lm", "train", "--text", str(tr), "--out", str(tmp_path / "x.arpa"), "--format", "trie"]) == 2


@pytest.mark.parametrize("fmt", ["probing", "trie-q8-a"])
def test_sentence_totals_and_next_word_scores_agree_with_word_scores(lms, dev_lines, fmt):
    """The realiser's two queries (a domain order's total, a hypothesis' candidates after its
    history) give what word_scores gives, on EWT dev sentences, for both table layouts."""
    lm = LanguageModel.load(lms[1][fmt])
    for line in dev_lines[:200]:
        ids = lm.word_ids(line.split())
        for bos, eos in ((True, True), (False, False), (True, False)):
            assert lm.core.total(ids, bos, eos) == pytest.approx(float(lm.core.word_scores(ids, bos, eos).sum()),
                                                                  abs=1e-9)
        if len(ids) > 3:
            hist, words = ids[:3], ids[3:]
            want = [lm.core.word_scores(np.append(hist, w).astype(np.int32), False, False)[-1] for w in words]
            assert lm.core.next_scores(hist, words, False).tolist() == want
    assert lm.core.next_scores(np.zeros(0, np.int32), np.zeros(0, np.int32), True).shape == (0,)
