"""A* against BFS on the WSJ-sample 3-7 bags, side by side in one process (Soricut & Marcu
2005, Table 2's speed-up column): the searches are prepared once per bag (graph, heuristic
tables), then BFS and A* are run alternately, ``--repeats`` times; the figure is the median
over repeats of the total search seconds (Cython-reported, result packaging excluded) and of
the whole ``realize`` call (preparation in Python included).  ``astar0`` is A* with the
paper's heuristic alone, ``astar`` adds the one-step lookahead (wo's default).  ``prepare``
is ``search_for`` alone (graph compilation in Python, LM ids, and for A* the heuristic's
candidate tables); "with tables" adds A*'s extra preparation (prepare_astar - prepare_bfs,
the tables) to its search time.

    python bench/idl_speed.py --lm bench/results/idl/text-en.lc.o3.wolm
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from wo.idl.expr import bag  # noqa: E402
from wo.idl.realize import IDLRealizer  # noqa: E402
from wo.lm.model import LanguageModel  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "idl")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lm", required=True)
    ap.add_argument("--set", default="3-7")
    ap.add_argument("--repeats", type=int, default=7)
    a = ap.parse_args(argv)
    lm = LanguageModel.load(a.lm)
    with open(os.path.join(HERE, f"wsj.{a.set}.bag"), encoding="utf-8") as fh:
        bags = [ln.split() for ln in fh.read().splitlines()]
    # astar0: the paper's heuristic alone (no one-step lookahead)
    algs = ("bfs", "astar", "astar0")
    alg = {"bfs": "bfs", "astar": "astar", "astar0": "astar"}
    rz = {x: IDLRealizer(lm, algorithm=alg[x], count_unfolding=False, lookahead=x != "astar0") for x in algs}
    prepared = {x: [rz[x].search_for(bag(b))[1] for b in bags] for x in algs}
    search = {x: [] for x in algs}
    whole = {x: [] for x in algs}
    prep = {x: [] for x in algs}
    states = {}
    for _ in range(a.repeats):
        for x in algs:
            tot = 0.0
            n = 0
            for s in prepared[x]:
                r = s.run(alg[x], 5, -1.0, 2_000_000, 0.0, False, x != "astar0")
                tot += r["seconds"]
                n += r["states"]
            search[x].append(tot)
            states[x] = n
            t0 = time.perf_counter()
            for b in bags:
                rz[x].search_for(bag(b))
            prep[x].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for b in bags:
                rz[x].realize(bag(b))
            whole[x].append(time.perf_counter() - t0)
    med = {f"{k}_{x}": statistics.median(v[x]) / len(bags)
           for k, v in (("search", search), ("whole", whole), ("prepare", prep)) for x in algs}
    rec = {"lm": os.path.basename(a.lm), "set": a.set, "bags": len(bags), "repeats": a.repeats,
           **{k: round(v * 1e6, 2) for k, v in med.items()},
           "unit": "microseconds per bag (median over repeats)",
           "states_unfolded": states,
           "speedup_search": round(med["search_bfs"] / med["search_astar"], 2),
           # A*'s own preparation beyond BFS's: the heuristic's candidate tables (LM queries)
           "speedup_search_with_tables": round(med["search_bfs"] / (
               med["search_astar"] + max(med["prepare_astar"] - med["prepare_bfs"], 0.0)), 2),
           "speedup_whole": round(med["whole_bfs"] / med["whole_astar"], 2),
           "speedup_search_no_lookahead": round(med["search_bfs"] / med["search_astar0"], 2),
           "speedup_whole_no_lookahead": round(med["whole_bfs"] / med["whole_astar0"], 2)}
    print(json.dumps(rec))
    out = os.path.join(HERE, "speed.json")
    d = json.load(open(out)) if os.path.exists(out) else {}
    d[f"{a.set}|{rec['lm']}"] = rec
    with open(out, "w") as fh:
        json.dump(d, fh, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
