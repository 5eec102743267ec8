"""Full trees: the weights of the rerankers of the popped goals (issue 10, session 13).

A full-tree decode pops hundreds of goal edges; the 20 best distinct strings by the model's
score F are reranked by

    F + sum_i w_i log10 p_i(candidate in LM i's view) + w_nolm F_nolm(string, tree)

(``wo.dep.linearizer.rerank_goals``; views in ``wo.lm.views``).  ``dump`` decodes an EWT split
the way ``wo linearize --given full`` does (scrambled per sentence, seed 1; the shipped model
without its rerankers) and scores every candidate with every reranker once; ``grid`` then
chooses weights by corpus BLEU on those lists and checks them by 2-fold cross-validation (the
split's sentences halved at random, tuned on one half and scored on the other, both ways).

    python bench/tree_rerank.py dump --split dev --out W/dev.pkl            # ~2 min
    python bench/tree_rerank.py grid --dump W/dev.pkl --set shipped         # shipped files only
    python bench/tree_rerank.py grid --dump W/dev.pkl --set bench           # with the 5-gram
    python bench/tree_rerank.py grid --dump W/dev.pkl --set wiki            # with the Wikipedia 4-gram
    python bench/tree_rerank.py grid --dump W/dev.pkl --set wiki-fast       # the same without the no-LM parse
    python bench/tree_rerank.py dump --split dev --out W/dev32.pkl --beam-factor 32     # the shipped tree search
    python bench/tree_rerank.py grid --dump W/dev32.pkl --set wiki --models-top 5  # the shipped reranking

``--set bench`` needs ``bench/results/gyro/text-en+ewt.o5.wolm`` (``python bench/gyro_index.py
&& python bench/gyro_data.py --set ewt``).  Records go to
bench/results/lm/tree-rerank.<set>.<split>.json.  The chosen weights are then decoded with
``wo linearize`` (the figures in README); test is never dumped here.
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
MODELS = os.path.join(ROOT, "corpora", "models")
EWT = os.path.join(ROOT, "corpora", "ud-en-ewt")
O5 = os.path.join(HERE, "results", "gyro", "text-en+ewt.o5.wolm")
from common import bleu, sentence_bleu, write_record  # noqa: E402  (bench/ is on sys.path)

LMS = {"lm4": os.path.join(MODELS, "wo-en-4gram.wolm"), "depmix": os.path.join(MODELS, "wo-ewt-depmix4.wolm"),
       "depword": os.path.join(MODELS, "wo-ewt-depword4.wolm"), "pos": os.path.join(MODELS, "wo-ewt-pos6.wolm"),
       "o5": O5, "wiki": os.path.join(MODELS, "wo-en-wiki-4gram.wolm")}
# weight grids (the view LMs' weights as one base vector times a scale, for the shipped set)
GRIDS = {
    "shipped": [{"F": 1, "lm4": a, "nolm": b, "depmix": 0.7 * c, "depword": 0.4 * c, "pos": 0.4 * c}
                for a in (0.5, 0.7, 1.0, 1.3) for b in (0.3, 0.4, 0.5) for c in (1.0, 1.4, 1.8)],
    "wiki": [{"F": 1, "wiki": a, "lm4": l, "nolm": b, "depmix": 0.7 * c, "depword": 0.4 * c, "pos": 0.4 * c}
             for a in (0.7, 1.0, 1.3, 1.6, 2.0) for l in (0.0, 0.5, 1.0) for b in (0.3, 0.5) for c in (1.0, 1.4, 1.8)],
    "wiki-fast": [{"F": 1, "wiki": a, "depmix": 0.7 * c, "depword": 0.4 * c, "pos": 0.4 * e * c}   # no no-LM parse
                  for a in (0.7, 1.0, 1.3, 1.6, 2.0) for c in (0.6, 1.0, 1.4, 1.8, 2.2) for e in (0.0, 0.5, 1.0)],
    "bench": [{"F": 1, "o5": a, "nolm": b, "depmix": c, "depword": d, "pos": e}
              for a in (1.0, 1.2, 1.5) for b in (0.3, 0.5) for c in (0.4, 0.7, 1.0) for d in (0, 0.2, 0.4)
              for e in (0, 0.2, 0.4)],
}


def dump(split: str, out: str, model: str, beam_factor: float = 0.0) -> None:
    from wo.dep.linearizer import Linearizer
    from wo.io import read_conllu
    from wo.io.trees import scramble
    from wo.lm import LanguageModel
    from wo.lm.views import score_view

    # beam_factor > 0: the tree search's beam in states per word (budget and patience as the
    # model's tree settings); 0: the model's own tree settings
    lin = Linearizer.load(model, **({"beam_factor": beam_factor, "budget_factor": 1000.0, "patience_factor": 100.0}
                                    if beam_factor else {}))
    nolm = Linearizer.load(os.path.join(MODELS, "wo-ewt-dep.wo"))
    lms = {k: LanguageModel.load(p) for k, p in LMS.items() if os.path.exists(p)}
    sents = read_conllu(os.path.join(EWT, f"en_ewt-ud-{split}.conllu.xz"))
    rows, t0 = [], time.perf_counter()
    for i, s in enumerate(sents):
        sc, _ = scramble(s, 1, i)
        pos = [None if t == "_" else t for t in sc.xpos]
        row = []
        for f, r in lin.nbest(sc.forms, pos, list(sc.heads)):
            feats = {"F": f, **{k: score_view(lm, r.tokens, r.pos, r.heads) for k, lm in lms.items()}}
            p = nolm.parse(r.tokens, [pos[j] for j in r.order], heads=r.heads).parsed_score()
            feats["nolm"] = -1e9 if p is None else p
            row.append((" ".join(r.tokens), feats))
        rows.append(row)
    with open(out, "wb") as fh:
        pickle.dump({"split": split, "model": os.path.basename(model), "beam_factor": beam_factor or None, "rows": rows,
                     "refs": [" ".join(s.forms) for s in sents], "seconds": time.perf_counter() - t0}, fh)
    print(f"{len(rows)} sentences, {np.mean([len(r) for r in rows]):.1f} candidates each, "
          f"{time.perf_counter() - t0:.0f} s -> {out}")


def grid(path: str, which: str, models_top: int = 0) -> dict:
    with open(path, "rb") as fh:
        d = pickle.load(fh)
    rows, refs = d["rows"], d["refs"]
    names = sorted({k for r in rows for _, f in r for k in f})
    mats = [np.array([[f.get(k, 0.0) for k in names] for _, f in r]) for r in rows]

    def pick(spec, idx):
        w = np.array([spec.get(k, 0.0) for k in names])
        if not models_top or "nolm" not in names:
            return [rows[i][int(np.argmax(np.round(mats[i] @ w, 6)))][0] for i in idx]
        # the no-LM parse only for the models_top best by the other terms (wo's late_top)
        j = names.index("nolm")
        w1 = w.copy()
        w1[j] = 0.0
        out = []
        for i in idx:
            s1 = np.round(mats[i] @ w1, 6)
            keep = np.sort(np.argsort(-s1, kind="stable")[:models_top])
            out.append(rows[i][int(keep[np.argmax(np.round(mats[i][keep] @ w, 6))])][0])
        return out

    def score(spec, idx):
        return round(bleu(pick(spec, idx), [refs[i] for i in idx]).bleu, 2)

    specs = GRIDS[which]
    if any(k not in names for k in specs[0]):
        raise SystemExit(f"the dump lacks {[k for k in specs[0] if k not in names]} (see the module doc)")
    every = list(range(len(rows)))
    full = [score(s, every) for s in specs]
    order = np.argsort(full, kind="stable")[::-1]
    oracle = [max(r, key=lambda c: sentence_bleu(c[0], ref))[0] for r, ref in zip(rows, refs)]
    perm = np.random.RandomState(0).permutation(len(rows))
    halves = (sorted(perm[: len(rows) // 2]), sorted(perm[len(rows) // 2:]))
    cv = []
    for a, b in (halves, halves[::-1]):
        tuned = [score(s, a) for s in specs]
        k = int(np.argmax(tuned))
        cv.append({"tuned": tuned[k], "held_out": score(specs[k], b), "held_out_without": score({"F": 1}, b),
                   "weights": specs[k]})
    rec = {"split": d["split"], "set": which, "model": d["model"], "beam_factor": d.get("beam_factor"),
           "models_top": models_top or None, "candidates": float(np.mean([len(r) for r in rows])),
           "without_rerank": score({"F": 1}, every),
           "oracle": round(bleu(oracle, refs).bleu, 2), "best": {"bleu": full[order[0]], "weights": specs[order[0]]},
           "top5": [{"bleu": full[k], "weights": specs[k]} for k in order[:5]], "grid_size": len(specs),
           "two_fold_cv": cv, "signature": bleu(oracle[:1], refs[:1]).signature}
    bf = (f".beam{d['beam_factor']:g}" if d.get("beam_factor") else "") + (f".top{models_top}" if models_top else "")
    out = os.path.join(HERE, "results", "lm", f"tree-rerank.{which}.{d['split']}{bf}.json")
    write_record(out, rec)
    print(json.dumps(rec, indent=1))
    return rec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--split", default="dev", choices=["dev", "train"])
    d.add_argument("--out", required=True)
    d.add_argument("--model", default=os.path.join(MODELS, "wo-ewt-dep-lm.wo"))
    d.add_argument("--beam-factor", type=float, default=0.0,
                   help="tree search beam in states per word (budget 1000 and patience 100 pops per word); "
                        "default: the model's tree settings")
    g = sub.add_parser("grid")
    g.add_argument("--dump", required=True)
    g.add_argument("--set", default="shipped", choices=sorted(GRIDS))
    g.add_argument("--models-top", type=int, default=0,
                   help="the no-LM parse scores only the N best candidates by the other terms (0: all)")
    a = ap.parse_args()
    if a.cmd == "dump":
        dump(a.split, a.out, a.model, a.beam_factor)
    else:
        grid(a.dump, a.set, a.models_top)


if __name__ == "__main__":
    main()
