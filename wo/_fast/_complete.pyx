# cython: boundscheck=False, wraparound=False, cdivision=True
"""The hot path of the completion stage (:mod:`wo.sr.complete`): scores of a sparse multiclass
perceptron stored as compressed rows (one row per feature: class ids and float32 weights), and
the best candidate class of several candidate lists at once.

Averaged perceptron (Collins 2002) over string features mapped to row numbers in Python; what
runs here touches only typed memoryviews (no Python object in the loops, GIL released)."""
import numpy as np


cdef void _score_rows(const int[::1] rows, const long long[::1] indptr, const int[::1] cls,
                      const float[::1] w, double[::1] out) noexcept nogil:
    cdef Py_ssize_t i, k
    cdef int r
    for i in range(rows.shape[0]):
        r = rows[i]
        for k in range(indptr[r], indptr[r + 1]):
            out[cls[k]] += w[k]


def score_rows(const int[::1] rows, const long long[::1] indptr, const int[::1] cls, const float[::1] w,
               Py_ssize_t n_classes):
    """Per class, the sum of the weights of the feature rows ``rows`` (int32, row numbers):
    indptr (int64, n_features + 1) delimits each row's entries in cls (int32 class ids) and w
    (float32).  Returns a float64 array of n_classes scores (perceptron units)."""
    out = np.zeros(n_classes, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        _score_rows(rows, indptr, cls, w, o)
    return out


def pick_segments(const double[::1] scores, const int[::1] ids, const long long[::1] starts,
                  const unsigned char[::1] word, double bonus):
    """The best candidate of each candidate list: list j holds ids[starts[j]:starts[j+1]]
    (int32 class ids, -1 for a class no feature weighs: score 0); word[k] (uint8) marks the
    candidates that add words, which get ``bonus``.  Ties go to the first.  Returns an int64
    array, per list the index of its best candidate within the list."""
    cdef Py_ssize_t n = starts.shape[0] - 1, j, k, best
    cdef double v, bv
    out = np.zeros(n, dtype=np.int64)
    cdef long long[::1] o = out
    with nogil:
        for j in range(n):
            best = starts[j]
            bv = -1e300
            for k in range(starts[j], starts[j + 1]):
                v = (scores[ids[k]] if ids[k] >= 0 else 0.0) + (bonus if word[k] else 0.0)
                if v > bv:
                    bv = v
                    best = k
            o[j] = best - starts[j]
    return out
