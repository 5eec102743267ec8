# The dependency grammar of the search core (Zhang & Clark 2015, section 4): edges are projective
# dependency trees; Table 2 feature templates; the input constraints of section 4.1; SR'19
# candidate-form groups, arc labels and `lin` (section 5.7).
cimport cython
from ._typedefs cimport uint32_t, int32_t, eid_t, feat_t
from ._weights cimport FeatBuf
from ._search cimport Grammar, Search
from ._lmfeat cimport LMFeatures


@cython.final
cdef class DepGrammar(Grammar):
    cdef const uint32_t* tok_word
    cdef const int32_t* given_head
    cdef const int32_t* given_ndeps
    cdef const int32_t* leaf_tok
    cdef const uint32_t* leaf_pos
    cdef const uint32_t* leaf_word
    cdef const uint32_t* tok_label
    cdef const int32_t* tok_lin
    cdef const int32_t* lin_need   # [2*t] left, [2*t+1] right: lin-dependents token t must take
    # per-instance buffers owned by the grammar (defaults when SR arrays are not given)
    cdef uint32_t* dflt_word
    cdef uint32_t* zeros           # n zero words: no labels (uint32) and no lin (int32)
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
    cdef object _refs
    # n-gram LM features (Zhang, Blackwood & Clark 2012; Zhang & Clark 2015 section 5.6)
    cdef LMFeatures lmf            # None: no LM
    cdef bint has_lm

    cdef int _grow_instance_bufs(self) noexcept
    cdef inline uint32_t _wd(self, int32_t leaf) noexcept nogil
    cdef inline uint32_t _ps(self, int32_t leaf) noexcept nogil
    cdef int _leaf_features(self, Search s, int32_t leaf) noexcept nogil
    cdef void _completed(self, FeatBuf* o, uint32_t base, int32_t c, int32_t cl, int32_t cr,
                         int lval, int rval) noexcept nogil
    cdef inline int32_t _at(self, const int32_t* SL, int nl, const int32_t* SR, int nr, int p) noexcept nogil
    cdef void _arc_features(self, FeatBuf* o, uint32_t base, uint32_t dir, uint32_t dist,
                            uint32_t wh, uint32_t ph, uint32_t wm, uint32_t pm, uint32_t ws,
                            uint32_t ps_, uint32_t ps2, int32_t ml, int32_t mr,
                            const int32_t* SL, int nl, const int32_t* SR, int nr,
                            int hp, int mp) noexcept nogil
    cdef int _combine_features(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil
    cdef int _try(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil
    cdef void _fill_heads(self, Search s, eid_t e, int32_t* heads) noexcept nogil
