"""Evaluation data for the IDL-expression word-ordering experiment (Soricut & Marcu 2005).

Soricut & Marcu linearise bags of words from WSJ with an n-gram LM, lower-cased and with
sentence-final punctuation removed, in two length bands.  This script prepares the same
kind of data from the corpora in ../shared/corpora and writes it to bench/results/idl/:

* ``text-en.lc.txt.gz`` -- LM text: every line of every ``*.txt`` / ``*.txt.xz`` file of
  /work/shared/corpora/text-en (NLTK corpora, one tokenised sentence per line; see its
  README.md), files in name order, lower-cased, final punctuation removed (below), empty
  lines dropped, and lines that equal a test sentence removed.
* ``text-en.lc.o3.wolm`` / ``text-en.lc.o4.wolm`` -- interpolated modified Kneser-Ney 3-
  and 4-gram LMs from the project's own trainer, unpruned::

      wo lm train --text bench/results/idl/text-en.lc.txt.gz --order 3 --out bench/results/idl/text-en.lc.o3.wolm
      wo lm train --text bench/results/idl/text-en.lc.txt.gz --order 4 --out bench/results/idl/text-en.lc.o4.wolm

  each run under ``/usr/bin/time -v`` (wall time and peak RSS are recorded), then scored
  with ``wo lm score --lm LM --input bench/results/idl/wsj.10-25.ref --json``.
* ``wsj.3-7.ref`` / ``wsj.10-25.ref`` -- test sentences from
  /work/shared/corpora/ptb-sample/wsj_sample.tok.txt (NLTK's PTB sample, WSJ sections
  00-01, 3,914 sentences; see its README.md): lower-cased, final punctuation removed, kept
  when 3-7 resp. 10-25 tokens long, corpus order, exact duplicates dropped (first kept).
* ``wsj.3-7.bag`` / ``wsj.10-25.bag`` -- the same lines with their tokens shuffled, line i
  with ``random.Random(f"{SEED}:{i}")`` (SEED = 13, i 0-based), so each line has its own
  fixed shuffle.
* ``summary.json`` -- counts, overlaps, LM sizes, times, peak memory, perplexities.

Final punctuation: while the last token is one of ``. ? ! ...`` it is removed; a trailing
run of closing quote/bracket tokens (``'' ' " ) ] } -rrb- -rsb- -rcb-``) is removed
together with the final punctuation token it follows (``. ''`` and ``. ' ''`` go
entirely; ``go ''`` and ``( a )`` are kept).  Other final tokens (``: ; -- ,``) are kept.

Overlap: the text-en README says the PTB sample was filtered out of text-en, but only
sentences of >= 5 tokens and >= 20 key characters; short test sentences can still occur.
Every LM line equal (after the processing above) to a test sentence of either set is
removed before the LMs are trained; the counts are reported.

    .venv/bin/python bench/idl_data.py             # everything (about 2-3 minutes)
    .venv/bin/python bench/idl_data.py --skip-lm   # test sets only (and the overlap check
                                                   # against an existing LM text)
"""
import argparse
import gzip
import json
import lzma
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPORA = os.path.normpath(os.path.join(ROOT, "..", "shared", "corpora"))
TEXT_DIR = os.path.join(CORPORA, "text-en")
WSJ = os.path.join(CORPORA, "ptb-sample", "wsj_sample.tok.txt")
OUT = os.path.join(HERE, "results", "idl")
from common import run_timed  # noqa: E402  (bench/ is on sys.path)
LM_TEXT = os.path.join(OUT, "text-en.lc.txt.gz")
SEED = 13
BANDS = {"3-7": (3, 7), "10-25": (10, 25)}
ORDERS = (3, 4)

FINAL = {".", "?", "!", "..."}
CLOSERS = {"''", "'", '"', ")", "]", "}", "-rrb-", "-rsb-", "-rcb-", "\u2019", "\u201d"}


def strip_final(toks: list) -> list:
    """Remove sentence-final punctuation (and closing quotes/brackets right after it)."""
    toks = list(toks)
    while toks:
        if toks[-1] in FINAL:
            toks.pop()
            continue
        j = len(toks)
        while j > 0 and toks[j - 1] in CLOSERS:
            j -= 1
        if j < len(toks) and j > 0 and toks[j - 1] in FINAL:
            del toks[j - 1:]
            continue
        break
    return toks


def normalise(line: str) -> list:
    return strip_final(line.lower().split())


def text_files() -> list:
    return sorted(os.path.join(TEXT_DIR, f) for f in os.listdir(TEXT_DIR)
                  if f.endswith(".txt") or f.endswith(".txt.xz"))


def read_lm_text() -> tuple:
    """(lines, per-file stats) of the processed text-en."""
    lines, stats = [], {}
    for p in text_files():
        opener = lzma.open if p.endswith(".xz") else open
        n_in = n_out = 0
        with opener(p, "rt", encoding="utf-8") as fh:
            for raw in fh:
                n_in += 1
                toks = normalise(raw)
                if toks:
                    lines.append(" ".join(toks))
                    n_out += 1
        stats[os.path.basename(p)] = {"lines_in": n_in, "lines_out": n_out}
    return lines, stats


def make_test_sets() -> dict:
    """Write wsj.{band}.ref/.bag; return {band: [sentence, ...]} and stats."""
    with open(WSJ, encoding="utf-8") as fh:
        sents = [" ".join(normalise(l)) for l in fh]
    res = {}
    for band, (lo, hi) in BANDS.items():
        seen, keep, dups = set(), [], 0
        for s in sents:
            if lo <= len(s.split()) <= hi:
                if s in seen:
                    dups += 1
                    continue
                seen.add(s)
                keep.append(s)
        bags = []
        for i, s in enumerate(keep):
            toks = s.split()
            random.Random(f"{SEED}:{i}").shuffle(toks)
            bags.append(" ".join(toks))
        for ext, rows in (("ref", keep), ("bag", bags)):
            with open(os.path.join(OUT, f"wsj.{band}.{ext}"), "w", encoding="utf-8") as fh:
                fh.writelines(r + "\n" for r in rows)
        res[band] = {"sentences": keep, "duplicates_dropped": dups,
                     "tokens": sum(len(s.split()) for s in keep)}
    res["_wsj_lines"] = len(sents)
    return res


def wo_cmd() -> list:
    exe = os.path.join(os.path.dirname(sys.executable), "wo")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "wo.cli"]


def timed(cmd: list) -> dict:
    """Run cmd as a timed child process (``common.run_timed``); wall seconds, peak RSS (MiB),
    stderr lines.  Exits on failure."""
    r = run_timed(cmd)
    return {"wall_seconds": round(r.wall_s, 2), "wall_seconds_python": round(r.wall_s, 2),
            "peak_rss_mib": round(r.rss_mb, 1), "log": r.stderr.splitlines()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip-lm", action="store_true",
                    help="only regenerate the test sets (LM text and LMs are left alone)")
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    summary_path = os.path.join(OUT, "summary.json")
    summary = {}
    if os.path.exists(summary_path):
        with open(summary_path, encoding="utf-8") as fh:
            summary = json.load(fh)

    tests = make_test_sets()
    test_set = set()
    summary["test_sets"] = {"source": WSJ, "source_sentences": tests.pop("_wsj_lines"), "seed": SEED}
    for band, r in tests.items():
        test_set.update(r["sentences"])
        summary["test_sets"][band] = {"sentences": len(r["sentences"]), "tokens": r["tokens"],
                                      "duplicates_dropped": r["duplicates_dropped"]}
        print(f"wsj.{band}: {len(r['sentences'])} sentences, {r['tokens']} tokens, "
              f"{r['duplicates_dropped']} duplicates dropped", file=sys.stderr)

    if a.skip_lm:
        if os.path.exists(LM_TEXT):
            with gzip.open(LM_TEXT, "rt", encoding="utf-8") as fh:
                n = sum(1 for l in fh if l.rstrip("\n") in test_set)
            print(f"LM text lines equal to a test sentence: {n}", file=sys.stderr)
            summary.setdefault("overlap", {})["lm_lines_equal_to_test_after_filter"] = n
    else:
        lines, stats = read_lm_text()
        line_set = set(lines)
        ov_lines, ov_sents = {}, {}
        for band, r in tests.items():
            ss = set(r["sentences"])
            ov_lines[band] = sum(1 for l in lines if l in ss)
            ov_sents[band] = [s for s in r["sentences"] if s in line_set]
        kept = [l for l in lines if l not in test_set]
        summary["lm_text"] = {"files": stats, "lines_before_overlap_filter": len(lines),
                              "lines": len(kept), "tokens": sum(len(l.split()) for l in kept)}
        summary["overlap"] = {
            band: {"test_sentences_in_lm_text": len(ov_sents[band]),
                   "lm_lines_removed": ov_lines[band],
                   "examples": ov_sents[band][:10]} for band in tests}
        summary["overlap"]["lm_lines_removed_total"] = len(lines) - len(kept)
        print(f"LM text: {len(lines)} lines; removed {len(lines) - len(kept)} equal to a test "
              f"sentence ({ {b: len(v) for b, v in ov_sents.items()} } test sentences)",
              file=sys.stderr)
        tmp = LM_TEXT + ".tmp"
        with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=6) as fh:
            fh.writelines(l + "\n" for l in kept)
        os.replace(tmp, LM_TEXT)
        del lines, kept

        rel = lambda p: os.path.relpath(p, ROOT)
        summary["lms"] = {}
        for order in ORDERS:
            out = os.path.join(OUT, f"text-en.lc.o{order}.wolm")
            cmd = wo_cmd() + ["lm", "train", "--text", rel(LM_TEXT), "--order", str(order),
                              "--out", rel(out)]
            print("$", " ".join(cmd), file=sys.stderr, flush=True)
            rec = timed(cmd)
            rec["command"] = " ".join(["wo"] + cmd[len(wo_cmd()):])
            rec["bytes"] = os.path.getsize(out)
            sc = subprocess.run(wo_cmd() + ["lm", "score", "--lm", rel(out), "--input",
                                            rel(os.path.join(OUT, "wsj.10-25.ref")), "--json"],
                                cwd=ROOT, capture_output=True, text=True, check=True)
            rec["score_wsj.10-25"] = json.loads(sc.stdout)
            summary["lms"][f"o{order}"] = rec
            print(json.dumps({k: v for k, v in rec.items() if k != "log"}), file=sys.stderr)

    with open(summary_path, "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
