"""GYRO: phrase-based word ordering with n-gram phrase constraints, lattices and LM rescoring
(de Gispert, Tomalin & Byrne 2014).  So far: the phrase index (:mod:`wo.gyro.index`)."""
from .index import PhraseIndex, PhraseIndexError, build_arrays, write_index

__all__ = ["PhraseIndex", "PhraseIndexError", "build_arrays", "write_index"]
