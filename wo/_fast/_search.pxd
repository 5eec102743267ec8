# The best-first decoding driver (Zhang & Clark 2015, Algorithms 1 and 4) and the grammar
# interface it searches with.  A grammar (dependency: _dep.pyx) subclasses Grammar and implements
# its cdef methods; the driver calls them through the vtable, without the GIL.  Training
# (Algorithm 3) subclasses Search in _train.pyx.
from ._typedefs cimport feat_t, weight_t, score_t, eid_t, uint32_t, uint64_t, int32_t
from ._arena cimport Arena, Edge
from ._agenda cimport Heap, Chart, SigMap

cdef class Search


cdef class Grammar:
    # instance shape, set by the subclass's set_instance()
    cdef int n                      # units (input tokens) a goal edge covers
    cdef int nleaf                  # leaf edges (a unit may have several: POS, forms ...)
    cdef const int32_t* leaf_unit   # unit of each leaf
    cdef int max_features           # upper bound on the features of one action
    cdef bint use_dp                # the chart keeps one edge per DP-signature
    cdef bint has_gold              # gold arrays were given (training, forced decoding)
    cdef bint has_glue              # the grammar offers glue actions in the last completion pass
    cdef bint goal_expand           # popped goal edges are also expanded and kept in the chart
                                    # (SMT: a goal covers >= beta*n units and may still grow)
    # phrase leaves (NULL: every leaf is one word over one unit): leaf i covers units
    # leaf_unit[i] .. leaf_uend[i]-1 and has surface leaf_words[leaf_woff[i] .. leaf_woff[i+1]]
    cdef const int32_t* leaf_uend
    cdef const int32_t* leaf_woff
    cdef const int32_t* leaf_words

    cdef int leaves(self, Search s) noexcept nogil
    cdef int combine(self, Search s, eid_t le, eid_t re) noexcept nogil
    cdef int unary(self, Search s, eid_t e) noexcept nogil
    cdef int features(self, Search s, eid_t e) noexcept nogil
    cdef bint is_goal(self, Search s, eid_t e) noexcept nogil
    cdef bint is_full(self, Search s, eid_t e) noexcept nogil
    cdef uint64_t dp_signature(self, Search s, eid_t e) noexcept nogil
    cdef object analysis(self, Search s, const eid_t* pieces, int npieces)


cdef class Search:
    cdef Grammar g
    cdef Arena A
    cdef Heap agenda
    cdef Chart chart
    cdef SigMap seen                # signatures of popped edges (duplicate derivations)
    cdef const weight_t* W
    cdef object _wref
    cdef uint32_t mask              # feature index = hash & mask
    cdef feat_t* fbuf               # indicator features of one action, filled by the grammar
    cdef int fcap
    cdef feat_t rfeat[8]            # real-valued features of the same action (index, value)
    cdef double rval[8]
    cdef int nreal                  # set by the grammar with every action (0: none)
    cdef feat_t* rtbuf              # real-valued features of derivations (_tree_features)
    cdef double* rtval
    cdef int rtcap
    cdef feat_t* tbuf               # indicator features of derivations (_tree_features)
    cdef int tcap
    cdef bint gold_only             # forced decoding: non-gold edges are dropped
    cdef bint frozen                # decode(): the weights do not change until it returns, so a
                                    # grammar may cache partial action scores (per search)
    cdef public bint score_cache    # allow that (default True; False: every action is hashed
                                    # and scored afresh, as in training)
    cdef int epoch                  # model epoch: incremented by every training update (lazy rescoring)
    cdef eid_t* gold_ag             # gold edges on the agenda
    cdef int ngold_ag, cap_gold
    cdef public long long last_pops
    cdef public long long last_edges
    cdef public long long total_edges
    cdef public long long last_goal    # edge returned by the last decode/forced call (-1: none)
    cdef public long long edge_limit   # edges a decode may create, completions included (memory bound)
    cdef public bint last_capped       # the last decode reached edge_limit
    cdef double deadline               # decode(): monotonic time past which completions stop (0: none)
    cdef eid_t* goals               # goal edges popped by the last decode (n-best candidates)
    cdef int ngoals, cap_goals
    cdef public int phase           # 0 search, 1 beam completion, 2 merge completion, 3 glue merge

    cdef int push_edge(self, eid_t e, int k) noexcept nogil
    cdef int push_scored(self, eid_t e, double a) noexcept nogil
    cdef double action_score(self, int k) noexcept nogil
    cdef int _reset(self, int beam) except -1
    cdef int _seen_reset(self, long long max_pops) except -1
    cdef int _track_gold(self, eid_t e) noexcept nogil
    cdef void _untrack_gold(self, eid_t e) noexcept nogil
    cdef inline int _pair(self, eid_t a, eid_t b) noexcept nogil
    cdef int _expand(self, eid_t e) noexcept nogil
    cdef eid_t _chart_add(self, eid_t e, double key, eid_t* rival) noexcept nogil
    cdef bint _seen_add(self, uint64_t sig) noexcept nogil
    cdef inline bint _greedy_before(self, eid_t a, eid_t b) noexcept nogil
    cdef void _sort_greedy(self, eid_t* ids, int m) noexcept nogil
    cdef object _result(self, eid_t goal, int status, long long pops)
    cdef bint _out_of_bounds(self) noexcept nogil
    cdef eid_t _complete(self, int B) noexcept nogil
    cdef eid_t _merge_complete(self) noexcept nogil
    cdef double _derivation_score(self, eid_t e)
    cdef int _tree_features(self, eid_t e, int* nt, int* nr) noexcept nogil
