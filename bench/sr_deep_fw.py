"""Function-word bag precision/recall/F1 of a deep-track (SR'19 T2) completion.

    python bench/sr_deep_fw.py T2_INPUT PRED_LEMMAS UD_REF [--json]

T2_INPUT: the T2 input (CoNLL-U shaped, lemma in column 2; ``_`` nodes, the unexpressed
arguments, aside); PRED_LEMMAS: the lemma sequence of each completed sentence, one sentence per
line, space-separated, in T2_INPUT's order; UD_REF: the UD reference (lemma in column 3; only
syntactic words: multiword-token and empty-node lines are skipped).

Per sentence, the generated words are the multiset of predicted lemmas minus the input's lemmas,
the reference's function words the multiset of UD lemmas minus the input's lemmas (lower-cased,
matched by lemma); true positives are their multiset intersection; precision, recall and F1
are micro-averaged over sentences (percent).  The same count as ``function_words`` in
bench/sr_deep.py, so that wo's and IMSurReal's figures compare.
"""
from __future__ import annotations

import argparse
import json
import lzma
import sys
from collections import Counter
from typing import Iterator, List, Sequence


def _open(path: str):
    return lzma.open(path, "rt", encoding="utf-8") if path.endswith(".xz") else open(path, encoding="utf-8")


def conllu_lemmas(path: str, column: int) -> Iterator[List[str]]:
    """The lemmas (0-based ``column``) of each sentence of a CoNLL-U file, syntactic words only."""
    rows: List[str] = []
    with _open(path) as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line.strip():
                if rows:
                    yield rows
                rows = []
            elif not line.startswith("#"):
                c = line.split("\t")
                if c[0].isdigit():
                    rows.append(c[column])
    if rows:
        yield rows


def function_words(inputs: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]],
                   refs: Sequence[Sequence[str]]) -> dict:
    """Micro-averaged precision/recall/F1 (percent) and counts of the generated function words."""
    if not len(inputs) == len(predicted) == len(refs):
        raise ValueError(f"sentence counts differ: input {len(inputs)}, predicted {len(predicted)}, reference {len(refs)}")
    tp = fp = fn = 0
    for t, pred, ref in zip(inputs, predicted, refs):
        given = Counter(x.lower() for x in t if x != "_")
        p = Counter(x.lower() for x in pred) - given
        g = Counter(x.lower() for x in ref) - given
        tp += sum((p & g).values())
        fp += sum((p - g).values())
        fn += sum((g - p).values())
    pr, rc = 100 * tp / max(1, tp + fp), 100 * tp / max(1, tp + fn)
    return {"precision": round(pr, 2), "recall": round(rc, 2), "f1": round(2 * pr * rc / max(1e-9, pr + rc), 2),
            "tp": tp, "fp": fp, "fn": fn, "sentences": len(refs)}


def score_files(t2_input: str, pred_lemmas: str, ud_ref: str) -> dict:
    """function_words() of the three files."""
    inputs = list(conllu_lemmas(t2_input, 1))
    with _open(pred_lemmas) as fh:
        predicted = [ln.split() for ln in fh.read().splitlines()]
    refs = list(conllu_lemmas(ud_ref, 2))
    return function_words(inputs, predicted, refs)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("t2_input")
    ap.add_argument("pred_lemmas")
    ap.add_argument("ud_ref")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    a = ap.parse_args(argv)
    r = score_files(a.t2_input, a.pred_lemmas, a.ud_ref)
    if a.json:
        print(json.dumps(r))
    else:
        print(f"function words: P {r['precision']:.2f} R {r['recall']:.2f} F1 {r['f1']:.2f} "
              f"(tp {r['tp']}, fp {r['fp']}, fn {r['fn']}, {r['sentences']} sentences)")
    return r


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as e:
        sys.exit(f"sr_deep_fw: {e}")
