"""Model files (every system's): a JSON header plus a raw float32 weight table that workers
memory-map; the string atoms and the tag dictionary the models store.

Layout (little-endian)::

    8 bytes   magic b"WOMODEL\\0"
    4 bytes   uint32 format version (FORMAT_VERSION)
    4 bytes   uint32 header length H
    H bytes   UTF-8 JSON header (hash_bits, feature_set, tag dictionary, training record,
              weights_crc32, ...)
    padding   zero bytes up to a multiple of 64
    4*2^b     float32 weights (or 2*2^b float16 when the header's ``weights_dtype`` is
              "float16": the compact form of shipped models, widened to float32 on load)

A compact header (format version 2) is a small JSON stub followed by one zlib blob holding
the full JSON header and the raw bytes of the numpy arrays in it
(:func:`wo.io.binfile.pack_header`; H then counts stub and blob); version 1 files, whose
compact header is stored base64-encoded under ``header_zlib``, are still read.  The lexicons
of SR models are large and compress about tenfold.

The weights start at a 64-byte aligned offset so ``np.memmap`` (mode "r") shares the pages
between joblib worker processes instead of copying the model per process.
"""
from __future__ import annotations

import json
import os
import struct
import tempfile
import zlib
from collections import Counter, defaultdict
from typing import Any, Dict, List, Optional, Sequence

import mmh3
import numpy as np

from .io.binfile import pack_header, read_header, read_packed_header  # noqa: F401  (shared by model, LM and index files)

MAGIC = b"WOMODEL\0"
FORMAT_VERSION = 2
READ_VERSIONS = (1, 2)   # version 1: the compact header base64-encoded in the JSON (``header_zlib``)
FEATURE_SET = "zc2015-table2-v1"


def _has_array(o) -> bool:
    """Whether a JSON-like tree holds a numpy array (stored packed, :func:`wo.io.binfile.pack_header`)."""
    if isinstance(o, np.ndarray):
        return True
    if isinstance(o, dict):
        return any(_has_array(v) for v in o.values())
    if isinstance(o, (list, tuple)):
        return any(_has_array(v) for v in o)
    return False


def atom(s: str) -> int:
    """32-bit MurmurHash3_x86_32 atom of a string (unsigned), as used for words and POS tags."""
    return mmh3.hash(s, 0, signed=False)


class TagDictionary:
    """Tag dictionary compiled from training data (Zhang & Clark 2015, section 4.3; Ratnaparkhi 1996).

    ``tags(form)`` gives the candidate POS tags of a word: those it was seen with whose share is
    at least ``min_share``; unseen words get the open-class tags of hapax words (share >=
    ``unk_share``).  Deterministic (sorted) output.
    """

    def __init__(self, table: Dict[str, List[str]], unknown: List[str]):
        self.table = table
        self.unknown = unknown

    @classmethod
    def build(cls, sents: Sequence, min_share: float = 0.05, unk_share: float = 0.03):
        """Compile the dictionary from training sentences (XPOS column; ``_`` ignored)."""
        counts: Dict[str, Counter] = defaultdict(Counter)
        for s in sents:
            for f, t in zip(s.forms, s.xpos):
                if t != "_":
                    counts[f][t] += 1
        table = {}
        hapax = Counter()
        for f, c in counts.items():
            tot = sum(c.values())
            table[f] = sorted(t for t, k in c.items() if k >= min_share * tot) or [c.most_common(1)[0][0]]
            if tot == 1:
                hapax.update(c)
        htot = sum(hapax.values()) or 1
        unknown = sorted(t for t, k in hapax.items() if k >= unk_share * htot) or ["NN"]
        return cls(table, unknown)

    def tags(self, form: str) -> List[str]:
        """Candidate POS tags of a word form (sorted list of str; never empty)."""
        t = self.table.get(form)
        if t is None:
            t = self.table.get(form.lower())
        if t is None:
            if any(ch.isdigit() for ch in form) and "CD" in self.all_tags():
                return ["CD"] if not any(ch.isalpha() for ch in form) else sorted(set(self.unknown) | {"CD"})
            return self.unknown
        return t

    def all_tags(self) -> set:
        """Every tag the dictionary can propose (set of str)."""
        if not hasattr(self, "_all"):
            self._all = set(t for ts in self.table.values() for t in ts) | set(self.unknown)
        return self._all

    def to_json(self) -> dict:
        """JSON-serialisable form stored in the model header."""
        return {"table": self.table, "unknown": self.unknown}

    @classmethod
    def from_json(cls, d: dict) -> "TagDictionary":
        """Inverse of :meth:`to_json`.  Raises ValueError saying what is wrong for an entry that
        is not {"table": {word: [tag, ...]}, "unknown": [tag, ...]} (tags and words strings)."""
        if not isinstance(d, dict):
            raise ValueError(f"a JSON {type(d).__name__}, not {{\"table\": ..., \"unknown\": ...}}")
        table, unknown = d.get("table"), d.get("unknown")
        if not isinstance(table, dict):
            raise ValueError(f"table: {_short(table)}, not {{word: [tag, ...]}}")
        for k, v in table.items():
            if not isinstance(v, list) or not all(isinstance(t, str) for t in v):
                raise ValueError(f"table[{k!r}]: {_short(v)}, not a list of tags")
        if not isinstance(unknown, list) or not all(isinstance(t, str) for t in unknown):
            raise ValueError(f"unknown: {_short(unknown)}, not a list of tags")
        return cls({k: list(v) for k, v in table.items()}, list(unknown))


def _short(v, n: int = 40) -> str:
    """``repr(v)`` cut to about ``n`` characters (a value quoted in a one-line message)."""
    r = repr(v)
    return r if len(r) <= n else r[:n - 3] + "..."


SHIPPED = {"dep": "wo-ewt-dep-lm.wo", "sr": "wo-ewt-sr.wo", "ccg": "wo-ewt-ccg-lm.wo", "lm": "wo-en-4gram.wolm"}


SYSTEM_NAMES = {"dep": "a dependency word-ordering model (wo linearize)", "sr": "an SR model (wo sr realize)",
                "ccg": "a CCG model (wo ccg linearize)", "smt": "an SMT model (wo smt translate)"}


def system_of(header: Dict[str, Any]) -> str:
    """The system a model header belongs to: "sr", "ccg", "smt" (their header sections), else
    "dep"."""
    for s in ("sr", "ccg", "smt"):
        if s in header:
            return s
    return "dep"


def require_system(model: "Model", system: str) -> None:
    """Raise ModelError (one line naming the file) unless ``model`` belongs to ``system``."""
    found = system_of(model.header)
    if found != system:
        raise ModelError(f"{model.path or 'model'}: {SYSTEM_NAMES[found]}, not {SYSTEM_NAMES[system]}")


def default_model(system: str) -> str:
    """Path of the shipped default model of ``system`` ("dep", "sr", "ccg"; "lm": the English
    4-gram that ``wo idl`` and ``wo gyro`` decode with).

    Looked up in the model directories of :func:`wo.resources.model_dirs` (``$WO_MODEL_DIR``,
    ``corpora/models`` of a clone, the installed model packages).  Raises ModelError naming the
    model package to install when it is not there (or pass ``--model``).
    """
    return require_model(SHIPPED[system], f"{system} model")


def require_model(name: str, what: str = "model") -> str:
    """The path of the shipped model ``name`` (relative to a model directory, e.g.
    ``wo-tatoeba-smt.wo``, ``sr/pt_bosque.wo``; :func:`wo.resources.find_model`).  Raises
    ModelError, one line naming the model package to install (or WO_MODEL_DIR, or --model),
    when no model directory has it."""
    from .resources import find_model, missing_model_message

    p = find_model(name)
    if p is None:
        raise ModelError(missing_model_message(name, what))
    return p


def search_property(name: str, doc: str, settable: bool = False) -> property:
    """A property that reads (and with ``settable`` writes) ``self.search.<name>``: the training
    state of the shared driver (:class:`wo._fast._train.Trainer`, the ``Search`` that trains),
    forwarded by the grammars' Python wrappers (``DepSearch``, ``CCGSearch``)."""
    get = lambda self: getattr(self.search, name)  # noqa: E731
    put = (lambda self, v: setattr(self.search, name, v)) if settable else None
    return property(get, put, doc=doc)


class ModelError(Exception):
    """The file is not a usable wo model (wrong version, truncated, corrupt, not a model)."""


class Model:
    """Scaled linear model: weights (float32, shape (2**hash_bits,)) + header.

    Source: Zhang & Clark 2015, section 3.3 (scaled linear model) with hashed features.
    """

    def __init__(self, weights: np.ndarray, hash_bits: int, tagdict: TagDictionary,
                 header: Optional[Dict[str, Any]] = None, path: Optional[str] = None):
        if weights.shape != (1 << hash_bits,) or weights.dtype != np.float32:
            raise ValueError("weights must be float32 of shape (2**hash_bits,)")
        self.weights = weights
        self.hash_bits = hash_bits
        self.tagdict = tagdict
        self.header = dict(header or {})
        self.path = path

    def save(self, path: str, compact=False) -> None:
        """Write atomically (temporary file + rename).  compact: True or "float16" for float16
        weights, "q8" for 8-bit codes into a 256-value codebook (:func:`quantize8`), each with a
        zlib-compressed header (half or a quarter of the size; decoding outputs can differ where
        scores tie within the precision).  Raises OSError on I/O failure, ValueError for an
        unknown ``compact``."""
        kind = "float16" if compact is True else (compact or "float32")
        if kind not in ("float32", "float16", "q8"):
            raise ValueError(f"unknown compact form {compact!r} (float16 or q8)")
        codebook = None
        if kind == "q8" and getattr(self, "_q8", None) is not None and self._q8[2] is self.weights:
            w, codebook = self._q8[0], self._q8[1]   # loaded from a q8 file, unchanged: the same codes
        elif kind == "q8":
            w, codebook = quantize8(np.asarray(self.weights))
        else:
            w = np.ascontiguousarray(self.weights, dtype="<f2" if kind == "float16" else "<f4")
        head = dict(self.header)
        head.pop("weights_dtype", None)
        head.pop("codebook", None)
        head.update({
            "format_version": FORMAT_VERSION,
            "feature_set": FEATURE_SET,
            "hash_bits": self.hash_bits,
            "tagdict": self.tagdict.to_json(),
            "weights_crc32": zlib.crc32(w.tobytes()) & 0xFFFFFFFF,
            "weights_bytes": int(w.nbytes),
        })
        blob = b""
        if kind != "float32" or _has_array(head):
            keep = {k: head.pop(k) for k in ("format_version", "feature_set", "hash_bits", "weights_crc32",
                                              "weights_bytes")}
            fields, blob = pack_header(head, 6)   # level 9: 4x the time, 3 % smaller
            head = dict(keep, weights_dtype=kind, **fields)
            if codebook is not None:
                head["codebook"] = [float(x) for x in codebook]
        hb = json.dumps(head, sort_keys=True).encode("utf-8")
        pre = MAGIC + struct.pack("<II", FORMAT_VERSION, len(hb)) + hb + blob
        pad = (-len(pre)) % 64
        d = os.path.dirname(os.path.abspath(path)) or "."
        os.makedirs(d, exist_ok=True)
        from .io.binfile import publish
        from .io.outputs import named_error, track_temp, untrack_temp

        fd, tmp = tempfile.mkstemp(dir=d, prefix=".wo-model-")
        track_temp(tmp)                    # removed on SIGTERM too
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(pre + b"\0" * pad)
                fh.write(w.tobytes())
            publish(tmp, path)             # a replaced model keeps its permissions
        except OSError as exc:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise named_error(exc, path, tmp) from None   # a full disk names the model, not .wo-model-*
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        finally:
            untrack_temp(tmp)

    @staticmethod
    def read_header(path: str):
        """The JSON header of a model file (a compact header expanded: format version 2's
        packed blob, :func:`wo.io.binfile.read_packed_header`, or version 1's base64
        ``header_zlib``) and its stored length in bytes, without reading the weights.  Only the
        layout is checked here (:meth:`load` checks the values).  Raises ModelError naming the
        file for a header that is not a JSON object, a truncated or corrupt compact header;
        FileNotFoundError."""
        head, hlen = read_header(path, MAGIC, READ_VERSIONS, ModelError, "model")
        try:
            head, hlen = read_packed_header(path, head, hlen)
        except ValueError as exc:
            raise ModelError(f"{path}: {exc}") from None
        if "header_zlib" in head:
            import base64
            import binascii

            packed = head.pop("header_zlib")
            try:
                if not isinstance(packed, str):
                    raise ValueError(f"header_zlib: {_short(packed)}, not base64 text")
                full = json.loads(zlib.decompress(base64.b64decode(packed)))
                if not isinstance(full, dict):
                    raise ValueError(f"the compact header is a JSON {type(full).__name__}, not a JSON object")
            except (ValueError, zlib.error, binascii.Error, RecursionError) as exc:
                raise ModelError(f"{path}: corrupt model header ({exc})") from None
            head.update(full)
        return head, hlen

    @classmethod
    def load(cls, path: str, mmap: bool = True, verify: bool = True) -> "Model":
        """Load a model; weights are memory-mapped read-only when ``mmap``.

        Raises ModelError naming the file for a non-model file, another format version, a
        header whose values are missing or of the wrong type or range (:func:`check_header`:
        hash_bits, weights_dtype, weights_crc32, codebook, tagdict, decode), a truncated file
        or a checksum mismatch; FileNotFoundError if it does not exist.
        """
        size = os.path.getsize(path)
        head, hlen = cls.read_header(path)
        check_header(head, path)
        try:
            tagdict = TagDictionary.from_json(head.pop("tagdict"))
        except ValueError as exc:
            raise ModelError(f"{path}: corrupt model header (tagdict {exc})") from None
        bits = head["hash_bits"] = int(head["hash_bits"])
        kind = head.get("weights_dtype", "float32")
        width = {"float32": 4, "float16": 2, "q8": 1}[kind]
        half = kind != "float32"
        offset = 16 + hlen
        offset += (-offset) % 64
        need = offset + width * (1 << bits)
        if size != need:
            raise ModelError(f"{path}: truncated or padded model file ({size} bytes, expected {need})")
        dt = {"float32": "<f4", "float16": "<f2", "q8": "u1"}[kind]
        if mmap and not half:
            w = np.memmap(path, dtype=dt, mode="r", offset=offset, shape=(1 << bits,))
        else:
            w = np.fromfile(path, dtype=dt, count=1 << bits, offset=offset)
        if verify and (zlib.crc32(memoryview(w).cast("B")) & 0xFFFFFFFF) != head.get("weights_crc32"):
            raise ModelError(f"{path}: corrupt model file (weights checksum mismatch)")
        codes = None
        if kind == "q8":
            book = np.asarray(head.pop("codebook"), dtype=np.float32)   # 256 finite numbers (check_header)
            codes, w = w, book[w]
        elif half:
            w = w.astype(np.float32)
        m = cls(w, bits, tagdict, head, path)
        if codes is not None:   # saving it as q8 again keeps these codes
            m._q8 = (codes, book, w)
        return m


WEIGHT_TYPES = ("float32", "float16", "q8")


def check_header(head: Dict[str, Any], path: str) -> None:
    """Check the values of a model header (as :meth:`Model.read_header` returns it) before
    the weights are read: ``feature_set`` (this wo's), ``hash_bits`` (an integer 1..31),
    ``weights_dtype`` (one of :data:`WEIGHT_TYPES`; absent:
    float32), ``weights_crc32`` (an integer), a q8 model's ``codebook`` (256 finite numbers),
    ``tagdict`` (present; its entries are checked by :meth:`TagDictionary.from_json`) and the
    decode settings (``decode``, :func:`check_decode`).  Raises ModelError "PATH: ..." naming
    the value; returns None."""
    from .checks import check_value

    if head.get("feature_set") != FEATURE_SET:
        raise ModelError(f"{path}: feature set {_short(head.get('feature_set'))}, expected {FEATURE_SET!r}")
    for key, rule in (("hash_bits", "model_hash_bits"), ("weights_crc32", "crc32")):
        if key not in head:
            raise ModelError(f"{path}: corrupt model header (no {key})")
        try:
            check_value(head[key], rule)
        except ValueError as exc:
            raise ModelError(f"{path}: corrupt model header ({key} {exc})") from None
    kind = head.get("weights_dtype", "float32")
    if not isinstance(kind, str) or kind not in WEIGHT_TYPES:
        raise ModelError(f"{path}: corrupt model header (weights_dtype {_short(kind)}, not one of "
                         f"{', '.join(WEIGHT_TYPES)})")
    if kind == "q8":
        book = head.get("codebook")
        if not (isinstance(book, list) and len(book) == 256 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x) for x in book)):
            raise ModelError(f"{path}: corrupt model header (a q8 model needs a codebook of 256 finite numbers, "
                             f"not {_short(book)})")
    if "tagdict" not in head:
        raise ModelError(f"{path}: corrupt model header (no tagdict)")
    if "decode" in head:
        check_decode(head["decode"], path, "decode.")


def quantize8(w: np.ndarray):
    """8-bit quantization of a weight vector: sign and a 7-bit logarithmic magnitude (a
    log-scale codebook, as in the quantized LMs of Whittaker & Raj 2001 and KenLM's ``-q``, but
    with log-spaced bins: a perceptron's few large weights decide its rankings, so they keep
    their precision, about 5 % relative at most).  Code 0 is exactly 0.0; codes 1-127 are the
    negative, 129-255 the positive weights; |w| below the 127 levels' floor (the 20th
    percentile of non-zero magnitudes) take the lowest level (it_partut dev, same model: float32
    77.16, this 77.28, a floor at the 1st percentile 76.90, equal-population bins 72.42).

    w: float32[N].  Returns (codes uint8[N], codebook float32[256])."""
    w = np.asarray(w, dtype=np.float32).ravel()
    codes = np.zeros(w.shape, dtype=np.uint8)
    book = np.zeros(256, dtype=np.float32)
    nz = np.flatnonzero(w)
    if not len(nz):
        return codes, book
    mag = np.abs(w[nz]).astype(np.float64)
    hi, lo = float(mag.max()), float(max(np.percentile(mag, 20), mag.max() * 1e-7))
    levels = np.geomspace(lo, hi, 127)
    edges = np.sqrt(levels[:-1] * levels[1:])            # geometric midpoints
    k = np.searchsorted(edges, mag)                        # 0..126
    codes[nz] = np.where(w[nz] > 0, 129 + k, 1 + k).astype(np.uint8)
    book[1:128] = -levels
    book[129:256] = levels
    return codes, book


def mix(models: "list[Model]", weights: Optional["list[float]"] = None) -> Model:
    """Parameter mixing: the weighted mean of the weight vectors of several trained models.

    All models must share hash_bits, feature set and tag dictionary (e.g. runs of ``wo train``
    on the same training data).  The result keeps the first model's header (decode defaults,
    tag dictionary) and records the sources under ``header["mixed_from"]``.  Averaging the
    parameters of separately trained perceptrons is the one-shot form of parameter mixing
    (McDonald, Hall & Mann 2010).  weights: list of float (default uniform).
    Raises ValueError for an empty list or incompatible models.
    """
    if not models:
        raise ValueError("nothing to mix")
    first = models[0]
    for m in models[1:]:
        if m.hash_bits != first.hash_bits or m.tagdict.table != first.tagdict.table:
            raise ValueError("models differ in hash size or tag dictionary; cannot mix")
        if m.header.get("feature_set", FEATURE_SET) != first.header.get("feature_set", FEATURE_SET):
            raise ValueError("models have different feature sets; cannot mix")
    ws = weights or [1.0] * len(models)
    acc = np.zeros(first.weights.shape, dtype=np.float64)
    for w, m in zip(ws, models):
        acc += w * np.asarray(m.weights, dtype=np.float64)
    acc /= float(sum(ws))
    head = dict(first.header)
    head["mixed_from"] = [{"path": os.path.basename(m.path or ""), "weight": w,
                           "training": {k: v for k, v in m.header.get("training", {}).items()
                                        if k in ("best_epoch", "dev_bleu", "train_sentences", "dropped_sentences")}}
                          for w, m in zip(ws, models)]
    return Model(acc.astype(np.float32), first.hash_bits, first.tagdict, head)


def check_lm_fit(model, lm, where: str = "--lm") -> None:
    """Refuse an LM that does not fit a model: the model was trained without an LM, or with an
    LM of another order, or (models that record it) another vocabulary, so the learned LM
    feature weights would be applied to scores they were not trained on.

    Raises ModelError naming both files; returns None when the LM fits.
    """
    ent = model.header.get("lm")
    name = getattr(model, "path", None) or "the model"
    lname = getattr(lm, "path", None) or where
    if not ent:
        raise ModelError(f"{name} was trained without an n-gram LM, so it has no weights for "
                         f"{lname}; decode without --lm (or --lm none), or train with --lm")
    fp = lm.fingerprint()
    if int(ent.get("order", fp["order"])) != fp["order"]:
        raise ModelError(f"{lname} is an order-{fp['order']} LM but {name} was trained with an "
                         f"order-{ent['order']} LM ({ent.get('file')}); pass that LM or --lm none")
    if "vocab_md5" in ent and ent["vocab_md5"] != fp["vocab_md5"]:
        raise ModelError(f"the vocabulary of {lname} ({fp['vocab_size']} words) is not the one "
                         f"{name} was trained with ({ent.get('file')}, {ent.get('vocab_size')} "
                         "words); pass that LM, --lm none, or retrain with this LM")


def file_beside(model, name: str, also=()) -> Optional[str]:
    """The path of a file a model header names: ``name`` beside the model file, else the first
    existing path of ``also``; None when there is none."""
    cands = [os.path.join(os.path.dirname(os.path.abspath(model.path)), name)] if model.path else []
    return next((p for p in cands + list(also) if p and os.path.exists(p)), None)


def named_file(model, name: str, system: str, key: str, option: str) -> str:
    """The path of a file the header entry ``key`` of a ``system`` model names: beside the model
    file, else in the shipped model directory.  Raises ModelError naming ``option`` (the
    command-line way round it) when it is in neither."""
    try:
        shipped = [os.path.join(os.path.dirname(default_model(system)), name)]
    except ModelError:
        shipped = []
    path = file_beside(model, name, shipped)
    if path is None:
        raise ModelError(f"the model's {key} names {name}, which is not beside it; pass {option}")
    return path


def resolve_lm(model, lm=None, check: bool = True):
    """The LM a model decodes with: ``lm`` a :class:`wo.lm.LanguageModel`, a path, or "none";
    None = the LM named in the model header (``lm.file``), looked up beside the model file and
    in the shipped model directory; no header entry = no LM.  Loaded LMs are cached per
    process (workers memory-map them once).  Raises ModelError when the model's LM is missing
    or, with ``check``, does not fit the model (:func:`check_lm_fit`).
    """
    from .lm.model import LanguageModel
    if lm is None:
        ent = model.header.get("lm")
        if not ent:
            return None
        path = file_beside(model, ent["file"], [ent.get("path", "")])
        if path is None:
            raise ModelError(f"the model was trained with the LM {ent['file']}, which is not beside it; "
                             "pass --lm PATH (or --lm none to decode without it)")
        lm = path
    if isinstance(lm, str):
        if lm == "none":
            return None
        lm = LanguageModel.shared(lm, verify=True)
    if check:
        check_lm_fit(model, lm)
    return lm


def decode_option(explicit, dec: dict, key: str, default, cast=float):
    """A decoding option: the caller's value if given (not None), else the model header's
    ``decode[key]``, else ``default``; converted with ``cast``."""
    return cast(explicit if explicit is not None else dec.get(key, default))


# ------------------------------------------------------------------ decode settings beside a model
# A model names its decoding defaults in its header (``decode``), updated by a small JSON file
# beside it (``<model>.decode.json``); among them the bag search it wants for bags of words
# (``decode.bag``).  This module only reads them: each search's options, and the registry of
# the bag searches a model can name, live with that search (GYRO's: :mod:`wo.gyro.bag`).
SIDECAR = ".decode.json"


def sidecar_path(model_path: str) -> str:
    """The decode-settings file beside a model file: ``x.wo`` -> ``x.decode.json``."""
    return os.path.splitext(model_path)[0] + SIDECAR


# the decode settings a model header's ``decode`` or its decode.json may set, each with the rule
# of the command-line option that sets it too (wo.checks.RULES: --beam-factor, --budget-factor,
# --complete-beam, --patience, --max-pops, ...); other keys (notes, dev scores) are left as they are
DECODE_RULES = {"beam_factor": "positive_float", "budget_factor": "positive_float",
                "tree_beam_factor": "positive_float", "tree_budget_factor": "positive_float",
                "complete_beam": "positive_int", "patience_factor": "nonneg_float",
                "tree_patience_factor": "nonneg_float", "max_pops": "positive_int", "timeout": "nonneg_float"}
# the GYRO options of a ``bag`` entry (wo.gyro.bag.GYRO_OPTIONS) and their rules (wo gyro realize's)
BAG_RULES = {"r": "gyro_r", "beta": "positive_float", "row_cap": "positive_int", "keep": "positive_int",
             "join_slack": "finite_float", "max_split": "nonneg_int", "dep_weight": "nonneg_float",
             "dep_nbest": "positive_int", "dep_budget": "positive_float"}


def check_decode(dec, where: str, prefix: str = "") -> None:
    """Check decode settings (a model header's ``decode``, ``prefix`` "decode.", or a
    decode.json file's object, ``prefix`` ""): ``dec`` must be a JSON object; each number of
    :data:`DECODE_RULES` is checked by the rule of the command-line option that sets it
    (:func:`wo.checks.check_value`: its type, finite, its range); ``bag`` must be an object
    whose ``system`` and ``lm`` are strings and whose GYRO options follow :data:`BAG_RULES`;
    ``tree_rerank`` an object whose ``lms`` and ``models`` are lists of [file name, finite
    weight], ``models_top`` an integer >= 0 and ``default`` true or false.  Other keys
    (notes, dev scores) are not checked.  Raises ModelError "WHERE: KEY must be ..." naming
    the file ``where`` and the key; returns None."""
    from .checks import check_value

    def fail(key, msg):
        raise ModelError(f"{where}: {prefix}{key} {msg}")

    def number(key, value, rule):
        try:
            check_value(value, rule)
        except ValueError as exc:
            fail(key, str(exc))

    if not isinstance(dec, dict):
        what = f"a JSON {type(dec).__name__}, not a JSON object"
        raise ModelError(f"{where}: {prefix.rstrip('.')} must be a JSON object, not {_short(dec)}" if prefix
                         else f"{where}: not a decode-settings file ({what})")
    for key, rule in DECODE_RULES.items():
        if key in dec:
            number(key, dec[key], rule)
    bag = dec.get("bag")
    if bag is not None:
        if not isinstance(bag, dict):
            fail("bag", f"must be a JSON object (system, lm and GYRO options), not {_short(bag)}")
        for key in ("system", "lm"):
            if key in bag and not isinstance(bag[key], str):
                fail(f"bag.{key}", f"must be a string, not {_short(bag[key])}")
        for key, rule in BAG_RULES.items():
            if key in bag:
                number(f"bag.{key}", bag[key], rule)
    tr = dec.get("tree_rerank")
    if tr is not None:
        if not isinstance(tr, dict):
            fail("tree_rerank", f"must be a JSON object (lms, models, models_top, default), not {_short(tr)}")
        for key in ("lms", "models"):
            pairs = tr.get(key, [])
            if not isinstance(pairs, list) or not all(
                    isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
                fail(f"tree_rerank.{key}", f"must be a list of [file name, weight], not {_short(pairs)}")
            for name, w in pairs:
                number(f"tree_rerank.{key} weight of {name}", w, "finite_float")
        if "models_top" in tr:
            number("tree_rerank.models_top", tr["models_top"], "nonneg_int")
        if "default" in tr and not isinstance(tr["default"], bool):
            fail("tree_rerank.default", f"must be true or false, not {_short(tr['default'])}")


def decode_settings(model) -> dict:
    """The decode settings of a :class:`wo.model.Model`: its header's ``decode`` dict updated by
    the sidecar file beside the model (:func:`sidecar_path`), key by key (an entry that is a dict
    in both, e.g. ``bag`` or ``tree_rerank``, is merged one level down; ``tree_rerank`` replaces
    the header's ``lms`` and ``models`` lists as wholes).  Settings can so change without a new
    copy of the model's weights.  Raises ModelError naming the sidecar file for one that is not
    JSON, not a JSON object, or whose settings are ill-typed or out of range (naming the key,
    :func:`check_decode`: the rules of the command-line options that set them).  (The header's
    own settings were checked when the model was loaded, :func:`check_header`.)"""
    dec = {k: (dict(v) if isinstance(v, dict) else v) for k, v in (model.header.get("decode") or {}).items()}
    side = sidecar_path(model.path) if getattr(model, "path", None) else None
    if side and os.path.exists(side):
        try:
            with open(side, encoding="utf-8") as f:
                extra = json.load(f)
        except (ValueError, RecursionError) as exc:   # not UTF-8 or not JSON
            raise ModelError(f"{side}: not a decode-settings file ({exc})") from None
        check_decode(extra, side)
        for k, v in extra.items():
            if isinstance(v, dict) and isinstance(dec.get(k), dict):
                dec[k].update(v)
            else:
                dec[k] = v
    return dec


def bag_spec(model) -> Optional[dict]:
    """The bag search a :class:`wo.model.Model` names (:func:`decode_settings`' ``bag``: the
    header's ``decode.bag`` updated by the sidecar file) as a new dict, or None when it names
    none.  The entry: ``system`` (the search's name, "gyro" when left out), ``lm`` and that
    search's own options; :func:`wo.gyro.bag.make_bag_search` builds it.  Raises ModelError
    as :func:`decode_settings` (a sidecar that is not valid JSON or has ill-typed settings)."""
    spec = dict(decode_settings(model).get("bag") or {})
    return spec or None
