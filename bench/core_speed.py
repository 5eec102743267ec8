"""Decoder speed of one checkout, in-process: edges scored per second and seconds per sentence.

Run it with the interpreter of each checkout to compare two commits side by side, e.g.
``for r in 1 2 3; do old/.venv/bin/python bench/core_speed.py; .venv/bin/python bench/core_speed.py; done``.
Prints one JSON line: sentences, given, seconds (decode only), edges, edges_per_second,
sentences_per_second, an md5 of the outputs (equal md5 = byte-identical outputs).

``--cache-ab R`` measures the decoding score caches (issue 15) before and after in one process:
R rounds of (caches off, caches on) over the same inputs, one JSON line per run and a summary
with the medians, the speed-up and whether the outputs are byte-identical (``--out`` writes the
summary as JSON).
"""
import argparse
import hashlib
import json
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from common import cpu_name, write_record  # noqa: E402  (bench/common.py: the helpers the bench scripts share)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=400, help="EWT dev sentences")
    ap.add_argument("--given", default="none", choices=["none", "pos", "full"])
    ap.add_argument("--model", default=str(ROOT / "corpora/models/wo-ewt-dep.wo"))
    ap.add_argument("--cache-ab", type=int, default=0, metavar="R",
                    help="R rounds of caches off / on in this process (0: one run, caches as built)")
    ap.add_argument("--out", help="write the --cache-ab summary here (JSON)")
    a = ap.parse_args()
    try:                                   # layout since the core split
        from wo.dep import Linearizer
        from wo.io import read_conllu, scramble
    except ImportError:                    # older checkouts
        try:
            from wo.dep.linearizer import Linearizer
        except ImportError:
            from wo.linearizer import Linearizer
        from wo.data import read_conllu, scramble
    sents = read_conllu(str(ROOT / "corpora/ud-en-ewt/en_ewt-ud-dev.conllu.xz"))[:a.n]
    lin = Linearizer.load(a.model)
    jobs = []
    for i, s in enumerate(sents):
        sc, _ = scramble(s, 1, i)
        pos = list(sc.xpos) if a.given in ("pos", "full") else None
        heads = list(sc.heads) if a.given == "full" else None
        jobs.append((sc.forms, pos, heads))

    def run(cache=None) -> dict:
        if cache is not None:
            lin.core.search.score_cache = cache
        md5 = hashlib.md5()
        e0 = lin.core.total_edges
        t0 = time.perf_counter()
        for forms, pos, heads in jobs:
            md5.update(lin.linearize(forms, pos, heads).text.encode() + b"\n")
        secs = time.perf_counter() - t0
        edges = lin.core.total_edges - e0
        return {"sentences": len(jobs), "given": a.given, "seconds": round(secs, 3), "edges": edges,
                "edges_per_second": round(edges / secs), "sentences_per_second": round(len(jobs) / secs, 1),
                "md5": md5.hexdigest(), "python": sys.executable,
                **({"score_cache": cache} if cache is not None else {})}

    if not a.cache_ab:
        print(json.dumps(run()))
        return
    rows = {False: [], True: []}
    for _ in range(a.cache_ab):
        for cache in (False, True):
            r = run(cache)
            rows[cache].append(r)
            print(json.dumps(r), flush=True)
    med = {c: statistics.median(r["seconds"] for r in rows[c]) for c in rows}
    eps = {c: statistics.median(r["edges_per_second"] for r in rows[c]) for c in rows}
    summary = {
        "what": "decoding score caches off (before) / on (after), same process, alternated",
        "command": " ".join([os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(str(ROOT)) else "python",
                             "bench/core_speed.py"] + sys.argv[1:]),
        "cpu_model": cpu_name(), "model": os.path.relpath(a.model, ROOT), "given": a.given,
        "sentences": len(jobs), "rounds": a.cache_ab,
        "seconds_median": {"off": med[False], "on": med[True]},
        "edges_per_second_median": {"off": eps[False], "on": eps[True]},
        "speedup": round(med[False] / med[True], 3),
        "identical_outputs": len({r["md5"] for c in rows for r in rows[c]}) == 1,
        "runs": {"off": rows[False], "on": rows[True]},
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}))
    if a.out:
        write_record(a.out, summary)


if __name__ == "__main__":
    main()
