# Weight table of the scaled linear model (Zhang & Clark 2015, section 2.2): look-up and the
# scaled large-margin update (section 3.5); averaging lives in _weights.pyx.
from ._typedefs cimport feat_t, weight_t, uint32_t
from ._hash cimport murmurhash3_words


cdef struct FeatBuf:
    # hashed indicator features of one action: index = MurmurHash3_x86_32(template, atoms) & mask
    feat_t* f
    int k
    uint32_t mask


cdef inline void add2(FeatBuf* o, uint32_t t, uint32_t a, uint32_t b) noexcept nogil:
    cdef uint32_t key[3]
    key[0] = t; key[1] = a; key[2] = b
    o.f[o.k] = murmurhash3_words(key, 3, 0) & o.mask
    o.k += 1


cdef inline void add3(FeatBuf* o, uint32_t t, uint32_t a, uint32_t b, uint32_t c) noexcept nogil:
    cdef uint32_t key[4]
    key[0] = t; key[1] = a; key[2] = b; key[3] = c
    o.f[o.k] = murmurhash3_words(key, 4, 0) & o.mask
    o.k += 1


cdef inline void add4(FeatBuf* o, uint32_t t, uint32_t a, uint32_t b, uint32_t c, uint32_t d) noexcept nogil:
    cdef uint32_t key[5]
    key[0] = t; key[1] = a; key[2] = b; key[3] = c; key[4] = d
    o.f[o.k] = murmurhash3_words(key, 5, 0) & o.mask
    o.k += 1


cdef inline void add5(FeatBuf* o, uint32_t t, uint32_t a, uint32_t b, uint32_t c, uint32_t d,
                      uint32_t e) noexcept nogil:
    cdef uint32_t key[6]
    key[0] = t; key[1] = a; key[2] = b; key[3] = c; key[4] = d; key[5] = e
    o.f[o.k] = murmurhash3_words(key, 6, 0) & o.mask
    o.k += 1


cdef inline void add6(FeatBuf* o, uint32_t t, uint32_t a, uint32_t b, uint32_t c, uint32_t d,
                      uint32_t e, uint32_t f) noexcept nogil:
    cdef uint32_t key[7]
    key[0] = t; key[1] = a; key[2] = b; key[3] = c; key[4] = d; key[5] = e; key[6] = f
    o.f[o.k] = murmurhash3_words(key, 7, 0) & o.mask
    o.k += 1


cdef inline double dot(const weight_t* W, const feat_t* f, int k) noexcept nogil:
    """theta . phi for k indicator features (indices already masked), summed in order."""
    cdef double s = 0.0
    cdef int i
    for i in range(k):
        s += W[f[i]]
    return s


cdef int scaled_update(weight_t* W, double* U, feat_t* P, int np_, double ap, feat_t* N, int nn,
                       double an, double loss, double max_tau, double avg_count,
                       const feat_t* RI, const double* RV, int npr, int nnr) noexcept nogil
