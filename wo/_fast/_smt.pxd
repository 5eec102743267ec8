# The synthesis grammar of syntactic SMT (Zhang, Song, Song, Zhu & Liu 2014, section 2.2) on the
# search core: edges are target dependency trees over translation options (phrase leaves); the
# head-outward arcs are the shared ones of _arcs.pxd.
cimport cython
from ._typedefs cimport feat_t, eid_t, uint32_t, int32_t, int16_t, uint8_t
from ._arena cimport Edge
from ._arcs cimport ArcState
from ._search cimport Grammar, Search
from ._lmfeat cimport LMFeatures


cdef struct SMTState:
    # an edge's grammar state, in the edge's opaque ``st`` field (smt_state()); the head is a
    # word slot of one option
    ArcState arc           # head position, valencies, outermost dependents (word slots)
    int32_t hslot          # word slot of the head word
    int16_t ncov           # source units covered
    int16_t slo, shi       # first and last source unit covered


cdef inline SMTState* smt_state(Edge* x) noexcept nogil:
    """The SMT synthesis state of edge x."""
    return <SMTState*>&x.st


cdef struct BndCache:
    # per materialised edge: its own sentence-boundary LM value, computed once per search
    int32_t eid, gen
    double val


@cython.final
cdef class SMTGrammar(Grammar):
    cdef int nslot, need, ncovmax, gold_len
    cdef const int32_t* l_lo
    cdef const int32_t* l_hi
    cdef const int32_t* l_woff
    cdef const int32_t* l_root
    cdef const uint32_t* l_atom
    cdef const uint32_t* l_src
    cdef const uint32_t* l_twords
    cdef const int32_t* l_sroot
    cdef const uint32_t* l_cl       # source word atoms left and right of the span (<s>, </s> at the ends)
    cdef const uint32_t* l_cr
    cdef const double* l_real       # [L, 5]: in-phrase LM log10, log10 P(trans), words, source words, <s>/</s> LM
    cdef const uint32_t* s_word
    cdef const uint32_t* s_pos
    cdef const int32_t* s_opt
    cdef const int32_t* s_head      # head slot inside the option (-1: the option's root)
    cdef const uint32_t* src_word
    cdef const uint32_t* path_len   # [n, n] atoms
    cdef const uint32_t* path_lab
    cdef const uint32_t* path_lpos
    cdef const int32_t* ident       # leaf_words: identity over slots
    # gold (training, forced decoding)
    cdef const uint8_t* g_leaf
    cdef const int32_t* g_lo        # reference span of a gold option
    cdef const int32_t* s_ref       # reference position of a slot of a gold option (-1)
    cdef const int32_t* r_head
    cdef const int32_t* r_sublo
    cdef const int32_t* r_subhi
    cdef object _refs
    cdef LMFeatures lmf
    cdef bint has_lm
    cdef feat_t f_ptrans, f_words, f_cover
    cdef eid_t memo_le, memo_re     # the sentence-feature value of the last pair (both arc directions)
    cdef int memo_gen
    cdef double memo_val
    cdef BndCache* bc               # per materialised edge: its own sentence-boundary value
    cdef int bc_cap

    cdef inline uint32_t _w(self, int32_t slot) noexcept nogil
    cdef inline uint32_t _p(self, int32_t slot) noexcept nogil
    cdef int _leaf_features(self, Search s, int32_t i) noexcept nogil
    cdef int _combine_features(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil
    cdef double _edge_bnd(self, Search s, eid_t e) noexcept nogil
    cdef double _bnd(self, const int32_t* SL, int nl, const int32_t* SR, int nr) noexcept nogil
    cdef int _try(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil
    cdef void _fill_heads(self, Search s, eid_t e, int32_t* heads) noexcept nogil
