"""Word alignment with eflomal, symmetrised with grow-diag-final-and.

Zhang et al. (2014) align with IBM model 4 in both directions and intersect; we use eflomal
(Bayesian HMM + fertility, Östling & Tiedemann 2016) in both directions and symmetrise with
grow-diag-final-and by default (the Moses default; :func:`symmetrize` also offers the plain
intersection of the paper, union and grow-diag). A link is ``(i, j)``: source word ``i``, target
word ``j``, both 0-based.

Determinism: eflomal 2.0 has no seed option; its binary seeds its generator from ``/dev/urandom``
and its samplers draw their seeds in OpenMP critical sections (thread order). :func:`align`
therefore runs the binary with ``OMP_NUM_THREADS=1`` and, when a C compiler is available, with a
tiny ``LD_PRELOAD`` shim (compiled once into a cache directory) that makes its
``fopen("/dev/urandom")`` read eight bytes derived from ``seed``. With the shim the alignment is
a function of (input, seed, settings); without it (no compiler) it varies from run to run and a
warning is logged.
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

Link = Tuple[int, int]
logger = logging.getLogger(__name__)

__all__ = ["align", "align_directions", "symmetrize", "grow_diag_final_and", "read_moses_links",
           "format_moses_links", "seed_shim_available"]

_NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def grow_diag_final_and(fwd: Iterable[Link], rev: Iterable[Link]) -> List[Link]:
    """Symmetrise two directional alignments of one sentence pair (Koehn et al. 2003 / Moses).

    Start from the intersection; GROW-DIAG: repeatedly, for every link (i, j) in the current
    alignment (scanned in (i, j) order), add each of its 8 neighbours that is in the union and
    whose source word or target word is still unaligned, until nothing changes; FINAL-AND: add
    links of ``fwd``, then of ``rev``, whose source and target word are both still unaligned.
    Returns the links sorted.
    """
    return _symmetrize(set(fwd), set(rev), grow=True, diag=True, final_and=True)


def symmetrize(fwd: Iterable[Link], rev: Iterable[Link], method: str = "grow-diag-final-and") -> List[Link]:
    """Symmetrise two directional alignments: ``intersection``, ``union``, ``grow-diag`` or
    ``grow-diag-final-and`` (see :func:`grow_diag_final_and`). Returns the links sorted."""
    fwd, rev = set(fwd), set(rev)
    if method == "intersection":
        return sorted(fwd & rev)
    if method == "union":
        return sorted(fwd | rev)
    if method == "grow-diag":
        return _symmetrize(fwd, rev, grow=True, diag=True, final_and=False)
    if method == "grow-diag-final-and":
        return _symmetrize(fwd, rev, grow=True, diag=True, final_and=True)
    raise ValueError(f"unknown symmetrisation method {method!r}")


def _symmetrize(fwd: Set[Link], rev: Set[Link], grow: bool, diag: bool, final_and: bool) -> List[Link]:
    union = fwd | rev
    links = fwd & rev
    src_aligned = {i for i, _ in links}
    tgt_aligned = {j for _, j in links}
    neighbours = _NEIGHBOURS if diag else _NEIGHBOURS[:4]
    if grow:
        added = True
        while added:
            added = False
            for i, j in sorted(links):
                for di, dj in neighbours:
                    p = (i + di, j + dj)
                    if p in union and p not in links and (p[0] not in src_aligned or p[1] not in tgt_aligned):
                        links.add(p)
                        src_aligned.add(p[0])
                        tgt_aligned.add(p[1])
                        added = True
    if final_and:
        for direction in (fwd, rev):
            for p in sorted(direction):
                if p not in links and p[0] not in src_aligned and p[1] not in tgt_aligned:
                    links.add(p)
                    src_aligned.add(p[0])
                    tgt_aligned.add(p[1])
    return sorted(links)


def read_moses_links(line: str) -> List[Link]:
    """Parse one line of Moses ``i-j`` links."""
    out = []
    for tok in line.split():
        i, _, j = tok.partition("-")
        out.append((int(i), int(j)))
    return out


def format_moses_links(links: Iterable[Link]) -> str:
    """Format links as one Moses ``i-j`` line."""
    return " ".join(f"{i}-{j}" for i, j in links)


_SHIM_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* fopen("/dev/urandom") -> the file named by $WO_EFLOMAL_SEED_FILE (eflomal's only entropy). */
FILE *fopen(const char *path, const char *mode) {
    static FILE *(*real)(const char *, const char *) = 0;
    if (!real) real = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
    const char *seed = getenv("WO_EFLOMAL_SEED_FILE");
    if (seed && path && strcmp(path, "/dev/urandom") == 0) return real(seed, mode);
    return real(path, mode);
}
"""

_shim_path: Optional[str] = None
_shim_tried = False


def _shim() -> Optional[str]:
    """Compile (once) the ``fopen`` shim; returns its path or None when there is no compiler."""
    global _shim_path, _shim_tried
    if _shim_tried:
        return _shim_path
    _shim_tried = True
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    digest = hashlib.sha1(_SHIM_C.encode()).hexdigest()[:12]
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "wo")
    path = os.path.join(cache, f"eflomal_seed_{digest}.so")
    if not os.path.exists(path):
        try:
            os.makedirs(cache, exist_ok=True)
            with tempfile.TemporaryDirectory() as d:
                src = os.path.join(d, "shim.c")
                with open(src, "w") as f:
                    f.write(_SHIM_C)
                tmp = os.path.join(d, "shim.so")
                subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", tmp, src, "-ldl"], check=True,
                               capture_output=True)
                shutil.copyfile(tmp, path + f".{os.getpid()}")
                os.replace(path + f".{os.getpid()}", path)
        except (OSError, subprocess.CalledProcessError) as e:  # pragma: no cover - no toolchain
            logger.warning("could not build the eflomal seed shim (%s); alignment is not seeded", e)
            return None
    _shim_path = path
    return path


def seed_shim_available() -> bool:
    """True if :func:`align` can make eflomal deterministic (a C compiler built the seed shim)."""
    return _shim() is not None


def align_directions(src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]], seed: int = 1,
                     model: int = 3, n_samplers: int = 3, rel_iterations: float = 1.0,
                     null_prior: float = 0.2) -> Tuple[List[List[Link]], List[List[Link]]]:
    """Run eflomal on tokenized parallel sentences; returns (forward, reverse) links per sentence.

    Both directions' links are ``(src index, tgt index)`` (eflomal writes the reverse file in
    the same orientation). Empty sentences get no links. eflomal lowercases words itself.
    ``n_samplers`` independent Gibbs samplers are combined (eflomal's default, 3; they run one
    after the other since OpenMP is limited to one thread); see the module docstring for ``seed``.
    Raises :class:`wo.extras.MissingExtra` when eflomal (the smt extra) is not installed.
    """
    from ..extras import require

    require("smt", "word alignment (eflomal)", modules=["eflomal"])
    import eflomal

    if len(src) != len(tgt):
        raise ValueError(f"align: {len(src)} source sentences but {len(tgt)} target sentences")
    keep = [k for k in range(len(src)) if len(src[k]) and len(tgt[k])]
    fwd_all: List[List[Link]] = [[] for _ in src]
    rev_all: List[List[Link]] = [[] for _ in src]
    if not keep:
        return fwd_all, rev_all
    env_backup: Dict[str, Optional[str]] = {k: os.environ.get(k) for k in
                                            ("OMP_NUM_THREADS", "LD_PRELOAD", "WO_EFLOMAL_SEED_FILE")}
    with tempfile.TemporaryDirectory(prefix="wo_eflomal_") as d:
        fwd_path, rev_path = os.path.join(d, "fwd"), os.path.join(d, "rev")
        seed_path = os.path.join(d, "seed")
        with open(seed_path, "wb") as f:
            f.write(hashlib.sha256(f"wo-eflomal-{seed}".encode()).digest()[:8])
        shim = _shim()
        try:
            os.environ["OMP_NUM_THREADS"] = "1"
            if shim is not None:
                pre = env_backup["LD_PRELOAD"]
                os.environ["LD_PRELOAD"] = shim + (" " + pre if pre else "")
                os.environ["WO_EFLOMAL_SEED_FILE"] = seed_path
            else:
                logger.warning("eflomal runs unseeded: results vary between runs")
            aligner = eflomal.Aligner(model=model, n_samplers=n_samplers, rel_iterations=rel_iterations,
                                      null_prior=null_prior)
            src_lines = [" ".join(_clean(w) for w in src[k]) + "\n" for k in keep]
            tgt_lines = [" ".join(_clean(w) for w in tgt[k]) + "\n" for k in keep]
            aligner.align(src_lines, tgt_lines, links_filename_fwd=fwd_path, links_filename_rev=rev_path,
                          quiet=True)
        finally:
            for k, v in env_backup.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        for path, out in ((fwd_path, fwd_all), (rev_path, rev_all)):
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            for n, k in enumerate(keep):
                links = read_moses_links(lines[n])
                for i, j in links:
                    if not (0 <= i < len(src[k]) and 0 <= j < len(tgt[k])):
                        raise AssertionError(f"eflomal link {i}-{j} out of range in sentence {k}")
                out[k] = sorted(links)
    return fwd_all, rev_all


def _clean(w: str) -> str:
    # eflomal splits on whitespace; tokens have none, but be safe
    return w.replace(" ", "_") if w else "_"


def align(src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]], seed: int = 1,
          method: str = "grow-diag-final-and", **kwargs) -> List[List[Link]]:
    """Word-align tokenized parallel sentences with eflomal (both directions) and symmetrise.

    Returns, per sentence pair, the sorted links ``(i, j)`` (source word i, target word j).
    ``method`` is passed to :func:`symmetrize`; other keyword arguments to
    :func:`align_directions`. Deterministic for a fixed ``seed`` when
    :func:`seed_shim_available` (see the module docstring).
    """
    fwd, rev = align_directions(src, tgt, seed=seed, **kwargs)
    return [symmetrize(f, r, method) for f, r in zip(fwd, rev)]


if __name__ == "__main__":  # pragma: no cover
    print("seed shim:", _shim(), file=sys.stderr)
