"""GYRO's throughput on whole EWT bags with the shipped 4-gram (issue 32, item 6): ``wo gyro
realize --lm corpora/models/wo-en-4gram.wolm --jobs 2`` (the ``make demo`` line) as one whole
process per configuration, BLEU as ``wo evaluate`` computes it.  Configurations: ``default``
(the chart's defaults: row cap 500, join filter 0.5) and ``former`` (the defaults before them:
row cap 2000, no join filter; dev only, so that test is decoded once).  Writes
bench/results/gyro/throughput.SPLIT.json (shown in docs/results.md).

    python bench/gyro_throughput.py --split dev      # default and former
    python bench/gyro_throughput.py --split test     # default only
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from common import ROOT, cpu_name, decode_and_score

LM = os.path.join(ROOT, "corpora", "models", "wo-en-4gram.wolm")
CONFIGS = {"default": [], "former": ["--row-cap", "2000", "--join-slack", "-1"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["dev", "test"], default="dev")
    a = ap.parse_args()
    ref = os.path.join(ROOT, "corpora", "ud-en-ewt", f"en_ewt-ud-{a.split}.conllu.xz")
    names = list(CONFIGS) if a.split == "dev" else ["default"]
    rec = {"what": "GYRO (unigram rules) on whole EWT bags with the shipped 4-gram, whole process, 2 jobs",
           "cpu": cpu_name(cores=True), "script": f"python bench/gyro_throughput.py --split {a.split}", "results": {}}
    with tempfile.TemporaryDirectory(prefix="wo-gyro-") as tmp:
        for name in names:
            hyp = os.path.join(tmp, f"{name}.txt")
            rec["results"][name] = decode_and_score(
                ["gyro", "realize", "--lm", LM, "--input", ref, "--output", hyp, "--jobs", "2", "--quiet",
                 *CONFIGS[name]], hyp, ref)
            print(f"[gyro_throughput] {a.split} {name}: BLEU {rec['results'][name]['bleu']} "
                  f"({rec['results'][name]['sentences_per_second']} sent/s)", file=sys.stderr, flush=True)
    with open(os.path.join(ROOT, "bench", "results", "gyro", f"throughput.{a.split}.json"), "w") as f:
        json.dump(rec, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
