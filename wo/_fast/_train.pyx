# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Training of the best-first search core (Zhang & Clark 2015, Algorithm 3, section 3.5).

:class:`Trainer` is the decoding driver :class:`wo._fast._search.Search` plus what training
adds: the writable weights and their averaging accumulator, lazy rescoring of edges by model
epoch (RECOMPUTESCORES), the scaled large-margin update and the two training loops (Algorithm 3
over the agenda and chart; the easy-first pass that matches the decoder's merge completion).
The loops run without the GIL and hold no Python objects; a Trainer decodes like any Search.
"""
import numpy as np
from libc.stdlib cimport malloc, free

from ._typedefs cimport weight_t, eid_t
from ._weights cimport scaled_update
from ._arena cimport Edge, materialise, scaled
from ._agenda cimport heap_push, heap_pop, chart_id, chart_key, chart_remove_at, chart_heapify
from ._search cimport Grammar, Search


cdef class Trainer(Search):
    """A :class:`wo._fast._search.Search` that also trains its weights (Algorithm 3).

    Parameters
    ----------
    grammar, weights, hash_bits : as :class:`wo._fast._search.Search`; ``weights`` (float32,
        shape (2**hash_bits,)) must be writable: the updates change it in place.
    accum : numpy.ndarray, shape (2**hash_bits,), dtype float64, C-contiguous: the averaging
        accumulator U (averaged weights = W - U / avg_count), changed in place.

    Attributes ``n_updates``, ``n_dp_pruned_gold`` (counters), ``max_tau`` (cap on the update
    step, 0 = none), ``positive_choice`` and ``avg_count`` (incremented by the caller per
    sentence).  Raises ValueError for read-only weights or an accumulator of another shape or
    dtype, and as ``Search`` otherwise.
    """

    def __init__(self, Grammar grammar not None, weights, int hash_bits, accum not None):
        Search.__init__(self, grammar, weights, hash_bits)
        if not weights.flags.writeable:
            raise ValueError("training needs writable weights")
        if accum.shape != weights.shape or accum.dtype != np.float64:
            raise ValueError("the accumulator must be float64 of the weights' shape")
        cdef weight_t[::1] wv = weights
        cdef double[::1] uv = accum
        self.Wmut = &wv[0]
        self._uref = accum
        self.U = &uv[0]
        self.n_updates = 0
        self.n_dp_pruned_gold = 0
        self.max_tau = 0.0
        self.positive_choice = 0
        self.avg_count = 1.0

    cdef double _rescore(self, eid_t e) noexcept nogil:
        """F(e) under the current weights, memoised by epoch (RECOMPUTESCORES of Algorithm 3)."""
        cdef Edge* x = &self.A.E[e]
        cdef int k
        cdef double f
        if x.epoch == self.epoch:
            return x.F
        if x.left < 0:
            k = self.g.features(self, e)
            f = self.action_score(k)
        else:
            f = self._rescore(x.left) + self._rescore(x.right)
            k = self.g.features(self, e)
            f += self.action_score(k)
        x = &self.A.E[e]
        x.F = f
        x.epoch = self.epoch
        return f

    cdef int _update(self, eid_t pos, eid_t neg) noexcept nogil:
        """Scaled large-margin update (section 3.5) of the positive edge against the negative."""
        cdef double fp = self._rescore(pos) / self.A.E[pos].nact
        cdef double fn = self._rescore(neg) / self.A.E[neg].nact
        cdef double loss = fn - fp + 1.0
        if loss <= 0:
            return 0
        cdef int np_ = 0, nn_ = 0, npr = 0, nnr = 0
        if self._tree_features(pos, &np_, &npr) < 0:
            return -1
        nn_ = np_
        nnr = npr
        if self._tree_features(neg, &nn_, &nnr) < 0:
            return -1
        nn_ -= np_
        nnr -= npr
        if not scaled_update(self.Wmut, self.U, self.tbuf, np_, 1.0 / self.A.E[pos].nact,
                             self.tbuf + np_, nn_, 1.0 / self.A.E[neg].nact, loss,
                             self.max_tau, self.avg_count, self.rtbuf, self.rtval, npr, nnr):
            return 0
        self.n_updates += 1
        self.epoch += 1
        return 1

    cdef void _rescore_chart(self) noexcept nogil:
        cdef int i
        cdef eid_t c
        for i in range(self.chart.h.size):
            c = chart_id(&self.chart, i)
            self.chart.h.key[i] = -(self._rescore(c) / self.A.E[c].nact)
        chart_heapify(&self.chart)

    cdef eid_t _min_gold(self) noexcept nogil:
        cdef int i
        cdef eid_t g, best = -1
        cdef double s, bs = 0.0
        for i in range(self.ngold_ag):
            g = self.gold_ag[i]
            s = self._rescore(g) / self.A.E[g].nact
            if self.positive_choice == 1:
                s = -s
            if best < 0 or s < bs or (s == bs and g > best):
                best = g
                bs = s
        return best

    cdef int _negative_slot(self, eid_t rival) noexcept nogil:
        """Chart slot of the negative example for a gold edge that left the chart: the
        same-signature edge that displaced it (DP-signatures), else the best non-gold edge."""
        cdef int i, best = -1
        if rival >= 0 and not self.A.E[rival].gold:
            for i in range(self.chart.h.size):
                if chart_id(&self.chart, i) == rival:
                    return i
        for i in range(self.chart.h.size):
            if not self.A.E[chart_id(&self.chart, i)].gold:
                if best < 0 or chart_key(&self.chart, i) > chart_key(&self.chart, best) or (
                        chart_key(&self.chart, i) == chart_key(&self.chart, best)
                        and chart_id(&self.chart, i) < chart_id(&self.chart, best)):
                    best = i
        return best

    cdef int _gold_pruned(self, eid_t out, eid_t rival) noexcept nogil:
        """A gold edge ``out`` left the chart (Algorithm 3, lines 16-20 and 42-46): update it
        against the edge that displaced it (same DP-signature) or the best non-gold chart edge,
        remove that edge and put ``out`` back.  Returns 0, or -1 when memory runs out."""
        cdef int slot = self._negative_slot(rival)
        if slot < 0:
            return 0
        if rival >= 0 and chart_id(&self.chart, slot) == rival:
            self.n_dp_pruned_gold += 1
        if self._update(out, chart_id(&self.chart, slot)) < 0:
            return -1
        chart_remove_at(&self.chart, self.A.E, slot)
        self._rescore_chart()
        self._chart_add(out, self._rescore(out) / self.A.E[out].nact, &rival)
        return 0

    def train_one(self, int beam, long long max_pops):
        """One training sentence (Algorithm 3) on the grammar's current instance.

        Expands negative examples; a popped non-gold edge triggers a scaled large-margin update
        against the lowest-scored gold edge on the agenda; a gold edge pushed out of the chart
        triggers an update against the edge that displaced it (same DP-signature) or the
        highest-scored non-gold chart edge, and is put back.  Agenda scores are refreshed
        lazily when an edge reaches the top (RECOMPUTESCORES), chart scores at every update.
        Returns (reached_gold_goal bool, pops int, updates int).  The caller increments
        ``avg_count`` per sentence.  Raises ValueError without gold arrays,
        MemoryError when the pools cannot grow.
        """
        if not self.g.has_gold:
            raise ValueError("training needs an instance with gold arrays")
        self.gold_only = False
        self.frozen = False
        self._reset(beam)
        cdef long long pops = 0, upd0 = self.n_updates
        cdef eid_t e, g, out, rival
        cdef int slot, rc = 0
        cdef bint reached = False
        cdef double key
        with nogil:
            if self.g.leaves(self) < 0:
                rc = -1
            while rc == 0 and self.agenda.size > 0 and pops < max_pops:
                e = heap_pop(&self.agenda)
                if self.A.E[e].epoch != self.epoch:
                    key = self._rescore(e) / self.A.E[e].nact
                    if heap_push(&self.agenda, e, key) < 0:
                        rc = -1
                    continue
                pops += 1
                if self.A.E[e].gold:
                    self._untrack_gold(e)
                if materialise(&self.A, e) < 0:
                    rc = -1
                    break
                if self.A.E[e].gold and self.g.is_goal(self, e):
                    reached = True
                    break
                if not self.A.E[e].gold:
                    g = self._min_gold()
                    if g < 0:
                        break          # no gold edge left: the reference is unreachable
                    if self._update(g, e) < 0:
                        rc = -1
                        break
                    self._rescore_chart()
                if self.chart.use_dp:
                    # Algorithm 3, lines 16-20: DPCHARTPRUNE before the expansion; a pruned gold
                    # edge is an update against the DP-equivalent edge that displaced it (and is
                    # put back); a pruned non-gold edge is not expanded
                    out = self._chart_add(e, self._rescore(e) / self.A.E[e].nact, &rival)
                    if out >= 0 and self.A.E[out].gold:
                        if self._gold_pruned(out, rival) < 0:
                            rc = -1
                            break
                    elif out == e and rival >= 0:
                        continue
                    if self._expand(e) < 0:
                        rc = -1
                        break
                    continue
                if self._expand(e) < 0:
                    rc = -1
                    break
                out = self._chart_add(e, self._rescore(e) / self.A.E[e].nact, &rival)
                if out >= 0 and self.A.E[out].gold:
                    if self._gold_pruned(out, rival) < 0:
                        rc = -1
                        break
        if rc < 0:
            raise MemoryError("search pools could not grow")
        self.last_pops = pops
        self.last_edges = self.A.ne
        self.total_edges += self.A.ne
        return reached, pops, self.n_updates - upd0

    def train_easy_first(self):
        """Easy-first training pass that matches the merge completion of the decoder.

        Pieces start as the gold leaves; at each step the highest-scoring valid combination of
        two pieces is compared with the best gold one: if it is not gold, a scaled large-margin
        update (section 3.5) is made against the best gold one; the gold one is applied.
        Returns (steps, updates).  Raises ValueError without gold arrays.
        """
        if not self.g.has_gold:
            raise ValueError("training needs an instance with gold arrays")
        self.gold_only = False
        self.frozen = False
        self._reset(1)
        cdef long long upd0 = self.n_updates, steps = 0
        cdef int i, j, np_ = 0, before
        cdef eid_t e, a, b, best, bestg, ne0
        cdef double key, bk = 0.0, bgk = 0.0
        cdef eid_t* pieces = <eid_t*>malloc((self.g.n + 1) * sizeof(eid_t))
        if pieces == NULL:
            raise MemoryError()
        with nogil:
            self.g.leaves(self)
            self.agenda.size = 0
            self.ngold_ag = 0
            for i in range(self.g.nleaf):
                if self.A.E[i].gold:
                    materialise(&self.A, i)
                    pieces[np_] = i
                    np_ += 1
            while np_ > 1:
                # all valid pair combinations under the current weights
                self.ngold_ag = 0
                best = -1
                bestg = -1
                for i in range(np_):
                    for j in range(np_):
                        if i == j:
                            continue
                        self._rescore(pieces[i])
                        self._rescore(pieces[j])
                        before = self.agenda.size
                        ne0 = self.A.ne
                        self.g.combine(self, pieces[i], pieces[j])
                        self.agenda.size = before
                        for e in range(ne0, self.A.ne):
                            key = scaled(&self.A, e)
                            if best < 0 or key > bk:
                                best = e
                                bk = key
                            if self.A.E[e].gold and (bestg < 0 or key > bgk):
                                bestg = e
                                bgk = key
                if bestg < 0:
                    break
                if not self.A.E[best].gold:
                    self._update(bestg, best)
                a = self.A.E[bestg].left
                b = self.A.E[bestg].right
                materialise(&self.A, bestg)
                j = 0
                for i in range(np_):
                    if pieces[i] != a and pieces[i] != b:
                        pieces[j] = pieces[i]
                        j += 1
                pieces[j] = bestg
                np_ = j + 1
                steps += 1
        free(pieces)
        return steps, self.n_updates - upd0
