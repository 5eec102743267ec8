"""Decoder speed of one checkout, in-process: edges scored per second and seconds per sentence.

Run it with the interpreter of each checkout to compare two commits side by side, e.g.
``for r in 1 2 3; do old/.venv/bin/python bench/core_speed.py; .venv/bin/python bench/core_speed.py; done``.
Prints one JSON line: sentences, given, seconds (decode only), edges, edges_per_second,
sentences_per_second, an md5 of the outputs (equal md5 = byte-identical outputs).
"""
import argparse
import hashlib
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=400, help="EWT dev sentences")
    ap.add_argument("--given", default="none", choices=["none", "full"])
    ap.add_argument("--model", default=str(ROOT / "corpora/models/wo-ewt-dep.wo"))
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
        pos = list(sc.xpos) if a.given == "full" else None
        heads = list(sc.heads) if a.given == "full" else None
        jobs.append((sc.forms, pos, heads))
    md5 = hashlib.md5()
    t0 = time.perf_counter()
    for forms, pos, heads in jobs:
        md5.update(lin.linearize(forms, pos, heads).text().encode() + b"\n")
    secs = time.perf_counter() - t0
    edges = lin.core.total_edges
    print(json.dumps({"sentences": len(jobs), "given": a.given, "seconds": round(secs, 3), "edges": edges,
                      "edges_per_second": round(edges / secs), "sentences_per_second": round(len(jobs) / secs, 1),
                      "md5": md5.hexdigest(), "python": sys.executable}))


if __name__ == "__main__":
    main()
