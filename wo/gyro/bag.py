"""GYRO's n-best reranked by a dependency model as the bag search of that model (:mod:`wo.dep.bag`:
the model names it in its decode settings; the shipped English model does, with the large
English 4-gram).  de Gispert, Tomalin & Byrne (2014), section 3's "+depLM" rescoring, with wo's
dependency model in place of a parser and a dependency LM."""
from __future__ import annotations

from ..dep.bag import GYRO_OPTIONS
from ..lm.model import LanguageModel
from ..model import named_file
from .realize import GyroRealizer


class GyroBagSearch:
    """GYRO over the bag with the LM a model's bag entry names, its n-best reranked by the
    :class:`wo.dep.linearizer.Linearizer` ``dep`` (which parses each string with its order
    fixed).  spec: :func:`wo.dep.bag.bag_spec`'s dict; timeout: seconds per bag (0 = none).  Raises
    ModelError when the LM file is missing, LMError for a bad one."""

    def __init__(self, dep, spec: dict, timeout: float = 0.0):
        path = named_file(dep.model, spec["lm"], "dep", "decode.bag", "--bag-search dep")
        opts = {k: spec[k] for k in GYRO_OPTIONS if k in spec}
        self.spec = spec
        self.gyro = GyroRealizer(None, LanguageModel.shared(path), dep=dep, dep_own=False, timeout=timeout,
                                 **opts)

    def realize(self, words):
        """(tokens, input index of each output token, 1-based heads, POS, the model's scaled
        score, pops of the reranking parses) of the best reranked string, or None when no candidate could be parsed (the
        caller then runs its own search).  words: list of n str."""
        res = self.gyro.realize(list(words))
        if not res.heads or len(res.tokens) != len(words):
            return None
        slots = {}
        for i, w in enumerate(words):
            slots.setdefault(w, []).append(i)
        for w in slots:
            slots[w].reverse()
        idx = [slots[t].pop() for t in res.tokens]
        return list(res.tokens), idx, list(res.heads), list(res.pos), res.dep_score, res.pops
