# The CCG grammar of the search core (Zhang & Clark 2015, section 3): edges are CCG derivations
# over a set of input tokens; Table 1 feature templates; DP-signatures (section 3.4).
cimport cython
from ._typedefs cimport feat_t, eid_t, uint32_t, int32_t, int64_t, uint64_t
from ._weights cimport FeatBuf
from ._arena cimport Edge
from ._search cimport Grammar, Search
from ._lmfeat cimport LMFeatures


cdef struct CCGState:
    # an edge's grammar state, in the edge's opaque ``st`` field (ccg_state()): an action may
    # apply one unary rule on top of a lexical category assignment or a binary rule, so every
    # edge has at most one unary rule
    int32_t cat            # category id of the edge (after its unary rule, if any)
    int32_t base           # category before the unary rule (== cat without one)
    int32_t rule           # binary rule index (-1: leaf edge)
    int32_t urule          # unary rule index (-1: none)
    int32_t gid            # gold derivation node the edge equals (-1: not gold)


cdef inline CCGState* ccg_state(Edge* x) noexcept nogil:
    """The CCG state of edge x."""
    return <CCGState*>&x.st


@cython.final
cdef class CCGGrammar(Grammar):
    # model tables (set_tables)
    cdef const int64_t* bin_key      # sorted unique (left << 32 | right) category pairs
    cdef const int32_t* bin_start    # rules of pair k: [bin_start[k], bin_start[k+1])
    cdef const int32_t* bin_res      # result category per binary rule
    cdef const int32_t* bin_head     # 0: left child is the head, 1: right
    cdef const uint32_t* bin_atom    # atom of the rule (feature value)
    cdef int nbin_key
    cdef int32_t glue_rule           # pseudo rule joining anything in the glue completion (-1 none)
    cdef public bint dp_on           # DP-signature pruning of the chart (section 3.4); default on
    cdef const int32_t* un_start     # unary rules of category c: [un_start[c], un_start[c+1])
    cdef const int32_t* un_res
    cdef const uint32_t* un_atom
    cdef const uint32_t* cat_atom    # atom of each category string
    cdef int ncat
    cdef object _trefs
    # instance (set_instance)
    cdef const uint32_t* tok_word
    cdef const int32_t* leaf_tok
    cdef const uint32_t* leaf_pos
    cdef const int32_t* leaf_lex     # lexical category of each leaf
    cdef const int32_t* leaf_urule   # unary rule applied on top (-1: none)
    cdef bint has_order              # parsing a given string: edges combine only when adjacent in it
    cdef const int32_t* tok_order    # position of each token in that string (has_order)
    cdef object _refs
    # gold derivation (training, forced decoding)
    cdef const int32_t* g_cat        # category of each gold node
    cdef const int32_t* g_parent     # parent node (-1: root)
    cdef const int32_t* g_left       # left child of a binary node (-1 otherwise)
    cdef const int32_t* g_kind       # 0 leaf, 1 unary, 2 binary
    cdef const int32_t* tok_gnode    # gold leaf node of each token
    cdef int ngold
    # n-gram LM features (set_lm)
    cdef LMFeatures lmf
    cdef bint has_lm

    cdef inline uint32_t _wd(self, int32_t leaf) noexcept nogil
    cdef inline uint32_t _ps(self, int32_t leaf) noexcept nogil
    cdef inline uint32_t _lx(self, int32_t leaf) noexcept nogil
    cdef void _all_edges(self, FeatBuf* o, int32_t cat, int nw, int32_t head, int32_t l0, int32_t l1,
                         int32_t r1, int32_t r0) noexcept nogil
    cdef inline void _unary(self, FeatBuf* o, int32_t u, int32_t head) noexcept nogil
    cdef int _leaf_features(self, Search s, int32_t leaf) noexcept nogil
    cdef int _combine_features(self, Search s, eid_t le, eid_t re, int32_t r, int32_t u) noexcept nogil
    cdef inline int32_t _gold_unary(self, int32_t gid, int32_t u) noexcept nogil
    cdef inline int32_t _gold_leaf(self, int32_t leaf) noexcept nogil
    cdef inline int32_t _gold_binary(self, eid_t le, eid_t re, int32_t r, Search s) noexcept nogil
    cdef int _make(self, Search s, eid_t le, eid_t re, int32_t r, int32_t u, int32_t gid) noexcept nogil
    cdef object _tree(self, Search s, eid_t e)
