"""``wo sr make-input|train|realize|models|evaluate``: the Surface Realisation shared task (SR'19 T1)."""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys

from ..io.text import display_name
from .common import (EXIT_OK, EXIT_USER, STDIO_HELP, batch_options, batch_run, err, finite_float, hash_bits,
                     nonneg_float, nonneg_int, positive_float, positive_int)


def cmd_sr_make_input(a) -> int:
    """``wo sr make-input``: UD CoNLL-U -> SR'19 T1 input."""
    from ..io.conllu import read_conllu
    from ..io.text import AtomicWriter, read_bytes
    from ..sr.t1 import format_t1, make_input

    sents = read_conllu(a.ud)
    if not sents:
        data = read_bytes(a.ud)
        if data.strip():   # an empty file gives an empty T1 file; text without a token line is a mistake
            err(f"{display_name(a.ud)}: no CoNLL-U sentence (no token lines); --ud takes a UD CoNLL-U file"
                + (" (this looks like a wo sr realize output)" if data.lstrip().startswith(b"# sent_id") else ""))
            return EXIT_USER
    w = AtomicWriter(a.out)
    try:
        for i, s in enumerate(sents):
            w.write(format_t1(make_input(s, a.seed, i, a.with_gold), a.with_gold))
        w.commit()
    except BaseException:
        w.abort()
        raise
    print(f"wo: {len(sents)} sentences written to {display_name(a.out, 'stdout')} (T1, seed {a.seed}"
          f"{', with gold forms and original_id' if a.with_gold else ''})", file=sys.stderr)
    return EXIT_OK


def _order_suffix(spec: str) -> str:
    """argparse type of ``--order-suffix``: the spec, checked (:func:`wo.sr.order.suffix_function`)."""
    from ..sr.order import suffix_function

    try:
        suffix_function(spec)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return spec


def cmd_sr_train(a) -> int:
    """``wo sr train``: train an SR model on T1 input (gold from original_id or alignment)."""
    from ..io.conllu import read_conllu
    from ..sr.inflect import Lexicon
    from ..sr.t1 import gold_sentences, read_references, read_t1
    from ..sr.train import train_sr

    train = read_t1(a.train, jobs=a.jobs if a.backend == "loky" else 1)
    gc.freeze()   # this process: the training sentences live to its end, the collector no longer walks them
    bad = [s for s in train if s.error]
    for s in bad[:20]:
        err(f"{display_name(a.train)}:{s.line}: {s.error} (sentence skipped)")
    ref_ud = read_conllu(a.train_ref) if a.train_ref else None
    train_refs = [s.forms for s in ref_ud] if ref_ud else None
    if train_refs is not None and len(train_refs) != len(train):
        err(f"{a.train_ref}: {len(train_refs)} sentences but {a.train} has {len(train)}")
        return EXIT_USER
    if not a.lang:
        err("wo sr train needs --lang CODE (ISO 639-1, e.g. en, fr, tr; 'xx' for no language module)")
        return EXIT_USER
    def lex_build():
        return Lexicon.build(gold_sentences(train, ref_ud), lang=a.lang, context=a.form_context)
    from ..sr.mwt import Contractions
    mwt_files = a.mwt or ([a.train_ref] if a.train_ref else [])

    class DevMismatch(Exception):
        pass

    def load_dev():
        dev, dev_refs = [], []
        if a.dev:
            dev = read_t1(a.dev)
            dev_refs = read_references(a.dev_ref or a.dev)
            if a.dev_limit:
                dev, dev_refs = dev[:a.dev_limit], dev_refs[:a.dev_limit]
            if len(dev_refs) != len(dev):
                raise DevMismatch(f"{a.dev_ref or a.dev}: {len(dev_refs)} references but {a.dev} has "
                                  f"{len(dev)} sentences")
        return dev, dev_refs

    meta = {"train": os.path.basename(a.train), "dev": os.path.basename(a.dev or ""), "lang": a.lang}
    if a.orderer == "local":
        from ..sr.train import train_sr_local

        if a.lm:
            err("--lm belongs to --orderer search")
            return EXIT_USER
        try:   # the dev set and the contractions are read while the workers build the training domains
            rec = train_sr_local(train, load_dev, None, a.epochs, a.model, lex_build, train_refs=train_refs,
                                 hash_bits=a.hash_bits or 20, beam=a.order_beam, seed=a.seed, meta=meta,
                                 contractions=(lambda: Contractions.build(mwt_files)) if mwt_files else None,
                                 compact=a.compact, jobs=a.jobs, backend=a.backend,
                                 scheduler=a.scheduler, suffix=a.order_suffix, sig=a.order_signature,
                                 ends=a.order_ends, seeds=a.seeds, form_context=a.form_context,
                                 r2l=a.order_r2l)
        except DevMismatch as exc:
            err(str(exc))
            return EXIT_USER
        print(json.dumps(rec, indent=1))
        return EXIT_OK
    contractions = Contractions.build(mwt_files) if mwt_files else None
    try:
        dev, dev_refs = load_dev()
    except DevMismatch as exc:
        err(str(exc))
        return EXIT_USER
    rec = train_sr(train, dev, dev_refs, a.epochs, a.model, lex_build(), train_refs=train_refs,
                   hash_bits=a.hash_bits or 23, beam_factor=a.beam_factor, train_budget_factor=a.train_budget,
                   seed=a.seed,
                   meta={"train": os.path.basename(a.train), "dev": os.path.basename(a.dev or ""),
                         "lang": a.lang}, lm=a.lm, question_labels=not a.no_question_labels,
                   contractions=contractions, compact=a.compact, jobs=a.jobs, backend=a.backend,
                   scheduler=a.scheduler)
    print(json.dumps({k: v for k, v in rec.items()}, indent=1))
    return EXIT_OK


def cmd_sr_realize(a) -> int:
    """``wo sr realize``: T1 input -> SR submission file and its .tok twin, on the batch spine
    (:func:`wo.sr.realizer.run`: ``--on-error``, atomic outputs, the finished prefix on Ctrl-C)."""
    from ..lm.model import LMError
    from ..model import ModelError
    from ..sr.models import find_model
    from ..sr.realizer import run

    want = a.model or a.lang
    if want:
        path = find_model(want)
        if path is None:
            err(f"{want}: no such model file, and no shipped SR model for that treebank or language "
                f"(`wo sr models` lists them)")
            return EXIT_USER
        a.model = path
    opts = {"beam_factor": a.beam_factor, "budget_factor": a.budget_factor, "timeout": a.timeout,
            "patience_factor": a.patience, "lm": a.lm, "max_memory": a.max_memory}
    opts.update(rerank_lm=a.rerank_lm, rerank_weight=a.rerank_weight, gold_forms=not a.no_gold_forms,
                lift_threshold=a.lift_threshold, form_penalty=a.form_penalty, allomorph_weight=a.allomorph_weight,
                context_weight=a.context_weight)
    try:
        return batch_run(a, lambda bar: run(
            a.model, a.input, a.output, tok=a.tok or "auto", output_format=a.format, jobs=a.jobs,
            on_error=a.on_error, backend=a.backend,
            scheduler=a.scheduler, progress=bar.update, report=lambda m: (bar.clear(), err(m)), **opts))
    except FileNotFoundError as exc:
        if exc.filename == a.input:
            raise
        err(f"{exc.filename}: no such file (--model, --lm or --rerank-lm)")
        return EXIT_USER
    except UnicodeDecodeError:
        raise                                   # main names it
    except (ValueError, ModelError, LMError) as exc:
        err(str(exc))
        return EXIT_USER


def cmd_sr_models(a) -> int:
    """``wo sr models``: the shipped SR models with their language, training data, licence and
    test figures."""
    from ..sr.models import list_models

    rows = list_models()
    if a.json:
        print(json.dumps(rows, indent=1))
        return EXIT_OK
    print(f"{'model':<12} {'lang':<5} {'MB':>5}  {'trained on':<34} {'test BLEU':>9} {'gold-form':>9}  licence")
    for r in rows:
        d, res = r["data"], r["results"]
        on = d.get("trained_on", "")
        if d.get("train_sentences"):
            on = f"{on} ({d['train_sentences']:,} sentences)"
        bleu = f"{res['bleu']:.2f}" if "bleu" in res else "-"
        gold = f"{res['gold_bleu']:.2f}" if "gold_bleu" in res else "-"
        print(f"{r['code']:<12} {r['lang']:<5} {r['bytes'] / 1e6:>5.1f}  {on:<34} {bleu:>9} {gold:>9}  "
              f"{d.get('licence', '')}")
    return EXIT_OK


def cmd_sr_evaluate(a) -> int:
    """``wo sr evaluate``: SR metrics (BLEU, NIST, DIST) on lower-cased tokens, plus sacrebleu."""
    from ..eval.metrics import sr_score
    from ..sr.t1 import read_hypotheses, read_references

    hyps, refs = read_hypotheses(a.hyp), read_references(a.ref)
    if len(hyps) != len(refs):
        err(f"{display_name(a.hyp)}: {len(hyps)} sentences but {display_name(a.ref)} has {len(refs)}")
        return EXIT_USER
    sc = sr_score(hyps, refs)
    print(json.dumps(sc.__dict__) if a.json else sc)
    return EXIT_OK


def register(sub) -> None:
    """Add the ``sr`` verbs to the ``wo`` subparsers ``sub``."""
    from ..sr.realizer import DEFAULT_SR_RERANK_WEIGHT

    sr = sub.add_parser("sr", help="Surface Realisation shared task (SR'19 shallow track, T1)")
    ss = sr.add_subparsers(dest="verb", required=True, metavar="VERB")
    m = ss.add_parser("make-input", help="UD CoNLL-U -> T1 input (scrambled ids, lemmas, lin)")
    m.add_argument("--ud", default="-", help=f"UD CoNLL-U (.xz ok) {STDIO_HELP}; default -")
    m.add_argument("--out", "--output", dest="out", default="-", help=f"T1 output {STDIO_HELP}; default -")
    m.set_defaults(output_files=("out",))
    m.add_argument("--with-gold", action="store_true", help="gold form in column 3 and original_id")
    m.add_argument("--seed", type=int, default=1)
    m.set_defaults(func=cmd_sr_make_input)
    t = ss.add_parser("train", help="train an SR model (inflection and ordering)")
    t.add_argument("--train", required=True, help="T1 training input with gold (original_id) or --train-ref")
    t.add_argument("--train-ref", help="UD file with the training references (alignment, lexicon)")
    t.add_argument("--dev", help="T1 dev input (per-epoch BLEU; best epoch kept)")
    t.add_argument("--dev-ref", help="dev references: UD CoNLL-U or tokenized lines (default: --dev with gold)")
    t.add_argument("--dev-limit", type=nonneg_int, default=0, help="use only the first N dev sentences (0: all)")
    t.add_argument("--model", required=True, help="output model file")
    t.set_defaults(output_files=("model",), input_files=("train", "train_ref", "dev", "dev_ref", "mwt", "lm"))
    t.add_argument("--epochs", type=positive_int, default=5)
    t.add_argument("--orderer", default="local", choices=["local", "search"],
                   help="local: each head's dependents ordered by a linear model with beam search (wo.sr.order; "
                        "default); search: the best-first search over the whole tree with joint inflection")
    t.add_argument("--order-beam", type=positive_int, default=16, help="--orderer local: beam of the domain search")
    t.add_argument("--order-signature", action="store_true",
                   help="--orderer local: features of each step with the relation set of the head's dependents "
                        "(the clause's signature: e.g. a subordinate clause's verb-final order)")
    t.add_argument("--seeds", type=positive_int, default=1,
                   help="--orderer local: train K perceptrons on differently shuffled data and average them "
                        "(a bagging-like ensemble in one weight table; K times the training time)")
    t.add_argument("--order-r2l", type=nonneg_float, default=0.0, metavar="WEIGHT",
                   help="--orderer local: also train a right-to-left ordering model (as many perceptrons as --seeds, "
                        "on the mirrored domains) that rescores each domain's final beam with this weight "
                        "(0: none; 0.5 chosen by cross-validation; twice the training time, a table twice as large)")
    t.add_argument("--order-ends", action="store_true",
                   help="--orderer local: features of each step with the last words and the first words of both "
                        "phrases (their particles or prepositions)")
    t.add_argument("--form-context", action="store_true",
                   help="--orderer local: also learn the context model of the forms (each candidate form against the "
                        "neighbouring lemmas and UPOS: e.g. Japanese verb forms before their auxiliaries; with or "
                        "without the next word's initial) and choose the variant and its weight on --dev "
                        "(wo sr realize --context-weight)")
    t.add_argument("--order-suffix", default=None, metavar="SPEC", type=_order_suffix,
                   help="--orderer local: suffix features of the ordering model: 'morpheme' (the last morpheme of "
                        "a lemma written with '+', as UD Korean), 'chars:N' (the word's last N characters) or "
                        "'none' (default); helps where words carry their syntax in suffixes")
    t.add_argument("--hash-bits", type=hash_bits, default=None,
                   help="weight table of 2^b float32, 8..30 (default 20 for local, 23 for search)")
    t.add_argument("--beam-factor", type=positive_float, default=8.0, help="chart size k*n during training")
    t.add_argument("--train-budget", type=positive_float, default=100.0, help="training pops per word")
    t.add_argument("--lang", default=None, help="ISO 639-1 language code (required): selects the language "
                   "module (en: lemminflect, a/an, contractions) and the detokenizer; 'xx' for none")
    t.add_argument("--jobs", type=positive_int, default=1,
                   help="iterative parameter mixing over N shards trained in parallel (McDonald et al. 2010)")
    t.add_argument("--backend", default="loky", choices=["loky", "dask"])
    t.add_argument("--scheduler", default=None, help="Dask scheduler address for --backend dask")
    t.add_argument("--compact", nargs="?", const="float16", default=None, choices=["float16", "q8"],
                   help="save float16 weights (or with q8: 8-bit log-scale codes) and a compressed header")
    t.add_argument("--mwt", nargs="+", default=None,
                   help="UD CoNLL-U file(s) whose multiword-token lines teach the contractions "
                        "(fr du = de le); default: --train-ref")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--lm", default=None, help="n-gram LM over lower-cased forms (real-valued features); "
                   "its text must not contain the training sentences")
    t.add_argument("--no-question-labels", action="store_true",
                   help="do not mark the labels of a question clause's dependents (as models trained before this option)")
    t.set_defaults(func=cmd_sr_train)
    r = ss.add_parser("realize", help="T1 input -> SR submission file (+ .tok)")
    r.add_argument("--model", default=None,
                   help="model file, or a shipped model's treebank code (pt_bosque) or language code (pt); "
                        "default: the shipped English model")
    r.add_argument("--lang", default=None, help="language or treebank code of a shipped model (`wo sr models`)")
    r.add_argument("--input", default="-", help=f"T1 input {STDIO_HELP}; default -")
    r.add_argument("--output", default="-", help=f"submission file {STDIO_HELP}; default -")
    r.add_argument("--tok", default=None, help="tokenized twin (default: OUTPUT.tok; none for -, a pipe or a device)")
    batch_options(r, fallback="its lemmas in input order",
                  skip="its sent_id with an empty text and an empty .tok line",
                  format_help="output: the SR submission file (text) and its .tok twin, or JSON lines (one "
                              "object per sentence: sent_id, text, tokens, score, status, seconds, pops, message, "
                              "surface, order, heads, labels, edges; a .tok twin only with --tok)")
    r.add_argument("--beam-factor", type=positive_float, default=None)
    r.add_argument("--budget-factor", type=positive_float, default=None)
    r.add_argument("--timeout", type=nonneg_float, default=0.0, help="seconds per sentence (0 = none)")
    r.add_argument("--max-memory", type=positive_float, default=None, metavar="MB",
                   help="search memory per sentence in MiB (default 1536: a worker stays under ~2 GB); past it "
                        "the search stops with what it has (status memory)")
    r.add_argument("--lm", default=None, help="LM path, or 'none' (default: the model's own, if any)")
    r.add_argument("--rerank-lm", default=None,
                   help="rerank the popped goal edges (search orderer) or each domain's final beam (local "
                        "orderer, which also chooses the forms with it) by the model score plus --rerank-weight x "
                        "this LM's log10 p of the realised string; 'none' turns it off (default: the model header's, "
                        "for a shipped model the 4-gram beside it)")
    r.add_argument("--form-penalty", type=finite_float, default=None,
                   help="local orderer: log10 LM cost per rank down a token's candidate forms (default: the model's)")
    r.add_argument("--allomorph-weight", type=nonneg_float, default=None,
                   help="local orderer: weight of the neighbouring words' characters in the choice of forms "
                        "(elision, euphony, vowel harmony; learned from the treebank; 0 = off; default: the model's)")
    r.add_argument("--context-weight", type=nonneg_float, default=None,
                   help="local orderer: weight of the form context model in the choice of forms (each candidate "
                        "against the neighbouring lemmas, UPOS and its relation, e.g. Japanese verb forms before "
                        "their auxiliaries; learned from the treebank; 0 = off; default: the model's)")
    r.add_argument("--rerank-weight", type=finite_float, default=None,
                   help=f"weight of --rerank-lm's log10 p (default: the model header's, else {DEFAULT_SR_RERANK_WEIGHT})")
    r.add_argument("--patience", type=nonneg_float, default=None,
                   help="pops per word spent after the first goal looking for a better one (default: model's)")
    r.add_argument("--lift-threshold", type=nonneg_float, default=None,
                   help="probability at which a token is lifted for a non-projective order (default: the "
                        "model's; 2 = never)")
    r.add_argument("--no-gold-forms", action="store_true",
                   help="inflect even when the T1 input carries gold forms in column 3 (by default they "
                        "are used, so only the order is predicted)")
    r.set_defaults(func=cmd_sr_realize)
    ls = ss.add_parser("models", help="list the shipped SR models (language, data, licence, test figures)")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_sr_models)
    e = ss.add_parser("evaluate", help="SR metrics: BLEU, NIST, DIST (lower-cased tokens) + sacrebleu")
    e.add_argument("--hyp", required=True, help=f"tokenized lines, or an SR submission file with its .tok {STDIO_HELP}")
    e.add_argument("--ref", required=True, help="UD CoNLL-U, T1 with gold, or tokenized lines")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_sr_evaluate)

