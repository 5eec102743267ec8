"""Optional dependencies ("extras") of wo and the one-line error for a missing one.

``pip install wo`` installs the core: the dependency linearizer, SR, CCG, the n-gram LM, IDL,
GYRO's chart engine and evaluation.  The rest is optional and named by pip extras:

========  ===========================================  =============================================
extra     packages                                     needed by
========  ===========================================  =============================================
``smt``   spaCy, jieba, eflomal, OpenCC                ``wo smt``; ``wo lm tokenize`` / ``--tokenize``
``fst``   pynini                                       ``wo gyro realize --engine fst``
``dask``  dask[distributed]                            ``--backend dask``
``bench`` matplotlib                                   ``bench/`` scripts
``test``  pytest, hypothesis, kenlm and the above      the test suite
``all``   every extra                                  ``make install`` (``make demo``, ``make test``)
========  ===========================================  =============================================

:func:`require` checks that an extra's modules can be imported *without importing them*
(``importlib.util.find_spec``), so a command fails at once, before any work, with one line
naming the ``pip install`` to run.  ``import wo`` and the core commands never import an extra.
"""
from __future__ import annotations

import importlib.util
from typing import Dict, List, Optional, Tuple

from .io.text import InputError

# extra -> (import name, distribution name) of each of its packages
EXTRAS: Dict[str, Tuple[Tuple[str, str], ...]] = {
    "smt": (("spacy", "spaCy"), ("jieba", "jieba"), ("eflomal", "eflomal"), ("opencc", "OpenCC")),
    "fst": (("pynini", "pynini"),),
    "dask": (("dask", "dask"), ("distributed", "distributed")),
    "bench": (("matplotlib", "matplotlib"),),
}


class MissingExtra(InputError):
    """An optional dependency of the requested command is not installed.  ``str()`` is one line
    naming the missing packages and the ``pip install 'wo-nlg[EXTRA]'`` that brings them (no
    ``file:line`` prefix: ``path`` is None).  A user error like
    :class:`wo.io.text.InputError` (and so a ValueError), so that every command's user-error
    handling reports it as one line with exit code 2; this module sits at the bottom of the
    import graph with :mod:`wo.io`, so any system may call :func:`require`."""

    def __init__(self, extra: str, missing: List[str], what: str = ""):
        who = f"{what} needs" if what else "needs"
        msg = (f"{who} {', '.join(missing)}, not installed: run  pip install 'wo-nlg[{extra}]'  "
               f"(or pip install '.[{extra}]' in a clone of wo)")
        ValueError.__init__(self, msg)
        self.path, self.line, self.message = None, 0, msg
        self.extra, self.missing = extra, list(missing)


def available(module: str) -> bool:
    """True when ``module`` (a top-level import name) can be imported; does not import it.  A
    ``sys.modules[module] = None`` entry (how tests simulate an uninstalled package) counts as
    missing."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(extra: str, modules: Optional[List[str]] = None) -> List[str]:
    """Distribution names of the packages of ``extra`` that are not importable (all of them, or
    only those whose import names are in ``modules``).  Raises KeyError for an unknown extra."""
    return [dist for mod, dist in EXTRAS[extra] if (modules is None or mod in modules) and not available(mod)]


def require(extra: str, what: str = "", modules: Optional[List[str]] = None) -> None:
    """Raise :class:`MissingExtra` unless the packages of ``extra`` (or only ``modules`` of it,
    import names) are installed.  ``what`` names the command or feature for the message, e.g.
    ``"wo smt translate"``.  Cheap: nothing is imported."""
    gone = missing(extra, modules)
    if gone:
        raise MissingExtra(extra, gone, what)
