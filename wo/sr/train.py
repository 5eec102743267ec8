"""Training of SR models: gold positions (``original_id`` or the section 5.7 alignment) and the
shared training loop of :mod:`wo.dep.train` over SR instances."""
from __future__ import annotations

import dataclasses
import sys
import time
from collections import Counter
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from .inflect import Lexicon
from .realizer import (DEFAULT_SR_BEAM_FACTOR, DEFAULT_SR_BUDGET_FACTOR, DEFAULT_SR_COMPLETE_BEAM,
                       Realizer, align, sr_instance)
from .t1 import SRSentence

# ---------------------------------------------------------------------------------- training
def lift_training(sents: Sequence[SRSentence], positions: Sequence[Sequence[int]]):
    """The lifting model (:class:`wo.sr.nonproj.LiftModel`) of training sentences with their
    gold positions (1-based reference position per token)."""
    from .nonproj import LiftModel, lift_steps

    trees = []
    for s, pos in zip(sents, positions):
        n = len(s)
        surf = [0] * n
        for i, p in enumerate(pos):
            surf[p - 1] = i
        sh = [0 if s.heads[surf[q]] == 0 else pos[s.heads[surf[q]] - 1] for q in range(n)]
        try:
            st = lift_steps(sh)
        except ValueError:
            continue
        trees.append((list(s.heads), list(s.deprels), list(s.upos), list(s.lin), [st[pos[i] - 1] for i in range(n)]))
    return LiftModel.build(trees)


def gold_positions_for(s: SRSentence, ref: Optional[Sequence[str]], lex: Lexicon) -> Tuple[Optional[List[int]], str]:
    """Reference positions of a training sentence: ``original_id`` if present, else the
    section-5.7 alignment (:func:`align`) against the reference tokens.  Returns (positions or
    None, reason: "original_id", "aligned", "no reference", "not aligned")."""
    if s.orig:
        return list(s.orig), "original_id"
    if ref is None:
        return None, "no reference"
    p = align(s, ref, lex)
    if p is None:
        return None, "not aligned"
    return p, "aligned"


def training_sentences(train: Sequence[SRSentence], train_refs: Optional[Sequence[Sequence[str]]],
                       lexicon: Lexicon) -> Tuple[List[SRSentence], List[List[int]], Counter]:
    """The usable training sentences with their gold positions (:func:`gold_positions_for`), gold
    forms filled in from ``train_refs`` where column 3 has none; returns (sentences, positions,
    dropped sentences by reason)."""
    reasons: Counter = Counter()
    kept, kept_pos = [], []
    for i, s in enumerate(train):
        if s.error or len(s) == 0:
            reasons["unusable input"] += 1
            continue
        if not all(s.forms) and train_refs is None:
            reasons["gold form missing or '_' in column 3, no --train-ref"] += 1
            continue
        ref = train_refs[i] if train_refs is not None else None
        pos, why = gold_positions_for(s, ref, lexicon)
        if pos is None:
            reasons[why] += 1
            continue
        if not all(s.forms):
            s = dataclasses.replace(s, forms=[ref[p - 1] for p in pos])
        kept.append(s)
        kept_pos.append(pos)
    return kept, kept_pos, reasons


def train_sr(train: Sequence[SRSentence], dev: Sequence[SRSentence], dev_refs: Sequence[str],
             epochs: int, out: str, lexicon: Lexicon, train_refs: Optional[Sequence[Sequence[str]]] = None,
             hash_bits: int = 23, beam_factor: float = 8.0, train_budget_factor: float = 100.0,
             max_tau: float = 0.05, seed: int = 1,
             log: Callable[[str], None] = lambda m: print(m, file=sys.stderr), meta: Optional[dict] = None,
             lm: Optional[str] = None, question_labels: bool = True, contractions=None,
             compact=False, jobs: int = 1, backend: str = "loky",
             scheduler: Optional[str] = None) -> dict:
    """Train an SR model (Zhang & Clark 2015, Algorithm 3 with the section 5.7 search) and save
    the best epoch (by dev BLEU, SR metric on lower-cased tokens) to ``out``.

    train: T1 sentences with gold forms (column 3) and ``original_id``, or with ``train_refs``
    (reference tokens per sentence) for the alignment; dev/dev_refs: T1 input and tokenized
    references (may be empty: then every epoch is saved).  Each sentence is trained with its
    full given tree, labels and ``lin`` as constraints (Algorithm 3), then an easy-first pass.
    lm: path of an n-gram LM over (lower-cased) forms whose log10 probabilities are real-valued
    features of the search (Zhang, Blackwood & Clark 2012), named in the model header and
    loaded from beside the model when decoding; its text must not contain the training
    sentences (no jackknifing here).  question_labels: mark the labels of question clauses'
    dependents (:func:`wo.sr.realizer.sr_instance`); recorded in the model header.
    contractions: the multiword-token table (:class:`wo.sr.mwt.Contractions`) stored in the
    header (``sr.mwt``); the language is the lexicon's (``sr.lang``); the lifting model of
    non-projective orders (:mod:`wo.sr.nonproj`) is learned from the training trees (``sr.lift``).  compact: False, True
    or "float16", or "q8" (:meth:`wo.model.Model.save`).  jobs/backend/scheduler:
    iterative parameter mixing over ``jobs`` shards in joblib processes or on a Dask cluster
    (:func:`wo.dep.train.mix_epoch`; McDonald, Hall & Mann 2010).
    Returns the training record (dropped sentences by reason, gold forms added, per-epoch
    seconds/updates/dev BLEU).
    """
    from ..dep.train import run_training
    from ..eval.metrics import sr_score
    from ..model import Model, TagDictionary

    t_all = time.perf_counter()
    insts, added = [], 0
    kept, kept_pos, reasons = training_sentences(train, train_refs, lexicon)
    for s, pos in zip(kept, kept_pos):
        inst = sr_instance(s, lexicon, pos, question_labels=question_labels)
        added += inst.added_gold
        insts.append(inst)
    lifted = sum(1 for i in insts if i.lifted)
    log(f"SR training on {len(insts)} sentences ({lifted} non-projective ones projectivised); "
        f"dropped: {dict(reasons) or 'none'}; gold forms added to the candidates: {added}")
    record = {"epochs": [], "dropped": dict(reasons), "train_sentences": len(insts), "projectivised": lifted,
              "gold_forms_added": added, "hash_bits": hash_bits, "beam_factor": beam_factor,
              "train_budget_factor": train_budget_factor, "max_tau": max_tau,
              "question_labels": question_labels}
    record.update(meta or {})

    lift = lift_training(kept, kept_pos)
    record["lift_contexts"] = len(lift.table)
    extra, lm_model = {}, None
    if lm:
        import os

        from ..lm.model import LanguageModel
        lm_model = LanguageModel.load(lm)
        extra["lm"] = dict(lm_model.fingerprint(), file=os.path.basename(lm), path=os.path.abspath(lm))
        record["lm"] = extra["lm"]

    def make_model(avg: np.ndarray) -> Model:
        return Model(avg, hash_bits, TagDictionary({}, ["_"]), dict(extra, **{
            "kind": "sr", "sr": {"lexicon": lexicon.to_json(), "question_labels": question_labels,
                                 "lang": lexicon.lang, "lift": lift.to_json(),
                                 **({"mwt": contractions.to_json()} if contractions is not None else {})},
            "decode": {"beam_factor": DEFAULT_SR_BEAM_FACTOR, "budget_factor": DEFAULT_SR_BUDGET_FACTOR,
                       "complete_beam": DEFAULT_SR_COMPLETE_BEAM}}))

    def dev_eval(model: Model) -> float:
        r = Realizer(model, lm=lm_model or "none")
        return sr_score([r.realize(s).text if not s.error else " ".join(s.lemmas) for s in dev],
                        list(dev_refs), bleu_only=True).bleu

    return run_training(insts, epochs, out, record, make_model, dev_eval if dev else None,
                        hash_bits=hash_bits, max_tau=max_tau, seed=seed, beam_factor=beam_factor,
                        budget_factor=train_budget_factor, easy_first=True, log=log, t_all=t_all,
                        lm=lm_model, compact=compact, jobs=jobs, backend=backend, scheduler=scheduler)


def train_sr_local(train: Sequence[SRSentence], dev, dev_refs: Optional[Sequence[str]],
                   epochs: int, out: str, lexicon, train_refs: Optional[Sequence[Sequence[str]]] = None,
                   hash_bits: int = 20, beam: int = 16, seed: int = 1,
                   log: Callable[[str], None] = lambda m: print(m, file=sys.stderr), meta: Optional[dict] = None,
                   contractions=None, compact=False, jobs: int = 1, backend: str = "loky",
                   scheduler: Optional[str] = None, suffix: Optional[str] = None, sig: bool = False,
                   ends: bool = False, seeds: int = 1, form_context: bool = False, r2l: float = 0.0) -> dict:
    """Train an SR model whose order comes from the local orderer (:mod:`wo.sr.order`: each
    head's domain ordered by a linear model with beam search, Bohnet et al. 2010) and save the
    best epoch by dev BLEU (SR metric, lower-cased) to ``out``.

    The arguments are :func:`train_sr`'s: training T1 sentences with gold forms and
    ``original_id`` (or ``train_refs`` for the alignment), dev input and references (empty:
    every epoch is saved; or ``dev`` a function returning (dev input, references), called
    while the worker processes build the training domains, and ``dev_refs`` None), the lexicon
    (inflection: the realised form of a token is its first candidate; a :class:`Lexicon`, or a
    function returning one, which is then built here while the workers build the domains), the
    multiword-token table (or a function returning it, called likewise), ``compact``.
    hash_bits: size of the weight table (2^hash_bits float32); beam: states per step of the
    domain search (recorded in the header, ``sr.order.beam``).  The lifting model of non-projective orders is learned as for
    :func:`train_sr`.  jobs/backend/scheduler: the domains are built and the epochs trained
    (iterative parameter mixing, :class:`wo.sr.order.LocalTrainer`) in ``jobs`` joblib
    processes or on a Dask cluster; dev is decoded in this process, with loky processes while
    the workers train the next epoch (:func:`wo.learn.epoch_loop`'s ``start_epoch``).  suffix:
    the order suffix spec (:func:`wo.sr.order.suffix_function`; recorded as ``sr.order.suffix``).
    sig, ends: the domain-signature and the phrase-ends templates (:class:`wo.sr.order.LocalOrderer`;
    ``sr.order.sig``, ``sr.order.ends``).  seeds: train that many perceptrons, each on its
    own shuffles of the training domains (seeds ``seed``, ``seed + 1``, ...), and average their
    averaged weights after every epoch (a bagging-like ensemble in one weight table: 5-fold CV
    with gold forms, epoch 7, one -> three: ja 90.57 -> 91.08, zh 84.07 -> 84.46, fr_partut
    89.14 -> 89.46, vi 86.13 -> 86.41, tr 77.39 -> 77.53, de 72.80 -> 72.83; more at earlier
    epochs).  form_context: the lexicon has :class:`wo.sr.inflect.FormContext` models
    without and with the next-initial templates; after the last epoch one of them and its
    weight in the choice of forms (``decode.context_weight``) are chosen on dev among
    ``FormContext.WEIGHTS`` (``context_dev`` and ``context_dev_next_initial`` in the record: dev
    BLEU by weight, no LM; on ties without the templates, then the smaller weight) and the
    other is dropped.  r2l: when > 0, ``seeds`` more perceptrons learn a right-to-left model on
    the mirrored domains (:meth:`wo.sr.order.DomainSet.mirrored`; seeds ``seed + seeds``, ...),
    which rescores each domain's final beam with this weight (``sr.order.r2l``; the weight
    table is then 2^(hash_bits + 1): the left-to-right half, then the right-to-left half).
    With loky processes each epoch of all the perceptrons (seeds and directions) is one
    dispatch of their shards (:func:`wo.sr.order.start_epochs`).  Returns
    the training record (dropped sentences by reason, domains, per-epoch seconds/updates/dev
    BLEU, best epoch).  Raises OSError if ``out`` cannot be written, ValueError for an unknown
    suffix spec.
    """
    from ..eval.metrics import sr_score
    from ..io.batch import map_start
    from ..model import Model, TagDictionary
    from ..learn import epoch_loop
    from .order import (FEATURE_SET as ORDER_FEATURES, DomainSet, LocalTrainer, join_tables, start_epochs,
                        suffix_function)

    suffix = None if suffix in (None, "none") else suffix
    suffix_function(suffix)   # ValueError before any work

    t_all = time.perf_counter()
    if callable(lexicon) and not all(s.orig for s in train if not s.error):
        lexicon = lexicon()          # the alignment of sentences without original_id needs it
    kept, kept_pos, reasons = training_sentences(train, train_refs, None if callable(lexicon) else lexicon)
    par = {"jobs": jobs, "backend": backend, "scheduler": scheduler}
    pairs = list(zip(kept, kept_pos))
    n_chunks = 1 if jobs == 1 and backend != "dask" else 4 * max(1, jobs)
    chunks = [pairs[i::n_chunks] for i in range(n_chunks)]
    lex_task = callable(lexicon) and jobs > 1 and backend == "loky"   # the longest task, first in the pool
    tasks = ([("lexicon", lexicon)] if lex_task else []) + [("domains", c) for c in chunks]
    wait = map_start(_prepare, ((suffix, sig),), tasks, chunk=1, **par)   # loky workers build the domains ...
    if callable(dev):                                      # ... while the dev set, the contractions
        dev, dev_refs = dev()
    if callable(contractions):
        contractions = contractions()
    if callable(lexicon) and not lex_task:                 # and the lexicon are made here
        lexicon = lexicon()
    lift = lift_training(kept, kept_pos)
    built = wait()
    if lex_task:
        lexicon = Lexicon.from_json(built.pop(0))
    domains = DomainSet.concat([b[0] for b in built])
    lifted = sum(b[1] for b in built)
    log(f"SR training (local orderer) on {len(kept)} sentences, {len(domains)} domains ({lifted} non-projective "
        f"sentences projectivised); dropped: {dict(reasons) or 'none'}")
    record = {"epochs": [], "dropped": dict(reasons), "train_sentences": len(kept), "projectivised": lifted,
              "domains": len(domains), "hash_bits": hash_bits, "beam": beam, "orderer": "local", "jobs": jobs,
              "backend": backend}
    record.update(meta or {})
    record["lift_contexts"] = len(lift.table)
    header = {"kind": "sr",
              "sr": {"lexicon": lexicon.to_json(), "question_labels": False, "lang": lexicon.lang,
                     "lift": lift.to_json(), "order": {"kind": "local", "feature_set": ORDER_FEATURES, "beam": beam,
                               **({"suffix": suffix} if suffix else {}), **({"sig": True} if sig else {}),
                               **({"ends": True} if ends else {}), **({"r2l": float(r2l)} if r2l > 0 else {})},
                     **({"mwt": contractions.to_json()} if contractions is not None else {})}}
    if seeds < 1:
        raise ValueError(f"seeds must be at least 1, not {seeds}")
    record["seeds"] = seeds
    record["r2l"] = float(r2l) if r2l > 0 else 0.0
    trainers = [LocalTrainer(domains, hash_bits, beam, seed + i, suffix=suffix, sig=sig, ends=ends, **par)
                for i in range(seeds)]
    trainer = trainers[0]
    mirrored = domains.mirrored() if r2l > 0 else None
    backward = [LocalTrainer(mirrored, hash_bits, beam, seed + seeds + i, suffix=suffix, sig=sig, ends=ends, **par)
                for i in range(seeds)] if r2l > 0 else []

    def run_epoch(ep: int) -> dict:
        return start_epochs(trainers + backward, ep)()

    def mean(ts) -> np.ndarray:
        if len(ts) == 1:
            return ts[0].averaged()
        return np.mean([t.averaged() for t in ts], axis=0, dtype=np.float64).astype(np.float32)

    def make_model() -> Model:
        table, bits = join_tables(mean(trainers), mean(backward) if backward else None, hash_bits)
        return Model(table, bits, TagDictionary({}, ["_"]), dict(header))

    dev_lexicon = Lexicon.from_json(header["sr"]["lexicon"])   # as a Realizer builds it, once for every epoch

    def dev_eval(model: Model) -> float:
        hyps = _realize_texts(model, dev, dev_lexicon)   # in this process: shipping the model cost more
        return sr_score(hyps, list(dev_refs), bleu_only=True).bleu

    def warm() -> None:
        """The first dev decoding's one-time work, done while the workers train epoch 1: the
        dev tokens' candidate forms (memoised in the lexicon; the learned inflection of unseen
        keys is most of it) and the metric's imports.  pt_bosque: the first dev decoding took
        0.9-1.5 s against 0.5 s later, and with --jobs 2 the workers waited for it."""
        for s in dev:
            if not s.error:
                for i in range(len(s)):
                    dev_lexicon.candidates(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])
        sr_score(["a"], ["a"], bleu_only=True)   # its imports (nltk, sacrebleu, rapidfuzz), once

    def start_epoch(ep: int):
        finish = start_epochs(trainers + backward, ep)   # every perceptron's shards in one dispatch
        if ep == 1 and dev:
            warm()
        return finish

    def choose_context_weight(model: Model) -> None:
        """--form-context: the context model (without or with the next-initial templates) and
        its weight, chosen on dev; the other model leaves the header."""
        from .inflect import FormContext

        def bleu(wt: float) -> float:
            model.header["decode"] = dict(model.header.get("decode", {}), context_weight=wt)
            return round(sr_score(_realize_texts(model, dev, dev_lexicon), list(dev_refs), bleu_only=True).bleu, 2)

        if dev_lexicon.context is None:
            return
        if dev:
            best, ni, grid = FormContext.choose(dev_lexicon, {False: dev_lexicon.context,
                                                              True: dev_lexicon.context_next}, bleu)
        else:
            best, ni, grid = 0.0, False, {}
        dev_lexicon.context_next = None
        model.header["sr"] = dict(model.header["sr"], lexicon=dev_lexicon.to_json())
        dec = dict(model.header.get("decode", {}))
        dec.pop("context_weight", None)
        if best > 0:
            dec["context_weight"] = best
        model.header["decode"] = dec
        model.header["training"]["context_dev"] = {str(w): v for (w, n), v in grid.items() if not n}
        model.header["training"]["context_dev_next_initial"] = {str(w): v for (w, n), v in grid.items() if n}
        log(f"form context weight {best}{' with the next initial' if ni else ''} (dev BLEU by weight "
            f"{model.header['training']['context_dev']}, with the next initial "
            f"{model.header['training']['context_dev_next_initial']})")

    return epoch_loop(epochs, run_epoch, make_model, out, record, dev_eval if dev else None, log, t_all, compact,
                      finish=choose_context_weight if form_context else None,
                      start_epoch=start_epoch if trainer.mixing and backend == "loky" else None)


def _prepare(spec: tuple, batch: list) -> list:
    """Worker of :func:`train_sr_local`'s preparation: each item of ``batch`` is ("domains",
    a list of (training sentence, gold positions)) -> (:class:`wo.sr.order.DomainSet`,
    sentences projectivised), see :func:`_domain_chunk`; or ("lexicon", a function returning
    the :class:`Lexicon`) -> the lexicon's JSON form (:meth:`Lexicon.to_json`: its compiled
    character LM does not pickle)."""
    return [task().to_json() if kind == "lexicon" else _domain_chunk(spec, [task])[0] for kind, task in batch]


def _domain_chunk(spec, batch: list) -> list:
    """Worker of :func:`train_sr_local`: each item of ``batch`` is a list of (training sentence,
    gold positions); spec: (the order suffix spec, the domain signature flag); returns per item (:class:`wo.sr.order.DomainSet` of its domains, number of sentences
    projectivised)."""
    from ..learn import collector_paused
    from .order import DomainSet, gold_domains, suffix_function
    from .realizer import training_tree

    suffix, sig = spec
    sfx = suffix_function(suffix)

    out = []
    with collector_paused():
        for pairs in batch:
            doms, lifted = [], 0
            for s, pos in pairs:
                heads, lin, was = training_tree(s, pos)
                lifted += was
                doms += gold_domains(heads, [p - 1 for p in pos], s.lemmas, s.upos, s.deprels, s.feats, lin,
                                     [f.lower() for f in s.forms], sfx, sig)
            out.append((DomainSet.of(doms), lifted))
    return out


def _realize_texts(model, batch: list, lexicon: Optional[Lexicon] = None) -> list:
    """:func:`train_sr_local`'s dev decoding: the SR text of each T1 sentence of
    ``batch`` with ``model`` (no LM reranking; a bad sentence gives its lemmas); lexicon: the
    model's, already built (:class:`Realizer`)."""
    r = Realizer(model, rerank_lm="none", lexicon=lexicon)
    return [r.realize(s).text if not s.error else " ".join(s.lemmas) for s in batch]
