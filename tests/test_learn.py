"""The shared training loop (wo.learn): best epoch kept, averaging count, parameter mixing."""
import gc
import random

import numpy as np
import pytest

from wo.learn import collector_paused, epoch_line, epoch_loop, mix_shards, mix_start, train_pass
from wo.model import Model, TagDictionary


class _Counter:
    n_updates = 0
    avg_count = 1.0


def test_train_pass_shuffles_counts_and_advances_average():
    seen = []
    core = _Counter()

    def step(j, inst):
        seen.append(j)
        core.n_updates += j % 2
        return j % 3 == 0, 10

    ent = train_pass(core, list("abcdef"), random.Random(4), step)
    assert sorted(seen) == list(range(6)) and seen != list(range(6))
    assert core.avg_count == 7.0
    assert ent["updates"] == 3 and ent["pops"] == 60 and ent["reached_gold"] == round(2 / 6, 4)
    # a kept order is shuffled cumulatively: the second epoch differs from a fresh shuffle
    order = list(range(6))
    train_pass(core, list("abcdef"), random.Random(4), lambda j, i: (True, 0), order)
    assert order == seen


def _shard(state, batch):
    W0, U0 = state
    return [(W0 + k, U0 - k, n) for k, n in batch]


def test_mix_shards_averages_in_place():
    W = np.zeros(4, dtype=np.float32)
    U = np.ones(4, dtype=np.float64)
    res, step = mix_shards(_shard, (W.copy(), U.copy()), [(1.0, 10), (3.0, 30)], W, U, jobs=1)
    assert len(res) == 2 and step == 20.0
    assert np.array_equal(W, np.full(4, 2.0, dtype=np.float32)) and np.array_equal(U, np.full(4, -1.0))


def _shard_marking(state, batch):
    """A shard worker that leaves a file behind (proof that it ran) before returning."""
    import os

    W0, U0, d = state
    out = []
    for k, n in batch:
        open(os.path.join(d, f"shard{int(k)}"), "w").close()
        out.append((W0 + k, U0 - k, n))
    return out


def test_mix_start_dispatches_before_waiting(tmp_path):
    import os
    import time

    W = np.zeros(4, dtype=np.float32)
    U = np.ones(4, dtype=np.float64)
    finish = mix_start(_shard_marking, (W.copy(), U.copy(), str(tmp_path)), [(1.0, 10), (3.0, 30)], W, U, jobs=2)
    t0 = time.monotonic()       # the shards run in the workers before anyone waits for them
    while not (os.path.exists(tmp_path / "shard1") and os.path.exists(tmp_path / "shard3")):
        assert time.monotonic() - t0 < 120, "the shards were not dispatched"
        time.sleep(0.05)
    assert np.all(W == 0.0)     # nothing mixed until the function is called
    res, step = finish()
    assert len(res) == 2 and step == 20.0
    assert np.array_equal(W, np.full(4, 2.0, dtype=np.float32)) and np.array_equal(U, np.full(4, -1.0))


def test_epoch_loop_pipelined_scores_each_epoch_after_starting_the_next(tmp_path):
    W = np.zeros(16, dtype=np.float32)
    scores = {1: 3.0, 2: 7.0, 3: 5.0}
    events = []

    def start(ep):
        events.append(("start", ep))

        def finish():
            W[:] = ep
            events.append(("finish", ep))
            return {"seconds": 0.0, "updates": ep}
        return finish

    def dev(model):
        ep = int(np.asarray(model.weights)[0])
        events.append(("dev", ep))
        return scores[ep]

    out = str(tmp_path / "m.wo")
    rec = epoch_loop(3, None, lambda: Model(W.copy(), 4, TagDictionary({}, ["_"]), {"kind": "t"}), out,
                     {"epochs": []}, dev, lambda m: None, start_epoch=start)
    assert rec["best_epoch"] == 2 and [e["dev_bleu"] for e in rec["epochs"]] == [3.0, 7.0, 5.0]
    assert np.all(Model.load(out).weights == 2.0)
    assert events == [("start", 1), ("finish", 1), ("start", 2), ("dev", 1), ("finish", 2), ("start", 3),
                      ("dev", 2), ("finish", 3), ("dev", 3)]


def test_epoch_loop_keeps_best_epoch(tmp_path):
    W = np.zeros(16, dtype=np.float32)
    scores = {1: 3.0, 2: 7.0, 3: 5.0}
    ep_now = []

    def run_epoch(ep):
        ep_now.append(ep)
        W[:] = ep
        return {"seconds": 0.0, "updates": ep}

    out = str(tmp_path / "m.wo")
    logs = []
    rec = epoch_loop(3, run_epoch, lambda: Model(W.copy(), 4, TagDictionary({}, ["_"]), {"kind": "t"}), out,
                     {"epochs": []}, lambda m: scores[ep_now[-1]], logs.append)
    assert rec["best_epoch"] == 2 and rec["dev_bleu"] == 7.0 and len(rec["epochs"]) == 3
    assert np.all(Model.load(out).weights == 2.0)
    assert logs[1].startswith("epoch 2: 0.0s, updates 2, dev BLEU 7.0")
    # without dev data every epoch is saved: the last one is kept
    rec = epoch_loop(2, run_epoch, lambda: Model(W.copy(), 4, TagDictionary({}, ["_"]), {}), out, {"epochs": []},
                     None, logs.append)
    assert rec["best_epoch"] == 2 and rec["dev_bleu"] is None
    with pytest.raises(ValueError):
        epoch_loop(0, run_epoch, lambda: None, out, {"epochs": []})
    # an output that cannot be written is refused before the first epoch, not at the save
    ep_now.clear()
    with pytest.raises(IsADirectoryError):
        epoch_loop(2, run_epoch, lambda: None, str(tmp_path), {"epochs": []})
    with pytest.raises(NotADirectoryError):
        epoch_loop(2, run_epoch, lambda: None, str(tmp_path / "m.wo" / "x.wo"), {"epochs": []})
    assert ep_now == []


def test_epoch_line_with_gold_reached():
    line = epoch_line({"epoch": 1, "seconds": 2.345, "updates": 5, "reached_gold": 0.5, "dev_bleu": 12.345,
                       "dev_seconds": 1.0})
    assert line == "epoch 1: 2.3s, updates 5, gold reached 0.500, dev BLEU 12.35 (1.0s)"


def test_collector_paused_restores_the_collector_state():
    """The collector is off inside the block and as it was after it, also when the block raises."""
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError):
        with collector_paused():
            raise KeyError("x")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()     # it was off before: it stays off
    finally:
        gc.enable()
