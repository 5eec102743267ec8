"""Training driver: scaled large-margin learning-guided search (Zhang & Clark 2015, Alg. 3, s. 4.4).

One model is trained without input constraints (bags of words) and serves every input
condition (section 5.5).  Parameters are averaged; dev BLEU is measured after each epoch and
the best epoch is kept.
"""
from __future__ import annotations

import dataclasses
import random
import sys
import time
from typing import Callable, List, Optional, Sequence

import numpy as np

from .._fast._weights import averaged
from ..eval.metrics import score
from ..io.conllu import Sentence
from ..io.trees import is_projective, projectivize, scramble
from ..learn import epoch_loop, mix_shards, train_pass
from ..model import Model, TagDictionary
from .core import DepSearch
from .instance import choose_given, make_instance
from .linearizer import DEFAULT_BEAM_FACTOR, DEFAULT_BUDGET_FACTOR, DEFAULT_COMPLETE_BEAM, Linearizer

TRAIN_BEAM_FACTOR = 4.0


TRAIN_GIVEN = ("none", "full", "mixed")


def training_instances(sents: Sequence[Sentence], tagdict: TagDictionary, seed: int = 1,
                       kept: Optional[List[int]] = None, given: str = "none",
                       question_labels: bool = False):
    """Scrambled, projective training instances with gold arrays.

    Non-projective trees are projectivised by lifting (:func:`wo.data.projectivize`), so no
    training sentence loses words; the surface order is the gold order either way.
    given: the input condition trained on: "none" (bags of words, Zhang & Clark 2015
    section 5.5), "full" (POS and the unordered tree given, as in tree linearization) or
    "mixed" (every sentence twice: as a bag and as a full tree).
    Returns (instances, dropped) where dropped counts empty or non-tree sentences; ``kept``,
    when given, receives the index in ``sents`` of every instance; question_labels: see
    :func:`wo.dep.instance.make_instance`.  Raises ValueError for an unknown ``given``.
    """
    if given not in TRAIN_GIVEN:
        raise ValueError(f"training input condition must be one of {TRAIN_GIVEN}, not {given!r}")
    out, dropped = [], 0
    for i, s in enumerate(sents):
        if len(s) == 0:
            dropped += 1
            continue
        if not is_projective(s.heads):
            try:
                s = dataclasses.replace(s, heads=projectivize(s.heads))
            except ValueError:
                dropped += 1
                continue
        sc, perm = scramble(s, seed, i)
        sc.meta["_gold_pos"] = [int(p) for p in perm]
        for cond in (("none", "full") if given == "mixed" else (given,)):
            pos, heads = choose_given(sc, cond, 1.0, 1.0, None)
            out.append(make_instance(sc.forms, pos, heads, tagdict, gold=sc, question_labels=question_labels))
            if kept is not None:
                kept.append(i)
    return out, dropped


def train_epoch(core: DepSearch, insts: Sequence, rng: random.Random, beam_factor: float,
                budget_factor: float, easy_first: bool = True, lm_of: Optional[Sequence] = None) -> dict:
    """One training pass over ``insts`` in an order shuffled by ``rng``.

    Per sentence: Algorithm 3 (``DepSearch.train_one``, chart k*n with k = ``beam_factor``,
    ``budget_factor`` pops per word), then, with ``easy_first``, the easy-first pass; the
    averaging count is advanced once per sentence.  Instances are :class:`wo.data.Instance` or
    :class:`wo.sr.SRInstance` (their ``extra()`` keyword arrays are passed through).
    lm_of: optional LM per instance (jackknifed LMs: the LM that sentence j trains with does
    not contain sentence j); None keeps the search's LM.
    Returns {"seconds", "updates", "reached_gold" (share), "pops"}.
    """
    lm0 = core.lm

    def step(j: int, inst) -> tuple:
        n = inst.n
        if lm_of is not None:
            core.use_lm(lm_of[j])
        kw = core.kwargs(inst)
        ok, p, _ = core.train_one(*inst.arrays(), inst.gold, max(1, int(round(beam_factor * n))),
                                  max(8, int(budget_factor * n)), **kw)
        if easy_first:
            core.train_easy_first(*inst.arrays(), inst.gold, **kw)
        return ok, p

    ent = train_pass(core, insts, rng, step)
    if lm_of is not None:
        core.use_lm(lm0)
    return ent


def _ipm_shard(state: tuple, batch: list) -> list:
    """One shard's epoch of iterative parameter mixing (a joblib/Dask worker): from the shared
    weights W (float32[2^b]), accumulator U (float64[2^b]) and averaging count c, train
    ``train_epoch`` on the shard; returns [(W, U, sentences trained, epoch record)]."""
    W0, U0, c0, bits, max_tau, beam_factor, budget_factor, easy_first, lm_path = state
    out = []
    for insts, seed in batch:
        lm = None
        if lm_path:
            from ..lm.model import LanguageModel
            lm = LanguageModel.shared(lm_path, verify=True)
        W, U = np.array(W0, dtype=np.float32), np.array(U0, dtype=np.float64)
        core = DepSearch(W, bits, U, lm=lm)
        core.max_tau = max_tau
        core.avg_count = c0
        ent = train_epoch(core, insts, random.Random(seed), beam_factor, budget_factor, easy_first)
        out.append((W, U, len(insts), ent))
    return out


def mix_epoch(core: DepSearch, W: np.ndarray, U: np.ndarray, hash_bits: int, insts: Sequence, epoch: int,
              seed: int, jobs: int, beam_factor: float, budget_factor: float, easy_first: bool, lm=None,
              backend: str = "loky", scheduler: Optional[str] = None) -> dict:
    """One epoch of iterative parameter mixing (McDonald, Hall & Mann 2010, Algorithm 2, uniform
    mixture): the instances are cut into ``jobs`` shards (a fixed-seed shuffle per epoch), each
    shard trains one epoch from the same weights in its own process (joblib, or a Dask cluster
    with ``backend="dask"``), and the shards' weights W and averaging accumulators U are
    averaged in place (float32/float64[2^b]); the averaging count advances by the mean shard
    size, so ``W - U / c`` stays the average of the mixed weight vectors over training.
    Returns the epoch record of :func:`train_epoch`, summed over shards (seconds = wall time).
    """
    t0 = time.perf_counter()
    idx = list(range(len(insts)))
    random.Random(seed * 1000003 + epoch).shuffle(idx)
    shards = [([insts[j] for j in idx[k::jobs]], seed * 7919 + epoch * 101 + k) for k in range(jobs)]
    state = (W, U, core.avg_count, hash_bits, core.max_tau, beam_factor, budget_factor, easy_first,
             getattr(lm, "path", None) if lm is not None else None)
    res, step = mix_shards(_ipm_shard, state, shards, W, U, jobs, backend, scheduler)
    core.avg_count = core.avg_count + step
    ents = [r[3] for r in res]
    n = max(1, len(insts))
    return {"seconds": round(time.perf_counter() - t0, 2), "updates": int(sum(e["updates"] for e in ents)),
            "reached_gold": round(sum(e["reached_gold"] * r[2] for e, r in zip(ents, res)) / n, 4),
            "pops": int(sum(e["pops"] for e in ents)), "shards": jobs}


def decode_bags(model: Model, sents: Sequence[Sentence], seed: int = 1, given: str = "none",
                **opts) -> List[str]:
    """Decode scrambled sentences in-process; returns tokenized outputs.

    given: the trusted columns, as ``wo linearize --given`` ("none": bags of words, the forms
    alone; "full": POS and the unordered tree).
    """
    lin = Linearizer(model, **opts)
    hyps = []
    for i, s in enumerate(sents):
        sc, _ = scramble(s, seed, i)
        hyps.append(lin.linearize(sc.forms, *choose_given(sc, given, 1.0, 1.0, None)).text)
    return hyps


def train(train_sents: Sequence[Sentence], dev_sents: Sequence[Sentence], epochs: int, out: str,
          hash_bits: int = 22, beam_factor: float = TRAIN_BEAM_FACTOR,
          train_budget_factor: float = 30.0, budget_factor: float = DEFAULT_BUDGET_FACTOR,
          seed: int = 1, log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
          train_name: str = "", dev_name: str = "", max_tau: float = 0.05,
          easy_first: bool = True, lm: Optional[str] = None,
          lm_folds: Optional[Sequence[str]] = None, given: str = "none",
          dev_given: Optional[str] = None, question_labels: bool = False) -> dict:
    """Train and save the best-epoch averaged model to ``out``.

    given: the input condition of the training instances (see :func:`training_instances`:
    "none", "full" or "mixed"); dev_given: what the best epoch is chosen on: "none" (dev bag
    BLEU), "full" (dev full-tree BLEU) or "both" (their mean); default "full" for ``given``
    "full", else "none".  question_labels: label every token of an input with a question mark
    (:func:`wo.dep.instance.make_instance`); recorded in the model header, which decoding reads.

    lm: path of an n-gram LM (binary or ARPA) whose log10 probabilities are real-valued
    features (Zhang, Blackwood & Clark 2012); the model header names it and decoding loads it
    from beside the model (or ``--lm``).  lm_folds: K jackknifed LMs (paths) for training:
    train_sents is cut into K contiguous blocks and a sentence of block k trains with
    lm_folds[k], an LM estimated without block k (``lm`` itself, estimated with all of the
    training text, is the one dev decoding and the saved model use).  Without it the LM has
    seen every training sentence and the learned LM weights trust it more than held-out text
    deserves.

    beam_factor: chart size k*n during training; train_budget_factor: pop budget per training
    sentence, in pops per word; budget_factor: decoding default stored in the model header.
    max_tau: cap on the large-margin step size tau (PA-I style; 0 = the paper's uncapped step).
    easy_first: after Algorithm 3 on a sentence, also make an easy-first pass
    (``DepSearch.train_easy_first``) that trains the decisions of the decoder's merge
    completion.  Measured on 3,000 EWT train sentences, 2 epochs, dev[:300]: bag BLEU 14.15 ->
    14.40, full-tree BLEU 54.99 -> 60.29 (both with max_tau 0.05; uncapped: 13.20 / 51.38).
    Returns the training record (per-epoch seconds, updates, reached-gold share, dev BLEU).
    """
    import os

    from ..lm.model import LanguageModel

    t_all = time.perf_counter()
    lm_model = LanguageModel.load(lm) if lm else None
    tagdict = TagDictionary.build(train_sents)
    kept: List[int] = []
    dev_given = dev_given or ("full" if given == "full" else "none")
    if dev_given not in ("none", "full", "both"):
        raise ValueError(f"dev_given must be none, full or both, not {dev_given!r}")
    insts, dropped = training_instances(train_sents, tagdict, seed, kept, given, question_labels)
    lm_of = None
    if lm_folds:
        if lm_model is None:
            raise ValueError("lm_folds needs lm (the LM of all the training text)")
        folds = [LanguageModel.load(p) for p in lm_folds]
        K, N = len(folds), len(train_sents)
        lm_of = [folds[i * K // N] for i in kept]   # kept: sentence index per instance
    log(f"training on {len(insts)} sentences ({dropped} empty/non-tree dropped, non-projective ones lifted), "
        f"{len(tagdict.table)} word types in the tag dictionary")
    record = {"epochs": [], "dropped_sentences": dropped, "train_sentences": len(insts),
              "train": train_name, "dev": dev_name, "hash_bits": hash_bits, "max_tau": max_tau,
              "easy_first": easy_first, "beam_factor": beam_factor,
              "train_budget_factor": train_budget_factor, "given": given, "dev_given": dev_given,
              "question_labels": question_labels}

    extra = {"question_labels": question_labels}
    if lm_model is not None:
        extra["lm"] = dict(lm_model.fingerprint(), file=os.path.basename(lm), path=os.path.abspath(lm))
        record["lm"] = dict(extra["lm"], folds=[os.path.basename(p) for p in lm_folds or []])

    def make_model(avg: np.ndarray) -> Model:
        return Model(avg, hash_bits, tagdict, dict(extra, decode={
            "beam_factor": DEFAULT_BEAM_FACTOR, "budget_factor": budget_factor,
            "complete_beam": DEFAULT_COMPLETE_BEAM}))

    def dev_eval(model: Model) -> float:
        refs = [s.text() for s in dev_sents]
        conds = ["none", "full"] if dev_given == "both" else [dev_given]
        return float(np.mean([score(decode_bags(model, dev_sents, seed, g, lm=lm_model or "none"), refs).bleu
                              for g in conds]))

    return run_training(insts, epochs, out, record, make_model, dev_eval if dev_sents else None,
                        hash_bits=hash_bits, max_tau=max_tau, seed=seed, beam_factor=beam_factor,
                        budget_factor=train_budget_factor, easy_first=easy_first, log=log, t_all=t_all,
                        lm=lm_model, lm_of=lm_of)


def run_training(insts: Sequence, epochs: int, out: str, record: dict,
                 make_model: Callable[[np.ndarray], Model],
                 dev_eval: Optional[Callable[[Model], float]], hash_bits: int = 22,
                 max_tau: float = 0.05, seed: int = 1, beam_factor: float = TRAIN_BEAM_FACTOR,
                 budget_factor: float = 30.0, easy_first: bool = True,
                 log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
                 t_all: Optional[float] = None, lm=None, lm_of: Optional[Sequence] = None,
                 compact=False, jobs: int = 1, backend: str = "loky",
                 scheduler: Optional[str] = None) -> dict:
    """Training of the dependency search core (Algorithm 3, averaged weights) for word ordering
    and SR, in the epoch loop every system shares (:func:`wo.learn.epoch_loop`).

    Weights: float32[2**hash_bits] with a float64 accumulator for averaging.  After each epoch
    the averaged model (``make_model(avg)``) is scored by ``dev_eval`` (BLEU, or None without
    dev data: every epoch is saved) and saved to ``out`` when it is the best so far; the final
    header's ``training`` entry carries ``record`` plus per-epoch figures, best epoch and total
    seconds.  lm: the search's LM; lm_of: optional per-instance LMs (see :func:`train_epoch`);
    compact: save the final model in the compact form (:meth:`wo.model.Model.save`).
    jobs > 1 (or backend "dask"): iterative parameter mixing over that many shards
    (:func:`mix_epoch`); jackknifed ``lm_of`` LMs are not supported there (ValueError).
    Returns that entry.  Raises OSError if ``out`` cannot be written.
    """
    W = np.zeros(1 << hash_bits, dtype=np.float32)
    U = np.zeros(1 << hash_bits, dtype=np.float64)
    core = DepSearch(W, hash_bits, U, lm=lm)
    core.max_tau = max_tau
    rng = random.Random(seed)
    mixing = jobs > 1 or backend == "dask"
    if mixing and lm_of is not None:
        raise ValueError("parameter mixing (--jobs) does not support jackknifed LMs")

    def run_epoch(ep: int) -> dict:
        if mixing:
            return mix_epoch(core, W, U, hash_bits, insts, ep, seed, max(1, jobs), beam_factor, budget_factor,
                             easy_first, lm, backend, scheduler)
        return train_epoch(core, insts, rng, beam_factor, budget_factor, easy_first, lm_of)

    return epoch_loop(epochs, run_epoch, lambda: make_model(averaged(W, U, core.avg_count)), out, record,
                      dev_eval, log, t_all, compact)
