"""``wo idl realize``: IDL-expressions intersected with an n-gram LM (Soricut & Marcu 2005)."""
from __future__ import annotations

import sys

from ..io.text import display_name
from .common import EXIT_OK, EXIT_SOME_FAILED, EXIT_USER, STDIO_HELP, err, nonneg_float, progress_bar


def cmd_idl_realize(a) -> int:
    """``wo idl realize``: IDL-expressions or bags intersected with an n-gram LM."""
    from ..idl.realize import run

    bar = progress_bar(a.quiet)
    opts = dict(algorithm=a.algorithm, k=a.k, beam=a.beam, max_states=a.max_states, timeout=a.timeout,
                count_unfolding=not a.no_count)
    try:
        summ = run(a.lm, a.input, a.output, input_format=a.input_format, output_format=a.format,
                   jobs=a.jobs, report=lambda m: (bar.clear(), err(m)), progress=bar.update, **opts)
    except ValueError as exc:
        bar.close()
        err(str(exc))
        return EXIT_USER
    bar.close()
    if not a.quiet:
        print(f"wo: {display_name(a.input)}: {summ.sentences} expressions in {summ.seconds:.2f}s "
              f"({summ.sentences_per_second:.1f}/s), status {summ.status}", file=sys.stderr)
    return EXIT_SOME_FAILED if summ.failed else EXIT_OK


def register(sub) -> None:
    """Add the ``idl`` verbs to the ``wo`` subparsers ``sub``."""
    idl = sub.add_parser("idl", help="IDL-expressions intersected with an n-gram LM (Soricut & Marcu 2005)")
    isub = idl.add_subparsers(dest="verb", required=True, metavar="VERB")
    r = isub.add_parser("realize", help="the most probable string of each IDL-expression (or bag)")
    r.add_argument("--lm", default=None, help="n-gram LM (wo binary or ARPA; default: the shipped English 4-gram, "
                                              "corpora/models/wo-en-4gram.wolm)")
    r.add_argument("--input", default="-", help=f"one expression (or bag) per line {STDIO_HELP}; default -")
    r.add_argument("--output", default="-", help=f"one record per input line {STDIO_HELP}; default -")
    r.add_argument("--input-format", default="idl", choices=["idl", "bag"],
                   help="idl: C/I/D/L expressions (see wo.idl.expr); bag: space-separated words")
    r.add_argument("--algorithm", default="astar", choices=["astar", "greedy-astar", "beam", "bfs"])
    r.add_argument("--k", type=int, default=5, help="greedy-astar: unfold only paths within K tokens of the longest")
    r.add_argument("--beam", type=float, default=0.1, help="beam: probability beam p in (0, 1]")
    r.add_argument("--max-states", type=int, default=1_000_000,
                   help="bound on the states created per expression (memory); then the best "
                   "completed or greedily completed path is returned")
    r.add_argument("--timeout", type=nonneg_float, default=0.0, help="seconds per expression (0 = none)")
    r.add_argument("--no-count", action="store_true", help="do not count the full unfolding")
    r.add_argument("--jobs", type=int, default=1)
    r.add_argument("--format", default="text", choices=["text", "jsonl"])
    r.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    r.set_defaults(func=cmd_idl_realize)

