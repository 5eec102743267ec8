"""Benchmarks of the core engine (issue 2 figures).  Not tests: numbers go to bench/results/.

Each decoding run is a separate ``wo linearize`` process, so times include start-up and model
loading (as the ZGen_SR figures do) and peak RSS is the child's ``ru_maxrss``.

    python bench/run.py [--quick] [--model M] [--jobs 1]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EWT = os.path.join(ROOT, "corpora", "ud-en-ewt")
RES = os.path.join(ROOT, "bench", "results")


def cpu_model():
    try:
        for ln in open("/proc/cpuinfo"):
            if ln.startswith("model name"):
                return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def run_linearize(model, src, out, given, extra=()):
    """Run ``wo linearize`` in a child process; return (wall seconds, peak RSS MB, rows)."""
    cmd = [sys.executable, "-m", "wo.cli", "linearize", "--model", model, "--input", src, "--output", out,
           "--given", given, "--format", "jsonl", "--quiet", *extra]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"wo linearize failed ({status}): {' '.join(cmd)}")
    rows = [json.loads(x) for x in open(out, encoding="utf-8")]
    return wall, ru.ru_maxrss / 1024.0, rows


def score_rows(rows, ref):
    sys.path.insert(0, ROOT)
    from wo.data import read_conllu
    from wo.evaluate import score

    refs = [s.text() for s in read_conllu(ref)]
    return score([" ".join(r["tokens"]) for r in rows], refs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "corpora", "models", "wo-ewt-dep.wo"))
    ap.add_argument("--quick", action="store_true", help="dev only, fewer cells")
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument("--grid", action="store_true", help="Table-7 grid on dev (9 cells)")
    ap.add_argument("--jobs-speedup", action="store_true", help="dev bags with --jobs 1 vs 2")
    ap.add_argument("--skip-core", action="store_true", help="skip the test-set bag/full runs")
    args = ap.parse_args()
    os.makedirs(RES, exist_ok=True)
    split = "dev" if args.quick else args.split
    src = os.path.join(EWT, f"en_ewt-ud-{split}.conllu.xz")
    summary = {"cpu": cpu_model(), "split": split, "model": os.path.relpath(args.model, ROOT),
               "model_bytes": os.path.getsize(args.model)}
    sys.path.insert(0, ROOT)
    from wo.model import Model

    head = Model.load(args.model).header
    eps = head.get("training", {}).get("epochs", [])
    summary["epoch_seconds"] = [e["seconds"] for e in eps]
    for given, name in (() if args.skip_core else (("none", "bag"), ("full", "full"))):
        out = os.path.join(RES, f"ewt-{split}.{name}.jsonl")
        wall, rss, rows = run_linearize(args.model, src, out, given)
        sc = score_rows(rows, src)
        dec = sum(r["seconds"] for r in rows)
        edges = sum(r["edges"] for r in rows)
        st = {}
        for r in rows:
            st[r["status"]] = st.get(r["status"], 0) + 1
        summary[name] = {"bleu": round(sc.bleu, 2), "signature": sc.signature, "exact": round(sc.exact, 2),
                         "sentences": len(rows), "process_seconds": round(wall, 2),
                         "seconds_per_sentence": round(wall / len(rows), 4),
                         "decode_seconds_per_sentence": round(dec / len(rows), 4),
                         "edges_per_second": round(edges / dec), "peak_rss_mb": round(rss, 1),
                         "status": st}
        print(name, json.dumps(summary[name]), flush=True)
    if args.grid:
        dev = os.path.join(EWT, "en_ewt-ud-dev.conllu.xz")
        grid = {}
        for pname, pshare in (("no", None), ("50%", 0.5), ("all", 1.0)):
            for hname, hshare in (("no", None), ("50%", 0.5), ("all", 1.0)):
                given = {(False, False): "none", (True, False): "pos", (False, True): "heads",
                         (True, True): "full"}[(pshare is not None, hshare is not None)]
                extra = ["--reveal-pos", str(pshare or 1.0), "--reveal-heads", str(hshare or 1.0)]
                out = os.path.join(RES, f"grid.{given}.{pname}.{hname}.jsonl")
                _, _, rows = run_linearize(args.model, dev, out, given, extra)
                grid[f"POS {pname} / heads {hname}"] = round(score_rows(rows, dev).bleu, 2)
                print(f"POS {pname} / heads {hname}", grid[f"POS {pname} / heads {hname}"], flush=True)
        summary["table7_dev_bleu"] = grid
    if args.jobs_speedup:
        dev = os.path.join(EWT, "en_ewt-ud-dev.conllu.xz")
        times = {}
        for jobs in (1, 2, 1, 2, 1, 2):
            out = os.path.join(RES, f"jobs{jobs}.jsonl")
            wall, _, rows = run_linearize(args.model, dev, out, "none", ["--jobs", str(jobs)])
            times.setdefault(jobs, []).append(wall)
            print(f"jobs {jobs}: {wall:.2f}s", flush=True)
        a = open(os.path.join(RES, "jobs1.jsonl")).read()
        b = open(os.path.join(RES, "jobs2.jsonl")).read()
        strip = lambda t: [{k: v for k, v in json.loads(x).items() if k != "seconds"} for x in t.splitlines()]
        med = lambda xs: sorted(xs)[len(xs) // 2]
        summary["jobs2_speedup"] = round(med(times[1]) / med(times[2]), 3)
        summary["jobs_seconds"] = {str(k): v for k, v in times.items()}
        summary["jobs_outputs_identical"] = strip(a) == strip(b)
        print("jobs2_speedup", summary["jobs2_speedup"], "identical", summary["jobs_outputs_identical"])
    path = os.path.join(RES, "summary.json")
    old = {}
    if os.path.exists(path):
        old = json.load(open(path))
    old.update(summary)
    json.dump(old, open(path, "w"), indent=1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
