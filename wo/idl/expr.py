"""IDL-expressions (Nederhof & Satta 2004; Soricut & Marcu 2005, section 2): syntax tree,
text syntax and parser, the bag shorthand, and the language by the operator semantics.

Text syntax (one expression per line)::

    expr     := OP "(" expr ("," expr)* ")" | atom
    OP       := C | I | D | L          concatenation, interleave, disjunction, lock
              | · | ‖ | ∥ | ∨ | ×      the same operators in Nederhof & Satta's notation
    atom     := a run of characters other than white space , ( ) "
              | "..."                  quoted: any characters, \\" and \\\\ escaped

An operator name is an operator only when "(" follows it (spaces allowed), so the word ``I``
stays a word; any other name followed by "(" is an unknown operator.  ``C``, ``I`` and ``D``
take one or more arguments, ``L`` exactly one.  Example (the paper's expression 1)::

    I(finally, C(L(D(C(the, prisoners), C(the, captives))), were, released))

The bag shorthand (``--input-format bag``): a line of space-separated words w1 .. wn means
``C(<s>, I(w1, ..., wn), </s>)``.  Expressions that do not begin with ``<s>`` and end with
``</s>`` are wrapped so: the search maximises the sentence's LM probability.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import FrozenSet, List, Sequence, Tuple, Union

BOS, EOS = "<s>", "</s>"
OPS = {"C": "C", "I": "I", "D": "D", "L": "L",
       "\u00b7": "C", "\u2016": "I", "\u2225": "I", "\u2228": "D", "\u00d7": "L"}
OP_NAMES = {"C": "concatenation", "I": "interleave", "D": "disjunction", "L": "lock"}
_SPECIAL = set(' \t\r\n,()"')


class IDLSyntaxError(ValueError):
    """A malformed expression: ``line`` and ``column`` (1-based) locate the problem."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(f"{line}:{column}: {message}")
        self.message, self.line, self.column = message, line, column


@dataclass(frozen=True)
class Word:
    """A word (one token)."""

    form: str

    def __str__(self) -> str:
        if not self.form or any(c in _SPECIAL for c in self.form) or (self.form in OPS):
            return '"' + self.form.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return self.form


@dataclass(frozen=True)
class Op:
    """An operator node: op in "C", "I", "D", "L" and its argument expressions."""

    op: str
    args: Tuple["Expr", ...]

    def __str__(self) -> str:
        return f"{self.op}({', '.join(map(str, self.args))})"


Expr = Union[Word, Op]


def words(e: Expr) -> List[str]:
    """The word tokens of an expression, left to right (every disjunct included)."""
    if isinstance(e, Word):
        return [e.form]
    return [w for a in e.args for w in words(a)]


def bag(tokens: Sequence[str]) -> Expr:
    """``C(<s>, I(w1, ..., wn), </s>)`` for a bag of words (n >= 1); raises ValueError if empty."""
    if not tokens:
        raise ValueError("empty bag")
    inner = Word(tokens[0]) if len(tokens) == 1 else Op("I", tuple(Word(t) for t in tokens))
    return Op("C", (Word(BOS), inner, Word(EOS)))


def sentence_wrapped(e: Expr) -> Expr:
    """``e`` itself when it is C(<s>, ..., </s>), else ``C(<s>, e, </s>)``."""
    if (isinstance(e, Op) and e.op == "C" and len(e.args) >= 3 and e.args[0] == Word(BOS)
            and e.args[-1] == Word(EOS)):
        return e
    return Op("C", (Word(BOS), e, Word(EOS)))


class _Parser:
    def __init__(self, text: str, line: int):
        self.s, self.i, self.line = text, 0, line

    def err(self, msg: str, i: int = -1):
        raise IDLSyntaxError(msg, self.line, (self.i if i < 0 else i) + 1)

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] in " \t\r\n":
            self.i += 1

    def atom(self) -> Tuple[str, int, bool]:
        s, start = self.s, self.i
        if s[self.i] == '"':
            self.i += 1
            out = []
            while True:
                if self.i >= len(s):
                    self.err("unterminated quoted word", start)
                c = s[self.i]
                if c == "\\" and self.i + 1 < len(s):
                    out.append(s[self.i + 1])
                    self.i += 2
                    continue
                self.i += 1
                if c == '"':
                    return "".join(out), start, True
                out.append(c)
        while self.i < len(s) and s[self.i] not in _SPECIAL:
            self.i += 1
        return s[start:self.i], start, False

    def expr(self) -> Expr:
        self.ws()
        if self.i >= len(self.s):
            self.err("expression expected, found end of line")
        c = self.s[self.i]
        if c in ",)":
            self.err(f"expression expected, found '{c}'")
        if c == "(":
            self.err("'(' without an operator name")
        name, start, quoted = self.atom()
        self.ws()
        if quoted or self.i >= len(self.s) or self.s[self.i] != "(":
            if not name:
                self.err("empty word", start)
            return Word(name)
        if name not in OPS:
            self.err(f"unknown operator '{name}' (C, I, D, L or \u00b7 \u2016 \u2228 \u00d7)", start)
        op = OPS[name]
        open_at = self.i
        self.i += 1
        self.ws()
        if self.i < len(self.s) and self.s[self.i] == ")":
            self.err(f"empty operator {name}() ({OP_NAMES[op]} needs an argument)", start)
        args = [self.expr()]
        while True:
            self.ws()
            if self.i >= len(self.s):
                self.err("unbalanced brackets: '(' is never closed", open_at)
            c = self.s[self.i]
            if c == ")":
                self.i += 1
                break
            if c != ",":
                self.err(f"',' or ')' expected, found '{c}'")
            self.i += 1
            args.append(self.expr())
        if op == "L" and len(args) != 1:
            self.err(f"lock takes exactly one argument, found {len(args)}", start)
        if len(args) == 1 and op != "L":
            return args[0]
        return Op(op, tuple(args))


def parse(text: str, line: int = 1) -> Expr:
    """Parse one expression (the syntax in the module docstring).

    Raises IDLSyntaxError (with line and column) for unbalanced brackets, an empty operator, an
    unknown operator, a missing argument or trailing text.
    """
    p = _Parser(text, line)
    e = p.expr()
    p.ws()
    if p.i < len(p.s):
        c = p.s[p.i]
        if c == ")":
            p.err("unbalanced brackets: ')' without '('")
        nxt = p.s[p.i:].split()[0]
        p.err(f"unexpected '{nxt}' after the expression (join several words with an operator, "
              "e.g. I(...), or read the line as a bag with --input-format bag)")
    return e


# ----------------------------------------------------------------- semantics (brute force)
Units = Tuple[Tuple[str, ...], ...]


def _shuffles(seqs: List[Units]) -> FrozenSet[Units]:
    if len(seqs) == 1:
        return frozenset([seqs[0]])
    out = set()
    for i, s in enumerate(seqs):
        if not s:
            continue
        rest = list(seqs)
        rest[i] = s[1:]
        rest = [r for r in rest if r] or [()]
        for tail in _shuffles(rest):
            out.add((s[0],) + tail)
    return frozenset(out)


def _lang(e: Expr) -> FrozenSet[Units]:
    if isinstance(e, Word):
        return frozenset([((e.form,),)])
    langs = [_lang(a) for a in e.args]
    if e.op == "C":
        return frozenset(sum(p, ()) for p in itertools.product(*langs))
    if e.op == "D":
        return frozenset().union(*langs)
    if e.op == "L":
        return frozenset([(tuple(w for u in s for w in u),) for s in langs[0]])
    out = set()
    for p in itertools.product(*langs):
        out |= _shuffles(list(p))
    return frozenset(out)


def language(e: Expr) -> FrozenSet[Tuple[str, ...]]:
    """The finite language of ``e`` by the operator semantics (Nederhof & Satta 2004, section 2):
    a set of word tuples.  Exponential: for tests and small expressions only."""
    return frozenset(tuple(w for u in s for w in u) for s in _lang(e))
