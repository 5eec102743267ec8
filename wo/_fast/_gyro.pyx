# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The phrase look-up of GYRO (de Gispert et al. 2014, section 3) over wo's trie index
(wo/gyro/index.py): every n-gram of the text whose tokens form a sub-multiset of a bag.

The walk starts at each distinct bag word and extends a trie node only by the bag's words
still available (multiplicities counted).  The extensions of a node are a run of word ids
sorted ascending; the bag's distinct ids are sorted too, so the two are intersected by a
merge when the run is short and by binary search per bag word when it is long.  No Python
objects and no allocation inside the walk (the output buffers grow geometrically).
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport free, malloc, realloc
from ._typedefs cimport int32_t, int64_t, uint32_t

cdef enum:
    MAXN = 6


cdef struct Walk:
    const int32_t* ids          # distinct bag word ids, ascending
    int32_t* left               # multiplicity still available per distinct word
    int D
    int nmin, nmax
    uint32_t min_count
    int32_t path[MAXN]          # distinct-word indices of the current n-gram
    int32_t* out                # word ids of the phrases found, concatenated
    int32_t* lens
    int64_t* rows               # row of each phrase in its order's arrays
    long nout, cap, nph, capph


cdef int _emit(Walk* w, int n, int64_t row) noexcept nogil:
    cdef int i
    cdef void* p
    if w.nout + n > w.cap:
        w.cap = 2 * w.cap + n
        p = realloc(w.out, w.cap * sizeof(int32_t))
        if p == NULL:
            return -1
        w.out = <int32_t*>p
    if w.nph + 1 > w.capph:
        w.capph = 2 * w.capph + 1
        p = realloc(w.lens, w.capph * sizeof(int32_t))
        if p == NULL:
            return -1
        w.lens = <int32_t*>p
        p = realloc(w.rows, w.capph * sizeof(int64_t))
        if p == NULL:
            return -1
        w.rows = <int64_t*>p
    for i in range(n):
        w.out[w.nout + i] = w.ids[w.path[i]]
    w.nout += n
    w.lens[w.nph] = n
    w.rows[w.nph] = row
    w.nph += 1
    return 0


cdef class TrieIndex:
    """The trie arrays of a phrase index (memory-mapped or in memory): first int64[V+1];
    per order n = 2..N: words int32[m_n], counts uint32[m_n]; per order n = 2..N-1: child
    int64[m_n + 1] (see wo/gyro/index.py)."""
    cdef object _refs
    cdef int N
    cdef long V
    cdef const int64_t* first
    cdef const int32_t* word[MAXN + 1]
    cdef const uint32_t* cnt[MAXN + 1]
    cdef const int64_t* child[MAXN + 1]
    cdef int64_t m[MAXN + 1]

    def __init__(self, first, words, counts, child):
        cdef const int64_t[::1] f = np.ascontiguousarray(first, dtype=np.int64)
        cdef const int32_t[::1] wv
        cdef const uint32_t[::1] cv
        cdef const int64_t[::1] chv
        cdef int n
        self.N = len(words) + 1
        if not 2 <= self.N <= MAXN:
            raise ValueError(f"orders 2..{MAXN} expected, got up to {self.N}")
        refs = [np.ascontiguousarray(first, dtype=np.int64)]
        self.first = &f[0]
        self.V = f.shape[0] - 1
        for n in range(2, self.N + 1):
            a = np.ascontiguousarray(words[n - 2], dtype=np.int32)
            c = np.ascontiguousarray(counts[n - 2], dtype=np.uint32)
            if a.shape[0] == 0:
                a = np.zeros(1, dtype=np.int32)
                c = np.zeros(1, dtype=np.uint32)
                self.m[n] = 0
            else:
                self.m[n] = words[n - 2].shape[0]
            refs += [a, c]
            wv = a
            cv = c
            self.word[n] = &wv[0]
            self.cnt[n] = &cv[0]
            if n < self.N:
                ch = np.ascontiguousarray(child[n - 2], dtype=np.int64)
                refs.append(ch)
                chv = ch
                self.child[n] = &chv[0]
        self._refs = refs

    cdef int _walk(self, Walk* w, int n, int64_t lo, int64_t hi) noexcept nogil:
        """Extend the current (n-1)-gram by every available bag word among rows lo..hi of
        order n; emit and recurse.  Returns 0, -1 on memory failure."""
        cdef const int32_t* col = self.word[n]
        cdef int64_t a, b, mid, r
        cdef int j
        cdef int32_t x
        if lo >= hi:
            return 0
        if hi - lo <= 2 * w.D:
            # merge the run with the sorted bag ids
            j = 0
            r = lo
            while r < hi and j < w.D:
                x = col[r]
                if x < w.ids[j]:
                    r += 1
                elif x > w.ids[j]:
                    j += 1
                else:
                    if w.left[j] > 0 and self._visit(w, n, j, r) < 0:
                        return -1
                    r += 1
                    j += 1
            return 0
        for j in range(w.D):
            if w.left[j] <= 0:
                continue
            a = lo
            b = hi
            while a < b:                    # first row >= ids[j]
                mid = (a + b) >> 1
                if col[mid] < w.ids[j]:
                    a = mid + 1
                else:
                    b = mid
            if a < hi and col[a] == w.ids[j]:
                if self._visit(w, n, j, a) < 0:
                    return -1
                a += 1
            lo = a
        return 0

    cdef int _visit(self, Walk* w, int n, int j, int64_t r) noexcept nogil:
        if self.cnt[n][r] < w.min_count:
            return 0                        # its extensions are rarer still
        w.path[n - 1] = j
        w.left[j] -= 1
        if n >= w.nmin and _emit(w, n, r) < 0:
            return -1
        if n < w.nmax and self._walk(w, n + 1, self.child[n][r], self.child[n][r + 1]) < 0:
            return -1
        w.left[j] += 1
        return 0

    def lookup(self, const int32_t[::1] ids, const int32_t[::1] mult, int nmin=2, int nmax=6,
               unsigned int min_count=1):
        """Every indexed n-gram (nmin <= n <= nmax, count >= min_count) made of the bag's
        words.  ids: int32[D] distinct word ids of the bag, ascending; mult: int32[D] their
        multiplicities.  Returns (flat int32[sum of lengths] word ids, lens int32[P],
        rows int64[P] row of each phrase in its order's arrays).  Raises ValueError for
        unsorted ids, MemoryError."""
        cdef Walk w
        cdef int D = ids.shape[0], j, rc = 0
        cdef int64_t a
        if mult.shape[0] != D:
            raise ValueError("ids and mult differ in length")
        for j in range(1, D):
            if ids[j] <= ids[j - 1]:
                raise ValueError("bag ids must be distinct and ascending")
        if nmax > self.N:
            nmax = self.N
        w.D = D
        w.nmin = nmin if nmin > 2 else 2
        w.nmax = nmax
        w.min_count = min_count
        w.cap = 256
        w.capph = 64
        w.nout = 0
        w.nph = 0
        w.left = <int32_t*>malloc((D + 1) * sizeof(int32_t))
        w.out = <int32_t*>malloc(w.cap * sizeof(int32_t))
        w.lens = <int32_t*>malloc(w.capph * sizeof(int32_t))
        w.rows = <int64_t*>malloc(w.capph * sizeof(int64_t))
        if D > 0:
            w.ids = &ids[0]
        try:
            if w.left == NULL or w.out == NULL or w.lens == NULL or w.rows == NULL:
                raise MemoryError()
            with nogil:
                for j in range(D):
                    w.left[j] = mult[j]
                for j in range(D):
                    a = ids[j]
                    if a < 0 or a >= self.V or w.left[j] <= 0 or nmax < 2:
                        continue
                    w.path[0] = j
                    w.left[j] -= 1
                    if self._walk(&w, 2, self.first[a], self.first[a + 1]) < 0:
                        rc = -1
                        break
                    w.left[j] += 1
            if rc < 0:
                raise MemoryError()
            flat = np.empty(w.nout, dtype=np.int32)
            lens = np.empty(w.nph, dtype=np.int32)
            rows = np.empty(w.nph, dtype=np.int64)
            for a in range(w.nout):
                flat[a] = w.out[a]
            for a in range(w.nph):
                lens[a] = w.lens[a]
                rows[a] = w.rows[a]
            return flat, lens, rows
        finally:
            free(w.left)
            free(w.out)
            free(w.lens)
            free(w.rows)
