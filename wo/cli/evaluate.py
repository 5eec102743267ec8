"""``wo evaluate``: BLEU (sacrebleu), exact match and words recovered of tokenized outputs."""
from __future__ import annotations

import json

from .common import EXIT_OK, EXIT_USER, STDIO_HELP, err


def cmd_evaluate(a) -> int:
    """``wo evaluate``: sacrebleu BLEU (tokenize none), exact match, words recovered."""
    from ..eval.metrics import read_sentences, score

    hyps = read_sentences(a.hyp)
    refs = read_sentences(a.ref)
    if len(hyps) != len(refs):
        err(f"{a.hyp}: {len(hyps)} sentences but {a.ref} has {len(refs)}")
        return EXIT_USER
    sc = score(hyps, refs, tokenize=a.tokenize)
    if a.json:
        print(json.dumps(sc.__dict__))
    else:
        print(sc)
    return EXIT_OK



def register(sub) -> None:
    """Add ``wo evaluate`` to the ``wo`` subparsers ``sub``."""
    e = sub.add_parser("evaluate", help="BLEU (sacrebleu, tokenize none), exact match, words recovered")
    e.add_argument("--hyp", required=True, help=f"one tokenized sentence per line {STDIO_HELP}")
    e.add_argument("--ref", required=True, help="CoNLL-U or one tokenized sentence per line")
    e.add_argument("--tokenize", default="none", choices=["none", "13a", "intl", "zh", "char"],
                   help="sacrebleu tokenizer: none (tokens given, word ordering; default) or 13a "
                        "(detokenized MT output, e.g. wo smt translate)")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_evaluate)
