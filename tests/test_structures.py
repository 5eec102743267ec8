import numpy as np

from wo._fast._agenda import agenda_pop_order, chart_trace
from wo._fast._arena import edge_size


def test_agenda_pops_in_score_order_with_deterministic_ties():
    rng = np.random.default_rng(0)
    keys = rng.integers(-50, 50, size=3000).astype(float) / 7.0
    order = agenda_pop_order(list(keys))
    assert sorted(order) == list(range(len(keys)))
    popped = [(keys[i], -i) for i in order]
    assert popped == sorted(popped, reverse=True)  # higher score first, smaller id on ties


def test_chart_keeps_the_best_and_evicts_the_lowest():
    rng = np.random.default_rng(1)
    keys = rng.normal(size=500)
    beam = 37
    evicted, kept, valid, rivals = chart_trace(list(keys), beam)
    assert valid
    assert len(kept) == beam
    best = sorted(range(len(keys)), key=lambda i: (-keys[i], i))[:beam]
    assert kept == sorted(best)
    assert len(evicted) == len(keys) - beam
    assert set(rivals) == {-1}
    # every evicted edge scores no higher than every kept edge
    assert max(keys[e] for e in evicted) <= min(keys[k] for k in kept)


def test_dp_signature_chart_keeps_exactly_the_best_edge_per_signature():
    rng = np.random.default_rng(2)
    m, beam = 3000, 10_000          # beam larger than the input: only DP pruning removes edges
    keys = rng.integers(-30, 30, size=m).astype(float) / 3.0   # many exact ties
    sigs = rng.integers(1, 200, size=m).astype(np.uint64)
    sigs[::97] = 0                  # signature 0 is stored as 1 (documented in SigMap)
    left, kept, valid, rivals = chart_trace(list(keys), beam, list(sigs))
    assert valid
    by_sig = {}
    for i in range(m):
        s = int(sigs[i]) or 1
        if s not in by_sig or (keys[i], -i) > (keys[by_sig[s]], -by_sig[s]):
            by_sig[s] = i
    assert kept == sorted(by_sig.values())          # one per signature, the best (ties: first)
    assert len(left) == m - len(kept)
    for i, r in enumerate(rivals):                   # the rival shares the signature and stays
        if r >= 0:
            assert (int(sigs[r]) or 1) == (int(sigs[i]) or 1)


def test_dp_signature_chart_with_a_full_beam_still_evicts_the_lowest():
    rng = np.random.default_rng(3)
    m, beam = 2000, 25
    keys = rng.normal(size=m)
    sigs = rng.integers(1, 400, size=m).astype(np.uint64)
    left, kept, valid, _ = chart_trace(list(keys), beam, list(sigs))
    assert valid and len(kept) == beam
    assert len({int(sigs[k]) for k in kept}) == beam  # never two edges with one signature
    # the kept edges are the best of those that were ever kept-able under DP pruning
    assert min(keys[k] for k in kept) >= sorted(keys)[-beam * 20]


def test_edge_struct_stays_compact():
    # 80 bytes until the int16 pair keys (the chart scan's arc filter: full trees 2x faster)
    assert edge_size() <= 88


def test_training_is_a_search_subclass_that_needs_writable_weights_and_an_accumulator():
    import pytest

    from wo._fast._dep import DepGrammar
    from wo._fast._search import Search
    from wo._fast._train import Trainer

    W = np.zeros(1 << 10, dtype=np.float32)
    assert not hasattr(Search(DepGrammar(), W, 10), "train_one")   # decoding only
    t = Trainer(DepGrammar(), W, 10, np.zeros(1 << 10))
    assert isinstance(t, Search) and t.n_updates == 0 and t.avg_count == 1.0
    ro = W.copy()
    ro.flags.writeable = False
    Search(DepGrammar(), ro, 10)                                     # read-only decodes
    with pytest.raises(ValueError, match="writable"):
        Trainer(DepGrammar(), ro, 10, np.zeros(1 << 10))
    with pytest.raises(ValueError, match="accumulator"):
        Trainer(DepGrammar(), W, 10, np.zeros(1 << 10, dtype=np.float32))
