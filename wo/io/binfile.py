"""wo's sectioned binary files (models, language models, phrase indexes): a JSON header and
64-byte aligned sections that worker processes memory-map.

Layout (little-endian)::

    8 bytes   magic (per file kind)
    4 bytes   uint32 format version
    4 bytes   uint32 header length H
    H bytes   UTF-8 JSON header; for sectioned files it holds ``sections`` {name: [offset,
              bytes]} and ``crc32`` (CRC-32 of everything after the header)
    sections  each at a 64-byte aligned offset, zero padded

Files are written to a temporary file beside the target and renamed into place (atomic), with
the permissions of the file replaced (the umask's for a new file).
"""
from __future__ import annotations

import json
import os
import struct
import tempfile
import zlib
from typing import Dict, List, Sequence, Tuple

import numpy as np

ALIGN = 64


def _pad(n: int) -> int:
    return (-n) % ALIGN


def publish(tmp: str, path: str) -> None:
    """Rename a finished temporary file into place, with the permissions of the file it
    replaces (an output of mode 0o600 stays 0o600), or the umask's for a new file.  Raises
    OSError (from chmod or the rename)."""
    from .outputs import target_mode

    mode = target_mode(path)
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def read_header(path: str, magic: bytes, version, error: type, kind: str):
    """The JSON header of a wo binary file (8-byte magic, uint32 version, uint32 length, JSON);
    version: the version read (int) or the versions read (tuple of int).

    Returns (header dict, header length in bytes).  Raises ``error`` naming the file for a
    different magic (not a wo ``kind`` file), another version, a truncated or corrupt header
    (not UTF-8, not JSON, or JSON that is not an object); FileNotFoundError.  Shared by model
    files, LM files and phrase indexes.
    """
    with open(path, "rb") as fh:
        pre = fh.read(16)
        if len(pre) < 16 or pre[:8] != magic:
            raise error(f"{path}: not a wo {kind} file (bad magic)")
        got, hlen = struct.unpack("<II", pre[8:16])
        versions = (version,) if isinstance(version, int) else tuple(version)
        if got not in versions:
            raise error(f"{path}: {kind} format version {got}, this wo reads version "
                        f"{' or '.join(str(v) for v in versions)}")
        hb = fh.read(hlen)
        if len(hb) < hlen:
            raise error(f"{path}: truncated {kind} file (header incomplete)")
    try:
        head = json.loads(hb.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise error(f"{path}: corrupt {kind} header ({exc})") from None
    if not isinstance(head, dict):
        raise error(f"{path}: corrupt {kind} header (JSON {type(head).__name__}, not a JSON object)")
    return head, hlen


def write_sections(path: str, magic: bytes, version: int, header: dict,
                   blobs: Sequence[Tuple[str, bytes]], prefix: str = ".wo-") -> dict:
    """Write a sectioned file (see the module docstring) atomically: ``header`` (JSON-able
    dict) gains ``sections`` and ``crc32``; blobs: (name, bytes) in file order.  Returns the
    header written.  Raises OSError when the file cannot be written."""
    body = b""
    sections: Dict[str, List[int]] = {}
    # two passes: the header's length decides where the sections start
    for _ in range(3):
        hdr = json.dumps(dict(header, sections=sections, crc32=zlib.crc32(body)), sort_keys=True).encode("utf-8")
        off = 16 + len(hdr)
        off += _pad(off)
        start = off
        parts = []
        new_sections = {}
        for name, data in blobs:
            new_sections[name] = [off, len(data)]
            parts.append(data)
            parts.append(b"\0" * _pad(len(data)))
            off += len(data) + _pad(len(data))
        body = b"".join(parts)
        if new_sections == sections:
            break
        sections = new_sections
    hdr = json.dumps(dict(header, sections=sections, crc32=zlib.crc32(body)), sort_keys=True).encode("utf-8")
    assert 16 + len(hdr) + _pad(16 + len(hdr)) == start, "header length changed"
    from .outputs import named_error, track_temp, untrack_temp

    d = os.path.dirname(os.path.abspath(path)) or "."
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=prefix)
    except OSError as exc:
        raise named_error(exc, path) from None
    track_temp(tmp)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(magic + struct.pack("<II", version, len(hdr)) + hdr)
            fh.write(b"\0" * _pad(16 + len(hdr)))
            fh.write(body)
        publish(tmp, path)
    except OSError as exc:     # a full disk: told with the user's path, not the temporary one
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise named_error(exc, path, tmp) from None
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    finally:
        untrack_temp(tmp)
    return json.loads(hdr)


def open_sections(path: str, magic: bytes, version, error: type, kind: str, verify: bool = True):
    """Open a sectioned file: returns (header dict, {name: uint8 memmap of the section}).

    Raises ``error`` naming the file for a file of another kind or version, a header whose
    ``sections`` are not {name: [offset, bytes]} of non-negative integers or whose ``crc32`` is
    not an integer, a truncated file, or (``verify``) a checksum mismatch; FileNotFoundError.
    """
    size = os.path.getsize(path)
    header, _ = read_header(path, magic, version, error, kind)
    secs = header.get("sections", {})
    if not isinstance(secs, dict) or not all(
            isinstance(v, list) and len(v) == 2 and all(type(x) is int and x >= 0 for x in v) for v in secs.values()):
        raise error(f"{path}: corrupt {kind} header (sections: not {{name: [offset, bytes]}})")
    if type(header.get("crc32")) is not int:
        raise error(f"{path}: corrupt {kind} header (crc32: {header.get('crc32')!r}, not an integer)")
    end = max((o + n for o, n in secs.values()), default=0)
    if not secs or size < end:
        raise error(f"{path}: truncated ({size} bytes, the header describes {end})")
    start = min(o for o, _ in secs.values())
    if verify:
        with open(path, "rb") as fh:
            fh.seek(start)
            crc = 0
            left = size - start
            while left > 0:
                chunk = fh.read(min(left, 1 << 24))
                if not chunk:
                    break
                crc = zlib.crc32(chunk, crc)
                left -= len(chunk)
        if crc != header.get("crc32"):
            raise error(f"{path}: checksum mismatch (corrupt file)")
    mm = np.memmap(path, dtype=np.uint8, mode="r")
    return header, {name: mm[o:o + n] for name, (o, n) in secs.items()}


# ---------------------------------------------------------------------------------- packed headers
ARRAY_KEY = "__array__"


def pack_header(header: dict, level: int = 6) -> Tuple[dict, bytes]:
    """A header with numpy arrays in it (any depth of dicts and lists) as one zlib blob: the
    JSON (each array replaced by ``{"__array__": [offset, dtype, shape]}``, offset in bytes
    past the JSON) followed by the arrays' raw bytes.  Returns (the stub's fields, blob): the
    stub gets ``header_json_bytes`` (length of the JSON inside the blob) and
    ``header_blob_bytes`` (the blob's length).  Arrays compress as bytes, not as base64 text
    (a third of the size for the deep track's completion weights).  Raises TypeError for a
    value JSON cannot hold."""
    arrays: List[np.ndarray] = []
    used = [0]

    def walk(o):
        if isinstance(o, np.ndarray):
            a = np.ascontiguousarray(o)
            a = a.astype(a.dtype.newbyteorder("<"), copy=False)
            arrays.append(a)
            off = used[0]
            used[0] += a.nbytes
            return {ARRAY_KEY: [off, a.dtype.str, list(a.shape)]}
        if isinstance(o, dict):
            return {k: walk(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [walk(v) for v in o]
        return o

    js = json.dumps(walk(header), sort_keys=True).encode("utf-8")
    blob = zlib.compress(js + b"".join(a.tobytes() for a in arrays), level)
    return {"header_json_bytes": len(js), "header_blob_bytes": len(blob)}, blob


def unpack_header(stub: dict, blob: bytes) -> dict:
    """Inverse of :func:`pack_header`: the header the blob holds, arrays restored as writable
    numpy arrays (little-endian dtypes).  Raises ValueError (zlib.error, a JSON error or a
    bad array entry) for a corrupt blob, a ``header_json_bytes`` that is not a non-negative
    integer or a JSON that is not an object."""
    n = stub.get("header_json_bytes")
    if type(n) is not int or n < 0:
        raise ValueError(f"header_json_bytes: {n!r}, not a non-negative integer")
    raw = bytearray(zlib.decompress(blob))
    if n > len(raw):
        raise ValueError("header blob shorter than its JSON")
    body = memoryview(raw)[n:]

    def restore(o: dict):
        if len(o) == 1 and ARRAY_KEY in o:
            off, dt, shape = o[ARRAY_KEY]
            count = int(np.prod(shape)) if shape else 1
            return np.frombuffer(body, dtype=np.dtype(dt), count=count, offset=int(off)).reshape(shape)
        return o

    full = json.loads(bytes(raw[:n]).decode("utf-8"), object_hook=restore)
    if not isinstance(full, dict):
        raise ValueError(f"the packed header is a JSON {type(full).__name__}, not a JSON object")
    return full


def read_packed_header(path: str, head: dict, hlen: int) -> Tuple[dict, int]:
    """The full header of a file whose stub ``head`` (read by :func:`read_header`, ``hlen``
    bytes) announces a packed blob (``header_blob_bytes``): the stub's fields with the blob's
    header, and the length of stub plus blob (where the padding before the data starts).  A
    stub without a blob is returned as it is.  Raises ValueError for a truncated or corrupt
    blob or blob lengths that are not non-negative integers; OSError."""
    if "header_blob_bytes" not in head:
        return head, hlen
    n = head["header_blob_bytes"]
    if type(n) is not int or n < 0:
        raise ValueError(f"corrupt header (header_blob_bytes: {n!r}, not a non-negative integer)")
    with open(path, "rb") as fh:
        fh.seek(16 + hlen)
        blob = fh.read(n)
    if len(blob) < n:
        raise ValueError("truncated file (header blob incomplete)")
    try:
        full = unpack_header(head, blob)
    except (zlib.error, ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
        raise ValueError(f"corrupt header blob ({exc})") from None
    stub = {k: v for k, v in head.items() if k not in ("header_json_bytes", "header_blob_bytes")}
    stub.update(full)
    return stub, hlen + n
