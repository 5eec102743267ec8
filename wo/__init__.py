"""wo: word ordering (text linearization) with learning-guided best-first search.

Core: Zhang & Clark (2015), Discriminative syntax-based word ordering for text generation,
Computational Linguistics 41(3).  Hot paths are Cython (``wo._fast``): one best-first driver
and one grammar per system.  Packages: :mod:`wo.dep` (dependency word ordering), :mod:`wo.sr`
(shared-task realisation), :mod:`wo.lm` (n-gram language models), :mod:`wo.gyro` (GYRO),
:mod:`wo.smt` (Chinese->English translation by syntactic generation) and
the others (:mod:`wo.ccg`, :mod:`wo.idl`) over :mod:`wo.io`,
:mod:`wo.eval` and :mod:`wo.model`.

Public API: :class:`Linearizer`, :class:`Result`, :class:`Realizer`, :class:`SRResult`,
:class:`Model`, :class:`LanguageModel`, :class:`GyroRealizer`, :class:`PhraseIndex`,
:class:`Translator`, :class:`PhraseTable`, :func:`read_conllu`, :func:`scramble`, :func:`score`, :func:`sr_score`
(imported on first use, so ``import wo`` stays cheap).
"""
__version__ = "0.2.0"

_API = {
    "Linearizer": "wo.dep", "Result": "wo.dep", "DepSearch": "wo.dep",
    "Realizer": "wo.sr", "SRResult": "wo.sr", "read_t1": "wo.sr",
    "Model": "wo.model", "ModelError": "wo.model", "LanguageModel": "wo.lm",
    "GyroRealizer": "wo.gyro", "PhraseIndex": "wo.gyro",
    "Translator": "wo.smt", "PhraseTable": "wo.smt",
    "read_conllu": "wo.io", "scramble": "wo.io", "score": "wo.eval", "sr_score": "wo.eval",
}
__all__ = sorted(_API)


def __getattr__(name):
    if name in _API:
        import importlib

        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(name)
