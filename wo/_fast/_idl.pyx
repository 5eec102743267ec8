# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Intersection of an IDL-graph with an n-gram LM by on-the-fly unfolding (Soricut & Marcu
2005, section 3): IDL-NGLM-BFS, IDL-NGLM-A* (and its greedy variant A*_k) and the
probabilistic beam B_p.

A state of the unfolded automaton is a cut of the IDL-graph plus the LM history (the last
N-1 tokens); states are recombined on (cut, history) through a 64-bit hash.  Each state is a
C struct in one growing array, its cut in one int32 pool; the queue is the core's binary heap
(wo/_fast/_agenda).  Scores are log10 probabilities; the heuristic is an upper bound on the
log10 probability still to come (the paper's admissible estimate: each unused word's best LM
probability over the (N-1)-word contexts still available, with the IDL structure taken into
account: the best disjunct, every interleave branch).
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from ._typedefs cimport eid_t, int32_t, uint64_t, uint8_t
from ._lm cimport NgramModel, LMState, lm_mix, LM_MAX_ORDER
from ._agenda cimport Heap, SigMap, heap_init, heap_free, heap_push, heap_pop, sigmap_reset, sigmap_free, sigmap_find
from ._utils cimport grow, now as _now

ALGORITHMS = {"bfs": 0, "astar": 1, "greedy-astar": 2, "beam": 3}
STATUS = {0: "ok", 1: "max-states", 2: "timeout", 3: "no-path"}

cdef int _contexts(NgramModel lm, const int32_t[::1] type_lm, const int32_t[::1] alphabet, int bos_type,
                   int m, int32_t[:, ::1] cx, float[:, ::1] L, int row):
    """Rows ``row``.. of the candidate tables for every context of m alphabet types (after
    ``<s>`` when bos_type >= 0): the context's types into cx, every type's log10 p into L.
    Returns the next free row."""
    cdef int A = alphabet.shape[0], Tn = type_lm.shape[0], j, t, off = 1 if bos_type >= 0 else 0
    cdef LMState st[MAXK + 1]
    cdef LMState tmp
    cdef int32_t digits[MAXK]
    for j in range(m):
        digits[j] = 0
    while True:
        if off:
            lm.begin(&st[0])
            cx[row, 0] = bos_type
        else:
            st[0].len = 0
        for j in range(m):
            cx[row, off + j] = alphabet[digits[j]]
            lm.score(&st[j], type_lm[alphabet[digits[j]]], &st[j + 1])
        for t in range(Tn):               # independent queries: overlap their cache misses
            lm.prefetch(&st[m], type_lm[t])
        for t in range(Tn):
            L[t, row] = lm.score(&st[m], type_lm[t], &tmp)
        row += 1
        j = m - 1                   # next context (odometer over the m digits)
        while j >= 0:
            digits[j] += 1
            if digits[j] < A:
                break
            digits[j] = 0
            j -= 1
        if j < 0:
            return row


def build_candidates(NgramModel lm, const int32_t[::1] type_lm, const int32_t[::1] alphabet,
                     int bos_type, int K):
    """The candidate contexts of the A* heuristic and every type's log10 probability in each.

    Contexts: every sequence of K types over ``alphabet`` (the expression's types without
    ``<s>`` and ``</s>``) and ``<s>`` followed by 0..K-1 of them.  Returns (ctx int32[C, K]
    type ids, oldest first, -1 padded; lp float32[types, C] log10 p(type | ctx); order
    int32[types, C] the contexts by decreasing lp).  The row of ``<s>`` is 0 (it is free).
    """
    cdef int A = alphabet.shape[0], Tn = type_lm.shape[0], C = 0, j
    cdef long long full = 1
    for j in range(K):
        full *= A
    cdef long long pre = 0, pw = 1
    if bos_type >= 0:
        for j in range(K):
            pre += pw
            pw *= A
    C = <int>(full + pre)
    ctx = np.full((C, max(K, 1)), -1, dtype=np.int32)
    lp = np.zeros((Tn, C), dtype=np.float32)
    cdef int32_t[:, ::1] cx = ctx
    cdef float[:, ::1] L = lp
    cdef int row = 0, length
    # first the <s>-prefixed contexts of length 1..K, then the full ones
    if bos_type >= 0:
        for length in range(1, (K if A > 0 else 1) + 1):
            row = _contexts(lm, type_lm, alphabet, bos_type, length - 1, cx, L, row)
    if A > 0 and K > 0:
        row = _contexts(lm, type_lm, alphabet, -1, K, cx, L, row)
    ctx = np.ascontiguousarray(ctx[:row])
    lp = np.ascontiguousarray(lp[:, :row])
    if bos_type >= 0:
        lp[bos_type, :] = 0.0
    order = np.ascontiguousarray(np.argsort(-lp, axis=1, kind="stable").astype(np.int32))
    return ctx, lp, order


cdef class IDLSearch:
    """Unfold one compiled IDL-graph (wo.idl.graph.IDLGraph) against an n-gram LM.

    Built from the graph's arrays, the LM (``wo._fast._lm.NgramModel``), the LM id of each
    token and the heuristic's candidate tables (:func:`build_candidates`).  :meth:`run` does
    one search; all memory is owned here and freed with the object.
    """

    def __init__(self, graph, NgramModel lm, const int32_t[::1] tok_lm, ctx, cand_lp, cand_order,
                 int bos_type, int eos_type, bint use_h=True, alphabet=None):
        cdef const int32_t[::1] a
        self.lm = lm
        self.lmK = lm.order - 1
        if self.lmK > MAXK:
            self.lmK = MAXK
        arrays = [graph.kind, graph.depth, graph.tok, graph.nxt, graph.lst_off, graph.lst, graph.twin,
                  graph.encl, graph.join_off, graph.join_end, graph.join_target, graph.join_parent,
                  graph.mv_off, graph.mv_tok, graph.mv_target, graph.mv_add_off, graph.mv_add,
                  graph.tok_type, np.ascontiguousarray(tok_lm, dtype=np.int32),
                  np.ascontiguousarray(ctx, dtype=np.int32), np.ascontiguousarray(cand_lp, dtype=np.float32),
                  np.ascontiguousarray(cand_order, dtype=np.int32)]
        # empty arrays get one element so their pointers are valid
        arrays = [np.ascontiguousarray(x) if len(x) else np.zeros(1, dtype=np.asarray(x).dtype) for x in arrays]
        self._refs = arrays
        cdef const int32_t* p[22]
        cdef int i
        for i in range(22):
            if i == 20:
                continue
            a = arrays[i].reshape(-1)
            p[i] = &a[0]
        cdef const float[::1] fl = arrays[20].reshape(-1)
        self.kind = p[0]
        self.depth = p[1]
        self.vtok = p[2]
        self.nxt = p[3]
        self.lst_off = p[4]
        self.lst = p[5]
        self.twin = p[6]
        self.encl = p[7]
        self.join_off = p[8]
        self.join_end = p[9]
        self.join_target = p[10]
        self.join_parent = p[11]
        self.mv_off = p[12]
        self.mv_tok = p[13]
        self.mv_target = p[14]
        self.mv_add_off = p[15]
        self.mv_add = p[16]
        self.tok_type = p[17]
        self.tok_lm = p[18]
        self.ctx = p[19]
        self.cand_lp = &fl[0]
        self.cand_order = p[21]
        self.V = len(graph.kind)
        self.T = len(graph.tokens)
        self.NT = len(graph.types)
        self.K = np.asarray(ctx).shape[1] if np.asarray(ctx).ndim == 2 else 1
        self.C = np.asarray(ctx).shape[0]
        self.bos_type, self.eos_type = bos_type, eos_type
        self.use_h = use_h and self.C > 0
        nj = max(1, len(graph.join_target))
        self.lpath = <int32_t*>malloc(self.V * sizeof(int32_t))
        self.vmark = <int32_t*>malloc(self.V * sizeof(int32_t))
        self.rmark = <int32_t*>malloc(self.V * sizeof(int32_t))
        self.rval = <double*>malloc(self.V * sizeof(double))
        self.scratch = <int32_t*>malloc((self.V + 1) * sizeof(int32_t))
        self.scratch2 = <int32_t*>malloc((self.V + 1) * sizeof(int32_t))
        self.tmark = <int32_t*>malloc(self.NT * sizeof(int32_t))
        self.tbmark = <int32_t*>malloc(self.NT * sizeof(int32_t))
        self.tbest = <double*>malloc(self.NT * sizeof(double))
        self.jmark = <int32_t*>malloc(nj * sizeof(int32_t))
        self.lvbest = <double*>malloc((self.T + 2) * sizeof(double))
        # the candidate tables hold log10 p(type | history) for every history of lmK types
        # (and <s> + fewer) when they were built with K = N-1 over the alphabet
        self.apos = <int32_t*>malloc(max(1, self.NT) * sizeof(int32_t))
        self.type_lm = <int32_t*>malloc(max(1, self.NT) * sizeof(int32_t))
        if self.apos == NULL or self.type_lm == NULL:
            raise MemoryError()
        for i in range(self.T):
            self.type_lm[self.tok_type[i]] = self.tok_lm[i]
        self.tab = 0
        if alphabet is not None and self.use_h and self.K == self.lmK and self.K > 0:
            for i in range(self.NT):
                self.apos[i] = -1
            al = np.asarray(alphabet, dtype=np.int32)
            self.A = len(al)
            for i in range(self.A):
                self.apos[al[i]] = i
            self.apow[0] = 1
            for i in range(1, self.K + 1):
                self.apow[i] = self.apow[i - 1] * self.A
            self.pre = 0
            if bos_type >= 0:
                for i in range(self.K):
                    self.pre += self.apow[i]
            self.tab = self.pre + self.apow[self.K] == self.C
        if (self.lpath == NULL or self.vmark == NULL or self.rmark == NULL or self.rval == NULL
                or self.scratch == NULL or self.scratch2 == NULL or self.tmark == NULL
                or self.tbmark == NULL or self.tbest == NULL or self.jmark == NULL or self.lvbest == NULL):
            raise MemoryError()
        memset(self.vmark, 0, self.V * sizeof(int32_t))
        memset(self.rmark, 0, self.V * sizeof(int32_t))
        memset(self.tmark, 0, self.NT * sizeof(int32_t))
        memset(self.tbmark, 0, self.NT * sizeof(int32_t))
        memset(self.jmark, 0, nj * sizeof(int32_t))
        self.stamp = 0
        for i in range(self.V):
            self.lpath[i] = -1
        for i in range(self.V):
            self._lpath(i)
        self.capS = 1024
        self.S = <IState*>malloc(self.capS * sizeof(IState))
        self.cappool = 4096
        self.pool = <int32_t*>malloc(self.cappool * sizeof(int32_t))
        self.capbpool = 4096
        self.bpool = <double*>malloc(self.capbpool * sizeof(double))
        if self.S == NULL or self.pool == NULL or self.bpool == NULL:
            raise MemoryError()
        heap_init(&self.q, 1024)
        self.seen.sig = NULL
        self.seen.val = NULL
        self.seen.cap = 0
        sigmap_reset(&self.seen, 1024)

    def __dealloc__(self):
        free(self.lpath); free(self.vmark); free(self.rmark); free(self.rval); free(self.scratch)
        free(self.scratch2); free(self.tmark); free(self.tbmark); free(self.tbest); free(self.jmark)
        free(self.lvbest); free(self.S); free(self.pool)
        free(self.bpool); free(self.apos); free(self.type_lm)
        heap_free(&self.q)
        sigmap_free(&self.seen)

    cdef int _lpath(self, int v) noexcept nogil:
        """Longest number of tokens from v to the end of its branch (END/FINAL: 0)."""
        cdef int k, i, best, s
        if self.lpath[v] >= 0:
            return self.lpath[v]
        k = self.kind[v]
        if k == K_WORD:
            best = 1 + self._lpath(self.nxt[v])
        elif k == K_CHOICE:
            best = 0
            for i in range(self.lst_off[v], self.lst_off[v + 1]):
                s = self._lpath(self.lst[i])
                if s > best:
                    best = s
        elif k == K_SPLIT:
            best = self._lpath(self.nxt[v])
            for i in range(self.lst_off[v], self.lst_off[v + 1]):
                best += self._lpath(self.lst[i])
        else:
            best = 0
        self.lpath[v] = best
        return best

    # ------------------------------------------------------------------ heuristic
    cdef void _mark_avail(self, int v) noexcept nogil:
        """Count in tmark the types of the tokens reachable from v (all disjuncts)."""
        cdef int k, i
        while True:
            if self.vmark[v] == self.stamp:
                return
            self.vmark[v] = self.stamp
            k = self.kind[v]
            if k == K_WORD:
                self.tmark[self.tok_type[self.vtok[v]]] += 1
                v = self.nxt[v]
            elif k == K_CHOICE or k == K_SPLIT:
                # a split's join target is reached through its branches' END vertices
                for i in range(self.lst_off[v], self.lst_off[v + 1]):
                    self._mark_avail(self.lst[i])
                return
            elif k == K_END:
                v = self.join_target[self.nxt[v]]
            else:
                return

    cdef double _type_best(self, int y) noexcept nogil:
        """Best log10 p of type y over the candidate contexts that the available tokens can
        still form (tmark: available occurrences per type; y's own occurrence excluded)."""
        cdef int i, c, j, ok, z, need, jj
        cdef const int32_t* order
        cdef const int32_t* cx
        if self.tbmark[y] == self.stamp:
            return self.tbest[y]
        order = &self.cand_order[<long>y * self.C]
        cdef double best = 0.0
        for i in range(self.C):
            c = order[i]
            cx = &self.ctx[<long>c * self.K]
            ok = 1
            for j in range(self.K):
                z = cx[j]
                if z < 0:
                    continue
                need = 1 if z != y else 2
                for jj in range(j):
                    if cx[jj] == z:
                        need += 1
                if self.tmark[z] < need:
                    ok = 0
                    break
            if ok:
                best = self.cand_lp[<long>y * self.C + c]
                break
        self.tbmark[y] = self.stamp
        self.tbest[y] = best
        return best

    cdef double _R(self, int v) noexcept nogil:
        """Upper bound of the log10 probability from v to the end of its branch."""
        cdef int k, i
        cdef double r, s
        if self.rmark[v] == self.stamp:
            return self.rval[v]
        k = self.kind[v]
        if k == K_WORD:
            r = self._type_best(self.tok_type[self.vtok[v]]) + self._R(self.nxt[v])
        elif k == K_CHOICE:
            r = -1e30
            for i in range(self.lst_off[v], self.lst_off[v + 1]):
                s = self._R(self.lst[i])
                if s > r:
                    r = s
        elif k == K_SPLIT:
            r = self._R(self.nxt[v])
            for i in range(self.lst_off[v], self.lst_off[v + 1]):
                r += self._R(self.lst[i])
        else:
            r = 0.0
        self.rmark[v] = self.stamp
        self.rval[v] = r
        return r

    cdef void _estimate(self, IState* st) noexcept nogil:
        """Fill st.h (heuristic) and st.pot (longest remaining number of tokens)."""
        cdef int i, v, j, pot = 0
        cdef double h = 0.0
        cdef const int32_t* cut = &self.pool[st.cut]
        self.stamp += 1
        if self.need_pot:
            for i in range(st.ncut):
                pot += self.lpath[cut[i]]
                j = self.encl[cut[i]]
                while j >= 0 and self.jmark[j] != self.stamp:
                    self.jmark[j] = self.stamp
                    pot += self.lpath[self.join_target[j]]
                    j = self.join_parent[j]
        st.pot = pot
        if not self.use_h:
            st.h = 0.0
            return
        memset(self.tmark, 0, self.NT * sizeof(int32_t))
        for i in range(st.ntail):
            self.tmark[st.tail[i]] += 1
        for i in range(st.ncut):
            self._mark_avail(cut[i])
        self.stamp += 1          # fresh marks for the R memo, the type memo and the joins
        for i in range(st.ncut):
            v = cut[i]
            h += self._R(v)
            j = self.encl[v]
            while j >= 0 and self.jmark[j] != self.stamp:
                self.jmark[j] = self.stamp
                h += self._R(self.join_target[j])
                j = self.join_parent[j]
        st.h = h

    cdef int _row(self, const IState* st) noexcept nogil:
        """Row of the candidate tables whose context is st's history, -1 if none."""
        cdef int i, r = 0, off = 0, i0 = 0
        if st.ntail > 0 and st.tail[0] == self.bos_type:
            for i in range(st.ntail - 1):
                off += self.apow[i]
            i0 = 1
        elif st.ntail == self.K:
            off = self.pre
        else:
            return -1
        for i in range(i0, st.ntail):
            if self.apos[st.tail[i]] < 0:
                return -1
            r = r * self.A + self.apos[st.tail[i]]
        return off + r

    # ------------------------------------------------------------------ states
    cdef uint64_t _key(self, const int32_t* cut, int n, const int32_t* tail, int nt) noexcept nogil:
        cdef uint64_t k = <uint64_t>0x9E3779B97F4A7C15 ^ <uint64_t>n
        cdef int i
        for i in range(n):
            k = lm_mix(k ^ (<uint64_t>cut[i] + 1))
        k = lm_mix(k ^ (<uint64_t>0xABCDEF + <uint64_t>nt))
        for i in range(nt):
            k = lm_mix(k ^ (<uint64_t>tail[i] + 7))
        return k

    cdef int _normalise(self, int32_t* c, int n) noexcept nogil:
        """Joins of complete interleaves (repeatedly), then sort; returns the new length."""
        cdef int i, j, e, changed = 1, all_in, m, x
        while changed:
            changed = 0
            self.stamp += 1
            for i in range(n):
                self.vmark[c[i]] = self.stamp
            for i in range(n):
                if self.kind[c[i]] == K_END:
                    j = self.nxt[c[i]]
                    all_in = 1
                    for e in range(self.join_off[j], self.join_off[j + 1]):
                        if self.vmark[self.join_end[e]] != self.stamp:
                            all_in = 0
                            break
                    if all_in:
                        m = 0
                        for e in range(n):
                            if self.kind[c[e]] != K_END or self.nxt[c[e]] != j:
                                c[m] = c[e]
                                m += 1
                        c[m] = self.join_target[j]
                        n = m + 1
                        changed = 1
                        break
        for i in range(1, n):          # insertion sort (cuts are short)
            x = c[i]
            j = i - 1
            while j >= 0 and c[j] > x:
                c[j + 1] = c[j]
                j -= 1
            c[j + 1] = x
        return n

    cdef int _movable(self, const int32_t* cut, int n, int32_t* out) noexcept nogil:
        """The vertices of the cut allowed to move (highest rank, no earlier twin in the cut)."""
        cdef int i, top = -1, m = 0, v
        self.stamp += 1
        for i in range(n):
            self.vmark[cut[i]] = self.stamp
            if self.depth[cut[i]] > top:
                top = self.depth[cut[i]]
        for i in range(n):
            v = cut[i]
            if self.depth[v] != top:
                continue
            if self.twin[v] >= 0 and self.vmark[self.twin[v]] == self.stamp:
                continue
            if self.mv_off[v] == self.mv_off[v + 1]:
                continue
            out[m] = v
            m += 1
        return m

    cdef int _apply(self, const IState* st, int v, int mv, int32_t* c) noexcept nogil:
        """The cut after move mv of vertex v (normalised, sorted) into c; returns its length."""
        cdef const int32_t* cut = &self.pool[st.cut]
        cdef int i, n = 0
        for i in range(st.ncut):
            if cut[i] != v:
                c[n] = cut[i]
                n += 1
        c[n] = self.mv_target[mv]
        n += 1
        for i in range(self.mv_add_off[mv], self.mv_add_off[mv + 1]):
            c[n] = self.mv_add[i]
            n += 1
        return self._normalise(c, n)

    cdef double _step(self, const IState* st, int t, LMState* out, int32_t* tail, int* nt) noexcept nogil:
        """log10 p of token t after st (``<s>``: 0 and the LM's begin state); the next LM
        state and history into out/tail/nt."""
        cdef int w = self.tok_lm[t], y = self.tok_type[t], i, row
        cdef double lp
        cdef LMState tmp
        if y == self.bos_type:
            self.lm.begin(out)
            lp = 0.0
        elif self.tab:
            # the candidate tables hold every log10 p the search can ask for (same values as
            # the LM's); the LM state is then not kept (len 0) and rebuilt from the history
            # in the rare case of a history the tables lack
            row = self._row(st)
            if row >= 0:
                lp = self.cand_lp[<long>y * self.C + row]
                out.len = 0
            else:
                self._lm_state(st, &tmp)
                lp = self.lm.score(&tmp, w, out)
        else:
            lp = self.lm.score(&st.lm, w, out)
        self._shift(st, y, tail, nt)
        return lp

    cdef void _lm_state(self, const IState* st, LMState* out) noexcept nogil:
        """The LM state after st's history (its last N-1 types, or <s> and fewer)."""
        cdef LMState a
        cdef int i, i0 = 0
        if st.ntail > 0 and st.tail[0] == self.bos_type:
            self.lm.begin(&a)
            i0 = 1
        else:
            a.len = 0
        out[0] = a
        for i in range(i0, st.ntail):
            self.lm.score(&a, self.type_lm[st.tail[i]], out)
            a = out[0]

    cdef void _shift(self, const IState* st, int y, int32_t* tail, int* nt) noexcept nogil:
        """The history after st followed by type y into tail/nt."""
        cdef int i
        if st.ntail < self.lmK:
            for i in range(st.ntail):
                tail[i] = st.tail[i]
            tail[st.ntail] = y
            nt[0] = st.ntail + 1
        else:
            for i in range(1, st.ntail):
                tail[i - 1] = st.tail[i]
            if self.lmK > 0:
                tail[self.lmK - 1] = y
            nt[0] = self.lmK

    cdef int _new_state(self, int ncut) noexcept nogil:
        if grow(<void**>&self.S, &self.capS, sizeof(IState), self.nS + 1) < 0:
            return -1
        if grow(<void**>&self.pool, &self.cappool, sizeof(int32_t), self.npool + ncut) < 0:
            return -1
        self.S[self.nS].cut = self.npool
        self.S[self.nS].ncut = ncut
        self.S[self.nS].bnd = -1
        self.npool += ncut
        self.nS += 1
        return self.nS - 1

    cdef double _prio(self, int alg, const IState* st) noexcept nogil:
        if alg == 0 or alg == 3:
            return <double>st.pot + 1e-9 * (st.g + st.h)    # by length, best first within it
        return st.g + st.h

    cdef int _greedy_complete(self, int s, int32_t* toks, int* ntoks, double* g) noexcept nogil:
        """Complete state s greedily (best next-token LM probability at each step); the tokens
        of the whole path into toks.  Returns 0, -1 on memory failure."""
        cdef IState cur, nx
        cdef int i, n, v, mv, bv, bm, nt, bn, j
        cdef double lp, best
        cdef int32_t tail[MAXK]
        cdef int32_t* movable = self.scratch2
        cdef int32_t* c
        # path to s
        n = 0
        j = s
        while j >= 0 and self.S[j].parent >= 0:
            n += 1
            j = self.S[j].parent
        ntoks[0] = n
        j = s
        i = n - 1
        while j >= 0 and self.S[j].parent >= 0:
            toks[i] = self.S[j].tok
            i -= 1
            j = self.S[j].parent
        cur = self.S[s]
        g[0] = cur.g
        # cur's cut must stay valid while we build the next ones: keep a private copy in the pool
        while not (cur.ncut == 1 and self.pool[cur.cut] == 1):
            n = self._movable(&self.pool[cur.cut], cur.ncut, movable)
            best = -1e300
            bv = -1
            bm = -1
            for i in range(n):
                v = movable[i]
                for mv in range(self.mv_off[v], self.mv_off[v + 1]):
                    lp = self._step(&cur, self.mv_tok[mv], &nx.lm, tail, &nt)
                    if lp > best:
                        best, bv, bm = lp, v, mv
            if bv < 0:
                return -1
            if grow(<void**>&self.pool, &self.cappool, sizeof(int32_t), self.npool + self.V + 1) < 0:
                return -1
            c = &self.pool[self.npool]
            bn = self._apply(&cur, bv, bm, c)
            g[0] += self._step(&cur, self.mv_tok[bm], &nx.lm, nx.tail, &nt)
            nx.ntail = nt
            toks[ntoks[0]] = self.mv_tok[bm]
            ntoks[0] += 1
            nx.cut = self.npool
            nx.ncut = bn
            self.npool += bn
            cur = nx
        return 0

    cdef double _bytes(self) noexcept nogil:
        """Bytes held by the search's growing arrays (states, cut pool, bound pool, agenda, seen)."""
        return (<double>self.capS * sizeof(IState) + <double>self.cappool * sizeof(int32_t)
                + <double>self.capbpool * sizeof(double) + <double>self.q.cap * (sizeof(double) + sizeof(eid_t))
                + <double>self.seen.cap * (sizeof(uint64_t) + sizeof(eid_t)))

    def run(self, str algorithm="astar", int k=5, double beam_log10=-1.0, long max_states=1000000,
            double timeout=0.0, bint count_only=False, bint lookahead=True, double max_mb=0.0):
        """One search.  algorithm: bfs | astar | greedy-astar (A*_k: unfold only states whose
        path is at least the longest unfolded path minus k tokens) | beam (B_p: a state is
        unfolded only if its estimated log10 probability g + h is within ``beam_log10`` =
        log10 p of the best at its length).  max_states bounds the states created; max_mb
        (MiB, 0 = none) the memory of the search's arrays (a state of a long bag holds its
        whole cut: 1,000 words and a million states were 6.7 GB); timeout (seconds, 0 = none)
        bounds the time; each returns the best completed path, else the greedy completion of
        the longest state (status max-states for both bounds on space).  count_only: unfold without LM scores
        (the full unfolding's size).  lookahead (A* and A*_k): when a state is popped, the
        heuristic is tightened by one step: the LM probabilities of its next tokens are known
        exactly, so h' = h + max over next tokens w of (log10 p(w | history) - bound(w)), still
        admissible and consistent (h of a successor via w is at most h - bound(w)); the
        scores are kept for the expansion, so no LM query is made twice.

        Returns dict(tokens=int32 token indices of the best path, log10_prob (float, the
        path's LM score), states (unfolded), created (states in the unfolding so far), status
        (ok | max-states | timeout | no-path), seconds).  Raises ValueError for an unknown
        algorithm, MemoryError.
        """
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {algorithm!r} ({', '.join(ALGORITHMS)})")
        cdef int alg = ALGORITHMS[algorithm]
        cdef double t0 = _now()
        cdef int status = 0, s, ns, i, bj = 0, v, mv, n, nm = 0, nt, slot, y, evals = 0, pops = 0, unfolded = 0, maxlen = 0, best_final = -1
        cdef bint found
        cdef double lp, g, thr, hb = 0.0, adj, d, top = 0.0, rem = 0.0
        cdef IState* st
        cdef IState* x
        cdef LMState lmn
        cdef int32_t tail[MAXK]
        cdef int32_t* movable
        cdef int32_t* c = self.scratch
        cdef uint64_t key
        cdef int use_h0 = self.use_h
        if count_only or alg == 0:
            self.use_h = 0
        cdef bint lazy = self.use_h and (alg == 1 or alg == 2)
        lookahead = lookahead and lazy
        self.need_pot = alg == 0 or alg == 3          # the BFS/beam queue order
        self.nS = 0
        self.npool = 0
        self.nbpool = 0
        self.q.size = 0
        sigmap_reset(&self.seen, 1024)
        for i in range(self.T + 2):
            self.lvbest[i] = -1e300
        movable = self.scratch2        # shared with the greedy completion, which runs after the loop
        with nogil:
            s = self._new_state(1)
            st = &self.S[s]
            self.pool[st.cut] = 0
            st.g = 0.0
            st.parent = -1
            st.tok = -1
            st.nwords = 0
            st.ntail = 0
            st.closed = 0
            st.lm.len = 0
            st.hx = 0 if lookahead else 1
            self._estimate(st)
            slot = sigmap_find(&self.seen, self._key(&self.pool[st.cut], 1, st.tail, 0), &found)
            self.seen.val[slot] = s
            heap_push(&self.q, s, self._prio(alg, st))
            while self.q.size > 0:
                if max_states > 0 and self.nS >= max_states:
                    status = 1
                    break
                if max_mb > 0 and (pops & 63) == 0 and self._bytes() > max_mb * 1048576.0:
                    status = 1
                    break
                if timeout > 0 and (unfolded & 63) == 0 and _now() - t0 > timeout:
                    status = 2
                    break
                s = heap_pop(&self.q)
                st = &self.S[s]
                if st.closed:
                    continue
                pops += 1
                if st.ncut == 1 and self.pool[st.cut] == 1:
                    st.closed = 1
                    unfolded += 1
                    if best_final < 0 or st.g > self.S[best_final].g:
                        best_final = s
                    if alg == 1 or alg == 2:
                        break
                    continue
                if alg == 2 and st.nwords < maxlen - k:
                    continue
                if alg == 3 and st.g + st.h < self.lvbest[st.nwords] + beam_log10:
                    continue
                if lookahead:
                    # A* with the one-step lookahead and partial expansion: on its first pop a
                    # state's successors are scored exactly (LM) and bounded (heuristic), their
                    # keys kept relative to g in the bound pool; the state is put back unless it
                    # is still the best; when unfolded, only successors whose key reaches the
                    # queue's best are created, and the state is put back with the best key left
                    nm = self._movable(&self.pool[st.cut], st.ncut, movable)
                    if st.bnd < 0:
                        self._estimate(st)
                        evals += 1
                        hb = st.h
                        n = 0
                        for i in range(nm):
                            n += self.mv_off[movable[i] + 1] - self.mv_off[movable[i]]
                        if grow(<void**>&self.bpool, &self.capbpool, sizeof(double), self.nbpool + n) < 0:
                            status = 1
                            break
                        st.bnd = self.nbpool
                        self.nbpool += n
                        bj = st.bnd
                        adj = -1e300
                        for i in range(nm):
                            v = movable[i]
                            for mv in range(self.mv_off[v], self.mv_off[v + 1]):
                                y = self.tok_type[self.mv_tok[mv]]
                                lp = self._step(st, self.mv_tok[mv], &lmn, tail, &nt)
                                d = lp + hb - self.tbest[y]
                                self.bpool[bj] = d
                                bj += 1
                                if d > adj:
                                    adj = d
                        st.h = adj if adj < hb else hb
                        st.hx = 1
                        st.thr = 1e300
                        if self.q.size > 0 and st.g + st.h < self.q.key[0]:
                            heap_push(&self.q, s, st.g + st.h)
                            continue
                    top = self.q.key[0] if self.q.size > 0 else -1e300
                    rem = -1e300
                    if st.thr >= 1e300:
                        unfolded += 1
                        if st.nwords > maxlen:
                            maxlen = st.nwords
                else:
                    if lazy:
                        # lazy heuristic evaluation: the key was an upper bound; evaluate now
                        # and put the state back unless it is still the best
                        self._estimate(st)
                        evals += 1
                        hb = st.h
                        if not st.hx:
                            st.hx = 1
                            if self.q.size > 0 and st.g + st.h < self.q.key[0]:
                                heap_push(&self.q, s, st.g + st.h)
                                continue
                    st.closed = 1
                    unfolded += 1
                    if st.nwords > maxlen:
                        maxlen = st.nwords
                    nm = self._movable(&self.pool[st.cut], st.ncut, movable)
                bj = st.bnd - 1
                for i in range(nm):
                    v = movable[i]
                    for mv in range(self.mv_off[v], self.mv_off[v + 1]):
                        st = &self.S[s]
                        if lookahead:
                            bj += 1
                            d = st.g + self.bpool[bj]
                            if d >= st.thr:
                                continue            # created when the state was last unfolded
                            if d < top:
                                if d > rem:
                                    rem = d
                                continue            # later, if ever
                        n = self._apply(st, v, mv, c)
                        if count_only:
                            lp = 0.0
                            self._step(st, self.mv_tok[mv], &lmn, tail, &nt)
                        else:
                            lp = self._step(st, self.mv_tok[mv], &lmn, tail, &nt)
                        if n == 1 and c[0] == 1:
                            nt = 0          # one final state
                        g = st.g + lp
                        key = self._key(c, n, tail, nt)
                        slot = sigmap_find(&self.seen, key, &found)
                        if slot < 0:
                            status = 1
                            break
                        if found:
                            x = &self.S[self.seen.val[slot]]
                            if x.closed or x.g >= g:
                                continue
                            x.g = g
                            x.parent = s
                            x.tok = self.mv_tok[mv]
                            x.lm = lmn
                            x.nwords = st.nwords + 1
                            ns = self.seen.val[slot]
                        else:
                            ns = self._new_state(n)
                            if ns < 0:
                                status = 1
                                break
                            self.seen.val[slot] = ns
                            st = &self.S[s]
                            x = &self.S[ns]
                            memcpy(&self.pool[x.cut], c, n * sizeof(int32_t))
                            x.g = g
                            x.parent = s
                            x.tok = self.mv_tok[mv]
                            x.nwords = st.nwords + 1
                            x.closed = 0
                            x.lm = lmn
                            x.ntail = nt
                            memcpy(x.tail, tail, nt * sizeof(int32_t))
                            if lookahead:
                                x.h = self.bpool[bj] - lp
                                x.hx = 1 if n == 1 and c[0] == 1 else 0
                                if x.hx:
                                    x.h = 0.0
                            elif lazy:
                                # h(x) <= h(st) - (st's bound of the token just emitted)
                                x.h = hb - self.tbest[self.tok_type[self.mv_tok[mv]]]
                                x.hx = 1 if n == 1 and c[0] == 1 else 0
                                if x.hx:
                                    x.h = 0.0
                            else:
                                x.hx = 1
                                self._estimate(x)
                        if alg == 3 and x.g + x.h > self.lvbest[x.nwords]:
                            self.lvbest[x.nwords] = x.g + x.h
                        heap_push(&self.q, ns, self._prio(alg, x))
                    if status:
                        break
                if status:
                    break
                if lookahead:
                    st = &self.S[s]
                    st.thr = top
                    if rem > -1e300:
                        heap_push(&self.q, s, rem)
                    else:
                        st.closed = 1
        self.use_h = use_h0
        cdef double secs = _now() - t0      # the search (result packaging left out)
        cdef int created = self.nS
        out = np.zeros(self.T + 1, dtype=np.int32)
        cdef int32_t[::1] o = out
        cdef int no = 0, j
        if best_final >= 0:
            g = self.S[best_final].g
            j = best_final
            while self.S[j].parent >= 0:
                no += 1
                j = self.S[j].parent
            j = best_final
            i = no - 1
            while self.S[j].parent >= 0:
                o[i] = self.S[j].tok
                i -= 1
                j = self.S[j].parent
        else:
            if status == 0:
                status = 3
            # greedy completion of the longest state (ties: best g + h)
            s = 0
            for i in range(self.nS):
                if (self.S[i].nwords > self.S[s].nwords or (self.S[i].nwords == self.S[s].nwords
                        and self.S[i].g + self.S[i].h > self.S[s].g + self.S[s].h)):
                    s = i
            t0 = _now()
            if self._greedy_complete(s, &o[0], &no, &g) < 0:
                raise MemoryError()
            secs += _now() - t0
        return dict(tokens=out[:no], log10_prob=g, states=unfolded, created=created, evaluations=evals, pops=pops,
                    status=STATUS[status], seconds=secs)
