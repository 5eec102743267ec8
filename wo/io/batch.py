"""The batch driver shared by every system: records in input order, chunks spread over processes.

Every input sentence gets exactly one output record, in input order; a sentence with a problem
is reported as ``file:line: message`` and gets a fallback record (``on_error``).  Work is cut
into chunks that joblib runs in worker processes (loky) or on a Dask cluster (consecutive
sentences, or, given a cost estimate, the longest sentences first); each worker loads the
model once (memory-mapped) and caches it.  Results do not depend
on the number of workers: every sentence is decoded on its own with a deterministic budget.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

ON_ERROR = ("fallback", "skip", "fail")


class Interrupted(Exception):
    """Ctrl-C during a run; ``done`` records were written."""

    def __init__(self, done: int):
        super().__init__(f"interrupted after {done} sentences")
        self.done = done


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


def _indexed(worker: Callable, args: tuple, ids: List[int], batch: list):
    """Run ``worker(*args, batch)`` in a worker process; (item ids, results)."""
    return ids, worker(*args, batch)


def _longest_first(worker: Callable, args: tuple, items: Sequence, jobs: int, chunk: int,
                   cost: Callable, take: Callable) -> None:
    """The local multi-process run with longest-processing-time-first scheduling: items sorted
    by decreasing ``cost(item)`` (ties: input order) are cut into batches (at most ``chunk``
    items, and small enough that every worker gets about 8 batches), run by ``jobs`` loky
    processes as they become free, and handed to ``take`` in input order as soon as every
    earlier item is done.  Results are those of the consecutive run: each item is decoded on
    its own."""
    from joblib import Parallel, delayed

    n = len(items)
    order = sorted(range(n), key=lambda i: (-cost(items[i]), i))
    size = max(1, min(chunk, -(-n // (8 * jobs))))
    groups = [order[i:i + size] for i in range(0, n, size)]
    slots: list = [None] * n
    done = [False] * n
    nxt = 0
    par = Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered")
    for ids, res in par(delayed(_indexed)(worker, args, g, [items[i] for i in g]) for g in groups):
        for i, r in zip(ids, res):
            slots[i] = r
            done[i] = True
        start = nxt
        while nxt < n and done[nxt]:
            nxt += 1
        if nxt > start:
            take(slots[start:nxt])


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
    estimate of an item's decoding time: with jobs > 1 (loky), the most expensive items are
    run first, in smaller batches, so no worker is left waiting on a long tail (the results
    are the same as without).  Returns the list of all results.
    Raises ValueError for an unknown backend.
    """
    if backend not in ("loky", "dask"):
        raise ValueError(f"unknown backend {backend!r} (loky or dask)")
    batches = [list(items[i:i + chunk]) for i in range(0, len(items), chunk)]
    results: list = []

    def take(res):
        results.extend(res)
        if on_batch:
            on_batch(res)

    if backend == "dask":
        import joblib
        from dask.distributed import Client

        client = Client(scheduler) if scheduler else Client(processes=False)
        try:
            with joblib.parallel_config(backend="dask"):
                par = joblib.Parallel(n_jobs=-1, return_as="generator")
                for res in par(joblib.delayed(worker)(*args, b) for b in batches):
                    take(res)
        finally:
            client.close()
        return results
    if jobs == 1:
        for b in batches:
            take(worker(*args, b))
        return results
    if cost is not None:
        _longest_first(worker, args, items, jobs, chunk, cost, take)
        return results
    from joblib import Parallel, delayed

    par = Parallel(n_jobs=jobs, backend="loky", return_as="generator")
    for res in par(delayed(worker)(*args, b) for b in batches):
        take(res)
    return results


def process(items: Sequence, input_path: str, output_path: str, *, prepare: Callable,
            decode_many: Callable, fallback: Callable, format_record: Callable,
            on_error: str = "fallback", keep_skipped: bool = False,
            report: Callable[[str], None] = lambda m: None,
            progress: Optional[Callable[[int], None]] = None,
            summary: Optional[Summary] = None) -> Summary:
    """Decode ``items`` and write one record per item, in input order, atomically.

    prepare(i, item) -> (item as decoded, payload) or an error message (str);
    decode_many(payloads, on_batch) decodes the payloads in order, calling on_batch(results)
    as results come; fallback(item, message) -> the result of a failed item (status "error");
    format_record(item, result) -> the record (str, no newline).  A failed item's record is
    the fallback's, or an empty line under ``on_error='skip'`` (unless ``keep_skipped``, e.g.
    JSON lines that carry the status).  Results with status "error" count as failed too.
    Errors are reported as ``file:line: message`` (``report``) and kept in the summary.
    Raises ValueError for a bad ``on_error``, FailFast under ``on_error='fail'`` when any item
    fails preparation (nothing is written), Interrupted on Ctrl-C (the records written so far
    are kept: a valid prefix of the output).  Returns the :class:`Summary`.
    """
    import time

    from .text import AtomicWriter, display_name

    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}")
    t0 = time.perf_counter()
    name = display_name(input_path)
    summ = summary or Summary()
    summ.sentences = len(items)
    todo, shown, errors = [], {}, {}
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
    writer = AtomicWriter(output_path)
    done = 0
    results: Dict[int, object] = {}

    def emit_ready():
        nonlocal done
        while done < len(items) and (done in results or done in errors):
            i = done
            if i in errors:
                res = fallback(items[i], errors[i])
                summ.failed += 1
                skip = on_error == "skip" and not keep_skipped
                rec = "" if skip else format_record(items[i], res)
            else:
                res = results.pop(i)
                if res.status == "error":
                    summ.failed += 1
                    summ.errors.append(f"{name}:{items[i].line}: {res.message}")
                    report(f"{name}:{items[i].line}: {res.message}")
                rec = format_record(shown[i], res)
            summ.status[res.status] = summ.status.get(res.status, 0) + 1
            writer.write(rec)
            done += 1

    idx = [i for i, _ in todo]
    pos_in = 0

    def on_batch(batch_results):
        nonlocal pos_in
        for r in batch_results:
            results[idx[pos_in]] = r
            pos_in += 1
        emit_ready()
        if progress:
            progress(len(batch_results))

    try:
        emit_ready()
        decode_many([p for _, p in todo], on_batch)
        emit_ready()
        writer.commit()
    except KeyboardInterrupt:
        writer.commit()
        raise Interrupted(done) from None
    except BaseException:
        writer.abort()
        raise
    summ.seconds = time.perf_counter() - t0
    return summ
