# Sparse multiclass perceptron scoring for the deep track's completion (wo.sr.complete).
cdef void _score_rows(const int[::1] rows, const long long[::1] indptr, const int[::1] cls,
                      const float[::1] w, double[::1] out) noexcept nogil
