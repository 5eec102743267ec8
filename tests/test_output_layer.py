"""The output layer and the worker processes, through the real command line and the Python API.

Findings 4, 7 and 10 of "Faults a user meets":

* an output that is an input (directly, through a symbolic link or a hard link; ``--tok`` and
  ``--output`` too) is refused before any work, in one line naming the user's paths, exit 2,
  and the input is left as it was, in every verb that writes a file (``wo linearize``, ``wo sr
  realize``, ``wo sr make-input``, ``wo lm train``, ``wo lm convert``, ``wo gyro index``) and in
  the Python API (``Linearizer.linearize_file``);
* a file written over keeps its permissions (0o600 stays 0o600);
* a write error (a full disk: the temporary output's writes go to ``/dev/full``, which fails
  every write with ENOSPC as a full disk does) names the user's path, never the temporary
  name, and leaves no ``.wo-out-*`` file;
* SIGTERM (``kill PID``) during ``wo linearize --jobs 2``: exit 143, one line, no temporary
  file, no process of the run left alive (workers, resource trackers);
* ``jobs`` as joblib users know it: -1 = every core, -2 = all but one, 0 a ValueError (API) or
  a one-line error (CLI), more than the cores capped with a one-line note (none with --quiet).
"""
import errno
import lzma
import os
import pathlib
import signal
import stat
import subprocess
import sys
import tempfile
import time

import pytest

from tests.conftest import EWT, PT_TEST, ROOT, SHIPPED, conllu_blocks, wo_cli, write_blocks

GOLD_TEXT = ROOT / "tests" / "data" / "golden" / "ewt-test-full-300.txt.xz"


def _lines(n=3, lo=4, hi=8) -> str:
    with lzma.open(GOLD_TEXT, "rt", encoding="utf-8") as fh:
        return "\n".join([ln for ln in fh.read().split("\n") if lo <= len(ln.split()) <= hi][:n]) + "\n"


def _pt(tmp_path, n=3) -> pathlib.Path:
    return pathlib.Path(write_blocks(tmp_path / "in.conllu", conllu_blocks(str(PT_TEST))[:n]))


def _t1(tmp_path) -> pathlib.Path:
    src = _pt(tmp_path)
    out = tmp_path / "in.t1"
    r = wo_cli(["sr", "make-input", "--ud", src, "--out", out, "--seed", "3"])
    assert r.returncode == 0, r.stderr
    return out


def _arpa(tmp_path) -> pathlib.Path:
    text = tmp_path / "text.txt"
    text.write_text(_lines(20, 3, 20), encoding="utf-8")
    out = tmp_path / "lm.arpa"
    r = wo_cli(["lm", "train", "--text", text, "--order", "2", "--out", out, "--quiet"])
    assert r.returncode == 0, r.stderr
    return out


def _one_line_error(r, *names):
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for n in names:
        assert str(n) in lines[0], (n, r.stderr)
    assert ".wo-out-" not in r.stderr and ".wo-" not in r.stderr.replace(str(names[0]), ""), r.stderr


def _no_temp(d: pathlib.Path):
    left = [x.name for x in d.iterdir() if x.name.startswith(".wo-")]
    assert not left, left


# ---------------------------------------------------------------- an output that is an input
def _same_file_cases(tmp_path, how):
    """(argv, the input file that must stay as it was, the paths the message names) per verb."""
    def alias(p: pathlib.Path) -> pathlib.Path:
        if how == "direct":
            return p
        q = p.with_name("alias-" + p.name)
        if how == "symlink":
            q.symlink_to(p)
        else:
            os.link(p, q)
        return q
    return alias


SAME_VERBS = ["linearize", "sr realize", "sr make-input", "lm train", "lm convert", "gyro index"]


@pytest.mark.parametrize("how", ["direct", "symlink", "hardlink"])
@pytest.mark.parametrize("verb", SAME_VERBS)
def test_output_that_is_an_input_is_refused(tmp_path, verb, how):
    """The output names an input file: one line naming both paths, exit 2, the input unchanged
    (before: exit 0 and the input overwritten; make-input lost the gold file)."""
    alias = _same_file_cases(tmp_path, how)
    if verb == "linearize":
        src = _pt(tmp_path)
        argv = lambda o: ["linearize", "--input", src, "--output", o]
    elif verb == "sr realize":
        src = _t1(tmp_path)
        argv = lambda o: ["sr", "realize", "--lang", "pt", "--input", src, "--output", o]
    elif verb == "sr make-input":
        src = _pt(tmp_path)
        argv = lambda o: ["sr", "make-input", "--ud", src, "--out", o]
    elif verb == "lm train":
        src = tmp_path / "text.txt"
        src.write_text(_lines(20, 3, 20), encoding="utf-8")
        argv = lambda o: ["lm", "train", "--text", src, "--order", "2", "--out", o]
    elif verb == "lm convert":
        src = _arpa(tmp_path)
        argv = lambda o: ["lm", "convert", src, o]
    else:
        src = tmp_path / "text.txt"
        src.write_text(_lines(20, 3, 20), encoding="utf-8")
        argv = lambda o: ["gyro", "index", "--text", src, "--out", o]
    before = src.read_bytes()
    out = alias(src)
    r = wo_cli(argv(out))
    _one_line_error(r, out, src)
    assert src.read_bytes() == before
    _no_temp(tmp_path)


def test_tok_equal_to_output_is_refused(tmp_path):
    """``wo sr realize --tok X --output X``: the twin would replace the submission."""
    src = _t1(tmp_path)
    out = tmp_path / "sub.txt"
    r = wo_cli(["sr", "realize", "--lang", "pt", "--input", src, "--output", out, "--tok", out])
    _one_line_error(r, out)
    assert not out.exists()
    _no_temp(tmp_path)


def test_tok_twin_that_is_the_input_is_refused(tmp_path):
    """The default twin OUTPUT.tok is the input file: refused as well."""
    src = _t1(tmp_path)
    t = tmp_path / "x.tok"
    t.write_bytes(src.read_bytes())
    before = t.read_bytes()
    r = wo_cli(["sr", "realize", "--lang", "pt", "--input", t, "--output", tmp_path / "x"])
    _one_line_error(r, t)
    assert t.read_bytes() == before


def test_api_output_that_is_the_input_is_refused(tmp_path):
    """``Linearizer.linearize_file(X, X)`` raises SameFileError (a ValueError) naming both, X unchanged."""
    from wo import Linearizer
    from wo.io.outputs import SameFileError

    src = tmp_path / "bags.txt"
    src.write_text(_lines(), encoding="utf-8")
    before = src.read_bytes()
    link = tmp_path / "link.txt"
    link.symlink_to(src)
    lin = Linearizer.load(str(SHIPPED))
    for out in (src, link):
        with pytest.raises(SameFileError) as e:
            lin.linearize_file(str(src), str(out), input_format="bag")
        assert isinstance(e.value, ValueError) and str(out) in str(e.value)
        assert src.read_bytes() == before
    _no_temp(tmp_path)


# ---------------------------------------------------------------- permissions and write errors
@pytest.mark.parametrize("verb", ["linearize", "lm train", "lm train arpa"])
def test_replaced_file_keeps_its_permissions(tmp_path, verb):
    """An existing output of mode 0o600 is still 0o600 after it is written over (before: the umask's 0o644)."""
    if verb == "linearize":
        out = tmp_path / "out.txt"
        argv = ["linearize", "--input", _pt(tmp_path), "--output", out, "--quiet"]
    else:
        src = tmp_path / "text.txt"
        src.write_text(_lines(20, 3, 20), encoding="utf-8")
        out = tmp_path / ("lm.arpa" if verb.endswith("arpa") else "lm.wolm")
        argv = ["lm", "train", "--text", src, "--order", "2", "--out", out, "--quiet"]
    out.write_text("old\n")
    os.chmod(out, 0o600)
    r = wo_cli(argv)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() != b"old\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def _full_disk(monkeypatch):
    """The temporary output files of wo's writers get a descriptor of /dev/full: every write
    fails with ENOSPC, as on a full disk; the named temporary file exists as it would."""
    real = tempfile.mkstemp

    def mkstemp(*a, **kw):
        fd, name = real(*a, **kw)
        if str(kw.get("prefix", "")).startswith(".wo-"):
            full = os.open("/dev/full", os.O_WRONLY)
            os.dup2(full, fd)
            os.close(full)
        return fd, name
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)


@pytest.mark.parametrize("verb", ["linearize", "sr make-input", "lm train arpa", "gyro index"])
def test_full_disk_names_the_users_path(tmp_path, monkeypatch, verb):
    """ENOSPC while writing: one line naming the output as given (not a temporary name), exit 2,
    no temporary file left (before: "No space left on device" alone, and .wo-out-* left)."""
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    if verb == "linearize":
        out = out_dir / "out.txt"
        argv = ["linearize", "--input", _pt(tmp_path), "--output", out, "--quiet"]
    elif verb == "sr make-input":
        out = out_dir / "out.t1"
        argv = ["sr", "make-input", "--ud", _pt(tmp_path), "--out", out]
    else:
        src = tmp_path / "text.txt"
        src.write_text(_lines(20, 3, 20), encoding="utf-8")
        if verb == "gyro index":
            out = out_dir / "ix.wogi"
            argv = ["gyro", "index", "--text", src, "--out", out, "--quiet"]
        else:
            out = out_dir / "lm.arpa"
            argv = ["lm", "train", "--text", src, "--order", "2", "--out", out, "--quiet"]
    _full_disk(monkeypatch)
    r = wo_cli(argv)
    _one_line_error(r, out)
    assert os.strerror(errno.ENOSPC) in r.stderr, r.stderr
    assert list(out_dir.iterdir()) == [], list(out_dir.iterdir())


def test_writer_error_names_the_link_as_given(tmp_path, monkeypatch):
    """Through a symbolic link the message names the path the user gave."""
    from wo.io.text import AtomicWriter

    (tmp_path / "t.txt").write_text("old\n")
    link = tmp_path / "l.txt"
    link.symlink_to(tmp_path / "t.txt")
    _full_disk(monkeypatch)
    w = AtomicWriter(str(link))
    with pytest.raises(OSError) as e:
        for _ in range(3):
            w.write("x" * 100_000)
        w.commit()
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(link)
    w.abort()
    assert (tmp_path / "t.txt").read_text() == "old\n"
    _no_temp(tmp_path)


# ---------------------------------------------------------------- SIGTERM
def _descendants(pid):
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["linearize", "sr realize"])
def test_sigterm_is_a_clean_exit(tmp_path, verb):
    """SIGTERM to `wo ... --jobs 2` while it decodes: exit 143, one line, no temporary file, the old
    output kept, and every process it started (loky workers, resource trackers) gone (before:
    exit 143 without a word, .wo-out-* left, 2 workers and their trackers alive, ~1 GB)."""
    import psutil

    out_dir = tmp_path / "o"
    out_dir.mkdir()
    out = out_dir / "out.txt"
    out.write_text("older\n")
    if verb == "linearize":
        argv = ["linearize", "--jobs", "2", "--input", str(EWT / "en_ewt-ud-test.conllu.xz"), "--output", str(out)]
    else:
        t1 = tmp_path / "ewt.t1"
        r = wo_cli(["sr", "make-input", "--ud", EWT / "en_ewt-ud-test.conllu.xz", "--out", t1])
        assert r.returncode == 0, r.stderr
        argv = ["sr", "realize", "--lang", "en", "--jobs", "2", "--input", str(t1), "--output", str(out)]
    p = subprocess.Popen([sys.executable, "-m", "wo.cli", *argv], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, cwd=str(ROOT), start_new_session=True)
    seen = set()
    try:
        t_end = time.monotonic() + 90
        while time.monotonic() < t_end and p.poll() is None:
            kids = _descendants(p.pid)
            seen.update(kids)
            workers = [k for k in kids if "LokyProcess" in " ".join(_cmd(k))]
            if len(workers) >= 2 and any(x.name.startswith(".wo-out-") for x in out_dir.iterdir()):
                time.sleep(1.0)
                seen.update(_descendants(p.pid))
                break
            time.sleep(0.05)
        assert p.poll() is None, "the run ended before it could be terminated"
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        err = err.decode()
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 143, (p.returncode, err)
    assert "Traceback" not in err, err
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and "terminated" in lines[0], err
    assert [x.name for x in out_dir.iterdir()] == ["out.txt"]
    assert out.read_text() == "older\n"
    assert len(seen) >= 2
    deadline = time.monotonic() + 15
    alive = [k for k in seen if _alive(k)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [k for k in seen if _alive(k)]
    assert not alive, [(k.pid, _cmd(k)) for k in alive]


def _cmd(proc):
    import psutil

    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def _alive(proc):
    import psutil

    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


# ---------------------------------------------------------------- jobs as joblib users know it
def _pid(batch):
    time.sleep(0.01)
    return [os.getpid() for _ in batch]


def test_resolve_jobs():
    """-1 every core, -2 all but one (at least 1), more than the cores capped, 0 and non-integers refused."""
    import joblib

    from wo.io.batch import resolve_jobs

    n = joblib.cpu_count()
    assert resolve_jobs(1) == 1
    assert resolve_jobs(-1) == n
    assert resolve_jobs(-2) == max(1, n - 1)
    assert resolve_jobs(-1000) == 1
    notes = []
    assert resolve_jobs(n + 62, note=notes.append) == n
    assert len(notes) == 1 and str(n + 62) in notes[0] and str(n) in notes[0]
    assert resolve_jobs(n, note=notes.append) == n and len(notes) == 1
    for bad in (0, 1.5, "2", True, None):
        with pytest.raises((ValueError, TypeError)) as e:
            resolve_jobs(bad)
        assert "jobs" in str(e.value)


def test_map_batches_never_starts_more_workers_than_cores():
    """jobs=64 on this machine: at most cpu_count() worker processes (before: 64 were started)."""
    import joblib

    from wo.io.batch import map_batches

    pids = map_batches(_pid, (), list(range(64)), jobs=64, chunk=1)
    assert len(pids) == 64
    assert len(set(pids)) <= joblib.cpu_count()


@pytest.mark.parametrize("jobs", [-1, -2, 64])
def test_api_jobs_like_joblib(tmp_path, jobs):
    """``linearize_file(..., jobs=-1)`` decodes every sentence (before: failed=0 and an empty file)."""
    from wo import Linearizer

    src = tmp_path / "bags.txt"
    src.write_text(_lines(), encoding="utf-8")
    lin = Linearizer.load(str(SHIPPED))
    lin.linearize_file(str(src), str(tmp_path / "ref.txt"), input_format="bag", jobs=1, report=lambda m: None)
    s = lin.linearize_file(str(src), str(tmp_path / "out.txt"), input_format="bag", jobs=jobs, report=lambda m: None)
    assert s.sentences == 3 and s.failed == 0
    assert (tmp_path / "out.txt").read_bytes() == (tmp_path / "ref.txt").read_bytes()
    assert len((tmp_path / "out.txt").read_text().splitlines()) == 3


def test_api_jobs_zero_is_a_value_error(tmp_path):
    """``jobs=0``: a ValueError saying what jobs takes (before: ZeroDivisionError), nothing written."""
    from wo import Linearizer

    src = tmp_path / "bags.txt"
    src.write_text(_lines(), encoding="utf-8")
    with pytest.raises(ValueError, match="jobs"):
        Linearizer.load(str(SHIPPED)).linearize_file(str(src), str(tmp_path / "out.txt"), input_format="bag", jobs=0)
    assert not (tmp_path / "out.txt").exists()
    _no_temp(tmp_path)


@pytest.mark.parametrize("verb", ["linearize", "sr realize", "lm train"])
def test_cli_jobs_zero_is_a_one_line_error(tmp_path, verb):
    src = _pt(tmp_path)
    argv = {"linearize": ["linearize", "--input", src],
            "sr realize": ["sr", "realize", "--lang", "pt", "--input", src],
            "lm train": ["lm", "train", "--text", src, "--out", tmp_path / "x.wolm"]}[verb]
    r = wo_cli(argv + ["--jobs", "0"])
    _one_line_error(r, "--jobs")


@pytest.mark.parametrize("jobs", ["-1", "64"])
def test_cli_jobs_like_joblib(tmp_path, jobs):
    """``--jobs -1`` and ``--jobs 64``: the records of ``--jobs 1``; 64 is capped at the cores with
    one note on stderr, none with --quiet."""
    import joblib

    src = _pt(tmp_path)
    ref = wo_cli(["linearize", "--input", src, "--quiet"])
    assert ref.returncode == 0, ref.stderr
    r = wo_cli(["linearize", "--input", src, "--jobs", jobs])
    assert r.returncode == 0, r.stderr
    assert r.stdout_bytes == ref.stdout_bytes
    notes = [ln for ln in r.stderr.splitlines() if "--jobs" in ln]
    if jobs == "64":
        assert len(notes) == 1 and f"{joblib.cpu_count()}" in notes[0], r.stderr
    else:
        assert not notes, r.stderr
    q = wo_cli(["linearize", "--input", src, "--jobs", jobs, "--quiet"])
    assert q.returncode == 0 and q.stderr == "" and q.stdout_bytes == ref.stdout_bytes, q.stderr
