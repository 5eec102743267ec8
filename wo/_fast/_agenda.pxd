# Agenda (max-heap) and chart (beam min-heap with an optional DP-signature table) of the
# best-first search (Zhang & Clark 2015, section 3.4, Algorithms 1 and 4).
from libc.stdint cimport uint16_t
from ._typedefs cimport eid_t, uint64_t, int32_t, int16_t
from ._arena cimport Edge
from ._utils cimport grow


cdef struct Heap:
    # binary heap of (key, edge id); the root is the largest key, ties: the smallest id
    double* key
    eid_t* id
    int32_t* pay           # chart only (else NULL): each slot's pair keys (pk_head << 16 | pk_want),
                           # so the chart scan reads one compact array, not the edges
    int size, cap

cdef struct SigMap:
    # 64-bit signature -> edge id, open addressing with linear probing (0 = empty slot),
    # kept at most half full; the signatures of popped edges and the DP-signature table
    uint64_t* sig
    eid_t* val
    int cap, n

cdef struct Chart:
    # beam of at most `cap` edges kept as a Heap of (-key, -id): the root is the lowest edge
    # (ties: the largest id), the one ADD evicts.  With use_dp, ``dp`` maps each DP-signature
    # to the edge kept for it (entries go stale when their edge leaves the chart), so at most
    # one edge per signature is in the chart.
    Heap h
    int cap
    bint use_dp
    SigMap dp


cdef int heap_init(Heap* h, int cap) except -1
cdef void heap_free(Heap* h) noexcept
cdef int sigmap_reset(SigMap* m, int cap) except -1
cdef void sigmap_free(SigMap* m) noexcept
cdef int sigmap_find(SigMap* m, uint64_t sig, bint* found) noexcept nogil
cdef int chart_init(Chart* c) except -1
cdef void chart_free(Chart* c) noexcept
cdef int chart_reset(Chart* c, int beam, bint use_dp) except -1
cdef eid_t chart_add(Chart* c, Edge* E, eid_t e, double key, uint64_t dpsig, eid_t* rival) noexcept nogil
cdef void chart_remove_at(Chart* c, Edge* E, int i) noexcept nogil
cdef void chart_heapify(Chart* c) noexcept nogil


cdef inline bint heap_before(const Heap* h, int i, int j) noexcept nogil:
    return h.key[i] > h.key[j] or (h.key[i] == h.key[j] and h.id[i] < h.id[j])


cdef inline void heap_swap(Heap* h, int i, int j) noexcept nogil:
    cdef double tk = h.key[i]
    cdef eid_t ti = h.id[i]
    cdef int32_t tp
    h.key[i] = h.key[j]; h.id[i] = h.id[j]
    h.key[j] = tk; h.id[j] = ti
    if h.pay != NULL:
        tp = h.pay[i]; h.pay[i] = h.pay[j]; h.pay[j] = tp


cdef inline void heap_sift_up(Heap* h, int i) noexcept nogil:
    cdef int p
    while i > 0:
        p = (i - 1) >> 1
        if not heap_before(h, i, p):
            break
        heap_swap(h, i, p)
        i = p


cdef inline void heap_sift_down(Heap* h, int i) noexcept nogil:
    cdef int l, r, b
    while True:
        l = 2 * i + 1
        r = l + 1
        b = i
        if l < h.size and heap_before(h, l, b):
            b = l
        if r < h.size and heap_before(h, r, b):
            b = r
        if b == i:
            break
        heap_swap(h, i, b)
        i = b


cdef inline int heap_push(Heap* h, eid_t e, double key) noexcept nogil:
    """Insert (key, e), growing the arrays; -1 when they cannot grow."""
    cdef int kcap, pcap
    if h.size == h.cap:
        kcap = h.cap
        pcap = h.cap
        if (grow(<void**>&h.key, &kcap, sizeof(double), h.size + 1) < 0
                or (h.pay != NULL and grow(<void**>&h.pay, &pcap, sizeof(int32_t), h.size + 1) < 0)
                or grow(<void**>&h.id, &h.cap, sizeof(eid_t), h.size + 1) < 0):
            return -1
    h.key[h.size] = key
    h.id[h.size] = e
    h.size += 1
    heap_sift_up(h, h.size - 1)
    return 0


cdef inline eid_t heap_pop(Heap* h) noexcept nogil:
    """Remove and return the root's edge id (the heap must not be empty)."""
    cdef eid_t top = h.id[0]
    h.size -= 1
    if h.size > 0:
        h.key[0] = h.key[h.size]
        h.id[0] = h.id[h.size]
        heap_sift_down(h, 0)
    return top


cdef inline int32_t pair_keys(const Edge* x) noexcept nogil:
    """An edge's pair keys packed in one int32 (chart payload)."""
    return (<int32_t>x.pk_head << 16) | <uint16_t>x.pk_want


cdef inline int16_t pk_head_of(int32_t p) noexcept nogil:
    return <int16_t>(p >> 16)


cdef inline int16_t pk_want_of(int32_t p) noexcept nogil:
    return <int16_t>(p & 0xFFFF)


cdef inline eid_t chart_id(const Chart* c, int i) noexcept nogil:
    """Edge id in chart slot i (0 <= i < c.h.size)."""
    return -c.h.id[i]


cdef inline double chart_key(const Chart* c, int i) noexcept nogil:
    """Scaled score of the edge in chart slot i."""
    return -c.h.key[i]
