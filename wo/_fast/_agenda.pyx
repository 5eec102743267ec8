# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Agenda and chart of the best-first search (Zhang & Clark 2015, section 3.4).

One binary-heap implementation (``Heap`` in ``_agenda.pxd``, inline) serves both: the agenda
is a max-heap on (scaled score, -edge id); the chart stores (-score, -id) in the same heap so
its root is the lowest-scored edge, which ADD evicts when the beam is full.  For grammars with
DP-signatures (CCG, section 3.4) the chart also keeps a signature -> edge table so that at most
one edge per signature is kept, the best.
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memset

from ._typedefs cimport eid_t, uint64_t


cdef int heap_init(Heap* h, int cap) except -1:
    h.key = <double*>malloc(cap * sizeof(double))
    h.id = <eid_t*>malloc(cap * sizeof(eid_t))
    h.pay = NULL
    h.size = 0
    h.cap = cap
    if h.key == NULL or h.id == NULL:
        raise MemoryError()
    return 0


cdef void heap_free(Heap* h) noexcept:
    free(h.key); free(h.id); free(h.pay)
    h.key = NULL; h.id = NULL; h.pay = NULL


cdef int sigmap_reset(SigMap* m, int cap) except -1:
    """Empty the map with ``cap`` slots (a power of two).  Raises MemoryError."""
    if m.cap != cap:
        sigmap_free(m)
        m.sig = <uint64_t*>malloc(cap * sizeof(uint64_t))
        m.val = <eid_t*>malloc(cap * sizeof(eid_t))
        if m.sig == NULL or m.val == NULL:
            m.cap = 0
            raise MemoryError()
        m.cap = cap
    memset(m.sig, 0, m.cap * sizeof(uint64_t))
    m.n = 0
    return 0


cdef void sigmap_free(SigMap* m) noexcept:
    free(m.sig); free(m.val)
    m.sig = NULL; m.val = NULL
    m.cap = 0


cdef inline uint64_t _home(uint64_t sig, uint64_t mask) noexcept nogil:
    return (sig ^ (sig >> 29)) & mask


cdef int _sigmap_grow(SigMap* m) noexcept nogil:
    """Double the table and reinsert its entries; -1 when it cannot grow."""
    cdef int old_cap = m.cap, i
    cdef uint64_t mask = <uint64_t>(2 * old_cap - 1), j
    cdef uint64_t* nsig = <uint64_t*>malloc(2 * old_cap * sizeof(uint64_t))
    cdef eid_t* nval = <eid_t*>malloc(2 * old_cap * sizeof(eid_t))
    if nsig == NULL or nval == NULL:
        free(nsig); free(nval)
        return -1
    memset(nsig, 0, 2 * old_cap * sizeof(uint64_t))
    for i in range(old_cap):
        if m.sig[i] != 0:
            j = _home(m.sig[i], mask)
            while nsig[j] != 0:
                j = (j + 1) & mask
            nsig[j] = m.sig[i]
            nval[j] = m.val[i]
    free(m.sig); free(m.val)
    m.sig = nsig
    m.val = nval
    m.cap = 2 * old_cap
    return 0


cdef int sigmap_find(SigMap* m, uint64_t sig, bint* found) noexcept nogil:
    """Slot of ``sig`` (found[0] = True), or the slot where it was just inserted (found[0] =
    False; its value is the caller's to set).  Signature 0 is stored as 1.  Returns -1 when
    the table is full and cannot grow."""
    if sig == 0:
        sig = 1
    if 2 * (m.n + 1) > m.cap and _sigmap_grow(m) < 0:
        return -1
    cdef uint64_t mask = <uint64_t>(m.cap - 1)
    cdef uint64_t j = _home(sig, mask)
    while m.sig[j] != 0:
        if m.sig[j] == sig:
            found[0] = True
            return <int>j
        j = (j + 1) & mask
    m.sig[j] = sig
    m.n += 1
    found[0] = False
    return <int>j


cdef int chart_init(Chart* c) except -1:
    c.h.key = NULL
    c.h.id = NULL
    c.h.pay = NULL
    c.h.size = 0
    c.h.cap = 0
    c.cap = 0
    c.use_dp = False
    c.dp.sig = NULL
    c.dp.val = NULL
    c.dp.cap = 0
    c.dp.n = 0
    return 0


cdef void chart_free(Chart* c) noexcept:
    heap_free(&c.h)
    sigmap_free(&c.dp)


cdef int chart_reset(Chart* c, int beam, bint use_dp) except -1:
    """Empty the chart and set its beam size (>= 1).  Raises MemoryError."""
    if beam < 1:
        beam = 1
    if c.h.cap < beam or c.h.pay == NULL:
        heap_free(&c.h)
        heap_init(&c.h, beam)
        c.h.pay = <int32_t*>malloc(c.h.cap * sizeof(int32_t))
        if c.h.pay == NULL:
            raise MemoryError()
    c.h.size = 0
    c.cap = beam
    c.use_dp = use_dp
    if use_dp:
        sigmap_reset(&c.dp, c.dp.cap if c.dp.cap > 0 else 1024)
    return 0


cdef eid_t _beam_add(Chart* c, Edge* E, eid_t e, double key) noexcept nogil:
    """ADD(c, e) of Algorithm 1: insert; when the beam is full return the evicted edge (maybe e)."""
    cdef Heap* h = &c.h
    cdef eid_t out
    if h.size < c.cap:
        h.key[h.size] = -key
        h.id[h.size] = -e
        h.pay[h.size] = pair_keys(&E[e])
        h.size += 1
        heap_sift_up(h, h.size - 1)
        E[e].in_chart = 1
        return -1
    # full: the lowest edge is at the root; e goes if it is no better
    if key < -h.key[0] or (key == -h.key[0] and e > -h.id[0]):
        return e
    out = -h.id[0]
    h.key[0] = -key
    h.id[0] = -e
    h.pay[0] = pair_keys(&E[e])
    heap_sift_down(h, 0)
    E[out].in_chart = 0
    E[e].in_chart = 1
    return out


cdef eid_t chart_add(Chart* c, Edge* E, eid_t e, double key, uint64_t dpsig, eid_t* rival) noexcept nogil:
    """Add edge e with scaled score ``key``; return the edge that leaves the chart, or -1.

    Without DP-signatures this is the beam ADD (the lowest edge is evicted when the beam is
    full; it may be e).  With DP-signatures (section 3.4), if an edge with signature ``dpsig``
    is kept already, the better of the two stays (ties: the smaller id) and the other is
    returned; ``rival[0]`` is then set to the edge that stayed (the negative example when a
    gold edge is pruned this way, section 3.5), else to -1.
    """
    cdef eid_t k
    cdef int i, j
    cdef bint found
    cdef Heap* h = &c.h
    rival[0] = -1
    if c.use_dp:
        j = sigmap_find(&c.dp, dpsig, &found)
        if j >= 0:
            if found:
                k = c.dp.val[j]
                i = 0
                while i < h.size and -h.id[i] != k:
                    i += 1
                if E[k].in_chart and i < h.size:
                    if key > -h.key[i] or (key == -h.key[i] and e < k):
                        h.key[i] = -key
                        h.id[i] = -e
                        h.pay[i] = pair_keys(&E[e])
                        heap_sift_down(h, i)
                        heap_sift_up(h, i)
                        E[k].in_chart = 0
                        E[e].in_chart = 1
                        c.dp.val[j] = e
                        rival[0] = e
                        return k
                    rival[0] = k
                    return e
            c.dp.val[j] = e
    return _beam_add(c, E, e, key)


cdef void chart_remove_at(Chart* c, Edge* E, int i) noexcept nogil:
    """Remove the edge in slot i."""
    cdef Heap* h = &c.h
    E[-h.id[i]].in_chart = 0
    h.size -= 1
    if i < h.size:
        h.key[i] = h.key[h.size]
        h.id[i] = h.id[h.size]
        h.pay[i] = h.pay[h.size]
        heap_sift_down(h, i)
        heap_sift_up(h, i)


cdef void chart_heapify(Chart* c) noexcept nogil:
    """Restore the heap order after keys were changed in place (training rescoring)."""
    cdef int i = c.h.size // 2 - 1
    while i >= 0:
        heap_sift_down(&c.h, i)
        i -= 1


# ---------------------------------------------------------------- testing aids
def agenda_pop_order(keys):
    """Push edges 0..m-1 with float ``keys`` on an agenda; return the ids in pop order."""
    cdef Heap h
    cdef int i
    heap_init(&h, 4)
    try:
        for i in range(len(keys)):
            if heap_push(&h, i, float(keys[i])) < 0:
                raise MemoryError()
        out = []
        while h.size > 0:
            out.append(heap_pop(&h))
        return out
    finally:
        heap_free(&h)


def chart_trace(keys, int beam, sigs=None):
    """ADD edges 0..m-1 with float ``keys`` (and DP-signatures ``sigs``, uint64, if given).

    Returns (left: ids that left the chart, in order; kept: sorted ids in the chart; valid:
    the chart is a valid min-heap; rivals: rival id per ADD (-1 if none)).
    """
    cdef int m = len(keys), i
    cdef Chart c
    cdef eid_t out, rv
    cdef Edge* E = <Edge*>malloc((m + 1) * sizeof(Edge))
    if E == NULL:
        raise MemoryError()
    chart_init(&c)
    try:
        chart_reset(&c, beam, sigs is not None)
        left, rivals = [], []
        for i in range(m):
            E[i].in_chart = 0
            out = chart_add(&c, E, i, float(keys[i]), int(sigs[i]) if sigs is not None else 0, &rv)
            if out >= 0:
                left.append(out)
            rivals.append(rv)
        valid = all(not heap_before(&c.h, i, (i - 1) // 2) for i in range(1, c.h.size))
        kept = sorted(chart_id(&c, i) for i in range(c.h.size))
        flags = all((E[i].in_chart == 1) == (i in kept) for i in range(m))
        return left, kept, valid and flags, rivals
    finally:
        chart_free(&c)
        free(E)
