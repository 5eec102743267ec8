"""Out of domain: the EWT-trained defaults on UD English-PUD test (1,000 sentences of news and
Wikipedia, translated; ../shared/corpora/ud-pud, CC BY-SA 4.0), beside the same commands on EWT
test: bags (the default of ``wo linearize --given none``: the search the shipped model names,
GYRO's n-best under the large 4-gram reranked by the model), bags with the model's own search
(``--bag-search dep``), full trees (``--given full``: the search's popped goals reranked by the LMs
the model names) and full trees without the reranking (``--no-tree-rerank``).  Whole-process
wall time, one run each, ``--jobs 2``;
BLEU as ``wo evaluate`` computes it (sacrebleu, case-sensitive, ``tokenize='none'``, the UD
forms).  Input order: ``wo linearize`` shuffles every sentence with its fixed seed.  Writes
bench/results/lm/pud.json (shown in docs/results.md).

    python bench/pud.py                 # every configuration on PUD and EWT test
    python bench/pud.py --configs bags  # some of bags, bags-dep, trees, trees-plain
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from common import ROOT, cpu_name, decode_and_score

SHARED = os.environ.get("WO_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
SETS = {"pud": os.path.join(SHARED, "corpora", "ud-pud", "en_pud-ud-test.conllu"),
        "ewt": os.path.join(ROOT, "corpora", "ud-en-ewt", "en_ewt-ud-test.conllu.xz")}
CONFIGS = {"bags": ["--given", "none"], "bags-dep": ["--given", "none", "--bag-search", "dep"],
           "trees": ["--given", "full"],
           "trees-plain": ["--given", "full", "--no-tree-rerank"]}
OUT = os.path.join(ROOT, "bench", "results", "lm", "pud.json")


def run(name: str, path: str, config: str, tmp: str) -> dict:
    """``wo linearize`` (default model) on ``path`` with CONFIGS[config], then ``wo evaluate``."""
    hyp = os.path.join(tmp, f"{name}.{config}.txt")
    return decode_and_score(["linearize", "--input", path, "--output", hyp, "--jobs", "2", *CONFIGS[config]],
                            hyp, path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    a = ap.parse_args()
    if not os.path.exists(SETS["pud"]):
        raise SystemExit(f"{SETS['pud']} missing (../shared/corpora/ud-pud)")
    rec = json.load(open(OUT)) if os.path.exists(OUT) else {}
    rec.update(what="EWT-trained defaults out of domain (UD English-PUD test) and in domain (EWT test)",
               cpu=cpu_name(cores=True), script="python bench/pud.py")
    res = rec.setdefault("results", {})
    with tempfile.TemporaryDirectory(prefix="wo-pud-") as tmp:
        for config in a.configs:
            for name, path in SETS.items():
                res.setdefault(config, {})[name] = out = run(name, path, config, tmp)
                print(f"[pud] {config} {name}: BLEU {out['bleu']} ({out['sentences_per_second']} sent/s)",
                      file=sys.stderr, flush=True)
    with open(OUT, "w") as f:
        json.dump(rec, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
