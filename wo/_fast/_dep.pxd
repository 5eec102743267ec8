# The dependency grammar of the search core (Zhang & Clark 2015, section 4): edges are projective
# dependency trees; Table 2 feature templates; the input constraints of section 4.1; SR'19
# candidate-form groups, arc labels and `lin` (section 5.7).
cimport cython
from ._typedefs cimport uint32_t, int32_t, int16_t, eid_t, feat_t, uint64_t, uint8_t
from ._weights cimport FeatBuf
from ._arena cimport Edge
from ._arcs cimport ArcState
from ._search cimport Grammar, Search
from ._lmfeat cimport LMFeatures


cdef struct DepState:
    # an edge's grammar state (section 4.2), in the edge's opaque ``st`` field (dep_state())
    ArcState arc           # head position, valencies, outermost dependents (leaf ids)
    int32_t ldep2, rdep2   # leaf ids of the second-outermost left / right dependents (-1: none)
    int16_t gdeps          # number of the head's given (constrained) dependents already attached
    int16_t linl, linr     # number of the head's `lin`-ordered dependents attached on each side


cdef inline DepState* dep_state(Edge* x) noexcept nogil:
    """The dependency state of edge x."""
    return <DepState*>&x.st


cdef struct ArcCtx:
    # what the COMBINE templates of one action read (DepGrammar._ctx)
    int32_t h, m, ml, mr, sb, sb2, hl1, hr1, b2, b1, b0, b0n   # leaf ids (-1 none)
    int hp, mp, nl, nr, headleft, mlval, mrval, hlval, hrval
    uint32_t dir, dist, size, lab
    uint32_t wh, ph, wm, pm, ws, ps_, ps2
    const int32_t* SL
    const int32_t* SR


cdef struct ScoreSlot:
    # one entry of the decoding score cache: a template block's key and theta . phi
    uint64_t key
    double val


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
    cdef const int32_t* tok_order  # fixed surface position of each token (parsing a given string)
    cdef bint has_order
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
    # decoding score cache: theta . phi per template block, keyed by the leaves it reads
    cdef ScoreSlot* sc
    cdef bint sc_ok                # leaf ids fit the 12-bit key fields
    cdef double* loc               # dense cache of the (h, m, dir, dist) block [L, L, 2, 9]
    cdef size_t loc_cap            # (NaN: not computed yet); NULL when L is too large
    cdef bint loc_ok
    cdef uint8_t* leaf_pidx        # index of each leaf's POS atom among the instance's POS
    cdef int npos, cap_pidx
    cdef float* pbw                # dense cache of the POS(h) POS(m) POS(b) weights [P, P, P, 2]
    cdef size_t pbw_cap
    cdef bint pb_ok

    cdef int _grow_instance_bufs(self) noexcept
    cdef void _dense_caches(self) noexcept
    cdef inline uint32_t _wd(self, int32_t leaf) noexcept nogil
    cdef inline uint32_t _ps(self, int32_t leaf) noexcept nogil
    cdef int _leaf_features(self, Search s, int32_t leaf) noexcept nogil
    cdef void _completed(self, FeatBuf* o, uint32_t base, int32_t c, int32_t cl, int32_t cr,
                         int lval, int rval) noexcept nogil
    cdef inline int32_t _at(self, const int32_t* SL, int nl, const int32_t* SR, int nr, int p) noexcept nogil
    cdef void _ctx(self, Search s, eid_t le, eid_t re, int headleft, ArcCtx* c) noexcept nogil
    cdef void _arc_local(self, FeatBuf* o, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil
    cdef void _arc_between(self, FeatBuf* o, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil
    cdef void _arc_mchild(self, FeatBuf* o, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil
    cdef void _arc_sib(self, FeatBuf* o, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil
    cdef void _dir_block(self, FeatBuf* o, int which, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil
    cdef void _arc_features(self, FeatBuf* o, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil
    cdef void _boundary(self, FeatBuf* o, const ArcCtx* c) noexcept nogil
    cdef void _sentence(self, FeatBuf* o, const ArcCtx* c) noexcept nogil
    cdef double _block(self, Search s, int which, uint64_t key, const ArcCtx* c) noexcept nogil
    cdef double _between_score(self, Search s, const ArcCtx* c) noexcept nogil
    cdef double _combine_score(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil
    cdef int _combine_features(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil
    cdef int _try(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil
    cdef void _fill_heads(self, Search s, eid_t e, int32_t* heads) noexcept nogil
