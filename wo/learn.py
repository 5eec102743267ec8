"""The one training loop of every learned system: epochs of online learning, the averaged
model scored on dev after each epoch, the best epoch kept; iterative parameter mixing.

* :func:`train_pass`: one epoch of online learning over instances in an order shuffled by a
  seeded ``random.Random``; a per-instance ``step`` (Algorithm 3 of Zhang & Clark 2015 for the
  search core: scaled large-margin updates; the perceptron with early update for the local
  orderer) updates the weights, and the averaging count advances once per instance
  (averaged parameters, Collins 2002: theta_avg = W - U / c with the float64 accumulator U).
* :func:`mix_shards`: one epoch of iterative parameter mixing (McDonald, Hall & Mann 2010,
  Algorithm 2, uniform mixture): shards train one epoch each from the same weights in their own
  processes (joblib, or a Dask cluster with ``backend="dask"``: :func:`wo.io.batch.map_batches`),
  then their weights and accumulators are averaged in place.
* :func:`epoch_loop`: the loop around either: after each epoch the averaged model is scored by
  a dev function (BLEU) and saved when it is the best so far (every epoch without dev data); the
  final model's header carries the training record, the best epoch and the total seconds.

Used by dependency word ordering (:mod:`wo.dep.train`), SR with the search core and with the
local orderer (:mod:`wo.sr.train`, :mod:`wo.sr.order`), CCG (:mod:`wo.ccg.train`) and SMT
synthesis (:mod:`wo.smt.train`).
"""
from __future__ import annotations

import gc
import random
import sys
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

import numpy as np


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for a block that builds many long-lived objects
    (training domains, a lexicon, parsed sentences), on again after it (if it was on).

    Each full collection walks every tracked object, and building half a million of them
    triggers one every few hundred thousand, so the cost grows with the square of what is
    built: ``wo sr train`` on pt_bosque spent 3.2 of 22.9 s in collections (2.7 s in full ones),
    1.5 s of them while the training domains were built; 0.6 s with the pauses.  What such a block builds holds no reference
    cycles that must be freed before it ends (reference counting still frees everything
    else).  Raises nothing of its own."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def train_pass(core, insts: Sequence, rng: random.Random,
               step: Callable[[int, Any], Tuple[bool, int]], order: Optional[List[int]] = None) -> dict:
    """One epoch of online learning over ``insts`` in an order shuffled by ``rng``.

    core: the learner, with ``n_updates`` (int, updates made so far) and ``avg_count`` (float,
    the averaging count, advanced by 1.0 after each instance); step(j, inst): trains instance
    ``j`` and returns (reached the gold output: bool, search pops: int).  order: the list of
    instance indices to shuffle in place and follow (a caller that keeps it across epochs
    shuffles cumulatively, as the local orderer does); None: a fresh ``range`` each epoch.
    Returns {"seconds" (wall, 2 decimals), "updates", "reached_gold" (share, 4 decimals),
    "pops"}.
    """
    idx = list(range(len(insts))) if order is None else order
    rng.shuffle(idx)
    t0 = time.perf_counter()
    upd0, reached, pops = core.n_updates, 0, 0
    for j in idx:
        ok, p = step(j, insts[j])
        core.avg_count += 1.0
        reached += int(ok)
        pops += p
    return {"seconds": round(time.perf_counter() - t0, 2), "updates": int(core.n_updates - upd0),
            "reached_gold": round(reached / max(1, len(insts)), 4), "pops": int(pops)}


def mix_shards(shard_fn: Callable, state: tuple, shards: Sequence, W: np.ndarray, U: np.ndarray,
               jobs: int, backend: str = "loky", scheduler: Optional[str] = None) -> Tuple[List[tuple], float]:
    """One epoch of iterative parameter mixing (McDonald, Hall & Mann 2010, Algorithm 2,
    uniform mixture).

    shard_fn(state, batch) -> [(W_k float32[2^b], U_k float64[2^b], instances trained n_k, ...)]:
    a joblib/Dask worker that trains one epoch of each shard in ``batch`` from the weights in
    ``state``; shards: one item per shard (``chunk=1``: a shard per task).  W (float32) and U
    (float64) are replaced in place by the shards' means (W averaged in float64, then rounded to
    float32).  Returns (the shards' result tuples, the mean n_k: what the averaging count
    advances by, so that W - U / c stays the average of the mixed weight vectors).
    Raises ValueError for an unknown backend.
    """
    return mix_start(shard_fn, state, shards, W, U, jobs, backend, scheduler)()


def mix_start(shard_fn: Callable, state: tuple, shards: Sequence, W: np.ndarray, U: np.ndarray,
              jobs: int, backend: str = "loky",
              scheduler: Optional[str] = None) -> Callable[[], Tuple[List[tuple], float]]:
    """:func:`mix_shards` in two halves: the shards are dispatched now (loky processes; the
    state is sent as it is now) and the returned function waits for them, mixes W and U in
    place and returns what :func:`mix_shards` returns.  In between this process is free (e.g.
    to decode the dev set with the previous epoch's weights).  With ``backend="dask"`` the
    epoch runs at once, inside this call (the same shards and mixing).
    Raises ValueError for an unknown backend."""
    from .io.batch import map_start

    wait = map_start(shard_fn, (state,), list(shards), jobs=jobs, chunk=1, backend=backend, scheduler=scheduler)

    def finish() -> Tuple[List[tuple], float]:
        res = wait()
        W[:] = np.mean([r[0] for r in res], axis=0, dtype=np.float64).astype(np.float32)
        U[:] = np.mean([r[1] for r in res], axis=0)
        return res, float(np.mean([r[2] for r in res]))
    return finish


def epoch_line(ent: dict) -> str:
    """The log line of one epoch record (seconds, updates, gold reached where the learner
    reports it, dev BLEU and its seconds)."""
    dev = ent.get("dev_bleu")
    parts = [f"epoch {ent['epoch']}: {ent['seconds']:.1f}s", f"updates {ent['updates']}"]
    if "reached_gold" in ent:
        parts.append(f"gold reached {ent['reached_gold']:.3f}")
    line = ", ".join(parts) + f", dev BLEU {dev if dev is None else round(dev, 2)}"
    return line + (f" ({ent['dev_seconds']:.1f}s)" if dev is not None else "")


SAVE_EVERY = 60.0   # seconds between saves of the best model during :func:`epoch_loop`


def epoch_loop(epochs: int, run_epoch: Callable[[int], dict], make_model: Callable[[], Any], out: str,
               record: dict, dev_eval: Optional[Callable[[Any], float]] = None,
               log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
               t_all: Optional[float] = None, compact=False,
               finish: Optional[Callable[[Any], None]] = None,
               start_epoch: Optional[Callable[[int], Callable[[], dict]]] = None) -> dict:
    """Train for ``epochs`` epochs and keep the best.

    run_epoch(epoch) -> the epoch record (dict with at least "seconds" and "updates"; epochs
    count from 1); make_model() -> the :class:`wo.model.Model` of the current averaged weights;
    dev_eval(model) -> dev score (BLEU; higher is better), or None: no dev data, every epoch is
    saved.  Each epoch record gains "epoch", "dev_bleu" and "dev_seconds" and is appended to
    ``record["epochs"]``; the best model is saved to ``out`` with ``training`` = the record plus
    ``best_epoch`` and ``dev_bleu`` (at most every SAVE_EVERY seconds while training, so that an
    interrupted long training leaves its best epoch so far, and at the end: a save writes the
    whole header, the SR lexicon with it, which cost more than a short epoch).  At the end the
    best model (reloaded if it was written already) gets in its header
    ``total_seconds`` (since ``t_all``, default now), ``finish(model)`` runs (e.g. tuning a
    reranker on dev), and it is saved with ``compact`` (:meth:`wo.model.Model.save`: False,
    True/"float16" or "q8").  Returns the final header's ``training`` entry.
    start_epoch(epoch) -> a function returning the epoch record: the epoch split in two
    (dispatched to worker processes, then waited for; e.g. :meth:`wo.sr.order.LocalTrainer.start`);
    given, it replaces ``run_epoch`` and each epoch is dispatched before the previous one's
    model is scored on dev, so that the dev decoding here and the training in the workers run
    at once (the weights, dev scores and chosen epoch are the same as without).
    Raises OSError if ``out`` cannot be written (a directory, or a path through a file: before
    the first epoch, :func:`wo.io.text.check_output_path`), ValueError if epochs < 1.
    """
    from .io.text import check_output_path
    from .model import Model

    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, not {epochs}")
    check_output_path(out)   # now, not at the first save after an epoch
    t_all = time.perf_counter() if t_all is None else t_all
    best: Optional[Tuple[float, int]] = None
    unsaved, last_save = None, time.perf_counter()   # the best model not yet written to ``out``
    pending = start_epoch(1) if start_epoch is not None else None
    for ep in range(1, epochs + 1):
        if pending is not None:
            ent = pending()
            if ep < epochs:      # the next epoch trains in the workers while dev is decoded here
                pending = start_epoch(ep + 1)
            model = make_model()   # this epoch's weights: the workers read theirs from the dispatch
        else:
            ent = run_epoch(ep)
            model = make_model()
        model.header["training"] = dict(record, epoch=ep)
        t1 = time.perf_counter()
        dev = dev_eval(model) if dev_eval is not None else None
        ent.update(epoch=ep, dev_bleu=dev, dev_seconds=round(time.perf_counter() - t1, 2))
        record["epochs"].append(ent)
        log(epoch_line(ent))
        if best is None or dev is None or dev > best[0]:
            best = (dev if dev is not None else 0.0, ep)
            model.header["training"] = dict(record, best_epoch=ep, dev_bleu=dev)
            unsaved = model
        if unsaved is not None and time.perf_counter() - last_save >= SAVE_EVERY:
            unsaved.save(out)
            unsaved, last_save = None, time.perf_counter()
    if unsaved is not None:   # the best model is still in memory: written once, below
        final, final.path = unsaved, out
    else:
        final = Model.load(out, mmap=False)
    final.header["training"] = dict(record, best_epoch=best[1], dev_bleu=best[0] if dev_eval is not None else None,
                                    total_seconds=round(time.perf_counter() - t_all, 1))
    if finish is not None:
        finish(final)
    final.save(out, compact=compact)
    return final.header["training"]
