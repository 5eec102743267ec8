"""LM files: ARPA (read and write, plain, ``.gz`` or ``.xz``) and wo's memory-mapped binary.

Binary layout (little-endian)::

    8 bytes   magic b"WOLM\\0\\0\\0\\0"
    4 bytes   uint32 format version (FORMAT_VERSION)
    4 bytes   uint32 header length H
    H bytes   UTF-8 JSON header: order, counts, discounts, sources, vocab_size, sections
              {name: [offset, bytes]}, crc32 of everything after the header, estimation record
    sections  each at a 64-byte aligned offset:
              vocab      the words, UTF-8, one per line, id = line number - 1
              unigrams   float32[V, 2]: log10 prob, log10 backoff, indexed by word id
              order2..N  open-addressing tables of (uint64 key, float32 log10 prob,
                         float32 log10 backoff), 1.5 slots per n-gram (wo._fast._lm)

A backoff of -0.0 (sign bit set) marks an n-gram that is the context of no longer n-gram and
backs off by nothing (KenLM's "no extension" backoff): a query leaves it out of the state, so
the next query does not look up the longer n-grams that cannot exist (KenLM's right state
minimisation, Heafield 2011, section 4.3).  Files written before carry +0.0 there and are read
the same way, without the saving.

Worker processes ``np.memmap`` the tables, so the pages are shared, not copied.  The compact
format (a trie of bit-packed records, exact or quantized, magic b"WOLMTRIE") is in
:mod:`wo.lm.trie`; :meth:`wo.lm.model.LanguageModel.load` picks the structure by the magic.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import lzma
import os
import tempfile
from typing import Dict, List, Tuple

import numpy as np

from .estimation import BOS, EOS, LOG10_ZERO, MAX_ORDER, UNK, NgramTables
from ..io.binfile import open_sections, publish, write_sections
from .keys import ngram_keys

MAGIC = b"WOLM\0\0\0\0"
FORMAT_VERSION = 1


class LMError(Exception):
    """Not a usable LM file: not an LM, wrong version, truncated, corrupt, malformed ARPA."""


# ------------------------------------------------------------------------------------------ ARPA
@contextlib.contextmanager
def _open_write(path: str, fd: int):
    """A text stream on the open descriptor ``fd`` of ``path``, gzip or xz compressed by its
    name; the compressor and ``fd`` are closed when the block ends."""
    with os.fdopen(fd, "wb") as raw:
        if path.endswith(".gz"):
            with gzip.open(raw, "wt", encoding="utf-8") as fh:
                yield fh
        elif path.endswith(".xz"):
            with lzma.open(raw, "wt", encoding="utf-8") as fh:
                yield fh
        else:
            with io.TextIOWrapper(raw, encoding="utf-8") as fh:
                yield fh


def is_arpa_name(path: str) -> bool:
    """True for names ending in .arpa, .arpa.gz or .arpa.xz."""
    return path.endswith((".arpa", ".arpa.gz", ".arpa.xz"))


def write_arpa(t: NgramTables, path: str) -> None:
    """Write an ARPA file (the format KenLM, SRILM and IRSTLM read), atomically.

    Probabilities and backoffs are log10 with 7 significant digits; the highest order has no
    backoff column.  Raises OSError when the file cannot be written.
    """
    from ..io.outputs import named_error, track_temp, untrack_temp

    d = os.path.dirname(os.path.abspath(path)) or "."
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".wo-lm-", suffix=os.path.basename(path))
    except OSError as exc:
        raise named_error(exc, path) from None
    track_temp(tmp)
    try:
        with _open_write(tmp, fd) as fh:
            fh.write("\n\\data\\\n")
            for n, c in enumerate(t.counts(), 1):
                fh.write(f"ngram {n}={c}\n")
            for n in range(1, t.order + 1):
                fh.write(f"\n\\{n}-grams:\n")
                words = t.vocab
                rows, p, b = t.ngrams[n - 1], t.prob[n - 1], t.backoff[n - 1]
                last = n == t.order
                lines = []
                for i in range(rows.shape[0]):
                    ws = " ".join(words[w] for w in rows[i])
                    if last:
                        lines.append(f"{p[i]:.7g}\t{ws}\n")
                    else:
                        lines.append(f"{p[i]:.7g}\t{ws}\t{b[i]:.7g}\n")
                fh.writelines(lines)
            fh.write("\n\\end\\\n")
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


def read_arpa(path: str) -> NgramTables:
    """Read an ARPA file (KenLM, SRILM, IRSTLM; plain, .gz or .xz) into :class:`NgramTables`.

    Word ids: ``<unk>`` 0, ``<s>`` 1, ``</s>`` 2, then the other unigrams in file order; an
    ARPA without ``<unk>`` gets one with log10 probability -100 (as KenLM does).
    Raises LMError (``file:line: message``) for a malformed file, FileNotFoundError.
    """
    from ..io.text import open_text

    counts: Dict[int, int] = {}
    sections: Dict[int, List[Tuple[float, List[str], float]]] = {}
    cur = 0
    no = 0
    with open_text(path) as fh:
        for no, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            if line == "\\data\\":
                cur = -1
                continue
            if line == "\\end\\":
                break
            if line.startswith("\\") and line.endswith("-grams:"):
                try:
                    cur = int(line[1:-7])
                except ValueError:
                    raise LMError(f"{path}:{no}: bad section header {line!r}") from None
                sections[cur] = []
                continue
            if cur == -1:
                if not line.startswith("ngram ") or "=" not in line:
                    raise LMError(f"{path}:{no}: expected 'ngram N=count'")
                k, v = line[6:].split("=", 1)
                counts[int(k)] = int(v)
                continue
            if cur <= 0:
                raise LMError(f"{path}:{no}: text before the \\data\\ section")
            cols = line.split("\t") if "\t" in line else line.split()
            if "\t" in line:
                if len(cols) not in (2, 3):
                    raise LMError(f"{path}:{no}: expected 'prob<TAB>words[<TAB>backoff]'")
                words = cols[1].split()
                bo_text = cols[2] if len(cols) == 3 else "0"
            else:
                words = cols[1:1 + cur]
                bo_text = cols[1 + cur] if len(cols) > 1 + cur else "0"
            if len(words) != cur:
                raise LMError(f"{path}:{no}: {len(words)} words in a {cur}-gram line")
            try:
                prob = float(cols[0])
            except ValueError:
                raise LMError(f"{path}:{no}: probability {cols[0]!r} is not a number") from None
            try:
                bo = float(bo_text)
            except ValueError:
                raise LMError(f"{path}:{no}: backoff {bo_text!r} is not a number") from None
            if prob != prob or prob > 0.0:   # nan, or a log10 probability above 0
                raise LMError(f"{path}:{no}: log10 probability {cols[0]} is not in [-inf, 0]")
            if bo != bo or bo in (float("inf"), float("-inf")):
                raise LMError(f"{path}:{no}: backoff {bo_text} is not a finite number")
            sections[cur].append((prob, words, bo))
    if not counts or not sections:
        raise LMError(f"{path}: not an ARPA file (no \\data\\ section)")
    order = max(counts)
    if order > MAX_ORDER:
        raise LMError(f"{path}: order {order} > {MAX_ORDER} is not supported")
    for n in range(1, order + 1):
        got = len(sections.get(n, []))
        if got != counts[n]:
            raise LMError(f"{path}: header says {counts[n]} {n}-grams, file has {got} (truncated?)")
    vocab = [UNK, BOS, EOS]
    seen = {w: i for i, w in enumerate(vocab)}
    for _, ws, _ in sections[1]:
        if ws[0] not in seen:
            seen[ws[0]] = len(vocab)
            vocab.append(ws[0])
    uni_p = {ws[0]: (p, b) for p, ws, b in sections[1]}
    if UNK not in uni_p:
        sections[1].append((-100.0, [UNK], 0.0))
    for special in (BOS, EOS):
        if special not in uni_p:
            sections[1].append((LOG10_ZERO, [special], 0.0))
    ngrams, probs, backoffs = [], [], []
    for n in range(1, order + 1):
        ent = sections[n]
        try:
            rows = np.array([[seen[w] for w in ws] for _, ws, _ in ent], dtype=np.int32).reshape(len(ent), n)
        except KeyError as exc:
            raise LMError(f"{path}: word {exc.args[0]!r} of a {n}-gram is not a unigram") from None
        ngrams.append(rows)
        probs.append(np.array([p for p, _, _ in ent], dtype=np.float32))
        backoffs.append(np.array([b for _, _, b in ent], dtype=np.float32))
    meta = {"order": order, "counts": [len(sections[n]) for n in range(1, order + 1)],
            "vocab_size": len(vocab), "sources": [os.path.basename(path)], "imported_from": "ARPA"}
    return NgramTables(vocab, ngrams, probs, backoffs, meta)


# ------------------------------------------------------------------------------------------ binary
def extension_backoffs(t: NgramTables) -> List[np.ndarray]:
    """The backoffs of orders 1..N (float32[m_n] each, copies) with -0.0 for every n-gram of
    order n < N that is the context (w_1 .. w_n) of no (n+1)-gram and has a zero backoff (the
    module docstring); the highest order's stay 0."""
    from .keys import context_keys, full_keys

    out = [np.array(b, dtype=np.float32) for b in t.backoff]
    for n in range(1, t.order):
        if t.ngrams[n - 1].shape[0] == 0:
            continue
        none = ~np.isin(full_keys(t.ngrams[n - 1]), context_keys(t.ngrams[n]))
        none &= out[n - 1] == 0.0
        out[n - 1][none] = np.float32(-0.0)
    return out


def query_arrays(t: NgramTables) -> Tuple[np.ndarray, List[np.ndarray]]:
    """The arrays queries read: unigrams float32[V, 2] (log10 prob, log10 backoff; words
    without a unigram get log10 prob -99) and one probing table per order 2..N
    (``wo._fast._lm.build_table``).  Raises ValueError on an n-gram key collision."""
    from .._fast._lm import build_table

    bo = extension_backoffs(t)
    uni = np.zeros((len(t.vocab), 2), dtype=np.float32)
    uni[:, 0] = LOG10_ZERO
    r1 = t.ngrams[0][:, 0]
    uni[r1, 0] = t.prob[0]
    uni[r1, 1] = bo[0]
    tables = []
    for n in range(2, t.order + 1):
        keys = ngram_keys(t.ngrams[n - 1])[0]
        tables.append(build_table(np.ascontiguousarray(keys),
                                  np.ascontiguousarray(t.prob[n - 1], dtype=np.float32),
                                  np.ascontiguousarray(bo[n - 1], dtype=np.float32)))
    return uni, tables


def write_binary(t: NgramTables, path: str) -> dict:
    """Write wo's binary LM (see the module docstring) atomically; returns the header.

    Raises OSError when the file cannot be written, ValueError on an n-gram key collision.
    """
    V = len(t.vocab)
    uni, tables = query_arrays(t)
    blobs: List[Tuple[str, bytes]] = [("vocab", "\n".join(t.vocab).encode("utf-8")), ("unigrams", uni.tobytes())]
    blobs += [(f"order{n}", tab.tobytes()) for n, tab in enumerate(tables, 2)]
    header = dict(t.meta)
    header.update({"format_version": FORMAT_VERSION, "order": t.order, "counts": t.counts(), "vocab_size": V})
    return write_sections(path, MAGIC, FORMAT_VERSION, header, blobs, prefix=".wo-lm-")


def read_binary(path: str, verify: bool = True):
    """Open a binary LM: returns (header dict, vocab list[str], unigrams float32[V, 2] memmap,
    tables list of memmapped entry arrays for orders 2..N).

    Raises LMError for a file that is not a wo LM, has another format version, is truncated or
    fails its checksum (``verify``); FileNotFoundError.
    """
    from .._fast._lm import ENTRY_DTYPE

    header, secs = open_sections(path, MAGIC, FORMAT_VERSION, LMError, "language model", verify)
    try:
        vocab = bytes(secs["vocab"]).decode("utf-8").split("\n")
        uni = secs["unigrams"].view(np.float32).reshape(-1, 2)
        tables = [secs[f"order{k}"].view(ENTRY_DTYPE) for k in range(2, header["order"] + 1)]
    except KeyError as exc:
        raise LMError(f"{path}: section {exc} missing (corrupt file)") from None
    if len(vocab) != header["vocab_size"] or uni.shape[0] != len(vocab):
        raise LMError(f"{path}: vocabulary and unigram table disagree (corrupt file)")
    return header, vocab, uni, tables
