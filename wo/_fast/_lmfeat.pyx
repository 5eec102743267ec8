# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Real-valued n-gram LM features of the best-first search (Zhang, Blackwood & Clark 2012;
Zhang & Clark 2015, section 5.6), shared by the dependency and CCG grammars.

When two edges combine (left edge's words, then the right edge's), the LM scores the n-grams
that cross the new boundary: the first N-1 words of the right edge now have the left edge's
last words as context.  The feature value is the log10 probability gained on them (their
score in context minus their score within the right edge alone), so the sum of the feature
over a derivation is the LM log10 probability of the string.  A complete sentence also gets
the ``<s>`` and ``</s>`` n-grams as a second feature.  Both features' weights are learned
with the others by the large-margin updates.
"""
cimport cython
from libc.stdlib cimport calloc, free
from libc.string cimport memset

from ._typedefs cimport int32_t, feat_t, eid_t, uint32_t, uint64_t
from ._hash cimport murmurhash3_words
from ._arena cimport Edge
from ._utils cimport grow
from ._search cimport Search
from ._lm cimport NgramModel, LMState


cdef enum:
    PC_BITS = 15          # boundary cache: 2^15 slots of 24 bytes (768 KB), direct-mapped


@cython.final
cdef class LMFeatures:
    """The two real-valued LM features of a grammar's actions.

    LMFeatures(lm, t_ngrams, t_sentence): lm a ``wo._fast._lm.NgramModel``; t_ngrams and
    t_sentence the template ids the two features are hashed from (the grammar's; they are part
    of its model format).  :meth:`set_leaves` gives the LM vocabulary id of each leaf's word
    (int32[L]) for the next search.  Raises MemoryError.

    Caches: per materialised edge its first N-1 words' in-edge log10 sum and its last N-1
    words' LM state; the last (left, right) pair's values; and a boundary cache (2^15 slots,
    direct-mapped, kept across sentences) from (the left edge's last N-1 LM ids, the right
    edge's first N-1) to the in-string feature's value, which depends on nothing else (on
    when N-1 packed ids fit 63 bits: order <= 4 with fewer than 2^21 words).  Every cached
    value is the double the computation gives, so outputs do not depend on the caches.
    """

    def __cinit__(self, NgramModel lm, uint32_t t_ngrams, uint32_t t_sentence):
        self.lm = lm
        self.n1 = lm.order - 1
        self.t_ngrams = t_ngrams
        self.t_sentence = t_sentence
        self.leaf_lm = NULL
        self.nleaf = 0
        self.gen = 0
        self.memo_gen = -1
        self.lmc_cap = 1024
        self.lmc = <LMCache*>calloc(self.lmc_cap, sizeof(LMCache))
        if self.lmc == NULL:
            raise MemoryError()
        # the boundary cache packs N-1 word ids (+1, 0 = none) of each side into 63 bits; its
        # values depend on the words and the LM only, so it lives as long as this object
        self.vbits = int(lm.V + 1).bit_length()
        if self.n1 * self.vbits > 63:
            self.vbits = 0
        self.pc = <PairSlot*>calloc(1 << PC_BITS, sizeof(PairSlot)) if self.vbits else NULL

    def __dealloc__(self):
        free(self.lmc)
        free(self.pc)

    @property
    def feature_indices(self):
        """(weight index of the in-string feature, of the sentence-boundary feature), as set
        by the last search (testing aid)."""
        return int(self.f_lm), int(self.f_lmsent)

    def set_leaves(self, leaf_lm, int nleaf):
        """Use leaf_lm (int32[nleaf], C-contiguous, kept referenced) as the LM ids of the leaves'
        words.  Raises ValueError when it is missing or of another length."""
        if leaf_lm is None:
            raise ValueError("the grammar has an LM: leaf_lm is required")
        cdef const int32_t[::1] v = leaf_lm
        if v.shape[0] != nleaf:
            raise ValueError(f"leaf_lm has {v.shape[0]} entries, expected {nleaf}")
        self._leaf_ref = leaf_lm
        self.nleaf = nleaf
        self.leaf_lm = &v[0] if nleaf else NULL

    cdef void begin(self, Search s) noexcept nogil:
        """A new search: edge ids start again (the cache is invalidated); hash the features."""
        cdef uint32_t lk[1]
        self.gen += 1
        lk[0] = self.t_ngrams
        self.f_lm = murmurhash3_words(lk, 1, 0) & s.mask
        lk[0] = self.t_sentence
        self.f_lmsent = murmurhash3_words(lk, 1, 0) & s.mask

    cdef void leaf(self, Search s, int32_t leaf) noexcept nogil:
        """The LM feature of a leaf edge (its word scored without context) into s.rfeat/rval."""
        cdef LMState st0, st1
        st0.len = 0
        s.rfeat[0] = self.f_lm
        s.rval[0] = self.lm.score(&st0, self.leaf_lm[leaf], &st1)
        s.nreal = 1

    cdef LMCache* _edge(self, Search s, eid_t e) noexcept nogil:
        """LM facts of a materialised edge (computed at its first use, then cached); NULL on
        memory failure.  The pointer is valid until the next call."""
        cdef Edge* x = &s.A.E[e]
        cdef int idx = x.bits // s.A.W64, j, m = x.nwords, n1 = self.n1
        cdef LMCache* c
        cdef LMState a, b
        cdef double tot = 0.0
        cdef int old = self.lmc_cap
        if idx >= self.lmc_cap:
            if grow(<void**>&self.lmc, &self.lmc_cap, sizeof(LMCache), idx + 1) < 0:
                return NULL
            memset(&self.lmc[old], 0, (self.lmc_cap - old) * sizeof(LMCache))
        c = &self.lmc[idx]
        if c.eid == e and c.gen == self.gen:
            return c
        cdef const int32_t* S = &s.A.surf[x.surf]
        a.len = 0
        for j in range(m if m < n1 else n1):
            tot += self.lm.score(&a, self.leaf_lm[S[j]], &b)
            a = b
        c.lsum = <float>tot
        a.len = 0
        for j in range(m - n1 if m > n1 else 0, m):
            self.lm.score(&a, self.leaf_lm[S[j]], &b)
            a = b
        c.rstate = a
        c.eid = e
        c.gen = self.gen
        return c

    cdef double _prefix(self, const int32_t* SL, int nl, const int32_t* SR, int m, bint bos) noexcept nogil:
        """log10 of the first m words of SL + SR scored within the string (after <s> if bos)."""
        cdef LMState a, b
        cdef double tot = 0.0
        cdef int j
        if bos:
            self.lm.begin(&a)
        else:
            a.len = 0
        for j in range(m):
            tot += self.lm.score(&a, self.leaf_lm[SL[j] if j < nl else SR[j - nl]], &b)
            a = b
        return tot

    cdef void combine(self, Search s, eid_t le, eid_t re, int n) noexcept nogil:
        """The LM features of joining le (left) and re (right) into s.rfeat/rval/nreal: the
        log10 probability the LM gains on the first N-1 words of the right edge now that the
        left edge's last words precede them; when the result covers all n units, also the
        n-grams of <s> and </s>.  Both edges are materialised.  Repeated calls on the same
        pair (several rules, both arc directions) reuse the first call's values."""
        if self.memo_gen == self.gen and self.memo_le == le and self.memo_re == re:
            s.rfeat[0] = self.f_lm
            s.rval[0] = self.memo_val[0]
            s.rfeat[1] = self.f_lmsent
            s.rval[1] = self.memo_val[1]
            s.nreal = self.memo_nreal
            return
        cdef Edge* L = &s.A.E[le]
        cdef Edge* R = &s.A.E[re]
        cdef const int32_t* SL = &s.A.surf[L.surf]
        cdef const int32_t* SR = &s.A.surf[R.surf]
        cdef int nl = L.nwords, nr = R.nwords, n1 = self.n1, j, m
        cdef PairSlot* slot = NULL
        cdef uint64_t kl = 0, kr = 0
        if self.pc != NULL and nl + nr != n:
            # the value depends only on the words: the left edge's last N-1, the right's first N-1
            for j in range(nl - 1, (nl - n1 - 1) if nl > n1 else -1, -1):
                kl = (kl << self.vbits) | <uint64_t>(self.leaf_lm[SL[j]] + 1)
            for j in range(nr if nr < n1 else n1):
                kr = (kr << self.vbits) | <uint64_t>(self.leaf_lm[SR[j]] + 1)
            slot = &self.pc[((kl * <uint64_t>0x9E3779B97F4A7C15) ^ (kr * <uint64_t>0xC2B2AE3D27D4EB4F)) >> (64 - PC_BITS)]
            if slot.kl == kl and slot.kr == kr:
                s.rfeat[0] = self.f_lm
                s.rval[0] = slot.val
                s.nreal = 1
                self.memo_le = le
                self.memo_re = re
                self.memo_gen = self.gen
                self.memo_nreal = 1
                self.memo_val[0] = slot.val
                self.memo_val[1] = 0.0
                return
        cdef LMCache* cl = self._edge(s, le)
        if cl == NULL:
            return
        cdef LMState a = cl.rstate, b
        cdef float llsum = cl.lsum
        cdef LMCache* cr = self._edge(s, re)
        if cr == NULL:
            return
        cdef double tot = 0.0, first, lsum_new
        for j in range(nr if nr < n1 else n1):
            tot += self.lm.score(&a, self.leaf_lm[SR[j]], &b)
            a = b
        s.rfeat[0] = self.f_lm
        s.rval[0] = tot - cr.lsum
        s.nreal = 1
        if slot != NULL:
            slot.kl = kl
            slot.kr = kr
            slot.val = s.rval[0]
        if nl + nr == n:
            if nr >= n1:
                a = cr.rstate
            m = nl + nr if nl + nr < n1 else n1
            lsum_new = llsum if nl >= n1 else self._prefix(SL, nl, SR, m, False)
            first = self._prefix(SL, nl, SR, m, True)
            s.rfeat[1] = self.f_lmsent
            s.rval[1] = first - lsum_new + self.lm.score(&a, self.lm.eos, &b)
            s.nreal = 2
        self.memo_le = le
        self.memo_re = re
        self.memo_gen = self.gen
        self.memo_nreal = s.nreal
        self.memo_val[0] = s.rval[0]
        self.memo_val[1] = s.rval[1] if s.nreal == 2 else 0.0
