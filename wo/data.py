"""Corpus reading, evaluation hygiene and search instances.

A :class:`Sentence` is one CoNLL-U sentence restricted to syntactic words (multiword-token
ranges and empty nodes are skipped).  :func:`scramble` shuffles its tokens with a fixed seed,
remaps the heads and drops what gives the order away (``# text``, ``SpaceAfter``) so the
decoder never sees the reference order.  :func:`make_instance` turns a sentence plus the
trusted columns (``given``) into the numpy arrays the Cython search core reads
(Zhang & Clark 2015, section 4.1: any share of POS tags and heads may be given).
"""
from __future__ import annotations

import lzma
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import mmh3
import numpy as np

GIVEN_CHOICES = ("none", "pos", "heads", "full")
ROOT = -2  # given_head value meaning "this token is the root"
NONE = -1  # given_head value meaning "head unknown"


class InputError(ValueError):
    """A user-facing input problem; ``str()`` is ``file:line: message``."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = path, line, message


@dataclass
class Sentence:
    """One sentence of syntactic words.

    forms, lemmas, upos, xpos, feats, deprels, misc: lists of str (``"_"`` = unknown);
    heads: list of int, 1-based, 0 = root, -1 = unknown; sent_id: str; line: 1-based line of
    the sentence's first line in its file (for error messages).
    """

    forms: List[str]
    lemmas: List[str]
    upos: List[str]
    xpos: List[str]
    feats: List[str]
    heads: List[int]
    deprels: List[str]
    misc: List[str]
    sent_id: str = ""
    line: int = 0
    meta: Dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.forms)

    def text(self) -> str:
        """Space-joined forms (the tokenized reference)."""
        return " ".join(self.forms)


def open_text(path: str):
    """Open a UTF-8 text file, transparently decompressing ``.xz``."""
    if str(path).endswith(".xz"):
        return lzma.open(path, "rt", encoding="utf-8")
    return open(path, "rt", encoding="utf-8")


def _feats_str(v) -> str:
    if not v:
        return "_"
    if isinstance(v, str):
        return v
    return "|".join(f"{k}={val}" for k, val in v.items())


def sentence_from_tokenlist(tl, line: int, index: int) -> Sentence:
    """A :class:`Sentence` of syntactic words from a ``conllu.TokenList`` (ranges and empty nodes skipped)."""
    words = [t for t in tl if isinstance(t["id"], int)]
    return Sentence(
        forms=[t["form"] for t in words],
        lemmas=[t["lemma"] or "_" for t in words],
        upos=[t["upos"] or "_" for t in words],
        xpos=[t["xpos"] or "_" for t in words],
        feats=[_feats_str(t["feats"]) for t in words],
        heads=[(-1 if t["head"] is None else int(t["head"])) for t in words],
        deprels=[t["deprel"] or "_" for t in words],
        misc=[_feats_str(t["misc"]) for t in words],
        sent_id=str(tl.metadata.get("sent_id", index + 1)),
        line=line,
        meta=dict(tl.metadata),
    )


def read_conllu(path: str) -> List[Sentence]:
    """Read a CoNLL-U file (optionally ``.xz``) strictly: every sentence must be well formed.

    Uses the same reader as batch runs (:func:`wo.io.read_items`, which parses each sentence
    with the ``conllu`` library after checking its lines).  Returns a list of
    :class:`Sentence`.  Raises :class:`InputError` (``file:line: message``) at the first
    malformed line: wrong column count, non-integer id or head, head out of range.
    """
    from .io import read_items

    items, _ = read_items(path, "conllu")
    out = []
    for it in items:
        if it.error:
            raise InputError(path, it.line, it.error)
        for i, h in enumerate(it.heads):
            if h > len(it.forms):
                raise InputError(path, it.line, f"head {h} of word {i + 1} is out of range "
                                                f"(sentence has {len(it.forms)} words)")
        out.append(it.gold)
    return out


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


def atom(s: str) -> int:
    """32-bit MurmurHash3_x86_32 atom of a string (unsigned), as used for words and POS tags."""
    return mmh3.hash(s, 0, signed=False)


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


class TagDictionary:
    """Tag dictionary compiled from training data (Zhang & Clark 2015, section 4.3; Ratnaparkhi 1996).

    ``tags(form)`` gives the candidate POS tags of a word: those it was seen with whose share is
    at least ``min_share``; unseen words get the open-class tags of hapax words (share >=
    ``unk_share``).  Deterministic (sorted) output.
    """

    def __init__(self, table: Dict[str, List[str]], unknown: List[str]):
        self.table = table
        self.unknown = unknown

    @classmethod
    def build(cls, sents: Sequence[Sentence], min_share: float = 0.05, unk_share: float = 0.03):
        """Compile the dictionary from training sentences (XPOS column; ``_`` ignored)."""
        counts: Dict[str, Counter] = defaultdict(Counter)
        for s in sents:
            for f, t in zip(s.forms, s.xpos):
                if t != "_":
                    counts[f][t] += 1
        table = {}
        hapax = Counter()
        for f, c in counts.items():
            tot = sum(c.values())
            table[f] = sorted(t for t, k in c.items() if k >= min_share * tot) or [c.most_common(1)[0][0]]
            if tot == 1:
                hapax.update(c)
        htot = sum(hapax.values()) or 1
        unknown = sorted(t for t, k in hapax.items() if k >= unk_share * htot) or ["NN"]
        return cls(table, unknown)

    def tags(self, form: str) -> List[str]:
        """Candidate POS tags of a word form (sorted list of str; never empty)."""
        t = self.table.get(form)
        if t is None:
            t = self.table.get(form.lower())
        if t is None:
            if any(ch.isdigit() for ch in form) and "CD" in self.all_tags():
                return ["CD"] if not any(ch.isalpha() for ch in form) else sorted(set(self.unknown) | {"CD"})
            return self.unknown
        return t

    def all_tags(self) -> set:
        """Every tag the dictionary can propose (set of str)."""
        if not hasattr(self, "_all"):
            self._all = set(t for ts in self.table.values() for t in ts) | set(self.unknown)
        return self._all

    def to_json(self) -> dict:
        """JSON-serialisable form stored in the model header."""
        return {"table": self.table, "unknown": self.unknown}

    @classmethod
    def from_json(cls, d: dict) -> "TagDictionary":
        """Inverse of :meth:`to_json`; raises KeyError for a malformed entry."""
        return cls({k: list(v) for k, v in d["table"].items()}, list(d["unknown"]))


@dataclass
class Instance:
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

    @property
    def n(self) -> int:
        """Number of input tokens."""
        return int(self.tok_word.shape[0])

    def arrays(self):
        """(tok_word, given_head, given_ndeps, leaf_tok, leaf_pos): the SearchCore arguments."""
        return (self.tok_word, self.given_head, self.given_ndeps, self.leaf_tok, self.leaf_pos)

    def extra(self) -> dict:
        """Keyword SearchCore arguments (none for word ordering; see ``wo.sr.SRInstance``)."""
        return {}


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


def make_instance(forms: Sequence[str], pos: Sequence[Optional[str]], heads: Sequence[int],
                  tagdict: TagDictionary, gold: Optional[Sentence] = None) -> Instance:
    """Build the search arrays.  heads: -1 none, 0 root, else 1-based (in the caller's order).

    With ``gold`` (a sentence in the same token order, projective) the reference arrays for
    training and forced decoding are added; the gold POS is always among a token's leaves.
    Raises ValueError on an empty sentence.
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
                    np.array([atom(t) for t in leaf_tag], dtype=np.uint32), leaf_tag, canon)
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


def iter_batches(items: Sequence, size: int) -> Iterator[Sequence]:
    """Consecutive slices of ``items`` of at most ``size`` elements."""
    for i in range(0, len(items), size):
        yield items[i:i + size]
