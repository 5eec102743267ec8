"""Reranker feature experiments for the syntactic SMT system (issue 14).

    python bench/smt_rerank.py dump --lm LM --model M --set dev --nbest 100 --out NB.pkl.gz
    python bench/smt_rerank.py cv --nbest NB.pkl.gz --features base,lex,... [--lm5 LM5]

``dump`` decodes a parsed split (``bench/smt_data.py``'s cache) and stores every sentence's
n-best candidates: tokens, the options used (source span, target words, count, P(trans)) and
the synthesis scores.  ``cv`` adds sentence-level features to the reranker (lexical
translation scores in both directions from the word alignments of train, inverse phrase
probabilities, a 5-gram LM) and reports BLEU of coordinate ascent tuned on one half of dev and
applied to the other (two folds, both ways, so the figure is not tuned on what it scores),
then tuned on all of dev.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import random
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
TABLE = os.path.join(ROOT, "corpora", "models", "smt", "phrases.tsv.gz")


def read_jsonl_gz(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def dump(args):
    from wo.lm.model import LanguageModel
    from wo.model import Model
    from wo.smt.phrases import PhraseTable
    from wo.smt.prep import detokenize
    from wo.smt.synth import build_instance, source_of
    from wo.smt.translate import Translator

    table = PhraseTable.load(args.table)
    lm = LanguageModel.load(args.lm)
    tr = Translator(Model.load(args.model), lm=lm, table=table, parser=False, rerank=False,
                    max_pops=args.max_pops)
    recs = read_jsonl_gz(os.path.join(args.work, f"{args.set}.jsonl.gz"))
    o = tr.opts
    out = []
    t0 = time.perf_counter()
    for r in recs:
        src = source_of(r)
        options = table.options(src.tokens, max_len=int(o["max_len"]), lam=float(o["lam"]))
        ent = {"src": src.tokens, "ref": r["en_raw"], "cands": []}
        if options:
            inst = build_instance(src, options, float(o["beta"]), lm)
            d = tr.core.decode(inst, max(1, int(o["beam_factor"] * inst.n)), int(o["max_pops"]),
                               int(o["complete_beam"]))
            cands = tr.core.candidates(inst, args.nbest) if d.status == 0 else []
            if not cands:
                cands = [d]
                d.F = d.score
            for c in cands:
                ent["cands"].append({
                    "tokens": c.tokens, "text": detokenize(c.tokens), "scaled": c.score, "F": c.F,
                    "opts": [(inst.options[i].src_lo, inst.options[i].src_hi, inst.options[i].words,
                              inst.options[i].count, inst.options[i].prob) for i in c.options]})
        out.append(ent)
    sec = time.perf_counter() - t0
    with gzip.open(args.out, "wb") as f:
        pickle.dump(out, f)
    print(f"{len(out)} sentences, {sum(len(e['cands']) for e in out)} candidates, {sec:.1f} s", file=sys.stderr)


# ------------------------------------------------------------------ features
def lexicon(work):
    """Word translation tables w(e|f), w(f|e) (relative frequencies of the symmetrised
    alignment links of train, NULL for unaligned words; Koehn et al. 2003's lexical weights)."""
    from collections import Counter

    ef, cf, ce = Counter(), Counter(), Counter()
    for r in read_jsonl_gz(os.path.join(work, "train.jsonl.gz")):
        zh, en = r["zh"], r["en"]
        a_f, a_e = set(), set()
        for i, j in r["links"]:
            ef[(en[j], zh[i])] += 1
            cf[zh[i]] += 1
            ce[en[j]] += 1
            a_f.add(i)
            a_e.add(j)
        for i, w in enumerate(zh):
            if i not in a_f:
                ef[("NULL", w)] += 1
                cf[w] += 1
                ce["NULL"] += 1
        for j, w in enumerate(en):
            if j not in a_e:
                ef[(w, "NULL")] += 1
                ce[w] += 1
                cf["NULL"] += 1
    e_given_f = {k: v / cf[k[1]] for k, v in ef.items()}
    f_given_e = {k: v / ce[k[0]] for k, v in ef.items()}
    return e_given_f, f_given_e


FLOOR = 1e-6


def ibm1(src, tgt, tab, direction):
    """Sentence-level IBM model 1 log10 score with a relative-frequency lexicon:
    direction 'e|f' sums over target words log10 mean_f w(e|f) (f including NULL)."""
    s = 0.0
    if direction == "e|f":
        fs = list(src) + ["NULL"]
        for e in tgt:
            s += np.log10(max(FLOOR, sum(tab.get((e, f), 0.0) for f in fs) / len(fs)))
    else:
        es = list(tgt) + ["NULL"]
        for f in src:
            s += np.log10(max(FLOOR, sum(tab.get((e, f), 0.0) for e in es) / len(es)))
    return s


def phrase_lex(src, opts, tab_ef, tab_fe):
    """Phrase-level lexical scores summed over the options used: for each option, IBM-1 of its
    target words given its source words and back."""
    a = b = 0.0
    for lo, hi, words, _, _ in opts:
        a += ibm1(src[lo:hi], words, tab_ef, "e|f")
        b += ibm1(src[lo:hi], words, tab_fe, "f|e")
    return a, b


def inverse_counts(table):
    from collections import Counter
    c = Counter()
    for src, d in table._table.items():
        for words, v in d.items():
            c[words] += v[0]
    return c


LMBR_SCALE = float(os.environ.get("LMBR_SCALE", "1"))
MBR_TOP = int(os.environ.get("MBR_TOP", "10"))
BASE = ("scaled", "total", "lm", "ptrans", "words", "coverage", "options")


def featurize(nb, groups, tabs, lm5=None, inv=None, lm4=None):
    """float64[K, d] per sentence and the feature names."""
    tab_ef, tab_fe = tabs if tabs else (None, None)
    names = list(BASE)
    if "lex" in groups:
        names += ["ibm1_ef", "ibm1_fe"]
    if "plex" in groups:
        names += ["plex_ef", "plex_fe"]
    if "inv" in groups:
        names += ["pinv"]
    if "lm5" in groups:
        names += ["lm5"]
    if "unc" in groups:
        names += ["uncovered"]
    if "mbr" in groups:
        names += ["consensus"]
    if "lmbr" in groups:
        names += ["lmbr"]
    out = []
    for e in nb:
        rows = []
        n = len(e["src"])
        for c in e["cands"]:
            opts = c["opts"]
            cov = sum(hi - lo for lo, hi, *_ in opts)
            row = [c["scaled"], c["F"], lm4.score(c["tokens"]) if lm4 is not None else 0.0,
                   sum(np.log10(max(p, 1e-9)) for *_, p in opts), len(c["tokens"]), cov / max(1, n), len(opts)]
            if "lex" in groups:
                row += [ibm1(e["src"], c["tokens"], tab_ef, "e|f"), ibm1(e["src"], c["tokens"], tab_fe, "f|e")]
            if "plex" in groups:
                row += list(phrase_lex(e["src"], opts, tab_ef, tab_fe))
            if "inv" in groups:
                row += [sum(np.log10(max(1e-9, cnt / max(1, inv[w]))) for _, _, w, cnt, _ in opts)]
            if "lm5" in groups:
                row += [lm5.score(c["tokens"])]
            if "unc" in groups:
                row += [n - cov]
            rows.append(row)
        if "mbr" in groups:
            cons = consensus([c["tokens"] for c in e["cands"]], [c["scaled"] for c in e["cands"]], MBR_TOP)
            for row, v in zip(rows, cons):
                row.append(v)
        if "lmbr" in groups and rows:
            from wo.eval.mbr import linear_bleu_gains
            g = linear_bleu_gains([c["tokens"] for c in e["cands"]], [c["scaled"] for c in e["cands"]], LMBR_SCALE)
            for row, v in zip(rows, g):
                row.append(v)
        out.append(np.array(rows, dtype=np.float64).reshape(len(rows), len(names)))
    return out, names


def _ngrams(toks, n_max=4):
    from collections import Counter
    return [Counter(tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)) for n in range(1, n_max + 1)]


def consensus(cands, scores, top=10):
    """Each candidate's mean smoothed sentence BLEU (add-one n-gram precisions, brevity
    penalty) against the ``top`` best candidates by the search's score: an MBR-style
    agreement feature (Kumar & Byrne 2004)."""
    order = np.argsort(-np.asarray(scores), kind="stable")[:top]
    refs = [(_ngrams(cands[j]), len(cands[j])) for j in order]
    out = []
    for c in cands:
        hg, hl = _ngrams(c), len(c)
        tot = 0.0
        for rg, rl in refs:
            lp = 0.0
            for n in range(4):
                m = sum(min(v, rg[n].get(k, 0)) for k, v in hg[n].items())
                lp += np.log((m + 1) / (max(0, hl - n) + 1))
            bp = min(0.0, 1 - rl / max(1, hl))
            tot += np.exp(lp / 4 + bp)
        out.append(tot / len(refs))
    return out


GRID = (-3.0, -2.0, -1.0, -0.5, -0.25, -0.1, 0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0)


FINE = tuple(sorted({round(s * x, 3) for s in (-1, 1) for x in (0.02, 0.05, 0.1, 0.15, 0.25, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0)} | {0.0}))
if os.environ.get("FINE"):
    GRID = FINE


def tune(feats, texts, refs, names, rounds=3, grid=None, init=None, relative=False):
    grid = grid or GRID
    from sacrebleu.metrics import BLEU
    bleu = BLEU(tokenize="13a")
    w = np.zeros(len(names))
    w[0] = 1.0
    if init is not None:
        w = np.array(init, dtype=np.float64)

    def score(wv):
        hyp = [t[int(np.argmax(f @ wv))] if len(t) else "" for f, t in zip(feats, texts)]
        return bleu.corpus_score(hyp, [list(refs)]).score

    best = score(w)
    for _ in range(rounds):
        improved = False
        for j in range(len(names)):
            vals = grid if not relative else [w[j] * m for m in (0.0, 0.25, 0.5, 0.75, 1.5, 2.0, 4.0)]
            for v in vals:
                if v == w[j]:
                    continue
                cand = w.copy()
                cand[j] = v
                s = score(cand)
                if s > best + 1e-9:
                    best, w, improved = s, cand, True
        if not improved:
            break
    return w, best


def sentence_bleus(texts, refs):
    """Smoothed sentence BLEU (sacrebleu 13a, exp smoothing) of every candidate; cached per
    call site by the caller."""
    from sacrebleu.metrics import BLEU
    b = BLEU(tokenize="13a", effective_order=True)
    return [np.array([b.sentence_score(t, [r]).score for t in ts]) for ts, r in zip(texts, refs)]


def pro(feats, sbleu, names, seed=1, gamma=5000, xi=50, l2=1e-3, iters=300):
    """Pairwise ranking optimisation (Hopkins & May 2011): sample candidate pairs per
    sentence, keep the ``xi`` with the largest sentence-BLEU difference (> 5), fit a logistic
    regression without intercept on their feature differences (standardised).  Returns
    weights float64[d] in the original feature scale, scaled so the first weight is 1."""
    rng = np.random.default_rng(seed)
    allf = np.concatenate([f for f in feats if len(f)])
    sd = allf.std(axis=0)
    sd[sd == 0] = 1.0
    X, y = [], []
    for f, sb in zip(feats, sbleu):
        k = len(f)
        if k < 2:
            continue
        a = rng.integers(0, k, gamma)
        b = rng.integers(0, k, gamma)
        d = sb[a] - sb[b]
        keep = np.abs(d) > 5.0
        a, b, d = a[keep], b[keep], d[keep]
        top = np.argsort(-np.abs(d), kind="stable")[:xi]
        for i in top:
            diff = (f[a[i]] - f[b[i]]) / sd
            X.append(diff)
            y.append(1.0 if d[i] > 0 else 0.0)
            X.append(-diff)
            y.append(0.0 if d[i] > 0 else 1.0)
    X, y = np.array(X), np.array(y)
    w = np.zeros(X.shape[1])
    lr = 0.5
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(X @ w)))
        g = X.T @ (p - y) / len(y) + l2 * w
        w -= lr * g
    w = w / sd
    return w / abs(w[0]) if w[0] != 0 else w


def apply(feats, texts, w):
    return [t[int(np.argmax(f @ w))] if len(t) else "" for f, t in zip(feats, texts)]


def cv(args):
    from sacrebleu.metrics import BLEU
    from wo.lm.model import LanguageModel
    from wo.smt.phrases import PhraseTable

    with gzip.open(args.nbest, "rb") as f:
        nb = pickle.load(f)
    groups = set(args.features.split(","))
    tabs = lexicon(args.work) if groups & {"lex", "plex"} else None
    inv = inverse_counts(PhraseTable.load(args.table)) if "inv" in groups else None
    lm5 = LanguageModel.load(args.lm5) if "lm5" in groups else None
    lm4 = LanguageModel.load(args.lm)
    feats, names = featurize(nb, groups, tabs, lm5, inv, lm4)
    if args.normalize:
        sd = np.concatenate([f for f in feats if len(f)]).std(axis=0)
        sd[sd == 0] = 1.0
        sd = sd / sd[0]
        feats = [f / sd for f in feats]
    texts = [[c["text"] for c in e["cands"]] for e in nb]
    refs = [e["ref"] for e in nb]
    bleu = BLEU(tokenize="13a")
    idx = list(range(len(nb)))
    random.Random(args.seed).shuffle(idx)
    halves = [sorted(idx[: len(idx) // 2]), sorted(idx[len(idx) // 2:])]
    hyp = [""] * len(nb)
    sb = sentence_bleus(texts, refs) if args.tuner != "grid" else None

    def fit(ix):
        if args.tuner in ("pro", "pro+grid"):
            w = pro([feats[i] for i in ix], [sb[i] for i in ix], names)
            if args.tuner == "pro":
                return w, None
            return tune([feats[i] for i in ix], [texts[i] for i in ix], [refs[i] for i in ix], names,
                        init=w, relative=True)
        return tune([feats[i] for i in ix], [texts[i] for i in ix], [refs[i] for i in ix], names)

    for a, b in ((0, 1), (1, 0)):
        w, _ = fit(halves[a])
        for i, h in zip(halves[b], apply([feats[i] for i in halves[b]], [texts[i] for i in halves[b]], w)):
            hyp[i] = h
    cvb = bleu.corpus_score(hyp, [refs]).score
    w, full = fit(idx)
    full = bleu.corpus_score(apply(feats, texts, w), [refs]).score
    oracle = None
    res = {"features": sorted(groups), "normalize": args.normalize, "tuner": args.tuner, "cv_bleu": round(cvb, 2), "tuned_bleu": round(full, 2),
           "weights": {k: float(v) for k, v in zip(names, w) if v}, "nbest": args.nbest,
           "mean_candidates": round(float(np.mean([len(t) for t in texts])), 1)}
    print(json.dumps(res))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--work", default="/work/smtdata")
    d.add_argument("--table", default=TABLE)
    d.add_argument("--lm", required=True)
    d.add_argument("--model", required=True)
    d.add_argument("--set", default="dev", choices=["dev", "test"])
    d.add_argument("--nbest", type=int, default=100)
    d.add_argument("--max-pops", type=int, default=None)
    d.add_argument("--out", required=True)
    c = sub.add_parser("cv")
    c.add_argument("--work", default="/work/smtdata")
    c.add_argument("--table", default=TABLE)
    c.add_argument("--lm", required=True)
    c.add_argument("--lm5", default=None)
    c.add_argument("--nbest", required=True)
    c.add_argument("--features", default="base")
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--tuner", default="grid", choices=["grid", "pro", "pro+grid"])
    c.add_argument("--normalize", action="store_true", help="scale features to the scaled score's spread")
    args = ap.parse_args()
    dump(args) if args.cmd == "dump" else cv(args)


if __name__ == "__main__":
    main()
