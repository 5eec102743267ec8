# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Synthesis grammar of syntactic SMT by generation (Zhang, Song, Song, Zhu & Liu 2014, §2.2).

Leaves are translation options: a target phrase (1..s words with its own dependency tree and
one root) for a contiguous source span.  Options overlap and exclude each other through the
source coverage vector (the core's bitset over source words); not all are used.  COMBINE
joins two edges with an arc between their head words, head left or right (right dependents
before left ones, so a tree has one derivation), as the dependency grammar does.  A goal
covers at least ``need`` source words (beta * n, §2.2.1); goals are expanded too, so the
output is the best goal popped within the pop budget L.

Features: Table 1's monolingual templates over target words and POS (arc, sibling,
neighbour, size and surface-boundary templates), Table 2's bilingual templates (phrase-pair
identity, P(trans) as a real value, source-path templates with LEN, LABELS and LABELSPOS
between the source words of the target head and modifier), a source-order template (is the
modifier's source span left or right of the head's), and the real-valued 4-gram LM feature
on the n-grams crossing each new boundary (``LMFeatures``).
"""
import numpy as np
cimport numpy as cnp
cimport cython
from libc.stdlib cimport calloc, free
from libc.string cimport memset

from ._typedefs cimport feat_t, eid_t, uint32_t, int32_t, int16_t, uint8_t, uint64_t
from ._hash cimport murmurhash3_words
from ._weights cimport FeatBuf, add2, add3, add4, add5, add6
from ._arena cimport Edge, GrammarState, new_edge
from ._arcs cimport ArcState, arc_leaf, arc_allowed, arc_join, arc_edge
from ._utils cimport grow
from ._search cimport Grammar, Search
from ._lmfeat cimport LMFeatures, LMCache
from ._lm cimport LMState

from ._search import instance_array as _arr

cnp.import_array()

# the grammar's state lives in the edge's opaque field: it must fit there (_arena.pxd, STATE_BYTES)
if sizeof(SMTState) > sizeof(GrammarState):
    raise ImportError("SMTState is larger than the edge's GrammarState (STATE_BYTES in _arena.pxd)")

cdef uint32_t A_NONE = 0x9E3779B1u
cdef uint32_t A_START = 0x85EBCA77u
cdef uint32_t A_END = 0xC2B2AE3Du

# feature template ids; never renumber (part of the SMT model format)
cdef enum:
    T_OPT = 1            # phrase-pair identity PHRASE(s) . PHRASE(t)
    T_SRC_HW             # source phrase . target head word
    T_LEAF_HW_HP
    T_LEAF_HP
    T_LEAF_WORDS         # target phrase alone
    T_OPT_CL             # lexical selection in context: phrase pair . source word left of the span
    T_OPT_CR             # ... right of the span
    T_TW_CL              # target phrase . source word left of the span
    T_TW_CR
    T_HW_SW              # target head word . every source word outside the span (global lexical selection)
    T_WH_PH_DIR = 10
    T_WH_DIR
    T_PH_DIR
    T_WM_PM_DIR
    T_WM_DIR
    T_PM_DIR
    T_WH_PH_WM_PM_DIR
    T_WH_WM_DIR
    T_PH_PM_DIR
    T_WH_PM_DIR
    T_PH_WM_DIR
    T_PH_PM_DIST
    T_WH_WM_DIST
    T_PH_PM_PS_DIR
    T_PM_PS_DIR
    T_WM_WS_DIR
    T_PH_PM_PML_DIR
    T_PH_PM_PMR_DIR
    T_WH_PM_PML_DIR
    T_WH_PM_PMR_DIR
    T_WH_PH_SIZE
    T_PH_SIZE
    T_B_W1_W0 = 40
    T_B_P1_P0
    T_B_W1_P0
    T_B_P1_W0
    T_B_W2_W1_W0
    T_B_P2_P1_P0
    T_B_W1_W0_W0N
    T_B_P1_P0_P0N
    T_SRCORD_PH_PM_DIR = 60
    T_SRCORD_WH_WM_DIR
    T_SRCREL = 62        # source order of the left and right edges' spans (distortion-like)
    T_SRCREL_DIR
    T_SRCREL_PH_PM_DIR
    T_SRCREL_W1_W0
    T_SRCREL_P1_P0
    T_SRCREL_GAP
    T_PATH_BASE = 70     # + 0..6: the seven Table 2 templates with LEN; +10: LABELS; +20: LABELSPOS
    T_LM_NGRAMS = 300    # real-valued: LM log10 p of the n-grams crossing a new boundary
    T_LM_SENTENCE = 301  # real-valued: the <s> and </s> n-grams of the edge read as a sentence
    T_R_PTRANS = 310     # real-valued: log10 P(trans) of an option
    T_R_WORDS = 311      # real-valued: target words of an option
    T_R_COVER = 312      # real-valued: source words of an option

cdef int MAXF = 72


cdef inline int _norm(int x) noexcept nogil:
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



@cython.final
cdef class SMTGrammar(Grammar):
    """The synthesis grammar behind :class:`wo._fast._search.Search` for SMT.

    Use: ``g = SMTGrammar(); g.set_lm(lm); g.set_instance(...); Search(g, W, bits).decode(...)``.
    The analysis returned by the search is ``slot_head`` int32[S]: the head word slot of every
    word slot of the instance (-1: a root, or a slot not in the output).
    Source: Zhang et al. 2014, §2.2 and Tables 1-2.
    """

    def __cinit__(self):
        self.n = 0
        self.nleaf = 0
        self.leaf_unit = NULL
        self.has_lm = False
        self.goal_expand = True
        self.memo_gen = -1
        self.bc_cap = 1024
        self.bc = <BndCache*>calloc(self.bc_cap, sizeof(BndCache))
        if self.bc == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.bc)
        self.max_features = MAXF

    def set_lm(self, lm):
        """Use an n-gram LM (``wo._fast._lm.NgramModel``) for the real-valued LM feature, or None.
        With an LM every instance needs ``slot_lm`` (LM ids of the slots' words)."""
        self.has_lm = lm is not None
        self.lmf = LMFeatures(lm, T_LM_NGRAMS, T_LM_SENTENCE) if self.has_lm else None

    @property
    def lm_feature_indices(self):
        """(weight index of the LM feature, 0) as set by the last search (testing aid)."""
        return self.lmf.feature_indices if self.has_lm else (0, 0)

    def set_instance(self, int n, opt_lo, opt_hi, opt_woff, opt_root, opt_atom, opt_src, opt_twords,
                     opt_sroot, opt_real, slot_word, slot_pos, slot_opt, slot_head, src_word,
                     path_len, path_lab, path_lpos, int need, slot_lm=None, gold=None):
        """Make this the sentence the search works on (arrays kept referenced, not copied).

        n: source words (units).  Per option (L of them; leaf i = option i): opt_lo/opt_hi
        int32[L] source span [lo, hi); opt_woff int32[L+1] CSR offsets of its word slots;
        opt_root int32[L] root word slot; opt_atom uint32[L] phrase-pair atom; opt_src
        uint32[L] source-phrase atom; opt_twords uint32[L] target-phrase atom; opt_sroot
        int32[L] source position of the span's syntactic root; opt_real float64[L*5] real
        values (in-phrase LM log10, log10 P(trans), target words, source words, and the log10
        the LM gains when the phrase is read as a sentence between <s> and </s>).  Per word slot
        (S of them): slot_word, slot_pos uint32[S] atoms; slot_opt int32[S]; slot_head int32[S]
        head slot inside the option (-1: the option's root).  src_word uint32[n] atoms;
        path_len, path_lab, path_lpos uint32[n*n]: atoms of LEN, LABELS, LABELSPOS of the
        source dependency path between two source positions (LABELS atoms 0 when LEN > 3).
        need: source words a goal covers (beta*n).  slot_lm int32[S]: LM ids (required with an
        LM).  gold: None or (g_leaf uint8[L] oracle options, g_lo int32[L] their reference
        start, s_ref int32[S] reference position per slot (-1), r_head int32[m] reference
        heads (-1 root), r_sublo int32[m], r_subhi int32[m] subtree spans).
        Raises ValueError for inconsistent shapes or an empty instance.
        """
        lo = _arr(opt_lo, np.int32, "opt_lo"); L = lo.shape[0]
        if n <= 0 or L <= 0:
            raise ValueError("empty instance (no source words or no options)")
        hi = _arr(opt_hi, np.int32, "opt_hi", L)
        woff = _arr(opt_woff, np.int32, "opt_woff", L + 1)
        S = int(woff[L])
        arrs = [lo, hi, woff, _arr(opt_root, np.int32, "opt_root", L), _arr(opt_atom, np.uint32, "opt_atom", L),
                _arr(opt_src, np.uint32, "opt_src", L), _arr(opt_twords, np.uint32, "opt_twords", L),
                _arr(opt_sroot, np.int32, "opt_sroot", L), _arr(opt_real, np.float64, "opt_real", 5 * L),
                _arr(slot_word, np.uint32, "slot_word", S), _arr(slot_pos, np.uint32, "slot_pos", S),
                _arr(slot_opt, np.int32, "slot_opt", S), _arr(slot_head, np.int32, "slot_head", S),
                _arr(src_word, np.uint32, "src_word", n), _arr(path_len, np.uint32, "path_len", n * n),
                _arr(path_lab, np.uint32, "path_lab", n * n), _arr(path_lpos, np.uint32, "path_lpos", n * n),
                np.arange(S, dtype=np.int32)]
        if lo.min() < 0 or hi.max() > n or (hi <= lo).any():
            raise ValueError("option spans out of range")
        if (np.diff(woff) <= 0).any() or woff[0] != 0:
            raise ValueError("every option needs at least one word")
        cdef const int32_t[::1] i0 = arrs[0], i1 = arrs[1], i2 = arrs[2], i3 = arrs[3], i7 = arrs[7]
        cdef const int32_t[::1] i11 = arrs[11], i12 = arrs[12], i17 = arrs[17]
        cdef const uint32_t[::1] u4 = arrs[4], u5 = arrs[5], u6 = arrs[6], u9 = arrs[9], u10 = arrs[10]
        cdef const uint32_t[::1] u13 = arrs[13], u14 = arrs[14], u15 = arrs[15], u16 = arrs[16]
        cdef const double[::1] d8 = arrs[8]
        self.l_lo = &i0[0]; self.l_hi = &i1[0]; self.l_woff = &i2[0]; self.l_root = &i3[0]
        self.l_atom = &u4[0]; self.l_src = &u5[0]; self.l_twords = &u6[0]; self.l_sroot = &i7[0]
        self.l_real = &d8[0]
        self.s_word = &u9[0]; self.s_pos = &u10[0]; self.s_opt = &i11[0]; self.s_head = &i12[0]
        self.src_word = &u13[0]; self.path_len = &u14[0]; self.path_lab = &u15[0]; self.path_lpos = &u16[0]
        self.ident = &i17[0]
        self.has_gold = gold is not None
        cdef const uint8_t[::1] g0
        cdef const int32_t[::1] g1, g2, g3, g4, g5
        if gold is not None:
            ga = [_arr(gold[0], np.uint8, "g_leaf", L), _arr(gold[1], np.int32, "g_lo", L),
                  _arr(gold[2], np.int32, "s_ref", S), _arr(gold[3], np.int32, "r_head")]
            m = ga[3].shape[0]
            ga += [_arr(gold[4], np.int32, "r_sublo", m), _arr(gold[5], np.int32, "r_subhi", m)]
            g0 = ga[0]; g1 = ga[1]; g2 = ga[2]; g3 = ga[3]; g4 = ga[4]; g5 = ga[5]
            self.g_leaf = &g0[0]; self.g_lo = &g1[0]; self.s_ref = &g2[0]
            self.r_head = &g3[0]; self.r_sublo = &g4[0]; self.r_subhi = &g5[0]
            self.gold_len = m
            arrs += ga
        if self.has_lm:
            self.lmf.set_leaves(_arr(slot_lm, np.int32, "slot_lm", S), S)
        sw = arrs[13]
        cl = np.where(lo > 0, sw[np.maximum(lo - 1, 0)], np.uint32(A_START)).astype(np.uint32)
        cr = np.where(hi < n, sw[np.minimum(hi, n - 1)], np.uint32(A_END)).astype(np.uint32)
        arrs += [cl, cr]
        cdef const uint32_t[::1] vcl = cl, vcr = cr
        self.l_cl = &vcl[0]
        self.l_cr = &vcr[0]
        self.max_features = MAXF + n
        cov = np.zeros(n, dtype=bool)
        for a, b in zip(lo, hi):
            cov[a:b] = True
        self.ncovmax = int(cov.sum())
        self._refs = arrs
        self.n = n
        self.nleaf = L
        self.nslot = S
        self.need = max(1, min(need, self.ncovmax))
        self.leaf_unit = self.l_lo
        self.leaf_uend = self.l_hi
        self.leaf_woff = self.l_woff
        self.leaf_words = self.ident
        self.use_dp = False
        self.has_glue = False
        self.goal_expand = True

    # ------------------------------------------------------------------ features
    cdef inline uint32_t _w(self, int32_t slot) noexcept nogil:
        return self.s_word[slot] if slot >= 0 else A_NONE

    cdef inline uint32_t _p(self, int32_t slot) noexcept nogil:
        return self.s_pos[slot] if slot >= 0 else A_NONE

    cdef int _leaf_features(self, Search s, int32_t i) noexcept nogil:
        cdef FeatBuf o
        o.f = s.fbuf; o.k = 0; o.mask = s.mask
        cdef int32_t r = self.l_root[i]
        add2(&o, T_OPT, self.l_atom[i], 0)
        add2(&o, T_SRC_HW, self.l_src[i], self.s_word[r])
        add2(&o, T_LEAF_HW_HP, self.s_word[r], self.s_pos[r])
        add2(&o, T_LEAF_HP, self.s_pos[r], 0)
        add2(&o, T_LEAF_WORDS, self.l_twords[i], 0)
        add2(&o, T_OPT_CL, self.l_atom[i], self.l_cl[i])
        add2(&o, T_OPT_CR, self.l_atom[i], self.l_cr[i])
        add2(&o, T_TW_CL, self.l_twords[i], self.l_cl[i])
        add2(&o, T_TW_CR, self.l_twords[i], self.l_cr[i])
        cdef int j
        for j in range(self.n):
            if j < self.l_lo[i] or j >= self.l_hi[i]:
                add2(&o, T_HW_SW, self.s_word[r], self.src_word[j])
        cdef const double* rv = &self.l_real[5 * i]
        cdef int nr = 0
        if self.has_lm:
            s.rfeat[nr] = self.lmf.f_lm; s.rval[nr] = rv[0]; nr += 1
            s.rfeat[nr] = self.lmf.f_lmsent; s.rval[nr] = rv[4]; nr += 1
        s.rfeat[nr] = self.f_ptrans; s.rval[nr] = rv[1]; nr += 1
        s.rfeat[nr] = self.f_words; s.rval[nr] = rv[2]; nr += 1
        s.rfeat[nr] = self.f_cover; s.rval[nr] = rv[3]; nr += 1
        s.nreal = nr
        return o.k

    cdef int _combine_features(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil:
        cdef Edge* L = &s.A.E[le]
        cdef Edge* R = &s.A.E[re]
        cdef Edge* H = L if headleft else R
        cdef Edge* M = R if headleft else L
        cdef FeatBuf o
        o.f = s.fbuf; o.k = 0; o.mask = s.mask
        cdef int32_t h = smt_state(H).hslot, m = smt_state(M).hslot
        cdef uint32_t wh = self.s_word[h], ph = self.s_pos[h], wm = self.s_word[m], pm = self.s_pos[m]
        cdef uint32_t d = <uint32_t>headleft
        cdef const int32_t* SL = &s.A.surf[L.surf]
        cdef const int32_t* SR = &s.A.surf[R.surf]
        cdef int nl = L.nwords, nr = R.nwords
        # positions in the combined surface
        cdef int hp = smt_state(H).arc.hpos + (0 if headleft else nl)
        cdef int mp = smt_state(M).arc.hpos + (nl if headleft else 0)
        cdef uint32_t dist = <uint32_t>_norm(hp - mp)
        cdef int32_t sib = smt_state(H).arc.rdep1 if headleft else smt_state(H).arc.ldep1
        cdef uint32_t ps = self._p(sib), ws = self._w(sib)
        cdef const int32_t* SM = SR if headleft else SL
        cdef int nm = nr if headleft else nl
        cdef int mh = smt_state(M).arc.hpos
        cdef uint32_t pml = self._p(SM[mh - 1]) if mh > 0 else A_START
        cdef uint32_t pmr = self._p(SM[mh + 1]) if mh + 1 < nm else A_END
        add3(&o, T_WH_PH_DIR, wh, ph, d)
        add2(&o, T_WH_DIR, wh, d)
        add2(&o, T_PH_DIR, ph, d)
        add3(&o, T_WM_PM_DIR, wm, pm, d)
        add2(&o, T_WM_DIR, wm, d)
        add2(&o, T_PM_DIR, pm, d)
        add5(&o, T_WH_PH_WM_PM_DIR, wh, ph, wm, pm, d)
        add3(&o, T_WH_WM_DIR, wh, wm, d)
        add3(&o, T_PH_PM_DIR, ph, pm, d)
        add3(&o, T_WH_PM_DIR, wh, pm, d)
        add3(&o, T_PH_WM_DIR, ph, wm, d)
        add4(&o, T_PH_PM_DIST, ph, pm, d, dist)
        add4(&o, T_WH_WM_DIST, wh, wm, d, dist)
        add4(&o, T_PH_PM_PS_DIR, ph, pm, ps, d)
        add3(&o, T_PM_PS_DIR, pm, ps, d)
        add3(&o, T_WM_WS_DIR, wm, ws, d)
        add4(&o, T_PH_PM_PML_DIR, ph, pm, pml, d)
        add4(&o, T_PH_PM_PMR_DIR, ph, pm, pmr, d)
        add4(&o, T_WH_PM_PML_DIR, wh, pm, pml, d)
        add4(&o, T_WH_PM_PMR_DIR, wh, pm, pmr, d)
        cdef uint32_t sz = <uint32_t>_norm(nl + nr)
        add3(&o, T_WH_PH_SIZE, wh, ph, sz)
        add2(&o, T_PH_SIZE, ph, sz)
        # surface string at the boundary B (first word of the right edge)
        cdef int32_t b0 = SR[0], b1 = SL[nl - 1]
        cdef int32_t b2 = SL[nl - 2] if nl > 1 else -1
        cdef int32_t b0n = SR[1] if nr > 1 else -1
        cdef uint32_t w0 = self.s_word[b0], w1 = self.s_word[b1], p0 = self.s_pos[b0], p1 = self.s_pos[b1]
        add2(&o, T_B_W1_W0, w1, w0)
        add2(&o, T_B_P1_P0, p1, p0)
        add2(&o, T_B_W1_P0, w1, p0)
        add2(&o, T_B_P1_W0, p1, w0)
        add3(&o, T_B_W2_W1_W0, self._w(b2), w1, w0)
        add3(&o, T_B_P2_P1_P0, self._p(b2), p1, p0)
        add3(&o, T_B_W1_W0_W0N, w1, w0, self._w(b0n))
        add3(&o, T_B_P1_P0_P0N, p1, p0, self._p(b0n))
        # bilingual: source order and the source dependency path (Table 2)
        cdef int32_t oh = self.s_opt[h], om = self.s_opt[m]
        cdef int32_t sh = self.l_sroot[oh], sm = self.l_sroot[om]
        cdef uint32_t sord = 1 if self.l_lo[om] < self.l_lo[oh] else 2
        add4(&o, T_SRCORD_PH_PM_DIR, ph, pm, d, sord)
        add4(&o, T_SRCORD_WH_WM_DIR, wh, wm, d, sord)
        # where the right edge's source words lie relative to the left edge's: after them
        # (monotone), before them (swapped) or interleaved; adjacent or with a gap
        cdef uint32_t rel, gap = 0
        if smt_state(L).shi < smt_state(R).slo:
            gap = <uint32_t>(smt_state(R).slo - smt_state(L).shi - 1)
            rel = 1
        elif smt_state(R).shi < smt_state(L).slo:
            gap = <uint32_t>(smt_state(L).slo - smt_state(R).shi - 1)
            rel = 2
        else:
            rel = 3
        if gap > 3:
            gap = 3
        add3(&o, T_SRCREL, rel, gap, 0)
        add3(&o, T_SRCREL_DIR, rel, gap, d)
        add5(&o, T_SRCREL_PH_PM_DIR, rel, gap, ph, pm, d)
        add4(&o, T_SRCREL_W1_W0, rel, gap, w1, w0)
        add4(&o, T_SRCREL_P1_P0, rel, gap, p1, p0)
        add2(&o, T_SRCREL_GAP, rel, <uint32_t>_norm(smt_state(R).slo - smt_state(L).shi))
        cdef uint32_t swh = self.src_word[sh], swm = self.src_word[sm]
        cdef int k = sh * self.n + sm
        cdef uint32_t pa[3]
        cdef int j, nt = 1
        pa[0] = self.path_len[k]
        if self.path_lab[k] != 0:
            pa[1] = self.path_lab[k]
            pa[2] = self.path_lpos[k]
            nt = 3
        for j in range(nt):
            add4(&o, T_PATH_BASE + 10 * j, ph, pm, d, pa[j])
            add4(&o, T_PATH_BASE + 10 * j + 1, wh, pm, d, pa[j])
            add4(&o, T_PATH_BASE + 10 * j + 2, ph, wm, d, pa[j])
            add4(&o, T_PATH_BASE + 10 * j + 3, wh, wm, d, pa[j])
            add4(&o, T_PATH_BASE + 10 * j + 4, swh, swm, d, pa[j])
            add4(&o, T_PATH_BASE + 10 * j + 5, swh, wh, d, pa[j])
            add4(&o, T_PATH_BASE + 10 * j + 6, swm, wm, d, pa[j])
        s.nreal = 0
        if self.has_lm:
            # every edge is also scored as a sentence (<s> edge </s>): the combination's
            # sentence feature is that score of L+R minus those of L and R, so the feature sums
            # to the LM's sentence-boundary n-grams of the edge whatever its size
            self.lmf.combine(s, le, re, -1)
            if not (self.memo_gen == self.lmf.gen and self.memo_le == le and self.memo_re == re):
                self.memo_val = (self._bnd(SL, nl, SR, nr) - self._edge_bnd(s, le)
                                 - self._edge_bnd(s, re))
                self.memo_le = le; self.memo_re = re; self.memo_gen = self.lmf.gen
            s.rfeat[1] = self.lmf.f_lmsent
            s.rval[1] = self.memo_val
            s.nreal = 2
        return o.k

    cdef double _edge_bnd(self, Search s, eid_t e) noexcept nogil:
        """:meth:`_bnd` of one materialised edge's words, computed once per edge (an edge
        takes part in many combinations); indexed like the LM cache, by its bitset slot."""
        cdef Edge* x = &s.A.E[e]
        cdef int idx = x.bits // s.A.W64, old = self.bc_cap
        if idx >= self.bc_cap:
            if grow(<void**>&self.bc, &self.bc_cap, sizeof(BndCache), idx + 1) < 0:
                return self._bnd(&s.A.surf[x.surf], x.nwords, &s.A.surf[x.surf], 0)
            memset(&self.bc[old], 0, (self.bc_cap - old) * sizeof(BndCache))
        cdef BndCache* c = &self.bc[idx]
        if c.eid != e or c.gen != self.lmf.gen:
            c.val = self._bnd(&s.A.surf[x.surf], x.nwords, &s.A.surf[x.surf], 0)
            c.eid = e
            c.gen = self.lmf.gen
        return c.val

    cdef double _bnd(self, const int32_t* SL, int nl, const int32_t* SR, int nr) noexcept nogil:
        """log10 the LM gains on the words SL + SR read as a sentence: their first N-1 words
        after <s> instead of alone, and </s> after their last words."""
        cdef int n1 = self.lmf.n1, t = nl + nr, j
        cdef int m = t if t < n1 else n1
        cdef double gain = self.lmf._prefix(SL, nl, SR, m, True) - self.lmf._prefix(SL, nl, SR, m, False)
        cdef LMState a, b
        if t < n1:
            self.lmf.lm.begin(&a)
            j = 0
        else:
            a.len = 0
            j = t - n1
        while j < t:
            self.lmf.lm.score(&a, self.lmf.leaf_lm[SL[j] if j < nl else SR[j - nl]], &b)
            a = b
            j += 1
        return gain + self.lmf.lm.score(&a, self.lmf.lm.eos, &b)

    # ------------------------------------------------------------------ grammar interface
    cdef int leaves(self, Search s) noexcept nogil:
        """One leaf edge per translation option, scored and pushed."""
        cdef int i, k
        cdef eid_t e
        cdef Edge* x
        cdef SMTState* xs
        cdef uint32_t key[2]
        cdef uint32_t lk[1]
        lk[0] = T_R_PTRANS
        self.f_ptrans = murmurhash3_words(lk, 1, 0) & s.mask
        lk[0] = T_R_WORDS
        self.f_words = murmurhash3_words(lk, 1, 0) & s.mask
        lk[0] = T_R_COVER
        self.f_cover = murmurhash3_words(lk, 1, 0) & s.mask
        if self.has_lm:
            self.lmf.begin(s)
        for i in range(self.nleaf):
            e = new_edge(&s.A)
            if e < 0:
                return -1
            x = &s.A.E[e]
            x.left = -1; x.right = -1; x.head = i
            x.nwords = <int16_t>(self.l_woff[i + 1] - self.l_woff[i])
            x.nact = 1
            x.act = 0
            xs = smt_state(x)
            xs.hslot = self.l_root[i]
            arc_leaf(&xs.arc, <int16_t>(self.l_root[i] - self.l_woff[i]))
            xs.ncov = <int16_t>(self.l_hi[i] - self.l_lo[i])
            xs.slo = <int16_t>self.l_lo[i]
            xs.shi = <int16_t>(self.l_hi[i] - 1)
            x.gold = 0
            x.span_lo = -1; x.span_hi = -1
            if self.has_gold and self.g_leaf[i]:
                x.gold = 1
                x.span_lo = <int16_t>self.g_lo[i]
                x.span_hi = <int16_t>(self.g_lo[i] + x.nwords)
            key[0] = <uint32_t>i; key[1] = 0x5A17u
            x.sig = (<uint64_t>murmurhash3_words(key, 2, 1) << 32) | murmurhash3_words(key, 2, 2)
            k = self._leaf_features(s, i)
            if s.push_edge(e, k) < 0:
                return -1
        return 0

    cdef int _try(self, Search s, eid_t le, eid_t re, int headleft) noexcept nogil:
        cdef Edge* L = &s.A.E[le]
        cdef Edge* R = &s.A.E[re]
        cdef Edge* H = L if headleft else R
        cdef Edge* M = R if headleft else L
        if not arc_allowed(&smt_state(H).arc, headleft):   # right dependents before left ones
            return 0
        if L.nwords + R.nwords > 32000:
            return 0
        cdef uint8_t gold = 0
        cdef int32_t href, mref
        if self.has_gold and L.gold and R.gold and L.span_hi == R.span_lo:
            href = self.s_ref[smt_state(H).hslot]
            mref = self.s_ref[smt_state(M).hslot]
            if (href >= 0 and mref >= 0 and self.r_head[mref] == href
                    and M.span_lo == self.r_sublo[mref] and M.span_hi == self.r_subhi[mref]
                    and (headleft or H.span_hi == self.r_subhi[href])):
                gold = 1
        if s.gold_only and not gold:
            return 0
        cdef eid_t e = new_edge(&s.A)
        if e < 0:
            return -1
        L = &s.A.E[le]; R = &s.A.E[re]
        H = L if headleft else R
        M = R if headleft else L
        cdef Edge* x = &s.A.E[e]
        cdef SMTState* xs = smt_state(x)
        cdef SMTState* ls = smt_state(L)
        cdef SMTState* rs = smt_state(R)
        cdef SMTState* hs = smt_state(H)
        arc_edge(x, le, re, L, R, headleft)
        arc_join(&xs.arc, &hs.arc, smt_state(M).hslot, headleft, L.nwords)
        xs.hslot = hs.hslot
        xs.ncov = ls.ncov + rs.ncov
        xs.slo = ls.slo if ls.slo < rs.slo else rs.slo
        xs.shi = ls.shi if ls.shi > rs.shi else rs.shi
        x.gold = gold
        if gold:
            x.span_lo = L.span_lo; x.span_hi = R.span_hi
        else:
            x.span_lo = -1; x.span_hi = -1
        return s.push_edge(e, self._combine_features(s, le, re, headleft))

    cdef int combine(self, Search s, eid_t le, eid_t re) noexcept nogil:
        """Both arcs between the head words of le (left) and re (right)."""
        cdef int a = self._try(s, le, re, 1)
        if a < 0:
            return -1
        cdef int b = self._try(s, le, re, 0)
        if b < 0:
            return -1
        return a + b

    cdef int features(self, Search s, eid_t e) noexcept nogil:
        cdef Edge* x = &s.A.E[e]
        if x.left < 0:
            return self._leaf_features(s, x.head)
        return self._combine_features(s, x.left, x.right, x.act)

    cdef bint is_goal(self, Search s, eid_t e) noexcept nogil:
        """Training/forced decoding: the gold edge over the whole reference; decoding: an edge
        covering at least ``need`` source words (beta * n, section 2.2.1)."""
        cdef Edge* x = &s.A.E[e]
        if self.has_gold:
            return x.gold and x.nwords == self.gold_len
        return smt_state(x).ncov >= self.need

    cdef bint is_full(self, Search s, eid_t e) noexcept nogil:
        return smt_state(&s.A.E[e]).ncov >= self.ncovmax

    cdef void _fill_heads(self, Search s, eid_t e, int32_t* heads) noexcept nogil:
        cdef Edge* x = &s.A.E[e]
        cdef Edge* H
        cdef Edge* M
        cdef int j
        if x.left < 0:
            for j in range(self.l_woff[x.head], self.l_woff[x.head + 1]):
                heads[j] = self.s_head[j]
            return
        if x.act:
            H = &s.A.E[x.left]; M = &s.A.E[x.right]
        else:
            H = &s.A.E[x.right]; M = &s.A.E[x.left]
        self._fill_heads(s, x.left, heads)
        self._fill_heads(s, x.right, heads)
        heads[smt_state(M).hslot] = smt_state(H).hslot

    cdef object analysis(self, Search s, const eid_t* pieces, int npieces):
        """slot_head int32[S]: head slot of every output slot (-1: root; later pieces hang
        from the first piece's root; slots not in the output: -2)."""
        cdef cnp.ndarray[int32_t, ndim=1] heads = np.full(self.nslot, -2, dtype=np.int32)
        cdef int32_t* hp = <int32_t*>heads.data
        cdef int i
        cdef int32_t r, root0 = -1
        for i in range(npieces):
            self._fill_heads(s, pieces[i], hp)
            r = smt_state(&s.A.E[pieces[i]]).hslot
            if root0 < 0:
                root0 = r
            else:
                hp[r] = root0
        return heads
