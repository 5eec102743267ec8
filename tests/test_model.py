import struct

import numpy as np
import pytest

from wo.model import TagDictionary
from wo.model import FORMAT_VERSION, Model, ModelError


def _model(tmp_path):
    w = np.random.default_rng(0).normal(size=1 << 12).astype(np.float32)
    td = TagDictionary({"the": ["DT"], "run": ["NN", "VB"]}, ["NN", "NNP"])
    m = Model(w, 12, td, {"note": "x"})
    p = tmp_path / "m.wo"
    m.save(str(p))
    return m, p


def test_round_trip_memory_maps_weights(tmp_path):
    m, p = _model(tmp_path)
    m2 = Model.load(str(p))
    assert np.array_equal(m2.weights, m.weights)
    assert m2.hash_bits == 12 and m2.tagdict.tags("run") == ["NN", "VB"] and m2.header["note"] == "x"
    assert isinstance(m2.weights.base, np.memmap) or isinstance(m2.weights, np.memmap)


def test_wrong_version(tmp_path):
    _, p = _model(tmp_path)
    data = bytearray(p.read_bytes())
    data[8:12] = struct.pack("<I", FORMAT_VERSION + 7)
    p.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="version"):
        Model.load(str(p))


def test_truncated_corrupt_and_non_model(tmp_path):
    _, p = _model(tmp_path)
    data = p.read_bytes()
    t = tmp_path / "trunc.wo"
    t.write_bytes(data[:-100])
    with pytest.raises(ModelError, match="truncated"):
        Model.load(str(t))
    c = tmp_path / "corrupt.wo"
    c.write_bytes(data[:-8] + b"\x01\x02\x03\x04\x05\x06\x07\x08")
    with pytest.raises(ModelError, match="corrupt"):
        Model.load(str(c))
    n = tmp_path / "notes.txt"
    n.write_text("hello world, not a model\n")
    with pytest.raises(ModelError, match="not a wo model"):
        Model.load(str(n))


def test_parameter_mixing(model_path, tmp_path):
    import numpy as np

    from wo.model import TagDictionary
    from wo.model import Model, mix

    a = Model.load(model_path, mmap=False)      # a real trained model (the shipped one when present)
    b = Model(np.asarray(a.weights) * 3.0, a.hash_bits, a.tagdict, dict(a.header))
    m = mix([a, b])
    assert np.allclose(m.weights, 2.0 * np.asarray(a.weights), atol=1e-6)
    assert len(m.header["mixed_from"]) == 2
    m.save(str(tmp_path / "m.wo"))
    assert np.allclose(Model.load(str(tmp_path / "m.wo")).weights, m.weights)
    other = Model(np.zeros(1 << 10, dtype=np.float32), 10, TagDictionary({}, ["NN"]))
    with pytest.raises(ValueError):
        mix([a, other])
    with pytest.raises(ValueError):
        mix([])
