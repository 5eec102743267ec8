"""GYRO's phrase index on real text: the look-up returns all and only the n-grams whose tokens
form a sub-multiset of the bag (brute force), local and Dask builds give the same bytes, bad
files are refused, and the CLI round trip."""
import random
import struct
from collections import Counter

import pytest

from wo.gyro import PhraseIndex, PhraseIndexError, build_arrays, write_index


@pytest.fixture(scope="module")
def dev_text(tmp_path_factory, ewt_dev):
    sents = [list(s.forms) for s in ewt_dev]
    p = tmp_path_factory.mktemp("gyro") / "dev.txt"
    p.write_text("".join(" ".join(s) + "\n" for s in sents), encoding="utf-8")
    return str(p), sents


@pytest.fixture(scope="module")
def index_file(dev_text, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("gyroidx") / "dev.woidx")
    write_index(build_arrays([dev_text[0]], max_n=5), path)
    return path


@pytest.mark.slow
def test_lookup_returns_all_and_only_sub_multiset_ngrams(dev_text, index_file):
    _, sents = dev_text
    idx = PhraseIndex.load(index_file)
    grams = Counter()
    for s in sents:
        for n in range(2, 6):
            for i in range(len(s) - n + 1):
                grams[tuple(s[i:i + n])] += 1
    rng = random.Random(7)
    total = 0
    for _ in range(60):
        base = list(rng.choice(sents))[:18]
        bag = base + [rng.choice(rng.choice(sents)) for _ in range(3)] + ["zzz-not-in-text"]
        bc = Counter(bag)
        want = {g for g in grams if all(Counter(g)[w] <= bc[w] for w in g)}
        got = idx.lookup(bag)
        assert len(got) == len(set(got))                       # each phrase once
        assert set(got) == want
        total += len(got)
        # lengths and counts filters
        assert set(idx.lookup(bag, min_n=3, max_n=4)) == {g for g in want if 3 <= len(g) <= 4}
        assert set(idx.lookup(bag, min_count=2)) == {g for g in want if grams[g] >= 2}
    assert total > 1000
    assert idx.lookup([]) == [] and idx.lookup(["zzz-not-in-text"]) == []


def test_repeated_words_need_their_multiplicity(dev_text, index_file):
    idx = PhraseIndex.load(index_file)
    reps = [tuple(s[i:i + 3]) for s in dev_text[1] for i in range(len(s) - 2)
            if len(set(s[i:i + 3])) < 3]
    assert reps
    for g in reps[:20]:
        once = sorted(set(g))
        assert g not in idx.lookup(once)                    # a repeated word needs two tokens
        assert g in idx.lookup(list(g))
        assert set(idx.lookup(once)) < set(idx.lookup(list(g)))


def test_local_and_dask_builds_are_identical(dev_text, tmp_path):
    pytest.importorskip("dask.distributed")
    from dask.distributed import LocalCluster

    paths = []
    a = build_arrays([dev_text[0]], max_n=4, jobs=2, shard_lines=500)        # several shards
    paths.append(tmp_path / "local.woidx")
    write_index(a, str(paths[-1]))
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cl:
        d = build_arrays([dev_text[0]], max_n=4, backend="dask", scheduler=cl.scheduler_address,
                         shard_lines=500)
    paths.append(tmp_path / "dask.woidx")
    write_index(d, str(paths[-1]))
    paths.append(tmp_path / "one.woidx")
    write_index(build_arrays([dev_text[0]], max_n=4), str(paths[-1]))
    assert paths[0].read_bytes() == paths[1].read_bytes() == paths[2].read_bytes()


def test_bad_index_files_are_refused(index_file, tmp_path):
    data = open(index_file, "rb").read()
    cases = {"truncated": data[: len(data) // 2]}
    flip = bytearray(data)
    flip[-50] ^= 0xFF
    cases["checksum"] = bytes(flip)
    ver = bytearray(data)
    ver[8:12] = struct.pack("<I", 77)
    cases["version 77"] = bytes(ver)
    cases["not a wo phrase index"] = b"WOLM\0\0\0\0" + b"\0" * 64
    for msg, blob in cases.items():
        p = tmp_path / "bad.woidx"
        p.write_bytes(blob)
        with pytest.raises(PhraseIndexError, match=msg):
            PhraseIndex.load(str(p))


def test_cli_index_and_lookup(dev_text, tmp_path, capsys, monkeypatch):
    import io
    import json

    from wo.cli import main

    out = tmp_path / "cli.woidx"
    assert main(["gyro", "index", "--text", dev_text[0], "--out", str(out), "--max-n", "3", "--quiet"]) == 0
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"the of the .\nzzz\n"), encoding="utf-8"))
    assert main(["gyro", "lookup", "--index", str(out), "--input", "-"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and json.loads(lines[1]) == []
    got = json.loads(lines[0])
    assert "of the" in got and all(len(p.split()) <= 3 for p in got)
    assert main(["gyro", "index", "--text", dev_text[0], "--out", str(out), "--max-n", "9"]) == 2


@pytest.mark.parametrize("verb", ["lookup", "realize"])
def test_a_file_that_is_not_an_index_is_one_line_exit_2(tmp_path, verb):
    from tests.conftest import SHIPPED_LM, wo_cli

    bad = tmp_path / "not.woidx"
    bad.write_text("hello\n", encoding="utf-8")
    extra = ["--lm", SHIPPED_LM] if verb == "realize" else []
    p = wo_cli(["gyro", verb, "--index", bad, *extra, "--input", "-"], stdin="the dog\n")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert str(bad) in p.stderr and len(p.stderr.strip().splitlines()) == 1
