"""The derived artefacts of the GYRO evaluation (issue 12), built from ../shared/corpora/text-en
(every ``*.txt``/``*.txt.xz``) plus the forms of EWT train -- never a dev or test sentence:

* ``--set ewt``: the LMs beside bench/gyro_index.py's phrase index: ``text-en+ewt.o4.wolm`` (the
  parsing LM) and ``text-en+ewt.o5.wolm`` (the rescoring LM), interpolated modified Kneser-Ney,
  unpruned;
* ``--set wsj``: the same three artefacts (index, 4-gram, 5-gram) under ``wsj/``, from the same
  text with every line equal to a sentence of the WSJ sample (../shared/corpora/ptb-sample, the
  WSJ test set of ``bench/gyro_eval.py --set wsj20``) removed.

    python bench/gyro_data.py --set ewt     # ~2 min, LMs only (the index: bench/gyro_index.py)
    python bench/gyro_data.py --set wsj     # ~3 min

Build times and peak memory go to bench/results/gyro/data.<set>.json; the artefacts are not
committed (hundreds of MB).
"""
from __future__ import annotations

import argparse
import glob
import json
import lzma
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
OUT = os.path.join(HERE, "results", "gyro")
from common import run_timed  # noqa: E402  (bench/ is on sys.path)

TEXT_EN = os.path.normpath(os.path.join(ROOT, "..", "shared", "corpora", "text-en"))
WSJ = os.path.normpath(os.path.join(ROOT, "..", "shared", "corpora", "ptb-sample", "wsj_sample.tok.txt"))
WO = os.path.join(ROOT, ".venv", "bin", "wo")


def timed(cmd):
    """Run cmd as a timed child process; returns (wall seconds, peak RSS MB), exits on failure."""
    r = run_timed(cmd, cwd=None)
    return round(r.wall_s, 1), round(r.rss_mb)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", required=True, choices=["ewt", "wsj"])
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    ewt_txt = os.path.join(OUT, "ewt-train.txt")
    if not os.path.exists(ewt_txt):
        raise SystemExit("run python bench/gyro_index.py first (it writes ewt-train.txt and the index)")
    texts = sorted(glob.glob(os.path.join(TEXT_EN, "*.txt")) + glob.glob(os.path.join(TEXT_EN, "*.txt.xz"))) + [ewt_txt]
    rec = {"sources": [os.path.basename(t) for t in texts]}
    if a.set == "ewt":
        out = OUT
    else:
        out = os.path.join(OUT, "wsj")
        os.makedirs(out, exist_ok=True)
        with open(WSJ, encoding="utf-8") as fh:
            test = {ln.strip() for ln in fh if ln.strip()}
        filtered, removed = [], 0
        for t in texts:
            dst = os.path.join(out, os.path.basename(t).replace(".xz", ""))
            opener = lzma.open if t.endswith(".xz") else open
            with opener(t, "rt", encoding="utf-8", errors="replace") as src, open(dst, "w", encoding="utf-8") as fo:
                for ln in src:
                    if ln.strip() in test:
                        removed += 1
                    else:
                        fo.write(ln)
            filtered.append(dst)
        texts = filtered
        rec["wsj_lines_removed"] = removed
        print(f"removed {removed} lines equal to WSJ-sample sentences")
        cmd = [WO, "gyro", "index", "--text", *texts, "--out", os.path.join(out, "index.woidx"),
               "--max-n", "5", "--jobs", str(a.jobs), "--quiet"]
        rec["index"] = dict(zip(("wall_seconds", "peak_rss_mb"), timed(cmd)))
        rec["index"]["bytes"] = os.path.getsize(os.path.join(out, "index.woidx"))
    for order in (4, 5):
        path = os.path.join(out, f"text-en+ewt.o{order}.wolm" if a.set == "ewt" else f"o{order}.wolm")
        cmd = [WO, "lm", "train", "--text", *texts, "--order", str(order), "--out", path, "--jobs", str(a.jobs)]
        w, r = timed(cmd)
        rec[f"o{order}"] = {"path": os.path.relpath(path, ROOT), "wall_seconds": w, "peak_rss_mb": r,
                            "bytes": os.path.getsize(path)}
        print(order, rec[f"o{order}"])
    with open(os.path.join(OUT, f"data.{a.set}.json"), "w") as fh:
        json.dump(rec, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
