"""N-gram language models: interpolated modified Kneser-Ney estimation by map-reduce
(:mod:`wo.lm.estimation`), ARPA and a memory-mapped binary in two structures -- probing hash
tables (:mod:`wo.lm.files`) or a compact trie, exact or quantized (:mod:`wo.lm.trie`) -- and
stateful Cython queries (:class:`LanguageModel` over ``wo._fast._lm`` / ``wo._fast._lmtrie``)."""
from .estimation import NgramTables, estimate, train
from .files import LMError, read_arpa, write_arpa, write_binary
from .model import CorpusScore, LanguageModel, save_tables
from .trie import read_trie, write_trie

__all__ = ["CorpusScore", "LMError", "LanguageModel", "NgramTables", "estimate", "read_arpa",
           "read_trie", "save_tables", "train", "write_arpa", "write_binary", "write_trie"]
