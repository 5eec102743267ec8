"""Reranker experiments for the syntactic SMT system (issue 14): which features and which
tuner, judged by two-fold cross-validation on dev so no figure is tuned on what it scores.

    python bench/smt_rerank.py dump --lm LM --model M --set dev --nbest 200 --out NB.pkl.gz
    python bench/smt_rerank.py cv --lm LM --nbest NB.pkl.gz --features base,lex,m1,lmbr --tuner pro+grid [--seed S]

``dump`` decodes a parsed split (``bench/smt_data.py``'s cache) and stores every sentence's
n-best candidates: tokens, the options used (source span, target words, count, P(trans)) and
the synthesis scores.  ``cv`` computes the reranking features of the groups asked for and
prints the BLEU of weights tuned on one random half of dev and applied to the other (both
ways), then the BLEU of weights tuned on all of dev.  Groups:

* base: the seven features of the first reranker (scaled and unscaled score, LM, log10
  P(trans), words, coverage, options);
* lex / m1: IBM-1 both ways with the alignment-link lexicon / EM model 1
  (:class:`wo.smt.lexicon.Lexicon`);
* lmbr: linear-BLEU MBR gain (``LMBR_SCALE``, default 10); mbr: mean smoothed sentence BLEU
  against the top ``MBR_TOP`` candidates;
* plex, inv, unc, lm5: phrase-level IBM-1, inverse phrase probability, uncovered source
  words, a 5-gram LM (``--lm5``).

Tuners: ``grid`` (coordinate ascent over a fixed grid, the first reranker's), ``pro`` (PRO,
:func:`wo.smt.rerank.pro`), ``pro+grid`` (PRO, then coordinate ascent over multiples: what
:func:`wo.smt.rerank.tune` does).  The figures of this session are in the README (issue 14).
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
from common import bleu, read_jsonl  # noqa: E402  (bench/ is on sys.path)


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
                    max_pops=args.max_pops, beta=args.beta)
    recs = read_jsonl(os.path.join(args.work, f"{args.set}.jsonl.gz"))
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
def lexicons(work, groups):
    """The link lexicon and the EM model 1 tables (:class:`wo.smt.lexicon.Lexicon`) of the
    train records, as the groups need them."""
    from wo.smt.lexicon import Lexicon

    recs = read_jsonl(os.path.join(work, "train.jsonl.gz"))
    lex = Lexicon.from_links((r["zh"], r["en"], r["links"]) for r in recs) if groups & {"lex", "plex"} else None
    m1 = Lexicon.model1((r["zh"], r["en"]) for r in recs) if "m1" in groups else None
    return lex, m1


def phrase_lex(src, opts, lex):
    """Phrase-level lexical scores summed over the options used: for each option, IBM-1 of its
    target words given its source words and back."""
    a = b = 0.0
    for lo, hi, words, _, _ in opts:
        x, y = lex.ibm1(src[lo:hi], words)
        a, b = a + x, b + y
    return a, b


def inverse_counts(table):
    from collections import Counter
    c = Counter()
    for src, d in table._table.items():
        for words, v in d.items():
            c[words] += v[0]
    return c


LMBR_SCALE = float(os.environ.get("LMBR_SCALE", "10"))
MBR_TOP = int(os.environ.get("MBR_TOP", "10"))
BASE = ("scaled", "total", "lm", "ptrans", "words", "coverage", "options")


def featurize(nb, groups, lexs, lm5=None, inv=None, lm4=None):
    """float64[K, d] per sentence and the feature names."""
    lex, m1 = lexs
    names = list(BASE)
    if "lex" in groups:
        names += ["ibm1_ef", "ibm1_fe"]
    if "m1" in groups:
        names += ["m1_ef", "m1_fe"]
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
                row += list(lex.ibm1(e["src"], c["tokens"]))
            if "m1" in groups:
                row += list(m1.ibm1(e["src"], c["tokens"]))
            if "plex" in groups:
                row += list(phrase_lex(e["src"], opts, lex))
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


def apply(feats, texts, w):
    return [t[int(np.argmax(f @ w))] if len(t) else "" for f, t in zip(feats, texts)]


def cv(args):
    from wo.smt.rerank import ascend, pro, sentence_bleus
    from wo.lm.model import LanguageModel
    from wo.smt.phrases import PhraseTable

    with gzip.open(args.nbest, "rb") as f:
        nb = pickle.load(f)
    groups = set(args.features.split(","))
    lexs = lexicons(args.work, groups)
    inv = inverse_counts(PhraseTable.load(args.table)) if "inv" in groups else None
    lm5 = LanguageModel.load(args.lm5) if "lm5" in groups else None
    lm4 = LanguageModel.load(args.lm)
    feats, names = featurize(nb, groups, lexs, lm5, inv, lm4)
    if args.normalize:
        sd = np.concatenate([f for f in feats if len(f)]).std(axis=0)
        sd[sd == 0] = 1.0
        sd = sd / sd[0]
        feats = [f / sd for f in feats]
    texts = [[c["text"] for c in e["cands"]] for e in nb]
    refs = [e["ref"] for e in nb]
    def corpus_bleu(hyps, refs):
        return bleu(hyps, refs, tokenize="13a").bleu

    idx = list(range(len(nb)))
    random.Random(args.seed).shuffle(idx)
    halves = [sorted(idx[: len(idx) // 2]), sorted(idx[len(idx) // 2:])]
    hyp = [""] * len(nb)
    sb = sentence_bleus(texts, refs) if args.tuner != "grid" else None

    def fit(ix):
        f, t, r = [feats[i] for i in ix], [texts[i] for i in ix], [refs[i] for i in ix]
        if args.tuner == "grid":         # the first reranker's tuner: a fixed grid from (scaled = 1)
            return ascend(f, t, r, np.eye(len(names))[0], grid=GRID)
        w = pro(f, [sb[i] for i in ix])
        return (w, None) if args.tuner == "pro" else ascend(f, t, r, w)

    toks = [[c["tokens"] for c in e["cands"]] for e in nb]

    def second_pass(ix, w, s2, alpha):
        from wo.eval.mbr import linear_bleu_gains
        out = []
        for i in ix:
            sc = feats[i] @ w
            g = linear_bleu_gains(toks[i], sc, s2) if len(sc) else sc
            out.append(texts[i][int(np.argmax(sc + alpha * g))] if len(sc) else "")
        return out

    for a, b in ((0, 1), (1, 0)):
        w, _ = fit(halves[a])
        if args.mbr2:
            ra = [refs[i] for i in halves[a]]
            best = None
            for s2 in (0.1, 0.3, 1.0, 3.0):
                for alpha in (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 1000.0):
                    sc = corpus_bleu(second_pass(halves[a], w, s2, alpha), ra)
                    if best is None or sc > best[0] + 1e-9:
                        best = (sc, s2, alpha)
            print(f"fold {a}: mbr2 scale {best[1]} alpha {best[2]} ({best[0]:.2f})", file=sys.stderr)
            for i, h in zip(halves[b], second_pass(halves[b], w, best[1], best[2])):
                hyp[i] = h
            continue
        for i, h in zip(halves[b], apply([feats[i] for i in halves[b]], [texts[i] for i in halves[b]], w)):
            hyp[i] = h
    cvb = corpus_bleu(hyp, refs)
    w, full = fit(idx)
    full = corpus_bleu(apply(feats, texts, w), refs)
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
    d.add_argument("--beta", type=float, default=None)
    d.add_argument("--out", required=True)
    c = sub.add_parser("cv")
    c.add_argument("--work", default="/work/smtdata")
    c.add_argument("--table", default=TABLE)
    c.add_argument("--lm", required=True)
    c.add_argument("--lm5", default=None)
    c.add_argument("--nbest", required=True)
    c.add_argument("--features", default="base")
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--mbr2", action="store_true", help="second-pass MBR under the tuned reranker's posterior")
    c.add_argument("--tuner", default="grid", choices=["grid", "pro", "pro+grid"])
    c.add_argument("--normalize", action="store_true", help="scale features to the scaled score's spread")
    args = ap.parse_args()
    dump(args) if args.cmd == "dump" else cv(args)


if __name__ == "__main__":
    main()
