# Head-outward arcs shared by the grammars whose edges are projective dependency trees built by
# COMBINE with an arc between the two heads (dependency: _dep.pyx, Zhang & Clark 2015 section
# 4.2; SMT synthesis: _smt.pyx, Zhang et al. 2014 section 2.2).  Written once here: the
# head-outward part of the state, the constraint that fixes one derivation per tree, and the
# core fields (children, head, signature, size) of the edge an arc builds.
from ._typedefs cimport eid_t, int32_t, int16_t, uint8_t, uint32_t, uint64_t
from ._hash cimport murmurhash3_words
from ._arena cimport Edge


cdef struct ArcState:
    # the head-outward state of a tree, the first member of the grammar's own state struct
    int32_t ldep1, rdep1   # outermost left / right dependent attached (the grammar's id of it:
                           # a leaf, a word slot; -1: none)
    int16_t hpos           # position of the head inside the surface string
    int16_t lval, rval     # left and right valency of the head (dependents attached)


cdef inline void arc_leaf(ArcState* a, int16_t hpos) noexcept nogil:
    """The state of a leaf whose head word is at position ``hpos`` of its surface: no dependents."""
    a.ldep1 = -1
    a.rdep1 = -1
    a.hpos = hpos
    a.lval = 0
    a.rval = 0


cdef inline bint arc_allowed(const ArcState* h, int headleft) noexcept nogil:
    """Right dependents are attached before left ones, so every tree has one derivation: a head
    that has a left dependent takes no right one (``headleft``: the head is the left edge's)."""
    return not (headleft and h.lval > 0)


cdef inline void arc_join(ArcState* x, const ArcState* h, int32_t dep, int headleft,
                          int lwords) noexcept nogil:
    """State ``x`` of the tree made by attaching the tree of dependent ``dep`` (its head's id) to
    head state ``h``, on the right (``headleft``) or on the left; ``lwords`` is the length of the
    left edge's surface (the head's position moves by it when the head is the right edge's)."""
    if headleft:
        x.hpos = h.hpos
        x.ldep1 = h.ldep1
        x.rdep1 = dep
        x.lval = h.lval
        x.rval = h.rval + 1
    else:
        x.hpos = <int16_t>(lwords + h.hpos)
        x.ldep1 = dep
        x.rdep1 = h.rdep1
        x.lval = h.lval + 1
        x.rval = h.rval


cdef inline void arc_edge(Edge* x, eid_t le, eid_t re, const Edge* L, const Edge* R,
                          int headleft) noexcept nogil:
    """Fill the core fields of the new edge ``x`` = COMBINE(le, re) with an arc head left
    (``headleft`` = 1) or head right: children, lexical head, action, derivation signature
    (MurmurHash3 of both children's signatures and the direction), words and actions."""
    cdef uint32_t sk[5]
    x.left = le
    x.right = re
    x.head = L.head if headleft else R.head
    x.act = <uint8_t>headleft
    sk[0] = <uint32_t>(L.sig >> 32); sk[1] = <uint32_t>L.sig
    sk[2] = <uint32_t>(R.sig >> 32); sk[3] = <uint32_t>R.sig; sk[4] = <uint32_t>headleft
    x.sig = (<uint64_t>murmurhash3_words(sk, 5, 3) << 32) | murmurhash3_words(sk, 5, 4)
    x.nwords = L.nwords + R.nwords
    x.nact = L.nact + R.nact + 1
