# The local orderer's domain search (wo.sr.order): one head's domain ordered left to right by
# a hashed linear model with beam search (Bohnet et al. 2010), compiled.
from ._typedefs cimport uint32_t, int32_t, uint8_t


cdef struct OrderDomain:
    # one domain of k items as uint32 atoms per item (wo.sr.order.Domain), the head at hi
    int k, hi
    int fset                                  # 3, or 4: + the suffix templates over sf
    bint sig                                  # + the domain-signature templates 71-73 over kr[hi]
    bint ends                                 # + the phrase-ends templates 74-77 (first/last words of p and x)
    uint32_t hu, hl, hr                       # atoms of the head's UPOS, lemma, relation
    const uint32_t* r
    const uint32_t* u
    const uint32_t* l
    const uint32_t* m
    const uint32_t* first
    const uint32_t* fu
    const uint32_t* last
    const uint32_t* lu
    const uint32_t* kr
    const uint32_t* sz
    const uint32_t* sf                        # the item's suffix atom (fset 4; else NULL)
    const int32_t* side                       # -1 left, +1 right, 0 free (lin)
    const int32_t* rank                       # lin rank


cdef int step_features(const OrderDomain* d, int p2, int p, int x, bint hp, uint32_t* out) noexcept nogil
cdef bint allowed(const OrderDomain* d, int x, const uint8_t* used, bint hp) noexcept nogil
