# The trie LM (KenLM's ``trie`` data structure, Heafield 2011, section 4): bit-packed sorted
# n-gram records per order, optional quantized probabilities and backoffs (Whittaker & Raj 2001).
# A subclass of NgramModel: the same LMState and the same cdef calls, so every decoder that
# holds an NgramModel queries a trie file unchanged (the cdef methods are virtual).
from ._typedefs cimport uint64_t, uint32_t, int32_t, int64_t, uint8_t
from ._lm cimport NgramModel, LMState, LM_MAX_ORDER


cdef struct TrieOrder:
    const uint8_t* base      # packed records (8 bytes of padding after the last)
    uint64_t count           # records (n-grams); record ``count`` is the sentinel (pointer only)
    uint64_t bits            # bits of one record
    uint64_t wmask           # word field: bits 0 .. wbits-1
    int pshift               # probability field (code or float32 bits)
    uint64_t pmask
    int bshift               # backoff field (not in the highest order)
    uint64_t bmask
    int rshift               # pointer to the first extension in the next order (not in the highest)
    uint64_t rmask
    const float* pcent       # quantized: bin centres of the probabilities (NULL: float32 bits)
    const float* bcent       # quantized: bin centres of the backoffs
    const uint32_t* offsets  # compressed pointers (NULL: none): first record of each high-bits value, [2^h + 1]
    const uint32_t* hint     # per 2^hshift records, the high-bits value of the first, [count / 2^hshift + 2]
    int hshift
    int lbits                # bits of the pointer kept in the record (the rest: the offsets)


cdef class TrieModel(NgramModel):
    cdef const uint8_t* uptr         # packed pointers of the unigrams into order 2, [V + 1]
    cdef int ubits
    cdef uint64_t umask
    cdef TrieOrder tri[LM_MAX_ORDER + 1]
    cdef readonly int quant_bits

    cdef int64_t _find(self, const TrieOrder* t, uint64_t lo, uint64_t hi, uint64_t w) noexcept nogil
    cdef float score(self, const LMState* s, int32_t w, LMState* out) noexcept nogil
    cdef void prefetch(self, const LMState* s, int32_t w) noexcept nogil
