import numpy as np

from wo._fast._search import SearchCore


def _core():
    return SearchCore(np.zeros(1 << 10, dtype=np.float32), 10)


def test_agenda_pops_in_score_order_with_deterministic_ties():
    rng = np.random.default_rng(0)
    keys = rng.integers(-50, 50, size=3000).astype(float) / 7.0
    order = _core()._test_agenda(list(keys))
    assert sorted(order) == list(range(len(keys)))
    popped = [(keys[i], -i) for i in order]
    assert popped == sorted(popped, reverse=True)  # higher score first, smaller id on ties


def test_chart_keeps_the_best_and_evicts_the_lowest():
    rng = np.random.default_rng(1)
    keys = rng.normal(size=500)
    beam = 37
    evicted, kept, valid = _core()._test_chart(list(keys), beam)
    assert valid
    assert len(kept) == beam
    best = sorted(range(len(keys)), key=lambda i: (-keys[i], i))[:beam]
    assert kept == sorted(best)
    assert len(evicted) == len(keys) - beam
    # every evicted edge scores no higher than every kept edge
    assert max(keys[e] for e in evicted) <= min(keys[k] for k in kept)
