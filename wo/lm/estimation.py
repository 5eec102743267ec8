"""Interpolated modified Kneser-Ney estimation by map-reduce over shards of text.

Follows Chen & Goodman (1998) as KenLM's ``lmplz`` and SRILM's ``-kndiscount -interpolate``
define it:

* sentences are padded as ``<s> w1 ... wk </s>`` (one ``<s>``); words below ``vocab_min_count``
  become ``<unk>``;
* adjusted counts: the highest order keeps raw counts; a lower-order n-gram gets its
  continuation count N1+(. w) (distinct left extensions), except n-grams that start with
  ``<s>``, which keep raw counts (nothing precedes ``<s>``);
* three discounts per order from the counts-of-counts t1..t4 of the adjusted counts:
  Y = t1 / (t1 + 2 t2), D1 = 1 - 2Y t2/t1, D2 = 2 - 3Y t3/t2, D3+ = 3 - 4Y t4/t3 (KenLM's
  fallback 0.5, 1, 1.5 when a count-of-count is zero);
* p(w|h) = (a(hw) - D(a(hw))) / sum_w' a(hw') + gamma(h) p(w|h'), gamma(h) the discounted
  mass; unigrams interpolate with the uniform distribution over the predictable vocabulary
  (every word but ``<s>``); ``<unk>`` gets the uniform share only (unless words were mapped to
  it); ``<s>`` has probability 0 (log10 -99, SRILM's convention) and a backoff;
* ARPA form: log10 p(w|h) (interpolated) for every n-gram, log10 gamma(h) as the backoff of
  every n-gram that is a context.

Counting is sharded: each shard yields sorted unique n-gram rows with counts (map), which are
concatenated and re-aggregated (reduce), so the model does not depend on the number of shards,
on the worker processes, or on the backend (local processes or a Dask cluster).
"""
from __future__ import annotations

import math
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from .keys import context_keys as _context_keys, full_keys, suffix_keys as _suffix_keys

UNK, BOS, EOS = "<unk>", "<s>", "</s>"
UNK_ID, BOS_ID, EOS_ID = 0, 1, 2
MAX_ORDER = 6
LOG10_ZERO = -99.0
SHARD_LINES = 40_000


@dataclass
class TextStats:
    """What reading the training text found: sentences and tokens used, lines skipped by reason."""

    sentences: int = 0
    tokens: int = 0
    empty: int = 0
    overlong: int = 0
    invalid_utf8: int = 0
    examples: List[str] = field(default_factory=list)   # "file:line: reason", at most 20

    def skip(self, path: str, line: int, reason: str) -> None:
        setattr(self, reason, getattr(self, reason) + 1)
        if len(self.examples) < 20:
            self.examples.append(f"{path}:{line}: {reason.replace('_', ' ')}")


@dataclass
class NgramTables:
    """An n-gram LM in backoff form, orders 1..N.

    vocab: list of V words, id = index (0 ``<unk>``, 1 ``<s>``, 2 ``</s>``); ngrams[n-1]:
    int32[m_n, n] word ids (sorted rows); prob[n-1]: float32[m_n] log10 p(w_n | w_1..w_n-1);
    backoff[n-1]: float32[m_n] log10 backoff weight (0 for the highest order and for n-grams
    that are no context); meta: order, counts, discounts, sources ... (the binary header).
    """

    vocab: List[str]
    ngrams: List[np.ndarray]
    prob: List[np.ndarray]
    backoff: List[np.ndarray]
    meta: Dict = field(default_factory=dict)

    @property
    def order(self) -> int:
        """Highest n-gram order N."""
        return len(self.ngrams)

    def counts(self) -> List[int]:
        """Number of n-grams per order."""
        return [int(g.shape[0]) for g in self.ngrams]


# ------------------------------------------------------------------------------------------ text
def iter_lines(path: str, stats: TextStats, max_tokens: int) -> Iterable[List[str]]:
    """Tokenized sentences of one file (``.xz``/``.gz`` ok): one per non-empty line.

    Empty lines, lines over ``max_tokens`` tokens and lines that are not valid UTF-8 are
    skipped and counted in ``stats``.  Raises FileNotFoundError.
    """
    from ..io.text import read_bytes

    lines = read_bytes(path).split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()                      # the final newline
    for no, raw in enumerate(lines, 1):
        if not raw.strip():
            stats.skip(path, no, "empty")
            continue
        try:
            toks = raw.decode("utf-8").split()
        except UnicodeDecodeError:
            stats.skip(path, no, "invalid_utf8")
            continue
        if len(toks) > max_tokens:
            stats.skip(path, no, "overlong")
            continue
        stats.sentences += 1
        stats.tokens += len(toks)
        yield toks


# ------------------------------------------------------------------------------------------ map
def _unique_rows(rows: np.ndarray, weights: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Sorted unique rows of an int32[m, n] matrix and their counts (or summed weights)."""
    if rows.shape[0] == 0:
        return rows.reshape(0, rows.shape[1]), np.zeros(0, dtype=np.int64)
    idx = np.lexsort(rows.T[::-1])
    srt = rows[idx]
    new = np.ones(srt.shape[0], dtype=bool)
    new[1:] = np.any(srt[1:] != srt[:-1], axis=1)
    starts = np.flatnonzero(new)
    w = np.ones(srt.shape[0], dtype=np.int64) if weights is None else weights[idx].astype(np.int64)
    return np.ascontiguousarray(srt[starts]), np.add.reduceat(w, starts)


def word_counts(lines: Sequence[str]) -> Counter:
    """Map step 1: word frequencies of a shard of tokenized lines."""
    c: Counter = Counter()
    for ln in lines:
        c.update(ln.split())
    return c


def count_shard(lines: Sequence[str], ids: Dict[str, int], order: int) -> List[Tuple[np.ndarray, np.ndarray]]:
    """Map step 2: raw counts of every n-gram (n = 1..order) of a shard of tokenized lines.

    Words not in ``ids`` are ``<unk>``.  Returns per order (sorted unique rows int32[m, n],
    counts int32[m]).
    """
    seq: List[int] = []
    sid: List[int] = []
    get = ids.get
    for k, ln in enumerate(lines):
        toks = ln.split()
        seq.append(BOS_ID)
        seq.extend(get(t, UNK_ID) for t in toks)
        seq.append(EOS_ID)
        sid.extend([k] * (len(toks) + 2))
    a = np.asarray(seq, dtype=np.int32)
    s = np.asarray(sid, dtype=np.int64)
    out = []
    for n in range(1, order + 1):
        if a.shape[0] < n:
            out.append((np.zeros((0, n), dtype=np.int32), np.zeros(0, dtype=np.int64)))
            continue
        win = np.lib.stride_tricks.sliding_window_view(a, n)
        ok = s[: a.shape[0] - n + 1] == s[n - 1:]
        r, c = _unique_rows(np.ascontiguousarray(win[ok]))
        out.append((r, c.astype(np.int32)))   # a shard's counts fit 32 bits; the reduce sums in 64
    return out


MERGE_RANGES = 8          # first-word ranges of a large order's reduce (its peak memory: about 1/8 of one sort)
MERGE_SPLIT_ROWS = 1 << 22   # an order with fewer shard rows in all is reduced by one sort


def _merge(parts: List[Tuple[np.ndarray, np.ndarray]], n: int) -> Tuple[np.ndarray, np.ndarray]:
    """Reduce: sum the counts of equal rows over shards.  ``parts`` is emptied when done (so that
    the shards' tables can be freed).

    Each shard's rows are sorted, so the rows whose first word lies in a range of ids are a
    slice of every shard: a large order (at least MERGE_SPLIT_ROWS rows in all) is reduced one
    range of first words at a time (MERGE_RANGES ranges of about equal rows, cut by the first
    words' counts), each range's slices concatenated, sorted and summed, into one output
    array.  The result is the one sort of everything (the ranges follow each other in the
    sort order), with a fraction of its working memory: on 65 M words of Wikipedia the 4-gram
    reduce held about 4 GB of temporaries as one sort.
    """
    if not parts:
        return np.zeros((0, n), dtype=np.int32), np.zeros(0, dtype=np.int64)
    total = sum(int(p[0].shape[0]) for p in parts)
    if total < MERGE_SPLIT_ROWS:
        rows = np.concatenate([p[0] for p in parts])
        cnt = np.concatenate([p[1] for p in parts])
        parts.clear()
        return _unique_rows(rows, cnt)
    top = max(int(p[0][-1, 0]) for p in parts if p[0].shape[0]) + 1
    hist = np.zeros(top, dtype=np.int64)
    for r, _ in parts:
        hist += np.bincount(r[:, 0], minlength=top)
    cum = np.cumsum(hist)
    cuts = np.searchsorted(cum, [total * k // MERGE_RANGES for k in range(1, MERGE_RANGES)], side="right")
    bounds = [0] + sorted(set(int(c) for c in cuts if 0 < c < top)) + [top]
    out_rows = np.empty((total, n), dtype=np.int32)
    out_cnt = np.empty(total, dtype=np.int64)
    m = 0
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        sl = []
        for r, c in parts:
            a, b = np.searchsorted(r[:, 0], [lo, hi])
            if b > a:
                sl.append((r[a:b], c[a:b]))
        if not sl:
            continue
        u, k = _unique_rows(np.concatenate([x[0] for x in sl]), np.concatenate([x[1] for x in sl]))
        del sl
        out_rows[m:m + u.shape[0]] = u
        out_cnt[m:m + u.shape[0]] = k
        m += u.shape[0]
        del u, k
    parts.clear()
    out_rows.resize((m, n), refcheck=False)   # shrunk in place (the bound counted repeats), no copy
    out_cnt.resize(m, refcheck=False)
    return out_rows, out_cnt


def _map(fn: Callable, shards: List, extra: tuple, jobs: int, backend: str, scheduler: Optional[str]) -> list:
    """fn(shard, *extra) for every shard, in shard order, locally or on a Dask cluster."""
    if backend == "dask":
        from ..extras import require

        require("dask", "--backend dask")
        from ..io.batch import WorkersLost, _dask_result, dask_client

        client = dask_client(scheduler)   # checked, probed, Dask's logging quiet
        try:
            futures = [client.submit(fn, sh, *extra, pure=False) for sh in shards]
            try:
                return [_dask_result(client, f) for f in futures]
            except WorkersLost as exc:
                raise ValueError(f"{exc}: the LM was not written") from None
        finally:
            try:
                client.close()
            except Exception:   # noqa: BLE001 (a cluster already gone)
                pass
    if backend != "loky":
        raise ValueError(f"unknown backend {backend!r} (loky or dask)")
    if jobs <= 1:
        return [fn(sh, *extra) for sh in shards]
    from joblib import Parallel, delayed

    return Parallel(n_jobs=jobs, backend="loky")(delayed(fn)(sh, *extra) for sh in shards)


def count(paths: Sequence[str], order: int, vocab_min_count: int = 1, jobs: int = 1,
          backend: str = "loky", scheduler: Optional[str] = None, max_tokens: int = 1000,
          stats: Optional[TextStats] = None, shard_lines: int = SHARD_LINES):
    """Vocabulary and raw n-gram counts of the training files (map-reduce over shards).

    Returns (vocab list[str], per order (rows int32[m, n], counts int64[m]), TextStats).
    The vocabulary is ``<unk> <s> </s>`` then the words seen at least ``vocab_min_count``
    times, by descending count then code point order (deterministic).  Shards hold
    ``shard_lines`` sentences; the result does not depend on it.
    """
    stats = stats or TextStats()
    lines = [" ".join(t) for p in paths for t in iter_lines(p, stats, max_tokens)]
    shards = [lines[i:i + shard_lines] for i in range(0, len(lines), shard_lines)]
    wc: Counter = Counter()
    for c in _map(word_counts, shards, (), jobs, backend, scheduler):
        wc.update(c)
    for special in (UNK, BOS, EOS):
        wc.pop(special, None)
    words = sorted((w for w, k in wc.items() if k >= vocab_min_count), key=lambda w: (-wc[w], w))
    vocab = [UNK, BOS, EOS] + words
    ids = {w: i for i, w in enumerate(vocab)}
    parts = _map(count_shard, shards, (ids, order), jobs, backend, scheduler)
    del lines, shards                      # counted: the text is freed before the reduce
    if backend == "loky" and jobs > 1:     # and the idle worker processes (their memory) before the estimation
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)
    counts = []
    for n in range(1, order + 1):          # order by order; each order's shard tables freed once merged
        col = [p[n - 1] for p in parts]
        for p in parts:
            p[n - 1] = None
        counts.append(_merge(col, n))
    return vocab, counts, stats


# ------------------------------------------------------------------------------------------ estimation
LOOKUP_CHUNK = 1 << 20   # queries per sorted chunk of :func:`_lookup` (15 M random queries into 10 M keys: 21 s -> 2.8 s)


def _lookup(sorted_keys: np.ndarray, perm: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Row index of each key in a table whose keys sorted are ``sorted_keys`` (perm: argsort)."""
    pos = np.empty(keys.shape[0], dtype=np.intp)
    for i in range(0, keys.shape[0], LOOKUP_CHUNK):   # sorted chunks of queries: a cache-friendly sweep
        c = keys[i:i + LOOKUP_CHUNK]
        o = np.argsort(c)
        pos[i + o] = np.searchsorted(sorted_keys, c[o])
    np.minimum(pos, sorted_keys.shape[0] - 1, out=pos)
    if not np.array_equal(sorted_keys[pos], keys):
        raise ValueError("internal error: an n-gram's suffix or context is missing")
    return perm[pos]


def _lower_order(prev: np.ndarray, sorted_keys: np.ndarray, perm: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """prev[row of the suffix (w_2 .. w_n) among the (n-1)-grams] for every n-gram row
    (float64[m]), the suffix keys computed LOOKUP_CHUNK rows at a time (the full arrays of keys
    and positions were the largest temporaries of the highest order's estimation)."""
    out = np.empty(rows.shape[0], dtype=np.float64)
    for i in range(0, rows.shape[0], LOOKUP_CHUNK):
        out[i:i + LOOKUP_CHUNK] = prev[_lookup(sorted_keys, perm, _suffix_keys(rows[i:i + LOOKUP_CHUNK]))]
    return out


def discounts(adjusted: np.ndarray) -> Tuple[float, float, float]:
    """Modified Kneser-Ney discounts (D1, D2, D3+) from adjusted counts (Chen & Goodman 1998).

    Falls back to (0.5, 1.0, 1.5) when a count-of-count t1..t4 is zero or a discount would
    leave [0, k] (tiny corpora), as KenLM's ``--discount_fallback`` does.
    """
    t = [int(np.count_nonzero(adjusted == k)) for k in (1, 2, 3, 4)]
    if min(t) == 0:
        return 0.5, 1.0, 1.5
    y = t[0] / (t[0] + 2.0 * t[1])
    d = (1 - 2 * y * t[1] / t[0], 2 - 3 * y * t[2] / t[1], 3 - 4 * y * t[3] / t[2])
    if not (0 < d[0] < 1 and 0 < d[1] < 2 and 0 < d[2] < 3):
        return 0.5, 1.0, 1.5
    return d


def estimate(vocab: List[str], counts: List[Tuple[np.ndarray, np.ndarray]],
             prune: Optional[Sequence[int]] = None, release: bool = False) -> NgramTables:
    """Interpolated modified Kneser-Ney from raw counts (see the module docstring).

    counts: per order (sorted unique rows int32[m, n], raw counts int64[m]) as :func:`count`
    returns them.  prune: per order n >= 2 a threshold t_n: n-grams whose adjusted count is
    <= t_n are dropped unless they are the context or the suffix of a kept longer n-gram; the
    dropped probability mass goes to the backoff weight, so every distribution still sums to
    one (missing thresholds: 0 = keep all).  release: empty ``counts`` at the start, so that
    each order's arrays are freed as soon as the estimation is done with them (peak memory: two
    orders' working arrays plus the output, not every order's).  Returns :class:`NgramTables`.
    """
    N = len(counts)
    if not 1 <= N <= MAX_ORDER:
        raise ValueError(f"order must be 1..{MAX_ORDER}")
    rows = [c[0] for c in counts]
    raw = [c[1] for c in counts]
    if release:
        counts.clear()
    # <unk> is always a unigram (count 0 unless words were mapped to it)
    if rows[0].shape[0] == 0 or not np.any(rows[0][:, 0] == UNK_ID):
        rows[0] = np.concatenate([np.array([[UNK_ID]], dtype=np.int32), rows[0]])
        raw[0] = np.concatenate([np.zeros(1, dtype=np.int64), raw[0]])
        order_ = np.argsort(rows[0][:, 0], kind="stable")
        rows[0], raw[0] = rows[0][order_], raw[0][order_]
    sorted_keys, perms = [], []

    # suffix and context keys are recomputed where needed (not kept per order: 16 bytes an n-gram)
    for n in range(1, N + 1):
        k = full_keys(rows[n - 1])
        p = np.argsort(k, kind="stable")
        sk = k[p]
        del k
        if np.any(sk[1:] == sk[:-1]):
            raise ValueError(f"64-bit key collision among the {n}-grams (report this)")
        if n == N:     # nothing looks the highest order up: its keys were only the collision check
            sorted_keys.append(None)
            perms.append(None)
            del p, sk
            continue
        perms.append(p.astype(np.int32) if p.shape[0] < 2 ** 31 else p); sorted_keys.append(sk)
        del p
    # adjusted counts
    adj = [None] * N
    adj[N - 1] = raw[N - 1]                 # not modified: raw is dropped below
    for n in range(N - 1, 0, -1):            # order n from the (n+1)-grams' left extensions
        ext = rows[n]                         # (n+1)-grams
        cont = np.zeros(rows[n - 1].shape[0], dtype=np.int64)
        if ext.shape[0]:
            idx = _lookup(sorted_keys[n - 1], perms[n - 1], _suffix_keys(ext))
            np.add.at(cont, idx, 1)
        a = cont
        starts_bos = rows[n - 1][:, 0] == BOS_ID
        a[starts_bos] = raw[n - 1][starts_bos]
        adj[n - 1] = a
    del raw
    disc = []
    for n in range(1, N + 1):
        a = adj[n - 1]
        if n == 1:
            a = a[(rows[0][:, 0] != BOS_ID)]
        disc.append(discounts(a))
    # pruning: kept masks from the highest order down; suffixes and contexts of kept n-grams stay
    thresholds = [0] + [int(t) for t in (prune or [])][: N - 1]
    thresholds += [0] * (N - len(thresholds))
    kept = [np.ones(rows[n].shape[0], dtype=bool) for n in range(N)]
    if N >= 2:
        kept[N - 1] = adj[N - 1] > thresholds[N - 1]
    for n in range(N, 1, -1):
        k = kept[n - 1]
        need = np.zeros(rows[n - 2].shape[0], dtype=bool)
        kr = rows[n - 1][k]                   # the kept n-grams: keys of their suffixes and contexts only
        need[_lookup(sorted_keys[n - 2], perms[n - 2], _suffix_keys(kr))] = True
        need[_lookup(sorted_keys[n - 2], perms[n - 2], _context_keys(kr))] = True
        del kr
        if n - 1 >= 2:
            kept[n - 2] = (adj[n - 2] > thresholds[n - 2]) | need
    out_ng: List[np.ndarray] = [None] * N
    out_p: List[np.ndarray] = [None] * N
    out_b: List[np.ndarray] = [None] * N

    def finish(n: int, p: np.ndarray, higher: Optional[Tuple[np.ndarray, np.ndarray]]) -> None:
        """The output arrays of order n (its kept rows, log10 p, log10 backoff from the gammas of
        the (n+1)-grams' contexts), then order n's working arrays are freed."""
        r = rows[n - 1]
        bo = np.zeros(r.shape[0], dtype=np.float64)
        if higher is not None:
            ck, g = higher
            idx = _lookup(sorted_keys[n - 1], perms[n - 1], ck)
            with np.errstate(divide="ignore"):
                bo[idx] = np.log10(np.maximum(g, 1e-99))
        with np.errstate(divide="ignore"):
            lp = np.where(p > 0, np.log10(np.maximum(p, 1e-300)), LOG10_ZERO)
        m = kept[n - 1]
        out_ng[n - 1] = np.ascontiguousarray(r[m])
        out_p[n - 1] = lp[m].astype(np.float32)
        out_b[n - 1] = bo[m].astype(np.float32)
        for table in (rows, sorted_keys, perms, adj, kept):
            table[n - 1] = None

    prev = None   # p of order n - 1 (the lower-order estimate of order n)
    for n in range(1, N + 1):
        r, a = rows[n - 1], adj[n - 1].astype(np.float64)
        adj[n - 1] = None                       # pruning is decided: the float copy is all that is needed
        d1, d2, d3 = disc[n - 1]
        dvec = np.zeros_like(a)                 # D(a): 0, D1, D2, D3+
        dvec[a == 1] = d1
        dvec[a == 2] = d2
        dvec[a >= 3] = d3
        num = np.subtract(a, dvec, out=dvec)
        np.maximum(num, 0.0, out=num)
        if n == 1:
            pred = r[:, 0] != BOS_ID
            total = a[pred].sum()
            u = np.where(pred, num / total, 0.0)
            gamma = 1.0 - u.sum()
            p = u + gamma / np.count_nonzero(pred)
            p = np.where(pred, p, 0.0)
        else:                                   # the same arithmetic as above, in place
            newctx = np.ones(r.shape[0], dtype=bool)
            newctx[1:] = np.any(r[1:, : n - 1] != r[:-1, : n - 1], axis=1)
            starts = np.flatnonzero(newctx)
            grp = np.cumsum(newctx, dtype=np.int32 if r.shape[0] < 2 ** 31 else np.int64)
            grp -= 1
            del newctx
            total = np.add.reduceat(a, starts)
            del a
            u = num
            np.divide(u, total[grp], out=u)
            ukept = np.where(kept[n - 1], u, 0.0)
            gamma = 1.0 - np.add.reduceat(ukept, starts)
            del ukept
            gamma = np.maximum(gamma, 0.0)
            p = _lower_order(prev, sorted_keys[n - 2], perms[n - 2], r)   # the lower order's p of each suffix
            np.multiply(gamma[grp], p, out=p)
            np.add(u, p, out=p)                 # u + gamma * lower
            higher = (_context_keys(r[starts]), gamma)
            del r, dvec, num, u, starts, grp, total
            finish(n - 1, prev, higher)        # order n - 1 is complete: its output, then free it
            del higher
        prev = p
        del p
    finish(N, prev, None)
    del prev
    meta = {"order": N, "discounts": [[round(x, 6) for x in d] for d in disc],
            "counts": [int(x.shape[0]) for x in out_ng], "vocab_size": len(vocab),
            "prune": list(thresholds[1:]) if prune else []}
    return NgramTables(vocab, out_ng, out_p, out_b, meta)


def train(paths: Sequence[str], order: int, vocab_min_count: int = 1, prune: Optional[Sequence[int]] = None,
          jobs: int = 1, backend: str = "loky", scheduler: Optional[str] = None, max_tokens: int = 1000,
          log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
          shard_lines: int = SHARD_LINES) -> NgramTables:
    """Count (map-reduce) and estimate an interpolated modified Kneser-Ney LM of ``order``.

    paths: tokenized text files, one sentence per line (``.xz``/``.gz`` ok).  Skipped lines
    (empty, over ``max_tokens`` tokens, invalid UTF-8) are counted and reported, never fatal.
    Returns :class:`NgramTables` whose ``meta`` records the sources, the text statistics and
    the seconds spent.  Raises FileNotFoundError, ValueError for an order outside 1..6, more
    prune thresholds than orders from 2, a negative threshold, or an empty text.
    """
    import os

    if not 1 <= order <= MAX_ORDER:
        raise ValueError(f"--order must be between 1 and {MAX_ORDER}")
    if prune and len(prune) > order - 1:
        raise ValueError(f"--prune takes one threshold per order from 2 (at most {order - 1} for order {order}), "
                         f"got {len(prune)}")
    if prune and min(prune) < 0:
        raise ValueError(f"--prune thresholds are counts, 0 or more: {list(prune)}")
    t0 = time.perf_counter()
    vocab, counts, stats = count(paths, order, vocab_min_count, jobs, backend, scheduler, max_tokens,
                                 shard_lines=shard_lines)
    if stats.sentences == 0:
        raise ValueError("no usable sentence in the training text")
    skipped = stats.empty + stats.overlong + stats.invalid_utf8
    log(f"wo lm: {stats.sentences} sentences, {stats.tokens} tokens, {len(vocab)} words; skipped "
        f"{skipped} lines (empty {stats.empty}, over {max_tokens} tokens {stats.overlong}, "
        f"invalid UTF-8 {stats.invalid_utf8})" + "".join(f"\n  {e}" for e in stats.examples[:5]))
    t1 = time.perf_counter()
    tables = estimate(vocab, counts, prune, release=True)   # counts freed order by order
    tables.meta.update({
        "sources": [os.path.basename(p) for p in paths], "sentences": stats.sentences, "tokens": stats.tokens,
        "skipped_lines": {"empty": stats.empty, "overlong": stats.overlong, "invalid_utf8": stats.invalid_utf8},
        "vocab_min_count": vocab_min_count, "smoothing": "interpolated modified Kneser-Ney"})
    # no times in the header: the same text gives the same bytes (local, Dask, any shards)
    log(f"wo lm: order {order}, n-grams {tables.counts()}, discounts {tables.meta['discounts']}, "
        f"counting {t1 - t0:.1f}s, estimation {time.perf_counter() - t1:.1f}s")
    return tables


def perplexity(log10_prob: float, n: int) -> float:
    """10 ** (-log10_prob / n): perplexity of ``n`` predicted tokens."""
    return math.pow(10.0, -log10_prob / max(n, 1))
