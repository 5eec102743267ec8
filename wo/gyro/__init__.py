"""GYRO: phrase-based word ordering with n-gram phrase constraints, lattices and LM rescoring
(de Gispert, Tomalin & Byrne 2014): the phrase index (:mod:`wo.gyro.index`) and realisation by
Algorithm 3 (:mod:`wo.gyro.realize`, over ``wo._fast._gyro.GyroChart`` or pynini)."""
from .index import PhraseIndex, PhraseIndexError, build_arrays, write_index
from .realize import GyroRealizer, GyroResult, mbr_rerank

__all__ = ["GyroRealizer", "GyroResult", "PhraseIndex", "PhraseIndexError", "build_arrays", "mbr_rerank",
           "write_index"]
