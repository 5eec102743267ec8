"""The compact LM format: a reverse trie of bit-packed n-gram records with optional
quantization, beside the probing tables of :mod:`wo.lm.files` (KenLM's ``trie`` and ``trie -q
-b``: Heafield 2011, "KenLM: Faster and smaller language model queries", section 4.1;
quantization by binning: Whittaker & Raj 2001, "Quantization-based language model
compression").

File layout (little-endian; the sectioned layout of :mod:`wo.io.binfile`)::

    8 bytes   magic b"WOLMTRIE"
    4 bytes   uint32 format version (TRIE_VERSION)
    4 bytes   uint32 header length H
    H bytes   UTF-8 JSON header: as the probing file's (order, counts, vocab_size, sources,
              discounts ...) plus structure "trie", quant_bits q (0 = exact float32 values),
              trie {ubits, orders: [{n, count, wbits, pbits, bbits, rbits}], dropped}
    sections  vocab      the words, UTF-8, one per line, id = line number - 1
              unigrams   float32[V, 2]: log10 prob, log10 backoff by word id (never quantized)
              uptr       V + 1 packed pointers (ubits each) of the unigrams into order 2
              order2..N  count + 1 packed records each (the last one only carries the end
                         pointer): w_1 (wbits), prob (pbits), backoff (bbits), first child in
                         order n + 1 (rbits); the highest order has no backoff and no pointer
              quant      (q > 0) float32 bin centres: per order 2..N, 2^q probability centres,
                         then (orders < N) 2^q backoff centres

The records of order n are sorted by (parent, w_1) where the parent of (w_1 .. w_n) is the
record of (w_2 .. w_n); a query for w walks w, (s_1 w), (s_2 s_1 w) ... down the trie with the
state's words (``wo._fast._lmtrie.TrieModel``).  An n-gram whose suffix (w_2 .. w_n) is not in
the model is left out ("dropped"): a probing query never reaches it either (it stops at the
first missing order), so both formats give the same log10 probabilities when q = 0.

Quantization (q bits, per order and separately for probabilities and backoffs): the sorted
values are cut into 2^q bins of equal population and each bin's centre is the mean of its
values (KenLM's ``MakeBins``); a value is stored as the code of the nearest centre.  Backoff
code 0 is reserved for -0.0, the n-grams that are the context of no longer n-gram (they keep a
zero backoff and end a query's state, as in the probing format, :mod:`wo.lm.files`), and the
other values share 2^q - 1 bins (files written before reserved code 0 for +0.0: they read the
same, without the shorter states).  Unigram values are not quantized.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from .estimation import BOS_ID, EOS_ID, LOG10_ZERO, UNK_ID, NgramTables
from .files import LMError
from .keys import ngram_keys
from ..io.binfile import open_sections, write_sections

TRIE_MAGIC = b"WOLMTRIE"
TRIE_VERSION = 1           # files without compressed pointers (read and written as before)
TRIE_VERSION_ARRAY = 2     # files with compressed pointers (``-a`` formats: an older wo refuses them)
FORMATS = ("probing", "trie", "trie-q8", "trie-a", "trie-q8-a")
MAX_HIGH_BITS = 12         # at most 2^12 + 1 offsets (16 kB) per order: the tables stay in the cache (the
                           # large 4-gram, ns per query against no compression: 12 bits +7 %, 14 +12 %, 16 +22 %)


def parse_format(fmt: str) -> Tuple[str, int, bool]:
    """(structure, quantization bits, compressed pointers): ("probing", 0, False), ("trie", 0,
    False) or ("trie", q, False) for "probing", "trie" and "trie-q<q>" (q in 1..16); a trie
    name ending in "-a" ("trie-a", "trie-q8-a") also compresses the pointers (KenLM's ``-a``,
    :func:`bhiksha_split`).  Raises ValueError for any other name."""
    name, arr = (fmt[:-2], True) if fmt.startswith("trie") and fmt.endswith("-a") else (fmt, False)
    if name in ("probing", "trie"):
        return name, 0, arr
    if name.startswith("trie-q") and name[6:].isdigit() and 1 <= int(name[6:]) <= 16:
        return "trie", int(name[6:]), arr
    raise ValueError(f"unknown LM format {fmt!r} (probing, trie, trie-q<bits> with bits 1..16, e.g. trie-q8; "
                     f"a trie name ending in -a compresses the pointers, e.g. trie-q8-a)")


def lm_format(fmt: str) -> str:
    """``fmt`` when :func:`parse_format` accepts it (the ``--format`` type of ``wo lm train``
    and ``wo lm convert``).  Raises ValueError otherwise."""
    parse_format(fmt)
    return fmt


def _width(x: int) -> int:
    """Bits needed to store the integers 0 .. x (at least 1)."""
    return max(1, int(x).bit_length())


def make_bins(values: np.ndarray, nbins: int) -> np.ndarray:
    """Bin centres (float32[nbins], ascending) of float values by equal population: the sorted
    values cut into ``nbins`` consecutive slices, each centre the mean of its slice (an empty
    slice, when there are fewer values than bins, repeats the previous centre).
    Source: KenLM lm/quantize.cc MakeBins; Whittaker & Raj 2001, section 3 (binning)."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    out = np.zeros(nbins, dtype=np.float64)
    if v.size == 0:
        return out.astype(np.float32)
    bounds = (np.arange(nbins + 1, dtype=np.int64) * v.size) // nbins
    prev = v[0]
    for b in range(nbins):
        lo, hi = bounds[b], bounds[b + 1]
        out[b] = v[lo:hi].mean() if hi > lo else prev
        prev = out[b]
    return out.astype(np.float32)


def encode(values: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Code (uint64) of the nearest centre of each value; centres float32[k] ascending."""
    v = np.asarray(values, dtype=np.float64)
    c = centres.astype(np.float64)
    hi = np.clip(np.searchsorted(c, v), 0, c.size - 1)
    lo = np.clip(hi - 1, 0, c.size - 1)
    pick = np.where(np.abs(v - c[lo]) <= np.abs(c[hi] - v), lo, hi)
    return pick.astype(np.uint64)


def bhiksha_split(ptrs: np.ndarray, width: int, max_high: int = MAX_HIGH_BITS):
    """Compressed pointers (KenLM's ArrayBhiksha, lm/bhiksha.hh; Raj & Whittaker 2003, "Lossless
    compression of language model structure and word identifiers"): of non-decreasing pointers
    of ``width`` bits, each record keeps only the low ``width - h`` bits and a table of 2^h + 1
    offsets holds, for every value v of the high h bits, the index of the first record whose
    pointer's high bits are >= v (the last entry: len(ptrs)).  The pointer of record j is then
    (v << (width - h)) | low[j] with v the last entry <= j.

    ptrs: uint64[m + 1] non-decreasing (the records' pointers and the end pointer).  h is the
    one of 0..min(max_high, width - 1) that saves most bits (m x h against 32 x (2^h + 1));
    0 when nothing is saved.  Returns (h, low uint64[m + 1], offsets uint32[2^h + 1] or None).
    Raises ValueError for pointers that decrease or more than 2^32 - 1 records."""
    p = np.asarray(ptrs, dtype=np.uint64)
    if p.size > 1 and (p[1:] < p[:-1]).any():
        raise ValueError("pointers must be non-decreasing")
    if p.size >= 1 << 32:
        raise ValueError("too many records for 32-bit offsets")
    best, h = 0, 0
    for k in range(1, min(max_high, width - 1) + 1):
        saved = p.size * k - 32 * ((1 << k) + 1)
        if saved > best:
            best, h = saved, k
    if h == 0:
        return 0, p, None
    low_bits = width - h
    high = p >> np.uint64(low_bits)
    offsets = np.searchsorted(high, np.arange((1 << h) + 1, dtype=np.uint64), side="left").astype(np.uint32)
    return h, p & np.uint64((1 << low_bits) - 1), offsets


def _float_bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)


def build_trie(t: NgramTables, quant_bits: int = 0, compress: bool = False):
    """The arrays of a trie LM from estimated or ARPA tables.

    quant_bits: 0 (exact float32 probabilities and backoffs) or q in 1..16 (q-bit codes,
    per-order bins); compress: the pointers of orders 2..N-1 compressed (:func:`bhiksha_split`).
    Returns (uni float32[V, 2], uptr uint8 packed, info dict for the header
    {ubits, orders: [...], dropped}, order dicts for ``TrieModel`` (records, count, widths,
    pcent/bcent float32[2^q] or None, hbits and offsets uint32[2^hbits + 1] or None)).
    Raises ValueError for a repeated n-gram or quant_bits outside 0..16.
    """
    from .._fast._lmtrie import pack_records

    if not 0 <= quant_bits <= 16:
        raise ValueError("quantization bits must be 0..16")
    from .files import extension_backoffs

    V, N = len(t.vocab), t.order
    backoffs = extension_backoffs(t)     # -0.0: no extension (the state stops there)
    uni = np.zeros((V, 2), dtype=np.float32)
    uni[:, 0] = LOG10_ZERO
    r1 = t.ngrams[0][:, 0]
    uni[r1, 0] = t.prob[0]
    uni[r1, 1] = backoffs[0]
    wbits = _width(V - 1)
    # per order: the kept rows sorted by (parent, w_1), their parents and probabilities
    kept: List[Dict] = []
    prev_keys = None          # full keys of order n-1 in record order (None: unigrams, key = id)
    dropped = []
    for n in range(2, N + 1):
        rows = np.ascontiguousarray(t.ngrams[n - 1], dtype=np.int32)
        prob = np.asarray(t.prob[n - 1], dtype=np.float32)
        bo = backoffs[n - 1]
        if n == 2:
            parent = rows[:, 1].astype(np.int64)
            ok = np.ones(rows.shape[0], dtype=bool)
        else:
            suffix = ngram_keys(rows)[1]
            if prev_keys.size == 0:
                ok = np.zeros(rows.shape[0], dtype=bool)
                parent = np.zeros(rows.shape[0], dtype=np.int64)
            else:
                order_k = np.argsort(prev_keys, kind="stable")
                sk = prev_keys[order_k]
                pos = np.clip(np.searchsorted(sk, suffix), 0, sk.size - 1)
                ok = sk[pos] == suffix
                parent = order_k[pos].astype(np.int64)
        dropped.append(int((~ok).sum()))
        rows, prob, bo, parent = rows[ok], prob[ok], bo[ok], parent[ok]
        srt = np.lexsort((rows[:, 0], parent))
        rows, prob, bo, parent = rows[srt], prob[srt], bo[srt], parent[srt]
        if rows.shape[0] > 1:
            same = (parent[1:] == parent[:-1]) & (rows[1:, 0] == rows[:-1, 0])
            if same.any():
                raise ValueError(f"repeated {n}-gram in the tables")
        kept.append({"rows": rows, "prob": prob, "backoff": bo, "parent": parent})
        prev_keys = ngram_keys(rows)[0]
    counts = [V] + [k["rows"].shape[0] for k in kept]
    # pointers: the children of record j of order n are the records of order n+1 whose parent is j
    ptrs = [np.searchsorted(k["parent"], np.arange(counts[i] + 1)).astype(np.uint64) for i, k in enumerate(kept)]
    ubits = _width(counts[1]) if N >= 2 else 1
    uptr = pack_records([ptrs[0] if N >= 2 else np.zeros(V + 1, dtype=np.uint64)],
                        np.array([ubits], dtype=np.int32))
    orders, info = [], []
    for i, k in enumerate(kept):
        n = i + 2
        m = k["rows"].shape[0]
        last = n == N
        nb = 1 << quant_bits if quant_bits else 0
        if quant_bits:
            pcent = make_bins(k["prob"], nb)
            pcode = encode(k["prob"], pcent)
            pbits = quant_bits
        else:
            pcent, pcode, pbits = None, _float_bits(k["prob"]), 32
        word = k["rows"][:, 0].astype(np.uint64)
        fields = [np.append(word, np.uint64(0)), np.append(pcode, np.uint64(0))]
        widths = [wbits, pbits]
        bcent, bbits, rbits, hbits, offsets = None, 0, 0, 0, None
        if not last:
            if quant_bits:   # code 0: -0.0, no extension; a context's zero backoff takes the nearest bin
                b = k["backoff"]
                z = (b == 0.0) & np.signbit(b)
                nz = ~z
                bcent = np.concatenate([[np.float32(-0.0)], make_bins(b[b != 0.0], nb - 1)]).astype(np.float32)
                bcode = np.zeros(m, dtype=np.uint64)
                bcode[nz] = encode(b[nz], bcent[1:]) + np.uint64(1)
                bbits = quant_bits
            else:
                bcode, bbits = _float_bits(k["backoff"]), 32
            rbits = _width(counts[n])
            ptr = ptrs[n - 1]
            if compress:
                hbits, ptr, offsets = bhiksha_split(ptr, rbits)
                rbits -= hbits
            fields += [np.append(bcode, np.uint64(0)), ptr]
            widths += [bbits, rbits]
        rec = pack_records(fields, np.array(widths, dtype=np.int32))
        orders.append({"records": rec, "count": m, "wbits": wbits, "pbits": pbits, "bbits": bbits,
                       "rbits": rbits, "pcent": pcent, "bcent": bcent, "hbits": hbits, "offsets": offsets})
        info.append({"n": n, "count": m, "wbits": wbits, "pbits": pbits, "bbits": bbits, "rbits": rbits,
                     **({"hbits": hbits} if hbits else {})})
    return uni, uptr, {"ubits": ubits, "orders": info, "dropped": dropped}, orders


def make_model(uni, uptr, info: dict, orders: List[Dict], quant_bits: int):
    """The ``wo._fast._lmtrie.TrieModel`` of the arrays of :func:`build_trie` (or of a file).
    Raises ValueError when the arrays do not fit together (a damaged file)."""
    from .._fast._lmtrie import TrieModel

    return TrieModel(uni, uptr, int(info["ubits"]), orders, BOS_ID, EOS_ID, UNK_ID, quant_bits)


def write_trie(t: NgramTables, path: str, quant_bits: int = 0, compress: bool = False) -> dict:
    """Write a trie LM (see the module docstring) atomically; returns the header.

    quant_bits: 0 (exact) or 1..16 (8 is KenLM's ``-q 8 -b 8``); compress: compressed pointers
    (KenLM's ``-a``; format version TRIE_VERSION_ARRAY when an order uses them).  Raises
    OSError when the file cannot be written, ValueError for a repeated n-gram or bad quant_bits.
    """
    uni, uptr, info, orders = build_trie(t, quant_bits, compress)
    blobs = [("vocab", "\n".join(t.vocab).encode("utf-8")), ("unigrams", uni.tobytes()), ("uptr", uptr.tobytes())]
    blobs += [(f"order{o['n']}", d["records"].tobytes()) for o, d in zip(info["orders"], orders)]
    blobs += [(f"offsets{o['n']}", d["offsets"].astype("<u4").tobytes()) for o, d in zip(info["orders"], orders)
              if d["offsets"] is not None]
    version = TRIE_VERSION_ARRAY if any(o.get("hbits") for o in info["orders"]) else TRIE_VERSION
    if quant_bits:
        # file order: per order its probability centres, then (orders < N) its backoff centres
        parts = []
        for d in orders:
            parts.append(d["pcent"])
            if d["bcent"] is not None:
                parts.append(d["bcent"])
        blobs.append(("quant", np.concatenate(parts).astype("<f4").tobytes()))
    header = dict(t.meta)
    header.update({"format_version": version, "structure": "trie", "quant_bits": quant_bits,
                   "order": t.order, "counts": t.counts(), "vocab_size": len(t.vocab), "trie": info})
    return write_sections(path, TRIE_MAGIC, version, header, blobs, prefix=".wo-lm-")


def read_trie(path: str, verify: bool = True):
    """Open a trie LM file, memory-mapped: returns (header dict, vocab list[str], TrieModel).

    Raises LMError naming the file for a file that is not a trie LM, has another version, is
    truncated, fails its checksum (``verify``) or whose arrays do not fit together (checked
    on every load, so a damaged file never sends a query out of its arrays);
    FileNotFoundError.
    """
    header, secs = open_sections(path, TRIE_MAGIC, (TRIE_VERSION, TRIE_VERSION_ARRAY), LMError, "trie language model",
                                 verify)
    try:
        N, q, info = int(header["order"]), int(header["quant_bits"]), header["trie"]
        vocab = bytes(secs["vocab"]).decode("utf-8").split("\n")
        uni = secs["unigrams"].view(np.float32).reshape(-1, 2)
        uptr = secs["uptr"]
        cent = secs["quant"].view(np.float32) if q else None
        orders, at = [], 0
        for o in info["orders"]:
            d = dict(o, records=secs[f"order{o['n']}"], pcent=None, bcent=None, offsets=None)
            if o.get("hbits"):
                d["offsets"] = secs[f"offsets{o['n']}"].view("<u4")
            if q:
                k = 1 << q
                d["pcent"] = cent[at:at + k]
                at += k
                if o["n"] < N:
                    d["bcent"] = cent[at:at + k]
                    at += k
                if at > cent.shape[0]:
                    raise ValueError("too few bin centres")
            orders.append(d)
        if len(orders) != N - 1:
            raise ValueError(f"{len(orders)} orders of records for an order-{N} model")
        if len(vocab) != header["vocab_size"] or uni.shape[0] != len(vocab):
            raise ValueError("vocabulary and unigram table disagree")
        core = make_model(uni, uptr, info, orders, q)
    except KeyError as exc:
        raise LMError(f"{path}: section or header field {exc} missing (corrupt trie file)") from None
    except (ValueError, TypeError, OverflowError, UnicodeDecodeError) as exc:
        raise LMError(f"{path}: damaged trie file ({exc})") from None
    return header, vocab, core


def file_format(path: str) -> str:
    """"probing", "trie", "trie-q<bits>", "arpa" (anything else that is no wo file) by the
    file's first bytes and header.  Raises FileNotFoundError."""
    from .files import MAGIC

    with open(path, "rb") as fh:
        head = fh.read(8)
    if head == MAGIC:
        return "probing"
    if head == TRIE_MAGIC:
        from ..io.binfile import read_header

        h, _ = read_header(path, TRIE_MAGIC, (TRIE_VERSION, TRIE_VERSION_ARRAY), LMError, "trie language model")
        q = int(h.get("quant_bits", 0))
        arr = "-a" if any(o.get("hbits") for o in h.get("trie", {}).get("orders", ())) else ""
        return ("trie" if q == 0 else f"trie-q{q}") + arr
    return "arpa"


__all__ = ["TRIE_MAGIC", "TRIE_VERSION", "TRIE_VERSION_ARRAY", "FORMATS", "bhiksha_split", "build_trie", "encode", "file_format", "lm_format", "make_bins",
           "make_model", "parse_format", "read_trie", "write_trie"]
