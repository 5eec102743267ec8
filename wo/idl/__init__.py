"""IDL-expressions intersected with an n-gram language model (Soricut & Marcu 2005; IDL-graphs
of Nederhof & Satta 2004): the expression syntax (:mod:`wo.idl.expr`), IDL-graphs and cuts
(:mod:`wo.idl.graph`), and the searches (:class:`IDLRealizer` over ``wo._fast._idl``)."""
from .expr import IDLSyntaxError, bag, language, parse
from .graph import IDLGraph, bag_unfolding, compile_expr
from .realize import IDLRealizer, Realization

__all__ = ["IDLGraph", "IDLRealizer", "IDLSyntaxError", "Realization", "bag", "bag_unfolding",
           "compile_expr", "language", "parse"]
