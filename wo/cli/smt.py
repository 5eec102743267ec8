"""``wo smt train|translate|evaluate``: Chinese-English translation by syntactic generation (Zhang et al. 2014)."""
from __future__ import annotations

import json

from .common import EXIT_OK, EXIT_USER, STDIO_HELP, batch_run, err, nonneg_float, positive_float, positive_int, share


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
        output_format=a.format, max_length=a.max_length, on_error="fallback", progress=bar.update,
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


def register(sub) -> None:
    """Add the ``smt`` verbs to the ``wo`` subparsers ``sub``."""
    sm = sub.add_parser("smt", help="Chinese->English translation by syntactic generation (Zhang et al. 2014)")
    ss = sm.add_subparsers(dest="verb", required=True, metavar="VERB")
    t = ss.add_parser("train", help="prepare the corpus (segment, tokenize, parse, align, extract phrases) and train")
    t.add_argument("--train", required=True, help="training pairs, TSV en<TAB>zh<TAB>attribution with a header")
    t.add_argument("--dev", required=True, help="dev pairs (same format): the epoch is chosen by dev BLEU")
    t.add_argument("--model", required=True, help="output model; the phrase table and LM are written beside it")
    t.add_argument("--lm", default=None, help="English n-gram LM (default: a 4-gram of the training English "
                                              "side plus --lm-text, written beside the model)")
    t.add_argument("--lm-text", nargs="*", default=[], help="more tokenized English text for the LM")
    t.add_argument("--epochs", type=positive_int, default=6)
    t.add_argument("--hash-bits", type=int, default=21)
    t.add_argument("--dev-limit", type=int, default=0, help="score epochs on the first N dev pairs (0: all)")
    t.add_argument("--work", default=None, help="directory for intermediate files (default: a temporary one)")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(func=cmd_smt_train)
    tr = ss.add_parser("translate", help="translate Chinese sentences (one per line, raw or segmented)")
    tr.add_argument("--model", default=None, help="SMT model (default: the shipped Tatoeba model)")
    tr.add_argument("--input", default="-", help=f"Chinese, one sentence per line, or a Tatoeba TSV (its zh column) {STDIO_HELP}; default -")
    tr.add_argument("--output", default="-", help="English, one line per input line; default -")
    tr.add_argument("--tokenized", action="store_true", help="write tokenized (not detokenized) English")
    tr.add_argument("--format", default="text", choices=["text", "jsonl"])
    tr.add_argument("--lm", default=None, help="n-gram LM path, or 'none' (default: the model's own LM)")
    tr.add_argument("--beam-factor", type=positive_float, default=None, help="chart size k (k*n edges); default: the model's")
    tr.add_argument("--max-pops", type=positive_int, default=None, help="expansions L; default: the model's")
    tr.add_argument("--timeout", type=nonneg_float, default=0.0,
                    help="seconds per sentence of the search (0 = none; status timeout)")
    tr.add_argument("--max-memory", type=positive_float, default=None, metavar="MB",
                    help="search memory per sentence in MiB (default 1536); past it the search stops (status memory)")
    tr.add_argument("--beta", type=share, default=None, help="share of source words a goal covers, in (0, 1]; default: the model's")
    tr.add_argument("--max-length", type=positive_int, default=100, help="refuse longer sentences (source words)")
    tr.add_argument("--jobs", type=int, default=1)
    tr.add_argument("--quiet", action="store_true")
    tr.set_defaults(func=cmd_smt_translate)
    ev = ss.add_parser("evaluate", help="BLEU (sacrebleu, 13a) of detokenized output")
    ev.add_argument("--hyp", required=True, help=f"one sentence per line {STDIO_HELP}")
    ev.add_argument("--ref", required=True, help="references: a Tatoeba TSV of pairs (its en column is used) or one sentence per line")
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(func=cmd_smt_evaluate)

