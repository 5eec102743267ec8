"""Completion for the deep track (SR'19 T2): from a tree of content words to the T1 tree the
shallow-track stages order, inflect and contract.

Deep-track input (Mille et al. 2019, the SR'19 overview, section 2) keeps the content words of
a UD tree, with predicate-argument relations (``A1``.., ``A1INV``.., ``AM``, ``NAME``, ``LIST``,
``ROOT``...) and the meaning of the removed function words as features of their hosts
(``Definite``, ``Tense``, ``Aspect``, ``Mood``, ``ClauseType``, ``Voice``); a ``_`` node stands
for an argument the surface does not show.  Measured on the aligned official English-ParTUT T2
train (26,768 nodes with a surface word, 16,750 removed words): every node keeps its UD head,
and every removed word is a leaf attached to a node that is kept.  So completion is, per node:

1. its UD relation (the deep relation, the node's and its head's lemma, UPOS and features);
2. the removed words attached to it, one decision per *slot* (the removed words grouped by
   their relation: ``det``, ``case``, ``mark``, ``aux`` (with ``cop`` and ``aux:pass``),
   ``punct``, ``other``): the class is the sorted bag of (relation, lemma, UPOS) of the words
   in the slot, or none (IMSurReal's completion, Yu et al. 2019, generates the same words
   left and right of each token of an ordered sentence; here the order stage places them);
3. its UD features (the surface features the deep input dropped: verb person, number, mood,
   verb form), among the feature strings seen with its UPOS and deep features;
4. each generated word's features (a form of *be* agrees with its subject).

Each decision is an averaged multiclass perceptron (Collins 2002) over sparse string features
(:class:`Perceptron`).  ``_`` nodes are dropped (they are features of their head).  The
result is a T1 sentence (:class:`wo.sr.t1.SRSentence`): the kept nodes in input order, then
the generated words; ``lin`` of the kept nodes re-ranked among the marked nodes (the T2 files
count the removed words in the ranks).
"""
from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..io.conllu import Sentence
from .feats import feats_key, parse_feats
from .t1 import SRSentence, is_deep

SLOTS = ("det", "case", "mark", "aux", "other")   # and "punct" (rare marks), "p:LEMMA" (frequent ones)
_SLOT_OF = {"det": "det", "case": "case", "mark": "mark", "aux": "aux", "cop": "aux", "punct": "punct"}
_TAM = ("Tense", "Aspect", "Mood", "Voice", "ClauseType", "VerbForm")
SEP, ITEM = "\x1f", "\x1e"
# the deep relations of SR'19 (Mille et al. 2019, section 2): a model takes these (and any it was
# trained on); one it never saw is completed with its back-off (relation ``dep``)
DEEP_RELATIONS = frozenset([f"A{k}" for k in range(1, 7)] + [f"A{k}INV" for k in range(1, 7)] + [
    "AM", "AMINV", "NAME", "LIST", "ROOT", "ADDRESSEE", "APPOS", "AUX", "DEP", "GOESWITH", "PARATAXIS"])


def slot_of(deprel: str, lemma: str = "") -> str:
    """The slot of a removed word by its UD relation (:data:`SLOTS`); punctuation by its lemma
    (``p:,``), which :meth:`Completer.fit` keeps as a slot of its own when frequent."""
    sl = _SLOT_OF.get(deprel.split(":", 1)[0], "other")
    return "p:" + lemma if sl == "punct" else sl


# ---------------------------------------------------------------------------------- the learner
class Perceptron:
    """An averaged multiclass perceptron over sparse string features (Collins 2002; the
    averaging by timestamps of Daume III's thesis, as in spaCy's tagger).

    weights: dict feature str -> dict class str -> float (the averaged weights after
    :meth:`average`).  :meth:`best` scores only the given candidate classes (list of str, the
    first wins ties); :meth:`step` trains on one instance.  Raises nothing of its own.
    """

    def __init__(self, weights: Optional[Dict[str, Dict[str, float]]] = None):
        self.weights: Dict[str, Dict[str, float]] = weights if weights is not None else {}
        self._tot: Dict[Tuple[str, str], float] = defaultdict(float)
        self._ts: Dict[Tuple[str, str], int] = defaultdict(int)
        self.i = 0

    def scores(self, feats: Sequence[str]) -> Dict[str, float]:
        """Class -> w . phi for every class some feature of ``feats`` weighs."""
        W = self.weights
        sc: Dict[str, float] = {}
        for f in feats:
            w = W.get(f)
            if w:
                for c, v in w.items():
                    sc[c] = sc.get(c, 0.0) + v
        return sc

    @staticmethod
    def pick(sc: Dict[str, float], cands: Sequence[str], prefix: str = "", bonus: float = 0.0) -> str:
        """The candidate (of ``cands``, non-empty; the first wins ties) whose ``prefix + c``
        scores highest in ``sc``; ``bonus`` is added to every candidate but the empty one."""
        best, bv = cands[0], sc.get(prefix + cands[0], 0.0) + (bonus if cands[0] else 0.0)
        for c in cands[1:]:
            v = sc.get(prefix + c, 0.0) + (bonus if c else 0.0)
            if v > bv:
                best, bv = c, v
        return best

    def best(self, feats: Sequence[str], cands: Sequence[str]) -> str:
        """The highest-scoring class among ``cands`` (non-empty) for the features ``feats``."""
        if len(cands) == 1:
            return cands[0]
        return self.pick(self.scores(feats), cands)

    def step(self, feats: Sequence[str], truth: str, cands: Sequence[str]) -> bool:
        """One online step: predict among ``cands``; on a mistake add the features to ``truth``
        and take them from the guess.  Returns True when the guess was right."""
        self.i += 1
        guess = self.best(feats, cands)
        if guess == truth:
            return True
        self.update(feats, truth, guess)
        return False

    def update(self, feats: Sequence[str], truth: str, guess: str) -> None:
        """Add ``feats`` to class ``truth`` and take them from ``guess`` (no step counted)."""
        for f in feats:
            w = self.weights.setdefault(f, {})
            for c, d in ((truth, 1.0), (guess, -1.0)):
                k = (f, c)
                v = w.get(c, 0.0)
                self._tot[k] += (self.i - self._ts[k]) * v
                self._ts[k] = self.i
                w[c] = v + d

    # ---- the compiled form (decoding): compressed rows, scored in wo._fast._complete
    def compile(self) -> "Perceptron":
        """Turn the weights into compressed rows (one per feature: class ids, float32
        weights) for :meth:`vector`; the dict form is dropped.  Returns self."""
        feats = list(self.weights)
        classes = sorted({c for w in self.weights.values() for c in w})
        cid = {c: i for i, c in enumerate(classes)}
        indptr = np.zeros(len(feats) + 1, dtype=np.int64)
        cls: List[int] = []
        ws: List[float] = []
        for i, f in enumerate(feats):
            row = self.weights[f]
            cls.extend(cid[c] for c in row)
            ws.extend(row.values())
            indptr[i + 1] = len(cls)
        self._set_rows(feats, classes, indptr, np.array(cls, dtype=np.int32), np.array(ws, dtype=np.float32))
        return self

    def _set_rows(self, feats, classes, indptr, cls, w) -> None:
        self.fid = {f: i for i, f in enumerate(feats)}
        self.classes = list(classes)
        self.cid = {c: i for i, c in enumerate(self.classes)}
        self.indptr, self.cls, self.w = indptr, cls, w
        self.weights = {}
        self._ids: Dict[Tuple[str, int], np.ndarray] = {}

    def vector(self, feats: Sequence[str]) -> np.ndarray:
        """The compiled form's scores of every class (float64 array, one per class of
        ``classes``) for the features ``feats``."""
        from .._fast._complete import score_rows

        fid = self.fid
        rows = np.array([r for r in map(fid.get, feats) if r is not None], dtype=np.int32)
        return score_rows(rows, self.indptr, self.cls, self.w, len(self.classes))

    def ids(self, cands: Sequence[str], prefix: str = "") -> np.ndarray:
        """The class ids (int32; -1 for a class no feature weighs) of ``prefix + c`` for each
        candidate (cached per candidate list object)."""
        key = (prefix, id(cands))
        got = self._ids.get(key)
        if got is None:
            got = self._ids[key] = np.array([self.cid.get(prefix + c, -1) for c in cands], dtype=np.int32)
        return got

    def pick_vector(self, sc: np.ndarray, cands: Sequence[str], prefix: str = "") -> str:
        """:meth:`pick` over the compiled scores ``sc`` (:meth:`vector`)."""
        if len(cands) == 1:
            return cands[0]
        ids = self.ids(cands, prefix)
        v = np.where(ids >= 0, sc[np.maximum(ids, 0)], 0.0)
        return cands[int(np.argmax(v))]

    def to_json(self) -> dict:
        """The compiled form for a model header: the feature strings and class names, and the
        rows as numpy arrays (indptr int64, cls uint16 when there are fewer than 65,536 classes
        else int32, w float32), which the model file packs as raw bytes
        (:func:`wo.io.binfile.pack_header`)."""
        small = len(self.classes) < 65536
        return {"features": list(self.fid), "classes": self.classes, "indptr": np.asarray(self.indptr, np.int64),
                "cls": np.asarray(self.cls, np.uint16 if small else np.int32), "w": np.asarray(self.w, np.float32)}

    @classmethod
    def from_json(cls, d) -> "Perceptron":
        """Inverse of :meth:`to_json`; also reads the arrays base64-encoded (little-endian int64,
        int32, float32: models written before the packed header), and a plain {feature: {class:
        weight}} dict, which it compiles.  Raises KeyError/ValueError for a malformed form."""
        import base64

        p = cls()
        if "indptr" not in d:
            p.weights = d
            return p.compile()

        def arr(k, t):
            v = d[k]
            if isinstance(v, str):
                return np.frombuffer(base64.b64decode(v), dtype=t)
            if not isinstance(v, np.ndarray):
                raise ValueError(f"perceptron {k}: not an array")
            return v

        indptr = arr("indptr", "<i8").astype(np.int64, copy=False)
        c = np.ascontiguousarray(arr("cls", "<i4"), dtype=np.int32)
        w = np.ascontiguousarray(arr("w", "<f4"), dtype=np.float32)
        if len(indptr) != len(d["features"]) + 1 or len(c) != len(w) or (len(indptr) and indptr[-1] != len(c)):
            raise ValueError("malformed perceptron rows")
        p._set_rows(d["features"], d["classes"], indptr, c, w)
        return p

    def average(self, digits: int = 3) -> None:
        """Replace the weights by their averages over the steps (rounded; zeros dropped)."""
        out: Dict[str, Dict[str, float]] = {}
        n = max(1, self.i)
        for f, w in self.weights.items():
            for c, v in w.items():
                k = (f, c)
                avg = round((self._tot[k] + (self.i - self._ts[k]) * v) / n, digits)
                if avg:
                    out.setdefault(f, {})[c] = avg
        self.weights = out
        self._tot.clear()
        self._ts.clear()


# ---------------------------------------------------------------------------------- features
class _Tree:
    """A deep sentence's lookups: children, parsed features, lower-cased lemmas."""

    def __init__(self, t: SRSentence):
        n = len(t)
        self.t = t
        self.kids: List[List[int]] = [[] for _ in range(n)]
        for i, h in enumerate(t.heads):
            if h > 0:
                self.kids[h - 1].append(i)
        self.fd = [parse_feats(f) for f in t.feats]
        self.low = [x.lower() for x in t.lemmas]
        self.assoc: Dict[int, List[str]] = {}

    def tam(self, i: int) -> str:
        d = self.fd[i]
        return ",".join(d.get(k, "") for k in _TAM)


class Assoc:
    """Lexical association of the case and mark words, counted on a large parsed corpus
    (``bench/sr_deep_assoc.py count``): per table and key the top words and two coarse
    figures, as string features of a node (:meth:`features`) that the slot perceptron weighs for
    for the ``case`` slot (tables ``hd``, ``h``, ``d``) and the ``mark`` slot (``mhd``, ``mh``,
    ``md``) only (:attr:`Completer.ASSOC_SLOTS`; the other slots and decisions do not see them).

    Tables (keys of lower-cased lemmas and UPOS joined by U+001F): ``hd`` (head lemma, node
    lemma), ``h`` (head lemma, head UPOS), ``d`` (node lemma, node UPOS) for the node's
    ``case`` children; ``mhd``, ``mh``, ``md`` the same for the ``mark`` children of a clausal
    node.  tables: name -> key -> [count bucket (log10 of the key's count), share of keys with
    a word (0..4 quarters), share of the top word among them (0..4), word 1, word 2...].
    Build with :meth:`from_counts`; JSON as is (:meth:`to_json`).  Raises nothing of its own.
    """

    CASE, MARK = ("hd", "h", "d"), ("mhd", "mh", "md")

    def __init__(self, tables: Dict[str, Dict[str, list]]):
        self.tables = tables
        self.source: dict = {}   # how from_counts pruned which counts (for the training record)

    @classmethod
    def from_counts(cls, counts, min_count: int = 20, min_word: int = 3, top: int = 2,
                    keys: Sequence[str] = CASE) -> "Assoc":
        """Prune a count file (path of ``bench/sr_deep_assoc.py``'s gzipped JSON, or its dict):
        the keys counted ``min_count`` times or more, their ``top`` words (``_``, no word, aside)
        counted ``min_word`` times or more.  Raises OSError/ValueError for an unreadable file."""
        import math

        if isinstance(counts, str):
            import gzip
            import json

            with gzip.open(counts, "rt", encoding="utf-8") as f:
                counts = json.load(f)
        out: Dict[str, Dict[str, list]] = {}
        for name in keys:
            tab = {}
            for k, c in counts["tables"].get(name, {}).items():
                n = sum(c.values())
                if n < min_count:
                    continue
                some = n - c.get("_", 0)
                ws = sorted((w for w, v in c.items() if w not in ("_", "~") and v >= min_word),
                            key=lambda w: (-c[w], w))[:top]   # "~": the words a pruned file dropped
                q = int(4 * some / n + 0.5)
                tab[k] = [min(5, int(math.log10(n))), q, int(4 * c[ws[0]] / some + 0.5) if ws else 0, *ws]
            out[name] = tab
        a = cls(out)
        a.source = {"min_count": min_count, "min_word": min_word, "top": top, "keys": list(keys),
                    **{k: v for k, v in counts.get("meta", {}).items() if k in ("sentences", "tokens", "paragraphs")}}
        return a

    def features(self, T: "_Tree", i: int) -> List[str]:
        """The association features of node ``i`` (those of each table; ``?`` for a key the
        table lacks); cached on ``T``."""
        got = T.assoc.get(i)
        if got is not None:
            return got
        t = T.t
        L, U, R = T.low[i], t.upos[i], t.deprels[i]
        h = t.heads[i] - 1
        HL, HU = (T.low[h], t.upos[h]) if h >= 0 else (None, None)
        out = []
        for name, key in (("hd", HL and HL + SEP + L), ("h", HL and HL + SEP + HU), ("d", L + SEP + U),
                          ("mhd", HL and HL + SEP + L), ("mh", HL and HL + SEP + HU), ("md", L + SEP + U)):
            tab = self.tables.get(name)
            if tab is None or key is None:
                continue
            v = tab.get(key)
            a = "a" + name
            if v is None:
                out.append(a + "?" + U)
                continue
            b, q, s1, ws = v[0], v[1], v[2], v[3:]
            out += [a + "q" + str(q) + SEP + U + SEP + R, a + "qb" + str(q) + SEP + str(b)]
            if ws:
                out += [a + "=" + ws[0], a + "=" + ws[0] + SEP + str(s1), a + "=" + ws[0] + SEP + R]
                if len(ws) > 1:
                    out.append(a + "2=" + ws[1])
        T.assoc[i] = out
        return out

    def to_json(self) -> dict:
        return self.tables

    @classmethod
    def from_json(cls, d: dict) -> "Assoc":
        return cls(d)


def node_features(T: _Tree, i: int, deprels: Optional[Sequence[str]] = None) -> List[str]:
    """The feature strings of node ``i`` of a deep sentence (see the module docstring);
    deprels: the UD relations predicted for every node (list of str, None for the relation
    classifier itself) add features of the node's and its children's relations."""
    t = T.t
    L, U, R = T.low[i], t.upos[i], t.deprels[i]
    h = t.heads[i] - 1
    HL, HU, HR = (T.low[h], t.upos[h], t.deprels[h]) if h >= 0 else ("<root>", "<root>", "<root>")
    fd = T.fd[i]
    F = t.feats[i]
    tam = T.tam(i)
    kids = T.kids[i]
    krels = sorted(t.deprels[k] + ("_" if t.lemmas[k] == "_" else "") for k in kids)
    out = ["b", "U" + U, "R" + R, "L" + L, "UR" + U + SEP + R, "LR" + L + SEP + R, "LU" + L + SEP + U,
           "URHU" + U + SEP + R + SEP + HU, "RHL" + R + SEP + HL, "LHL" + L + SEP + HL, "HR" + U + SEP + HR,
           "URHUHR" + U + SEP + R + SEP + HU + SEP + HR, "UHL" + U + SEP + HL + SEP + R,
           "K" + U + SEP + "|".join(krels), "F" + U + SEP + F, "FR" + U + SEP + R + SEP + F,
           "T" + U + SEP + tam, "TR" + U + SEP + R + SEP + tam, "nk" + U + SEP + str(min(len(kids), 4)),
           "lin" + str((t.lin[i] > 0) - (t.lin[i] < 0)) + R,
           "HLLR" + HL + SEP + L + SEP + R, "HLUR" + HL + SEP + U + SEP + R, "HULR" + HU + SEP + L + SEP + R,
           "HLR" + HL + SEP + R]
    for k in kids:
        kr = t.deprels[k]
        out += ["k" + U + SEP + kr, "ku" + U + SEP + kr + SEP + t.upos[k], "kl" + kr + SEP + T.low[k],
                "kf" + U + SEP + kr + SEP + t.feats[k]]
    if h >= 0:
        for s in T.kids[h]:
            if s != i:
                out.append("s" + R + SEP + t.deprels[s] + SEP + t.upos[s])
        out.append("hT" + U + SEP + R + SEP + T.tam(h))
        hd = T.fd[h]   # agreement: a determiner or adjective takes its noun's number, gender, case
        out.append("hN" + U + SEP + R + SEP + hd.get("Number", "") + SEP + hd.get("Gender", "") + SEP + hd.get("Case", ""))
    for k, v in fd.items():
        out += ["f" + U + SEP + k + "=" + v, "fR" + R + SEP + k + "=" + v]
    if deprels is not None:
        D = deprels[i]
        HD = deprels[h] if h >= 0 else "<root>"
        out += ["D" + D, "DU" + D + SEP + U, "DL" + D + SEP + L, "DHL" + D + SEP + HL, "DHU" + D + SEP + HU,
                "DF" + D + SEP + U + SEP + F, "DT" + D + SEP + U + SEP + tam, "DHD" + D + SEP + HD,
                "DK" + D + SEP + "|".join(sorted(deprels[k] for k in kids)),
                "DHLL" + D + SEP + HL + SEP + L, "DHUL" + D + SEP + HU + SEP + L]
        for k in kids:
            out += ["kd" + U + SEP + deprels[k], "kdl" + deprels[k] + SEP + T.low[k]]
        for k, v in fd.items():
            out.append("Df" + D + SEP + k + "=" + v)
    return out


def slot_features(slots: Sequence[str], classes: Sequence[str]) -> List[str]:
    """Features of a node's generated words for its own UD features: each word (relation and
    lemma) of the non-empty slot classes."""
    out = []
    for s, c in zip(slots, classes):
        if c:
            for it in c.split(ITEM):
                d, lem, _ = it.split(SEP)
                out.append("W" + d + SEP + lem.lower())
    return out


def subject_of(T: _Tree, i: int, deprels: Sequence[str]) -> int:
    """The subject of node ``i``: its child with a ``nsubj``/``csubj`` relation, else its
    ``A1`` child, else -1 (a host's subject fixes the person and number of its auxiliaries)."""
    kids = T.kids[i]
    for k in kids:
        if deprels[k].startswith(("nsubj", "csubj")):
            return k
    for k in kids:
        if T.t.deprels[k] == "A1":
            return k
    return -1


def word_features(T: _Tree, host: int, item: str, slot_class: str, rank: int, deprels: Sequence[str]) -> List[str]:
    """The feature strings of a generated word (``item``: relation, lemma and UPOS joined by
    U+001F) attached to node ``host``; slot_class: the whole slot's class; rank: its index in
    the slot."""
    t = T.t
    U, D = t.upos[host], deprels[host]
    tam = T.tam(host)
    s = subject_of(T, host, deprels)
    sf = T.fd[s] if s >= 0 else {}
    subj = (T.low[s] if s >= 0 else "<none>")
    sn = sf.get("Number", "") + "," + sf.get("Person", "") + "," + (t.upos[s] if s >= 0 else "")
    out = ["b", "U" + U, "D" + D, "T" + U + SEP + tam, "TD" + D + SEP + tam, "S" + sn, "SL" + subj,
           "ST" + sn + SEP + tam, "C" + slot_class, "r" + str(rank), "CT" + slot_class + SEP + tam,
           "CS" + slot_class + SEP + sn, "F" + U + SEP + t.feats[host], "hl" + T.low[host]]
    for k, v in T.fd[host].items():
        out.append("f" + k + "=" + v)
    return [item + SEP + f for f in out]


# ---------------------------------------------------------------------------------- alignment
@dataclass
class DeepExample:
    """One aligned training pair: the deep sentence ``t`` (with ``orig``), per node its gold
    UD relation, UD features (canonical string) and per slot its class, and the generated
    words as (host node, item, gold features)."""

    t: SRSentence
    deprels: List[str]
    feats: List[str]
    groups: List[Dict[str, List[str]]]
    words: List[Tuple[int, str, str]]


def _marks(skip) -> frozenset:
    """``skip`` of :func:`align_deep` / :func:`gold_t1` as a set of lemmas ("" or None: none)."""
    return frozenset([skip] if isinstance(skip, str) else skip or ()) - {""}


def align_deep(t: SRSentence, ud: Sentence, skip="") -> DeepExample:
    """The :class:`DeepExample` of a deep sentence ``t`` whose nodes carry ``original_id``
    (``t.orig``: 1-based positions in ``ud``, 0 for ``_`` nodes) and its UD sentence ``ud``.
    A removed word hangs from its nearest kept ancestor; punctuation whose lemma is ``skip``
    (a str, or a collection of them: the marks :mod:`wo.sr.punct` inserts) is left out.
    Raises ValueError when ``t`` has no alignment or it does not fit ``ud``."""
    skip = _marks(skip)
    if not t.orig:
        raise ValueError("no original_id: the deep sentence is not aligned to its reference")
    n, m = len(t), len(ud)
    node_of = {}
    for i, o in enumerate(t.orig):
        if o:
            if o > m:
                raise ValueError(f"node {i + 1}: original_id={o} beyond the reference's {m} words")
            node_of[o - 1] = i
    deprels = ["_"] * n
    feats = ["_"] * n
    for j, i in node_of.items():
        deprels[i] = ud.deprels[j]
        feats[i] = feats_key(ud.feats[j])
    groups: List[Dict[str, List[str]]] = [defaultdict(list) for _ in range(n)]
    raw: List[Tuple[int, str, str]] = []
    for j in range(m):
        if j in node_of or (ud.lemmas[j] in skip and ud.upos[j] == "PUNCT"):
            continue
        h, seen = ud.heads[j], 0
        while h > 0 and (h - 1) not in node_of and seen <= m:
            h, seen = ud.heads[h - 1], seen + 1
        if h <= 0 or seen > m:
            raise ValueError(f"removed word {j + 1} ({ud.forms[j]!r}) has no kept ancestor")
        host = node_of[h - 1]
        item = ud.deprels[j] + SEP + ud.lemmas[j] + SEP + ud.upos[j]
        groups[host][slot_of(ud.deprels[j], ud.lemmas[j])].append(item)
        raw.append((host, item, feats_key(ud.feats[j])))
    return DeepExample(t, deprels, feats, groups, raw)


# ---------------------------------------------------------------------------------- the model
class Completer:
    """The completion model (module docstring): four perceptrons and the candidate classes
    seen in training.

    rel, slot, feat, word: :class:`Perceptron`; rel_cands: "UPOS<US>deep relation" -> UD
    relations by frequency (and "<US>deep relation" for back-off); slot_cands: slot -> UPOS ->
    classes by frequency ("" = no word); feat_cands: "UPOS<US>deep features" -> UD feature
    strings by frequency; word_cands: item -> feature strings by frequency.  Build with
    :meth:`fit`; apply with :meth:`complete`.  Raises nothing of its own.
    """

    EPOCHS = 14   # en_partut T2 dev: 8 epochs 57.21, 14 epochs 57.58

    ALT_SLOTS = ("case", "mark", "other")   # slots whose lone word the forms stage's LM may replace by a runner-up
    ALT_K = 4
    ASSOC_SLOTS = ("case", "mark")   # the slots the association features (Assoc) weigh: case tables, mark tables
    DEFAULT_FILL = 4.0   # the fill bonus before the dev set chooses it (en_partut dev chose 8 of 0..16)
    PUNCT_SLOT_MIN = 30   # hosts with a punctuation lemma for it to get a slot of its own

    def __init__(self, rel: Perceptron, slot: Perceptron, feat: Perceptron, word: Perceptron,
                 rel_cands: Dict[str, List[str]], slot_cands: Dict[str, Dict[str, List[str]]],
                 feat_cands: Dict[str, List[str]], word_cands: Dict[str, List[str]],
                 slots: Sequence[str] = SLOTS + ("punct",)):
        self.rel, self.slot, self.feat, self.word = rel, slot, feat, word
        self.slots = list(slots)
        self._slotset = set(self.slots)
        self._tables: Dict[str, tuple] = {}
        self._relations = frozenset(k[1:] for k in rel_cands if k.startswith(SEP)) | DEEP_RELATIONS
        self.fill = 0.0   # added to every slot class but "no word" (tuned on dev: recall against precision)
        self.assoc: Optional[Assoc] = None   # lexical association features (Assoc), when trained with them
        self.rel_cands, self.slot_cands, self.feat_cands, self.word_cands = rel_cands, slot_cands, feat_cands, word_cands

    @staticmethod
    def _assoc_split(feats: List[str]) -> Tuple[List[str], List[str]]:
        """An :class:`Assoc` feature list as (case features, mark features)."""
        mark = [f for f in feats if f.startswith("am")]
        return [f for f in feats if not f.startswith("am")], mark

    def slot_classes(self, ex: DeepExample, i: int) -> Dict[str, str]:
        """The gold class of each slot of node ``i`` of an aligned example."""
        bags: Dict[str, List[str]] = defaultdict(list)
        for k, items in ex.groups[i].items():
            bags[k if k in self._slotset else "punct"].extend(items)
        return {sl: ITEM.join(sorted(bags.get(sl, ()))) for sl in self.slots}

    @property
    def relations(self) -> frozenset:
        """The deep relations seen in training and those of SR'19 (:data:`DEEP_RELATIONS`)."""
        return self._relations

    # ---- candidates
    def _rels(self, U: str, R: str) -> List[str]:
        return self.rel_cands.get(U + SEP + R) or self.rel_cands.get(SEP + R) or ["dep"]

    def _slots(self, slot: str, U: str) -> List[str]:
        return self.slot_cands.get(slot, {}).get(U) or [""]

    def _feats(self, U: str, F: str) -> List[str]:
        return self.feat_cands.get(U + SEP + F) or [F]

    def _wfeats(self, item: str) -> List[str]:
        return self.word_cands.get(item) or ["_"]

    # ---- decoding
    def predict(self, t: SRSentence, alternatives: Optional[list] = None
                ) -> Tuple[List[str], List[str], List[List[str]], List[str]]:
        """The completion decisions for a deep sentence: (UD relation per node, UD features per
        node, per node its generated items (relation, lemma, UPOS joined by U+001F), per
        generated word in that order its features).  ``_`` nodes get relation ``_``.
        alternatives: a list to which, per generated word in the same order, the lemmas of up
        to :attr:`ALT_K` runners-up are appended (a lone word of an :attr:`ALT_SLOTS` slot: the
        next best single words of its relation and UPOS, by score; [] for the others), for the
        forms stage's LM to choose among (:class:`wo.sr.stages.CompletionStage`)."""
        from .._fast._complete import pick_segments

        T = _Tree(t)
        n = len(t)
        keep = [x != "_" for x in t.lemmas]
        deprels = ["_"] * n
        rel, feat, slot, word = self.rel, self.feat, self.slot, self.word
        for i in range(n):
            if keep[i]:
                if t.heads[i] == 0:
                    deprels[i] = "root"
                else:
                    c = self._rels(t.upos[i], t.deprels[i])
                    deprels[i] = c[0] if len(c) == 1 else rel.pick_vector(rel.vector(node_features(T, i)), c)
        feats, items, wfeats = ["_"] * n, [[] for _ in range(n)], []
        for i in range(n):
            if not keep[i]:
                continue
            phi = node_features(T, i, deprels)
            U = t.upos[i]
            sc = slot.vector(phi + self.assoc.features(T, i) if self.assoc is not None else phi)
            lists, ids, starts, is_word = self._slot_table(U)
            best = pick_segments(sc, ids, starts, is_word, self.fill)
            chosen = [lists[si][best[si]] for si in range(len(self.slots))]
            fc = self._feats(U, feats_key(t.feats[i]))   # the features see the words generated (to + VERB: Inf)
            feats[i] = fc[0] if len(fc) == 1 else feat.pick_vector(
                feat.vector(phi + slot_features(self.slots, chosen)), fc)
            for si, s in enumerate(self.slots):
                c = chosen[si]
                if not c:
                    continue
                for r, it in enumerate(c.split(ITEM)):
                    items[i].append(it)
                    wc = self._wfeats(it)
                    wfeats.append(wc[0] if len(wc) == 1 else
                                  word.pick_vector(word.vector(word_features(T, i, it, c, r, deprels)), wc))
                    if alternatives is not None:
                        alternatives.append(self._runners_up(sc, s, U, c) if s in self.ALT_SLOTS and ITEM not in c
                                            else [])
        return deprels, feats, items, wfeats

    def _slot_table(self, U: str):
        """Per UPOS: the candidate lists of every slot, their class ids concatenated, the list
        starts and the marks of the classes that add words (for pick_segments); cached."""
        got = self._tables.get(U)
        if got is None:
            lists = [self._slots(s, U) for s in self.slots]
            ids = np.concatenate([self.slot.ids(lst, s + SEP) for s, lst in zip(self.slots, lists)]).astype(np.int32)
            starts = np.cumsum([0] + [len(lst) for lst in lists]).astype(np.int64)
            is_word = np.array([1 if c else 0 for lst in lists for c in lst], dtype=np.uint8)
            got = self._tables[U] = (lists, ids, starts, is_word)
        return got

    def _runners_up(self, sc: np.ndarray, s: str, U: str, c: str) -> List[str]:
        d, _, u = c.split(SEP)
        same = [x for x in self._slots(s, U) if x and x != c and ITEM not in x and x.startswith(d + SEP)
                and x.endswith(SEP + u)]
        cid = self.slot.cid
        score = lambda x: sc[cid[s + SEP + x]] if s + SEP + x in cid else 0.0  # noqa: E731
        same.sort(key=lambda x: -score(x))
        return [x.split(SEP)[1] for x in same[:self.ALT_K]]

    def complete(self, t: SRSentence, alternatives: Optional[list] = None) -> SRSentence:
        """The T1 sentence of deep sentence ``t`` (module docstring): kept nodes in input order,
        then the generated words after their hosts' order.  Raises ValueError for a sentence
        with nothing to realise."""
        known = self._relations
        for i, r in enumerate(t.deprels):
            if r not in known:
                raise ValueError(f"node {i + 1}: unknown deep relation {r!r} (SR'19 deep relations: "
                                 f"{', '.join(sorted(DEEP_RELATIONS))})")
        return build_t1(t, *self.predict(t, alternatives))

    # ---- training
    @classmethod
    def fit(cls, examples: Sequence[DeepExample], epochs: int = EPOCHS, seed: int = 1,
            log: Callable[[str], None] = lambda m: None, assoc: Optional[Assoc] = None) -> "Completer":
        """Train on aligned examples (:func:`align_deep`): the candidate tables from their
        counts, then ``epochs`` passes of each perceptron over a shuffle fixed by ``seed``.
        The relation perceptron trains first; the others see the gold relations.  assoc: an
        association table (:class:`Assoc`) whose features the model uses and carries."""
        pk = Counter(k for ex in examples for g in ex.groups for k in g if k.startswith("p:"))
        slots = list(SLOTS) + sorted(k for k, c in pk.items() if c >= cls.PUNCT_SLOT_MIN) + ["punct"]
        probe = cls(Perceptron(), Perceptron(), Perceptron(), Perceptron(), {}, {}, {}, {}, slots)
        rc, sc, fc, wc = defaultdict(Counter), defaultdict(lambda: defaultdict(Counter)), defaultdict(Counter), defaultdict(Counter)
        node_insts, word_insts = [], []
        for ex in examples:
            t = ex.t
            T = _Tree(t)
            gold_slots = [probe.slot_classes(ex, i) for i in range(len(t))]
            for i in range(len(t)):
                if t.lemmas[i] == "_" or not t.orig[i]:
                    continue
                U, R = t.upos[i], t.deprels[i]
                rc[U + SEP + R][ex.deprels[i]] += 1
                rc[SEP + R][ex.deprels[i]] += 1
                fc[U + SEP + feats_key(t.feats[i])][ex.feats[i]] += 1
                for s in slots:
                    sc[s][U][gold_slots[i][s]] += 1
                node_insts.append((T, i, ex, gold_slots[i]))
            for host, item, f in ex.words:
                wc[item][f] += 1
            for host in range(len(t)):
                for s in slots:
                    c = gold_slots[host][s]
                    if c:
                        for r, it in enumerate(c.split(ITEM)):
                            word_insts.append((T, host, it, c, r, ex))
        order = lambda c: [k for k, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))]  # noqa: E731
        rel_cands = {k: order(v) for k, v in rc.items()}
        slot_cands = {s: {u: order(c) for u, c in d.items()} for s, d in sc.items()}
        feat_cands = {k: order(v) for k, v in fc.items()}
        word_cands = {k: order(v) for k, v in wc.items()}
        m = cls(Perceptron(), Perceptron(), Perceptron(), Perceptron(), rel_cands, slot_cands, feat_cands, word_cands,
                slots)
        m.assoc = assoc
        # per example: the gold features of each generated item, in the order the slots list them
        gold_wf: Dict[int, Dict[Tuple[int, str], List[str]]] = {}
        for ex in examples:
            d: Dict[Tuple[int, str], List[str]] = defaultdict(list)
            for host, item, f in ex.words:
                d[(host, item)].append(f)
            gold_wf[id(ex)] = d
        rng = random.Random(seed)
        phis = [(node_features(T, i), node_features(T, i, ex.deprels)) for T, i, ex, _ in node_insts]
        aphis = [cls._assoc_split(assoc.features(T, i)) if assoc is not None else () for T, i, _, _ in node_insts]
        wphis = []
        used: Dict[Tuple[int, int, str], int] = defaultdict(int)
        for T, host, it, c, r, ex in word_insts:
            k = (id(ex), host, it)
            fl = gold_wf[id(ex)][(host, it)]
            wphis.append((word_features(T, host, it, c, r, ex.deprels), fl[min(used[k], len(fl) - 1)], it))
            used[k] += 1
        idx, widx = list(range(len(node_insts))), list(range(len(wphis)))
        for e in range(epochs):
            rng.shuffle(idx)
            rng.shuffle(widx)
            ok = Counter()
            for j in idx:
                T, i, ex, gs = node_insts[j]
                t = T.t
                U, R = t.upos[i], t.deprels[i]
                p0, p1 = phis[j]
                if t.heads[i] != 0:
                    ok["rel"] += m.rel.step(p0, ex.deprels[i], m._rels(U, R))
                ok["feat"] += m.feat.step(p1 + slot_features(slots, [gs[sl] for sl in slots]), ex.feats[i],
                                          m._feats(U, feats_key(t.feats[i])))
                m.slot.i += 1
                aj = aphis[j]
                sc = m.slot.scores(p1 + aj[0] + aj[1] if aj else p1)
                for s in slots:
                    guess = Perceptron.pick(sc, m._slots(s, U), s + SEP)
                    if guess == gs[s]:
                        ok["slot"] += 1
                    else:   # the case features weigh the case classes only, the mark features the mark ones
                        m.slot.update(p1 + aj[s == "mark"] if aj and s in cls.ASSOC_SLOTS else p1,
                                      s + SEP + gs[s], s + SEP + guess)
            for j in widx:
                phi, gold, it = wphis[j]
                ok["word"] += m.word.step(phi, gold, m._wfeats(it))
            log(f"completion epoch {e + 1}: train accuracy rel {ok['rel'] / max(1, len(idx)):.4f} "
                f"feats {ok['feat'] / max(1, len(idx)):.4f} slots {ok['slot'] / max(1, len(slots) * len(idx)):.4f} "
                f"word feats {ok['word'] / max(1, len(widx)):.4f}")
        for p in (m.rel, m.slot, m.feat, m.word):
            p.average()
            p.compile()
        m.fill = cls.DEFAULT_FILL
        return m

    # ---- JSON
    def to_json(self) -> dict:
        """JSON-serialisable form (the completion stage's entry in the model header)."""
        return {"rel": self.rel.to_json(), "slot": self.slot.to_json(), "feat": self.feat.to_json(),
                "word": self.word.to_json(), "rel_cands": self.rel_cands, "slot_cands": self.slot_cands,
                "feat_cands": self.feat_cands, "word_cands": self.word_cands, "slots": self.slots, "fill": self.fill,
                **({"assoc": self.assoc.to_json()} if self.assoc is not None else {})}

    @classmethod
    def from_json(cls, d: dict) -> "Completer":
        """Inverse of :meth:`to_json`.  Raises KeyError for a malformed form."""
        m = cls(Perceptron.from_json(d["rel"]), Perceptron.from_json(d["slot"]), Perceptron.from_json(d["feat"]),
                Perceptron.from_json(d["word"]),
                   d["rel_cands"], d["slot_cands"], d["feat_cands"], d["word_cands"], d["slots"])
        m.fill = float(d.get("fill", 0.0))
        if d.get("assoc") is not None:
            m.assoc = Assoc.from_json(d["assoc"])
        return m


def build_t1(t: SRSentence, deprels: Sequence[str], feats: Sequence[str], items: Sequence[Sequence[str]],
             wfeats: Sequence[str]) -> SRSentence:
    """The T1 sentence of deep sentence ``t`` from the completion decisions
    (:meth:`Completer.predict`): kept nodes in input order, then the generated words after
    their hosts' order.  Raises ValueError for a sentence with nothing to realise."""
    n = len(t)
    new = {}
    for i in range(n):
        if t.lemmas[i] != "_":
            new[i] = len(new)
    if not new:
        raise ValueError("no node with a word (every lemma is `_`)")
    rows = [(t.lemmas[i], t.upos[i], t.xpos[i], feats[i], 0 if t.heads[i] == 0 else new[t.heads[i] - 1] + 1,
             deprels[i], t.lin[i]) for i in new]
    w = 0
    for i in new:
        for it in items[i]:
            d, lem, u = it.split(SEP)
            rows.append((lem, u, "_", wfeats[w], new[i] + 1, d, 0))
            w += 1
    lemmas, upos, xpos, fs, heads, rels, lin = (list(c) for c in zip(*rows))
    return SRSentence(lemmas, upos, xpos, fs, heads, rels, rerank_lin(heads, lin), [None] * len(lemmas),
                      None, t.sent_id, t.line)


def rerank_lin(heads: Sequence[int], lin: Sequence[int]) -> List[int]:
    """``lin`` values re-ranked 1..k per head and side among the marked tokens (by their given
    rank): the deep input's ranks count removed words too."""
    out = [0] * len(lin)
    groups: Dict[Tuple[int, int], List[int]] = defaultdict(list)
    for i, v in enumerate(lin):
        if v:
            groups[(heads[i], 1 if v > 0 else -1)].append(i)
    for (h, side), members in groups.items():
        for r, i in enumerate(sorted(members, key=lambda i: (abs(lin[i]), i)), 1):
            out[i] = side * r
    return out


def without_mark(s, mark):
    """The UD sentence ``s`` (:class:`wo.io.conllu.Sentence`) without its ``mark`` tokens (a
    lemma, or a collection of them) that are leaves (heads renumbered), and per kept token its
    old index.  A sentence whose root would go is returned whole."""
    import dataclasses

    marks = _marks(mark)
    n = len(s)
    has_deps = {h - 1 for h in s.heads if h > 0}
    keep = [i for i in range(n) if not (s.lemmas[i] in marks and s.upos[i] == "PUNCT" and i not in has_deps
                                        and s.heads[i] != 0)]
    if len(keep) == n:
        return s, keep
    at = {old: new for new, old in enumerate(keep)}
    pick = lambda xs: [xs[i] for i in keep]  # noqa: E731
    return dataclasses.replace(s, forms=pick(s.forms), lemmas=pick(s.lemmas), upos=pick(s.upos), xpos=pick(s.xpos),
                               feats=pick(s.feats), heads=[0 if s.heads[i] == 0 else at[s.heads[i] - 1] + 1
                                                           for i in keep],
                               deprels=pick(s.deprels), misc=pick(s.misc)), keep


def gold_t1(ex: DeepExample, ud: Sentence, seed: int, index: int, skip="") -> SRSentence:
    """The T1 training sentence of an aligned pair, as completion would ideally make it: the UD
    sentence as T1 input with gold forms (:func:`wo.sr.t1.make_input`) without the punctuation
    ``skip`` (a lemma or a collection; inserted after ordering, :mod:`wo.sr.punct`), ``lin``
    kept only on the words the deep input keeps (re-ranked, :func:`rerank_lin`)."""
    from .t1 import make_input

    old = list(range(len(ud)))
    if _marks(skip):
        ud, old = without_mark(ud, skip)
    s = make_input(ud, seed, index, with_gold=True)
    kept = {o for o in ex.t.orig if o}
    lin = [v if old[s.orig[j] - 1] + 1 in kept else 0 for j, v in enumerate(s.lin)]
    s.lin = rerank_lin(s.heads, lin)
    return s


def check_deep(t: SRSentence) -> None:
    """Raise ValueError when ``t`` is not deep-track input (the model realises only that)."""
    if not is_deep(t):
        raise ValueError("shallow-track (T1) input, but this model realises deep-track (T2) input: "
                         "use a T1 model (wo sr models)")
