# Real-valued n-gram LM features of the syntax-based search (Zhang, Blackwood & Clark 2012;
# Zhang & Clark 2015, section 5.6), shared by every grammar whose edges carry a surface string
# (dependency, CCG): one object per grammar, owning its per-edge LM cache.
cimport cython
from ._typedefs cimport int32_t, feat_t, eid_t, uint32_t, uint64_t
from ._search cimport Search
from ._lm cimport NgramModel, LMState


cdef struct LMCache:
    # LM facts of one popped (materialised) edge, computed once
    int32_t eid, gen
    float lsum             # log10 of the edge's first N-1 words scored within the edge
    LMState rstate         # LM state after the edge's last N-1 words


cdef struct PairSlot:
    # boundary cache: (left edge's last N-1 LM words, right edge's first N-1) -> feature value
    uint64_t kl, kr
    double val


@cython.final
cdef class LMFeatures:
    cdef NgramModel lm
    cdef int n1                    # LM order - 1
    cdef uint32_t t_ngrams, t_sentence   # template ids of the two features (part of the model format)
    cdef const int32_t* leaf_lm    # LM vocabulary id of each leaf's word
    cdef object _leaf_ref
    cdef int nleaf
    cdef feat_t f_lm, f_lmsent     # weight indices of the two real-valued features
    cdef LMCache* lmc
    cdef int lmc_cap, gen
    cdef eid_t memo_le, memo_re    # the last combine()'s edges and results (a grammar may
    cdef int memo_gen, memo_nreal  # score several actions on one pair of edges)
    cdef double memo_val[2]
    cdef PairSlot* pc              # boundary cache of the current search (NULL: none)
    cdef int vbits                 # bits of one packed LM id (0: ids or order too large to pack)

    cdef void begin(self, Search s) noexcept nogil
    cdef void leaf(self, Search s, int32_t leaf) noexcept nogil
    cdef void combine(self, Search s, eid_t le, eid_t re, int n) noexcept nogil
    cdef LMCache* _edge(self, Search s, eid_t e) noexcept nogil
    cdef double _prefix(self, const int32_t* SL, int nl, const int32_t* SR, int m, bint bos) noexcept nogil
