"""Consistent and cohesive phrase pairs, the phrase table, and translation options.

Zhang et al. (2014, section 2.1): phrase pairs are extracted from the word alignment and the
target (English) dependency tree; they must be *consistent* (Och et al. 1999) and *cohesive*
(Fox 2002) — "the target side must form a projective span, with a single root, and the source
side must be contiguous" — and neither side may have more than ``s`` (``max_len``) words. Each
pair keeps its target words, their POS tags and the dependency tree inside the phrase.

Decisions (see :func:`target_span_ok` and :func:`extract`):

* Consistency is the standard one: at least one link inside the box and no link from a word
  inside the box to a word outside it, on either side. Target spans are enumerated, so target
  phrases may have unaligned words at their edges (``a headache``) when cohesion allows; the
  source span is the minimal span of the target words' links, extended over unaligned source
  words at either edge (``头痛 的``) as in Moses' ``extract`` (all extensions up to ``max_len``).
* Cohesion: the target span ``[lo, hi)`` must (1) contain exactly one word whose head lies
  outside the span (or is the sentence root) — the phrase root ``r``; every other word's head
  chain therefore stays in the span and ends at ``r``; (2) have projective arcs inside the span
  (every word between a head and its dependent is dominated by that head); and, by default
  (``strict=True``), (3) no word other than ``r`` may have a dependent outside the span. So a
  phrase is ``r`` with the complete subtrees of some of its children (a contiguous run of
  them), but not necessarily ``r``'s complete subtree: exactly the units the synthesis decoder
  can combine, since it only adds arcs between the head words of hypotheses. ``strict=False``
  drops (3) (any connected, projective, single-rooted span, e.g. ``dog in`` out of ``dog in
  the house``).
"""
from __future__ import annotations

import gzip
import operator
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .options import Option

__all__ = ["PhrasePair", "target_span_ok", "extract", "PhraseTable"]


@dataclass(frozen=True)
class PhrasePair:
    """One extracted phrase pair of a sentence pair.

    Attributes:
        src_lo, src_hi: source span ``[src_lo, src_hi)`` (indices into the source sentence).
        tgt_lo, tgt_hi: target span ``[tgt_lo, tgt_hi)``.
        words, pos: the target words and their POS tags.
        heads: head of each target word as an index into ``words``; -1 for the root.
        root: index of the root word in ``words``.
    """

    src_lo: int
    src_hi: int
    tgt_lo: int
    tgt_hi: int
    words: Tuple[str, ...]
    pos: Tuple[str, ...]
    heads: Tuple[int, ...]
    root: int


def _children(heads: Sequence[int]) -> List[List[int]]:
    ch: List[List[int]] = [[] for _ in heads]
    for d, h in enumerate(heads):
        if 0 <= h < len(heads):
            ch[h].append(d)
    return ch


def target_span_ok(heads: Sequence[int], lo: int, hi: int, strict: bool = True,
                   children: Optional[List[List[int]]] = None) -> Optional[int]:
    """Cohesion test of the target span ``[lo, hi)`` of a dependency tree (``heads`` 0-based, -1 root).

    Returns the root's sentence index if the span has a single root, projective internal arcs and
    (``strict``) no dependent outside the span except the root's; else None. See the module
    docstring.
    """
    if children is None:
        children = _children(heads)
    root = -1
    for k in range(lo, hi):
        h = heads[k]
        if h < lo or h >= hi:
            if root >= 0:
                return None  # two roots
            root = k
    if root < 0:
        return None  # a cycle: no word leaves the span
    if strict:
        for k in range(lo, hi):
            if k != root:
                for c in children[k]:
                    if c < lo or c >= hi:
                        return None
    # projectivity of the arcs inside the span: every word between head and dependent is
    # dominated by the head (all words of the span are dominated by the root: single root)
    for k in range(lo, hi):
        h = heads[k]
        if k == root or h == root:
            continue
        a, b = (h, k) if h < k else (k, h)
        for m in range(a + 1, b):
            x = m
            steps = 0
            while x != h and x != root:
                x = heads[x]
                steps += 1
                if x < lo or x >= hi or steps > hi - lo:
                    return None  # malformed tree
            if x != h:
                return None
    return root


def extract(src_len: int, tgt_words: Sequence[str], tgt_pos: Sequence[str], tgt_heads: Sequence[int],
            links: Iterable[Tuple[int, int]], max_len: int = 5, strict: bool = True) -> List[PhrasePair]:
    """All consistent, cohesive phrase pairs of one sentence pair with both sides <= ``max_len`` words.

    ``links`` are ``(i, j)``: source word i, target word j. The target tree is ``tgt_heads``
    (0-based, -1 for the sentence root). For every cohesive target span (:func:`target_span_ok`)
    with at least one link, the minimal source span of its links must be consistent (no source
    word in it linked outside the target span); it is then output with every extension over
    unaligned source words at its edges that keeps it within ``max_len``. Order: by target span,
    then source span.
    """
    n = len(tgt_words)
    if len(tgt_pos) != n or len(tgt_heads) != n:
        raise ValueError("extract: tgt_words, tgt_pos and tgt_heads differ in length")
    tgt_of_src: List[List[int]] = [[] for _ in range(src_len)]
    src_of_tgt: List[List[int]] = [[] for _ in range(n)]
    for i, j in links:
        if not (0 <= i < src_len and 0 <= j < n):
            raise ValueError(f"extract: link ({i}, {j}) out of range ({src_len} x {n})")
        tgt_of_src[i].append(j)
        src_of_tgt[j].append(i)
    children = _children(tgt_heads)
    out: List[PhrasePair] = []
    for lo in range(n):
        for hi in range(lo + 1, min(n, lo + max_len) + 1):
            srcs = [i for j in range(lo, hi) for i in src_of_tgt[j]]
            if not srcs:
                continue
            f1, f2 = min(srcs), max(srcs)
            if f2 - f1 + 1 > max_len:
                continue
            if any(j < lo or j >= hi for i in range(f1, f2 + 1) for j in tgt_of_src[i]):
                continue  # inconsistent
            root = target_span_ok(tgt_heads, lo, hi, strict, children)
            if root is None:
                continue
            words = tuple(tgt_words[lo:hi])
            pos = tuple(tgt_pos[lo:hi])
            heads = tuple(-1 if k == root else tgt_heads[k] - lo for k in range(lo, hi))
            fs = f1
            while fs >= 0 and (fs == f1 or not tgt_of_src[fs]) and f2 - fs + 1 <= max_len:
                fe = f2
                while fe < src_len and (fe == f2 or not tgt_of_src[fe]) and fe - fs + 1 <= max_len:
                    out.append(PhrasePair(fs, fe + 1, lo, hi, words, pos, heads, root - lo))
                    fe += 1
                fs -= 1
    out.sort(key=lambda p: (p.tgt_lo, p.tgt_hi, p.src_lo, p.src_hi))
    return out


_MAGIC = "#wo-phrase-table\t1"


class PhraseTable:
    """Counts of (source phrase, target phrase) pairs and the translation options they give.

    Keys: a source phrase (tuple of source tokens) and a target phrase's words. Each target
    string keeps its most frequent analysis (POS tags and internal heads; ties go to the
    smallest (pos, heads)), so one target string is one option. ``P(trans) = count(pair) /
    count(source phrase)``, the count of the source phrase being the sum of its pairs' counts.
    """

    def __init__(self) -> None:
        """An empty table; fill it with :meth:`add` or :meth:`build`, or use :meth:`load`."""
        # src phrase -> target words -> [count, {(pos, heads): count}]
        self._table: Dict[Tuple[str, ...], Dict[Tuple[str, ...], list]] = {}
        self._final: Optional[Dict[Tuple[str, ...], List[tuple]]] = None
        self.max_src_len = 0
        # a loaded table, parsed lazily: its lines, and where each source phrase (text) is: in
        # _runs (first line, end) dicts when each phrase's lines are contiguous, else _index
        self._lines: Optional[List[str]] = None
        self._runs: Optional[Tuple[Dict[str, int], Dict[str, int]]] = None
        self._index: Dict[str, List[Tuple[int, int]]] = {}
        self._rows_cache: Dict[Tuple[str, ...], List[tuple]] = {}

    # ----------------------------------------------------------------- building
    def add(self, src_tokens: Sequence[str], pairs: Iterable[PhrasePair]) -> None:
        """Count the phrase pairs extracted from one sentence pair whose source side is ``src_tokens``."""
        self._parse_all()
        self._final = None
        self._rows_cache = {}
        for p in pairs:
            src = tuple(src_tokens[p.src_lo:p.src_hi])
            entry = self._table.setdefault(src, {}).get(p.words)
            if entry is None:
                entry = self._table[src][p.words] = [0, {}]
            entry[0] += 1
            ana = (p.pos, p.heads)
            entry[1][ana] = entry[1].get(ana, 0) + 1
            if len(src) > self.max_src_len:
                self.max_src_len = len(src)

    @classmethod
    def build(cls, corpus: Iterable[Tuple[Sequence[str], Iterable[PhrasePair]]]) -> "PhraseTable":
        """Build a table from ``(src_tokens, phrase pairs)`` for every training sentence pair."""
        t = cls()
        for src, pairs in corpus:
            t.add(src, pairs)
        return t

    @staticmethod
    def _final_rows(tgts: Dict[Tuple[str, ...], list]) -> List[tuple]:
        """The rows of one source phrase: [(words, pos, heads, root, count, prob)] sorted by
        (-prob, words)."""
        total = sum(e[0] for e in tgts.values())
        rows = []
        for words, (count, anas) in tgts.items():
            pos, heads = min(anas.items(), key=lambda a: (-a[1], a[0]))[0]
            rows.append((words, pos, heads, heads.index(-1), count, count / total))
        rows.sort(key=lambda r: (-r[5], r[0]))
        return rows

    def _finalize(self) -> Dict[Tuple[str, ...], List[tuple]]:
        """Per source phrase: [(words, pos, heads, root, count, prob)] sorted by (-prob, words)."""
        self._parse_all()
        if self._final is None:
            self._final = {src: self._final_rows(tgts) for src, tgts in self._table.items()}
        return self._final

    def _rows(self, src: Tuple[str, ...]) -> List[tuple]:
        """The final rows of one source phrase (empty when unknown); a loaded table parses only
        the lines of the phrases asked for (start-up of ``wo smt translate``)."""
        if self._lines is None:
            return self._finalize().get(src, [])
        rows = self._rows_cache.get(src)
        if rows is None:
            tgts = {} if any(" " in w for w in src) else self._parse_block(" ".join(src))
            rows = self._rows_cache[src] = self._final_rows(tgts) if tgts else []
        return rows

    def _parse_block(self, key: str) -> Dict[Tuple[str, ...], list]:
        """Parse the lines of source phrase ``key`` (text) of a loaded table into
        ``{words: [count, {(pos, heads): count}]}`` (a later duplicate line wins, as when the
        whole file is read)."""
        tgts: Dict[Tuple[str, ...], list] = {}
        if self._runs is not None:
            ranges = [(self._runs[0][key], self._runs[1][key])] if key in self._runs[0] else []
        else:
            ranges = self._index.get(key, ())
        for first, end in ranges:
            for i in range(first, end):
                cols = self._lines[i].split("\t")
                pos, heads = tuple(cols[2].split(" ")), tuple(int(h) for h in cols[3].split(" "))
                count = int(cols[4])
                tgts[tuple(cols[1].split(" "))] = [count, {(pos, heads): count}]
        return tgts

    def _parse_all(self) -> None:
        """Turn a lazily loaded table into the full dictionary (for building, saving, counting)."""
        if self._lines is None:
            return
        table = {}
        for key in (self._runs[1] if self._runs is not None else self._index):   # file order
            table[tuple(key.split(" "))] = self._parse_block(key)
        self._table = table
        self._lines, self._runs, self._index, self._rows_cache = None, None, {}, {}

    # ----------------------------------------------------------------- queries
    def __len__(self) -> int:
        """Number of distinct (source phrase, target words) pairs."""
        self._parse_all()
        return sum(len(t) for t in self._table.values())

    @property
    def n_sources(self) -> int:
        """Number of distinct source phrases."""
        self._parse_all()
        return len(self._table)

    def total_count(self) -> int:
        """Number of extracted phrase pairs counted (with repetitions)."""
        self._parse_all()
        return sum(e[0] for t in self._table.values() for e in t.values())

    def translations(self, src_phrase: Sequence[str]) -> List[tuple]:
        """Target entries of one source phrase: ``(words, pos, heads, root, count, prob)``, best first."""
        return list(self._rows(tuple(src_phrase)))

    def options(self, src_tokens: Sequence[str], max_len: int = 5, lam: float = 0.1,
                max_per_span: Optional[int] = None) -> List[Option]:
        """Translation options of a source sentence (Zhang et al. 2014, section 2.1).

        Every span ``[lo, hi)`` of at most ``max_len`` tokens whose phrase is in the table gives
        its translations with ``prob >= lam * P_max`` (``P_max``: the best translation of that
        source phrase), at most ``max_per_span`` of them (the most probable) if given. Order:
        by (src_lo, src_hi, -prob, words).
        """
        out: List[Option] = []
        n = len(src_tokens)
        for lo in range(n):
            for hi in range(lo + 1, min(n, lo + max_len) + 1):
                rows = self._rows(tuple(src_tokens[lo:hi]))
                if not rows:
                    continue
                cut = lam * rows[0][5]
                k = 0
                for words, pos, heads, root, count, prob in rows:
                    if prob < cut or (max_per_span is not None and k >= max_per_span):
                        break
                    out.append(Option(lo, hi, words, pos, heads, root, prob, count))
                    k += 1
        return out

    # ----------------------------------------------------------------- storage
    def save(self, path: str, min_count_long: int = 1, long_len: int = 3) -> None:
        """Write the table as gzip TSV (sorted, no timestamp: byte-reproducible).

        Lines: ``src<TAB>words<TAB>pos<TAB>heads<TAB>count`` (space-separated fields; heads
        -1 for the root). Pairs whose source or target has at least ``long_len`` words and a
        count below ``min_count_long`` are left out (default: none).
        """
        self._parse_all()
        lines = [_MAGIC]
        for src in sorted(self._table):
            for words, pos, heads, root, count, prob in sorted(self._finalize()[src], key=lambda r: r[0]):
                if count < min_count_long and max(len(src), len(words)) >= long_len:
                    continue
                for tok in src + words + pos:
                    if not tok or any(c.isspace() for c in tok):
                        raise ValueError(f"PhraseTable.save: token {tok!r} is empty or has whitespace")
                lines.append("\t".join((" ".join(src), " ".join(words), " ".join(pos),
                                        " ".join(map(str, heads)), str(count))))
        blob = ("\n".join(lines) + "\n").encode("utf-8")
        with open(path, "wb") as f:
            f.write(gzip.compress(blob, compresslevel=9, mtime=0))

    @classmethod
    def load(cls, path: str) -> "PhraseTable":
        """Read a table written by :meth:`save`.  Only the source phrases are indexed here; the
        lines of a phrase are parsed when it is first asked for (a translation needs a few
        hundred of the table's phrases, so start-up does not parse the whole table).  Raises
        ValueError naming the file (and line) for a file that is not a wo phrase table (not
        gzip, a cut or corrupt gzip stream, not UTF-8, no ``#wo-phrase-table`` first line) or a
        line without 5 columns; OSError when it cannot be read.  A malformed number in a line
        is found when its phrase is used (or by any method that reads the whole table: ``len``,
        :meth:`save`)."""
        import zlib

        t = cls()
        with open(path, "rb") as f:
            data = f.read()
        try:
            text = gzip.decompress(data).decode("utf-8")
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise ValueError(f"{path}: truncated or corrupt phrase table ({exc})") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: corrupt phrase table (not UTF-8: {exc.reason} at byte {exc.start} "
                             "of the decompressed table)") from None
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if not lines or lines[0] != _MAGIC:
            raise ValueError(f"{path}: not a wo phrase table")
        if text.count("\t") != _MAGIC.count("\t") + 4 * (len(lines) - 1):   # a line without 5 columns: name it
            for lineno, line in enumerate(lines[1:], 2):
                if line.count("\t") != 4:
                    raise ValueError(f"{path}:{lineno}: expected 5 columns, found {line.count(chr(9)) + 1}")
        keys = [line[:line.index("\t")] for line in lines[1:]]
        n = len(keys)
        first = dict(zip(reversed(keys), range(n, 0, -1)))     # key -> its first line (index into lines)
        last = dict(zip(keys, range(2, n + 2)))                 # key -> one past its last line
        runs = 1 + sum(map(operator.ne, keys, keys[1:])) if n else 0
        if runs == len(first):                                  # each phrase's lines are contiguous (save())
            t._runs = (first, last)
        else:
            index: Dict[str, List[Tuple[int, int]]] = {}
            start = 1
            for i in range(2, n + 2):
                if i == n + 1 or keys[i - 1] != keys[start - 1]:
                    index.setdefault(keys[start - 1], []).append((start, i))
                    start = i
            t._index = index
        t._lines = lines
        t.max_src_len = max((k.count(" ") + 1 for k in first), default=0)
        return t
