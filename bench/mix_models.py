"""Parameter mixing of trained word-ordering models (wo.model.mix); used for the shipped model.

    python bench/mix_models.py --out M A.wo B.wo [...]

The shipped ``corpora/models/wo-ewt-dep.wo`` is the mean of two ``wo train`` runs on EWT train
(session 1: 10 epochs, epoch 9 kept; session 2: non-projective trees projectivised, epoch 6 of
10 kept), then ``bench/tune_decode.py --write``.  Mixing was chosen on EWT dev: bags 26.46 ->
26.76, full trees 76.94 -> 77.06 against the session-1 model alone (same decoding settings).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    from wo.model import Model, mix

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    mix([Model.load(p, mmap=False) for p in a.models]).save(a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
