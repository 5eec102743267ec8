"""UD FEATS strings as dictionaries and canonical keys (``Number=Sing|Tense=Past``), without the
SR'19 task annotations.  The lowest SR module: the inflection front end (:mod:`wo.sr.inflect`),
the T1 reader (:mod:`wo.sr.t1`) and the language modules (:mod:`wo.sr.lang`) all read FEATS
through it, so a language module needs nothing of the inflection front end that finds it."""
from __future__ import annotations

import functools
from typing import Dict

# SR'19 FEATS that are task annotations, not morphology (``id1``..``id9``: the T1 nodes a deep-track
# node stands for, in the aligned T2 training files)
TASK_FEATS = ("lin", "original_id") + tuple(f"id{k}" for k in range(1, 10))


def parse_feats(feats: str) -> Dict[str, str]:
    """``Number=Sing|Tense=Past`` -> dict; ``_`` or empty -> {}."""
    out = {}
    if feats and feats != "_":
        for kv in feats.split("|"):
            if "=" in kv:
                k, v = kv.split("=", 1)
                out[k] = v
    return out


def morph_key(feats: Dict[str, str]) -> str:
    """Canonical FEATS string without the task annotations (``lin``, ``original_id``)."""
    return "|".join(f"{k}={v}" for k, v in sorted(feats.items()) if k not in TASK_FEATS) or "_"


@functools.lru_cache(maxsize=1 << 16)
def feats_key(feats: str) -> str:
    """``morph_key(parse_feats(feats))``, memoised: a treebank has a few thousand distinct FEATS
    strings and hundreds of thousands of tokens."""
    return morph_key(parse_feats(feats))
