# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""N-gram language model queries in Cython (the design of KenLM's probing model, Heafield 2011).

Vocabulary ids are mapped once per sentence (in Python); a query ``score(state, w)`` walks the
n-gram keys of w extended by the state's context words, one probe of an open-addressing table
per order, takes the probability of the longest n-gram found and adds the backoffs of the
longer contexts, which the state carries, so no extra look-up is needed.  The next state holds
the words of the longest n-gram found (each of them a context with a known backoff).  No
Python objects, no allocation, no GIL.
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcmp
from libc.math cimport signbit
from ._utils cimport now as _now

from ._typedefs cimport uint64_t, uint32_t, int32_t, int64_t
from ._hash cimport murmurhash3_bytes

cnp.import_array()

cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil

ENTRY_DTYPE = np.dtype([("key", "<u8"), ("prob", "<f4"), ("backoff", "<f4")])


def build_table(const uint64_t[::1] keys, const float[::1] prob, const float[::1] backoff):
    """Open-addressing table (linear probing, load 2/3, KenLM's probing multiplier 1.5).

    keys: uint64[m] n-gram keys (0 is stored as 1); prob, backoff: float32[m] log10 values.
    Returns a structured array of ENTRY_DTYPE of length 1.5 m + 2; the home slot of a key is
    ``lm_home(key, length)``.  Raises ValueError on a repeated key.
    """
    cdef Py_ssize_t m = keys.shape[0], i
    cdef uint64_t cap = <uint64_t>(m + m // 2 + 2), j, k
    out = np.zeros(cap, dtype=ENTRY_DTYPE)
    cdef LMEntry[::1] t = out
    for i in range(m):
        k = keys[i] if keys[i] != 0 else 1
        j = lm_home(k, cap)
        while t[j].key != 0:
            if t[j].key == k:
                raise ValueError("repeated n-gram key")
            j += 1
            if j == cap:
                j = 0
        t[j].key = k
        t[j].prob = prob[i]
        t[j].backoff = backoff[i]
    return out


cdef class NgramModel:
    """Query side of an n-gram LM over memory (memory-mapped or in-process arrays).

    Parameters: uni float32[V, 2] (log10 prob, log10 backoff) indexed by word id; tables: list
    of structured arrays (ENTRY_DTYPE, from build_table) for orders 2..N; bos, eos, unk: ids of ``<s>``,
    ``</s>``, ``<unk>``.  Source: KenLM's probing model and state (Heafield 2011).
    Raises ValueError for an order outside 1..6 or an empty table.
    """

    def __init__(self, uni, tables, int bos=1, int eos=2, int unk=0):
        cdef const float[:, ::1] u = uni
        cdef const LMEntry[::1] t
        self.order = len(tables) + 1
        if not 1 <= self.order <= LM_MAX_ORDER:
            raise ValueError(f"order must be 1..{LM_MAX_ORDER}")
        self.V = u.shape[0]
        self.uni = &u[0, 0]
        self._refs = [uni] + list(tables)
        cdef int n
        for n in range(LM_MAX_ORDER + 1):
            self.table[n] = NULL
            self.tcap[n] = 0
        for n in range(2, self.order + 1):
            arr = tables[n - 2]
            if arr.shape[0] < 2:
                raise ValueError("n-gram table too short")
            t = arr
            self.table[n] = &t[0]
            self.tcap[n] = <uint64_t>arr.shape[0]
        self.bos, self.eos, self.unk = bos, eos, unk
        self.vtab = NULL
        self.vcap = 0

    def __dealloc__(self):
        free(self.vtab)

    def set_vocab(self, const unsigned char[::1] blob, const int64_t[::1] offsets):
        """Index the vocabulary for :meth:`score_text`: word i is blob[offsets[i]:offsets[i+1]]
        (UTF-8).  Raises ValueError when there are not V words, MemoryError."""
        cdef Py_ssize_t V = offsets.shape[0] - 1, i
        cdef uint64_t cap = 16, j
        if V != self.V:
            raise ValueError("the vocabulary does not match the unigram table")
        while cap < 2 * <uint64_t>V:
            cap *= 2
        free(self.vtab)
        self.vtab = <int32_t*>malloc(cap * sizeof(int32_t))
        if self.vtab == NULL:
            raise MemoryError()
        for j in range(cap):
            self.vtab[j] = -1
        self.vcap = cap
        self.vblob = &blob[0] if blob.shape[0] else NULL
        self.voff = &offsets[0]
        self._refs.append(blob)
        self._refs.append(offsets)
        for i in range(V):
            j = murmurhash3_bytes(&blob[0] + offsets[i], <int>(offsets[i + 1] - offsets[i]), 0) & (cap - 1)
            while self.vtab[j] >= 0:
                j = (j + 1) & (cap - 1)
            self.vtab[j] = <int32_t>i

    cdef int32_t word_id(self, const unsigned char* w, int n) noexcept nogil:
        """Id of the word w[0:n] (UTF-8 bytes), ``<unk>`` if it is not in the vocabulary."""
        cdef uint64_t j = murmurhash3_bytes(w, n, 0) & (self.vcap - 1)
        cdef int32_t i
        while True:
            i = self.vtab[j]
            if i < 0:
                return self.unk
            if self.voff[i + 1] - self.voff[i] == n and memcmp(self.vblob + self.voff[i], w, n) == 0:
                return i
            j = (j + 1) & (self.vcap - 1)

    def word_ids(self, const unsigned char[::1] data, Py_ssize_t n):
        """int32[n] ids (``<unk>`` for unknown words) of the n words in ``data``: UTF-8, one
        word per line (b"\\n" between words, none after the last); the vocabulary look-up of
        :meth:`score_text`, for callers that hold tokens.  Raises ValueError when the vocabulary
        is not indexed (:meth:`set_vocab`) or ``data`` holds another number of words."""
        out = np.empty(n, dtype=np.int32)
        cdef int32_t[::1] o = out
        cdef Py_ssize_t L = data.shape[0], pos = 0, k = 0, st
        cdef const unsigned char* d = &data[0] if L else NULL
        if self.vtab == NULL:
            raise ValueError("the vocabulary is not indexed (set_vocab)")
        if n == 0:
            return out
        with nogil:
            while k < n and pos <= L:
                st = pos
                while pos < L and d[pos] != 10:
                    pos += 1
                o[k] = self.word_id(d + st, <int>(pos - st))
                k += 1
                pos += 1
        if k != n or pos != L + 1:
            raise ValueError("word_ids: the data does not hold n words")
        return out

    def score_text(self, const unsigned char[::1] data):
        """Score UTF-8 text, one sentence per line, tokens separated by spaces or tabs
        (KenLM's query: ``<s>`` and ``</s>`` added per line; a final newline ends the last line).

        Returns (log10 float64[S] per line, oov int64[S], oov_log10 float64[S], words int).
        Raises ValueError if :meth:`set_vocab` was not called.
        """
        if self.vtab == NULL:
            raise ValueError("set_vocab() first")
        cdef Py_ssize_t n = data.shape[0], pos = 0, S = 0, i, st, e
        for i in range(n):
            if data[i] == 10:
                S += 1
        if n and data[n - 1] != 10:
            S += 1
        out = np.zeros(S, dtype=np.float64)
        oov = np.zeros(S, dtype=np.int64)
        oovp = np.zeros(S, dtype=np.float64)
        cdef double[::1] o = out
        cdef int64_t[::1] ov = oov
        cdef double[::1] op = oovp
        cdef LMState a, b
        cdef float p
        cdef int32_t w
        cdef double acc, accoov
        cdef int64_t noov, words = 0
        cdef unsigned char c
        cdef const unsigned char* d = &data[0] if n else NULL
        with nogil:
            for i in range(S):
                self.begin(&a)
                acc = 0.0
                accoov = 0.0
                noov = 0
                while pos < n and d[pos] != 10:
                    c = d[pos]
                    if c == 32 or c == 9 or c == 13 or c == 11 or c == 12:
                        pos += 1
                        continue
                    st = pos
                    while pos < n:
                        c = d[pos]
                        if c == 10 or c == 32 or c == 9 or c == 13 or c == 11 or c == 12:
                            break
                        pos += 1
                    w = self.word_id(d + st, <int>(pos - st))
                    p = self.score(&a, w, &b)
                    acc += p
                    words += 1
                    if w == self.unk:
                        noov += 1
                        accoov += p
                    a = b
                pos += 1
                acc += self.score(&a, self.eos, &b)
                o[i] = acc
                ov[i] = noov
                op[i] = accoov
        return out, oov, oovp, words

    @property
    def lm_order(self):
        """The model's order N."""
        return self.order

    cdef void begin(self, LMState* s) noexcept nogil:
        """The state after ``<s>`` (the context of a sentence's first word)."""
        s.len = 1 if self.order > 1 else 0
        s.words[0] = self.bos
        s.backoff[0] = self.uni[2 * self.bos + 1]

    cdef float score(self, const LMState* s, int32_t w, LMState* out) noexcept nogil:
        """log10 p(w | state) with backoff; writes the next state to ``out`` (must not alias ``s``)."""
        cdef float prob
        cdef int i, matched = 0, nctx = s.len
        cdef uint64_t k, j, kk, cap
        cdef const LMEntry* e
        cdef const LMEntry* tab
        if w < 0 or w >= self.V:
            w = self.unk
        prob = self.uni[2 * w]
        out.words[0] = w
        out.backoff[0] = self.uni[2 * w + 1]
        # the state keeps the matched n-grams up to the first that extends to no longer n-gram
        # (backoff -0.0: KenLM's right state minimisation; wo.lm.files)
        cdef bint ext = self.order > 1 and not (out.backoff[0] == 0.0 and signbit(out.backoff[0]))
        out.len = 1 if ext else 0
        if nctx > self.order - 1:
            nctx = self.order - 1
        # all keys first (they depend on the words only), then prefetch every home slot so the
        # cache misses of the orders overlap instead of queueing (memory-level parallelism)
        cdef uint64_t keys[LM_MAX_ORDER]
        cdef uint64_t home[LM_MAX_ORDER]
        k = lm_h1(w)
        for i in range(nctx):
            k = lm_h2(k, s.words[i])
            keys[i] = k if k != 0 else 1
            home[i] = lm_home(keys[i], self.tcap[i + 2])
            __builtin_prefetch(&self.table[i + 2][home[i]])
        for i in range(nctx):
            kk = keys[i]
            tab = self.table[i + 2]
            cap = self.tcap[i + 2]
            j = home[i]
            e = NULL
            while tab[j].key != 0:
                if tab[j].key == kk:
                    e = &tab[j]
                    break
                j += 1
                if j == cap:
                    j = 0
            if e == NULL:
                break
            prob = e.prob
            matched = i + 1
            if ext and i + 1 < self.order - 1:
                if e.backoff == 0.0 and signbit(e.backoff):   # -0.0
                    ext = False
                else:
                    out.words[i + 1] = s.words[i]
                    out.backoff[i + 1] = e.backoff
                    out.len = i + 2
        for i in range(matched, nctx):
            prob += s.backoff[i]
        return prob

    def bag_automaton(self, const int32_t[::1] words, bint bos=True, long max_states=200000):
        """The LM restricted to the words of a bag, as a deterministic weighted automaton
        (GYRO's G, de Gispert et al. 2014, section 2.3), exact: every state has one arc per
        bag word with the backed-off log10 probability.

        words: int32[D] LM ids of the bag's distinct words; bos: start in the ``<s>`` state
        (else in the empty context).  States are the LM query states reachable from the
        start by bag words (the matched context, KenLM's state); state 0 is the start.
        Returns (src int32[A], word int32[A] index into ``words``, dst int32[A], lp float32[A]
        log10 p, final float32[S] log10 p(``</s>`` | state)).  Raises MemoryError beyond
        ``max_states`` states.
        """
        cdef int D = words.shape[0], j, i
        cdef LMState cur, nxt, tmp
        ids = {}
        states = []
        cdef LMState* buf = <LMState*>malloc(max(1, max_states) * sizeof(LMState))
        if buf == NULL:
            raise MemoryError()
        src, wd, dst, lps, fin = [], [], [], [], []
        try:
            if bos:
                self.begin(&cur)
            else:
                cur.len = 0
            buf[0] = cur
            ids[tuple(cur.words[i] for i in range(cur.len))] = 0
            n = 1
            k = 0
            while k < n:
                cur = buf[k]
                fin.append(self.score(&cur, self.eos, &tmp))
                for j in range(D):
                    lp = self.score(&cur, words[j], &nxt)
                    key = tuple(nxt.words[i] for i in range(nxt.len))
                    t = ids.get(key)
                    if t is None:
                        if n >= max_states:
                            raise MemoryError(f"the bag's LM automaton exceeds {max_states} states")
                        t = n
                        ids[key] = t
                        buf[n] = nxt
                        n += 1
                    src.append(k)
                    wd.append(j)
                    dst.append(t)
                    lps.append(lp)
                k += 1
        finally:
            free(buf)
        return (np.asarray(src, dtype=np.int32), np.asarray(wd, dtype=np.int32), np.asarray(dst, dtype=np.int32),
                np.asarray(lps, dtype=np.float32), np.asarray(fin, dtype=np.float32))

    cdef void prefetch(self, const LMState* s, int32_t w) noexcept nogil:
        """Prefetch the home slots that score(s, w) will probe: call it for a batch of
        independent queries, then score them, so their cache misses overlap."""
        cdef int i, nctx = s.len
        cdef uint64_t k
        if w < 0 or w >= self.V:
            w = self.unk
        if nctx > self.order - 1:
            nctx = self.order - 1
        __builtin_prefetch(&self.uni[2 * w])
        k = lm_h1(w)
        for i in range(nctx):
            k = lm_h2(k, s.words[i])
            __builtin_prefetch(&self.table[i + 2][lm_home(k if k != 0 else 1, self.tcap[i + 2])])

    def word_scores(self, const int32_t[::1] ids, bint bos=True, bint eos=True):
        """log10 p of every word of one sentence (and of ``</s>`` last when ``eos``): float64[T(+1)]."""
        cdef Py_ssize_t T = ids.shape[0], t
        out = np.zeros(T + (1 if eos else 0), dtype=np.float64)
        cdef double[::1] o = out
        cdef LMState a, b
        if bos:
            self.begin(&a)
        else:
            a.len = 0
        for t in range(T):
            o[t] = self.score(&a, ids[t], &b)
            a = b
        if eos:
            o[T] = self.score(&a, self.eos, &b)
        return out

    cdef double walk(self, LMState* s, const int32_t* ids, Py_ssize_t n, bint bos) noexcept nogil:
        """Start ``s`` (after ``<s>`` when ``bos``, else empty) and advance it over the ``n`` word
        ids; returns their summed log10 probability."""
        cdef LMState b
        cdef double acc = 0.0
        cdef Py_ssize_t t
        if bos:
            self.begin(s)
        else:
            s.len = 0
        for t in range(n):
            acc += self.score(s, ids[t], &b)
            s[0] = b
        return acc

    def total(self, const int32_t[::1] ids, bint bos=True, bint eos=True):
        """log10 p of one sentence of word ids (the sum of :meth:`word_scores`, added in order):
        float.  The realiser's rescoring of a domain's orders calls it per order."""
        cdef double acc
        cdef LMState a, b
        with nogil:
            acc = self.walk(&a, &ids[0] if ids.shape[0] else NULL, ids.shape[0], bos)
            if eos:
                acc += self.score(&a, self.eos, &b)
        return acc

    def next_scores(self, const int32_t[::1] history, const int32_t[::1] words, bint bos=True):
        """log10 p of each of ``words`` after ``history`` (word ids; after ``<s>`` when ``bos``):
        float64[len(words)].  The choice of forms scores a hypothesis' candidates in one call."""
        cdef Py_ssize_t W = words.shape[0], t
        out = np.zeros(W, dtype=np.float64)
        cdef double[::1] o = out
        cdef LMState a, b
        with nogil:
            self.walk(&a, &history[0] if history.shape[0] else NULL, history.shape[0], bos)
            for t in range(W):
                o[t] = self.score(&a, words[t], &b)
        return out

    def state_walk(self, const int32_t[::1] ids):
        """Testing aid: (log10 per word, state lengths) scoring ``ids`` state by state after ``<s>``."""
        cdef Py_ssize_t T = ids.shape[0], t
        cdef LMState a, b
        probs, lens = [], []
        self.begin(&a)
        for t in range(T):
            probs.append(self.score(&a, ids[t], &b))
            a = b
            lens.append(a.len)
        return probs, lens

    def time_queries(self, const int32_t[::1] ids, const int64_t[::1] starts, int repeats=1):
        """Speed probe: score every sentence ``repeats`` times without the GIL.

        Returns (queries, seconds, checksum) where queries counts score() calls (words and
        ``</s>``).
        """
        cdef Py_ssize_t S = starts.shape[0] - 1, i, t
        cdef long long q = 0
        cdef int r
        cdef double tot = 0.0, t0
        cdef LMState a, b
        with nogil:
            t0 = _now()
            for r in range(repeats):
                for i in range(S):
                    self.begin(&a)
                    for t in range(starts[i], starts[i + 1]):
                        tot += self.score(&a, ids[t], &b)
                        a = b
                        q += 1
                    tot += self.score(&a, self.eos, &b)
                    q += 1
            t0 = _now() - t0
        return q, t0, tot


def keys_of(const int32_t[:, ::1] rows):
    """n-gram keys (uint64[m]) of int32[m, n] rows, computed as queries compute them (testing aid)."""
    cdef Py_ssize_t m = rows.shape[0], n = rows.shape[1], i, j
    out = np.zeros(m, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    cdef uint64_t k
    for i in range(m):
        k = lm_h1(rows[i, n - 1])
        for j in range(n - 2, -1, -1):
            k = lm_h2(k, rows[i, j])
        o[i] = k
    return out


cdef Py_ssize_t _utf8_error(const unsigned char* data, Py_ssize_t n) noexcept nogil:
    """:func:`utf8_error_offset` on a raw buffer."""
    cdef Py_ssize_t i = 0, k, need
    cdef unsigned char c, c1
    while i < n:
        c = data[i]
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            need = 1
        elif 0xE0 <= c <= 0xEF:
            need = 2
        elif 0xF0 <= c <= 0xF4:
            need = 3
        else:
            return i
        if i + need >= n:
            return i
        c1 = data[i + 1]
        if (c == 0xE0 and not (0xA0 <= c1 <= 0xBF)) or (c == 0xED and not (0x80 <= c1 <= 0x9F)) or \
                (c == 0xF0 and not (0x90 <= c1 <= 0xBF)) or (c == 0xF4 and not (0x80 <= c1 <= 0x8F)):
            return i
        for k in range(1, need + 1):
            if (data[i + k] & 0xC0) != 0x80:
                return i
        i += need + 1
    return -1


def utf8_error_offset(const unsigned char[::1] data):
    """Offset (int) of the first byte of ``data`` where it stops being well-formed UTF-8 (RFC
    3629: no overlong forms, surrogates or code points above U+10FFFF), or -1: the check
    ``bytes.decode("utf-8")`` makes, without building the string (``wo lm score`` validates its
    input with it; 16 MB in a few ms)."""
    cdef Py_ssize_t n = data.shape[0], r
    if n == 0:
        return -1
    with nogil:
        r = _utf8_error(&data[0], n)
    return r
