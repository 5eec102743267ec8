"""CCG for word ordering (Zhang & Clark 2015, §3): categories and derivations in CCGbank's
``.auto`` format (:mod:`wo.ccg.auto`: :func:`read_auto`, :func:`write_auto`, interned
:class:`Category` and :class:`CategoryTable`), and the grammar read off training derivations,
Fowler & Penn (2010) style (:mod:`wo.ccg.grammar`: rule instances, combinator labels, tag
dictionary, coverage); the search on the shared core (:mod:`wo.ccg.instance`, :mod:`wo.ccg.core`,
:mod:`wo.ccg.linearizer`, :mod:`wo.ccg.train`; grammar code in ``wo/_fast/_ccg.pyx``).  Imports
only the bottom layers (:mod:`wo.io`, :mod:`wo.eval`, :mod:`wo.model`, ``wo._fast``), never
another system."""
from .auto import (AutoFormatError, Category, CategoryError, CategoryTable, Derivation, Leaf, Node,
                   argument, atom, backward, format_derivation, forward, parse_category,
                   parse_derivation, read_auto, result, write_auto)
from .grammar import Coverage, Grammar, classify_binary, combinators

__all__ = ["AutoFormatError", "Category", "CategoryError", "CategoryTable", "Coverage", "Derivation",
           "Grammar", "Leaf", "Node", "argument", "atom", "backward", "classify_binary", "combinators",
           "format_derivation", "forward", "parse_category", "parse_derivation", "read_auto", "result",
           "write_auto"]
