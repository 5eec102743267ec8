"""Search instances of dependency word ordering: the numpy arrays the Cython core reads.

:func:`make_instance` turns the words of a sentence plus the trusted columns (``given``) into
arrays in canonical token order (Zhang & Clark 2015, section 4.1: any share of POS tags and
heads may be given); :func:`gold_arrays` adds the reference for training and forced decoding.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from ..io.conllu import Sentence
from ..model import TagDictionary, atom

GIVEN_CHOICES = ("none", "pos", "heads", "full")
ROOT = -2  # given_head value meaning "this token is the root"
NONE = -1  # given_head value meaning "head unknown"


class SearchArrays:
    """What every dependency-grammar instance gives the search: ``n`` and the positional
    arrays (tok_word uint32[n], given_head int32[n], given_ndeps int32[n], leaf_tok int32[L],
    leaf_pos uint32[L]) of ``DepSearch`` calls.  Mixed into :class:`Instance` and
    ``wo.sr.SRInstance``, which add ``extra()`` (their keyword arrays)."""

    @property
    def n(self) -> int:
        """Number of input tokens."""
        return int(self.tok_word.shape[0])

    def arrays(self):
        """(tok_word, given_head, given_ndeps, leaf_tok, leaf_pos)."""
        return (self.tok_word, self.given_head, self.given_ndeps, self.leaf_tok, self.leaf_pos)


@dataclass
class Instance(SearchArrays):
    """Arrays for the search core, tokens in canonical order (sorted, so input order is irrelevant).

    tok_word uint32[n]; given_head int32[n] (-1 none, -2 root, else canonical token index);
    given_ndeps int32[n]; leaf_tok int32[L]; leaf_pos uint32[L] (POS atoms); leaf_tag list[str]
    of length L; canon int64[n]: canon[c] = index in the caller's token order of canonical token c.
    gold: optional (gold_head int32[n], gold_pos uint32[n], gold_idx int32[n], sub_lo, sub_hi).
    """

    tok_word: np.ndarray
    given_head: np.ndarray
    given_ndeps: np.ndarray
    leaf_tok: np.ndarray
    leaf_pos: np.ndarray
    leaf_tag: List[str]
    canon: np.ndarray
    gold: Optional[tuple] = None
    tok_form: Optional[List[str]] = None
    tok_label: Optional[np.ndarray] = None

    @property
    def leaf_form(self) -> List[str]:
        """The word of every leaf (list of L str; for the LM ids)."""
        return [self.tok_form[t] for t in self.leaf_tok]

    def extra(self) -> dict:
        """Keyword arguments of the search calls: ``tok_label`` (uint32[n]) for a question
        under a question-label model (see :func:`make_instance`), else none."""
        return {} if self.tok_label is None else {"tok_label": self.tok_label}


def reveal(pos: Sequence[Optional[str]], heads: Sequence[int], given: str, reveal_pos: float,
           reveal_heads: float, rng: Optional[random.Random]) -> Tuple[List[Optional[str]], List[int]]:
    """Keep the trusted constraints: POS under ``pos``/``full``, heads under ``heads``/``full``.

    pos: list of str or None (None = unknown); heads: -1 unknown, 0 root, else 1-based.
    ``reveal_*`` in [0, 1] keeps a random share of the known ones (Table 7), drawn from ``rng``.
    Under ``none`` nothing is kept (a bag of words is the forms alone).  Raises ValueError for
    an unknown ``given``.
    """
    if given not in GIVEN_CHOICES:
        raise ValueError(f"--given must be one of {GIVEN_CHOICES}, not {given!r}")
    n = len(pos)
    out_pos: List[Optional[str]] = [None] * n
    out_heads = [-1] * n
    if given in ("pos", "full"):
        for i in range(n):
            if pos[i] is not None and (reveal_pos >= 1.0 or (rng is not None and rng.random() < reveal_pos)):
                out_pos[i] = pos[i]
    if given in ("heads", "full"):
        for i in range(n):
            if heads[i] >= 0 and (reveal_heads >= 1.0 or (rng is not None and rng.random() < reveal_heads)):
                out_heads[i] = heads[i]
    return out_pos, out_heads


def choose_given(sent: Sentence, given: str, reveal_pos: float, reveal_heads: float,
                 rng: Optional[random.Random]) -> Tuple[List[Optional[str]], List[int]]:
    """:func:`reveal` for a :class:`Sentence` (``_`` in XPOS = unknown)."""
    return reveal([None if t == "_" else t for t in sent.xpos], sent.heads, given, reveal_pos,
                  reveal_heads, rng)


QUESTION_MARKS = ("?", "？")
Q_LABEL = "q:?"


def make_instance(forms: Sequence[str], pos: Sequence[Optional[str]], heads: Sequence[int],
                  tagdict: TagDictionary, gold: Optional[Sentence] = None,
                  question_labels: bool = False) -> Instance:
    """Build the search arrays.  heads: -1 none, 0 root, else 1-based (in the caller's order).

    With ``gold`` (a sentence in the same token order, projective) the reference arrays for
    training and forced decoding are added; the gold POS is always among a token's leaves.
    question_labels: if the input holds a question mark, every token gets the label ``q:?``,
    so the label-conjoined direction templates (section 5.7's label copies) learn question
    order (subject-auxiliary inversion, fronted wh-words) apart from statement order; other
    inputs are unlabelled as before.  Raises ValueError on an empty sentence.
    """
    n = len(forms)
    if n == 0:
        raise ValueError("empty sentence")
    key = []
    for i in range(n):
        h = heads[i]
        hk = "" if h < 0 else ("<ROOT>" if h == 0 else forms[h - 1])
        ndep = sum(1 for x in heads if x == i + 1)
        key.append((forms[i], pos[i] or "", hk, ndep, i))
    order = sorted(range(n), key=lambda i: key[i][:4])
    canon = np.asarray(order, dtype=np.int64)
    where = np.empty(n, dtype=np.int64)
    where[canon] = np.arange(n)
    tok_word = np.array([atom(forms[i]) for i in order], dtype=np.uint32)
    given_head = np.full(n, NONE, dtype=np.int32)
    for c, i in enumerate(order):
        h = heads[i]
        if h == 0:
            given_head[c] = ROOT
        elif h > 0:
            given_head[c] = where[h - 1]
    given_ndeps = np.zeros(n, dtype=np.int32)
    for c in range(n):
        if given_head[c] >= 0:
            given_ndeps[given_head[c]] += 1
    leaf_tok, leaf_tag = [], []
    for c, i in enumerate(order):
        if pos[i]:
            tags = [pos[i]]
        else:
            tags = list(tagdict.tags(forms[i]))
            if gold is not None and gold.xpos[i] not in tags:
                tags = sorted(tags + [gold.xpos[i]])
        for t in tags:
            leaf_tok.append(c)
            leaf_tag.append(t)
    inst = Instance(tok_word, given_head, given_ndeps, np.asarray(leaf_tok, dtype=np.int32),
                    np.array([atom(t) for t in leaf_tag], dtype=np.uint32), leaf_tag, canon,
                    tok_form=[forms[i] for i in order])
    if question_labels and any(f in QUESTION_MARKS for f in forms):
        inst.tok_label = np.full(n, atom(Q_LABEL), dtype=np.uint32)
    if gold is not None:
        inst.gold = gold_arrays(gold, order, where)
    return inst


def gold_arrays(gold: Sentence, order: Sequence[int], where: np.ndarray) -> tuple:
    """Reference arrays in canonical order: head (-1 root), POS atom, position, subtree span [lo, hi).

    ``gold`` tokens are in the caller's order with ``gold.meta['_gold_pos']`` (list of int,
    reference position of each token) if the caller's order is not the reference order.
    """
    n = len(order)
    gpos = gold.meta.get("_gold_pos") or list(range(n))
    g_head = np.full(n, -1, dtype=np.int32)
    g_pos = np.zeros(n, dtype=np.uint32)
    g_idx = np.zeros(n, dtype=np.int32)
    for c, i in enumerate(order):
        h = gold.heads[i]
        g_head[c] = -1 if h == 0 else where[h - 1]
        g_pos[c] = atom(gold.xpos[i])
        g_idx[c] = gpos[i]
    lo = g_idx.copy()
    hi = g_idx.copy() + 1
    # propagate spans up the tree (each token's subtree span)
    for c in range(n):
        p = g_head[c]
        seen = 0
        while p >= 0 and seen <= n:
            lo[p] = min(lo[p], g_idx[c])
            hi[p] = max(hi[p], g_idx[c] + 1)
            p = g_head[p]
            seen += 1
    return (g_head, g_pos, g_idx, lo.astype(np.int32), hi.astype(np.int32))
