# Training of the best-first search core (Zhang & Clark 2015, Algorithm 3 and section 3.5): a
# Search that also owns the averaging accumulator and updates its weights.  Decoding stays in
# _search.pyx; the grammars are the same objects for both.
cimport cython
from ._typedefs cimport weight_t, eid_t
from ._search cimport Search


@cython.final
cdef class Trainer(Search):
    cdef weight_t* Wmut             # the weights, writable (the same table as Search.W)
    cdef double* U                  # averaging accumulator, one float64 per weight
    cdef object _uref
    cdef public long long n_updates
    cdef public long long n_dp_pruned_gold  # updates for a gold edge pruned by a same-DP-signature edge (section 3.5)
    cdef public double max_tau      # cap on the update step tau (0: none)
    cdef public int positive_choice # positive example of a non-gold pop: 0 the lowest-scored gold
                                    # edge on the agenda, 1 the highest-scored
    cdef public double avg_count    # averaging count c (theta_avg = W - U / c), kept by the caller

    cdef double _rescore(self, eid_t e) noexcept nogil
    cdef int _update(self, eid_t pos, eid_t neg) noexcept nogil
    cdef void _rescore_chart(self) noexcept nogil
    cdef eid_t _min_gold(self) noexcept nogil
    cdef int _negative_slot(self, eid_t rival) noexcept nogil
    cdef int _gold_pruned(self, eid_t out, eid_t rival) noexcept nogil
