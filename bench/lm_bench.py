"""LM benchmarks (issue: n-gram language model): estimation time and peak memory for orders 4
and 5 on ../shared/corpora/text-en plus EWT train; queries per second inside Cython; whole-file
scoring against the ``kenlm`` module's ``score()`` on the same ARPA and text, side by side.

Usage: python bench/lm_bench.py [--orders 4 5] [--text-dir ../shared/corpora/text-en]
Writes bench/results/lm.json and builds bench/results/lm/*.{arpa.gz,wolm} (not committed).
Every estimation runs in a fresh process so peak RSS is its own.

``python bench/lm_bench.py --formats [--big]`` (issue 32, item 2): the probing tables against
the trie, exact and 8-bit quantized (KenLM's trie -q 8 -b 8), for the shipped LM (rebuilt as
``make lm`` does; the probing file is checked byte for byte against
corpora/models/wo-en-4gram.wolm) and, with --big, the unpruned order-4 LM of all of text-en +
EWT train: file sizes, in-process per-query ns over the same >= 3 M queries (EWT dev repeated;
formats alternated, median of 3; the ratio of the best runs too, as the machine is shared), the
whole ``wo lm score`` process on EWT dev (median of 3) and EWT dev perplexity.  Writes
bench/results/lm/lm-formats.json.

``python bench/lm_bench.py --vs-kenlm``: 3 M words of Wikipedia scored by the shipped 4-gram in
every format against the ``kenlm`` module (:func:`vs_kenlm_main`); bench/results/lm/vs-kenlm.json.
"""
import argparse
import json
import os
import pathlib
import sys
import time

from common import ROOT, run_timed, write_record

ROOT = pathlib.Path(ROOT)
OUT = ROOT / "bench" / "results"


def id_arrays(lm, lines):
    """The LM word ids of tokenized ``lines``, concatenated (int32 [N]), and each line's start
    (int64 [len(lines) + 1]), as the query loops read them."""
    import numpy as np

    ids, starts = [], [0]
    for ln in lines:
        ids.extend(lm.word_ids(ln.split()))
        starts.append(len(ids))
    return np.asarray(ids, dtype=np.int32), np.asarray(starts, dtype=np.int64)

def ewt_text(split: str) -> str:
    """EWT forms of a split, one sentence per line, cached under bench/results/lm/."""
    p = OUT / "lm" / f"ewt-{split}.txt"
    if not p.exists():
        from wo.io import read_conllu

        sents = read_conllu(str(ROOT / f"corpora/ud-en-ewt/en_ewt-ud-{split}.conllu.xz"))
        p.write_text("\n".join(" ".join(s.forms) for s in sents) + "\n", encoding="utf-8")
    return str(p)


def timed(cmd):
    """(wall seconds, peak RSS MB, stderr) of ``cmd`` as a whole child process (SystemExit on failure)."""
    r = run_timed(cmd)
    return r.wall_s, r.rss_mb, r.stderr


FORMATS = ("probing", "trie", "trie-q8", "trie-a", "trie-q8-a")


def shipped_texts(text_dir: str):
    """The texts of the shipped LM (the Makefile's ``lm`` target): four text-en files + EWT train."""
    d = pathlib.Path(text_dir)
    return [str(d / n) for n in ("brown.txt.xz", "masc_tagged.txt", "state_union.txt", "inaugural.txt")] + \
        [ewt_text("train")]


def compare_formats(name: str, tables, dev_lines, queries: int = 3_000_000, reference: str = None):
    """One LM's tables written in every format: bytes, load seconds, per-query ns (median of 3
    alternated runs over the same ids), EWT dev perplexity and the largest per-sentence change."""
    import numpy as np

    from wo.lm import LanguageModel, save_tables

    entry = {"counts": tables.counts(), "formats": {}}
    models = {}
    for fmt in FORMATS:
        path = OUT / "lm" / f"{name}.{fmt}.wolm"
        t = time.perf_counter()
        save_tables(tables, str(path), fmt)
        write_s = time.perf_counter() - t
        t = time.perf_counter()
        models[fmt] = LanguageModel.load(str(path))
        entry["formats"][fmt] = {"bytes": os.path.getsize(path), "mb": round(os.path.getsize(path) / 2 ** 20, 2),
                                 "write_seconds": round(write_s, 2),
                                 "load_seconds": round(time.perf_counter() - t, 3)}
        if fmt != "probing":
            entry["formats"][fmt]["dropped_ngrams"] = models[fmt].header["trie"]["dropped"]
        if reference and fmt == "probing":
            entry["probing_identical_to"] = {os.path.relpath(reference, ROOT): path.read_bytes() == open(reference, "rb").read()}
    lm = models["probing"]
    ids, starts = id_arrays(lm, dev_lines)
    reps = -(-queries // (len(ids) + len(dev_lines)))
    ns = {f: [] for f in FORMATS}
    cpu = {f: [] for f in FORMATS}
    for _ in range(3):
        for f in FORMATS:
            c = time.thread_time()
            q, secs, _ = models[f].core.time_queries(ids, starts, reps)
            cpu[f].append((time.thread_time() - c) / q * 1e9)      # the CPU time of this thread
            ns[f].append(secs / q * 1e9)
    entry["queries_timed"] = int(q)
    wo = str(pathlib.Path(sys.executable).parent / "wo")      # whole process: load, map ids, score EWT dev
    whole = {f: [] for f in FORMATS}
    for _ in range(3):
        for f in FORMATS:
            whole[f].append(run_timed([wo, "lm", "score", "--lm", str(OUT / "lm" / f"{name}.{f}.wolm"), "--input",
                                       ewt_text("dev")]).wall_s)
    ref_per, ref_cs = lm.score_lines(dev_lines)
    for f in FORMATS:
        per, cs = models[f].score_lines(dev_lines)
        e = entry["formats"][f]
        e.update(ns_per_query_runs=[round(x, 1) for x in ns[f]], ns_per_query_median=round(sorted(ns[f])[1], 1),
                 cpu_ns_per_query_runs=[round(x, 1) for x in cpu[f]], cpu_ns_per_query_median=round(sorted(cpu[f])[1], 1),
                 dev_perplexity=round(cs.perplexity, 3), dev_log10=round(cs.log10_prob, 3),
                 max_abs_sentence_log10_change=round(float(np.max(np.abs(per - ref_per))), 4))
        e["wo_lm_score_dev_seconds_median"] = round(sorted(whole[f])[1], 3)
        e["size_vs_probing"] = round(e["bytes"] / entry["formats"]["probing"]["bytes"], 4)
        e["time_vs_probing"] = round(e["ns_per_query_median"] / entry["formats"]["probing"]["ns_per_query_median"], 3)
        e["time_vs_probing_best_runs"] = round(min(ns[f]) / min(ns["probing"]), 3)   # the least disturbed runs
        e["cpu_time_vs_probing"] = round(e["cpu_ns_per_query_median"] /
                                         entry["formats"]["probing"]["cpu_ns_per_query_median"], 3)
        e["perplexity_change_pct"] = round(100 * (cs.perplexity / ref_cs.perplexity - 1), 3)
    return entry


def formats_main(a):
    """``--formats``: the record of issue 32 item 2 (see the module docstring)."""
    import platform

    from wo.lm import train

    (OUT / "lm").mkdir(parents=True, exist_ok=True)
    dev_lines = open(ewt_text("dev"), encoding="utf-8").read().splitlines()
    res = {"command": "python bench/lm_bench.py --formats" + (" --big" if a.big else ""),
           "dev": "EWT dev forms (bench/results/lm/ewt-dev.txt), <s>/</s> per line",
           "machine": {"cpus": os.cpu_count(), "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
                       "python": platform.python_version()},
           "goals": {"trie-q8 size_vs_probing": "<= 0.40", "time_vs_probing": "<= 1.5"}, "lms": {},
           "formats": {"trie-a, trie-q8-a": "the tries with compressed pointers (KenLM -a: ArrayBhiksha)"}}
    log = lambda m: print(m, file=sys.stderr, flush=True)
    t = train(shipped_texts(a.text_dir), 4, prune=[0, 1, 1], log=log)
    res["lms"]["wo-en-4gram"] = compare_formats("wo-en-4gram", t, dev_lines,
                                               reference=str(ROOT / "corpora/models/wo-en-4gram.wolm"))
    res["lms"]["wo-en-4gram"]["built_as"] = "make lm (order 4, --prune 0 1 1, 2.49 M tokens)"
    print(json.dumps(res["lms"]["wo-en-4gram"]), flush=True)
    if a.big:
        texts = sorted(str(p) for p in pathlib.Path(a.text_dir).glob("*.txt*")) + [ewt_text("train")]
        t = train(texts, 4, jobs=a.jobs, log=log)
        e = compare_formats("text-en+ewt.o4", t, dev_lines)
        e["built_as"] = f"wo lm train --order 4 (unpruned) on {', '.join(os.path.basename(x) for x in texts)}"
        e["tokens"] = t.meta.get("tokens")
        res["lms"]["text-en+ewt.o4"] = e
        print(json.dumps(e), flush=True)
        del t
    res["machine"]["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    write_record(str(OUT / "lm" / "lm-formats.json"), res)


def vs_kenlm_main(a):
    """``--vs-kenlm``: the shipped 4-gram (``make lm``'s recipe, as ARPA, then every format by
    ``wo lm convert``) scoring the same 3 M words (the first 3 M tokens of the tokenized
    Wikipedia text, ``wo lm tokenize``'s output at out/lm/wiki.tok.txt) against the ``kenlm``
    module reading the ARPA: its in-process loop ``sum(m.score(line))`` (load excluded), wo's
    in-process :meth:`LanguageModel.score_bytes` on one thread and on the default threads, and
    the whole ``wo lm score`` process; runs alternated, medians of 5.  Writes
    bench/results/lm/vs-kenlm.json."""
    import statistics

    import kenlm

    from common import cpu_name
    from wo.lm import LanguageModel

    work = ROOT / "out" / "lmq"
    work.mkdir(parents=True, exist_ok=True)
    wiki = ROOT / "out" / "lm" / "wiki.tok.txt"
    if not wiki.exists():
        raise SystemExit(f"{wiki} missing: wo lm tokenize --input ../shared/corpora/text-en-wiki/wiki-0*.txt.xz "
                         f"--output {wiki} --lang en --jobs 2")
    text = work / "wiki3m.txt"
    n = 0
    with open(wiki, encoding="utf-8") as src, open(text, "w", encoding="utf-8") as dst:
        for ln in src:
            dst.write(ln)
            n += len(ln.split())
            if n >= 3_000_000:
                break
    wo = str(pathlib.Path(sys.executable).parent / "wo")
    arpa = work / "shipped.arpa"
    timed([wo, "lm", "train", "--text", *shipped_texts(a.text_dir), "--order", "4", "--prune", "0", "1", "1",
           "--out", str(arpa), "--quiet"])
    for f in FORMATS:
        timed([wo, "lm", "convert", "--format", f, str(arpa), str(work / f"shipped.{f}.wolm")])
    lines = text.read_text(encoding="utf-8").splitlines()
    data = text.read_bytes()
    ref = kenlm.Model(str(arpa))
    rec = {"cpu": cpu_name(cores=True), "text": f"the first {n:,} tokens ({len(lines):,} sentences) of "
           "out/lm/wiki.tok.txt", "lm": "make lm's recipe as ARPA (order 4, --prune 0 1 1), wo lm convert per format",
           "goal": "wo lm score whole process <= 1.2 x the kenlm module's in-process loop; in-process at least as fast",
           "kenlm_loop_seconds": [], "formats": {}}
    models = {f: LanguageModel.load(str(work / f"shipped.{f}.wolm")) for f in FORMATS}
    for f in FORMATS:
        rec["formats"][f] = {"in_process_1_thread_seconds": [], "in_process_threads_seconds": [],
                             "whole_process_seconds": [], "bytes": os.path.getsize(work / f"shipped.{f}.wolm")}
    for _ in range(5):
        t = time.perf_counter()
        total = sum(ref.score(ln, bos=True, eos=True) for ln in lines)
        rec["kenlm_loop_seconds"].append(round(time.perf_counter() - t, 4))
        for f in FORMATS:
            e = rec["formats"][f]
            for th, key in ((1, "in_process_1_thread_seconds"), (None, "in_process_threads_seconds")):
                t = time.perf_counter()
                _, cs = models[f].score_bytes(data, threads=th)
                e[key].append(round(time.perf_counter() - t, 4))
            e["log10_difference_from_kenlm"] = round(cs.log10_prob - total, 3)
            e["whole_process_seconds"].append(round(run_timed([wo, "lm", "score", "--lm", str(work / f"shipped.{f}.wolm"),
                                                                "--input", str(text)]).wall_s, 3))
    k = statistics.median(rec["kenlm_loop_seconds"])
    rec["kenlm_loop_median"] = k
    for f, e in rec["formats"].items():
        for key in ("in_process_1_thread_seconds", "in_process_threads_seconds", "whole_process_seconds"):
            e[key.replace("_seconds", "_median")] = statistics.median(e[key])
        e["whole_process_vs_kenlm_loop"] = round(e["whole_process_median"] / k, 3)
        e["in_process_1_thread_vs_kenlm_loop"] = round(e["in_process_1_thread_median"] / k, 3)
    write_record(str(OUT / "lm" / "vs-kenlm.json"), rec)
    print(json.dumps(rec, indent=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--orders", type=int, nargs="+", default=[4, 5])
    ap.add_argument("--text-dir", default=str(ROOT.parent / "shared/corpora/text-en"))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--formats", action="store_true", help="probing vs trie vs trie-q8 (lm/lm-formats.json)")
    ap.add_argument("--big", action="store_true", help="with --formats: also the unpruned text-en + EWT 4-gram")
    ap.add_argument("--vs-kenlm", action="store_true", help="3 M words scored: wo lm score against the kenlm module "
                    "(lm/vs-kenlm.json)")
    a = ap.parse_args()
    if a.vs_kenlm:
        return vs_kenlm_main(a)
    if a.formats:
        return formats_main(a)
    (OUT / "lm").mkdir(parents=True, exist_ok=True)
    texts = sorted(str(p) for p in pathlib.Path(a.text_dir).glob("*.txt*"))
    texts.append(ewt_text("train"))
    dev = ewt_text("dev")
    wo = str(pathlib.Path(sys.executable).parent / "wo")
    res = {"texts": [os.path.basename(t) for t in texts], "orders": {}}
    import numpy as np

    from wo.lm import LanguageModel

    lines = open(dev, encoding="utf-8").read().splitlines()
    for order in a.orders:
        arpa = str(OUT / "lm" / f"text-en+ewt.o{order}.arpa.gz")
        binary = str(OUT / "lm" / f"text-en+ewt.o{order}.wolm")
        secs, rss, log = timed([wo, "lm", "train", "--text", *texts, "--order", str(order), "--out", binary,
                                "--jobs", str(a.jobs)])
        entry = {"train_seconds": round(secs, 1), "train_peak_rss_mb": round(rss), "log": log.strip().splitlines()[-2:],
                 "binary_mb": round(os.path.getsize(binary) / 2 ** 20, 1)}
        secs, rss, _ = timed([wo, "lm", "train", "--text", *texts, "--order", str(order), "--out", arpa,
                              "--jobs", str(a.jobs), "--quiet"])
        entry.update(arpa_seconds=round(secs, 1), arpa_mb=round(os.path.getsize(arpa) / 2 ** 20, 1))
        lm = LanguageModel.load(binary)
        ids, starts = id_arrays(lm, lines)
        qps = []
        for _ in range(5):
            q, s, _ = lm.core.time_queries(ids, starts, 20)
            qps.append(q / s)
        entry["queries_per_second_median"] = round(sorted(qps)[2])
        per, cs = lm.score_lines(lines)
        entry["dev_perplexity"] = round(cs.perplexity, 2)
        try:
            import kenlm
        except ImportError:
            entry["kenlm"] = "kenlm module not installed"
        else:
            ref = kenlm.Model(arpa)

            def ours():
                with open(dev, "rb") as fh:
                    return lm.score_bytes(fh.read())

            def theirs():
                with open(dev, encoding="utf-8") as fh:
                    return sum(ref.score(ln.rstrip("\n"), bos=True, eos=True) for ln in fh)

            to, tt = [], []
            for _ in range(9):               # alternated, medians
                t = time.perf_counter()
                ours()
                to.append(time.perf_counter() - t)
                t = time.perf_counter()
                theirs()
                tt.append(time.perf_counter() - t)
            kp = [ref.score(ln, bos=True, eos=True) for ln in lines]
            mo, mt = sorted(to)[4], sorted(tt)[4]
            entry["kenlm"] = {"whole_file_wo_seconds_median": round(mo, 5),
                              "whole_file_kenlm_score_seconds_median": round(mt, 5),
                              "speed_ratio_wo_over_kenlm": round(mt / mo, 2),
                              "max_abs_sentence_diff": float(np.max(np.abs(np.asarray(kp) - per)))}
        res["orders"][str(order)] = entry
        print(json.dumps({order: entry}), flush=True)
    write_record(str(OUT / "lm.json"), res)


if __name__ == "__main__":
    main()
