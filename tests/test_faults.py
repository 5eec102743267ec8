"""Faults a user meets, kept to their sentence: an empty lemma (lemminflect's IndexError took
the whole run down, with jobs too) and any unexpected exception of a system or a library it
calls (reported as an internal error of that sentence, the others still output)."""
import subprocess
import sys

import pytest

from tests.conftest import ROOT

EN_UD = ROOT / "tests" / "data" / "sr" / "en_partut-ud-train-60.conllu.xz"


def _wo(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "wo.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


@pytest.fixture(scope="module")
def en_t1(tmp_path_factory):
    d = tmp_path_factory.mktemp("faults")
    t1 = d / "en.t1"
    assert _wo("sr", "make-input", "--ud", EN_UD, "--out", t1).returncode == 0
    return t1


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_empty_lemma_fails_its_sentence_alone(en_t1, tmp_path, jobs):
    lines = en_t1.read_text(encoding="utf-8").split("\n")
    k = next(i for i, ln in enumerate(lines) if ln.count("\t") == 9 and ln.split("\t")[3] == "VERB")
    cols = lines[k].split("\t")
    cols[1] = ""                                   # the VERB's LEMMA field empty
    lines[k] = "\t".join(cols)
    bad = tmp_path / "bad.t1"
    bad.write_text("\n".join(lines), encoding="utf-8")
    out = tmp_path / "out.txt"
    p = _wo("sr", "realize", "--lang", "en_partut", "--input", bad, "--output", out, "--jobs", jobs, "--quiet")
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-1500:]
    assert f"{bad}:" in p.stderr and "empty LEMMA field" in p.stderr
    tok = (tmp_path / "out.txt.tok").read_text(encoding="utf-8").splitlines()
    assert len(tok) == 60 and sum(1 for t in tok if t) >= 59


def test_an_unexpected_exception_is_kept_to_its_sentence():
    from wo.system import Result, System

    class Fragile(System):
        name = "fragile"

        def decode_item(self, item):
            if item == "boom":
                return "abc"[7]                    # an IndexError, as from a library
            return Result([item])

        def fallback(self, item, message):
            return Result([item], status="error", message=message)

    got = Fragile().decode_batch(["a", "boom", "b"])
    assert [r.status for r in got] == ["ok", "error", "ok"]
    assert got[1].message.startswith("internal error (IndexError: string index out of range at ")
    assert "test_faults.py:" in got[1].message


def _ewt_words(n):
    """n real words: the forms of UD English-EWT dev in order, shuffled with a fixed seed."""
    import random

    from wo.io import read_conllu

    words = [w for s in read_conllu(str(ROOT / "corpora" / "ud-en-ewt" / "en_ewt-ud-dev.conllu.xz")) for w in s.forms]
    words = words[:n]
    random.Random(5).shuffle(words)
    return words


BIG_BAG_VERBS = {
    "linearize": ["linearize"],
    "ccg": ["ccg", "linearize"],
    "gyro": ["gyro", "realize"],
    "idl": ["idl", "realize", "--input-format", "bag"],
}


@pytest.mark.parametrize("verb", sorted(BIG_BAG_VERBS))
def test_a_5000_word_bag_is_bounded_by_default_in_every_bag_path(tmp_path, verb):
    """No option: every default bag path ends a 5,000-word bag in under a minute and 2 GB with
    a record (a refusal naming the bound, or a fallback order with its status), and the next
    bag is realised.  Before: `wo idl realize` past a minute and 6.7 GB; GYRO 5+ minutes on 480
    words its LM does not know; `wo linearize` 30+ minutes and 5 GB (now refused past
    --max-length)."""
    import json
    import time

    bags = tmp_path / "bags.txt"
    bags.write_text(" ".join(_ewt_words(5000)) + "\nbarked the dog\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    # the peak of this process's own memory (VmHWM: ru_maxrss would carry the forking test
    # worker's size across exec)
    code = ("import sys\nfrom wo.cli import main\nrc = main(sys.argv[1:])\n"
            "hwm = [ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM:')][0]\n"
            "print('maxrss_kb', hwm, file=sys.stderr)\nsys.exit(rc)\n")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code, *BIG_BAG_VERBS[verb], "--input", str(bags), "--output", str(out),
                        "--format", "jsonl"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    secs = time.perf_counter() - t0
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stderr[-1500:]
    rss_mb = int(p.stderr.rsplit("maxrss_kb", 1)[1].split()[0]) / 1024
    assert secs < 60 and rss_mb < 2048, (secs, rss_mb)
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(recs) == 2 and recs[1]["status"] in ("ok", "completed")
    assert sorted(recs[1]["tokens"]) == ["barked", "dog", "the"]
    if recs[0]["status"] != "error":               # a fallback order: every word once
        assert len(recs[0]["tokens"]) == 5000 and recs[0]["status"] in ("timeout", "limit", "max-states", "memory")
    else:                                          # refused, naming the bound
        assert "--max-length" in p.stderr


def test_gyro_ends_a_bag_past_its_time_and_a_bag_past_its_keys_in_the_greedy_order(tmp_path):
    import json
    import time

    from wo.gyro.realize import DEFAULT_TIMEOUT, GyroRealizer

    assert GyroRealizer.__init__.__defaults__ is not None and DEFAULT_TIMEOUT in GyroRealizer.__init__.__defaults__
    bags = tmp_path / "bags.txt"   # 480 words the LM does not know (all ties: the chart cannot prune), then 5,000
    bags.write_text(" ".join(f"w{i}" for i in range(480)) + "\n" + " ".join(f"v{i}" for i in range(5000)) + "\n",
                    encoding="utf-8")
    out = tmp_path / "out.jsonl"
    t0 = time.perf_counter()
    p = _wo("gyro", "realize", "--input", bags, "--output", out, "--format", "jsonl", "--timeout", "2", "--quiet")
    assert p.returncode == 0 and time.perf_counter() - t0 < 30, p.stderr
    a, b = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert a["status"] == "timeout" and a["level"] == "greedy" and sorted(a["tokens"]) == sorted(f"w{i}" for i in range(480))
    assert b["status"] == "limit" and "multiset keys" in b["message"] and len(set(b["tokens"])) == 5000
