"""docs/results.md from the JSON records in bench/results/.

    python bench/results_doc.py            # write docs/results.md
    python bench/results_doc.py --check    # exit 1 when docs/results.md is not what the records give

Every table names the command that reproduces it (taken from the record, or from the text the
figures were first published with).  Figures that were published only as prose or tables in the
README are kept as records in ``bench/results/readme/`` (each with its ``source``); every table
of those records must appear in the page (:func:`render` fails otherwise).  The surface
realisation results per treebank are ``docs/sr-multi.md`` (``python bench/sr_multi.py table``),
which this page links to and does not repeat.

Standard library only; the output depends on nothing but the records (sorted where the records
hold no order, no date of generation), so ``tests/test_docs.py`` can compare it byte for byte.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
from typing import Dict, List, Optional, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join("docs", "results.md")
SIG = "nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:2.6.0"
# path prefixes the machines that wrote the records used; commands are shown relative to the
# repository root (constant strings, so the page does not depend on where it is generated)
_PREFIXES = ("/work/main/.venv/bin/", "/work/main/", ".venv/bin/", "../../work/main/")


# ------------------------------------------------------------------------------------ helpers
class Records:
    """The JSON records under ``root/bench/results`` (read once each) and the README records
    whose tables have been placed on the page."""

    def __init__(self, root: str):
        self.root = root
        self.res = os.path.join(root, "bench", "results")
        self._cache: Dict[str, object] = {}
        self.used: Dict[str, set] = {}

    def __call__(self, rel: str):
        if rel not in self._cache:
            with open(os.path.join(self.res, rel), encoding="utf-8") as fh:
                self._cache[rel] = json.load(fh)
        return self._cache[rel]

    def glob(self, pattern: str) -> List[str]:
        return sorted(os.path.relpath(p, self.res) for p in glob.glob(os.path.join(self.res, pattern)))

    def readme(self, topic: str, tid: str) -> dict:
        """Table ``tid`` of ``readme/<topic>.json`` (marked as placed)."""
        self.used.setdefault(topic, set()).add(tid)
        return self(f"readme/{topic}.json")["tables"][tid]

    def unused(self) -> List[str]:
        out = []
        for rel in self.glob("readme/*.json"):
            topic = os.path.basename(rel)[:-5]
            for tid in sorted(self(rel)["tables"]):
                if tid not in self.used.get(topic, set()):
                    out.append(f"{rel}: {tid}")
        return out


_PROJECT_REF = re.compile(r"\b(?:issue|session)s? ?\d+", re.I)


def scrub(text: str) -> str:
    """Record text without the project's issue and session numbers (they belong in NOTES.md):
    "(issue 10)" goes, "(issue 10: what)" becomes "(what)"."""
    text = re.sub(r"\s*\((?:issue|session) \d+\)", "", text)
    return re.sub(r"\((?:issue|session) \d+[:;,] ", "(", text)


def cmd(c: str) -> str:
    """A command from a record, relative to the repository root."""
    for p in _PREFIXES:
        c = c.replace(p, "")
    return c


def f(x, nd: int = 2) -> str:
    """A number with ``nd`` decimals ('' for None)."""
    if x is None:
        return ""
    return f"{x:.{nd}f}"


def g3(x) -> str:
    """Three significant digits ('' for None)."""
    return "" if x is None else f"{x:.3g}"


def thousands(x) -> str:
    return f"{x:,}"


def mega(x, nd: int = 2) -> str:
    """A count in millions (5.17 M)."""
    return f"{x / 1e6:.{nd}f} M"


def cell(x) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def table(columns: Sequence[str], rows: Sequence[Sequence]) -> List[str]:
    out = ["| " + " | ".join(cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        out.append("| " + " | ".join(cell(c) for c in r) + " |")
    return out


def block(title: str, commands: Sequence[str], lines: Sequence[str], setup: str = "",
          notes: Sequence[str] = (), signature: str = "", level: int = 3) -> List[str]:
    """One result table: heading, setup, the commands that reproduce it, the table, notes."""
    out = ["#" * level + " " + title, ""]
    if setup:
        out += [setup[:1].upper() + setup[1:], ""]
    cs = [c for c in commands if c]
    if len(cs) == 1:
        out += [f"Reproduce: `{cs[0]}`", ""]
    elif cs:
        out += ["Reproduce:", ""] + [f"* `{c}`" for c in cs] + [""]
    if lines:
        out += list(lines) + [""]
    if signature:
        out += [f"BLEU signature: `{signature}`.", ""]
    out += [f"* {n[:1].upper() + n[1:]}" for n in notes]
    if notes:
        out.append("")
    return out


def readme_block(R: Records, topic: str, tid: str, level: int = 3, extra_rows=(), extra_commands=(),
                 extra_notes=()) -> List[str]:
    t = R.readme(topic, tid)
    rows = list(t.get("rows", [])) + list(extra_rows)
    src = R(f"readme/{topic}.json")["source"]
    notes = list(t.get("notes", [])) + list(extra_notes) + [f"Source: `bench/results/readme/{topic}.json` ({src})."]
    return block(t["title"], [t["command"]] + list(extra_commands), table(t["columns"], rows) if rows else [],
                 setup=t.get("setup", ""), notes=notes, signature=t.get("signature", ""), level=level)


# ------------------------------------------------------------------------ dependency ordering
def dep(R: Records) -> List[str]:
    out = ["## Dependency word ordering", "",
           "`wo linearize` ([dep.md](dep.md)). EWT = UD English-EWT v2.16; every input sentence is "
           "scrambled with a fixed seed (seed 1) before decoding; BLEU is sacrebleu on the cased tokens.", ""]
    trr = R("lm/tree-rerank.test.json")
    lms = R("lm_search.json")
    zg = R("zgen_side_by_side.json")
    tr = trr["tree_rerank"]
    before = [f"the model shipped before (one run, seed 1, no question labels): bags / trees",
              f"{f(lms['test']['bags']['bleu'])} / {f(lms['test']['trees']['bleu'])}",
              f"{f(lms['test']['bags']['exact'], 1)} / {f(lms['test']['trees']['exact'], 1)} %",
              f"{f(zg['types']['none']['wo']['wall_s'], 1)} / {f(zg['types']['full']['wo']['wall_s'], 1)} s",
              f"{f(zg['types']['none']['wo']['rss_mb'], 0)} / {f(zg['types']['full']['wo']['rss_mb'], 0)} MB"]
    out += readme_block(R, "dep", "lm-model-test", extra_rows=[
        ["full tree, with LM, `--tree-rerank` at beam 64 (the reranking before the default)", f(tr["bleu"]), f"{f(tr['exact_match'], 1)} %",
         f"{f(tr['wall_seconds'], 1)} s (a machine shared with other jobs)", f"{tr['peak_rss_mb']} MB"], before],
        extra_commands=[cmd(tr["command"])])

    # --tree-rerank
    sp = trr["speed_dev_side_by_side"]
    ens = R.readme("rerank", "tree-ensemble")
    b5 = trr["bench_5gram"]
    rows = [["no reranking (the default then)", f(trr["without_rerank"]["dev_bleu"]), f(trr["without_rerank"]["bleu"]),
             f"{f(sp['none_seconds'], 1)} s, {sp['sentences'] / sp['none_seconds']:.0f} sentences/s", f"{sp['none_rss_mb']} MB"]]
    rows += [[r[0], r[1], r[2], "", r[3]] for r in ens["rows"]]
    t4 = trr.get("tree_rerank_4gram")
    if t4:
        rows += [["`--tree-rerank` before the Wikipedia 4-gram (" + t4["reranking"].split(": ", 1)[1] + ")",
                  f(t4["dev_bleu"]), f(t4["bleu"]), "", f"{t4['peak_rss_mb']} MB"]]
    rows += [["`--tree-rerank` (shipped files only)", f(tr["dev_bleu"]), f(tr["bleu"]),
              f"{f(sp['default_seconds'], 1)} s, {sp['sentences'] / sp['default_seconds']:.0f} sentences/s",
              f"{sp['default_rss_mb']} MB"],
             ["the same with the 5-gram for the 4-gram (bench LM)", f(b5["dev_bleu"]), f(b5["bleu"]), "", f"{b5['peak_rss_mb']} MB"]]
    out += block("Reranking tree inputs at beam 64 (`--tree-rerank` before it became the default)",
                 [cmd(trr["without_rerank"]["command"]), cmd(ens["command"]), cmd(tr["command"]), cmd(b5["command"])],
                 table(["EWT trees, `--given full`", "dev (2,001)", "test (2,077)",
                        "whole process (dev, one job, median of 3)", "peak RSS"], rows),
                 setup=f"The rerankers: {tr['reranking']}. Test was decoded once "
                       "for each reranking row, after dev had fixed its weights. The speed columns were measured "
                       f"side by side in one run on dev ({sp['note']}).",
                 notes=[f"Source: `bench/results/lm/tree-rerank.test.json`; the ensemble row: `bench/results/readme/rerank.json` "
                        f"({R('readme/rerank.json')['source']})."],
                 signature=trr["signature"])
    td = R("lm/tree-default.json")
    if td:
        st, sb = td["settings"]["tree_rerank"], td["test_side_by_side"]
        rows = [[label, f(td["dev"][k]["bleu"]), f(td["test"][tk]["ewt"]["bleu"]) if tk in td["test"] else "",
                 f"{f(td['dev'][k]['wall_seconds'], 1)} s", f"{td['dev'][k]['peak_rss_mb']} MB",
                 f(td["test"][tk]["pud"]["bleu"]) if "pud" in td["test"].get(tk, {}) else ""]
                for k, tk, label in (("default", "trees", "the default (reranked)"),
                                     ("plain", "trees-plain", "`--no-tree-rerank`"))]
        out += block("Full trees: the default",
                     [td["script"], td["dev"]["default"]["command"], td["dev"]["plain"]["command"]],
                     table(["EWT trees, `--given full`", "dev BLEU", "test BLEU", "dev whole process (one job)",
                            "dev peak RSS", "PUD test BLEU"], rows),
                     setup=(f"{td['cpu']}. The shipped decode settings (`corpora/models/wo-ewt-dep-lm.decode.json`): "
                            f"tree search beam {td['settings']['tree_beam_factor']:g} states per word; the 20 best "
                            "distinct popped strings reranked by F + "
                            + " + ".join(f"{w:g} log10 p({n})" for n, w in st["lms"])
                            + " + " + " + ".join(f"{w:g} F({n})" for n, w in st["models"])
                            + f", the models' parse for the {st.get('models_top', 0)} best by the other terms only. "
                            "Weights chosen on dev (the table below: `wiki`, beam 32, 5 parses); test decoded once."),
                     notes=[f"Side by side with ZGen_SR on EWT test (`{sb['source']}`, {sb['date_utc']}): wo "
                            f"{f(sb['wo_wall_s'], 1)} s against {f(sb['zgen_wall_s'], 1)} s, {f(sb['ratio'])}x faster, "
                            f"BLEU {f(sb['wo_bleu'])} against {f(sb['zgen_bleu'])}.",
                            "Source: `bench/results/lm/tree-default.json` (test columns from `bench/results/lm/pud.json`)."],
                     signature=td["dev"]["default"]["signature"])
    rows = []
    for name in ("shipped", "bench", "wiki", "wiki-fast", "wiki-fast.dev.beam32", "wiki.dev.beam32",
                 "wiki.dev.beam32.top5"):
        d = R(f"lm/tree-rerank.{name}.json" if "." in name else f"lm/tree-rerank.{name}.dev.json")
        if name != d["set"]:
            name = f"{d['set']}, beam {d['beam_factor']:g}" + (f", {d['models_top']} parses" if d.get("models_top") else "")
        cv = "; ".join(f"{f(c['held_out'])} against {f(c['held_out_without'])} ({c['held_out'] - c['held_out_without']:+.2f})"
                       for c in d["two_fold_cv"])
        w = ", ".join(f"{k} {v:g}" for k, v in sorted(d["best"]["weights"].items(), key=lambda kv: kv[0]))
        rows.append([name, f(d["candidates"], 1), f(d["without_rerank"]), f(d["oracle"]), f(d["best"]["bleu"]), w,
                     d["grid_size"], cv])
    out += block("Choosing the tree rerankers on EWT dev (20-best lists)",
                 ["python bench/tree_rerank.py dump --split dev --out W/dev.pkl",
                  "python bench/tree_rerank.py grid --dump W/dev.pkl --set shipped|bench|wiki|wiki-fast",
                  "python bench/tree_rerank.py dump --split dev --out W/dev32.pkl --beam-factor 32",
                  "python bench/tree_rerank.py grid --dump W/dev32.pkl --set wiki|wiki-fast [--models-top 5]"],
                 table(["set", "candidates per sentence", "no reranking", "oracle", "best BLEU", "best weights",
                        "grid size", "2-fold CV: held-out half, reranked against not (gain)"], rows),
                 setup="`shipped`: the shipped files only (4-gram, view LMs, no-LM model); `bench`: the 5-gram of "
                       "text-en + EWT train (`bench/results/gyro/text-en+ewt.o5.wolm`, not redistributable) for the 4-gram; `wiki`: the shipped set plus the Wikipedia 4-gram (`corpora/models/wo-en-wiki-4gram.wolm`, 75 M tokens, trie-q8, 43.8 MB); `wiki-fast`: the same without the no-LM model's parse.",
                 notes=["Source: `bench/results/lm/tree-rerank.*.dev*.json`; the shipped rerankers are the `wiki` set at "
                        "beam 32 with 5 parses (the rows without a beam: the search at beam 64)."],
                 signature=SIG)
    out += readme_block(R, "rerank", "tree-rerank-notes")

    # n-best reranking: targets and the bag reranker
    out += readme_block(R, "rerank", "targets")
    dv, sh, te = R("lm/bag-rerank.dev.json"), R("lm/bag-rerank-shipped-lm.dev.json"), R("lm/bag-rerank.test.json")
    lams = sorted(dv["by_lam"], key=float)
    rows = [[l, f(dv["by_lam"][l]), f(dv["by_lam_without_dep_output"][l]), f(dv["dep_output_chosen_pct"][l], 1),
             f(sh["by_lam"][l]), f(sh["by_lam_without_dep_output"][l]), f(sh["dep_output_chosen_pct"][l], 1)] for l in lams]
    out += block("Bags: GYRO's n-best reranked by the dependency model (EWT dev)",
                 [f"python bench/bag_rerank.py --split dev --work DIR (--lm4/--lm5: the bench LMs, or corpora/models/wo-en-4gram.wolm for both)"],
                 table(["lambda (weight of F)", "BLEU, bench LMs", "without the dependency output", "dependency output chosen %",
                        "BLEU, shipped 4-gram", "without the dependency output", "dependency output chosen %"], rows),
                 setup=f"The score is log10 p(5-gram) + lambda x F over GYRO's {dv['k']}-best plus the dependency system's output, "
                       f"all {dv['n']} dev bags. Bench LMs: GYRO alone {f(dv['gyro_alone'])}, the dependency output alone "
                       f"{f(dv['dep_alone'])}, oracle {f(dv['oracle'])}. Shipped 4-gram for both GYRO and the rescoring: "
                       f"GYRO alone {f(sh['gyro_alone'])}, oracle {f(sh['oracle'])}.",
                 notes=[f"Test, decoded once at lambda 0.3: **{f(te['BLEU'])}** BLEU, {f(te['exact_pct'])} % exact, "
                        f"{f(te['wall_seconds_whole_process'], 1)} s whole process with {te['jobs']} jobs, peak RSS "
                        f"{te['peak_rss_mb_one_process']} MB per process (`{cmd(te['command'])}`).",
                        "Source: `bench/results/lm/bag-rerank.dev.json`, `bag-rerank-shipped-lm.dev.json`, `bag-rerank.test.json`."],
                 signature=dv["signature"])
    ks = sorted({k.split(":")[0] for k in dv["by_k_lam"]}, key=int)
    rows = [[l] + [f(dv["by_k_lam"][f"{k}:{l}"]) for k in ks] + [f(sh["by_k_lam"][f"{k}:{l}"]) for k in ks] for l in lams]
    out += block("Bags: reranked n-best size k (EWT dev)", ["python bench/bag_rerank.py --split dev --work DIR"],
                 table(["lambda"] + [f"k = {k}, bench LMs" for k in ks] + [f"k = {k}, shipped 4-gram" for k in ks], rows),
                 notes=["Source: `bench/results/lm/bag-rerank.dev.json`, `bench/results/lm/bag-rerank-shipped-lm.dev.json`."])

    # the bag default of wo linearize
    bd, pud = R("lm/bag-default.dev.json"), R("lm/pud.json")
    if bd and bd.get("results"):
        rows = [[name, r["what"], f(r["bleu"]), f(r["exact_pct"]), f(r["wall_seconds"], 1),
                 f(r["sentences_per_second"], 1), thousands(r["peak_rss_mb"])] for name, r in bd["results"].items()]
        notes = []
        te = (pud or {}).get("results", {})
        if "bags" in te and "ewt" in te["bags"]:
            b, d = te["bags"]["ewt"], te.get("bags-dep", {}).get("ewt")
            notes.append(f"EWT test, decoded once with the default: **{f(b['bleu'])}** BLEU, {f(b['wall_seconds'], 1)} s "
                         f"whole process with 2 jobs ({f(b['sentences_per_second'], 1)} sentences/s)"
                         + (f"; the model's own search {f(d['bleu'])} ({f(d['wall_seconds'], 1)} s)" if d else "")
                         + f" (`python bench/pud.py`, `bench/results/lm/pud.json`; signature {b['signature']}).")
        notes.append("Source: `bench/results/lm/bag-default.dev.json`.")
        sp = bd["shipped_settings"]
        out += block("Bags: the default", [bd["script"]],
                     table(["configuration", "what", "BLEU", "exact %", "seconds (whole process, 2 jobs)",
                            "sentences/s", "peak RSS MB (main process)"], rows),
                     setup=(f"{bd['cpu']}. All {rows and bd['results']['default']['sentences']} EWT dev bags. "
                            "`wo linearize` decodes a bag with the search the shipped model names "
                            "(`corpora/models/wo-ewt-dep-lm.decode.json`): GYRO's n-best under the large 4-gram "
                            f"(`{sp['lm']}`, {f(bd['lm_bytes'] / 1e6, 1)} MB), each string parsed by the model with its "
                            f"order fixed and reranked by log10 p + {sp['dep_weight']} F; settings: row cap {sp['row_cap']}, "
                            f"join filter {sp['join_slack']}, {sp['dep_nbest']} strings, {sp['dep_budget']} pops per word "
                            "for each parse. The other GYRO rows are `wo gyro realize` with the same LM and model."),
                     notes=notes, signature=bd["results"]["default"]["signature"])

    # ZGen side by side
    rows = []
    for t, label in (("none", "bags (the default)"), ("full", "full trees (the default: the tree n-best reranked)")):
        z, w = zg["types"][t]["zgen"], zg["types"][t]["wo"]
        rows.append([label, f"{f(z['wall_s'], 1)} s ({', '.join(f(x, 1) for x in z['wall_s_all'])})",
                     f"{f(w['wall_s'], 1)} s ({', '.join(f(x, 1) for x in w['wall_s_all'])})",
                     f"{f(zg['types'][t]['ratio_wall_zgen_over_wo'])}x", f"{f(z['bleu'])} / {f(w['bleu'])}",
                     f"{thousands(round(z['rss_mb']))} / {thousands(round(w['rss_mb']))} MB"])
    zt = R("zgen_side_by_side.tree-rerank.json")
    pr = zt["plain_runs"]
    zf = zt["types"]["full"]
    rows.append(["full trees, no reranking (another run, another machine)", f"{f(pr['zgen_wall_s'], 1)} s ({', '.join(f(x, 1) for x in pr['zgen_wall_s_all'])})",
                 f"{f(pr['wo_wall_s'], 1)} s ({', '.join(f(x, 1) for x in pr['wo_wall_s_all'])})", f"{f(pr['ratio'])}x",
                 f"{f(zf['zgen']['bleu'])} / {f(pr['wo_bleu'])}", f"{thousands(pr['zgen_rss_mb'])} / {pr['wo_rss_mb']} MB"])
    rows.append(["full trees, the reranking of that time (that run; the Wikipedia-only 4-gram, beam 64)", f"{f(zf['zgen']['wall_s'], 1)} s ({', '.join(f(x, 1) for x in zf['zgen']['wall_s_all'])})",
                 f"{f(zf['wo']['wall_s'], 1)} s ({', '.join(f(x, 1) for x in zf['wo']['wall_s_all'])})",
                 f"{f(zf['ratio_wall_zgen_over_wo'])}x", f"{f(zf['zgen']['bleu'])} / {f(zf['wo']['bleu'])}",
                 f"{thousands(round(zf['zgen']['rss_mb']))} / {thousands(round(zf['wo']['rss_mb']))} MB"])
    out += block("Against ZGen_SR, side by side",
                 [cmd(zg["command"]).replace("/root/zgen-src/bin/ZGen_SR", "ZGEN_SR").replace("/root/.cache/wo-bars/zgen-ewt", "DIR"),
                  cmd(zt["command"]).replace("/root/zgen-src/bin/ZGen_SR", "ZGEN_SR").replace("/root/.cache/wo-bars/zgen-ewt", "DIR")
                  .replace(" --out /tmp/s13/zgen-full.json", "")],
                 table(["EWT test", "ZGen_SR", "wo", "ZGen / wo", "BLEU ZGen / wo", "peak RSS ZGen / wo"], rows),
                 setup=f"{zg['what']}: ZGen_SR (beam {zg['zgen']['beam']}, {zg['zgen']['training_passes']} training pass per "
                       f"input type on EWT train) and wo decode all of EWT test as whole processes, one job, back to back, "
                       f"{zg['repeats']} rounds, medians ({zg['cpu_model']}, {zg['cpus']} cores; {zg['date_utc']} to "
                       f"{zg['finished_utc']}). The first two rows are the shipped defaults of `wo linearize` (bags: GYRO's n-best "
                       f"under the large 4-gram reranked by the dependency model; full trees: the tree search's n-best "
                       f"reranked by the large 4-gram, three tree-view LMs and the no-LM model); the last two were interleaved the same way "
                       f"on another machine ({zt['date_utc']}).",
                 notes=["Source: `bench/results/zgen_side_by_side.json`, `bench/results/zgen_side_by_side.tree-rerank.json` "
                        "(build steps for ZGen in NOTES.md)."],
                 signature=zg["types"]["none"]["wo"]["scores"]["signature"])

    js = R("jobs_scaling_ewt_test.json")
    rows = []
    for label, d in (("with the decoding score caches", js), ("before them", js["previous"])):
        rows.append([label, f"{f(d['jobs1_seconds'])} s", ", ".join(f"{f(x)} s" for x in d["jobs2_seconds"]),
                     f"{f(d['speedup_median'])}x", f"{d['max_rss_kb']['jobs1'] / 1000:.0f} MB",
                     ", ".join(f"{x / 1000:.0f} MB" for x in d["max_rss_kb"]["jobs2"]),
                     "yes" if d["outputs_identical"] else "no", f"`{d['md5']}`"])
    out += block("`--jobs 2` on EWT test bags", [js["command"]],
                 table(["", "--jobs 1", "--jobs 2 (two runs)", "speed-up", "peak RSS, one job", "peak RSS per worker, two jobs",
                        "same output", "md5 of the output"], rows),
                 setup=f"{js['cpu']}.", notes=["Source: `bench/results/jobs_scaling_ewt_test.json`."])

    rows = []
    for given, rel in (("bags (400 dev)", "score_cache_bags.json"), ("full trees (2,001 dev)", "score_cache_trees.json")):
        d = R(rel)
        rows.append([given, f"{f(d['seconds_median']['off'], 1)} s, {mega(d['edges_per_second_median']['off'])}/s",
                     f"{f(d['seconds_median']['on'], 1)} s, {mega(d['edges_per_second_median']['on'])}/s",
                     f"{f(d['speedup'])}x", "yes" if d["identical_outputs"] else "no"])
    out += block("Decoding score caches", [cmd(R("score_cache_bags.json")["command"]), cmd(R("score_cache_trees.json")["command"])],
                 table(["EWT dev, LM model, one process", "caches off: seconds, new edges scored per second",
                        "caches on", "speed-up", "same outputs"], rows),
                 setup=f"{R('score_cache_bags.json')['what']} ({R('score_cache_bags.json')['rounds']} rounds, medians; "
                       f"{R('score_cache_bags.json')['cpu_model']}). How the caches work: [dep.md](dep.md#how-it-works).",
                 notes=["Source: `bench/results/score_cache_bags.json`, `bench/results/score_cache_trees.json`."])
    out += readme_block(R, "dep_speed", "score-cache")
    out += readme_block(R, "dep_speed", "history")

    # the model without LM
    S = R("summary.json")
    zr = R.readme("dep", "no-lm-zgen")
    rows = []
    for key, label in (("bag", "bag of words (`--given none`)"), ("full", "full tree (`--given full`)")):
        c = S["core"][key]
        rows.append([label, f(c["bleu"]), f"{f(c['exact'], 1)} %",
                     f"{f(c['process_seconds'], 1)} s ({g3(c['seconds_per_sentence'])} s/sentence)", f"{f(c['peak_rss_mb'], 0)} MB"])
    rows += [[r[0], r[1], "", r[2], r[3]] for r in zr["rows"]]
    out += block("The model without LM (`corpora/models/wo-ewt-dep.wo`), EWT test",
                 ["python bench/run.py --sections core (make bench)", zr["command"]],
                 table(["EWT test (2,077 sentences)", "BLEU", "exact match", "whole process (load + decode)", "peak RSS"], rows),
                 setup=zr["setup"],
                 notes=[f"{S['core_note']}.", f"Source: `bench/results/summary.json` ({S['cpu']}, {S['machine']}); the ZGen_SR row: "
                        f"`bench/results/readme/dep.json` ({R('readme/dep.json')['source']})."],
                 signature=S["core"]["bag"]["signature"])

    # Table 7
    t7n = S["table7_dev_bleu"]
    t7 = R("lm/table7-lm.json")
    t7l = t7["table7_dev_bleu_lm"]
    heads = ["no", "50%", "all"]
    rows = []
    for pos in ("no", "50%", "all"):
        label = {"no": "no POS", "50%": "50 % POS", "all": "all POS"}[pos]
        rows.append([label] + [f(t7n[f"POS {pos} / heads {h}"]) for h in heads]
                    + [f"{f(t7l[f'POS {pos} / heads {h}'])} ({t7l[f'POS {pos} / heads {h}'] - t7n[f'POS {pos} / heads {h}']:+.2f})"
                       for h in heads])
    out += block("Part of the input trusted (Table 7 of Zhang & Clark 2015), EWT dev",
                 ["python bench/run.py --sections grid", cmd(t7["command"])],
                 table(["", "no heads", "50 % heads", "all heads", "with the LM: no heads", "50 % heads", "all heads"], rows),
                 setup="Without LM: `wo-ewt-dep.wo`; with the LM: the LM model shipped before the current two-seed mix "
                       f"(decoded by `{t7['decode']}`); in brackets the gain over the model without LM.",
                 notes=["Source: `bench/results/summary.json`, `bench/results/lm/table7-lm.json`."], signature=t7["signature"])

    # LM experiments
    rows = [["bags, equal settings (60 pops/word, chart 10n)", f(lms["dev"]["bags_equal_settings_60ppw_chart10n"]["lm"]),
             f(lms["dev"]["bags_equal_settings_60ppw_chart10n"]["no_lm"])],
            ["bags, default settings (30 pops/word, chart 6n)", f(lms["dev"]["bags_default_30ppw_chart6n"]), ""],
            ["trees (1000 pops/word, chart 64n, patience 100)", f(lms["dev"]["trees_1000ppw_chart64n_patience100"]["lm"]),
             f(lms["dev"]["trees_1000ppw_chart64n_patience100"]["no_lm"])]]
    tb, tt = lms["test"]["bags"], lms["test"]["trees"]
    rows2 = [["bags", f(tb["bleu"]), f"{f(tb['exact'])} %", f"{f(tb['seconds'], 1)} s", f"{tb['peak_rss_mb']} MB",
              f(tb["no_lm_bleu"]), f"{f(tb['no_lm_seconds'], 1)} s", f"{tb['no_lm_peak_rss_mb']} MB"],
             ["full trees", f(tt["bleu"]), f"{f(tt['exact'])} %", f"{f(tt['seconds'], 1)} s", f"{tt['peak_rss_mb']} MB",
              f(tt["no_lm_bleu"]), f"{f(tt['no_lm_seconds'], 1)} s", f"{tt['no_lm_peak_rss_mb']} MB"]]
    grid = lms["reduced_grid_3000_sentences_1_epoch_dev300"]
    out += block("The first LM model (shipped before the current one)", [cmd(c) for c in lms["commands"]],
                 table(["EWT dev", "LM model", "no-LM model"], rows) + [""]
                 + table(["EWT test, one job, whole process, side by side", "BLEU", "exact", "seconds", "peak RSS",
                          "no-LM BLEU", "no-LM seconds", "no-LM peak RSS"], rows2) + [""]
                 + table(["reduced grid: 3,000 train sentences, 1 epoch, dev[:300] bags", "BLEU"],
                         [[k, f(v)] for k, v in sorted(grid.items())]),
                 setup=f"Model: {lms['model']}. Dev[:500] bag BLEU by epoch: "
                       f"{', '.join(f(x) for x in lms['training_epochs_dev500_bag_bleu'])}.",
                 notes=["Source: `bench/results/lm_search.json`."], signature=lms["sacrebleu"])
    d = R("lm/dep-lm-texten-o4.json")
    out += block("A larger LM (bench only)", [cmd(d["train_command"])] + [cmd(c) for c in d["eval_commands"]],
                 table(["", "the larger LM", "the LM model shipped then"],
                       [["dev[:500] by epoch", " ".join(f(x) for x in d["epochs_dev500_bleu"]),
                         " ".join(f(x) for x in d["shipped_model_epochs_dev500_bleu"])],
                        ["best epoch", d["best_epoch"], ""],
                        ["seconds per epoch", " ".join(f(x, 1) for x in d["epoch_seconds"]), ""],
                        ["all of EWT dev, bags", f(d["dev_all_bag_bleu"]), f(d["dev_all_bag_bleu_shipped"])],
                        ["EWT test, bags (decoded once)", f(d["test_bag_bleu"]), f(d["test_bag_bleu_shipped"])],
                        ["all of EWT dev, full trees", f(d["dev_all_full_tree_bleu"]), f(d["dev_all_full_tree_bleu_shipped"])]]),
                 setup=f"LM: {d['lm']}. Decoding: {d['decode']}. {d['machine']}; test with two jobs in "
                       f"{f(d['wall_seconds_test_jobs2'], 1)} s.",
                 notes=[f"Full trees: {d['full_tree_note']}.", "Source: `bench/results/lm/dep-lm-texten-o4.json`."],
                 signature=d["signature"])
    d = R("lm/lm-order.json")
    rows = [[label, " ".join(f(x) for x in d[k]["dev500_by_epoch"]), d[k]["best_epoch"], f(d[k]["dev_bleu_bags"]),
             f(d[k].get("train_seconds"), 0), f(d[k]["decode_seconds"], 1)]
            for k, label in (("order3", "3"), ("order4_shipped", "4 (shipped, 8 epochs)"), ("order5", "5"))]
    out += block("LM order", [d["lm"], d["train"]],
                 table(["LM order", "dev[:500] by epoch", "best epoch", "all of dev, bags", "training seconds",
                        "decoding seconds"], rows),
                 setup=f"{d['what']}. Evaluation: {d['eval']}. {d['machine']}.",
                 notes=["With 2.5 M tokens of LM text, order does not matter; more text moved bags (the next table).",
                        "Source: `bench/results/lm/lm-order.json`."])
    d = R("lm/lm-size.json")
    rows = [[r["text"], thousands(r["tokens"]), r.get("best_epoch", ""),
             " ".join(f(x) for x in r.get("dev500_by_epoch", [])), f(r["dev_bleu_bags"])] for r in d["rows"]]
    out += block("LM text size", [d["lm"], d["train"]],
                 table(["LM text", "tokens", "best epoch (dev[:500])", "dev[:500] by epoch", "all of dev, bags"], rows),
                 setup=f"{d['what']}. Evaluation: {d['eval']}. {d['machine']}.",
                 notes=[d["reading"].replace("the issue's 35", "35") + ".", "Source: `bench/results/lm/lm-size.json`."],
                 signature=d["signature"])
    d = R("lm/seed-mix.json")
    rows = [[k, f(v["bags"]), f(v["trees"])] for k, v in d["dev_bleu"].items()]
    out += block("Seeds and parameter mixing", [d["train"], d["mix"]],
                 table(["model", "dev bags", "dev trees"], rows),
                 setup=f"{d['what']}. Evaluation: {d['eval']}. Dev[:500] by epoch: seed 2 "
                       f"{' '.join(f(x) for x in d['dev500_by_epoch']['s2'])} (best {d['best_epoch']['s2']}), seed 3 "
                       f"{' '.join(f(x) for x in d['dev500_by_epoch']['s3'])} (best {d['best_epoch']['s3']}). {d['machine']}.",
                 notes=[d["reading"] + "; the current shipped model is a two-seed mix (above).", "Source: `bench/results/lm/seed-mix.json`."],
                 signature=d["signature"])
    out += readme_block(R, "dep", "budget-trees")
    out += readme_block(R, "dep", "tree-training")
    out += readme_block(R, "dep", "lm-folds")

    # the benchmark suite
    out += ["### The benchmark suite (`make bench`)", "",
            f"`python bench/run.py` (`make bench`; `make bench-quick` is a reduced version) with the model without LM "
            f"(`{S['model']}`) on {S['cpu']}, {S['machine']}; single process unless stated. Source: "
            "`bench/results/summary.json`.", ""]
    rows = []
    for given in ("none", "full"):
        for t in S["throughput"][given]:
            rows.append([{"none": "bags", "full": "full trees"}[given], t["budget_factor"], mega(t["edges_per_second"]),
                         thousands(t["pops_per_second"]), f(t["sentences_per_second"], 1)])
    out += block("Throughput at fixed pop budgets", ["python bench/run.py --sections throughput"],
                 table(["input", "pops per word", "new edges scored per second per core", "pops per second", "sentences per second"], rows)
                 + ["", "![throughput](../bench/results/throughput.png)"], level=4)
    out += block("BLEU against the pop budget and against a timeout (Figure 7 of the paper)", ["python bench/run.py --sections search"],
                 table(["pops per word", "BLEU", "seconds per sentence"], [[g3(b), f(u), g3(s)] for b, u, s in S["bleu_by_budget"]])
                 + [""] + table(["timeout per sentence (s)", "BLEU"], [[g3(t), f(u)] for t, u in S["bleu_by_timeout"]])
                 + ["", "![BLEU against pop budget](../bench/results/bleu_by_budget.png) "
                        "![BLEU against timeout](../bench/results/bleu_by_timeout.png)"],
                 setup=f"{S['search_sentences']} dev bags for the budget curve, {S['timeout_sentences']} for the timeout curve.",
                 level=4)
    out += block("Training: dev BLEU and seconds per epoch (Figures 4-6)", ["python bench/run.py --sections learning"],
                 table(["epoch", "dev BLEU", "seconds", "share of sentences reaching the gold"],
                       [[e, f(b), f(s, 1), f(r, 3)] for e, b, s, r in S["learning_curve"]])
                 + ["", "![learning curve](../bench/results/learning_bleu.png) ![seconds per epoch](../bench/results/learning_seconds.png)"],
                 level=4)
    jm = {k: sorted(v)[len(v) // 2] for k, v in S["jobs_seconds"].items()}
    out += block("Scaling: jobs, sentence length, memory", ["python bench/run.py --sections scaling,memory,speedup"],
                 table(["what", "figure"], [
                     ["--jobs 1 / --jobs 2, seconds (median of 3)", f"{f(jm['1'], 1)} / {f(jm['2'], 1)}"],
                     ["--jobs 2 speed-up, outputs identical", f"{f(S['jobs2_speedup'])}x, {'yes' if S['jobs_outputs_identical'] else 'no'}"],
                     ["new edges scored per second per core; sentences per second", f"{mega(S['edges_per_second_per_core'])}; {f(S['sentences_per_second'], 1)}"],
                     ["peak RSS of the whole process / per worker", f"{f(S['peak_rss_mb'], 1)} / {f(S['peak_rss_mb_worker'], 1)} MB"],
                     ["model file", f"{thousands(S['model_bytes'])} bytes"],
                     ["Cython decoder against the pure-Python reference (same work and output)",
                      f"{f(S['cython_speedup'], 1)}x on {S['speedup_sentences']} sentences, outputs identical: "
                      f"{'yes' if S['speedup_outputs_identical'] else 'no'}"]])
                 + [""] + table(["sentence length from", "mean seconds per sentence", "sentences"],
                                [[L, g3(s), n] for L, s, n in S["seconds_by_length"]])
                 + ["", "![time against length](../bench/results/seconds_by_length.png) ![jobs scaling](../bench/results/jobs_scaling.png) "
                        "![memory](../bench/results/memory.png) ![Cython speed-up](../bench/results/cython_speedup.png)"],
                 setup="Measured before the decoding score caches, which roughly halve bag decoding time.", level=4)
    out += block("Weight-table size", ["python bench/run.py --sections hashsweep"],
                 table(["hash bits", "BLEU", "decoding seconds per sentence", "new edges per second", "training seconds", "model bytes"],
                       [[h["hash_bits"], f(h["bleu"]), g3(h["decode_seconds_per_sentence"]), mega(h["edges_per_second"]),
                         f(h["train_seconds"], 1), thousands(h["model_bytes"])] for h in S["hash_sweep"]])
                 + ["", "![weight-table size](../bench/results/hash_sweep.png)"],
                 setup=S["hash_sweep_note"] + ".", level=4)
    out += readme_block(R, "dep_speed", "dispatch", level=4)
    cc = R("compare_checkouts.json")
    rows = [[t, ", ".join(f(x) for x in d["old_seconds"]), ", ".join(f(x) for x in d["new_seconds"]), f(d["new_over_old"], 3),
             f"{d['old_peak_rss_mb']} / {d['new_peak_rss_mb']} MB", "yes" if d["identical_outputs"] else "no"]
            for t, d in cc["tasks"].items()]
    out += block("Two checkouts side by side (a refactor must change neither outputs nor speed)",
                 ["python bench/compare_checkouts.py --old OLD/.venv/bin/wo --new .venv/bin/wo --repeats 2"],
                 table(["EWT test task", "old checkout, seconds", "new checkout, seconds", "new / old (medians)", "peak RSS old / new",
                        "identical outputs"], rows),
                 setup=f"Whole-process decoding of EWT test (bags, full trees, SR-style T1) by two checkouts, alternated "
                       f"{cc['repeats']} times, one job ({cc['cpu']}); the last run compared the core split into one driver "
                       "and one grammar per system.",
                 notes=["Source: `bench/results/compare_checkouts.json`."], level=4)
    return out


# -------------------------------------------------------------------------- surface realisation
def sr(R: Records) -> List[str]:
    out = ["## Surface realisation", "",
           "`wo sr` ([sr.md](sr.md)). SR BLEU, NIST and DIST are the SR'18/'19 metrics on lower-cased tokens "
           "(`wo sr evaluate`); sacrebleu is given beside them. **Every UD treebank, against IMSurReal and ZGen_SR: "
           "[sr-multi.md](sr-multi.md)** (generated by `python bench/sr_multi.py table` from `bench/results/sr_multi/`).", ""]
    s = R("sr.json")
    rs = R.readme("sr", "search-orderer")
    rows = []
    for key, label in (("ewt_test", "SR-style EWT test (2,077, `make-input --seed 1`)"), ("ewt_dev", "SR-style EWT dev (2,001)")):
        d = s[key]
        rows.append([label, f(d["bleu"]), f(d["nist"]), f(d["dist"]), f(d["sacrebleu"]), f"{f(d['exact'], 1)} %",
                     f"{f(100 * d['inflection_accuracy'])} %",
                     f"{f(d['sentences_per_second'], 0)} sentences/s (whole process, {f(d['seconds_whole_process'])} s, "
                     f"{f(d['peak_rss_mb'], 1)} MB)"])
    p = s["partut_dev"]
    rows.append(["SR'19 ParTUT dev (156, the official T1 input), the same model", f(p["bleu"]), f(p["nist"]), f(p["dist"]),
                 f(p["sacrebleu"]), f"{f(p['exact'], 1)} %", "", f"{f(p['seconds_whole_process'])} s whole process"])
    rows += rs["rows"]
    out += block("The shipped English model (`corpora/models/wo-ewt-sr.wo`)",
                 [cmd(c) for c in s["ewt_test"]["commands"]] + ["python bench/sr_eval.py --split test", rs["command"]],
                 table(rs["columns"], rows),
                 setup="One process, one core, `--jobs 1`; metrics on lower-cased tokens.",
                 notes=[f"sacrebleu signature: `{s['ewt_test']['signature']}`.",
                        f"Source: `bench/results/sr.json`; the search-orderer row: `bench/results/readme/sr.json` "
                        f"({R('readme/sr.json')['source']})."])
    out += readme_block(R, "sr", "shipped-model")
    out += readme_block(R, "sr", "gold-forms")
    pr = R("sr_parse_regen.json")
    ps = pr["parser"]
    rows = [["raw text -> `en_wo_ud_ewt` (spaCy) -> `wo sr realize`", f(pr["sacrebleu_detok"]), f(pr["sr_bleu"]),
             f(pr["sr_nist"]), f(pr["sr_dist"]),
             f"parse {f(pr['parse_sentences_per_second'], 0)}, realise {f(pr['realise_sentences_per_second'], 0)}"],
            ["gold trees -> `wo sr realize` (`make-input --seed 1`)", "", f(pr["from_gold_trees"]["sr_bleu"]),
             f(pr["from_gold_trees"]["sr_nist"]), f(pr["from_gold_trees"]["sr_dist"]), ""]]
    out += block("Parse and regenerate", [pr["command"]],
                 table(["EWT dev (2,001 texts)", "sacrebleu vs the raw text", "SR BLEU", "NIST", "DIST", "sentences/s"],
                       rows),
                 setup=f"{pr['machine']}. Each `# text` of EWT dev, untokenized, is parsed by the spaCy pipeline "
                       "`en_wo_ud_ewt` (`corpora/packages/en_wo_ud_ewt`, trained on EWT train by `make spacy-ewt`) "
                       "and realised by the shipped English SR model through `Realizer.pipe` (the parse's order "
                       f"hidden by a fixed shuffle); {thousands(pr['sentences_parsed'])} parsed sentences. The "
                       "pipeline on EWT dev: " + ", ".join(f"{k.replace('_', ' ')} {f(v)}" for k, v in ps.items()) + ".",
                 notes=[f"sacrebleu signature (detokenized output against the raw text): `{pr['sacrebleu_signature']}`; "
                        f"SR BLEU: lower-cased tokens against EWT's gold tokens, `{pr['sr_signature']}`.",
                        "Source: `bench/results/sr_parse_regen.json`."])
    rows = []
    for key, d in s["inflection"].items():
        src = ", ".join(f"{k} {v}" for k, v in d["by_source"].items())
        rows.append([key, thousands(d["tokens"]), f(d["candidates_per_token"], 3), f"{f(100 * d['coverage'])} %",
                     f"{f(100 * d['first_correct'])} %", src])
    out += block("Inflection candidates", ["python bench/sr_eval.py --split dev"],
                 table(["set", "tokens", "candidates per token", "gold form among the candidates", "first candidate correct",
                        "candidates by source"], rows),
                 setup="`_no_english_addon`: without the English module (lemminflect, context rules).",
                 notes=["Source: `bench/results/sr.json`."])
    d = R("lm/sr-lm.json")
    rows = []
    for k, v in d["runs"].items():
        rows.append([k, f(v["dev_bleu"]), " ".join(f(x) for x in v["dev500_by_epoch"]), v["best_epoch"],
                     f(v.get("dev_seconds_whole_process"), 2), f(v.get("dev_peak_rss_mb"), 0)])
    out += block("The search orderer trained with an n-gram LM (`wo sr train --lm`)", [d["train"], d["decode"]],
                 table(["LM", "dev BLEU", "dev[:500] by epoch", "best epoch", "dev seconds (whole process)", "dev peak RSS MB"], rows),
                 setup=f"{d['what']}. {d['machine']}.",
                 notes=[f"Metric: {d['signature']}.", "Both LMs leave EWT out, so no jackknifing is needed. Given the full tree "
                        "and `lin`, little is left for the LM to decide; the gain is within noise, so the LM model was not "
                        "shipped and test was not decoded.", "Source: `bench/results/lm/sr-lm.json`."])
    return out


# ------------------------------------------------------------------------------------------ CCG
def ccg(R: Records) -> List[str]:
    out = ["## CCG word ordering", "",
           "`wo ccg` ([ccg.md](ccg.md)) on EWT converted to CCG (`corpora/ccg-en/`): bags with POS, shuffled per "
           "sentence, one core.", ""]

    def rows_of(rel, label):
        d = R(rel)
        rows = []
        for r in d["ccg"]:
            rows.append([label, f(r["budget_pops_per_word"], 0), "on" if r["dp"] else "off", f(r["BLEU"]),
                         f"{f(r['exact'])} %", f"{f(r['words_recovered_percent'], 0)} %", g3(r["seconds_per_sentence"]),
                         mega(r["edges_per_second"]), ", ".join(f"{k} {v}" for k, v in sorted(r["status"].items()))])
        return d, rows

    depl = {"pos": "dependency `wo-ewt-dep.wo`, same bags, `--given pos`", "none": "dependency `wo-ewt-dep.wo`, POS not given",
            "pos+lm": "dependency with LM `wo-ewt-dep-lm.wo` as shipped then (the first LM model), `--given pos`",
            "none+lm": "dependency with LM, as shipped then, POS not given"}
    cols = ["system", "pops per word", "DP pruning", "BLEU", "exact", "words recovered", "seconds per sentence",
            "new edges per second", "status"]
    for split, n in (("dev", "1,969"), ("test", "2,049")):
        d1, r1 = rows_of(f"ccg/eval.{split}.nolm.json", "CCG, no LM (`wo-ewt-ccg.wo`)")
        d2, r2 = rows_of(f"ccg/eval.{split}.lm.json", "CCG with LM (`wo-ewt-ccg-lm.wo`)")
        dr = []
        for k in ("pos", "none", "pos+lm", "none+lm"):
            v = d2["dep"].get(k) or d1["dep"].get(k)
            if v:
                dr.append([depl[k], "", "", f(v["BLEU"]), f"{f(v['exact'])} %", "100 %", g3(v["seconds_per_sentence"]), "", ""])
        c = ("python bench/ccg_eval.py --model M --budgets 10 30 100 --no-dp-budgets 30 100 --tag nolm|lm" if split == "dev"
             else "python bench/ccg_eval.py --model M --test --budgets 100 --tag nolm|lm")
        out += block(f"EWT-CCG {split}, all {n} sentences", [c], table(cols, r1 + r2 + dr),
                     setup="Test decoded once with the settings chosen on dev." if split == "test" else "",
                     notes=[f"Source: `bench/results/ccg/eval.{split}.nolm.json`, `bench/results/ccg/eval.{split}.lm.json`; "
                            f"plots `bench/results/ccg/bleu_by_budget.{split}.{{nolm,lm}}.png`."],
                     signature=d1["ccg"][0]["signature"])
    # bags of forms alone: the CCG model's bag search against the dependency system's default
    rows, sig = [], ""
    for split in ("dev", "test"):
        d = R(f"ccg/eval.{split}.words.json")
        if not d:
            continue
        for r in d["ccg"]:
            rows.append([f"EWT-CCG {split}", "CCG with LM, its bag search (GYRO + CCG parses)", f(r["BLEU"]),
                         f"{f(r['exact'])} %", f"{f(r['words_recovered_percent'], 0)} %", g3(r["seconds_per_sentence"]),
                         ", ".join(f"{k} {v}" for k, v in sorted(r["status"].items()))])
            sig = sig or r["signature"]
        for k, label in (("none+lm", "dependency with LM, its default (GYRO + dependency parses)"),
                         ("none", "dependency without LM, its own search (`wo-ewt-dep.wo --lm none`)")):
            v = d["dep"].get(k)
            if v:
                rows.append([f"EWT-CCG {split}", label, f(v["BLEU"]), f"{f(v['exact'])} %", "100 %",
                             g3(v["seconds_per_sentence"]), ""])
    bg = R("ccg/bag.dev.json")
    if rows and bg:
        out += block("Bags of words without POS",
                     ["python bench/ccg_eval.py --model corpora/models/wo-ewt-ccg-lm.wo [--test] --budgets 100 "
                      "--no-dp-budgets --words-only --tag words",
                      "python bench/ccg_bag.py dump --out W/ccg-dev.pkl && python bench/ccg_bag.py grid --dump W/ccg-dev.pkl"],
                     table(["set", "system", "BLEU", "exact", "words recovered", "seconds per sentence (one process)",
                            "status"], rows),
                     setup=("The forms alone, shuffled per sentence. The CCG model's bag search "
                            "(`corpora/models/wo-ewt-ccg-lm.decode.json`): GYRO's 10 best strings under the large 4-gram, "
                            "each parsed by the CCG model with its order fixed (100 pops per word), reranked by log10 p + "
                            f"0.5 F. Chosen on dev (`bench/ccg_bag.py`): GYRO alone {f(bg['gyro_alone'])}; "
                            + "; ".join(f"{k} {f(v)}" for k, v in bg["grid"].items() if k.startswith("10 strings"))
                            + f"; the best, {bg['best']['strings']} strings at {bg['best']['w']:g}, {f(bg['best']['bleu'])} "
                            f"(10 strings at 0.5 ship: half the parses); {f(100 * bg['parsed_share'], 0)} % of the strings "
                            "parse. Test decoded once."),
                     notes=["Source: `bench/results/ccg/eval.{dev,test}.words.json`, `bench/results/ccg/bag.dev.json`."],
                     signature=sig)
    rows = []
    for rel in ("ccg/tune.wo-ewt-ccg.json", "ccg/tune.wo-ewt-ccg-lm.json"):
        d = R(rel)
        for r in d["grid"]:
            rows.append([os.path.basename(rel)[5:-5] + ".wo", f(r["beam_factor"], 0) + "n", r["complete_beam"],
                         f(r["patience_factor"], 0), f(r["BLEU"]), g3(r["seconds_per_sentence"]),
                         ", ".join(f"{k} {v}" for k, v in sorted(r["status"].items()))])
    out += block("Decoding defaults, chosen on all of EWT-CCG dev", ["python bench/ccg_tune.py --model M"],
                 table(["model", "chart", "completion beam", "patience (pops per word)", "BLEU", "seconds per sentence", "status"], rows),
                 setup="100 pops per word, DP pruning on.",
                 notes=[f"Chosen: {R('ccg/tune.wo-ewt-ccg.json')['chosen']['chosen_on']}; {R('ccg/tune.wo-ewt-ccg-lm.json')['chosen']['chosen_on']}.",
                        "Source: `bench/results/ccg/tune.wo-ewt-ccg.json`, `bench/results/ccg/tune.wo-ewt-ccg-lm.json`."])
    rows = []
    for split in ("dev", "test"):
        rel = f"ccg/eval.{split}.session5-single-model.json"
        for r in R(rel)["ccg"]:
            rows.append([split, f(r["budget_pops_per_word"], 0), "on" if r["dp"] else "off", f(r["BLEU"]), f"{f(r['exact'])} %",
                         g3(r["seconds_per_sentence"]), ", ".join(f"{k} {v}" for k, v in sorted(r["status"].items()))])
    out += block("History: the first CCG model (one run, no LM, before parameter mixing and the tuned completion)",
                 ["python bench/ccg_eval.py --model M --budgets 10 30 100 [--test --budgets 100]"],
                 table(["split", "pops per word", "DP pruning", "BLEU", "exact", "seconds per sentence", "status"], rows),
                 notes=["Source: the `bench/results/ccg/eval.*.json` records of the single-run model."], signature=SIG)
    out += readme_block(R, "ccg", "training")
    out += readme_block(R, "ccg", "analysis")
    return out


# ---------------------------------------------------------------------------------------- LMs
def lm(R: Records) -> List[str]:
    out = ["## N-gram language models", "", "`wo lm` ([lm.md](lm.md)).", ""]
    d = R("lm.json")
    rows = []
    for order in sorted(d["orders"], key=int):
        o = d["orders"][order]
        m = re.search(r"n-grams \[([0-9, ]+)\]", " ".join(o["log"]))
        counts = [int(x) for x in m.group(1).split(",")] if m else []
        k = o["kenlm"]
        rows.append([order, f(o["train_seconds"], 1), f"{o['train_peak_rss_mb']} MB", " + ".join(thousands(c) for c in counts)
                     + (f" = {mega(sum(counts))}" if counts else ""), f"{f(o['binary_mb'], 1)} MB",
                     f"{f(o['arpa_seconds'], 1)} s, {f(o['arpa_mb'], 1)} MB", mega(o["queries_per_second_median"]),
                     f(o["dev_perplexity"]), f"{f(k['wo_score_lines_seconds_median'], 4)} / {f(k['kenlm_score_seconds_median'], 4)} s",
                     f"{k['max_abs_sentence_diff']:.1e}"])
    out += block("Estimation and queries", ["python bench/lm_bench.py"],
                 table(["order", "estimation seconds", "peak RSS", "n-grams by order", "binary", "ARPA written",
                        "queries per second (Cython, median)", "EWT dev perplexity", "scoring lines: wo / kenlm",
                        "largest sentence log10 difference from kenlm"], rows),
                 setup=f"Text: {', '.join(d['texts'])} (text-en 5.1 M words + EWT train); one core.",
                 notes=["Source: `bench/results/lm.json`."])
    out += readme_block(R, "lm", "queries")
    w = R("lm/wiki-lm.json")
    if w:
        tr, tk = w["train"], w["tokenize"]
        rows = [[r["lm"], mega(r["bytes"]) + "B", f(r["gyro_dev300_bleu"]) if r.get("gyro_dev300_bleu") else "",
                 f(r["tree_rerank_dev_bleu"]) if r.get("tree_rerank_dev_bleu") else ""] for r in w["size_quality"]]
        out += block("The Wikipedia-only 4-gram (shipped before the large 4-gram)",
                     ["make lm-wiki", cmd(tk["command"]), cmd(tr["command"])],
                     table(["LM", "file", "GYRO BLEU, first 300 EWT dev bags (LM alone)",
                            "`--tree-rerank` BLEU, EWT dev trees (shipped weights)"], rows),
                     setup=(f"{w['cpu']}. Tokenizing: {thousands(tk['sentences'])} sentences, {thousands(tk['tokens'])} "
                            f"tokens, {f(tk['wall_seconds'], 0)} s, peak {tk['peak_rss_mb']} MB. Training: "
                            f"{' / '.join(thousands(x) for x in tr['ngrams'])} n-grams, counting {f(tr['counting_seconds'], 0)} s, "
                            f"estimation {f(tr['estimation_seconds'], 0)} s, {f(tr['wall_seconds'], 0)} s in all, peak "
                            f"{f(tr['peak_rss_mb'] / 1024, 1)} GB (before: {f(w['train_before']['wall_seconds'], 0)} s, "
                            f"{f(w['train_before']['peak_rss_mb'] / 1024, 1)} GB). {w['reproducible']}"),
                     notes=[f"Tree column: {w['size_quality_tree_command']}.",
                            f"Used by `wo linearize --tree-rerank` at beam 64: EWT trees dev {f(w['trees']['dev_bleu'])}, test "
                            f"{f(w['trees']['test_bleu'])} ([reranking tree inputs](#reranking-tree-inputs-at-beam-64---tree-rerank-before-it-became-the-default)); "
                            "the large 4-gram replaced this file ([full trees: the default](#full-trees-the-default)).",
                            "Source: `bench/results/lm/wiki-lm.json`."],
                     signature=w["signature"])
    big = R("lm/large-lm.json")
    if big:
        tk, tr, rp = big["tokenize"], big["train"], big["replaces"]
        out += block("The large 4-gram (shipped: `corpora/models/wo-en-wiki-4gram.wolm`)",
                     [big["make"], cmd(tk["command"]), cmd(tr["command"])],
                     table(["LM", "bytes", "bag default BLEU, EWT dev", "tree default BLEU, EWT dev", "ns per query"],
                           [["`--prune 1 2 3`, `trie-q8-a` (shipped)", thousands(tr["bytes"]),
                             f(rp["bag_default_ewt_dev"]["this LM"]), f(rp["tree_rerank_ewt_dev"]["this LM"]),
                             f(rp["query_ns"]["this LM (trie-q8-a)"], 1)],
                            ["`--prune 1 3 5`, `trie-q8` (shipped before)", rp["file"].split(", ")[1].split(" ")[0],
                             f(rp["bag_default_ewt_dev"]["before"]), f(rp["tree_rerank_ewt_dev"]["before"]),
                             f(rp["query_ns"]["before (45.1 MB trie-q8)"], 1)]]),
                     setup=(f"{big['cpu']}. {thousands(tr['sentences'])} sentences, {thousands(tr['tokens'])} tokens, "
                            f"{' / '.join(thousands(x) for x in tr['ngrams'])} n-grams. Tokenizing {f(tk['wall_seconds'], 0)} s; "
                            f"training {' and '.join(f(x, 0) for x in tr['wall_seconds'])} s, peak "
                            f"{' and '.join(thousands(x) for x in tr['peak_rss_kb_main_process'])} KB (main process). "
                            f"{big['reproducible']} (md5 {tr['md5'][:8]}...)."),
                     notes=[f"Bag column: {rp['bag_default_ewt_dev']['command']}.",
                            f"Tree column: {rp['tree_rerank_ewt_dev']['command']}.",
                            f"Query column: {rp['query_ns']['command']}; the same LM without compressed pointers "
                            f"(`trie-q8`, 56.2 MB): {f(rp['query_ns']['the same LM in trie-q8 (56.2 MB)'], 1)} ns.",
                            f"Before: {rp['earlier']}."]
                     + ([f"Size against quality, {big['size_quality']['what']} (`{big['size_quality']['command']}`): "
                         + "; ".join(f"{r['lm']}, {thousands(r['bytes'])} bytes: {f(r['bleu'])} BLEU"
                                     for r in big["size_quality"]["rows"]) + "."] if big.get("size_quality") else [])
                     + ["Source: `bench/results/lm/large-lm.json`."],
                     signature=big["signature"])
    pud = R("lm/pud.json")
    if pud and pud.get("results"):
        res = pud["results"]
        names = {"bags": "bags (`--given none`: the default, GYRO + the dependency model)",
                 "bags-dep": "bags, the model's own search (`--bag-search dep`)",
                 "trees": "full trees (`--given full`: the default, reranked by the LMs)",
                 "trees-plain": "full trees, `--no-tree-rerank`"}
        rows, sig = [], ""
        for cfg, by in pud["results"].items():
            e, p_ = by.get("ewt", {}), by.get("pud", {})
            rows.append([names.get(cfg, cfg), f(e.get("bleu")) if e else "", f(p_.get("bleu")) if p_ else "",
                         f(p_.get("bleu") - e.get("bleu")) if e and p_ else "",
                         f(p_.get("sentences_per_second"), 1) if p_ else ""])
            sig = sig or p_.get("signature", "")
        out += block("Out of domain: UD English-PUD", [pud["script"]],
                     table(["input", "EWT test BLEU", "PUD test BLEU", "PUD - EWT", "PUD sentences/s (whole process, 2 jobs)"],
                           rows),
                     setup=(f"{pud['cpu']}. The EWT-trained defaults of `wo linearize` (the shipped model and LMs) on the "
                            "1,000 sentences of UD English-PUD test (news and Wikipedia), beside EWT test; one run each."),
                     notes=([f"The reranking of tree inputs (with the large 4-gram) raises full trees by "
                             f"{f(res['trees']['pud']['bleu'] - res['trees-plain']['pud']['bleu'])} BLEU on PUD and "
                             f"{f(res['trees']['ewt']['bleu'] - res['trees-plain']['ewt']['bleu'])} on EWT."]
                            if all(k in res and len(res[k]) == 2 for k in ("trees", "trees-plain")) else [])
                     + ["Source: `bench/results/lm/pud.json`."], signature=sig)
    s = R("idl/summary.json")
    rows = [[k, f(v["wall_seconds"], 2), f"{f(v['peak_rss_mib'], 1)} MiB", thousands(v["bytes"]),
             f(v["score_wsj.10-25"]["perplexity"], 1), f(v["score_wsj.10-25"]["perplexity_excluding_oov"], 1)]
            for k, v in sorted(s["lms"].items())]
    out += block("The lower-cased LMs of the IDL benchmark", [s["lms"]["o3"]["command"], s["lms"]["o4"]["command"]],
                 table(["LM", "seconds", "peak RSS", "bytes", "WSJ 10-25 perplexity", "excluding OOV"], rows),
                 setup=f"{thousands(s['lm_text']['tokens'])} tokens in {thousands(s['lm_text']['lines'])} lines of text-en, "
                       f"lower-cased without final punctuation, {s['overlap']['lm_lines_removed_total']} lines equal to test "
                       "sentences removed (`python bench/idl_data.py`).",
                 notes=["Source: `bench/results/idl/summary.json`."])
    return out


# ---------------------------------------------------------------------------------------- IDL
_IDL_ORDER = ["L", "G", "bfs", "astar", "greedy-astar,k=1", "greedy-astar,k=2", "greedy-astar,k=3", "beam,beam=0.2", "beam,beam=0.1"]
_IDL_NAME = {"L": "L (inverse lexicographic)", "G": "G (greedy joining, Python)", "bfs": "BFS", "astar": "A*",
             "greedy-astar,k=1": "A*_k, k=1", "greedy-astar,k=2": "A*_k, k=2", "greedy-astar,k=3": "A*_k, k=3",
             "beam,beam=0.2": "B_p, p=0.2", "beam,beam=0.1": "B_p, p=0.1"}


def idl(R: Records) -> List[str]:
    out = ["## IDL-expressions", "",
           "`wo idl` ([idl.md](idl.md)), Tables 2 and 3 of Soricut & Marcu (2005). Search errors: outputs scoring below "
           "the exhaustive BFS optimum; estimated: below the reference sentence. Unfold: states unfolded / states of the "
           "full unfolding, the mean over bags and over all states. Times: one process, per bag; \"search\" is the Cython "
           "unfolding, \"whole\" adds compiling the graph and the heuristic's tables in Python.", ""]
    ev = R("idl/eval.json")
    s = R("idl/summary.json")
    out += ["Bags from the WSJ sample (`../shared/corpora/ptb-sample`, lower-cased, final punctuation removed, shuffled per "
            f"bag with seed {s['test_sets']['seed']}); LMs estimated with `wo lm train` on text-en lower-cased "
            f"({thousands(s['lm_text']['tokens'])} tokens; the paper used 170 M words of WSJ). At 10-25 words exhaustive search "
            "is out of reach (full unfoldings of 10^5 to 10^10 states). BFS and A* differ in ID/BLEU only by ties between "
            "equally probable strings. The evaluation runs shared the two cores with other jobs, so their times are "
            "indicative; the speed-ups in the side-by-side table are.", ""]
    for bagset in ("3-7", "10-25"):
        for lmname, order in (("text-en.lc.o3.wolm", "trigram"), ("text-en.lc.o4.wolm", "4-gram")):
            keys = {k.split("|")[3]: k for k in ev if k.startswith(f"{bagset}|{lmname}|")}
            rows = []
            for a in _IDL_ORDER:
                if a not in keys:
                    continue
                r = ev[keys[a]]
                unf = (f"{f(r['unfold_percent'])} / {f(r['unfold_percent_of_total'])}" if "unfold_percent" in r else "")
                ms = (f"{g3(1000 * r['search_seconds_per_bag'])} / {g3(1000 * r['seconds_per_bag'])}" if "search_seconds_per_bag" in r
                      else (f"— / {g3(1000 * r['seconds_per_bag'])}" if "seconds_per_bag" in r else ""))
                rows.append([_IDL_NAME[a], f(r["ID"]), f(r["BLEU"]), f(r.get("search_errors")), f(r.get("estimated_search_errors")),
                             unf, ms])
            n = s["test_sets"][bagset]["sentences"]
            out += block(f"WSJ bags of {bagset} words ({thousands(n)}), {order}",
                         [f"python bench/idl_data.py; python bench/idl_eval.py --set {bagset} --lm bench/results/idl/{lmname}"],
                         table(["algorithm", "ID %", "BLEU", "search errors %", "est. search errors %", "unfold % (mean / all)",
                                "ms per bag (search / whole)"], rows),
                         notes=["Source: `bench/results/idl/eval.json`."], signature=SIG, level=3)
    sp = R("idl/speed.json")
    rows = []
    for k in sorted(sp):
        d = sp[k]
        rows.append([d["lm"], f(d["search_bfs"], 1), f(d["search_astar"], 1), f(d["search_astar0"], 1),
                     f"{f(d['speedup_search'], 2)}x ({f(d['speedup_search_no_lookahead'], 2)}x)",
                     f(d["prepare_astar"] - d["prepare_bfs"], 0), f"{f(d['speedup_search_with_tables'], 2)}x",
                     f"{f(d['whole_bfs'], 0)} / {f(d['whole_astar'], 0)} ({f(d['speedup_whole'], 2)}x)",
                     f"{thousands(d['states_unfolded']['bfs'])} / {thousands(d['states_unfolded']['astar'])}"])
    out += block("A* against BFS, side by side (microseconds per bag, 3-7-word bags)",
                 ["python bench/idl_speed.py --lm bench/results/idl/text-en.lc.o3.wolm (and .o4.wolm)"],
                 table(["LM", "BFS search", "A* search", "A* search, paper's heuristic only", "speed-up (search; paper's heuristic)",
                        "A* tables", "speed-up incl. tables", "whole `realize` BFS / A* (speed-up)", "states unfolded BFS / A*"], rows),
                 setup=f"{sp[sorted(sp)[0]]['bags']} bags, medians of {sp[sorted(sp)[0]]['repeats']} alternated runs, the other core busy. "
                       "\"Tables\" is the extra preparation A* needs (the candidate tables: one LM query per context and type).",
                 notes=["Source: `bench/results/idl/speed.json`."])
    out += readme_block(R, "idl", "costs")
    e = R("idl/eval_ewt.json")
    rows = []
    for k in sorted(e):
        r = e[k]
        a = k.split("|")[3]
        rows.append([_IDL_NAME.get(a, a), f(r["ID"]), f(r["BLEU"]), f(r.get("estimated_search_errors")),
                     g3(r.get("seconds_per_bag")), ", ".join(f"{x} {y}" for x, y in sorted(r.get("status", {}).items()))])
    dep_bleu = R("lm_search.json")["test"]["bags"]["bleu"]
    out += block("LM only on EWT test bags (cased, punctuation kept)",
                 ["python bench/idl_eval.py --ewt-test --lm corpora/models/wo-en-4gram.wolm --max-states 500000"],
                 table(["algorithm", "ID (exact) %", "BLEU", "est. search errors %", "seconds per bag", "status"], rows),
                 setup="The shipped LM `corpora/models/wo-en-4gram.wolm` (text-en + EWT train), `--max-states 500000`.",
                 notes=[f"The dependency system with the same LM (the LM model shipped before) scores {f(dep_bleu)} on the same sentences.",
                        "Source: `bench/results/idl/eval_ewt.json`."], signature=SIG)
    return out


# --------------------------------------------------------------------------------------- GYRO
def _opt(c: str, name: str) -> Optional[str]:
    m = re.search(rf"(?:^| ){re.escape(name)} (\S+)", c)
    return m.group(1) if m else None


def _lm_label(c: str) -> str:
    lmp = _opt(c, "--lm") or ""
    base = "shipped" if lmp.endswith("wo-en-4gram.wolm") else ("WSJ-free o4" if "/wsj/" in lmp else "o4")
    return base + (", o5" if _opt(c, "--rescore-lm") else "")


def gyro(R: Records) -> List[str]:
    out = ["## GYRO", "",
           "`wo gyro` ([gyro.md](gyro.md)). BLEU is sacrebleu on the cased tokens; every bag shuffled with a fixed seed per "
           "sentence; `--jobs 2`. LMs: `o4`/`o5` are unpruned interpolated modified Kneser-Ney 4/5-grams of all of text-en "
           "plus EWT train (bench only: text-en is not all redistributable); \"shipped\" is `corpora/models/wo-en-4gram.wolm` "
           "(2.5 M tokens, singletons pruned), the LM of the dependency system. Sub-sentences: each EWT test sentence cut into "
           "consecutive pieces of at most 20 tokens, scored against the pieces; \"joined\": the pieces' outputs concatenated "
           "per sentence and scored against the whole sentences.", ""]
    demo = R.readme("gyro", "demo")
    spec = [("eval.test-sub.dep-lm.json", "eval.test.dep-lm.json", "dependency system with LM (`wo-ewt-dep-lm.wo` as shipped then, forms only)", "shipped"),
            ("eval.test-sub.paper5.json", None, "GYRO, paper's grammar (phrases, bigram, unigram) +5g", None),
            ("eval.test-sub.uni_shipped.json", "demo", "GYRO, unigram rules (the `make demo` line)", None),
            ("eval.test-sub.uni.json", None, "GYRO, unigram rules", None),
            ("eval.test-sub.uni5.json", "eval.test.uni5.json", "GYRO, unigram rules +5g", None),
            ("eval.test-sub.uni5mbr.json", None, "GYRO, unigram rules +5g +LMBR", None)]
    rows, cmds = [], []
    for sub, whole, label, lmlabel in spec:
        d = R(f"gyro/{sub}")
        cmds.append(cmd(d["command"]))
        w, wsec, wrss = "", "", ""
        if whole == "demo":
            w = demo["rows"][0][1]
        elif whole:
            wd = R(f"gyro/{whole}")
            w = f(wd["BLEU"])
            cmds.append(cmd(wd["command"]))
            wsec = f" (whole: {f(wd['mean_seconds_per_bag'])})" if wd.get("mean_seconds_per_bag") else ""
            wrss = f" (whole: {f(wd['peak_rss_mb'], 0)})" if wd.get("peak_rss_mb") else ""
        rows.append([label, lmlabel or _lm_label(d["command"]), f(d["BLEU"]), f(d.get("BLEU_joined_whole_sentences")), w,
                     f"{f(d['exact_pct'])} %", (f(d["mean_seconds_per_bag"]) + wsec) if d.get("mean_seconds_per_bag") else "",
                     (f(d["peak_rss_mb"], 0) + wrss + " MB") if d.get("peak_rss_mb") else ""])
    out += block("EWT test (decoded once per configuration)", cmds + [demo["command"]],
                 table(["system", "LM", "sub-sentences", "joined", "whole sentences", "exact (sub)", "s / bag (sub)",
                        "peak RSS per process"], rows),
                 setup="`python bench/gyro_eval.py --set test-sub|test --lm LM --tag T -- OPTIONS` runs these commands; "
                       "2,500 pieces, 10.0 tokens on average; 2,077 whole sentences.",
                 notes=[f"The longest whole test sentence took {f(R('gyro/eval.test.uni5.json')['max_seconds_per_bag'], 1)} s.",
                        f"The `make demo` line on whole sentences: {demo['rows'][0][1]} BLEU, exact {demo['rows'][0][2]}, "
                        f"{demo['rows'][0][3]} (`bench/results/readme/gyro.json`, {R('readme/gyro.json')['source']}).",
                        "Source: `bench/results/gyro/eval.test-sub.*.json`, `bench/results/gyro/eval.test.*.json`."],
                 signature=SIG)
    R.readme("gyro", "demo")
    td, tt = R("gyro/throughput.dev.json"), R("gyro/throughput.test.json")
    if td and tt:
        rows = [[split, name, f(r["bleu"]), f(r["exact_pct"]), f(r["wall_seconds"], 1), f(r["sentences_per_second"], 1),
                 thousands(r["peak_rss_mb"])]
                for split, d in (("dev", td), ("test", tt)) for name, r in d["results"].items()]
        out += block("Throughput of the `make demo` line (whole EWT bags, the shipped 4-gram)",
                     [td["script"], tt["script"]],
                     table(["split", "configuration", "BLEU", "exact %", "seconds (whole process, 2 jobs)", "sentences/s",
                            "peak RSS MB (main process)"], rows),
                     setup=(f"{td['cpu']}. `default`: the chart's defaults (row cap 500, join filter 0.5); `former`: the "
                            "defaults before them (row cap 2000, no join filter), with the same engine; test decoded once, "
                            "with the default."),
                     notes=[f"Before the best-first joins, the per-word bitsets and the candidate hash table (the "
                            f"engine of commit da012db), the same `former` settings on the first 500 dev bags took 91.4 s "
                            f"against 66.1 s now (29.26 and 29.39 BLEU); the `make demo` line on test gave 32.51 BLEU in 4 min "
                            f"34 s (`bench/results/readme/gyro.json`).",
                            "Source: `bench/results/gyro/throughput.dev.json`, `bench/results/gyro/throughput.test.json`."],
                     signature=tt["results"]["default"]["signature"])
    j, jd = R("gyro/eval.test-sub.uni5.join.json"), R("gyro/eval.dev-sub.all_uni5.join.json")
    dev_all = R("gyro/eval.dev-sub.all_uni5.json")
    nb = R("gyro/eval.dev-sub.f_uni_nb100.json")
    rows = [["test, unigram +5g", "", "", "", ""]]
    rows = [["EWT test pieces (2,500)", thousands(j["sentences"]), thousands(j["multi_piece_sentences"]),
             ", ".join(f"K {k}: {f(v)}" for k, v in sorted(j["BLEU_by_k"].items(), key=lambda kv: int(kv[0]))),
             f(R("gyro/eval.test-sub.uni5.json")["BLEU"])],
            [f"EWT dev, all pieces ({thousands(dev_all['n'])})", thousands(jd["sentences"]), thousands(jd["multi_piece_sentences"]),
             ", ".join(f"K {k}: {f(v)}" for k, v in sorted(jd["BLEU_by_k"].items(), key=lambda kv: int(kv[0]))),
             f(dev_all["BLEU"])]]
    out += block("Across sub-sentence boundaries (the paper's \"GYRO +3g\" row)",
                 ["python bench/gyro_join.py --run eval.test-sub.uni5 --lm bench/results/gyro/text-en+ewt.o5.wolm --k 10",
                  cmd(dev_all["command"])],
                 table(["set", "sentences", "with more than one piece", "joined BLEU by the K best strings of each piece", "the pieces alone"], rows),
                 setup="The K best strings of consecutive pieces joined by the 5-gram, Viterbi over the pieces; K = 1 is plain "
                       "concatenation. K = 10 was chosen on all dev pieces.",
                 notes=[f"100-best oracle (sentence-BLEU best of the 100 best, unigram +5g): "
                        f"{f(R('gyro/eval.test-sub.uni5.json')['nbest_oracle_BLEU'])} on test pieces, "
                        f"{f(dev_all['nbest_oracle_BLEU'])} on all dev pieces, {f(nb['nbest_oracle_BLEU'])} on the 300 dev tuning pieces "
                        f"(`{cmd(nb['command'])}`).",
                        "Source: `bench/results/gyro/eval.test-sub.uni5.join.json`, `eval.dev-sub.all_uni5.join.json`, "
                        "`eval.dev-sub.all_uni5.json`, `eval.dev-sub.f_uni_nb100.json`."], signature=SIG)
    rows, cmds = [], []
    for rel in R.glob("gyro/eval.wsj20.*.json"):
        d = R(rel)
        cmds.append(cmd(d["command"]))
        rows.append([os.path.basename(rel)[len("eval.wsj20."):-5], _opt(d["command"], "--levels"), _lm_label(d["command"]),
                     f(d["BLEU"]), f"{f(d['exact_pct'])} %", f(d["mean_seconds_per_bag"]),
                     ", ".join(f"{k} {f(v, 1)} %" for k, v in sorted(d["levels_pct"].items()))])
    w = R("gyro/data.wsj.json")
    out += block("WSJ sample, sentences of at most 20 tokens (1,605 bags, 13.8 tokens on average)", cmds,
                 table(["run", "grammar", "LM", "BLEU", "exact", "s / bag", "grammar that parsed"], rows),
                 setup=f"For WSJ every text-en line equal to a WSJ-sample sentence ({w['wsj_lines_removed']} lines) was removed "
                       "before building the index and both LMs (`python bench/gyro_data.py --set wsj`; the paper's grammar uses "
                       "`bench/results/gyro/wsj/index.woidx`).",
                 notes=["Source: `bench/results/gyro/eval.wsj20.*.json`."], signature=SIG)
    rows, cmds = [], []
    for rel in R.glob("gyro/eval.dev-sub.*.json"):
        d = R(rel)
        if "command" not in d or d.get("n") != 300:
            continue
        c = cmd(d["command"])
        other = []
        for o in ("--row-cap", "--rule-penalty", "--mbr-scale", "--nbest"):
            if _opt(c, o):
                other.append(f"{o} {_opt(c, o)}")
        for o in ("--no-future", "--mbr"):
            if re.search(rf" {o}(?: |$)", c):
                other.append(o)
        rows.append([os.path.basename(rel)[len("eval.dev-sub."):-5], _opt(c, "--levels"), _lm_label(c), _opt(c, "--r") or "",
                     _opt(c, "--beta") or "", " ".join(sorted(other)), f(d["BLEU"]), f"{f(d['exact_pct'])} %",
                     f(d["mean_seconds_per_bag"]), ", ".join(f"{k} {f(v, 1)}" for k, v in sorted(d["levels_pct"].items()))])
    out += block("Tuning on EWT dev (300 random sub-sentences, seed 5, 11.0 tokens on average)",
                 ["python bench/gyro_eval.py --set dev-sub --n 300 --lm LM --tag T -- OPTIONS (each run's command is in its record)"],
                 table(["run", "grammar", "LM", "r", "beta", "other options", "BLEU", "exact", "s / bag", "grammar that parsed %"], rows),
                 setup="Times on dev are from runs that shared the machine; only ratios measured side by side count. The "
                       "defaults (`--levels unigram --r 3 --beta 4`) were chosen here.",
                 notes=["Source: `bench/results/gyro/eval.dev-sub.*.json`."], signature=SIG)
    c2, fs = R("gyro/eval.dev-sub.chart_r3b2.json"), R("gyro/eval.dev-sub.fst_r3b2.json")
    rows = [[name, f(d["BLEU"]), f(d["mean_seconds_per_bag"], 3), f"{f(d['peak_rss_mb'], 0)} MB",
             ", ".join(f"{k} {f(v, 1)} %" for k, v in sorted(d["levels_pct"].items()))] for name, d in (("chart", c2), ("fst", fs))]
    sp = R("gyro/speed.json")
    out += block("The chart engine against OpenFst (pynini): the same algorithm and settings, 100 dev sub-sentences",
                 [cmd(c2["command"]), cmd(fs["command"])],
                 table(["engine", "BLEU", "s / bag", "peak RSS", "grammar that parsed (greedy: the state bound was hit)"], rows),
                 setup="The paper's grammar, shipped LM, r 3, beta 2, `--jobs 2`.",
                 notes=["Source: `bench/results/gyro/eval.dev-sub.chart_r3b2.json`, `eval.dev-sub.fst_r3b2.json`."], signature=SIG)
    sizes = sorted({int(k) for cfg in sp["configs"].values() for k in cfg})
    rows = []
    for n in sizes:
        row = [n]
        for cfg in ("chart", "chart-paper", "fst-paper"):
            v = sp["configs"][cfg].get(str(n))
            row += [f"{f(v['mean_s'], 4)} / {f(v['max_s'], 4)}" if v else "", thousands(v["max_states"]) if v else ""]
        row.append(f(sp["configs"]["chart"][str(n)]["max_pool_mb"]) if str(n) in sp["configs"]["chart"] else "")
        rows.append(row)
    sb = sp["same_bags_seconds"]
    out += block("Seconds and memory against bag size, one core", ["python bench/gyro_speed.py"],
                 table(["bag size", "chart, default grammar: mean / max s", "states", "chart, paper's grammar: mean / max s", "states",
                        "fst, paper's grammar: mean / max s", "states", "chart pools, max MB"], rows)
                 + ["", "![GYRO seconds and memory per bag](../bench/results/gyro/speed.png)"],
                 setup=f"{sp['per_size']} bags per size, the configurations alternated bag by bag; LM `{sp['lm']}`; the whole "
                       f"process peaked at {sp['peak_rss_mb_process']} MB (the o4 LM and the index mapped).",
                 notes=[f"On the same {sp['per_size'] * len(sp['configs']['fst-paper'])} bags of {sb['sizes']} tokens: fst {f(sb['fst-paper'])} s against {f(sb['chart-paper'])} s for "
                        f"the chart engine with the same grammar and settings ({f(sb['fst/chart-paper'], 0)}x); the chart engine with "
                        f"the default grammar {f(sb['chart'])} s.", "Source: `bench/results/gyro/speed.json`."])
    out += readme_block(R, "gyro", "boundary-cache")
    ix = R("gyro/index.json")
    b = ix["build"]
    rows = [["build", f"{f(b['wall_seconds'], 1)} s, peak RSS {thousands(b['peak_rss_mb'])} MB, {thousands(b['bytes'])} bytes "
                      f"({b['bytes'] / 2 ** 20:.1f} MiB); "
                      f"load {f(ix['load_seconds'])} s"],
            ["text", f"{thousands(ix['header']['text']['tokens'])} tokens, {thousands(ix['header']['text']['sentences'])} sentences; "
                     f"vocabulary {thousands(ix['header']['vocab_size'])}"],
            ["n-grams of orders 2..5", ", ".join(thousands(x) for x in ix["header"]["ngrams"])]]
    for k in ("ewt-test whole sentences", "ewt-test sub-sentences <= 20"):
        v = ix[k]
        rows.append([f"look-up, {k} ({thousands(v['bags'])} bags)",
                     f"mean {f(v['mean_ms'], 3)} ms, median {f(v['median_ms'], 3)} ms, max {f(v['max_ms'], 3)} ms; "
                     f"{f(v['phrases_mean'], 1)} phrases on average; by bag size: "
                     + ", ".join(f"{s}: {x}" for s, x in sorted(v["phrases_by_bag_size"].items(), key=lambda kv: int(kv[0])))])
    for name in ("data.ewt.json", "data.wsj.json"):
        dd = R(f"gyro/{name}")
        for k in ("index", "o4", "o5"):
            if k in dd:
                rows.append([f"{name[5:-5]} {k}", f"{f(dd[k]['wall_seconds'], 1)} s, peak RSS {thousands(dd[k]['peak_rss_mb'])} MB, "
                                                  f"{thousands(dd[k]['bytes'])} bytes"])
    out += block("The phrase index and the bench LMs", ["python bench/gyro_index.py", "python bench/gyro_data.py --set ewt|wsj"],
                 table(["what", "figure"], rows),
                 setup=f"Sources: {', '.join(b['sources'])}.",
                 notes=["Source: `bench/results/gyro/index.json`, `bench/results/gyro/data.ewt.json`, `bench/results/gyro/data.wsj.json`."])
    return out


# ---------------------------------------------------------------------------------------- SMT
def smt(R: Records) -> List[str]:
    out = ["## Chinese-English translation", "",
           "`wo smt` ([smt.md](smt.md)) on Tatoeba zh-en (`corpora/tatoeba-zh-en/`). BLEU is sacrebleu on detokenized "
           "output with 13a tokenization.", ""]
    bl = R("smt/baselines.json")["baselines"]
    tr = R("smt/train.full6.json")
    shp = R("smt/eval.shipped-m1.json")
    ev = lambda s, t: R(f"smt/eval.{s}.{t}.json")  # noqa: E731
    rows = [["(a) monotone phrase-based, same table and LM", f(bl["monotone"]["dev"]["bleu"]), f(bl["monotone"]["test"]["bleu"]),
             f(bl["monotone"]["test"]["sentences_per_s"], 1)],
            ["(b) options ordered by the LM (stack decoding)", f(bl["lmorder"]["dev"]["bleu"]), f(bl["lmorder"]["test"]["bleu"]),
             f(bl["lmorder"]["test"]["sentences_per_s"], 1)],
            [f"synthesis, 1-best (best epoch {tr['best_epoch']})", f(tr["dev_bleu"]), "", ""],
            ["synthesis + first reranker (7 features, grid tuning)", f(ev("dev", "final-full")["bleu"]), f(ev("test", "final-full")["bleu"]),
             f(ev("test", "final-full")["sentences_per_second"], 1)],
            ["synthesis + reranker with IBM-1 (alignment links) and MBR, PRO", f(ev("dev", "final-rr")["bleu"]), f(ev("test", "final-rr")["bleu"]),
             f(ev("test", "final-rr")["sentences_per_second"], 1)],
            ["synthesis + reranker, also EM model 1 (the `wo smt` default)", f(ev("dev", "final-m1")["bleu"]), f(ev("test", "final-m1")["bleu"]),
             f"{f(ev('test', 'final-m1')['sentences_per_second'], 1)}; dev {f(ev('dev', 'final-m1-speed')['sentences_per_second'], 1)} "
             "once IBM-1 was batched"],
            ["shipped model (`wo smt translate`, pruned LM), whole process from raw text", f(shp["dev"]["bleu"]), f(shp["test"]["bleu"]),
             f(shp["test"]["sentences_per_second"], 1)]]
    out += block("Tatoeba zh-en (26,155 train, 1,000 dev, 1,000 test pairs)",
                 ["python bench/smt_parsers.py", "python bench/smt_data.py",
                  "wo lm train --text /work/smtdata/train.en.tok TEXT-EN-TRUECASED --order 4 --out LM",
                  "python bench/smt_baselines.py --data /work/smtdata --table corpora/models/smt/phrases.tsv.gz --lm LM [--test]",
                  "python bench/smt_train.py --lm LM --tag full6 --epochs 6 --substitute 0.5 --dev-limit 1000",
                  "python bench/smt_train.py --lm LM --tag final-full --eval-only --set test --model M",
                  "python bench/smt_train.py --lm LM --tag final-m1 --retune --model bench/results/smt/model.final-full.wo",
                  "python bench/smt_train.py --lm LM --tag final-m1 --eval-only --set test --model bench/results/smt/model.final-m1.wo",
                  cmd(shp["command"])],
                 table(["system", "dev", "test", "sentences/s (test, one core)"], rows),
                 setup="Every setting was chosen on dev, and test was decoded once per system. The bench rows use the same "
                       "unpruned LM (below); sentences/s of the bench rows is decoding plus reranking of cached parses.",
                 notes=[f"Shipped model: {shp['model']}; {shp['machine']}; test {f(shp['test']['wall_seconds'], 2)} s wall, "
                        f"peak RSS {f(shp['test']['peak_rss_mb'], 1)} MB.",
                        f"Dev at {f(ev('dev', 'final-m1-speed')['sentences_per_second'], 1)} sentences/s is "
                        f"{mega(ev('dev', 'final-m1-speed')['edges_per_second'])} edges/s, the same outputs as the "
                        f"{f(ev('dev', 'final-m1')['sentences_per_second'], 1)} sentences/s run.",
                        "Source: `bench/results/smt/baselines.json`, `train.full6.json`, `eval.{dev,test}.final-*.json`, "
                        "`eval.shipped-m1.json`."],
                 signature=bl["monotone"]["dev"]["signature"])
    out += readme_block(R, "smt", "bench-lm")
    out += readme_block(R, "smt", "cv")
    out += readme_block(R, "smt", "choices")
    out += readme_block(R, "smt", "speed")
    out += readme_block(R, "smt", "oracles")
    out += readme_block(R, "smt", "length")
    rows = []
    for tag in ("full6", "full-seed2", "ship6"):
        t = R(f"smt/train.{tag}.json")
        e = R(f"smt/eval.dev.{tag}.json")
        rows.append([tag, len(t["epochs"]), t["best_epoch"], " ".join(f(x["dev_bleu"]) for x in t["epochs"]),
                     f(t["dev_bleu_reranked"]), f(e["bleu"]), f(t["total_seconds"], 1), f"{thousands(t['oracle_pairs'])} ({f(100 * t['oracle_share'], 1)} %)",
                     os.path.basename(t["lm_path"])])
    sh = R("smt/eval.test.shipped.json")
    out += block("Training runs", ["python bench/smt_train.py --lm LM --tag TAG --epochs N --substitute 0.5 --dev-limit 1000"],
                 table(["tag", "epochs", "best epoch", "dev BLEU by epoch (1-best)", "dev, first reranker (training run)",
                        "dev, evaluated", "seconds", "training pairs with an oracle", "LM"], rows),
                 notes=[f"History: the shipped model with the first reranker scored {f(sh['bleu'])} on test at "
                        f"{f(sh['sentences_per_second'], 1)} sentences/s (`{sh['command']}`; `bench/results/smt/eval.test.shipped.json`).",
                        "Source: `bench/results/smt/train.*.json`, `bench/results/smt/eval.dev.*.json`."],
                 signature=bl["monotone"]["dev"]["signature"])
    d = R("smt/data.json")
    rows = [["pairs train / dev / test", " / ".join(thousands(d["pairs"][k]) for k in ("train", "dev", "test"))],
            ["tokens zh / en, train", f"{thousands(d['tokens']['train']['zh'])} / {thousands(d['tokens']['train']['en'])}"],
            ["alignment links (" + ", ".join(d["alignment_links"]) + ")", ", ".join(thousands(v) for v in d["alignment_links"].values())],
            ["phrase pairs extracted / distinct / distinct source phrases",
             f"{thousands(d['phrase_pairs_extracted'])} / {thousands(d['phrase_table']['distinct_pairs'])} / "
             f"{thousands(d['phrase_table']['distinct_source_phrases'])}"],
            ["phrase table", f"{thousands(d['phrase_table']['bytes'])} bytes"]]
    for k, v in d["coverage"].items():
        rows.append([f"{k} words covered by the table; sentences fully covered", f"{f(100 * v['share'], 2)} %; {f(100 * v['sentences_fully_covered'], 1)} %"])
    for o in d["dev_options"]:
        rows.append([f"dev options at lambda {o['lambda']}: per sentence, per source word", f"{o['options_per_sentence']}, {o['options_per_source_word']}"])
    for k, v in d["variants_not_shipped"].items():
        rows.append([f"variant {k} (not shipped): pairs extracted / distinct / dev coverage",
                     f"{thousands(v['phrase_pairs_extracted'])} / {thousands(v['distinct_pairs'])} / {f(100 * v['dev_source_coverage'], 2)} %"])
    rows.append(["preparation seconds (this run)", f(d["seconds"]["total_this_run"], 1)])
    out += block("Data preparation and the phrase table", ["python bench/smt_data.py"], table(["what", "figure"], rows),
                 setup=f"Symmetrization {d['symmetrization']}; cohesion {d['cohesion']}; at most {d['max_len']} words a side.",
                 notes=["Source: `bench/results/smt/data.json`."])
    p = R("smt/parsers.json")
    rows = []
    for lang in ("en", "zh"):
        v = p[lang]
        for name, s in v["dev"].items():
            rows.append([lang, v["tag"], thousands(v["train_sentences"]), name, thousands(s["sentences"]), f(s["tag_acc"]),
                         f(s["uas"]), f(s["las"]), f"{f(s['uas_no_punct'])} / {f(s['las_no_punct'])}"])
    out += block("The spaCy parsers of the SMT system", ["python bench/smt_parsers.py"],
                 table(["language", "tags", "training sentences", "dev set", "sentences", "tag accuracy", "UAS", "LAS",
                        "UAS / LAS without punctuation"], rows),
                 notes=["Source: `bench/results/smt/parsers.json`; training data in `corpora/README.md`."])
    return out


# ---------------------------------------------------------------------------------------- page
def render(root: str = ROOT) -> str:
    """The text of docs/results.md made from the records under ``root``.  Raises ValueError when a
    README record table is not placed on the page."""
    R = Records(root)
    out = ["# Results", "",
           "Generated by `python bench/results_doc.py` from the JSON records in `bench/results/`; do not edit by hand "
           "(`tests/test_docs.py` checks that this page is what the records give). Each table names the command that "
           "reproduces it and the record it comes from. Figures first published only in the README are kept in "
           "`bench/results/readme/`, each record naming its source. The per-treebank surface realisation results are "
           "[sr-multi.md](sr-multi.md).", "",
           "Conventions: BLEU is sacrebleu corpus BLEU with the signature given under each table (word ordering: "
           f"`{SIG}` on the cased tokens); SR metrics are the SR'18/'19 definitions on lower-cased tokens; "
           "\"whole process\" times include start-up and model loading; M = 10^6; times were measured on the machine "
           "each record names (mostly an Intel Xeon or an AMD EPYC with 2 cores), so only figures measured side by side in "
           "one run compare speeds.", "",
           "* [Dependency word ordering](#dependency-word-ordering)",
           "* [Surface realisation](#surface-realisation)",
           "* [CCG word ordering](#ccg-word-ordering)",
           "* [N-gram language models](#n-gram-language-models)",
           "* [IDL-expressions](#idl-expressions)",
           "* [GYRO](#gyro)",
           "* [Chinese-English translation](#chinese-english-translation)", ""]
    for part in (dep, sr, ccg, lm, idl, gyro, smt):
        out += part(R)
    missing = R.unused()
    if missing:
        raise ValueError("README record tables not placed on the page: " + "; ".join(missing))
    text = scrub("\n".join(out))
    text = re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"
    left = _PROJECT_REF.findall(text)
    if left:
        raise ValueError(f"issue or session numbers left on the page: {left}")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/results.md differs from the records")
    ap.add_argument("--root", default=ROOT)
    a = ap.parse_args(argv)
    text = render(a.root)
    path = os.path.join(a.root, OUT)
    if a.check:
        with open(path, encoding="utf-8") as fh:
            same = fh.read() == text
        print(f"{OUT}: {'up to date' if same else 'differs from the records; run python bench/results_doc.py'}")
        return 0 if same else 1
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    print(f"wrote {OUT} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
