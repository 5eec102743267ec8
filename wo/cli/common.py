"""What every verb module of :mod:`wo.cli` shares: exit codes, the number types of argparse
options, the help formatter that shows defaults, the progress bar, one-line errors and the batch
runner (progress, summary, Ctrl-C and ``--on-error fail`` of every decoding verb)."""
from __future__ import annotations

import argparse
import sys

from ..checks import RULES
from ..io.text import display_name

EXIT_OK, EXIT_SOME_FAILED, EXIT_USER = 0, 1, 2
EXIT_INTERRUPTED = 130


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """``--help`` with each option's default: "(default: X)" is added to the help of an option
    whose default is neither None nor False nor empty and whose help does not already name its
    default (options without help get the default alone)."""

    @staticmethod
    def _shown(action):
        """The default as shown, or None when it is not shown."""
        d = action.default
        if (d is None or d is False or d is argparse.SUPPRESS or not action.option_strings
                or isinstance(action, (argparse._HelpAction, argparse._VersionAction))):
            return None
        d = " ".join(map(str, d)) if isinstance(d, (list, tuple)) else str(d)
        return d or None

    def _format_action(self, action):
        if not (action.help and action.help.strip()) and self._shown(action) is not None:
            import copy

            action = copy.copy(action)
            action.help = f"(default: {self._shown(action).replace('%', '%%')})"
        return super()._format_action(action)

    def _get_help_string(self, action):
        text = action.help or ""
        shown = self._shown(action)
        if shown is None or "default" in text:
            return text
        return f"{text} (default: {shown.replace('%', '%%')})"


class Parser(argparse.ArgumentParser):
    """The ``wo`` argument parser: every subparser made from it is a Parser too (argparse's
    ``add_subparsers`` makes them of the parent's class), so all show their defaults."""

    def __init__(self, *args, **kw):
        kw.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(*args, **kw)


def number_type(cast, ok, what):
    """An argparse type: ``cast`` the text and check it with ``ok``; else a one-line usage error."""
    def parse(text: str):
        try:
            v = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not ok(v) or v != v:
            raise argparse.ArgumentTypeError(f"{text!r}: must be {what}")
        return v
    parse.__name__ = cast.__name__
    return parse


# one rule per kind of number, shared with the settings of model headers and decode.json files
# (wo.checks.RULES, wo.model.check_decode): an option and its setting are refused alike
positive_int = number_type(*RULES["positive_int"])
nonneg_int = number_type(*RULES["nonneg_int"])
positive_float = number_type(*RULES["positive_float"])
nonneg_float = number_type(*RULES["nonneg_float"])
finite_float = number_type(*RULES["finite_float"])
share = number_type(*RULES["share"])
hash_bits = number_type(*RULES["hash_bits"])


class _NoBar:
    """The progress bar's stand-in when none shows (``--quiet``, or stderr not a terminal):
    tqdm's methods the batch calls, doing nothing, so that tqdm is not imported (0.02-0.08 s of
    a short run's start)."""

    total = None

    def update(self, n: int = 1) -> None:
        pass

    def refresh(self) -> None:
        pass

    def clear(self) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(quiet: bool, **kw):
    """A tqdm progress bar on stderr, shown only when stderr is a terminal and not ``--quiet``
    (else a :class:`_NoBar`)."""
    if quiet or not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(unit="sent", file=sys.stderr,
                dynamic_ncols=True, **kw)   # the total (percentage, ETA) once the input is read: batch.announce_total


def err(msg: str) -> None:
    """Print ``wo: msg`` on stderr (the one-line form of every user-facing message)."""
    print(f"wo: {msg}", file=sys.stderr)


def batch_run(a, go, unit: str = "sentences") -> int:
    """Run a batch (``go(bar)`` returns its Summary) with a progress bar; Ctrl-C, fail-fast and
    the closing summary (``unit``: what the input items are called in it) are handled here
    (exit codes: 0 ok, 1 some failed, 2 user error, 130)."""
    from ..io.batch import FailFast, Interrupted

    bar = progress_bar(a.quiet)
    try:
        summ = go(bar)
    except Interrupted as exc:
        bar.close()
        err(str(exc))                         # how many records were kept, or that nothing was written
        return EXIT_INTERRUPTED if exc.reason == "interrupted" else EXIT_SOME_FAILED   # lost Dask workers: 1
    except FailFast as exc:
        bar.close()
        err(str(exc))
        return EXIT_USER
    except BaseException:
        bar.close()                            # the caller or main reports it
        raise
    bar.close()
    if not a.quiet:
        print(f"wo: {display_name(a.input)} read as {summ.input_format}; {summ.sentences} {unit} in "
              f"{summ.seconds:.2f}s ({summ.sentences_per_second:.1f} {unit}/s), status {summ.status}",
              file=sys.stderr)
    return EXIT_SOME_FAILED if summ.failed else EXIT_OK


STDIO_HELP = "('-' = standard input/output)"

BATCH_FORMATS = ("text", "jsonl")


def batch_options(p, formats=BATCH_FORMATS, default_format: str = "text", format_help: str = "",
                  fallback: str = "its words in input order", skip: str = "an empty line") -> None:
    """The batch options every decoding verb shares, declared once on its parser ``p``, with the
    same names, defaults and help text (the shared batch spine, :mod:`wo.io.batch`, runs them):
    --jobs (worker processes, default 1), --on-error fallback|skip|fail (default fallback; the
    help names the verb's ``fallback`` and ``skip`` records), --format (``formats``: text and
    jsonl first, then the system's own; default ``default_format``; ``format_help`` describes
    them), --backend loky|dask, --scheduler ADDR and --quiet.  Raises ValueError when
    ``formats`` lacks text or jsonl (every verb writes both)."""
    formats = list(formats)
    if "text" not in formats or "jsonl" not in formats:
        raise ValueError(f"batch formats must include text and jsonl, got {formats}")
    p.add_argument("--jobs", type=int, default=1,
                   help="parallel worker processes, as joblib counts them: -1 every core, -2 all but one; "
                        "at most the cores (more are capped, with a note)")
    p.add_argument("--on-error", default="fallback", choices=["fallback", "skip", "fail"],
                   help=f"record of an input that fails: {fallback} (fallback), {skip} (skip; jsonl keeps "
                        f"the record with status error), or stop with nothing written (fail)")
    p.add_argument("--format", default=default_format, choices=formats,
                   help=format_help or "output: text, or JSON lines (one object per input: tokens, score, "
                                       "status, seconds, pops, message and the system's own fields)")
    p.add_argument("--backend", default="loky", choices=["loky", "dask"],
                   help="where the workers run: local processes (loky) or a Dask cluster")
    p.add_argument("--scheduler", default=None, metavar="ADDR",
                   help="Dask scheduler address for --backend dask, e.g. tcp://127.0.0.1:8786 "
                        "(default: an in-process cluster)")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.set_defaults(output_files=("output",))   # checked before the model loads (wo.cli.main)


def search_options(li) -> None:
    """The search core's decoding bounds on a linearize parser (dep and CCG): --budget (pops per
    sentence), --budget-factor (pops per word), --beam-factor (chart k*n), --timeout (seconds per
    sentence), --max-memory (MiB per sentence)."""
    li.add_argument("--budget", type=positive_int, default=None, help="pop budget per sentence (pops)")
    li.add_argument("--budget-factor", type=positive_float, default=None, help="pop budget in pops per word")
    li.add_argument("--beam-factor", type=positive_float, default=None, help="chart size k*n")
    li.add_argument("--timeout", type=nonneg_float, default=0.0, help="seconds per sentence (0 = none)")
    li.add_argument("--max-memory", type=positive_float, default=None, metavar="MB",
                    help="search memory per sentence in MiB (default 1536: a worker stays under ~2 GB); past it "
                         "the search stops with what it has (status memory)")


def train_options(t, fmt: str, train_budget: float, budget: float, train_budget_help: str) -> None:
    """The options every Algorithm-3 trainer shares (``wo dep train``, ``wo ccg train``)."""
    t.add_argument("--train", required=True, help=f"training {fmt} (.xz ok)")
    t.add_argument("--dev", help=f"dev {fmt} for per-epoch BLEU (best epoch is kept)")
    t.add_argument("--dev-limit", type=nonneg_int, default=0, help="use only the first N dev sentences (0: all)")
    t.add_argument("--epochs", type=positive_int, default=5)
    t.add_argument("--model", required=True, help="output model file")
    # checked before the verb runs (wo.cli.main)
    t.set_defaults(output_files=("model",), input_files=("train", "dev", "lm", "lm_folds"))
    t.add_argument("--beam-factor", type=positive_float, default=4.0, help="chart size k*n during training")
    t.add_argument("--hash-bits", type=hash_bits, default=22, help="weight table of 2^b float32 (8..30)")
    t.add_argument("--train-budget", type=positive_float, default=train_budget, help=train_budget_help)
    t.add_argument("--budget-factor", type=positive_float, default=budget,
                   help="default decoding pops per word stored in the model")

