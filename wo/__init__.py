"""wo: word ordering (text linearization) with learning-guided best-first search.

Core: Zhang & Clark (2015), Discriminative syntax-based word ordering for text generation,
Computational Linguistics 41(3).  Hot paths are Cython (``wo._fast``).
"""
__version__ = "0.1.0"


def __getattr__(name):
    if name in ("Linearizer", "Result"):
        from . import linearizer
        return getattr(linearizer, name)
    if name in ("Realizer", "SRResult"):
        from . import sr
        return getattr(sr, name)
    if name == "Model":
        from .model import Model
        return Model
    raise AttributeError(name)
