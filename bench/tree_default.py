"""Full trees by default: ``wo linearize --given full`` with the shipped model reranks the tree
search's n-best (its decode settings, ``corpora/models/wo-ewt-dep-lm.decode.json``: beam 32 per
word, the large 4-gram and three tree-view LMs on 20 strings, the no-LM model's parse on the best
5), against the same search without the reranking (``--no-tree-rerank``).

Decodes EWT dev both ways, one job each, whole process (the weights were chosen on dev:
``python bench/tree_rerank.py grid --dump W/dev32.pkl --set wiki --models-top 5``), and gathers
the test figures of the runs that decoded test once: ``bench/zgen_side_by_side.py`` (the default
against ZGen_SR, side by side) and ``bench/pud.py`` (``trees``, ``trees-plain``).  Writes
bench/results/lm/tree-default.json (shown in docs/results.md).

    python bench/tree_default.py
"""
from __future__ import annotations

import json
import os
import sys
import tempfile

from common import ROOT, cpu_name, decode_and_score, write_record

DEV = os.path.join(ROOT, "corpora", "ud-en-ewt", "en_ewt-ud-dev.conllu.xz")
RESULTS = os.path.join(ROOT, "bench", "results")
OUT = os.path.join(RESULTS, "lm", "tree-default.json")
CONFIGS = {"default": [], "plain": ["--no-tree-rerank"]}


def main() -> int:
    with open(os.path.join(ROOT, "corpora", "models", "wo-ewt-dep-lm.decode.json"), encoding="utf-8") as f:
        settings = json.load(f)
    rec = {"what": "EWT full trees (--given full): the default (tree n-best reranked) against --no-tree-rerank",
           "cpu": cpu_name(cores=True), "script": "python bench/tree_default.py",
           "settings": {"tree_beam_factor": settings.get("tree_beam_factor"), "tree_rerank": settings.get("tree_rerank")},
           "dev": {}}
    with tempfile.TemporaryDirectory(prefix="wo-trees-") as tmp:
        for name, extra in CONFIGS.items():
            hyp = os.path.join(tmp, f"dev.{name}.txt")
            rec["dev"][name] = decode_and_score(["linearize", "--input", DEV, "--output", hyp, "--given", "full",
                                                 "--jobs", "1", *extra], hyp, DEV)
            print(f"[trees] dev {name}: BLEU {rec['dev'][name]['bleu']} in {rec['dev'][name]['wall_seconds']} s",
                  file=sys.stderr, flush=True)
    zg = json.load(open(os.path.join(RESULTS, "zgen_side_by_side.json")))
    full = zg["types"]["full"]
    rec["test_side_by_side"] = {"source": "bench/results/zgen_side_by_side.json", "date_utc": zg.get("date_utc"),
                                "wo_bleu": full["wo"].get("bleu"), "wo_wall_s": full["wo"]["wall_s"],
                                "zgen_wall_s": full["zgen"]["wall_s"], "ratio": full.get("ratio_wall_zgen_over_wo"),
                                "zgen_bleu": full["zgen"].get("bleu")}
    pud = json.load(open(os.path.join(RESULTS, "lm", "pud.json")))["results"]
    rec["test"] = {k: {s: pud[k][s] for s in ("ewt", "pud") if s in pud.get(k, {})} for k in ("trees", "trees-plain")}
    write_record(OUT, rec)
    print(json.dumps({k: rec[k] for k in ("test_side_by_side",)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
