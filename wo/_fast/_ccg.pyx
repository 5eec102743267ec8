# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""CCG grammar for the best-first search core (Zhang & Clark 2015, section 3).

An edge is a CCG derivation over a set of input tokens with its surface string (section 3.2):
category, lexical head (word and POS), leftmost and rightmost words and POS, size, coverage.
Leaf edges assign a lexical category to a token (one leaf per token x POS x category); two
edges combine when a binary rule instance read off the training derivations (Fowler & Penn
2010; section 3.1) has their categories as (left, right) in that order and their tokens are
disjoint (the driver checks the coverage bitsets).

Unary rules are folded into actions: every lexical assignment and every binary combination
also yields, for each unary rule instance on its result category, a second edge whose action
is "assignment/combination, then that unary rule".  Its score is the paper's (F of the lower
edge + the unary action's features) and its size |e| counts both actions, so scores equal the
paper's two-edge construction; the edge is merely pushed together with its lower edge instead
of after it is popped.  This gives at most one unary rule per edge (no unary loops) and keeps
every edge binary-or-leaf for the driver (materialise, rescoring).

Goal: an edge covering every input token, of any category (the converted EWT data has
S, NP and S\\NP roots).  DP-signature (sections 3.2, 3.4): the category, the head word and
POS, the two leftmost and two rightmost words and POS tags, and the coverage bitset (the set
of input tokens, which identifies the multiset of words).  Features: the Table 1 templates,
hashed with MurmurHash3 into the scaled linear model as the dependency grammar does.  With
an n-gram LM (:meth:`CCGGrammar.set_lm`), the real-valued LM features of the dependency
grammar (``wo._fast._lmfeat``; Zhang, Blackwood & Clark 2012) score the n-grams each
combination creates across its boundary.
No Python object is touched in leaves/combine/features/dp_signature (nogil).
"""
import numpy as np
cimport numpy as cnp
cimport cython

from ._typedefs cimport feat_t, eid_t, uint32_t, int16_t, int32_t, int64_t, uint64_t, uint8_t
from ._hash cimport murmurhash3_words
from ._weights cimport FeatBuf, add2, add3
from ._arena cimport Edge, GrammarState, new_edge
from ._search cimport Grammar, Search
from ._lmfeat cimport LMFeatures

from ._search import instance_array as _arr

cnp.import_array()

# the grammar's state lives in the edge's opaque field: it must fit there (_arena.pxd, STATE_BYTES)
if sizeof(CCGState) > sizeof(GrammarState):
    raise ImportError("CCGState is larger than the edge's GrammarState (STATE_BYTES in _arena.pxd)")

# special atoms (fixed forever: part of the model format)
cdef uint32_t A_NONE = 0x9E3779B1u

# feature template ids (Table 1 of Zhang & Clark 2015); never renumber: part of the model format
cdef enum:
    # all edges (the edge's category c)
    T_C_SIZE = 1          # category + size (words)
    T_C_HW                # category + head word
    T_C_SIZE_HW           # category + size + head word
    T_C_HP                # category + head POS
    T_C_LW                # category + leftmost word
    T_C_RW                # category + rightmost word
    # edges of more than one word
    T_C_LPP               # category + leftmost POS bigram
    T_C_RPP               # category + rightmost POS bigram
    T_C_LP_RP             # category + leftmost POS + rightmost POS
    # binary edges
    T_B_RULE              # the binary rule
    T_B_RULE_HW           # rule + head word
    T_B_RULE_HW_NW        # rule + head word + non-head word
    T_B_WW                # word bigram at the boundary
    T_B_PP                # POS bigram at the boundary
    T_B_WWW_L             # word trigrams resulting from the combination (two)
    T_B_WWW_R
    T_B_PPP_L             # POS trigrams (two)
    T_B_PPP_R
    T_B_CCC_L             # lexical category trigrams (two)
    T_B_CCC_R
    T_B_WP                # word + POS bigram
    T_B_PW                # POS + word bigram
    T_B_PWP_L             # POS + word + POS trigrams (two)
    T_B_PWP_R
    # unary edges
    T_U_RULE              # the unary rule
    T_U_RULE_HW           # unary rule + head word
    T_SEN_LEAF = 101      # derivation-signature salts (not features)
    T_SEN_BIN
    T_LM_NGRAMS = 300     # real-valued: log10 p of the n-grams an action completes inside the string
    T_LM_SENTENCE = 301   # real-valued: the <s> / </s> n-grams of a complete sentence

# features of one action: two "all edges" blocks (9 each), binary (15), unary (2)
DEF MAX_ACTION_FEATURES = 64


cdef inline int32_t _at(const int32_t* SL, int nl, const int32_t* SR, int nr, int p) noexcept nogil:
    """Leaf at position p of the concatenation SL + SR (-1 outside)."""
    if p < 0 or p >= nl + nr:
        return -1
    return SL[p] if p < nl else SR[p - nl]


@cython.final
cdef class CCGGrammar(Grammar):
    """The CCG grammar (Zhang & Clark 2015, section 3) behind :class:`wo._fast._search.Search`.

    Use: ``g = CCGGrammar(); g.set_tables(...)`` once per model, then per sentence
    ``g.set_instance(...)`` and ``Search(g, weights, bits).decode(...)``.  With ``dp_on``
    (default; read by set_instance) the chart keeps one edge per DP-signature (section 3.4);
    off, it is the plain beam (for comparisons at equal pop budgets).  The analysis returned by the
    search is a list of derivation trees, one per output piece (one for a goal edge), each a
    nested tuple: ``(0, leaf)`` a lexical category assignment (leaf id), ``(1, cat, child)``
    a unary rule, ``(2, cat, head, left, right)`` a binary rule (head 0: left child, 1: right).
    """

    def __cinit__(self):
        self.n = 0
        self.nleaf = 0
        self.leaf_unit = NULL
        self.ncat = 0
        self.nbin_key = 0
        self.glue_rule = -1
        self.has_glue = False
        self.dp_on = True
        self.has_lm = False

    def set_lm(self, lm):
        """Use an n-gram LM (``wo._fast._lm.NgramModel``) for real-valued features, or None.
        With an LM every instance needs ``leaf_lm`` (LM ids of the leaves' words)."""
        self.has_lm = lm is not None
        self.lmf = LMFeatures(lm, T_LM_NGRAMS, T_LM_SENTENCE) if self.has_lm else None

    @property
    def lm_feature_indices(self):
        """(weight index of the in-string LM feature, of the sentence-boundary LM feature),
        as set by the last search; (0, 0) without an LM (testing aid)."""
        return self.lmf.feature_indices if self.has_lm else (0, 0)

    def set_tables(self, bin_key, bin_start, bin_res, bin_head, bin_atom, un_start, un_res, un_atom,
                   cat_atom, int glue_rule=-1):
        """Install the grammar's tables (kept referenced, not copied).

        bin_key int64[K] sorted unique ``left << 32 | right`` category-id pairs; bin_start
        int32[K+1] offsets into the M binary rules; bin_res int32[M] result categories;
        bin_head int32[M] head child (0 left, 1 right); bin_atom uint32[M] rule atoms;
        un_start int32[C+1] offsets per child category into the U unary rules; un_res int32[U]
        parent categories; un_atom uint32[U]; cat_atom uint32[C] atoms of the category strings.
        glue_rule: index of a pseudo binary rule (a row of the bin_* arrays after the M keyed
        ones) used to join two edges that no rule combines, only in the last completion pass
        (``Search.phase`` 3, run when nothing else found a goal); -1: no glue.
        Raises ValueError for inconsistent shapes, unsorted keys or ids out of range.
        """
        bk = _arr(bin_key, np.int64, "bin_key")
        K = bk.shape[0]
        bs = _arr(bin_start, np.int32, "bin_start", K + 1)
        br = _arr(bin_res, np.int32, "bin_res")
        M = br.shape[0]
        if M < bs[K] or not -1 <= glue_rule < M or (glue_rule >= 0 and glue_rule < bs[K]):
            raise ValueError("bin_res shorter than the keyed rules, or a bad glue_rule")
        bh = _arr(bin_head, np.int32, "bin_head", M)
        ba = _arr(bin_atom, np.uint32, "bin_atom", M)
        ca = _arr(cat_atom, np.uint32, "cat_atom")
        C = ca.shape[0]
        us = _arr(un_start, np.int32, "un_start", C + 1)
        U = int(us[C])
        ur = _arr(un_res, np.int32, "un_res", U)
        ua = _arr(un_atom, np.uint32, "un_atom", U)
        if K > 1 and not np.all(bk[1:] > bk[:K - 1]):
            raise ValueError("bin_key must be sorted and unique")
        if (M and (br.min() < 0 or br.max() >= C)) or (U and (ur.min() < 0 or ur.max() >= C)):
            raise ValueError("rule result out of the category range")
        if np.any(np.diff(bs) < 0) or np.any(np.diff(us) < 0) or bs[0] != 0 or us[0] != 0:
            raise ValueError("rule offsets must start at 0 and not decrease")
        self._trefs = [bk, bs, br, bh, ba, us, ur, ua, ca]
        cdef const int64_t[::1] vbk = bk
        cdef const int32_t[::1] vbs = bs, vbr = br, vbh = bh, vus = us, vur = ur
        cdef const uint32_t[::1] vba = ba, vua = ua, vca = ca
        self.bin_key = &vbk[0] if K else NULL
        self.bin_start = &vbs[0]
        self.bin_res = &vbr[0] if M else NULL
        self.bin_head = &vbh[0] if M else NULL
        self.bin_atom = &vba[0] if M else NULL
        self.nbin_key = K
        self.un_start = &vus[0]
        self.un_res = &vur[0] if U else NULL
        self.un_atom = &vua[0] if U else NULL
        self.cat_atom = &vca[0]
        self.ncat = C
        self.glue_rule = glue_rule
        self.has_glue = glue_rule >= 0

    def set_instance(self, tok_word, leaf_tok, leaf_pos, leaf_lex, leaf_urule, gold=None, leaf_lm=None,
                     tok_order=None):
        """Make this the sentence the search works on (arrays kept referenced, not copied).

        tok_word uint32[n] word atoms; leaf_tok int32[L] token of each leaf (every token has a
        leaf); leaf_pos uint32[L] POS atom; leaf_lex int32[L] lexical category id; leaf_urule
        int32[L] unary rule on top of the assignment (-1 none).  gold: None, or (g_cat
        int32[G], g_parent int32[G], g_left int32[G], g_kind int32[G] (0 leaf, 1 unary,
        2 binary), tok_gnode int32[n] the gold leaf node of each token) for training and
        forced decoding.  leaf_lm int32[L]: LM vocabulary id of each leaf's word, required when
        the grammar has an LM (:meth:`set_lm`).  tok_order int32[n]: the position of each token
        in a given string, which the search then parses: two edges combine only when they are
        adjacent in it, so a goal is a derivation of that string (the model's score of the
        order, as :meth:`wo._fast._dep.DepGrammar.set_instance`'s).  Raises ValueError for
        inconsistent shapes, ids out of range, an empty instance, more than 32000 tokens, tables
        not set, a missing leaf_lm, a tok_order that is not a permutation or comes with gold.
        """
        if self.ncat == 0:
            raise ValueError("set_tables first")
        tw = _arr(tok_word, np.uint32, "tok_word")
        n = tw.shape[0]
        lt = _arr(leaf_tok, np.int32, "leaf_tok")
        L = lt.shape[0]
        lp = _arr(leaf_pos, np.uint32, "leaf_pos", L)
        lx = _arr(leaf_lex, np.int32, "leaf_lex", L)
        lu = _arr(leaf_urule, np.int32, "leaf_urule", L)
        if n <= 0 or L < n:
            raise ValueError("empty instance or a token without a leaf")
        if n > 32000:
            raise ValueError("sentence too long (more than 32000 tokens)")
        if lt.min() < 0 or lt.max() >= n or len(np.unique(lt)) != n:
            raise ValueError("leaf_tok must name every token 0..n-1")
        if lx.min() < 0 or lx.max() >= self.ncat:
            raise ValueError("leaf_lex out of the category range")
        if lu.max() >= self.un_start[self.ncat] or lu.min() < -1:
            raise ValueError("leaf_urule out of range")
        cdef int i
        for i in range(L):
            if lu[i] >= 0 and not (self.un_start[lx[i]] <= lu[i] < self.un_start[lx[i] + 1]):
                raise ValueError("leaf_urule does not apply to the leaf's category")
        refs = [tw, lt, lp, lx, lu]
        cdef const int32_t[::1] vto
        self.has_order = tok_order is not None
        if self.has_order:
            if gold is not None:
                raise ValueError("tok_order and gold cannot be given together")
            to = _arr(tok_order, np.int32, "tok_order", n)
            if to.min() < 0 or to.max() >= n or len(np.unique(to)) != n:
                raise ValueError("tok_order is not a permutation of the tokens")
            vto = to
            self.tok_order = &vto[0]
            refs.append(to)
        cdef const uint32_t[::1] vtw = tw, vlp = lp
        cdef const int32_t[::1] vlt = lt, vlx = lx, vlu = lu
        cdef const int32_t[::1] gc, gp, gl, gk, gt
        self.tok_word = &vtw[0]
        self.leaf_tok = &vlt[0]
        self.leaf_pos = &vlp[0]
        self.leaf_lex = &vlx[0]
        self.leaf_urule = &vlu[0]
        self.has_gold = gold is not None
        self.ngold = 0
        if gold is not None:
            ga = [_arr(gold[0], np.int32, "g_cat")]
            G = ga[0].shape[0]
            ga += [_arr(gold[1], np.int32, "g_parent", G), _arr(gold[2], np.int32, "g_left", G),
                   _arr(gold[3], np.int32, "g_kind", G), _arr(gold[4], np.int32, "tok_gnode", n)]
            if G == 0 or ga[4].min() < 0 or ga[4].max() >= G or ga[1].max() >= G or ga[2].max() >= G:
                raise ValueError("gold node ids out of range")
            refs += ga
            gc = ga[0]; gp = ga[1]; gl = ga[2]; gk = ga[3]; gt = ga[4]
            self.g_cat = &gc[0]; self.g_parent = &gp[0]; self.g_left = &gl[0]
            self.g_kind = &gk[0]; self.tok_gnode = &gt[0]
            self.ngold = G
        self._refs = refs
        self.n = n
        self.nleaf = L
        self.leaf_unit = self.leaf_tok
        self.max_features = MAX_ACTION_FEATURES
        self.use_dp = self.dp_on
        if self.has_lm:
            self.lmf.set_leaves(None if leaf_lm is None else _arr(leaf_lm, np.int32, "leaf_lm", L), L)

    # ------------------------------------------------------------------ atoms
    cdef inline uint32_t _wd(self, int32_t leaf) noexcept nogil:
        return A_NONE if leaf < 0 else self.tok_word[self.leaf_tok[leaf]]

    cdef inline uint32_t _ps(self, int32_t leaf) noexcept nogil:
        return A_NONE if leaf < 0 else self.leaf_pos[leaf]

    cdef inline uint32_t _lx(self, int32_t leaf) noexcept nogil:
        return A_NONE if leaf < 0 else self.cat_atom[self.leaf_lex[leaf]]

    # ------------------------------------------------------------------ features
    cdef void _all_edges(self, FeatBuf* o, int32_t cat, int nw, int32_t head, int32_t l0, int32_t l1,
                         int32_t r1, int32_t r0) noexcept nogil:
        """Table 1, "all edges" and "#words > 1" templates of an edge with category ``cat``,
        ``nw`` words, head leaf ``head``, leftmost leaves l0 l1 and rightmost r1 r0."""
        cdef uint32_t c = self.cat_atom[cat], size = <uint32_t>(nw if nw < 64 else 64)
        cdef uint32_t hw = self._wd(head)
        add2(o, T_C_SIZE, c, size)
        add2(o, T_C_HW, c, hw)
        add3(o, T_C_SIZE_HW, c, size, hw)
        add2(o, T_C_HP, c, self._ps(head))
        add2(o, T_C_LW, c, self._wd(l0))
        add2(o, T_C_RW, c, self._wd(r0))
        if nw > 1:
            add3(o, T_C_LPP, c, self._ps(l0), self._ps(l1))
            add3(o, T_C_RPP, c, self._ps(r1), self._ps(r0))
            add3(o, T_C_LP_RP, c, self._ps(l0), self._ps(r0))

    cdef inline void _unary(self, FeatBuf* o, int32_t u, int32_t head) noexcept nogil:
        """Table 1 unary templates: the rule, the rule + head word."""
        add2(o, T_U_RULE, self.un_atom[u], 0)
        add2(o, T_U_RULE_HW, self.un_atom[u], self._wd(head))

    cdef int _leaf_features(self, Search s, int32_t leaf) noexcept nogil:
        """Features of a lexical category assignment (and its unary rule, if any) into s.fbuf."""
        cdef FeatBuf o
        o.f = s.fbuf; o.k = 0; o.mask = s.mask
        s.nreal = 0
        if self.has_lm:
            self.lmf.leaf(s, leaf)
        self._all_edges(&o, self.leaf_lex[leaf], 1, leaf, leaf, -1, -1, leaf)
        cdef int32_t u = self.leaf_urule[leaf]
        if u >= 0:
            self._all_edges(&o, self.un_res[u], 1, leaf, leaf, -1, -1, leaf)
            self._unary(&o, u, leaf)
        return o.k

    cdef int _combine_features(self, Search s, eid_t le, eid_t re, int32_t r, int32_t u) noexcept nogil:
        """Features of binary rule r on (le, re) (then unary rule u if >= 0) into s.fbuf."""
        cdef FeatBuf o
        o.f = s.fbuf; o.k = 0; o.mask = s.mask
        s.nreal = 0
        if self.has_lm:
            self.lmf.combine(s, le, re, self.n)
        cdef Edge* L = &s.A.E[le]
        cdef Edge* R = &s.A.E[re]
        cdef int nl = L.nwords, nr = R.nwords, nn = nl + nr
        cdef const int32_t* SL = &s.A.surf[L.surf]
        cdef const int32_t* SR = &s.A.surf[R.surf]
        cdef int32_t h, m
        if self.bin_head[r] == 0:
            h = L.head; m = R.head
        else:
            h = R.head; m = L.head
        cdef int32_t l0 = SL[0], l1 = _at(SL, nl, SR, nr, 1)
        cdef int32_t r0 = SR[nr - 1], r1 = _at(SL, nl, SR, nr, nn - 2)
        self._all_edges(&o, self.bin_res[r], nn, h, l0, l1, r1, r0)
        cdef uint32_t ra = self.bin_atom[r], hw = self._wd(h)
        add2(&o, T_B_RULE, ra, 0)
        add2(&o, T_B_RULE_HW, ra, hw)
        add3(&o, T_B_RULE_HW_NW, ra, hw, self._wd(m))
        # the n-grams the concatenation creates at the boundary B = nl
        cdef int32_t b2 = _at(SL, nl, SR, nr, nl - 2), b1 = SL[nl - 1]
        cdef int32_t b0 = SR[0], b0n = _at(SL, nl, SR, nr, nl + 1)
        cdef uint32_t w1 = self._wd(b1), w0 = self._wd(b0), p1 = self._ps(b1), p0 = self._ps(b0)
        add2(&o, T_B_WW, w1, w0)
        add2(&o, T_B_PP, p1, p0)
        add3(&o, T_B_WWW_L, self._wd(b2), w1, w0)
        add3(&o, T_B_WWW_R, w1, w0, self._wd(b0n))
        add3(&o, T_B_PPP_L, self._ps(b2), p1, p0)
        add3(&o, T_B_PPP_R, p1, p0, self._ps(b0n))
        add3(&o, T_B_CCC_L, self._lx(b2), self._lx(b1), self._lx(b0))
        add3(&o, T_B_CCC_R, self._lx(b1), self._lx(b0), self._lx(b0n))
        add2(&o, T_B_WP, w1, p0)
        add2(&o, T_B_PW, p1, w0)
        add3(&o, T_B_PWP_L, self._ps(b2), w1, p0)
        add3(&o, T_B_PWP_R, p1, w0, self._ps(b0n))
        if u >= 0:
            self._all_edges(&o, self.un_res[u], nn, h, l0, l1, r1, r0)
            self._unary(&o, u, h)
        return o.k

    # ------------------------------------------------------------------ gold
    cdef inline int32_t _gold_unary(self, int32_t gid, int32_t u) noexcept nogil:
        """Gold node of unary rule u applied on gold node gid (-1: not gold)."""
        cdef int32_t q
        if gid < 0 or u < 0:
            return gid
        q = self.g_parent[gid]
        if q >= 0 and self.g_kind[q] == 1 and self.g_cat[q] == self.un_res[u]:
            return q
        return -1

    cdef inline int32_t _gold_leaf(self, int32_t leaf) noexcept nogil:
        cdef int32_t g
        if not self.has_gold:
            return -1
        g = self.tok_gnode[self.leaf_tok[leaf]]
        if self.g_cat[g] != self.leaf_lex[leaf]:
            return -1
        return self._gold_unary(g, self.leaf_urule[leaf])

    cdef inline int32_t _gold_binary(self, eid_t le, eid_t re, int32_t r, Search s) noexcept nogil:
        cdef int32_t a = ccg_state(&s.A.E[le]).gid, b = ccg_state(&s.A.E[re]).gid, p
        if not self.has_gold or a < 0 or b < 0:
            return -1
        p = self.g_parent[a]
        if p < 0 or p != self.g_parent[b] or self.g_kind[p] != 2 or self.g_left[p] != a:
            return -1
        if self.g_cat[p] != self.bin_res[r]:
            return -1
        return p

    # ------------------------------------------------------------------ grammar interface
    cdef int leaves(self, Search s) noexcept nogil:
        """One leaf edge per (token, POS, lexical category[, unary rule]) leaf, scored and pushed."""
        cdef int i, k
        cdef eid_t e
        cdef Edge* x
        cdef uint32_t key[2]
        cdef int32_t u, g
        if self.has_lm:
            self.lmf.begin(s)              # a new search: edge ids start again
        for i in range(self.nleaf):
            e = new_edge(&s.A)
            if e < 0:
                return -1
            x = &s.A.E[e]
            u = self.leaf_urule[i]
            x.left = -1; x.right = -1; x.head = i
            x.nwords = 1
            x.nact = 2 if u >= 0 else 1
            x.act = 0
            x.span_lo = -1; x.span_hi = -1
            if self.has_order:             # parsing a given string: spans are its positions
                x.span_lo = <int16_t>self.tok_order[self.leaf_tok[i]]
                x.span_hi = <int16_t>(self.tok_order[self.leaf_tok[i]] + 1)
            ccg_state(x).base = self.leaf_lex[i]
            ccg_state(x).cat = self.un_res[u] if u >= 0 else self.leaf_lex[i]
            ccg_state(x).rule = -1
            ccg_state(x).urule = u
            g = self._gold_leaf(i)
            ccg_state(x).gid = g
            x.gold = 1 if g >= 0 else 0
            key[0] = T_SEN_LEAF; key[1] = <uint32_t>i
            x.sig = (<uint64_t>murmurhash3_words(key, 2, 1) << 32) | murmurhash3_words(key, 2, 2)
            k = self._leaf_features(s, i)
            if s.push_edge(e, k) < 0:
                return -1
        return 0

    cdef int _make(self, Search s, eid_t le, eid_t re, int32_t r, int32_t u, int32_t gid) noexcept nogil:
        """Build, score and push the edge of binary rule r (then unary u) on (le, re).

        Returns 1 (pushed), 0 (dropped: forced decoding and not gold) or -1 (memory)."""
        if s.gold_only and gid < 0:
            return 0
        cdef eid_t e = new_edge(&s.A)
        if e < 0:
            return -1
        cdef Edge* L = &s.A.E[le]
        cdef Edge* R = &s.A.E[re]
        cdef Edge* x = &s.A.E[e]
        x.left = le; x.right = re
        x.head = L.head if self.bin_head[r] == 0 else R.head
        x.nwords = L.nwords + R.nwords
        x.nact = L.nact + R.nact + (2 if u >= 0 else 1)
        x.act = 1
        x.span_lo = -1; x.span_hi = -1
        if self.has_order:
            x.span_lo = L.span_lo; x.span_hi = R.span_hi
        ccg_state(x).base = self.bin_res[r]
        ccg_state(x).cat = self.un_res[u] if u >= 0 else self.bin_res[r]
        ccg_state(x).rule = r
        ccg_state(x).urule = u
        ccg_state(x).gid = gid
        x.gold = 1 if gid >= 0 else 0
        cdef uint32_t sk[7]
        sk[0] = T_SEN_BIN
        sk[1] = <uint32_t>(L.sig >> 32); sk[2] = <uint32_t>L.sig
        sk[3] = <uint32_t>(R.sig >> 32); sk[4] = <uint32_t>R.sig
        sk[5] = <uint32_t>r; sk[6] = <uint32_t>(u + 1)
        x.sig = (<uint64_t>murmurhash3_words(sk, 7, 3) << 32) | murmurhash3_words(sk, 7, 4)
        return s.push_edge(e, self._combine_features(s, le, re, r, u))

    cdef int combine(self, Search s, eid_t le, eid_t re) noexcept nogil:
        """Every binary rule instance with (category of le, category of re) as (left, right),
        each alone and followed by every unary rule on its result.  Returns the number of
        edges pushed, or -1 (memory).  Coverage disjointness is the caller's check."""
        if self.has_order and s.A.E[le].span_hi != s.A.E[re].span_lo:   # not adjacent in the given string
            return 0
        cdef int64_t key = (<int64_t>ccg_state(&s.A.E[le]).cat << 32) | <int64_t>ccg_state(&s.A.E[re]).cat
        cdef int lo = 0, hi = self.nbin_key, mid
        while lo < hi:                 # binary search of the sorted pair keys
            mid = (lo + hi) >> 1
            if self.bin_key[mid] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo >= self.nbin_key or self.bin_key[lo] != key:
            if s.phase == 3 and self.glue_rule >= 0:
                return self._make(s, le, re, self.glue_rule, -1, -1)
            return 0
        cdef int32_t r, u, p, g, gu
        cdef int made = 0, rc
        for r in range(self.bin_start[lo], self.bin_start[lo + 1]):
            g = self._gold_binary(le, re, r, s)
            rc = self._make(s, le, re, r, -1, g)
            if rc < 0:
                return -1
            made += rc
            p = self.bin_res[r]
            for u in range(self.un_start[p], self.un_start[p + 1]):
                gu = self._gold_unary(g, u)
                rc = self._make(s, le, re, r, u, gu)
                if rc < 0:
                    return -1
                made += rc
        return made

    cdef int features(self, Search s, eid_t e) noexcept nogil:
        """Features of the action that built e (lexical assignment or binary rule, each with
        its unary rule if any)."""
        cdef Edge* x = &s.A.E[e]
        if x.left < 0:
            return self._leaf_features(s, x.head)
        return self._combine_features(s, x.left, x.right, ccg_state(x).rule, ccg_state(x).urule)

    cdef bint is_goal(self, Search s, eid_t e) noexcept nogil:
        """A goal edge covers every input token (any category)."""
        return s.A.E[e].nwords == self.n

    cdef uint64_t dp_signature(self, Search s, eid_t e) noexcept nogil:
        """DP-signature of a materialised edge (sections 3.2, 3.4): category, head word and
        POS, the two leftmost and two rightmost words and POS tags, coverage bitset."""
        cdef Edge* x = &s.A.E[e]
        cdef const int32_t* S = &s.A.surf[x.surf]
        cdef int nw = x.nwords
        cdef int32_t l0 = S[0], l1 = S[1] if nw > 1 else -1
        cdef int32_t r0 = S[nw - 1], r1 = S[nw - 2] if nw > 1 else -1
        cdef uint32_t key[11]
        key[0] = <uint32_t>ccg_state(x).cat
        key[1] = self._wd(x.head); key[2] = self._ps(x.head)
        key[3] = self._wd(l0); key[4] = self._wd(l1); key[5] = self._wd(r1); key[6] = self._wd(r0)
        key[7] = self._ps(l0); key[8] = self._ps(l1); key[9] = self._ps(r1); key[10] = self._ps(r0)
        cdef uint32_t h1 = murmurhash3_words(key, 11, 5), h2 = murmurhash3_words(key, 11, 6)
        cdef const uint32_t* bits = <const uint32_t*>&s.A.bits[x.bits]
        h1 = murmurhash3_words(bits, 2 * s.A.W64, h1)
        h2 = murmurhash3_words(bits, 2 * s.A.W64, h2)
        return (<uint64_t>h1 << 32) | h2

    cdef object _tree(self, Search s, eid_t e):
        cdef Edge* x = &s.A.E[e]
        cdef int32_t u = ccg_state(x).urule, r = ccg_state(x).rule
        if x.left < 0:
            t = (0, int(x.head))
        else:
            t = (2, int(self.bin_res[r]), int(self.bin_head[r]), self._tree(s, x.left),
                 self._tree(s, x.right))
        if u >= 0:
            t = (1, int(self.un_res[u]), t)
        return t

    cdef object analysis(self, Search s, const eid_t* pieces, int npieces):
        """List of derivation trees, one per piece (see the class docstring)."""
        return [self._tree(s, pieces[i]) for i in range(npieces)]

    # ------------------------------------------------------------------ testing aids
    def dp_signatures_of_chart(self, Search s):
        """[(edge id, DP-signature, scaled score, gold)] of the edges in the chart after the last
        search (testing aid: the chart keeps one edge per signature, the best)."""
        cdef int i
        cdef eid_t e
        out = []
        for i in range(s.chart.h.size):
            e = -s.chart.h.id[i]
            out.append((int(e), int(self.dp_signature(s, e)), -float(s.chart.h.key[i]),
                        bool(s.A.E[e].gold)))
        return out

    def popped_signatures(self, Search s):
        """[(edge id, DP-signature, scaled score)] of every materialised (popped) edge of the
        last search (testing aid)."""
        cdef eid_t e
        out = []
        for e in range(s.A.ne):
            if s.A.E[e].surf >= 0:
                out.append((int(e), int(self.dp_signature(s, e)), s.A.E[e].F / s.A.E[e].nact))
        return out
