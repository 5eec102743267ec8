"""Search instances of CCG word ordering: the numpy arrays the Cython grammar
(:class:`wo._fast._ccg.CCGGrammar`) reads (Zhang & Clark 2015, §3).

:class:`CCGTables` turns a :class:`wo.ccg.grammar.Grammar` (rule instances and tag dictionary
read off training derivations) into flat integer tables once per model: category ids and
atoms, the binary rule instances keyed by ``left << 32 | right`` (sorted, searched by binary
search in C), the unary rules per child category, and the head child of every binary rule.
:func:`make_instance` builds the per-sentence arrays (tokens in canonical order, one leaf per
token x POS x lexical category, each also with every unary rule on that category), and, with a
gold derivation, the gold node arrays that mark gold edges (training, forced decoding).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..model import TagDictionary, atom
from .auto import Derivation, Leaf, Node, parse_category
from .grammar import DEFAULT_MIN_COUNT, DEFAULT_POS_CUTOFF, Grammar

DEFAULT_MAX_CATS = 8          # lexical categories per (word, POS), most frequent first
DEFAULT_CAT_RATIO = 0.01      # ... and at least this share of the most frequent one's count
DEFAULT_MIN_UNARY = 10        # unary rule instances seen fewer times are not applied
GLUE_CATEGORY = "X"           # category of the glue nodes joining the pieces of a fallback output


def head_table(derivations) -> Dict[Tuple[str, str, str], int]:
    """{(left, right, result): head child index (0 or 1)} over the binary nodes of
    ``derivations`` (the majority when a rule instance has both; ties: 0).  Error items are
    skipped."""
    counts: Dict[Tuple[str, str, str], Counter] = defaultdict(Counter)
    for d in derivations:
        if d.error is not None or d.root is None:
            continue
        for nd in d.nodes():
            if len(nd.children) == 2:
                counts[(str(nd.children[0].cat), str(nd.children[1].cat), str(nd.cat))][nd.head] += 1
    return {k: (1 if c[1] > c[0] else 0) for k, c in counts.items()}


class CCGTables:
    """The grammar as the flat arrays of ``CCGGrammar.set_tables`` plus the lexical look-up.

    grammar: :class:`wo.ccg.grammar.Grammar`; heads: {(left, right, result): 0/1} (rules
    missing from it take head 0); tagdict: a POS :class:`wo.model.TagDictionary` for words
    given without POS; max_cats, cat_ratio: lexical categories proposed per (word, POS): those
    of ``Grammar.categories`` (``min_count``, ``pos_cutoff``) whose count is at least
    ``cat_ratio`` x the first one's, at most ``max_cats``; min_unary: unary rule instances
    seen at least this often are applied.

    Attributes: ``cats`` list of C category strings (with :data:`GLUE_CATEGORY`), ``cat_id``
    {str: int}; arrays (numpy): bin_key int64[K], bin_start int32[K+1], bin_res int32[M+1],
    bin_head int32[M+1], bin_atom uint32[M+1] (row M: the glue pseudo rule, ``glue_rule``),
    un_start int32[C+1], un_res int32[U], un_atom uint32[U], cat_atom uint32[C].
    """

    def __init__(self, grammar: Grammar, heads: Dict[Tuple[str, str, str], int], tagdict: TagDictionary,
                 max_cats: int = DEFAULT_MAX_CATS, cat_ratio: float = DEFAULT_CAT_RATIO,
                 min_unary: int = DEFAULT_MIN_UNARY, min_count: int = DEFAULT_MIN_COUNT,
                 pos_cutoff: int = DEFAULT_POS_CUTOFF):
        self.grammar, self.heads, self.tagdict = grammar, heads, tagdict
        self.max_cats, self.cat_ratio, self.min_unary = max_cats, cat_ratio, min_unary
        self.min_count, self.pos_cutoff = min_count, pos_cutoff
        names = set(grammar.lexical) | set(grammar.roots)
        for (l, r), res in grammar.binary.items():
            names.update((l, r), res)
        for c, res in grammar.unary.items():
            names.add(c)
            names.update(res)
        names.add(GLUE_CATEGORY)
        self.cats: List[str] = sorted(names)
        self.cat_id: Dict[str, int] = {c: i for i, c in enumerate(self.cats)}
        C = len(self.cats)
        rows = []
        for (l, r, p), _ in sorted(grammar.binary_instances().items()):
            key = (self.cat_id[l] << 32) | self.cat_id[r]
            rows.append((key, self.cat_id[p], heads.get((l, r, p), 0), atom(f"{l} {r} -> {p}")))
        rows.sort()
        keys = sorted({k for k, *_ in rows})
        self.bin_key = np.asarray(keys, dtype=np.int64)
        where = {k: i for i, k in enumerate(keys)}
        start = np.zeros(len(keys) + 1, dtype=np.int32)
        for k, *_ in rows:
            start[where[k] + 1] += 1
        self.bin_start = np.cumsum(start).astype(np.int32)
        # the glue pseudo rule (last row, not keyed): X Y -> GLUE, head left (completion only)
        self.glue_rule = len(rows)
        rows.append((-1, self.cat_id[GLUE_CATEGORY], 0, atom("<glue>")))
        self.bin_res = np.asarray([x[1] for x in rows], dtype=np.int32)
        self.bin_head = np.asarray([x[2] for x in rows], dtype=np.int32)
        self.bin_atom = np.asarray([x[3] for x in rows], dtype=np.uint32)
        urows = sorted((self.cat_id[c], self.cat_id[p], atom(f"{c} => {p}"))
                       for (c, p), n in grammar.unary_instances().items() if n >= min_unary)
        ustart = np.zeros(C + 1, dtype=np.int32)
        for c, *_ in urows:
            ustart[c + 1] += 1
        self.un_start = np.cumsum(ustart).astype(np.int32)
        self.un_res = np.asarray([x[1] for x in urows], dtype=np.int32)
        self.un_atom = np.asarray([x[2] for x in urows], dtype=np.uint32)
        self.cat_atom = np.asarray([atom(c) for c in self.cats], dtype=np.uint32)
        self._lex: Dict[Tuple[str, Optional[str]], List[int]] = {}

    def arrays(self) -> tuple:
        """The positional arguments of ``CCGGrammar.set_tables``."""
        return (self.bin_key, self.bin_start, self.bin_res, self.bin_head, self.bin_atom,
                self.un_start, self.un_res, self.un_atom, self.cat_atom, self.glue_rule)

    def unary_rules(self, cat: int) -> range:
        """Indices of the unary rules applied on category id ``cat``."""
        return range(int(self.un_start[cat]), int(self.un_start[cat + 1]))

    def unary_rule(self, child: int, parent: int) -> int:
        """Index of the unary rule child => parent (category ids), or -1 if it is not applied."""
        for u in self.unary_rules(child):
            if self.un_res[u] == parent:
                return u
        return -1

    def lexical(self, word: str, pos: Optional[str]) -> List[int]:
        """Lexical category ids proposed for ``word`` with POS ``pos`` (see the class docstring;
        most frequent first; may be empty)."""
        key = (word, pos)
        got = self._lex.get(key)
        if got is None:
            g = self.grammar
            cands = g.categories(word, pos, self.min_count, self.pos_cutoff)
            if g.word_count(word) >= self.min_count:
                counts = g.words[word]
            else:
                counts = g.pos.get(pos) if pos is not None else None
                counts = g.lexical if counts is None else counts
            if cands:
                top = counts[cands[0]]
                cands = [c for c in cands if counts[c] >= self.cat_ratio * top][: self.max_cats]
            got = [self.cat_id[c] for c in cands if c in self.cat_id]
            if len(self._lex) < 200_000:
                self._lex[key] = got
        return got

    def pos_tags(self, word: str, pos: Optional[str]) -> List[str]:
        """The POS tags a token is tried with: the given one, else the tag dictionary's."""
        return [pos] if pos else list(self.tagdict.tags(word))


@dataclass
class Instance:
    """Arrays of one sentence for ``CCGGrammar.set_instance``, tokens in canonical order.

    tok_word uint32[n] word atoms; leaf_tok int32[L]; leaf_pos uint32[L] POS atoms; leaf_lex
    int32[L] lexical category ids; leaf_urule int32[L] unary rule on top (-1 none); leaf_tag
    list of L POS strings; tok_form list of n str; canon int64[n]: canon[c] = caller's index of
    canonical token c; gold: None or the five gold arrays (see :func:`gold_arrays`).
    """

    tok_word: np.ndarray
    leaf_tok: np.ndarray
    leaf_pos: np.ndarray
    leaf_lex: np.ndarray
    leaf_urule: np.ndarray
    leaf_tag: List[str]
    tok_form: List[str]
    canon: np.ndarray
    gold: Optional[tuple] = None

    @property
    def n(self) -> int:
        """Number of input tokens."""
        return int(self.tok_word.shape[0])

    def arrays(self) -> tuple:
        """(tok_word, leaf_tok, leaf_pos, leaf_lex, leaf_urule)."""
        return (self.tok_word, self.leaf_tok, self.leaf_pos, self.leaf_lex, self.leaf_urule)


def make_instance(forms: Sequence[str], pos: Sequence[Optional[str]], tables: CCGTables,
                  gold: Optional[Derivation] = None, gold_pos: Optional[Sequence[int]] = None) -> Instance:
    """Build the search arrays of a bag of words (Zhang & Clark 2015, §3.2 leaf edges).

    forms: n str; pos: n str-or-None (None: the tag dictionary's tags).  Every token gets one
    leaf per (POS, lexical category) and one more per unary rule on that category; a token
    for which the grammar proposes nothing gets the most frequent lexical category of the
    grammar, so every token has a leaf.  With ``gold`` (the reference derivation) and
    ``gold_pos`` (gold_pos[i] = reference position of the caller's token i; default: the
    caller's order is the reference order) the gold arrays are added and every token's gold
    (POS, lexical category) is among its leaves.  Raises ValueError on an empty sentence or a
    gold derivation of another length.
    """
    n = len(forms)
    if n == 0:
        raise ValueError("empty sentence")
    order = sorted(range(n), key=lambda i: (forms[i], pos[i] or "", i))
    canon = np.asarray(order, dtype=np.int64)
    gleaves = None
    if gold is not None:
        gleaves = gold.leaves()
        if len(gleaves) != n:
            raise ValueError(f"gold derivation has {len(gleaves)} leaves for {n} words")
        gold_pos = list(gold_pos) if gold_pos is not None else list(range(n))
    fallback = tables.cat_id.get(max(tables.grammar.lexical, key=lambda c: tables.grammar.lexical[c])) \
        if tables.grammar.lexical else 0
    leaf_tok, leaf_tag, leaf_lex, leaf_urule = [], [], [], []
    for c, i in enumerate(order):
        seen = set()
        pairs = []
        for t in tables.pos_tags(forms[i], pos[i]):
            for k in tables.lexical(forms[i], t):
                pairs.append((t, k))
        if gleaves is not None:
            gl = gleaves[gold_pos[i]]
            gk = tables.cat_id.get(str(gl.cat))
            if gk is not None and (gl.pos, gk) not in pairs:
                pairs.append((gl.pos, gk))
        if not pairs:
            pairs.append((pos[i] or tables.pos_tags(forms[i], None)[0], fallback))
        for t, k in pairs:
            if (t, k) in seen:
                continue
            seen.add((t, k))
            for u in [-1] + list(tables.unary_rules(k)):
                leaf_tok.append(c)
                leaf_tag.append(t)
                leaf_lex.append(k)
                leaf_urule.append(u)
    inst = Instance(np.array([atom(forms[i]) for i in order], dtype=np.uint32),
                    np.asarray(leaf_tok, dtype=np.int32),
                    np.array([atom(t) for t in leaf_tag], dtype=np.uint32),
                    np.asarray(leaf_lex, dtype=np.int32), np.asarray(leaf_urule, dtype=np.int32),
                    leaf_tag, [forms[i] for i in order], canon)
    if gold is not None:
        inst.gold = gold_arrays(gold, tables, [gold_pos[i] for i in order])
    return inst


def gold_arrays(gold: Derivation, tables: CCGTables, tok_ref: Sequence[int]) -> tuple:
    """The gold derivation as node arrays: (g_cat int32[G] category ids (-2: a category the
    grammar does not know, which no edge matches), g_parent int32[G] (-1 root), g_left
    int32[G] left child of a binary node (-1 otherwise), g_kind int32[G] (0 leaf, 1 unary,
    2 binary), tok_gnode int32[n] gold leaf node of canonical token c, whose reference
    position is tok_ref[c])."""
    cats, parent, left, kind = [], [], [], []
    leaf_node: List[int] = []
    stack = [(gold.root, -1, -1, 0)]       # (tree, parent id, position among siblings)
    # pre-order with explicit ids; leaves are met left to right
    while stack:
        x, par, _, side = stack.pop()
        me = len(cats)
        cats.append(tables.cat_id.get(str(x.cat), -2))
        parent.append(par)
        left.append(-1)
        if par >= 0 and kind[par] == 2 and side == 0:
            left[par] = me
        if x.is_leaf:
            kind.append(0)
            leaf_node.append(me)
            continue
        kind.append(2 if len(x.children) == 2 else 1)
        for s in range(len(x.children) - 1, -1, -1):
            stack.append((x.children[s], me, -1, s))
    tok_gnode = np.asarray([leaf_node[p] for p in tok_ref], dtype=np.int32)
    return (np.asarray(cats, dtype=np.int32), np.asarray(parent, dtype=np.int32),
            np.asarray(left, dtype=np.int32), np.asarray(kind, dtype=np.int32), tok_gnode)


def build_tree(tree, inst: Instance, tables: CCGTables, words: Sequence[str]):
    """A :class:`wo.ccg.auto.Node`/:class:`Leaf` from one analysis tree of the search
    (``(0, leaf)``, ``(1, cat, child)``, ``(2, cat, head, left, right)``); ``words`` are the
    caller's tokens (leaf -> canonical token -> caller's index).  Returns (tree, list of caller
    indices of its words left to right)."""
    out: List[int] = []

    def rec(t):
        if t[0] == 0:
            leaf = t[1]
            c = int(inst.leaf_tok[leaf])
            i = int(inst.canon[c])
            out.append(i)
            return Leaf(tables.cats[int(inst.leaf_lex[leaf])], inst.leaf_tag[leaf], words[i])
        if t[0] == 1:
            return Node(tables.cats[t[1]], 0, [rec(t[2])])
        a = rec(t[3])
        b = rec(t[4])
        return Node(tables.cats[t[1]], t[2], [a, b])

    return rec(tree), out


def glue(pieces: Sequence) -> object:
    """One tree from several (a fallback output's pieces, left to right): binary glue nodes of
    category :data:`GLUE_CATEGORY`, head on the left."""
    acc = pieces[0]
    for p in pieces[1:]:
        acc = Node(parse_category(GLUE_CATEGORY), 0, [acc, p])
    return acc


def dependency_heads(root) -> List[int]:
    """1-based heads (0 root) of the leaves of a derivation tree, left to right: in every binary
    node the lexical head of the non-head child depends on the lexical head of the head child."""
    leaves = root.leaves()
    index = {id(x): j for j, x in enumerate(leaves)}
    heads = [0] * len(leaves)

    def rec(x) -> int:
        if x.is_leaf:
            return index[id(x)]
        hs = [rec(c) for c in x.children]
        if len(hs) == 2:
            h = hs[x.head]
            heads[hs[1 - x.head]] = h + 1
            return h
        return hs[0]

    heads[rec(root)] = 0
    return heads
