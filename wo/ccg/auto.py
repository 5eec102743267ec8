"""CCG categories and derivations in CCGbank's machine-readable ``.auto`` format.

Source: the CCGbank ``.auto`` format (Hockenmaier & Steedman 2007) as described in
``corpora/ccg-en/README.md``; categories and derivations as used by Zhang & Clark (2015, §3.1).

A sentence takes two lines::

    ID=<sent_id> PARSER=GOLD NUMPARSE=1
    (<T S 0 2> (<L NP NNP NNP Bush NP{175}>) (<L S\\NP VBD VBD left S{173}\\NP{175}>) )

* internal node: ``(<T CAT HEAD NCHILD>`` child [child] ``)``; HEAD is the index (0 or 1) of
  the head child, NCHILD is 1 (unary rule) or 2 (binary rule);
* leaf: ``(<L CAT POS POS WORD PREDARG>)``; the two POS slots are CCGbank's modified and
  original tags, PREDARG the category with head co-indexation (kept as an opaque string).

The derivation line is read by splitting on single spaces, never by counting brackets, so
words such as ``(``, ``)``, ``:)``, ``<<`` or ``->`` need no escaping (no word contains a
space).  :func:`write_auto` writes the same bytes back (one space between tokens, `` )``
closing a node).

Categories (:class:`Category`) are interned: parsing the same string twice, or building the
same category with :func:`forward`/:func:`backward`, returns the same object.
"""
from __future__ import annotations

import os
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from ..io.text import AtomicWriter, display_name, read_bytes

FORWARD = "/"
BACKWARD = "\\"
PUNCTUATION = frozenset({",", ".", ";", ":", "LRB", "RRB"})   # CCGbank punctuation atoms
CONJ = "conj"


# --------------------------------------------------------------------------------------------
# categories
# --------------------------------------------------------------------------------------------

class CategoryError(ValueError):
    """A category string that cannot be parsed (``str()`` names the string and the problem)."""


class Category:
    """A CCG category: an atom (``S``, ``NP``, ``conj``, ``,`` ...) with an optional feature
    (``S[dcl]``), or a functor ``result/arg`` (forward) or ``result\\arg`` (backward).

    Do not construct directly: use :func:`parse_category`, :func:`atom`, :func:`forward`,
    :func:`backward`; they intern, so equal categories are the same object.  ``str(cat)`` is the
    canonical CCGbank spelling: complex results and arguments in brackets, nothing else
    (``((S\\NP)/(S\\NP))/NP``); a feature on a complex category follows its brackets
    (``(S\\NP)[conj]``).  Categories hash and compare by that string.

    Attributes: ``atom`` (str, None for functors), ``feature`` (str without brackets, or None),
    ``result`` and ``arg`` (Category, None for atoms), ``slash`` (``"/"``, ``"\\\\"``, or None).
    """

    __slots__ = ("atom", "feature", "result", "slash", "arg", "_str", "_hash")

    def __init__(self, atom: Optional[str], feature: Optional[str], result: Optional["Category"],
                 slash: Optional[str], arg: Optional["Category"], text: str):
        self.atom, self.feature, self.result, self.slash, self.arg = atom, feature, result, slash, arg
        self._str = text
        self._hash = hash(text)

    @property
    def is_atomic(self) -> bool:
        """True for atoms (``NP``, ``S[dcl]``, ``conj``, punctuation)."""
        return self.atom is not None

    @property
    def is_complex(self) -> bool:
        """True for functors ``X/Y`` and ``X\\Y``."""
        return self.atom is None

    @property
    def is_forward(self) -> bool:
        """True for ``X/Y``."""
        return self.slash == FORWARD

    @property
    def is_backward(self) -> bool:
        """True for ``X\\Y``."""
        return self.slash == BACKWARD

    @property
    def is_punct(self) -> bool:
        """True for the punctuation atoms ``,`` ``.`` ``;`` ``:`` (and CCGbank's ``LRB``, ``RRB``)."""
        return self.atom in PUNCTUATION and self.feature is None

    @property
    def is_conj(self) -> bool:
        """True for the atom ``conj``."""
        return self.atom == CONJ and self.feature is None

    def bracketed(self) -> str:
        """The string as an argument or result of a functor: complex categories in brackets."""
        if self.atom is None and self.feature is None:
            return "(" + self._str + ")"
        return self._str

    def __str__(self) -> str:
        return self._str

    def __repr__(self) -> str:
        return f"Category({self._str!r})"

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        return isinstance(other, Category) and other._str == self._str

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __lt__(self, other: "Category") -> bool:
        return self._str < other._str

    def __reduce__(self):                       # pickles as its string, unpickles interned
        return (parse_category, (self._str,))


_INTERN: Dict[str, Category] = {}      # canonical string -> Category
_PARSED: Dict[str, Category] = {}      # any spelling seen by parse_category -> Category
_SPECIAL = "()/\\[]"


def _intern(atom, feature, result, slash, arg) -> Category:
    if atom is not None:
        text = atom if feature is None else f"{atom}[{feature}]"
    else:
        text = result.bracketed() + slash + arg.bracketed()
        if feature is not None:
            text = f"({text})[{feature}]"
    cat = _INTERN.get(text)
    if cat is None:
        cat = _INTERN[text] = Category(atom, feature, result, slash, arg, text)
    return cat


def atom(name: str, feature: Optional[str] = None) -> Category:
    """The atomic category ``name`` (``name[feature]`` with a feature).

    Raises CategoryError if ``name`` is empty or contains one of ``()/\\[]`` or whitespace.
    """
    if not name or any(c in _SPECIAL or c.isspace() for c in name):
        raise CategoryError(f"bad atomic category name {name!r}")
    return _intern(name, feature, None, None, None)


def forward(result: Union[Category, str], arg: Union[Category, str]) -> Category:
    """``result/arg`` (strings are parsed with :func:`parse_category`)."""
    return _intern(None, None, _cat(result), FORWARD, _cat(arg))


def backward(result: Union[Category, str], arg: Union[Category, str]) -> Category:
    """``result\\arg`` (strings are parsed with :func:`parse_category`)."""
    return _intern(None, None, _cat(result), BACKWARD, _cat(arg))


def result(cat: Union[Category, str]) -> Category:
    """The result ``X`` of ``X/Y`` or ``X\\Y``.  Raises CategoryError for an atomic category."""
    c = _cat(cat)
    if c.atom is not None:
        raise CategoryError(f"atomic category {c} has no result")
    return c.result


def argument(cat: Union[Category, str]) -> Category:
    """The argument ``Y`` of ``X/Y`` or ``X\\Y``.  Raises CategoryError for an atomic category."""
    c = _cat(cat)
    if c.atom is not None:
        raise CategoryError(f"atomic category {c} has no argument")
    return c.arg


def _cat(c: Union[Category, str]) -> Category:
    return c if isinstance(c, Category) else parse_category(c)


def parse_category(text: str) -> Category:
    """Parse a category string: ``NP``, ``S[dcl]``, ``conj``, ``,``, ``(S\\NP)/NP``,
    ``((S\\NP)/(S\\NP))/NP``, ``(S\\NP)[conj]``.

    Slashes without brackets associate to the left (``S\\NP/NP`` = ``(S\\NP)/NP``); redundant
    brackets are accepted (``((NP))`` = ``NP``).  Returns the interned :class:`Category` (its
    ``str()`` is the canonical spelling).  Raises CategoryError for anything else (empty
    string, unbalanced brackets, a slash without an operand, spaces, brackets nested hundreds
    deep).
    """
    cat = _PARSED.get(text)
    if cat is not None:
        return cat
    if not isinstance(text, str):
        raise CategoryError(f"category must be a str, not {type(text).__name__}")
    try:
        pos, cat = _parse_cat(text, 0)
    except RecursionError:
        raise CategoryError(f"bad category {text[:60]!r}...: brackets nested too deeply") from None
    if pos != len(text):
        raise CategoryError(f"bad category {text!r}: unexpected {text[pos]!r} at offset {pos}")
    if len(_PARSED) < 1_000_000:
        _PARSED[text] = cat
    return cat


def _parse_cat(s: str, i: int) -> Tuple[int, Category]:
    i, left = _parse_primary(s, i)
    while i < len(s) and s[i] in "/\\":
        slash = s[i]
        i, right = _parse_primary(s, i + 1)
        left = _intern(None, None, left, slash, right)
    return i, left


def _parse_feature(s: str, i: int) -> Tuple[int, Optional[str]]:
    if i < len(s) and s[i] == "[":
        j = s.find("]", i)
        if j < 0:
            raise CategoryError(f"bad category {s!r}: unclosed feature bracket at offset {i}")
        feat = s[i + 1:j]
        if not feat or any(c in _SPECIAL or c.isspace() for c in feat):
            raise CategoryError(f"bad category {s!r}: bad feature {feat!r}")
        return j + 1, feat
    return i, None


def _parse_primary(s: str, i: int) -> Tuple[int, Category]:
    if i >= len(s):
        raise CategoryError(f"bad category {s!r}: unexpected end")
    if s[i] == "(":
        i, inner = _parse_cat(s, i + 1)
        if i >= len(s) or s[i] != ")":
            raise CategoryError(f"bad category {s!r}: missing ')' at offset {i}")
        i, feat = _parse_feature(s, i + 1)
        if feat is not None:
            if inner.feature is not None:
                raise CategoryError(f"bad category {s!r}: two features")
            inner = _intern(inner.atom, feat, inner.result, inner.slash, inner.arg)
        return i, inner
    j = i
    while j < len(s) and s[j] not in _SPECIAL and not s[j].isspace():
        j += 1
    if j == i:
        raise CategoryError(f"bad category {s!r}: unexpected {s[i]!r} at offset {i}")
    name = s[i:j]
    j, feat = _parse_feature(s, j)
    return j, _intern(name, feat, None, None, None)


class CategoryTable:
    """Interning of categories to small integer ids (0, 1, 2, ... in order of first use).

    ``table.id(cat)`` adds a category (Category or str) and returns its id; ``table.get(cat)``
    returns the id or -1 without adding; ``table[i]`` is the Category with id ``i``,
    ``table.string(i)`` its string; ``len(table)``; ``cat in table``.  ``to_list()`` and
    ``CategoryTable(list_of_strings)`` save and restore a table with the same ids.
    Raises CategoryError for strings that are not categories, IndexError for unknown ids.
    """

    def __init__(self, categories: Iterable[Union[Category, str]] = ()):
        self._ids: Dict[Category, int] = {}
        self._cats: List[Category] = []
        for c in categories:
            self.id(c)

    def id(self, cat: Union[Category, str]) -> int:
        """The id of ``cat``, adding it if new."""
        c = _cat(cat)
        i = self._ids.get(c)
        if i is None:
            i = self._ids[c] = len(self._cats)
            self._cats.append(c)
        return i

    def get(self, cat: Union[Category, str]) -> int:
        """The id of ``cat``, or -1 if it is not in the table."""
        return self._ids.get(_cat(cat), -1)

    def string(self, i: int) -> str:
        """The canonical string of the category with id ``i``."""
        return str(self._cats[i])

    def to_list(self) -> List[str]:
        """The category strings in id order."""
        return [str(c) for c in self._cats]

    def __getitem__(self, i: int) -> Category:
        return self._cats[i]

    def __len__(self) -> int:
        return len(self._cats)

    def __contains__(self, cat) -> bool:
        try:
            return _cat(cat) in self._ids
        except CategoryError:
            return False

    def __iter__(self) -> Iterator[Category]:
        return iter(self._cats)


# --------------------------------------------------------------------------------------------
# derivations
# --------------------------------------------------------------------------------------------

class Leaf:
    """A word with its lexical category: ``(<L CAT POS POS WORD PREDARG>)``.

    cat: Category; pos: str (first POS slot, here the EWT XPOS); word: str; predarg: str (the
    5th field, category with ``{n}`` co-indexation, opaque) or None (written as ``str(cat)``);
    orig_pos: str or None, the second POS slot when it differs from ``pos`` (CCGbank: modified
    vs original tag).
    """

    __slots__ = ("cat", "pos", "word", "predarg", "orig_pos")

    def __init__(self, cat: Union[Category, str], pos: str, word: str, predarg: Optional[str] = None,
                 orig_pos: Optional[str] = None):
        self.cat = _cat(cat)
        self.pos, self.word, self.predarg = pos, word, predarg
        self.orig_pos = None if orig_pos == pos else orig_pos

    is_leaf = True

    def leaves(self) -> List["Leaf"]:
        """``[self]``."""
        return [self]

    def __eq__(self, other) -> bool:
        return (isinstance(other, Leaf) and self.cat == other.cat and self.word == other.word
                and self.pos == other.pos and self.predarg == other.predarg
                and self.orig_pos == other.orig_pos)

    __hash__ = None

    def __repr__(self) -> str:
        return f"Leaf({str(self.cat)!r}, {self.pos!r}, {self.word!r})"


class Node:
    """An internal node: ``(<T CAT HEAD NCHILD> child [child] )``.

    cat: Category; head: int, index of the head child (0 or 1; 0 for unary nodes); children:
    tuple of 1 (unary rule) or 2 (binary rule) Node/Leaf.  Raises ValueError for another
    number of children or a head that is not a child index.
    """

    __slots__ = ("cat", "head", "children")

    is_leaf = False

    def __init__(self, cat: Union[Category, str], head: int, children: Sequence[Union["Node", Leaf]]):
        if len(children) not in (1, 2):
            raise ValueError(f"a node has 1 or 2 children, not {len(children)}")
        if not 0 <= head < len(children):
            raise ValueError(f"head {head} is not a child index (node has {len(children)} children)")
        self.cat = _cat(cat)
        self.head = head
        self.children = tuple(children)

    def leaves(self) -> List[Leaf]:
        """The leaves below this node, left to right."""
        out: List[Leaf] = []
        stack: List[Union[Node, Leaf]] = [self]
        while stack:
            x = stack.pop()
            if x.is_leaf:
                out.append(x)
            else:
                stack.extend(reversed(x.children))
        return out

    def nodes(self) -> List["Node"]:
        """The internal nodes of this subtree, pre-order (this node first)."""
        out: List[Node] = []
        stack: List[Union[Node, Leaf]] = [self]
        while stack:
            x = stack.pop()
            if not x.is_leaf:
                out.append(x)
                stack.extend(reversed(x.children))
        return out

    def __eq__(self, other) -> bool:
        return (isinstance(other, Node) and self.cat == other.cat and self.head == other.head
                and self.children == other.children)

    __hash__ = None

    def __repr__(self) -> str:
        return f"Node({str(self.cat)!r}, {self.head}, <{len(self.children)} children>)"


Tree = Union[Node, Leaf]


class Derivation:
    """One sentence of an ``.auto`` file: header line and derivation tree.

    sent_id: str (the ``ID=`` value; "" if unknown); root: Node or Leaf, None when ``error``;
    header: str, the whole ID line as read (None: written as ``ID=<sent_id> PARSER=GOLD
    NUMPARSE=1``); line: 1-based line of the ID line in its file (of the offending line when
    ``error``); error: message or None (the :class:`wo.io.items.Item` convention: a bad
    sentence is returned with its error, never raised).
    """

    __slots__ = ("sent_id", "root", "header", "line", "error")

    def __init__(self, sent_id: str, root: Optional[Tree], header: Optional[str] = None,
                 line: int = 0, error: Optional[str] = None):
        self.sent_id, self.root, self.header, self.line, self.error = sent_id, root, header, line, error

    def leaves(self) -> List[Leaf]:
        """The leaves left to right ([] for an error item)."""
        return [] if self.root is None else self.root.leaves()

    def nodes(self) -> List[Node]:
        """The internal nodes, pre-order ([] for an error item or a one-leaf derivation)."""
        return [] if self.root is None or self.root.is_leaf else self.root.nodes()

    @property
    def words(self) -> List[str]:
        """The words (leaf order = sentence order)."""
        return [x.word for x in self.leaves()]

    @property
    def pos(self) -> List[str]:
        """The POS tags of the leaves (first POS slot)."""
        return [x.pos for x in self.leaves()]

    @property
    def categories(self) -> List[Category]:
        """The lexical categories of the leaves."""
        return [x.cat for x in self.leaves()]

    def __len__(self) -> int:
        return len(self.leaves())

    def __repr__(self) -> str:
        if self.error:
            return f"Derivation({self.sent_id!r}, error={self.error!r}, line={self.line})"
        return f"Derivation({self.sent_id!r}, {len(self)} leaves, line={self.line})"


class AutoFormatError(ValueError):
    """A malformed ``.auto`` derivation line; ``str()`` starts with ``bad .auto derivation:``."""

    def __init__(self, message: str):
        super().__init__(f"bad .auto derivation: {message}")


def parse_derivation(text: str) -> Tree:
    """Parse one derivation line (without the newline) into its root Node or Leaf.

    Tokens are separated by single spaces (extra spaces are tolerated).  Raises
    AutoFormatError (a ValueError) for a bad bracket structure, a node whose NCHILD disagrees
    with its children (``expected 2 children, got 1``), a head that is not 0/1, a leaf without
    its 6 fields, a truncated line, or a category that does not parse.
    """
    toks = text.split(" ")
    n = len(toks)
    cats = _PARSED
    stack: List[list] = []      # frames [cat, head, nchild, children]
    root: Optional[Tree] = None
    i = 0
    try:
        while i < n:
            t = toks[i]
            if t == "(<L":
                if i + 5 >= n:
                    raise AutoFormatError(f"truncated leaf at token {i + 1} (a leaf has 6 fields)")
                c, p1, p2, w, pa = toks[i + 1], toks[i + 2], toks[i + 3], toks[i + 4], toks[i + 5]
                if not pa.endswith(">)") or not w:
                    raise AutoFormatError(f"leaf at token {i + 1} is not (<L CAT POS POS WORD PREDARG>): "
                                          + " ".join(toks[i:i + 6]))
                cat = cats.get(c) or parse_category(c)
                leaf = Leaf.__new__(Leaf)
                leaf.cat, leaf.pos, leaf.word, leaf.predarg = cat, p1, w, pa[:-2]
                leaf.orig_pos = None if p2 == p1 else p2
                i += 6
                x: Tree = leaf
            elif t == "(<T":
                if i + 3 >= n:
                    raise AutoFormatError(f"truncated node at token {i + 1}")
                c, h, k = toks[i + 1], toks[i + 2], toks[i + 3]
                if not k.endswith(">") or k[:-1] not in ("1", "2") or h not in ("0", "1"):
                    raise AutoFormatError(f"node at token {i + 1} is not (<T CAT HEAD NCHILD> with HEAD "
                                          f"0/1 and NCHILD 1/2: " + " ".join(toks[i:i + 4]))
                cat = cats.get(c) or parse_category(c)
                stack.append([cat, int(h), int(k[:-1]), []])
                i += 4
                continue
            elif t == ")":
                if not stack:
                    raise AutoFormatError(f"unbalanced ')' at token {i + 1}")
                cat, h, k, children = stack.pop()
                if len(children) != k:
                    raise AutoFormatError(f"expected {k} children, got {len(children)} "
                                          f"(node {cat} closed at token {i + 1})")
                if h >= k:
                    raise AutoFormatError(f"head {h} of a unary node {cat} (token {i + 1})")
                node = Node.__new__(Node)
                node.cat, node.head, node.children = cat, h, tuple(children)
                i += 1
                x = node
            elif t == "":
                i += 1
                continue
            else:
                raise AutoFormatError(f"unexpected token {t!r} at token {i + 1}")
            if stack:
                children = stack[-1][3]
                if len(children) == stack[-1][2]:
                    raise AutoFormatError(f"expected {stack[-1][2]} children, got more "
                                          f"(node {stack[-1][0]}, token {i})")
                children.append(x)
            elif root is None:
                root = x
            else:
                raise AutoFormatError(f"text after the end of the tree at token {i}")
    except CategoryError as exc:
        raise AutoFormatError(str(exc)) from None
    if stack:
        raise AutoFormatError(f"truncated: {len(stack)} node(s) not closed at the end of the line")
    if root is None:
        raise AutoFormatError("empty derivation line")
    return root


def format_derivation(root: Tree) -> str:
    """The ``.auto`` derivation line of a tree (no newline): tokens separated by one space,
    a node closed by `` )``, as CCGbank writes it."""
    out: List[str] = []
    stack: List[object] = [root]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            out.append(x)
        elif x.is_leaf:
            pa = str(x.cat) if x.predarg is None else x.predarg
            p2 = x.pos if x.orig_pos is None else x.orig_pos
            out.append(f"(<L {x.cat} {x.pos} {p2} {x.word} {pa}>)")
        else:
            out.append(f"(<T {x.cat} {x.head} {len(x.children)}>")
            stack.append(")")
            stack.extend(reversed(x.children))
    return " ".join(out)


def _header_id(header: str) -> str:
    first = header.split(" ", 1)[0]
    return first[3:]


def _decode_lines(data: bytes) -> List[Optional[str]]:
    try:
        lines: List[Optional[str]] = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        lines = []
        for raw in data.split(b"\n"):
            try:
                lines.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                lines.append(None)
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln is not None and ln.endswith("\r") else ln for ln in lines]


def read_auto(path: Union[str, os.PathLike]) -> List[Derivation]:
    """Read every sentence of a CCGbank ``.auto`` file (``.xz``/``.gz`` decompressed, ``-`` =
    standard input).

    Returns a list of :class:`Derivation`, one per sentence in file order; a malformed one is
    returned with ``error`` set (``bad .auto derivation: ...``, ``ID line without a derivation
    line``, ``derivation line without an ID= line``, ``invalid UTF-8``...) and ``line`` = the
    1-based number of the offending line, and reading goes on at the next ``ID=`` line.  Blank
    lines are skipped.  Raises FileNotFoundError for a missing file; nothing else is raised.
    """
    data = read_bytes(str(path))
    lines = _decode_lines(data[3:] if data.startswith(b"\xef\xbb\xbf") else data)   # a BOM is not text
    out: List[Derivation] = []
    pending: Optional[Tuple[int, str]] = None      # (line number, header) waiting for its tree
    for no, txt in enumerate(lines, 1):
        if txt is None:
            if pending is not None:
                out.append(Derivation(_header_id(pending[1]), None, pending[1], no, "invalid UTF-8"))
                pending = None
            else:
                out.append(Derivation("", None, None, no, "invalid UTF-8"))
            continue
        if txt.startswith("ID="):
            if pending is not None:
                out.append(Derivation(_header_id(pending[1]), None, pending[1], pending[0],
                                      "ID line without a derivation line after it"))
            pending = (no, txt)
            continue
        if not txt.strip():
            continue
        if pending is None:
            out.append(Derivation("", None, None, no,
                                  "derivation line without an ID= line before it" if txt.startswith("(")
                                  else f"expected an ID= line, found {txt[:40]!r}"))
            continue
        start, header = pending
        pending = None
        try:
            root = parse_derivation(txt)
        except AutoFormatError as exc:
            out.append(Derivation(_header_id(header), None, header, no, str(exc)))
            continue
        out.append(Derivation(_header_id(header), root, header, start))
    if pending is not None:
        out.append(Derivation(_header_id(pending[1]), None, pending[1], pending[0],
                              "ID line without a derivation line after it (end of file)"))
    return out


def iter_auto_lines(derivations: Iterable[Derivation]) -> Iterator[str]:
    """The lines (without newlines) of an ``.auto`` file for ``derivations``: header, then
    derivation line.  Raises ValueError for a derivation with ``error`` set or no tree."""
    for d in derivations:
        if d.error is not None or d.root is None:
            raise ValueError(f"cannot write sentence {d.sent_id!r} (line {d.line}): "
                             f"{d.error or 'no derivation'}")
        yield d.header if d.header else f"ID={d.sent_id} PARSER=GOLD NUMPARSE=1"
        yield format_derivation(d.root)


def write_auto(derivations: Iterable[Derivation], path_or_fh) -> None:
    """Write derivations in ``.auto`` format: for each, its header line and derivation line.

    path_or_fh: a path (``.xz`` compressed; ``-`` = standard output; written to a temporary
    file and renamed into place) or a text file object (written to, not closed).  Reading a
    file with :func:`read_auto` and writing it back gives the same bytes when its categories
    are spelt canonically and its tokens separated by single spaces (true of CCGbank and of
    ``corpora/ccg-en``).  Raises ValueError for an error item (nothing is left at ``path``)
    and OSError when the file cannot be written.
    """
    if isinstance(path_or_fh, (str, os.PathLike)):
        w = AtomicWriter(str(path_or_fh))
        try:
            for ln in iter_auto_lines(derivations):
                w.write(ln)
        except BaseException:
            w.abort()
            raise
        w.commit()
        return
    for ln in iter_auto_lines(derivations):
        path_or_fh.write(ln + "\n")


def error_lines(path: Union[str, os.PathLike], derivations: Iterable[Derivation]) -> List[str]:
    """``file:line: message`` for every derivation with an error (for stderr reports)."""
    return [f"{display_name(str(path))}:{d.line}: {d.error}" for d in derivations if d.error]
