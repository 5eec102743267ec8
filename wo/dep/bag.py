"""The bag-of-words search a dependency model names, e.g. GYRO's n-best under a large n-gram LM
reranked by the model (the "+depLM" rescoring of de Gispert, Tomalin & Byrne 2014, section 3,
with wo's dependency model in place of a parser and a dependency LM: :mod:`wo.gyro.bag`).

A model names it in its header (``decode.bag``) or, without rewriting the model file, in a small
file beside it, ``<model>.decode.json`` (:func:`decode_settings`: any of the header's ``decode``
entries, e.g. ``{"bag": {...}, "tree_rerank": {...}, "tree_beam_factor": 32}``; the file wins key
by key).
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


def decode_settings(model) -> dict:
    """The decode settings of a :class:`wo.model.Model`: its header's ``decode`` dict updated by
    the sidecar file beside the model (:func:`sidecar_path`), key by key (an entry that is a dict
    in both, e.g. ``bag`` or ``tree_rerank``, is merged one level down; ``tree_rerank`` replaces
    the header's ``lms`` and ``models`` lists as wholes).  Settings can so change without a new
    copy of the model's weights.  Raises ModelError for a sidecar that is not a JSON object."""
    from ..model import ModelError

    dec = {k: (dict(v) if isinstance(v, dict) else v) for k, v in (model.header.get("decode") or {}).items()}
    side = sidecar_path(model.path) if getattr(model, "path", None) else None
    if side and os.path.exists(side):
        try:
            with open(side, encoding="utf-8") as f:
                extra = json.load(f)
            if not isinstance(extra, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            raise ModelError(f"{side}: not a decode-settings file ({exc})") from None
        for k, v in extra.items():
            if isinstance(v, dict) and isinstance(dec.get(k), dict):
                dec[k].update(v)
            else:
                dec[k] = v
    return dec


def bag_spec(model) -> Optional[dict]:
    """The bag search a :class:`wo.model.Model` names (:func:`decode_settings`' ``bag``: the
    header's ``decode.bag`` updated by the sidecar file), or None.  Raises ModelError for a
    sidecar that is not valid JSON or names another system."""
    from ..model import ModelError

    spec = dict(decode_settings(model).get("bag") or {})
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
