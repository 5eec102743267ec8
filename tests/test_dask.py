"""Dask failure modes (the `--backend dask` user's): a missing extra, a scheduler address that
is wrong or does not answer, --scheduler without --backend dask: one line, exit 2, in seconds;
a real cluster gives the local run's output; losing it mid-run keeps the finished prefix."""
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT

PT = ROOT / "tests" / "data" / "sr" / "pt_bosque-test-40.conllu.xz"


def _wo(*args, pre="", timeout=120):
    code = f"import sys\n{pre}\nfrom wo.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def _one_line(p, code=2):
    assert p.returncode == code and "Traceback" not in p.stderr, (p.returncode, p.stderr[-1500:])
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("wo: "), lines
    return lines[0]


@pytest.fixture
def bags(tmp_path):
    f = tmp_path / "bags.txt"
    f.write_text("barked dog The\nmilk like cats\n", encoding="utf-8")
    return f


@pytest.mark.parametrize("verb", [["linearize"], ["ccg", "linearize"], ["gyro", "realize"]])
def test_dask_not_installed_is_one_line(bags, verb):
    block = "for m in ('dask', 'distributed', 'dask.distributed'):\n    sys.modules[m] = None"
    line = _one_line(_wo(*verb, "--input", bags, "--backend", "dask", "--quiet", pre=block))
    assert "pip install 'wo-nlg[dask]'" in line        # before: a 30-line traceback (linearize, ccg)


def test_a_scheduler_without_the_dask_backend_is_refused(bags):
    line = _one_line(_wo("linearize", "--input", bags, "--scheduler", "tcp://127.0.0.1:8786", "--quiet"))
    assert "needs --backend dask" in line               # before: ignored silently


@pytest.mark.parametrize("addr,what", [("bogus://x", "unknown protocol 'bogus'"),
                                       ("http://127.0.0.1:8787", "the dashboard's")])
def test_a_scheduler_address_dask_cannot_use_is_one_line(bags, addr, what):
    assert what in _one_line(_wo("linearize", "--input", bags, "--backend", "dask", "--scheduler", addr, "--quiet"))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_port_that_is_not_a_scheduler_is_one_line_in_seconds(bags):
    """An HTTP server (the dashboard is one) hung the run with no output; a port answering
    other bytes ended in 'out of memory: Unable to allocate 2.82 EiB'."""
    port = _free_port()
    http = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        t0 = time.perf_counter()
        p = _wo("linearize", "--input", bags, "--backend", "dask", "--scheduler", f"tcp://127.0.0.1:{port}", "--quiet")
        assert time.perf_counter() - t0 < 60
        assert "no Dask scheduler answered" in _one_line(p)
    finally:
        http.kill()


@pytest.fixture
def cluster(tmp_path):
    # the test extra installs dask[distributed]; its commands run as modules of this interpreter
    cli = [sys.executable, "-m"]
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    procs = [subprocess.Popen([*cli, "distributed.cli.dask_scheduler", "--port", str(port), "--dashboard-address", ":0"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)]
    time.sleep(3.0)
    procs.append(subprocess.Popen([*cli, "distributed.cli.dask_worker", addr, "--nworkers", "1", "--nthreads", "1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
    time.sleep(4.0)
    yield addr, procs
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.slow
def test_a_real_cluster_and_losing_it_mid_run(tmp_path, cluster):
    addr, procs = cluster
    t1 = tmp_path / "pt.t1"
    assert _wo("sr", "make-input", "--ud", PT, "--out", t1, "--seed", "3").returncode == 0
    local, remote = tmp_path / "local.txt", tmp_path / "remote.txt"
    assert _wo("sr", "realize", "--lang", "pt_bosque", "--input", t1, "--output", local, "--quiet").returncode == 0
    p = _wo("sr", "realize", "--lang", "pt_bosque", "--input", t1, "--output", remote, "--backend", "dask",
            "--scheduler", addr)
    assert p.returncode == 0 and "Traceback" not in p.stderr and "distributed" not in p.stderr, p.stderr
    assert remote.read_bytes() == local.read_bytes()
    # a long run; the cluster goes away under it
    out = tmp_path / "lost.txt"
    run = subprocess.Popen([sys.executable, "-m", "wo.cli", "linearize", "--input",
                            str(ROOT / "corpora" / "ud-en-ewt" / "en_ewt-ud-dev.conllu.xz"), "--output", str(out),
                            "--backend", "dask", "--scheduler", addr, "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    time.sleep(12.0)
    for q in procs:
        os.killpg(q.pid, signal.SIGKILL)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 1 and "Traceback" not in err, err[-1500:]   # before: a 44-line traceback, no output
    assert "the Dask cluster was lost" in err
    if "kept the first" in err:
        kept = int(err.split("kept the first ")[1].split()[0])
        assert 0 < kept < 2001 and len(out.read_text(encoding="utf-8").splitlines()) == kept
