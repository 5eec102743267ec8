# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Weights of the scaled linear model: large-margin update and parameter averaging.

The model scores an edge e by F(e)/|e| with F(e) = theta . Phi(e) (Zhang & Clark 2015,
section 2.2); Phi are hashed indicator features (MurmurHash3 of a template id and its atoms,
masked to the table size).  The look-up (``dot``) is inline in ``_weights.pxd`` so every
grammar compiles it in place.
"""
import numpy as np
from libc.stdlib cimport qsort

from ._typedefs cimport feat_t, weight_t, uint32_t


cdef int _cmp_u32(const void* a, const void* b) noexcept nogil:
    cdef uint32_t x = (<uint32_t*>a)[0]
    cdef uint32_t y = (<uint32_t*>b)[0]
    return (x > y) - (x < y)


cdef int scaled_update(weight_t* W, double* U, feat_t* P, int np_, double ap, feat_t* N, int nn,
                       double an, double loss, double max_tau, double avg_count,
                       const feat_t* RI, const double* RV, int npr, int nnr) noexcept nogil:
    """Scaled large-margin update of section 3.5: theta += tau (Phi(e+)/|e+| - Phi(e-)/|e-|).

    P[np_], N[nn]: indicator feature indices of the positive and negative derivations (sorted
    in place); RI/RV: real-valued features (index, value) of the positive derivation (the first
    npr) then of the negative one (nnr more), e.g. LM log10 probabilities (Zhang & Clark 2015,
    section 5.6); ap = 1/|e+|, an = 1/|e-|; loss = F(e-)/|e-| - F(e+)/|e+| + 1 (> 0).
    tau = loss / ||delta||^2, capped at ``max_tau`` when it is positive (PA-I).  U accumulates
    ``avg_count * tau * delta`` for averaging (Daume's trick: theta_avg = W - U / c).
    Returns 1 if the weights changed, 0 if delta is zero.
    """
    qsort(P, np_, sizeof(feat_t), _cmp_u32)
    qsort(N, nn, sizeof(feat_t), _cmp_u32)
    cdef double sq = 0.0, coef, tau = 0.0
    cdef int i, j, pass_, nd = 0
    cdef feat_t idx
    cdef feat_t ridx[8]
    cdef double rcoef[8]
    for i in range(npr + nnr):          # real-valued features: a coefficient per index
        for j in range(nd):
            if ridx[j] == RI[i]:
                break
        else:
            if nd == 8:
                continue
            j = nd
            ridx[j] = RI[i]
            rcoef[j] = 0.0
            nd += 1
        rcoef[j] += RV[i] * (ap if i < npr else -an)
    for j in range(nd):
        sq += rcoef[j] * rcoef[j]
    for pass_ in range(2):
        i = 0
        j = 0
        while i < np_ or j < nn:
            if j >= nn or (i < np_ and P[i] < N[j]):
                idx = P[i]
            elif i >= np_ or N[j] < P[i]:
                idx = N[j]
            else:
                idx = P[i]
            coef = 0.0
            while i < np_ and P[i] == idx:
                coef += ap
                i += 1
            while j < nn and N[j] == idx:
                coef -= an
                j += 1
            if pass_ == 0:
                sq += coef * coef
            elif coef != 0.0:
                W[idx] += <weight_t>(tau * coef)
                U[idx] += avg_count * tau * coef
        if pass_ == 0:
            if sq < 1e-12:
                return 0
            tau = loss / sq
            if max_tau > 0 and tau > max_tau:
                tau = max_tau
    for j in range(nd):
        if rcoef[j] != 0.0:
            W[ridx[j]] += <weight_t>(tau * rcoef[j])
            U[ridx[j]] += avg_count * tau * rcoef[j]
    return 1


def averaged(W, U, double avg_count):
    """Averaged parameters W - U / c (Daume 2006), float32.

    W: float32[2**b] current weights; U: float64[2**b] accumulator filled by the updates;
    avg_count: c, the number of averaging steps so far (1 + sentences seen).
    Returns a new float32 array of W's shape.  Raises ValueError on mismatched shapes.
    """
    if W.shape != U.shape:
        raise ValueError("weights and accumulator differ in shape")
    return (W - U / avg_count).astype(np.float32)
