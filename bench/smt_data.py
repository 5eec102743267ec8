"""Lexical-transfer data for Chinese->English syntactic SMT (Zhang et al. 2014, section 2.1),
built from ../shared/corpora/tatoeba-zh-en (train/dev/test TSV):

1. prep: English Moses-tokenized and truecased (truecaser trained on the tokenized train English,
   saved to ``corpora/models/smt/truecase.json.gz``), Chinese segmented with jieba;
2. align: eflomal on train (Chinese -> English, both directions, seeded), grow-diag-final-and;
3. parse: both sides of all three splits with ``wo.smt.parse`` (cached per split and language);
4. phrases: consistent, cohesive phrase pairs (``s`` = 5) from train, the phrase table saved to
   ``corpora/models/smt/phrases.tsv.gz`` (to the work dir if over 30 MB).

Outputs in ``--work`` (default /work/smtdata): ``{train,dev,test}.jsonl.gz`` (one JSON object a
line: zh, zh_pos, zh_heads, zh_labels, en, en_pos, en_heads, en_labels, en_raw, zh_raw,
attribution, and for train links (grow-diag-final-and) plus links_fwd/links_rev (eflomal's two
directions)), ``train.en.tok`` (the LM's text) and the stage caches; counts and timings go to
``bench/results/smt/data.json``. Every stage is cached in the work dir and reused when its
inputs are unchanged (``--redo`` to recompute), so the script is cheap to rerun.

    python bench/smt_data.py                      # ~5-10 min, most of it parsing
    python bench/smt_data.py --stop-after align   # no parser needed
    python bench/smt_data.py --stub-parser --work /tmp/smtstub   # smoke test, chain trees,
                                                                 # writes to the work dir only
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")  # a shared 2-core machine: single-threaded

import argparse
import gzip
import hashlib
import json
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
CORPUS = os.path.normpath(os.path.join(ROOT, "..", "shared", "corpora", "tatoeba-zh-en"))
MODELS = os.path.join(ROOT, "corpora", "models", "smt")
RESULTS = os.path.join(HERE, "results", "smt")
from common import read_jsonl  # noqa: E402  (bench/ is on sys.path)
SPLITS = ("train", "dev", "test")
MAX_LEN = 5
MAX_TABLE_BYTES = 30 * 1024 * 1024


def log(msg):
    print(time.strftime("%H:%M:%S"), msg, file=sys.stderr, flush=True)


def write_jsonl_gz(path, rows):
    tmp = path + ".tmp"
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        for r in rows:
            f.write((json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
    os.replace(tmp, path)


def digest(obj) -> str:
    return hashlib.sha1(json.dumps(obj, ensure_ascii=False).encode("utf-8")).hexdigest()


def save_timings(args, stats):
    """Keep the stage times in the work dir: a later run that reuses a stage's cache reports them."""
    with open(args.timings_path, "w") as f:
        json.dump({k: v for k, v in stats["seconds"].items() if k != "total_this_run"}, f, indent=1)


def stage_prep(args, stats):
    """Tokenize/truecase English, segment Chinese; returns {split: [record]} (cached)."""
    from wo.smt.prep import EnglishTokenizer, Truecaser, read_pairs, segment_zh

    t0 = time.time()
    pairs = {s: read_pairs(os.path.join(args.corpus, f"{s}.tsv")) for s in SPLITS}
    cache = os.path.join(args.work, "prep.json.gz")
    import wo.smt.prep as prep_module

    with open(prep_module.__file__, encoding="utf-8") as f:  # the cache follows the code too
        code = f.read()
    key = digest({"code": code, "pairs": {s: [(p.en, p.zh) for p in pairs[s]] for s in SPLITS}})
    tc_path = args.truecase_path
    if not args.redo and os.path.exists(cache) and os.path.exists(tc_path):
        with gzip.open(cache, "rt", encoding="utf-8") as f:
            data = json.load(f)
        if data.get("key") == key:
            log("prep: cached")
            return data["splits"]
    tok = EnglishTokenizer()
    raw_tok = {s: [tok.tokenize(p.en) for p in pairs[s]] for s in SPLITS}
    tc = Truecaser().train(raw_tok["train"])
    tc.save(tc_path)
    out = {}
    for s in SPLITS:
        out[s] = [{"en_raw": p.en, "zh_raw": p.zh, "attribution": p.attribution,
                   "en": tc.truecase(t), "zh": segment_zh(p.zh)} for p, t in zip(pairs[s], raw_tok[s])]
        for k, r in enumerate(out[s]):
            if not r["en"] or not r["zh"]:
                raise ValueError(f"{s}.tsv pair {k + 1}: a side is empty after tokenization")
    with open(cache + ".tmp", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(json.dumps({"key": key, "splits": out}, ensure_ascii=False).encode("utf-8"))
    os.replace(cache + ".tmp", cache)
    stats["seconds"]["prep"] = round(time.time() - t0, 1)
    log(f"prep: {stats['seconds']['prep']} s; truecaser {os.path.getsize(tc_path)} bytes -> {tc_path}")
    return out


def stage_align(args, data, stats):
    """eflomal on train; returns (links, fwd, rev) per train sentence (cached)."""
    from wo.smt.align import align_directions, seed_shim_available, symmetrize

    t0 = time.time()
    zh = [r["zh"] for r in data["train"]]
    en = [r["en"] for r in data["train"]]
    cache = os.path.join(args.work, "align.train.json.gz")
    key = digest({"zh": zh, "en": en, "seed": args.seed, "samplers": args.samplers})
    fwd = rev = None
    if not args.redo and os.path.exists(cache):
        with gzip.open(cache, "rt", encoding="utf-8") as f:
            c = json.load(f)
        if c.get("key") == key:
            fwd, rev = c["fwd"], c["rev"]
            stats["seeded_alignment"] = c.get("seeded")
            log("align: cached")
    if fwd is None:
        seeded = seed_shim_available()
        fwd, rev = align_directions(zh, en, seed=args.seed, n_samplers=args.samplers)
        stats["seeded_alignment"] = seeded
        with open(cache + ".tmp", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(json.dumps({"key": key, "seeded": seeded, "fwd": fwd, "rev": rev}).encode("utf-8"))
        os.replace(cache + ".tmp", cache)
        stats["seconds"]["align"] = round(time.time() - t0, 1)
        log(f"align: {stats['seconds']['align']} s (seeded: {seeded})")
    fwd = [[tuple(l) for l in ls] for ls in fwd]
    rev = [[tuple(l) for l in ls] for ls in rev]
    links = [symmetrize(f, r, "grow-diag-final-and") for f, r in zip(fwd, rev)]
    return links, fwd, rev


class StubParse:
    def __init__(self, n):
        self.pos = ["X"] * n
        self.heads = [i + 1 for i in range(n - 1)] + [-1]
        self.labels = ["dep"] * (n - 1) + ["ROOT"]


class StubParser:
    """Right-branching chains: for smoke-testing the pipeline before the parsers exist."""

    def parse(self, sents):
        return [StubParse(len(s)) for s in sents]


def model_fingerprint(lang, stub):
    """sha1 over the files of the shipped parser for ``lang`` but meta.json (the parse caches follow
    the model's weights and config)."""
    if stub:
        return "stub"
    from wo.smt.parse import default_path

    h = hashlib.sha1()
    base = str(default_path(lang))
    for dirpath, dirnames, filenames in sorted(os.walk(base)):
        dirnames.sort()
        for name in sorted(filenames):
            if name == "meta.json":  # metadata (scores, notes), not the model
                continue
            path = os.path.join(dirpath, name)
            h.update(os.path.relpath(path, base).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(hashlib.sha1(f.read()).digest())
    return h.hexdigest()


def stage_parse(args, data, stats):
    """Parse both sides of every split; adds {lang}_pos/_heads/_labels to the records (cached)."""
    t0 = time.time()
    parsers = {}
    for lang in ("en", "zh"):
        fingerprint = model_fingerprint(lang, args.stub_parser)
        stats.setdefault("parser_fingerprints", {})[lang] = fingerprint
        for s in SPLITS:
            sents = [r[lang] for r in data[s]]
            cache = os.path.join(args.work, f"parse.{s}.{lang}.jsonl.gz")
            rows = None
            if not args.redo and os.path.exists(cache) and os.path.exists(cache + ".model"):
                with open(cache + ".model") as f:
                    same_model = f.read().strip() == fingerprint
                rows = read_jsonl(cache) if same_model else None
                if rows is not None and [r["tokens"] for r in rows] != sents:
                    rows = None
            if rows is None:
                if lang not in parsers:
                    if args.stub_parser:
                        parsers[lang] = StubParser()
                    else:
                        from wo.smt.parse import load_parser

                        parsers[lang] = load_parser(lang)
                t1 = time.time()
                rows = []
                for b in range(0, len(sents), 500):
                    batch = sents[b:b + 500]
                    for toks, p in zip(batch, parsers[lang].parse(batch)):
                        pos, heads, labels = list(p.pos), [int(h) for h in p.heads], list(p.labels)
                        if not (len(pos) == len(heads) == len(labels) == len(toks)):
                            raise ValueError(f"{lang} parser returned {len(heads)} heads for {len(toks)} tokens")
                        if sum(h == -1 for h in heads) != 1 or any(h < -1 or h >= len(toks) for h in heads):
                            raise ValueError(f"{lang} parser returned a malformed tree {heads} for {toks}")
                        rows.append({"tokens": toks, "pos": pos, "heads": heads, "labels": labels})
                write_jsonl_gz(cache, rows)
                with open(cache + ".model", "w") as f:
                    f.write(fingerprint + "\n")
                stats["seconds"][f"parse_{s}_{lang}"] = round(time.time() - t1, 1)
                save_timings(args, stats)
                log(f"parse {s} {lang}: {len(rows)} sentences, {time.time() - t1:.1f} s")
            for r, p in zip(data[s], rows):
                r[f"{lang}_pos"], r[f"{lang}_heads"], r[f"{lang}_labels"] = p["pos"], p["heads"], p["labels"]
    stats["seconds"]["parse"] = round(sum(v for k, v in stats["seconds"].items() if k.startswith("parse_")), 1)


def extract_all(train, links, strict=True):
    from wo.smt.phrases import extract

    for r, ls in zip(train, links):
        yield r["zh"], extract(len(r["zh"]), r["en"], r["en_pos"], r["en_heads"], ls, max_len=MAX_LEN,
                               strict=strict)


def coverage(table, sents):
    covered = total = 0
    sent_full = 0
    for toks in sents:
        cov = [False] * len(toks)
        for o in table.options(toks, max_len=MAX_LEN):
            for i in range(o.src_lo, o.src_hi):
                cov[i] = True
        covered += sum(cov)
        total += len(toks)
        sent_full += all(cov)
    return {"tokens": total, "covered": covered, "share": round(covered / total, 4),
            "sentences_fully_covered": round(sent_full / len(sents), 4)}


def options_stats(table, sents, lam):
    n_opts = n_words = 0
    for toks in sents:
        n_opts += len(table.options(toks, max_len=MAX_LEN, lam=lam))
        n_words += len(toks)
    return {"lambda": lam, "options_per_sentence": round(n_opts / len(sents), 1),
            "options_per_source_word": round(n_opts / n_words, 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/work/smtdata")
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--samplers", type=int, default=3, help="eflomal samplers (default 3)")
    ap.add_argument("--redo", action="store_true", help="ignore the stage caches")
    ap.add_argument("--stop-after", choices=("prep", "align", "parse"))
    ap.add_argument("--stub-parser", action="store_true",
                    help="chain trees instead of the parsers (smoke test; outputs stay in --work)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if args.stub_parser:
        models_dir, results_dir = args.work, args.work
    else:
        models_dir, results_dir = MODELS, RESULTS
    os.makedirs(models_dir, exist_ok=True)
    os.makedirs(results_dir, exist_ok=True)
    args.truecase_path = os.path.join(models_dir, "truecase.json.gz")

    from wo.smt.align import symmetrize
    from wo.smt.phrases import PhraseTable

    t_start = time.time()
    stats = {"corpus": os.path.relpath(args.corpus, ROOT), "work": args.work, "max_len": MAX_LEN, "seed": args.seed,
             "eflomal_samplers": args.samplers, "symmetrization": "grow-diag-final-and",
             "cohesion": "strict (only the phrase root may keep dependents outside the span)",
             "seconds": {}}
    timings_path = args.timings_path = os.path.join(args.work, "timings.json")
    if os.path.exists(timings_path) and not args.redo:  # stage times of the run that computed them
        with open(timings_path) as f:
            stats["seconds"].update(json.load(f))
    data = stage_prep(args, stats)
    stats["pairs"] = {s: len(data[s]) for s in SPLITS}
    stats["tokens"] = {s: {"zh": sum(len(r["zh"]) for r in data[s]), "en": sum(len(r["en"]) for r in data[s])}
                       for s in SPLITS}
    stats["truecaser"] = {"path": os.path.relpath(args.truecase_path, ROOT),
                          "bytes": os.path.getsize(args.truecase_path)}
    if args.stop_after == "prep":
        return
    links, fwd, rev = stage_align(args, data, stats)
    stats["alignment_links"] = {"grow-diag-final-and": sum(map(len, links)), "forward": sum(map(len, fwd)),
                                "reverse": sum(map(len, rev)),
                                "intersection": sum(len(set(f) & set(r)) for f, r in zip(fwd, rev))}
    save_timings(args, stats)
    if args.stop_after == "align":
        print(json.dumps(stats, indent=1))
        return
    stage_parse(args, data, stats)
    save_timings(args, stats)
    if args.stop_after == "parse":
        return

    # the per-split JSON lines and the LM text
    t0 = time.time()
    keys = ("zh", "zh_pos", "zh_heads", "zh_labels", "en", "en_pos", "en_heads", "en_labels", "en_raw", "zh_raw",
            "attribution")
    for s in SPLITS:
        rows = []
        for k, r in enumerate(data[s]):
            row = {key: r[key] for key in keys}
            if s == "train":
                row["links"] = [list(l) for l in links[k]]
                row["links_fwd"] = [list(l) for l in fwd[k]]
                row["links_rev"] = [list(l) for l in rev[k]]
            rows.append(row)
        write_jsonl_gz(os.path.join(args.work, f"{s}.jsonl.gz"), rows)
    lm_text = os.path.join(args.work, "train.en.tok")
    with open(lm_text + ".tmp", "w", encoding="utf-8") as f:
        for r in data["train"]:
            f.write(" ".join(r["en"]) + "\n")
    os.replace(lm_text + ".tmp", lm_text)
    stats["seconds"]["write"] = round(time.time() - t0, 1)

    # phrase extraction and the table
    t0 = time.time()
    train = data["train"]
    table = PhraseTable()
    n_extracted = 0
    for src, pairs in extract_all(train, links):
        table.add(src, pairs)
        n_extracted += len(pairs)
    stats["seconds"]["extract"] = round(time.time() - t0, 1)
    t0 = time.time()
    path = os.path.join(models_dir, "phrases.tsv.gz")
    table.save(path)
    pruned = None
    if os.path.getsize(path) > MAX_TABLE_BYTES:
        table.save(path, min_count_long=2, long_len=3)
        pruned = "singletons with 3+ words on a side left out"
        if os.path.getsize(path) > MAX_TABLE_BYTES:
            os.replace(path, os.path.join(args.work, "phrases.tsv.gz"))
            path = os.path.join(args.work, "phrases.tsv.gz")
    stats["seconds"]["save_table"] = round(time.time() - t0, 1)
    stats["phrase_pairs_extracted"] = n_extracted
    stats["phrase_table"] = {"path": path if path.startswith(args.work) else os.path.relpath(path, ROOT),
                             "bytes": os.path.getsize(path), "distinct_pairs": len(table),
                             "distinct_source_phrases": table.n_sources, "pruned": pruned}
    stats["coverage"] = {"train_source": coverage(table, [r["zh"] for r in train]),
                         "dev_source": coverage(table, [r["zh"] for r in data["dev"]]),
                         "test_source": coverage(table, [r["zh"] for r in data["test"]])}
    stats["dev_options"] = [options_stats(table, [r["zh"] for r in data["dev"]], lam) for lam in (0.1, 0.0)]

    # variants, for reference: the paper's intersected alignment; non-strict cohesion
    t0 = time.time()
    variants = {}
    inter = [symmetrize(f, r, "intersection") for f, r in zip(fwd, rev)]
    for name, ls, strict in (("intersection_strict", inter, True), ("gdfa_loose", links, False)):
        t = PhraseTable()
        n = 0
        for src, pairs in extract_all(train, ls, strict=strict):
            t.add(src, pairs)
            n += len(pairs)
        variants[name] = {"phrase_pairs_extracted": n, "distinct_pairs": len(t),
                          "dev_source_coverage": coverage(t, [r["zh"] for r in data["dev"]])["share"]}
    stats["variants_not_shipped"] = variants
    stats["seconds"]["variants"] = round(time.time() - t0, 1)
    stats["seconds"]["total_this_run"] = round(time.time() - t_start, 1)
    save_timings(args, stats)
    out = os.path.join(results_dir, "data.json")
    with open(out, "w") as f:
        json.dump(stats, f, indent=1, ensure_ascii=False)
        f.write("\n")
    log(f"wrote {out}")
    print(json.dumps(stats, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
