"""Where wo finds its shipped models, and what is installed (``wo models``).

A model is named by its path relative to a *model directory*, e.g. ``wo-ewt-dep-lm.wo``,
``sr/pt_bosque.wo`` or ``smt/zh-parser``; files a model names in its header (its LM, the
phrase table, the parsers) are looked up beside it, so each model directory keeps the layout
of ``corpora/models``.  The model directories, searched in this order (:func:`model_dirs`):

1. each directory in ``$WO_MODEL_DIR`` (several separated by ``os.pathsep``, ``:`` on Unix);
2. ``corpora/models`` of the source tree wo runs from (a clone, ``pip install -e .``);
3. every installed model package: a distribution that declares an entry point in the group
   ``wo.models`` whose value is the name of a package holding the files (how spaCy finds its
   pipeline packages).  This repository builds three, whose files are symlinks into
   ``corpora/models`` (``corpora/packages/``):

   ============== ============================================================== ======
   package        models                                                         wheel
   ============== ============================================================== ======
   wo-models-en   dependency, CCG and English SR models, the English 4-gram      87 MB
                  and the tree-view LMs (``wo linearize``, ``wo sr``, ``wo ccg``,
                  ``wo idl``, ``wo gyro``)
   wo-models-sr   one SR model per UD treebank (``wo sr realize --lang CODE``)   25 MB
   wo-models-smt  the Chinese-English SMT model, its tables, LM and parsers       37 MB
   ============== ============================================================== ======

   ``pip install ./corpora/packages/wo-models-en`` (from a clone) installs one; see the README.

:func:`list_models` describes every model found (name, system, size, training data, licence);
:func:`add_models_command` adds the ``wo models`` verb to an argparse CLI.  This module imports
no other wo module (:mod:`wo.model` and the systems find their shipped files here;
:func:`wo.model.require_model` raises the one-line error for a missing one).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional

ENTRY_POINT_GROUP = "wo.models"
# the model packages this repository builds (corpora/packages/NAME), for the hint of a missing model
PACKAGES = {"en": "wo-models-en", "sr": "wo-models-sr", "smt": "wo-models-smt"}

_EWT = "UD English-EWT v2.16 train"
_LM_TEXT = "Brown, MASC, State of the Union, Inaugural + EWT train forms (2.5 M tokens)"
_NC = "non-commercial (Brown) + CC BY-SA 4.0"
# what the headers of the top-level models do not say (corpora/README.md has the details)
CATALOGUE: Dict[str, dict] = {
    "wo-ewt-dep-lm.wo": {"system": "dep", "package": "en", "data": _EWT + " + wo-en-4gram.wolm",
                         "licence": _NC, "default": "wo linearize"},
    "wo-ewt-dep.wo": {"system": "dep", "package": "en", "data": _EWT, "licence": "CC BY-SA 4.0"},
    "wo-ewt-sr.wo": {"system": "sr", "package": "en", "data": _EWT + " (T1)", "licence": _NC,
                     "default": "wo sr realize"},
    "wo-ewt-ccg-lm.wo": {"system": "ccg", "package": "en", "data": "EWT train, automatic CCG conversion",
                         "licence": _NC, "default": "wo ccg linearize"},
    "wo-ewt-ccg.wo": {"system": "ccg", "package": "en", "data": "EWT train, automatic CCG conversion",
                      "licence": "CC BY-SA 4.0"},
    "wo-en-4gram.wolm": {"system": "lm", "package": "en", "data": _LM_TEXT,
                         "licence": "non-commercial (Brown); share-alike (EWT)",
                         "default": "wo idl / wo gyro --lm"},
    "wo-en-wiki-4gram.wolm": {"system": "lm", "package": "en",
                              "data": "English Wikipedia 2015 (65 M words) + " + _LM_TEXT + ", 78 M tokens, "
                                      "quantized trie",
                              "licence": "CC BY-SA 3.0 (Wikipedia) + " + _NC,
                              "default": "wo linearize (bags and trees, with wo-ewt-dep-lm.decode.json)"},
    "wo-ewt-depmix4.wolm": {"system": "lm", "package": "en", "data": _EWT + " (dep-mix view)",
                            "licence": "CC BY-SA 4.0",
                            "default": "wo linearize (trees: reranking)"},
    "wo-ewt-depword4.wolm": {"system": "lm", "package": "en", "data": _EWT + " (dep-word view)",
                             "licence": "CC BY-SA 4.0",
                             "default": "wo linearize (trees: reranking)"},
    "wo-ewt-pos6.wolm": {"system": "lm", "package": "en", "data": _EWT + " (POS view)",
                         "licence": "CC BY-SA 4.0",
                         "default": "wo linearize (trees: reranking)"},
    "wo-tatoeba-smt.wo": {"system": "smt", "package": "smt",
                          "data": "Tatoeba zh-en train (26,155 pairs) + smt/ LM, parsers",
                          "licence": "non-commercial (Brown LM, zh parser); Tatoeba CC BY 2.0 FR",
                          "default": "wo smt translate"},
}


def _source_tree_models() -> Path:
    """``corpora/models`` beside the ``wo`` package (exists in a clone or an editable install)."""
    return Path(__file__).resolve().parent.parent / "corpora" / "models"


_EP_CACHE: dict = {}


def _entry_points():
    """The model packages' entry points, read once per ``sys.path`` (scanning every installed
    distribution's metadata is 20 ms, and one model load asks two or three times)."""
    from importlib.metadata import entry_points

    key = tuple(sys.path)
    got = _EP_CACHE.get(key)
    if got is None:
        eps = entry_points()
        if hasattr(eps, "select"):                      # Python >= 3.10
            got = list(eps.select(group=ENTRY_POINT_GROUP))
        else:                                           # pragma: no cover - Python 3.9
            got = list(eps.get(ENTRY_POINT_GROUP, []))
        _EP_CACHE.clear()
        _EP_CACHE[key] = got
    return list(got)


def package_dirs() -> List[tuple]:
    """(distribution name, directory) of every installed model package, sorted by name.  The
    directory is found without importing the package.  A broken entry point is skipped."""
    import importlib.util

    out = []
    for ep in _entry_points():
        try:
            spec = importlib.util.find_spec(ep.value)
        except (ImportError, ValueError):
            continue
        locs = list(spec.submodule_search_locations or []) if spec is not None else []
        if locs:
            dist = getattr(getattr(ep, "dist", None), "name", None) or ep.name
            out.append((dist, locs[0]))
    return sorted(out)


def model_dirs() -> List[str]:
    """The model directories that exist, in search order: ``$WO_MODEL_DIR`` entries, the
    source tree's ``corpora/models``, the installed model packages (see the module docstring).
    Duplicates (the same real directory) are listed once."""
    cands = [d for d in os.environ.get("WO_MODEL_DIR", "").split(os.pathsep) if d]
    cands.append(str(_source_tree_models()))
    cands.extend(d for _, d in package_dirs())
    out, seen = [], set()
    for d in cands:
        real = os.path.realpath(d)
        if os.path.isdir(d) and real not in seen:
            seen.add(real)
            out.append(d)
    return out


def find_model(name: str) -> Optional[str]:
    """The path of the shipped model (file or directory) ``name`` (relative to a model
    directory: ``wo-ewt-dep-lm.wo``, ``sr/pt_bosque.wo``, ``smt/zh-parser``) in the first model
    directory that has it; None when none has it."""
    for d in model_dirs():
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


def missing_model_message(name: str, what: str) -> str:
    """One line saying that the shipped model ``name`` is not installed and how to get it."""
    info = CATALOGUE.get(name, {})
    pkg = PACKAGES["sr"] if name.startswith("sr/") else PACKAGES.get(info.get("package", "en"), "wo-models-en")
    where = ", ".join(model_dirs()) or "no model directory"
    return (f"no shipped {what} {name} (searched {where}): install the model package "
            f"({pkg}: `pip install ./corpora/packages/{pkg}` in a clone of wo), set WO_MODEL_DIR "
            f"to a directory holding it, or pass --model; `wo models` lists what is installed")


def peek_header(path: str) -> dict:
    """The JSON header of a wo model file, a compact (``header_zlib``) header expanded, as far
    as the listing needs it: ``{}`` for a file that is not a readable model (``wo models`` lists
    it with what can be said).  The full check of a model file is
    :meth:`wo.model.Model.read_header` (this module sits below :mod:`wo.model`, which finds its
    shipped models here)."""
    import base64
    import struct
    import zlib

    try:
        with open(path, "rb") as fh:
            pre = fh.read(16)
            if len(pre) < 16 or pre[:8] != b"WOMODEL\0":
                return {}
            hlen = struct.unpack("<I", pre[12:16])[0]
            head = json.loads(fh.read(hlen).decode("utf-8"))
        if "header_blob_bytes" in head:   # format version 2: the header packed after a stub
            from .io.binfile import read_packed_header

            head, _ = read_packed_header(path, head, hlen)
        if "header_zlib" in head:
            head.update(json.loads(zlib.decompress(base64.b64decode(head.pop("header_zlib")))))
        return head
    except (OSError, ValueError, zlib.error):
        return {}


def _tree_bytes(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def _where(d: str) -> str:
    for dist, pd in package_dirs():
        if os.path.realpath(pd) == os.path.realpath(d):
            return dist
    if os.path.realpath(d) == os.path.realpath(str(_source_tree_models())):
        return "source tree"
    return "WO_MODEL_DIR"


def list_models() -> List[dict]:
    """One record per model found in :func:`model_dirs` (the first directory wins for a name):
    name (relative to its model directory), system (dep, sr, ccg, smt, lm), bytes (the file plus
    the files it needs beside it: an SR model's LMs, the SMT model's ``smt/`` directory), data
    (training data), licence, default (the command it is the default of, or ""), path and
    source (the model package's name, "source tree" or "WO_MODEL_DIR").  Sorted by name."""
    import glob

    found: Dict[str, dict] = {}
    for d in model_dirs():
        src = _where(d)
        names = [os.path.basename(p) for p in sorted(glob.glob(os.path.join(d, "*.wo")) + glob.glob(os.path.join(d, "*.wolm")))]
        names += ["sr/" + os.path.basename(p) for p in sorted(glob.glob(os.path.join(d, "sr", "*.wo")))]
        for name in names:
            if name in found:
                continue
            path = os.path.join(d, name)
            found[name] = _record(name, path, src)
    return [found[k] for k in sorted(found)]


def _record(name: str, path: str, source: str) -> dict:
    info = dict(CATALOGUE.get(name, {}))
    size = os.path.getsize(path)
    if name.startswith("sr/"):
        code = os.path.basename(name)[:-3]
        data = peek_header(path).get("sr", {}).get("data", {})
        for extra in (f"{code}.words4.wolm", f"{code}.depmix4.wolm"):
            p = os.path.join(os.path.dirname(path), extra)
            if os.path.exists(p):
                size += os.path.getsize(p)
        info.update(system="sr", data=f"UD {data.get('treebank', code)} {data.get('trained_on', '')} "
                    f"({data.get('train_sentences', '?')} sentences)".replace("  ", " "),
                    licence=data.get("licence", "see corpora/models/sr/README.md"),
                    default=f"wo sr realize --lang {code}")
    elif name == "wo-tatoeba-smt.wo":
        size += _tree_bytes(os.path.join(os.path.dirname(path), "smt"))
    if "system" not in info:
        if name.endswith(".wolm"):
            info["system"] = "lm"
        else:
            head = peek_header(path)
            info["system"] = next((s for s in ("sr", "ccg", "smt") if s in head), "dep" if head else "?")
    return {"name": name, "system": info["system"], "bytes": size, "data": info.get("data", "?"),
            "licence": info.get("licence", "?"), "default": info.get("default", ""), "path": path,
            "source": source}


def main_models(args) -> int:
    """``wo models``: print the installed models (a table, or JSON with ``args.json``) and the
    model directories searched; returns exit code 0 (1 when no model is found, with a hint)."""
    rows = list_models()
    if getattr(args, "json", False):
        print(json.dumps(rows, indent=1))
        return 0 if rows else 1
    if not rows:
        print("wo: no models found; install a model package, e.g. `pip install ./corpora/packages/wo-models-en` "
              "in a clone of wo, or set WO_MODEL_DIR (searched: "
              + (", ".join(model_dirs()) or "nothing") + ")", file=sys.stderr)
        return 1
    print(f"{'model':<22} {'system':<6} {'MB':>6}  {'source':<13} {'default of':<32} {'trained on':<58} licence")
    for r in rows:
        print(f"{r['name']:<22} {r['system']:<6} {r['bytes'] / 1e6:>6.1f}  {r['source']:<13} {r['default']:<32} "
              f"{r['data']:<58} {r['licence']}")
    print("model directories: " + ", ".join(model_dirs()), file=sys.stderr)
    return 0


def add_models_command(subparsers) -> None:
    """Add the ``models`` verb to an argparse subparsers object (``wo models [--json]``); its
    ``func`` is :func:`main_models`."""
    p = subparsers.add_parser("models", help="list the installed models (name, system, size, training data, "
                                             "licence) and where they were found",
                              description="List the models wo finds: $WO_MODEL_DIR, corpora/models of a "
                                          "clone, and the installed model packages (wo-models-en, "
                                          "wo-models-sr, wo-models-smt).")
    p.add_argument("--json", action="store_true", help="one JSON list of records instead of the table")
    p.set_defaults(func=main_models)


if __name__ == "__main__":          # python -m wo.resources [--json]: the listing of `wo models`
    import argparse

    _p = argparse.ArgumentParser(prog="python -m wo.resources")
    add_models_command(_p.add_subparsers())
    _a = _p.parse_args(["models"] + sys.argv[1:])
    sys.exit(_a.func(_a))
