"""The n-gram LM on real data: modified Kneser-Ney sums to one, ARPA and binary round trips,
agreement with the kenlm module, state-by-state scoring, corrupt files, Dask = local counting."""
import re
import struct

import numpy as np
import pytest

from tests.conftest import EWT
from wo.lm import LMError, LanguageModel, estimate, read_arpa, save_tables, train, write_arpa
from wo.lm.estimation import BOS_ID, count
from wo.lm.files import write_binary


@pytest.fixture(scope="module")
def ewt_text(tmp_path_factory, ewt_train_text, ewt_dev):
    """(EWT train forms, EWT dev[:400] forms): text files, one sentence per line."""
    dv = tmp_path_factory.mktemp("lmtext") / "dev.txt"
    dv.write_text("\n".join(" ".join(s.forms) for s in ewt_dev[:400]) + "\n", encoding="utf-8")
    return ewt_train_text, str(dv)


@pytest.fixture(scope="module")
def ewt_lm(ewt_text, tmp_path_factory):
    t = train([ewt_text[0]], 4, log=lambda m: None)
    d = tmp_path_factory.mktemp("lm")
    arpa, binary = str(d / "ewt.arpa"), str(d / "ewt.wolm")
    save_tables(t, arpa)
    save_tables(t, binary)
    return t, arpa, binary


def _toy(tmp_path):
    p = tmp_path / "toy.txt"
    p.write_text("the cat sat on the mat\nthe dog sat on the cat\na cat and a dog\n"
                 "the mat was red\nthe dog ate the red mat\nthe cat\n", encoding="utf-8")
    return str(p)


@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_every_context_distribution_sums_to_one(tmp_path, order):
    t = train([_toy(tmp_path)], order, log=lambda m: None)
    lm = LanguageModel.from_tables(t)
    words = [w for i, w in enumerate(lm.vocab) if i != BOS_ID]
    contexts = {()}
    for n in range(1, order):
        for row in t.ngrams[n - 1]:
            if n == 1 and row[0] == BOS_ID:
                contexts.add(("<s>",))
            elif row[0] == BOS_ID:
                contexts.add(tuple(lm.vocab[w] for w in row))
            else:
                contexts.add(tuple(lm.vocab[w] for w in row))
    assert len(contexts) > 10 or order == 1
    for ctx in contexts:
        bos = bool(ctx) and ctx[0] == "<s>"
        hist = list(ctx[1:] if bos else ctx)
        total = 0.0
        for w in words:
            if w == "</s>":
                s = lm.word_scores(hist, bos=bos, eos=True)[-1]
            else:
                s = lm.word_scores(hist + [w], bos=bos, eos=False)[-1]
            total += 10 ** s
        assert abs(total - 1.0) < 1e-4, (ctx, total)


def test_pruned_model_still_sums_to_one(tmp_path):
    vocab, counts, _ = count([_toy(tmp_path)], 3)
    full = estimate(vocab, counts)
    pruned = estimate(vocab, counts, prune=[1, 1])
    assert sum(pruned.counts()) < sum(full.counts())
    lm = LanguageModel.from_tables(pruned)
    for hist in (["the"], ["the", "cat"], ["a"], ["sat", "on"]):
        tot = sum(10 ** lm.word_scores(hist + [w], eos=False)[-1] for w in lm.vocab if w not in ("<s>", "</s>"))
        tot += 10 ** lm.word_scores(hist, eos=True)[-1]
        assert abs(tot - 1.0) < 1e-4


@pytest.mark.slow
def test_arpa_round_trip(ewt_lm, tmp_path):
    t, arpa, _ = ewt_lm
    back = read_arpa(arpa)
    assert back.counts() == t.counts()
    for n in range(t.order):
        a = {tuple(t.vocab[w] for w in r): (p, b) for r, p, b in zip(t.ngrams[n], t.prob[n], t.backoff[n])}
        c = {tuple(back.vocab[w] for w in r): (p, b) for r, p, b in zip(back.ngrams[n], back.prob[n], back.backoff[n])}
        assert a.keys() == c.keys()
        for k in list(a)[:5000]:
            assert abs(a[k][0] - c[k][0]) < 1e-5 and abs(a[k][1] - c[k][1]) < 1e-5
    again = tmp_path / "again.arpa.gz"
    write_arpa(back, str(again))
    assert read_arpa(str(again)).counts() == t.counts()


@pytest.mark.slow
def test_binary_and_arpa_score_the_same_and_state_walk_equals_sentence_score(ewt_lm, ewt_text):
    _, arpa, binary = ewt_lm
    a, b = LanguageModel.load(arpa), LanguageModel.load(binary)
    dev = open(ewt_text[1], encoding="utf-8").read().splitlines()
    pa, ca = a.score_lines(dev)
    pb, cb = b.score_lines(dev)
    assert np.allclose(pa, pb, atol=1e-4) and ca.oov == cb.oov > 0
    for line in dev[:200]:
        toks = line.split()
        probs, lens = b.core.state_walk(b.word_ids(toks))
        whole = b.score(toks, eos=False)
        assert abs(sum(probs) - whole) < 1e-3
        assert all(0 <= n <= b.order - 1 for n in lens)
        assert np.allclose(b.word_scores(toks, eos=False), probs, atol=1e-6)
    assert 50 < cb.perplexity < 2000 and cb.perplexity_excluding_oov < cb.perplexity


@pytest.mark.parametrize("fmt", ["probing", "trie", "trie-q8"])
def test_states_end_at_ngrams_that_extend_no_further(ewt_lm, ewt_text, tmp_path, monkeypatch, fmt):
    """Backoffs of -0.0 mark n-grams that are the context of no longer n-gram (KenLM's right
    state minimisation): the states are shorter and every log10 probability is the same as
    with a file written without the marks (as files were before)."""
    import wo.lm.files as files

    t, _, _ = ewt_lm
    marked = files.extension_backoffs(t)
    assert all(int(((b == 0) & np.signbit(b)).sum()) > 0 for b in marked[:-1])
    assert not np.signbit(marked[-1]).any()
    new = str(tmp_path / "new.wolm")
    save_tables(t, new, fmt)
    monkeypatch.setattr(files, "extension_backoffs", lambda tt: [np.array(b, dtype=np.float32) for b in tt.backoff])
    old = str(tmp_path / "old.wolm")
    save_tables(t, old, fmt)
    a, b = LanguageModel.load(old), LanguageModel.load(new)
    dev = open(ewt_text[1], encoding="utf-8").read().splitlines()[:300]
    assert np.allclose(a.score_lines(dev)[0], b.score_lines(dev)[0], atol=1e-5)
    la = lb = 0
    for line in dev:
        ids = b.word_ids(line.split())
        la += sum(a.core.state_walk(ids)[1])
        lb += sum(b.core.state_walk(ids)[1])
    assert lb < 0.97 * la, (lb, la)


def test_agreement_with_kenlm_on_held_out_text(ewt_lm, ewt_text):
    kenlm = pytest.importorskip("kenlm")
    _, arpa, binary = ewt_lm
    ref = kenlm.Model(arpa)
    ours = LanguageModel.load(binary)
    n = 0
    for line in open(ewt_text[1], encoding="utf-8").read().splitlines():
        theirs = [s[0] for s in ref.full_scores(line, bos=True, eos=True)]
        mine = ours.word_scores(line.split())
        assert len(theirs) == len(mine)
        assert np.allclose(theirs, mine, atol=1e-4), line
        n += len(mine)
    assert n > 5000


def test_corrupt_truncated_wrong_version_and_foreign_files(ewt_lm, tmp_path):
    _, _, binary = ewt_lm
    data = open(binary, "rb").read()
    trunc = tmp_path / "trunc.wolm"
    trunc.write_bytes(data[: len(data) // 2])
    with pytest.raises(LMError, match="truncated"):
        LanguageModel.load(str(trunc))
    flip = bytearray(data)
    flip[-100] ^= 0xFF
    bad = tmp_path / "flip.wolm"
    bad.write_bytes(bytes(flip))
    with pytest.raises(LMError, match="checksum"):
        LanguageModel.load(str(bad))
    ver = bytearray(data)
    ver[8:12] = struct.pack("<I", 99)
    v = tmp_path / "ver.wolm"
    v.write_bytes(bytes(ver))
    with pytest.raises(LMError, match="version 99"):
        LanguageModel.load(str(v))
    other = tmp_path / "model.wo"
    other.write_bytes(b"WOMODEL\0" + b"\0" * 100)
    with pytest.raises(LMError):
        LanguageModel.load(str(other))


def test_bad_training_lines_are_counted_not_fatal(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"the cat sat\n\nthe dog \xff\xfe ran\n" + b"w " * 2000 + b"\nthe end\n")
    msgs = []
    t = train([str(p)], 2, log=msgs.append)
    assert t.meta["skipped_lines"] == {"empty": 1, "overlong": 1, "invalid_utf8": 1}
    assert t.meta["sentences"] == 2
    assert any(f"{p}:3: invalid utf8" in m for m in msgs)


def test_reduce_by_first_word_ranges_equals_one_sort(ewt_text, monkeypatch):
    """A large order is reduced one range of first words at a time (less memory); the counts
    are those of one sort over every shard's rows."""
    import wo.lm.estimation as est

    lines = [ln for ln in open(ewt_text[0], encoding="utf-8").read().splitlines()[:3000] if ln.strip()]
    ids = {w: i + 3 for i, w in enumerate(sorted({t for ln in lines for t in ln.split()}))}
    parts = [est.count_shard(lines[i:i + 400], ids, 3) for i in range(0, len(lines), 400)]
    for n in (1, 2, 3):
        col = [p[n - 1] for p in parts]
        one = est._unique_rows(np.concatenate([c[0] for c in col]), np.concatenate([c[1] for c in col]))
        monkeypatch.setattr(est, "MERGE_SPLIT_ROWS", 100)
        monkeypatch.setattr(est, "MERGE_RANGES", 7)
        got = est._merge(list(col), n)
        assert got[0].shape[0] > 1000 and got[0].dtype == np.int32 and got[1].dtype == np.int64
        assert np.array_equal(got[0], one[0]) and np.array_equal(got[1], one[1])
        monkeypatch.undo()


@pytest.mark.slow
def test_dask_counting_equals_local_counting(ewt_text, tmp_path):
    pytest.importorskip("dask.distributed")
    from dask.distributed import LocalCluster

    local = train([ewt_text[0]], 3, jobs=2, log=lambda m: None, shard_lines=3000)   # several shards
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cl:
        dist = train([ewt_text[0]], 3, backend="dask", scheduler=cl.scheduler_address, log=lambda m: None,
                     shard_lines=3000)
    one = train([ewt_text[0]], 3, log=lambda m: None)
    paths = []
    for name, t in (("local", local), ("dask", dist), ("one", one)):
        paths.append(tmp_path / f"{name}.wolm")
        write_binary(t, str(paths[-1]))
    assert paths[0].read_bytes() == paths[1].read_bytes() == paths[2].read_bytes()


@pytest.mark.slow
def test_cli_train_score_convert(ewt_text, tmp_path, capsys):
    import json

    from wo.cli import main

    arpa = tmp_path / "m.arpa.xz"
    assert main(["lm", "train", "--text", ewt_text[0], "--order", "3", "--out", str(arpa)]) == 0
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith(f"wo: wrote {arpa} (order 3") and last.endswith(", ARPA)"), last
    binary = tmp_path / "m.wolm"
    assert main(["lm", "convert", str(arpa), str(binary)]) == 0
    capsys.readouterr()
    assert main(["lm", "score", "--lm", str(binary), "--input", ewt_text[1], "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert set(res) == {"sentences", "words", "oov", "log10_prob", "perplexity", "perplexity_excluding_oov"}
    assert res["sentences"] == 400 and res["log10_prob"] < 0
    per = tmp_path / "per.txt"
    assert main(["lm", "score", "--lm", str(arpa), "--input", ewt_text[1], "--per-sentence",
                 "--output", str(per)]) == 0
    vals = [float(x) for x in per.read_text().split()]
    assert len(vals) == 400 and abs(sum(vals) - res["log10_prob"]) < 1e-2
    assert main(["lm", "train", "--text", ewt_text[0], "--order", "9", "--out", str(binary)]) == 2
    assert main(["lm", "score", "--lm", ewt_text[0], "--input", ewt_text[1]]) == 2   # not an LM


def test_raw_text_scoring_equals_per_sentence_scoring(ewt_lm, ewt_text):
    _, _, binary = ewt_lm
    lm = LanguageModel.load(binary)
    lines = open(ewt_text[1], encoding="utf-8").read().splitlines()
    per, cs = lm.score_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    assert np.allclose(per, [lm.score(ln.split()) for ln in lines], atol=1e-4)
    assert cs.words == sum(len(ln.split()) for ln in lines)
    # tabs and runs of spaces separate tokens; a missing final newline still ends the last line
    a, _ = lm.score_bytes("the  cat\tsat\non the mat".encode())
    assert np.allclose(a, [lm.score(["the", "cat", "sat"]), lm.score(["on", "the", "mat"])], atol=1e-5)
    empty, ce = lm.score_bytes(b"")
    assert empty.shape == (0,) and ce.sentences == 0


def test_text_scored_in_threads_equals_one_thread(ewt_lm, ewt_text, monkeypatch):
    """Long text is cut at line ends and scored in parallel threads; every line's score and the
    totals are those of one thread (the last line without its newline too)."""
    import wo.lm.model as lm_model

    _, _, binary = ewt_lm
    lm = LanguageModel.load(binary)
    data = open(ewt_text[1], "rb").read() + b"the last line has no newline"
    monkeypatch.setattr(lm_model, "THREAD_BYTES", 1000)   # EWT dev[:400] is about 25 kB
    one, c1 = lm.score_bytes(data, threads=1)
    for k in (2, 3, 7):
        many, ck = lm.score_bytes(data, threads=k)
        assert np.array_equal(one, many) and ck == c1
    assert one.shape[0] == 401


@pytest.mark.parametrize("prob,backoff,says", [("nan", "-0.5", "is not in [-inf, 0]"), ("0.3", "-0.5", "is not in [-inf, 0]"),
                                               ("-0.3", "nan", "is not a finite number"),
                                               ("-0.3", "x", "backoff 'x' is not a number")])
def test_arpa_with_impossible_numbers_is_refused_at_its_line(tmp_path, prob, backoff, says):
    p = tmp_path / "bad.arpa"
    text = "\\data\\\nngram 1=3\n\n\\1-grams:\n-99\t<s>\t-0.5\n-0.5\t</s>\n" + f"{prob}\ta\t{backoff}\n\n" + "\\end\\\n"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(LMError, match=r"bad.arpa:7: .*" + re.escape(says)):
        read_arpa(str(p))


def test_utf8_check_finds_what_the_decoder_finds():
    """``wo lm score`` validates its input without decoding it: the first bad byte is where
    ``bytes.decode`` stops, for random byte strings rich in lead and continuation bytes."""
    import random

    from wo._fast._lm import utf8_error_offset

    def decoder(b):
        try:
            b.decode("utf-8")
            return -1
        except UnicodeDecodeError as e:
            return e.start

    rng = random.Random(7)
    alphabet = [0x41, 0x0A, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
    cases = ["plain ascii", "héllo wörld ✓ 𝄞 中文"] + [
        bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 9))) for _ in range(20000)]
    cases = [c.encode() if isinstance(c, str) else c for c in cases]
    assert sum(decoder(c) >= 0 for c in cases) > 10000
    assert [utf8_error_offset(c) for c in cases] == [decoder(c) for c in cases]


@pytest.mark.parametrize("path", ["binary", "corpora/models/wo-en-wiki-4gram.wolm"])
def test_word_ids_from_the_core_equal_the_vocabulary_dict(ewt_lm, ewt_text, path):
    """word_ids maps tokens through the core's vocabulary hash (no dict of the whole vocabulary
    is built); the ids are the dict's, unknown, empty and non-ASCII words and the boundary
    symbols included, for the probing and the trie formats."""
    from tests.conftest import ROOT

    lm = LanguageModel.load(ewt_lm[2] if path == "binary" else str(ROOT / path))
    words = open(ewt_text[1], encoding="utf-8").read().split()[:3000]
    toks = words + ["qqzxqq", "", "naïve", "東京", "<s>", "</s>", "<unk>", "a b"]
    got = lm.word_ids(toks)
    assert lm._ids is None                                   # the core did it
    want = np.array([lm.ids.get(t, 0) for t in toks], dtype=np.int32)
    assert got.dtype == np.int32 and np.array_equal(got, want) and (want > 0).sum() > 2000
    assert np.array_equal(lm.word_ids(["x\ny", "the"]), [0, lm.ids["the"]])   # a newline inside: the dict
    assert lm.word_ids([]).shape == (0,)
