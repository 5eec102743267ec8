# GYRO (de Gispert, Tomalin & Byrne 2014): the phrase look-up over the trie index of the text
# (TrieIndex) and the chart of Algorithm 3 in C pools (GyroChart).
from ._typedefs cimport int32_t, int64_t, uint32_t, uint64_t
from ._lm cimport NgramModel, LMState, LM_MAX_ORDER


cdef enum:
    MAXN = 6


cdef struct Walk:
    const int32_t* ids          # distinct bag word ids, ascending
    int32_t* left               # multiplicity still available per distinct word
    int D
    int nmin, nmax
    uint32_t min_count
    int32_t path[MAXN]          # distinct-word indices of the current n-gram
    int32_t* out                # word ids of the phrases found, concatenated
    int32_t* lens
    int64_t* rows               # row of each phrase in its order's arrays
    int nout, cap, nph, capph   # words and phrases found, and their pools' capacities


cdef class TrieIndex:
    cdef object _refs
    cdef int N
    cdef long V
    cdef const int64_t* first
    cdef const int32_t* word[MAXN + 1]
    cdef const uint32_t* cnt[MAXN + 1]
    cdef const int64_t* child[MAXN + 1]
    cdef int64_t m[MAXN + 1]

    cdef int _walk(self, Walk* w, int n, int64_t lo, int64_t hi) noexcept nogil
    cdef int _visit(self, Walk* w, int n, int j, int64_t r) noexcept nogil


cdef enum:
    KW_MAX = 16                  # 64-bit words per multiset key (bags of up to ~500 tokens)
    JC_BITS = 18                 # boundary cache: 2^18 direct-mapped slots (4 MB)

cdef struct GHyp:
    int64_t tok                  # offset of its tokens (distinct-word indices) in the pool
    float score                  # fragment log10 prob from the empty context
    float opt                    # optimistic score as a right part: score - head + bound
    uint64_t h                   # string hash
    int32_t cell
    LMState tail                 # LM state after the fragment
    float head[LM_MAX_ORDER - 1] # in-fragment log10 p of the first N-1 words
    uint64_t tkey                # hash of the tail state's words (boundary cache)
    uint64_t hkey                # hash of the first N-1 tokens (boundary cache)
    float bos, eos               # sentence corrections as a first / last part (NaN: not yet)
    int32_t fw, lw               # first and last token (distinct-word index)
    float rest                   # sum over its 2nd..(N-1)th words of est - head (boundary gain bound)

cdef struct GJoin:
    uint64_t key                 # mix of B's tkey and C's hkey, 0 = empty
    float delta

cdef struct GCell:
    int64_t key                  # offset of its W key words in the key pool
    int32_t first, n             # its hyps (contiguous, best first)
    int32_t len                  # tokens
    float used                   # sum of the future estimate over its tokens
    float gain                   # max over its hyps of opt - score (bound of the boundary gain)
    uint64_t kh                  # linear hash of the key
    float lk                     # bound as a left part: best score - used
    float rk                     # bound as a right part: best score - used + gain

cdef struct GRank:
    float key
    int32_t cell

cdef struct GCand:
    int32_t b, c                 # hyps of B and C (B.C); b = -1 - phrase index and c = -1: phrase
    float score                  # fragment score (sentence score in the top row)
    float est                    # pruning key: score + future estimate of the complement
    uint64_t h
    uint64_t kh


cdef class GyroChart:
    cdef NgramModel lm
    cdef int D, N, W, order
    cdef int32_t* lmid
    cdef int32_t* mult
    cdef float* est                 # future estimate per distinct word (log10)
    cdef float* bg                  # bg[v * D + d]: log10 p(d | v), the bigram table of the bag
    cdef float slack                # join filter: bigram of the boundary + slack (< 0: off)
    cdef uint64_t off[KW_MAX]
    cdef uint64_t guard[KW_MAX]
    cdef uint64_t full[KW_MAX]
    cdef uint64_t R[KW_MAX]         # linear key-hash multipliers
    cdef int* fword                 # key word and shift of each distinct word's field
    cdef int* fshift
    cdef uint64_t* pw               # string-hash powers
    # pools
    cdef GHyp* hyps
    cdef int nhyp, caphyp
    cdef GCell* cells
    cdef int ncell, capcell
    cdef uint64_t* keys
    cdef int nkey, capkey
    cdef int32_t* toks
    cdef int ntok, captok
    cdef GCand* cand
    cdef int ncand, capcand
    cdef int* row0                  # cells of row x: row0[x] .. row0[x+1]
    cdef GJoin* jc                  # boundary cache: (B's tail words, C's first words) -> delta
    # per row: its cells ranked by lk and by rk (best first; the same index range as the row)
    # and, over the rk ranking, one bitset per (distinct word d, count k = 1..mult[d]) marking the
    # cells with at least k copies of d: the cells a left part can be joined with are the
    # complement of an OR of its words' bitsets
    cdef int32_t* lrank
    cdef int32_t* rrank
    cdef int caprank
    cdef uint64_t* bits
    cdef int nbits, capbits
    cdef int* boff                  # row x's bitsets start at bits[boff[x]], bnw[x] words each
    cdef int* bnw
    cdef int* lvbase                # bitset of (d, k) is number lvbase[d] + k - 1
    cdef int* fwidth                # value bits of each distinct word's field
    cdef uint64_t* conflict         # scratch: OR of a left part's bitsets
    cdef float* rb                  # per row, over the rk ranking: rb[u * n + t] = max over the hyps c
                                    # of the t-th cell of score + bg[u, first] - head[0] + rest - used
    cdef int nrb, caprb
    cdef int* rboff
    cdef float* rbmax               # per row, per left boundary word u: max over t of rb[u * n + t]
    cdef int32_t* ctab              # open-addressing table of the row's candidates by string hash
    cdef int ctbits, capctab        # (2^ctbits slots; 0: off, candidates deduplicated by sorting)
    cdef int32_t* lwu               # scratch: a left part's distinct last words and their best score
    cdef float* lws
    cdef int capconf
    cdef readonly long pair_checks, pair_calls, join_misses, pushes
    cdef int max_split               # joins B.C only where B or C has at most this many words (0: all)
    cdef readonly long peak_cands, strings, cells_built

    cdef void _estimates(self) noexcept nogil
    cdef int _push_cand(self, int32_t b, int32_t c, float score, float est, uint64_t h,
                        uint64_t kh) noexcept nogil
    cdef float _walk(self, const int32_t* t, int n, LMState* st, float* head) noexcept nogil
    cdef float _join(self, const GHyp* B, int lb, const GHyp* C, int lc, LMState* tail,
                     float* head) noexcept nogil
    cdef inline float _delta(self, int hb, int lb, int hc, int lc) noexcept nogil
    cdef void _keys(self, GHyp* H, int x) noexcept nogil
    cdef float _sentence(self, const int32_t* t, int n, const float* head, const LMState* tail) noexcept nogil
    cdef int _dedup_begin(self, int cap) noexcept nogil
    cdef void _select(self, int n, int k) noexcept nogil
    cdef int _compact(self, int cap, float* thr) noexcept nogil
    cdef int _pairs(self, int cb, int cc, float fut, uint64_t kh, bint pruned, float beta, int cap,
                    float* best, float* thr, long max_strings) noexcept nogil
    cdef int _top_pairs(self, int cb, int cc, int keep, float* thr) noexcept nogil
    cdef int _find(self, int x, uint64_t kh) noexcept nogil
    cdef inline int _count(self, const uint64_t* key, int d) noexcept nogil
    cdef int _index_row(self, int x) noexcept nogil
    cdef inline float _left_bound(self, int nu, const float* table, int stride, int t) noexcept nogil
    cdef int _row_pairs(self, int x, bint prn, float beta, int cap, float total, float* best, float* thr,
                        long max_strings, double t_start, double max_seconds) noexcept nogil
    cdef int _materialize(self, int x, const int32_t* ptok, const int64_t* poff,
                          const uint64_t* pkey, const float* pused) noexcept nogil
