"""N-gram language models: interpolated modified Kneser-Ney estimation by map-reduce
(:mod:`wo.lm.estimation`), ARPA and a memory-mapped binary (:mod:`wo.lm.files`), and stateful
Cython queries (:class:`LanguageModel` over ``wo._fast._lm``)."""
from .estimation import NgramTables, estimate, train
from .files import LMError, read_arpa, write_arpa, write_binary
from .model import CorpusScore, LanguageModel, save_tables

__all__ = ["CorpusScore", "LMError", "LanguageModel", "NgramTables", "estimate", "read_arpa",
           "save_tables", "train", "write_arpa", "write_binary"]
