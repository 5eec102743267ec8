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
