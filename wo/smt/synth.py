"""Synthesis on the shared search core (Zhang et al. 2014, section 2.2): instances built from a
parsed source sentence and its translation options, oracle derivations for training
(section 2.2.2), decoding and training of :class:`wo._fast._smt.SMTGrammar`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._fast._search import Search
from .._fast._train import Trainer
from .._fast._smt import SMTGrammar
from ..model import atom
from .options import Option

MAX_ORACLE_NODES = 20000
SYSTEM = "smt"
# template ids of the real-valued features (wo/_fast/_smt.pyx)
T_LM_NGRAMS, T_R_PTRANS, T_R_WORDS, T_R_COVER = 300, 310, 311, 312
SMT_FEATURE_SET = "zhang2014-smt-v1"
DEFAULTS = {"max_len": 5, "lam": 0.1, "beta": 0.8, "beam_factor": 16, "max_pops": 1000, "complete_beam": 4,
            "train_pops": 400}



@dataclass
class Source:
    """A segmented, parsed source sentence: tokens, POS, heads (0-based, -1 root), labels."""

    tokens: List[str]
    pos: List[str]
    heads: List[int]
    labels: List[str]


@dataclass
class Instance:
    """Arrays of one sentence for :meth:`SMTGrammar.set_instance` plus what the front end needs.

    options: the translation options (leaf i = options[i]); slot_words: target word of every
    word slot (str, S of them); arrays: the positional arguments of ``set_instance`` after n;
    gold: None or the gold tuple (training); oracle: indices of the oracle options in
    reference order (training).
    """

    n: int
    options: List[Option]
    slot_words: List[str]
    slot_pos: List[str]
    arrays: tuple
    slot_lm: Optional[np.ndarray] = None
    gold: Optional[tuple] = None
    oracle: Optional[List[int]] = None
    substitute: bool = False

    @property
    def slot_opt(self) -> np.ndarray:
        """int32[S]: the option of every word slot."""
        return self.arrays[11]


def _bin(n: int) -> int:
    return n if n <= 5 else (6 if n <= 10 else (7 if n <= 20 else (8 if n <= 40 else 9)))


def source_paths(src: Source) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LEN, LABELS and LABELSPOS atoms of the source dependency path between every two source
    positions (Table 2): uint32[n*n] each; LABELS and LABELSPOS are 0 when LEN > 3.

    LEN is the number of arcs on the shortest path, binned as Table 1's NORM; LABELS the arc
    labels with ``^`` for an arc walked up (towards the root) and ``v`` for one walked down;
    LABELSPOS the same with the POS of every node on the path.
    """
    n = len(src.tokens)
    heads = list(src.heads)
    anc: List[List[int]] = []
    for i in range(n):
        chain, j, seen = [i], i, {i}
        while 0 <= heads[j] < n and heads[j] not in seen:
            j = heads[j]
            chain.append(j)
            seen.add(j)
        anc.append(chain)
    plen = np.zeros(n * n, dtype=np.uint32)
    plab = np.zeros(n * n, dtype=np.uint32)
    plpos = np.zeros(n * n, dtype=np.uint32)
    for a in range(n):
        da = {x: k for k, x in enumerate(anc[a])}
        for b in range(n):
            up = down = None
            for k, x in enumerate(anc[b]):
                if x in da:
                    up, down = da[x], k
                    break
            if up is None:                      # different trees (a forest): no path
                plen[a * n + b] = atom("LEN|none")
                continue
            L = up + down
            plen[a * n + b] = atom(f"LEN|{_bin(L)}")
            if L <= 3:
                ua = anc[a][:up + 1]            # a .. lca
                db = anc[b][:down][::-1]        # below lca .. b
                labs = [src.labels[x] + "^" for x in ua[:-1]] + [src.labels[x] + "v" for x in db]
                nodes = ua + db
                plab[a * n + b] = atom("LAB|" + "|".join(labs))
                plpos[a * n + b] = atom("LP|" + "|".join(labs) + "|" + "|".join(src.pos[x] for x in nodes))
    return plen, plab, plpos


def span_root(src: Source, lo: int, hi: int) -> int:
    """Source position in [lo, hi) whose head lies outside the span (the first such)."""
    for i in range(lo, hi):
        if not (lo <= src.heads[i] < hi):
            return i
    return lo


def projectivize(heads: Sequence[int]) -> List[int]:
    """Lift non-projective arcs to the grandparent until the tree is projective (0-based heads,
    -1 root); a projective tree is returned unchanged."""
    h = list(heads)
    n = len(h)

    def dominated(x: int, top: int) -> bool:
        seen = 0
        while x != -1 and seen <= n:
            if x == top:
                return True
            x = h[x]
            seen += 1
        return False

    changed = True
    while changed:
        changed = False
        for d in range(n):
            p = h[d]
            if p < 0:
                continue
            a, b = (p, d) if p < d else (d, p)
            if any(not dominated(k, p) for k in range(a + 1, b)):
                h[d] = h[p]
                changed = True
    return h


def subtree_spans(heads: Sequence[int]) -> Tuple[List[int], List[int]]:
    """[lo, hi) span of every word's subtree (heads 0-based, -1 root, projective)."""
    n = len(heads)
    lo, hi = list(range(n)), [i + 1 for i in range(n)]
    for i in range(n):
        j, steps = heads[i], 0
        while j >= 0 and steps <= n:
            lo[j] = min(lo[j], i)
            hi[j] = max(hi[j], i + 1)
            j = heads[j]
            steps += 1
    return lo, hi


def _tiles(options: Sequence[Option], ref: Sequence[str], ref_heads: Sequence[int]) -> Dict[int, List[int]]:
    """{reference start a: [option indices]} of the options that are valid oracle leaves at a:
    their words equal ref[a:a+k], their root's head lies outside the tile, and every other
    word's head and subtree lie inside it (section 2.2.2)."""
    m = len(ref)
    lo, hi = subtree_spans(ref_heads)
    by_start: Dict[int, List[int]] = {}
    for i, o in enumerate(options):
        k = len(o.words)
        for a in range(0, m - k + 1):
            if tuple(ref[a:a + k]) != tuple(o.words):
                continue
            r = a + o.root
            if a <= ref_heads[r] < a + k:
                continue
            if all(j == r or (a <= lo[j] and hi[j] <= a + k and a <= ref_heads[j] < a + k)
                   for j in range(a, a + k)):
                by_start.setdefault(a, []).append(i)
    return by_start


def find_oracle(options: Sequence[Option], ref: Sequence[str], ref_heads: Sequence[int],
                max_nodes: int = MAX_ORACLE_NODES) -> Optional[List[Tuple[int, int]]]:
    """Oracle leaves for a reference (section 2.2.2): options whose target phrases tile the
    reference exactly, with pairwise disjoint source spans, each tile a valid leaf of the
    (projective) reference tree: one word (the option's root) heads the tile from outside and
    every other word's subtree lies inside the tile.

    Returns [(option index, reference start)] in reference order, or None when no tiling is
    found within ``max_nodes`` search steps.  Larger tiles and likelier options are tried first.
    """
    m = len(ref)
    by_start = _tiles(options, ref, ref_heads)
    for a in by_start:
        by_start[a].sort(key=lambda i: (-len(options[i].words), -(options[i].src_hi - options[i].src_lo),
                                        -options[i].prob, i))
    nodes = [0]
    dead = set()

    def dfs(a: int, cov: int) -> Optional[List[Tuple[int, int]]]:
        if a == m:
            return []
        if (a, cov) in dead or nodes[0] > max_nodes:
            return None
        nodes[0] += 1
        for i in by_start.get(a, ()):
            o = options[i]
            bits = ((1 << (o.src_hi - o.src_lo)) - 1) << o.src_lo
            if cov & bits:
                continue
            rest = dfs(a + len(o.words), cov | bits)
            if rest is not None:
                return [(i, a)] + rest
        dead.add((a, cov))
        return None

    return dfs(0, 0)


def substitute_oracle(options: Sequence[Option], ref: Sequence[str], ref_heads: Sequence[int],
                      max_skip: float = 0.5, max_nodes: int = MAX_ORACLE_NODES):
    """A substitute oracle when the reference cannot be tiled (Zhang et al. 2014, footnote 2):
    the reachable tree closest to the reference, as the reference with the fewest words left
    out, where only complete subtrees may be left out (the rest stays a projective tree) and
    the remaining words are tiled by options as in :func:`find_oracle`.

    Returns (tiles [(option index, reference start)], kept reference positions) or None when
    more than ``max_skip`` of the words would be left out or the search exceeds ``max_nodes``.
    """
    m = len(ref)
    lo, hi = subtree_spans(ref_heads)
    by_start = _tiles(options, ref, ref_heads)
    skips: Dict[int, List[int]] = {}
    for w in range(m):
        if ref_heads[w] >= 0:                        # never the whole sentence
            skips.setdefault(lo[w], []).append(hi[w])
    memo: Dict[Tuple[int, int], Tuple[int, int, int, tuple]] = {}
    nodes = [0]
    INF = (m + 1, 0, 0, ())

    def best(a: int, cov: int):
        # cost: (reference words left out, -source words covered, tiles)
        if a == m:
            return (0, 0, 0, ())
        key = (a, cov)
        if key in memo:
            return memo[key]
        nodes[0] += 1
        if nodes[0] > max_nodes:
            return INF
        res = INF
        for i in by_start.get(a, ()):
            o = options[i]
            bits = ((1 << (o.src_hi - o.src_lo)) - 1) << o.src_lo
            if cov & bits:
                continue
            c = best(a + len(o.words), cov | bits)
            cand = (c[0], c[1] - (o.src_hi - o.src_lo), c[2] + 1, ((i, a),) + c[3])
            if cand[:3] < res[:3]:
                res = cand
        for b in set(skips.get(a, ())):
            c = best(b, cov)
            cand = (c[0] + (b - a), c[1], c[2], c[3])
            if cand[:3] < res[:3]:
                res = cand
        memo[key] = res
        return res

    skipped, _, ntiles, tiles = best(0, 0)
    if ntiles == 0 or skipped > max_skip * m or nodes[0] > max_nodes:
        return None
    kept = sorted(j for i, a in tiles for j in range(a, a + len(options[i].words)))
    return list(tiles), kept


def build_instance(src: Source, options: Sequence[Option], beta: float, lm=None,
                   ref: Optional[Sequence[str]] = None, ref_heads: Optional[Sequence[int]] = None,
                   substitute: float = 0.0) -> Instance:
    """The arrays of one sentence (see :meth:`SMTGrammar.set_instance`).

    beta: share of source words a goal must cover (section 2.2.1, 0.8 in the paper).  With
    ``ref`` (tokenized reference) and ``ref_heads`` (its parse, 0-based), the oracle of
    :func:`find_oracle` becomes the gold derivation (``gold`` stays None when there is none);
    with ``substitute`` > 0, an unreachable reference gets the substitute oracle of
    :func:`substitute_oracle` leaving out at most that share of its words (``substitute``
    attribute True).
    Raises ValueError for a sentence without source words or without options.
    """
    n = len(src.tokens)
    if n == 0 or not options:
        raise ValueError("no source words or no translation options")
    L = len(options)
    woff = np.zeros(L + 1, dtype=np.int32)
    woff[1:] = np.cumsum([len(o.words) for o in options])
    words = [w for o in options for w in o.words]
    tags = [p for o in options for p in o.pos]
    slot_opt = np.repeat(np.arange(L, dtype=np.int32), np.diff(woff))
    slot_head = np.array([(woff[i] + h if h >= 0 else -1) for i, o in enumerate(options) for h in o.heads],
                         dtype=np.int32)
    opt_lo = np.array([o.src_lo for o in options], dtype=np.int32)
    opt_hi = np.array([o.src_hi for o in options], dtype=np.int32)
    opt_root = (woff[:-1] + np.array([o.root for o in options], dtype=np.int32)).astype(np.int32)
    src_phr = [" ".join(src.tokens[o.src_lo:o.src_hi]) for o in options]
    tgt_phr = [" ".join(o.words) for o in options]
    opt_atom = np.array([atom(s + " ||| " + t) for s, t in zip(src_phr, tgt_phr)], dtype=np.uint32)
    opt_src = np.array([atom(s) for s in src_phr], dtype=np.uint32)
    opt_tw = np.array([atom(t) for t in tgt_phr], dtype=np.uint32)
    opt_sroot = np.array([span_root(src, o.src_lo, o.src_hi) for o in options], dtype=np.int32)
    real = np.zeros((L, 5), dtype=np.float64)
    slot_lm = None
    if lm is not None:
        slot_lm = lm.word_ids(words)
        for i, o in enumerate(options):
            ids = slot_lm[woff[i]:woff[i + 1]]
            real[i, 0] = float(lm.core.word_scores(ids, False, False).sum())
            real[i, 4] = float(lm.core.word_scores(ids, True, True).sum()) - real[i, 0]
    real[:, 1] = [math.log10(max(o.prob, 1e-9)) for o in options]
    real[:, 2] = np.diff(woff)
    real[:, 3] = opt_hi - opt_lo
    slot_word = np.array([atom(w) for w in words], dtype=np.uint32)
    slot_pos = np.array([atom(p) for p in tags], dtype=np.uint32)
    src_word = np.array([atom(w) for w in src.tokens], dtype=np.uint32)
    plen, plab, plpos = source_paths(src)
    need = max(1, int(math.ceil(beta * n - 1e-9)))
    arrays = (opt_lo, opt_hi, woff, opt_root, opt_atom, opt_src, opt_tw, opt_sroot, real.reshape(-1),
              slot_word, slot_pos, slot_opt, slot_head, src_word, plen, plab, plpos, need)
    inst = Instance(n, list(options), words, tags, arrays, slot_lm)
    if ref is not None and ref_heads is not None and len(ref) > 0:
        rh = projectivize(ref_heads)
        tiles = find_oracle(options, ref, rh)
        inst.substitute = False
        if tiles is None and substitute > 0:
            got = substitute_oracle(options, ref, rh, max_skip=substitute)
            if got is not None:
                tiles, kept = got
                new = {j: k for k, j in enumerate(kept)}
                rh = [new[rh[j]] if rh[j] >= 0 else -1 for j in kept]
                tiles = [(i, new[a]) for i, a in tiles]
                inst.substitute = True
        if tiles is not None:
            lo, hi = subtree_spans(rh)
            g_leaf = np.zeros(L, dtype=np.uint8)
            g_lo = np.full(L, -1, dtype=np.int32)
            s_ref = np.full(len(words), -1, dtype=np.int32)
            for i, a in tiles:
                g_leaf[i] = 1
                g_lo[i] = a
                s_ref[woff[i]:woff[i + 1]] = np.arange(a, a + len(options[i].words))
            inst.gold = (g_leaf, g_lo, s_ref, np.array(rh, dtype=np.int32), np.array(lo, dtype=np.int32),
                         np.array(hi, dtype=np.int32))
            inst.oracle = [i for i, _ in tiles]
    return inst


@dataclass
class Decoded:
    """One translation: target tokens, their heads (0-based, -1 root), the option indices
    used, scaled score, status (0 ok, 3 completed, 1/2 budget/timeout fallback), pops, edges."""

    tokens: List[str]
    heads: List[int]
    options: List[int]
    score: float
    status: int
    pops: int
    edges: int


def _decoded(inst: Instance, order, slot_head, score: float, status: int, pops: int, edges: int) -> Decoded:
    """A :class:`Decoded` from the search's output: ``order`` int32[m] word slots in output
    order, ``slot_head`` int32[S] head slot of every slot (the grammar's analysis)."""
    order = [int(x) for x in order]
    pos = {s: k for k, s in enumerate(order)}
    heads = [pos.get(int(slot_head[s]), -1) if slot_head[s] >= 0 else -1 for s in order]
    used = sorted({int(inst.slot_opt[s]) for s in order})
    return Decoded([inst.slot_words[s] for s in order], heads, used, score, status, pops, edges)


class SMTSearch:
    """Decoder and trainer of the synthesis grammar over one weight vector (Zhang et al. 2014,
    section 2.2, on the best-first core of Zhang & Clark 2015, Algorithms 1 and 3).

    weights float32[2**hash_bits]; accum float64 of the same shape for training; lm a
    :class:`wo.lm.LanguageModel` (the real-valued 4-gram feature) or None.  Raises ValueError
    for weights of the wrong shape or dtype (``Search``) and for bad instance arrays
    (``SMTGrammar.set_instance``).
    """

    def __init__(self, weights: np.ndarray, hash_bits: int, accum: Optional[np.ndarray] = None, lm=None):
        self.grammar = SMTGrammar()
        self.lm = lm
        self.grammar.set_lm(lm.core if lm is not None else None)
        self.search = (Search(self.grammar, weights, hash_bits) if accum is None
                       else Trainer(self.grammar, weights, hash_bits, accum))

    def _set(self, inst: Instance, gold: bool = False) -> None:
        self.grammar.set_instance(inst.n, *inst.arrays, slot_lm=inst.slot_lm,
                                  gold=inst.gold if gold else None)

    def decode(self, inst: Instance, beam: int, max_pops: int, complete_beam: int = 4,
               patience: Optional[int] = None, timeout: float = 0.0) -> Decoded:
        """Best-first synthesis (section 2.2.1): at most ``max_pops`` expansions (L), chart
        ``beam`` (k*n); the output is the best popped edge covering >= beta*n source words,
        else the completion's.  patience: pops after the first goal (default: the rest of L)."""
        self._set(inst)
        order, slot_head, score, status, pops, edges = self.search.decode(
            beam, max_pops, timeout, complete_beam, 4_000_000, max_pops if patience is None else patience)
        return _decoded(inst, order, slot_head, float(score), int(status), int(pops), int(edges))

    def candidates(self, inst: Instance, k: int = 50) -> List[Decoded]:
        """The best ``k`` goal edges popped by the last :meth:`decode` of ``inst`` (by scaled
        score), as n-best candidates for reranking; ``score`` is the scaled score and
        ``edges`` holds the unscaled score F (rounded) for the reranker."""
        ids, F, S = self.search.popped_goals()
        out, seen = [], set()
        for j in np.argsort(-S, kind="stable"):
            order, slot_head = self.search.output_of(int(ids[j]))
            key = tuple(int(x) for x in order)
            if key in seen:
                continue
            seen.add(key)
            d = _decoded(inst, order, slot_head, float(S[j]), 0, 0, 0)
            d.F = float(F[j])
            out.append(d)
            if len(out) >= k:
                break
        return out

    def forced(self, inst: Instance, max_pops: int = 100000) -> bool:
        """Forced decoding towards the oracle derivation: True if it is reached."""
        if inst.gold is None:
            return False
        self._set(inst, gold=True)
        return bool(self.search.forced(max_pops)[0])

    def train_one(self, inst: Instance, beam: int, max_pops: int):
        """Algorithm 3 of Zhang & Clark 2015 on one sentence: (reached_gold, pops, updates)."""
        self._set(inst, gold=True)
        return self.search.train_one(beam, max_pops)

    @property
    def avg_count(self) -> float:
        """Averaging count c of the averaged parameters (theta_avg = W - U / c)."""
        return self.search.avg_count

    @avg_count.setter
    def avg_count(self, v: float) -> None:
        self.search.avg_count = v

    @property
    def max_tau(self) -> float:
        """Cap on the large-margin step tau (0 = uncapped)."""
        return self.search.max_tau

    @max_tau.setter
    def max_tau(self, v: float) -> None:
        self.search.max_tau = v

    @property
    def n_updates(self) -> int:
        """Large-margin updates made so far."""
        return self.search.n_updates


def source_of(rec: dict) -> Source:
    """The parsed source sentence of a corpus record (keys zh, zh_pos, zh_heads, zh_labels)."""
    return Source(list(rec["zh"]), list(rec["zh_pos"]), list(rec["zh_heads"]), list(rec["zh_labels"]))
