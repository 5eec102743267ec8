"""The CCG model's bag search (words without POS): GYRO's n-best under the large 4-gram, each
string parsed by the CCG model with its order fixed, reranked by log10 p + w F.  Chooses w and
the number of strings on EWT-CCG dev.

``dump`` decodes every dev bag (forms only, shuffled per sentence with seed 1 as
``bench/ccg_eval.py`` does) with GYRO as ``corpora/models/wo-ewt-ccg-lm.decode.json`` sets it
(row cap 500, join filter 0.5) and parses its ``--nbest`` best strings with the CCG model
(``--budget`` pops per word), keeping log10 p and F per string; ``grid`` then scores each
(strings, w) by corpus BLEU on the dump and checks the choice by 2-fold cross-validation.
Writes bench/results/ccg/bag.dev.json.

    python bench/ccg_bag.py dump --out W/ccg-dev.pkl          # ~2 min on 2 cores
    python bench/ccg_bag.py grid --dump W/ccg-dev.pkl
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
from common import bleu, write_record  # noqa: E402  (bench/ is on sys.path)

MODELS = os.path.join(ROOT, "corpora", "models")
OUT = os.path.join(HERE, "results", "ccg", "bag.dev.json")
WEIGHTS = (0.0, 0.1, 0.3, 0.5, 0.8, 1.2, 2.0, 3.0, 5.0)


def _derivations(split: str):
    from wo.ccg import read_auto

    return [d for d in read_auto(os.path.join(ROOT, "corpora", "ccg-en", f"{split}.auto.xz")) if d.error is None]


def _work(idx, split: str, nbest: int, budget: float):
    """Candidates of the bags ``idx``: {i: [(string, {"lm": log10 p, "F": CCG F or None})]}."""
    from wo.ccg.linearizer import Linearizer
    from wo.ccg.train import scrambled
    from wo.gyro.realize import GyroRealizer
    from wo.lm.model import LanguageModel

    lin = Linearizer.load(os.path.join(MODELS, "wo-ewt-ccg-lm.wo"), bag_search="ccg")
    with open(os.path.join(MODELS, "wo-ewt-ccg-lm.decode.json"), encoding="utf-8") as f:
        spec = json.load(f)["bag"]
    g = GyroRealizer(None, LanguageModel.shared(os.path.join(MODELS, spec["lm"])), dep=lin, dep_own=False,
                     row_cap=spec["row_cap"], join_slack=spec["join_slack"], dep_nbest=nbest, dep_budget=budget)
    ds = _derivations(split)
    rows, cur = {}, {}

    def record(bag, cands):          # in place of the reranking: keep every candidate's scores
        cur["rows"] = [(" ".join(t), {"lm": g.lm.score(t), "F": lin.parse(t, budget_factor=budget).parsed_score()})
                       for t in cands]
        return [(t, 0.0) for t in cands], None, 0

    g._dep_rerank = record
    for i in idx:
        forms, _, _ = scrambled(ds[i], 1, i)
        cur["rows"] = []
        g.realize(list(forms))
        rows[i] = cur["rows"]
    return rows


def dump(out: str, split: str, nbest: int, budget: float) -> None:
    from joblib import Parallel, delayed

    n = len(_derivations(split))
    t0 = time.perf_counter()
    parts = Parallel(n_jobs=2)(delayed(_work)(list(range(k, n, 8)), split, nbest, budget) for k in range(8))
    rows = {}
    for p in parts:
        rows.update(p)
    with open(out, "wb") as fh:
        pickle.dump({"split": split, "nbest": nbest, "budget": budget, "rows": [rows[i] for i in range(n)],
                     "refs": [" ".join(d.words) for d in _derivations(split)]}, fh)
    print(f"{n} bags, {time.perf_counter() - t0:.0f} s -> {out}")


def grid(path: str) -> dict:
    with open(path, "rb") as fh:
        d = pickle.load(fh)
    rows, refs = d["rows"], d["refs"]

    def pick(w, nb, idx):
        out = []
        for i in idx:
            r = rows[i][:nb]
            if not r:                # a one-word bag: GYRO builds no candidate list
                out.append(refs[i])
                continue
            ok = [(round(f["lm"] + w * f["F"], 6), -j) for j, (_, f) in enumerate(r) if f["F"] is not None]
            out.append(r[-max(ok)[1]][0] if ok else r[0][0])
        return out

    def score(w, nb, idx):
        return round(bleu(pick(w, nb, idx), [refs[i] for i in idx]).bleu, 2)

    every = list(range(len(rows)))
    specs = [(nb, w) for nb in sorted({min(10, d["nbest"]), d["nbest"]}) for w in WEIGHTS]
    full = {f"{nb} strings, w {w:g}": score(w, nb, every) for nb, w in specs}
    best = max(specs, key=lambda s: full[f"{s[0]} strings, w {s[1]:g}"])
    perm = np.random.RandomState(0).permutation(len(rows))
    halves = (sorted(perm[: len(rows) // 2]), sorted(perm[len(rows) // 2:]))
    cv = []
    for a, b in (halves, halves[::-1]):
        k = max(specs, key=lambda s: score(s[1], s[0], a))
        cv.append({"tuned": score(k[1], k[0], a), "held_out": score(k[1], k[0], b), "strings": k[0], "w": k[1]})
    parsed = [sum(f["F"] is not None for _, f in r) / len(r) for r in rows if r]
    rec = {"split": d["split"], "bags": len(rows), "gyro_alone": score(0.0, 1, every),
           "parsed_share": round(float(np.mean(parsed)), 3), "budget_pops_per_word": d["budget"], "grid": full,
           "best": {"strings": best[0], "w": best[1], "bleu": full[f"{best[0]} strings, w {best[1]:g}"]},
           "two_fold_cv": cv, "signature": bleu(refs[:1], refs[:1]).signature}
    write_record(OUT, rec)
    print(json.dumps({k: rec[k] for k in ("gyro_alone", "parsed_share", "best", "two_fold_cv")}, indent=1))
    return rec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--out", required=True)
    d.add_argument("--split", default="dev", choices=["dev", "train"])
    d.add_argument("--nbest", type=int, default=20)
    d.add_argument("--budget", type=float, default=100.0, help="pops per word of each parse")
    g = sub.add_parser("grid")
    g.add_argument("--dump", required=True)
    a = ap.parse_args()
    if a.cmd == "dump":
        dump(a.out, a.split, a.nbest, a.budget)
    else:
        grid(a.dump)


if __name__ == "__main__":
    main()
