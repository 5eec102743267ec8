"""Choosing the bag default of ``wo linearize`` on EWT dev (issue 32): GYRO's n-best under the
large 4-gram (corpora/models/wo-en-wiki-4gram.wolm), reranked by the shipped dependency model,
at several speed settings, beside the model's own dependency search.  Every configuration
decodes all EWT dev bags (``wo linearize`` shuffles each sentence with its fixed seed) as one
whole process with ``--jobs 2``; BLEU as ``wo evaluate`` computes it.  The settings the shipped
model names (corpora/models/wo-ewt-dep-lm.decode.json) are the ``default`` row.  Writes
bench/results/lm/bag-default.dev.json (shown in docs/results.md).

    python bench/bag_default.py                      # every configuration
    python bench/bag_default.py --configs default dep
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from common import ROOT, cpu_name, decode_and_score

DEV = os.path.join(ROOT, "corpora", "ud-en-ewt", "en_ewt-ud-dev.conllu.xz")
LM = os.path.join(ROOT, "corpora", "models", "wo-en-wiki-4gram.wolm")
MODEL = os.path.join(ROOT, "corpora", "models", "wo-ewt-dep-lm.wo")
OUT = os.path.join(ROOT, "bench", "results", "lm", "bag-default.dev.json")
with open(os.path.join(ROOT, "corpora", "models", "wo-ewt-dep-lm.decode.json"), encoding="utf-8") as _f:
    SPEC = json.load(_f)["bag"]   # the shipped bag settings; their reranking weight in every GYRO row
GYRO = ["gyro", "realize", "--lm", LM, "--dep-model", MODEL, "--dep-weight", str(SPEC["dep_weight"])]
# name -> (command after `wo`, what differs from the default)
CONFIGS = {
    "default": (["linearize"], "the shipped model's bag search (its decode.json)"),
    "dep": (["linearize", "--bag-search", "dep"], "the model's own dependency search"),
    "cap1000": (GYRO + ["--row-cap", "1000", "--join-slack", "0.5", "--dep-nbest", "10", "--no-dep-own",
                        "--dep-budget", "50"], "row cap 1000"),
    "nbest20": (GYRO + ["--row-cap", "500", "--join-slack", "0.5", "--dep-nbest", "20", "--no-dep-own",
                        "--dep-budget", "50"], "20 strings reranked"),
    "own": (GYRO + ["--row-cap", "500", "--join-slack", "0.5", "--dep-nbest", "10", "--dep-budget", "50"],
            "the dependency search's output added to the strings"),
    "budget25": (GYRO + ["--row-cap", "500", "--join-slack", "0.5", "--dep-nbest", "10", "--no-dep-own",
                         "--dep-budget", "25"], "25 pops per word for each parse"),
    "nbest20-budget25": (GYRO + ["--row-cap", "500", "--join-slack", "0.5", "--dep-nbest", "20", "--no-dep-own",
                                 "--dep-budget", "25"], "20 strings, 25 pops per word for each parse"),
    "cap1000-nbest20-budget25": (GYRO + ["--row-cap", "1000", "--join-slack", "0.5", "--dep-nbest", "20",
                                         "--no-dep-own", "--dep-budget", "25"],
                                 "row cap 1000, 20 strings, 25 pops per word for each parse"),
    "cap1000-nbest20-own-budget25": (GYRO + ["--row-cap", "1000", "--join-slack", "0.5", "--dep-nbest", "20",
                                             "--dep-budget", "25"],
                                     "row cap 1000, 20 strings and the model's own output, 25 pops per word"),
    "budget200": (GYRO + ["--row-cap", "500", "--join-slack", "0.5", "--dep-nbest", "10", "--no-dep-own",
                          "--dep-budget", "200"], "200 pops per word for each parse"),
    "noslack": (GYRO + ["--row-cap", "500", "--dep-nbest", "10", "--no-dep-own", "--dep-budget", "50"],
                "no join filter"),
    "slow": (GYRO + ["--row-cap", "2000", "--join-slack", "-1", "--dep-budget", "200"],
             "GYRO's defaults (row cap 2000, no join filter), 20 strings and the dependency output, 200 pops per word"),
}


def run(name: str, tmp: str) -> dict:
    """Decode EWT dev with CONFIGS[name] (whole process, 2 jobs) and score it."""
    hyp = os.path.join(tmp, f"{name}.txt")
    rec = decode_and_score(CONFIGS[name][0] + ["--input", DEV, "--output", hyp, "--jobs", "2", "--quiet"], hyp, DEV)
    return {"what": CONFIGS[name][1], **rec}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    a = ap.parse_args()
    rec = json.load(open(OUT)) if os.path.exists(OUT) else {}
    rec.update(what="the bag default of wo linearize chosen on EWT dev", cpu=cpu_name(cores=True),
               script="python bench/bag_default.py", shipped_settings=SPEC, lm_bytes=os.path.getsize(LM))
    res = rec.setdefault("results", {})
    with tempfile.TemporaryDirectory(prefix="wo-bag-") as tmp:
        for name in a.configs:
            res[name] = out = run(name, tmp)
            print(f"[bag_default] {name}: BLEU {out['bleu']} ({out['wall_seconds']} s, "
                  f"{out['sentences_per_second']} sent/s)", file=sys.stderr, flush=True)
            with open(OUT, "w") as f:
                json.dump(rec, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
