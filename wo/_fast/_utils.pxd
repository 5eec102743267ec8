# Helpers shared by the compiled modules (one place, as sklearn/tree/_utils.pxd).
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC


cdef inline double now() noexcept nogil:
    """Monotonic clock in seconds (the per-sentence timeouts of the searches)."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9
