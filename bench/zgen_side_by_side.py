"""ZGen_SR and wo side by side on UD English-EWT test, in one run on one machine (issue 15).

CPUs differ between machines, so a speed figure only means something as a ratio of two systems
timed back to back on the same machine: this script does that and writes
``bench/results/zgen_side_by_side.json``.

What it does
  1. runs ``../shared/tools/zgen/zgen-peer.sh WORKDIR`` (with ZGEN_BIN set to ``--zgen-bin``): it
     converts EWT to ZGen's format, trains one pass of ZGen_SR per input type (``none`` = bag of
     words, ``full`` = unordered tree; skipped when WORKDIR already holds ``model.none`` /
     ``model.full``), decodes all of EWT test per type in one process timed with
     ``/usr/bin/time -v`` and prints ``zgen none: WALL s RSS MB; full: WALL s RSS MB``, which is
     parsed here;
  2. right after, times wo on the same EWT test as a whole process with ``/usr/bin/time -v``:
     ``.venv/bin/wo linearize --input corpora/ud-en-ewt/en_ewt-ud-test.conllu.xz --output OUT
     --given {none,full} --jobs 1`` (the shipped default model);
  3. with ``--repeats N`` (N > 1), N - 1 more rounds, each decoding with ZGen then wo per type
     (``zgen none, wo none, zgen full, wo full``); the ZGen decode is zgen-peer.sh's own command
     (``ZGen_SR test --type T --beam 64 --model WORKDIR/model.T --input WORKDIR/test.T.in
     --posdict WORKDIR/posdict --output ...``) reusing the trained models; medians are reported;
  4. scores both outputs with wo's scorer (``wo evaluate --json``: sacrebleu, tokenize none,
     case-sensitive) against the gold test; ZGen's output (CoNLL-like, one token per line) is
     already turned into one sentence per line by zgen-peer.sh (``WORKDIR/ewt-test.T.hyp``), and
     the repeat runs' outputs are converted the same way here.

The shuffles differ and the JSON says so: ZGen's test input is shuffled by
``shuffle_conllu.py`` with seed 11 (one ``random.Random(11)`` stream over the file) and ZGen_SR's
test mode re-shuffles every instance with ``std::random_shuffle`` (unseeded ``rand()``, the same
each run); wo reads the test in gold order and shuffles sentence i itself with
``random.Random(seed * 1_000_003 + i)``, seed 1.  Both systems see every sentence in an order
that does not give the gold order away, but not in the same order.

Run it (when the machine is quiet; one core; the full run trains ZGen once, then times ~4 decodes
of ~1-4 minutes each per repeat):

    .venv/bin/python bench/zgen_side_by_side.py --zgen-bin ~/zgen-src/bin/ZGen_SR \\
        --workdir ~/.cache/wo-bars/zgen-ewt [--repeats 3]

The first run in a WORKDIR also trains ZGen_SR one pass per type on all of EWT train (estimated
from slices at a few minutes per type on a 2-core Xeon; the models are kept in WORKDIR and reused).
BEAM and PASSES in the environment are passed on to zgen-peer.sh (defaults 64 and 1).  ZGen's
build: ../shared/tools/zgen/README.md.

Without ``--zgen-bin`` (or env ZGEN_BIN), or with a missing binary, it prints
``skipped: no ZGen binary (see ../shared/tools/zgen/README.md)`` and exits 0.

Check the plumbing first with ``--limit N`` (both systems decode only the first N test
sentences; the ZGen side runs in WORKDIR/limit-N on a truncated copy of the test set, reusing
WORKDIR's trained models when they are there, else training on the first ``--train-limit``
train sentences, default 300).  A ``--limit`` run writes its JSON into its own work directory,
not into bench/results/, unless ``--out`` says otherwise.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import lzma
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Optional

import common
from common import cpu_name, loadavg

ROOT = pathlib.Path(common.ROOT)
ZGEN_DIR = ROOT.parent / "shared" / "tools" / "zgen"
TEST_XZ = ROOT / "corpora" / "ud-en-ewt" / "en_ewt-ud-test.conllu.xz"
TRAIN_XZ = ROOT / "corpora" / "ud-en-ewt" / "en_ewt-ud-train.conllu.xz"
DEFAULT_OUT = ROOT / "bench" / "results" / "zgen_side_by_side.json"
SKIP_MSG = "skipped: no ZGen binary (see ../shared/tools/zgen/README.md)"
TYPES = ("none", "full")
BEAM = os.environ.get("BEAM", "64")   # zgen-peer.sh's defaults, passed through its environment
PASSES = os.environ.get("PASSES", "1")


class StepError(RuntimeError):
    """A step failed; the message says which command, its exit status and the tail of its log."""


def log(msg: str) -> None:
    print(f"[side-by-side {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def tail(path: pathlib.Path, n: int = 15) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join("    " + ln for ln in lines[-n:])


def md5_of(path: pathlib.Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_text_any(path: pathlib.Path) -> str:
    return common.read_text(str(path))


def first_sentences(text: str, n: int) -> str:
    """The first n sentences (blank-line separated blocks) of a CoNLL-U text."""
    blocks = [b for b in text.split("\n\n") if b.strip()]
    return "".join(b.strip("\n") + "\n\n" for b in blocks[:n])


# --------------------------------------------------------------------------- /usr/bin/time -v
def parse_time_v(path: pathlib.Path) -> Dict[str, float]:
    """Wall seconds, user+system CPU seconds and max RSS (MiB) from a ``/usr/bin/time -v`` report."""
    rec = common.parse_time_v(path.read_text(encoding="utf-8", errors="replace"))
    if "wall_s" not in rec or "rss_mb" not in rec:
        raise StepError(f"{path}: not a /usr/bin/time -v report:\n{tail(path)}")
    rec["cpu_s"] = rec.get("user_s", 0.0) + rec.get("sys_s", 0.0)
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in rec.items()}


def timed(cmd: List[str], time_file: pathlib.Path, log_file: pathlib.Path, *, cwd=None, env=None,
          ok=(0,)) -> Dict[str, float]:
    """Run ``cmd`` under ``/usr/bin/time -v`` (stdout and stderr to ``log_file``); the time record."""
    la = loadavg()
    full = ["/usr/bin/time", "-v", "-o", str(time_file)] + [str(c) for c in cmd]
    with open(log_file, "w", encoding="utf-8") as lf:
        try:
            rc = subprocess.run(full, cwd=cwd, env=env, stdout=lf, stderr=subprocess.STDOUT).returncode
        except OSError as exc:
            raise StepError(f"cannot run {' '.join(full)}: {exc}") from exc
    if rc not in ok:
        raise StepError(f"exit status {rc}: {' '.join(full)}\n  log {log_file}:\n{tail(log_file)}")
    rec = parse_time_v(time_file)
    rec["load_before"] = la
    return rec


# --------------------------------------------------------------------------- ZGen
def zgen_out_to_lines(out: pathlib.Path, hyp: pathlib.Path) -> int:
    """ZGen_SR's test output (one token per line, FORM first, blank line after each sentence) ->
    one sentence per line, undoing zgen-peer.sh's escapes (U+2017 for '_' in __x__ forms, NBSP
    for a space inside a form).  Returns the number of sentences."""
    sents, cur = [], []
    for ln in out.read_text(encoding="utf-8").splitlines():
        if ln.strip():
            cur.append(ln.split("\t")[0].replace("\u2017", "_").replace("\u00a0", " "))
        elif cur:
            sents.append(cur)
            cur = []
    if cur:
        sents.append(cur)
    hyp.write_text("".join(" ".join(s) + "\n" for s in sents), encoding="utf-8")
    return len(sents)


def run_zgen_peer(script: pathlib.Path, workdir: pathlib.Path, env: Dict[str, str]) -> Dict:
    """Run zgen-peer.sh WORKDIR, echoing its log; parse its last line."""
    cmd = ["bash", str(script), str(workdir)]
    log(f"running {' '.join(cmd)}")
    logf = workdir / "zgen-peer.log"
    with open(logf, "w", encoding="utf-8") as lf:
        try:
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        except OSError as exc:
            raise StepError(f"cannot run {' '.join(cmd)}: {exc}") from exc
        lines = []
        for ln in p.stdout:
            lf.write(ln)
            lf.flush()
            print("  | " + ln.rstrip("\n"), file=sys.stderr, flush=True)
            lines.append(ln.rstrip("\n"))
        rc = p.wait()
    if rc != 0:
        raise StepError(f"zgen-peer.sh failed (exit status {rc}); log {logf}:\n{tail(logf)}")
    last = next((ln for ln in reversed(lines) if ln.startswith("zgen ")), None)
    if last is None:
        raise StepError(f"zgen-peer.sh printed no 'zgen ...' line; log {logf}:\n{tail(logf)}")
    parsed = {}
    for part in last[len("zgen "):].split(";"):
        m = re.fullmatch(r"\s*(\w+): ([0-9.]+) s ([0-9.]+) MB\s*", part)
        if not m:
            raise StepError(f"cannot parse zgen-peer.sh's last line: {last!r}")
        parsed[m.group(1)] = {"wall_s": float(m.group(2)), "rss_mb": float(m.group(3))}
    return {"command": " ".join(cmd), "last_line": last, "parsed": parsed, "log": str(logf)}


def zgen_decode_cmd(zbin: pathlib.Path, w: pathlib.Path, k: str, out: pathlib.Path) -> List[str]:
    """The decode command of zgen-peer.sh (step 3), with its own output file."""
    return [str(zbin), "test", "--type", k, "--beam", BEAM, "--model", str(w / f"model.{k}"),
            "--input", str(w / f"test.{k}.in"), "--posdict", str(w / "posdict"), "--output", str(out)]


# --------------------------------------------------------------------------- wo
def wo_cmd(wo_bin: pathlib.Path, test: pathlib.Path, out: pathlib.Path, k: str) -> List[str]:
    return [str(wo_bin), "linearize", "--input", str(test), "--output", str(out), "--given", k, "--jobs", "1"]


def wo_timed(cmd: List[str], time_file: pathlib.Path, log_file: pathlib.Path) -> Dict:
    """Time one wo run; exit status 1 (some sentences fell back to input order) is kept and flagged."""
    rec = timed(cmd, time_file, log_file, cwd=ROOT, ok=(0, 1))
    text = log_file.read_text(encoding="utf-8", errors="replace").replace("\r", "\n")
    summary = [ln for ln in text.splitlines() if ln.startswith("wo: ")]
    rec["wo_summary"] = summary[-1] if summary else None
    if rec.get("exit_status"):
        rec["warning"] = "wo exited with status 1: some sentences failed (their words in input order)"
        log(f"  warning: {rec['warning']}; see {log_file}")
    return rec


def wo_evaluate(wo_bin: pathlib.Path, hyp: pathlib.Path, ref: pathlib.Path) -> Dict:
    cmd = [str(wo_bin), "evaluate", "--hyp", str(hyp), "--ref", str(ref), "--json"]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        raise StepError(f"exit status {p.returncode}: {' '.join(cmd)}\n{p.stderr.strip()[-2000:]}")
    rec = json.loads(p.stdout.strip().splitlines()[-1])
    rec["command"] = " ".join(cmd)
    return rec


def wo_info(py: pathlib.Path, wo_bin: pathlib.Path) -> Dict:
    info: Dict = {}
    try:
        info["version"] = subprocess.run([str(wo_bin), "--version"], capture_output=True, text=True,
                                         cwd=ROOT).stdout.strip()
        mp = subprocess.run([str(py), "-c", "from wo.model import default_model; print(default_model('dep'))"],
                            capture_output=True, text=True, cwd=ROOT).stdout.strip()
        if mp:
            info["default_model"] = mp
            info["default_model_md5"] = md5_of(pathlib.Path(mp))
        info["git_head"] = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                          cwd=ROOT).stdout.strip()
        info["git_dirty"] = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                                capture_output=True, text=True, cwd=ROOT).stdout.strip())
    except (OSError, ValueError) as exc:
        info["error"] = str(exc)
    return info


# --------------------------------------------------------------------------- main
def same_lines(a: pathlib.Path, b: pathlib.Path) -> bool:
    return a.read_bytes() == b.read_bytes()


def median_rec(runs: List[Dict]) -> Dict:
    out = {"runs": len(runs)}
    for key in ("wall_s", "cpu_s", "rss_mb"):
        vals = [r[key] for r in runs if key in r]
        if vals:
            out[key] = round(statistics.median(vals), 2)
            out[key + "_all"] = vals
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zgen-bin", default=os.environ.get("ZGEN_BIN"),
                    help="the ZGen_SR binary (default: env ZGEN_BIN); without it the run is skipped")
    ap.add_argument("--workdir", default=str(pathlib.Path.home() / ".cache" / "wo-bars" / "zgen-ewt"),
                    help="zgen-peer.sh's WORKDIR (converted data, models, outputs); default %(default)s")
    ap.add_argument("--repeats", type=int, default=1, help="timed runs per system and type (medians); default 1")
    ap.add_argument("--limit", type=int, default=0,
                    help="plumbing check: decode only the first N test sentences with both systems")
    ap.add_argument("--train-limit", type=int, default=0,
                    help="with --limit: train ZGen on the first M train sentences (default 300 when "
                         "WORKDIR has no trained models; 0 = reuse WORKDIR's models)")
    ap.add_argument("--types", nargs="+", default=list(TYPES), choices=TYPES)
    ap.add_argument("--zgen-peer", default=str(ZGEN_DIR / "zgen-peer.sh"), help="default %(default)s")
    ap.add_argument("--wo", default=str(ROOT / ".venv" / "bin" / "wo"), help="the wo command; default %(default)s")
    ap.add_argument("--out", default=None, help=f"JSON output (default {DEFAULT_OUT.relative_to(ROOT)}; "
                                                 "with --limit WORKDIR/limit-N/zgen_side_by_side.json)")
    a = ap.parse_args()

    if not a.zgen_bin or not os.path.isfile(a.zgen_bin) or not os.access(a.zgen_bin, os.X_OK):
        print(SKIP_MSG + (f" ({a.zgen_bin} is not an executable file)" if a.zgen_bin else ""))
        return 0
    try:
        return run(a)
    except StepError as exc:
        print(f"zgen_side_by_side: FAILED: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"zgen_side_by_side: FAILED: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("zgen_side_by_side: interrupted", file=sys.stderr)
        return 130


def run(a) -> int:
    zbin = pathlib.Path(a.zgen_bin).resolve()
    peer = pathlib.Path(a.zgen_peer).resolve()
    wo_bin = pathlib.Path(a.wo)
    py = wo_bin.parent / "python"
    for p, what in ((peer, "zgen-peer.sh"), (wo_bin, "wo"), (pathlib.Path("/usr/bin/time"), "/usr/bin/time")):
        if not p.exists():
            raise StepError(f"{what} not found at {p}" + (" (apt-get install time)" if what == "/usr/bin/time" else ""))
    if a.repeats < 1:
        raise StepError("--repeats must be >= 1")
    base = pathlib.Path(a.workdir).expanduser().resolve()
    base.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, ZGEN_BIN=str(zbin), TYPES=" ".join(a.types), BEAM=BEAM, PASSES=PASSES)
    if py.exists():
        env.setdefault("BLEU_PY", str(py))
    test_for_wo, ref = TEST_XZ, TEST_XZ
    notes = []

    if a.limit:
        # A truncated copy of EWT for zgen-peer.sh (via its EWT variable) and for wo.
        w = base / (f"limit-{a.limit}" + (f"-train-{a.train_limit}" if a.train_limit else ""))
        w.mkdir(parents=True, exist_ok=True)
        ewt = w / "ewt"
        ewt.mkdir(exist_ok=True)
        test_text = first_sentences(read_text_any(TEST_XZ), a.limit)
        (ewt / "en_ewt-ud-test.conllu").write_text(test_text, encoding="utf-8")
        test_for_wo = ref = w / "wo-test.conllu"
        test_for_wo.write_text(test_text, encoding="utf-8")
        have_models = all((base / f"model.{k}").is_file() for k in a.types)
        train_limit = a.train_limit or (0 if have_models else 300)
        key = w / "limit.key"
        if not key.exists() or key.read_text() != f"{a.limit} {train_limit}":
            for old in [w / "prep.done"] + list(w.glob("model.*")) + list(w.glob("time.train.*")):
                old.unlink(missing_ok=True)            # another slice: convert and train afresh
        key.write_text(f"{a.limit} {train_limit}")
        tr = ewt / "en_ewt-ud-train.conllu.xz"
        if tr.is_symlink() or tr.exists():
            tr.unlink()
        if train_limit:
            with lzma.open(tr, "wt", encoding="utf-8") as fh:
                fh.write(first_sentences(read_text_any(TRAIN_XZ), train_limit))
            notes.append(f"--limit run: ZGen trained on the first {train_limit} train sentences (plumbing only)")
        else:
            tr.symlink_to(TRAIN_XZ)
            for k in a.types:
                m = w / f"model.{k}"
                if not m.exists():
                    m.symlink_to(base / f"model.{k}")
            notes.append(f"--limit run: ZGen models reused from {base}")
        env["EWT"] = str(ewt)
        out_json = pathlib.Path(a.out) if a.out else w / "zgen_side_by_side.json"
    else:
        w = base
        train_limit = 0
        out_json = pathlib.Path(a.out) if a.out else DEFAULT_OUT

    trained_before = {k: (w / f"model.{k}").exists() for k in a.types}
    started = datetime.datetime.now(datetime.timezone.utc)
    log(f"CPU {cpu_name()}, {os.cpu_count()} cores, load {loadavg()}; workdir {w}")
    if loadavg() and loadavg()[0] > 0.5:
        log("warning: the machine is not quiet (load average above 0.5); timings will be noisy")

    # ---- round 1: zgen-peer.sh (training if needed, timed decode), then wo -----------------------
    peer_rec = run_zgen_peer(peer, w, env)
    zgen_runs: Dict[str, List[Dict]] = {k: [] for k in a.types}
    wo_runs: Dict[str, List[Dict]] = {k: [] for k in a.types}
    zgen_cmds, wo_cmds = {}, {}
    for k in a.types:
        if k not in peer_rec["parsed"]:
            raise StepError(f"zgen-peer.sh's last line has no '{k}': {peer_rec['last_line']!r}")
        rec = parse_time_v(w / f"time.test.{k}")       # the same run, with CPU seconds and full precision
        m = re.search(rf"decoding EWT test, {k},.*load average before: ([0-9. ]+);", open(peer_rec["log"]).read())
        rec["load_before"] = [float(x) for x in m.group(1).split()] if m else None
        rec["from"] = "zgen-peer.sh"
        rec["last_line_wall_s"] = peer_rec["parsed"][k]["wall_s"]
        rec["last_line_rss_mb"] = peer_rec["parsed"][k]["rss_mb"]
        zgen_runs[k].append(rec)
        zgen_cmds[k] = " ".join(["/usr/bin/time", "-v"] + zgen_decode_cmd(zbin, w, k, w / f"test.{k}.out"))
    for k in a.types:
        out = w / f"wo-test.{k}.txt"
        cmd = wo_cmd(wo_bin, test_for_wo, out, k)
        wo_cmds[k] = " ".join(["/usr/bin/time", "-v"] + cmd)
        log(f"wo {k}: {' '.join(cmd)}")
        rec = wo_timed(cmd, w / f"time.wo.{k}", w / f"log.wo.{k}")
        log(f"  wo {k}: wall {rec['wall_s']} s, CPU {rec['cpu_s']} s, max RSS {rec['rss_mb']:.0f} MB")
        wo_runs[k].append(rec)

    # ---- rounds 2..N: ZGen decode and wo decode, alternating per type ----------------------------
    identical = {"zgen": {k: True for k in a.types}, "wo": {k: True for k in a.types}}
    for r in range(2, a.repeats + 1):
        for k in a.types:
            out = w / f"test.{k}.out.rep{r}"
            log(f"repeat {r}/{a.repeats}: ZGen {k}")
            rec = timed(zgen_decode_cmd(zbin, w, k, out), w / f"time.test.{k}.rep{r}", w / f"log.test.{k}.rep{r}")
            zgen_out_to_lines(out, w / f"ewt-test.{k}.hyp.rep{r}")
            identical["zgen"][k] &= same_lines(w / f"ewt-test.{k}.hyp.rep{r}", w / f"ewt-test.{k}.hyp")
            rec["from"] = "direct decode"
            log(f"  zgen {k}: wall {rec['wall_s']} s, max RSS {rec['rss_mb']:.0f} MB")
            zgen_runs[k].append(rec)
            log(f"repeat {r}/{a.repeats}: wo {k}")
            wout = w / f"wo-test.{k}.txt.rep{r}"
            rec = wo_timed(wo_cmd(wo_bin, test_for_wo, wout, k), w / f"time.wo.{k}.rep{r}", w / f"log.wo.{k}.rep{r}")
            identical["wo"][k] &= same_lines(wout, w / f"wo-test.{k}.txt")
            log(f"  wo {k}: wall {rec['wall_s']} s, max RSS {rec['rss_mb']:.0f} MB")
            wo_runs[k].append(rec)

    # ---- BLEU with wo's scorer -------------------------------------------------------------------
    scores = {}
    for k in a.types:
        zhyp = w / f"ewt-test.{k}.hyp"
        if not zhyp.exists():                            # zgen-peer.sh writes it; convert if not
            zgen_out_to_lines(w / f"test.{k}.out", zhyp)
        scores[k] = {"zgen": wo_evaluate(wo_bin, zhyp, ref), "wo": wo_evaluate(wo_bin, w / f"wo-test.{k}.txt", ref)}
        log(f"BLEU {k}: ZGen {scores[k]['zgen']['bleu']:.2f}, wo {scores[k]['wo']['bleu']:.2f}")

    # ---- the record ------------------------------------------------------------------------------
    per_type = {}
    for k in a.types:
        z, o = median_rec(zgen_runs[k]), median_rec(wo_runs[k])
        per_type[k] = {
            "zgen": {**z, "runs_detail": zgen_runs[k], "command": zgen_cmds[k], "hyp": str(w / f"ewt-test.{k}.hyp"),
                     "bleu": round(scores[k]["zgen"]["bleu"], 2), "scores": scores[k]["zgen"]},
            "wo": {**o, "runs_detail": wo_runs[k], "command": wo_cmds[k], "hyp": str(w / f"wo-test.{k}.txt"),
                   "bleu": round(scores[k]["wo"]["bleu"], 2), "scores": scores[k]["wo"]},
            "ratio_wall_zgen_over_wo": round(z["wall_s"] / o["wall_s"], 3) if o["wall_s"] else None,
            "ratio_rss_zgen_over_wo": round(z["rss_mb"] / o["rss_mb"], 3) if o["rss_mb"] else None,
            "outputs_identical_across_repeats": {"zgen": identical["zgen"][k], "wo": identical["wo"][k]},
        }
    train = {}
    for k in a.types:
        tf = sorted((w / f"model.{k}").resolve().parent.glob(f"time.train.{k}.*"))   # limit runs: WORKDIR's
        train[k] = {"trained_in_this_run": not trained_before[k],
                    "passes": [parse_time_v(t) for t in tf] if tf else [],
                    "model_mb": round((w / f"model.{k}").resolve().stat().st_size / 2**20, 1)
                    if (w / f"model.{k}").exists() else None}
    n_test = sum(1 for _ in open(w / "test.ref.txt", encoding="utf-8")) if (w / "test.ref.txt").exists() else None
    same_test = None
    if (w / "test.conllu").exists():
        same_test = hashlib.md5(read_text_any(ref).encode("utf-8")).hexdigest() == md5_of(w / "test.conllu")
        if not same_test:
            notes.append("WARNING: ZGen's test file (WORKDIR/test.conllu) differs from wo's reference file")
    record = {
        "what": "ZGen_SR vs wo, EWT test, whole process, one job, side by side in one run",
        "date_utc": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "finished_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cpu_model": cpu_name(), "cpus": os.cpu_count(),
        "limit": a.limit or None, "train_limit": train_limit or None, "test_sentences": n_test,
        "repeats": a.repeats,
        "order": "round 1: zgen-peer.sh (ZGen " + ", ".join(a.types) + "), then wo " + ", ".join(a.types)
                 + "; rounds 2..N: per type ZGen then wo",
        "ratio_meaning": "ZGen wall / wo wall (median); above 1 = wo faster",
        "types": per_type,
        "zgen": {"binary": str(zbin), "binary_md5": md5_of(zbin), "beam": int(BEAM), "training_passes": int(PASSES),
                 "workdir": str(w), "training": train, "zgen_peer": peer_rec,
                 "train_command": f"{zbin} learn --type T --beam {BEAM} --model {w}/model.T --reference "
                                  f"{w}/train.ref --input {w}/train.T.in --posdict {w}/posdict"},
        "wo": wo_info(py, wo_bin),
        "references": str(ref),
        "same_test_text_for_both": same_test,
        "bleu": "wo evaluate --json (sacrebleu corpus BLEU, tokenize none, case-sensitive) on both outputs",
        "shuffle": {
            "zgen": "input test.T.in made by shuffle_conllu.py with seed 11: one random.Random(11) stream over "
                    "the test file in order (a sentence's permutation depends on the sentences before it); "
                    "ZGen_SR test mode then re-shuffles each instance with std::random_shuffle (unseeded "
                    "rand(), identical every run)",
            "wo": "wo linearize reads the gold-order test and shuffles sentence i with "
                  "random.Random(seed * 1_000_003 + i), seed 1 (its default); the seed-11 file is not used",
            "same_permutations": False,
        },
        "notes": notes,
        "command": " ".join([sys.executable] + sys.argv),
    }
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    for k in a.types:
        t = per_type[k]
        print(f"{k}: ZGen {t['zgen']['wall_s']} s {t['zgen']['rss_mb']:.0f} MB BLEU {t['zgen']['bleu']}; "
              f"wo {t['wo']['wall_s']} s {t['wo']['rss_mb']:.0f} MB BLEU {t['wo']['bleu']}; "
              f"ZGen/wo wall {t['ratio_wall_zgen_over_wo']}")
    print(f"written {out_json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
