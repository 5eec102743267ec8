"""What every bench/ script shares: the checkout's paths, the CPU name, timing (a whole child
process, or a block of code in this one), JSON records that name the command that made them,
and BLEU through ``wo.eval`` (the scorer ``wo evaluate`` uses).

Import it from a script in bench/ as ``import common`` (the scripts run as ``python bench/X.py``,
so bench/ is on ``sys.path``); importing it also puts the checkout's root first on ``sys.path``,
so ``import wo`` finds this checkout's package.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
RESULTS = os.path.join(BENCH, "results")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

WO = [sys.executable, "-m", "wo.cli"]   # ``wo`` of this checkout, with this interpreter


# ------------------------------------------------------------------------------------ the machine
def cpu_name(cores: bool = False) -> str:
    """The CPU model from ``/proc/cpuinfo`` (``AMD EPYC 7B13``), ``platform.processor()`` where
    there is none, else ``"unknown CPU"``; with ``cores`` the core count is added
    (``AMD EPYC 7B13, 2 cores``)."""
    name = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            name = next((ln.split(":", 1)[1].strip() for ln in fh if ln.lower().startswith("model name")), "")
    except OSError:
        pass
    if not name:
        import platform

        name = platform.processor() or "unknown CPU"
    return f"{name}, {os.cpu_count()} cores" if cores else name


def loadavg() -> List[float]:
    """The 1, 5 and 15 minute load averages (``/proc/loadavg``); [] where unavailable."""
    try:
        with open("/proc/loadavg", encoding="utf-8") as fh:
            return [float(x) for x in fh.read().split()[:3]]
    except OSError:
        return []


# ------------------------------------------------------------------------------------ timing
@dataclass
class Run:
    """One finished child process timed by :func:`run_timed`.

    returncode: int; stdout, stderr: str (empty when sent to a file); wall_s: wall-clock seconds
    from start to exit; user_s, sys_s: CPU seconds of the child and the descendants it waited for;
    rss_mb: peak resident set size in MiB of the child or of its largest waited-for descendant
    (what ``/usr/bin/time -v`` reports: both read ``wait4``'s resource usage)."""

    cmd: List[str]
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    user_s: float
    sys_s: float
    rss_mb: float

    @property
    def cpu_s(self) -> float:
        """User + system CPU seconds."""
        return self.user_s + self.sys_s

    def record(self, digits: int = 2) -> Dict[str, float]:
        """{wall_s, cpu_s, rss_mb} rounded to ``digits`` places."""
        return {"wall_s": round(self.wall_s, digits), "cpu_s": round(self.cpu_s, digits),
                "rss_mb": round(self.rss_mb, digits)}


def run_timed(cmd: Sequence, *, cwd: Optional[str] = ROOT, env: Optional[dict] = None, input: Optional[str] = None,
              log: Optional[str] = None, ok=(0,)) -> Run:
    """Run ``cmd`` (a list of str or path-likes) as a child process and time it whole.

    Standard output and error are captured as text, or both go to the file ``log`` when given
    (so that a long run can be watched); ``input`` is sent to standard input (else it is
    /dev/null).  Wall time is taken around the child; CPU seconds and peak RSS come from
    ``os.wait4`` (the child plus the descendants it waited for, as ``/usr/bin/time -v``).
    Raises SystemExit with the command and the end of its stderr (or of ``log``) when the exit
    code is not in ``ok`` (``ok=None`` accepts any).
    """
    cmd = [str(c) for c in cmd]
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se, tempfile.TemporaryFile() as si:
        if input is not None:
            si.write(input.encode("utf-8"))
            si.seek(0)
        out = open(log, "wb") if log else so
        try:
            t0 = time.perf_counter()
            p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=si if input is not None else subprocess.DEVNULL,
                                 stdout=out, stderr=subprocess.STDOUT if log else se)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
        finally:
            if log:
                out.close()
        p.returncode = os.waitstatus_to_exitcode(status)
        so.seek(0)
        se.seek(0)
        r = Run(cmd, p.returncode, so.read().decode("utf-8", "replace"), se.read().decode("utf-8", "replace"),
                wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss / 1024.0)
    if ok is not None and r.returncode not in ok:
        tail = r.stderr
        if log:
            with open(log, encoding="utf-8", errors="replace") as fh:
                tail = fh.read()
        raise SystemExit(f"exit code {r.returncode}: {command_line(cmd)}\n{tail[-3000:]}")
    return r


def decode_and_score(args: Sequence[str], hyp: str, ref: str) -> Dict:
    """Run ``wo ARGS`` (which writes ``hyp``) as one timed whole process, then ``wo evaluate
    --json`` against ``ref``: the record of a decoding benchmark row (command with ``hyp`` shown
    as OUT and repository paths relative, bleu, exact_pct, signature, sentences, wall_seconds,
    sentences_per_second, peak_rss_mb, load_average_before).  Raises SystemExit on a failed run."""
    import json

    load = loadavg()
    r = run_timed([*WO, *args])
    score = json.loads(run_timed([*WO, "evaluate", "--hyp", hyp, "--ref", ref, "--json"]).stdout)
    shown = ["OUT" if str(a) == hyp else os.path.relpath(a, ROOT) if str(a).startswith(ROOT) else str(a) for a in args]
    return {"command": "wo " + " ".join(shown), "bleu": round(score["bleu"], 2),
            "exact_pct": round(score["exact"], 2), "signature": score["signature"], "sentences": score["sentences"],
            "wall_seconds": round(r.wall_s, 1), "sentences_per_second": round(score["sentences"] / r.wall_s, 1),
            "peak_rss_mb": round(r.rss_mb), "load_average_before": load}


def parse_time_v(text: str) -> Dict[str, float]:
    """The fields of a ``/usr/bin/time -v`` report (its text): wall_s (the "Elapsed (wall
    clock)" h:mm:ss or m:ss), user_s, sys_s (CPU seconds), rss_mb (peak RSS, MiB) and
    exit_status (int), each present when the report has it; cpu_s = user_s + sys_s when both are."""
    rec: Dict[str, float] = {}
    for ln in text.splitlines():
        key, _, val = ln.strip().partition(": ")
        try:
            if key.startswith("Elapsed (wall clock)"):
                s = 0.0
                for part in val.strip().split(":"):
                    s = s * 60 + float(part)
                rec["wall_s"] = s
            elif key == "User time (seconds)":
                rec["user_s"] = float(val)
            elif key == "System time (seconds)":
                rec["sys_s"] = float(val)
            elif key == "Maximum resident set size (kbytes)":
                rec["rss_mb"] = int(val) / 1024.0
            elif key == "Exit status":
                rec["exit_status"] = int(val)
        except ValueError:
            continue
    if "user_s" in rec and "sys_s" in rec:
        rec["cpu_s"] = rec["user_s"] + rec["sys_s"]
    return rec


@dataclass
class Stopwatch:
    """Times a block of code in this process: ``with Stopwatch() as sw: ...`` then
    ``sw.seconds`` (wall clock, ``time.perf_counter``) and ``sw.cpu`` (this process's CPU
    seconds, ``time.process_time``); both count from the ``with`` while the block runs."""

    seconds: float = 0.0
    cpu: float = 0.0
    _t: tuple = field(default=(0.0, 0.0), repr=False)

    def __enter__(self) -> "Stopwatch":
        self._t = (time.perf_counter(), time.process_time())
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self._t[0]
        self.cpu = time.process_time() - self._t[1]


def peak_rss_mb(children: bool = False) -> float:
    """Peak RSS in MiB of this process (``children``: of its largest waited-for child)."""
    import resource

    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024.0


# ------------------------------------------------------------------------------------ records
def command_line(argv: Optional[Sequence[str]] = None) -> str:
    """A command as one shell line; by default this script's own (``python bench/X.py ARGS``,
    the script path relative to the checkout's root)."""
    if argv is None:
        script = os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)
        return " ".join(["python", shlex.quote(script), *map(shlex.quote, sys.argv[1:])])
    return " ".join(shlex.quote(str(a)) for a in argv)


def write_record(path: str, rec, *, command: bool = True, **dump) -> str:
    """Write the JSON record ``rec`` to ``path`` (directories made as needed), ``indent=1`` unless
    ``dump`` says otherwise (its keys go to ``json.dump``), with a final newline.  With
    ``command`` and a dict ``rec`` without one, the key ``"command"`` records the command line
    that made it (:func:`command_line`).  Returns ``path``."""
    if command and isinstance(rec, dict) and "command" not in rec:
        rec = {**rec, "command": command_line()}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    dump.setdefault("indent", 1)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(rec, fh, **dump)
        fh.write("\n")
    return path


def read_text(path: str) -> str:
    """The UTF-8 text of a file, xz- or gzip-decompressed when its name ends in ``.xz`` or ``.gz``."""
    import gzip
    import lzma

    opener = lzma.open if str(path).endswith(".xz") else gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return fh.read()


def conllu_blocks(path: str) -> List[str]:
    """The sentence blocks of a CoNLL-U file as text (comments and token lines, no blank line
    before or after), to copy a slice or a subset of the file; the sentences themselves are
    read with ``wo.io.read_conllu``."""
    return [b.strip("\n") for b in read_text(path).split("\n\n") if b.strip()]


def write_conllu_blocks(path: str, blocks: Sequence[str]) -> str:
    """Write CoNLL-U sentence blocks (:func:`conllu_blocks`) as a file, each followed by a
    blank line; returns ``path``."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(b + "\n\n" for b in blocks))
    return path


def read_jsonl(path: str, limit: Optional[int] = None) -> list:
    """The records of a JSON-lines file (gzip-compressed when the name ends in ``.gz``), blank
    lines skipped, at most ``limit`` of them."""
    import gzip

    out: list = []
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(json.loads(line))
                if limit is not None and len(out) >= limit:
                    break
    return out


# ------------------------------------------------------------------------------------ BLEU
def bleu(hyps: Sequence, refs: Sequence, tokenize: str = "none"):
    """Corpus scores of hypotheses against references through ``wo.eval.score`` (sacrebleu
    BLEU, case-sensitive, ``tokenize='none'`` by default as ``wo evaluate``; '13a' for
    detokenized MT output).  Each item is a str or a list of tokens (joined by spaces).
    Returns ``wo.eval.Scores`` (bleu, signature, exact, recovered, sentences).  Raises
    ValueError when the lists differ in length."""
    from wo.eval import score

    def text(x):
        return x if isinstance(x, str) else " ".join(x)

    return score([text(h) for h in hyps], [text(r) for r in refs], tokenize=tokenize)


def sentence_bleu(hyp, ref, tokenize: str = "none") -> float:
    """sacrebleu sentence BLEU (0-100, ``effective_order=True``) of one hypothesis against one
    reference (str or token list), to pick n-best oracles; corpus BLEU is :func:`bleu`."""
    from sacrebleu.metrics import BLEU

    m = _SENTENCE_BLEU.get(tokenize)
    if m is None:
        m = _SENTENCE_BLEU[tokenize] = BLEU(tokenize=tokenize, effective_order=True)
    text = (lambda x: x if isinstance(x, str) else " ".join(x))
    return m.sentence_score(text(hyp), [text(ref)]).score


_SENTENCE_BLEU: dict = {}


def oracle(candidates: Sequence, ref, tokenize: str = "none"):
    """The candidate with the highest :func:`sentence_bleu` against ``ref`` (the first of ties)."""
    return max(candidates, key=lambda c: sentence_bleu(c, ref, tokenize))
