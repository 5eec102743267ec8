"""The batch driver shared by every system: records in input order, chunks spread over processes.

Every input sentence gets exactly one output record, in input order; a sentence with a problem
is reported as ``file:line: message`` and gets a fallback record (``on_error``).  Work is cut
into chunks that joblib runs in worker processes (loky) or on a Dask cluster (consecutive
sentences, or, given a cost estimate, windows of consecutive sentences each run longest first,
after any sentence expensive enough to make a tail on its own); one worker serves every system
(:func:`system_worker`): it loads the system (:class:`wo.system.System`, its model memory-mapped)
once per process and caches it, keyed by the model file's path, mtime and size and the options.  Results do not depend on the number of workers: every
sentence is decoded on its own with a deterministic budget.

Records are written as soon as every earlier one is done, so after Ctrl-C the output is the
longest finished prefix (an existing output file is kept when no record was finished).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

ON_ERROR = ("fallback", "skip", "fail")


class Interrupted(Exception):
    """Ctrl-C during a run.

    done: records kept (the first ``done`` records of the output, a valid prefix); total: records
    the run would have written (None if unknown); output: the output as named to the user;
    old_kept: nothing was written and a file already at the output path was left as it was.
    ``str()`` is the one-line message for the user.
    """

    def __init__(self, done: int, total: Optional[int] = None, output: str = "", old_kept: bool = False,
                 reason: str = "interrupted"):
        of = f" of {total}" if total is not None else ""
        where = f" in {output}" if output else ""
        if done:
            msg = f"{reason}: kept the first {done}{of} records{where}"
        else:
            msg = f"{reason} before the first record was finished; nothing written"
            if output and old_kept:
                msg += f" ({output} left as it was)"
        super().__init__(msg)
        self.done, self.total, self.output, self.old_kept = done, total, output, old_kept
        self.reason = reason


class WorkersLost(Exception):
    """Every Dask worker of a run was lost (or its futures cancelled) before the run ended:
    :func:`process` keeps the finished prefix as on Ctrl-C and raises :class:`Interrupted` with
    this reason.  ``str()`` says what Dask reported."""


DASK_CONNECT_TIMEOUT = 10.0   # seconds for a --scheduler to answer (a dashboard port answers HTTP, never Dask)


def check_dask(scheduler: Optional[str]) -> None:
    """Raise ValueError (one line) unless ``--backend dask`` can run: dask.distributed installed
    (:class:`wo.extras.MissingExtra`), and ``scheduler`` (None: an in-process cluster) an address
    of a protocol Dask knows (``tcp://HOST:8786``, ``tls://``, ``inproc://``, ...; ``http://`` is
    the dashboard's, refused with that said).  Does not connect."""
    import importlib.util

    if importlib.util.find_spec("distributed") is None:   # wo.extras' message (wo.extras imports wo.io)
        raise ValueError("--backend dask needs dask, distributed, not installed: run  pip install 'wo-nlg[dask]'  "
                         "(or pip install '.[dask]' in a clone of wo)")
    if not scheduler:
        return
    from distributed.comm import parse_address
    from distributed.comm.registry import backends

    try:
        scheme, loc = parse_address(scheduler)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"--scheduler {scheduler}: not a Dask address ({exc}); e.g. tcp://127.0.0.1:8786") from None
    if scheme in ("http", "https"):
        raise ValueError(f"--scheduler {scheduler}: an HTTP address is the dashboard's; the scheduler listens on "
                         f"tcp://HOST:8786 (the port `dask scheduler` prints)")
    if scheme not in backends:
        raise ValueError(f"--scheduler {scheduler}: unknown protocol {scheme!r} (one of {', '.join(sorted(backends))})")


def dask_client(scheduler: Optional[str]):
    """A connected ``dask.distributed.Client`` (an in-process cluster when ``scheduler`` is
    None).  Raises ValueError (one line) for an address that is not a Dask scheduler or does
    not answer within :data:`DASK_CONNECT_TIMEOUT` seconds."""
    import logging

    from dask.distributed import Client

    for name in ("distributed", "distributed.client", "distributed.worker", "distributed.scheduler",
                 "distributed.nanny", "distributed.core", "distributed.comm"):
        logging.getLogger(name).setLevel(logging.CRITICAL)   # "Sending large graph ...", reconnection errors:
                                                             # wo reports what matters in one line
    check_dask(scheduler)
    if not scheduler:
        return Client(processes=False)
    probe_scheduler(scheduler, DASK_CONNECT_TIMEOUT)
    try:
        return Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError, TypeError, MemoryError, EOFError) as exc:
        # a port that answers something else: a garbage frame length ("Unable to allocate 2.82 EiB")
        what = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise ValueError(f"--scheduler {scheduler}: no Dask scheduler answered within {DASK_CONNECT_TIMEOUT:g} s "
                         f"({type(exc).__name__}: {what})") from None


class FailFast(Exception):
    """``on_error='fail'`` and a sentence failed; nothing was written."""


@dataclass
class Summary:
    """What a run did: sentences (int), failed (int), status counts, seconds (wall clock),
    input format used, and the error messages (``file:line: message``)."""

    sentences: int = 0
    failed: int = 0
    status: Dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    input_format: str = ""
    errors: List[str] = field(default_factory=list)

    @property
    def sentences_per_second(self) -> float:
        """Sentences per second of wall clock over the whole run (0 if not timed)."""
        return self.sentences / self.seconds if self.seconds > 0 else 0.0


def resolve_jobs(jobs, note: Optional[Callable[[str], None]] = None) -> int:
    """The number of worker processes ``jobs`` asks for, as joblib counts them: a positive
    number is that many, capped at the cores this process may use (``joblib.cpu_count()``;
    more processes only add memory: each loads the model), with ``note(message)`` called once
    when it is capped; -1 is every core, -2 all but one, and so on (at least 1).
    Raises ValueError for 0 and TypeError for anything but an int (bool included)."""
    import operator

    try:
        if isinstance(jobs, bool):
            raise TypeError
        jobs = operator.index(jobs)          # an int, numpy's included
    except TypeError:
        raise TypeError(f"jobs must be an integer (1, 2, ... or -1 for every core), not {jobs!r}") from None
    if jobs == 0:
        raise ValueError("jobs must not be 0: give 1 or more worker processes, or -1 for every core "
                         "(-2 for all but one, as in joblib)")
    if jobs == 1:
        return 1                             # at most the cores, whatever they are (joblib's import is 0.08 s)
    import joblib

    cores = max(1, int(joblib.cpu_count()))
    if jobs < 0:
        return max(1, cores + 1 + jobs)
    if jobs > cores:
        if note is not None:
            note(f"--jobs {jobs}: this machine has {cores} core{'s' if cores > 1 else ''} for wo; "
                 f"using {cores} worker process{'es' if cores > 1 else ''}")
        return cores
    return jobs


def _ignore_sigint() -> None:
    """Initializer of the loky worker processes: Ctrl-C reaches the whole process group, but
    it is the parent's to handle (it keeps the finished records and stops the workers); a
    worker interrupted on its own would print a traceback.  The workers start with SIGINT
    blocked (see :func:`_loky_results`); it is ignored here, then unblocked (a Ctrl-C that came
    meanwhile is dropped)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _loky_results(jobs: int, return_as: str, tasks):
    """Yield the results of joblib ``tasks`` run by ``jobs`` loky processes (``return_as``:
    "generator" or "generator_unordered"), dispatched when the first result is asked for
    (:func:`_loky_dispatch`).  Raises what the tasks raise."""
    yield from _loky_dispatch(jobs, return_as, tasks)


def _loky_dispatch(jobs: int, return_as: str, tasks):
    """Dispatch joblib ``tasks`` to ``jobs`` loky processes now and return the iterator of their
    results (``return_as``: "generator" or "generator_unordered"): the tasks run while the
    caller does other work.  The workers are spawned while SIGINT is blocked
    here (a child inherits the signal mask, through exec and Python's start-up) and ignore it
    from their initializer on, so a Ctrl-C to the process group, even while they start, is
    handled by this process alone; here it is delivered when the spawning is over.  The
    iterator raises what the tasks raise."""
    import signal

    from joblib import Parallel, parallel_config

    with parallel_config(backend="loky", initializer=_ignore_sigint):
        par = Parallel(n_jobs=jobs, return_as=return_as)
        mask = None
        if hasattr(signal, "pthread_sigmask"):
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()   # started later, it would unblock SIGINT here
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            it = par(tasks)                     # dispatches the first batches: the workers start here
        finally:
            if mask is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return it


def map_start(worker: Callable, args: tuple, items: Sequence, jobs: int = 1, chunk: int = 1,
              backend: str = "loky", scheduler: Optional[str] = None) -> Callable[[], list]:
    """:func:`map_batches` dispatched now: returns a function that waits for the results and
    returns them in input order.  With loky processes (``jobs`` > 1) this process is free in
    between, e.g. to decode a dev set while the workers train the next epoch; otherwise (one
    job, or ``backend="dask"``) the work is done in this call by :func:`map_batches`.
    ``jobs`` as :func:`resolve_jobs` counts them (-1: every core).
    Raises ValueError for an unknown backend or ``jobs`` 0, TypeError for a non-integer
    ``jobs``; the function raises what the workers raise."""
    jobs = resolve_jobs(jobs)
    if backend != "loky" or jobs <= 1:
        done = map_batches(worker, args, items, jobs=jobs, chunk=chunk, backend=backend, scheduler=scheduler)
        return lambda: done
    from joblib import delayed

    batches = [list(items[i:i + chunk]) for i in range(0, len(items), chunk)]
    it = _loky_dispatch(jobs, "generator", [delayed(worker)(*args, b) for b in batches])
    return lambda: [r for res in it for r in res]


def _indexed(worker: Callable, args: tuple, ids: List[int], batch: list):
    """Run ``worker(*args, batch)`` in a worker process; (item ids, results)."""
    return ids, worker(*args, batch)


def schedule(costs: Sequence[float], jobs: int, chunk: int) -> List[List[int]]:
    """The batches (lists of item indices) of a multi-process run, in dispatch order.

    costs: an estimate of each item's decoding time; jobs: worker processes; chunk: the largest
    batch.  Items that alone cost more than 1/(8 jobs) of the total come first, one per batch,
    longest first (they would otherwise make a tail at the end).  The others follow in windows
    of consecutive items (one batch per worker), each window longest first; batches hold at
    most ``chunk`` items and are small enough that every worker gets about 8 of them.  Windows
    keep the finished part of the output a growing prefix (what Ctrl-C keeps), while the
    longest-first order inside a window and the next window's work fill the workers.  Returns
    every index exactly once.  Raises nothing.
    """
    n = len(costs)
    if n == 0:
        return []
    size = max(1, min(chunk, -(-n // (8 * jobs))))
    total = float(sum(costs))
    heavy = sorted((i for i in range(n) if costs[i] * 8 * jobs > total), key=lambda i: (-costs[i], i))
    groups = [[i] for i in heavy]
    skip = set(heavy)
    rest = [i for i in range(n) if i not in skip]
    window = size * jobs
    for w in range(0, len(rest), window):
        win = sorted(rest[w:w + window], key=lambda i: (-costs[i], i))
        groups.extend(win[k:k + size] for k in range(0, len(win), size))
    return groups


def _longest_first(worker: Callable, args: tuple, items: Sequence, jobs: int, chunk: int,
                   cost: Callable, take: Callable) -> None:
    """The local multi-process run with longest-first scheduling inside windows (:func:`schedule`):
    the batches run in ``jobs`` loky processes as they become free, and results are handed to
    ``take`` in input order as soon as every earlier item is done.  Results are those of the
    consecutive run: each item is decoded on its own."""
    from joblib import delayed

    n = len(items)
    groups = schedule([cost(it) for it in items], jobs, chunk)
    slots: list = [None] * n
    done = [False] * n
    nxt = 0
    tasks = (delayed(_indexed)(worker, args, g, [items[i] for i in g]) for g in groups)
    for ids, res in _loky_results(jobs, "generator_unordered", tasks):
        for i, r in zip(ids, res):
            slots[i] = r
            done[i] = True
        start = nxt
        while nxt < n and done[nxt]:
            nxt += 1
        if nxt > start:
            ready = slots[start:nxt]
            slots[start:nxt] = [None] * (nxt - start)     # handed over: not kept twice
            take(ready)


_SYSTEMS: Dict[tuple, object] = {}


def _hashable(v):
    """``v`` with lists turned into tuples (options are part of a cache key)."""
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


def system_key(cls, path: Optional[str], options: dict) -> tuple:
    """The cache key of a loaded system: (the class, the file as (absolute path, mtime_ns,
    size), the options).  A file rewritten at the same path (a retrained model) gets another
    key.  Raises nothing (a missing file keys as (path, None, None))."""
    import os

    if path:
        try:
            st = os.stat(path)
            where = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
        except OSError:
            where = (path, None, None)
    else:
        where = (path, None, None)
    return (cls.__module__, cls.__qualname__, where, _hashable(options))


def load_system(cls, path: Optional[str], options: dict, verify: bool = False):
    """The system ``cls.load(path, verify=verify, **options)`` (a :class:`wo.system.System`),
    cached in this process: the run's parent loads it once (with ``verify``, failing early on
    bad files) and, with ``--jobs 1``, decodes with that same object; each worker process loads
    it once.  One system is kept at a time (another key releases the previous one first).
    Raises what ``cls.load`` raises."""
    key = system_key(cls, path, options)
    got = _SYSTEMS.get(key)
    if got is None:
        _SYSTEMS.clear()
        got = cls.load(path, verify=verify, **options)
        _SYSTEMS[key] = got
    return got


def system_worker(cls, path: Optional[str], options: dict, batch: list) -> list:
    """The one worker of every system: ``batch`` decoded by the cached system
    (:func:`load_system`; :meth:`wo.system.System.decode_batch`), one result per item."""
    return load_system(cls, path, options).decode_batch(batch)


def decode_system(cls, path: Optional[str], options: dict, payloads: Sequence, on_batch: Callable,
                  jobs: int = 1, chunk: int = 32, backend: str = "loky", scheduler: Optional[str] = None,
                  cost: Optional[Callable] = None) -> list:
    """Decode prepared ``payloads`` with system ``cls`` (model ``path``, ``options``) over
    :func:`map_batches` and :func:`system_worker`; the results in input order.  Raises as
    :func:`map_batches`."""
    return map_batches(system_worker, (cls, path, options), payloads, jobs=jobs, chunk=chunk, backend=backend,
                       scheduler=scheduler, on_batch=on_batch, cost=cost)


def map_batches(worker: Callable, args: tuple, items: Sequence, jobs: int = 1, chunk: int = 32,
                backend: str = "loky", scheduler: Optional[str] = None,
                on_batch: Optional[Callable[[list], None]] = None,
                cost: Optional[Callable] = None) -> list:
    """``worker(*args, batch)`` over chunks of ``items``; results in input order.

    worker: a module-level function (picklable) returning one result per item of its batch;
    jobs: worker processes (1 = in this process); chunk: items per batch; backend: "loky"
    (local processes) or "dask" (joblib's Dask backend on the cluster at ``scheduler``, e.g.
    tcp://127.0.0.1:8786, or an in-process cluster when None); on_batch(results) is called as
    results become available in input order (batches of any size); cost(item) -> float, an
    estimate of an item's decoding time: with jobs > 1 (loky), batches are dispatched by
    :func:`schedule` (windows of consecutive items, longest first inside each, after any item
    costly enough to make a tail alone), in smaller batches, so no worker is left waiting on a
    long tail and the results handed to ``on_batch`` grow as an input-order prefix (the
    results are the same as without).  ``jobs`` as joblib counts them (:func:`resolve_jobs`:
    -1 every core, -2 all but one; never more processes than cores).  Returns the list of
    all results.
    Raises ValueError for an unknown backend or ``jobs`` 0, TypeError for a non-integer
    ``jobs``; KeyboardInterrupt passes through (the results already handed to ``on_batch``
    stand).
    """
    if backend not in ("loky", "dask"):
        raise ValueError(f"unknown backend {backend!r} (loky or dask)")
    jobs = resolve_jobs(jobs)
    batches = [list(items[i:i + chunk]) for i in range(0, len(items), chunk)]
    results: list = []

    def take(res):
        results.extend(res)
        if on_batch:
            on_batch(res)

    if backend == "dask":
        import warnings

        client = dask_client(scheduler)
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", module="distributed")
                warnings.filterwarnings("ignore", message=".*[Ll]arge graph.*")
                futures = [client.submit(worker, *args, b, pure=False) for b in batches]
                for f in futures:   # in input order; a cluster gone cancels the futures (never a hang)
                    take(_dask_result(client, f))
        finally:
            try:
                client.close(timeout=DASK_CONNECT_TIMEOUT)
            except Exception:   # noqa: BLE001 (a cluster already gone)
                pass
        return results
    if jobs == 1:
        for b in batches:
            take(worker(*args, b))
        return results
    if cost is not None:
        _longest_first(worker, args, items, jobs, chunk, cost, take)
        return results
    from joblib import delayed

    for res in _loky_results(jobs, "generator", (delayed(worker)(*args, b) for b in batches)):
        take(res)
    return results


def probe_scheduler(address: str, timeout: float) -> None:
    """Ask ``address`` who it is (Dask's ``identity`` message) with every step bounded by
    ``timeout`` seconds: a Client waited forever on a port that speaks HTTP (the dashboard),
    and a port answering other bytes read them as a frame length (an 'Unable to allocate 2.82
    EiB' MemoryError).  Raises ValueError (one line) unless a Dask scheduler answers."""
    import asyncio

    from distributed.comm import connect

    async def ask():
        comm = await asyncio.wait_for(connect(address, timeout=timeout), timeout)
        try:
            await asyncio.wait_for(comm.write({"op": "identity", "reply": True}), timeout)
            return await asyncio.wait_for(comm.read(), timeout)
        finally:
            comm.abort()

    try:
        msg = asyncio.run(ask())
    except BaseException as exc:   # noqa: BLE001 (timeouts, refused, garbage frames, closed comms)
        if isinstance(exc, KeyboardInterrupt):
            raise
        what = (str(exc).splitlines() or [""])[0][:160] or type(exc).__name__
        raise ValueError(f"--scheduler {address}: no Dask scheduler answered within {timeout:g} s "
                         f"({type(exc).__name__}: {what}); the scheduler's address is tcp://HOST:8786, not the "
                         f"dashboard's port") from None
    if not isinstance(msg, dict) or msg.get("type") != "Scheduler":
        raise ValueError(f"--scheduler {address}: that is not a Dask scheduler (it answered "
                         f"{str(msg)[:80]!r})")


def _dask_result(client, future, poll: float = 2.0):
    """The result of a Dask future, waiting in ``poll``-second steps so that a client that lost
    its scheduler (Dask closes it after failing to reconnect) or a cancelled future ends the
    wait: raises :class:`WorkersLost` then; a task's own exception passes through."""
    while True:
        try:
            return future.result(timeout=poll)
        except KeyboardInterrupt:
            raise
        except Exception as exc:   # noqa: BLE001
            if _dask_lost(exc) and not future.done() and client.status not in ("closed", "closing"):
                continue           # a poll timeout: the task is still running
            if _dask_lost(exc) or future.status in ("cancelled", "lost"):
                raise WorkersLost(f"the Dask cluster was lost ({type(exc).__name__}; scheduler "
                                  f"{client.scheduler.address if client.scheduler else '?'})") from None
            raise


def _dask_lost(exc: BaseException) -> bool:
    """Whether ``exc`` says the cluster went away (cancelled futures, killed workers, a closed
    connection) rather than a task failing."""
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"FutureCancelledError", "CancelledError", "KilledWorker", "CommClosedError",
                         "StreamClosedError", "TimeoutError", "FutureCancelledException"})


def announce_total(progress: Optional[Callable], total: int) -> None:
    """Give a progress bar its total once the input is read: ``progress`` is the bound
    ``update`` method of a tqdm bar (as the CLI passes it), whose total, percentage and ETA
    then show; anything else is left alone."""
    bar = getattr(progress, "__self__", None)
    if bar is not None and hasattr(bar, "total") and getattr(bar, "total", 0) in (None, 0):
        bar.total = total
        if hasattr(bar, "refresh"):
            bar.refresh()


class _DeferInterrupt:
    """Ctrl-C (SIGINT) during a batch: held back while records are written, so the output
    never ends in half a record (inside ``with guard.writing():`` a SIGINT is remembered and
    raised as KeyboardInterrupt when the block ends; elsewhere it is raised at once), and never
    lost: a KeyboardInterrupt raised where Python drops it (a finalizer or weakref callback, e.g.
    while a module is imported) is not printed, and :meth:`check` raises it again at the next
    safe point.  Active only in the main thread and when SIGINT has Python's default handler
    (else a no-op)."""

    def __init__(self):
        self.depth = 0
        self.pending = False
        self.seen = False
        self.old = None
        self.old_hook = None

    def _handler(self, signum, frame):
        self.seen = True
        if self.depth:
            self.pending = True
        else:
            raise KeyboardInterrupt

    def _unraisable(self, unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            return                          # dropped by Python: check() raises it again
        self.old_hook(unraisable)

    def __enter__(self):
        import signal
        import sys
        import threading

        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self.old = signal.signal(signal.SIGINT, self._handler)
            self.old_hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        return self

    def __exit__(self, *exc):
        import signal
        import sys

        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)
            sys.unraisablehook = self.old_hook
            self.old = None
        return False

    def check(self) -> None:
        """Raise KeyboardInterrupt if a Ctrl-C came (its first KeyboardInterrupt may have been
        dropped by Python); call where the flow is safe to stop."""
        if self.seen:
            raise KeyboardInterrupt

    def writing(self):
        """A context manager for a block during which SIGINT waits."""
        from contextlib import contextmanager

        @contextmanager
        def block():
            self.depth += 1
            try:
                yield
            finally:
                self.depth -= 1
            if self.depth == 0 and self.pending:
                self.pending = False
                raise KeyboardInterrupt

        return block()


def process(items: Sequence, input_path: str, output_path: str, *, prepare: Callable,
            decode_many: Callable, fallback: Callable, format_record: Callable,
            on_error: str = "fallback", keep_skipped: bool = False,
            report: Callable[[str], None] = lambda m: None,
            progress: Optional[Callable[[int], None]] = None,
            summary: Optional[Summary] = None, skipped: Optional[Callable] = None,
            also: Sequence[Optional[str]] = ()) -> Summary:
    """Decode ``items`` and write one record per item, in input order, atomically.

    prepare(i, item) -> (item as decoded, payload) or an error message (str);
    decode_many(payloads, on_batch) decodes the payloads in order, calling on_batch(results)
    as results come; fallback(item, message) -> the result of a failed item (status "error");
    format_record(item, result) -> the record (str, no newline).  A failed item's record is
    the fallback's, or an empty line under ``on_error='skip'`` (unless ``keep_skipped``, e.g.
    JSON lines that carry the status).  Results with status "error" (the item failed in the
    decoder) count as failed too and follow ``on_error`` alike.
    Errors are reported as ``file:line: message`` (``report``) and kept in the summary.
    Records are written (and flushed) as soon as every earlier record is done; Ctrl-C never
    cuts a record in half.  skipped(item) -> the record of a failed item under
    ``on_error='skip'`` (default: an empty line).  also: more output paths written in step
    with ``output_path`` (None entries are left out; SR's ``.tok`` twin): format_record and
    skipped then return a tuple of records, one per output (None paths included), and every
    output gets the same prefix on Ctrl-C.
    Raises ValueError for a bad ``on_error``, :class:`wo.io.outputs.SameFileError` (a
    ValueError; before any work) when an output is the input or two outputs are one file
    (symbolic and hard links included), OSError naming the output when it cannot be written
    (its temporary file is removed), FailFast under ``on_error='fail'`` when any item
    fails preparation (nothing is written) or decoding (nothing is written to a file; standard
    output or a pipe keeps the records before it), Interrupted on Ctrl-C: the records finished so far
    are kept (a valid prefix of the output), or, when there are none, nothing is written and a
    file already at ``output_path`` is left as it was.  Returns the :class:`Summary`.
    """
    import os
    import time

    from .outputs import check_distinct
    from .text import AtomicWriter, display_name

    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}")
    check_distinct([output_path] + list(also), [input_path])   # before any sentence is decoded
    t0 = time.perf_counter()
    name = display_name(input_path)
    summ = summary or Summary()
    summ.sentences = len(items)
    announce_total(progress, len(items))
    todo, shown, errors = [], {}, {}
    writer = None
    paths = [output_path] + list(also)
    writers: list = []
    done = 0
    results: Dict[int, object] = {}
    guard = _DeferInterrupt()

    def emit_ready():
        nonlocal done
        with guard.writing():
            start = done
            while done < len(items) and (done in results or done in errors):
                i = done
                if i in errors:
                    res = fallback(items[i], errors[i])
                    summ.failed += 1
                    skip = on_error == "skip" and not keep_skipped
                    if skip:
                        rec = skipped(items[i]) if skipped is not None else ("",) * len(paths) if also else ""
                    else:
                        rec = format_record(items[i], res)
                else:
                    res = results.pop(i)
                    rec = None
                    if res.status == "error":      # failed in the decoder: on_error applies as well
                        summ.failed += 1
                        summ.errors.append(f"{name}:{items[i].line}: {res.message}")
                        report(f"{name}:{items[i].line}: {res.message}")
                        if on_error == "fail":
                            direct = writer is not None and writer.tmp is None and done
                            raise FailFast(f"stopped at {name}:{items[i].line} (--on-error fail); "
                                           + (f"the first {done} records were written" if direct
                                              else "nothing written"))
                        if on_error == "skip" and not keep_skipped:
                            rec = skipped(items[i]) if skipped is not None else ("",) * len(paths) if also else ""
                    if rec is None:
                        rec = format_record(shown[i], res)
                summ.status[res.status] = summ.status.get(res.status, 0) + 1
                if also:
                    for w, r in zip(writers, rec):
                        if w is not None:
                            w.write(r)
                else:
                    writer.write(rec)
                done += 1
            if done > start:
                for w in writers:
                    if w is not None:
                        w.flush()       # on disk now: what Ctrl-C keeps

    idx: List[int] = []
    pos_in = 0

    def on_batch(batch_results):
        nonlocal pos_in
        guard.check()
        for r in batch_results:
            results[idx[pos_in]] = r
            pos_in += 1
        emit_ready()
        if progress:
            progress(len(batch_results))

    with guard:
        try:
            for i, it in enumerate(items):
                got = prepare(i, it)
                if isinstance(got, str):
                    errors[i] = got
                    summ.errors.append(f"{name}:{it.line}: {got}")
                    report(f"{name}:{it.line}: {got}")
                    continue
                shown[i], payload = got
                todo.append((i, payload))
            if errors and on_error == "fail":
                raise FailFast(f"{len(errors)} sentence(s) failed; nothing written (--on-error fail)")
            for p in paths:
                writers.append(AtomicWriter(p, inputs=[input_path]) if p is not None else None)
            writer = writers[0]
            idx = [i for i, _ in todo]
            emit_ready()
            decode_many([p for _, p in todo], on_batch)
            emit_ready()
            guard.check()
            for w in writers:
                if w is not None:
                    w.commit()
        except (KeyboardInterrupt, WorkersLost) as stop:
            old_kept = False
            if writer is not None:
                if done:
                    for w in writers:   # the finished prefix replaces the old files
                        if w is not None:
                            w.commit()
                else:
                    old_kept = writer.tmp is not None and os.path.exists(writer.path)
                    for w in writers:   # nothing finished: existing files stay as they were
                        if w is not None:
                            w.abort()
            raise Interrupted(done, len(items), display_name(output_path, "stdout"), old_kept,
                              str(stop) if isinstance(stop, WorkersLost) else "interrupted") from None
        except BaseException:
            for w in writers:
                if w is not None:
                    w.abort()
            raise
    summ.seconds = time.perf_counter() - t0
    return summ
