"""IDL-graphs (Nederhof & Satta 2004, section 3; Soricut & Marcu 2005, section 2.2): vertices
with lock ranks, cuts, and the moves that unfold a cut into the next ones.

An expression is compiled between an initial vertex 0 and a final vertex 1.  Each vertex is
the entry of one construct::

    WORD    one word edge (token t) to vertex next[v]
    CHOICE  epsilon edges to the entries of a disjunction's arguments
    SPLIT   the interleave's opening edges (Nederhof & Satta's "⊢") to the entries of its
            branches; branch k ends at its own END vertex, and when a cut holds the END
            vertices of every branch they are replaced by the interleave's join vertex ("⊣")
    END     the end of an interleave branch (waits for the join)
    FINAL   vertex 1

A cut is a set of vertices that can be reached simultaneously.  Moves are precomputed per
vertex: following epsilon and ⊢ edges from v down to a word edge gives (token, vertex after
the word, vertices added by the ⊢ edges crossed); the new cut replaces v by those.

Ranks: a lock's body vertices (those created inside ``L(...)``, not its entry and exit) have
rank = number of enclosing locks.  A vertex may move only if its rank is the highest in the
cut: once a locked phrase has begun, nothing else moves until it is complete (N&S's ranking
rule in the form that also keeps two sibling locks apart).  Identical branches of one
interleave (e.g. a repeated word of a bag) are started left to right only ("twin" rule), so
the unfolding holds no duplicate states; the language is unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import factorial
from typing import Dict, List, Sequence, Tuple

import numpy as np

from .expr import BOS, EOS, Expr, Op, Word

WORD, CHOICE, SPLIT, END, FINAL = 0, 1, 2, 3, 4


@dataclass
class IDLGraph:
    """A compiled IDL-expression.  Arrays (int32 unless stated):

    tokens (list of str, one per word occurrence), types (list of distinct word strings),
    tok_type[T] (type id of each token); vertices: kind[V], depth[V] (lock rank), tok[V]
    (token of a WORD vertex, else -1), nxt[V] (WORD: next vertex; SPLIT: join target; END:
    join id), lst_off[V+1]/lst (CHOICE targets, SPLIT branch entries), twin[V] (the previous
    identical branch's entry, -1), encl[V] (the interleave join whose branch holds v, -1);
    joins: join_off[J+1]/join_end (END vertices), join_target[J], join_parent[J] (enclosing
    join, -1); moves: mv_off[V+1], mv_tok[M], mv_target[M], mv_add_off[M+1]/mv_add.
    """

    tokens: List[str]
    types: List[str]
    tok_type: np.ndarray
    kind: np.ndarray
    depth: np.ndarray
    tok: np.ndarray
    nxt: np.ndarray
    lst_off: np.ndarray
    lst: np.ndarray
    twin: np.ndarray
    encl: np.ndarray
    join_off: np.ndarray
    join_end: np.ndarray
    join_target: np.ndarray
    join_parent: np.ndarray
    mv_off: np.ndarray
    mv_tok: np.ndarray
    mv_target: np.ndarray
    mv_add_off: np.ndarray
    mv_add: np.ndarray
    is_bag: bool

    @property
    def n_vertices(self) -> int:
        return len(self.kind)


def compile_expr(e: Expr) -> IDLGraph:
    """Compile an expression to its IDL-graph with precomputed moves (see the module docstring).

    Raises ValueError for an expression without words.
    """
    kind: List[int] = [WORD, FINAL]
    depth = [0, 0]
    tok = [-1, -1]
    nxt = [-1, -1]
    lst: List[List[int]] = [[], []]
    twin = [-1, -1]
    encl = [-1, -1]
    tokens: List[str] = []
    joins: List[Tuple[List[int], int, int]] = []   # (END vertices, target, parent join)

    def fresh(d: int, j: int) -> int:
        kind.append(-1); depth.append(d); tok.append(-1); nxt.append(-1); lst.append([])
        twin.append(-1); encl.append(j)
        return len(kind) - 1

    def build(x: Expr, u: int, w: int, d: int, j: int) -> None:
        if isinstance(x, Word):
            kind[u] = WORD
            tok[u] = len(tokens)
            tokens.append(x.form)
            nxt[u] = w
            return
        if x.op == "L":
            build(x.args[0], u, w, d + 1, j)
            return
        if x.op == "C":
            cur = u
            for k, a in enumerate(x.args):
                nx = w if k == len(x.args) - 1 else fresh(d, j)
                build(a, cur, nx, d, j)
                cur = nx
            return
        if x.op == "D":
            kind[u] = CHOICE
            for a in x.args:
                s = fresh(d, j)
                lst[u].append(s)
                build(a, s, w, d, j)
            return
        # interleave
        jid = len(joins)
        joins.append(([], w, j))
        kind[u] = SPLIT
        nxt[u] = w
        seen: Dict[str, int] = {}
        for a in x.args:
            s, t = fresh(d, jid), fresh(d, jid)
            kind[t] = END
            nxt[t] = jid
            lst[u].append(s)
            joins[jid][0].append(t)
            key = str(a)
            if key in seen:
                twin[s] = seen[key]
            seen[key] = s
            build(a, s, t, d, jid)

    # vertex 0 = initial, 1 = final; inside L(...) build() passes d+1, so the lock's body
    # (the vertices fresh() creates there) is one rank deeper than its entry and exit
    build(e, 0, 1, 0, -1)
    if not tokens:
        raise ValueError("expression without words")
    V = len(kind)
    # moves: DFS from each vertex through CHOICE and SPLIT down to word edges
    moves: List[List[Tuple[int, int, Tuple[int, ...]]]] = []

    def gen(v: int, added: Tuple[int, ...]):
        k = kind[v]
        if k == WORD:
            yield tok[v], nxt[v], added
        elif k == CHOICE:
            for s in lst[v]:
                yield from gen(s, added)
        elif k == SPLIT:
            br = lst[v]
            for i, s in enumerate(br):
                if twin[s] >= 0:
                    continue
                yield from gen(s, added + tuple(b for b2, b in enumerate(br) if b2 != i))

    for v in range(V):
        moves.append(list(gen(v, ())))
    types: List[str] = []
    tid: Dict[str, int] = {}
    for t in tokens:
        if t not in tid:
            tid[t] = len(types)
            types.append(t)
    i32 = lambda a: np.asarray(a, dtype=np.int32)  # noqa: E731
    lst_off = np.zeros(V + 1, dtype=np.int32)
    lst_off[1:] = np.cumsum([len(x) for x in lst])
    join_off = np.zeros(len(joins) + 1, dtype=np.int32)
    join_off[1:] = np.cumsum([len(x[0]) for x in joins])
    mv_off = np.zeros(V + 1, dtype=np.int32)
    mv_off[1:] = np.cumsum([len(m) for m in moves])
    flat = [m for ms in moves for m in ms]
    mv_add_off = np.zeros(len(flat) + 1, dtype=np.int32)
    mv_add_off[1:] = np.cumsum([len(m[2]) for m in flat])
    is_bag = (isinstance(e, Op) and e.op == "C" and len(e.args) == 3 and e.args[0] == Word(BOS)
              and e.args[2] == Word(EOS) and (isinstance(e.args[1], Word) or (
                  e.args[1].op == "I" and all(isinstance(a, Word) for a in e.args[1].args))))
    return IDLGraph(tokens, types, i32([tid[t] for t in tokens]), i32(kind), i32(depth), i32(tok),
                    i32(nxt), lst_off, i32([x for v in lst for x in v]), i32(twin), i32(encl), join_off,
                    i32([t for js in joins for t in js[0]]), i32([js[1] for js in joins]),
                    i32([js[2] for js in joins]), mv_off, i32([m[0] for m in flat]),
                    i32([m[1] for m in flat]), mv_add_off, i32([x for m in flat for x in m[2]]), is_bag)


def normalise(g: IDLGraph, cut: Sequence[int]) -> Tuple[int, ...]:
    """Replace complete sets of END vertices by their join vertex (repeatedly); sorted cut."""
    c = set(cut)
    changed = True
    while changed:
        changed = False
        for v in list(c):
            if v in c and g.kind[v] == END:
                j = g.nxt[v]
                ends = g.join_end[g.join_off[j]:g.join_off[j + 1]]
                if all(int(t) in c for t in ends):
                    c.difference_update(int(t) for t in ends)
                    c.add(int(g.join_target[j]))
                    changed = True
    return tuple(sorted(c))


def movable(g: IDLGraph, cut: Sequence[int]) -> List[int]:
    """Vertices of the cut allowed to move: highest rank in the cut, and no earlier twin left."""
    top = max(int(g.depth[v]) for v in cut)
    cs = set(cut)
    return [v for v in cut if g.depth[v] == top and not (g.twin[v] >= 0 and int(g.twin[v]) in cs)]


def successors(g: IDLGraph, cut: Sequence[int]):
    """(token, next cut) for every move out of ``cut`` (Python reference of the Cython search)."""
    for v in movable(g, cut):
        for m in range(g.mv_off[v], g.mv_off[v + 1]):
            rest = [x for x in cut if x != v]
            rest.append(int(g.mv_target[m]))
            rest.extend(int(x) for x in g.mv_add[g.mv_add_off[m]:g.mv_add_off[m + 1]])
            yield int(g.mv_tok[m]), normalise(g, rest)


def unfold_language(g: IDLGraph) -> frozenset:
    """Every string of the graph's language by exhaustive unfolding of cuts (tests; exponential)."""
    out = set()
    stack = [((0,), ())]
    while stack:
        cut, s = stack.pop()
        if cut == (1,):
            out.add(s)
            continue
        for t, nc in successors(g, cut):
            stack.append((nc, s + (g.tokens[t],)))
    return frozenset(out)


def bag_unfolding(counts: Sequence[int], context: int) -> int:
    """States of the full unfolding of a bag ``C(<s>, I(w1..wn), </s>)`` intersected with an
    n-gram LM whose states keep the last ``context`` (= N-1) tokens: the initial state, the
    final state, and for every sub-multiset S of the bag used after ``<s>`` each distinct
    sequence of the last min(|S|, context) words (the state's LM history).  counts: the
    multiplicity of each distinct word.  Exact (Python integers, from the exponential
    generating functions of the words' uses, so a bag of 200 words takes milliseconds); the
    search recombines states on exactly this key, so exhaustive BFS unfolds this many states.
    """
    K = max(context, 0)
    total = 2                                     # initial and final states
    n = sum(counts)

    def series(L: int, weight) -> int:
        # L! [x^L] prod_w sum_{j<=min(c_w, L)} weight(c_w, j) x^j / j!: over the sequences of L words
        # drawn from the bag (j_w uses of word w: L!/prod j_w! orders), the sum of prod_w weight(c_w, j_w)
        poly = [Fraction(1)] + [Fraction(0)] * L
        for c in counts:
            term = [Fraction(weight(c, j), factorial(j)) if j <= c else Fraction(0) for j in range(L + 1)]
            poly = [sum(poly[i] * term[d - i] for i in range(d + 1)) for d in range(L + 1)]
        return int(poly[L] * factorial(L))

    for k in range(0, min(K, n + 1)):
        total += series(k, lambda c, j: 1)                      # short histories: <s> still in the window
    if n >= K:
        total += series(K, lambda c, j: c - j + 1)              # K last words + any sub-multiset before them
    return total
