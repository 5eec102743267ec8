"""Ctrl-C during `wo sr realize`: the sentences realised so far are written (submission and
its .tok twin, a valid prefix), or, before the first one, the files already there are kept
(the interrupted run is a real process; its reference runs in this one)."""
import pytest

from tests.conftest import EWT, wo_cli
from tests.test_cli import _ctrl_c_when


def _cpu_seconds(pid):
    """User + system CPU seconds of process ``pid`` (0 if it is gone)."""
    import os

    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            f = fh.read().rsplit(b")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _t1(tmp_path, copies):
    """EWT test as T1 input, ``copies`` times over (sentence ids kept distinct)."""
    one = tmp_path / "one.t1"
    r = wo_cli(["sr", "make-input", "--ud", EWT / "en_ewt-ud-test.conllu.xz", "--out", one, "--seed", "1"])
    assert r.returncode == 0, r.stderr
    blocks = [b for b in one.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    many = []
    for c in range(copies):
        many += [b.replace("# sent_id = ", f"# sent_id = c{c}-", 1) for b in blocks]
    return many


@pytest.mark.slow
def test_ctrl_c_writes_the_realised_prefix(tmp_path):
    import time

    from wo.sr.t1 import read_t1

    blocks = _t1(tmp_path, 8)    # long enough that the run is still realising when the interrupt comes
    src = tmp_path / "in.t1"
    src.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    out = tmp_path / "o.txt"
    t0 = time.process_time()
    read_t1(str(src))                 # the run reads its input first: interrupt well after that
    wait = 2.0 * (time.process_time() - t0) + 3.0
    rc, err, ready = _ctrl_c_when(["sr", "realize", "--input", str(src), "--output", str(out)],
                                  lambda pid: _cpu_seconds(pid) > wait, limit=90)
    assert ready and rc == 130 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    tok = out.with_name("o.txt.tok").read_text(encoding="utf-8").splitlines()
    n = len(tok)
    assert 0 < n < len(blocks) and f"kept the first {n} of {len(blocks)} records" in err, err
    assert out.read_text(encoding="utf-8").count("# sent_id = ") == n
    head = tmp_path / "head.t1"
    head.write_text("\n\n".join(blocks[:n]) + "\n\n", encoding="utf-8")
    ref = tmp_path / "ref.txt"
    r = wo_cli(["sr", "realize", "--input", head, "--output", ref, "--quiet"])
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == ref.read_bytes()
    assert out.with_name("o.txt.tok").read_bytes() == ref.with_name("ref.txt.tok").read_bytes()


def test_ctrl_c_before_the_first_sentence_keeps_the_old_files(tmp_path):
    blocks = _t1(tmp_path, 1)
    src = tmp_path / "in.t1"
    src.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    out = tmp_path / "o.txt"
    out.write_text("an older submission\n", encoding="utf-8")
    out.with_name("o.txt.tok").write_text("older tokens\n", encoding="utf-8")
    rc, err, ready = _ctrl_c_when(["sr", "realize", "--input", str(src), "--output", str(out)],
                                  lambda pid: _cpu_seconds(pid) > 0.3)
    assert ready and rc == 130 and "Traceback" not in err, err
    assert out.read_text(encoding="utf-8") == "an older submission\n"
    assert out.with_name("o.txt.tok").read_text(encoding="utf-8") == "older tokens\n"
