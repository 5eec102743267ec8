# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The local orderer's domain search, compiled (:mod:`wo.sr.order` holds the model's description).

One head's domain of k items is ordered left to right in k + 1 steps by beam search; the step
that appends item x after p2 p scores the feature keys of :func:`step_features` (template id and
uint32 atoms, hashed by MurmurHash3_x86_32 exactly as ``wo.sr.order.LocalOrderer._index`` does
in Python).  Per domain: one allocation for the beam and the candidates, a dense cache of the
step scores for domains of at most DENSE_K items.  Source: Bohnet et al. (2010), section 3.3;
early update (Collins & Roark 2004) for training.
"""
import time

import numpy as np

cimport numpy as cnp
from libc.math cimport isnan, NAN
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcpy, memset

from ._hash cimport murmurhash3_words
from ._typedefs cimport uint32_t, int32_t, uint8_t

cnp.import_array()

DEF MAXF = 64
cdef int DENSE_K = 24
cdef uint32_t SIDE_L = 1, SIDE_H = 2, SIDE_R = 3
cdef uint32_t A_START = 0x85EBCA77u, A_END = 0xC2B2AE3Du


cdef inline int _key(uint32_t* out, int n, uint32_t* key, int nk) noexcept nogil:
    out[n] = murmurhash3_words(key, nk, 0)
    return n + 1


cdef int step_features(const OrderDomain* d, int p2, int p, int x, bint hp, uint32_t* out) noexcept nogil:
    """Write the hashed (unmasked) feature indices of appending x (-2: the end) after p2 p (-1:
    the start) to ``out`` (room for MAXF); returns their number.  The templates and their ids are
    those of ``wo.sr.order.LocalOrderer._step_feats`` (part of the model format)."""
    cdef uint32_t k[6]
    cdef int n = 0
    cdef uint32_t side = 0, rx, ux, lx, fx, fux, rp, up, lp, lw, lup, r2, u2, zp, zx, sx, sp, ds
    if x >= 0:
        side = SIDE_H if x == d.hi else (SIDE_R if hp else SIDE_L)
        k[0] = 1; k[1] = d.r[x]; k[2] = side; n = _key(out, n, k, 3)
        k[0] = 2; k[1] = d.r[x]; k[2] = d.u[x]; k[3] = side; n = _key(out, n, k, 4)
        k[0] = 3; k[1] = d.r[x]; k[2] = side; k[3] = d.hu; n = _key(out, n, k, 4)
        k[0] = 4; k[1] = d.r[x]; k[2] = side; k[3] = d.hl; n = _key(out, n, k, 4)
        k[0] = 5; k[1] = d.l[x]; k[2] = side; k[3] = d.hu; n = _key(out, n, k, 4)
        k[0] = 6; k[1] = d.u[x]; k[2] = side; k[3] = d.hu; k[4] = d.hr; n = _key(out, n, k, 5)
        k[0] = 7; k[1] = d.l[x]; k[2] = d.r[x]; k[3] = side; n = _key(out, n, k, 4)
        k[0] = 8; k[1] = d.m[x]; k[2] = d.r[x]; k[3] = side; n = _key(out, n, k, 4)
        k[0] = 9; k[1] = d.r[x]; k[2] = d.sz[x]; k[3] = side; n = _key(out, n, k, 4)
        k[0] = 10; k[1] = d.r[x]; k[2] = d.kr[x]; k[3] = side; n = _key(out, n, k, 4)
        k[0] = 11; k[1] = d.l[x]; k[2] = d.hl; k[3] = side; n = _key(out, n, k, 4)
        k[0] = 12; k[1] = d.u[x]; k[2] = d.m[x]; k[3] = side; k[4] = d.hu; n = _key(out, n, k, 5)
        k[0] = 13; k[1] = d.first[x]; k[2] = side; k[3] = d.hu; n = _key(out, n, k, 4)
        k[0] = 14; k[1] = d.last[x]; k[2] = side; k[3] = d.hu; n = _key(out, n, k, 4)
        rx = d.r[x]; ux = d.u[x]; lx = d.l[x]; fx = d.first[x]; fux = d.fu[x]
    else:
        rx = A_END; ux = A_END; lx = A_END; fx = A_END; fux = A_END
    if p < 0:
        rp = A_START; up = A_START; lp = A_START; lw = A_START; lup = A_START
    else:
        rp = d.r[p]; up = d.u[p]; lp = d.l[p]; lw = d.last[p]; lup = d.lu[p]
    k[0] = 21; k[1] = rp; k[2] = rx; n = _key(out, n, k, 3)
    k[0] = 22; k[1] = rp; k[2] = rx; k[3] = d.hu; n = _key(out, n, k, 4)
    k[0] = 23; k[1] = up; k[2] = ux; n = _key(out, n, k, 3)
    k[0] = 24; k[1] = up; k[2] = ux; k[3] = d.hu; n = _key(out, n, k, 4)
    k[0] = 25; k[1] = lp; k[2] = lx; n = _key(out, n, k, 3)
    k[0] = 26; k[1] = rp; k[2] = ux; n = _key(out, n, k, 3)
    k[0] = 27; k[1] = up; k[2] = rx; n = _key(out, n, k, 3)
    k[0] = 28; k[1] = rp; k[2] = rx; k[3] = d.hl; n = _key(out, n, k, 4)
    k[0] = 29; k[1] = lp; k[2] = rx; n = _key(out, n, k, 3)
    k[0] = 30; k[1] = rp; k[2] = lx; n = _key(out, n, k, 3)
    k[0] = 31; k[1] = rp; k[2] = rx; k[3] = d.hr; n = _key(out, n, k, 4)
    k[0] = 32; k[1] = rp; k[2] = rx; k[3] = SIDE_R if hp else SIDE_L; n = _key(out, n, k, 4)
    k[0] = 41; k[1] = lw; k[2] = fx; n = _key(out, n, k, 3)
    k[0] = 42; k[1] = lup; k[2] = fux; n = _key(out, n, k, 3)
    k[0] = 43; k[1] = lw; k[2] = fux; n = _key(out, n, k, 3)
    k[0] = 44; k[1] = lup; k[2] = fx; n = _key(out, n, k, 3)
    k[0] = 45; k[1] = lw; k[2] = fx; k[3] = d.hu; n = _key(out, n, k, 4)
    k[0] = 46; k[1] = lup; k[2] = fux; k[3] = rp; k[4] = rx; n = _key(out, n, k, 5)
    k[0] = 47; k[1] = lw; k[2] = rx; n = _key(out, n, k, 3)
    k[0] = 48; k[1] = rp; k[2] = fx; n = _key(out, n, k, 3)
    zp = 0 if p < 0 else d.sz[p]
    zx = 0 if x < 0 else d.sz[x]
    k[0] = 61; k[1] = rp; k[2] = zp; k[3] = rx; k[4] = zx; n = _key(out, n, k, 5)
    k[0] = 65; k[1] = zp; k[2] = zx; k[3] = d.hu; k[4] = SIDE_R if hp else SIDE_L; n = _key(out, n, k, 5)
    r2 = A_START if p2 < 0 else d.r[p2]
    u2 = A_START if p2 < 0 else d.u[p2]
    k[0] = 51; k[1] = r2; k[2] = rp; k[3] = rx; n = _key(out, n, k, 4)
    k[0] = 52; k[1] = u2; k[2] = up; k[3] = ux; n = _key(out, n, k, 4)
    if d.sig:   # the domain's signature (its dependents' relation set, the head's kr atom) with the step
        ds = d.kr[d.hi]
        k[0] = 71; k[1] = rp; k[2] = rx; k[3] = ds; n = _key(out, n, k, 4)
        if x >= 0:
            k[0] = 72; k[1] = rx; k[2] = side; k[3] = ds; n = _key(out, n, k, 4)
        k[0] = 73; k[1] = r2; k[2] = rp; k[3] = rx; k[4] = ds; n = _key(out, n, k, 5)
    if d.ends and p >= 0 and x >= 0:   # both phrases' ends: particles (head-final) and prepositions (head-initial)
        k[0] = 74; k[1] = d.last[p]; k[2] = d.last[x]; n = _key(out, n, k, 3)
        k[0] = 75; k[1] = d.first[p]; k[2] = d.first[x]; n = _key(out, n, k, 3)
        k[0] = 76; k[1] = d.last[p]; k[2] = d.last[x]; k[3] = SIDE_R if hp else SIDE_L; k[4] = d.hu; n = _key(out, n, k, 5)
        k[0] = 77; k[1] = d.first[p]; k[2] = d.first[x]; k[3] = SIDE_R if hp else SIDE_L; k[4] = d.hu; n = _key(out, n, k, 5)
    if d.fset >= 4:   # the suffix templates (a model trained with an order suffix, wo.sr.order.suffix_function)
        sx = A_END if x < 0 else d.sf[x]
        sp = A_START if p < 0 else d.sf[p]
        if x >= 0:
            k[0] = 15; k[1] = sx; k[2] = rx; k[3] = side; n = _key(out, n, k, 4)
            k[0] = 16; k[1] = sx; k[2] = side; k[3] = d.hu; n = _key(out, n, k, 4)
            k[0] = 17; k[1] = sx; k[2] = d.hl; k[3] = side; n = _key(out, n, k, 4)
        k[0] = 33; k[1] = sp; k[2] = sx; n = _key(out, n, k, 3)
        k[0] = 34; k[1] = sp; k[2] = rx; n = _key(out, n, k, 3)
        k[0] = 35; k[1] = rp; k[2] = sx; n = _key(out, n, k, 3)
        k[0] = 36; k[1] = sp; k[2] = sx; k[3] = d.hu; n = _key(out, n, k, 4)
    return n


cdef bint allowed(const OrderDomain* d, int x, const uint8_t* used, bint hp) noexcept nogil:
    """Whether item x may come next under the ``lin`` constraints (as ``LocalOrderer._allowed``)."""
    cdef int y, s
    if x == d.hi:
        for y in range(d.k):
            if d.side[y] < 0 and not used[y]:
                return False
        return True
    s = d.side[x]
    if s == 0:
        return True
    if (s < 0) == hp:
        return False
    for y in range(d.k):
        if y != x and d.side[y] == s and not used[y] and (
                (s < 0 and d.rank[y] > d.rank[x]) or (s > 0 and d.rank[y] < d.rank[x])):
            return False
    return True


cdef tuple _tuple(const int32_t* s, int n):
    """The first n values of s as a tuple of Python ints."""
    cdef list out = []
    cdef int i
    for i in range(n):
        out.append(s[i])
    return tuple(out)


cdef struct Cand:
    double score
    int gen          # generation order (ties keep it, as Python's stable sort)
    int parent
    int x


cdef int _cmp(const void* a, const void* b) noexcept nogil:
    cdef const Cand* p = <const Cand*>a
    cdef const Cand* q = <const Cand*>b
    if p.score > q.score:
        return -1
    if p.score < q.score:
        return 1
    return -1 if p.gen < q.gen else (1 if p.gen > q.gen else 0)


cdef class DomainSearch:
    """Beam search over the orders of one domain with a hashed linear model.

    weights: float32 [2^hash_bits] (read-only buffers such as memory maps are fine); beam:
    states per step; fset: 3, or 4 for a model with an order suffix (the suffix templates 15-17
    and 33-36 over the domain's 11th atom row); sig: the domain-signature templates 71-73 (the
    head item's kr atom: the relation set of the domain's dependents); ends: the phrase-ends
    templates 74-77 (the last words and the first words of p's and x's subtrees).  Raises ValueError if the table's size is not
    2^hash_bits or fset is neither.
    """
    cdef const float[::1] w
    cdef uint32_t mask
    cdef public int beam
    cdef public int fset
    cdef public bint sig
    cdef public bint ends
    cdef double* cache
    cdef size_t cache_cap

    def __cinit__(self):
        self.cache = NULL
        self.cache_cap = 0

    def __init__(self, const float[::1] weights, int hash_bits, int beam=16, int fset=3, bint sig=False, bint ends=False):
        if weights.shape[0] != (1 << hash_bits):
            raise ValueError(f"weight table of {weights.shape[0]} is not 2^{hash_bits}")
        self.w = weights
        self.mask = (1u << hash_bits) - 1u
        self.beam = beam
        if fset not in (3, 4):
            raise ValueError(f"feature set {fset}: 3 or 4")
        self.fset = fset
        self.sig = sig
        self.ends = ends

    def __dealloc__(self):
        free(self.cache)

    cdef void _domain(self, OrderDomain* d, const uint32_t[:, ::1] atoms, const int32_t[:, ::1] ints,
                      uint32_t hu, uint32_t hl, uint32_t hr, int hi):
        d.k = atoms.shape[1]
        d.hi = hi
        d.hu = hu
        d.hl = hl
        d.hr = hr
        d.r = &atoms[0, 0]
        d.u = &atoms[1, 0]
        d.l = &atoms[2, 0]
        d.m = &atoms[3, 0]
        d.first = &atoms[4, 0]
        d.fu = &atoms[5, 0]
        d.last = &atoms[6, 0]
        d.lu = &atoms[7, 0]
        d.kr = &atoms[8, 0]
        d.sz = &atoms[9, 0]
        if self.fset >= 4 and atoms.shape[0] < 11:
            raise ValueError("the suffix templates need the domain's 11th atom row (sf)")
        d.sf = &atoms[10, 0] if atoms.shape[0] > 10 else NULL
        d.fset = self.fset
        d.sig = self.sig
        d.ends = self.ends
        d.side = &ints[0, 0]
        d.rank = &ints[1, 0]

    cdef inline double _raw(self, const OrderDomain* d, int p2, int p, int x, bint hp) noexcept nogil:
        cdef uint32_t f[MAXF]
        cdef int n = step_features(d, p2, p, x, hp, f)
        cdef double v = 0.0
        cdef int i
        for i in range(n):
            v += self.w[f[i] & self.mask]
        return v

    cdef inline double _score(self, const OrderDomain* d, bint dense, int p2, int p, int x, bint hp) noexcept nogil:
        cdef int k1 = d.k + 1
        cdef size_t at
        cdef double v
        if not dense:
            return self._raw(d, p2, p, x, hp)
        at = ((<size_t>(p2 + 1) * k1 + (p + 1)) * k1 + (x if x >= 0 else d.k)) * 2 + (1 if hp else 0)
        v = self.cache[at]
        if isnan(v):
            v = self._raw(d, p2, p, x, hp)
            self.cache[at] = v
        return v

    def order(self, const uint32_t[:, ::1] atoms, const int32_t[:, ::1] ints, uint32_t hu, uint32_t hl,
              uint32_t hr, int hi, gold=None, double deadline=0.0, int beam=0):
        """Order one domain.

        atoms: uint32 [10 or 11, k] rows r, u, l, m, first, fu, last, lu, kr, sz (and sf: the
        suffix atoms, needed with fset 4); ints: int32 [2, k]
        rows side, rank; hu/hl/hr: the head's atoms; hi: the head's item; gold: int32 [k] item
        indices in reference order (training: stop at the first step whose beam lost the gold
        prefix); deadline: a ``time.perf_counter()`` value (0: none); beam: states per step (0:
        the orderer's).  Returns (sequence tuple, score, gold prefix tuple or None, finished,
        final beam [(score, sequence tuple)], status) with status "ok", "timeout" (the best state
        was completed in item order, the remaining left-lin items first) or "stuck" (the lin
        constraints admit no order: nothing done).
        """
        cdef OrderDomain d
        self._domain(&d, atoms, ints, hu, hl, hr, hi)
        cdef int k = d.k, B = beam if beam > 0 else self.beam
        cdef bint dense = k <= DENSE_K
        cdef size_t need, i
        cdef const int32_t[::1] g
        cdef bint has_gold = gold is not None
        if has_gold:
            g = gold
        if dense:
            need = <size_t>(k + 1) * (k + 1) * (k + 1) * 2
            if need > self.cache_cap:
                free(self.cache)
                self.cache = <double*>malloc(need * sizeof(double))
                self.cache_cap = need if self.cache != NULL else 0
                if self.cache == NULL:
                    raise MemoryError()
            for i in range(need):
                self.cache[i] = NAN
        # beam states: score, seq [k], used [k], hp, gold flag; double-buffered
        cdef double* sc = <double*>malloc(2 * B * sizeof(double))
        cdef int32_t* seq = <int32_t*>malloc(2 * B * (k + 1) * sizeof(int32_t))
        cdef uint8_t* used = <uint8_t*>malloc(2 * B * k * sizeof(uint8_t))
        cdef uint8_t* hp = <uint8_t*>malloc(2 * B * sizeof(uint8_t))
        cdef uint8_t* isg = <uint8_t*>malloc(2 * B * sizeof(uint8_t))
        cdef Cand* cand = <Cand*>malloc((<size_t>B * (k + 1) + 1) * sizeof(Cand))
        if sc == NULL or seq == NULL or used == NULL or hp == NULL or isg == NULL or cand == NULL:
            free(sc); free(seq); free(used); free(hp); free(isg); free(cand)
            raise MemoryError()
        cdef int nb = 1, cur = 0, nxt, t, b, x, nc, j, p, p2, c, gb
        cdef bint found
        cdef double v
        sc[0] = 0.0
        memset(used, 0, k)
        hp[0] = 0
        isg[0] = 1
        status = "ok"
        try:
            for t in range(k + 1):
                if deadline > 0.0 and t < k and time.perf_counter() > deadline:
                    status = "timeout"
                    break
                nc = 0
                for b in range(nb):
                    p = seq[(cur * B + b) * (k + 1) + t - 1] if t >= 1 else -1
                    p2 = seq[(cur * B + b) * (k + 1) + t - 2] if t >= 2 else -1
                    if t == k:
                        cand[nc].score = sc[cur * B + b] + self._score(&d, dense, p2, p, -2, hp[cur * B + b])
                        cand[nc].gen = nc
                        cand[nc].parent = b
                        cand[nc].x = -2
                        nc += 1
                        continue
                    for x in range(k):
                        if used[(cur * B + b) * k + x] or not allowed(&d, x, &used[(cur * B + b) * k], hp[cur * B + b]):
                            continue
                        cand[nc].score = sc[cur * B + b] + self._score(&d, dense, p2, p, x, hp[cur * B + b])
                        cand[nc].gen = nc
                        cand[nc].parent = b
                        cand[nc].x = x
                        nc += 1
                if nc == 0:
                    status = "stuck"
                    break
                qsort(cand, nc, sizeof(Cand), _cmp)
                nxt = 1 - cur
                found = False
                for j in range(min(nc, B)):
                    b = cand[j].parent
                    x = cand[j].x
                    sc[nxt * B + j] = cand[j].score
                    memcpy(&seq[(nxt * B + j) * (k + 1)], &seq[(cur * B + b) * (k + 1)], t * sizeof(int32_t))
                    memcpy(&used[(nxt * B + j) * k], &used[(cur * B + b) * k], k)
                    hp[nxt * B + j] = hp[cur * B + b]
                    isg[nxt * B + j] = isg[cur * B + b]
                    if x >= 0:
                        seq[(nxt * B + j) * (k + 1) + t] = x
                        used[(nxt * B + j) * k + x] = 1
                        if x == d.hi:
                            hp[nxt * B + j] = 1
                        if has_gold:
                            isg[nxt * B + j] = isg[cur * B + b] and g[t] == x
                    found = found or isg[nxt * B + j]
                nb = min(nc, B)
                cur = nxt
                if has_gold and t < k and not found:
                    return (_tuple(&seq[cur * B * (k + 1)], t + 1), sc[cur * B], _tuple(&g[0], t + 1), False, [],
                            "ok")
            if status == "stuck":
                return (), 0.0, None, False, [], "stuck"
            if status == "timeout":   # complete the best state: left lin items (farthest first), head, right, free
                left, right, free_ = [], [], []
                for x in range(k):
                    if used[cur * B * k + x] or x == d.hi:
                        continue
                    if d.side[x] < 0:
                        left.append((-d.rank[x], x))
                    elif d.side[x] > 0:
                        right.append((d.rank[x], x))
                    else:
                        free_.append(x)
                rest = [x for _, x in sorted(left)]
                if not used[cur * B * k + d.hi]:
                    rest.append(d.hi)
                rest += [x for _, x in sorted(right)] + free_
                return _tuple(&seq[cur * B * (k + 1)], t) + tuple(rest), sc[cur * B], None, True, [], "timeout"
            final = []
            for j in range(nb):
                final.append((sc[cur * B + j], _tuple(&seq[(cur * B + j) * (k + 1)], k)))
            return final[0][1], final[0][0], (_tuple(&g[0], k) if has_gold else None), True, final, "ok"
        finally:
            free(sc); free(seq); free(used); free(hp); free(isg); free(cand)

    def sequence_scores(self, const uint32_t[:, ::1] atoms, const int32_t[:, ::1] ints, uint32_t hu, uint32_t hl,
                        uint32_t hr, int hi, const int32_t[:, ::1] seqs):
        """The model score of each complete order of a domain: ``seqs`` int32 [S, k], one order
        of the k item indices per row; each score sums the steps that build the row and the
        closing step.  Arguments as :meth:`order`.  Returns float64 [S]."""
        cdef OrderDomain d
        self._domain(&d, atoms, ints, hu, hl, hr, hi)
        cdef Py_ssize_t S = seqs.shape[0], k = seqs.shape[1], r, i
        out = np.zeros(S, dtype=np.float64)
        cdef double[::1] o = out
        cdef int p2, p, x
        cdef bint hp
        cdef double v
        with nogil:
            for r in range(S):
                p2 = -1
                p = -1
                hp = False
                v = 0.0
                for i in range(k + 1):
                    x = seqs[r, i] if i < k else -2
                    v += self._raw(&d, p2, p, x, hp)
                    if x == d.hi:
                        hp = True
                    p2 = p
                    p = x
                o[r] = v
        return out

    def features(self, const uint32_t[:, ::1] atoms, const int32_t[:, ::1] ints, uint32_t hu, uint32_t hl,
                 uint32_t hr, int hi, seq, bint end):
        """Masked feature indices (uint32 array, with repeats) of the steps that build ``seq``
        (item indices) and of the closing step when ``end``; arguments as :meth:`order`."""
        cdef OrderDomain d
        self._domain(&d, atoms, ints, hu, hl, hr, hi)
        cdef int n = len(seq), i, c, total = 0, p2 = -1, p = -1, x
        cdef bint hp = False
        out = np.empty((n + 1) * MAXF, dtype=np.uint32)
        cdef uint32_t[::1] o = out
        for i in range(n + (1 if end else 0)):
            x = seq[i] if i < n else -2
            c = step_features(&d, p2, p, x, hp, &o[total])
            total += c
            if x == d.hi:
                hp = True
            p2 = p
            p = x
        for i in range(total):
            o[i] &= self.mask
        return out[:total]
