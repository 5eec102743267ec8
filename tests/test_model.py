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


@pytest.mark.parametrize("compact", [False, "q8"])
def test_arrays_in_the_header_are_packed_as_bytes_and_read_back(tmp_path, compact):
    from wo.resources import peek_header

    w = np.random.default_rng(0).normal(size=1 << 12).astype(np.float32)
    rows = {"cls": np.arange(1000, dtype=np.uint16) % 7, "w": np.linspace(-2, 2, 1000, dtype=np.float32),
            "indptr": np.array([0, 400, 1000], dtype=np.int64)}
    m = Model(w, 12, TagDictionary({"the": ["DT"]}, ["NN"]), {"stage": {"rows": rows, "names": ["a", "b"]}})
    p = tmp_path / "m.wo"
    m.save(str(p), compact=compact)
    raw = p.read_bytes()
    assert struct.unpack("<I", raw[8:12])[0] == FORMAT_VERSION == 2
    assert b"__array__" not in raw[:4096]        # the arrays sit in the zlib blob, not in the JSON stub
    m2 = Model.load(str(p))
    got = m2.header["stage"]["rows"]
    for k, v in rows.items():
        assert got[k].dtype == v.dtype and np.array_equal(got[k], v), k
    assert got["w"].flags.writeable and m2.header["stage"]["names"] == ["a", "b"]
    if compact:   # 8-bit codes: close, not equal
        assert np.corrcoef(np.asarray(m2.weights, dtype=np.float64), w)[0, 1] > 0.95
    else:
        assert np.array_equal(m2.weights, w)
    assert np.array_equal(peek_header(str(p))["stage"]["rows"]["cls"], rows["cls"])   # `wo models` reads it too
    # a corrupt blob is the model's fault, named with its file
    stub_len = struct.unpack("<I", raw[12:16])[0]
    bad = bytearray(raw)
    bad[16 + stub_len + 20] ^= 0xFF
    c = tmp_path / "corrupt.wo"
    c.write_bytes(bytes(bad))
    with pytest.raises(ModelError, match=f"{c}: corrupt header blob"):
        Model.load(str(c))
    assert peek_header(str(c)) == {}


def test_version_1_compact_models_are_still_read(tmp_path):
    import base64
    import json
    import zlib

    # a version-1 compact file as wo wrote them before the packed header: base64 zlib JSON under header_zlib
    w = np.zeros(1 << 12, dtype="<f2")
    inner = {"note": "old", "tagdict": {"table": {}, "unknown": ["NN"]}}
    head = {"format_version": 1, "feature_set": "zc2015-table2-v1", "hash_bits": 12, "weights_dtype": "float16",
            "weights_crc32": zlib.crc32(w.tobytes()) & 0xFFFFFFFF, "weights_bytes": w.nbytes,
            "header_zlib": base64.b64encode(zlib.compress(json.dumps(inner).encode())).decode()}
    hb = json.dumps(head).encode()
    pre = b"WOMODEL\0" + struct.pack("<II", 1, len(hb)) + hb
    p = tmp_path / "old.wo"
    p.write_bytes(pre + b"\0" * ((-len(pre)) % 64) + w.tobytes())
    m = Model.load(str(p))
    assert m.header["note"] == "old" and m.hash_bits == 12


def test_a_replaced_model_keeps_its_permissions_and_a_write_error_names_it(tmp_path, monkeypatch):
    import os

    m, p = _model(tmp_path)
    os.chmod(p, 0o600)
    m.save(str(p))
    assert os.stat(p).st_mode & 0o777 == 0o600           # before: the umask's (0o644)
    import wo.model as wm

    real_fdopen = os.fdopen

    class Full:   # a full disk: every write fails with ENOSPC and no file name
        def __init__(self, fd, mode):
            self.fh = real_fdopen(fd, mode)

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.fh.close()

        def write(self, b):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(wm.os, "fdopen", Full)
    with pytest.raises(OSError, match="No space left on device") as exc:
        m.save(str(tmp_path / "new.wo"))
    assert exc.value.filename == str(tmp_path / "new.wo")
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".wo-model-")]
