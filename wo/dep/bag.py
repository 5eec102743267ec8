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

from ..model import (BAG_SYSTEMS, GYRO_OPTIONS, SIDECAR, bag_spec, decode_settings,  # noqa: F401  (re-exported)
                     make_bag_search, sidecar_path)

BAG_SEARCHES = ("model", "dep")
