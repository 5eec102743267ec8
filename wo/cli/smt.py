"""``wo smt train|translate|evaluate|train-parser``: Chinese-English translation by syntactic generation
(Zhang et al. 2014), and the training of its spaCy tagger + dependency parsers."""
from __future__ import annotations

import json

from .common import (EXIT_OK, EXIT_USER, STDIO_HELP, batch_options, batch_run, err, hash_bits, nonneg_float,
                     nonneg_int, positive_float, positive_int, share)


def cmd_smt_train(a) -> int:
    """``wo smt train``: corpus preparation, phrase table, LM and the synthesis model."""
    from ..smt.corpus import train_from_tsv

    try:
        rec = train_from_tsv(a.train, a.dev, a.model, lm=a.lm, lm_text=a.lm_text, epochs=a.epochs,
                             work=a.work, hash_bits=a.hash_bits, dev_limit=a.dev_limit,
                             log=(lambda m: None) if a.quiet else err)
    except ValueError as exc:
        err(str(exc))
        return EXIT_USER
    if not a.quiet:
        err(f"best epoch {rec['best_epoch']}: dev BLEU {rec['dev_bleu']}; model written to {a.model}")
    return EXIT_OK


def cmd_smt_translate(a) -> int:
    """``wo smt translate``: translate Chinese sentences, one per line."""
    from ..smt.translate import run

    return batch_run(a, lambda bar: run(
        a.input, a.output, model=a.model, lm=a.lm, jobs=a.jobs, tokenized=a.tokenized,
        output_format=a.format, max_length=a.max_length, on_error=a.on_error, backend=a.backend,
        scheduler=a.scheduler, progress=bar.update,
        report=lambda m: (bar.clear(), err(m)), beam_factor=a.beam_factor, max_pops=a.max_pops,
        beta=a.beta, timeout=a.timeout, max_memory=a.max_memory))


def cmd_smt_evaluate(a) -> int:
    """``wo smt evaluate``: sacrebleu BLEU with 13a tokenization on detokenized output."""
    from ..eval.metrics import score
    from ..smt.translate import read_lines

    hyps = [x.text or "" for x in read_lines(a.hyp, "en")]
    refs = [x.text or "" for x in read_lines(a.ref, "en")]
    if len(hyps) != len(refs):
        err(f"{a.hyp}: {len(hyps)} sentences but {a.ref} has {len(refs)}")
        return EXIT_USER
    sc = score(hyps, refs, tokenize="13a")
    print(json.dumps(sc.__dict__) if a.json else sc)
    return EXIT_OK


def cmd_smt_train_parser(a) -> int:
    """``wo smt train-parser``: train a spaCy tagger + dependency parser on CoNLL-U treebanks
    (:func:`wo.smt.parsers.train_parser`); the training record (JSON) goes to standard output."""
    from ..smt.parsers import Settings, train_parser

    if not a.train and not a.zh_v1:
        err("wo smt train-parser needs training data: --train FILE... (or, for Chinese, --zh-v1 FILE...)")
        return EXIT_USER
    if a.zh_v1 and a.lang != "zh":
        err("--zh-v1 converts UD Chinese 1.3 files: it needs --lang zh")
        return EXIT_USER
    settings = Settings(max_steps=a.max_steps, max_minutes=a.max_minutes, patience=a.patience,
                        eval_frequency=a.eval_frequency, embed_size=a.embed_size, seed=a.seed)
    rec = train_parser(a.lang, a.train, a.dev, a.out, zh_v1=a.zh_v1, tag=a.tag, settings=settings,
                       work=a.work, log=(lambda m: None) if a.quiet else err)
    print(json.dumps(rec, indent=1, ensure_ascii=False))
    return EXIT_OK


def register(sub) -> None:
    """Add the ``smt`` verbs to the ``wo`` subparsers ``sub``."""
    sm = sub.add_parser("smt", help="Chinese->English translation by syntactic generation (Zhang et al. 2014)")
    ss = sm.add_subparsers(dest="verb", required=True, metavar="VERB")
    t = ss.add_parser("train", help="prepare the corpus (segment, tokenize, parse, align, extract phrases) and train")
    t.add_argument("--train", required=True, help="training pairs, TSV en<TAB>zh<TAB>attribution with a header")
    t.add_argument("--dev", required=True, help="dev pairs (same format): the epoch is chosen by dev BLEU")
    t.add_argument("--model", required=True, help="output model; the phrase table and LM are written beside it")
    t.set_defaults(output_files=("model",), input_files=("train", "dev", "lm", "lm_text"))
    t.add_argument("--lm", default=None, help="English n-gram LM (default: a 4-gram of the training English "
                                              "side plus --lm-text, written beside the model)")
    t.add_argument("--lm-text", nargs="*", default=[], help="more tokenized English text for the LM")
    t.add_argument("--epochs", type=positive_int, default=6)
    t.add_argument("--hash-bits", type=hash_bits, default=21, help="weight table of 2^b float32 (8..30)")
    t.add_argument("--dev-limit", type=nonneg_int, default=0, help="score epochs on the first N dev pairs (0: all)")
    t.add_argument("--work", default=None, help="directory for intermediate files (default: a temporary one)")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(func=cmd_smt_train)
    tr = ss.add_parser("translate", help="translate Chinese sentences (one per line, raw or segmented)")
    tr.add_argument("--model", default=None, help="SMT model (default: the shipped Tatoeba model)")
    tr.add_argument("--input", default="-", help=f"Chinese, one sentence per line, or a Tatoeba TSV (its zh column) {STDIO_HELP}; default -")
    tr.add_argument("--output", default="-", help="English, one line per input line; default -")
    tr.add_argument("--tokenized", action="store_true", help="write tokenized (not detokenized) English")
    tr.add_argument("--lm", default=None, help="n-gram LM path, or 'none' (default: the model's own LM)")
    tr.add_argument("--beam-factor", type=positive_float, default=None, help="chart size k (k*n edges); default: the model's")
    tr.add_argument("--max-pops", type=positive_int, default=None, help="expansions L; default: the model's")
    tr.add_argument("--timeout", type=nonneg_float, default=0.0,
                    help="seconds per sentence of the search (0 = none; status timeout)")
    tr.add_argument("--max-memory", type=positive_float, default=None, metavar="MB",
                    help="search memory per sentence in MiB (default 1536); past it the search stops (status memory)")
    tr.add_argument("--beta", type=share, default=None, help="share of source words a goal covers, in (0, 1]; default: the model's")
    tr.add_argument("--max-length", type=positive_int, default=100, help="refuse longer sentences (source words)")
    batch_options(tr, fallback="an empty line (a sentence the decoder could not translate: its source words "
                               "copied)", skip="an empty line",
                  format_help="output: English lines, or JSON lines (one object per input line: text, tokens, "
                              "score, status, seconds, pops, message, heads, unknown)")
    tr.set_defaults(func=cmd_smt_translate)
    ev = ss.add_parser("evaluate", help="BLEU (sacrebleu, 13a) of detokenized output")
    ev.add_argument("--hyp", required=True, help=f"one sentence per line {STDIO_HELP}")
    ev.add_argument("--ref", required=True, help="references: a Tatoeba TSV of pairs (its en column is used) or one sentence per line")
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(func=cmd_smt_evaluate)
    tp = ss.add_parser(
        "train-parser", help="train a spaCy tagger + dependency parser (the SMT's wo.smt.parse) on UD treebanks",
        description="Train a small spaCy tagger + dependency parser from a blank pipeline on CoNLL-U treebanks, "
                    "on one CPU thread, keep the checkpoint best on the dev files, write it to --out and score it "
                    "through wo.smt.parse on each dev file. The JSON training record goes to standard output, "
                    "progress to standard error. The defaults are those of the shipped parsers "
                    "(corpora/models/smt/{en,zh}-parser, trained by bench/smt_parsers.py). Needs the smt extra "
                    "(spaCy; OpenCC for --zh-v1).")
    tp.add_argument("--lang", required=True, choices=["en", "zh"],
                    help="language of the pipeline (zh: pre-segmented words, no spaces)")
    tp.add_argument("--train", nargs="+", default=[], metavar="FILE",
                    help="training treebanks, UD v2 CoNLL-U (.xz/.gz ok); multiword-token ranges and empty nodes "
                         "are skipped, every word needs a gold head and label")
    tp.add_argument("--dev", nargs="+", required=True, metavar="FILE",
                    help="dev treebanks: the checkpoint is chosen on all of them together, scores are given per file")
    tp.add_argument("--out", required=True, metavar="DIR",
                    help="output spaCy pipeline directory (load with wo.smt.parse.load_parser(LANG, DIR)); "
                         "a pipeline already there is replaced")
    tp.add_argument("--zh-v1", nargs="+", default=[], metavar="FILE",
                    help="Chinese only: more training treebanks in UD Chinese 1.3 style (traditional script, UD v1 "
                         "labels), converted to simplified script (OpenCC t2s) and UD v2 first; they come before "
                         "--train in the training data")
    tp.add_argument("--tag", choices=["xpos", "upos"], default=None,
                    help="column learnt as the tag: default xpos (PTB) for en, upos for zh")
    tp.add_argument("--max-steps", type=positive_int, default=8000, metavar="N", help="optimizer steps at most")
    tp.add_argument("--max-minutes", type=nonneg_float, default=19.0, metavar="MIN",
                    help="wall-clock cap of the training in minutes; the run is stopped and the best checkpoint "
                         "kept (0 = none)")
    tp.add_argument("--patience", type=nonneg_int, default=2000, metavar="N",
                    help="stop after this many steps without a dev improvement (0 = never)")
    tp.add_argument("--eval-frequency", type=positive_int, default=200, metavar="N", help="steps between dev evaluations")
    tp.add_argument("--embed-size", type=positive_int, default=4000, metavar="ROWS",
                    help="rows of the word hash embedding (prefix/suffix/shape: half)")
    tp.add_argument("--seed", type=int, default=0)
    tp.add_argument("--work", default=None, metavar="DIR",
                    help="keep the DocBins, config.cfg, train.log and checkpoints here (default: a temporary "
                         "directory, removed)")
    tp.add_argument("--quiet", action="store_true")
    tp.set_defaults(func=cmd_smt_train_parser)

