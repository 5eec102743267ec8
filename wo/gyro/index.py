"""The phrase index of GYRO (de Gispert, Tomalin & Byrne 2014, section 3: the look-up of the
phrases of a large trusted text that use only words of a bag).

Built by map-reduce over shards of the text (the n-gram counting of ``wo lm train``:
:func:`wo.lm.estimation.count`, local processes or a Dask cluster, the same bytes either way)
and stored as a trie in flat arrays that worker processes memory-map:

* ``vocab``: the words (UTF-8, one per line; id = line number - 1; ids 0-2 are ``<unk>``,
  ``<s>``, ``</s>``, which no phrase contains);
* ``first``: int64[V + 1], the bigrams starting with word id w are rows first[w]..first[w+1]
  of order 2;
* for each order n = 2..N: ``word{n}`` int32[m_n], the last word of every n-gram, the n-grams
  sorted lexicographically (so the extensions of one (n-1)-gram are one contiguous run, sorted
  by word id); ``count{n}`` uint32[m_n], its frequency in the text; for n < N ``child{n}``
  int64[m_n + 1], the (n+1)-grams extending n-gram row i are rows child{n}[i]..child{n}[i+1].

The look-up (:meth:`PhraseIndex.lookup`, Cython: ``wo._fast._gyro``) walks the trie from the
bag's words, extending a node only by words the bag still has (multiplicities counted), so it
returns every n-gram of the text whose tokens form a sub-multiset of the bag without
enumerating subsets.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..io.binfile import open_sections, write_sections
from ..lm.keys import ngram_keys

MAGIC = b"WOPHRASE"
FORMAT_VERSION = 1
MIN_N, MAX_N = 2, 6
N_SPECIAL = 3                       # <unk> <s> </s>: never inside a phrase


class PhraseIndexError(Exception):
    """Not a usable phrase index: another kind of file, another version, truncated, corrupt."""


@dataclass
class IndexArrays:
    """The arrays of a phrase index (see the module docstring) and its header fields."""

    vocab: List[str]
    first: np.ndarray
    words: List[np.ndarray]          # orders 2..N
    counts: List[np.ndarray]         # orders 2..N
    child: List[np.ndarray]          # orders 2..N-1
    meta: dict

    @property
    def max_n(self) -> int:
        return len(self.words) + 1


def _child_offsets(rows_k: np.ndarray, rows_k1: np.ndarray) -> np.ndarray:
    """int64[m_k + 1]: the (k+1)-gram rows (sorted) extending each k-gram row (sorted)."""
    m = rows_k.shape[0]
    if rows_k1.shape[0] == 0:
        return np.zeros(m + 1, dtype=np.int64)
    pre = np.ascontiguousarray(rows_k1[:, :-1])
    kk, _, _ = ngram_keys(rows_k)
    kp, _, _ = ngram_keys(pre)
    perm = np.argsort(kk, kind="stable")
    pos = np.searchsorted(kk[perm], kp)
    pos = np.minimum(pos, m - 1)
    idx = perm[pos]
    if not np.array_equal(rows_k[idx], pre):
        raise ValueError("internal error: an n-gram's prefix is missing from the index")
    off = np.zeros(m + 1, dtype=np.int64)
    off[1:] = np.cumsum(np.bincount(idx, minlength=m))
    return off


def build_arrays(paths: Sequence[str], max_n: int = 5, min_count: int = 1, jobs: int = 1,
                 backend: str = "loky", scheduler: Optional[str] = None, report=lambda m: None,
                 shard_lines: int = 40_000) -> IndexArrays:
    """Count the n-grams (n = 2..max_n) of the text files (one tokenized sentence per line,
    ``.gz``/``.xz`` read transparently) by map-reduce and build the trie arrays.

    min_count: n-grams seen fewer times are left out (a prefix is never rarer than its
    extensions, so the trie stays closed); shard_lines: sentences per map shard (the result
    does not depend on it, nor on jobs or backend).  Raises ValueError for max_n outside 2..6 or
    min_count < 1; OSError for unreadable files.
    """
    from ..lm.estimation import count

    if not MIN_N <= max_n <= MAX_N:
        raise ValueError(f"--max-n must be in {MIN_N}..{MAX_N}, got {max_n}")
    if min_count < 1:
        raise ValueError("--min-count must be >= 1")
    t0 = time.perf_counter()
    vocab, counts, stats = count(paths, max_n, 1, jobs=jobs, backend=backend, scheduler=scheduler,
                                 shard_lines=shard_lines)
    report(f"counted {stats.tokens} tokens in {stats.sentences} sentences ({time.perf_counter() - t0:.1f} s)")
    rows = []
    cnts = []
    for n in range(2, max_n + 1):
        r, c = counts[n - 1]
        keep = np.all(r >= N_SPECIAL, axis=1) & (c >= min_count)
        rows.append(np.ascontiguousarray(r[keep]))
        cnts.append(np.minimum(c[keep], np.iinfo(np.uint32).max).astype(np.uint32))
    V = len(vocab)
    first = np.searchsorted(rows[0][:, 0], np.arange(V + 1)).astype(np.int64)
    words = [np.ascontiguousarray(r[:, -1]) for r in rows]
    child = [_child_offsets(rows[i], rows[i + 1]) for i in range(len(rows) - 1)]
    meta = {"max_n": max_n, "min_count": min_count, "vocab_size": V,
            "ngrams": [int(r.shape[0]) for r in rows],
            "sources": [str(p).rsplit("/", 1)[-1] for p in paths],
            "text": {"sentences": stats.sentences, "tokens": stats.tokens, "empty": stats.empty,
                     "overlong": stats.overlong, "invalid_utf8": stats.invalid_utf8}}
    return IndexArrays(vocab, first, words, cnts, child, meta)


def write_index(a: IndexArrays, path: str) -> dict:
    """Write a phrase index file atomically; returns its header.  Raises OSError."""
    blobs: List[Tuple[str, bytes]] = [("vocab", "\n".join(a.vocab).encode("utf-8")),
                                      ("first", a.first.astype("<i8").tobytes())]
    for n in range(2, a.max_n + 1):
        blobs.append((f"word{n}", a.words[n - 2].astype("<i4").tobytes()))
        blobs.append((f"count{n}", a.counts[n - 2].astype("<u4").tobytes()))
        if n < a.max_n:
            blobs.append((f"child{n}", a.child[n - 2].astype("<i8").tobytes()))
    header = dict(a.meta, format_version=FORMAT_VERSION)
    return write_sections(path, MAGIC, FORMAT_VERSION, header, blobs, prefix=".wo-idx-")


class PhraseIndex:
    """A memory-mapped phrase index (see the module docstring).

    >>> idx = PhraseIndex.load("text.woidx")
    >>> idx.lookup(["the", "cat", "sat", "on", "the", "mat"])   # doctest: +SKIP
    [('the', 'cat'), ('on', 'the'), ('the', 'mat'), ('sat', 'on', 'the'), ...]
    """

    def __init__(self, a: IndexArrays, path: Optional[str] = None):
        from .._fast._gyro import TrieIndex

        self.arrays = a
        self.path = path
        self.header = a.meta
        self.max_n = a.max_n
        self.vocab = a.vocab
        self._ids: Dict[str, int] = {w: i for i, w in enumerate(a.vocab) if i >= N_SPECIAL}
        self.trie = TrieIndex(a.first, a.words, a.counts, a.child)

    @classmethod
    def load(cls, path: str, verify: bool = True) -> "PhraseIndex":
        """Open an index file (memory-mapped).  Raises PhraseIndexError for a file that is not
        a wo phrase index, has another version, is truncated or corrupt; FileNotFoundError."""
        header, secs = open_sections(path, MAGIC, FORMAT_VERSION, PhraseIndexError, "phrase index", verify)
        try:
            N = int(header["max_n"])
            vocab = bytes(secs["vocab"]).decode("utf-8").split("\n")
            first = secs["first"].view("<i8")
            words = [secs[f"word{n}"].view("<i4") for n in range(2, N + 1)]
            counts = [secs[f"count{n}"].view("<u4") for n in range(2, N + 1)]
            child = [secs[f"child{n}"].view("<i8") for n in range(2, N)]
        except (KeyError, ValueError, UnicodeDecodeError) as exc:
            raise PhraseIndexError(f"{path}: corrupt phrase index ({exc})") from None
        if (len(vocab) != header.get("vocab_size") or first.shape[0] != len(vocab) + 1
                or any(w.shape[0] != m for w, m in zip(words, header.get("ngrams", [])))):
            raise PhraseIndexError(f"{path}: sections disagree with the header (corrupt file)")
        return cls(IndexArrays(vocab, first, words, counts, child, header), path)

    @classmethod
    def build(cls, paths: Sequence[str], **kw) -> "PhraseIndex":
        """Build an index in memory (see :func:`build_arrays`)."""
        return cls(build_arrays(paths, **kw))

    def knows(self, word: str) -> bool:
        """True if the text collection has the word (so a phrase may contain it)."""
        return word in self._ids

    def word_ids(self, bag: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
        """The bag's distinct known words as (ids int32[D], multiplicities int32[D])."""
        cnt: Dict[int, int] = {}
        for w in bag:
            i = self._ids.get(w)
            if i is not None:
                cnt[i] = cnt.get(i, 0) + 1
        ids = np.array(sorted(cnt), dtype=np.int32)
        return ids, np.array([cnt[i] for i in ids], dtype=np.int32)

    def lookup(self, bag: Sequence[str], min_n: int = 2, max_n: Optional[int] = None,
               min_count: int = 1) -> List[Tuple[str, ...]]:
        """Every n-gram of the text (min_n <= n <= max_n, seen >= min_count times) whose tokens
        form a sub-multiset of ``bag`` (list of str), in trie order (by first word id, then
        depth first).  Words the text never saw cannot occur in a phrase."""
        ids, mult = self.word_ids(bag)
        flat, lens, _ = self.trie.lookup(ids, mult, max(min_n, 2), min(max_n or self.max_n, self.max_n),
                                         min_count)
        v = self.vocab
        out: List[Tuple[str, ...]] = []
        pos = 0
        for n in lens:
            out.append(tuple(v[i] for i in flat[pos:pos + n]))
            pos += n
        return out
