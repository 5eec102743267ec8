# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Best-first search driver for every grammar (Zhang & Clark 2015, sections 3.3-3.5).

The driver is written once against a small grammar interface (:class:`Grammar`):

* ``leaves(s)``        create the leaf edges (Algorithm 1, line 3) and push them
* ``combine(s, l, r)`` every action that joins edge l (left) with edge r (right): constraint
                       checks (can-combine), the new edge, the gold test, its features; each
                       new edge is scored and pushed by :meth:`Search.push_edge`
* ``unary(s, e)``      every action on the popped edge e alone (CCG unary rules); none by default
* ``features(s, e)``   the features of the action that built e (rescoring, updates)
* ``is_goal(s, e)``    goal test of a complete edge
* ``is_full(s, e)``    the edge covers every unit (completion stops growing it); by default
                       ``nwords == n``
* ``goal_expand``      popped goal edges are expanded too (SMT, whose goals cover >= beta*n units)
* phrase leaves        ``leaf_uend``, ``leaf_woff``, ``leaf_words``: a leaf covering a span of
                       units with a surface of several words (SMT translation options)
* ``has_glue``         the grammar may join edges no rule combines when ``Search.phase`` is 3
                       (the last completion pass, run only when nothing else found a goal)
* ``dp_signature``     the DP-signature of an edge when the grammar prunes the chart by it
* ``analysis``         the grammar's output object (dependency heads, a derivation ...)

All memory is owned by one :class:`Search` and reused across sentences (spaCy's convention):
the edge arena with its surface and bitset pools (``_arena``), the agenda and the chart
(``_agenda``), feature buffers.  The pop loop, pop budget, timeout, goal patience, the
completion phases run without the GIL and hold no Python objects.  Training (Algorithm 3)
is :class:`wo._fast._train.Trainer`, a subclass of :class:`Search` in its own module.
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport malloc, free
from libc.string cimport memset

from ._typedefs cimport feat_t, weight_t, eid_t, uint32_t, uint64_t, int32_t, int16_t, uint8_t
from ._hash cimport murmurhash3_words
from ._weights cimport dot
from ._utils cimport grow, now as _now
from ._arena cimport (Arena, Edge, arena_init, arena_free, arena_reset, new_edge, materialise,
                      disjoint, cover, scaled)
from ._agenda cimport (Heap, Chart, SigMap, heap_init, heap_free, heap_push, heap_pop, chart_init,
                       chart_free, chart_reset, chart_add, chart_id, sigmap_reset, sigmap_free, sigmap_find, pk_head_of,
                       pk_want_of)

cnp.import_array()

# status codes of a decoded sentence
cdef enum:
    S_OK = 0           # a goal edge was popped
    S_BUDGET = 1       # pop budget exhausted: greedy default output (section 3.4)
    S_TIMEOUT = 2      # wall-clock timeout: greedy default output
    S_COMPLETED = 3    # budget or timeout reached, goal found by completion over the chart
    S_GLUED = 4        # goal found by the glue merge completion (grammars with has_glue)
    S_MEMORY = 5       # the edge limit (memory bound) cut the search: default output or completion
STATUS_OK = S_OK
STATUS_COMPLETED = S_COMPLETED
STATUS_BUDGET = S_BUDGET
STATUS_TIMEOUT = S_TIMEOUT
STATUS_GLUED = S_GLUED
STATUS_MEMORY = S_MEMORY
EDGE_BYTES = 100   # measured resident bytes per edge (Edge struct, agenda entry, pools' share):
                   # a 200-word bag, 9.2 M edges, 934 MB peak in one process with its model
DEFAULT_MAX_MEMORY_MB = 1536   # default search memory per sentence: one worker stays under ~2 GB


def edges_for_memory(max_memory_mb) -> int:
    """The ``Search.edge_limit`` (edges) that keeps a decode's search memory near
    ``max_memory_mb`` MiB (EDGE_BYTES resident bytes per edge; None: DEFAULT_MAX_MEMORY_MB).
    Raises ValueError for a bound that is not positive."""
    mb = DEFAULT_MAX_MEMORY_MB if max_memory_mb is None else float(max_memory_mb)
    if not mb > 0:
        raise ValueError(f"max_memory must be positive MiB, not {max_memory_mb!r}")
    return max(1, int(mb * (1 << 20) / EDGE_BYTES))


cdef class Grammar:
    """Base class of the grammars the driver searches with (see the module docstring).

    A subclass fills ``n``, ``nleaf``, ``leaf_unit``, ``max_features``, ``use_dp`` and
    ``has_gold`` in its ``set_instance`` and overrides the cdef methods; the base methods
    fail (-1, False) so a missing override is noticed.  Not usable on its own.
    """

    cdef int leaves(self, Search s) noexcept nogil:
        return -1

    cdef int combine(self, Search s, eid_t le, eid_t re) noexcept nogil:
        return -1

    cdef int unary(self, Search s, eid_t e) noexcept nogil:
        return 0

    cdef int features(self, Search s, eid_t e) noexcept nogil:
        return 0

    cdef bint is_goal(self, Search s, eid_t e) noexcept nogil:
        return False

    cdef bint is_full(self, Search s, eid_t e) noexcept nogil:
        # the completion phases stop growing an edge that covers every unit
        return s.A.E[e].nwords == self.n

    cdef uint64_t dp_signature(self, Search s, eid_t e) noexcept nogil:
        return s.A.E[e].sig

    cdef object analysis(self, Search s, const eid_t* pieces, int npieces):
        return None


cdef class Search:
    """Agenda/chart best-first decoder over one weight vector (training: the subclass
    :class:`wo._fast._train.Trainer`).

    Parameters
    ----------
    grammar : a :class:`Grammar` subclass instance (e.g. ``wo._fast._dep.DepGrammar``); its
        current instance is what :meth:`decode` and :meth:`forced` search.
    weights : numpy.ndarray, shape (2**hash_bits,), dtype float32, C-contiguous (read-only,
        e.g. memory-mapped, is fine).
    hash_bits : int, log2 of the weight-table size; feature index = MurmurHash3 & (2**b - 1).

    ``score_cache`` (bool, default True): inside :meth:`decode` the weights are fixed
    (``frozen``), and a grammar may score actions from its own caches of partial sums (the
    dependency grammar does); False makes every action be hashed and scored afresh, as in
    training (same outputs; a switch for measurements and tests).

    Source: Zhang & Clark 2015, Algorithms 1 and 4 (decoding).
    Raises ValueError if ``weights`` is not float32 with 2**hash_bits entries; MemoryError when
    the pools cannot be allocated.
    """

    def __cinit__(self):
        self.A.E = NULL
        self.A.surf = NULL
        self.A.bits = NULL
        self.agenda.key = NULL
        self.agenda.id = NULL
        chart_init(&self.chart)
        self.seen.sig = NULL
        self.seen.val = NULL
        self.seen.cap = 0
        self.fbuf = NULL
        self.tbuf = NULL
        self.rtbuf = NULL
        self.rtval = NULL
        self.nreal = 0
        self.gold_ag = NULL
        self.phase = 0
        self.frozen = False
        self.score_cache = True
        self.goals = NULL
        self.ngoals = 0
        self.cap_goals = 0
        self.edge_limit = (<long long>DEFAULT_MAX_MEMORY_MB << 20) // EDGE_BYTES
        self.last_capped = False
        self.deadline = 0.0

    def __init__(self, Grammar grammar not None, weights, int hash_bits):
        if weights.shape[0] != (1 << hash_bits) or weights.dtype != np.float32:
            raise ValueError("weights must be float32 with 2**hash_bits entries")
        cdef const weight_t[::1] wv = weights
        self.g = grammar
        self._wref = weights
        self.W = &wv[0]
        self.mask = <uint32_t>((1 << hash_bits) - 1)
        arena_init(&self.A)
        heap_init(&self.agenda, 1 << 16)
        self.fcap = 0
        self.tcap = 1 << 14
        self.tbuf = <feat_t*>malloc(self.tcap * sizeof(feat_t))
        self.rtcap = 1024
        self.rtbuf = <feat_t*>malloc(self.rtcap * sizeof(feat_t))
        self.rtval = <double*>malloc(self.rtcap * sizeof(double))
        self.cap_gold = 1024
        self.gold_ag = <eid_t*>malloc(self.cap_gold * sizeof(eid_t))
        self.cap_goals = 256
        self.goals = <eid_t*>malloc(self.cap_goals * sizeof(eid_t))
        self.epoch = 0
        self.total_edges = 0
        self.last_goal = -1
        if (self.tbuf == NULL or self.gold_ag == NULL or self.rtbuf == NULL or self.rtval == NULL
                or self.goals == NULL):
            raise MemoryError()

    def __dealloc__(self):
        arena_free(&self.A)
        heap_free(&self.agenda)
        chart_free(&self.chart)
        sigmap_free(&self.seen)
        free(self.fbuf); free(self.tbuf); free(self.gold_ag); free(self.rtbuf); free(self.rtval)
        free(self.goals)

    @property
    def grammar(self):
        """The grammar this search uses."""
        return self.g

    # ------------------------------------------------------------------ set-up
    cdef int _reset(self, int beam) except -1:
        """Empty arena, agenda and chart for the grammar's current instance (chart k*n = beam)."""
        if self.g.n <= 0 or self.g.leaf_unit == NULL:
            raise ValueError("the grammar has no instance (call set_instance first)")
        arena_reset(&self.A, self.g.n, self.g.leaf_unit)
        if self.g.leaf_woff != NULL:
            self.A.leaf_uend = self.g.leaf_uend
            self.A.leaf_woff = self.g.leaf_woff
            self.A.leaf_words = self.g.leaf_words
        self.agenda.size = 0
        self.ngold_ag = 0
        chart_reset(&self.chart, beam, self.g.use_dp)
        cdef int need = self.g.max_features
        if self.fcap < need:
            free(self.fbuf)
            self.fcap = need
            self.fbuf = <feat_t*>malloc(need * sizeof(feat_t))
            if self.fbuf == NULL:
                self.fcap = 0
                raise MemoryError()
        return 0

    cdef int _seen_reset(self, long long max_pops) except -1:
        cdef long long need = 1024
        while need < 2 * max_pops + 2 and need < (1 << 16):
            need *= 2
        sigmap_reset(&self.seen, <int>need)
        return 0

    # ------------------------------------------------------------------ edges
    cdef double action_score(self, int k) noexcept nogil:
        """theta . phi of the action whose k indicator features are in fbuf and whose
        real-valued features (nreal of them) are in rfeat/rval."""
        cdef double s = dot(self.W, self.fbuf, k)
        cdef int i
        for i in range(self.nreal):
            s += self.W[self.rfeat[i]] * self.rval[i]
        return s

    cdef int push_edge(self, eid_t e, int k) noexcept nogil:
        """Score edge e (its action's k features are in fbuf) and push it on the agenda.

        F(e) = F(left) + F(right) + theta . phi (a leaf: theta . phi); the agenda key is the
        scaled score F(e)/|e|.  In forced decoding a non-gold e (the last edge created) is
        dropped.  Returns 1 when pushed, 0 when dropped, -1 when memory runs out.
        """
        return self.push_scored(e, self.action_score(k))

    cdef int push_scored(self, eid_t e, double a) noexcept nogil:
        """Push edge e whose action score theta . phi = ``a`` the grammar computed itself
        (e.g. from cached partial sums while ``frozen``); otherwise as :meth:`push_edge`."""
        cdef Edge* x = &self.A.E[e]
        x.surf = -1
        x.bits = -1
        x.epoch = self.epoch
        x.in_chart = 0
        if x.left < 0:
            x.F = a
        else:
            x.F = self.A.E[x.left].F + self.A.E[x.right].F + a
        if self.gold_only and not x.gold:
            self.A.ne -= 1
            return 0
        if heap_push(&self.agenda, e, x.F / x.nact) < 0:
            return -1
        if x.gold and self._track_gold(e) < 0:
            return -1
        return 1

    cdef int _track_gold(self, eid_t e) noexcept nogil:
        if grow(<void**>&self.gold_ag, &self.cap_gold, sizeof(eid_t), self.ngold_ag + 1) < 0:
            return -1
        self.gold_ag[self.ngold_ag] = e
        self.ngold_ag += 1
        return 0

    cdef void _untrack_gold(self, eid_t e) noexcept nogil:
        cdef int i
        for i in range(self.ngold_ag):
            if self.gold_ag[i] == e:
                self.ngold_ag -= 1
                self.gold_ag[i] = self.gold_ag[self.ngold_ag]
                return

    cdef inline int _pair(self, eid_t a, eid_t b) noexcept nogil:
        """Both orders of a and b (Algorithm 4: COMBINE(a, b) and COMBINE(b, a))."""
        if self.g.combine(self, a, b) < 0 or self.g.combine(self, b, a) < 0:
            return -1
        return 0

    cdef int _expand(self, eid_t e) noexcept nogil:
        """Expand popped edge e: its unary actions, then every disjoint chart edge (Algorithms 1, 4)."""
        cdef int i
        cdef eid_t c
        cdef Edge* x
        cdef Edge* y
        if self.g.unary(self, e) < 0:
            return -1
        x = &self.A.E[e]
        cdef int16_t ph = x.pk_head, pw = x.pk_want, yh, yw
        cdef const uint64_t* be = &self.A.bits[x.bits]
        cdef const int32_t* pay = self.chart.h.pay
        for i in range(self.chart.h.size):
            yh = pk_head_of(pay[i])
            yw = pk_want_of(pay[i])
            if not (pw == -1 or yw == -1 or pw == yh or yw == ph):
                continue                          # no arc the grammar would allow
            c = chart_id(&self.chart, i)
            if not disjoint(&self.A, be, c):
                continue
            if self._pair(e, c) < 0:
                return -1
            be = &self.A.bits[self.A.E[e].bits]
        return 0

    cdef eid_t _chart_add(self, eid_t e, double key, eid_t* rival) noexcept nogil:
        cdef uint64_t sig = self.g.dp_signature(self, e) if self.chart.use_dp else 0
        return chart_add(&self.chart, self.A.E, e, key, sig, rival)

    cdef bint _seen_add(self, uint64_t sig) noexcept nogil:
        """Record the signature of a popped edge; True if an equal derivation was popped before."""
        cdef bint found = False
        sigmap_find(&self.seen, sig, &found)
        return found

    # ------------------------------------------------------------------ output
    cdef inline bint _greedy_before(self, eid_t a, eid_t b) noexcept nogil:
        cdef Edge* x = &self.A.E[a]
        cdef Edge* y = &self.A.E[b]
        if x.nwords != y.nwords:
            return x.nwords > y.nwords
        if x.F / x.nact != y.F / y.nact:
            return x.F / x.nact > y.F / y.nact
        return a < b

    cdef void _sort_greedy(self, eid_t* ids, int m) noexcept nogil:
        """Sort edge ids by (words desc, scaled score desc, id asc): insertion sort, m is small."""
        cdef int i, j
        cdef eid_t tmp
        for i in range(1, m):
            j = i
            while j > 0 and self._greedy_before(ids[j], ids[j - 1]):
                tmp = ids[j]; ids[j] = ids[j - 1]; ids[j - 1] = tmp
                j -= 1

    cdef object _result(self, eid_t goal, int status, long long pops):
        """(order int32[m] surface ids, analysis, scaled score, status, pops, edges).

        ``order`` holds leaf ids (one-word leaves: m = n) or the word slots of phrase leaves.
        Without a goal, the greedy default output of section 3.4: chart edges by size,
        disjoint ones concatenated left to right, then every leaf over units still uncovered,
        in canonical order.  ``analysis`` is the grammar's object over those pieces.
        """
        cdef int n = self.g.n
        cdef int cap = n if self.g.leaf_woff == NULL else self.g.leaf_woff[self.g.nleaf]
        cdef cnp.ndarray[int32_t, ndim=1] order = np.empty(max(cap, n), dtype=np.int32)
        cdef int32_t* op = <int32_t*>order.data
        cdef int i, j, pos = 0, np_ = 0, unit, csize = self.chart.h.size
        cdef Edge* x
        cdef double score = 0.0
        cdef uint64_t* covered
        cdef eid_t* pieces = <eid_t*>malloc((csize + self.g.nleaf + 1) * sizeof(eid_t))
        if pieces == NULL:
            raise MemoryError()
        try:
            if goal >= 0:
                x = &self.A.E[goal]
                for i in range(x.nwords):
                    op[i] = self.A.surf[x.surf + i]
                pos = x.nwords
                pieces[0] = goal
                np_ = 1
                score = x.F / x.nact
            else:
                covered = <uint64_t*>malloc(self.A.W64 * sizeof(uint64_t))
                if covered == NULL:
                    raise MemoryError()
                memset(covered, 0, self.A.W64 * sizeof(uint64_t))
                for i in range(csize):
                    pieces[i] = chart_id(&self.chart, i)
                self._sort_greedy(pieces, csize)
                for i in range(csize):
                    if not disjoint(&self.A, covered, pieces[i]):
                        continue
                    cover(&self.A, covered, pieces[i])
                    x = &self.A.E[pieces[i]]
                    for j in range(x.nwords):
                        op[pos + j] = self.A.surf[x.surf + j]
                    pos += x.nwords
                    if np_ == 0:
                        score = x.F / x.nact
                    pieces[np_] = pieces[i]
                    np_ += 1
                for i in range(self.g.nleaf):   # leaf edge i is leaf i when decoding
                    if self.g.leaf_woff == NULL:
                        unit = self.g.leaf_unit[i]
                        if (covered[unit // 64] >> (unit % 64)) & 1:
                            continue
                        covered[unit // 64] |= (<uint64_t>1) << (unit % 64)
                        op[pos] = i
                        pos += 1
                    else:
                        if materialise(&self.A, i) < 0:
                            free(covered)
                            raise MemoryError()
                        if not disjoint(&self.A, covered, i):
                            continue
                        cover(&self.A, covered, i)
                        x = &self.A.E[i]
                        for j in range(x.nwords):
                            op[pos + j] = self.A.surf[x.surf + j]
                        pos += x.nwords
                    pieces[np_] = i
                    np_ += 1
                free(covered)
            analysis = self.g.analysis(self, pieces, np_)
        finally:
            free(pieces)
        if pos != order.shape[0]:
            order = order[:pos].copy()
        return order, analysis, score, status, pops, self.A.ne

    # ------------------------------------------------------------------ completion
    cdef bint _out_of_bounds(self) noexcept nogil:
        """True (and ``last_capped`` set at the edge limit) when a completion phase must stop:
        the decode's edge limit or its deadline is reached."""
        if self.edge_limit > 0 and self.A.ne >= self.edge_limit:
            self.last_capped = True
            return True
        return self.deadline > 0 and _now() > self.deadline

    cdef eid_t _complete(self, int B) noexcept nogil:
        """Beam completion when the pop budget is exhausted (extension of section 3.4's default output).

        States start as the B largest chart edges; each step combines every state with every
        disjoint chart or leaf edge (both orders, every action), keeps the B best new edges by
        scaled score and stops when no state grows.  Returns the best goal edge or -1.
        Cost: at most n steps x B x (k*n + leaves) combinations.
        """
        cdef int i, t, nc = 0, ns = 0, nn, csize = self.chart.h.size
        cdef eid_t e, s, c, best = -1
        cdef double bk = 0.0, key
        cdef eid_t* cands = <eid_t*>malloc((csize + self.g.nleaf + 1) * sizeof(eid_t))
        cdef eid_t* states = <eid_t*>malloc((B + 1) * sizeof(eid_t))
        cdef eid_t* nxt = <eid_t*>malloc((B + 1) * sizeof(eid_t))
        if cands == NULL or states == NULL or nxt == NULL:
            free(cands); free(states); free(nxt)
            return -1
        for i in range(csize):
            cands[nc] = chart_id(&self.chart, i)
            nc += 1
        for i in range(self.g.nleaf):          # leaf edges are edges 0..nleaf-1 when decoding
            if materialise(&self.A, i) < 0:
                break
            cands[nc] = i
            nc += 1
        # initial states: the B largest (then best-scored) chart edges
        self._sort_greedy(cands, csize)
        for i in range(min(B, csize)):
            states[ns] = cands[i]
            ns += 1
        if ns == 0 and nc > 0:
            states[0] = cands[0]
            ns = 1
        while ns > 0:
            self.agenda.size = 0
            if self._out_of_bounds():
                break
            for t in range(ns):
                s = states[t]
                if self.A.ne >= self.edge_limit > 0:
                    break
                for i in range(nc):
                    c = cands[i]
                    if not disjoint(&self.A, &self.A.bits[self.A.E[s].bits], c):
                        continue
                    if self._pair(s, c) < 0:
                        self.agenda.size = 0
                        break
            nn = 0
            while self.agenda.size > 0 and nn < B:
                key = self.agenda.key[0]
                e = heap_pop(&self.agenda)
                if nn > 0 and self.A.E[e].F == self.A.E[nxt[nn - 1]].F and self.A.E[e].nwords == self.A.E[nxt[nn - 1]].nwords:
                    continue        # the same edge built from two states
                if self.g.is_goal(self, e) and (best < 0 or key > bk):
                    best = e
                    bk = key
                if self.g.is_full(self, e):
                    continue
                if materialise(&self.A, e) < 0:
                    break
                nxt[nn] = e
                nn += 1
            for t in range(nn):
                states[t] = nxt[t]
            ns = nn
        self.agenda.size = 0
        if best >= 0:
            materialise(&self.A, best)
        free(cands); free(states); free(nxt)
        return best

    cdef eid_t _merge_complete(self) noexcept nogil:
        """Easy-first completion: merge the best pair of disjoint pieces until one remains.

        Pieces start as a greedy partition of the units by chart edges (largest first, as in
        section 3.4) plus the best leaf of every uncovered unit.  Each step applies the
        highest-scoring valid combination of two pieces (scaled score); pair edges are kept on
        the agenda and discarded lazily once a child has been merged.  Returns the goal edge
        or -1.
        """
        cdef int i, j, np_ = 0, t, n = self.g.n, csize = self.chart.h.size
        cdef eid_t e, a, b
        cdef bint alive_a, alive_b
        cdef eid_t* pieces = <eid_t*>malloc((n + csize + 1) * sizeof(eid_t))
        cdef eid_t* ids = <eid_t*>malloc((csize + 1) * sizeof(eid_t))
        cdef uint64_t* covered = <uint64_t*>malloc(self.A.W64 * sizeof(uint64_t))
        cdef int32_t* bestleaf = <int32_t*>malloc(n * sizeof(int32_t))
        if pieces == NULL or ids == NULL or covered == NULL or bestleaf == NULL:
            free(pieces); free(ids); free(covered); free(bestleaf)
            return -1
        memset(covered, 0, self.A.W64 * sizeof(uint64_t))
        for i in range(csize):
            ids[i] = chart_id(&self.chart, i)
        self._sort_greedy(ids, csize)
        for i in range(csize):
            a = ids[i]
            if not disjoint(&self.A, covered, a):
                continue
            cover(&self.A, covered, a)
            pieces[np_] = a
            np_ += 1
        for i in range(n):
            bestleaf[i] = -1
        for i in range(self.g.nleaf):
            t = self.g.leaf_unit[i]
            if bestleaf[t] < 0 or self.A.E[i].F > self.A.E[bestleaf[t]].F:
                bestleaf[t] = i
        for t in range(n):
            if not (covered[t // 64] >> (t % 64)) & 1 and bestleaf[t] >= 0:
                if materialise(&self.A, bestleaf[t]) < 0:
                    break
                if not disjoint(&self.A, covered, bestleaf[t]):
                    continue                  # a phrase leaf over a covered unit
                cover(&self.A, covered, bestleaf[t])
                pieces[np_] = bestleaf[t]
                np_ += 1
        self.agenda.size = 0
        if self.edge_limit > 0 and self.A.ne + 2 * <long long>np_ * np_ > self.edge_limit:
            self.last_capped = True   # the pairs of pieces would not fit: the default output
            np_ = 0
        if self._out_of_bounds():
            np_ = 0
        for i in range(np_):
            for j in range(np_):
                if i != j and self.g.combine(self, pieces[i], pieces[j]) < 0:
                    np_ = 0
        while np_ > 1 and self.agenda.size > 0:
            if self._out_of_bounds():
                break
            e = heap_pop(&self.agenda)
            a = self.A.E[e].left
            b = self.A.E[e].right
            alive_a = False
            alive_b = False
            for i in range(np_):
                if pieces[i] == a:
                    alive_a = True
                elif pieces[i] == b:
                    alive_b = True
            if not (alive_a and alive_b):
                continue
            if materialise(&self.A, e) < 0:
                break
            j = 0
            for i in range(np_):
                if pieces[i] != a and pieces[i] != b:
                    pieces[j] = pieces[i]
                    j += 1
            np_ = j
            for i in range(np_):
                if self._pair(e, pieces[i]) < 0:
                    np_ = -1
                    break
            if np_ < 0:
                break
            pieces[np_] = e
            np_ += 1
        self.agenda.size = 0
        e = -1
        if np_ == 1 and self.g.is_goal(self, pieces[0]):
            e = pieces[0]
        free(pieces); free(ids); free(covered); free(bestleaf)
        return e

    # ------------------------------------------------------------------ decoding
    def decode(self, int beam, long long max_pops, double timeout=0.0, int complete_beam=4,
               long long max_edges=4000000, long long goal_patience=0):
        """Decode the grammar's current instance (Algorithm 4; Algorithm 1 with DP-signatures).

        Parameters
        ----------
        beam : chart size (k*n edges);  max_pops : pop budget (pops);  timeout : seconds per
        sentence (0 = none);  complete_beam : beam of the completion phases run when the budget
        or timeout is reached without a goal (0 = greedy default output only);  max_edges : the
        search stops (as on an exhausted budget) once this many edges exist, bounding memory at
        about sizeof(Edge) = 80 bytes per edge;  goal_patience : after the first goal edge is
        popped, keep popping for up to this many more pops (within max_pops) and return the
        best-scoring goal popped (goals are not expanded); 0 = stop at the first goal.
        Popped edges whose signature equals an earlier popped edge's are skipped (same string,
        tree and future).  ``edge_limit`` (attribute, edges; default DEFAULT_MAX_MEMORY_MB MiB
        / EDGE_BYTES) bounds the edges of the whole decode, completions included: the search
        and the completions stop there, the status is 5 (memory) and ``last_capped`` is set;
        the completion phases that follow a timeout stop at 1.5 x the timeout.

        Returns (order int32[n] leaf ids in output order, analysis (the grammar's: dependency
        heads int32[n]), scaled score float, status int (0 ok, 1 budget, 2 timeout,
        3 completed, 4 glued: found by the glue merge of a grammar with ``has_glue``, 5 memory),
        pops int, edges int).
        Raises ValueError without an instance, MemoryError when the pools cannot grow.
        """
        self.gold_only = False
        self.frozen = False
        self._reset(beam)
        self._seen_reset(max_pops)
        self.frozen = self.score_cache
        cdef long long pops = 0, dups = 0, stop_at = max_pops
        cdef eid_t e, goal = -1, g2, rival
        cdef int status = S_BUDGET, rc = 0
        cdef bint glued = False
        cdef double t0 = _now()
        cdef long long limit = self.edge_limit if self.edge_limit > 0 else (<long long>1 << 62)
        self.ngoals = 0
        self.last_capped = False
        self.deadline = t0 + 1.5 * timeout if timeout > 0 else 0.0   # completions: half the timeout again
        with nogil:
            if self.g.leaves(self) < 0:
                rc = -1
            while (rc == 0 and self.agenda.size > 0 and pops < max_pops and self.A.ne < max_edges
                   and self.A.ne < limit):
                if timeout > 0 and (pops & 15) == 0 and _now() - t0 > timeout:
                    if goal < 0:
                        status = S_TIMEOUT
                    break
                e = heap_pop(&self.agenda)
                if self._seen_add(self.A.E[e].sig):
                    dups += 1          # same derivation as an expanded edge
                    if dups > 64 * max_pops:
                        break
                    continue
                pops += 1
                if materialise(&self.A, e) < 0:
                    rc = -1
                    break
                if self.g.is_goal(self, e):
                    if grow(<void**>&self.goals, &self.cap_goals, sizeof(eid_t), self.ngoals + 1) < 0:
                        rc = -1
                        break
                    self.goals[self.ngoals] = e
                    self.ngoals += 1
                    if goal < 0:
                        stop_at = pops + goal_patience
                        if stop_at > max_pops:
                            stop_at = max_pops
                    if goal < 0 or scaled(&self.A, e) > scaled(&self.A, goal):
                        goal = e
                    status = S_OK
                    if pops >= stop_at:
                        break
                    if not self.g.goal_expand:
                        continue
                if goal >= 0 and pops >= stop_at:
                    break
                if self.chart.use_dp:
                    # Algorithm 1: DPCHARTPRUNE before the expansion; an edge that loses to the
                    # kept edge of its DP-signature is not expanded
                    if self._chart_add(e, scaled(&self.A, e), &rival) == e and rival >= 0:
                        continue
                    if self._expand(e) < 0:
                        rc = -1
                        break
                    continue
                if self._expand(e) < 0:
                    rc = -1
                    break
                self._chart_add(e, scaled(&self.A, e), &rival)
            if rc == 0 and goal < 0 and complete_beam > 0:
                self.phase = 1
                goal = self._complete(complete_beam)
                self.phase = 2
                g2 = self._merge_complete()
                if g2 >= 0 and (goal < 0 or scaled(&self.A, g2) > scaled(&self.A, goal)):
                    goal = g2
                if goal < 0 and self.g.has_glue:
                    # last resort of grammars with glue actions (CCG): the merge completion
                    # may also join pieces that no rule combines
                    self.phase = 3
                    goal = self._merge_complete()
                    glued = goal >= 0
                self.phase = 0
                if goal >= 0:
                    status = S_GLUED if glued else S_COMPLETED
            if self.A.ne >= limit:
                self.last_capped = True
            if self.last_capped and status != S_OK:
                status = S_MEMORY
        self.frozen = False
        if rc < 0:
            raise MemoryError("search pools could not grow")
        self.last_pops = pops
        self.last_edges = self.A.ne
        self.total_edges += self.A.ne
        self.last_goal = goal
        return self._result(goal, status, pops)

    def forced(self, long long max_pops):
        """Forced decoding of the current instance: only gold edges are built.

        Returns (reached bool, order int32[n] leaf ids or None, analysis or None, scaled score).
        Used to test that every reference derivation is reachable and recognised as gold.
        Raises ValueError if the instance has no gold arrays.
        """
        if not self.g.has_gold:
            raise ValueError("forced decoding needs an instance with gold arrays")
        self._reset(4 * self.g.n + 4)
        self.gold_only = True
        self.frozen = False
        cdef long long pops = 0
        cdef eid_t e, goal = -1, rival
        with nogil:
            self.g.leaves(self)
            while self.agenda.size > 0 and pops < max_pops:
                e = heap_pop(&self.agenda)
                pops += 1
                materialise(&self.A, e)
                if self.g.is_goal(self, e) and self.A.E[e].gold:
                    goal = e
                    break
                self._expand(e)
                self._chart_add(e, scaled(&self.A, e), &rival)
        self.gold_only = False
        self.last_goal = goal
        if goal < 0:
            return False, None, None, 0.0
        r = self._result(goal, STATUS_OK, pops)
        return True, r[0], r[1], r[2]

    # ------------------------------------------------------------------ derivations
    cdef int _tree_features(self, eid_t e, int* nt, int* nr) noexcept nogil:
        """Append Phi(e) (the features of every action of the derivation) to self.tbuf (indicator
        features) and self.rtbuf/rtval (real-valued features)."""
        cdef Edge* x = &self.A.E[e]
        cdef int k, i
        if x.left >= 0:
            if self._tree_features(x.left, nt, nr) < 0 or self._tree_features(x.right, nt, nr) < 0:
                return -1
        k = self.g.features(self, e)
        if grow(<void**>&self.tbuf, &self.tcap, sizeof(feat_t), nt[0] + k) < 0:
            return -1
        for i in range(k):
            self.tbuf[nt[0] + i] = self.fbuf[i]
        nt[0] += k
        if self.nreal:
            i = self.rtcap
            if (grow(<void**>&self.rtbuf, &i, sizeof(feat_t), nr[0] + self.nreal) < 0
                    or grow(<void**>&self.rtval, &self.rtcap, sizeof(double), nr[0] + self.nreal) < 0):
                return -1
            for i in range(self.nreal):
                self.rtbuf[nr[0] + i] = self.rfeat[i]
                self.rtval[nr[0] + i] = self.rval[i]
            nr[0] += self.nreal
        return 0

    def real_features_of(self, long long e):
        """Testing aid: {feature index: summed value} of the real-valued features over the
        derivation of edge ``e`` (e.g. ``last_goal``); e must belong to the last search."""
        cdef int nt = 0, nr = 0, i
        if e < 0 or e >= self.A.ne:
            raise ValueError("no such edge")
        if self._tree_features(<eid_t>e, &nt, &nr) < 0:
            raise MemoryError()
        out = {}
        for i in range(nr):
            out[int(self.rtbuf[i])] = out.get(int(self.rtbuf[i]), 0.0) + self.rtval[i]
        return out

    def popped_goals(self):
        """Goal edges popped by the last :meth:`decode` (n-best candidates, pop order):
        (edge ids int64[G], unscaled scores F float64[G], scaled scores F/|e| float64[G])."""
        ids = np.array([self.goals[i] for i in range(self.ngoals)], dtype=np.int64)
        F = np.array([self.A.E[self.goals[i]].F for i in range(self.ngoals)], dtype=np.float64)
        S = np.array([scaled(&self.A, self.goals[i]) for i in range(self.ngoals)], dtype=np.float64)
        return ids, F, S

    def output_of(self, long long e):
        """(order int32[m] surface ids, analysis) of a materialised edge of the last search,
        e.g. one of :meth:`popped_goals`.  Raises ValueError for another edge."""
        if e < 0 or e >= self.A.ne or self.A.E[e].surf < 0:
            raise ValueError("not a materialised edge of the last search")
        r = self._result(<eid_t>e, S_OK, 0)
        return r[0], r[1]

    def derivation_score(self, long long e):
        """Testing aid: (F of edge ``e`` of the last search as the search scored it, F recomputed
        from scratch: the sum over its derivation of theta . phi with every action's features
        hashed afresh), two floats.  Raises ValueError for an edge that does not exist."""
        if e < 0 or e >= self.A.ne:
            raise ValueError("no such edge")
        return self.A.E[e].F, self._derivation_score(<eid_t>e)

    cdef double _derivation_score(self, eid_t e):
        cdef Edge* x = &self.A.E[e]
        cdef double f = 0.0
        cdef eid_t l = x.left, r = x.right
        if l >= 0:
            f = self._derivation_score(l) + self._derivation_score(r)
        return f + self.action_score(self.g.features(self, e))

    def features_of_last_edge(self):
        """Feature indices (uint32[k]) of the action that built the most recent edge (testing aid)."""
        cdef eid_t e = self.A.ne - 1
        cdef int k
        if e < 0:
            return np.empty(0, dtype=np.uint32)
        k = self.g.features(self, e)
        return np.array([self.fbuf[i] for i in range(k)], dtype=np.uint32)


def feature_hash(keys, unsigned int hash_bits):
    """Mask of MurmurHash3_x86_32 over uint32 keys, as the grammars compute feature indices.

    keys: uint32 array of shape (m, k); returns uint32 array of shape (m,).
    """
    cdef const uint32_t[:, ::1] kv = np.ascontiguousarray(keys, dtype=np.uint32)
    cdef cnp.ndarray[uint32_t, ndim=1] out = np.empty(kv.shape[0], dtype=np.uint32)
    cdef uint32_t mask = <uint32_t>((1 << hash_bits) - 1) if hash_bits < 32 else 0xFFFFFFFFu
    cdef Py_ssize_t i
    for i in range(kv.shape[0]):
        out[i] = murmurhash3_words(&kv[i, 0], kv.shape[1], 0) & mask
    return out


def instance_array(a, dtype, str name, n=None):
    """``a`` as a C-contiguous 1-d array of ``dtype`` (n entries if given), for a grammar's
    ``set_instance``.  Raises ValueError naming the array otherwise."""
    x = np.ascontiguousarray(a, dtype=dtype)
    if x.ndim != 1 or (n is not None and x.shape[0] != n):
        raise ValueError(f"{name} must be 1-d" + (f" with {n} entries" if n is not None else ""))
    return x
