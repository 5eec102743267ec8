"""Non-projective word orders by predicted lifting (Bohnet, Björkelund, Kuhn, Seeker & Zarrieß 2012,
"Generating non-projective word order in statistical linearization", EMNLP).

The search linearizes projectively: every output keeps each subtree contiguous.  A
non-projective reference order is a projective order of a *lifted* tree, in which some tokens
hang from an ancestor of their head (pseudo-projective lifting, Nivre & Nilsson 2005,
:func:`wo.io.trees.projectivize`).  Training records, for every token of the unordered input
tree, how many steps the lifting of its gold order moved it up; :class:`LiftModel` learns that
from the tree alone, and at decoding the tokens it predicts are re-attached to that ancestor
before the search, so the projective order of the lifted tree is a non-projective order of the
given one.  Tokens that carry ``lin`` are never lifted (``lin`` orders them around their head).

The classifier is a back-off relative-frequency estimate of P(lifted | context) over contexts
of the unordered tree, most specific first: (label, UPOS, head's label, head's UPOS,
grandparent's label), then (label, head's label, head's UPOS), then (label, head's label); a
token is lifted when the most specific context seen at least ``min_count`` times gives a
probability of at least ``threshold``, by the number of steps most often seen there.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Dict, List, Optional, Sequence

from ..io.trees import projectivize

MIN_COUNT = 5


def lift_steps(heads_surface: Sequence[int]) -> List[int]:
    """Per token (surface order), how many steps pseudo-projective lifting moves it up (0 for
    most).  heads_surface: 1-based heads in surface order (0 = root)."""
    lifted = projectivize(heads_surface)
    out = []
    for i, (h, g) in enumerate(zip(heads_surface, lifted)):
        k, x = 0, h
        while x != g and x != 0 and k <= len(heads_surface):
            x = heads_surface[x - 1]
            k += 1
        out.append(k if x == g else 0)
    return out


def contexts(i: int, heads: Sequence[int], deprels: Sequence[str], upos: Sequence[str]) -> List[str]:
    """The back-off contexts of token i (0-based) of an unordered tree (heads 1-based, 0 root)."""
    h = heads[i]
    if h == 0:
        return []
    hd, hu = deprels[h - 1], upos[h - 1]
    g = heads[h - 1]
    gd = deprels[g - 1] if g else "ROOT"
    d, u = deprels[i], upos[i]
    return [f"{d}|{u}|{hd}|{hu}|{gd}", f"{d}|{hd}|{hu}", f"{d}|{hd}"]


class LiftModel:
    """P(lifted | tree context) by back-off relative frequencies (see the module docstring).

    ``table``: dict context -> [tokens seen, tokens lifted, dict steps -> count];
    ``threshold``: probability at or above which a token is lifted (> 1 turns lifting off).
    """

    def __init__(self, table: Dict[str, list], threshold: float = 0.5, min_count: int = MIN_COUNT):
        self.table = table
        self.threshold = threshold
        self.min_count = min_count

    @classmethod
    def build(cls, trees: Sequence[tuple], threshold: float = 0.5) -> "LiftModel":
        """Learn from (heads, deprels, upos, lin, steps) per training sentence, token order
        arbitrary but the same in every list (heads 1-based in that order; steps from
        :func:`lift_steps` mapped to that order)."""
        seen: Counter = Counter()
        lifted: Counter = Counter()
        by_steps: Dict[str, Counter] = defaultdict(Counter)
        for heads, deprels, upos, lin, steps in trees:
            for i in range(len(heads)):
                if lin[i]:
                    continue
                for c in contexts(i, heads, deprels, upos):
                    seen[c] += 1
                    if steps[i]:
                        lifted[c] += 1
                        by_steps[c][steps[i]] += 1
        table = {c: [n, lifted[c], {str(k): v for k, v in by_steps[c].items()}]
                 for c, n in seen.items() if lifted[c]}
        # contexts never lifted are left out: absence means "not lifted" once seen enough
        table.update({c: [n, 0, {}] for c, n in seen.items() if not lifted[c] and n >= MIN_COUNT})
        return cls(table, threshold)

    def to_json(self) -> dict:
        """JSON-serialisable form (model header ``sr.lift``)."""
        return {"table": self.table, "threshold": self.threshold, "min_count": self.min_count}

    @classmethod
    def from_json(cls, d: dict) -> "LiftModel":
        """Inverse of :meth:`to_json`."""
        return cls(d["table"], d.get("threshold", 0.5), d.get("min_count", MIN_COUNT))

    def predict(self, heads: Sequence[int], deprels: Sequence[str], upos: Sequence[str],
                lin: Sequence[int], threshold: Optional[float] = None) -> List[int]:
        """Lifted heads (1-based, 0 root) for an unordered tree: each token the model lifts is
        re-attached ``steps`` ancestors up (never above the root word).  Returns ``heads``
        unchanged (as a new list) when nothing is lifted."""
        th = self.threshold if threshold is None else threshold
        out = list(heads)
        if th > 1.0:
            return out
        for i in range(len(heads)):
            if lin[i]:
                continue
            for c in contexts(i, heads, deprels, upos):
                e = self.table.get(c)
                if e is None or e[0] < self.min_count:
                    continue
                if e[1] > 0 and e[1] / e[0] >= th:   # never lifted in training: never lifted
                    steps = int(max(e[2].items(), key=lambda kv: (kv[1], -int(kv[0])))[0])
                    x = heads[i]
                    for _ in range(steps):
                        if heads[x - 1] == 0:
                            break
                        x = heads[x - 1]
                    out[i] = x
                break
        return out
