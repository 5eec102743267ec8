# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""MurmurHash3_x86_32 (Austin Appleby, public domain algorithm), written for the search core.

Feature indices are MurmurHash3_x86_32 of the little-endian bytes of a short uint32 key
(template id, atoms...). ``murmurhash3_words`` hashes ``nwords`` uint32 values exactly as
``mmh3.hash(struct.pack('<%dI' % nwords, *key), seed, signed=False)`` does, bit for bit
(tested in tests/test_hash.py), so Python and Cython agree without a vocabulary file.
"""
from libc.string cimport memcpy
from ._typedefs cimport uint32_t

cdef uint32_t murmurhash3_bytes(const unsigned char* data, int length, uint32_t seed) noexcept nogil:
    """MurmurHash3_x86_32 of an arbitrary byte string."""
    cdef int nblocks = length // 4
    cdef uint32_t h1 = seed
    cdef uint32_t k1
    cdef int i
    for i in range(nblocks):
        memcpy(&k1, data + 4 * i, 4)
        h1 = _block(h1, k1)
    cdef const unsigned char* tail = data + nblocks * 4
    k1 = 0
    cdef int rem = length & 3
    if rem == 3:
        k1 ^= (<uint32_t>tail[2]) << 16
    if rem >= 2:
        k1 ^= (<uint32_t>tail[1]) << 8
    if rem >= 1:
        k1 ^= <uint32_t>tail[0]
        h1 ^= _scramble_k(k1)
    h1 ^= <uint32_t>length
    return _fmix32(h1)


def hash_bytes(bytes data, unsigned int seed=0):
    """MurmurHash3_x86_32 of ``data`` as an unsigned int (same as ``mmh3.hash(data, seed, signed=False)``).

    Parameters: data (bytes), seed (uint32). Returns int in [0, 2**32).
    Source: MurmurHash3 (Appleby), used for feature hashing as in the design sketch.
    """
    return murmurhash3_bytes(<const unsigned char*>data, len(data), seed)


def hash_words(const uint32_t[::1] key, unsigned int seed=0):
    """MurmurHash3_x86_32 of a uint32 array's little-endian bytes; key: shape (k,), dtype uint32."""
    return murmurhash3_words(&key[0], key.shape[0], seed)
