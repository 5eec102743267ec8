"""GYRO evaluation (issue 12; de Gispert, Tomalin & Byrne 2014, section 3): BLEU, exact match,
fallback shares, seconds and memory per bag, on

* ``dev-sub``: EWT dev sentences split into sub-sentences of at most 20 tokens (the paper's
  split, ``bench/gyro_index.py``'s ``subsentences``), a random sample (``--n``, seed 5), for tuning;
* ``test-sub``: every EWT test sub-sentence of at most 20 tokens, and the same outputs joined
  back per sentence and scored against the whole sentences;
* ``test``: EWT test whole sentences (one bag per sentence, any length);
* ``wsj20``: sentences of the WSJ sample (../shared/corpora/ptb-sample) of at most 20 tokens
  (use ``--index``/``--lm`` built from text without those sentences: ``python bench/gyro_wsj_data.py``).

Each bag is shuffled with a fixed seed per sentence before ``wo gyro realize`` sees it (which
shuffles again).  BLEU is sacrebleu's corpus BLEU with ``tokenize=none`` on the cased tokens,
as ``wo evaluate`` scores the dependency system; its signature is recorded.

    python bench/gyro_eval.py --set dev-sub --n 300 --tag r3b3 -- --r 3 --beta 3
    python bench/gyro_eval.py --set test-sub --tag final -- --rescore-lm M5

Everything after ``--`` is passed to ``wo gyro realize``.  Writes
bench/results/gyro/eval.<set>.<tag>.json (and the JSONL outputs next to it, not committed).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
OUT = os.path.join(HERE, "results", "gyro")
EWT = os.path.join(ROOT, "corpora", "ud-en-ewt")
WSJ = os.path.normpath(os.path.join(ROOT, "..", "shared", "corpora", "ptb-sample", "wsj_sample.tok.txt"))
DEFAULT_INDEX = os.path.join(OUT, "text-en+ewt.woidx")
DEFAULT_LM = os.path.join(ROOT, "corpora", "models", "wo-en-4gram.wolm")


import common  # noqa: E402  (bench/ is on sys.path)
from gyro_index import run_timed, subsentences  # noqa: E402


def load_set(name: str, n: int):
    """(references: list of token lists, groups: sentence index of each reference or None)."""
    from wo.io import read_conllu

    if name in ("dev-sub", "test-sub", "test"):
        split = "dev" if name == "dev-sub" else "test"
        sents = [list(s.forms) for s in read_conllu(os.path.join(EWT, f"en_ewt-ud-{split}.conllu.xz"))]
        if name == "test":
            return sents, None
        refs, groups = [], []
        for i, s in enumerate(sents):
            for piece in subsentences(s):
                refs.append(piece)
                groups.append(i)
        if name == "dev-sub" and n:
            pick = sorted(random.Random(5).sample(range(len(refs)), min(n, len(refs))))
            return [refs[i] for i in pick], None
        return refs, groups
    if name == "wsj20":
        with open(WSJ, encoding="utf-8") as fh:
            sents = [ln.split() for ln in fh if ln.strip()]
        return [s for s in sents if len(s) <= 20], None
    raise SystemExit(f"unknown set {name}")


def bleu(hyps, refs):
    """(BLEU rounded to 2 places, sacrebleu signature) of token lists, as ``wo evaluate`` scores."""
    sc = common.bleu(hyps, refs)
    return round(sc.bleu, 2), sc.signature


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", required=True, choices=["dev-sub", "test-sub", "test", "wsj20"])
    ap.add_argument("--n", type=int, default=300, help="dev-sub: sample size (0 = all)")
    ap.add_argument("--index", default=None, help="phrase index (needed by the phrase levels), e.g. " +
                    os.path.relpath(DEFAULT_INDEX, ROOT))
    ap.add_argument("--lm", default=DEFAULT_LM)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tag", required=True)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    from wo.io.trees import permutation

    os.makedirs(OUT, exist_ok=True)
    refs, groups = load_set(a.set, a.n)
    stem = os.path.join(OUT, f"eval.{a.set}.{a.tag}")
    bags = stem + ".bags"
    with open(bags, "w", encoding="utf-8") as fh:
        for i, r in enumerate(refs):
            fh.write(" ".join(r[j] for j in permutation(len(r), a.seed + 1000, i)) + "\n")
    cmd = [os.path.join(ROOT, ".venv", "bin", "wo"), "gyro", "realize", *(["--index", a.index] if a.index else []), "--lm", a.lm,
           "--input", bags, "--input-format", "bag", "--output", stem + ".jsonl", "--format", "jsonl",
           "--jobs", str(a.jobs), "--quiet", *extra]
    p, wall, rss = run_timed(cmd)
    if p.returncode != 0:
        sys.stderr.write(p.stderr[-3000:])
        return 1
    recs = [json.loads(ln) for ln in open(stem + ".jsonl", encoding="utf-8")]
    hyps = [r["text"].split() for r in recs]
    assert len(hyps) == len(refs)
    for h, r in zip(hyps, refs):
        assert sorted(h) == sorted(r), (h, r)
    score, sig = bleu(hyps, refs)
    levels, status = {}, {}
    for r in recs:
        levels[r["level"]] = levels.get(r["level"], 0) + 1
        status[r["status"]] = status.get(r["status"], 0) + 1
    by_len = {}
    for r, ref in zip(recs, refs):
        b = by_len.setdefault(len(ref), [0, 0.0, 0.0])
        b[0] += 1
        b[1] += r["seconds"]
        b[2] = max(b[2], r["seconds"])
    out = {
        "set": a.set, "n": len(refs), "command": " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd),
        "BLEU": score, "signature": sig,
        "exact_pct": round(100.0 * sum(h == r for h, r in zip(hyps, refs)) / len(refs), 2),
        "mean_tokens": round(sum(map(len, refs)) / len(refs), 2),
        "levels_pct": {k: round(100.0 * v / len(recs), 2) for k, v in sorted(levels.items())},
        "status": status,
        "mean_seconds_per_bag": round(sum(r["seconds"] for r in recs) / len(recs), 4),
        "max_seconds_per_bag": round(max(r["seconds"] for r in recs), 3),
        "wall_seconds": round(wall, 1), "sentences_per_second": round(len(refs) / wall, 2), "jobs": a.jobs,
        "peak_rss_mb": round(rss, 1) if rss else None,
        "seconds_by_length": {k: {"bags": v[0], "mean": round(v[1] / v[0], 4), "max": round(v[2], 3)}
                              for k, v in sorted(by_len.items())},
    }
    if groups is not None:                      # sub-sentence outputs joined back per sentence
        whole_h, whole_r = {}, {}
        for g, h, r in zip(groups, hyps, refs):
            whole_h.setdefault(g, []).extend(h)
            whole_r.setdefault(g, []).extend(r)
        ks = sorted(whole_h)
        out["BLEU_joined_whole_sentences"], _ = bleu([whole_h[k] for k in ks], [whole_r[k] for k in ks])
    if any(len(r.get("nbest", [])) > 1 for r in recs):   # n-best oracle (sentence BLEU)
        orc = [common.oracle([c["text"] for c in r["nbest"]], ref).split() for r, ref in zip(recs, refs)]
        out["nbest_oracle_BLEU"], _ = bleu(orc, refs)
        out["nbest_size"] = max(len(r["nbest"]) for r in recs)
    with open(stem + ".json", "w") as fh:
        json.dump(out, fh, indent=1)
    print(json.dumps({k: v for k, v in out.items() if k != "seconds_by_length"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
