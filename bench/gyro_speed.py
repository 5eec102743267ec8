"""GYRO seconds and memory per bag against bag size (issue 12; a Figure-6 style plot of de
Gispert, Tomalin & Byrne 2014), and the two lattice engines side by side on the same bags.

Bags: EWT dev sub-sentences (at most 20 tokens, ``bench/gyro_eval.py``'s split) of each size
from 4 to 20, ``--per-size`` of each, shuffled with a fixed seed; one process, one bag at a
time, in this order: every configuration on a bag before the next bag (so the engines share
the machine's state).  Configurations:

* ``chart``: the default of ``wo gyro realize`` (unigram rules, r 3, beta 4);
* ``chart-paper``: the paper's grammar (phrases, bigram, unigram fallbacks), r 3, beta 2;
* ``fst-paper``: the same grammar and settings with pynini/OpenFst acceptors, bags of at most
  ``--fst-max`` tokens.

Memory: the chart's pools (exact bytes they hold; the peak of the bag) and, for every
configuration, the process peak RSS.  Writes bench/results/gyro/speed.json and speed.png.

    python bench/gyro_speed.py --lm bench/results/gyro/text-en+ewt.o4.wolm
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
OUT = os.path.join(HERE, "results", "gyro")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lm", default=os.path.join(OUT, "text-en+ewt.o4.wolm"))
    ap.add_argument("--index", default=os.path.join(OUT, "text-en+ewt.woidx"))
    ap.add_argument("--per-size", type=int, default=8)
    ap.add_argument("--fst-max", type=int, default=16)
    a = ap.parse_args(argv)
    from gyro_eval import subsentences
    from wo.gyro import PhraseIndex
    from wo.gyro.realize import PAPER_LEVELS, GyroRealizer
    from wo.io import read_conllu
    from wo.lm.model import LanguageModel

    lm = LanguageModel.load(a.lm, verify=False)
    idx = PhraseIndex.load(a.index, verify=False)
    configs = {
        "chart": GyroRealizer(None, lm),
        "chart-paper": GyroRealizer(idx, lm, levels=PAPER_LEVELS, beta=2.0),
        "fst-paper": GyroRealizer(idx, lm, levels=PAPER_LEVELS, engine="fst", beta=2.0),
    }
    pieces = [p for s in read_conllu(os.path.join(ROOT, "corpora", "ud-en-ewt", "en_ewt-ud-dev.conllu.xz"))
              for p in subsentences(list(s.forms))]
    rng = random.Random(7)
    bags = []
    for n in range(4, 21):
        same = [p for p in pieces if len(p) == n]
        for p in rng.sample(same, min(a.per_size, len(same))):
            b = list(p)
            rng.shuffle(b)
            bags.append(b)
    rows = {c: {} for c in configs}
    for b in bags:
        for name, g in configs.items():
            if name.startswith("fst") and len(b) > a.fst_max:
                continue
            t0 = time.perf_counter()
            res = g.realize(b)
            dt = time.perf_counter() - t0
            rows[name].setdefault(len(b), []).append((dt, res.pool_mb, res.states, res.level))
        print(len(b), {k: round(v[len(b)][-1][0], 3) for k, v in rows.items() if len(b) in v}, flush=True)
    out = {"lm": os.path.relpath(a.lm, ROOT), "per_size": a.per_size, "bags": len(bags),
           "peak_rss_mb_process": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
           "configs": {}}
    for name, by in rows.items():
        out["configs"][name] = {
            n: {"mean_s": round(statistics.mean(x[0] for x in v), 4), "max_s": round(max(x[0] for x in v), 4),
                "max_pool_mb": round(max(x[1] for x in v), 2), "max_states": max(x[2] for x in v)}
            for n, v in sorted(by.items())}
    common = [n for n in rows["fst-paper"]]
    tot = {c: sum(x[0] for n in common for x in rows[c][n]) for c in configs}
    out["same_bags_seconds"] = {"sizes": f"4..{a.fst_max}", **{c: round(t, 2) for c, t in tot.items()},
                                "fst/chart-paper": round(tot["fst-paper"] / tot["chart-paper"], 1)}
    with open(os.path.join(OUT, "speed.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    print(json.dumps(out["same_bags_seconds"]))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for name, by in out["configs"].items():
        ns = list(by)
        ax[0].plot(ns, [by[n]["mean_s"] for n in ns], marker="o", label=f"{name} mean")
        ax[0].plot(ns, [by[n]["max_s"] for n in ns], ls="--", label=f"{name} max")
        if not name.startswith("fst"):
            ax[1].plot(ns, [by[n]["max_pool_mb"] for n in ns], marker="o", label=name)
    ax[0].set_yscale("log")
    ax[0].set_xlabel("bag size (tokens)")
    ax[0].set_ylabel("seconds per bag")
    ax[0].legend(fontsize=7)
    ax[1].set_xlabel("bag size (tokens)")
    ax[1].set_ylabel("worst-case chart pool memory (MB)")
    ax[1].legend(fontsize=7)
    fig.suptitle("GYRO on EWT dev sub-sentences, one core")
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "speed.png"), dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
