"""GYRO's n-best reranked by a model's parses as the bag search of that model (:func:`wo.model.bag_spec`:
the model names it in its decode settings; the shipped English dependency and CCG models do, with
the large English 4-gram).  de Gispert, Tomalin & Byrne (2014), section 3's "+depLM" rescoring, with wo's
dependency model in place of a parser and a dependency LM.

The registry of the bag searches a model can name (:data:`BAG_SEARCHES`) and the GYRO options
its entry may set (:data:`GYRO_OPTIONS`) live here, with the search: the dependency and CCG
linearizers import :func:`make_bag_search` from this module, and GYRO imports neither of them
(a reranking linearizer is handed to it)."""
from __future__ import annotations

from ..lm.model import LanguageModel
from ..model import ModelError, named_file
from .realize import DEFAULT_TIMEOUT, GyroRealizer

# the options of :class:`wo.gyro.realize.GyroRealizer` a model's bag entry may set: chart size and
# filter, strings reranked, the weight of the model's score, pops per parse
GYRO_OPTIONS = ("r", "beta", "row_cap", "keep", "join_slack", "max_split", "dep_weight", "dep_nbest",
                "dep_budget")
DEFAULT_BAG_SEARCH = "gyro"   # the system of a bag entry that names none


class GyroBagSearch:
    """GYRO over the bag with the LM a model's bag entry names, its n-best reranked by the
    linearizer ``dep`` (a :class:`wo.dep.linearizer.Linearizer` or :class:`wo.ccg.linearizer.Linearizer`,
    which parses each string with its order fixed); system/option: name it in the error of a
    missing LM.  spec: :func:`wo.model.bag_spec`'s dict; timeout: seconds per bag (0: GYRO's
    default, :data:`wo.gyro.realize.DEFAULT_TIMEOUT`; the search is bounded in time by default).  Raises
    ModelError when the LM file is missing, LMError for a bad one."""

    def __init__(self, dep, spec: dict, timeout: float = 0.0, system: str = "dep", option: str = "--bag-search dep"):
        path = named_file(dep.model, spec["lm"], system, "decode.bag", option)
        opts = {k: spec[k] for k in GYRO_OPTIONS if k in spec}
        self.spec = spec
        self.gyro = GyroRealizer(None, LanguageModel.shared(path), dep=dep, dep_own=False,
                                 timeout=timeout if timeout > 0 else DEFAULT_TIMEOUT, **opts)

    def realize(self, words):
        """(input index of each output token, the :class:`wo.gyro.realize.GyroResult`: its
        tokens, the reranking model's parse of them as ``parse`` (the linearizer's Result; None
        when no candidate could be parsed: the string is then GYRO's best), ``heads``, ``pos``,
        ``dep_score`` and the ``pops`` of all the parses), or None when GYRO gave no string of
        the bag.  words: list of n str."""
        res = self.gyro.realize(list(words))
        if len(res.tokens) != len(words):
            return None
        return _input_index(words, res.tokens), res


def _input_index(words, tokens):
    """The input index of each of ``tokens`` (a permutation of ``words``; equal words in input
    order)."""
    slots = {}
    for i, w in enumerate(words):
        slots.setdefault(w, []).append(i)
    for w in slots:
        slots[w].reverse()
    return [slots[t].pop() for t in tokens]


BAG_SEARCHES = {"gyro": GyroBagSearch}   # system name in a model's bag entry -> its bag search


def make_bag_search(dep, spec: dict, timeout: float = 0.0, system: str = "dep", option: str = "--bag-search dep"):
    """The bag search ``spec`` names (:func:`wo.model.bag_spec`'s dict: ``system``, default
    "gyro", a name of :data:`BAG_SEARCHES`; ``lm``, an LM file name beside the model or shipped;
    any of :data:`GYRO_OPTIONS`), built over the linearizer ``dep`` (any system's linearizer
    with ``model`` and ``parse(words, budget_factor=)``: the dependency or the CCG one; ``system``
    and ``option`` name it in the error of a missing file); its ``realize(words)`` gives (input
    index per output token, the GyroResult with the linearizer's parse of the best string) or
    None (:class:`GyroBagSearch`).  Raises ModelError for an entry that names no known system
    or no lm, and for a missing LM file; LMError for a bad one."""
    if spec.setdefault("system", DEFAULT_BAG_SEARCH) not in BAG_SEARCHES or "lm" not in spec:
        raise ModelError(f"the model's bag search {spec} names no system of {sorted(BAG_SEARCHES)} with an lm")
    return BAG_SEARCHES[spec["system"]](dep, spec, timeout=timeout, system=system, option=option)
