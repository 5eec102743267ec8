"""Phrase-based baselines for Chinese->English synthesis: monotone and LM-ordered decoding.

Both baselines (``wo.smt.baseline``) use the same phrase table, LM and split as the synthesis
decoder: (a) monotone phrase-based decoding (no reordering), (b) the same options in any order
chosen by the LM and the translation probability (free reordering, no distortion model).

The weights (w_tm, w_wp, w_unk; w_lm fixed at 1 since the argmax is scale invariant) are
tuned per baseline on dev (the first ``--dev-limit`` sentences) by coordinate ascent over
small grids, maximising BLEU (sacrebleu ``corpus_bleu`` of the detokenized output against
``en_raw``, default 13a tokenization).  With ``--test`` the test set is then decoded ONCE with
the chosen weights.  Decoding is single-threaded (``--jobs`` 1 by default).

    python bench/smt_baselines.py --data /work/smtdata --table TABLE --lm LM \\
        [--dev-limit N] [--test]

Writes bench/results/smt/baselines.json (dev/test BLEU with the sacrebleu signature, chosen
weights, tuning trace, sentences/s on one core, wall time) and the outputs
bench/results/smt/{monotone,lmorder}.{dev,test}.txt (detokenized, one sentence per line).
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
from common import bleu as common_bleu, read_jsonl  # noqa: E402  (bench/ is on sys.path)

GRIDS = {
    "w_tm": [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0],
    "w_wp": [-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0],
    "w_unk": [-20.0, -10.0, -5.0, -3.0, -2.0, -1.0, 0.0],
}

_WORKER = {}
LAST_CPU = [0.0]


def src_tokens(rec):
    zh = rec["zh"]
    return zh.split() if isinstance(zh, str) else list(zh)


def _decode_one(kind, opts, n, lm, w, cfg):
    from wo.smt.baseline import decode_lm_order, decode_monotone

    if kind == "monotone":
        return decode_monotone(opts, n, lm, w, beam=cfg["beam"], option_limit=cfg["option_limit"])
    return decode_lm_order(opts, n, lm, w, stack_limit=cfg["stack_limit"], beam=cfg["threshold"],
                           option_limit=cfg["option_limit"], expand_limit=cfg["expand_limit"])


def _chunk(kind, items, lm_path, w, cfg):
    """Worker for --jobs > 1: loads the LM once per process."""
    from wo.lm.model import LanguageModel

    lm = _WORKER.get(lm_path)
    if lm is None:
        lm = _WORKER[lm_path] = LanguageModel.load(lm_path)
    return [_decode_one(kind, o, n, lm, w, cfg) for o, n in items]


def decode_all(kind, sents, lm, lm_path, w, cfg, jobs):
    """Token outputs of every (options, n_src) and the decoding seconds (wall clock; the
    process CPU seconds are in ``LAST_CPU[0]`` for --jobs 1)."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    if jobs <= 1:
        out = [_decode_one(kind, o, n, lm, w, cfg) for o, n in sents]
    else:
        from joblib import Parallel, delayed

        k = max(1, (len(sents) + 4 * jobs - 1) // (4 * jobs))
        parts = Parallel(n_jobs=jobs)(delayed(_chunk)(kind, sents[i:i + k], lm_path, w, cfg)
                                      for i in range(0, len(sents), k))
        out = [t for p in parts for t in p]
    LAST_CPU[0] = time.process_time() - c0
    return out, time.perf_counter() - t0


def bleu(hyps, refs):
    """sacrebleu corpus BLEU (13a tokenization, case-sensitive) of detokenized lines, as ``common.bleu``."""
    return common_bleu(hyps, refs, tokenize="13a").bleu


def signature(refs):
    """The sacrebleu signature of that BLEU (nrefs:1|case:mixed|eff:no|tok:13a|...)."""
    return common_bleu(refs[:1], refs[:1], tokenize="13a").signature


def tune(kind, sents, refs, lm, lm_path, cfg, jobs, rounds, budget, log):
    """Coordinate ascent over GRIDS from the defaults; returns (weights, bleu, trace)."""
    from wo.smt.baseline import BaselineWeights
    from wo.smt.prep import detokenize

    seen = {}
    trace = []
    t0 = time.time()

    def evaluate(wd):
        key = tuple(sorted(wd.items()))
        if key not in seen:
            toks, secs = decode_all(kind, sents, lm, lm_path, BaselineWeights(**wd), cfg, jobs)
            b = bleu([detokenize(t) for t in toks], refs)
            seen[key] = b
            trace.append({"weights": dict(wd), "bleu": b, "seconds": round(secs, 2)})
            log(f"  {kind} {wd} BLEU {b:.2f} ({secs:.1f} s)")
        return seen[key]

    cur = BaselineWeights().as_dict()
    cur["w_lm"] = 1.0
    best = evaluate(cur)
    for r in range(rounds):
        changed = False
        for name, grid in GRIDS.items():
            for v in grid:
                if budget and time.time() - t0 > budget:
                    log(f"  {kind}: tuning budget of {budget:.0f} s spent")
                    return cur, best, trace, False
                cand = dict(cur, **{name: v})
                b = evaluate(cand)
                if b > best + 1e-9:
                    best, cur, changed = b, cand, True
        if not changed:
            break
    return cur, best, trace, True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="/work/smtdata", help="directory with dev.jsonl.gz, test.jsonl.gz")
    ap.add_argument("--table", required=True, help="phrase table (wo.smt.phrases.PhraseTable)")
    ap.add_argument("--lm", required=True, help="English LM (.wolm or ARPA)")
    ap.add_argument("--dev-limit", type=int, default=None,
                    help="tune on the first N dev sentences (default all)")
    ap.add_argument("--test", action="store_true", help="decode test once with the tuned weights")
    ap.add_argument("--only", choices=["monotone", "lmorder"], default=None)
    ap.add_argument("--reuse", action="store_true",
                    help="take weights and dev results from an earlier baselines.json (no tuning)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--max-len", type=int, default=5, help="longest source phrase")
    ap.add_argument("--lam", type=float, default=0.1, help="option threshold (prob >= lam * best)")
    ap.add_argument("--option-limit", type=int, default=20, help="options kept per source span")
    ap.add_argument("--beam", type=int, default=100, help="monotone: states per source position")
    ap.add_argument("--stack-limit", type=int, default=50, help="lmorder: hypotheses per stack")
    ap.add_argument("--threshold", type=float, default=None, help="lmorder: threshold beam (log10)")
    ap.add_argument("--expand-limit", type=int, default=None, help="lmorder: new hypotheses per hypothesis")
    ap.add_argument("--rounds", type=int, default=2, help="coordinate-ascent rounds")
    ap.add_argument("--budget", type=float, default=0, help="tuning seconds per baseline (0 = no limit)")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "smt"))
    a = ap.parse_args(argv)

    from wo.lm.model import LanguageModel
    from wo.smt.baseline import BaselineWeights
    from wo.smt.phrases import PhraseTable
    from wo.smt.prep import detokenize

    wall0 = time.time()
    log = lambda m: print(m, flush=True)  # noqa: E731
    os.makedirs(a.out, exist_ok=True)
    lm = LanguageModel.load(a.lm)
    t = time.time()
    table = PhraseTable.load(a.table)
    log(f"table {a.table}: {len(table)} pairs ({time.time() - t:.1f} s); LM order {lm.order}")
    cfg = {"beam": a.beam, "stack_limit": a.stack_limit, "threshold": a.threshold,
           "option_limit": a.option_limit, "expand_limit": a.expand_limit}

    stats = {}

    def load(split, limit=None):
        recs = read_jsonl(os.path.join(a.data, f"{split}.jsonl.gz"), limit)
        t = time.time()
        sents = []
        for r in recs:
            src = src_tokens(r)
            sents.append((table.options(src, max_len=a.max_len, lam=a.lam), len(src)))
        n_opt = sum(len(o) for o, _ in sents) / max(1, len(sents))
        n_src = sum(n for _, n in sents) / max(1, len(sents))
        log(f"{split}: {len(sents)} sentences, {n_src:.1f} source words, {n_opt:.0f} options "
            f"per sentence ({time.time() - t:.1f} s)")
        stats[split] = {"sentences": len(sents), "source_words_mean": round(n_src, 2),
                        "options_mean": round(n_opt, 1), "options_seconds": round(time.time() - t, 2)}
        return sents, [r["en_raw"] for r in recs]

    dev, dev_refs = load("dev", a.dev_limit)
    sig = signature(dev_refs)
    res_path = os.path.join(a.out, "baselines.json")
    result = {"signature": sig, "config": dict(cfg, max_len=a.max_len, lam=a.lam, table=a.table,
                                               lm=a.lm, dev_limit=a.dev_limit, jobs=a.jobs,
                                               rounds=a.rounds, grids=GRIDS),
              "data": stats, "baselines": {}}
    kinds = [a.only] if a.only else ["monotone", "lmorder"]
    if (a.only or a.reuse) and os.path.exists(res_path):
        # keep the other baseline's results of an earlier run (and with --reuse, all of them)
        with open(res_path) as f:
            old = json.load(f).get("baselines", {})
        result["baselines"].update({k: v for k, v in old.items() if a.reuse or k != a.only})

    def save():
        result["wall_seconds"] = round(time.time() - wall0, 1)
        with open(res_path, "w") as f:
            json.dump(result, f, indent=1)

    for kind in kinds:
        if a.reuse and kind in result["baselines"]:
            log(f"{kind}: reusing weights {result['baselines'][kind]['weights']}")
            continue
        log(f"tuning {kind} on {len(dev)} dev sentences")
        t = time.time()
        wd, b, trace, complete = tune(kind, dev, dev_refs, lm, a.lm, cfg, a.jobs, a.rounds, a.budget, log)
        w = BaselineWeights(**wd)
        toks, secs = decode_all(kind, dev, lm, a.lm, w, cfg, a.jobs)
        hyps = [detokenize(x) for x in toks]
        with open(os.path.join(a.out, f"{kind}.dev.txt"), "w", encoding="utf-8") as f:
            f.write("".join(h + "\n" for h in hyps))
        entry = {"weights": wd, "tuning_complete": complete, "tuning_seconds": round(time.time() - t, 1),
                 "tuning": trace,
                 "dev": {"bleu": bleu(hyps, dev_refs), "sentences": len(dev), "signature": sig,
                         "seconds": round(secs, 2), "sentences_per_s": round(len(dev) / max(secs, 1e-9), 2),
                         "cpu_seconds": round(LAST_CPU[0], 2),
                         "sentences_per_cpu_s": round(len(dev) / max(LAST_CPU[0], 1e-9), 2)
                         if a.jobs <= 1 else None}}
        result["baselines"][kind] = entry
        log(f"{kind}: weights {wd} dev BLEU {entry['dev']['bleu']:.2f} "
            f"({entry['dev']['sentences_per_s']} sentences/s)")
        save()

    if a.test:
        test, test_refs = load("test")
        for kind in kinds:
            w = BaselineWeights(**result["baselines"][kind]["weights"])
            toks, secs = decode_all(kind, test, lm, a.lm, w, cfg, a.jobs)
            hyps = [detokenize(x) for x in toks]
            with open(os.path.join(a.out, f"{kind}.test.txt"), "w", encoding="utf-8") as f:
                f.write("".join(h + "\n" for h in hyps))
            result["baselines"][kind]["test"] = {
                "bleu": bleu(hyps, test_refs), "sentences": len(test), "signature": sig,
                "seconds": round(secs, 2), "sentences_per_s": round(len(test) / max(secs, 1e-9), 2),
                "cpu_seconds": round(LAST_CPU[0], 2),
                "sentences_per_cpu_s": round(len(test) / max(LAST_CPU[0], 1e-9), 2)
                if a.jobs <= 1 else None}
            log(f"{kind}: test BLEU {result['baselines'][kind]['test']['bleu']:.2f}")
            save()
    save()
    log(f"BLEU signature: {sig}")
    log(f"wrote {res_path} ({time.time() - wall0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
