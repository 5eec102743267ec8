# C structures of the best-first search core (Zhang & Clark 2015, sections 3.4, 4.2-4.4).
from ._typedefs cimport atom_t, feat_t, weight_t, score_t, eid_t
from ._typedefs cimport uint32_t, int32_t, int16_t, uint8_t, uint64_t, int64_t

cdef struct Edge:
    # One hypothesis: a projective dependency tree over a set of input words, with its order.
    score_t F              # unscaled score: sum of action scores over the derivation
    uint64_t sig           # signature of (word, POS, constraint) string and tree: equal sig = same future
    eid_t left, right      # child edges (-1 for a leaf edge)
    int32_t head           # leaf id (token x POS) of the head word
    int32_t ldep1, ldep2   # leaf ids of the outermost and second-outermost left dependents of head
    int32_t rdep1, rdep2   # same on the right (-1: none)
    int32_t surf           # offset of the surface string (leaf ids) in the surface pool, -1 until popped
    int32_t bits           # offset of the covered-token bitset in the bit pool, -1 until popped
    int32_t epoch          # model epoch at which F was computed (training rescoring)
    int16_t hpos           # position of the head inside the surface string
    int16_t nwords         # number of words covered
    int16_t nact           # |e|: number of actions (leaf assignments + arcs)
    int16_t lval, rval     # left and right valency of the head
    int16_t gdeps          # number of the head's given (constrained) dependents already attached
    int16_t linl, linr     # number of the head's `lin`-ordered dependents attached on each side
    int16_t span_lo, span_hi  # gold span (positions in the reference) if gold
    uint8_t headleft       # 1: head comes from the left child (arc points right)
    uint8_t gold           # 1: gold edge (training / forced decoding)
