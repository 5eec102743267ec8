"""The UD -> SR'19 deep-track (T2) converter (:mod:`wo.sr.t2make`) against the official T2 files.

    python bench/sr_deep_convert.py                     # bench/results/sr_deep/convert.json + a markdown table
    python bench/sr_deep_convert.py --make UD --out T2 [--seed 3] [--with-gold]   # a converted T2 file

Comparison: the official English-ParTUT T2 train (1,781 sentences, aligned: ``original_id`` on
every node with a word) node by node (:func:`wo.sr.t2make.compare`: kept nodes by UD position,
``_`` nodes by head and relation); the official dev (156 sentences, no alignment) by per-sentence
multisets (:func:`wo.sr.t2make.compare_bags`: (lemma, UPOS) for the kept nodes, (lemma, UPOS,
relation, head lemma) for the relations), and the train the same way, so that the two kinds of
figure can be set side by side.  Speed: the conversion alone (UD sentences already read), on the
ParTUT train and on UD English-EWT train (12,544 sentences), best of 3.

``--make``: every sentence of a UD file as T2 input (``--with-gold``: the UD form in column 3,
``original_id`` and the ``# gold`` reference comment, for ``wo sr train`` on the deep track).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from common import ROOT, cpu_name, write_record

SHARED = os.environ.get("WO_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
RES = os.path.join(ROOT, "bench", "results", "sr_deep", "convert.json")


def _first(*paths: str) -> str:
    for p in paths:
        if os.path.exists(p):
            return p
    raise SystemExit(f"none of {', '.join(paths)} exists")


def official(name: str) -> str:
    """An official en_partut file (``T2-en_partut-ud-train.conllu``...): the shared corpora's
    copy, else the checkout's xz one."""
    return _first(os.path.join(SHARED, "corpora", "sr19-en_partut", name),
                  os.path.join(ROOT, "corpora", "sr19-en_partut", name + ".xz"))


def speed(ud, repeats: int = 3) -> dict:
    """Seconds to convert the sentences ``ud`` (best of ``repeats``) and per 1,000 sentences."""
    from wo.sr.t2make import make_deep_input

    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for i, s in enumerate(ud):
            make_deep_input(s, 3, i, True)
        best = min(best, time.perf_counter() - t)
    return {"sentences": len(ud), "words": sum(len(s) for s in ud), "seconds": round(best, 3),
            "seconds_per_1000_sentences": round(1000 * best / len(ud), 3)}


def compare_all() -> dict:
    """The record of convert.json (see the module docstring)."""
    from wo.io.conllu import read_conllu
    from wo.sr.t1 import read_t1
    from wo.sr.t2make import compare, compare_bags, make_deep_input

    rec = {"cpu": cpu_name(cores=True)}
    for split in ("train", "dev"):
        ud = read_conllu(official(f"UD-en_partut-ud-{split}.conllu"))
        t2 = read_t1(official(f"T2-en_partut-ud-{split}.conllu"))
        bad = [s.sent_id or str(i + 1) for i, s in enumerate(t2) if s.error]
        if bad or len(ud) != len(t2):
            raise SystemExit(f"{split}: {len(ud)} UD and {len(t2)} T2 sentences, unreadable: {bad[:5]}")
        conv = [make_deep_input(s, 3, i, True) for i, s in enumerate(ud)]
        if split == "train":
            rec["train"] = compare(t2, conv)
        rec[f"{split}_bags"] = compare_bags(t2, conv)
        if split == "train":
            rec["speed_en_partut_train"] = speed(ud)
    ewt = _first(os.path.join(SHARED, "corpora", "ud-en-ewt", "en_ewt-ud-train.conllu.xz"),
                 os.path.join(ROOT, "corpora", "ud-en-ewt", "en_ewt-ud-train.conllu.xz"))
    rec["speed_en_ewt_train"] = speed(read_conllu(ewt))
    return rec


def table(rec: dict) -> str:
    """The markdown table of a convert.json record."""
    tr, tb, db = rec["train"], rec["train_bags"], rec["dev_bags"]
    f = lambda d: f"{d['precision']:.2f} / {d['recall']:.2f} / {d['f1']:.2f}"  # noqa: E731
    rows = [("sentences", str(tr["sentences"]), str(tb["sentences"]), str(db["sentences"])),
            ("kept nodes P / R / F1", f(tr["kept"]), f(tb["kept"]), f(db["kept"])),
            ("`_` nodes P / R / F1", f(tr["blank"]), f(tb["blank"]), f(db["blank"])),
            ("relation accuracy (aligned) / labelled bag P / R / F1", f"{tr['relation_accuracy']:.2f}",
             f(tb["labelled"]), f(db["labelled"])),
            ("head accuracy (aligned) / unlabelled bag P / R / F1", f"{tr['head_accuracy']:.2f}",
             f(tb["unlabelled"]), f(db["unlabelled"])),
            ("lin accuracy", f"{tr['lin_accuracy']:.2f}", "", ""),
            ("sentences exactly as official", f"{tr['exact_sentences']:.2f}", "", "")]
    for k in tr["features"]:
        cells = [f(d["features"][k]) if k in d["features"] else "" for d in (tr, tb, db)]
        rows.append((f"feature {k} P / R / F1", *cells))
    out = ["| measure | train (aligned by original_id) | train (bags) | dev (bags) |", "|---|---|---|---|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    for key in ("speed_en_partut_train", "speed_en_ewt_train"):
        s = rec[key]
        out.append(f"\n{key[6:]}: {s['sentences']} sentences converted in {s['seconds']} s "
                   f"({s['seconds_per_1000_sentences']} s per 1,000 sentences; {rec['cpu']})")
    return "\n".join(out)


def make(ud_path: str, out: str, seed: int, with_gold: bool) -> int:
    """Write the T2 input of every sentence of ``ud_path`` to ``out`` (``-``: standard output)."""
    from wo.io.conllu import read_conllu
    from wo.io.text import AtomicWriter
    from wo.sr.t1 import format_t1
    from wo.sr.t2make import make_deep_input

    sents = read_conllu(ud_path)
    w = AtomicWriter(out)
    try:
        for i, s in enumerate(sents):
            w.write(format_t1(make_deep_input(s, seed, i, with_gold), with_gold))
        w.commit()
    except BaseException:
        w.abort()
        raise
    print(f"{len(sents)} sentences written to {out} (T2, seed {seed}{', with gold' if with_gold else ''})",
          file=sys.stderr)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--make", metavar="UD", help="convert this UD CoNLL-U file (.xz ok) to T2 input")
    ap.add_argument("--out", default="-", help="--make: the T2 file to write (.xz ok); default standard output")
    ap.add_argument("--seed", type=int, default=3, help="--make: the id scrambling seed (default 3)")
    ap.add_argument("--with-gold", action="store_true",
                    help="--make: UD forms, original_id and the # gold reference (training input)")
    ap.add_argument("--json", default=RES, help="comparison: the record to write (default %(default)s)")
    a = ap.parse_args(argv)
    if a.make:
        return make(a.make, a.out, a.seed, a.with_gold)
    rec = compare_all()
    write_record(a.json, rec)
    print(table(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
