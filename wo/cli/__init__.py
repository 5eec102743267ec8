"""Command-line interface: ``wo <system> <verb>`` (``wo dep train|linearize``,
``wo ccg train|linearize``, ``wo sr ...``, ``wo lm train|tokenize|convert|score``,
``wo idl realize``, ``wo gyro index|lookup|realize``, ``wo smt train|translate|evaluate|train-parser``),
``wo evaluate`` and ``wo models`` (:mod:`wo.resources`); ``wo train`` and ``wo linearize`` are aliases of the ``dep`` verbs.  Every file
argument accepts ``-`` for standard input/output; ``--output`` defaults to standard output and
``--model`` to the system's shipped model.  Progress bars and summaries go to stderr.

One module per system adds its verbs (``register(sub)``: :mod:`wo.cli.dep`, :mod:`wo.cli.ccg`,
:mod:`wo.cli.sr`, :mod:`wo.cli.lm`, :mod:`wo.cli.idl`, :mod:`wo.cli.gyro`, :mod:`wo.cli.smt`,
:mod:`wo.cli.evaluate`); :mod:`wo.cli.common` holds what they share.

Exit codes: 0 success; 1 some sentences failed (their output line is the fallback, see
``--on-error``); 2 user error (bad arguments, unreadable or malformed input, bad model, an output
that is an input); 130 interrupted; 143 terminated (SIGTERM: temporary files removed, workers
ended).  User errors print ``wo: file:line: message`` on stderr, never a traceback.
"""
from __future__ import annotations

import os
import sys

from ..resources import add_models_command
from . import ccg, dep, evaluate, gyro, idl, lm, smt, sr
from .common import EXIT_INTERRUPTED, EXIT_OK, EXIT_SOME_FAILED, EXIT_USER, Parser, err

__all__ = ["EXIT_INTERRUPTED", "EXIT_OK", "EXIT_SOME_FAILED", "EXIT_USER", "build_parser", "main"]


GROUPS = {"ccg": ccg, "sr": sr, "lm": lm, "idl": idl, "gyro": gyro, "smt": smt}   # register() adds one group


def build_parser(only: str = None) -> Parser:
    """The argparse parser of the ``wo`` command: ``wo <system> <verb>``, ``wo evaluate``, aliases.
    Every parser shows its options' defaults in ``--help``.  ``only``: a key of GROUPS, whose
    command alone is added (``main`` passes the first argument: ``wo lm score`` need not import
    the decoders whose defaults the other groups' options show)."""
    from .. import __version__

    p = Parser(prog="wo", description="Word ordering (text linearization): "
               "wo <system> <verb> [options]; '-' means standard input/output.")
    p.add_argument("--version", action="version", version=f"wo {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    if only in GROUPS:
        GROUPS[only].register(sub)
        return p
    dep.register(sub)
    ccg.register(sub)
    sr.register(sub)
    lm.register(sub)
    idl.register(sub)
    gyro.register(sub)
    smt.register(sub)
    evaluate.register(sub)
    add_models_command(sub)
    dep.register_aliases(sub)
    return p


def main(argv=None) -> int:
    """Entry point of the ``wo`` console script; returns the exit code (0, 1, 2, 130, or 143
    after SIGTERM).  SIGTERM (``kill``, a batch scheduler, a container stop) is a clean exit:
    the temporary output files are removed, the worker processes ended, one line on stderr,
    exit 143 (:mod:`wo.io.outputs`)."""
    from ..io.outputs import EXIT_TERMINATED, Terminated, end_workers, remove_temps, restore_sigterm, sigterm_as_exit

    state = sigterm_as_exit()
    try:
        return _main(argv)
    except Terminated:
        remove_temps()
        end_workers()
        err("terminated (SIGTERM): temporary files removed, worker processes stopped")
        return EXIT_TERMINATED
    finally:
        restore_sigterm(state)


def _user_paths(args):
    """(outputs, inputs) of a parsed command: the output options (``output_files`` and a
    ``--tok`` twin) and every other option naming a file (a string or a list of strings);
    :func:`wo.io.outputs.check_distinct` refuses an output that is one of them."""
    outs = list(getattr(args, "output_files", ()))
    if getattr(args, "tok", None) is not None and "tok" not in outs:
        outs.append("tok")
    outputs = [getattr(args, d, None) for d in outs]
    inputs = []
    for dest, v in vars(args).items():
        if dest in outs or dest in ("func", "output_files", "input_files", "cmd"):
            continue
        for x in v if isinstance(v, (list, tuple)) else [v]:
            if isinstance(x, (str, os.PathLike)):
                inputs.append(x)
    return outputs, inputs


def _resolve_jobs(args) -> None:
    """``--jobs`` as joblib counts it (-1 every core, -2 all but one), capped at the cores with
    a one-line note (not with --quiet) for local processes.  Raises ValueError (0)."""
    from ..io.batch import resolve_jobs

    jobs = getattr(args, "jobs", None)
    if jobs is None:
        return
    if jobs == 0:
        raise ValueError("--jobs 0: give 1 or more worker processes, or -1 for every core (-2 for all but one, "
                         "as in joblib)")
    if getattr(args, "backend", "loky") == "loky" or jobs < 0:   # a Dask cluster has its own workers
        quiet = getattr(args, "quiet", False)
        args.jobs = resolve_jobs(jobs, note=None if quiet else err)


def _main(argv=None) -> int:
    """:func:`main` without the SIGTERM handler."""
    from ..io.batch import Interrupted
    from ..io.outputs import SameFileError, check_distinct
    from ..io.text import InputError, check_input_path, check_output_path
    from ..lm.files import LMError
    from ..model import ModelError

    try:
        argv = sys.argv[1:] if argv is None else [str(x) for x in argv]
        args = build_parser(argv[0] if argv else None).parse_args(argv)
    except KeyboardInterrupt:          # Ctrl-C while the verbs' modules are imported
        err("interrupted")
        return EXIT_INTERRUPTED
    for name in ("reveal_pos", "reveal_heads"):
        v = getattr(args, name, None)
        if v is not None and not 0.0 <= v <= 1.0:
            err(f"--{name.replace('_', '-')} must be in [0, 1]")
            return EXIT_USER
    try:
        _resolve_jobs(args)
        _check_backend(args)
        check_distinct(*_user_paths(args))           # an output that is an input: before any work
    except ValueError as exc:
        err(str(exc))
        return EXIT_USER
    try:
        for dest in getattr(args, "input_files", ()):    # before the first of them is read
            v = getattr(args, dest, None)
            for path in v if isinstance(v, (list, tuple)) else [v]:
                check_input_path(path)
        for dest in getattr(args, "output_files", ()):   # before hours of training or decoding
            check_output_path(getattr(args, dest, None))
        return args.func(args)
    except (InputError, ModelError, LMError, SameFileError) as exc:
        err(str(exc))
        return EXIT_USER
    except FileNotFoundError as exc:
        err(f"{exc.filename}: no such file")
        return EXIT_USER
    except UnicodeDecodeError as exc:
        err(f"invalid UTF-8 input ({exc.reason} at byte {exc.start})")
        return EXIT_USER
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_INTERRUPTED
    except MemoryError as exc:   # a table or a batch larger than this machine's memory
        what = str(exc).strip()
        err(f"out of memory{': ' + what if what else ''} (smaller --hash-bits, fewer --jobs or a smaller input "
            "may fit)")
        return EXIT_USER
    except Interrupted as exc:   # a batch run outside batch_run (the Python API through main)
        err(str(exc))
        return EXIT_INTERRUPTED
    except BrokenPipeError:   # the reader of standard output went away (`wo ... | head`)
        _stdout_gone()
        err("standard output closed early (broken pipe)")
        return EXIT_USER
    except OSError as exc:    # a directory given as a file, no permission, a full disk, ...
        name = exc.filename2 if exc.filename2 is not None else exc.filename   # a rename: the user's path
        err(f"{name}: {exc.strerror}" if name is not None else (exc.strerror or str(exc)))
        return EXIT_USER


def _check_backend(args) -> None:
    """``--scheduler`` only with ``--backend dask``, and dask's extra, the address and the
    scheduler's answer checked before any work (:func:`wo.io.batch.check_dask`,
    :func:`wo.io.batch.probe_scheduler`).  Raises ValueError (one line)."""
    backend, sched = getattr(args, "backend", None), getattr(args, "scheduler", None)
    if sched and backend != "dask":
        raise ValueError(f"--scheduler {sched} needs --backend dask (without it, wo runs local processes)")
    if backend == "dask":
        from ..extras import require
        from ..io.batch import DASK_CONNECT_TIMEOUT, check_dask, probe_scheduler

        require("dask", "--backend dask", ["dask", "distributed"])
        check_dask(sched)
        if sched:   # a scheduler that does not answer: one line in seconds, before the model loads
            probe_scheduler(sched, DASK_CONNECT_TIMEOUT)


def _stdout_gone() -> None:
    """Point standard output at /dev/null, so the interpreter's final flush of a closed pipe
    raises nothing more (the Python documentation's recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass

