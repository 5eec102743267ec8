# Intersection of an IDL-graph with an n-gram LM (Soricut & Marcu 2005, sections 3-4): the
# unfolded states and the search over them (IDLSearch).
from ._typedefs cimport int32_t, uint64_t, uint8_t
from ._lm cimport NgramModel, LMState, LM_MAX_ORDER
from ._agenda cimport Heap, SigMap


cdef enum:
    K_WORD = 0
    K_CHOICE = 1
    K_SPLIT = 2
    K_END = 3
    K_FINAL = 4
    MAXK = LM_MAX_ORDER - 1


cdef struct IState:
    double g              # log10 probability of the best path to the state
    double h              # heuristic: upper bound of the log10 probability still to come
    int32_t cut           # offset of the (sorted) cut in the pool
    int32_t ncut
    int32_t parent        # back-pointer (-1 at the initial state)
    int32_t tok           # token emitted on the way in
    int32_t nwords        # tokens emitted so far
    int32_t pot           # longest number of tokens still to come (BFS order)
    int32_t ntail
    int32_t tail[MAXK]    # type ids of the last tokens, oldest first
    uint8_t closed        # 1: unfolded
    uint8_t hx            # 1: h is the heuristic itself; 0: an upper bound of it (lazy A*)
    int32_t bnd           # lookahead: offset in the bound pool of its successors' keys - g, -1
    double thr            # lookahead: successors with key >= thr are created (1e300: none yet)
    LMState lm


cdef class IDLSearch:
    cdef NgramModel lm
    cdef object _refs
    cdef int V, T, NT, K, C, lmK
    cdef const int32_t* kind
    cdef const int32_t* depth
    cdef const int32_t* vtok
    cdef const int32_t* nxt
    cdef const int32_t* lst_off
    cdef const int32_t* lst
    cdef const int32_t* twin
    cdef const int32_t* encl
    cdef const int32_t* join_off
    cdef const int32_t* join_end
    cdef const int32_t* join_target
    cdef const int32_t* join_parent
    cdef const int32_t* mv_off
    cdef const int32_t* mv_tok
    cdef const int32_t* mv_target
    cdef const int32_t* mv_add_off
    cdef const int32_t* mv_add
    cdef const int32_t* tok_type
    cdef const int32_t* tok_lm
    cdef const int32_t* ctx
    cdef const float* cand_lp
    cdef const int32_t* cand_order
    cdef int bos_type, eos_type, use_h, need_pot
    # the candidate tables as an LM cache (lookahead): row of a history from its types
    cdef int tab, A, pre
    cdef int32_t* apos         # [types] position of a type in the alphabet, -1
    cdef int32_t* type_lm      # [types] LM id of a type
    cdef int32_t apow[MAXK + 1]
    # per-search memory
    cdef IState* S
    cdef int nS, capS
    cdef int32_t* pool
    cdef int npool, cappool
    cdef double* bpool         # lookahead: per evaluated state, an upper bound of h per move
    cdef int nbpool, capbpool
    cdef Heap q
    cdef SigMap seen
    cdef double _bytes(self) noexcept nogil
    # scratch (sized by V / types / joins)
    cdef int32_t* lpath
    cdef int32_t* vmark
    cdef int32_t* tmark
    cdef int32_t* jmark
    cdef int32_t* rmark
    cdef double* rval
    cdef double* tbest
    cdef int32_t* tbmark
    cdef int32_t* scratch
    cdef int32_t* scratch2
    cdef int stamp
    cdef double* lvbest

    cdef int _lpath(self, int v) noexcept nogil
    cdef void _mark_avail(self, int v) noexcept nogil
    cdef double _type_best(self, int y) noexcept nogil
    cdef double _R(self, int v) noexcept nogil
    cdef void _estimate(self, IState* st) noexcept nogil
    cdef int _row(self, const IState* st) noexcept nogil
    cdef uint64_t _key(self, const int32_t* cut, int n, const int32_t* tail, int nt) noexcept nogil
    cdef int _normalise(self, int32_t* c, int n) noexcept nogil
    cdef int _movable(self, const int32_t* cut, int n, int32_t* out) noexcept nogil
    cdef int _apply(self, const IState* st, int v, int mv, int32_t* c) noexcept nogil
    cdef double _step(self, const IState* st, int t, LMState* out, int32_t* tail, int* nt) noexcept nogil
    cdef void _lm_state(self, const IState* st, LMState* out) noexcept nogil
    cdef void _shift(self, const IState* st, int y, int32_t* tail, int* nt) noexcept nogil
    cdef int _new_state(self, int ncut) noexcept nogil
    cdef double _prio(self, int alg, const IState* st) noexcept nogil
    cdef int _greedy_complete(self, int s, int32_t* toks, int* ntoks, double* g) noexcept nogil
