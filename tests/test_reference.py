"""The pure-Python reference decoder gives the same output as the Cython decoder."""
import numpy as np
import pytest

from wo.dep.core import DepSearch
from wo.dep.instance import make_instance
from wo.io import scramble
from wo.dep.linearizer import given_for
from wo.model import Model
from wo.dep.reference import ReferenceDecoder


@pytest.mark.parametrize("given", ["none", "full"])
def test_reference_equals_cython(model_path, ewt_dev, given):
    m = Model.load(model_path)
    core = DepSearch(m.weights, m.hash_bits)
    ref = ReferenceDecoder(m.weights, m.hash_bits)
    checked = 0
    for i, s in enumerate(ewt_dev[500:]):
        if not 2 <= len(s) <= 14:
            continue
        sc, _ = scramble(s, 2, i)
        pos, heads = given_for(sc, given, 1.0, 1.0, 2, i)
        inst = make_instance(sc.forms, pos, heads, m.tagdict)
        beam, pops = 3 * inst.n, 6 * inst.n
        a = core.decode(*inst.arrays(), beam, pops, 0.0, 0)
        b = ref.decode(*inst.arrays(), beam, pops)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), s.sent_id
        assert a[3:] == b[3:] and abs(a[2] - b[2]) < 1e-9
        checked += 1
        if checked == 12:
            break
    assert checked == 12
