"""``wo ccg train|linearize``: CCG word ordering (Zhang & Clark 2015, section 3)."""
from __future__ import annotations

import json
import os

from .common import EXIT_OK, STDIO_HELP, batch_options, batch_run, err, nonneg_float, positive_int, search_options, train_options


def cmd_ccg_train(a) -> int:
    """``wo ccg train``: Algorithm 3 training on CCGbank .auto derivations, best dev epoch saved."""
    from ..ccg.auto import error_lines, read_auto
    from ..ccg.train import train

    tr = read_auto(a.train)
    dv = read_auto(a.dev) if a.dev else []
    for msg in error_lines(a.train, tr) + (error_lines(a.dev, dv) if a.dev else []):
        err(f"{msg} (sentence skipped)")
    if a.dev_limit:
        dv = dv[:a.dev_limit]
    rec = train(tr, dv, a.epochs, a.model, hash_bits=a.hash_bits, beam_factor=a.beam_factor,
                train_budget_factor=a.train_budget, budget_factor=a.budget_factor, seed=a.seed,
                max_cats=a.max_cats, train_name=os.path.basename(a.train),
                dev_name=os.path.basename(a.dev or ""), lm=a.lm)
    print(json.dumps(rec, indent=1))
    return EXIT_OK


def cmd_ccg_linearize(a) -> int:
    """``wo ccg linearize``: batch CCG linearization (wo.ccg.linearizer.run)."""
    from ..ccg.linearizer import run
    from ..model import default_model

    a.model = a.model or default_model("ccg")
    opts = {"beam_factor": a.beam_factor, "budget_factor": a.budget_factor, "max_pops": a.budget,
            "timeout": a.timeout, "lm": a.lm, "complete_beam": a.complete_beam,
            "patience_factor": a.patience, "max_memory": a.max_memory, "bag_search": a.bag_search}
    return batch_run(a, lambda bar: run(
        a.model, a.input, a.output, input_format=a.input_format, output_format=a.format, seed=a.seed,
        jobs=a.jobs, on_error=a.on_error, max_length=a.max_length, backend=a.backend, scheduler=a.scheduler,
        progress=bar.update,
        report=lambda m: (bar.clear(), err(m)), **opts))


def register(sub) -> None:
    """Add the ``ccg`` verbs to the ``wo`` subparsers ``sub``."""
    from ..ccg.instance import DEFAULT_MAX_CATS
    from ..ccg.linearizer import DEFAULT_BUDGET_FACTOR as CCG_BUDGET

    ccg = sub.add_parser("ccg", help="CCG-based word ordering with DP-signature pruning (Zhang & Clark 2015, s. 3)")
    cs = ccg.add_subparsers(dest="verb", required=True, metavar="VERB")
    t = cs.add_parser("train", help="train a CCG model (Algorithm 3) on .auto derivations")
    train_options(t, "CCGbank .auto", 100.0, CCG_BUDGET,
                   "training pops per word (100: +1 BLEU over 30 on 2,000 sentences)")
    t.add_argument("--max-cats", type=int, default=DEFAULT_MAX_CATS,
                   help="lexical categories tried per word and POS (most frequent first)")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--lm", default=None, help="n-gram LM (binary or ARPA) whose scores become features")
    t.set_defaults(func=cmd_ccg_train)
    li = cs.add_parser("linearize", help="order the words of each input sentence with a CCG model")
    li.add_argument("--model", default=None, help="CCG model file (default: the shipped CCG model)")
    li.add_argument("--input", default="-",
                    help=f"input file {STDIO_HELP}, default -; each sentence is shuffled with --seed first")
    li.add_argument("--output", default="-", help=f"output file {STDIO_HELP}; default -")
    li.add_argument("--input-format", default=None, choices=["auto", "bag", "conllu"],
                    help="auto: CCGbank .auto derivations read as bags with POS; default: .auto when "
                         "the file starts with ID=, else bag/conllu by content")
    li.add_argument("--seed", type=int, default=1, help="shuffle seed")
    search_options(li)
    li.add_argument("--complete-beam", type=positive_int, default=None, help="beam of the completion phases")
    li.add_argument("--patience", type=nonneg_float, default=None,
                    help="pops per word spent after the first goal looking for a better one (default: model's)")
    batch_options(li, ["text", "jsonl", "auto"],
                  format_help="output: tokenized text, JSON lines, the derivation found (.auto)")
    li.add_argument("--max-length", type=positive_int, default=200, help="refuse longer sentences (memory bound)")
    li.add_argument("--lm", default=None, help="n-gram LM path, or 'none' (default: the model's own LM)")
    li.add_argument("--bag-search", default="model", choices=["model", "ccg"],
                    help="bags of words with no POS: the search the model names (the shipped model: GYRO's "
                         "n-best under the large English 4-gram, each string parsed by the CCG model), or the "
                         "model's own CCG search (default: model)")
    li.set_defaults(func=cmd_ccg_linearize)

