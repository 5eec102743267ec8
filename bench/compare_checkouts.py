"""Whole-process decoding of EWT test by two checkouts of wo, side by side in one run.

Each checkout is given by its ``wo`` executable (e.g. ``old/.venv/bin/wo``).  For each task
(bags, full trees, SR-style T1) the two are run alternately ``--repeats`` times on one job; the
report gives median wall seconds, peak RSS (MB) of the process tree, the new/old time ratio,
and whether the outputs are byte-identical.  Writes JSON to ``--out`` (default
bench/results/compare_checkouts.json).  Used for the core split (issue 9): a refactor must not
change outputs or speed.
"""
import argparse
import filecmp
import json
import pathlib
import statistics
import subprocess
import tempfile

from common import ROOT, cpu_name, run_timed, write_record

ROOT = pathlib.Path(ROOT)
TEST = ROOT / "corpora/ud-en-ewt/en_ewt-ud-test.conllu.xz"


def run(cmd):
    """Wall seconds and peak RSS (MB) of one command, measured as a whole child process."""
    r = run_timed(cmd, cwd=None)
    return r.wall_s, r.rss_mb


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--old", required=True, help="wo executable of the reference checkout")
    ap.add_argument("--new", required=True, help="wo executable of the checkout under test")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--tasks", default="bag,full,sr")
    ap.add_argument("--out", default=str(ROOT / "bench/results/compare_checkouts.json"))
    a = ap.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="wo-cmp-"))
    t1 = tmp / "test.t1"
    subprocess.run([a.new, "sr", "make-input", "--ud", str(TEST), "--out", str(t1), "--seed", "1"],
                   check=True, capture_output=True)
    dep = str(ROOT / "corpora/models/wo-ewt-dep.wo")
    sr = str(ROOT / "corpora/models/wo-ewt-sr.wo")
    tasks = {
        "bag": lambda wo, o: [wo, "linearize", "--model", dep, "--input", str(TEST), "--output", o,
                             "--given", "none", "--jobs", "1", "--quiet"],
        "full": lambda wo, o: [wo, "linearize", "--model", dep, "--input", str(TEST), "--output", o,
                              "--given", "full", "--jobs", "1", "--quiet"],
        "sr": lambda wo, o: [wo, "sr", "realize", "--model", sr, "--input", str(t1), "--output", o,
                            "--jobs", "1", "--quiet"],
    }
    report = {"cpu": cpu_name(), "repeats": a.repeats, "tasks": {}}
    for name in a.tasks.split(","):
        times = {"old": [], "new": []}
        rss = {"old": [], "new": []}
        outs = {}
        for r in range(a.repeats):
            for who in (("old", "new") if r % 2 == 0 else ("new", "old")):
                o = str(tmp / f"{name}.{who}.txt")
                secs, mb = run(tasks[name](getattr(a, who), o))
                times[who].append(secs)
                rss[who].append(mb)
                outs[who] = o
        same = filecmp.cmp(outs["old"], outs["new"], shallow=False)
        if name == "sr":
            same = same and filecmp.cmp(outs["old"] + ".tok", outs["new"] + ".tok", shallow=False)
        mo, mn = statistics.median(times["old"]), statistics.median(times["new"])
        report["tasks"][name] = {"old_seconds": [round(t, 2) for t in times["old"]],
                                 "new_seconds": [round(t, 2) for t in times["new"]],
                                 "old_median": round(mo, 2), "new_median": round(mn, 2),
                                 "new_over_old": round(mn / mo, 3),
                                 "old_peak_rss_mb": round(max(rss["old"])), "new_peak_rss_mb": round(max(rss["new"])),
                                 "identical_outputs": same}
        print(json.dumps({name: report["tasks"][name]}), flush=True)
    write_record(a.out, report)


if __name__ == "__main__":
    main()
