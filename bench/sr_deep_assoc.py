"""Lexical association of prepositions and subordinators from parsed Wikipedia, for the deep
track's completion stage (:mod:`wo.sr.complete`, the ``case`` and ``mark`` slots).

    python bench/sr_deep_assoc.py count [--paragraphs 180000] [--seconds 1200] [--stride 2]
                                        [--out out/assoc/counts.json.gz]
    python bench/sr_deep_assoc.py prune [--out out/assoc/counts.json.gz] [--to corpora/assoc/en-wiki-case.json.gz]
    python bench/sr_deep_assoc.py show [--out out/assoc/counts.json.gz] [--key h|hd|d|mh|mhd|md] [--n 20]
    python bench/sr_deep_assoc.py eval MODEL.wo [--fill X]   # the completion's case/mark... words on en_partut dev (P/R/F1)
    python bench/sr_deep_assoc.py swap BASE.wo MODEL.wo [--grid]   # dev BLEU of BASE with MODEL's completion
    python bench/sr_deep_assoc.py refit BASE.wo [--seed N] [--assoc COUNTS [--keys hd,h,d] [--min 20]]
                                    # a completion fitted alone (shuffle N), dev BLEU under BASE's stages

``count`` parses paragraphs of ``../shared/corpora/text-en-wiki/wiki-NN.txt.xz`` (filtered
against ParTUT dev/test, see its README; every ``stride``-th paragraph, files in order, until
``paragraphs`` or ``seconds``) with the spaCy UD pipeline ``en_wo_ud_ewt`` (one process, run it
under ``nice``) and counts, over lower-cased lemmas:

- case words: for every token d that is nominal (NOUN, PROPN, PRON, NUM) or has ``case``
  children, and has a head h: p = its ``case`` children's lemmas joined by ``+`` in order, or
  ``_`` (none); tables ``hd`` (h, d) -> p, ``h`` (h, UPOS of h) -> p, ``d`` (d, UPOS of d) -> p;
- subordinators: for every clausal dependent d (``advcl``, ``ccomp``, ``xcomp``, ``acl``,
  ``csubj``, with subtypes) of h: m = its ``mark`` children's lemmas joined by ``+``, or ``_``;
  tables ``mhd`` (h, d), ``mh`` (h, UPOS of h), ``md`` (d, UPOS of d) -> m.

Keys join their parts by U+001F.  The output is gzipped JSON ``{"meta": {...}, "tables": {name:
{key: {class: count}}}}`` (not in git: ``out/``); ``meta`` records the paragraphs, sentences,
tokens, parse seconds and the command.  :meth:`wo.sr.complete.Assoc.from_counts` prunes it
to the table a model carries (``wo sr train --set deep.assoc=PATH``).  ``prune`` writes the
shipped English file (``corpora/assoc/en-wiki-case.json.gz``, 0.8 MB): the case tables' keys
counted 20 times or more, their words counted 3 times or more, the rest of a key's count as
``~``; a model trained on it equals one trained on the whole count file (the defaults of
``deep.assoc_min`` and of :meth:`~wo.sr.complete.Assoc.from_counts`).
"""
from __future__ import annotations

import argparse
import glob
import gzip
import json
import lzma
import os
import sys
import time
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("WO_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
if not os.path.isdir(os.path.join(SHARED, "corpora")):
    SHARED = "/work/shared"
WIKI = os.path.join(SHARED, "corpora", "text-en-wiki")
NOMINAL = frozenset(("NOUN", "PROPN", "PRON", "NUM"))
CLAUSAL = frozenset(("advcl", "ccomp", "xcomp", "acl", "csubj"))
SEP = "\x1f"
DEFAULT_OUT = os.path.join(ROOT, "out", "assoc", "counts.json.gz")


def paragraphs(stride: int):
    """Every ``stride``-th paragraph of the wiki files, in file order."""
    k = 0
    for path in sorted(glob.glob(os.path.join(WIKI, "wiki-*.txt.xz"))):
        with lzma.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                k += 1
                if k % stride == 0 and line.strip():
                    yield line.strip()


def count_doc(doc, tables) -> None:
    """Add the case/mark counts of one parsed paragraph to ``tables`` (name -> key -> Counter)."""
    for d in doc:
        if d.dep_ == "ROOT" or d.head is d or d.pos_ == "PUNCT":
            continue
        h = d.head
        case = [c.lemma_.lower() for c in d.children if c.dep_ == "case"]
        rel = d.dep_.split(":", 1)[0]
        dl, hl = d.lemma_.lower(), h.lemma_.lower()
        if case or d.pos_ in NOMINAL:
            p = "+".join(case) or "_"
            tables["hd"][hl + SEP + dl][p] += 1
            tables["h"][hl + SEP + h.pos_][p] += 1
            tables["d"][dl + SEP + d.pos_][p] += 1
        if rel in CLAUSAL:
            m = "+".join(c.lemma_.lower() for c in d.children if c.dep_ == "mark") or "_"
            tables["mhd"][hl + SEP + dl][m] += 1
            tables["mh"][hl + SEP + h.pos_][m] += 1
            tables["md"][dl + SEP + d.pos_][m] += 1


def count(args) -> None:
    import spacy

    nlp = spacy.load("en_wo_ud_ewt")
    tables = {k: defaultdict(Counter) for k in ("hd", "h", "d", "mhd", "mh", "md")}
    n_par = n_sent = n_tok = 0
    t0 = time.perf_counter()
    for doc in nlp.pipe(paragraphs(args.stride), batch_size=args.batch):
        count_doc(doc, tables)
        n_par += 1
        n_tok += len(doc)
        n_sent += sum(1 for _ in doc.sents)
        if n_par % 5000 == 0:
            el = time.perf_counter() - t0
            print(f"{n_par} paragraphs, {n_sent} sentences, {n_tok} tokens, {el:.0f} s ({n_sent / el:.0f} sent/s)",
                  file=sys.stderr, flush=True)
        if n_par >= args.paragraphs or time.perf_counter() - t0 > args.seconds:
            break
    secs = time.perf_counter() - t0
    meta = {"paragraphs": n_par, "sentences": n_sent, "tokens": n_tok, "parse_seconds": round(secs, 1),
            "stride": args.stride, "source": "text-en-wiki wiki-*.txt.xz", "parser": "spaCy en_wo_ud_ewt",
            "command": "python bench/sr_deep_assoc.py count " + " ".join(sys.argv[2:]),
            "keys": {k: len(v) for k, v in tables.items()}}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with gzip.open(args.out + ".tmp", "wt", encoding="utf-8") as f:
        json.dump({"meta": meta, "tables": {k: {kk: dict(c) for kk, c in v.items()} for k, v in tables.items()}}, f)
    os.replace(args.out + ".tmp", args.out)
    print(json.dumps(meta), file=sys.stderr)


def prune(args) -> None:
    """The count file cut to what the default pruning keeps (module docstring)."""
    with gzip.open(args.out, "rt", encoding="utf-8") as f:
        d = json.load(f)
    out = {"meta": dict(d.get("meta", {}), pruned="case tables; keys counted >= 20, words >= 3, the rest as ~"),
           "tables": {}}
    for name in ("hd", "h", "d"):
        t = {}
        for k, c in d["tables"][name].items():
            n = sum(c.values())
            if n < 20:
                continue
            t[k] = {w: v for w, v in c.items() if w == "_" or v >= 3}
            rest = n - sum(t[k].values())
            if rest:
                t[k]["~"] = rest
        out["tables"][name] = t
    os.makedirs(os.path.dirname(os.path.abspath(args.to)), exist_ok=True)
    with gzip.open(args.to, "wt", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
    print(f"{args.to}: {os.path.getsize(args.to)} bytes; keys {({k: len(v) for k, v in out['tables'].items()})}")


def show(args) -> None:
    with gzip.open(args.out, "rt", encoding="utf-8") as f:
        d = json.load(f)
    print(json.dumps(d["meta"]))
    tab = d["tables"][args.key]
    top = sorted(tab.items(), key=lambda kv: -sum(kv[1].values()))[:args.n]
    for k, c in top:
        best = sorted(c.items(), key=lambda kv: -kv[1])[:5]
        print(k.replace(SEP, " "), sum(c.values()), best)


def evaluate(args) -> None:
    """The completion's case and mark words on the dev set against the references: per
    sentence the multiset of generated lemmas with relation case (mark) against the reference's
    words with that relation (the T2 input has none of them), micro-averaged P/R/F1; the
    most over- and under-generated words."""
    sys.path.insert(0, ROOT)
    from wo.io import read_conllu
    from wo.model import Model
    from wo.sr.complete import SEP as S
    from wo.sr.realizer import Realizer
    from wo.sr.t1 import read_t1

    d = os.path.join(SHARED, "corpora", "sr19-en_partut")
    inputs = read_t1(f"{d}/T2-en_partut-ud-dev.conllu")
    refs = read_conllu(f"{d}/UD-en_partut-ud-dev.conllu")
    comp = Realizer(Model.load(args.model)).stage("completion").completer
    if args.fill is not None:
        comp.fill = args.fill
    res = {"fill": comp.fill}
    for rel in ("case", "mark", "det", "aux", "cop", "punct", "all"):
        tp = fp = fn = 0
        over, under = Counter(), Counter()
        for t, ref in zip(inputs, refs):
            try:
                items = comp.predict(t)[2]
            except ValueError:
                items = []
            p = Counter(it.split(S)[1].lower() for its in items for it in its
                        if rel == "all" or it.split(S)[0].split(":")[0] == rel)
            g = Counter(lem.lower() for lem, r in zip(ref.lemmas, ref.deprels) if rel == "all" or r.split(":")[0] == rel)
            if rel == "all":   # the function words: the reference's words minus the input's
                g -= Counter(x.lower() for x in t.lemmas if x != "_")
            tp += sum((p & g).values())
            fp += sum((p - g).values())
            fn += sum((g - p).values())
            over.update(p - g)
            under.update(g - p)
        P, R = 100 * tp / max(1, tp + fp), 100 * tp / max(1, tp + fn)
        res[rel] = {"P": round(P, 1), "R": round(R, 1), "F1": round(2 * P * R / max(1e-9, P + R), 1),
                    **({"over": over.most_common(6), "under": under.most_common(6)} if rel in ("case", "mark") else {})}
    h = Model.read_header(args.model)[0]["training"]
    res.update(model=args.model, dev_bleu_deep=h.get("dev_bleu_deep"), model_bytes=os.path.getsize(args.model),
               assoc=h.get("completion", {}).get("assoc"))
    print(json.dumps(res))


def swap(args) -> None:
    """Dev BLEU of model BASE with its completion stage replaced by MODEL's (the fill bonus
    chosen on dev over the training grid), so that two completions are compared under the same
    ordering and inflection stages (their own dev choices of epoch and LMs aside)."""
    sys.path.insert(0, ROOT)
    from wo.model import Model
    from wo.sr.realizer import Realizer
    from wo.sr.t1 import read_references, read_t1
    from wo.sr.train import FILL_GRID
    from wo.sr.tune import dev_grid

    d = os.path.join(SHARED, "corpora", "sr19-en_partut")
    dev = read_t1(f"{d}/T2-en_partut-ud-dev.conllu")
    refs = read_references(f"{d}/UD-en_partut-ud-dev.conllu")
    r = Realizer(Model.load(args.base))
    comp = Realizer(Model.load(args.model)).stage("completion").completer
    r.stage("completion").completer = comp
    grid = dev_grid(r, dev, refs, FILL_GRID if args.grid else (comp.fill,), lambda f: setattr(comp, "fill", f))
    print(json.dumps({"base": args.base, "completion": args.model, "dev_bleu": grid, "best": max(grid.values())}))


def refit(args) -> None:
    """Fit a completion alone (shuffle ``--seed``; with ``--assoc COUNTS`` and ``--keys``, the
    association features) on the official train and report the dev BLEU of model BASE with it
    in place of its own (the fill bonus chosen on dev over the training grid): the completion's
    share of a difference, with the later stages fixed, over shuffles."""
    sys.path.insert(0, ROOT)
    from wo.io import read_conllu
    from wo.model import Model
    from wo.sr.complete import Assoc, Completer, align_deep
    from wo.sr.punct import choose_mark
    from wo.sr.realizer import Realizer
    from wo.sr.t1 import read_references, read_t1
    from wo.sr.train import FILL_GRID
    from wo.sr.tune import dev_grid

    d = os.path.join(SHARED, "corpora", "sr19-en_partut")
    train, ud = read_t1(f"{d}/T2-en_partut-ud-train.conllu"), read_conllu(f"{d}/UD-en_partut-ud-train.conllu")
    mark = choose_mark(ud) or ""
    ex = []
    for t, u in zip(train, ud):
        try:
            ex.append(align_deep(t, u, skip=mark))
        except ValueError:
            pass
    assoc = Assoc.from_counts(args.assoc, min_count=args.min, keys=args.keys.split(",")) if args.assoc else None
    t0 = time.perf_counter()
    comp = Completer.fit(ex, seed=args.seed, assoc=assoc)
    secs = time.perf_counter() - t0
    dev = read_t1(f"{d}/T2-en_partut-ud-dev.conllu")
    refs = read_references(f"{d}/UD-en_partut-ud-dev.conllu")
    r = Realizer(Model.load(args.base))
    r.stage("completion").completer = comp
    grid = dev_grid(r, dev, refs, FILL_GRID, lambda f: setattr(comp, "fill", f))
    print(json.dumps({"base": args.base, "seed": args.seed, "assoc": args.assoc and assoc.source, "fit_seconds":
                      round(secs, 1), "dev_bleu": grid, "best": max(grid.values())}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("count")
    c.add_argument("--paragraphs", type=int, default=180000)
    c.add_argument("--seconds", type=float, default=1200.0)
    c.add_argument("--stride", type=int, default=2)
    c.add_argument("--batch", type=int, default=256)
    c.add_argument("--out", default=DEFAULT_OUT)
    pr = sub.add_parser("prune")
    pr.add_argument("--out", default=DEFAULT_OUT)
    pr.add_argument("--to", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpora", "assoc",
                                                 "en-wiki-case.json.gz"))
    s = sub.add_parser("show")
    s.add_argument("--out", default=DEFAULT_OUT)
    s.add_argument("--key", default="hd")
    s.add_argument("--n", type=int, default=20)
    e = sub.add_parser("eval")
    e.add_argument("model")
    e.add_argument("--fill", type=float, help="the completion's fill bonus (default: the model's, chosen on dev)")
    w = sub.add_parser("swap")
    w.add_argument("base")
    w.add_argument("model")
    w.add_argument("--grid", action="store_true", help="every fill bonus of the training grid (else MODEL's)")
    f = sub.add_parser("refit")
    f.add_argument("base")
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--assoc", default="", help="a count file (count's --out); none: no association features")
    f.add_argument("--keys", default="hd,h,d")
    f.add_argument("--min", type=int, default=20)
    a = ap.parse_args()
    {"count": count, "prune": prune, "show": show, "eval": evaluate, "swap": swap, "refit": refit}[a.cmd](a)


if __name__ == "__main__":
    main()
