"""CCG word ordering evaluation (issue 13; Zhang & Clark 2015, section 3 and Table 5 style).

On EWT-CCG dev (default) or test (``--test``: decode once, for the final figure):

* BLEU (sacrebleu, as ``wo evaluate``), exact match, words recovered and seconds per sentence
  of a CCG model at each pop budget of ``--budgets`` (pops per word), with DP-signature
  pruning on and, at the same budgets, off (BLEU, new edges scored per second);
* the dependency system on the same sentences (bags with the same POS tags given, and forms
  only), from the EWT CoNLL-U sentences with the same ``sent_id``;
* a plot of BLEU against the pop budget (bench/results/ccg/bleu_by_budget.png).

Every input is shuffled per sentence with a fixed seed (``wo.ccg.train.scrambled``, seed 1; the
dependency system shuffles with its own seed as ``wo linearize`` does).

    python bench/ccg_eval.py --model corpora/models/wo-ewt-ccg.wo [--limit N] [--test] [--tag T]

A CCG model trained with an LM (``wo ccg train --lm``) decodes with its LM, and is compared
with the dependency system with its LM (``--dep-lm-model``) too.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
OUT = os.path.join(HERE, "results", "ccg")
from common import conllu_blocks, write_conllu_blocks  # noqa: E402  (bench/ is on sys.path)


def ccg_run(model, derivs, budget: float, dp: bool, words_only: bool = False, **opts):
    """Decode the derivations' bags (opts: further ``Linearizer`` options; words_only: the forms
    alone, no POS: the model's bag search when it names one); returns (hyps, record)."""
    from wo.ccg.linearizer import Linearizer
    from wo.ccg.train import scrambled

    lin = Linearizer(model, budget_factor=budget, **opts)
    lin.core.grammar.dp_on = dp
    hyps, st, edges, recovered = [], collections.Counter(), 0, 0
    t0 = time.perf_counter()
    for i, d in enumerate(derivs):
        f, p, _ = scrambled(d, 1, i)
        r = lin.linearize(f, None if words_only else p)
        hyps.append(r.text)
        st[r.status] += 1
        edges += r.edges
        recovered += sorted(r.tokens) == sorted(d.words)
    secs = time.perf_counter() - t0
    return hyps, {"budget_pops_per_word": budget, "dp": dp, "beam_factor": lin.beam_factor,
                  "complete_beam": lin.complete_beam, "patience_factor": lin.patience_factor,
                  "lm": bool(lin.lm), "words_only": words_only,
                  "bag_search": lin.bag.spec if words_only and lin.bag is not None else None, "status": dict(st),
                  "seconds_per_sentence": round(secs / len(derivs), 4),
                  "edges_per_second": round(edges / secs), "words_recovered_percent":
                  round(100.0 * recovered / len(derivs), 2)}


def dep_run(model_path: str, conllu: str, given: str, tmp: str, lm: bool = False):
    """The dependency system (``wo linearize``) on a CoNLL-U file, without an LM or (lm) with
    the model's own; returns (hyps, seconds)."""
    from wo.cli import main

    out = os.path.join(tmp, f"dep.{given}{'.lm' if lm else ''}.txt")
    t0 = time.perf_counter()
    rc = main(["dep", "linearize", "--model", model_path, "--input", conllu, "--output", out,
               "--given", given, "--quiet"] + ([] if lm else ["--lm", "none"]))
    if rc not in (0, 1):
        raise RuntimeError(f"wo linearize failed ({rc})")
    with open(out, encoding="utf-8") as fh:
        return fh.read().splitlines(), time.perf_counter() - t0


def main(argv=None) -> int:
    from wo.ccg import read_auto
    from wo.eval.metrics import score
    from wo.model import Model

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "corpora", "models", "wo-ewt-ccg.wo"))
    ap.add_argument("--dep-model", default=os.path.join(ROOT, "corpora", "models", "wo-ewt-dep.wo"))
    ap.add_argument("--test", action="store_true", help="EWT-CCG test (decode once)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--budgets", type=float, nargs="+", default=[10, 30, 100])
    ap.add_argument("--no-dp-budgets", type=float, nargs="*", default=[30])
    ap.add_argument("--dep-lm-model", default=os.path.join(ROOT, "corpora", "models", "wo-ewt-dep-lm.wo"),
                    help="the dependency system with an LM, compared when the CCG model has one")
    ap.add_argument("--skip-dep", action="store_true")
    ap.add_argument("--beam-factor", type=float, default=None)
    ap.add_argument("--complete-beam", type=int, default=None)
    ap.add_argument("--patience", type=float, default=None, help="pops per word after the first goal")
    ap.add_argument("--tag", default="", help="suffix of the result file name")
    ap.add_argument("--words-only", action="store_true",
                    help="bags of forms alone (no POS): the CCG model's bag search when it names one, and the "
                         "dependency system's default on the same bags")
    a = ap.parse_args(argv)
    opts = {"beam_factor": a.beam_factor, "complete_beam": a.complete_beam, "patience_factor": a.patience}
    split = "test" if a.test else "dev"
    derivs = [d for d in read_auto(os.path.join(ROOT, "corpora", "ccg-en", f"{split}.auto.xz")) if d.error is None]
    if a.limit:
        derivs = derivs[:a.limit]
    refs = [" ".join(d.words) for d in derivs]
    model = Model.load(a.model)
    os.makedirs(OUT, exist_ok=True)
    rec = {"split": split, "sentences": len(derivs), "model": os.path.basename(a.model), "ccg": [], "dep": {}}
    for b in a.budgets:
        for dp in (True, False) if b in a.no_dp_budgets else (True,):
            hyps, r = ccg_run(model, derivs, b, dp, a.words_only, **opts)
            sc = score(hyps, refs)
            r.update(BLEU=round(sc.bleu, 2), exact=round(sc.exact, 2), signature=sc.signature)
            rec["ccg"].append(r)
            print(json.dumps(r), flush=True)
    if not a.skip_dep:
        # the same sentences from EWT CoNLL-U, matched by sent_id
        ids = {d.sent_id for d in derivs}
        src = os.path.join(ROOT, "corpora", "ud-en-ewt", f"en_ewt-ud-{split}.conllu.xz")
        keep = {}
        for blk in conllu_blocks(src):
            for ln in blk.splitlines():
                if ln.startswith("# sent_id = "):
                    sid = ln[len("# sent_id = "):].strip()
                    if sid in ids:
                        keep[sid] = blk
                    break
        tmp = os.path.join(OUT, "tmp")
        os.makedirs(tmp, exist_ok=True)
        sub = os.path.join(tmp, f"{split}.same.conllu")
        write_conllu_blocks(sub, [keep[d.sent_id] for d in derivs])
        runs = [("pos", a.dep_model, False), ("none", a.dep_model, False)]
        if model.header.get("lm"):
            runs += [("pos+lm", a.dep_lm_model, True), ("none+lm", a.dep_lm_model, True)]
        if a.words_only:
            runs = [r for r in runs if r[0].startswith("none")]
        for given, path, lm in runs:
            hyps, secs = dep_run(path, sub, given.split("+")[0], tmp, lm)
            sc = score(hyps, refs)
            rec["dep"][given] = {"model": os.path.basename(path), "BLEU": round(sc.bleu, 2),
                                 "exact": round(sc.exact, 2), "seconds_per_sentence": round(secs / len(derivs), 4)}
            print("dep", given, json.dumps(rec["dep"][given]), flush=True)
    name = f"eval.{split}" + (f".n{a.limit}" if a.limit else "") + (f".{a.tag}" if a.tag else "")
    with open(os.path.join(OUT, name + ".json"), "w") as fh:
        json.dump(rec, fh, indent=1)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        pts = [(r["budget_pops_per_word"], r["BLEU"]) for r in rec["ccg"] if r["dp"]]
        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-",
                label="CCG (DP-signature chart)" + (", with LM" if model.header.get("lm") else ""))
        for given, r in rec["dep"].items():
            ax.axhline(r["BLEU"], ls="--" if "lm" not in given else ":",
                       color="grey" if given.startswith("none") else "black",
                       label=f"dependency system, POS {'given' if given.startswith('pos') else 'not given'}"
                             f"{', with LM' if 'lm' in given else ''}")
        ax.set_xscale("log")
        ax.set_xlabel("pop budget (pops per word)")
        ax.set_ylabel(f"BLEU, EWT-CCG {split}")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, f"bleu_by_budget.{split}{'.' + a.tag if a.tag else ''}.png"), dpi=120)
    except ImportError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
