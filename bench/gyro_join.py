"""GYRO across sub-sentence boundaries (de Gispert et al. 2014, Table 1, "GYRO +3g"): the
sub-sentences of a sentence are realised separately (``bench/gyro_eval.py --set
dev-sub|test-sub`` with ``--nbest K``), then the K best strings of consecutive pieces are
joined by the LM: a Viterbi pass over the pieces picks, per sentence, the candidates whose
concatenation scores best as one sentence (``<s>`` before the first piece, ``</s>`` after
the last, the n-grams across every boundary scored).  The pass is exact when every piece has
at least N-1 tokens (no n-gram spans three pieces); shorter pieces make it an approximation.

    python bench/gyro_join.py --run eval.dev-sub.all_uni5 --lm bench/results/gyro/text-en+ewt.o5.wolm --k 1 5 20 100

Reads bench/results/gyro/<run>.jsonl (and its set's references), prints BLEU of the joined
whole sentences for each K (K = 1 is plain concatenation), and writes <run>.join.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
OUT = os.path.join(HERE, "results", "gyro")


def join_sentence(pieces, lm, k):
    """pieces: per piece a list of candidate token lists (best first).  Returns the joined
    token list maximising the LM's sentence log10 probability over the top-k candidates."""
    cands = [p[:k] for p in pieces]
    if len(cands) == 1:
        return list(cands[0][0])
    last = len(cands) - 1
    # best[j] = (score of the best prefix ending in candidate j of the current piece, back-pointers)
    best = [(lm.score(c, bos=True, eos=last == 0), [j]) for j, c in enumerate(cands[0])]
    for i in range(1, len(cands)):
        nxt = []
        for j, c in enumerate(cands[i]):
            top = None
            for (sc, path), prev in zip(best, cands[i - 1]):
                # the change from scoring prev alone to scoring prev followed by c
                gain = lm.score(list(prev) + list(c), bos=i - 1 == 0, eos=i == last) - lm.score(prev, bos=i - 1 == 0, eos=False)
                if top is None or sc + gain > top[0]:
                    top = (sc + gain, path + [j])
            nxt.append(top)
        best = nxt
    _, path = max(best, key=lambda x: x[0])
    out = []
    for i, j in enumerate(path):
        out.extend(cands[i][j])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True, help="eval.<set>.<tag> of a gyro_eval run with --nbest")
    ap.add_argument("--lm", required=True, help="the LM that joins the pieces")
    ap.add_argument("--k", type=int, nargs="+", default=[1, 5, 20])
    a = ap.parse_args(argv)
    from gyro_eval import bleu, load_set
    from wo.lm.model import LanguageModel

    set_name = a.run.split(".")[1]
    refs, groups = load_set(set_name, 0)
    if groups is None:
        raise SystemExit("need a run over all sub-sentences (dev-sub with --n 0, or test-sub)")
    recs = [json.loads(ln) for ln in open(os.path.join(OUT, a.run + ".jsonl"), encoding="utf-8")]
    assert len(recs) == len(refs)
    lm = LanguageModel.load(a.lm, verify=False)
    sent_pieces, sent_refs = {}, {}
    for g, r, ref in zip(groups, recs, refs):
        sent_pieces.setdefault(g, []).append([c["text"].split() for c in r["nbest"]] or [r["text"].split()])
        sent_refs.setdefault(g, []).extend(ref)
    keys = sorted(sent_pieces)
    res = {"run": a.run, "lm": os.path.relpath(a.lm, ROOT), "sentences": len(keys),
           "multi_piece_sentences": sum(len(sent_pieces[g]) > 1 for g in keys), "BLEU_by_k": {}}
    for k in a.k:
        hyps = [join_sentence(sent_pieces[g], lm, k) for g in keys]
        for h, g in zip(hyps, keys):
            assert sorted(h) == sorted(sent_refs[g])
        b, sig = bleu(hyps, [sent_refs[g] for g in keys])
        res["BLEU_by_k"][k] = b
        res["signature"] = sig
        print(k, b, flush=True)
    with open(os.path.join(OUT, a.run + ".join.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
