# Helpers shared by the compiled modules (one place, as sklearn/tree/_utils.pxd): the pool
# growth every C array of the core uses and the monotonic clock of the per-sentence timeouts.
from libc.stdlib cimport malloc, realloc
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC


cdef inline int grow(void** p, int* cap, size_t size, int need) noexcept nogil:
    """Double ``cap`` (elements of ``size`` bytes) until it holds ``need``, reallocating ``p[0]``.

    Returns 0, or -1 (p and cap unchanged) when memory runs out.  Every pool of the core grows so.
    """
    cdef int c = cap[0]
    cdef void* q
    if need <= c:
        return 0
    while c < need:
        c *= 2
    q = realloc(p[0], c * size)
    if q == NULL:
        return -1
    p[0] = q
    cap[0] = c
    return 0


cdef inline int reserve(void** p, int* cap, size_t size, int need) noexcept nogil:
    """:func:`grow` for a pool that may not exist yet: a NULL ``p[0]`` is first given
    max(64, need) elements.  Returns 0, or -1 when memory runs out."""
    cdef int c = need if need > 64 else 64
    if p[0] == NULL:
        p[0] = malloc(c * size)
        if p[0] == NULL:
            return -1
        cap[0] = c
        return 0
    return grow(p, cap, size, need)


cdef inline double now() noexcept nogil:
    """Monotonic clock in seconds (the per-sentence timeouts of the searches)."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9
