# N-gram language model queries (KenLM-style): probing hash tables keyed by 64-bit n-gram keys,
# a query state holding the last N-1 word ids and their backoffs, log10 probabilities.
from ._typedefs cimport uint64_t, int32_t, int64_t

cdef extern from *:
    ctypedef unsigned long long lm_u128 "unsigned __int128"

cdef enum:
    LM_MAX_ORDER = 6

cdef struct LMEntry:
    uint64_t key           # n-gram key (see wo/lm/keys.py), 0 = empty slot
    float prob             # log10 p(w_n | w_1 .. w_n-1)
    float backoff          # log10 backoff weight of the n-gram as a context

cdef struct LMState:
    int32_t len                          # context words held (<= order - 1)
    int32_t words[LM_MAX_ORDER - 1]      # most recent first
    float backoff[LM_MAX_ORDER - 1]      # backoff of (words[j] .. words[0]) as a context


cdef inline uint64_t lm_mix(uint64_t z) noexcept nogil:
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


cdef inline uint64_t lm_h1(int32_t w) noexcept nogil:
    return lm_mix(<uint64_t>w + <uint64_t>0x9E3779B97F4A7C15)


cdef inline uint64_t lm_home(uint64_t k, uint64_t cap) noexcept nogil:
    """Home slot of key k in a table of cap slots (Lemire's multiply-shift range reduction)."""
    return <uint64_t>((<lm_u128>k * <lm_u128>cap) >> 64)


cdef inline uint64_t lm_h2(uint64_t k, int32_t w) noexcept nogil:
    return lm_mix((k + <uint64_t>0x9E3779B97F4A7C15) ^ ((<uint64_t>w + 1) * <uint64_t>0xC2B2AE3D27D4EB4F))


cdef class NgramModel:
    cdef int order
    cdef int V
    cdef const float* uni            # [V, 2]: log10 prob, log10 backoff
    cdef const LMEntry* table[LM_MAX_ORDER + 1]
    cdef uint64_t tcap[LM_MAX_ORDER + 1]
    cdef object _refs
    cdef readonly int32_t bos, eos, unk
    # vocabulary index for scoring raw text: MurmurHash3 of the word's bytes -> id
    cdef const unsigned char* vblob
    cdef const int64_t* voff
    cdef int32_t* vtab
    cdef uint64_t vcap

    cdef int32_t word_id(self, const unsigned char* w, int n) noexcept nogil

    cdef void begin(self, LMState* s) noexcept nogil
    cdef float score(self, const LMState* s, int32_t w, LMState* out) noexcept nogil
    cdef double walk(self, LMState* s, const int32_t* ids, Py_ssize_t n, bint bos) noexcept nogil
    cdef void prefetch(self, const LMState* s, int32_t w) noexcept nogil
