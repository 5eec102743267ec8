from ._typedefs cimport uint32_t

# MurmurHash3_x86_32 (Appleby, public domain algorithm).  The word hash is inline so the
# feature extraction of the search core compiles it in place (no cross-module call per feature).

cdef inline uint32_t _rotl32(uint32_t x, int r) noexcept nogil:
    return (x << r) | (x >> (32 - r))

cdef inline uint32_t _fmix32(uint32_t h) noexcept nogil:
    h ^= h >> 16
    h *= <uint32_t>0x85ebca6b
    h ^= h >> 13
    h *= <uint32_t>0xc2b2ae35
    h ^= h >> 16
    return h

cdef inline uint32_t _scramble_k(uint32_t k1) noexcept nogil:
    k1 *= <uint32_t>0xcc9e2d51
    k1 = _rotl32(k1, 15)
    k1 *= <uint32_t>0x1b873593
    return k1

cdef inline uint32_t _block(uint32_t h1, uint32_t k1) noexcept nogil:
    h1 ^= _scramble_k(k1)
    h1 = _rotl32(h1, 13)
    return h1 * 5 + <uint32_t>0xe6546b64

cdef inline uint32_t murmurhash3_words(const uint32_t* key, int nwords, uint32_t seed) noexcept nogil:
    """MurmurHash3_x86_32 of ``nwords`` uint32 words (little-endian machine)."""
    cdef uint32_t h1 = seed
    cdef int i
    for i in range(nwords):
        h1 = _block(h1, key[i])
    h1 ^= <uint32_t>(nwords * 4)
    return _fmix32(h1)

cdef uint32_t murmurhash3_bytes(const unsigned char* data, int length, uint32_t seed) noexcept nogil
