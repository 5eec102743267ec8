"""Bags of words: GYRO's n-best (the n-gram LM's search) reranked with the dependency model
(issue 10; the "+depLM" idea of de Gispert, Tomalin & Byrne 2014, section 5, with wo's own
syntax model in place of theirs).

Every candidate of a bag -- GYRO's K best strings and the dependency system's own output -- is
parsed by the dependency model with its order fixed (``Linearizer.parse``: the same best-first
search, edges combine only when adjacent), which gives the model's score of that string and its
tree.  The output is the candidate with the best

    log10 p_LM5(string) + lam * F(string)        F = the model's scaled score x (2n - 1)

with ``lam`` chosen on EWT dev (``--lams``); ``--lam`` fixes it for test.

    python bench/bag_rerank.py --split dev  --work W --k 20              # writes the lam grid
    python bench/bag_rerank.py --split test --work W --k 20 --lam 0.3    # decode test once

Inputs are EWT dev/test bags scrambled per sentence with seed 1 as ``wo linearize`` does; the
LMs are ``bench/gyro_data.py --set ewt``'s (text-en + EWT train: never dev or test).  Results go
to bench/results/lm/bag-rerank.<split>.json; BLEU is sacrebleu's as ``wo evaluate`` computes it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
EWT = os.path.join(ROOT, "corpora", "ud-en-ewt")
GY = os.path.join(HERE, "results", "gyro")
from common import WO, Stopwatch, bleu, oracle, run_timed, write_record  # noqa: E402


def run(cmd):
    """Wall seconds of ``cmd`` as a whole child process (exit 0 or 1, else SystemExit)."""
    return run_timed(cmd, ok=(0, 1)).wall_s


def bags(split, seed, path):
    """Write the scrambled bags (forms only) of EWT ``split``; returns the references (token lists)."""
    from wo.io import read_conllu
    from wo.io.trees import permutation

    refs = [list(s.forms) for s in read_conllu(os.path.join(EWT, f"en_ewt-ud-{split}.conllu.xz"))]
    with open(path, "w", encoding="utf-8") as fh:
        for i, r in enumerate(refs):
            fh.write(" ".join(r[j] for j in permutation(len(r), seed, i)) + "\n")
    return refs


def parse_chunk(model, lm5, items):
    """items: list of (bag index, list of candidate token lists) -> list of (index, [(F, lm5), ...])."""
    from wo.dep.linearizer import Linearizer
    from wo.lm import LanguageModel

    lin = Linearizer.load(model)
    lm = LanguageModel.load(lm5)
    out = []
    for i, cands in items:
        row = []
        for c in cands:
            f = lin.parse(c).parsed_score()
            row.append((f if f is not None else float("-inf"), lm.score(c)))
        out.append((i, row))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", required=True, choices=["dev", "test"])
    ap.add_argument("--work", required=True, help="directory for the intermediate files")
    ap.add_argument("--model", default=os.path.join(ROOT, "corpora", "models", "wo-ewt-dep-lm.wo"))
    ap.add_argument("--lm4", default=os.path.join(GY, "text-en+ewt.o4.wolm"))
    ap.add_argument("--lm5", default=os.path.join(GY, "text-en+ewt.o5.wolm"))
    ap.add_argument("--k", type=int, default=20, help="GYRO n-best size")
    ap.add_argument("--lams", default="0,0.05,0.1,0.2,0.3,0.5,0.75,1,1.5,2,3,5,1000")
    ap.add_argument("--lam", type=float, default=None, help="fixed lam (test)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    from joblib import Parallel, delayed

    os.makedirs(a.work, exist_ok=True)
    stem = os.path.join(a.work, a.split)
    refs = bags(a.split, 1, stem + ".bags")
    times = {}
    if a.limit:
        refs = refs[:a.limit]
        with open(stem + ".bags", encoding="utf-8") as fh:
            lines = fh.readlines()[:a.limit]
        with open(stem + ".bags", "w", encoding="utf-8") as fh:
            fh.writelines(lines)
    dep_out = stem + f".dep{a.limit or ''}.jsonl"
    if not os.path.exists(dep_out):
        times["dep_seconds"] = run(WO + ["linearize", "--model", a.model, "--input", stem + ".bags", "--input-format", "bag",
                                         "--seed", "0", "--given", "none", "--format", "jsonl", "--output", dep_out,
                                         "--jobs", str(a.jobs), "--quiet"])
    gy_out = stem + f".gyro{a.k}.{a.limit or ''}.jsonl"
    if not os.path.exists(gy_out):
        times["gyro_seconds"] = run(WO + ["gyro", "realize", "--lm", a.lm4, "--rescore-lm", a.lm5, "--nbest", str(a.k),
                                          "--input", stem + ".bags", "--input-format", "bag", "--format", "jsonl",
                                          "--output", gy_out, "--jobs", str(a.jobs), "--quiet"])
    dep = [json.loads(ln) for ln in open(dep_out, encoding="utf-8")]
    gy = [json.loads(ln) for ln in open(gy_out, encoding="utf-8")]
    assert len(dep) == len(gy) == len(refs)
    cands, ranks = [], []          # ranks[i][j]: GYRO rank of candidate j (None: the dependency output only)
    for d, g, r in zip(dep, gy, refs):
        c, rk = [d["tokens"]], [None]
        for q, x in enumerate(g["nbest"] or [{"text": g["text"]}]):
            t = x["text"].split()
            if t in c:
                rk[c.index(t)] = q if rk[c.index(t)] is None else rk[c.index(t)]
            else:
                c.append(t)
                rk.append(q)
        for t in c:
            assert sorted(t) == sorted(r), (t, r)
        cands.append(c)
        ranks.append(rk)
    feats_path = stem + f".feats{a.k}.{a.limit or ''}.json"
    if os.path.exists(feats_path):
        feats = json.load(open(feats_path))
    else:
        with Stopwatch() as sw:
            items = list(enumerate(cands))
            chunks = [items[i::a.jobs * 8] for i in range(a.jobs * 8)]
            res = Parallel(n_jobs=a.jobs)(delayed(parse_chunk)(a.model, a.lm5, ch) for ch in chunks)
            feats = [None] * len(cands)
            for part in res:
                for i, row in part:
                    feats[i] = row
        times["parse_seconds"] = sw.seconds
        json.dump(feats, open(feats_path, "w"))

    def choice(lam, k, own, c, f, rk):
        ok = [j for j in range(len(c)) if (rk[j] is not None and rk[j] < k) or (own and j == 0)]
        return max(ok, key=lambda j: (round(f[j][1] + lam * f[j][0], 6), -(rk[j] if rk[j] is not None else 10 ** 6)))

    def pick(lam, k=a.k, own=True):
        return [c[choice(lam, k, own, c, f, rk)] for c, f, rk in zip(cands, feats, ranks)]

    def b(hyps):
        sc = bleu(hyps, refs)
        return round(sc.bleu, 2), sc.signature

    result = {"split": a.split, "n": len(refs), "k": a.k, "model": os.path.relpath(a.model, ROOT),
              "lm4": os.path.relpath(a.lm4, ROOT), "lm5": os.path.relpath(a.lm5, ROOT), **times}
    result["dep_alone"], sig = b([c[0] for c in cands])
    result["gyro_alone"], _ = b([g["text"].split() for g in gy])
    result["signature"] = sig
    lams = [a.lam] if a.lam is not None else [float(x) for x in a.lams.split(",")]
    result["by_lam"] = {str(lam): b(pick(lam))[0] for lam in lams}
    result["dep_output_chosen_pct"] = {str(lam): round(100.0 * sum(
        choice(lam, a.k, True, c, f, rk) == 0 for c, f, rk in zip(cands, feats, ranks)) / len(cands), 1) for lam in lams}
    result["by_lam_without_dep_output"] = {str(lam): b(pick(lam, own=False))[0] for lam in lams}
    result["by_k_lam"] = {f"{k}:{lam}": b(pick(lam, k=k))[0] for k in (1, 5, 10, a.k) if k <= a.k for lam in lams}
    result["oracle"], _ = b([oracle(c, r) for c, r in zip(cands, refs)])
    write_record(os.path.join(HERE, "results", "lm", f"bag-rerank.{a.split}{'.' + str(a.limit) if a.limit else ''}.json"),
                 result)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
