"""Local ordering of a given tree: each head's domain (its dependents and itself) is ordered as
its own problem, bottom-up, by a linear model with beam search (Bohnet et al. 2010, "Broad
coverage multilingual deep sentence generation with a stochastic multi-level realizer", section
3.3; the per-head decomposition of Yu et al. 2020's TSP linearizer).

A domain of k items is ordered left to right in k + 1 steps (the last one closes the sequence).
The step that appends item x after items p2 p (START before the first) scores the features of

* x and its side of the head (L, H, R), conjoined with the head's UPOS, lemma and relation,
  and the first and last words of x's realised subtree with its side;
* the pair (p, x): relations, UPOS, lemmas, and the boundary between the realised subtrees of
  p and x (the last word of p's subtree and the first word of x's, which bottom-up decoding
  knows: the dependents' own domains are already ordered), alone, with the head's UPOS and
  with the pair's relations (feature set v2: the subtree-boundary templates 13, 14 and 45-48
  gained 1.3 BLEU with gold forms on five dev sets over v1), and the pair's subtree sizes
  with their relations and with the head's UPOS and side (v3: templates 61 and 65, +0.6);
* the triple (p2, p, x) of relations and of UPOS;
* with an order suffix (:func:`suffix_function`, chosen per treebank on dev), the suffix atoms of
  x and p: x's with its relation and side, with the head's UPOS, with the head's lemma; the
  pair's, alone and with the head's UPOS; each with the other's relation (templates 15-17,
  33-36; cross-validated with gold forms: Turkish +0.9 BLEU with the words' last two
  characters, Korean +0.4 with the lemmas' last morpheme);
* with the domain signature (``sig``, chosen per treebank by cross-validation): which of
  SIG_RELATIONS (mark, aux, nsubj, cop) the head's dependents include, with the pair and the
  triple of relations and with x's relation and side (templates 71-73; German +0.8 BLEU with
  gold forms: a verb second in main clauses, last in subordinate ones);
* with the phrase ends (``ends``, likewise): the last words of p's and x's subtrees, and their
  first words, alone and with the side and the head's UPOS (templates 74-77; Japanese +0.9: its
  case particles end each phrase).

The model is a hashed linear model (``2^hash_bits`` float32 weights; a feature's index is the
MurmurHash3_x86_32 of its key, a template id and string atoms as little-endian uint32 words, the
search core's convention, :mod:`wo._fast._hash`) trained by the
averaged perceptron with early update (Collins & Roark 2004) on the projectivised training
trees.  The SR'19 ``lin`` annotations are hard constraints: a token with ``lin`` = -r lies left
of its head, r-th closest among its marked siblings on that side (+r: right).

The domain search is compiled (:mod:`wo._fast._order`: C arrays for the beam, a dense cache of
the step scores per domain); this module builds the domains (string atoms), the sentence-level
bottom-up pass and the training loop.  Output is projective in the tree it orders
(non-projective orders come from the lifting model, :mod:`wo.sr.nonproj`, applied before).
"""
from __future__ import annotations

import os
import random
import shutil
import struct
import time
import weakref
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import mmh3
import numpy as np

from ..io.batch import map_start
from ..learn import mix_start, train_pass

START, END = -1, -2
SIDE_L, SIDE_H, SIDE_R = 1, 2, 3   # the side of the head an item takes (atoms of the feature keys)
A_START, A_END = 0x85EBCA77, 0xC2B2AE3D   # atoms of the sequence boundaries (as the core's)
_PACK = {n: struct.Struct(f"<{n}I").pack for n in range(2, 7)}
_mmh3 = mmh3.hash
WIDE_DOMAIN = 24   # a domain of k > WIDE_DOMAIN items gets a beam of beam * (WIDE_DOMAIN / k)^2, at least 2
FEATURE_SET = "local-order-v3"


class Domain:
    """One head's domain.

    items: list[int] token indices (0-based), the head among them at ``hi``; per item, as
    uint32 atoms (:func:`_atom`): r (relation, A_HEAD for the head), u (UPOS), l (lemma,
    lower-cased), m (FEATS), first/fu and last/lu (first and last word of its realised subtree
    and their UPOS), kr (its dependents' relations), sf (its order suffix, 0 without one); sz
    (subtree size bucket, int), side (-1
    left, +1 right, 0 free: from ``lin``) and rank (the ``lin`` rank); ctx: atoms of (head
    UPOS, head lemma, head relation); gold: item indices in reference order, or None.
    """

    __slots__ = ("items", "hi", "ctx", "r", "u", "l", "m", "first", "fu", "last", "lu", "side", "rank",
                 "sz", "kr", "sf", "gold", "cache")

    def __len__(self) -> int:
        return len(self.items)


def _kids(heads: Sequence[int]) -> List[List[int]]:
    """kids[h] = 0-based dependents of 1-based node h (0 = root)."""
    kids: List[List[int]] = [[] for _ in range(len(heads) + 1)]
    for i, h in enumerate(heads):
        kids[h].append(i)
    return kids


def _size_bucket(n: int) -> int:
    """Subtree size as a feature value: 1, 2, 3, 4, 5 (5-7), 8 (8+)."""
    return n if n < 5 else (5 if n < 8 else 8)


def _atom(s: str) -> int:
    """32-bit MurmurHash3 atom of a string (:func:`wo.model.atom`)."""
    return _mmh3(s, 0, signed=False)


A_HEAD = 0x9E3779B1   # the relation atom of the head item itself
NROWS = 11            # atom rows of a domain (Domain: r u l m first fu last lu kr sz sf)


def suffix_function(spec: Optional[str]) -> Optional[Callable[[str, str], str]]:
    """The order suffix of a model: a function (word, lemma) -> the string of the item's suffix
    atom (row ``sf`` of a domain), or None for ``spec`` None/"none" (no suffix templates).

    ``spec`` "chars:N" (1 <= N <= 8): the last N characters of the word (the form, lower-cased,
    or the lemma without one); "morpheme": the lemma's last morpheme when the lemma is written
    as morphemes joined by "+" (UD Korean: *학교+에서*), else nothing (an empty atom).  Chosen per
    treebank by cross-validation on the training data (``bench/sr_multi.py``: ``ORDER_SUFFIX``):
    ordering-only BLEU gains +0.9 on Turkish (chars:2) and +0.4 on Korean (morpheme); with
    chars:2 Indonesian, Russian, German and Greek lose 0.2-1.1.  Raises ValueError for another
    spec.
    """
    if spec is None or spec == "none":
        return None
    if spec == "morpheme":
        return lambda word, lemma: ("+" + lemma.rsplit("+", 1)[1].lower()) if "+" in lemma.strip("+") else ""
    if spec.startswith("chars:") and spec[6:].isdigit() and 1 <= int(spec[6:]) <= 8:
        n = int(spec[6:])
        return lambda word, lemma: word[-n:]
    raise ValueError(f"order suffix {spec!r}: none, morpheme or chars:N (1 <= N <= 8)")


SIG_RELATIONS = ("mark", "aux", "nsubj", "cop")


def _signature(kidrels: str) -> str:
    """The domain signature: which of SIG_RELATIONS are among the domain's dependents' relations
    (``kidrels``: their sorted set joined by "+", subtypes kept apart by their main type)."""
    have = {r.split(":")[0] for r in kidrels.split("+")}
    return "+".join(r for r in SIG_RELATIONS if r in have) or "-"


def tree_shape(heads: Sequence[int], deprels: Sequence[str]) -> Tuple[List[int], List[str]]:
    """Per token (0-based): the size of its subtree and the sorted set of its dependents'
    relations joined by "+" (order-free facts of the tree, features of its domain item)."""
    n = len(heads)
    kids = _kids(heads)
    size = [1] * n
    for v in _postorder(kids):
        for c in kids[v]:
            size[v - 1] += size[c]
    return size, ["+".join(sorted({deprels[c] for c in kids[i + 1]})) for i in range(n)]


def _postorder(kids: List[List[int]]) -> List[int]:
    """1-based nodes, children before their head (the root 0 excluded)."""
    out, stack = [], [(0, False)]
    while stack:
        v, done = stack.pop()
        if done:
            if v:
                out.append(v)
            continue
        stack.append((v, True))
        stack.extend((c + 1, False) for c in kids[v])
    return out


class LocalOrderer:
    """Hashed linear model over domain-ordering steps, with beam search (module docstring).

    weights: float32 array [2^hash_bits] (a memory map of a model file is fine); beam: states
    kept per step; suffix: the model's order suffix spec (:func:`suffix_function`: None, "none",
    "morpheme", "chars:N"), which turns on the suffix templates; sig: the domain-signature
    templates (71-73: the step's relations with the relation set of the domain's dependents,
    the head item's ``kr``; the domains must be built with ``sig``); ends: the phrase-ends
    templates (74-77: the last words of p's and x's subtrees, and their first words, alone and
    with the side and the head's UPOS); r2l: the weights (float32 [2^hash_bits]) of a
    right-to-left model, trained on the mirrored domains (:meth:`DomainSet.mirrored`), which
    rescores each domain's final beam: an order's score becomes its left-to-right score plus
    ``r2l_weight`` x the right-to-left model's score of the reversed order (5-fold CV with gold
    forms, one perceptron each way, mean of epochs 4-8: de +0.71 BLEU, en_lines +0.52, zh +0.44,
    ja +0.43, tr +0.43, es +0.41, fr_partut +0.33, vi +0.19; on top of three left-to-right
    perceptrons, three right-to-left at weight 0.5: de +0.39, ja +0.16, es +0.19).  Raises
    ValueError if a weight table's size is not 2^hash_bits or for an unknown suffix spec.
    """

    def __init__(self, weights: np.ndarray, hash_bits: int, beam: int = 16, suffix: Optional[str] = None,
                 sig: bool = False, ends: bool = False, r2l: Optional[np.ndarray] = None, r2l_weight: float = 0.0):
        from .._fast._order import DomainSearch

        if weights.shape != (1 << hash_bits,):
            raise ValueError(f"weight table of {weights.shape} is not 2^{hash_bits}")
        self.w = weights
        self.bits = hash_bits
        self.mask = (1 << hash_bits) - 1
        self.beam = beam
        self.suffix_spec = suffix
        self.suffix = suffix_function(suffix)
        self.sig, self.ends = bool(sig), bool(ends)
        fset = 4 if self.suffix is not None else 3
        self.core = DomainSearch(weights, hash_bits, beam, fset, self.sig, self.ends)
        # the right-to-left model: the same templates over mirrored domains (:func:`mirror_arrays`)
        self.r2l = DomainSearch(r2l, hash_bits, beam, fset, self.sig, self.ends) if r2l is not None else None
        self.r2l_weight = float(r2l_weight)

    @classmethod
    def from_table(cls, weights: np.ndarray, hash_bits: int, order: dict) -> "LocalOrderer":
        """The orderer of a model file: its weight table (float32 [2^hash_bits]) and header
        ``sr.order`` (beam, suffix, sig, ends, r2l).  With ``r2l`` the table holds two models of
        2^(hash_bits - 1) weights, left-to-right then right-to-left (:func:`join_tables`, as
        ``wo sr train --order-r2l`` writes them).  Raises ValueError as the constructor."""
        r2l = float(order.get("r2l", 0.0))
        bits = hash_bits - (1 if r2l else 0)
        half = 1 << bits
        return cls(weights[:half], bits, int(order.get("beam", 16)), order.get("suffix"), bool(order.get("sig", False)),
                   bool(order.get("ends", False)), r2l=weights[half:] if r2l else None, r2l_weight=r2l)

    # ------------------------------------------------------------------ features
    def _step_feats(self, d: Domain, p2: int, p: int, x: int, hp: bool) -> List[tuple]:
        """The feature keys (tuples of uint32: template id, atoms) of appending x after p2 p."""
        hu, hl, hr = d.ctx
        if x != END:
            side = SIDE_H if x == d.hi else (SIDE_R if hp else SIDE_L)
            r, u, l, m = d.r[x], d.u[x], d.l[x], d.m[x]
            fs = [(1, r, side), (2, r, u, side), (3, r, side, hu), (4, r, side, hl), (5, l, side, hu),
                  (6, u, side, hu, hr), (7, l, r, side), (8, m, r, side), (9, r, d.sz[x], side),
                  (10, r, d.kr[x], side), (11, l, hl, side), (12, u, m, side, hu),
                  (13, d.first[x], side, hu), (14, d.last[x], side, hu)]
            rx, ux, lx, fx, fux = r, u, l, d.first[x], d.fu[x]
        else:
            fs = []
            rx = ux = lx = fx = fux = A_END
        if p == START:
            rp = up = lp = lw = lup = A_START
        else:
            rp, up, lp, lw, lup = d.r[p], d.u[p], d.l[p], d.last[p], d.lu[p]
        fs += [(21, rp, rx), (22, rp, rx, hu), (23, up, ux), (24, up, ux, hu), (25, lp, lx), (26, rp, ux),
               (27, up, rx), (28, rp, rx, hl), (29, lp, rx), (30, rp, lx), (31, rp, rx, hr),
               (32, rp, rx, SIDE_R if hp else SIDE_L),
               (41, lw, fx), (42, lup, fux), (43, lw, fux), (44, lup, fx),
               (45, lw, fx, hu), (46, lup, fux, rp, rx), (47, lw, rx), (48, rp, fx)]
        zp = 0 if p == START else d.sz[p]
        zx = 0 if x == END else d.sz[x]
        fs += [(61, rp, zp, rx, zx), (65, zp, zx, hu, SIDE_R if hp else SIDE_L)]
        r2 = A_START if p2 == START else d.r[p2]
        u2 = A_START if p2 == START else d.u[p2]
        fs += [(51, r2, rp, rx), (52, u2, up, ux)]
        if self.sig:
            ds = d.kr[d.hi]
            fs += [(71, rp, rx, ds)] + ([(72, rx, side, ds)] if x != END else []) + [(73, r2, rp, rx, ds)]
        if self.ends and p != START and x != END:
            hs = SIDE_R if hp else SIDE_L
            fs += [(74, d.last[p], d.last[x]), (75, d.first[p], d.first[x]), (76, d.last[p], d.last[x], hs, hu),
                   (77, d.first[p], d.first[x], hs, hu)]
        if self.suffix is not None:
            sx = A_END if x == END else d.sf[x]
            sp = A_START if p == START else d.sf[p]
            if x != END:
                fs += [(15, sx, rx, side), (16, sx, side, hu), (17, sx, hl, side)]
            fs += [(33, sp, sx), (34, sp, rx), (35, rp, sx), (36, sp, sx, hu)]
        return fs

    def _index(self, fs: List[tuple]) -> List[int]:
        """Feature indices: MurmurHash3_x86_32 of each key's little-endian uint32 words (as
        :func:`wo._fast._hash.hash_words`, so a compiled orderer computes the same) & mask."""
        m = self.mask
        return [_mmh3(_PACK[len(f)](*f), 0, signed=False) & m for f in fs]

    timed_out = False               # the last linearize/order ran past its deadline
    lin_dropped = False             # the last search dropped lin constraints that admit no order
    final_beam: List[tuple] = []    # the complete orders the last order() left in its beam

    @staticmethod
    def _arrays(d: Domain) -> tuple:
        """The compiled search's view of a domain: (atoms uint32 [NROWS, k], ints int32 [2, k])."""
        if d.cache is None:
            d.cache = (np.array([d.r, d.u, d.l, d.m, d.first, d.fu, d.last, d.lu, d.kr, d.sz, d.sf], dtype=np.uint32),
                       np.array([d.side, d.rank], dtype=np.int32))
        return d.cache

    def seq_features(self, d: Domain, seq: Sequence[int], end: bool) -> np.ndarray:
        """Feature indices (uint32 array, with repeats) of the steps that build ``seq`` (item
        indices), and of the closing step when ``end`` (compiled: :mod:`wo._fast._order`; the
        same keys as :meth:`_step_feats`)."""
        a, b = self._arrays(d)
        hu, hl, hr = d.ctx
        return self.core.features(a, b, hu, hl, hr, d.hi, list(seq), end)

    def order(self, d: Domain, gold: Optional[Sequence[int]] = None,
              deadline: Optional[float] = None) -> Tuple[Tuple[int, ...], float, Optional[tuple], bool]:
        """Beam search over the orders of domain ``d`` (compiled: :class:`wo._fast._order.DomainSearch`).

        Returns (best sequence of item indices, its score, gold prefix, finished).  With
        ``gold`` (training), the search stops at the first step whose beam has lost the gold
        prefix (early update): then the returned sequence is the best state of that step,
        the gold prefix is as long, and finished is False.  Without gold, the gold prefix is
        None.  ``self.final_beam`` holds the complete orders left in the beam [(score, seq)].
        The step cost is quadratic in the domain's size k, so a domain wider than WIDE_DOMAIN
        items is searched with a beam narrowed by (WIDE_DOMAIN / k)^2 (at least 2 states): a
        root with 200 dependents takes about as long as one with 24.  A domain whose ``lin``
        constraints admit no order (bad input) is ordered without them.  deadline (decoding):
        a ``time.perf_counter()`` value; past it, the best state is completed with the
        remaining items in :meth:`fallback_order` and ``self.timed_out`` is set.
        """
        a, b = self._arrays(d)
        seq, score, gp, finished, final = self.search(a, b, d.ctx, d.hi, gold, deadline)
        if self.lin_dropped:
            d.side = [0] * len(d.items)
            d.cache = None
        if self.r2l is not None and gold is None and len(final) > 1:
            final = self._rescore_r2l(d, final)
            self.final_beam = final
            score, seq = final[0]
        return seq, score, gp, finished

    def _rescore_r2l(self, d: Domain, final: List[tuple]) -> List[tuple]:
        """The final beam [(score, seq)] rescored with the right-to-left model (``r2l_weight`` x
        its score of each reversed order on the mirrored domain), best first (ties: the left-to-right
        beam's order)."""
        a, b = mirror_arrays(*self._arrays(d))
        hu, hl, hr = d.ctx
        seqs = np.array([fseq[::-1] for _, fseq in final], dtype=np.int32)
        back = self.r2l.sequence_scores(a, b, hu, hl, hr, d.hi, seqs)
        out = [(fsc + self.r2l_weight * float(v), fseq) for (fsc, fseq), v in zip(final, back)]
        return sorted(out, key=lambda x: -x[0])

    def search(self, a: np.ndarray, b: np.ndarray, ctx: tuple, hi: int, gold=None,
               deadline: Optional[float] = None) -> tuple:
        """:meth:`order` on a domain's arrays (:meth:`_arrays`: atoms uint32 [NROWS, k], ints int32
        [2, k]; ctx: the head's (UPOS, lemma, relation) atoms; hi: the head's item; gold: int32
        [k] or None).  Returns (sequence, score, gold prefix, finished, final beam); sets
        ``final_beam``, ``timed_out`` and ``lin_dropped``: if the ``lin`` constraints admit no
        order (bad input), the domain is ordered without them."""
        k = a.shape[1]
        B = self.beam if k <= WIDE_DOMAIN else max(2, self.beam * WIDE_DOMAIN * WIDE_DOMAIN // (k * k))
        g = np.asarray(gold, dtype=np.int32) if gold is not None else None
        hu, hl, hr = ctx
        seq, score, gp, finished, final, status = self.core.order(a, b, hu, hl, hr, hi, g, deadline or 0.0, B)
        self.lin_dropped = status == "stuck"
        if self.lin_dropped:   # the lin constraints admit no order (bad input): drop them
            b = b.copy()
            b[0] = 0
            seq, score, gp, finished, final, status = self.core.order(a, b, hu, hl, hr, hi, g, deadline or 0.0, B)
        if status == "timeout":
            self.timed_out = True
        self.final_beam = final
        return seq, score, gp, finished, final

    # ------------------------------------------------------------------ sentences
    @staticmethod
    def domain(h: int, deps: Sequence[int], lemmas, upos, deprels, feats, lin, first, last,
               words: Sequence[str], shape: Tuple[Sequence[int], Sequence[str]],
               gold_pos: Optional[Sequence[int]] = None,
               suffix: Optional[Callable[[str, str], str]] = None, sig: bool = False) -> Domain:
        """The domain of 0-based token ``h`` with 0-based dependents ``deps`` (in a canonical
        order that does not reveal the reference).  first/last: dict token -> (word, UPOS) of
        each dependent's realised subtree; words: the word of every token (form or lemma,
        lower-cased); gold_pos: reference position of every token (training); suffix: the
        model's order suffix (:func:`suffix_function`; None: the ``sf`` atoms are 0); sig: the
        head item's ``kr`` atom is the relation set of the domain's dependents (the domain
        signature of :class:`LocalOrderer`'s ``sig`` templates; else 0)."""
        d = Domain()
        items = sorted(deps, key=lambda i: (deprels[i], upos[i], lemmas[i], feats[i], i)) + [h]
        d.items = items
        d.hi = len(items) - 1
        d.ctx = (_atom(upos[h]), _atom(lemmas[h].lower()), _atom(deprels[h]))
        d.r = [_atom(deprels[i]) for i in items]
        d.r[-1] = A_HEAD
        d.u = [_atom(upos[i]) for i in items]
        d.l = [_atom(lemmas[i].lower()) for i in items]
        d.m = [_atom(feats[i]) for i in items]
        hw = (words[h], upos[h])
        fl = [hw if i == h else first[i] for i in items]
        ll = [hw if i == h else last[i] for i in items]
        d.first = [_atom(a) for a, _ in fl]
        d.fu = [_atom(b) for _, b in fl]
        d.last = [_atom(a) for a, _ in ll]
        d.lu = [_atom(b) for _, b in ll]
        d.side = [0 if i == h else (-1 if lin[i] < 0 else (1 if lin[i] > 0 else 0)) for i in items]
        d.rank = [abs(lin[i]) for i in items]
        size, kidrels = shape
        d.sz = [1 if i == h else _size_bucket(size[i]) for i in items]
        d.kr = [(_atom(_signature(kidrels[h])) if sig else 0) if i == h else _atom(kidrels[i]) for i in items]
        d.sf = [_atom(suffix(words[i], lemmas[i])) for i in items] if suffix is not None else [0] * len(items)
        d.cache = None
        d.gold = sorted(range(len(items)), key=lambda x: gold_pos[items[x]]) if gold_pos is not None else None
        return d

    @staticmethod
    def fallback_order(d: Domain) -> Tuple[int, ...]:
        """An order of domain ``d`` without the model (after a timeout): the left ``lin`` items
        (farthest first), the head, the right ``lin`` items (nearest first), then the others in
        their canonical order."""
        k = len(d.items)
        left = sorted((x for x in range(k) if d.side[x] < 0), key=lambda x: -d.rank[x])
        right = sorted((x for x in range(k) if d.side[x] > 0), key=lambda x: d.rank[x])
        rest = [x for x in range(k) if d.side[x] == 0 and x != d.hi]
        return tuple(left + [d.hi] + right + rest)

    def linearize(self, heads: Sequence[int], lemmas, upos, deprels, feats, lin, words: Sequence[str],
                  rescore: Optional[Callable[[int, List[int], List[int]], float]] = None,
                  deadline: Optional[float] = None) -> Tuple[List[int], float]:
        """Order a whole tree bottom-up.  heads: 1-based (0 root), per token; the other
        sequences per token (str; lin int).  rescore(h, span, order): an extra score of a
        complete order of the domain of 0-based token h (span: the token indices of its whole
        realised subtree in order; order: the domain's items, h among them, in order), added to
        the model score of each order left in the final beam to choose among them (e.g. LMs).
        deadline: a ``time.perf_counter()`` value after which the domains not yet ordered take
        :meth:`fallback_order` (``self.timed_out`` tells whether that happened).
        Returns (0-based token indices in output order, total model score of the chosen
        orders).  The output is projective in ``heads``."""
        n = len(heads)
        kids = _kids(heads)
        shape = tree_shape(heads, deprels)
        span: Dict[int, List[int]] = {}
        first: Dict[int, tuple] = {}
        last: Dict[int, tuple] = {}
        total = 0.0
        self.timed_out = False
        for v in _postorder(kids):
            h = v - 1
            if kids[v]:
                d = self.domain(h, kids[v], lemmas, upos, deprels, feats, lin, first, last, words, shape,
                                suffix=self.suffix, sig=self.sig)
                if deadline is not None and (self.timed_out or time.perf_counter() > deadline):
                    self.timed_out = True
                    seq, sc = self.fallback_order(d), 0.0
                    self.final_beam = []
                else:
                    seq, sc, _, _ = self.order(d, deadline=deadline)

                def span_of(seq):
                    sp: List[int] = []
                    for x in seq:
                        it = d.items[x]
                        sp += [h] if it == h else span[it]
                    return sp
                if rescore is not None and len(self.final_beam) > 1:
                    best = None
                    for fsc, fseq in self.final_beam:
                        sp = span_of(fseq)
                        v = fsc + rescore(h, sp, [d.items[x] for x in fseq])
                        if best is None or v > best[0]:
                            best = (v, fsc, sp)
                    total += best[1]
                    span[h] = best[2]
                else:
                    total += sc
                    span[h] = span_of(seq)
            else:
                span[h] = [h]
            first[h] = (words[span[h][0]], upos[span[h][0]])
            last[h] = (words[span[h][-1]], upos[span[h][-1]])
        out: List[int] = []
        for r in sorted(kids[0], key=lambda i: (deprels[i], lemmas[i], i)):
            out += span[r]
        assert len(out) == n
        return out, total


def gold_domains(heads: Sequence[int], gold_pos: Sequence[int], lemmas, upos, deprels, feats, lin,
                 words: Sequence[str], suffix: Optional[Callable[[str, str], str]] = None,
                 sig: bool = False) -> List[Domain]:
    """The domains of a training tree (projective in the reference order ``gold_pos``, 0-based
    positions), with the reference's subtree boundaries as the first/last words; suffix: the
    order suffix (:func:`suffix_function`); sig: the domain signature (:meth:`LocalOrderer.domain`)."""
    n = len(heads)
    kids = _kids(heads)
    lo = {i: i for i in range(n)}
    hi = {i: i for i in range(n)}
    for v in _postorder(kids):
        h = v - 1
        for c in kids[v]:
            if gold_pos[lo[c]] < gold_pos[lo[h]]:
                lo[h] = lo[c]
            if gold_pos[hi[c]] > gold_pos[hi[h]]:
                hi[h] = hi[c]
    first = {i: (words[lo[i]], upos[lo[i]]) for i in range(n)}
    last = {i: (words[hi[i]], upos[hi[i]]) for i in range(n)}
    shape = tree_shape(heads, deprels)
    return [LocalOrderer.domain(v - 1, kids[v], lemmas, upos, deprels, feats, lin, first, last, words, shape,
                                gold_pos, suffix, sig) for v in range(1, n + 1) if kids[v]]


# the atom rows of a mirrored domain: first/fu and last/lu change places (Domain's rows r u l m
# first fu last lu kr sz sf)
MIRROR_ROWS = [0, 1, 2, 3, 6, 7, 4, 5, 8, 9, 10]


def mirror_arrays(a: np.ndarray, b: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """A domain's arrays (atoms uint32 [NROWS, k], ints int32 [2, k]: :meth:`LocalOrderer._arrays`)
    as seen from the right: each item's subtree read backwards (its first and last words change
    places) and its ``lin`` side negated, so that the reversed order of the domain is an order
    of the mirrored one and a right-to-left model is the same templates trained on mirrored
    domains.  Returns new arrays."""
    b2 = b.copy()
    b2[0] = -b2[0]
    return np.ascontiguousarray(a[MIRROR_ROWS]), b2


def join_tables(forward: np.ndarray, backward: Optional[np.ndarray], hash_bits: int) -> Tuple[np.ndarray, int]:
    """The weight table of a model file from the left-to-right model's weights (float32
    [2^hash_bits]) and, when not None, the right-to-left model's (same shape): (float32 table,
    its hash bits), the two halves one after the other (read back by
    :meth:`LocalOrderer.from_table`)."""
    if backward is None:
        return forward, hash_bits
    return np.concatenate([forward, backward]), hash_bits + 1


class DomainSet:
    """Training domains packed in flat numpy arrays, so that shards of them travel to worker
    processes (parameter mixing) as a few buffers instead of thousands of objects.

    Domain i has k_i = start[i + 1] - start[i] items; its atoms are ``atoms[NROWS * start[i]:
    NROWS * start[i + 1]]`` viewed as uint32 [NROWS, k_i] (the rows of :meth:`LocalOrderer._arrays`),
    its side/rank ``ints[2 * start[i]: 2 * start[i + 1]]`` as int32 [2, k_i], its reference
    order ``gold[start[i]: start[i + 1]]`` (int32 item indices); ``ctx`` uint32 [D, 3] (head
    UPOS, lemma, relation atoms), ``hi`` int32 [D] (the head's item).
    """

    __slots__ = ("atoms", "ints", "gold", "start", "ctx", "hi")

    def __init__(self, atoms: np.ndarray, ints: np.ndarray, gold: np.ndarray, start: np.ndarray,
                 ctx: np.ndarray, hi: np.ndarray):
        self.atoms, self.ints, self.gold, self.start, self.ctx, self.hi = atoms, ints, gold, start, ctx, hi

    def __getstate__(self):
        return (self.atoms, self.ints, self.gold, self.start, self.ctx, self.hi)

    def __setstate__(self, st):
        self.atoms, self.ints, self.gold, self.start, self.ctx, self.hi = st

    def __len__(self) -> int:
        return len(self.hi)

    @classmethod
    def of(cls, domains: Sequence[Domain]) -> "DomainSet":
        """Pack training domains (each with ``gold``).  Raises ValueError for a domain without
        its reference order."""
        if any(d.gold is None for d in domains):
            raise ValueError("a training domain needs its reference order (gold)")
        arrs = [LocalOrderer._arrays(d) for d in domains]
        start = np.zeros(len(domains) + 1, dtype=np.int64)
        np.cumsum([len(d) for d in domains], out=start[1:])
        cat = lambda xs, dt: np.concatenate(xs).astype(dt, copy=False) if xs else np.zeros(0, dt)
        return cls(cat([a.ravel() for a, _ in arrs], np.uint32), cat([b.ravel() for _, b in arrs], np.int32),
                   cat([np.asarray(d.gold, dtype=np.int32) for d in domains], np.int32), start,
                   np.array([d.ctx for d in domains], dtype=np.uint32).reshape(-1, 3),
                   np.array([d.hi for d in domains], dtype=np.int32))

    @classmethod
    def concat(cls, sets: Sequence["DomainSet"]) -> "DomainSet":
        """The domains of ``sets`` in order, as one set."""
        offs = np.cumsum([0] + [int(s.start[-1]) for s in sets])
        start = np.concatenate([np.zeros(1, np.int64)] + [s.start[1:] + o for s, o in zip(sets, offs)])
        return cls(np.concatenate([s.atoms for s in sets]), np.concatenate([s.ints for s in sets]),
                   np.concatenate([s.gold for s in sets]), start,
                   np.concatenate([s.ctx for s in sets]).reshape(-1, 3), np.concatenate([s.hi for s in sets]))

    def take(self, idx: Sequence[int]) -> "DomainSet":
        """The domains ``idx`` (in that order), as a new set."""
        idx = np.asarray(idx, dtype=np.int64)
        k = self.start[idx + 1] - self.start[idx]
        start = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(k, out=start[1:])
        items = np.repeat(self.start[idx] - start[:-1], k) + np.arange(start[-1])   # source item per new item
        rows = lambda a, w: a.reshape(-1)[(np.repeat(w * self.start[idx] - w * start[:-1], w * k)
                                           + np.arange(w * start[-1]))]
        return DomainSet(rows(self.atoms, NROWS), rows(self.ints, 2), self.gold[items], start,
                         self.ctx[idx], self.hi[idx])

    def mirrored(self) -> "DomainSet":
        """Every domain seen from the right (:func:`mirror_arrays`), its reference order reversed:
        the training set of a right-to-left model."""
        k = np.diff(self.start)
        dom = np.repeat(np.arange(len(k)), k)             # the domain of each item
        s, kk = self.start[dom], k[dom]
        off = np.arange(int(self.start[-1])) - s           # the item's place in its domain
        atoms = np.empty_like(self.atoms)
        for r, src in enumerate(MIRROR_ROWS):
            atoms[NROWS * s + r * kk + off] = self.atoms[NROWS * s + src * kk + off]
        ints = self.ints.copy()
        ints[2 * s + off] = -self.ints[2 * s + off]
        return DomainSet(atoms, ints, self.gold[s + kk - 1 - off], self.start.copy(), self.ctx.copy(), self.hi.copy())

    def view(self, i: int) -> tuple:
        """Domain i as (atoms uint32 [NROWS, k], ints int32 [2, k], (hu, hl, hr), hi, gold int32 [k])."""
        s, e = int(self.start[i]), int(self.start[i + 1])
        k = e - s
        hu, hl, hr = (int(x) for x in self.ctx[i])
        return (self.atoms[NROWS * s:NROWS * e].reshape(NROWS, k), self.ints[2 * s:2 * e].reshape(2, k), (hu, hl, hr),
                int(self.hi[i]), self.gold[s:e])


class _Learner:
    """The local orderer as an online learner for :func:`wo.learn.train_pass`: the weights ``w``
    (float32 [2^b], the orderer's table) and averaging accumulator ``u`` (float64 [2^b]) updated
    in place by the perceptron with early update, the averaging count ``avg_count`` and the
    updates made ``n_updates``."""

    def __init__(self, lo: "LocalOrderer", ds: "DomainSet", w: np.ndarray, u: np.ndarray, c: float):
        self.lo, self.ds, self.w, self.u = lo, ds, w, u
        self.avg_count = c
        self.n_updates = 0

    def step(self, i: int, _item) -> Tuple[bool, int]:
        """Decode domain ``i``; on an error, +1 on the gold sequence's features and -1 on the
        output's (the accumulator by the count).  Returns (output == gold, 0 pops)."""
        a, b, ctx, hi, gold = self.ds.view(i)
        lo = self.lo
        seq, _, gp, full, _ = lo.search(a, b, ctx, hi, gold)
        if seq == gp:
            return True, 0
        c = self.avg_count
        g = lo.core.features(a, b, ctx[0], ctx[1], ctx[2], hi, list(gp), full)
        p = lo.core.features(a, b, ctx[0], ctx[1], ctx[2], hi, list(seq), full)
        np.add.at(self.w, g, 1.0)
        np.add.at(self.w, p, -1.0)
        np.add.at(self.u, g, c)
        np.add.at(self.u, p, -c)
        self.n_updates += 1
        return False, 0


class _GivenOrder:
    """A stand-in for ``random.Random`` whose ``shuffle`` puts the items in a given order (the
    order a whole perceptron's trainer drew, :class:`LocalTrainer` with ``whole``)."""

    def __init__(self, order: Sequence[int]):
        self.order = [int(i) for i in order]

    def shuffle(self, idx: list) -> None:
        idx[:] = self.order


def _shard_pass(w: np.ndarray, u: np.ndarray, c0: float, bits: int, beam: int, spec: tuple, ds: "DomainSet",
                seed) -> int:
    """One shard's epoch of parameter mixing: a pass over the domains ``ds`` in the order of
    ``random.Random(seed)`` (or, ``seed`` a sequence of domain indices, in that order),
    updating the weights ``w`` (float32 [2^bits]) and accumulator ``u`` (float64) in place from
    the averaging count ``c0``; spec: the orderer's (suffix, sig, ends) (:class:`LocalOrderer`).
    Returns the number of updates."""
    learner = _Learner(LocalOrderer(w, bits, beam, *spec), ds, w, u, c0)
    rng = random.Random(seed) if isinstance(seed, (int, np.integer)) else _GivenOrder(seed)
    return train_pass(learner, range(len(ds)), rng, learner.step)["updates"]


def _mix_shard(state: tuple, batch: list) -> list:
    """One shard's epoch of iterative parameter mixing (a joblib/Dask worker): from the shared
    weights W (float32 [2^b]), accumulator U (float64 [2^b]) and averaging count c, one pass
    over the shard's domains in a fixed-seed order (:func:`_shard_pass`); returns
    [(W, U, domains, updates)]."""
    W0, U0, c0, bits, beam, spec = state
    out = []
    for ds, seed in batch:
        w, u = np.array(W0, dtype=np.float32), np.array(U0, dtype=np.float64)
        out.append((w, u, len(ds), _shard_pass(w, u, c0, bits, beam, spec, ds, seed)))
    return out


_RESIDENT: Dict[str, "DomainSet"] = {}   # shard file -> its memory-mapped DomainSet (per worker process)


def _resident_shard(path: str) -> "DomainSet":
    """The shard stored at ``path`` (``joblib.dump`` of a :class:`DomainSet`), memory-mapped
    copy-on-write once per worker process and kept (at most 16 files)."""
    ds = _RESIDENT.get(path)
    if ds is None:
        import joblib

        if len(_RESIDENT) >= 16:
            _RESIDENT.pop(next(iter(_RESIDENT)))
        mapped = joblib.load(path, mmap_mode="c")   # plain views: slicing an np.memmap costs 40 % more here
        ds = _RESIDENT[path] = DomainSet(*(a.view(np.ndarray) for a in mapped.__getstate__()))
    return ds


def _mix_shard_resident(batch: list) -> list:
    """:func:`_mix_shard` for workers on this machine (loky processes).  Each item of ``batch`` is
    ((w_path, c, bits, beam, spec), shard path, seed): the weights W (float32 [2^bits]) are read
    from the file ``w_path`` (the item's own trainer: one dispatch may carry the shards of
    several perceptrons, :func:`start_epochs`), each shard is a file memory-mapped once per
    worker (:func:`_resident_shard`), and the result is sparse, so that an epoch moves
    kilobytes, not the 12 MB of W and U per shard and way.  Returns per item (idx int64 [m]:
    the features whose weight or accumulator changed, their new weights float32 [m], their
    accumulator increments float64 [m] (the accumulator started at 0), domains, updates)."""
    out = []
    for (w_path, c0, bits, beam, spec), path, seed in batch:
        W0 = np.fromfile(w_path, dtype=np.float32)
        ds = _resident_shard(path)
        w, u = W0.copy(), np.zeros(len(W0), dtype=np.float64)
        updates = _shard_pass(w, u, c0, bits, beam, spec, ds, seed)
        idx = np.flatnonzero((w != W0) | (u != 0.0))
        out.append((idx, w[idx], u[idx], len(ds), updates))
    return out


class LocalTrainer:
    """Training of the local orderer, one epoch at a time (:meth:`epoch`, for
    :func:`wo.learn.epoch_loop`): the averaged perceptron with early update over the training
    domains (:func:`gold_domains`, a list of :class:`Domain` or a :class:`DomainSet`), or with
    jobs > 1 (or backend "dask") iterative parameter mixing (McDonald, Hall & Mann 2010,
    Algorithm 2, uniform mixture; :func:`wo.learn.mix_shards`): the domains are cut once into
    ``jobs`` shards by a fixed-seed shuffle, each epoch every shard makes one pass from the same
    weights in its own process (joblib "loky" processes, or a Dask cluster at ``scheduler``:
    the same code path), and the shards' weights and accumulators are averaged.
    Weights float32 [2^hash_bits] (perceptron steps of +-1: exact in float32), accumulator
    float64.  whole (with jobs > 1 and loky): no mixing; the perceptron trains whole, as with
    one job (the same shuffles, the same weights), but in a worker process, so that several
    perceptrons (:func:`start_epochs`: seeds and directions) train side by side on ``jobs``
    processes.  Raises ValueError for an unknown backend (at the first epoch).
    """

    def __init__(self, domains, hash_bits: int = 20, beam: int = 16, seed: int = 1, jobs: int = 1,
                 backend: str = "loky", scheduler: Optional[str] = None, suffix: Optional[str] = None,
                 sig: bool = False, ends: bool = False, whole: bool = False):
        self.ds = domains if isinstance(domains, DomainSet) else DomainSet.of(domains)
        self.hash_bits, self.beam, self.seed = hash_bits, beam, seed
        self.spec = (suffix, sig, ends)   # the orderer's templates (LocalOrderer's suffix, sig, ends)
        self.jobs, self.backend, self.scheduler = jobs, backend, scheduler
        self.w = np.zeros(1 << hash_bits, dtype=np.float32)
        self.u = np.zeros(1 << hash_bits, dtype=np.float64)
        self.learner = _Learner(LocalOrderer(self.w, hash_bits, beam, *self.spec), self.ds, self.w, self.u, 1.0)
        self.rng = random.Random(seed)
        self.order = list(range(len(self.ds)))   # shuffled in place every epoch (cumulatively)
        self.mixing = jobs > 1 or backend == "dask"
        self.whole = bool(whole) and jobs > 1 and backend == "loky"
        self._dir = None
        if self.mixing:
            if self.whole:
                self.shards = [self.ds]
            else:
                cut = list(range(len(self.ds)))
                random.Random(seed * 1000003).shuffle(cut)
                self.shards = [self.ds.take(sorted(cut[k::jobs])) for k in range(jobs)]
            if backend == "loky":   # workers on this machine: the shards are files, mapped once
                self._dir = _scratch_dir(sum(a.nbytes for sh in self.shards for a in sh.__getstate__())
                                         + self.w.nbytes)
                self._finalizer = weakref.finalize(self, shutil.rmtree, self._dir, True)
                import joblib

                self.shard_files = []
                for k, sh in enumerate(self.shards):
                    self.shard_files.append(os.path.join(self._dir, f"shard{k}.joblib"))
                    joblib.dump(sh, self.shard_files[-1])
                self.w_file = os.path.join(self._dir, "W.f32")

    def epoch(self, ep: int) -> dict:
        """Train epoch ``ep`` (from 1).  Returns {"updates", "seconds", "shards"}."""
        return self.start(ep)()

    def start(self, ep: int) -> Callable[[], dict]:
        """Epoch ``ep`` in two halves (:func:`wo.learn.epoch_loop`'s ``start_epoch``): with
        parameter mixing over loky processes the shards are dispatched now and the returned
        function waits for them and mixes; else the epoch is trained now.  The function returns
        :meth:`epoch`'s record ("seconds": from dispatch to the end of the mixing)."""
        t0 = time.perf_counter()
        lr = self.learner
        if self._dir is not None:
            return start_epochs([self], ep)
        if self.mixing:
            wait = mix_start(_mix_shard, (self.w, self.u, lr.avg_count, self.hash_bits, self.beam, self.spec),
                             [(sh, self.seed * 7919 + ep * 101 + k) for k, sh in enumerate(self.shards)],
                             self.w, self.u, self.jobs, self.backend, self.scheduler)

            def finish() -> dict:
                res, step = wait()
                lr.avg_count += step
                return {"updates": int(sum(r[3] for r in res)), "seconds": round(time.perf_counter() - t0, 2),
                        "shards": self.jobs}
            return finish
        updates = train_pass(lr, range(len(self.ds)), self.rng, lr.step, self.order)["updates"]
        rec = {"updates": updates, "seconds": round(time.perf_counter() - t0, 2), "shards": 1}
        return lambda: rec

    def averaged(self) -> np.ndarray:
        """The averaged weights W - U / c, float32 [2^hash_bits]."""
        return (self.w - self.u / self.learner.avg_count).astype(np.float32)

    def _resident_tasks(self, ep: int) -> list:
        """The items of epoch ``ep`` for :func:`_mix_shard_resident` (the current weights are
        written to this trainer's W file now)."""
        self.w.tofile(self.w_file)       # read by the workers at the start of their task
        state = (self.w_file, self.learner.avg_count, self.hash_bits, self.beam, self.spec)
        if self.whole:   # the order one process would follow (train_pass shuffles self.order in place)
            self.rng.shuffle(self.order)
            return [(state, self.shard_files[0], np.asarray(self.order, dtype=np.int64))]
        return [(state, f, self.seed * 7919 + ep * 101 + k) for k, f in enumerate(self.shard_files)]

    def _mix_sparse(self, res: list) -> int:
        """The uniform mixture of this trainer's shards from :func:`_mix_shard_resident`'s
        results ``res`` (one per shard), into W and U in place; the averaging count advances
        by the mean shard size.  Returns the updates made."""
        K = len(res)
        touched = np.unique(np.concatenate([r[0] for r in res]))   # the mixture moves these alone
        W = self.w[touched].astype(np.float64)
        for idx, w_new, du, _, _ in res:
            W[np.searchsorted(touched, idx)] += (w_new.astype(np.float64) - self.w[idx]) / K
            self.u[idx] += du / K
        self.w[touched] = W.astype(np.float32)
        self.learner.avg_count += float(np.mean([r[3] for r in res]))
        return int(sum(r[4] for r in res))


def start_epochs(trainers: Sequence[LocalTrainer], ep: int) -> Callable[[], dict]:
    """Epoch ``ep`` of several perceptrons (the seeds and directions of ``wo sr train``) in two
    halves, as :meth:`LocalTrainer.start` for one: when every trainer mixes over loky processes
    (the same ``jobs``), all their shards go out in one dispatch now, so that the workers never
    wait between perceptrons and this process is free (e.g. to decode dev with the previous
    epoch's weights); otherwise each trainer's epoch runs now, one after the other.  The
    returned function waits, mixes each trainer's shards (:meth:`LocalTrainer._mix_sparse`)
    and returns {"updates": over all trainers, "seconds": from dispatch to the end,
    "shards"}.  The weights are those of the trainers' epochs run one by one.
    Raises ValueError for no trainers."""
    t0 = time.perf_counter()
    if not trainers:
        raise ValueError("start_epochs needs at least one trainer")
    if all(t._dir is not None for t in trainers):
        tasks = [task for t in trainers for task in t._resident_tasks(ep)]
        wait = map_start(_mix_shard_resident, (), tasks, jobs=trainers[0].jobs, chunk=1)

        def finish() -> dict:
            res, k, updates = wait(), 0, 0
            for t in trainers:
                n = len(t.shard_files)
                updates += t._mix_sparse(res[k:k + n])
                k += n
            return {"updates": updates, "seconds": round(time.perf_counter() - t0, 2),
                    "shards": len(trainers[0].shard_files)}
        return finish
    recs = [t.start(ep)() for t in trainers]
    rec = {"updates": sum(r["updates"] for r in recs), "seconds": round(time.perf_counter() - t0, 2),
           "shards": recs[0]["shards"]}
    return lambda: rec


def _scratch_dir(nbytes: int) -> str:
    """A new private directory for the shard files of parameter mixing: in /dev/shm (memory)
    when it has four times ``nbytes`` free, else in the system's temporary directory."""
    import tempfile

    base = None
    try:
        if shutil.disk_usage("/dev/shm").free > 4 * nbytes:
            base = "/dev/shm"
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="wo-ipm-", dir=base)


def train_local(domains, epochs: int, hash_bits: int = 20, beam: int = 16, seed: int = 1,
                on_epoch: Optional[Callable[[int, np.ndarray, dict], None]] = None, jobs: int = 1,
                backend: str = "loky", scheduler: Optional[str] = None, suffix: Optional[str] = None,
                sig: bool = False, ends: bool = False) -> np.ndarray:
    """Averaged perceptron with early update over training domains (:func:`gold_domains`, a
    list of :class:`Domain` or a :class:`DomainSet`).

    jobs > 1 (or backend "dask"): iterative parameter mixing (McDonald, Hall & Mann 2010,
    Algorithm 2, uniform mixture; :func:`wo.learn.mix_shards`, as for the search core):
    the domains are cut once into ``jobs`` shards by a fixed-seed shuffle, each epoch every
    shard makes one pass from the same weights in its own process (joblib "loky" processes, or a
    Dask cluster at ``scheduler`` with ``backend="dask"``: the same code path,
    :func:`wo.io.batch.map_batches`), and the shards' weights and averaging accumulators are
    averaged (the averaging count advances by the mean shard size).  jobs = 1 is the plain
    sequential perceptron.  suffix: the order suffix spec the domains were built with
    (:func:`suffix_function`; the same must be given to the decoding :class:`LocalOrderer`), and
    sig whether they carry the domain signature (:meth:`LocalOrderer.domain`; likewise); ends:
    the phrase-ends templates (:class:`LocalOrderer`).

    After each epoch ``on_epoch(epoch, averaged weights float32 [2^hash_bits], stats)`` is
    called (stats: updates, seconds, shards).  Returns the last epoch's averaged weights.
    Raises ValueError for an unknown backend.
    """
    tr = LocalTrainer(domains, hash_bits, beam, seed, jobs, backend, scheduler, suffix, sig, ends)
    avg = None
    for ep in range(1, epochs + 1):
        stats = tr.epoch(ep)
        avg = tr.averaged()
        if on_epoch is not None:
            on_epoch(ep, avg, stats)
    return avg
