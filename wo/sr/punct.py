"""Punctuation inserted into an ordered sentence: for the deep track, where the input has no
punctuation and whether a comma separates two words depends on what the order puts side by
side (an introductory adverbial clause, an apposition, the third conjunct).

At each gap between two output positions a binary averaged perceptron
(:class:`wo.sr.complete.Perceptron`) decides whether the mark (the treebank's most frequent
punctuation lemma that does not end sentences: the comma in the languages of UD) goes there.
The features describe the gap in the ordered tree: the words on either side, the largest
subtree that ends just before it and the largest that starts just after it (their relations,
UPOS, whether one heads the other or they share a head), the number of conjuncts of the right
one's head, the side of the root.  IMSurReal (Yu et al. 2019) generates punctuation the same
way, after linearisation, with its completion model over the ordered sequence.

Training: the reference sentences with the mark taken out (it is a leaf in UD), each gap
labelled with whether the mark stood there.  An inserted mark is attached to the subtree that
starts after it (relation ``punct``).
"""
from __future__ import annotations

import random
import unicodedata
from collections import Counter
from typing import Callable, List, Optional, Sequence, Tuple

from .complete import SEP, Perceptron

FINAL = frozenset(".!?。！？؟।")


def choose_mark(sents: Sequence) -> Optional[str]:
    """The mark to insert: the most frequent PUNCT lemma of the UD sentences ``sents`` that is
    not a sentence-final mark, seen at least 20 times; None if there is none."""
    c = Counter(s.lemmas[i] for s in sents for i in range(len(s)) if s.upos[i] == "PUNCT" and s.lemmas[i] not in FINAL)
    if not c:
        return None
    mark, n = c.most_common(1)[0]
    return mark if n >= 20 else None


def is_dash(mark: str) -> bool:
    """Whether ``mark`` is a hyphen or a dash (Unicode category Pd: ``-``, ``–``, ``—``, ``‐``)."""
    return len(mark) == 1 and unicodedata.category(mark) == "Pd"


def choose_marks(sents: Sequence, min_count: int = 20) -> List[str]:
    """The marks inserted between ordered words: :func:`choose_mark` (the comma), then the
    hyphens and dashes (:func:`is_dash`) seen as PUNCT at least ``min_count`` times in the UD
    sentences ``sents``, most frequent first.  A hyphen joins the parts of a compound the
    tokenization split (*part - session*, *old - growth*): it goes between two words the order
    put side by side, as the comma does; the completion's slots place few of them (3 of the 21
    of the official en_partut T2 dev).  Other marks (quotes, brackets: paired; colons,
    semicolons) are the completion's alone."""
    first = choose_mark(sents)
    if first is None:
        return []
    c = Counter(s.lemmas[i] for s in sents for i in range(len(s)) if s.upos[i] == "PUNCT" and is_dash(s.lemmas[i]))
    return [first] + [m for m, n in c.most_common() if n >= min_count and m != first]


def spans(heads: Sequence[int]) -> Tuple[List[int], List[int]]:
    """Per output position, the first and last position of its subtree (heads: 1-based output
    positions, 0 root; a non-projective subtree spans from its leftmost to its rightmost word)."""
    n = len(heads)
    lo, hi = list(range(n)), list(range(n))
    for i in range(n):
        h, seen = heads[i], 0
        while h > 0 and seen <= n:
            lo[h - 1] = min(lo[h - 1], i)
            hi[h - 1] = max(hi[h - 1], i)
            h, seen = heads[h - 1], seen + 1
    return lo, hi


def left_subtree(a: int, heads: Sequence[int], hi: Sequence[int]) -> int:
    """The head (output position) of the largest subtree that ends at position ``a``."""
    x = a
    while heads[x] > 0 and hi[heads[x] - 1] == a:
        x = heads[x] - 1
    return x


def right_subtree(b: int, heads: Sequence[int], lo: Sequence[int]) -> int:
    """The head (output position) of the largest subtree that starts at position ``b``."""
    y = b
    while heads[y] > 0 and lo[heads[y] - 1] == b:
        y = heads[y] - 1
    return y


def gap_features(p: int, lemmas: Sequence[str], upos: Sequence[str], deprels: Sequence[str],
                 heads: Sequence[int], lo: Sequence[int], hi: Sequence[int], root_pos: int) -> List[str]:
    """The feature strings of the gap before output position ``p`` (1 <= p < n; the lists in
    output order, heads 1-based output positions)."""
    a, b = p - 1, p
    x, y = left_subtree(a, heads, hi), right_subtree(b, heads, lo)
    rx, ry = deprels[x], deprels[y]
    hx, hy = heads[x] - 1, heads[y] - 1
    link = ("sib" if hx == hy else "y>x" if hx == y else "x>y" if hy == x else "other")
    nconj = sum(1 for i in range(len(heads)) if heads[i] - 1 == hy and deprels[i] == ry) if hy >= 0 else 0
    side = "L" if b <= root_pos else "R"
    la, lb = lemmas[a].lower(), lemmas[b].lower()
    size_x, size_y = min(hi[x] - lo[x] + 1, 6), min(hi[y] - lo[y] + 1, 6)
    hu = upos[hy] if hy >= 0 else "<root>"
    feats = ["b", "ua" + upos[a], "ub" + upos[b], "uab" + upos[a] + SEP + upos[b], "la" + la, "lb" + lb,
             "ra" + deprels[a], "rb" + deprels[b], "rx" + rx, "ry" + ry, "rxy" + rx + SEP + ry, "link" + link,
             "ryl" + ry + SEP + link, "rxyl" + rx + SEP + ry + SEP + link, "lbry" + lb + SEP + ry,
             "ryn" + ry + SEP + str(min(nconj, 4)), "side" + side + SEP + ry, "sx" + rx + SEP + str(size_x),
             "sy" + ry + SEP + str(size_y), "ryhu" + ry + SEP + hu + SEP + side, "ux" + upos[x] + SEP + rx,
             "uy" + upos[y] + SEP + ry, "start" + str(min(lo[x], 3)) + SEP + rx + SEP + side,
             "rblb" + deprels[b] + SEP + lb, "ralb" + deprels[a] + SEP + la, "lab" + la + SEP + lb]
    return feats


class PunctModel:
    """The insertion model (module docstring): per mark (``marks``: the comma first, then the
    hyphens and dashes, :func:`choose_marks`) a binary :class:`wo.sr.complete.Perceptron`
    (classes "1" and "0") and a bias added to its score of inserting (tuned on dev).  At a gap
    the mark with the largest positive margin goes in, if any.  ``mark``, ``perceptron`` and
    ``bias`` are the first mark's (models written before the other marks have only it).
    Raises nothing of its own."""

    EPOCHS = 6

    def __init__(self, mark: str, perceptron: Perceptron, bias: float = 0.0,
                 others: Sequence[Tuple[str, Perceptron, float]] = ()):
        self.mark, self.perceptron, self.bias = mark, perceptron, bias
        self.others = [list(o) for o in others]

    @property
    def marks(self) -> List[str]:
        """Every mark the model inserts, the first (``mark``) first."""
        return [self.mark] + [o[0] for o in self.others]

    def set_bias(self, mark: str, bias: float) -> None:
        """Set the bias of ``mark`` (one of :attr:`marks`).  Raises KeyError for another mark."""
        if mark == self.mark:
            self.bias = bias
            return
        for o in self.others:
            if o[0] == mark:
                o[2] = bias
                return
        raise KeyError(mark)

    def gaps(self, lemmas: Sequence[str], upos: Sequence[str], deprels: Sequence[str],
             heads: Sequence[int], bias: Optional[float] = None) -> List[Tuple[int, str]]:
        """The marks to insert: (output position p before which it goes, mark), p ascending
        (ordered sentence, lists in output order, heads 1-based output positions); bias: the
        first mark's instead of the model's."""
        bias = self.bias if bias is None else bias
        n = len(lemmas)
        if n < 3:
            return []
        lo, hi = spans(heads)
        root = next((i for i in range(n) if heads[i] == 0), 0)
        out = []
        models = [(self.mark, self.perceptron.weights, bias)] + [(m, W.weights, b) for m, W, b in self.others]
        for p in range(1, n):
            if upos[p - 1] == "PUNCT" or upos[p] == "PUNCT":
                continue
            feats = gap_features(p, lemmas, upos, deprels, heads, lo, hi, root)
            best, margin = None, 0.0
            for mark, W, b in models:
                v = b
                for f in feats:
                    w = W.get(f)
                    if w:
                        v += w.get("1", 0.0) - w.get("0", 0.0)
                if v > margin:
                    best, margin = mark, v
            if best is not None:
                out.append((p, best))
        return out

    @classmethod
    def fit(cls, sents: Sequence, marks, epochs: int = EPOCHS, seed: int = 1,
            log: Callable[[str], None] = lambda m: None) -> "PunctModel":
        """Train on UD sentences (reference order) whose ``marks`` tokens (a str: one mark, or
        a list, the first being the model's ``mark``) are leaves: each gap of the sentence
        without them is an instance of each mark's perceptron (1 when that mark stood there)."""
        marks = [marks] if isinstance(marks, str) else list(marks)
        mset = set(marks)
        insts = []
        for s in sents:
            n = len(s)
            if n < 3:
                continue
            is_mark = [s.lemmas[i] in mset and s.upos[i] == "PUNCT" for i in range(n)]
            if any(is_mark[h - 1] for h in s.heads if h > 0):
                continue   # a mark with dependents: not a leaf
            keep = [i for i in range(n) if not is_mark[i]]
            at = {old: new for new, old in enumerate(keep)}
            heads = []
            for i in keep:   # a word attached to a removed mark cannot be (checked above)
                heads.append(0 if s.heads[i] == 0 else at[s.heads[i] - 1] + 1)
            if sum(1 for h in heads if h == 0) != 1:
                continue
            before = {}
            for j, i in enumerate(keep):
                if i > 0 and is_mark[i - 1] and j > 0:
                    before[j] = s.lemmas[i - 1]
            lem, up, rel = [s.lemmas[i] for i in keep], [s.upos[i] for i in keep], [s.deprels[i] for i in keep]
            lo, hi = spans(heads)
            root = heads.index(0)
            for p in range(1, len(keep)):
                if up[p - 1] == "PUNCT" or up[p] == "PUNCT":
                    continue
                insts.append((gap_features(p, lem, up, rel, heads, lo, hi, root), before.get(p)))
        rng = random.Random(seed)
        trained = []
        for mark in marks:
            W = Perceptron()
            idx = list(range(len(insts)))
            for e in range(epochs):
                rng.shuffle(idx)
                ok = sum(W.step(insts[j][0], "1" if insts[j][1] == mark else "0", ("0", "1")) for j in idx)
                log(f"punctuation {mark!r} epoch {e + 1}: train accuracy {ok / max(1, len(idx)):.4f} ({len(idx)} gaps)")
            W.average()
            trained.append(W)
        return cls(marks[0], trained[0], 0.0, [(m, W, 0.0) for m, W in zip(marks[1:], trained[1:])])

    def to_json(self) -> dict:
        """JSON-serialisable form (the punctuation stage's entry in the model header)."""
        d = {"mark": self.mark, "weights": self.perceptron.weights, "bias": self.bias}
        if self.others:
            d["others"] = [{"mark": m, "weights": W.weights, "bias": b} for m, W, b in self.others]
        return d

    @classmethod
    def from_json(cls, d: dict) -> "PunctModel":
        """Inverse of :meth:`to_json`.  Raises KeyError for a malformed form."""
        return cls(d["mark"], Perceptron(d["weights"]), float(d.get("bias", 0.0)),
                   [(o["mark"], Perceptron(o["weights"]), float(o.get("bias", 0.0))) for o in d.get("others", ())])
