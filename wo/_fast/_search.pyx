# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Best-first search for dependency-based word ordering (Zhang & Clark 2015, sections 3.4-3.5, 4).

All per-sentence state lives in pools owned by one ``SearchCore`` object and reused across
sentences (the spaCy convention: memory owned by one pool, C structs declared in the .pxd):

* edge arena    ``Edge[]``          every edge created (leaf and combined), addressed by eid_t
* surface pool  ``int32[]``         surface strings (leaf ids) of popped edges only
* bit pool      ``uint64[]``        covered-token bitsets of popped edges only
* agenda        binary max-heap of (scaled score F(e)/|e|, eid) -- ties broken by smaller eid
* chart         one beam of k*n accepted edges kept as a min-heap (the lowest is evicted)

New edges are never materialised: their surface string and bitset are built when they are
popped (both children of any edge were popped, so feature extraction always reads
materialised surfaces).  Only the features of the new action are computed (section 3.3).
The hot loop holds no Python objects and runs without the GIL.
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport malloc, realloc, free, qsort
from libc.string cimport memcpy, memset
from libc.math cimport fabs
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from ._typedefs cimport atom_t, feat_t, weight_t, score_t, eid_t
from ._typedefs cimport uint32_t, int32_t, int16_t, uint8_t, uint64_t, int64_t
from ._hash cimport murmurhash3_words
from ._search cimport Edge

cnp.import_array()

# special atoms (arbitrary odd constants, fixed forever: they are part of the model format)
cdef uint32_t A_NONE = 0x9E3779B1u
cdef uint32_t A_START = 0x85EBCA77u
cdef uint32_t A_END = 0xC2B2AE3Du

DEF MAXKEY = 8

# status codes of a decoded sentence
cdef enum:
    S_OK = 0           # a goal edge was popped
    S_BUDGET = 1       # pop budget exhausted: greedy default output (section 3.4)
    S_TIMEOUT = 2      # wall-clock timeout: greedy default output
    S_COMPLETED = 3    # budget or timeout reached, goal found by beam completion over the chart
STATUS_OK = S_OK
STATUS_COMPLETED = S_COMPLETED
STATUS_BUDGET = S_BUDGET
STATUS_TIMEOUT = S_TIMEOUT

# feature template ids (Table 2 of Zhang & Clark 2015); never renumber: part of the model format
cdef enum:
    T_LEAF_WP = 1
    T_LEAF_P
    T_WH_PH_SIZE
    T_WH_SIZE
    T_PH_SIZE
    T_WH_PH_DIR
    T_WH_DIR
    T_PH_DIR
    T_WM_PM_DIR
    T_WM_DIR
    T_PM_DIR
    T_WH_PH_DIST
    T_WH_DIST
    T_PH_DIST
    T_WM_PM_DIST
    T_WM_DIST
    T_PM_DIST
    T_WH_PH_WM_PM_DIR
    T_WH_PH_WM_PM_DIST
    T_WH_PH_PM_DIR
    T_WH_PH_PM_DIST
    T_PH_WM_PM_DIR
    T_PH_WM_PM_DIST
    T_PH_PM_DIR
    T_PH_PM_DIST
    T_PH_PM_PB_DIR
    T_PH_PHN_PM_PMN_DIR
    T_WH_PM_PML_DIR
    T_WH_PM_PMR_DIR
    T_PH_PM_PML_DIR
    T_PH_PM_PMR_DIR
    T_PH_PM_PS_DIR
    T_PH_PS_DIR
    T_PM_PS_DIR
    T_WH_WS_DIR
    T_WM_WS_DIR
    T_PH_WS_DIR
    T_PM_WS_DIR
    T_WH_PS_DIR
    T_WM_PS_DIR
    T_WH_PM_PS_PS2_DIR
    T_PH_PM_PS_PS2_DIR
    # completed word (the dependent m on attachment; the root of a complete sentence: +100)
    T_C_W_P_WL_PL
    T_C_P_PL
    T_C_W_P_PL
    T_C_P_WL_PL
    T_C_W_P_WR_PR
    T_C_P_PR
    T_C_W_P_PR
    T_C_P_WR_PR
    T_C_W_P_LVAL
    T_C_W_P_RVAL
    T_C_W_P_LVAL_RVAL
    T_C_P_LVAL
    T_C_P_RVAL
    T_C_P_LVAL_RVAL
    # surface string at the boundary B (first word of the right phrase)
    T_B_W1_W0
    T_B_P1_P0
    T_B_W1_P0
    T_B_P1_W0
    T_B_W1_W0_W0N
    T_B_W2_W1_W0
    T_B_P1_P0_P0N
    T_B_P2_P1_P0
    T_B_P1_W0_P0N
    T_B_P2_W1_P0
    # complete sentence
    T_S_W0
    T_S_W0_W1
    T_S_WL
    T_S_WL_WL1
    T_S_P0
    T_S_P0_P1
    T_S_P0_P1_P2
    T_S_PL
    T_S_PL_PL1
    T_S_PL_PL1_PL2
    T_COMPLETE_ROOT_BASE = 100
    T_LABEL_BASE = 200    # label-conjoined copies of the direction templates (SR input)

cdef inline int _norm(int x) noexcept nogil:
    """NORM of Table 2: 1,2,3,4,5, (5,10], (10,20], (20,40], 40+ -> 1..9."""
    if x < 0:
        x = -x
    if x <= 5:
        return x
    if x <= 10:
        return 6
    if x <= 20:
        return 7
    if x <= 40:
        return 8
    return 9

cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9

cdef int _cmp_u32(const void* a, const void* b) noexcept nogil:
    cdef uint32_t x = (<uint32_t*>a)[0]
    cdef uint32_t y = (<uint32_t*>b)[0]
    return (x > y) - (x < y)


cdef class SearchCore:
    """Agenda/chart best-first decoder and large-margin trainer over one weight vector.

    Parameters
    ----------
    weights : numpy.ndarray, shape (2**hash_bits,), dtype float32, C-contiguous, writable for
        training (read-only, e.g. memory-mapped, is fine for decoding).
    hash_bits : int, log2 of the weight-table size; feature index = MurmurHash3 & (2**b - 1).

    Source: Zhang & Clark 2015, Algorithm 3 (training) and Algorithm 4 (decoding), with the
    dependency edge of section 4.2 and the Table 2 feature templates.
    Raises ValueError if ``weights`` does not have 2**hash_bits entries.
    """
    cdef const weight_t* W
    cdef weight_t* Wmut
    cdef double* U
    cdef object _wref, _uref
    cdef uint32_t mask
    # edge arena
    cdef Edge* E
    cdef int ne, cap_e
    # pools
    cdef int32_t* surf
    cdef int nsurf, cap_surf
    cdef uint64_t* bits
    cdef int nbits, cap_bits
    # agenda
    cdef double* akey
    cdef eid_t* aid
    cdef int asize, acap
    # chart
    cdef double* ckey
    cdef eid_t* cid
    cdef int csize, ccap
    # feature buffer
    cdef feat_t* fbuf
    cdef int fcap
    cdef feat_t* tbuf   # tree feature buffer (training)
    cdef int tcap
    # instance
    cdef int n, nleaf, W64
    cdef const uint32_t* tok_word
    cdef const int32_t* given_head
    cdef const int32_t* given_ndeps
    cdef const int32_t* leaf_tok
    cdef const uint32_t* leaf_pos
    cdef const uint32_t* leaf_word
    cdef const uint32_t* tok_label
    cdef const int32_t* tok_lin
    cdef const int32_t* lin_need   # [2*t] left, [2*t+1] right: lin-dependents token t must take
    # per-instance buffers owned by the core (defaults when SR arrays are not given)
    cdef uint32_t* dflt_word
    cdef uint32_t* dflt_label
    cdef int32_t* dflt_lin
    cdef int32_t* lin_need_buf
    cdef int cap_leafbuf, cap_tokbuf
    cdef bint has_labels
    cdef const int32_t* gold_head
    cdef const uint32_t* gold_pos
    cdef const uint32_t* gold_word
    cdef bint gold_has_word
    cdef const int32_t* gold_idx
    cdef const int32_t* sub_lo
    cdef const int32_t* sub_hi
    cdef bint has_gold
    cdef bint gold_only
    cdef object _refs
    # signatures of popped edges (decoding): open addressing, 0 = empty
    cdef uint64_t* seen
    cdef int seen_cap, seen_n
    # training state
    cdef int epoch
    cdef eid_t* gold_ag
    cdef int ngold_ag, cap_gold
    cdef public long long n_updates
    cdef int ne_mark
    cdef public double max_tau
    cdef public int positive_choice
    cdef public double avg_count
    # statistics of the last call
    cdef public long long last_pops
    cdef public long long last_edges
    cdef public long long total_edges

    def __cinit__(self):
        self.E = NULL
        self.surf = NULL
        self.bits = NULL
        self.akey = NULL
        self.aid = NULL
        self.ckey = NULL
        self.cid = NULL
        self.fbuf = NULL
        self.tbuf = NULL
        self.gold_ag = NULL
        self.U = NULL
        self.seen = NULL
        self.seen_cap = 0
        self.dflt_word = NULL
        self.dflt_label = NULL
        self.dflt_lin = NULL
        self.lin_need_buf = NULL
        self.cap_leafbuf = 0
        self.cap_tokbuf = 0

    def __init__(self, weights, int hash_bits, accum=None):
        if weights.shape[0] != (1 << hash_bits) or weights.dtype != np.float32:
            raise ValueError("weights must be float32 with 2**hash_bits entries")
        cdef const weight_t[::1] wv = weights
        self._wref = weights
        self.W = &wv[0]
        self.Wmut = NULL
        cdef double[::1] uv
        if accum is not None:
            if not weights.flags.writeable:
                raise ValueError("training needs writable weights")
            self.Wmut = <weight_t*>&wv[0]
            uv = accum
            self._uref = accum
            self.U = &uv[0]
        self.mask = <uint32_t>((1 << hash_bits) - 1)
        self.cap_e = 1 << 16
        self.E = <Edge*>malloc(self.cap_e * sizeof(Edge))
        self.cap_surf = 1 << 16
        self.surf = <int32_t*>malloc(self.cap_surf * sizeof(int32_t))
        self.cap_bits = 1 << 12
        self.bits = <uint64_t*>malloc(self.cap_bits * sizeof(uint64_t))
        self.acap = 1 << 16
        self.akey = <double*>malloc(self.acap * sizeof(double))
        self.aid = <eid_t*>malloc(self.acap * sizeof(eid_t))
        self.ccap = 0
        self.fcap = 0
        self.tcap = 1 << 14
        self.tbuf = <feat_t*>malloc(self.tcap * sizeof(feat_t))
        self.cap_gold = 1024
        self.gold_ag = <eid_t*>malloc(self.cap_gold * sizeof(eid_t))
        self.epoch = 0
        self.n_updates = 0
        self.max_tau = 0.0
        self.positive_choice = 0
        self.avg_count = 1.0
        self.total_edges = 0
        if (self.E == NULL or self.surf == NULL or self.bits == NULL or self.akey == NULL
                or self.aid == NULL or self.tbuf == NULL or self.gold_ag == NULL):
            raise MemoryError()

    def __dealloc__(self):
        free(self.E); free(self.surf); free(self.bits); free(self.akey); free(self.aid)
        free(self.ckey); free(self.cid); free(self.fbuf); free(self.tbuf); free(self.gold_ag)
        free(self.seen)
        free(self.dflt_word); free(self.dflt_label); free(self.dflt_lin); free(self.lin_need_buf)

    # ------------------------------------------------------------------ instance
    def _set_instance(self, tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold=None,
                      leaf_word=None, tok_label=None, tok_lin=None):
        """Point the search at one instance (see :meth:`decode` for the arrays)."""
        cdef const uint32_t[::1] tw = tok_word
        cdef const int32_t[::1] gh = given_head
        cdef const int32_t[::1] gn = given_ndeps
        cdef const int32_t[::1] lt = leaf_tok
        cdef const uint32_t[::1] lp = leaf_pos
        cdef const uint32_t[::1] lw
        cdef const uint32_t[::1] tl
        cdef const int32_t[::1] tn
        cdef const int32_t[::1] g_head
        cdef const uint32_t[::1] g_pos
        cdef const int32_t[::1] g_idx
        cdef const int32_t[::1] g_lo
        cdef const int32_t[::1] g_hi
        cdef const uint32_t[::1] g_word
        self.n = tw.shape[0]
        self.nleaf = lt.shape[0]
        if self.n <= 0 or self.nleaf < self.n:
            raise ValueError("empty instance or a token without a leaf")
        if gh.shape[0] != self.n or gn.shape[0] != self.n or lp.shape[0] != self.nleaf:
            raise ValueError("instance arrays have inconsistent shapes")
        if self.n > 32000:
            raise ValueError("sentence too long (more than 32000 tokens)")
        if self._grow_instance_bufs() < 0:
            raise MemoryError()
        cdef int i, t
        for i in range(self.nleaf):
            if lt[i] < 0 or lt[i] >= self.n:
                raise ValueError("leaf_tok refers to a token out of range")
        if leaf_word is None:      # plain word ordering: a leaf's word is its token's word
            for i in range(self.nleaf):
                self.dflt_word[i] = tw[lt[i]]
            self.leaf_word = self.dflt_word
        else:
            lw = leaf_word
            if lw.shape[0] != self.nleaf:
                raise ValueError("leaf_word has the wrong length")
            self.leaf_word = &lw[0]
        self.has_labels = tok_label is not None
        if tok_label is None:
            memset(self.dflt_label, 0, self.n * sizeof(uint32_t))
            self.tok_label = self.dflt_label
        else:
            tl = tok_label
            if tl.shape[0] != self.n:
                raise ValueError("tok_label has the wrong length")
            self.tok_label = &tl[0]
        memset(self.lin_need_buf, 0, 2 * self.n * sizeof(int32_t))
        if tok_lin is None:
            memset(self.dflt_lin, 0, self.n * sizeof(int32_t))
            self.tok_lin = self.dflt_lin
        else:
            tn = tok_lin
            if tn.shape[0] != self.n:
                raise ValueError("tok_lin has the wrong length")
            self.tok_lin = &tn[0]
            for t in range(self.n):   # lin-dependents each head must take, per side
                if tn[t] != 0 and gh[t] >= 0:
                    self.lin_need_buf[2 * gh[t] + (1 if tn[t] > 0 else 0)] += 1
        self.lin_need = self.lin_need_buf
        self.tok_word = &tw[0]
        self.given_head = &gh[0]
        self.given_ndeps = &gn[0]
        self.leaf_tok = &lt[0]
        self.leaf_pos = &lp[0]
        self.W64 = (self.n + 63) // 64
        self._refs = [tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold, leaf_word,
                      tok_label, tok_lin]
        self.has_gold = gold is not None
        self.gold_has_word = False
        if self.has_gold:
            g_head = gold[0]; g_pos = gold[1]; g_idx = gold[2]; g_lo = gold[3]; g_hi = gold[4]
            self.gold_head = &g_head[0]
            self.gold_pos = &g_pos[0]
            self.gold_idx = &g_idx[0]
            self.sub_lo = &g_lo[0]
            self.sub_hi = &g_hi[0]
            if len(gold) > 5 and gold[5] is not None:
                g_word = gold[5]
                self.gold_word = &g_word[0]
                self.gold_has_word = True
        cdef int need = 512 + 4 * self.n
        if self.fcap < need:
            free(self.fbuf)
            self.fcap = need
            self.fbuf = <feat_t*>malloc(need * sizeof(feat_t))
            if self.fbuf == NULL:
                raise MemoryError()

    cdef int _grow_instance_bufs(self) noexcept:
        """Make the per-instance default buffers hold nleaf leaves and n tokens (-1 on failure)."""
        cdef uint32_t* w
        if self.cap_leafbuf < self.nleaf:
            w = <uint32_t*>realloc(self.dflt_word, self.nleaf * sizeof(uint32_t))
            if w == NULL:
                return -1
            self.dflt_word = w
            self.cap_leafbuf = self.nleaf
        if self.cap_tokbuf < self.n:
            free(self.dflt_label); free(self.dflt_lin); free(self.lin_need_buf)
            self.dflt_label = <uint32_t*>malloc(self.n * sizeof(uint32_t))
            self.dflt_lin = <int32_t*>malloc(self.n * sizeof(int32_t))
            self.lin_need_buf = <int32_t*>malloc(2 * self.n * sizeof(int32_t))
            if self.dflt_label == NULL or self.dflt_lin == NULL or self.lin_need_buf == NULL:
                self.cap_tokbuf = 0
                return -1
            self.cap_tokbuf = self.n
        return 0

    cdef int _reset(self, int beam) except -1:
        self.ne = 0
        self.nsurf = 0
        self.nbits = 0
        self.asize = 0
        self.csize = 0
        self.ngold_ag = 0
        if beam < 1:
            beam = 1
        if self.ccap < beam:
            free(self.ckey); free(self.cid)
            self.ckey = <double*>malloc(beam * sizeof(double))
            self.cid = <eid_t*>malloc(beam * sizeof(eid_t))
            if self.ckey == NULL or self.cid == NULL:
                raise MemoryError()
        self.ccap = beam
        return 0

    # ------------------------------------------------------------------ pools
    cdef inline eid_t _new_edge(self) noexcept nogil:
        cdef Edge* p
        if self.ne == self.cap_e:
            p = <Edge*>realloc(self.E, 2 * self.cap_e * sizeof(Edge))
            if p == NULL:
                return -1
            self.E = p
            self.cap_e *= 2
        self.ne += 1
        return self.ne - 1

    cdef int _materialise(self, eid_t e) noexcept nogil:
        """Build the surface string and bitset of edge e (children already materialised)."""
        cdef Edge* x = &self.E[e]
        cdef Edge* l
        cdef Edge* r
        cdef int i, nw = x.nwords
        cdef int32_t* ps
        cdef uint64_t* pb
        cdef int tok
        if x.surf >= 0:
            return 0
        while self.nsurf + nw > self.cap_surf:
            ps = <int32_t*>realloc(self.surf, 2 * self.cap_surf * sizeof(int32_t))
            if ps == NULL:
                return -1
            self.surf = ps
            self.cap_surf *= 2
        while self.nbits + self.W64 > self.cap_bits:
            pb = <uint64_t*>realloc(self.bits, 2 * self.cap_bits * sizeof(uint64_t))
            if pb == NULL:
                return -1
            self.bits = pb
            self.cap_bits *= 2
        x = &self.E[e]
        x.surf = self.nsurf
        x.bits = self.nbits
        self.nsurf += nw
        self.nbits += self.W64
        if x.left < 0:
            self.surf[x.surf] = x.head
            memset(&self.bits[x.bits], 0, self.W64 * sizeof(uint64_t))
            tok = self.leaf_tok[x.head]
            self.bits[x.bits + tok // 64] |= (<uint64_t>1) << (tok % 64)
        else:
            l = &self.E[x.left]
            r = &self.E[x.right]
            memcpy(&self.surf[x.surf], &self.surf[l.surf], l.nwords * sizeof(int32_t))
            memcpy(&self.surf[x.surf + l.nwords], &self.surf[r.surf], r.nwords * sizeof(int32_t))
            for i in range(self.W64):
                self.bits[x.bits + i] = self.bits[l.bits + i] | self.bits[r.bits + i]
        return 0

    cdef int _seen_reset(self, long long max_pops) except -1:
        cdef long long need = 1024
        while need < 2 * max_pops + 2 and need < (1 << 16):
            need *= 2
        if self.seen_cap != need:
            free(self.seen)
            self.seen = <uint64_t*>malloc(need * sizeof(uint64_t))
            if self.seen == NULL:
                raise MemoryError()
            self.seen_cap = <int>need
        memset(self.seen, 0, self.seen_cap * sizeof(uint64_t))
        self.seen_n = 0
        return 0

    cdef int _seen_grow(self) noexcept nogil:
        """Double the signature table (kept at most half full) and reinsert."""
        cdef int old_cap = self.seen_cap, i
        cdef uint64_t* old = self.seen
        cdef uint64_t mask, j, sig
        self.seen = <uint64_t*>malloc(2 * old_cap * sizeof(uint64_t))
        if self.seen == NULL:
            self.seen = old
            return -1
        memset(self.seen, 0, 2 * old_cap * sizeof(uint64_t))
        self.seen_cap = 2 * old_cap
        mask = <uint64_t>(self.seen_cap - 1)
        for i in range(old_cap):
            sig = old[i]
            if sig != 0:
                j = (sig ^ (sig >> 29)) & mask
                while self.seen[j] != 0:
                    j = (j + 1) & mask
                self.seen[j] = sig
        free(old)
        return 0

    cdef bint _seen_add(self, uint64_t sig) noexcept nogil:
        """Insert sig; return True if it was already there (a duplicate edge)."""
        if sig == 0:
            sig = 1
        if 2 * (self.seen_n + 1) > self.seen_cap:
            self._seen_grow()
        cdef uint64_t mask = <uint64_t>(self.seen_cap - 1)
        cdef uint64_t i = (sig ^ (sig >> 29)) & mask
        while self.seen[i] != 0:
            if self.seen[i] == sig:
                return True
            i = (i + 1) & mask
        self.seen[i] = sig
        self.seen_n += 1
        return False

    # ------------------------------------------------------------------ agenda (max-heap)
    cdef inline bint _abetter(self, int i, int j) noexcept nogil:
        return self.akey[i] > self.akey[j] or (self.akey[i] == self.akey[j] and self.aid[i] < self.aid[j])

    cdef int _apush(self, eid_t e, double key) noexcept nogil:
        cdef double* pk
        cdef eid_t* pi
        cdef int i, p
        cdef double tk
        cdef eid_t ti
        if self.asize == self.acap:
            pk = <double*>realloc(self.akey, 2 * self.acap * sizeof(double))
            if pk == NULL:
                return -1
            self.akey = pk
            pi = <eid_t*>realloc(self.aid, 2 * self.acap * sizeof(eid_t))
            if pi == NULL:
                return -1
            self.aid = pi
            self.acap *= 2
        i = self.asize
        self.asize += 1
        self.akey[i] = key
        self.aid[i] = e
        while i > 0:
            p = (i - 1) >> 1
            if self._abetter(i, p):
                tk = self.akey[i]; self.akey[i] = self.akey[p]; self.akey[p] = tk
                ti = self.aid[i]; self.aid[i] = self.aid[p]; self.aid[p] = ti
                i = p
            else:
                break
        return 0

    cdef eid_t _apop(self) noexcept nogil:
        cdef eid_t top = self.aid[0]
        cdef int i = 0, l, r, b
        cdef double tk
        cdef eid_t ti
        self.asize -= 1
        if self.asize > 0:
            self.akey[0] = self.akey[self.asize]
            self.aid[0] = self.aid[self.asize]
            while True:
                l = 2 * i + 1
                r = l + 1
                b = i
                if l < self.asize and self._abetter(l, b):
                    b = l
                if r < self.asize and self._abetter(r, b):
                    b = r
                if b == i:
                    break
                tk = self.akey[i]; self.akey[i] = self.akey[b]; self.akey[b] = tk
                ti = self.aid[i]; self.aid[i] = self.aid[b]; self.aid[b] = ti
                i = b
        return top

    # ------------------------------------------------------------------ chart (min-heap beam)
    cdef inline bint _cworse(self, int i, int j) noexcept nogil:
        return self.ckey[i] < self.ckey[j] or (self.ckey[i] == self.ckey[j] and self.cid[i] > self.cid[j])

    cdef void _csift_down(self, int i) noexcept nogil:
        cdef int l, r, b
        cdef double tk
        cdef eid_t ti
        while True:
            l = 2 * i + 1
            r = l + 1
            b = i
            if l < self.csize and self._cworse(l, b):
                b = l
            if r < self.csize and self._cworse(r, b):
                b = r
            if b == i:
                break
            tk = self.ckey[i]; self.ckey[i] = self.ckey[b]; self.ckey[b] = tk
            ti = self.cid[i]; self.cid[i] = self.cid[b]; self.cid[b] = ti
            i = b

    cdef void _csift_up(self, int i) noexcept nogil:
        cdef int p
        cdef double tk
        cdef eid_t ti
        while i > 0:
            p = (i - 1) >> 1
            if self._cworse(i, p):
                tk = self.ckey[i]; self.ckey[i] = self.ckey[p]; self.ckey[p] = tk
                ti = self.cid[i]; self.cid[i] = self.cid[p]; self.cid[p] = ti
                i = p
            else:
                break

    cdef eid_t _cadd(self, eid_t e, double key) noexcept nogil:
        """ADD(c, e): insert e; when the beam is full return the evicted lowest edge (maybe e), else -1."""
        cdef eid_t out
        if self.csize < self.ccap:
            self.ckey[self.csize] = key
            self.cid[self.csize] = e
            self.csize += 1
            self._csift_up(self.csize - 1)
            return -1
        # full: the lowest is at the root
        if key < self.ckey[0] or (key == self.ckey[0] and e > self.cid[0]):
            return e
        out = self.cid[0]
        self.ckey[0] = key
        self.cid[0] = e
        self._csift_down(0)
        return out

    cdef void _cremove_at(self, int i) noexcept nogil:
        self.csize -= 1
        if i < self.csize:
            self.ckey[i] = self.ckey[self.csize]
            self.cid[i] = self.cid[self.csize]
            self._csift_down(i)
            self._csift_up(i)

    cdef void _cheapify(self) noexcept nogil:
        cdef int i
        i = self.csize // 2 - 1
        while i >= 0:
            self._csift_down(i)
            i -= 1

    # ------------------------------------------------------------------ features
    cdef inline uint32_t _wd(self, int32_t leaf) noexcept nogil:
        if leaf < 0:
            return A_NONE
        return self.leaf_word[leaf]

    cdef inline uint32_t _ps(self, int32_t leaf) noexcept nogil:
        if leaf < 0:
            return A_NONE
        return self.leaf_pos[leaf]

    cdef inline void _f2(self, int* k, uint32_t t, uint32_t a, uint32_t b) noexcept nogil:
        cdef uint32_t key[3]
        key[0] = t; key[1] = a; key[2] = b
        self.fbuf[k[0]] = murmurhash3_words(key, 3, 0) & self.mask
        k[0] += 1

    cdef inline void _f3(self, int* k, uint32_t t, uint32_t a, uint32_t b, uint32_t c) noexcept nogil:
        cdef uint32_t key[4]
        key[0] = t; key[1] = a; key[2] = b; key[3] = c
        self.fbuf[k[0]] = murmurhash3_words(key, 4, 0) & self.mask
        k[0] += 1

    cdef inline void _f4(self, int* k, uint32_t t, uint32_t a, uint32_t b, uint32_t c, uint32_t d) noexcept nogil:
        cdef uint32_t key[5]
        key[0] = t; key[1] = a; key[2] = b; key[3] = c; key[4] = d
        self.fbuf[k[0]] = murmurhash3_words(key, 5, 0) & self.mask
        k[0] += 1

    cdef inline void _f5(self, int* k, uint32_t t, uint32_t a, uint32_t b, uint32_t c, uint32_t d,
                         uint32_t e) noexcept nogil:
        cdef uint32_t key[6]
        key[0] = t; key[1] = a; key[2] = b; key[3] = c; key[4] = d; key[5] = e
        self.fbuf[k[0]] = murmurhash3_words(key, 6, 0) & self.mask
        k[0] += 1

    cdef inline void _f6(self, int* k, uint32_t t, uint32_t a, uint32_t b, uint32_t c, uint32_t d,
                         uint32_t e, uint32_t f) noexcept nogil:
        cdef uint32_t key[7]
        key[0] = t; key[1] = a; key[2] = b; key[3] = c; key[4] = d; key[5] = e; key[6] = f
        self.fbuf[k[0]] = murmurhash3_words(key, 7, 0) & self.mask
        k[0] += 1

    cdef int _leaf_features(self, int32_t leaf) noexcept nogil:
        cdef int k = 0
        cdef uint32_t w = self._wd(leaf), p = self._ps(leaf)
        self._f2(&k, T_LEAF_WP, w, p)
        self._f2(&k, T_LEAF_P, p, 0)
        return k

    cdef void _completed(self, int* k, uint32_t base, int32_t c, int32_t cl, int32_t cr,
                         int lval, int rval) noexcept nogil:
        """Completed-word templates of Table 2 for word c with outermost dependents cl, cr."""
        cdef uint32_t w = self._wd(c), p = self._ps(c)
        cdef uint32_t wl = self._wd(cl), pl = self._ps(cl), wr = self._wd(cr), pr = self._ps(cr)
        cdef uint32_t lv = <uint32_t>lval, rv = <uint32_t>rval
        self._f4(k, base + T_C_W_P_WL_PL, w, p, wl, pl)
        self._f2(k, base + T_C_P_PL, p, pl)
        self._f3(k, base + T_C_W_P_PL, w, p, pl)
        self._f3(k, base + T_C_P_WL_PL, p, wl, pl)
        self._f4(k, base + T_C_W_P_WR_PR, w, p, wr, pr)
        self._f2(k, base + T_C_P_PR, p, pr)
        self._f3(k, base + T_C_W_P_PR, w, p, pr)
        self._f3(k, base + T_C_P_WR_PR, p, wr, pr)
        self._f3(k, base + T_C_W_P_LVAL, w, p, lv)
        self._f3(k, base + T_C_W_P_RVAL, w, p, rv)
        self._f4(k, base + T_C_W_P_LVAL_RVAL, w, p, lv, rv)
        self._f2(k, base + T_C_P_LVAL, p, lv)
        self._f2(k, base + T_C_P_RVAL, p, rv)
        self._f3(k, base + T_C_P_LVAL_RVAL, p, lv, rv)

    cdef inline int32_t _at(self, const int32_t* SL, int nl, const int32_t* SR, int nr, int p) noexcept nogil:
        if p < 0 or p >= nl + nr:
            return -1
        if p < nl:
            return SL[p]
        return SR[p - nl]

    cdef void _arc_features(self, int* k, uint32_t base, uint32_t dir, uint32_t dist,
                            uint32_t wh, uint32_t ph, uint32_t wm, uint32_t pm, uint32_t ws,
                            uint32_t ps_, uint32_t ps2, int32_t ml, int32_t mr,
                            const int32_t* SL, int nl, const int32_t* SR, int nr,
                            int hp, int mp) noexcept nogil:
        """The Table-2 templates that contain the arc direction ``dir`` (ids offset by ``base``).

        Called once with the plain direction and, when arc labels are given (SR input, Zhang &
        Clark 2015 section 5.7), once more with the direction conjoined with the dependent's label.
        """
        cdef int b
        self._f3(k, base + T_WH_PH_DIR, wh, ph, dir)
        self._f2(k, base + T_WH_DIR, wh, dir)
        self._f2(k, base + T_PH_DIR, ph, dir)
        self._f3(k, base + T_WM_PM_DIR, wm, pm, dir)
        self._f2(k, base + T_WM_DIR, wm, dir)
        self._f2(k, base + T_PM_DIR, pm, dir)
        self._f4(k, base + T_WH_PH_DIST, wh, ph, dist, dir)
        self._f3(k, base + T_WH_DIST, wh, dist, dir)
        self._f3(k, base + T_PH_DIST, ph, dist, dir)
        self._f4(k, base + T_WM_PM_DIST, wm, pm, dist, dir)
        self._f3(k, base + T_WM_DIST, wm, dist, dir)
        self._f3(k, base + T_PM_DIST, pm, dist, dir)
        self._f5(k, base + T_WH_PH_WM_PM_DIR, wh, ph, wm, pm, dir)
        self._f6(k, base + T_WH_PH_WM_PM_DIST, wh, ph, wm, pm, dist, dir)
        self._f4(k, base + T_WH_PH_PM_DIR, wh, ph, pm, dir)
        self._f5(k, base + T_WH_PH_PM_DIST, wh, ph, pm, dist, dir)
        self._f4(k, base + T_PH_WM_PM_DIR, ph, wm, pm, dir)
        self._f5(k, base + T_PH_WM_PM_DIST, ph, wm, pm, dist, dir)
        self._f3(k, base + T_PH_PM_DIR, ph, pm, dir)
        self._f4(k, base + T_PH_PM_DIST, ph, pm, dist, dir)
        # POS(h) POS(m) POS(b) for every b strictly between h and m
        if hp < mp:
            for b in range(hp + 1, mp):
                self._f4(k, base + T_PH_PM_PB_DIR, ph, pm, self._ps(self._at(SL, nl, SR, nr, b)), dir)
            self._f5(k, base + T_PH_PHN_PM_PMN_DIR, ph, self._ps(self._at(SL, nl, SR, nr, hp + 1)), pm,
                     self._ps(self._at(SL, nl, SR, nr, mp - 1)), dir)
        else:
            for b in range(mp + 1, hp):
                self._f4(k, base + T_PH_PM_PB_DIR, ph, pm, self._ps(self._at(SL, nl, SR, nr, b)), dir)
            self._f5(k, base + T_PH_PHN_PM_PMN_DIR, ph, self._ps(self._at(SL, nl, SR, nr, hp - 1)), pm,
                     self._ps(self._at(SL, nl, SR, nr, mp + 1)), dir)
        self._f4(k, base + T_WH_PM_PML_DIR, wh, pm, self._ps(ml), dir)
        self._f4(k, base + T_WH_PM_PMR_DIR, wh, pm, self._ps(mr), dir)
        self._f4(k, base + T_PH_PM_PML_DIR, ph, pm, self._ps(ml), dir)
        self._f4(k, base + T_PH_PM_PMR_DIR, ph, pm, self._ps(mr), dir)
        self._f4(k, base + T_PH_PM_PS_DIR, ph, pm, ps_, dir)
        self._f3(k, base + T_PH_PS_DIR, ph, ps_, dir)
        self._f3(k, base + T_PM_PS_DIR, pm, ps_, dir)
        self._f3(k, base + T_WH_WS_DIR, wh, ws, dir)
        self._f3(k, base + T_WM_WS_DIR, wm, ws, dir)
        self._f3(k, base + T_PH_WS_DIR, ph, ws, dir)
        self._f3(k, base + T_PM_WS_DIR, pm, ws, dir)
        self._f3(k, base + T_WH_PS_DIR, wh, ps_, dir)
        self._f3(k, base + T_WM_PS_DIR, wm, ps_, dir)
        self._f5(k, base + T_WH_PM_PS_PS2_DIR, wh, pm, ps_, ps2, dir)
        self._f5(k, base + T_PH_PM_PS_PS2_DIR, ph, pm, ps_, ps2, dir)

    cdef int _combine_features(self, eid_t le, eid_t re, int headleft) noexcept nogil:
        """phi of the action joining le (left) and re (right) with an arc between their heads.

        Fills self.fbuf and returns the number of features. Both children are materialised.
        """
        cdef Edge* L = &self.E[le]
        cdef Edge* R = &self.E[re]
        cdef Edge* H
        cdef Edge* M
        cdef int nl = L.nwords, nr = R.nwords, k = 0, b
        cdef const int32_t* SL = &self.surf[L.surf]
        cdef const int32_t* SR = &self.surf[R.surf]
        cdef int hp, mp, nn = nl + nr
        cdef uint32_t dir, dist, size
        cdef int32_t h, m, s, s2, ml, mr
        if headleft:
            H = L; M = R
            hp = L.hpos; mp = nl + R.hpos
            dir = 1
            s = H.rdep1; s2 = H.rdep2
        else:
            H = R; M = L
            hp = nl + R.hpos; mp = L.hpos
            dir = 2
            s = H.ldep1; s2 = H.ldep2
        h = H.head; m = M.head
        ml = M.ldep1; mr = M.rdep1
        dist = <uint32_t>_norm(hp - mp)
        size = <uint32_t>_norm(nn)
        cdef uint32_t wh = self._wd(h), ph = self._ps(h), wm = self._wd(m), pm = self._ps(m)
        cdef uint32_t ws = self._wd(s), ps_ = self._ps(s), ps2 = self._ps(s2)
        # dependency syntax
        self._f3(&k, T_WH_PH_SIZE, wh, ph, size)
        self._f2(&k, T_WH_SIZE, wh, size)
        self._f2(&k, T_PH_SIZE, ph, size)
        self._arc_features(&k, 0, dir, dist, wh, ph, wm, pm, ws, ps_, ps2, ml, mr, SL, nl, SR, nr, hp, mp)
        cdef uint32_t lab
        if self.has_labels:
            lab = self.tok_label[self.leaf_tok[m]]
            if lab != 0:
                self._arc_features(&k, T_LABEL_BASE, lab * 4u + dir, dist, wh, ph, wm, pm, ws, ps_,
                                   ps2, ml, mr, SL, nl, SR, nr, hp, mp)
        # m is complete once attached
        self._completed(&k, 0, m, ml, mr, M.lval, M.rval)
        # surface string at the boundary B = nl
        cdef int32_t b2 = self._at(SL, nl, SR, nr, nl - 2), b1 = SL[nl - 1]
        cdef int32_t b0 = SR[0], b0n = self._at(SL, nl, SR, nr, nl + 1)
        cdef uint32_t w1 = self._wd(b1), w0 = self._wd(b0), p1 = self._ps(b1), p0 = self._ps(b0)
        self._f2(&k, T_B_W1_W0, w1, w0)
        self._f2(&k, T_B_P1_P0, p1, p0)
        self._f2(&k, T_B_W1_P0, w1, p0)
        self._f2(&k, T_B_P1_W0, p1, w0)
        self._f3(&k, T_B_W1_W0_W0N, w1, w0, self._wd(b0n))
        self._f3(&k, T_B_W2_W1_W0, self._wd(b2), w1, w0)
        self._f3(&k, T_B_P1_P0_P0N, p1, p0, self._ps(b0n))
        self._f3(&k, T_B_P2_P1_P0, self._ps(b2), p1, p0)
        self._f3(&k, T_B_P1_W0_P0N, p1, w0, self._ps(b0n))
        self._f3(&k, T_B_P2_W1_P0, self._ps(b2), w1, p0)
        # complete sentence
        cdef int32_t x0, x1, x2, y0, y1, y2
        cdef int hl1, hl2, hr1, hr2, lv, rv
        if nn == self.n:
            x0 = self._at(SL, nl, SR, nr, 0); x1 = self._at(SL, nl, SR, nr, 1); x2 = self._at(SL, nl, SR, nr, 2)
            y0 = self._at(SL, nl, SR, nr, nn - 1); y1 = self._at(SL, nl, SR, nr, nn - 2)
            y2 = self._at(SL, nl, SR, nr, nn - 3)
            self._f2(&k, T_S_W0, self._wd(x0), 0)
            self._f2(&k, T_S_W0_W1, self._wd(x0), self._wd(x1))
            self._f2(&k, T_S_WL, self._wd(y0), 0)
            self._f2(&k, T_S_WL_WL1, self._wd(y0), self._wd(y1))
            self._f2(&k, T_S_P0, self._ps(x0), 0)
            self._f2(&k, T_S_P0_P1, self._ps(x0), self._ps(x1))
            self._f3(&k, T_S_P0_P1_P2, self._ps(x0), self._ps(x1), self._ps(x2))
            self._f2(&k, T_S_PL, self._ps(y0), 0)
            self._f2(&k, T_S_PL_PL1, self._ps(y0), self._ps(y1))
            self._f3(&k, T_S_PL_PL1_PL2, self._ps(y0), self._ps(y1), self._ps(y2))
            # the root is complete too
            if headleft:
                hl1 = H.ldep1; hr1 = m; lv = H.lval; rv = H.rval + 1
            else:
                hl1 = m; hr1 = H.rdep1; lv = H.lval + 1; rv = H.rval
            self._completed(&k, T_COMPLETE_ROOT_BASE, h, hl1, hr1, lv, rv)
        return k

    cdef inline double _sum_weights(self, int k) noexcept nogil:
        cdef double s = 0.0
        cdef int i
        for i in range(k):
            s += self.W[self.fbuf[i]]
        return s

    # ------------------------------------------------------------------ edges
    cdef int _push_leaves(self) noexcept nogil:
        cdef int i, k
        cdef uint32_t key3[6]
        cdef eid_t e
        cdef Edge* x
        cdef int tok
        for i in range(self.nleaf):
            e = self._new_edge()
            if e < 0:
                return -1
            x = &self.E[e]
            tok = self.leaf_tok[i]
            x.left = -1; x.right = -1; x.head = i
            x.ldep1 = -1; x.ldep2 = -1; x.rdep1 = -1; x.rdep2 = -1
            x.surf = -1; x.bits = -1; x.epoch = self.epoch
            x.hpos = 0; x.nwords = 1; x.nact = 1; x.lval = 0; x.rval = 0; x.gdeps = 0
            x.linl = 0; x.linr = 0
            x.headleft = 0
            x.gold = 0
            x.span_lo = -1; x.span_hi = -1
            if self.has_gold and self.leaf_pos[i] == self.gold_pos[tok] and (
                    not self.gold_has_word or self.leaf_word[i] == self.gold_word[tok]):
                x.gold = 1
                x.span_lo = self.gold_idx[tok]
                x.span_hi = self.gold_idx[tok] + 1
            k = self._leaf_features(i)
            x.F = self._sum_weights(k)
            key3[0] = self.leaf_word[i]; key3[1] = self.leaf_pos[i]
            key3[2] = <uint32_t>self.given_head[tok]; key3[3] = <uint32_t>self.given_ndeps[tok]
            key3[4] = self.tok_label[tok]; key3[5] = <uint32_t>self.tok_lin[tok]
            x.sig = (<uint64_t>murmurhash3_words(key3, 6, 1) << 32) | murmurhash3_words(key3, 6, 2)
            if self.gold_only and not x.gold:
                self.ne -= 1
                continue
            if self._apush(e, x.F) < 0:
                return -1
            if x.gold and self._track_gold(e) < 0:
                return -1
        return 0

    cdef int _track_gold(self, eid_t e) noexcept nogil:
        cdef eid_t* p
        if self.ngold_ag == self.cap_gold:
            p = <eid_t*>realloc(self.gold_ag, 2 * self.cap_gold * sizeof(eid_t))
            if p == NULL:
                return -1
            self.gold_ag = p
            self.cap_gold *= 2
        self.gold_ag[self.ngold_ag] = e
        self.ngold_ag += 1
        return 0

    cdef void _untrack_gold(self, eid_t e) noexcept nogil:
        cdef int i
        for i in range(self.ngold_ag):
            if self.gold_ag[i] == e:
                self.ngold_ag -= 1
                self.gold_ag[i] = self.gold_ag[self.ngold_ag]
                return

    cdef int _try_combine(self, eid_t le, eid_t re, int headleft) noexcept nogil:
        """COMBINE(le, re, HeadLeft/HeadRight) under the constraints of section 4.1; push the result."""
        cdef Edge* L = &self.E[le]
        cdef Edge* R = &self.E[re]
        cdef Edge* H
        cdef Edge* M
        if headleft:
            H = L; M = R
            if H.lval > 0:          # right dependents before left ones
                return 0
        else:
            H = R; M = L
        cdef int htok = self.leaf_tok[H.head], mtok = self.leaf_tok[M.head]
        cdef int32_t gh = self.given_head[mtok]
        if gh != -1 and gh != htok:   # given head (or given root) disagrees
            return 0
        if M.gdeps != self.given_ndeps[mtok]:   # m still misses a given dependent
            return 0
        cdef int32_t lin = self.tok_lin[mtok]
        if lin != 0:   # SR'19 `lin`: side of the head, rank among the head's lin-dependents there
            if headleft:
                if lin < 0 or H.linr != lin - 1:
                    return 0
            elif lin > 0 or H.linl != -lin - 1:
                return 0
        if not headleft and H.linr != self.lin_need[2 * htok + 1]:
            return 0   # a left dependent would close the right side before its lin-dependents
        cdef uint8_t gold = 0
        if self.has_gold and L.gold and R.gold and L.span_hi == R.span_lo and self.gold_head[mtok] == htok:
            if M.span_lo == self.sub_lo[mtok] and M.span_hi == self.sub_hi[mtok]:
                if headleft or H.span_hi == self.sub_hi[htok]:
                    gold = 1
        if self.gold_only and not gold:
            return 0
        cdef eid_t e = self._new_edge()
        if e < 0:
            return -1
        L = &self.E[le]; R = &self.E[re]
        if headleft:
            H = L; M = R
        else:
            H = R; M = L
        cdef Edge* x = &self.E[e]
        x.left = le; x.right = re; x.head = H.head
        x.headleft = <uint8_t>headleft
        cdef uint32_t sk[5]
        sk[0] = <uint32_t>(L.sig >> 32); sk[1] = <uint32_t>L.sig
        sk[2] = <uint32_t>(R.sig >> 32); sk[3] = <uint32_t>R.sig; sk[4] = <uint32_t>headleft
        x.sig = (<uint64_t>murmurhash3_words(sk, 5, 3) << 32) | murmurhash3_words(sk, 5, 4)
        if headleft:
            x.hpos = L.hpos
            x.ldep1 = H.ldep1; x.ldep2 = H.ldep2
            x.rdep1 = M.head; x.rdep2 = H.rdep1
            x.lval = H.lval; x.rval = H.rval + 1
        else:
            x.hpos = L.nwords + R.hpos
            x.ldep1 = M.head; x.ldep2 = H.ldep1
            x.rdep1 = H.rdep1; x.rdep2 = H.rdep2
            x.lval = H.lval + 1; x.rval = H.rval
        x.gdeps = H.gdeps + (1 if gh == htok else 0)
        x.linl = H.linl + (1 if lin < 0 else 0)
        x.linr = H.linr + (1 if lin > 0 else 0)
        x.nwords = L.nwords + R.nwords
        x.nact = L.nact + R.nact + 1
        x.surf = -1; x.bits = -1
        x.epoch = self.epoch
        x.gold = gold
        if gold:
            x.span_lo = L.span_lo; x.span_hi = R.span_hi
        else:
            x.span_lo = -1; x.span_hi = -1
        cdef int k = self._combine_features(le, re, headleft)
        x = &self.E[e]
        x.F = self.E[le].F + self.E[re].F + self._sum_weights(k)
        if self._apush(e, x.F / x.nact) < 0:
            return -1
        if gold and self._track_gold(e) < 0:
            return -1
        return 1

    cdef int _expand(self, eid_t e) noexcept nogil:
        """Combine popped edge e with every chart edge (Algorithm 4, both orders x head left/right)."""
        cdef int i, j, W64 = self.W64, r
        cdef eid_t c
        cdef const uint64_t* be = &self.bits[self.E[e].bits]
        cdef const uint64_t* bc
        cdef bint ok
        for i in range(self.csize):
            c = self.cid[i]
            if not self._disjoint(be, c):
                continue
            if (self._try_combine(e, c, 1) < 0 or self._try_combine(e, c, 0) < 0
                    or self._try_combine(c, e, 1) < 0 or self._try_combine(c, e, 0) < 0):
                return -1
            be = &self.bits[self.E[e].bits]
        return 0

    cdef inline bint _is_goal(self, eid_t e) noexcept nogil:
        cdef Edge* x = &self.E[e]
        cdef int tok
        if x.nwords != self.n:
            return False
        tok = self.leaf_tok[x.head]
        return (self.given_head[tok] == -1 or self.given_head[tok] == -2) and x.gdeps == self.given_ndeps[tok]

    # ------------------------------------------------------------------ output
    cdef void _fill_heads(self, eid_t e, int32_t* heads) noexcept nogil:
        cdef Edge* x = &self.E[e]
        cdef Edge* H
        cdef Edge* M
        if x.left < 0:
            return
        if x.headleft:
            H = &self.E[x.left]; M = &self.E[x.right]
        else:
            H = &self.E[x.right]; M = &self.E[x.left]
        heads[self.leaf_tok[M.head]] = self.leaf_tok[H.head]
        self._fill_heads(x.left, heads)
        self._fill_heads(x.right, heads)

    cdef object _result(self, eid_t goal, int status, long long pops):
        """Return (order leaf ids int32[n], heads int32[n] (token index, -1 root), score, status, pops, edges)."""
        cdef cnp.ndarray[int32_t, ndim=1] order = np.empty(self.n, dtype=np.int32)
        cdef cnp.ndarray[int32_t, ndim=1] heads = np.full(self.n, -1, dtype=np.int32)
        cdef int i, j, pos = 0, tok, root0 = -1
        cdef bint ok
        cdef eid_t tmp
        cdef Edge* x
        cdef double score = 0.0
        cdef uint64_t* cover
        cdef eid_t* ids
        cdef int32_t* hp = <int32_t*>heads.data
        cdef int32_t* op = <int32_t*>order.data
        if goal >= 0:
            x = &self.E[goal]
            for i in range(self.n):
                op[i] = self.surf[x.surf + i]
            self._fill_heads(goal, hp)
            score = x.F / x.nact
        else:
            # greedy default output (section 3.4): chart edges by size, concatenated left to right
            cover = <uint64_t*>malloc(self.W64 * sizeof(uint64_t))
            ids = <eid_t*>malloc((self.csize + 1) * sizeof(eid_t))
            memset(cover, 0, self.W64 * sizeof(uint64_t))
            for i in range(self.csize):
                ids[i] = self.cid[i]
            self._sort_greedy(ids, self.csize)
            for i in range(self.csize):
                if not self._disjoint(cover, ids[i]):
                    continue
                self._cover(cover, ids[i])
                x = &self.E[ids[i]]
                for j in range(x.nwords):
                    op[pos + j] = self.surf[x.surf + j]
                pos += x.nwords
                self._fill_heads(ids[i], hp)
                tok = self.leaf_tok[x.head]
                if root0 < 0:
                    root0 = tok
                    score = x.F / x.nact
                else:
                    hp[tok] = root0
            # words never popped: their first leaf, in canonical order
            for i in range(self.nleaf):
                tok = self.leaf_tok[i]
                if not (cover[tok // 64] >> (tok % 64)) & 1:
                    cover[tok // 64] |= (<uint64_t>1) << (tok % 64)
                    op[pos] = i
                    pos += 1
                    if root0 < 0:
                        root0 = tok
                    else:
                        hp[tok] = root0
            free(cover)
            free(ids)
        return order, heads, score, status, pops, self.ne

    cdef void _sort_greedy(self, eid_t* ids, int m) noexcept nogil:
        """Sort edge ids by (words desc, scaled score desc, id asc): insertion sort, m is small."""
        cdef int i, j
        cdef eid_t tmp
        for i in range(1, m):
            j = i
            while j > 0 and self._greedy_before(ids[j], ids[j - 1]):
                tmp = ids[j]; ids[j] = ids[j - 1]; ids[j - 1] = tmp
                j -= 1

    cdef inline bint _disjoint(self, const uint64_t* a, eid_t e) noexcept nogil:
        """True if bitset a and edge e's covered tokens do not overlap."""
        cdef const uint64_t* b = &self.bits[self.E[e].bits]
        cdef int j
        for j in range(self.W64):
            if a[j] & b[j]:
                return False
        return True

    cdef inline void _cover(self, uint64_t* a, eid_t e) noexcept nogil:
        cdef const uint64_t* b = &self.bits[self.E[e].bits]
        cdef int j
        for j in range(self.W64):
            a[j] |= b[j]

    cdef inline bint _greedy_before(self, eid_t a, eid_t b) noexcept nogil:
        cdef Edge* x = &self.E[a]
        cdef Edge* y = &self.E[b]
        if x.nwords != y.nwords:
            return x.nwords > y.nwords
        if x.F / x.nact != y.F / y.nact:
            return x.F / x.nact > y.F / y.nact
        return a < b

    # ------------------------------------------------------------------ completion
    cdef eid_t _complete(self, int B) noexcept nogil:
        """Beam completion when the pop budget is exhausted (extension of section 3.4's default output).

        States start as the B largest chart edges; each step combines every state with every
        disjoint chart or leaf edge (the four COMBINEs of Algorithm 4), keeps the B best new
        edges by scaled score and stops when no state grows.  Returns the best goal edge or -1.
        Cost: at most n steps x B x (k*n + leaves) x 4 edges.
        """
        cdef int i, j, t, nc = 0, ns = 0, nn
        cdef eid_t e, s, c, best = -1
        cdef double bk = 0.0, key
        cdef eid_t* cands = <eid_t*>malloc((self.csize + self.nleaf + 1) * sizeof(eid_t))
        cdef eid_t* states = <eid_t*>malloc((B + 1) * sizeof(eid_t))
        cdef eid_t* nxt = <eid_t*>malloc((B + 1) * sizeof(eid_t))
        cdef eid_t tmp
        cdef bint ok
        if cands == NULL or states == NULL or nxt == NULL:
            free(cands); free(states); free(nxt)
            return -1
        for i in range(self.csize):
            cands[nc] = self.cid[i]
            nc += 1
        for i in range(self.nleaf):          # leaf edges are edges 0..nleaf-1 when decoding
            if self._materialise(i) < 0:
                break
            cands[nc] = i
            nc += 1
        # initial states: the B largest (then best-scored) chart edges
        self._sort_greedy(cands, self.csize)
        for i in range(min(B, self.csize)):
            states[ns] = cands[i]
            ns += 1
        if ns == 0 and nc > 0:
            states[0] = cands[0]
            ns = 1
        while ns > 0:
            self.asize = 0
            for t in range(ns):
                s = states[t]
                for i in range(nc):
                    c = cands[i]
                    if not self._disjoint(&self.bits[self.E[s].bits], c):
                        continue
                    if (self._try_combine(s, c, 1) < 0 or self._try_combine(s, c, 0) < 0
                            or self._try_combine(c, s, 1) < 0 or self._try_combine(c, s, 0) < 0):
                        self.asize = 0
                        break
            nn = 0
            while self.asize > 0 and nn < B:
                key = self.akey[0]
                e = self._apop()
                if nn > 0 and self.E[e].F == self.E[nxt[nn - 1]].F and self.E[e].nwords == self.E[nxt[nn - 1]].nwords:
                    continue        # the same edge built from two states
                if self.E[e].nwords == self.n:
                    if self._is_goal(e) and (best < 0 or key > bk):
                        best = e
                        bk = key
                    continue
                if self._materialise(e) < 0:
                    break
                nxt[nn] = e
                nn += 1
            for t in range(nn):
                states[t] = nxt[t]
            ns = nn
        self.asize = 0
        if best >= 0:
            self._materialise(best)
        free(cands); free(states); free(nxt)
        return best

    cdef eid_t _merge_complete(self) noexcept nogil:
        """Easy-first completion: merge the best pair of disjoint pieces until one remains.

        Pieces start as a greedy partition of the words by chart edges (largest first, as in
        section 3.4) plus the best leaf of every uncovered word.  Each step applies the
        highest-scoring valid COMBINE of two pieces (scaled score); pair edges are kept on the
        agenda and discarded lazily once a child has been merged.  Always reaches a goal when
        the constraints are satisfiable (a complete dependent can always be attached to its
        head on some side).  Returns the goal edge or -1.
        """
        cdef int i, j, np_ = 0, t
        cdef eid_t e, a, b, tmp
        cdef bint ok, alive_a, alive_b
        cdef eid_t* pieces = <eid_t*>malloc((self.n + self.csize + 1) * sizeof(eid_t))
        cdef eid_t* ids = <eid_t*>malloc((self.csize + 1) * sizeof(eid_t))
        cdef uint64_t* cover = <uint64_t*>malloc(self.W64 * sizeof(uint64_t))
        cdef int32_t* bestleaf = <int32_t*>malloc(self.n * sizeof(int32_t))
        if pieces == NULL or ids == NULL or cover == NULL or bestleaf == NULL:
            free(pieces); free(ids); free(cover); free(bestleaf)
            return -1
        memset(cover, 0, self.W64 * sizeof(uint64_t))
        for i in range(self.csize):
            ids[i] = self.cid[i]
        self._sort_greedy(ids, self.csize)
        for i in range(self.csize):
            a = ids[i]
            if not self._disjoint(cover, a):
                continue
            self._cover(cover, a)
            pieces[np_] = a
            np_ += 1
        for i in range(self.n):
            bestleaf[i] = -1
        for i in range(self.nleaf):
            t = self.leaf_tok[i]
            if bestleaf[t] < 0 or self.E[i].F > self.E[bestleaf[t]].F:
                bestleaf[t] = i
        for t in range(self.n):
            if not (cover[t // 64] >> (t % 64)) & 1 and bestleaf[t] >= 0:
                if self._materialise(bestleaf[t]) < 0:
                    break
                pieces[np_] = bestleaf[t]
                np_ += 1
        self.asize = 0
        for i in range(np_):
            for j in range(np_):
                if i != j:
                    if self._try_combine(pieces[i], pieces[j], 1) < 0 or self._try_combine(pieces[i], pieces[j], 0) < 0:
                        np_ = 0
        while np_ > 1 and self.asize > 0:
            e = self._apop()
            a = self.E[e].left
            b = self.E[e].right
            alive_a = False
            alive_b = False
            for i in range(np_):
                if pieces[i] == a:
                    alive_a = True
                elif pieces[i] == b:
                    alive_b = True
            if not (alive_a and alive_b):
                continue
            if self._materialise(e) < 0:
                break
            j = 0
            for i in range(np_):
                if pieces[i] != a and pieces[i] != b:
                    pieces[j] = pieces[i]
                    j += 1
            np_ = j
            for i in range(np_):
                if (self._try_combine(e, pieces[i], 1) < 0 or self._try_combine(e, pieces[i], 0) < 0
                        or self._try_combine(pieces[i], e, 1) < 0 or self._try_combine(pieces[i], e, 0) < 0):
                    np_ = -1
                    break
            if np_ < 0:
                break
            pieces[np_] = e
            np_ += 1
        self.asize = 0
        e = -1
        if np_ == 1 and self._is_goal(pieces[0]):
            e = pieces[0]
        free(pieces); free(ids); free(cover); free(bestleaf)
        return e

    # ------------------------------------------------------------------ decoding
    def decode(self, tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, int beam,
               long long max_pops, double timeout=0.0, int complete_beam=4,
               long long max_edges=4000000, leaf_word=None, tok_label=None, tok_lin=None,
               long long goal_patience=0):
        """Decode one instance (Algorithm 4).

        Parameters
        ----------
        tok_word : uint32[n] word atoms;  given_head : int32[n] (-1 none, -2 root, else token);
        given_ndeps : int32[n] number of tokens whose given head is this token;
        leaf_tok : int32[L] token of each leaf edge;  leaf_pos : uint32[L] POS atom of each leaf;
        beam : chart size (k*n);  max_pops : pop budget;  timeout : seconds (0 = none).

        complete_beam : beam of the completion phase run when the budget or timeout is reached
        (0 = greedy default output only);  max_edges : the search stops (as on an exhausted
        budget) once this many edges exist, bounding memory at about 100 bytes per edge.
        Optional, for shared-task (SR) input (Zhang & Clark 2015, section 5.7):
        leaf_word : uint32[L] word atom of each leaf (default tok_word[leaf_tok]); the leaves of
        one token form a mutually exclusive group of candidate forms (x POS), exactly one of
        which is used;  tok_label : uint32[n] atoms of the given arc labels (0 = none; given
        labels add label-conjoined copies of the direction templates);  tok_lin : int32[n]
        SR'19 ``lin`` (+k: k-th closest among the head's lin-dependents on its right, -k on
        its left, 0 = free), a hard constraint.
        goal_patience : after the first goal edge is popped, keep popping for up to this many
        more pops (within max_pops) and return the best-scoring goal popped (goals are not
        expanded).  0 = stop at the first goal (Algorithm 4).  With the scaled score F(e)/|e|
        the first goal popped is not always the best one: on EWT dev full trees 64 of 76
        search errors were of this kind.
        Returns (order int32[n] leaf ids, heads int32[n] token -> head token or -1,
        scaled score float, status int (0 ok, 1 budget, 2 timeout, 3 completed), pops int, edges int).
        Raises ValueError for inconsistent arrays, MemoryError when the pools cannot grow.
        """
        self._set_instance(tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, None,
                           leaf_word, tok_label, tok_lin)
        self.gold_only = False
        self._reset(beam)
        self._seen_reset(max_pops)
        cdef long long pops = 0, dups = 0, stop_at = max_pops
        cdef eid_t e, goal = -1, g2
        cdef int status = S_BUDGET, rc = 0
        cdef double t0 = _now()
        with nogil:
            if self._push_leaves() < 0:
                rc = -1
            while rc == 0 and self.asize > 0 and pops < max_pops and self.ne < max_edges:
                if timeout > 0 and (pops & 15) == 0 and _now() - t0 > timeout:
                    if goal < 0:
                        status = S_TIMEOUT
                    break
                e = self._apop()
                if self._seen_add(self.E[e].sig):
                    dups += 1          # same words, tags, tree and order as an expanded edge
                    if dups > 64 * max_pops:
                        break
                    continue
                pops += 1
                if self._materialise(e) < 0:
                    rc = -1
                    break
                if self._is_goal(e):
                    if goal < 0:
                        stop_at = pops + goal_patience
                        if stop_at > max_pops:
                            stop_at = max_pops
                    if goal < 0 or self.E[e].F / self.E[e].nact > self.E[goal].F / self.E[goal].nact:
                        goal = e
                    status = S_OK
                    if pops >= stop_at:
                        break
                    continue
                if goal >= 0 and pops >= stop_at:
                    break
                if self._expand(e) < 0:
                    rc = -1
                    break
                self._cadd(e, self.E[e].F / self.E[e].nact)
            if rc == 0 and goal < 0 and complete_beam > 0:
                goal = self._complete(complete_beam)
                g2 = self._merge_complete()
                if g2 >= 0 and (goal < 0 or self.E[g2].F / self.E[g2].nact > self.E[goal].F / self.E[goal].nact):
                    goal = g2
                if goal >= 0:
                    status = S_COMPLETED
        if rc < 0:
            raise MemoryError("search pools could not grow")
        self.last_pops = pops
        self.last_edges = self.ne
        self.total_edges += self.ne
        return self._result(goal, status, pops)

    def forced(self, tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold, long long max_pops,
               leaf_word=None, tok_label=None, tok_lin=None):
        """Forced decoding: only gold edges are built; returns (reached, order leaf ids or None, heads, scaled score).

        ``gold`` = (gold_head int32[n] (-1 root), gold_pos uint32[n] POS atoms, gold_idx int32[n]
        reference positions, sub_lo int32[n], sub_hi int32[n] subtree spans [lo, hi), and
        optionally gold_word uint32[n], the atom of each token's gold form among its leaves).
        ``leaf_word``, ``tok_label``, ``tok_lin`` as in :meth:`decode`.
        Used to test that every projective reference tree is reachable and recognised as gold.
        """
        self._set_instance(tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold,
                           leaf_word, tok_label, tok_lin)
        self.gold_only = True
        self._reset(4 * self.n + 4)
        cdef long long pops = 0
        cdef eid_t e, goal = -1
        with nogil:
            self._push_leaves()
            while self.asize > 0 and pops < max_pops:
                e = self._apop()
                pops += 1
                self._materialise(e)
                if self._is_goal(e) and self.E[e].gold:
                    goal = e
                    break
                self._expand(e)
                self._cadd(e, self.E[e].F / self.E[e].nact)
        self.gold_only = False
        if goal < 0:
            return False, None, None, 0.0
        r = self._result(goal, STATUS_OK, pops)
        return True, r[0], r[1], r[2]

    # ------------------------------------------------------------------ training
    cdef double _rescore(self, eid_t e) noexcept nogil:
        """F(e) under the current weights, memoised by epoch (RECOMPUTESCORES)."""
        cdef Edge* x = &self.E[e]
        cdef int k
        cdef double f
        if x.epoch == self.epoch:
            return x.F
        if x.left < 0:
            k = self._leaf_features(x.head)
            f = self._sum_weights(k)
        else:
            f = self._rescore(x.left) + self._rescore(x.right)
            k = self._combine_features(x.left, x.right, x.headleft)
            f += self._sum_weights(k)
        x = &self.E[e]
        x.F = f
        x.epoch = self.epoch
        return f

    cdef int _tree_features(self, eid_t e, int* nt) noexcept nogil:
        """Append Phi(e) (all action features of the derivation) to self.tbuf."""
        cdef Edge* x = &self.E[e]
        cdef int k, i
        cdef feat_t* p
        if x.left < 0:
            k = self._leaf_features(x.head)
        else:
            if self._tree_features(x.left, nt) < 0 or self._tree_features(x.right, nt) < 0:
                return -1
            x = &self.E[e]
            k = self._combine_features(x.left, x.right, x.headleft)
        while nt[0] + k > self.tcap:
            p = <feat_t*>realloc(self.tbuf, 2 * self.tcap * sizeof(feat_t))
            if p == NULL:
                return -1
            self.tbuf = p
            self.tcap *= 2
        for i in range(k):
            self.tbuf[nt[0] + i] = self.fbuf[i]
        nt[0] += k
        return 0

    cdef int _update(self, eid_t pos, eid_t neg) noexcept nogil:
        """Scaled large-margin update (section 3.5): theta += tau * (Phi(e+)/|e+| - Phi(e-)/|e-|)."""
        cdef double fp = self._rescore(pos) / self.E[pos].nact
        cdef double fn = self._rescore(neg) / self.E[neg].nact
        cdef double loss = fn - fp + 1.0
        if loss <= 0:
            return 0
        cdef int np_ = 0, nn_ = 0
        if self._tree_features(pos, &np_) < 0:
            return -1
        nn_ = np_
        if self._tree_features(neg, &nn_) < 0:
            return -1
        nn_ -= np_
        cdef feat_t* P = self.tbuf
        cdef feat_t* N = self.tbuf + np_
        qsort(P, np_, sizeof(feat_t), _cmp_u32)
        qsort(N, nn_, sizeof(feat_t), _cmp_u32)
        cdef double ap = 1.0 / self.E[pos].nact, an = 1.0 / self.E[neg].nact
        cdef double sq = 0.0, coef, tau, c = self.avg_count
        cdef int i, j, pass_
        cdef feat_t idx
        for pass_ in range(2):
            i = 0
            j = 0
            while i < np_ or j < nn_:
                if j >= nn_ or (i < np_ and P[i] < N[j]):
                    idx = P[i]
                elif i >= np_ or N[j] < P[i]:
                    idx = N[j]
                else:
                    idx = P[i]
                coef = 0.0
                while i < np_ and P[i] == idx:
                    coef += ap
                    i += 1
                while j < nn_ and N[j] == idx:
                    coef -= an
                    j += 1
                if pass_ == 0:
                    sq += coef * coef
                elif coef != 0.0:
                    self.Wmut[idx] += <weight_t>(tau * coef)
                    self.U[idx] += c * tau * coef
            if pass_ == 0:
                if sq < 1e-12:
                    return 0
                tau = loss / sq
                if self.max_tau > 0 and tau > self.max_tau:
                    tau = self.max_tau
        self.n_updates += 1
        self.epoch += 1
        return 1

    cdef void _rescore_chart(self) noexcept nogil:
        cdef int i
        cdef eid_t c
        for i in range(self.csize):
            c = self.cid[i]
            self.ckey[i] = self._rescore(c) / self.E[c].nact
        self._cheapify()

    cdef eid_t _min_gold(self) noexcept nogil:
        cdef int i
        cdef eid_t g, best = -1
        cdef double s, bs = 0.0
        for i in range(self.ngold_ag):
            g = self.gold_ag[i]
            s = self._rescore(g) / self.E[g].nact
            if self.positive_choice == 1:
                s = -s
            if best < 0 or s < bs or (s == bs and g > best):
                best = g
                bs = s
        return best

    cdef int _max_nongold_slot(self) noexcept nogil:
        cdef int i, best = -1
        for i in range(self.csize):
            if not self.E[self.cid[i]].gold:
                if best < 0 or self.ckey[i] > self.ckey[best] or (
                        self.ckey[i] == self.ckey[best] and self.cid[i] < self.cid[best]):
                    best = i
        return best

    def train_one(self, tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold, int beam,
                  long long max_pops, leaf_word=None, tok_label=None, tok_lin=None):
        """One training sentence (Algorithm 3 for the dependency model, section 4.4).

        Expands negative examples; a popped non-gold edge triggers an update against the
        lowest-scored gold edge on the agenda; a gold edge pushed out of the chart triggers an
        update against the highest-scored non-gold chart edge and is put back.  Agenda scores
        are refreshed lazily when an edge reaches the top (RECOMPUTESCORES), chart scores at
        every update.  Returns (reached_gold_goal bool, pops int, updates int).
        ``gold`` as in :meth:`forced`.  The caller increments ``avg_count`` per sentence.
        """
        if self.U == NULL:
            raise ValueError("SearchCore was created without an accumulator: cannot train")
        self._set_instance(tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold,
                           leaf_word, tok_label, tok_lin)
        self.gold_only = False
        self._reset(beam)
        cdef long long pops = 0, upd0 = self.n_updates
        cdef eid_t e, g, out
        cdef int slot, rc = 0
        cdef bint reached = False
        cdef double key
        with nogil:
            if self._push_leaves() < 0:
                rc = -1
            while rc == 0 and self.asize > 0 and pops < max_pops:
                e = self._apop()
                if self.E[e].epoch != self.epoch:
                    key = self._rescore(e) / self.E[e].nact
                    if self._apush(e, key) < 0:
                        rc = -1
                    continue
                pops += 1
                if self.E[e].gold:
                    self._untrack_gold(e)
                if self._materialise(e) < 0:
                    rc = -1
                    break
                if self.E[e].gold and self._is_goal(e):
                    reached = True
                    break
                if not self.E[e].gold:
                    g = self._min_gold()
                    if g < 0:
                        break          # no gold edge left: the reference is unreachable
                    if self._update(g, e) < 0:
                        rc = -1
                        break
                    self._rescore_chart()
                if self._expand(e) < 0:
                    rc = -1
                    break
                out = self._cadd(e, self._rescore(e) / self.E[e].nact)
                if out >= 0 and self.E[out].gold:
                    slot = self._max_nongold_slot()
                    if slot >= 0:
                        if self._update(out, self.cid[slot]) < 0:
                            rc = -1
                            break
                        self._cremove_at(slot)
                        self._rescore_chart()
                        self._cadd(out, self._rescore(out) / self.E[out].nact)
        if rc < 0:
            raise MemoryError("search pools could not grow")
        self.last_pops = pops
        self.last_edges = self.ne
        self.total_edges += self.ne
        return reached, pops, self.n_updates - upd0

    def _test_agenda(self, keys):
        """Testing aid: push edges 0..m-1 with the given keys; return ids in pop order."""
        cdef int i
        self._reset(1)
        for i in range(len(keys)):
            self._apush(i, float(keys[i]))
        out = []
        while self.asize > 0:
            out.append(self._apop())
        return out

    def _test_chart(self, keys, int beam):
        """Testing aid: ADD edges 0..m-1 with the given keys to a beam of size ``beam``.

        Returns (evicted ids in order, ids remaining in the chart sorted, chart min-heap valid).
        """
        cdef int i
        cdef eid_t out
        self._reset(beam)
        ev = []
        for i in range(len(keys)):
            out = self._cadd(i, float(keys[i]))
            if out >= 0:
                ev.append(out)
        valid = all(not self._cworse(i, (i - 1) // 2) for i in range(1, self.csize))
        return ev, sorted(self.cid[i] for i in range(self.csize)), valid

    def train_easy_first(self, tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold,
                         leaf_word=None, tok_label=None, tok_lin=None):
        """Easy-first training pass that matches the merge completion of the decoder.

        Pieces start as the gold leaves; at each step the highest-scoring valid COMBINE of two
        pieces is compared with the best gold COMBINE: if it is not gold, a scaled large-margin
        update (section 3.5) is made against the best gold one; the gold one is applied.
        Returns (steps, updates).  ``gold`` as in :meth:`forced`.
        """
        if self.U == NULL:
            raise ValueError("SearchCore was created without an accumulator: cannot train")
        self._set_instance(tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold,
                           leaf_word, tok_label, tok_lin)
        self.gold_only = False
        self._reset(1)
        cdef long long upd0 = self.n_updates, steps = 0
        cdef int i, j, np_ = 0, k
        cdef eid_t e, g, a, b, best, bestg
        cdef double key, bk, bgk
        cdef eid_t* pieces = <eid_t*>malloc((self.n + 1) * sizeof(eid_t))
        if pieces == NULL:
            raise MemoryError()
        with nogil:
            self._push_leaves()
            self.asize = 0
            self.ngold_ag = 0
            for i in range(self.nleaf):
                if self.E[i].gold:
                    self._materialise(i)
                    pieces[np_] = i
                    np_ += 1
            while np_ > 1:
                # all valid pair combinations under the current weights
                self.ngold_ag = 0
                best = -1
                bestg = -1
                for i in range(np_):
                    for j in range(np_):
                        if i == j:
                            continue
                        for k in range(2):
                            e = self._new_pair(pieces[i], pieces[j], 1 - k)
                            if e < 0:
                                continue
                            key = self.E[e].F / self.E[e].nact
                            if best < 0 or key > bk:
                                best = e
                                bk = key
                            if self.E[e].gold and (bestg < 0 or key > bgk):
                                bestg = e
                                bgk = key
                if bestg < 0:
                    break
                if not self.E[best].gold:
                    self._update(bestg, best)
                a = self.E[bestg].left
                b = self.E[bestg].right
                self._materialise(bestg)
                j = 0
                for i in range(np_):
                    if pieces[i] != a and pieces[i] != b:
                        pieces[j] = pieces[i]
                        j += 1
                pieces[j] = bestg
                np_ = j + 1
                steps += 1
        free(pieces)
        return steps, self.n_updates - upd0

    cdef eid_t _new_pair(self, eid_t le, eid_t re, int headleft) noexcept nogil:
        """COMBINE without pushing: returns the new edge (scored under current weights) or -1."""
        cdef int before = self.asize
        cdef int r
        self._rescore(le)
        self._rescore(re)
        r = self._try_combine(le, re, headleft)
        if r <= 0:
            return -1
        self.asize = before
        return self.ne - 1

    def features_of_last_edge(self):
        """Feature indices (uint32) of the action of the most recent edge (testing aid)."""
        cdef eid_t e = self.ne - 1
        cdef int k
        if e < 0:
            return np.empty(0, dtype=np.uint32)
        if self.E[e].left < 0:
            k = self._leaf_features(self.E[e].head)
        else:
            k = self._combine_features(self.E[e].left, self.E[e].right, self.E[e].headleft)
        return np.array([self.fbuf[i] for i in range(k)], dtype=np.uint32)


def feature_hash(keys, unsigned int hash_bits):
    """Mask of MurmurHash3_x86_32 over uint32 keys, as the search core computes feature indices.

    keys: uint32 array of shape (m, k); returns uint32 array of shape (m,).
    """
    cdef const uint32_t[:, ::1] kv = np.ascontiguousarray(keys, dtype=np.uint32)
    cdef cnp.ndarray[uint32_t, ndim=1] out = np.empty(kv.shape[0], dtype=np.uint32)
    cdef uint32_t mask = <uint32_t>((1 << hash_bits) - 1) if hash_bits < 32 else 0xFFFFFFFFu
    cdef Py_ssize_t i
    for i in range(kv.shape[0]):
        out[i] = murmurhash3_words(&kv[i, 0], kv.shape[1], 0) & mask
    return out
