"""A CCG grammar read off training derivations (Zhang & Clark 2015, §3.1, following Fowler &
Penn 2010): the binary and unary rule instances seen in the treebank, with counts, instead of
hand-written combinatory rule schemata; plus the tag dictionary that proposes lexical
categories for input words (words seen often enough: their own categories; other words: the
categories of their POS tag, as Zhang & Clark §4.3 do with POS tags).

Categories are kept as their canonical strings (``str(Category)``, see :mod:`wo.ccg.auto`),
so a grammar is plain dicts and saves as small, deterministic JSON.

Combinator labels (:func:`classify_binary`), checked on the categories alone:

* ``fa`` forward application ``X/Y Y -> X``; ``ba`` backward application ``Y X\\Y -> X``;
* ``fc`` forward composition ``X/Y Y/Z -> X/Z``; ``bc`` backward composition ``Y\\Z X\\Y -> X\\Z``;
* ``lp`` left punctuation ``P X -> X``; ``rp`` right punctuation ``X P -> X`` (P one of
  ``, . ; :`` and CCGbank's ``LRB``/``RRB``);
* ``conj`` ``conj X -> X``; ``coord`` ``X X -> X`` (second step of coordination, there is no
  ``[conj]`` feature in the converted data); ``conj_r`` ``X conj -> X``;
* ``other`` for anything else.

Some instances fit several patterns: ``X/X X/X -> X/X`` is both ``fc`` and ``coord``,
``conj conj -> conj`` is ``conj``, ``coord`` and ``conj_r``.  :data:`DEFAULT_ORDER` decides
for ``coord`` (in ``corpora/ccg-en`` every such node is a coordination: its right child is a
``conj X`` phrase or a comma-separated list); :data:`README_ORDER` tries ``fc``/``bc`` first
and reproduces the combinator counts of the data's README and ``stats.json``.  Features are
matched leniently (``S[dcl]`` fits ``S``; ``S[dcl]`` does not fit ``S[b]``).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ..io.text import AtomicWriter, open_text
from .auto import Category, CategoryTable, Derivation, parse_category

COMBINATORS = ("fa", "ba", "fc", "bc", "lp", "rp", "conj", "coord", "conj_r", "other")
DEFAULT_ORDER = ("fa", "ba", "lp", "rp", "conj", "coord", "conj_r", "fc", "bc")
README_ORDER = ("fa", "ba", "fc", "bc", "lp", "rp", "conj", "coord", "conj_r")
FORMAT = "wo-ccg-grammar"
VERSION = 1
DEFAULT_MIN_COUNT = 20      # Clark & Curran (2007)'s tag-dictionary cut-off K
DEFAULT_POS_CUTOFF = 10


def _unify(a: Category, b: Category) -> bool:
    """Same category up to missing features (a feature matches no feature, not another one)."""
    if a is b:
        return True
    if a.feature is not None and b.feature is not None and a.feature != b.feature:
        return False
    if a.atom is not None or b.atom is not None:
        return a.atom == b.atom
    return a.slash == b.slash and _unify(a.result, b.result) and _unify(a.arg, b.arg)


def combinators(left: Union[Category, str], right: Union[Category, str],
                parent: Union[Category, str]) -> Tuple[str, ...]:
    """Every combinator label (see the module docstring) whose pattern ``left right -> parent``
    fits, in the order of :data:`COMBINATORS` (empty tuple: none fits, i.e. ``other``).
    Strings are parsed with :func:`wo.ccg.auto.parse_category` (CategoryError if bad)."""
    l, r, p = (c if isinstance(c, Category) else parse_category(c) for c in (left, right, parent))
    out = []
    if l.is_forward and _unify(l.arg, r) and _unify(l.result, p):
        out.append("fa")
    if r.is_backward and _unify(r.arg, l) and _unify(r.result, p):
        out.append("ba")
    if (l.is_forward and r.is_forward and p.is_forward and _unify(l.arg, r.result)
            and _unify(p.result, l.result) and _unify(p.arg, r.arg)):
        out.append("fc")
    if (l.is_backward and r.is_backward and p.is_backward and _unify(r.arg, l.result)
            and _unify(p.result, r.result) and _unify(p.arg, l.arg)):
        out.append("bc")
    if l.is_punct and _unify(p, r):
        out.append("lp")
    if r.is_punct and _unify(p, l):
        out.append("rp")
    if l.is_conj and _unify(p, r):
        out.append("conj")
    if _unify(l, r) and _unify(p, l):
        out.append("coord")
    if r.is_conj and _unify(p, l):
        out.append("conj_r")
    return tuple(out)


def classify_binary(left: Union[Category, str], right: Union[Category, str], parent: Union[Category, str],
                    order: Sequence[str] = DEFAULT_ORDER) -> str:
    """The combinator label of the binary rule instance ``left right -> parent``: the first
    label of ``order`` that fits (see :func:`combinators`), else ``"other"``.
    Raises CategoryError for a string that is not a category."""
    fits = combinators(left, right, parent)
    for name in order:
        if name in fits:
            return name
    return "other"


@dataclass
class Coverage:
    """Whether a derivation is inside a grammar (could be rebuilt by forced decoding).

    covered: bool, every rule instance and every lexical category is in the grammar;
    rules: bool, every binary and unary instance is; lexical: bool, every leaf's category is
    proposed by the tag dictionary for its word and POS; missing: list of str, one message per
    gap (``binary NP NP -> S``, ``unary S => NP``, ``lexical 'word'/POS: CAT``);
    counts of instances checked and found: binary_seen, binary_ok, unary_seen, unary_ok,
    leaves, leaves_ok (ints).
    """

    covered: bool = True
    rules: bool = True
    lexical: bool = True
    missing: List[str] = field(default_factory=list)
    binary_seen: int = 0
    binary_ok: int = 0
    unary_seen: int = 0
    unary_ok: int = 0
    leaves: int = 0
    leaves_ok: int = 0


def _inc(d: Dict, key, value, n: int = 1) -> None:
    sub = d.get(key)
    if sub is None:
        sub = d[key] = {}
    sub[value] = sub.get(value, 0) + n


def _sorted_counts(d: Dict[str, int]) -> Dict[str, int]:
    return {k: d[k] for k in sorted(d)}


class Grammar:
    """Rule instances and a tag dictionary counted over training derivations (Zhang & Clark
    2015, §3.1; Fowler & Penn 2010).

    Attributes (categories as canonical strings, counts as int):

    * binary: {(left, right): {result: count}};
    * unary: {child: {parent: count}};
    * words: {word: {lexical category: count}}; pos: {POS: {lexical category: count}};
    * roots: {root category: count}; sentences: number of derivations counted.

    Build with :meth:`from_derivations` (or :meth:`add` one at a time), keep with
    :meth:`save` / :meth:`load`.
    """

    def __init__(self):
        self.binary: Dict[Tuple[str, str], Dict[str, int]] = {}
        self.unary: Dict[str, Dict[str, int]] = {}
        self.words: Dict[str, Dict[str, int]] = {}
        self.pos: Dict[str, Dict[str, int]] = {}
        self.roots: Dict[str, int] = {}
        self.sentences = 0
        self._word_totals: Optional[Dict[str, int]] = None
        self._lexical: Optional[Dict[str, int]] = None

    # -- building ---------------------------------------------------------------------------

    @classmethod
    def from_derivations(cls, derivations: Iterable[Derivation]) -> "Grammar":
        """The grammar of ``derivations`` (items with ``error`` set are skipped)."""
        g = cls()
        for d in derivations:
            if d.error is None and d.root is not None:
                g.add(d)
        return g

    def add(self, derivation: Derivation) -> None:
        """Count the rule instances, lexical categories and root of one derivation.
        Raises ValueError for an error item."""
        if derivation.error is not None or derivation.root is None:
            raise ValueError(f"sentence {derivation.sent_id!r} has no derivation: {derivation.error}")
        self._word_totals = self._lexical = None
        self.sentences += 1
        root = derivation.root
        self.roots[str(root.cat)] = self.roots.get(str(root.cat), 0) + 1
        stack = [root]
        while stack:
            x = stack.pop()
            if x.is_leaf:
                c = str(x.cat)
                _inc(self.words, x.word, c)
                _inc(self.pos, x.pos, c)
                continue
            ch = x.children
            if len(ch) == 2:
                _inc(self.binary, (str(ch[0].cat), str(ch[1].cat)), str(x.cat))
            else:
                _inc(self.unary, str(ch[0].cat), str(x.cat))
            stack.extend(ch)

    # -- queries ----------------------------------------------------------------------------

    def binary_instances(self) -> Dict[Tuple[str, str, str], int]:
        """{(left, right, result): count} for every binary rule instance."""
        return {(l, r, p): c for (l, r), res in self.binary.items() for p, c in res.items()}

    def unary_instances(self) -> Dict[Tuple[str, str], int]:
        """{(child, parent): count} for every unary rule instance."""
        return {(c, p): n for c, res in self.unary.items() for p, n in res.items()}

    @property
    def n_binary(self) -> int:
        """Number of distinct binary rule instances."""
        return sum(len(v) for v in self.binary.values())

    @property
    def n_unary(self) -> int:
        """Number of distinct unary rule instances."""
        return sum(len(v) for v in self.unary.values())

    def has_binary(self, left: str, right: str, result: str) -> bool:
        """True if ``left right -> result`` was seen (category strings, canonical spelling)."""
        return result in self.binary.get((left, right), ())

    def has_unary(self, child: str, parent: str) -> bool:
        """True if ``child => parent`` was seen."""
        return parent in self.unary.get(child, ())

    def binary_results(self, left: str, right: str) -> Dict[str, int]:
        """{result: count} of the rule instances with these children ({} if none)."""
        return self.binary.get((left, right), {})

    def unary_results(self, child: str) -> Dict[str, int]:
        """{parent: count} of the unary rules applying to ``child`` ({} if none)."""
        return self.unary.get(child, {})

    def combinator(self, left: str, right: str, result: str, order: Sequence[str] = DEFAULT_ORDER) -> str:
        """The combinator label of a binary instance (:func:`classify_binary`)."""
        return classify_binary(left, right, result, order)

    def combinator_counts(self, order: Sequence[str] = DEFAULT_ORDER) -> Dict[str, int]:
        """{label: number of binary node tokens} over the counted derivations, plus ``"unary"``:
        number of unary node tokens."""
        out: Dict[str, int] = {}
        for (l, r, p), c in self.binary_instances().items():
            k = classify_binary(l, r, p, order)
            out[k] = out.get(k, 0) + c
        out["unary"] = sum(self.unary_instances().values())
        return out

    @property
    def lexical(self) -> Dict[str, int]:
        """{lexical category: count} over all leaves."""
        if self._lexical is None:
            lex: Dict[str, int] = {}
            for cats in self.words.values():
                for c, n in cats.items():
                    lex[c] = lex.get(c, 0) + n
            self._lexical = lex
        return self._lexical

    def word_count(self, word: str) -> int:
        """How often ``word`` occurs in the counted derivations."""
        if self._word_totals is None:
            self._word_totals = {w: sum(c.values()) for w, c in self.words.items()}
        return self._word_totals.get(word, 0)

    def categories(self, word: str, pos: Optional[str] = None, min_count: int = DEFAULT_MIN_COUNT,
                   pos_cutoff: int = DEFAULT_POS_CUTOFF) -> List[str]:
        """Lexical categories to propose for ``word`` with POS tag ``pos`` (Zhang & Clark 2015,
        §3.2 leaf edges; tag dictionary as in their §4.3 and Clark & Curran 2007).

        A word seen at least ``min_count`` times: every category it was seen with.  Otherwise:
        the categories seen with ``pos`` at least ``pos_cutoff`` times; for an unknown or
        missing POS, every lexical category seen at least ``pos_cutoff`` times.  Sorted by
        count, most frequent first (ties by string).  Returns a list of category strings
        (possibly empty, e.g. a POS whose categories are all rarer than the cut-off).
        """
        if self.word_count(word) >= min_count:
            seen = self.words[word]
        else:
            cats = self.pos.get(pos) if pos is not None else None
            seen = self.lexical if cats is None else cats
            seen = {c: n for c, n in seen.items() if n >= pos_cutoff}
        return sorted(seen, key=lambda c: (-seen[c], c))

    # -- coverage ---------------------------------------------------------------------------

    def coverage(self, derivation: Derivation, min_count: int = DEFAULT_MIN_COUNT,
                 pos_cutoff: int = DEFAULT_POS_CUTOFF) -> Coverage:
        """Whether every rule instance and lexical category of ``derivation`` is in this
        grammar, the leaves' categories checked against :meth:`categories` (with
        ``min_count`` and ``pos_cutoff``).  Raises ValueError for an error item."""
        if derivation.error is not None or derivation.root is None:
            raise ValueError(f"sentence {derivation.sent_id!r} has no derivation: {derivation.error}")
        cov = Coverage()
        cache: Dict[Tuple[str, Optional[str]], frozenset] = {}
        stack = [derivation.root]
        while stack:
            x = stack.pop()
            if x.is_leaf:
                cov.leaves += 1
                key = (x.word, x.pos)
                ok = cache.get(key)
                if ok is None:
                    ok = cache[key] = frozenset(self.categories(x.word, x.pos, min_count, pos_cutoff))
                if str(x.cat) in ok:
                    cov.leaves_ok += 1
                else:
                    cov.missing.append(f"lexical {x.word!r}/{x.pos}: {x.cat}")
                continue
            ch = x.children
            if len(ch) == 2:
                cov.binary_seen += 1
                l, r, p = str(ch[0].cat), str(ch[1].cat), str(x.cat)
                if self.has_binary(l, r, p):
                    cov.binary_ok += 1
                else:
                    cov.missing.append(f"binary {l} {r} -> {p}")
            else:
                cov.unary_seen += 1
                c, p = str(ch[0].cat), str(x.cat)
                if self.has_unary(c, p):
                    cov.unary_ok += 1
                else:
                    cov.missing.append(f"unary {c} => {p}")
            stack.extend(ch)
        cov.rules = cov.binary_ok == cov.binary_seen and cov.unary_ok == cov.unary_seen
        cov.lexical = cov.leaves_ok == cov.leaves
        cov.covered = cov.rules and cov.lexical
        return cov

    def coverage_report(self, derivations: Iterable[Derivation], min_count: int = DEFAULT_MIN_COUNT,
                        pos_cutoff: int = DEFAULT_POS_CUTOFF) -> Dict[str, float]:
        """Coverage of a set of derivations (error items skipped and counted in ``errors``).

        Returns {sentences, errors, covered, rules_covered, lexical_covered (sentence counts),
        share, rules_share, lexical_share (fractions of sentences), binary_token_share,
        unary_token_share, leaf_share (fractions of instances)}.
        """
        r = dict(sentences=0, errors=0, covered=0, rules_covered=0, lexical_covered=0)
        tot = dict(binary_seen=0, binary_ok=0, unary_seen=0, unary_ok=0, leaves=0, leaves_ok=0)
        for d in derivations:
            if d.error is not None or d.root is None:
                r["errors"] += 1
                continue
            cov = self.coverage(d, min_count, pos_cutoff)
            r["sentences"] += 1
            r["covered"] += cov.covered
            r["rules_covered"] += cov.rules
            r["lexical_covered"] += cov.lexical
            for k in tot:
                tot[k] += getattr(cov, k)
        n = max(1, r["sentences"])
        out: Dict[str, float] = dict(r)
        out["share"] = r["covered"] / n
        out["rules_share"] = r["rules_covered"] / n
        out["lexical_share"] = r["lexical_covered"] / n
        out["binary_token_share"] = tot["binary_ok"] / max(1, tot["binary_seen"])
        out["unary_token_share"] = tot["unary_ok"] / max(1, tot["unary_seen"])
        out["leaf_share"] = tot["leaves_ok"] / max(1, tot["leaves"])
        return out

    # -- arrays -----------------------------------------------------------------------------

    def arrays(self, table: CategoryTable) -> Dict[str, "numpy.ndarray"]:
        """The rule instances as numpy arrays over category ids of ``table`` (categories are
        added to it): ``binary`` int32 (n, 4) rows [left, right, result, count], ``unary``
        int32 (m, 3) rows [child, parent, count], ``lexical`` int32 (k, 2) rows [category,
        count]; rows sorted by the category strings."""
        import numpy as np

        b = [(table.id(l), table.id(r), table.id(p), c) for (l, r, p), c in sorted(self.binary_instances().items())]
        u = [(table.id(c), table.id(p), n) for (c, p), n in sorted(self.unary_instances().items())]
        x = [(table.id(c), n) for c, n in sorted(self.lexical.items())]
        return {"binary": np.asarray(b, dtype=np.int32).reshape(-1, 4),
                "unary": np.asarray(u, dtype=np.int32).reshape(-1, 3),
                "lexical": np.asarray(x, dtype=np.int32).reshape(-1, 2)}

    # -- files ------------------------------------------------------------------------------

    def to_json(self) -> Dict:
        """A JSON-ready dict (deterministic: instances sorted, dict keys sorted on dump)."""
        return {
            "format": FORMAT, "version": VERSION, "sentences": self.sentences,
            "binary": [[l, r, p, c, classify_binary(l, r, p)]
                       for (l, r, p), c in sorted(self.binary_instances().items())],
            "unary": [[c, p, n] for (c, p), n in sorted(self.unary_instances().items())],
            "words": {w: _sorted_counts(self.words[w]) for w in sorted(self.words)},
            "pos": {t: _sorted_counts(self.pos[t]) for t in sorted(self.pos)},
            "roots": _sorted_counts(self.roots),
        }

    @classmethod
    def from_json(cls, obj: Dict) -> "Grammar":
        """The grammar of a :meth:`to_json` dict.  Raises ValueError when ``obj`` is not one
        (wrong format or version, bad rows, categories that do not parse)."""
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            raise ValueError("not a wo CCG grammar (missing \"format\": \"wo-ccg-grammar\")")
        if obj.get("version") != VERSION:
            raise ValueError(f"unsupported CCG grammar version {obj.get('version')!r}")
        g = cls()
        try:
            g.sentences = int(obj["sentences"])
            for l, r, p, c, *_ in obj["binary"]:
                for s in (l, r, p):
                    parse_category(s)
                _inc(g.binary, (l, r), p, int(c))
            for c, p, n in obj["unary"]:
                parse_category(c), parse_category(p)
                _inc(g.unary, c, p, int(n))
            for attr in ("words", "pos"):
                table: Dict[str, Dict[str, int]] = {}
                for key, counts in obj[attr].items():
                    for c, n in counts.items():
                        parse_category(c)
                        _inc(table, key, c, int(n))
                setattr(g, attr, table)
            g.roots = {c: int(n) for c, n in obj["roots"].items()}
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bad CCG grammar: {exc}") from None
        return g

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Write the grammar as JSON (one line; ``.xz`` compressed; ``-`` = standard output),
        atomically.  The same grammar always gives the same bytes.  Raises OSError."""
        w = AtomicWriter(str(path))
        try:
            w.write(json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False, separators=(",", ":")))
        except BaseException:
            w.abort()
            raise
        w.commit()

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Grammar":
        """Read a grammar written by :meth:`save` (``.xz``/``.gz`` ok).  Raises
        FileNotFoundError, and ValueError for a file that is not a grammar."""
        with open_text(str(path)) as fh:
            try:
                obj = json.load(fh)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: not JSON: {exc}") from None
        return cls.from_json(obj)
