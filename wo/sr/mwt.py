"""Multiword tokens: syntactic words written as one surface token (fr "du" = de + le, pt "do" =
de + o, de "zum" = zu + dem, es "del" = de + el), learned from a treebank's range lines.

UD writes such a token as a range line (``4-5  du``) before its syntactic words; the T1 input and
the search work on syntactic words, and :class:`Contractions` turns adjacent realised words back
into the surface token the treebank writes.  A word sequence is contracted when the treebank
writes it as one token in at least ``min_share`` of the places where it occurs as adjacent
words (so Spanish "de El Salvador" stays apart if the treebank keeps it so), to the surface
form it uses most often (lower-cased; a capital on the first word is kept).
"""
from __future__ import annotations

import lzma
from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Sequence, Tuple

MAX_WORDS = 3


def _open(path: str):
    if str(path).endswith(".xz"):
        return lzma.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_ranges(path: str) -> Iterable[Tuple[List[str], List[Tuple[int, int, str]]]]:
    """Per sentence of a CoNLL-U file: (syntactic word forms, [(first, last, surface)] with
    0-based inclusive word indices of each multiword token).  Empty nodes are skipped."""
    words: List[str] = []
    ranges: List[Tuple[int, int, str]] = []
    with _open(path) as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                if words:
                    yield words, ranges
                words, ranges = [], []
                continue
            if line.startswith("#"):
                continue
            c = line.split("\t")
            if len(c) < 2:
                continue
            tid = c[0]
            if "-" in tid:
                a, b = tid.split("-", 1)
                if a.isdigit() and b.isdigit():
                    ranges.append((int(a) - 1, int(b) - 1, c[1]))
            elif tid.isdigit():
                words.append(c[1])
    if words:
        yield words, ranges


def surface_tokens(words: Sequence[str], ranges: Sequence[Tuple[int, int, str]]) -> List[str]:
    """The surface tokens of a sentence: each multiword token's surface form in place of its words."""
    start = {a: (b, s) for a, b, s in ranges}
    out, i = [], 0
    while i < len(words):
        if i in start:
            b, s = start[i]
            out.append(s)
            i = b + 1
        else:
            out.append(words[i])
            i += 1
    return out


class Contractions:
    """Learned word sequence -> surface token table (see the module docstring).

    ``table``: dict "w1 w2 [w3]" (lower-cased syntactic words, space-joined) -> surface form
    (lower-cased).  Build with :meth:`build` from CoNLL-U files; JSON with :meth:`to_json`.
    """

    def __init__(self, table: Dict[str, str]):
        self.table = table

    @classmethod
    def build(cls, paths: Sequence[str], min_share: float = 0.5) -> "Contractions":
        """Learn from CoNLL-U files (plain or .xz) with range lines."""
        as_token: Dict[str, Counter] = defaultdict(Counter)
        for p in paths:
            for words, ranges in read_ranges(p):
                for a, b, s in ranges:
                    if 2 <= b - a + 1 <= MAX_WORDS:
                        as_token[" ".join(w.lower() for w in words[a:b + 1])][s.lower()] += 1
        if not as_token:
            return cls({})
        adjacent: Counter = Counter()
        for p in paths:
            for words, ranges in read_ranges(p):
                low = [w.lower() for w in words]
                for n in range(2, MAX_WORDS + 1):
                    for i in range(len(low) - n + 1):
                        k = " ".join(low[i:i + n])
                        if k in as_token:
                            adjacent[k] += 1
        table = {}
        for k, c in as_token.items():
            if sum(c.values()) >= min_share * max(1, adjacent[k]):
                table[k] = c.most_common(1)[0][0]
        return cls(table)

    def to_json(self) -> dict:
        """JSON-serialisable form."""
        return {"table": self.table}

    @classmethod
    def from_json(cls, d: dict) -> "Contractions":
        """Inverse of :meth:`to_json`."""
        return cls(d.get("table", {}))

    def __len__(self) -> int:
        return len(self.table)

    def ranges(self, tokens: Sequence[str]) -> List[Tuple[int, int, str]]:
        """The multiword tokens of realised syntactic words: (first, last word, 0-based and
        inclusive, surface form) for the longest known sequence at each position, left to right
        (a capital on the first word is kept); the ranges of :func:`read_ranges`."""
        out: List[Tuple[int, int, str]] = []
        if not self.table:
            return out
        i, n = 0, len(tokens)
        while i < n:
            for k in range(min(MAX_WORDS, n - i), 1, -1):
                s = self.table.get(" ".join(t.lower() for t in tokens[i:i + k]))
                if s is not None:
                    first = tokens[i]
                    out.append((i, i + k - 1, s[:1].upper() + s[1:] if first[:1].isupper()
                                and first[:1] != first[:1].lower() else s))
                    i += k
                    break
            else:
                i += 1
        return out

    def apply(self, tokens: Sequence[str]) -> List[str]:
        """Surface tokens of realised syntactic words: each of :meth:`ranges` replaced by its
        surface form."""
        return surface_tokens(tokens, self.ranges(tokens)) if self.table else list(tokens)
