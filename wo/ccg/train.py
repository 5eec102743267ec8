"""Training of CCG word ordering: scaled large-margin learning-guided search with negative
expansion (Zhang & Clark 2015, §3.5, Algorithm 3, including the DP-signature case of a gold
edge pruned by a same-signature non-gold edge), averaged parameters, best dev epoch kept.

Inputs are CCGbank ``.auto`` derivations; the grammar (rule instances, tag dictionary, heads)
is read off the training derivations and stored in the model header, so a model file is
self-contained.
"""
from __future__ import annotations

import random
import sys
import time
from typing import Callable, List, Optional, Sequence

import numpy as np

from .._fast._weights import averaged
from ..eval.metrics import score
from ..io.trees import permutation
from ..learn import epoch_loop, train_pass
from ..model import Model, TagDictionary
from .auto import Derivation
from .core import CCGSearch
from .grammar import Grammar
from .instance import (DEFAULT_CAT_RATIO, DEFAULT_MAX_CATS, DEFAULT_MIN_UNARY, CCGTables, head_table,
                       make_instance)
from .linearizer import (CCG_FEATURE_SET, DEFAULT_BEAM_FACTOR, DEFAULT_BUDGET_FACTOR,
                         DEFAULT_COMPLETE_BEAM, SYSTEM, Linearizer)

TRAIN_BEAM_FACTOR = 4.0


class _Tagged:
    """A derivation's words and POS as the ``forms``/``xpos`` a TagDictionary counts."""

    def __init__(self, d: Derivation):
        self.forms, self.xpos = d.words, d.pos


def build_tables(derivations: Sequence[Derivation], max_cats: int = DEFAULT_MAX_CATS,
                 cat_ratio: float = DEFAULT_CAT_RATIO, min_unary: int = DEFAULT_MIN_UNARY):
    """(Grammar, heads, POS TagDictionary, CCGTables) read off training derivations (error
    items skipped)."""
    ok = [d for d in derivations if d.error is None and d.root is not None]
    g = Grammar.from_derivations(ok)
    heads = head_table(ok)
    td = TagDictionary.build([_Tagged(d) for d in ok])
    return g, heads, td, CCGTables(g, heads, td, max_cats=max_cats, cat_ratio=cat_ratio, min_unary=min_unary)


def scrambled(d: Derivation, seed: int, index: int):
    """(forms, pos, perm) of a derivation's words shuffled with the fixed-seed permutation of
    sentence ``index`` (perm[j] = reference position of token j)."""
    perm = permutation(len(d), seed, index)
    w, p = d.words, d.pos
    return [w[i] for i in perm], [p[i] for i in perm], perm


def training_instances(derivations: Sequence[Derivation], tables: CCGTables, seed: int = 1):
    """Scrambled training instances (POS given, gold arrays); returns (instances, dropped),
    dropped = error items and empty derivations."""
    out, dropped = [], 0
    for i, d in enumerate(derivations):
        if d.error is not None or d.root is None or len(d) == 0:
            dropped += 1
            continue
        forms, pos, perm = scrambled(d, seed, i)
        out.append(make_instance(forms, pos, tables, gold=d, gold_pos=perm))
    return out, dropped


def train_epoch(core: CCGSearch, insts: Sequence, rng: random.Random, beam_factor: float,
                budget_factor: float, easy_first: bool = True) -> dict:
    """One pass over ``insts`` in an order shuffled by ``rng``: Algorithm 3 per sentence (chart
    k*n with k = ``beam_factor``, ``budget_factor`` pops per word), then the easy-first pass;
    the averaging count advances once per sentence.  Returns {"seconds", "updates",
    "dp_pruned_gold_updates" (the section 3.5 DP case), "reached_gold" (share), "pops"}."""
    dp0 = core.n_dp_pruned_gold

    def step(j: int, inst) -> tuple:
        n = inst.n
        ok, p, _ = core.train_one(inst, max(1, int(round(beam_factor * n))), max(8, int(budget_factor * n)))
        if easy_first:
            core.train_easy_first(inst)
        return ok, p

    ent = train_pass(core, insts, rng, step)
    ent["dp_pruned_gold_updates"] = int(core.n_dp_pruned_gold - dp0)
    return ent


def decode_dev(model: Model, dev: Sequence[Derivation], seed: int = 1, **opts) -> List[str]:
    """Decode dev derivations as scrambled bags with POS, in-process; tokenized outputs
    (an error item gives an empty line)."""
    lin = Linearizer(model, **opts)
    out = []
    for i, d in enumerate(dev):
        if d.error is not None or d.root is None or len(d) == 0:
            out.append("")
            continue
        forms, pos, _ = scrambled(d, seed, i)
        out.append(lin.linearize(forms, pos).text)
    return out


def dev_bleu(model: Model, dev: Sequence[Derivation], seed: int = 1, **opts) -> float:
    """BLEU (``wo evaluate``'s scoring) of the dev bags against the reference word order."""
    return score(decode_dev(model, dev, seed, **opts), [" ".join(d.words) for d in dev]).bleu


def train(train_derivs: Sequence[Derivation], dev_derivs: Sequence[Derivation], epochs: int, out: str,
          hash_bits: int = 22, beam_factor: float = TRAIN_BEAM_FACTOR, train_budget_factor: float = 100.0,
          budget_factor: float = DEFAULT_BUDGET_FACTOR, seed: int = 1, max_tau: float = 0.05,
          easy_first: bool = True, max_cats: int = DEFAULT_MAX_CATS, cat_ratio: float = DEFAULT_CAT_RATIO,
          min_unary: int = DEFAULT_MIN_UNARY, train_name: str = "", dev_name: str = "",
          lm: Optional[str] = None,
          log: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> dict:
    """Train a CCG word-ordering model and save the best-epoch averaged model to ``out``.

    train_derivs / dev_derivs: :class:`wo.ccg.auto.Derivation` lists (error items are skipped
    and counted).  beam_factor: training chart k*n; train_budget_factor: training pops per
    word; budget_factor: decoding default stored in the model; max_tau: cap on the
    large-margin step (0 = the paper's uncapped step); easy_first: also train the decisions of
    the merge completion; max_cats, cat_ratio, min_unary: lexical and unary options of
    :class:`wo.ccg.instance.CCGTables` (stored in the model); lm: path of an n-gram LM
    (binary or ARPA) whose log10 probabilities are real-valued features (Zhang, Blackwood &
    Clark 2012), recorded in the model (decoding looks for it beside the model file, as the
    dependency system does).  Weights float32[2**hash_bits].
    Returns the training record (per-epoch seconds, updates, reached-gold share, dev BLEU).
    Raises OSError if ``out`` cannot be written.
    """
    import os

    from ..lm.model import LanguageModel

    t_all = time.perf_counter()
    lm_model = LanguageModel.load(lm) if lm else None
    g, heads, td, tables = build_tables(train_derivs, max_cats, cat_ratio, min_unary)
    insts, dropped = training_instances(train_derivs, tables, seed)
    log(f"training on {len(insts)} sentences ({dropped} dropped), {len(tables.cats)} categories, "
        f"{len(tables.bin_res)} binary and {len(tables.un_res)} unary rules applied")
    header = {"system": SYSTEM,
              "ccg": {"feature_set": CCG_FEATURE_SET, "grammar": g.to_json(),
                      "heads": [[l, r, p, h] for (l, r, p), h in sorted(heads.items())],
                      "options": {"max_cats": max_cats, "cat_ratio": cat_ratio, "min_unary": min_unary}},
              "decode": {"beam_factor": DEFAULT_BEAM_FACTOR, "budget_factor": budget_factor,
                         "complete_beam": DEFAULT_COMPLETE_BEAM}}
    record = {"epochs": [], "train_sentences": len(insts), "dropped_sentences": dropped,
              "train": train_name, "dev": dev_name, "hash_bits": hash_bits, "max_tau": max_tau,
              "beam_factor": beam_factor, "train_budget_factor": train_budget_factor,
              "easy_first": easy_first}
    if lm_model is not None:
        header["lm"] = dict(lm_model.fingerprint(), file=os.path.basename(lm), path=os.path.abspath(lm))
        record["lm"] = dict(header["lm"])
    W = np.zeros(1 << hash_bits, dtype=np.float32)
    U = np.zeros(1 << hash_bits, dtype=np.float64)
    core = CCGSearch(tables, W, hash_bits, U, lm=lm_model)
    core.max_tau = max_tau
    rng = random.Random(seed)

    def make_model() -> Model:
        model = Model(averaged(W, U, core.avg_count), hash_bits, td, dict(header))
        model._ccg_tables = tables
        return model

    return epoch_loop(epochs, lambda ep: train_epoch(core, insts, rng, beam_factor, train_budget_factor, easy_first),
                      make_model, out, record,
                      (lambda model: dev_bleu(model, dev_derivs, seed, lm=lm_model or "none")) if dev_derivs else None,
                      log, t_all)
