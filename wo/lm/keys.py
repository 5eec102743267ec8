"""64-bit keys of n-grams, the same in numpy (building tables) and Cython (queries).

The key of (w_1 .. w_n), w_n the predicted word, folds the ids from the right:
k = h1(w_n), then k = h2(k, w_j) for j = n-1 .. 1, so a query extends the key of its word one
context word at a time (KenLM's probing tables work the same way).  h1 and h2 are built from
the splitmix64 finaliser; key 0 is never produced for valid ids in practice and is mapped to 1
in tables (0 marks an empty slot).
"""
from __future__ import annotations

from typing import Tuple

import numpy as np

_C1 = np.uint64(0x9E3779B97F4A7C15)
_C2 = np.uint64(0xC2B2AE3D27D4EB4F)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def h1(w: np.ndarray) -> np.ndarray:
    """Key of the unigram of each id in ``w`` (int array) as uint64."""
    with np.errstate(over="ignore"):
        return _mix(w.astype(np.uint64) + _C1)


def h2(k: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Key of the n-gram ``w k`` (k: key of the n-gram to the right of the context word w)."""
    with np.errstate(over="ignore"):
        return _mix((k + _C1) ^ ((w.astype(np.uint64) + np.uint64(1)) * _C2))


def ngram_keys(rows: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keys of n-gram rows int32[m, n]: (full keys, suffix keys (w_2..w_n), context keys
    (w_1..w_n-1)), each uint64[m]; for unigrams the suffix and context keys are 0."""
    if rows.shape[1] == 1:
        z = np.zeros(rows.shape[0], dtype=np.uint64)
        return h1(rows[:, 0]), z, z.copy()
    suffix = suffix_keys(rows)
    return h2(suffix, rows[:, 0]), suffix, context_keys(rows)


def full_keys(rows: np.ndarray) -> np.ndarray:
    """The full keys (w_1..w_n) of n-gram rows int32[m, n], uint64[m]: ``ngram_keys(rows)[0]``
    without the other two arrays."""
    if rows.shape[1] == 1:
        return h1(rows[:, 0])
    return h2(suffix_keys(rows), rows[:, 0])


def suffix_keys(rows: np.ndarray) -> np.ndarray:
    """The suffix keys (w_2..w_n) of n-gram rows int32[m, n], uint64[m] (0 for unigrams); the
    full key folds w_1 into it (:func:`ngram_keys`)."""
    m, n = rows.shape
    if n == 1:
        return np.zeros(m, dtype=np.uint64)
    k = h1(rows[:, n - 1])
    for j in range(n - 2, 0, -1):
        k = h2(k, rows[:, j])
    return k


def context_keys(rows: np.ndarray) -> np.ndarray:
    """The context keys (w_1..w_n-1) of n-gram rows int32[m, n], uint64[m] (0 for unigrams)."""
    m, n = rows.shape
    if n == 1:
        return np.zeros(m, dtype=np.uint64)
    c = h1(rows[:, n - 2])
    for j in range(n - 3, -1, -1):
        c = h2(c, rows[:, j])
    return c
