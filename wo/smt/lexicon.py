"""Word translation tables from word alignments: the lexical weights of Koehn, Och & Marcu
(2003, section 3.3), w(e|f) and w(f|e) as relative frequencies of the symmetrised links, with
NULL for unaligned words.  The n-best reranker scores whole candidates with them as IBM
model 1 (Brown et al. 1993) in both directions.
"""
from __future__ import annotations

import gzip
import math
from collections import Counter
from typing import Dict, Iterable, Sequence, Tuple

NULL = "NULL"
FLOOR = 1e-6          # probability floor of an unseen word pair
_MAGIC = "#wo-lexicon\t1"


class Lexicon:
    """Word-pair link counts and the two conditional tables derived from them.

    counts: {(target word, source word): links}, NULL standing for "unaligned".  Build with
    :meth:`from_links`, store with :meth:`save` (gzipped TSV), read with :meth:`load`.
    """

    def __init__(self, counts: Dict[Tuple[str, str], int]) -> None:
        self.counts = dict(counts)
        cf, ce = Counter(), Counter()
        for (e, f), c in self.counts.items():
            cf[f] += c
            ce[e] += c
        self.e_given_f = {k: c / cf[k[1]] for k, c in self.counts.items()}
        self.f_given_e = {k: c / ce[k[0]] for k, c in self.counts.items()}

    def __len__(self) -> int:
        return len(self.counts)

    @classmethod
    def from_links(cls, pairs: Iterable[Tuple[Sequence[str], Sequence[str], Iterable[Tuple[int, int]]]]) -> "Lexicon":
        """Count the links of (source tokens, target tokens, links (i, j)) triples: source word
        i aligned to target word j; unaligned words count against NULL.  Raises IndexError for
        a link outside its sentence."""
        c: Counter = Counter()
        for src, tgt, links in pairs:
            a_f, a_e = set(), set()
            for i, j in links:
                c[(tgt[j], src[i])] += 1
                a_f.add(i)
                a_e.add(j)
            for i, w in enumerate(src):
                if i not in a_f:
                    c[(NULL, w)] += 1
            for j, w in enumerate(tgt):
                if j not in a_e:
                    c[(w, NULL)] += 1
        return cls(c)

    def ibm1(self, src: Sequence[str], tgt: Sequence[str]) -> Tuple[float, float]:
        """IBM model 1 log10 scores of a sentence pair with these tables, both directions:
        (sum_e log10 mean_{f in src+NULL} w(e|f), sum_f log10 mean_{e in tgt+NULL} w(f|e)).
        Pairs never linked get ``FLOOR``."""
        fs = list(src) + [NULL]
        es = list(tgt) + [NULL]
        ef, fe = self.e_given_f, self.f_given_e
        a = sum(math.log10(max(FLOOR, sum(ef.get((e, f), 0.0) for f in fs) / len(fs))) for e in tgt)
        b = sum(math.log10(max(FLOOR, sum(fe.get((e, f), 0.0) for e in es) / len(es))) for f in src)
        return a, b

    def save(self, path: str) -> None:
        """Write the link counts as gzipped TSV (target word, source word, count), sorted.
        Raises OSError if the file cannot be written."""
        lines = [_MAGIC] + [f"{e}\t{f}\t{c}" for (e, f), c in sorted(self.counts.items())]
        with open(path, "wb") as fh:
            fh.write(gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), compresslevel=9, mtime=0))

    @classmethod
    def load(cls, path: str) -> "Lexicon":
        """Read a file written by :meth:`save`.  Raises ValueError naming the file and line for
        a file that is not a lexicon or a malformed line; OSError if it cannot be read."""
        counts: Dict[Tuple[str, str], int] = {}
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            if fh.readline().rstrip("\n") != _MAGIC:
                raise ValueError(f"{path}: not a wo lexicon")
            for lineno, line in enumerate(fh, 2):
                cols = line.rstrip("\n").split("\t")
                if len(cols) != 3 or not cols[2].isdigit():
                    raise ValueError(f"{path}:{lineno}: expected target word, source word, count")
                counts[(cols[0], cols[1])] = int(cols[2])
        return cls(counts)
