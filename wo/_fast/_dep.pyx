# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Dependency grammar for the best-first search core (Zhang & Clark 2015, section 4).

An edge is a projective dependency tree over a set of input tokens with its surface order
(section 4.2).  COMBINE joins two edges with an arc between their heads, head left or right,
under the constraints of section 4.1 (given POS and heads; a word has all its given
dependents before it is attached; right dependents before left ones, so each tree has one
derivation) and, for SR'19 input, the `lin` order constraints.  The Table 2 feature templates
are computed for the new action only (section 3.3); with arc labels (SR input, section 5.7)
the direction templates get label-conjoined copies.  Leaves of one token are mutually
exclusive (POS candidates, candidate forms): coverage bitsets are over tokens.
"""
import numpy as np
cimport numpy as cnp
cimport cython
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset

from ._typedefs cimport atom_t, feat_t, eid_t
from ._typedefs cimport uint32_t, int32_t, int16_t, uint8_t, uint64_t
from ._hash cimport murmurhash3_words
from ._weights cimport FeatBuf, add2, add3, add4, add5, add6, dot
from ._arena cimport Edge, GrammarState, new_edge
from ._arcs cimport ArcState, arc_leaf, arc_allowed, arc_join, arc_edge
from ._search cimport Grammar, Search
from ._lmfeat cimport LMFeatures

cnp.import_array()

# the grammar's state lives in the edge's opaque field: it must fit there (_arena.pxd, STATE_BYTES)
if sizeof(DepState) > sizeof(GrammarState):
    raise ImportError("DepState is larger than the edge's GrammarState (STATE_BYTES in _arena.pxd)")

# special atoms (arbitrary odd constants, fixed forever: they are part of the model format)
cdef uint32_t A_NONE = 0x9E3779B1u
cdef uint32_t A_START = 0x85EBCA77u
cdef uint32_t A_END = 0xC2B2AE3Du

# feature template ids (Table 2 of Zhang & Clark 2015); never renumber: part of the model format
cdef enum:
    T_LEAF_WP = 1
    T_LEAF_P
    T_WH_PH_SIZE
    T_WH_SIZE
    T_PH_SIZE
    T_WH_PH_DIR
    T_WH_DIR
    T_PH_DIR
    T_WM_PM_DIR
    T_WM_DIR
    T_PM_DIR
    T_WH_PH_DIST
    T_WH_DIST
    T_PH_DIST
    T_WM_PM_DIST
    T_WM_DIST
    T_PM_DIST
    T_WH_PH_WM_PM_DIR
    T_WH_PH_WM_PM_DIST
    T_WH_PH_PM_DIR
    T_WH_PH_PM_DIST
    T_PH_WM_PM_DIR
    T_PH_WM_PM_DIST
    T_PH_PM_DIR
    T_PH_PM_DIST
    T_PH_PM_PB_DIR
    T_PH_PHN_PM_PMN_DIR
    T_WH_PM_PML_DIR
    T_WH_PM_PMR_DIR
    T_PH_PM_PML_DIR
    T_PH_PM_PMR_DIR
    T_PH_PM_PS_DIR
    T_PH_PS_DIR
    T_PM_PS_DIR
    T_WH_WS_DIR
    T_WM_WS_DIR
    T_PH_WS_DIR
    T_PM_WS_DIR
    T_WH_PS_DIR
    T_WM_PS_DIR
    T_WH_PM_PS_PS2_DIR
    T_PH_PM_PS_PS2_DIR
    # completed word (the dependent m on attachment; the root of a complete sentence: +100)
    T_C_W_P_WL_PL
    T_C_P_PL
    T_C_W_P_PL
    T_C_P_WL_PL
    T_C_W_P_WR_PR
    T_C_P_PR
    T_C_W_P_PR
    T_C_P_WR_PR
    T_C_W_P_LVAL
    T_C_W_P_RVAL
    T_C_W_P_LVAL_RVAL
    T_C_P_LVAL
    T_C_P_RVAL
    T_C_P_LVAL_RVAL
    # surface string at the boundary B (first word of the right phrase)
    T_B_W1_W0
    T_B_P1_P0
    T_B_W1_P0
    T_B_P1_W0
    T_B_W1_W0_W0N
    T_B_W2_W1_W0
    T_B_P1_P0_P0N
    T_B_P2_P1_P0
    T_B_P1_W0_P0N
    T_B_P2_W1_P0
    # complete sentence
    T_S_W0
    T_S_W0_W1
    T_S_WL
    T_S_WL_WL1
    T_S_P0
    T_S_P0_P1
    T_S_P0_P1_P2
    T_S_PL
    T_S_PL_PL1
    T_S_PL_PL1_PL2
    T_COMPLETE_ROOT_BASE = 100
    T_LABEL_BASE = 200    # label-conjoined copies of the direction templates (SR input)
    T_LM_NGRAMS = 300     # real-valued: log10 p of the n-grams an action completes inside the string
    T_LM_SENTENCE = 301   # real-valued: the <s> / </s> n-grams of a complete sentence

# template blocks of a COMBINE action, scored separately by the decoding score cache (tags of
# the cache keys: never 0)
cdef enum:
    B_SIZE = 1
    B_LOCAL
    B_BETWEEN
    B_MCHILD
    B_SIB
    B_COMPLETED
    B_BOUNDARY
    B_SENTENCE
    B_PHN                 # the POS-neighbour template of the between block (POS-index key)
    SC_BITS = 17          # 2^17 slots of 16 bytes (2 MB), direct-mapped

cdef inline int _norm(int x) noexcept nogil:
    """NORM of Table 2: 1,2,3,4,5, (5,10], (10,20], (20,40], 40+ -> 1..9."""
    if x < 0:
        x = -x
    if x <= 5:
        return x
    if x <= 10:
        return 6
    if x <= 20:
        return 7
    if x <= 40:
        return 8
    return 9



def _sized(arr, int n, str name):
    """``arr`` if it has n entries, else ValueError naming it."""
    if arr.shape[0] != n:
        raise ValueError(f"{name} has the wrong length")
    return arr


@cython.final
cdef class DepGrammar(Grammar):
    """The dependency grammar (section 4) behind :class:`wo._fast._search.Search`.

    Use: ``g = DepGrammar(); g.set_instance(...); Search(g, weights, bits).decode(...)``.
    The analysis returned by the search is ``heads`` int32[n]: the head token of every token
    (-1 for the root); in the greedy default output every piece's root hangs from the first
    piece's root.

    Decoding score caches (while ``Search.frozen``): an action's score is the sum of its
    template blocks (size; arc over h, m, direction, distance; POS between h and m; m's
    outermost dependents; h's siblings; m completed; boundary string; complete sentence), each
    summed in emission order and cached for the search under the leaves it reads: the arc
    block in a dense [L, L, 2, 9] table (L <= 256 leaves), the POS-between weights in a dense
    [P, P, P, 2] table over the instance's distinct POS (P <= 64), the others in a 2^17-slot
    direct-mapped table keyed by 12-bit leaf ids (L < 4095; otherwise uncached).  Memory:
    2 MB + 144 L^2 bytes + 8 P^3 bytes per grammar.
    """

    def __cinit__(self):
        self.dflt_word = NULL
        self.zeros = NULL
        self.lin_need_buf = NULL
        self.cap_leafbuf = 0
        self.cap_tokbuf = 0
        self.n = 0
        self.nleaf = 0
        self.leaf_unit = NULL
        self.has_lm = False
        self.sc = <ScoreSlot*>calloc(1 << SC_BITS, sizeof(ScoreSlot))   # NULL: no cache
        self.sc_ok = False
        self.loc = NULL; self.loc_cap = 0; self.loc_ok = False
        self.leaf_pidx = NULL; self.cap_pidx = 0; self.npos = 0
        self.pbw = NULL; self.pbw_cap = 0; self.pb_ok = False

    def __dealloc__(self):
        free(self.dflt_word); free(self.zeros); free(self.lin_need_buf); free(self.sc)
        free(self.loc); free(self.leaf_pidx); free(self.pbw)

    @property
    def lm_feature_indices(self):
        """(weight index of the in-string LM feature, of the sentence-boundary LM feature),
        as set by the last search (testing aid)."""
        return self.lmf.feature_indices if self.has_lm else (0, 0)

    def set_lm(self, lm):
        """Use an n-gram LM (``wo._fast._lm.NgramModel``) for real-valued features, or None.

        With an LM every instance needs ``leaf_lm`` (LM ids of the leaves' words).
        """
        self.has_lm = lm is not None
        self.lmf = LMFeatures(lm, T_LM_NGRAMS, T_LM_SENTENCE) if self.has_lm else None

    def set_instance(self, tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold=None,
                     leaf_word=None, tok_label=None, tok_lin=None, leaf_lm=None, tok_order=None):
        """Make this the instance the search works on (arrays are kept referenced, not copied).

        tok_word : uint32[n] word atoms (MurmurHash3 of the forms);  given_head : int32[n] (-1
        none, -2 root, else the head token);  given_ndeps : int32[n] number of tokens whose
        given head is this token;  leaf_tok : int32[L] token of each leaf edge (L >= n);
        leaf_pos : uint32[L] POS atom of each leaf;  gold : None, or (gold_head int32[n] (-1
        root), gold_pos uint32[n] POS atoms, gold_idx int32[n] reference positions, sub_lo
        int32[n], sub_hi int32[n] subtree spans [lo, hi), and optionally gold_word uint32[n],
        the atom of each token's gold form among its leaves) for training and forced decoding.
        Optional, for shared-task (SR) input (Zhang & Clark 2015, section 5.7): leaf_word :
        uint32[L] word atom of each leaf (default tok_word[leaf_tok]); the leaves of one token
        form a mutually exclusive group of candidate forms (x POS), exactly one of which is
        used;  tok_label : uint32[n] atoms of the given arc labels (0 = none; given labels add
        label-conjoined copies of the direction templates);  tok_lin : int32[n] SR'19 ``lin``
        (+k: k-th closest among the head's lin-dependents on its right, -k on its left, 0 =
        free), a hard constraint.  leaf_lm : int32[L] LM vocabulary id of each leaf's word,
        required when the grammar has an LM (:meth:`set_lm`).  tok_order : int32[n], a
        permutation of 0..n-1: the surface position of every token, fixed (the search then
        parses that string: two edges combine only when they are adjacent in it, so the goal is
        the model's best tree for the given order, used to score other systems' candidates).
        Raises ValueError for inconsistent shapes, an empty instance, a leaf out of range,
        more than 32000 tokens, a missing leaf_lm, a tok_order that is not a permutation, or
        tok_order with gold; MemoryError.
        """
        cdef const uint32_t[::1] tw = tok_word
        cdef const int32_t[::1] gh = given_head
        cdef const int32_t[::1] gn = given_ndeps
        cdef const int32_t[::1] lt = leaf_tok
        cdef const uint32_t[::1] lp = leaf_pos
        cdef const uint32_t[::1] lw
        cdef const uint32_t[::1] tl
        cdef const int32_t[::1] tn
        cdef const int32_t[::1] to
        cdef const int32_t[::1] g_head
        cdef const uint32_t[::1] g_pos
        cdef const int32_t[::1] g_idx
        cdef const int32_t[::1] g_lo
        cdef const int32_t[::1] g_hi
        cdef const uint32_t[::1] g_word
        self.n = tw.shape[0]
        self.nleaf = lt.shape[0]
        if self.n <= 0 or self.nleaf < self.n:
            raise ValueError("empty instance or a token without a leaf")
        if gh.shape[0] != self.n or gn.shape[0] != self.n or lp.shape[0] != self.nleaf:
            raise ValueError("instance arrays have inconsistent shapes")
        if self.n > 32000:
            raise ValueError("sentence too long (more than 32000 tokens)")
        if self._grow_instance_bufs() < 0:
            raise MemoryError()
        cdef int i, t
        for i in range(self.nleaf):
            if lt[i] < 0 or lt[i] >= self.n:
                raise ValueError("leaf_tok refers to a token out of range")
        if leaf_word is None:      # plain word ordering: a leaf's word is its token's word
            for i in range(self.nleaf):
                self.dflt_word[i] = tw[lt[i]]
            self.leaf_word = self.dflt_word
        else:
            lw = _sized(leaf_word, self.nleaf, "leaf_word")
            self.leaf_word = &lw[0]
        self.has_labels = tok_label is not None
        memset(self.zeros, 0, self.n * sizeof(uint32_t))   # no labels, no lin
        self.tok_label = self.zeros
        self.tok_lin = <const int32_t*>self.zeros
        memset(self.lin_need_buf, 0, 2 * self.n * sizeof(int32_t))
        if tok_label is not None:
            tl = _sized(tok_label, self.n, "tok_label")
            self.tok_label = &tl[0]
        if tok_lin is not None:
            tn = _sized(tok_lin, self.n, "tok_lin")
            self.tok_lin = &tn[0]
            for t in range(self.n):   # lin-dependents each head must take, per side
                if tn[t] != 0 and gh[t] >= 0:
                    self.lin_need_buf[2 * gh[t] + (1 if tn[t] > 0 else 0)] += 1
        self.lin_need = self.lin_need_buf
        self.has_order = tok_order is not None
        if self.has_order:
            if gold is not None:
                raise ValueError("tok_order and gold cannot be given together")
            to = _sized(tok_order, self.n, "tok_order")
            if not np.array_equal(np.sort(np.asarray(to)), np.arange(self.n)):
                raise ValueError("tok_order is not a permutation of the tokens")
            self.tok_order = &to[0]
        self.tok_word = &tw[0]
        self.given_head = &gh[0]
        self.given_ndeps = &gn[0]
        self.leaf_tok = &lt[0]
        self.leaf_pos = &lp[0]
        self._refs = [tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold, leaf_word,
                      tok_label, tok_lin, leaf_lm, tok_order]
        self.has_gold = gold is not None
        self.gold_has_word = False
        if self.has_gold:
            g_head = gold[0]; g_pos = gold[1]; g_idx = gold[2]; g_lo = gold[3]; g_hi = gold[4]
            self.gold_head = &g_head[0]
            self.gold_pos = &g_pos[0]
            self.gold_idx = &g_idx[0]
            self.sub_lo = &g_lo[0]
            self.sub_hi = &g_hi[0]
            if len(gold) > 5 and gold[5] is not None:
                g_word = gold[5]
                self.gold_word = &g_word[0]
                self.gold_has_word = True
        self.leaf_unit = self.leaf_tok
        self.max_features = 512 + 4 * self.n
        self.sc_ok = self.nleaf < 4095 and self.sc != NULL
        self._dense_caches()
        self.use_dp = False
        if self.has_lm:
            self.lmf.set_leaves(leaf_lm if leaf_lm is None else _sized(leaf_lm, self.nleaf, "leaf_lm"), self.nleaf)

    cdef void _dense_caches(self) noexcept:
        """Size the dense decoding caches for this instance (each is off when too large)."""
        cdef size_t need = <size_t>self.nleaf * self.nleaf * 18
        cdef void* p
        cdef int i, j
        self.loc_ok = False
        if self.nleaf <= 256:
            if self.loc_cap < need:
                p = realloc(self.loc, need * sizeof(double))
                if p != NULL:
                    self.loc = <double*>p
                    self.loc_cap = need
            self.loc_ok = self.loc_cap >= need
        self.pb_ok = False
        if self.cap_pidx < self.nleaf:
            p = realloc(self.leaf_pidx, self.nleaf)
            if p == NULL:
                return
            self.leaf_pidx = <uint8_t*>p
            self.cap_pidx = self.nleaf
        cdef uint32_t atoms[64]
        self.npos = 0
        for i in range(self.nleaf):
            for j in range(self.npos):
                if atoms[j] == self.leaf_pos[i]:
                    break
            else:
                if self.npos == 64:
                    return
                j = self.npos
                atoms[j] = self.leaf_pos[i]
                self.npos += 1
            self.leaf_pidx[i] = <uint8_t>j
        need = <size_t>self.npos * self.npos * self.npos * 2
        if self.pbw_cap < need:
            p = realloc(self.pbw, need * sizeof(float))
            if p == NULL:
                return
            self.pbw = <float*>p
            self.pbw_cap = need
        self.pb_ok = True

    cdef int _grow_instance_bufs(self) noexcept:
        """Make the per-instance default buffers hold nleaf leaves and n tokens (-1 on failure)."""
        cdef uint32_t* w
        if self.cap_leafbuf < self.nleaf:
            w = <uint32_t*>realloc(self.dflt_word, self.nleaf * sizeof(uint32_t))
            if w == NULL:
                return -1
            self.dflt_word = w
            self.cap_leafbuf = self.nleaf
        if self.cap_tokbuf < self.n:
            free(self.zeros); free(self.lin_need_buf)
            self.zeros = <uint32_t*>malloc(self.n * sizeof(uint32_t))
            self.lin_need_buf = <int32_t*>malloc(2 * self.n * sizeof(int32_t))
            if self.zeros == NULL or self.lin_need_buf == NULL:
                self.cap_tokbuf = 0
                return -1
            self.cap_tokbuf = self.n
        return 0

    # ------------------------------------------------------------------ features (Table 2)
    cdef inline uint32_t _wd(self, int32_t leaf) noexcept nogil:
        if leaf < 0:
            return A_NONE
        return self.leaf_word[leaf]

    cdef inline uint32_t _ps(self, int32_t leaf) noexcept nogil:
        if leaf < 0:
            return A_NONE
        return self.leaf_pos[leaf]

    cdef int _leaf_features(self, Search s, int32_t leaf) noexcept nogil:
        """Leaf templates of Table 2 (word and POS of the leaf) into s.fbuf; returns the count."""
        cdef FeatBuf o
        o.f = s.fbuf; o.k = 0; o.mask = s.mask
        s.nreal = 0
        if self.has_lm:
            self.lmf.leaf(s, leaf)
        cdef uint32_t w = self._wd(leaf), p = self._ps(leaf)
        add2(&o, T_LEAF_WP, w, p)
        add2(&o, T_LEAF_P, p, 0)
        return o.k

    cdef void _completed(self, FeatBuf* o, uint32_t base, int32_t c, int32_t cl, int32_t cr,
                         int lval, int rval) noexcept nogil:
        """Completed-word templates of Table 2 for word c with outermost dependents cl, cr."""
        cdef uint32_t w = self._wd(c), p = self._ps(c)
        cdef uint32_t wl = self._wd(cl), pl = self._ps(cl), wr = self._wd(cr), pr = self._ps(cr)
        cdef uint32_t lv = <uint32_t>lval, rv = <uint32_t>rval
        add4(o, base + T_C_W_P_WL_PL, w, p, wl, pl)
        add2(o, base + T_C_P_PL, p, pl)
        add3(o, base + T_C_W_P_PL, w, p, pl)
        add3(o, base + T_C_P_WL_PL, p, wl, pl)
        add4(o, base + T_C_W_P_WR_PR, w, p, wr, pr)
        add2(o, base + T_C_P_PR, p, pr)
        add3(o, base + T_C_W_P_PR, w, p, pr)
        add3(o, base + T_C_P_WR_PR, p, wr, pr)
        add3(o, base + T_C_W_P_LVAL, w, p, lv)
        add3(o, base + T_C_W_P_RVAL, w, p, rv)
        add4(o, base + T_C_W_P_LVAL_RVAL, w, p, lv, rv)
        add2(o, base + T_C_P_LVAL, p, lv)
        add2(o, base + T_C_P_RVAL, p, rv)
        add3(o, base + T_C_P_LVAL_RVAL, p, lv, rv)

    cdef inline int32_t _at(self, const int32_t* SL, int nl, const int32_t* SR, int nr, int p) noexcept nogil:
        if p < 0 or p >= nl + nr:
            return -1
        if p < nl:
            return SL[p]
        return SR[p - nl]

    cdef void _ctx(self, Search s, eid_t le, eid_t re, int headleft, ArcCtx* c) noexcept nogil:
        """The atoms and positions the COMBINE templates of (le, re, headleft) read."""
        cdef Edge* L = &s.A.E[le]
        cdef Edge* R = &s.A.E[re]
        cdef Edge* H
        cdef Edge* M
        c.nl = L.nwords; c.nr = R.nwords
        c.SL = &s.A.surf[L.surf]
        c.SR = &s.A.surf[R.surf]
        c.headleft = headleft
        if headleft:
            H = L; M = R
            c.hp = dep_state(L).arc.hpos; c.mp = c.nl + dep_state(R).arc.hpos
            c.dir = 1
            c.sb = dep_state(H).arc.rdep1; c.sb2 = dep_state(H).rdep2
        else:
            H = R; M = L
            c.hp = c.nl + dep_state(R).arc.hpos; c.mp = dep_state(L).arc.hpos
            c.dir = 2
            c.sb = dep_state(H).arc.ldep1; c.sb2 = dep_state(H).ldep2
        c.h = H.head; c.m = M.head
        c.ml = dep_state(M).arc.ldep1; c.mr = dep_state(M).arc.rdep1
        c.mlval = dep_state(M).arc.lval; c.mrval = dep_state(M).arc.rval
        if headleft:
            c.hl1 = dep_state(H).arc.ldep1; c.hr1 = c.m; c.hlval = dep_state(H).arc.lval; c.hrval = dep_state(H).arc.rval + 1
        else:
            c.hl1 = c.m; c.hr1 = dep_state(H).arc.rdep1; c.hlval = dep_state(H).arc.lval + 1; c.hrval = dep_state(H).arc.rval
        c.dist = <uint32_t>_norm(c.hp - c.mp)
        c.size = <uint32_t>_norm(c.nl + c.nr)
        c.wh = self._wd(c.h); c.ph = self._ps(c.h); c.wm = self._wd(c.m); c.pm = self._ps(c.m)
        c.ws = self._wd(c.sb); c.ps_ = self._ps(c.sb); c.ps2 = self._ps(c.sb2)
        c.lab = self.tok_label[self.leaf_tok[c.m]] if self.has_labels else 0
        c.b2 = self._at(c.SL, c.nl, c.SR, c.nr, c.nl - 2); c.b1 = c.SL[c.nl - 1]
        c.b0 = c.SR[0]; c.b0n = self._at(c.SL, c.nl, c.SR, c.nr, c.nl + 1)

    # Table 2's direction templates in four blocks; _arc_features emits them in this order.
    cdef void _arc_local(self, FeatBuf* o, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil:
        """Templates over (h, m, dir, dist) only."""
        cdef uint32_t wh = c.wh, ph = c.ph, wm = c.wm, pm = c.pm, dist = c.dist
        add3(o, base + T_WH_PH_DIR, wh, ph, dir)
        add2(o, base + T_WH_DIR, wh, dir)
        add2(o, base + T_PH_DIR, ph, dir)
        add3(o, base + T_WM_PM_DIR, wm, pm, dir)
        add2(o, base + T_WM_DIR, wm, dir)
        add2(o, base + T_PM_DIR, pm, dir)
        add4(o, base + T_WH_PH_DIST, wh, ph, dist, dir)
        add3(o, base + T_WH_DIST, wh, dist, dir)
        add3(o, base + T_PH_DIST, ph, dist, dir)
        add4(o, base + T_WM_PM_DIST, wm, pm, dist, dir)
        add3(o, base + T_WM_DIST, wm, dist, dir)
        add3(o, base + T_PM_DIST, pm, dist, dir)
        add5(o, base + T_WH_PH_WM_PM_DIR, wh, ph, wm, pm, dir)
        add6(o, base + T_WH_PH_WM_PM_DIST, wh, ph, wm, pm, dist, dir)
        add4(o, base + T_WH_PH_PM_DIR, wh, ph, pm, dir)
        add5(o, base + T_WH_PH_PM_DIST, wh, ph, pm, dist, dir)
        add4(o, base + T_PH_WM_PM_DIR, ph, wm, pm, dir)
        add5(o, base + T_PH_WM_PM_DIST, ph, wm, pm, dist, dir)
        add3(o, base + T_PH_PM_DIR, ph, pm, dir)
        add4(o, base + T_PH_PM_DIST, ph, pm, dist, dir)

    cdef void _arc_between(self, FeatBuf* o, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil:
        """POS(h) POS(m) POS(b) for every b strictly between h and m, and the neighbours."""
        cdef int b
        cdef uint32_t ph = c.ph, pm = c.pm
        if c.hp < c.mp:
            for b in range(c.hp + 1, c.mp):
                add4(o, base + T_PH_PM_PB_DIR, ph, pm, self._ps(self._at(c.SL, c.nl, c.SR, c.nr, b)), dir)
            add5(o, base + T_PH_PHN_PM_PMN_DIR, ph, self._ps(self._at(c.SL, c.nl, c.SR, c.nr, c.hp + 1)), pm,
                     self._ps(self._at(c.SL, c.nl, c.SR, c.nr, c.mp - 1)), dir)
        else:
            for b in range(c.mp + 1, c.hp):
                add4(o, base + T_PH_PM_PB_DIR, ph, pm, self._ps(self._at(c.SL, c.nl, c.SR, c.nr, b)), dir)
            add5(o, base + T_PH_PHN_PM_PMN_DIR, ph, self._ps(self._at(c.SL, c.nl, c.SR, c.nr, c.hp - 1)), pm,
                     self._ps(self._at(c.SL, c.nl, c.SR, c.nr, c.mp + 1)), dir)

    cdef void _arc_mchild(self, FeatBuf* o, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil:
        """Templates over (h, m, m's outermost dependents, dir)."""
        add4(o, base + T_WH_PM_PML_DIR, c.wh, c.pm, self._ps(c.ml), dir)
        add4(o, base + T_WH_PM_PMR_DIR, c.wh, c.pm, self._ps(c.mr), dir)
        add4(o, base + T_PH_PM_PML_DIR, c.ph, c.pm, self._ps(c.ml), dir)
        add4(o, base + T_PH_PM_PMR_DIR, c.ph, c.pm, self._ps(c.mr), dir)

    cdef void _arc_sib(self, FeatBuf* o, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil:
        """Templates over (h, m, h's two nearest dependents on m's side, dir)."""
        cdef uint32_t wh = c.wh, ph = c.ph, wm = c.wm, pm = c.pm, ws = c.ws, ps_ = c.ps_
        add4(o, base + T_PH_PM_PS_DIR, ph, pm, ps_, dir)
        add3(o, base + T_PH_PS_DIR, ph, ps_, dir)
        add3(o, base + T_PM_PS_DIR, pm, ps_, dir)
        add3(o, base + T_WH_WS_DIR, wh, ws, dir)
        add3(o, base + T_WM_WS_DIR, wm, ws, dir)
        add3(o, base + T_PH_WS_DIR, ph, ws, dir)
        add3(o, base + T_PM_WS_DIR, pm, ws, dir)
        add3(o, base + T_WH_PS_DIR, wh, ps_, dir)
        add3(o, base + T_WM_PS_DIR, wm, ps_, dir)
        add5(o, base + T_WH_PM_PS_PS2_DIR, wh, pm, ps_, c.ps2, dir)
        add5(o, base + T_PH_PM_PS_PS2_DIR, ph, pm, ps_, c.ps2, dir)

    cdef void _dir_block(self, FeatBuf* o, int which, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil:
        """One block of the direction templates: B_LOCAL, B_BETWEEN, B_MCHILD or B_SIB."""
        if which == B_LOCAL:
            self._arc_local(o, base, dir, c)
        elif which == B_BETWEEN:
            self._arc_between(o, base, dir, c)
        elif which == B_MCHILD:
            self._arc_mchild(o, base, dir, c)
        else:
            self._arc_sib(o, base, dir, c)

    cdef void _arc_features(self, FeatBuf* o, uint32_t base, uint32_t dir, const ArcCtx* c) noexcept nogil:
        """The Table-2 templates that contain the arc direction ``dir`` (ids offset by ``base``).

        Called once with the plain direction and, when arc labels are given (SR input, Zhang &
        Clark 2015 section 5.7), once more with the direction conjoined with the dependent's label.
        """
        self._arc_local(o, base, dir, c)
        self._arc_between(o, base, dir, c)
        self._arc_mchild(o, base, dir, c)
        self._arc_sib(o, base, dir, c)

    cdef void _boundary(self, FeatBuf* o, const ArcCtx* c) noexcept nogil:
        """Surface-string templates at the boundary B = nl (first word of the right phrase)."""
        cdef uint32_t w1 = self._wd(c.b1), w0 = self._wd(c.b0), p1 = self._ps(c.b1), p0 = self._ps(c.b0)
        add2(o, T_B_W1_W0, w1, w0)
        add2(o, T_B_P1_P0, p1, p0)
        add2(o, T_B_W1_P0, w1, p0)
        add2(o, T_B_P1_W0, p1, w0)
        add3(o, T_B_W1_W0_W0N, w1, w0, self._wd(c.b0n))
        add3(o, T_B_W2_W1_W0, self._wd(c.b2), w1, w0)
        add3(o, T_B_P1_P0_P0N, p1, p0, self._ps(c.b0n))
        add3(o, T_B_P2_P1_P0, self._ps(c.b2), p1, p0)
        add3(o, T_B_P1_W0_P0N, p1, w0, self._ps(c.b0n))
        add3(o, T_B_P2_W1_P0, self._ps(c.b2), w1, p0)

    cdef void _sentence(self, FeatBuf* o, const ArcCtx* c) noexcept nogil:
        """Complete-sentence templates, and the root completed (only when nl + nr == n)."""
        cdef int nn = c.nl + c.nr
        cdef const int32_t* SL = c.SL
        cdef const int32_t* SR = c.SR
        cdef int nl = c.nl, nr = c.nr
        cdef int32_t x0 = self._at(SL, nl, SR, nr, 0), x1 = self._at(SL, nl, SR, nr, 1)
        cdef int32_t x2 = self._at(SL, nl, SR, nr, 2)
        cdef int32_t y0 = self._at(SL, nl, SR, nr, nn - 1), y1 = self._at(SL, nl, SR, nr, nn - 2)
        cdef int32_t y2 = self._at(SL, nl, SR, nr, nn - 3)
        add2(o, T_S_W0, self._wd(x0), 0)
        add2(o, T_S_W0_W1, self._wd(x0), self._wd(x1))
        add2(o, T_S_WL, self._wd(y0), 0)
        add2(o, T_S_WL_WL1, self._wd(y0), self._wd(y1))
        add2(o, T_S_P0, self._ps(x0), 0)
        add2(o, T_S_P0_P1, self._ps(x0), self._ps(x1))
        add3(o, T_S_P0_P1_P2, self._ps(x0), self._ps(x1), self._ps(x2))
        add2(o, T_S_PL, self._ps(y0), 0)
        add2(o, T_S_PL_PL1, self._ps(y0), self._ps(y1))
        add3(o, T_S_PL_PL1_PL2, self._ps(y0), self._ps(y1), self._ps(y2))
        self._completed(o, T_COMPLETE_ROOT_BASE, c.h, c.hl1, c.hr1, c.hlval, c.hrval)

    cdef int _combine_features(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil:
        """phi of the action joining le (left) and re (right) with an arc between their heads.

        Fills s.fbuf and returns the number of features. Both children are materialised.
        """
        cdef FeatBuf o
        o.f = s.fbuf; o.k = 0; o.mask = s.mask
        s.nreal = 0
        if self.has_lm:
            self.lmf.combine(s, le, re, self.n)
        cdef ArcCtx c
        self._ctx(s, le, re, headleft, &c)
        # dependency syntax
        add3(&o, T_WH_PH_SIZE, c.wh, c.ph, c.size)
        add2(&o, T_WH_SIZE, c.wh, c.size)
        add2(&o, T_PH_SIZE, c.ph, c.size)
        self._arc_features(&o, 0, c.dir, &c)
        if c.lab != 0:
            self._arc_features(&o, T_LABEL_BASE, c.lab * 4u + c.dir, &c)
        # m is complete once attached
        self._completed(&o, 0, c.m, c.ml, c.mr, c.mlval, c.mrval)
        self._boundary(&o, &c)
        if c.nl + c.nr == self.n:
            self._sentence(&o, &c)
        return o.k

    # ------------------------------------------------------------------ decoding score cache
    cdef double _block(self, Search s, int which, uint64_t key, const ArcCtx* c) noexcept nogil:
        """theta . phi of one block of the COMBINE templates (summed in emission order),
        from the score cache when ``key`` (0 = not cacheable) was seen in this search."""
        cdef ScoreSlot* slot = NULL
        if key != 0 and self.sc != NULL:
            slot = &self.sc[(key * <uint64_t>0x9E3779B97F4A7C15) >> (64 - SC_BITS)]
            if slot.key == key:
                return slot.val
        cdef FeatBuf o
        o.f = s.fbuf; o.k = 0; o.mask = s.mask
        if which == B_SIZE:
            add3(&o, T_WH_PH_SIZE, c.wh, c.ph, c.size)
            add2(&o, T_WH_SIZE, c.wh, c.size)
            add2(&o, T_PH_SIZE, c.ph, c.size)
        elif which <= B_SIB:           # direction templates: plain, then label-conjoined
            self._dir_block(&o, which, 0, c.dir, c)
            if c.lab != 0:
                self._dir_block(&o, which, T_LABEL_BASE, c.lab * 4u + c.dir, c)
        elif which == B_COMPLETED:
            self._completed(&o, 0, c.m, c.ml, c.mr, c.mlval, c.mrval)
        elif which == B_BOUNDARY:
            self._boundary(&o, c)
        else:
            self._sentence(&o, c)
        cdef double v = dot(s.W, s.fbuf, o.k)
        if slot != NULL:
            slot.key = key
            slot.val = v
        return v

    cdef double _between_score(self, Search s, const ArcCtx* c) noexcept nogil:
        """The between block (POS(h) POS(m) POS(b) per b between h and m, then the neighbours'
        template) summed in emission order like ``dot``, its weights from the dense POS cache."""
        if not self.pb_ok:
            return self._block(s, B_BETWEEN, 0, c)
        cdef FeatBuf o
        cdef uint32_t f1[1]
        o.f = f1; o.mask = s.mask
        cdef int P = self.npos, b, lo, hi, hn, mn
        cdef size_t row = ((<size_t>self.leaf_pidx[c.h] * P + self.leaf_pidx[c.m]) * P) * 2 + (c.dir - 1)
        cdef int32_t leaf
        cdef float w
        cdef double a = 0.0
        if c.hp < c.mp:
            lo = c.hp + 1; hi = c.mp; hn = c.hp + 1; mn = c.mp - 1
        else:
            lo = c.mp + 1; hi = c.hp; hn = c.hp - 1; mn = c.mp + 1
        for b in range(lo, hi):
            leaf = self._at(c.SL, c.nl, c.SR, c.nr, b)
            w = self.pbw[row + 2 * <size_t>self.leaf_pidx[leaf]]
            if w != w:
                o.k = 0
                add4(&o, T_PH_PM_PB_DIR, c.ph, c.pm, self._ps(leaf), c.dir)
                w = s.W[f1[0]]
                self.pbw[row + 2 * <size_t>self.leaf_pidx[leaf]] = w
            a += w
        cdef int32_t lh = self._at(c.SL, c.nl, c.SR, c.nr, hn), lm = self._at(c.SL, c.nl, c.SR, c.nr, mn)
        cdef uint64_t key = ((<uint64_t>B_PHN << 60) | (<uint64_t>self.leaf_pidx[c.h] << 20)
                             | (<uint64_t>self.leaf_pidx[lh] << 14) | (<uint64_t>self.leaf_pidx[c.m] << 8)
                             | (<uint64_t>self.leaf_pidx[lm] << 2) | c.dir)
        cdef ScoreSlot* slot = &self.sc[(key * <uint64_t>0x9E3779B97F4A7C15) >> (64 - SC_BITS)]
        if slot.key == key:
            a += slot.val
        else:
            o.k = 0
            add5(&o, T_PH_PHN_PM_PMN_DIR, c.ph, self._ps(lh), c.pm, self._ps(lm), c.dir)
            slot.key = key
            slot.val = s.W[f1[0]]
            a += slot.val
        cdef int i
        if c.lab != 0:                 # the label-conjoined copy, hashed as it comes
            o.f = s.fbuf; o.k = 0
            self._arc_between(&o, T_LABEL_BASE, c.lab * 4u + c.dir, c)
            for i in range(o.k):
                a += s.W[s.fbuf[i]]
        return a

    cdef double _combine_score(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil:
        """theta . phi of the COMBINE action, as the sum of its template blocks' scores (a
        fixed order), each block from the per-search score cache when possible (decoding only:
        the weights must not change while the cache lives).  Equal to the action_score of
        :meth:`_combine_features` up to the rounding of the summation order."""
        s.nreal = 0
        if self.has_lm:
            self.lmf.combine(s, le, re, self.n)
        cdef ArcCtx c
        self._ctx(s, le, re, headleft, &c)
        cdef bint ok = self.sc_ok
        cdef uint64_t h = <uint64_t>(c.h + 1), m = <uint64_t>(c.m + 1)
        cdef uint64_t ml = <uint64_t>(c.ml + 1), mr = <uint64_t>(c.mr + 1)
        cdef uint64_t dr = <uint64_t>c.dir
        cdef double a = self._block(s, B_SIZE, ((<uint64_t>B_SIZE << 60) | (h << 4) | c.size) if ok else 0, &c)
        cdef double* lp
        if self.loc_ok:                # dense (h, m, dir, dist) cache
            lp = &self.loc[((<size_t>c.h * self.nleaf + c.m) * 2 + (c.dir - 1)) * 9 + (c.dist - 1)]
            if lp[0] != lp[0]:
                lp[0] = self._block(s, B_LOCAL, 0, &c)
            a += lp[0]
        else:
            a += self._block(s, B_LOCAL, ((<uint64_t>B_LOCAL << 60) | (h << 18) | (m << 6) | (dr << 4) | c.dist) if ok else 0, &c)
        a += self._between_score(s, &c)
        a += self._block(s, B_MCHILD, ((<uint64_t>B_MCHILD << 60) | (h << 38) | (m << 26) | (ml << 14) | (mr << 2) | dr) if ok else 0, &c)
        a += self._block(s, B_SIB, ((<uint64_t>B_SIB << 60) | (h << 38) | (m << 26) | (<uint64_t>(c.sb + 1) << 14)
                                    | (<uint64_t>(c.sb2 + 1) << 2) | dr) if ok else 0, &c)
        a += self._block(s, B_COMPLETED, ((<uint64_t>B_COMPLETED << 60) | (m << 40) | (ml << 28) | (mr << 16)
                                          | (<uint64_t>c.mlval << 8) | <uint64_t>c.mrval)
                         if ok and c.mlval < 256 and c.mrval < 256 else 0, &c)
        a += self._block(s, B_BOUNDARY, ((<uint64_t>B_BOUNDARY << 60) | (<uint64_t>(c.b2 + 1) << 36) | (<uint64_t>(c.b1 + 1) << 24)
                                         | (<uint64_t>(c.b0 + 1) << 12) | <uint64_t>(c.b0n + 1)) if ok else 0, &c)
        if c.nl + c.nr == self.n:
            a += self._block(s, B_SENTENCE, 0, &c)
        cdef int i
        for i in range(s.nreal):
            a += s.W[s.rfeat[i]] * s.rval[i]
        return a


    # ------------------------------------------------------------------ grammar interface
    cdef int leaves(self, Search s) noexcept nogil:
        """One leaf edge per (token, POS[, form]) leaf, scored by the leaf templates and pushed."""
        cdef int i, k
        cdef uint32_t key3[6]
        cdef eid_t e
        cdef Edge* x
        cdef DepState* xs
        cdef int tok
        if self.has_lm:
            self.lmf.begin(s)              # a new search: edge ids start again
        if s.frozen and self.sc != NULL:   # a new decode: weights may differ from the last one
            memset(self.sc, 0, (1 << SC_BITS) * sizeof(ScoreSlot))
        if s.frozen and self.loc_ok:       # all-ones bytes: NaN = not computed yet
            memset(self.loc, 0xFF, <size_t>self.nleaf * self.nleaf * 18 * sizeof(double))
        if s.frozen and self.pb_ok:
            memset(self.pbw, 0xFF, <size_t>self.npos * self.npos * self.npos * 2 * sizeof(float))
        for i in range(self.nleaf):
            e = new_edge(&s.A)
            if e < 0:
                return -1
            x = &s.A.E[e]
            tok = self.leaf_tok[i]
            x.left = -1; x.right = -1; x.head = i
            if self.n < 32767:             # pair keys are int16 (longer inputs: no filter)
                x.pk_head = <int16_t>self.leaf_tok[i]
                x.pk_want = <int16_t>(self.given_head[x.pk_head] if self.given_ndeps[x.pk_head] == 0 else -3)
            xs = dep_state(x)
            arc_leaf(&xs.arc, 0)
            xs.ldep2 = -1; xs.rdep2 = -1
            xs.gdeps = 0; xs.linl = 0; xs.linr = 0
            x.nwords = 1; x.nact = 1
            x.act = 0
            x.gold = 0
            x.span_lo = -1; x.span_hi = -1
            if self.has_order:             # parsing a given string: spans are its positions
                x.span_lo = self.tok_order[tok]
                x.span_hi = self.tok_order[tok] + 1
            if self.has_gold and self.leaf_pos[i] == self.gold_pos[tok] and (
                    not self.gold_has_word or self.leaf_word[i] == self.gold_word[tok]):
                x.gold = 1
                x.span_lo = self.gold_idx[tok]
                x.span_hi = self.gold_idx[tok] + 1
            k = self._leaf_features(s, i)
            key3[0] = self.leaf_word[i]; key3[1] = self.leaf_pos[i]
            key3[2] = <uint32_t>self.given_head[tok]; key3[3] = <uint32_t>self.given_ndeps[tok]
            key3[4] = self.tok_label[tok]; key3[5] = <uint32_t>self.tok_lin[tok]
            if self.has_order:             # equal words at different positions are not duplicates
                key3[5] ^= <uint32_t>(self.tok_order[tok] + 1) << 16
            x.sig = (<uint64_t>murmurhash3_words(key3, 6, 1) << 32) | murmurhash3_words(key3, 6, 2)
            if s.push_edge(e, k) < 0:
                return -1
        return 0

    cdef int _try(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil:
        """COMBINE(le, re, HeadLeft/HeadRight) under the constraints of section 4.1; push the result.

        Returns 1 (pushed), 0 (not allowed or dropped) or -1 (memory).
        """
        cdef Edge* L = &s.A.E[le]
        cdef Edge* R = &s.A.E[re]
        cdef Edge* H
        cdef Edge* M
        if headleft:
            H = L; M = R
        else:
            H = R; M = L
        if not arc_allowed(&dep_state(H).arc, headleft):   # right dependents before left ones
            return 0
        if self.has_order and L.span_hi != R.span_lo:   # not adjacent in the given string
            return 0
        cdef int htok = self.leaf_tok[H.head], mtok = self.leaf_tok[M.head]
        cdef int32_t gh = self.given_head[mtok]
        if gh != -1 and gh != htok:   # given head (or given root) disagrees
            return 0
        if dep_state(M).gdeps != self.given_ndeps[mtok]:   # m still misses a given dependent
            return 0
        cdef int32_t lin = self.tok_lin[mtok]
        if lin != 0:   # SR'19 `lin`: side of the head, rank among the head's lin-dependents there
            if headleft:
                if lin < 0 or dep_state(H).linr != lin - 1:
                    return 0
            elif lin > 0 or dep_state(H).linl != -lin - 1:
                return 0
        if not headleft and dep_state(H).linr != self.lin_need[2 * htok + 1]:
            return 0   # a left dependent would close the right side before its lin-dependents
        cdef uint8_t gold = 0
        if self.has_gold and L.gold and R.gold and L.span_hi == R.span_lo and self.gold_head[mtok] == htok:
            if M.span_lo == self.sub_lo[mtok] and M.span_hi == self.sub_hi[mtok]:
                if headleft or H.span_hi == self.sub_hi[htok]:
                    gold = 1
        if s.gold_only and not gold:
            return 0
        cdef eid_t e = new_edge(&s.A)
        if e < 0:
            return -1
        L = &s.A.E[le]; R = &s.A.E[re]
        if headleft:
            H = L; M = R
        else:
            H = R; M = L
        cdef Edge* x = &s.A.E[e]
        cdef DepState* xs = dep_state(x)
        cdef DepState* hs = dep_state(H)
        arc_edge(x, le, re, L, R, headleft)
        if self.n < 32767:
            x.pk_head = <int16_t>htok; x.pk_want = <int16_t>self.given_head[htok]
        arc_join(&xs.arc, &hs.arc, M.head, headleft, L.nwords)
        if headleft:
            xs.ldep2 = hs.ldep2; xs.rdep2 = hs.arc.rdep1
        else:
            xs.ldep2 = hs.arc.ldep1; xs.rdep2 = hs.rdep2
        xs.gdeps = hs.gdeps + (1 if gh == htok else 0)
        if xs.gdeps != self.given_ndeps[htok] and self.n < 32767:
            x.pk_want = -3                 # misses a given dependent: cannot be a dependent yet
        xs.linl = hs.linl + (1 if lin < 0 else 0)
        xs.linr = hs.linr + (1 if lin > 0 else 0)
        x.gold = gold
        if gold or self.has_order:
            x.span_lo = L.span_lo; x.span_hi = R.span_hi
        else:
            x.span_lo = -1; x.span_hi = -1
        if s.frozen:
            return s.push_scored(e, self._combine_score(s, le, re, headleft))
        return s.push_edge(e, self._combine_features(s, le, re, headleft))

    cdef int combine(self, Search s, eid_t le, eid_t re) noexcept nogil:
        """Both arcs between the heads of le (left) and re (right): head left, then head right."""
        cdef int a = self._try(s, le, re, 1)
        if a < 0:
            return -1
        cdef int b = self._try(s, le, re, 0)
        if b < 0:
            return -1
        return a + b

    cdef int features(self, Search s, eid_t e) noexcept nogil:
        """Features of the action that built e (leaf templates or the COMBINE templates)."""
        cdef Edge* x = &s.A.E[e]
        if x.left < 0:
            return self._leaf_features(s, x.head)
        return self._combine_features(s, x.left, x.right, x.act)

    cdef bint is_goal(self, Search s, eid_t e) noexcept nogil:
        """A goal covers every token and its head is free to be the root (section 4.1)."""
        cdef Edge* x = &s.A.E[e]
        cdef int tok
        if x.nwords != self.n:
            return False
        tok = self.leaf_tok[x.head]
        return (self.given_head[tok] == -1 or self.given_head[tok] == -2) and dep_state(x).gdeps == self.given_ndeps[tok]

    cdef void _fill_heads(self, Search s, eid_t e, int32_t* heads) noexcept nogil:
        cdef Edge* x = &s.A.E[e]
        cdef Edge* H
        cdef Edge* M
        if x.left < 0:
            return
        if x.act:
            H = &s.A.E[x.left]; M = &s.A.E[x.right]
        else:
            H = &s.A.E[x.right]; M = &s.A.E[x.left]
        heads[self.leaf_tok[M.head]] = self.leaf_tok[H.head]
        self._fill_heads(s, x.left, heads)
        self._fill_heads(s, x.right, heads)

    cdef object analysis(self, Search s, const eid_t* pieces, int npieces):
        """heads int32[n]: head token per token (-1 root); later pieces hang from the first's root."""
        cdef cnp.ndarray[int32_t, ndim=1] heads = np.full(self.n, -1, dtype=np.int32)
        cdef int32_t* hp = <int32_t*>heads.data
        cdef int i, tok, root0 = -1
        for i in range(npieces):
            self._fill_heads(s, pieces[i], hp)
            tok = self.leaf_tok[s.A.E[pieces[i]].head]
            if root0 < 0:
                root0 = tok
            else:
                hp[tok] = root0
        return heads
