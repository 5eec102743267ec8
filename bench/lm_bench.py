"""LM benchmarks (issue: n-gram language model): estimation time and peak memory for orders 4
and 5 on ../shared/corpora/text-en plus EWT train; queries per second inside Cython; whole-file
scoring against the ``kenlm`` module's ``score()`` on the same ARPA and text, side by side.

Usage: python bench/lm_bench.py [--orders 4 5] [--text-dir ../shared/corpora/text-en]
Writes bench/results/lm.json and builds bench/results/lm/*.{arpa.gz,wolm} (not committed).
Every estimation runs in a fresh process so peak RSS is its own.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results"


def ewt_text(split: str) -> str:
    """EWT forms of a split, one sentence per line, cached under bench/results/lm/."""
    p = OUT / "lm" / f"ewt-{split}.txt"
    if not p.exists():
        sys.path.insert(0, str(ROOT))
        from wo.io import read_conllu

        sents = read_conllu(str(ROOT / f"corpora/ud-en-ewt/en_ewt-ud-{split}.conllu.xz"))
        p.write_text("\n".join(" ".join(s.forms) for s in sents) + "\n", encoding="utf-8")
    return str(p)


def timed(cmd):
    t = time.perf_counter()
    r = subprocess.run(["/usr/bin/env", "python3", "-c",
                        "import resource,subprocess,sys; r=subprocess.run(sys.argv[1:]).returncode; "
                        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r)"] + cmd,
                       capture_output=True, text=True)
    secs = time.perf_counter() - t
    rss, rc = r.stdout.split()
    if rc != "0":
        raise SystemExit(r.stderr)
    return secs, int(rss) / 1024, r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--orders", type=int, nargs="+", default=[4, 5])
    ap.add_argument("--text-dir", default=str(ROOT.parent / "shared/corpora/text-en"))
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    (OUT / "lm").mkdir(parents=True, exist_ok=True)
    texts = sorted(str(p) for p in pathlib.Path(a.text_dir).glob("*.txt*"))
    texts.append(ewt_text("train"))
    dev = ewt_text("dev")
    wo = str(pathlib.Path(sys.executable).parent / "wo")
    res = {"texts": [os.path.basename(t) for t in texts], "orders": {}}
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from wo.lm import LanguageModel

    lines = open(dev, encoding="utf-8").read().splitlines()
    for order in a.orders:
        arpa = str(OUT / "lm" / f"text-en+ewt.o{order}.arpa.gz")
        binary = str(OUT / "lm" / f"text-en+ewt.o{order}.wolm")
        secs, rss, log = timed([wo, "lm", "train", "--text", *texts, "--order", str(order), "--out", binary,
                                "--jobs", str(a.jobs)])
        entry = {"train_seconds": round(secs, 1), "train_peak_rss_mb": round(rss), "log": log.strip().splitlines()[-2:],
                 "binary_mb": round(os.path.getsize(binary) / 2 ** 20, 1)}
        secs, rss, _ = timed([wo, "lm", "train", "--text", *texts, "--order", str(order), "--out", arpa,
                              "--jobs", str(a.jobs), "--quiet"])
        entry.update(arpa_seconds=round(secs, 1), arpa_mb=round(os.path.getsize(arpa) / 2 ** 20, 1))
        lm = LanguageModel.load(binary)
        ids, starts = [], [0]
        for ln in lines:
            ids.extend(lm.word_ids(ln.split()))
            starts.append(len(ids))
        ids = np.asarray(ids, dtype=np.int32)
        starts = np.asarray(starts, dtype=np.int64)
        qps = []
        for _ in range(5):
            q, s, _ = lm.core.time_queries(ids, starts, 20)
            qps.append(q / s)
        entry["queries_per_second_median"] = round(sorted(qps)[2])
        per, cs = lm.score_lines(lines)
        entry["dev_perplexity"] = round(cs.perplexity, 2)
        try:
            import kenlm
        except ImportError:
            entry["kenlm"] = "kenlm module not installed"
        else:
            ref = kenlm.Model(arpa)

            def ours():
                with open(dev, "rb") as fh:
                    return lm.score_bytes(fh.read())

            def theirs():
                with open(dev, encoding="utf-8") as fh:
                    return sum(ref.score(ln.rstrip("\n"), bos=True, eos=True) for ln in fh)

            to, tt = [], []
            for _ in range(9):               # alternated, medians
                t = time.perf_counter()
                ours()
                to.append(time.perf_counter() - t)
                t = time.perf_counter()
                theirs()
                tt.append(time.perf_counter() - t)
            kp = [ref.score(ln, bos=True, eos=True) for ln in lines]
            mo, mt = sorted(to)[4], sorted(tt)[4]
            entry["kenlm"] = {"whole_file_wo_seconds_median": round(mo, 5),
                              "whole_file_kenlm_score_seconds_median": round(mt, 5),
                              "speed_ratio_wo_over_kenlm": round(mt / mo, 2),
                              "max_abs_sentence_diff": float(np.max(np.abs(np.asarray(kp) - per)))}
        res["orders"][str(order)] = entry
        print(json.dumps({order: entry}), flush=True)
    (OUT / "lm.json").write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
