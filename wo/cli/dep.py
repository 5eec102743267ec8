"""``wo dep train|linearize`` and their aliases ``wo train`` / ``wo linearize``: the dependency word orderer (Zhang & Clark 2015)."""
from __future__ import annotations

import argparse

import json
import os

from .common import (EXIT_OK, EXIT_USER, STDIO_HELP, batch_options, batch_run, err, finite_float, nonneg_float,
                     positive_int, search_options, train_options)


def cmd_train(a) -> int:
    """``wo dep train``: Algorithm 3 training on CoNLL-U, best dev epoch saved to --model."""
    from ..dep.train import train
    from ..io.conllu import read_conllu

    tr = read_conllu(a.train)
    dv = read_conllu(a.dev) if a.dev else []
    if a.dev_limit:
        dv = dv[:a.dev_limit]
    rec = train(tr, dv, a.epochs, a.model, hash_bits=a.hash_bits, beam_factor=a.beam_factor,
                train_budget_factor=a.train_budget, budget_factor=a.budget_factor, seed=a.seed,
                train_name=os.path.basename(a.train), dev_name=os.path.basename(a.dev or ""), lm=a.lm,
                lm_folds=a.lm_folds, given=a.train_given, dev_given=a.dev_given,
                question_labels=a.question_labels)
    print(json.dumps(rec, indent=1))
    return EXIT_OK


def _weighted_paths(specs, option: str, what: str, default: float) -> tuple:
    """((path, weight), ...) of PATH[:WEIGHT] specs (``default`` weight without one).
    Raises ValueError naming the option for a bad weight or a missing file."""
    out = []
    for spec in specs:
        path, w = spec, default
        head, sep, tail = spec.rpartition(":")
        if sep and not os.path.exists(spec):
            try:
                path, w = head, float(tail)
            except ValueError:
                raise ValueError(f"{option} {spec}: expected PATH or PATH:WEIGHT") from None
        if not os.path.exists(path):
            raise ValueError(f"{path}: no such {what} file ({option})")
        out.append((path, float(w)))
    return tuple(out)


def cmd_linearize(a) -> int:
    """``wo dep linearize``: batch linearization (wo.dep.run) with a progress bar on stderr."""
    from ..dep.linearizer import run
    from ..model import default_model

    a.model = a.model or default_model("dep")

    opts = {"beam_factor": a.beam_factor, "budget_factor": a.budget_factor, "max_pops": a.budget,
            "timeout": a.timeout, "patience_factor": a.patience, "lm": a.lm, "max_memory": a.max_memory,
            "bag_search": a.bag_search}
    if a.tree_rerank is not None:
        opts["tree_rerank"] = a.tree_rerank
    try:
        if a.rerank_lm:
            opts["rerank_lms"] = _weighted_paths(a.rerank_lm, "--rerank-lm", "LM", a.rerank_weight)
        if a.rerank_model:
            opts["rerank_models"] = _weighted_paths(a.rerank_model, "--rerank-model", "model", 1.0)
    except ValueError as exc:
        err(str(exc))
        return EXIT_USER
    return batch_run(a, lambda bar: run(
        a.model, a.input, a.output, input_format=a.input_format, output_format=a.format, given=a.given,
        reveal_pos=a.reveal_pos, reveal_heads=a.reveal_heads, seed=a.seed, jobs=a.jobs, on_error=a.on_error,
        max_length=a.max_length, backend=a.backend, scheduler=a.scheduler, progress=bar.update,
        report=lambda m: (bar.clear(), err(m)), **opts))


def _add_dep_train(sub, name: str, help_: str) -> None:
    from ..dep.linearizer import DEFAULT_BUDGET_FACTOR

    t = sub.add_parser(name, help=help_)
    train_options(t, "CoNLL-U", 30.0, DEFAULT_BUDGET_FACTOR, "training pops per word")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--lm", default=None, help="n-gram LM (binary or ARPA) whose scores become features")
    t.add_argument("--lm-folds", nargs="+", default=None, metavar="LM",
                   help="K jackknifed LMs: the k-th of K contiguous blocks of --train trains with "
                        "the k-th LM, estimated without that block (bench/jackknife_lms.py builds them)")
    t.add_argument("--train-given", default="none", choices=["none", "full", "mixed"],
                   help="input condition of the training instances: bags of words (default), full "
                        "unordered trees with POS, or every sentence as both")
    t.add_argument("--dev-given", default=None, choices=["none", "full", "both"],
                   help="dev condition the best epoch is chosen on (default: full for --train-given "
                        "full, else none; both = the mean of bag and tree BLEU)")
    t.add_argument("--question-labels", action="store_true",
                   help="label every token of an input with a question mark, so question order is "
                        "learned apart (measured on EWT dev: no gain for this model; SR uses it)")
    t.set_defaults(func=cmd_train)


def _add_dep_linearize(sub, name: str, help_: str) -> None:
    from ..dep.linearizer import DEFAULT_RERANK_WEIGHT

    li = sub.add_parser(name, help=help_)
    li.add_argument("--model", default=None, help="model file (default: the shipped dependency model)")
    li.add_argument("--input", default="-",
                    help=f"input file {STDIO_HELP}, default -; each sentence is shuffled with --seed first")
    li.add_argument("--output", default="-", help=f"output file {STDIO_HELP}; default -")
    li.add_argument("--given", default="none", choices=["none", "pos", "heads", "full"],
                    help="which columns are trusted constraints (none = bag of words: forms only)")
    li.add_argument("--reveal-pos", type=float, default=1.0, help="share of given POS kept")
    li.add_argument("--reveal-heads", type=float, default=1.0, help="share of given heads kept")
    li.add_argument("--seed", type=int, default=1, help="shuffle / reveal seed")
    search_options(li)
    li.add_argument("--patience", type=nonneg_float, default=None,
                    help="pops per word spent after the first goal looking for a better one (default: model's)")
    batch_options(li, ["text", "jsonl", "detok", "conllu"],
                  format_help="output: tokenized text, JSON lines, detokenized text, CoNLL-U")
    li.add_argument("--input-format", default="auto", choices=["auto", "conllu", "bag", "zgen"])
    li.add_argument("--max-length", type=positive_int, default=200, help="refuse longer sentences (memory bound)")
    li.add_argument("--lm", default=None, help="n-gram LM path, or 'none' (default: the model's own LM)")
    li.add_argument("--rerank-lm", nargs="+", default=None, metavar="PATH[:WEIGHT]",
                    help="rerank the popped goal edges (the n-best; hundreds for full trees) by the model score "
                         "plus weight x each LM's log10 p, e.g. a larger LM than the model's own; an LM "
                         "estimated with 'wo lm train --conllu --view V' scores the POS or the dependents "
                         "of each head (a dependency LM) instead of the words")
    li.add_argument("--rerank-weight", type=finite_float, default=DEFAULT_RERANK_WEIGHT,
                    help="weight of a --rerank-lm given without one (chosen on EWT dev trees)")
    li.add_argument("--bag-search", default="model", choices=["model", "dep"],
                    help="bags (forms only): the search the model names (the shipped model: GYRO's n-best under "
                         "the large English 4-gram, reranked by the model), or the model's own dependency search")
    li.add_argument("--tree-rerank", action=argparse.BooleanOptionalAction, default=None,
                    help="rerank tree inputs (most heads given) with the rerankers the model names "
                         "(decode.tree_rerank; default: as the model says; the shipped model: on, with the large "
                         "4-gram and three dependency/POS LMs of EWT trees)")
    li.add_argument("--rerank-model", nargs="+", default=None, metavar="PATH:WEIGHT",
                    help="other word-ordering models whose weighted scores of each candidate (its string and "
                         "tree) are added when reranking the popped goals (an ensemble)")
    li.set_defaults(func=cmd_linearize)



def register(sub) -> None:
    """Add the ``dep`` verb group to the ``wo`` subparsers ``sub``."""
    dep = sub.add_parser("dep", help="dependency-based word ordering (Zhang & Clark 2015)")
    ds = dep.add_subparsers(dest="verb", required=True, metavar="VERB")
    _add_dep_train(ds, "train", "train a model (Algorithm 3)")
    _add_dep_linearize(ds, "linearize", "order the words of each input sentence")


def register_aliases(sub) -> None:
    """Add ``wo train`` and ``wo linearize``, the aliases of the ``dep`` verbs."""
    _add_dep_train(sub, "train", "alias of 'wo dep train'")
    _add_dep_linearize(sub, "linearize", "alias of 'wo dep linearize'")
