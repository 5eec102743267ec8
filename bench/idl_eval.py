"""The word-ordering evaluation of Soricut & Marcu (2005, section 5, Tables 2 and 3) for
``wo idl``: bags of words from the WSJ sample (lower-cased, final punctuation removed; made by
bench/idl_data.py) realised by each search under a text-en n-gram LM.

Columns per algorithm: ID (exact match %), BLEU (sacrebleu, tokenize none, as ``wo evaluate``),
search errors % (output log10 p below the exhaustive BFS optimum; 3-7 only), estimated search
errors % (output log10 p below the reference sentence's), unfold % (states unfolded / states of
the full unfolding, mean over bags), seconds per bag (one process, wall clock of the search),
statuses.  Baseline L: the bag in inverse-lexicographic order (the paper's first baseline).

    python bench/idl_data.py                                  # test sets and LMs (once)
    python bench/idl_eval.py --set 3-7 --lm bench/results/idl/text-en.lc.o3.wolm
    python bench/idl_eval.py --set 10-25 --lm bench/results/idl/text-en.lc.o3.wolm --limit 500
    python bench/idl_eval.py --ewt-test --lm corpora/models/wo-en-4gram.wolm   # LM-only row

Results are merged into bench/results/idl/eval.json (key: set/LM/algorithm).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from wo.eval.metrics import score  # noqa: E402
from wo.idl.expr import bag  # noqa: E402
from wo.idl.realize import IDLRealizer  # noqa: E402
from wo.lm.model import LanguageModel  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "idl")
CONFIGS = {
    "3-7": [("bfs", {}), ("astar", {}), ("greedy-astar", {"k": 1}), ("greedy-astar", {"k": 2}),
            ("beam", {"beam": 0.2}), ("beam", {"beam": 0.1})],
    "10-25": [("greedy-astar", {"k": 1}), ("greedy-astar", {"k": 2}), ("greedy-astar", {"k": 3}),
              ("beam", {"beam": 0.2}), ("beam", {"beam": 0.1})],
}


def load_set(name: str, limit: int):
    with open(os.path.join(HERE, f"wsj.{name}.ref"), encoding="utf-8") as fh:
        refs = [ln.split() for ln in fh.read().splitlines()]
    with open(os.path.join(HERE, f"wsj.{name}.bag"), encoding="utf-8") as fh:
        bags = [ln.split() for ln in fh.read().splitlines()]
    return refs[:limit or None], bags[:limit or None]


def ewt_test(limit: int):
    from wo.io.conllu import read_conllu

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sents = read_conllu(os.path.join(root, "corpora", "ud-en-ewt", "en_ewt-ud-test.conllu.xz"))
    refs, bags = [], []
    for i, s in enumerate(sents):
        toks = list(s.forms)
        sh = list(toks)
        random.Random(f"13:{i}").shuffle(sh)
        refs.append(toks)
        bags.append(sh)
    return refs[:limit or None], bags[:limit or None]


def greedy_join(lm, words):
    """Soricut & Marcu's baseline G: start from one sequence per word (and ``<s>``, ``</s>``
    that can only start, resp. end, a sequence); repeatedly join the two sequences whose
    concatenation gains most log10 probability (the LM score of the joined fragment minus
    those of its parts) until one sequence is left.  Returns the words (list of str)."""
    BOS, EOS = ("<s>",), ("</s>",)
    seqs = [BOS] + [(w,) for w in words] + [EOS]
    memo = {}

    def frag(x):
        if x not in memo:
            bos, eos = x[:1] == BOS, x[-1:] == EOS
            core = list(x[1 if bos else 0:len(x) - (1 if eos else 0)])
            memo[x] = lm.score(core, bos=bos, eos=eos) if core or (bos and eos) else 0.0
        return memo[x]

    while len(seqs) > 1:
        best = None
        for i, a in enumerate(seqs):
            if a[-1:] == EOS:
                continue
            for j, b in enumerate(seqs):
                if i == j or b[:1] == BOS or (len(seqs) > 2 and a[:1] == BOS and b[-1:] == EOS):
                    continue
                gain = frag(a + b) - frag(a) - frag(b)
                if best is None or gain > best[0]:
                    best = (gain, i, j)
        _, i, j = best
        joined = seqs[i] + seqs[j]
        seqs = [x for k, x in enumerate(seqs) if k not in (i, j)] + [joined]
    return list(seqs[0][1:-1])


def evaluate(lm, refs, bags, alg, params, max_states, timeout, optimum=None, log=print):
    r = IDLRealizer(lm, algorithm=alg, max_states=max_states, timeout=timeout, **params)
    outs, secs, unfold, statuses, est_err, serr = [], 0.0, 0.0, {}, 0, 0
    tot_states = tot_full = 0
    ssecs = 0.0
    for i, (ref, b) in enumerate(zip(refs, bags)):
        o = r.realize(bag(b))
        secs += o.seconds
        ssecs += o.search_seconds
        outs.append(o)
        unfold += o.states / max(o.full_unfolding, 1)
        tot_states += o.states
        tot_full += o.full_unfolding
        statuses[o.status] = statuses.get(o.status, 0) + 1
        if o.log10_prob < lm.score(ref) - 1e-4:
            est_err += 1
        if optimum is not None and o.log10_prob < optimum[i] - 1e-4:
            serr += 1
    n = len(refs)
    sc = score([o.text for o in outs], [" ".join(x) for x in refs])
    rec = {"algorithm": alg, **params, "bags": n, "ID": round(sc.exact, 2), "BLEU": round(sc.bleu, 2),
           "search_errors": round(100.0 * serr / n, 2) if optimum is not None else None,
           "estimated_search_errors": round(100.0 * est_err / n, 2),
           "unfold_percent": round(100.0 * unfold / n, 3),
           "unfold_percent_of_total": round(100.0 * tot_states / max(tot_full, 1), 4),
           "seconds_per_bag": round(secs / n, 6), "search_seconds_per_bag": round(ssecs / n, 6),
           "status": statuses, "max_states": max_states, "signature": sc.signature}
    log(json.dumps(rec))
    return rec, [o.log10_prob for o in outs]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=["3-7", "10-25"], default="3-7")
    ap.add_argument("--ewt-test", action="store_true", help="the LM-only row: EWT test bags (cased)")
    ap.add_argument("--lm", required=True)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--algorithms", nargs="*", default=None, help="e.g. astar greedy-astar:k=1 beam:beam=0.1")
    ap.add_argument("--baselines-only", action="store_true", help="only the baselines L and G")
    ap.add_argument("--max-states", type=int, default=2_000_000)
    ap.add_argument("--timeout", type=float, default=0.0)
    ap.add_argument("--out", default=os.path.join(HERE, "eval.json"))
    a = ap.parse_args(argv)
    lm = LanguageModel.load(a.lm)
    if a.ewt_test:
        name = "ewt-test"
        refs, bags = ewt_test(a.limit)
        configs = [("beam", {"beam": 0.1})]
    else:
        name = a.set
        refs, bags = load_set(a.set, a.limit)
        configs = CONFIGS[a.set]
    if a.algorithms:
        configs = []
        for spec in a.algorithms:
            alg, _, kv = spec.partition(":")
            params = {}
            for item in filter(None, kv.split(",")):
                k, v = item.split("=")
                params[k] = int(v) if k == "k" else float(v)
            configs.append((alg, params))
    results = json.load(open(a.out)) if os.path.exists(a.out) else {}
    optimum = None
    # the baseline L: inverse-lexicographic order
    base = score([" ".join(sorted(b, reverse=True)) for b in bags], [" ".join(x) for x in refs])
    print(json.dumps({"baseline": "L", "ID": round(base.exact, 2), "BLEU": round(base.bleu, 2)}))
    key0 = f"{name}|{os.path.basename(a.lm)}|n={len(refs)}"
    results[f"{key0}|L"] = {"algorithm": "L", "ID": round(base.exact, 2), "BLEU": round(base.bleu, 2)}
    # the baseline G: greedy joining of sequences
    t0 = time.perf_counter()
    gout = [greedy_join(lm, b) for b in bags]
    gsec = (time.perf_counter() - t0) / max(len(bags), 1)
    gsc = score([" ".join(x) for x in gout], [" ".join(x) for x in refs])
    gest = sum(lm.score(o) < lm.score(r) - 1e-4 for o, r in zip(gout, refs))
    rec = {"algorithm": "G", "ID": round(gsc.exact, 2), "BLEU": round(gsc.bleu, 2),
           "estimated_search_errors": round(100.0 * gest / max(len(bags), 1), 2),
           "seconds_per_bag": round(gsec, 6), "note": "Python, not Cython"}
    print(json.dumps(rec))
    results[f"{key0}|G"] = rec
    if a.baselines_only:
        configs = []
        with open(a.out + ".tmp", "w") as fh:
            json.dump(results, fh, indent=1, sort_keys=True)
        os.replace(a.out + ".tmp", a.out)
    for alg, params in configs:
        rec, probs = evaluate(lm, refs, bags, alg, params, a.max_states, a.timeout, optimum)
        if alg == "bfs" and all(s == "ok" for s in rec["status"]):
            optimum = probs
            rec["search_errors"] = 0.0
        tag = alg + "".join(f",{k}={v}" for k, v in params.items())
        results[f"{key0}|{tag}"] = rec
        with open(a.out + ".tmp", "w") as fh:
            json.dump(results, fh, indent=1, sort_keys=True)
        os.replace(a.out + ".tmp", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
