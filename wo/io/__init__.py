"""Shared input and output of every system: text files (``-`` = stdin/stdout, ``.xz``/``.gz``),
CoNLL-U, the batch input formats (bags, ZGen), evaluation hygiene (fixed-seed shuffles) and the
batch driver.  Nothing here imports a system package."""
from .batch import FailFast, Interrupted, Summary, map_batches, process
from .conllu import Sentence, read_conllu
from .items import Item, format_result, read_items, validate
from .text import AtomicWriter, InputError, detokenize, open_text
from .trees import is_projective, permutation, projectivize, remap_heads, scramble

__all__ = ["AtomicWriter", "FailFast", "InputError", "Interrupted", "Item", "Sentence", "Summary",
           "detokenize", "format_result", "is_projective", "map_batches", "open_text", "permutation",
           "process", "projectivize", "read_conllu", "read_items", "remap_heads", "scramble", "validate"]
