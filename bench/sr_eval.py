"""Shared-task (SR'19 T1) figures: inflection candidates, oracle coverage and accuracy, BLEU/NIST/DIST,
sentences/s.  Results go to bench/results/sr.json.

    python bench/sr_eval.py [--model corpora/models/wo-ewt-sr.wo] [--split dev|test]
                            [--partut-model M] [--jobs 1]

* inflection: candidates per token, oracle coverage (gold form among the candidates, lower-cased)
  and first-candidate accuracy on EWT dev and ParTUT dev (lexicons from the matching train split);
* realise: SR-style EWT ``--split`` made by ``wo sr make-input`` (seed 1), one ``wo sr realize``
  process (time includes start-up and model loading), scored by ``wo sr evaluate``; inflection
  accuracy = share of tokens whose realised form equals the gold form (lower-cased);
* partut: ParTUT dev (the T1 file as distributed) with ``--partut-model`` (a model trained on
  ParTUT train) if given.
Test is for the final figure only; tune on dev.
"""
import argparse
import json
import os

from common import ROOT, WO, run_timed, write_record

EWT = os.path.join(ROOT, "corpora", "ud-en-ewt")
PARTUT = os.path.join(ROOT, "corpora", "sr19-en_partut")
RES = os.path.join(ROOT, "bench", "results")


def wo(*args):
    """``wo ARGS`` as a timed child process (exit 0 or 1, else SystemExit): (``common.Run``, wall seconds)."""
    r = run_timed([*WO, *args], ok=(0, 1))
    return r, r.wall_s


def inflection_figures():
    from wo.io import read_conllu
    from wo.sr.inflect import Lexicon, coverage
    from wo.sr.lang import language

    out = {}
    for name, tr, dv in [("ewt_dev", os.path.join(EWT, "en_ewt-ud-train.conllu.xz"), os.path.join(EWT, "en_ewt-ud-dev.conllu.xz")),
                         ("partut_dev", os.path.join(PARTUT, "UD-en_partut-ud-train.conllu.xz"),
                          os.path.join(PARTUT, "UD-en_partut-ud-dev.conllu.xz"))]:
        lex = Lexicon.build(read_conllu(tr), english=True)
        d = read_conllu(dv)
        out[name] = coverage(lex, d)
        lex.lang, lex.language = "xx", language("xx")   # no language module
        out[name + "_no_english_addon"] = coverage(lex, d)
    return out


def realise(model, split, jobs, tmp):
    from wo.sr.t1 import read_t1

    ud = os.path.join(EWT, f"en_ewt-ud-{split}.conllu.xz")
    t1 = os.path.join(tmp, f"ewt-{split}.t1")
    gold = os.path.join(tmp, f"ewt-{split}.gold.t1")
    wo("sr", "make-input", "--ud", ud, "--out", t1, "--seed", "1")
    wo("sr", "make-input", "--ud", ud, "--out", gold, "--seed", "1", "--with-gold")
    out = os.path.join(tmp, f"ewt-{split}.sr.txt")
    p, secs = wo("sr", "realize", "--model", model, "--input", t1, "--output", out, "--jobs", str(jobs), "--quiet")
    rss = p.rss_mb
    ev, _ = wo("sr", "evaluate", "--hyp", out, "--ref", ud, "--json")
    scores = json.loads(ev.stdout)
    # inflection accuracy: realised form of each input token against its gold form
    from wo.sr.realizer import realize_many

    gs = read_t1(gold)
    res = realize_many(model, gs, jobs=jobs, gold_forms=False)   # inflect: the T1 carries the gold forms
    right = tot = 0
    for s, r in zip(gs, res):
        for j, i in enumerate(r.order):
            tot += 1
            right += r.tokens[j].lower() == (s.forms[i] or "").lower()
    n = len(gs)
    return {"split": split, "sentences": n, "seconds_whole_process": round(secs, 2),
            "sentences_per_second": round(n / secs, 2), "jobs": jobs, "peak_rss_mb": round(rss, 1),
            "inflection_accuracy": right / max(1, tot), **scores,
            "commands": [f"wo sr make-input --ud {os.path.relpath(ud, ROOT)} --out ewt-{split}.t1 --seed 1",
                         f"wo sr realize --model {os.path.relpath(model, ROOT)} --input ewt-{split}.t1 --output ewt-{split}.sr.txt --jobs {jobs}",
                         f"wo sr evaluate --hyp ewt-{split}.sr.txt --ref {os.path.relpath(ud, ROOT)}"]}


def partut(model, jobs, tmp):
    t1 = os.path.join(PARTUT, "T1-en_partut-ud-dev.conllu.xz")
    ud = os.path.join(PARTUT, "UD-en_partut-ud-dev.conllu.xz")
    out = os.path.join(tmp, "partut-dev.sr.txt")
    _, secs = wo("sr", "realize", "--model", model, "--input", t1, "--output", out, "--jobs", str(jobs), "--quiet")
    ev, _ = wo("sr", "evaluate", "--hyp", out, "--ref", ud, "--json")
    return {"seconds_whole_process": round(secs, 2), **json.loads(ev.stdout)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "corpora", "models", "wo-ewt-sr.wo"))
    ap.add_argument("--split", default="dev", choices=["dev", "test"])
    ap.add_argument("--partut-model", default=None)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--skip-inflection", action="store_true")
    a = ap.parse_args()
    import tempfile

    os.makedirs(RES, exist_ok=True)
    path = os.path.join(RES, "sr.json")
    summary = json.load(open(path)) if os.path.exists(path) else {}
    with tempfile.TemporaryDirectory() as tmp:
        if not a.skip_inflection:
            summary["inflection"] = inflection_figures()
        summary[f"ewt_{a.split}"] = realise(a.model, a.split, a.jobs, tmp)
        if a.partut_model:
            summary["partut_dev"] = partut(a.partut_model, a.jobs, tmp)
    write_record(path, summary, command=False)   # sections of several runs: each names its commands
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
