"""Command-line interface: ``wo train``, ``wo linearize``, ``wo evaluate``.

Exit codes: 0 success; 1 some sentences failed (their output line is the fallback, see
``--on-error``); 2 user error (bad arguments, unreadable or malformed input, bad model).
User errors print ``wo: file:line: message`` on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import List

EXIT_OK, EXIT_SOME_FAILED, EXIT_USER = 0, 1, 2


def _err(msg: str) -> None:
    print(f"wo: {msg}", file=sys.stderr)


def cmd_train(a) -> int:
    """``wo train``: Algorithm 3 training on CoNLL-U, best dev epoch saved to --model."""
    from .data import read_conllu
    from .train import train

    tr = read_conllu(a.train)
    dv = read_conllu(a.dev) if a.dev else []
    if a.dev_limit:
        dv = dv[:a.dev_limit]
    rec = train(tr, dv, a.epochs, a.model, hash_bits=a.hash_bits, beam_factor=a.beam_factor,
                train_budget_factor=a.train_budget, budget_factor=a.budget_factor, seed=a.seed,
                train_name=os.path.basename(a.train), dev_name=os.path.basename(a.dev or ""))
    print(json.dumps(rec, indent=1))
    return EXIT_OK


def cmd_linearize(a) -> int:
    """``wo linearize``: batch linearization (wo.batch.run) with a progress bar on stderr."""
    from tqdm import tqdm

    from .batch import FailFast, Interrupted, run

    opts = {"beam_factor": a.beam_factor, "budget_factor": a.budget_factor, "max_pops": a.budget,
            "timeout": a.timeout}
    bar = tqdm(unit="sent", disable=a.quiet, file=sys.stderr, dynamic_ncols=True)
    try:
        summ = run(a.model, a.input, a.output, input_format=a.input_format, output_format=a.format,
                   given=a.given, reveal_pos=a.reveal_pos, reveal_heads=a.reveal_heads, seed=a.seed,
                   jobs=a.jobs, on_error=a.on_error, max_length=a.max_length, backend=a.backend,
                   scheduler=a.scheduler, progress=bar.update,
                   report=lambda m: (bar.clear(), _err(m)), **opts)
    except Interrupted as exc:
        bar.close()
        _err(f"interrupted: {exc.done} sentences written to {a.output}")
        return 130
    except FailFast as exc:
        bar.close()
        _err(str(exc))
        return EXIT_USER
    bar.close()
    if not a.quiet:
        print(f"wo: {a.input} read as {summ.input_format}; {summ.sentences} sentences in "
              f"{summ.seconds:.2f}s ({summ.sentences_per_second:.1f} sentences/s), status {summ.status}",
              file=sys.stderr)
    return EXIT_SOME_FAILED if summ.failed else EXIT_OK


def _read_lines_or_conllu(path: str) -> List[str]:
    from .data import open_text, read_conllu

    with open_text(path) as fh:
        head = fh.read(4096)
    if "\t" in head and any(ln.split("\t")[0].isdigit() for ln in head.splitlines()):
        return [s.text() for s in read_conllu(path)]
    with open_text(path) as fh:
        return [ln.rstrip("\n") for ln in fh]


def cmd_evaluate(a) -> int:
    """``wo evaluate``: sacrebleu BLEU (tokenize none), exact match, words recovered."""
    from .evaluate import score

    hyps = _read_lines_or_conllu(a.hyp)
    refs = _read_lines_or_conllu(a.ref)
    if len(hyps) != len(refs):
        _err(f"{a.hyp}: {len(hyps)} sentences but {a.ref} has {len(refs)}")
        return EXIT_USER
    sc = score(hyps, refs)
    if a.json:
        print(json.dumps(sc.__dict__))
    else:
        print(sc)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``wo`` command (train, linearize, evaluate)."""
    from .linearizer import DEFAULT_BUDGET_FACTOR

    p = argparse.ArgumentParser(prog="wo", description="Word ordering (text linearization).")
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="train a model (Zhang & Clark 2015, Algorithm 3)")
    t.add_argument("--train", required=True, help="training CoNLL-U (.xz ok)")
    t.add_argument("--dev", help="dev CoNLL-U for per-epoch BLEU (best epoch is kept)")
    t.add_argument("--dev-limit", type=int, default=0, help="use only the first N dev sentences")
    t.add_argument("--epochs", type=int, default=5)
    t.add_argument("--model", required=True, help="output model file")
    t.add_argument("--beam-factor", type=float, default=4.0, help="chart size k*n during training")
    t.add_argument("--hash-bits", type=int, default=22, help="weight table of 2^b float32")
    t.add_argument("--train-budget", type=float, default=30.0, help="training pops per word")
    t.add_argument("--budget-factor", type=float, default=DEFAULT_BUDGET_FACTOR,
                   help="default decoding pops per word stored in the model")
    t.add_argument("--seed", type=int, default=1)
    t.set_defaults(func=cmd_train)

    li = sub.add_parser("linearize", help="order the words of each input sentence")
    li.add_argument("--model", required=True)
    li.add_argument("--input", required=True, help="input file; each sentence is shuffled with --seed first")
    li.add_argument("--output", required=True)
    li.add_argument("--given", default="none", choices=["none", "pos", "heads", "full"],
                    help="which columns are trusted constraints (none = bag of words: forms only)")
    li.add_argument("--reveal-pos", type=float, default=1.0, help="share of given POS kept")
    li.add_argument("--reveal-heads", type=float, default=1.0, help="share of given heads kept")
    li.add_argument("--seed", type=int, default=1, help="shuffle / reveal seed")
    li.add_argument("--budget", type=int, default=None, help="pop budget per sentence (pops)")
    li.add_argument("--budget-factor", type=float, default=None, help="pop budget in pops per word")
    li.add_argument("--beam-factor", type=float, default=None, help="chart size k*n")
    li.add_argument("--timeout", type=float, default=0.0, help="seconds per sentence (0 = none)")
    li.add_argument("--jobs", type=int, default=1, help="parallel processes (joblib)")
    li.add_argument("--format", default="text", choices=["text", "detok", "conllu", "jsonl"],
                    help="output: tokenized text, detokenized text, CoNLL-U, JSON lines")
    li.add_argument("--input-format", default="auto", choices=["auto", "conllu", "bag", "zgen"])
    li.add_argument("--on-error", default="fallback", choices=["fallback", "skip", "fail"],
                    help="output of a failed sentence: its words in input order, an empty line, or stop")
    li.add_argument("--max-length", type=int, default=200, help="refuse longer sentences (memory bound)")
    li.add_argument("--backend", default="loky", choices=["loky", "dask"])
    li.add_argument("--scheduler", default=None, help="Dask scheduler address for --backend dask")
    li.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    li.set_defaults(func=cmd_linearize)

    e = sub.add_parser("evaluate", help="BLEU (sacrebleu, tokenize none), exact match, words recovered")
    e.add_argument("--hyp", required=True, help="one tokenized sentence per line")
    e.add_argument("--ref", required=True, help="CoNLL-U or one tokenized sentence per line")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_evaluate)
    return p


def main(argv=None) -> int:
    """Entry point of the ``wo`` console script; returns the exit code (0, 1, 2 or 130)."""
    from .data import InputError
    from .model import ModelError

    args = build_parser().parse_args(argv)
    for name in ("reveal_pos", "reveal_heads"):
        v = getattr(args, name, None)
        if v is not None and not 0.0 <= v <= 1.0:
            _err(f"--{name.replace('_', '-')} must be in [0, 1]")
            return EXIT_USER
    if getattr(args, "jobs", 1) < 1:
        _err("--jobs must be >= 1")
        return EXIT_USER
    try:
        return args.func(args)
    except (InputError, ModelError) as exc:
        _err(str(exc))
        return EXIT_USER
    except FileNotFoundError as exc:
        _err(f"{exc.filename}: no such file")
        return EXIT_USER
    except UnicodeDecodeError as exc:
        _err(f"invalid UTF-8 input ({exc.reason} at byte {exc.start})")
        return EXIT_USER
    except KeyboardInterrupt:
        _err("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
