"""Train and evaluate the syntactic SMT system (issue 14; Zhang et al. 2014) on Tatoeba zh-en
from the parsed corpus that ``bench/smt_data.py`` writes to ``--work``.

    python bench/smt_train.py --tag full --lm /work/smtdata/lm.tatoeba+texten.o4.wolm --epochs 6
    python bench/smt_train.py --tag full --eval-only --model bench/results/smt/model.full.wo --set test
    python bench/smt_train.py --tag full-rr --retune --model bench/results/smt/model.full.wo --set dev

Training: oracle derivations (section 2.2.2), Algorithm 3 large-margin training, the epoch
chosen by dev BLEU (``--dev-limit`` pairs).  Evaluation (``--eval-only`` or after training):
decodes ``--set`` (dev or test; test once, for the final figure) on one core, writes the
outputs and bench/results/smt/eval.<set>.<tag>.json with BLEU (sacrebleu 13a on detokenized
text, signature), sentences/s (decoding only: the source sides are parsed in the cache),
edges/s, statuses, oracle and forced-decoding reachability, peak RSS.  ``--retune`` tunes
the n-best reranker of an existing model again on dev (all of it, ``--dev-limit`` 0) and
saves the model as bench/results/smt/model.<tag>.wo before evaluating.

The reranker's word lexicons (``--lexicon``: from the train records' alignment links;
``--model1``: IBM model 1 by EM on them) are estimated and written to corpora/models/smt/
when those files are missing (the shipped copies).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
OUT = os.path.join(HERE, "results", "smt")
TABLE = os.path.join(ROOT, "corpora", "models", "smt", "phrases.tsv.gz")
from common import read_jsonl  # noqa: E402  (bench/ is on sys.path)


LEXICON = os.path.join(ROOT, "corpora", "models", "smt", "lexicon.tsv.gz")
MODEL1 = os.path.join(ROOT, "corpora", "models", "smt", "model1.tsv.gz")


def lexicon_of(path, work, kind="links"):
    """The reranker's link lexicon or model 1 tables: read ``path``, or estimate them from the
    train records (alignment links; EM) and write them there."""
    from wo.smt.lexicon import Lexicon

    if os.path.exists(path):
        return Lexicon.load(path)
    recs = read_jsonl(os.path.join(work, "train.jsonl.gz"))
    if kind == "links":
        lex = Lexicon.from_links((r["zh"], r["en"], r["links"]) for r in recs)
    else:
        lex = Lexicon.model1((r["zh"], r["en"]) for r in recs)
    lex.save(path)
    print(f"wrote {path}: {len(lex)} word pairs", file=sys.stderr)
    return lex


def evaluate(model_path, recs, table, lm, opts, name, lexicon=None, model1=None):
    """Decode recs with the model; (record dict, outputs)."""
    from wo.eval.metrics import score
    from wo.model import Model
    from wo.smt.train import source_of
    from wo.smt.translate import Translator

    tr = Translator(Model.load(model_path), lm=lm, table=table, parser=False, lexicon=lexicon, model1=model1, **opts)
    outs, stat, edges = [], {}, 0
    t0 = time.perf_counter()
    for r in recs:
        t = tr.translate_parsed(source_of(r))
        outs.append(t.text)
        stat[t.status] = stat.get(t.status, 0) + 1
        edges += tr.core.search.last_edges if t.options else 0
    sec = time.perf_counter() - t0
    sc = score(outs, [r["en_raw"] for r in recs], tokenize="13a")
    return {"set": name, "sentences": len(recs), "bleu": round(sc.bleu, 2), "signature": sc.signature,
            "seconds": round(sec, 2), "sentences_per_second": round(len(recs) / sec, 1),
            "edges_per_second": round(edges / sec), "status": stat,
            "decode": dict(tr.opts)}, outs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/work/smtdata")
    ap.add_argument("--table", default=TABLE)
    ap.add_argument("--lm", required=True)
    ap.add_argument("--tag", required=True)
    ap.add_argument("--model", default=None, help="model path (default bench/results/smt/model.<tag>.wo)")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--hash-bits", type=int, default=21)
    ap.add_argument("--seed", type=int, default=1, help="training order seed")
    ap.add_argument("--train-limit", type=int, default=0)
    ap.add_argument("--dev-limit", type=int, default=500)
    ap.add_argument("--train-pops", type=int, default=None)
    ap.add_argument("--beam-factor", type=float, default=None)
    ap.add_argument("--max-pops", type=int, default=None)
    ap.add_argument("--beta", type=float, default=None)
    ap.add_argument("--lam", type=float, default=None)
    ap.add_argument("--substitute", type=float, default=None, help="substitute oracles leaving out at most this share")
    ap.add_argument("--init-real", type=float, nargs=4, default=None,
                    help="initial weights of the LM, log10 P(trans), target-word and source-word features")
    ap.add_argument("--max-tau", type=float, default=0.05)
    ap.add_argument("--eval-only", action="store_true")
    ap.add_argument("--retune", action="store_true", help="tune the reranker of --model on dev again, save as the tag's model")
    ap.add_argument("--lexicon", default=LEXICON)
    ap.add_argument("--model1", default=MODEL1)
    ap.add_argument("--set", default="dev", choices=["dev", "test"])
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)

    from wo.lm.model import LanguageModel
    from wo.smt.phrases import PhraseTable
    from wo.smt.train import DEFAULTS, train

    model = args.model or os.path.join(OUT, f"model.{args.tag}.wo")
    table = PhraseTable.load(args.table)
    lm = LanguageModel.load(args.lm)
    lexicon = lexicon_of(args.lexicon, args.work)
    model1 = lexicon_of(args.model1, args.work, "model1")
    dec = {k: v for k, v in (("beam_factor", args.beam_factor), ("max_pops", args.max_pops),
                             ("beta", args.beta)) if v is not None}
    if args.retune:
        from wo.model import Model
        from wo.smt.train import tune_rerank
        m = Model.load(model, mmap=False)
        dev = read_jsonl(os.path.join(args.work, "dev.jsonl.gz"))
        dev = dev[:args.dev_limit] if args.dev_limit else dev
        t0 = time.perf_counter()
        w, b = tune_rerank(m, dev, table, lm, dict(m.header.get("decode", {}), **dec), lexicon, model1,
                           log=lambda x: print(x, file=sys.stderr))
        m.header["smt"]["lexicon"] = os.path.abspath(args.lexicon)
        m.header["smt"]["model1"] = os.path.abspath(args.model1)
        m.header["training"]["rerank_seconds"] = round(time.perf_counter() - t0, 1)
        model = os.path.join(OUT, f"model.{args.tag}.wo")
        m.save(model)
    elif not args.eval_only:
        tr = read_jsonl(os.path.join(args.work, "train.jsonl.gz"))
        if args.train_limit:
            tr = tr[:args.train_limit]
        dev = read_jsonl(os.path.join(args.work, "dev.jsonl.gz"))
        opts = dict(dec)
        if args.train_pops:
            opts["train_pops"] = args.train_pops
        if args.substitute is not None:
            opts["substitute"] = args.substitute
        if args.init_real:
            opts["init_real"] = args.init_real
        if args.lam is not None:
            opts["lam"] = args.lam
        # the table and LM files are looked up beside the model at translation time; here they
        # are passed explicitly
        rec = train(tr, dev, table, lm, args.epochs, model, os.path.basename(args.table),
                    hash_bits=args.hash_bits, seed=args.seed, max_tau=args.max_tau, dev_limit=args.dev_limit, opts=opts,
                    lexicon=lexicon, lexicon_file=os.path.abspath(args.lexicon), model1=model1,
                    model1_file=os.path.abspath(args.model1))
        rec["table"] = os.path.relpath(args.table, ROOT)
        rec["lm_path"] = args.lm
        with open(os.path.join(OUT, f"train.{args.tag}.json"), "w") as fh:
            json.dump(rec, fh, indent=1)
    recs = read_jsonl(os.path.join(args.work, f"{args.set}.jsonl.gz"))
    res, outs = evaluate(model, recs, table, lm, dec, args.set, lexicon, model1)
    res.update(tag=args.tag, model=os.path.relpath(model, ROOT), lm=args.lm,
               peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1))
    with open(os.path.join(OUT, f"eval.{args.set}.{args.tag}.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    with open(os.path.join(OUT, f"out.{args.set}.{args.tag}.txt"), "w") as fh:
        fh.writelines(o + "\n" for o in outs)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
