# Edge arena and coverage bitsets of the best-first search (Zhang & Clark 2015, sections 3.2-3.4).
# Every edge of a sentence is a C struct in one growing array; surfaces (leaf ids) and coverage
# bitsets of popped edges live in two pools.  All memory is owned by the Arena and reused.
from libc.string cimport memcpy, memset
from ._typedefs cimport score_t, eid_t, int32_t, int16_t, uint8_t, uint64_t
from ._utils cimport grow


cdef enum:
    STATE_BYTES = 32       # sizeof(GrammarState): the most a grammar's state struct may take

cdef struct GrammarState:
    # the grammar-specific part of an edge, opaque to the core: a grammar declares its own
    # state struct in its .pxd (DepState in _dep.pxd, CCGState in _ccg.pxd, SMTState in
    # _smt.pxd) and reads it through a cast of ``&edge.st`` (STATE_BYTES bytes, 8-aligned);
    # the size is fixed at compile time so an Edge stays one flat 88-byte struct
    uint64_t words[4]

cdef struct Edge:
    # one hypothesis: a derivation over a set of units (input tokens) with its surface order
    score_t F              # unscaled score: sum of action scores over the derivation
    uint64_t sig           # signature of the derivation: equal sig = same string, tree and future
    eid_t left, right      # child edges (-1 for a leaf edge)
    int32_t head           # leaf id of the lexical head (a leaf edge: its own leaf)
    int32_t surf           # offset of the surface string (leaf ids) in the pool, -1 until popped
    int32_t bits           # offset of the coverage bitset in the pool, -1 until popped
    int32_t epoch          # model epoch at which F was computed (training rescoring)
    int16_t nwords         # number of leaves in the surface string
    int16_t nact           # |e|: number of actions (leaf assignments + combinations)
    int16_t span_lo, span_hi  # gold span (positions in the reference) if gold
    uint8_t act            # grammar's action that built the edge (dependency: 1 = head left)
    uint8_t gold           # 1: gold edge (training / forced decoding)
    uint8_t in_chart       # 1: currently kept in the chart
    int16_t pk_head        # pair keys (set by the grammar, -1 = none): two edges can combine
    int16_t pk_want        # only if pk_want of one is -1 or the other's pk_head (dependency:
                           # head token and its given head, -3 while the head misses a given
                           # dependent); the chart scan skips other pairs
    GrammarState st        # grammar-specific part (see GrammarState)

cdef struct Arena:
    Edge* E
    int ne, cap
    int32_t* surf          # surface pool
    int nsurf, cap_surf
    uint64_t* bits         # bitset pool, W64 words per popped edge
    int nbits, cap_bits
    int W64                # 64-bit words per coverage bitset
    const int32_t* leaf_unit   # unit (token) covered by each leaf (several units: the first)
    const int32_t* leaf_uend   # NULL, or one past the last unit of each leaf's unit span
    const int32_t* leaf_woff   # NULL (a leaf's surface is its own id), or CSR offsets into
    const int32_t* leaf_words  # leaf_words: the surface ids (word slots) of each leaf


cdef int arena_init(Arena* A) except -1
cdef void arena_free(Arena* A) noexcept
cdef void arena_reset(Arena* A, int nunits, const int32_t* leaf_unit) noexcept nogil


cdef inline eid_t new_edge(Arena* A) noexcept nogil:
    """Index of a fresh edge slot (uninitialised but for the pair keys, -1), or -1 when the
    arena cannot grow."""
    if grow(<void**>&A.E, &A.cap, sizeof(Edge), A.ne + 1) < 0:
        return -1
    A.E[A.ne].pk_head = -1
    A.E[A.ne].pk_want = -1
    A.ne += 1
    return A.ne - 1


cdef inline int materialise(Arena* A, eid_t e) noexcept nogil:
    """Build the surface string and coverage bitset of e (its children are materialised).

    Returns 0, or -1 when a pool cannot grow.
    """
    cdef Edge* x = &A.E[e]
    cdef Edge* l
    cdef Edge* r
    cdef int i, nw = x.nwords, unit
    if x.surf >= 0:
        return 0
    if (grow(<void**>&A.surf, &A.cap_surf, sizeof(int32_t), A.nsurf + nw) < 0
            or grow(<void**>&A.bits, &A.cap_bits, sizeof(uint64_t), A.nbits + A.W64) < 0):
        return -1
    x = &A.E[e]
    x.surf = A.nsurf
    x.bits = A.nbits
    A.nsurf += nw
    A.nbits += A.W64
    if x.left < 0:
        memset(&A.bits[x.bits], 0, A.W64 * sizeof(uint64_t))
        unit = A.leaf_unit[x.head]
        if A.leaf_woff == NULL:
            A.surf[x.surf] = x.head
            A.bits[x.bits + unit // 64] |= (<uint64_t>1) << (unit % 64)
        else:
            # a phrase leaf (translation option): several words over a span of units
            memcpy(&A.surf[x.surf], &A.leaf_words[A.leaf_woff[x.head]], nw * sizeof(int32_t))
            for i in range(unit, A.leaf_uend[x.head]):
                A.bits[x.bits + i // 64] |= (<uint64_t>1) << (i % 64)
    else:
        l = &A.E[x.left]
        r = &A.E[x.right]
        memcpy(&A.surf[x.surf], &A.surf[l.surf], l.nwords * sizeof(int32_t))
        memcpy(&A.surf[x.surf + l.nwords], &A.surf[r.surf], r.nwords * sizeof(int32_t))
        for i in range(A.W64):
            A.bits[x.bits + i] = A.bits[l.bits + i] | A.bits[r.bits + i]
    return 0


cdef inline bint disjoint(const Arena* A, const uint64_t* a, eid_t e) noexcept nogil:
    """True if bitset a and the units covered by (materialised) edge e do not overlap."""
    cdef const uint64_t* b = &A.bits[A.E[e].bits]
    cdef int j
    for j in range(A.W64):
        if a[j] & b[j]:
            return False
    return True


cdef inline void cover(const Arena* A, uint64_t* a, eid_t e) noexcept nogil:
    """a |= units covered by (materialised) edge e."""
    cdef const uint64_t* b = &A.bits[A.E[e].bits]
    cdef int j
    for j in range(A.W64):
        a[j] |= b[j]


cdef inline double scaled(const Arena* A, eid_t e) noexcept nogil:
    """The scaled score F(e)/|e| (Zhang & Clark 2015, section 3.3)."""
    return A.E[e].F / A.E[e].nact
