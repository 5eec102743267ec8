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
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memcpy
from ._typedefs cimport int32_t, int64_t, uint32_t, uint64_t
from ._lm cimport NgramModel, LMState, LM_MAX_ORDER, lm_mix
from ._utils cimport grow, reserve, now as _now

cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil


cdef int _emit(Walk* w, int n, int64_t row) noexcept nogil:
    """Append the current n-gram (w.path[:n]) and its row to the output pools; -1: no memory."""
    cdef int i, c = w.capph
    if grow(<void**>&w.out, &w.cap, sizeof(int32_t), w.nout + n) < 0:
        return -1
    if (grow(<void**>&w.lens, &c, sizeof(int32_t), w.nph + 1) < 0
            or grow(<void**>&w.rows, &w.capph, sizeof(int64_t), w.nph + 1) < 0):
        return -1
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


# ============================================================================================
# Algorithm 3 (pruned parsing and generation) over explicit, LM-scored cell contents
# ============================================================================================
#
# A cell is a sub-multiset A of the bag (the paper's bit-string nonterminal, with repeated words
# counted); its content is the set of strings the grammar derives for A that survived pruning,
# each kept once with its LM score as a fragment (from the empty context), the LM state after
# it (its last N-1 words) and the in-fragment log10 probabilities of its first N-1 words, so a
# concatenation B.C is rescored exactly by re-querying only C's first N-1 words after B's state
# (the boundary n-grams).  That is the cell automaton of the paper composed with G, with the
# strings enumerated instead of shared in a lattice.  Multisets are count vectors packed in
# W 64-bit words with a guard bit per field: B + C fits the bag iff no guard bit is set.


cdef float LOGP_FLOOR = -99.0   # log10 probability of an impossible event (ARPA's <s>): a -inf n-gram
                                # (an ARPA file may hold one) scores this, so no score difference is NaN


cdef inline float _fin(float lp) noexcept nogil:
    """An LM log10 probability floored at LOGP_FLOOR (-inf in, -99 out).  The chart subtracts
    cached boundary scores (-inf - -inf is NaN) and its selection loops assume ordered floats:
    a NaN walked Hoare's selection past the candidate array (a segfault)."""
    return lp if lp > LOGP_FLOOR else LOGP_FLOOR


cdef inline int _asc(uint64_t a, uint64_t b) noexcept nogil:
    return 0 if a == b else (-1 if a < b else 1)


cdef inline int _desc(float a, float b) noexcept nogil:
    return 0 if a == b else (-1 if a > b else 1)


cdef int _cmp_h(const void* a, const void* b) noexcept nogil:
    """String hash, then best first (the first of a run of equal strings is kept)."""
    cdef const GCand* x = <const GCand*>a
    cdef const GCand* y = <const GCand*>b
    return _asc(x.h, y.h) or _desc(x.est, y.est)


cdef int _cmp_est(const void* a, const void* b) noexcept nogil:
    """Best first (ties by string hash, so the order is deterministic)."""
    cdef const GCand* x = <const GCand*>a
    cdef const GCand* y = <const GCand*>b
    return _desc(x.est, y.est) or _asc(x.h, y.h)


cdef int _cmp_rank(const void* a, const void* b) noexcept nogil:
    """Best key first, ties by cell index."""
    cdef const GRank* x = <const GRank*>a
    cdef const GRank* y = <const GRank*>b
    return _desc(x.key, y.key) or (0 if x.cell == y.cell else (-1 if x.cell < y.cell else 1))


cdef int _cmp_kh(const void* a, const void* b) noexcept nogil:
    """Cell (key hash), then best fragment first."""
    cdef const GCand* x = <const GCand*>a
    cdef const GCand* y = <const GCand*>b
    return _asc(x.kh, y.kh) or _desc(x.score, y.score) or _asc(x.h, y.h)


class BagTooLarge(ValueError):
    """A bag whose multiplicities do not fit GYRO's packed multiset keys (some hundreds of
    distinct words): the caller falls back to the greedy LM order."""


cdef class GyroChart:
    """Algorithm 3 of de Gispert, Tomalin & Byrne (2014, section 2.4: pruned parsing and
    generation) for one bag, with explicit LM-scored cell contents in C pools.

    lm: the n-gram LM (``wo._fast._lm.NgramModel``); lmid: int32[D] LM ids of the bag's distinct
    words; mult: int32[D] their multiplicities (N = sum).  Rows x = 1..N are built bottom-up:
    row x holds the phrase rules of x words and every concatenation B.C of cells of rows i and
    x-i whose multisets add up within the bag.  From row r on (x < N) a row is pruned as
    PRUNE-ROW does: strings scoring below the row's best by more than beta (log10) are dropped,
    and at most row_cap strings stay (a memory bound beside beta); a cell whose strings all lost
    disappears.  With ``future`` the row's strings are compared by their score plus an estimate
    of the words they leave out (each word's best log10 probability after any bag word or
    ``<s>``), an addition to the paper's pruning.  Cells of the top row are scored as sentences
    (``<s>``, ``</s>``), and the ``keep`` best distinct strings are the output lattice.

    The joins of a row are enumerated best first: the cells of each row are ranked by their
    best string's bound as a left and as a right part, the right parts a left part fits beside
    are the complement of an OR of per-word bitsets (no pairwise multiset test), and a pair
    whose bound cannot reach the row's threshold ends the loop.  A pruned row's candidates are
    kept one per string in a hash table and cut to row_cap by selection (no sort) whenever
    they reach twice that.  Counters of the last parse: pair_checks (cell pairs that fit),
    pair_calls (pairs whose strings were joined), join_misses (boundary-cache misses), pushes.
    """

    @property
    def pool_bytes(self):
        """Bytes held by the chart's pools (they only grow: the peak of every parse so far)."""
        return (self.caphyp * sizeof(GHyp) + self.capcell * sizeof(GCell) + self.capkey * sizeof(uint64_t)
                + self.captok * sizeof(int32_t) + self.capcand * sizeof(GCand))

    def __dealloc__(self):
        free(self.lmid); free(self.mult); free(self.est); free(self.fword); free(self.fshift)
        free(self.pw); free(self.hyps); free(self.cells); free(self.keys); free(self.toks)
        free(self.cand); free(self.row0); free(self.jc)
        free(self.lrank); free(self.rrank); free(self.bits); free(self.boff); free(self.bnw)
        free(self.lvbase); free(self.fwidth); free(self.conflict); free(self.bg)
        free(self.rb); free(self.rboff); free(self.lwu); free(self.lws); free(self.ctab)
        free(self.rbmax)

    def __init__(self, NgramModel lm, const int32_t[::1] lmid, const int32_t[::1] mult):
        cdef int D = lmid.shape[0], d, width, bits = 0, w = 0, N = 0
        cdef uint64_t x = 0x9E3779B97F4A7C15
        if mult.shape[0] != D or D == 0:
            raise ValueError("lmid and mult must be non-empty and of one length")
        self.lm = lm
        self.D = D
        self.order = lm.order
        self.lmid = <int32_t*>malloc(D * sizeof(int32_t))
        self.mult = <int32_t*>malloc(D * sizeof(int32_t))
        self.est = <float*>malloc(D * sizeof(float))
        self.fword = <int*>malloc(D * sizeof(int))
        self.fshift = <int*>malloc(D * sizeof(int))
        self.fwidth = <int*>malloc(D * sizeof(int))
        self.lvbase = <int*>malloc(D * sizeof(int))
        self.bg = <float*>malloc(D * D * sizeof(float))
        if not (self.bg and self.lmid and self.mult and self.est and self.fword and self.fshift and self.fwidth
                and self.lvbase):
            raise MemoryError()
        for d in range(KW_MAX):
            self.off[d] = self.guard[d] = self.full[d] = 0
            x = lm_mix(x + <uint64_t>d + 1)
            self.R[d] = x | 1
        for d in range(D):
            if mult[d] < 1:
                raise ValueError("multiplicities must be >= 1")
            self.lmid[d] = lmid[d]
            self.mult[d] = mult[d]
            N += mult[d]
            width = 1
            while (1 << width) <= mult[d]:
                width += 1
            width += 1                            # guard bit
            if bits + width > 64:
                w += 1
                bits = 0
            if w >= KW_MAX:
                raise BagTooLarge(f"bag too large for GYRO's multiset keys ({D} distinct words)")
            self.fword[d] = w
            self.fshift[d] = bits
            self.fwidth[d] = width - 1
            self.lvbase[d] = N - mult[d]
            self.guard[w] |= (<uint64_t>1) << (bits + width - 1)
            self.off[w] |= (<uint64_t>((1 << (width - 1)) - 1 - mult[d])) << bits
            self.full[w] |= (<uint64_t>mult[d]) << bits
            bits += width
        self.W = w + 1
        self.N = N
        self.pw = <uint64_t*>malloc((N + 1) * sizeof(uint64_t))
        self.row0 = <int*>malloc((N + 2) * sizeof(int))
        self.jc = <GJoin*>malloc((1 << JC_BITS) * sizeof(GJoin))
        self.boff = <int*>malloc((N + 2) * sizeof(int))
        self.bnw = <int*>malloc((N + 2) * sizeof(int))
        self.rboff = <int*>malloc((N + 2) * sizeof(int))
        self.rbmax = <float*>malloc((N + 2) * D * sizeof(float))
        self.lwu = <int32_t*>malloc(D * sizeof(int32_t))
        self.lws = <float*>malloc(D * sizeof(float))
        if not (self.pw and self.row0 and self.jc and self.boff and self.bnw and self.rboff and self.rbmax and self.lwu
                and self.lws):
            raise MemoryError()
        self.pw[0] = 1
        for d in range(1, N + 1):
            self.pw[d] = self.pw[d - 1] * <uint64_t>0x100000001B3
        self._estimates()

    cdef void _estimates(self) noexcept nogil:
        """est[d]: max over v in bag + <s> of log10 p(d | v) (each word's best bigram score)."""
        cdef LMState e, sv, o
        cdef int d, v
        cdef float p, best
        for d in range(self.D):
            self.lm.begin(&sv)
            best = _fin(self.lm.score(&sv, self.lmid[d], &o))
            e.len = 0
            p = _fin(self.lm.score(&e, self.lmid[d], &o))
            if p > best:
                best = p
            for v in range(self.D):
                if v == d and self.mult[d] < 2:
                    self.bg[v * self.D + d] = -99.0
                    continue
                e.len = 0
                _fin(self.lm.score(&e, self.lmid[v], &sv))
                p = _fin(self.lm.score(&sv, self.lmid[d], &o))
                self.bg[v * self.D + d] = p
                if p > best:
                    best = p
            self.est[d] = best

    # ------------------------------------------------------------------ pools
    cdef int _push_cand(self, int32_t b, int32_t c, float score, float est, uint64_t h,
                        uint64_t kh) noexcept nogil:
        cdef GCand* q
        cdef uint64_t i, mask
        if self.ctbits:
            # one candidate per string: a later copy replaces it only when better
            mask = ((<uint64_t>1) << self.ctbits) - 1
            i = lm_mix(h) & mask
            while self.ctab[i] >= 0:
                q = &self.cand[self.ctab[i]]
                if q.h == h:
                    if est > q.est:
                        q.b = b
                        q.c = c
                        q.score = score
                        q.est = est
                        q.kh = kh
                    return 0
                i = (i + 1) & mask
            self.ctab[i] = self.ncand
        if grow(<void**>&self.cand, &self.capcand, sizeof(GCand), self.ncand + 1) < 0:
            return -1
        q = &self.cand[self.ncand]
        q.b = b
        q.c = c
        q.score = score
        q.est = est
        q.h = h
        q.kh = kh
        self.ncand += 1
        self.pushes += 1
        if self.ncand > self.peak_cands:
            self.peak_cands = self.ncand
        return 0

    # ------------------------------------------------------------------ LM on fragments
    cdef float _walk(self, const int32_t* t, int n, LMState* st, float* head) noexcept nogil:
        """Score n tokens from the empty context: returns the log10 prob, writes the state after
        them to st and the first N-1 word scores to head."""
        cdef LMState a, b
        cdef float tot = 0.0, p
        cdef int k
        a.len = 0
        for k in range(n):
            p = _fin(self.lm.score(&a, self.lmid[t[k]], &b))
            if k < self.order - 1:
                head[k] = p
            tot += p
            a = b
        st[0] = a
        return tot

    cdef float _join(self, const GHyp* B, int lb, const GHyp* C, int lc, LMState* tail,
                     float* head) noexcept nogil:
        """The log10 prob change when C follows B (C's first N-1 words rescored after B's state);
        writes the state after B.C to tail and the head of B.C to head (when not NULL)."""
        cdef LMState a, b
        cdef float delta = 0.0, p
        cdef int k, m = lc if lc < self.order - 1 else self.order - 1
        cdef const int32_t* tc = &self.toks[C.tok]
        a = B.tail
        for k in range(m):
            p = _fin(self.lm.score(&a, self.lmid[tc[k]], &b))
            delta += p - C.head[k]
            if head != NULL and lb + k < self.order - 1:
                head[lb + k] = p
            a = b
        if tail != NULL:
            tail[0] = a if lc <= self.order - 1 else C.tail
        if head != NULL:
            for k in range(lb if lb < self.order - 1 else self.order - 1):
                head[k] = B.head[k]
        return delta

    cdef inline float _delta(self, int hb, int lb, int hc, int lc) noexcept nogil:
        """_join's score change through the boundary cache (same value: the change depends only
        on B's tail words and C's first N-1 words)."""
        cdef uint64_t key = lm_mix(self.hyps[hb].tkey ^ lm_mix(self.hyps[hc].hkey + <uint64_t>0x632BE59BD9B4E019)) | 1
        cdef GJoin* e = &self.jc[key & ((1 << JC_BITS) - 1)]
        if e.key == key:
            return e.delta
        e.key = key
        self.join_misses += 1
        e.delta = self._join(&self.hyps[hb], lb, &self.hyps[hc], lc, NULL, NULL)
        return e.delta

    cdef void _keys(self, GHyp* H, int x) noexcept nogil:
        """Set the boundary-cache keys of a materialised hyp and clear its sentence terms."""
        cdef int k, m = x if x < self.order - 1 else self.order - 1
        cdef uint64_t t = lm_mix(<uint64_t>H.tail.len + 0x51)
        for k in range(H.tail.len):
            t = lm_mix(t ^ (<uint64_t>H.tail.words[k] + <uint64_t>0x9E3779B97F4A7C15))
        H.tkey = t
        t = lm_mix(<uint64_t>m + 0x77)
        for k in range(m):
            t = lm_mix(t ^ (<uint64_t>self.toks[H.tok + k] + <uint64_t>0x9E3779B97F4A7C15))
        H.hkey = t
        H.bos = H.eos = <float>1e30

    cdef float _sentence(self, const int32_t* t, int n, const float* head, const LMState* tail) noexcept nogil:
        """The change from a fragment score to the sentence score: its first N-1 words after
        <s> instead of the empty context, and </s> after its state."""
        cdef LMState a, b
        cdef float delta = 0.0
        cdef int k, m = n if n < self.order - 1 else self.order - 1
        self.lm.begin(&a)
        for k in range(m):
            delta += _fin(self.lm.score(&a, self.lmid[t[k]], &b)) - head[k]
            a = b
        return delta + _fin(self.lm.score(tail, self.lm.eos, &b))

    # ------------------------------------------------------------------ candidates of a row
    cdef int _dedup_begin(self, int cap) noexcept nogil:
        """Start a row whose candidates are compacted to cap (0: a row kept whole, deduplicated by
        sorting): an empty table of at least twice the candidates a compaction lets in."""
        cdef int bits = 0, i
        self.ctbits = 0
        if cap <= 0:
            return 0
        while (1 << bits) < 2 * (4 * cap + 65):
            bits += 1
        if reserve(<void**>&self.ctab, &self.capctab, sizeof(int32_t), 1 << bits) < 0:
            return -1
        for i in range(1 << bits):
            self.ctab[i] = -1
        self.ctbits = bits
        return 0

    cdef void _select(self, int n, int k) noexcept nogil:
        """Rearrange cand[:n] so that its k best (est, then string hash) come first, the k-th at
        k - 1 (Hoare's selection)."""
        cdef int lo = 0, hi = n - 1, i, j, mid
        cdef GCand pv, tmp
        while lo < hi:
            mid = (lo + hi) >> 1
            pv = self.cand[mid]
            i = lo
            j = hi
            while i <= j:
                while _cmp_est(&self.cand[i], &pv) < 0:
                    i += 1
                while _cmp_est(&self.cand[j], &pv) > 0:
                    j -= 1
                if i <= j:
                    tmp = self.cand[i]
                    self.cand[i] = self.cand[j]
                    self.cand[j] = tmp
                    i += 1
                    j -= 1
            if k - 1 <= j:
                hi = j
            elif k - 1 >= i:
                lo = i
            else:
                break

    cdef int _compact(self, int cap, float* thr) noexcept nogil:
        """Distinct strings only (the best copy), then at most cap of them; raises thr to the
        score of the last kept one when the row is full.  Without the hash table the kept ones
        are sorted best first."""
        cdef int i, n = 0
        cdef uint64_t mask, k
        if self.ncand == 0:
            return 0
        if self.ctbits:
            if self.ncand <= cap:
                return 0
            self._select(self.ncand, cap)
            self.ncand = cap
            if self.cand[cap - 1].est > thr[0]:
                thr[0] = self.cand[cap - 1].est
            mask = ((<uint64_t>1) << self.ctbits) - 1
            for i in range(1 << self.ctbits):
                self.ctab[i] = -1
            for i in range(cap):
                k = lm_mix(self.cand[i].h) & mask
                while self.ctab[k] >= 0:
                    k = (k + 1) & mask
                self.ctab[k] = i
            return 0
        qsort(self.cand, self.ncand, sizeof(GCand), _cmp_h)
        for i in range(self.ncand):
            if n == 0 or self.cand[i].h != self.cand[n - 1].h:
                self.cand[n] = self.cand[i]
                n += 1
        self.ncand = n
        if n > cap:
            qsort(self.cand, n, sizeof(GCand), _cmp_est)
            self.ncand = cap
            if self.cand[cap - 1].est > thr[0]:
                thr[0] = self.cand[cap - 1].est
        return 0

    cdef int _pairs(self, int cb, int cc, float fut, uint64_t kh, bint pruned, float beta, int cap,
                    float* best, float* thr, long max_strings) noexcept nogil:
        """Candidates B.C for every string of cell cb followed by one of cell cc.  Returns 0, -1
        (out of memory) or -2 (string bound)."""
        cdef GCell* B = &self.cells[cb]
        cdef GCell* C = &self.cells[cc]
        cdef int hb, hc, lb = B.len, lc = C.len
        cdef float sb, s, e, gain = C.gain
        cdef float cbest = self.hyps[C.first].score
        cdef uint64_t pwc = self.pw[lc]
        cdef const GHyp* hC
        for hb in range(B.first, B.first + B.n):
            sb = self.hyps[hb].score
            if pruned and sb + cbest + gain + fut < thr[0]:
                break
            for hc in range(C.first, C.first + C.n):
                if pruned and sb + self.hyps[hc].score + gain + fut < thr[0]:
                    break
                if pruned and self.slack >= 0:
                    hC = &self.hyps[hc]
                    if (sb + hC.score + self.bg[self.hyps[hb].lw * self.D + hC.fw] - hC.head[0] + self.slack
                            + hC.rest + fut < thr[0]):
                        continue
                s = sb + self.hyps[hc].score + self._delta(hb, lb, hc, lc)
                e = s + fut
                if pruned and e < thr[0]:
                    continue
                if self._push_cand(hb, hc, s, e, self.hyps[hb].h * pwc + self.hyps[hc].h, kh) < 0:
                    return -1
                if e > best[0]:
                    best[0] = e
                    if pruned and e - beta > thr[0]:
                        thr[0] = e - beta
                if pruned:
                    if self.ncand >= 2 * cap + 64:
                        self._compact(cap, thr)
                elif self.ncand + self.nhyp > max_strings:
                    return -2
        return 0

    cdef int _top_pairs(self, int cb, int cc, int keep, float* thr) noexcept nogil:
        """Sentence candidates B.C with B + C = the whole bag (scored with <s> and </s>)."""
        cdef GCell* B = &self.cells[cb]
        cdef GCell* C = &self.cells[cc]
        cdef int hb, hc, k, lb = B.len, lc = C.len, m
        cdef float s, e
        cdef LMState tail
        cdef float head[LM_MAX_ORDER - 1]
        cdef int32_t t[LM_MAX_ORDER - 1]
        cdef LMState a, b2
        cdef GHyp* hy
        cdef int o1 = self.order - 1
        m = self.N if self.N < o1 else o1
        for hb in range(B.first, B.first + B.n):
            for hc in range(C.first, C.first + C.n):
                if lb >= o1 and lc >= o1:
                    # <s> touches only B's words and </s> only C's state: per-hyp terms, kept
                    hy = &self.hyps[hb]
                    if hy.bos > 1e29:
                        hy.bos = 0.0
                        self.lm.begin(&a)
                        for k in range(o1):
                            hy.bos += _fin(self.lm.score(&a, self.lmid[self.toks[hy.tok + k]], &b2)) - hy.head[k]
                            a = b2
                    hy = &self.hyps[hc]
                    if hy.eos > 1e29:
                        hy.eos = _fin(self.lm.score(&hy.tail, self.lm.eos, &b2))
                    s = self.hyps[hb].score + self.hyps[hc].score + self._delta(hb, lb, hc, lc)
                    e = s + self.hyps[hb].bos + self.hyps[hc].eos
                else:
                    s = self.hyps[hb].score + self.hyps[hc].score + self._join(&self.hyps[hb], lb, &self.hyps[hc], lc, &tail, head)
                    for k in range(m):
                        t[k] = self.toks[self.hyps[hb].tok + k] if k < lb else self.toks[self.hyps[hc].tok + k - lb]
                    e = s + self._sentence(t, m, head, &tail)
                if e < thr[0]:
                    continue
                if self._push_cand(hb, hc, s, e, self.hyps[hb].h * self.pw[lc] + self.hyps[hc].h, 0) < 0:
                    return -1
                if self.ncand >= 4 * keep + 64:
                    self._compact(keep, thr)
        return 0

    cdef int _find(self, int x, uint64_t kh) noexcept nogil:
        """The cell of row x with key hash kh (cells of a row are sorted by it), or -1."""
        cdef int lo = self.row0[x], hi = self.row0[x + 1], mid
        while lo < hi:
            mid = (lo + hi) // 2
            if self.cells[mid].kh < kh:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.row0[x + 1] and self.cells[lo].kh == kh:
            return lo
        return -1

    cdef inline int _count(self, const uint64_t* key, int d) noexcept nogil:
        """Copies of distinct word d in the multiset key."""
        return <int>((key[self.fword[d]] >> self.fshift[d]) & ((<uint64_t>1 << self.fwidth[d]) - 1))

    cdef int _index_row(self, int x) noexcept nogil:
        """Rank row x's cells by lk and rk (best first) and build its bitsets over the rk
        ranking, and with the join filter on its right-part bounds rb and rbmax (see the class
        attributes).  Returns 0, -1 (out of memory)."""
        cdef int a = self.row0[x], n = self.row0[x + 1] - a, t, d, k, c, nw, lv
        cdef GRank* tmp
        cdef uint64_t* bs
        cdef const uint64_t* key
        t = self.caprank
        if reserve(<void**>&self.lrank, &t, sizeof(int32_t), self.ncell) < 0:
            return -1
        if reserve(<void**>&self.rrank, &self.caprank, sizeof(int32_t), self.ncell) < 0:
            return -1
        nw = (n + 63) >> 6
        self.boff[x] = self.nbits
        self.bnw[x] = nw
        if n == 0:
            return 0
        if reserve(<void**>&self.bits, &self.capbits, sizeof(uint64_t), self.nbits + self.N * nw) < 0:
            return -1
        tmp = <GRank*>malloc(n * sizeof(GRank))
        if tmp == NULL:
            return -1
        for t in range(n):
            tmp[t].key = self.cells[a + t].lk
            tmp[t].cell = a + t
        qsort(tmp, n, sizeof(GRank), _cmp_rank)
        for t in range(n):
            self.lrank[a + t] = tmp[t].cell
        for t in range(n):
            tmp[t].key = self.cells[a + t].rk
            tmp[t].cell = a + t
        qsort(tmp, n, sizeof(GRank), _cmp_rank)
        bs = &self.bits[self.nbits]
        for t in range(self.N * nw):
            bs[t] = 0
        for t in range(n):
            c = tmp[t].cell
            self.rrank[a + t] = c
            key = &self.keys[self.cells[c].key]
            for d in range(self.D):
                k = self._count(key, d)
                for lv in range(self.lvbase[d], self.lvbase[d] + k):
                    bs[lv * nw + (t >> 6)] |= (<uint64_t>1) << (t & 63)
        free(tmp)
        self.nbits += self.N * nw
        # the right-part bound per left boundary word u, over the rk ranking (read by the join
        # filter only)
        self.rboff[x] = self.nrb
        if self.slack < 0:
            return 0
        if reserve(<void**>&self.rb, &self.caprb, sizeof(float), self.nrb + self.D * n) < 0:
            return -1
        cdef float* rbv = &self.rb[self.nrb]
        cdef float v, sc, mx
        cdef const GHyp* H
        for d in range(self.D):
            mx = -1e30
            for t in range(n):
                c = self.rrank[a + t]
                v = -1e30
                for k in range(self.cells[c].first, self.cells[c].first + self.cells[c].n):
                    H = &self.hyps[k]
                    sc = H.score + self.bg[d * self.D + H.fw] - H.head[0] + H.rest
                    if sc > v:
                        v = sc
                rbv[d * n + t] = v - self.cells[c].used + (self.slack if self.slack > 0 else 0.0)
                if rbv[d * n + t] > mx:
                    mx = rbv[d * n + t]
            self.rbmax[x * self.D + d] = mx
        self.nrb += self.D * n
        return 0

    cdef inline float _left_bound(self, int nu, const float* table, int stride, int t) noexcept nogil:
        """Max over the left part's distinct last words u (lwu, with their best scores lws) of
        lws + table[u * stride + t]: the join filter's bound of a pair, before the future estimate."""
        cdef float m = -1e30
        cdef int d
        for d in range(nu):
            if self.lws[d] + table[self.lwu[d] * stride + t] > m:
                m = self.lws[d] + table[self.lwu[d] * stride + t]
        return m

    cdef int _row_pairs(self, int x, bint prn, float beta, int cap, float total, float* best, float* thr,
                        long max_strings, double t_start, double max_seconds) noexcept nogil:
        """The candidates B.C of row x < N: for every split x = i + j, the left parts of row i best
        first (by lk) and, for each, the right parts of row j that fit beside it (the complement
        of the OR of its words' bitsets), best first (by rk); when pruned, a left part whose best
        join cannot reach thr ends the split and a right part that cannot ends the left part's
        loop (lk + rk + total bounds every candidate of the pair as _pairs' own bound does).
        Returns 0, -1 (out of memory), -2 (string bound), -3 (time)."""
        cdef int i, j, li, cb, cc, d, a, nw, w, t, rc, jb, nj, nu, u, hb
        cdef uint64_t free_bits, last
        cdef const uint64_t* keyb
        cdef const uint64_t* bs
        cdef const float* rbv
        cdef float lkb, rbest
        cdef bint tight
        for i in range(1, x):
            j = x - i
            if self.max_split > 0 and i > self.max_split and j > self.max_split:
                continue
            nw = self.bnw[j]
            if nw == 0 or self.row0[i + 1] == self.row0[i]:
                continue
            if reserve(<void**>&self.conflict, &self.capconf, sizeof(uint64_t), nw) < 0:
                return -1
            jb = self.row0[j]
            nj = self.row0[j + 1] - jb
            tight = prn and self.slack >= 0
            rbv = &self.rb[self.rboff[j]] if tight else NULL
            rbest = self.cells[self.rrank[jb]].rk
            bs = &self.bits[self.boff[j]]
            last = (~(<uint64_t>0)) if (nj & 63) == 0 else (((<uint64_t>1) << (nj & 63)) - 1)
            for li in range(self.row0[i], self.row0[i + 1]):
                if max_seconds > 0 and _now() - t_start > max_seconds:
                    return -3
                cb = self.lrank[li]
                lkb = self.cells[cb].lk
                if prn and lkb + rbest + total < thr[0]:
                    break
                nu = 0
                if tight:
                    # the left part's distinct last words, each with its best string's score
                    for hb in range(self.cells[cb].first, self.cells[cb].first + self.cells[cb].n):
                        u = self.hyps[hb].lw
                        for d in range(nu):
                            if self.lwu[d] == u:
                                break
                        else:
                            self.lwu[nu] = u
                            self.lws[nu] = self.hyps[hb].score
                            nu += 1
                    if self._left_bound(nu, &self.rbmax[j * self.D], 1, 0) < thr[0] - total + self.cells[cb].used:
                        continue
                for w in range(nw):
                    self.conflict[w] = 0
                keyb = &self.keys[self.cells[cb].key]
                for d in range(self.D):
                    a = self._count(keyb, d)
                    if a > 0:
                        t = (self.lvbase[d] + self.mult[d] - a) * nw
                        for w in range(nw):
                            self.conflict[w] |= bs[t + w]
                w = 0
                while w < nw:
                    free_bits = ~self.conflict[w]
                    if w == nw - 1:
                        free_bits &= last
                    while free_bits:
                        t = (w << 6) + __builtin_ctzll(free_bits)
                        free_bits &= free_bits - 1
                        cc = self.rrank[jb + t]
                        self.pair_checks += 1
                        if prn and lkb + self.cells[cc].rk + total < thr[0]:
                            w = nw
                            break
                        if tight and self._left_bound(nu, rbv, nj, t) < thr[0] - total + self.cells[cb].used:
                            continue
                        self.pair_calls += 1
                        rc = self._pairs(cb, cc, total - self.cells[cb].used - self.cells[cc].used,
                                         self.cells[cb].kh + self.cells[cc].kh, prn, beta, cap, best, thr,
                                         max_strings)
                        if rc < 0:
                            return rc
                    w += 1
        return 0

    cdef int _materialize(self, int x, const int32_t* ptok, const int64_t* poff,
                          const uint64_t* pkey, const float* pused) noexcept nogil:
        """Turn the row's candidates (any order) into cells and hyps of row x."""
        cdef int i, j, g, k, w, cb, cc, lb, nc = self.ncand
        cdef GCand* q
        cdef GHyp* H
        cdef GCell* cell
        cdef const GHyp* hB
        cdef const GHyp* hC
        cdef const uint64_t* ka
        cdef const uint64_t* kb
        cdef float bound
        self.row0[x] = self.ncell
        if nc == 0:
            self.row0[x + 1] = self.ncell
            return 0
        qsort(self.cand, nc, sizeof(GCand), _cmp_kh)
        if (grow(<void**>&self.hyps, &self.caphyp, sizeof(GHyp), self.nhyp + nc) < 0
                or grow(<void**>&self.toks, &self.captok, sizeof(int32_t), self.ntok + nc * x) < 0
                or grow(<void**>&self.cells, &self.capcell, sizeof(GCell), self.ncell + nc) < 0
                or grow(<void**>&self.keys, &self.capkey, sizeof(uint64_t), self.nkey + nc * self.W) < 0):
            return -1
        i = 0
        while i < nc:
            g = i
            while g < nc and self.cand[g].kh == self.cand[i].kh:
                g += 1
            cell = &self.cells[self.ncell]
            cell.key = self.nkey
            cell.first = self.nhyp
            cell.n = g - i
            cell.len = x
            cell.kh = self.cand[i].kh
            cell.gain = -1e30
            q = &self.cand[i]
            if q.c < 0:
                ka = &pkey[(-1 - q.b) * self.W]
                for w in range(self.W):
                    self.keys[self.nkey + w] = ka[w]
                cell.used = pused[-1 - q.b]
            else:
                cb = self.hyps[q.b].cell
                cc = self.hyps[q.c].cell
                ka = &self.keys[self.cells[cb].key]
                kb = &self.keys[self.cells[cc].key]
                for w in range(self.W):
                    self.keys[self.nkey + w] = ka[w] + kb[w]
                cell.used = self.cells[cb].used + self.cells[cc].used
            self.nkey += self.W
            for j in range(i, g):
                q = &self.cand[j]
                H = &self.hyps[self.nhyp]
                H.tok = self.ntok
                H.cell = self.ncell
                H.h = q.h
                H.score = q.score
                if q.c < 0:
                    memcpy(&self.toks[self.ntok], &ptok[poff[-1 - q.b]], x * sizeof(int32_t))
                    self._walk(&self.toks[self.ntok], x, &H.tail, H.head)
                else:
                    hB = &self.hyps[q.b]
                    hC = &self.hyps[q.c]
                    lb = self.cells[hB.cell].len
                    memcpy(&self.toks[self.ntok], &self.toks[hB.tok], lb * sizeof(int32_t))
                    memcpy(&self.toks[self.ntok + lb], &self.toks[hC.tok], (x - lb) * sizeof(int32_t))
                    self._join(hB, lb, hC, x - lb, &H.tail, H.head)
                self._keys(H, x)
                bound = 0.0
                for k in range(x if x < self.order - 1 else self.order - 1):
                    bound += self.est[self.toks[self.ntok + k]] - H.head[k]
                    if k == 0:
                        H.rest = 0.0
                    else:
                        H.rest += self.est[self.toks[self.ntok + k]] - H.head[k]
                H.fw = self.toks[self.ntok]
                H.lw = self.toks[self.ntok + x - 1]
                H.opt = H.score + bound
                if bound > cell.gain:
                    cell.gain = bound
                self.ntok += x
                self.nhyp += 1
            cell.lk = self.hyps[cell.first].score - cell.used
            cell.rk = cell.lk + cell.gain
            self.ncell += 1
            i = g
        self.row0[x + 1] = self.ncell
        self.cells_built += self.ncell - self.row0[x]
        return 0

    def parse(self, const int32_t[::1] ph_tok, const int64_t[::1] ph_off, int r=3, float beta=4.0,
              int row_cap=2000, long max_strings=2000000, int keep=1000, bint future=True,
              bint prune=True, float penalty=0.0, double max_seconds=0.0, int max_split=0, float slack=-1.0):
        """Run Algorithm 3 with the phrase rules ph_tok[ph_off[p]:ph_off[p+1]] (int32 distinct-word
        indices; int64[P+1] offsets; rules that do not fit the bag are ignored).

        r: first pruned row; beta: pruning weight (log10); row_cap: strings kept per pruned
        row; max_strings: bound on the strings of unpruned rows (memory); keep: distinct
        sentences kept from the top cell; future: add the estimate of the words left out when
        a row is pruned; prune: False gives the full (unpruned) language, for small bags;
        penalty: cost (log10) of every rule application, so a string's score is its LM score
        minus penalty times the fewest rules deriving it (0: the paper's unweighted rules).
        max_split: join B.C only where B or C has at most this many words (0: every split; 1
        builds strings word by word at either end); slack (log10, < 0: off): skip a join whose
        score with the bag's bigram of its boundary words in place of the boundary n-grams is
        below the row's threshold by more than slack (a heuristic filter in front of the LM,
        like the ``gain`` bound of the future estimate).
        Returns (status, tokens int32[K, N] distinct-word indices, sentence scores float64[K]
        (log10 probabilities less the rule penalties), best first): status 0 parsed, 1 no parse (the top cell is empty), 2 the
        string bound was reached, 3 ``max_seconds`` (> 0) ran out (checked per row and per cell).
        Raises ValueError for bad arguments, MemoryError."""
        cdef int P = ph_off.shape[0] - 1, p, k, x, i, j, cb, cc, w, st = 0, rc, m, lb
        cdef int N = self.N, W = self.W
        cdef float total = 0.0, best, thr, fut, s, e
        cdef uint64_t kh, khfull = 0
        cdef LMState tail
        cdef float head[LM_MAX_ORDER - 1]
        cdef GCand* q
        cdef bint prn
        cdef double t_start = _now()
        if P < 0 or r < 1 or beta <= 0 or row_cap < 1 or keep < 1:
            raise ValueError("bad GYRO parse arguments")
        for p in range(P):
            if ph_off[p + 1] <= ph_off[p]:
                raise ValueError("empty phrase rule")
            for k in range(ph_off[p], ph_off[p + 1]):
                if ph_tok[k] < 0 or ph_tok[k] >= self.D:
                    raise ValueError("phrase token out of range")
        pkey = np.zeros(max(P, 1) * W, dtype=np.uint64)
        pused = np.zeros(max(P, 1), dtype=np.float32)
        pkh = np.zeros(max(P, 1), dtype=np.uint64)
        pfit = np.zeros(max(P, 1), dtype=np.uint8)
        cdef uint64_t[::1] vkey = pkey
        cdef float[::1] vused = pused
        cdef uint64_t[::1] vkh = pkh
        cdef unsigned char[::1] vfit = pfit
        cdef const int32_t* tp = &ph_tok[0] if ph_tok.shape[0] else NULL
        self.nhyp = self.ncell = self.nkey = self.ntok = self.ncand = self.nbits = self.nrb = 0
        self.peak_cands = self.cells_built = self.pair_checks = self.pair_calls = self.join_misses = self.pushes = 0
        self.max_split = max_split
        self.slack = slack
        if self.capcand == 0:
            self.capcand = self.caphyp = self.capcell = self.capkey = self.captok = 64
            self.cand = <GCand*>malloc(64 * sizeof(GCand))
            self.hyps = <GHyp*>malloc(64 * sizeof(GHyp))
            self.cells = <GCell*>malloc(64 * sizeof(GCell))
            self.keys = <uint64_t*>malloc(64 * sizeof(uint64_t))
            self.toks = <int32_t*>malloc(64 * sizeof(int32_t))
            if not (self.cand and self.hyps and self.cells and self.keys and self.toks):
                raise MemoryError()
        for w in range(W):
            khfull += self.full[w] * self.R[w]
        for k in range(1 << JC_BITS):
            self.jc[k].key = 0
        with nogil:
            for k in range(self.D):
                total += self.mult[k] * self.est[k]
            if not future:
                total = 0.0
            for p in range(P):
                for k in range(ph_off[p], ph_off[p + 1]):
                    vkey[p * W + self.fword[tp[k]]] += (<uint64_t>1) << self.fshift[tp[k]]
                    vused[p] += self.est[tp[k]] if future else 0.0
                vfit[p] = 1
                for w in range(W):
                    if (vkey[p * W + w] + self.off[w]) & self.guard[w]:
                        vfit[p] = 0
                    vkh[p] += vkey[p * W + w] * self.R[w]
            for x in range(1, N + 1):
                if max_seconds > 0 and _now() - t_start > max_seconds:
                    st = -3
                    break
                self.ncand = 0
                best = -1e30
                thr = -1e30
                prn = prune and x >= r and x < N
                if self._dedup_begin(row_cap if prn else (keep if x == N else 0)) < 0:
                    st = -1
                    break
                for p in range(P):
                    if not vfit[p] or ph_off[p + 1] - ph_off[p] != x:
                        continue
                    if x == N and vkh[p] != khfull:
                        continue
                    s = self._walk(&tp[ph_off[p]], x, &tail, head) - penalty
                    e = s + (self._sentence(&tp[ph_off[p]], x, head, &tail) if x == N else total - vused[p])
                    kh = 0
                    for k in range(ph_off[p], ph_off[p + 1]):
                        kh = kh * <uint64_t>0x100000001B3 + <uint64_t>(tp[k] + 1)
                    if self._push_cand(-1 - p, -1, s, e, kh, vkh[p]) < 0:
                        st = -1
                        break
                    if e > best:
                        best = e
                if st < 0:
                    break
                if x == N:
                    thr = -1e30
                    for i in range(1, N):
                        for cb in range(self.row0[i], self.row0[i + 1]):
                            if max_seconds > 0 and _now() - t_start > max_seconds:
                                st = -3
                                break
                            cc = self._find(N - i, khfull - self.cells[cb].kh)
                            if cc < 0:
                                continue
                            if self._top_pairs(cb, cc, keep, &thr) < 0:
                                st = -1
                                break
                        if st < 0:
                            break
                    if st < 0:
                        break
                    self._compact(keep, &thr)
                    qsort(self.cand, self.ncand, sizeof(GCand), _cmp_est)
                    break
                if prn:
                    thr = best - beta
                st = self._row_pairs(x, prn, beta, row_cap, total, &best, &thr, max_strings, t_start,
                                     max_seconds)
                if st < 0:
                    break
                if prn:
                    thr = best - beta
                    self._compact(row_cap, &thr)
                    m = 0
                    for k in range(self.ncand):
                        if self.cand[k].est >= thr:
                            self.cand[m] = self.cand[k]
                            m += 1
                    self.ncand = m
                else:
                    thr = -1e30
                    self._compact(2147483647, &thr)
                    if self.nhyp + self.ncand > max_strings:
                        st = -2
                        break
                # rows up to N - 2 are the parts of later rows below the top (which finds its pairs by key)
                if (self._materialize(x, tp, &ph_off[0], &vkey[0], &vused[0]) < 0
                        or (x <= N - 2 and self._index_row(x) < 0)):
                    st = -1
                    break
                self.strings = self.nhyp
        if st == -1:
            raise MemoryError()
        if st == -2:
            return 2, np.zeros((0, N), dtype=np.int32), np.zeros(0)
        if st == -3:
            return 3, np.zeros((0, N), dtype=np.int32), np.zeros(0)
        K = self.ncand
        out = np.empty((K, N), dtype=np.int32)
        sc = np.empty(K, dtype=np.float64)
        cdef int32_t[:, ::1] vo = out
        for k in range(K):
            q = &self.cand[k]
            sc[k] = q.est
            if q.c < 0:
                for i in range(N):
                    vo[k, i] = tp[ph_off[-1 - q.b] + i]
            else:
                lb = self.cells[self.hyps[q.b].cell].len
                for i in range(lb):
                    vo[k, i] = self.toks[self.hyps[q.b].tok + i]
                for i in range(N - lb):
                    vo[k, lb + i] = self.toks[self.hyps[q.c].tok + i]
        return (0 if K > 0 else 1), out, sc


def greedy_order(NgramModel lm, const int32_t[::1] lmid, const int32_t[::1] mult):
    """The greedy LM order of a bag (GYRO's fallback when its search is cut short): left to
    right from <s>, the word left whose log10 p given the words so far is highest (each -inf
    scored LOGP_FLOOR; ties to the higher index, i.e. the last of the sorted distinct words).

    lm: the n-gram LM; lmid: int32[D] LM ids of the bag's distinct words; mult: int32[D] their
    multiplicities (>= 1).  Returns an int32 array of N = sum(mult) word indexes (0..D-1).  O(N D)
    LM queries in C without the GIL (a 5,000-word bag of 1,500 distinct words: 7.5 M queries,
    about a second), where the Python loop took minutes.  Raises ValueError for lengths that
    differ or a multiplicity below 1; MemoryError."""
    cdef Py_ssize_t D = lmid.shape[0], i, k, n = 0
    if mult.shape[0] != D:
        raise ValueError("lmid and mult differ in length")
    for i in range(D):
        if mult[i] < 1:
            raise ValueError("multiplicities must be >= 1")
        n += mult[i]
    out = np.empty(n, dtype=np.int32)
    left_arr = np.array(mult, dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef int32_t[::1] left = left_arr
    cdef LMState st, nxt, best_st
    cdef float p, best
    cdef Py_ssize_t bi
    with nogil:
        lm.begin(&st)
        for k in range(n):
            bi = -1
            best = 0.0
            for i in range(D):
                if left[i] == 0:
                    continue
                p = _fin(lm.score(&st, lmid[i], &nxt))
                if bi < 0 or p >= best:   # ties to the later word (the Python greedy's max over (p, word))
                    bi = i
                    best = p
                    best_st = nxt
            o[k] = <int32_t>bi
            left[bi] -= 1
            st = best_st
    return out
