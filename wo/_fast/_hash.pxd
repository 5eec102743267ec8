from ._typedefs cimport uint32_t

cdef uint32_t murmurhash3_words(const uint32_t* key, int nwords, uint32_t seed) noexcept nogil
cdef uint32_t murmurhash3_bytes(const unsigned char* data, int length, uint32_t seed) noexcept nogil
