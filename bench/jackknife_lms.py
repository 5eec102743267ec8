"""Jackknifed n-gram LMs for training with the LM (issue 10).

An LM that contains the training sentences scores their gold n-grams far better than it
will score any test sentence, so the large-margin learner gives the LM features more
weight than held-out text deserves.  The usual cure (as for supertaggers in CCG parsing) is
jackknifing: cut the training treebank into K contiguous blocks and train on block k with
an LM estimated from the LM text plus the other K-1 blocks.  The model is saved with the LM
of all the text (``all.wolm``), which is what decoding uses.

    python bench/jackknife_lms.py --text T1 [T2 ...] --train corpora/ud-en-ewt/en_ewt-ud-train.conllu.xz \\
        --folds 5 --order 4 --prune 0 1 1 --out-dir out/lm-folds

writes out-dir/all.wolm and out-dir/fold{k}.wolm (k = 0..K-1) and prints seconds per LM.
Block k of N sentences is [k*N//K, (k+1)*N//K), the rule ``wo dep train --lm-folds`` uses.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def main() -> int:
    from wo.io import read_conllu
    from wo.lm.estimation import train
    from wo.lm.model import save_tables

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--text", nargs="+", required=True, help="LM text besides the treebank")
    ap.add_argument("--train", required=True, help="training CoNLL-U whose forms join the LM text")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--order", type=int, default=4)
    ap.add_argument("--prune", type=int, nargs="*", default=None)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--only-all", action="store_true", help="build all.wolm only")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    sents = [" ".join(s.forms) + "\n" for s in read_conllu(a.train)]
    N, K = len(sents), a.folds
    jobs = [("all", sents)]
    if not a.only_all:
        for k in range(K):
            lo, hi = k * N // K, (k + 1) * N // K
            jobs.append((f"fold{k}", sents[:lo] + sents[hi:]))
    rec = {}
    for name, lines in jobs:
        txt = os.path.join(a.out_dir, f"{name}.treebank.txt")
        with open(txt, "w", encoding="utf-8") as fh:
            fh.writelines(lines)
        t0 = time.perf_counter()
        t = train(list(a.text) + [txt], a.order, prune=a.prune, log=lambda m: None)
        save_tables(t, os.path.join(a.out_dir, f"{name}.wolm"))
        os.remove(txt)
        rec[name] = {"seconds": round(time.perf_counter() - t0, 1), "ngrams": t.counts()}
        print(name, rec[name], file=sys.stderr, flush=True)
    print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
