"""The bag-of-words search a dependency model names, e.g. GYRO's n-best under a large n-gram LM
reranked by the model (the "+depLM" rescoring of de Gispert, Tomalin & Byrne 2014, section 3,
with wo's dependency model in place of a parser and a dependency LM: :mod:`wo.gyro.bag`).

A model names it in its header (``decode.bag``) or, without rewriting the model file, in a small
file beside it, ``<model>.decode.json`` holding ``{"bag": {...}}`` (the file wins key by key).
The entry: ``system`` ("gyro"), ``lm`` (an LM file name, looked up beside the model and in the
shipped model directory) and any of GyroRealizer's options ``r``, ``beta``, ``row_cap``,
``keep``, ``join_slack``, ``max_split``, ``dep_weight``, ``dep_nbest``, ``dep_budget`` (the
model's own output is not added to the candidates: that is the search this one replaces).  :class:`wo.dep.linearizer.Linearizer` decodes a bag (no POS, no head given)
with it unless asked for its own search (``bag_search="dep"``).  The search is found by its
``system`` name in :data:`BAG_SYSTEMS` and imported when a model names it: the systems that
rerank with a dependency model sit above :mod:`wo.dep`, which imports none of them.
"""
from __future__ import annotations

import importlib
import json
import os
from typing import Optional

SIDECAR = ".decode.json"
GYRO_OPTIONS = ("r", "beta", "row_cap", "keep", "join_slack", "max_split", "dep_weight", "dep_nbest",
                "dep_budget")
BAG_SEARCHES = ("model", "dep")
BAG_SYSTEMS = {"gyro": "wo.gyro.bag:GyroBagSearch"}   # system name -> "module:class"


def sidecar_path(model_path: str) -> str:
    """The decode-settings file beside a model file: ``x.wo`` -> ``x.decode.json``."""
    return os.path.splitext(model_path)[0] + SIDECAR


def bag_spec(model) -> Optional[dict]:
    """The bag search a :class:`wo.model.Model` names (header ``decode.bag`` updated by the
    ``bag`` entry of its sidecar file), or None.  Raises ModelError for a sidecar that is not
    valid JSON or names another system."""
    from ..model import ModelError

    spec = dict(model.header.get("decode", {}).get("bag") or {})
    if model.path:
        side = sidecar_path(model.path)
        if os.path.exists(side):
            try:
                with open(side, encoding="utf-8") as f:
                    spec.update(json.load(f).get("bag") or {})
            except (ValueError, AttributeError) as exc:
                raise ModelError(f"{side}: not a decode-settings file ({exc})") from None
    if not spec:
        return None
    if spec.setdefault("system", "gyro") not in BAG_SYSTEMS or "lm" not in spec:
        raise ModelError(f"the model's bag search {spec} names no system of {sorted(BAG_SYSTEMS)} with an lm")
    return spec


def make_bag_search(dep, spec: dict, timeout: float = 0.0):
    """The bag search ``spec`` names (:func:`bag_spec`), built over the linearizer ``dep``; its
    ``realize(words)`` gives (tokens, input index per output token, 1-based heads, POS, scaled
    score, pops) or None.  Raises ModelError / LMError for missing or bad files."""
    module, cls = BAG_SYSTEMS[spec["system"]].split(":")
    return getattr(importlib.import_module(module), cls)(dep, spec, timeout=timeout)
