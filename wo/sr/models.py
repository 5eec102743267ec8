"""The shipped SR models: one per UD treebank, chosen by treebank or language code.

``sr/CODE.wo`` of a model directory (CODE a UD treebank code such as ``pt_bosque``;
``corpora/models/sr`` in a clone, the wo-models-sr package when pip-installed, see
:mod:`wo.resources`), plus the English EWT model ``wo-ewt-sr.wo``.  Each model's header records its language
(``sr.lang``), its training data and licence (``sr.data``) and its test figures
(``sr.results``); :func:`list_models` reads them for ``wo sr models``.  ``wo sr realize --lang
CODE`` (or ``--model CODE``) takes a treebank code or a language code; a language code picks
the language's default treebank (:data:`DEFAULT_TREEBANK`, else the model trained on the most
words).
"""
from __future__ import annotations

import glob
import os
from typing import Dict, List, Optional

# a language's default treebank where it has several
DEFAULT_TREEBANK = {"en": "en_ewt", "fr": "fr_sequoia", "pt": "pt_gsd"}
# what the headers of models shipped before ``sr.data`` cannot say (docs/sr-multi.md, seed-3 T1 test)
KNOWN = {"en_ewt": {"data": {"treebank": "en_ewt", "trained_on": "train", "train_sentences": 12544,
                             "train_words": 204577, "licence": "CC BY-SA 4.0"},
                    "results": {"bleu": 84.18, "gold_bleu": 87.84}}}


def model_dirs() -> List[str]:
    """The directories of the shipped SR models: ``sr/`` of every model directory of
    :func:`wo.resources.model_dirs` (``$WO_MODEL_DIR``, ``corpora/models`` of a clone, the
    installed model packages such as wo-models-sr), in search order."""
    from ..resources import model_dirs as dirs

    return [os.path.join(d, "sr") for d in dirs() if os.path.isdir(os.path.join(d, "sr"))]


def model_dir() -> str:
    """The first directory of :func:`model_dirs` (where ``wo sr models`` reads the README of the
    per-treebank models); ``corpora/models/sr`` of the source tree when there is none."""
    import pathlib

    dirs = model_dirs()
    return dirs[0] if dirs else str(pathlib.Path(__file__).resolve().parents[2] / "corpora" / "models" / "sr")


def shipped() -> Dict[str, str]:
    """Treebank code -> path of every shipped SR model (the English EWT model included)."""
    out = {}
    from ..model import ModelError, default_model

    try:
        out["en_ewt"] = default_model("sr")
    except ModelError:
        pass
    for d in model_dirs():             # the first directory that has a code wins
        for p in sorted(glob.glob(os.path.join(d, "*.wo"))):
            out.setdefault(os.path.basename(p)[:-3], p)
    return out


DEEP_SUFFIX = "-deep"   # a deep-track (T2) model's code: its treebank's code with this suffix


def resolve_model(name: str, track: str = "shallow") -> str:
    """:func:`find_model`, or FileNotFoundError (its message the one line ``wo sr realize``
    prints: what was asked and how to list the shipped models).  Used by the command line and
    by :meth:`wo.sr.realizer.Realizer.load` alike."""
    found = find_model(name, track)
    if found is None:
        raise FileNotFoundError(f"{name}: no such model file, and no shipped {track}-track SR model for that treebank "
                                f"or language (`wo sr models` and wo.sr.models.list_models() list them)")
    return found


def find_model(name: str, track: str = "shallow") -> Optional[str]:
    """The model file for ``name``: an existing path, a model code (``pt_bosque``,
    ``en_partut-deep``), a treebank code or a language code (``pt``: :data:`DEFAULT_TREEBANK`,
    else the only or largest model of that language) of the ``track`` ("shallow" or "deep": a
    deep-track model's code ends with :data:`DEEP_SUFFIX`).  None when nothing matches."""
    if os.path.exists(name):
        return name
    models = shipped()
    if track == "deep" and not name.endswith(DEEP_SUFFIX):
        deep = {c[:-len(DEEP_SUFFIX)]: p for c, p in models.items() if c.endswith(DEEP_SUFFIX)}
        if name in deep:
            return deep[name]
        lang = name.lower()
        cands = [c for c in deep if c.split("_")[0] == lang]
        if lang in DEFAULT_TREEBANK and DEFAULT_TREEBANK[lang] in deep:
            return deep[DEFAULT_TREEBANK[lang]]
        return deep[sorted(cands)[0]] if len(cands) == 1 else (
            deep[max(sorted(cands), key=lambda c: _header(deep[c]).get("sr", {}).get("data", {}).get("train_words", 0))]
            if cands else None)
    if name in models:
        return models[name]
    models = {c: p for c, p in models.items() if not c.endswith(DEEP_SUFFIX)}
    lang = name.lower()
    if lang in DEFAULT_TREEBANK and DEFAULT_TREEBANK[lang] in models:
        return models[DEFAULT_TREEBANK[lang]]
    cands = [c for c in models if c.split("_")[0] == lang]
    if not cands:
        return None
    sizes = {c: _header(models[c]).get("sr", {}).get("data", {}).get("train_words", 0) for c in cands}
    return models[max(sorted(cands), key=lambda c: sizes[c])]


def _header(path: str) -> dict:
    from ..model import Model, ModelError

    try:
        return Model.read_header(path)[0]
    except (ModelError, OSError, ValueError):   # a broken file is listed with what can be said of it
        return {}


def list_models() -> List[dict]:
    """One record per shipped SR model: code, path, bytes (the model and the LMs beside it that it
    uses, as ``wo models`` counts them), model_bytes (the model file), track ("shallow" or
    "deep"), lang, data (treebank, splits, sentences; the licence ``wo models`` gives) and
    results (test figures) from its header."""
    from ..resources import list_models as catalogue

    cat = {os.path.realpath(r["path"]): r for r in catalogue()}   # one catalogue: `wo models`' sizes and licences
    out = []
    for code, path in shipped().items():
        h = _header(path)
        sr = h.get("sr", {})
        known = KNOWN.get(code, {})
        data = dict(sr.get("data") or known.get("data", {}))
        row = cat.get(os.path.realpath(path))
        if row is not None and row["licence"] != "?":
            data["licence"] = row["licence"]
        out.append({"code": code, "path": path, "bytes": row["bytes"] if row is not None else os.path.getsize(path),
                    "model_bytes": os.path.getsize(path), "track": sr.get("track", "shallow"),
                    "lang": sr.get("lang") or ("en" if sr.get("lexicon", {}).get("english") else "?"),
                    "data": data, "results": sr.get("results") or known.get("results", {})})
    return out
