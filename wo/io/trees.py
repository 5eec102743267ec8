"""Evaluation hygiene and tree utilities: the fixed-seed shuffle of a sentence, head remapping,
projectivity and projectivisation by lifting."""
from __future__ import annotations

import random
from typing import List, Sequence, Tuple

import numpy as np

from .conllu import Sentence



def permutation(n: int, seed: int, index: int) -> List[int]:
    """The fixed-seed shuffle of sentence ``index``: perm[j] = original index of new token j.

    Drawn from ``random.Random(seed * 1_000_003 + index)``, so it depends on no other sentence.
    """
    perm = list(range(n))
    random.Random(seed * 1_000_003 + index).shuffle(perm)
    return perm


def remap_heads(heads: Sequence[int], perm: Sequence[int]) -> List[int]:
    """1-based heads (0 root, -1 unknown) rewritten for tokens permuted by ``perm``."""
    inv = {old: new for new, old in enumerate(perm)}
    return [h if h <= 0 else inv[h - 1] + 1 for h in (heads[p] for p in perm)]


def scramble(sent: Sentence, seed: int, index: int) -> Tuple[Sentence, np.ndarray]:
    """Shuffle a sentence's tokens with a fixed seed; remap heads; drop ``# text`` and ``SpaceAfter``.

    The permutation is :func:`permutation` (it depends on no other sentence).  Returns (scrambled sentence, perm) where ``perm[j]`` is the
    original 0-based index of scrambled token j.
    """
    n = len(sent)
    perm = permutation(n, seed, index)
    heads = remap_heads(sent.heads, perm)
    misc = []
    for j in range(n):
        m = sent.misc[perm[j]]
        keep = [kv for kv in m.split("|") if kv and kv != "_" and not kv.startswith("SpaceAfter")]
        misc.append("|".join(keep) if keep else "_")
    meta = {k: v for k, v in sent.meta.items() if k not in ("text",) and not k.startswith("text_")}
    pick = lambda xs: [xs[perm[j]] for j in range(n)]  # noqa: E731
    return Sentence(pick(sent.forms), pick(sent.lemmas), pick(sent.upos), pick(sent.xpos),
                    pick(sent.feats), heads, pick(sent.deprels), misc, sent.sent_id, sent.line,
                    meta), np.asarray(perm, dtype=np.int64)


def is_projective(heads: Sequence[int]) -> bool:
    """True if the tree (1-based heads, 0 = root) has no crossing arcs (and is a tree)."""
    n = len(heads)
    # the root hangs from an artificial word 0, so no arc may cover the root either
    arcs = [(min(i + 1, h), max(i + 1, h)) for i, h in enumerate(heads) if h >= 0]
    for a, b in arcs:
        for c, d in arcs:
            if a < c < b < d:
                return False
    return sum(1 for h in heads if h == 0) == 1 and all(0 <= h <= n for h in heads)


def projectivize(heads: Sequence[int]) -> List[int]:
    """Pseudo-projective lifting (Nivre & Nilsson 2005, without label encoding).

    heads: 1-based heads, 0 = root, one per token in surface order.  Repeatedly lifts the
    shortest non-projective arc (h, d) to h's head until no arc crosses another; the word order
    is untouched, so the lifted tree still yields the gold sentence.  Returns a new list;
    raises ValueError if ``heads`` is not a tree with a single root.
    """
    h = [int(x) for x in heads]
    n = len(h)
    if sum(1 for x in h if x == 0) != 1 or any(not 0 <= x <= n for x in h):
        raise ValueError("not a single-rooted tree")

    def dominated(anc: int, node: int) -> bool:
        steps = 0
        while node != 0 and steps <= n:
            if node == anc:
                return True
            node = h[node - 1]
            steps += 1
        if steps > n:
            raise ValueError("cycle in heads")
        return anc == 0

    while True:
        worst = None
        for d in range(1, n + 1):
            hd = h[d - 1]
            if hd == 0:
                continue
            a, b = min(hd, d), max(hd, d)
            if any(not dominated(hd, k) for k in range(a + 1, b)):
                if worst is None or b - a < worst[0]:
                    worst = (b - a, d)
        if worst is None:
            return h
        d = worst[1]
        h[d - 1] = h[h[d - 1] - 1]
