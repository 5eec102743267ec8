# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Edge arena and coverage bitsets: allocation and reset (inline operations in ``_arena.pxd``)."""
from libc.stdlib cimport malloc, free

from ._typedefs cimport int32_t, uint64_t


cdef int arena_init(Arena* A) except -1:
    """Allocate the pools (grown by doubling later).  Raises MemoryError."""
    A.cap = 1 << 16
    A.E = <Edge*>malloc(A.cap * sizeof(Edge))
    A.cap_surf = 1 << 16
    A.surf = <int32_t*>malloc(A.cap_surf * sizeof(int32_t))
    A.cap_bits = 1 << 12
    A.bits = <uint64_t*>malloc(A.cap_bits * sizeof(uint64_t))
    A.ne = 0
    A.nsurf = 0
    A.nbits = 0
    A.W64 = 1
    A.leaf_unit = NULL
    A.leaf_uend = NULL
    A.leaf_woff = NULL
    A.leaf_words = NULL
    if A.E == NULL or A.surf == NULL or A.bits == NULL:
        raise MemoryError()
    return 0


cdef void arena_free(Arena* A) noexcept:
    free(A.E); free(A.surf); free(A.bits)
    A.E = NULL; A.surf = NULL; A.bits = NULL


cdef void arena_reset(Arena* A, int nunits, const int32_t* leaf_unit) noexcept nogil:
    """Empty the arena for a sentence of ``nunits`` units; ``leaf_unit[leaf]`` is a leaf's unit.

    Leaves are one-word, one-unit leaves until the caller sets the phrase-leaf arrays
    (``leaf_uend``, ``leaf_woff``, ``leaf_words``) after the reset.
    """
    A.ne = 0
    A.leaf_uend = NULL
    A.leaf_woff = NULL
    A.leaf_words = NULL
    A.nsurf = 0
    A.nbits = 0
    A.W64 = (nunits + 63) // 64
    A.leaf_unit = leaf_unit


def edge_size():
    """sizeof(Edge) in bytes (memory per edge is about this plus pools)."""
    return sizeof(Edge)
