"""GYRO's phrase index at full size (issue 12): build time, peak memory and size for the LM
text (../shared/corpora/text-en, every ``*.txt``/``*.txt.xz`` file) plus EWT train forms, and
the look-up time per bag (EWT test bags: whole sentences and sub-sentences of at most 20 tokens,
as de Gispert et al. 2014 split theirs), with the number of phrases found per bag size.

    python bench/gyro_index.py                 # build (~2-4 min, ~2-3 GB peak) and time
    python bench/gyro_index.py --skip-build    # time the look-ups of an existing index

Writes bench/results/gyro/index.json; the index itself (bench/results/gyro/text-en+ewt.woidx)
is a derived artefact and is not committed.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys
import time

import common

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
OUT = os.path.join(HERE, "results", "gyro")
TEXT_EN = os.path.normpath(os.path.join(ROOT, "..", "shared", "corpora", "text-en"))
EWT = os.path.join(ROOT, "corpora", "ud-en-ewt")


def subsentences(toks, k=20):
    """Split a token list into consecutive pieces of at most k tokens (the paper's split)."""
    return [toks[i:i + k] for i in range(0, len(toks), k)]


def run_timed(cmd):
    """Run cmd as a timed child process (``common.run_timed``).  Returns (``common.Run``, wall
    seconds, peak RSS MB or None when the run failed); the GYRO bench scripts time every
    subprocess so."""
    r = common.run_timed(cmd, cwd=None, ok=None)
    return r, r.wall_s, (r.rss_mb if r.returncode == 0 else None)


def main(argv=None) -> int:
    from wo.io import read_conllu

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--max-n", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    idx_path = os.path.join(OUT, "text-en+ewt.woidx")
    res_path = os.path.join(OUT, "index.json")
    rec = json.load(open(res_path)) if os.path.exists(res_path) else {}
    if not a.skip_build:
        ewt_txt = os.path.join(OUT, "ewt-train.txt")
        with open(ewt_txt, "w", encoding="utf-8") as fh:
            for s in read_conllu(os.path.join(EWT, "en_ewt-ud-train.conllu.xz")):
                fh.write(" ".join(s.forms) + "\n")
        texts = sorted(glob.glob(os.path.join(TEXT_EN, "*.txt")) + glob.glob(os.path.join(TEXT_EN, "*.txt.xz")))
        cmd = [os.path.join(ROOT, ".venv", "bin", "wo"), "gyro", "index", "--text",
               *texts, ewt_txt, "--out", idx_path, "--max-n", str(a.max_n), "--jobs", str(a.jobs)]
        p, wall, rss = run_timed(cmd)
        if p.returncode != 0:
            print(p.stderr, file=sys.stderr)
            return 1
        rec["build"] = {"command": " ".join(cmd), "wall_seconds": round(wall, 1), "peak_rss_mb": round(rss),
                        "bytes": os.path.getsize(idx_path), "sources": [os.path.basename(t) for t in texts] +
                        ["EWT train forms"], "log": p.stderr.strip()}
        print(json.dumps(rec["build"]))
    from wo.gyro import PhraseIndex

    t0 = time.perf_counter()
    idx = PhraseIndex.load(idx_path)
    rec["load_seconds"] = round(time.perf_counter() - t0, 2)
    rec["header"] = {k: idx.header[k] for k in ("max_n", "ngrams", "vocab_size", "text")}
    test = [list(s.forms) for s in read_conllu(os.path.join(EWT, "en_ewt-ud-test.conllu.xz"))]
    for name, bags in (("ewt-test whole sentences", test),
                       ("ewt-test sub-sentences <= 20", [p for t in test for p in subsentences(t)])):
        times, found, by_size = [], [], {}
        for b in bags:
            t0 = time.perf_counter()
            ph = idx.lookup(b)
            times.append(time.perf_counter() - t0)
            found.append(len(ph))
            by_size.setdefault(len(b), []).append(len(ph))
        rec[name] = {"bags": len(bags), "mean_ms": round(1e3 * statistics.mean(times), 3),
                     "median_ms": round(1e3 * statistics.median(times), 3),
                     "max_ms": round(1e3 * max(times), 3),
                     "phrases_mean": round(statistics.mean(found), 1),
                     "phrases_by_bag_size": {k: round(statistics.mean(v), 1) for k, v in sorted(by_size.items())
                                             if k in (5, 10, 15, 20, 25, 30, 40)}}
        print(name, json.dumps(rec[name]))
    with open(res_path, "w") as fh:
        json.dump(rec, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
