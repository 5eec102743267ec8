"""Tune the decoding defaults of a model on EWT dev and store them in the model header.

For bags of words and for full trees, each setting (pops per word, completion beam, chart
factor, patience after the first goal) is scored on all of EWT dev (scrambled input); the best BLEU whose mean decoding time
stays under --max-ms milliseconds per sentence is written to the header's ``decode`` entry
(``--write``).  Test data is never used.

    python bench/tune_decode.py --model corpora/models/wo-ewt-dep.wo [--write] [--max-ms 65]
"""
import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# (pops per word, completion beam, chart factor, patience: pops per word after the first goal)
BAG_GRID = [(30, 64, 6, 10), (45, 64, 8, 10), (60, 64, 10, 10), (60, 64, 10, 30)]
TREE_GRID = [(200, 32, 16, 10), (1000, 32, 32, 100), (1000, 64, 64, 100)]


def main():
    from wo.io import read_conllu, scramble
    from wo.eval import score
    from wo.dep.linearizer import Linearizer, given_for
    from wo.model import Model

    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--max-ms", type=float, default=65.0,
                    help="mean decode ms/sentence limit (ZGen_SR: 78 ms/sentence on bags)")
    a = ap.parse_args()
    model = Model.load(a.model, mmap=False)
    dev = read_conllu(os.path.join(ROOT, "corpora", "ud-en-ewt", "en_ewt-ud-dev.conllu.xz"))
    refs = [s.text() for s in dev]
    found = {}
    for given, grid in (("none", BAG_GRID), ("full", TREE_GRID)):
        items = []
        for i, s in enumerate(dev):
            sc, _ = scramble(s, 1, i)
            items.append((sc.forms, *given_for(sc, given, 1.0, 1.0, 1, i)))
        best = None
        for bf, cb, k, pf in grid:
            lin = Linearizer(model, budget_factor=bf, complete_beam=cb, beam_factor=k, patience_factor=pf)
            t0 = time.perf_counter()
            hyps = [lin.linearize(*it).text for it in items]
            ms = 1000 * (time.perf_counter() - t0) / len(items)
            b = score(hyps, refs).bleu
            print(f"{given} pops/word {bf} completion beam {cb} chart {k}n patience/word {pf}: BLEU {b:.2f}, {ms:.2f} ms/sentence",
                  flush=True)
            if ms <= a.max_ms and (best is None or b > best[0]):
                best = (b, bf, cb, k, ms, pf)
        found[given] = best
    dec = dict(model.header.get("decode", {}))
    dec.update({"budget_factor": found["none"][1], "complete_beam": max(found["none"][2], found["full"][2]),
                "beam_factor": found["none"][3], "tree_budget_factor": found["full"][1],
                "tree_beam_factor": found["full"][3], "patience_factor": found["none"][5],
                "tree_patience_factor": found["full"][5],
                "tuned_on": "en_ewt-ud-dev (all 2001 sentences, scrambled, seed 1)",
                "dev_bleu_bag": round(found["none"][0], 2), "dev_bleu_full": round(found["full"][0], 2)})
    print(json.dumps(dec, indent=1))
    if a.write:
        model.header["decode"] = dec
        model.save(a.model)


if __name__ == "__main__":
    main()
