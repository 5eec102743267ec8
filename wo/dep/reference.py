"""A slow, readable pure-Python reference of the Cython decoder (same algorithm, same features).

It mirrors ``wo/_fast/_search.pyx`` step for step: the same leaf and Table-2 features hashed
with MurmurHash3 (through ``mmh3``), the same agenda order (scaled score, then smaller edge id),
the same chart beam (a binary min-heap with the same layout, so combination order and edge ids
agree), the same duplicate-edge signatures and the same greedy default output of Zhang & Clark
(2015) section 3.4.  The completion phases are not mirrored, so compare with
``DepSearch.decode(..., complete_beam=0)``.  Used as a test oracle on real sentences and as the
baseline of the Cython speedup in bench/.
"""
from __future__ import annotations

import heapq
import struct
from typing import List, Tuple

import mmh3
import numpy as np

A_NONE = 0x9E3779B1
_NAMES = """LEAF_WP LEAF_P WH_PH_SIZE WH_SIZE PH_SIZE WH_PH_DIR WH_DIR PH_DIR WM_PM_DIR WM_DIR PM_DIR
WH_PH_DIST WH_DIST PH_DIST WM_PM_DIST WM_DIST PM_DIST WH_PH_WM_PM_DIR WH_PH_WM_PM_DIST WH_PH_PM_DIR
WH_PH_PM_DIST PH_WM_PM_DIR PH_WM_PM_DIST PH_PM_DIR PH_PM_DIST PH_PM_PB_DIR PH_PHN_PM_PMN_DIR
WH_PM_PML_DIR WH_PM_PMR_DIR PH_PM_PML_DIR PH_PM_PMR_DIR PH_PM_PS_DIR PH_PS_DIR PM_PS_DIR WH_WS_DIR
WM_WS_DIR PH_WS_DIR PM_WS_DIR WH_PS_DIR WM_PS_DIR WH_PM_PS_PS2_DIR PH_PM_PS_PS2_DIR
C_W_P_WL_PL C_P_PL C_W_P_PL C_P_WL_PL C_W_P_WR_PR C_P_PR C_W_P_PR C_P_WR_PR C_W_P_LVAL C_W_P_RVAL
C_W_P_LVAL_RVAL C_P_LVAL C_P_RVAL C_P_LVAL_RVAL B_W1_W0 B_P1_P0 B_W1_P0 B_P1_W0 B_W1_W0_W0N
B_W2_W1_W0 B_P1_P0_P0N B_P2_P1_P0 B_P1_W0_P0N B_P2_W1_P0 S_W0 S_W0_W1 S_WL S_WL_WL1 S_P0 S_P0_P1
S_P0_P1_P2 S_PL S_PL_PL1 S_PL_PL1_PL2""".split()
T = {name: i + 1 for i, name in enumerate(_NAMES)}
ROOT_BASE = 100


def _mm(words, seed=0) -> int:
    return mmh3.hash(struct.pack("<%dI" % len(words), *[w & 0xFFFFFFFF for w in words]), seed, signed=False)


def _norm(x: int) -> int:
    x = abs(x)
    if x <= 5:
        return x
    return 6 if x <= 10 else 7 if x <= 20 else 8 if x <= 40 else 9


class _Edge:
    __slots__ = ("F", "left", "right", "head", "ldep1", "ldep2", "rdep1", "rdep2", "surf", "bits",
                 "hpos", "nwords", "nact", "lval", "rval", "gdeps", "headleft", "sig")


class ReferenceDecoder:
    """Pure-Python decoder over float32 weights of shape (2**hash_bits,)."""

    def __init__(self, weights: np.ndarray, hash_bits: int):
        self.W = weights
        self.mask = (1 << hash_bits) - 1

    # features ------------------------------------------------------------------------
    def _wd(self, leaf):
        return A_NONE if leaf < 0 else int(self.tok_word[self.leaf_tok[leaf]])

    def _ps(self, leaf):
        return A_NONE if leaf < 0 else int(self.leaf_pos[leaf])

    def _score(self, keys) -> float:
        s = 0.0
        for k in keys:
            s += float(self.W[_mm(k) & self.mask])
        return s

    def _leaf_keys(self, leaf):
        w, p = self._wd(leaf), self._ps(leaf)
        return [(T["LEAF_WP"], w, p), (T["LEAF_P"], p, 0)]

    def _completed(self, base, c, cl, cr, lval, rval):
        w, p = self._wd(c), self._ps(c)
        wl, pl, wr, pr = self._wd(cl), self._ps(cl), self._wd(cr), self._ps(cr)
        t = lambda name: base + T[name]  # noqa: E731
        return [(t("C_W_P_WL_PL"), w, p, wl, pl), (t("C_P_PL"), p, pl), (t("C_W_P_PL"), w, p, pl),
                (t("C_P_WL_PL"), p, wl, pl), (t("C_W_P_WR_PR"), w, p, wr, pr), (t("C_P_PR"), p, pr),
                (t("C_W_P_PR"), w, p, pr), (t("C_P_WR_PR"), p, wr, pr), (t("C_W_P_LVAL"), w, p, lval),
                (t("C_W_P_RVAL"), w, p, rval), (t("C_W_P_LVAL_RVAL"), w, p, lval, rval),
                (t("C_P_LVAL"), p, lval), (t("C_P_RVAL"), p, rval), (t("C_P_LVAL_RVAL"), p, lval, rval)]

    def _combine_keys(self, L: _Edge, R: _Edge, headleft: int):
        S = L.surf + R.surf
        nl, nn = L.nwords, L.nwords + R.nwords
        at = lambda p: S[p] if 0 <= p < nn else -1  # noqa: E731
        if headleft:
            H, M, hp, mp, d = L, R, L.hpos, nl + R.hpos, 1
            s, s2 = H.rdep1, H.rdep2
        else:
            H, M, hp, mp, d = R, L, nl + R.hpos, L.hpos, 2
            s, s2 = H.ldep1, H.ldep2
        h, m, ml, mr = H.head, M.head, M.ldep1, M.rdep1
        dist, size = _norm(hp - mp), _norm(nn)
        wh, ph, wm, pm = self._wd(h), self._ps(h), self._wd(m), self._ps(m)
        ws, ps, ps2 = self._wd(s), self._ps(s), self._ps(s2)
        k = [(T["WH_PH_SIZE"], wh, ph, size), (T["WH_SIZE"], wh, size), (T["PH_SIZE"], ph, size),
             (T["WH_PH_DIR"], wh, ph, d), (T["WH_DIR"], wh, d), (T["PH_DIR"], ph, d),
             (T["WM_PM_DIR"], wm, pm, d), (T["WM_DIR"], wm, d), (T["PM_DIR"], pm, d),
             (T["WH_PH_DIST"], wh, ph, dist, d), (T["WH_DIST"], wh, dist, d), (T["PH_DIST"], ph, dist, d),
             (T["WM_PM_DIST"], wm, pm, dist, d), (T["WM_DIST"], wm, dist, d), (T["PM_DIST"], pm, dist, d),
             (T["WH_PH_WM_PM_DIR"], wh, ph, wm, pm, d), (T["WH_PH_WM_PM_DIST"], wh, ph, wm, pm, dist, d),
             (T["WH_PH_PM_DIR"], wh, ph, pm, d), (T["WH_PH_PM_DIST"], wh, ph, pm, dist, d),
             (T["PH_WM_PM_DIR"], ph, wm, pm, d), (T["PH_WM_PM_DIST"], ph, wm, pm, dist, d),
             (T["PH_PM_DIR"], ph, pm, d), (T["PH_PM_DIST"], ph, pm, dist, d)]
        if hp < mp:
            for b in range(hp + 1, mp):
                k.append((T["PH_PM_PB_DIR"], ph, pm, self._ps(at(b)), d))
            k.append((T["PH_PHN_PM_PMN_DIR"], ph, self._ps(at(hp + 1)), pm, self._ps(at(mp - 1)), d))
        else:
            for b in range(mp + 1, hp):
                k.append((T["PH_PM_PB_DIR"], ph, pm, self._ps(at(b)), d))
            k.append((T["PH_PHN_PM_PMN_DIR"], ph, self._ps(at(hp - 1)), pm, self._ps(at(mp + 1)), d))
        k += [(T["WH_PM_PML_DIR"], wh, pm, self._ps(ml), d), (T["WH_PM_PMR_DIR"], wh, pm, self._ps(mr), d),
              (T["PH_PM_PML_DIR"], ph, pm, self._ps(ml), d), (T["PH_PM_PMR_DIR"], ph, pm, self._ps(mr), d),
              (T["PH_PM_PS_DIR"], ph, pm, ps, d), (T["PH_PS_DIR"], ph, ps, d), (T["PM_PS_DIR"], pm, ps, d),
              (T["WH_WS_DIR"], wh, ws, d), (T["WM_WS_DIR"], wm, ws, d), (T["PH_WS_DIR"], ph, ws, d),
              (T["PM_WS_DIR"], pm, ws, d), (T["WH_PS_DIR"], wh, ps, d), (T["WM_PS_DIR"], wm, ps, d),
              (T["WH_PM_PS_PS2_DIR"], wh, pm, ps, ps2, d), (T["PH_PM_PS_PS2_DIR"], ph, pm, ps, ps2, d)]
        k += self._completed(0, m, ml, mr, M.lval, M.rval)
        b2, b1, b0, b0n = at(nl - 2), S[nl - 1], S[nl], at(nl + 1)
        w1, w0, p1, p0 = self._wd(b1), self._wd(b0), self._ps(b1), self._ps(b0)
        k += [(T["B_W1_W0"], w1, w0), (T["B_P1_P0"], p1, p0), (T["B_W1_P0"], w1, p0), (T["B_P1_W0"], p1, w0),
              (T["B_W1_W0_W0N"], w1, w0, self._wd(b0n)), (T["B_W2_W1_W0"], self._wd(b2), w1, w0),
              (T["B_P1_P0_P0N"], p1, p0, self._ps(b0n)), (T["B_P2_P1_P0"], self._ps(b2), p1, p0),
              (T["B_P1_W0_P0N"], p1, w0, self._ps(b0n)), (T["B_P2_W1_P0"], self._ps(b2), w1, p0)]
        if nn == self.n:
            x0, x1, x2 = at(0), at(1), at(2)
            y0, y1, y2 = at(nn - 1), at(nn - 2), at(nn - 3)
            k += [(T["S_W0"], self._wd(x0), 0), (T["S_W0_W1"], self._wd(x0), self._wd(x1)),
                  (T["S_WL"], self._wd(y0), 0), (T["S_WL_WL1"], self._wd(y0), self._wd(y1)),
                  (T["S_P0"], self._ps(x0), 0), (T["S_P0_P1"], self._ps(x0), self._ps(x1)),
                  (T["S_P0_P1_P2"], self._ps(x0), self._ps(x1), self._ps(x2)),
                  (T["S_PL"], self._ps(y0), 0), (T["S_PL_PL1"], self._ps(y0), self._ps(y1)),
                  (T["S_PL_PL1_PL2"], self._ps(y0), self._ps(y1), self._ps(y2))]
            if headleft:
                hl1, hr1, lv, rv = H.ldep1, m, H.lval, H.rval + 1
            else:
                hl1, hr1, lv, rv = m, H.rdep1, H.lval + 1, H.rval
            k += self._completed(ROOT_BASE, h, hl1, hr1, lv, rv)
        return k

    # chart: a binary min-heap with the Cython layout ------------------------------------
    def _worse(self, i, j):
        return self.ckey[i] < self.ckey[j] or (self.ckey[i] == self.ckey[j] and self.cid[i] > self.cid[j])

    def _swap(self, i, j):
        self.ckey[i], self.ckey[j] = self.ckey[j], self.ckey[i]
        self.cid[i], self.cid[j] = self.cid[j], self.cid[i]

    def _down(self, i):
        while True:
            l, r, b = 2 * i + 1, 2 * i + 2, i
            if l < len(self.cid) and self._worse(l, b):
                b = l
            if r < len(self.cid) and self._worse(r, b):
                b = r
            if b == i:
                return
            self._swap(i, b)
            i = b

    def _chart_add(self, e, key):
        if len(self.cid) < self.beam:
            self.ckey.append(key)
            self.cid.append(e)
            i = len(self.cid) - 1
            while i > 0 and self._worse(i, (i - 1) >> 1):
                self._swap(i, (i - 1) >> 1)
                i = (i - 1) >> 1
            return
        if key < self.ckey[0] or (key == self.ckey[0] and e > self.cid[0]):
            return
        self.ckey[0], self.cid[0] = key, e
        self._down(0)

    # search ------------------------------------------------------------------------------
    def _push(self, e):
        x = self.E[e]
        heapq.heappush(self.agenda, (-(x.F / x.nact), e))

    def _try(self, le, re, headleft):
        L, R = self.E[le], self.E[re]
        H, M = (L, R) if headleft else (R, L)
        if headleft and H.lval > 0:
            return
        htok, mtok = int(self.leaf_tok[H.head]), int(self.leaf_tok[M.head])
        gh = int(self.given_head[mtok])
        if gh != -1 and gh != htok:
            return
        if M.gdeps != int(self.given_ndeps[mtok]):
            return
        x = _Edge()
        x.left, x.right, x.head, x.headleft = le, re, H.head, headleft
        x.sig = ((_mm([L.sig >> 32, L.sig, R.sig >> 32, R.sig, headleft], 3) << 32)
                 | _mm([L.sig >> 32, L.sig, R.sig >> 32, R.sig, headleft], 4))
        if headleft:
            x.hpos, x.ldep1, x.ldep2, x.rdep1, x.rdep2 = L.hpos, H.ldep1, H.ldep2, M.head, H.rdep1
            x.lval, x.rval = H.lval, H.rval + 1
        else:
            x.hpos, x.ldep1, x.ldep2, x.rdep1, x.rdep2 = L.nwords + R.hpos, M.head, H.ldep1, H.rdep1, H.rdep2
            x.lval, x.rval = H.lval + 1, H.rval
        x.gdeps = H.gdeps + (1 if gh == htok else 0)
        x.nwords, x.nact = L.nwords + R.nwords, L.nact + R.nact + 1
        x.surf = x.bits = None
        x.F = L.F + R.F + self._score(self._combine_keys(L, R, headleft))
        self.E.append(x)
        self._push(len(self.E) - 1)

    def decode(self, tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, beam: int,
               max_pops: int) -> Tuple[np.ndarray, np.ndarray, float, int, int, int]:
        """Same arguments and result as ``DepSearch.decode(..., complete_beam=0)``."""
        self.tok_word, self.given_head, self.given_ndeps = tok_word, given_head, given_ndeps
        self.leaf_tok, self.leaf_pos = leaf_tok, leaf_pos
        self.n, self.beam = len(tok_word), max(1, beam)
        self.E: List[_Edge] = []
        self.agenda: list = []
        self.ckey: List[float] = []
        self.cid: List[int] = []
        for i in range(len(leaf_tok)):
            tok = int(leaf_tok[i])
            x = _Edge()
            x.left = x.right = -1
            x.head, x.ldep1, x.ldep2, x.rdep1, x.rdep2 = i, -1, -1, -1, -1
            x.hpos, x.nwords, x.nact, x.lval, x.rval, x.gdeps, x.headleft = 0, 1, 1, 0, 0, 0, 0
            x.surf = x.bits = None
            x.F = self._score(self._leaf_keys(i))
            key = [int(tok_word[tok]), int(leaf_pos[i]), int(given_head[tok]), int(given_ndeps[tok])]
            x.sig = (_mm(key, 1) << 32) | _mm(key, 2)
            self.E.append(x)
            self._push(i)
        seen, pops, dups, goal = set(), 0, 0, -1
        status = 1
        while self.agenda and pops < max_pops:
            _, e = heapq.heappop(self.agenda)
            x = self.E[e]
            sig = x.sig or 1
            if sig in seen:
                dups += 1
                if dups > 64 * max_pops:
                    break
                continue
            seen.add(sig)
            pops += 1
            if x.left < 0:
                x.surf, x.bits = [x.head], {int(leaf_tok[x.head])}
            else:
                L, R = self.E[x.left], self.E[x.right]
                x.surf, x.bits = L.surf + R.surf, L.bits | R.bits
            if x.nwords == self.n:
                tok = int(leaf_tok[x.head])
                if given_head[tok] in (-1, -2) and x.gdeps == given_ndeps[tok]:
                    goal, status = e, 0
                    break
            for i in range(len(self.cid)):
                c = self.cid[i]
                if x.bits & self.E[c].bits:
                    continue
                self._try(e, c, 1); self._try(e, c, 0); self._try(c, e, 1); self._try(c, e, 0)
            self._chart_add(e, x.F / x.nact)
        return self._result(goal, status, pops)

    def _heads(self, e, heads):
        x = self.E[e]
        if x.left < 0:
            return
        H, M = (self.E[x.left], self.E[x.right]) if x.headleft else (self.E[x.right], self.E[x.left])
        heads[self.leaf_tok[M.head]] = self.leaf_tok[H.head]
        self._heads(x.left, heads)
        self._heads(x.right, heads)

    def _result(self, goal, status, pops):
        order, heads = [], np.full(self.n, -1, dtype=np.int32)
        score = 0.0
        if goal >= 0:
            x = self.E[goal]
            order, score = list(x.surf), x.F / x.nact
            self._heads(goal, heads)
        else:
            ids = sorted(self.cid, key=lambda i: (-self.E[i].nwords, -(self.E[i].F / self.E[i].nact), i))
            cover, root0 = set(), -1
            for i in ids:
                x = self.E[i]
                if cover & x.bits:
                    continue
                cover |= x.bits
                order += x.surf
                self._heads(i, heads)
                tok = int(self.leaf_tok[x.head])
                if root0 < 0:
                    root0, score = tok, x.F / x.nact
                else:
                    heads[tok] = root0
            for i in range(len(self.leaf_tok)):
                tok = int(self.leaf_tok[i])
                if tok not in cover:
                    cover.add(tok)
                    order.append(i)
                    if root0 < 0:
                        root0 = tok
                    else:
                        heads[tok] = root0
        return np.asarray(order, dtype=np.int32), heads, score, status, pops, len(self.E)
