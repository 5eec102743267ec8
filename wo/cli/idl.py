"""``wo idl realize``: IDL-expressions intersected with an n-gram LM (Soricut & Marcu 2005)."""
from __future__ import annotations

from ..idl.realize import DEFAULT_MAX_MEMORY, DEFAULT_TIMEOUT
from .common import EXIT_USER, STDIO_HELP, batch_options, batch_run, err, nonneg_float


def cmd_idl_realize(a) -> int:
    """``wo idl realize``: IDL-expressions or bags intersected with an n-gram LM, on the batch
    spine (:func:`wo.idl.realize.run`)."""
    from ..idl.realize import run

    opts = dict(algorithm=a.algorithm, k=a.k, beam=a.beam, max_states=a.max_states, timeout=a.timeout,
                count_unfolding=not a.no_count, max_memory=a.max_memory)
    try:
        return batch_run(a, lambda bar: run(
            a.lm, a.input, a.output, input_format=a.input_format, output_format=a.format, jobs=a.jobs,
            on_error=a.on_error, backend=a.backend, scheduler=a.scheduler, report=lambda m: (bar.clear(), err(m)),
            progress=bar.update, **opts), unit="expressions" if a.input_format == "idl" else "bags")
    except ValueError as exc:
        err(str(exc))
        return EXIT_USER


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
    r.add_argument("--timeout", type=nonneg_float, default=DEFAULT_TIMEOUT,
                   help="seconds per expression (0 = none); past it the greedy completion (status timeout)")
    r.add_argument("--max-memory", type=nonneg_float, default=DEFAULT_MAX_MEMORY, metavar="MB",
                   help="search memory per expression in MiB (0 = none); past it the best or greedily completed "
                        "path (status max-states)")
    r.add_argument("--no-count", action="store_true", help="do not count the full unfolding")
    batch_options(r, fallback="an empty line (an expression that cannot be read has no words)",
                  format_help="output: the realisation, or JSON lines (one object per line: text, tokens, score, "
                              "status, seconds, pops, message, log10_prob, states, full_unfolding, "
                              "full_unfolding_exact, search_seconds)")
    r.set_defaults(func=cmd_idl_realize)

