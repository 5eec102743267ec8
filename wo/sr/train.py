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
from .instance import align, sr_instance
from .realizer import Realizer
from .stages import DEFAULT_SR_BEAM_FACTOR, DEFAULT_SR_BUDGET_FACTOR, DEFAULT_SR_COMPLETE_BEAM
from .t1 import SRSentence

# ---------------------------------------------------------------------------------- training
def lift_training(sents: Sequence[SRSentence], positions: Sequence[Sequence[int]]):
    """The lifting model (:class:`wo.sr.nonproj.LiftModel`) of training sentences with their
    gold positions (1-based reference position per token): :meth:`wo.sr.stages.LiftStage.fit`."""
    from .stages import LiftStage, TrainingData

    st = LiftStage()
    st.fit(TrainingData(list(sents), [list(p) for p in positions], []))
    return st.model


def stage_header(lexicon: Lexicon, lift, order: dict, contractions=None, forms: bool = True) -> dict:
    """The header of a freshly trained SR model: its language and the stage list
    (:mod:`wo.sr.stages`): lifting (``lift``, threshold 0.5), candidates (``lexicon``), the order
    stage's entry ``order``, then with ``forms`` the forms stage (the lexicon's allomorph table,
    every weight 0: the tuning sets them), the language stage and, with a non-empty table, the
    contractions."""
    from .stages import CandidateStage, ContractionStage, FormStage, LanguageStage, LiftStage

    stages = [LiftStage(lift).to_json(), CandidateStage(lexicon).to_json(), dict(order)]
    if forms:
        stages.append(FormStage(allomorphs=lexicon.allomorphs).to_json())
    stages.append(LanguageStage(lexicon.lang).to_json())
    if contractions is not None and len(contractions):
        stages.append(ContractionStage(contractions).to_json())
    return {"kind": "sr", "sr": {"lang": lexicon.lang, "stages": stages}}


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
        order = {"stage": "order-search", "question_labels": question_labels, "beam_factor": DEFAULT_SR_BEAM_FACTOR,
                 "budget_factor": DEFAULT_SR_BUDGET_FACTOR, "complete_beam": DEFAULT_SR_COMPLETE_BEAM,
                 **({"lm": extra["lm"]} if "lm" in extra else {})}
        return Model(avg, hash_bits, TagDictionary({}, ["_"]),
                     dict(extra, **stage_header(lexicon, lift, order, contractions, forms=False)))

    def dev_eval(model: Model) -> float:
        r = Realizer(model, lm=lm_model or "none", gold_forms=False)   # dev T1 with gold forms: inflect all the same
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
                   ends: bool = False, seeds: int = 1, r2l: float = 0.0) -> dict:
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
    :func:`train_sr`.  jobs/backend/scheduler: the domains are built and the epochs trained in
    ``jobs`` joblib processes or on a Dask cluster: with several perceptrons (``seeds``, ``r2l``)
    and loky processes each perceptron trains whole in a worker (the weights of one process);
    with one, by iterative parameter mixing of its shards (:class:`wo.sr.order.LocalTrainer`); dev is decoded in this process, with loky processes while
    the workers train the next epoch (:func:`wo.learn.epoch_loop`'s ``start_epoch``).  suffix:
    the order suffix spec (:func:`wo.sr.order.suffix_function`; recorded as ``sr.order.suffix``).
    sig, ends: the domain-signature and the phrase-ends templates (:class:`wo.sr.order.LocalOrderer`;
    ``sr.order.sig``, ``sr.order.ends``).  seeds: train that many perceptrons, each on its
    own shuffles of the training domains (seeds ``seed``, ``seed + 1``, ...), and average their
    averaged weights after every epoch (a bagging-like ensemble in one weight table: 5-fold CV
    with gold forms, epoch 7, one -> three: ja 90.57 -> 91.08, zh 84.07 -> 84.46, fr_partut
    89.14 -> 89.46, vi 86.13 -> 86.41, tr 77.39 -> 77.53, de 72.80 -> 72.83; more at earlier
    epochs).  r2l: when > 0, ``seeds`` more perceptrons learn a right-to-left model on
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
    step = -(-len(pairs) // n_chunks) or 1   # contiguous chunks: the domains in sentence order for any jobs
    chunks = [pairs[i:i + step] for i in range(0, len(pairs), step)] or [[]]
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
    order = {"stage": "order-local", "feature_set": ORDER_FEATURES, "beam": beam, **({"suffix": suffix} if suffix else {}),
             **({"sig": True} if sig else {}), **({"ends": True} if ends else {}),
             **({"r2l": float(r2l)} if r2l > 0 else {}), "words_lm": None, "words_weight": 1.0, "view_lms": []}
    header = stage_header(lexicon, lift, order, contractions)
    if seeds < 1:
        raise ValueError(f"seeds must be at least 1, not {seeds}")
    record["seeds"] = seeds
    record["r2l"] = float(r2l) if r2l > 0 else 0.0
    # several perceptrons and several processes: each perceptron trains whole in a worker (the
    # weights of one process); one perceptron: iterative parameter mixing of its shards
    whole = seeds * (2 if r2l > 0 else 1) > 1
    record["parallel"] = ("perceptrons" if whole else "parameter mixing") if jobs > 1 or backend == "dask" else "none"
    trainers = [LocalTrainer(domains, hash_bits, beam, seed + i, suffix=suffix, sig=sig, ends=ends, whole=whole, **par)
                for i in range(seeds)]
    trainer = trainers[0]
    mirrored = domains.mirrored() if r2l > 0 else None
    backward = [LocalTrainer(mirrored, hash_bits, beam, seed + seeds + i, suffix=suffix, sig=sig, ends=ends,
                             whole=whole, **par) for i in range(seeds)] if r2l > 0 else []

    def run_epoch(ep: int) -> dict:
        return start_epochs(trainers + backward, ep)()

    def mean(ts) -> np.ndarray:
        if len(ts) == 1:
            return ts[0].averaged()
        return np.mean([t.averaged() for t in ts], axis=0, dtype=np.float64).astype(np.float32)

    def make_model() -> Model:
        table, bits = join_tables(mean(trainers), mean(backward) if backward else None, hash_bits)
        return Model(table, bits, TagDictionary({}, ["_"]), dict(header))

    dev_lexicon = Lexicon.from_json(header["sr"]["stages"][1]["lexicon"])   # as a Realizer builds it, once for all epochs

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

    return epoch_loop(epochs, run_epoch, make_model, out, record, dev_eval if dev else None, log, t_all, compact,
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
    from .instance import training_tree

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
    ``batch`` with ``model`` (no LM reranking; a bad sentence gives its lemmas; gold forms in
    the input are not used, so that dev made with ``--with-gold`` scores the inflection too);
    lexicon: the model's, already built (:class:`Realizer`)."""
    r = Realizer(model, rerank_lm="none", lexicon=lexicon, gold_forms=False)   # dev with gold forms: inflect
    return [r.realize(s).text if not s.error else " ".join(s.lemmas) for s in batch]


def reference_trees(sents: Sequence[SRSentence], positions: Sequence[Sequence[int]]) -> list:
    """The training sentences in reference order with their trees (:class:`wo.io.conllu.Sentence`:
    forms, lemmas, UPOS, XPOS, FEATS, heads 1-based in reference order, relations): the text of
    the treebank's LMs."""
    from ..io.conllu import Sentence

    out = []
    for s, pos in zip(sents, positions):
        n = len(s)
        surf = [0] * n
        for i, p in enumerate(pos):
            surf[p - 1] = i
        pick = lambda xs: [xs[i] for i in surf]  # noqa: E731
        heads = [0 if s.heads[surf[q]] == 0 else pos[s.heads[surf[q]] - 1] for q in range(n)]
        out.append(Sentence(pick(s.forms), pick(s.lemmas), pick(s.upos), pick(s.xpos), pick(s.feats), heads,
                            pick(s.deprels), ["_"] * n))
    return out


def train_model(train: Sequence[SRSentence], dev: Sequence[SRSentence], dev_refs: Sequence[str], out: str,
                lang: str, *, epochs: int = 8, ref_ud=None, mwt_files: Sequence[str] = (),
                opts: Optional[dict] = None, seed: int = 1, jobs: int = 1, backend: str = "loky",
                scheduler: Optional[str] = None, log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
                lms: Optional[dict] = None) -> dict:
    """The whole recipe of an SR model (``wo sr train``), written to ``out``.

    1. The stages are fitted on the training T1 sentences ``train`` (gold forms and
       ``original_id``, or the UD references ``ref_ud`` for the alignment): lifting, the lexicon
       and learned inflection of the candidates stage, the allomorph table, the contractions
       (``mwt_files``); the order stage's model is trained for ``epochs`` with the best epoch
       by BLEU on ``dev`` (:func:`train_sr_local`, or :func:`train_sr` for the search orderer).
    2. With a dev set (and ``tune.lms``), the decoding is chosen on it
       (:func:`wo.sr.tune.tune_model`): the treebank's LMs written beside ``out`` (or ``lms``
       given), their weights, the lifting threshold, the allomorph weight, the form context.

    opts: the ``--set`` keys of :data:`wo.cli.sr.TRAIN_SETTINGS` with their values (missing
    keys take the defaults: local orderer, beam 16, r2l 0.5, one perceptron per direction,
    2^20 weights, q8); with ``order.templates`` "cv" the local orderer's templates are chosen
    by cross-validation on the training sentences first (:func:`wo.sr.select.choose_templates`).  Returns the training record (also in the model header's
    ``training``).  Raises OSError if ``out`` cannot be written, ValueError for bad settings.
    """
    from .mwt import Contractions
    from .t1 import gold_sentences

    o = {"order.method": "local", "order.beam": 16, "order.templates": "given", "order.suffix": "none", "order.sig": False, "order.ends": False,
         "order.seeds": 1, "order.r2l": 0.5, "order.hash_bits": 20, "order.beam_factor": 8.0,
         "order.train_budget": 100.0, "order.question_labels": True, "order.lm": "", "train.compact": "q8",
         "tune.lms": True}
    o.update(opts or {})
    compact = None if o["train.compact"] == "none" else o["train.compact"]
    t0 = time.perf_counter()
    train_refs = [s.forms for s in ref_ud] if ref_ud is not None else None

    def lex_build():
        return Lexicon.build(gold_sentences(train, ref_ud), lang=lang)

    meta = {"lang": lang}
    if o["order.templates"] == "cv" and o["order.method"] == "local":
        from .select import choose_templates

        align_lex = lex_build() if any(not s.orig for s in train if not s.error) else None
        kept, kept_pos, _ = training_sentences(train, train_refs, align_lex)
        spec, meta["templates"] = choose_templates(kept, kept_pos, o["order.hash_bits"], o["order.beam"], seed,
                                                   jobs, log, budget=o.get("order.cv_budget") or None)
        o.update({"order.suffix": spec["suffix"] or "none", "order.sig": spec["sig"], "order.ends": spec["ends"]})
    meta["settings"] = {k: v for k, v in o.items()}
    if o["order.method"] == "search":
        rec = train_sr(train, dev, dev_refs, epochs, out, lex_build(), train_refs=train_refs,
                       hash_bits=o["order.hash_bits"] if opts and "order.hash_bits" in opts else 23,
                       beam_factor=o["order.beam_factor"], train_budget_factor=o["order.train_budget"], seed=seed,
                       log=log, meta=meta, lm=o["order.lm"] or None, question_labels=o["order.question_labels"],
                       contractions=Contractions.build(mwt_files) if mwt_files else None, compact=compact, jobs=jobs,
                       backend=backend, scheduler=scheduler)
        return rec
    rec = train_sr_local(train, (lambda: (list(dev), list(dev_refs))), None, epochs, out, lex_build,
                         train_refs=train_refs, hash_bits=o["order.hash_bits"], beam=o["order.beam"], seed=seed, log=log,
                         meta=meta, contractions=(lambda: Contractions.build(mwt_files)) if mwt_files else None,
                         compact=compact, jobs=jobs, backend=backend, scheduler=scheduler, suffix=o["order.suffix"],
                         sig=o["order.sig"], ends=o["order.ends"], seeds=o["order.seeds"], r2l=o["order.r2l"])
    if dev and o["tune.lms"]:
        from ..model import Model
        from .tune import tune_model

        t1 = time.perf_counter()
        kept, kept_pos, _ = training_sentences(train, train_refs, Lexicon.from_json(
            Model.read_header(out)[0]["sr"]["stages"][1]["lexicon"]) if train_refs is not None else None)
        trees = reference_trees(kept, kept_pos)
        gold = gold_sentences(train, ref_ud)
        given = {v: o.get(k) for v, k in (("words", "tune.words_lm"), ("dep-mix", "tune.depmix_lm")) if o.get(k)}
        rec["tuning"] = tune_model(out, trees, gold, dev, dev_refs, lang, log=log, lms=dict(given, **(lms or {})))
        rec["tuning_seconds"] = round(time.perf_counter() - t1, 1)
    rec["total_seconds"] = round(time.perf_counter() - t0, 1)
    _record(out, rec)
    return rec


def _record(path: str, rec: dict) -> None:
    """Write the training record ``rec`` into the header of the model at ``path``."""
    from ..model import Model

    head, _ = Model.read_header(path)
    m = Model.load(path, mmap=False)
    m.header["training"] = dict(m.header.get("training", {}), **{k: v for k, v in rec.items() if k != "tuning"},
                                tuning=rec.get("tuning", m.header.get("training", {}).get("tuning")))
    m.save(path, compact=head.get("weights_dtype") or False)


FILL_GRID = (0.0, 1.0, 2.0, 4.0, 8.0, 16.0)   # completion's bonus for a word in a slot (perceptron units)
PUNCT_BIAS_GRID = (-2.0, 0.0, 2.0, 4.0, 8.0)   # a punctuation mark's bias for inserting (perceptron units)


def train_deep_model(train: Sequence[SRSentence], dev: Sequence[SRSentence], dev_refs: Sequence[str], out: str,
                     lang: str, *, ref_ud=None, seed: int = 1, punctuation: bool = True, assoc=None,
                     log: Callable[[str], None] = lambda m: print(m, file=sys.stderr), **kw) -> dict:
    """The whole recipe of a deep-track (SR'19 T2) model, written to ``out``.

    1. Each training deep sentence (``original_id`` on its nodes) is aligned with its UD
       reference (its ``# gold`` comment, or ``ref_ud[i]``; :func:`wo.sr.complete.align_deep`),
       and the completion stage is fitted on the aligned pairs (:class:`wo.sr.complete.Completer`).
    2. The shallow-track stages are trained by :func:`train_model` on the references as T1
       input (:func:`wo.sr.complete.gold_t1`: ``lin`` only where the deep input has it), with
       the dev deep sentences completed by the fitted stage as dev (so the best epoch and the
       tuning see what decoding will see).
    3. The completion stage is put first in the model's stage list (``sr.track`` = "deep").

    assoc: the completion's association table (:class:`wo.sr.complete.Assoc`) or None.
    kw: :func:`train_model`'s keyword options.  Returns the training record.  Raises
    ValueError when no training sentence can be aligned, OSError if ``out`` cannot be written.
    """
    from ..model import Model
    from .complete import align_deep, gold_t1
    from .stages import CompletionStage, TrainingData

    from .punct import PunctModel, choose_marks
    from .stages import PunctuationStage

    t0 = time.perf_counter()
    refs_of = [s.ref if s.ref is not None else (ref_ud[i] if ref_ud is not None and i < len(ref_ud) else None)
               for i, s in enumerate(train)]
    gold_ud = [r for s, r in zip(train, refs_of) if r is not None and not s.error]
    # the comma leaves the completion for the punctuation stage; the hyphens and dashes the stage
    # also inserts stay in the completion's slots too (taken out, en_partut dev lost 0.2-1.0 BLEU)
    marks = choose_marks(gold_ud) if punctuation else []
    examples, t1_train, dropped = [], [], Counter()
    for i, s in enumerate(train):
        if s.error:
            dropped["unusable"] += 1
            continue
        ud = refs_of[i]
        if ud is None:
            dropped["no reference"] += 1
            continue
        try:
            ex = align_deep(s, ud, skip=marks[:1])
        except ValueError:
            dropped["not aligned"] += 1
            continue
        examples.append(ex)
        t1_train.append(gold_t1(ex, ud, seed, i, skip=marks[:1]))
    if not examples:
        raise ValueError("no deep-track training sentence could be aligned with its reference: the training file "
                         "needs original_id on its nodes and a reference (its # gold comments, from `wo sr make-input "
                         "--track deep --with-gold`, or --train-ref UD.conllu)")
    log(f"completion: {len(examples)} aligned training sentences" + (f", left out {dict(dropped)}" if dropped else ""))
    stage = CompletionStage(assoc=assoc)
    crec = stage.fit(TrainingData([], [], [], deep=examples), log=log)
    pstage = PunctuationStage(PunctModel.fit(gold_ud, marks, seed=seed, log=log)) if marks else None
    t1_dev, refs, deep_dev = [], [], []
    for s, r in zip(dev, dev_refs):
        if s.error:
            continue
        try:
            t1_dev.append(stage.completer.complete(s))
            refs.append(r)
            deep_dev.append(s)
        except ValueError:
            continue
    opts = dict(kw.pop("opts", None) or {})
    tune = opts.get("tune.lms", True)
    rec = train_model(t1_train, t1_dev, refs, out, lang, ref_ud=None, seed=seed, log=log,
                      opts=dict(opts, **{"tune.lms": False}), **kw)
    head, _ = Model.read_header(out)
    compact = head.get("weights_dtype") or False
    m = Model.load(out, mmap=False)
    stages = m.header["sr"]["stages"]
    stages.insert(0, stage.to_json())
    if pstage is not None:   # right after the order stage
        at = next(k for k, d in enumerate(stages) if d["stage"].startswith("order"))
        stages.insert(at + 1, pstage.to_json())
    m.header["sr"]["track"] = "deep"
    m.save(out, compact=compact)
    if deep_dev and tune:   # the decoding chosen on the deep dev sentences, the completion included
        from .t1 import gold_sentences
        from .tune import tune_model

        t1 = time.perf_counter()
        kept, kept_pos, _ = training_sentences(t1_train, None, None)
        given = {v: opts.get(k) for v, k in (("words", "tune.words_lm"), ("dep-mix", "tune.depmix_lm")) if opts.get(k)}
        rec["tuning"] = tune_model(out, reference_trees(kept, kept_pos), gold_sentences(t1_train), deep_dev, refs,
                                   lang, log=log, lms=given)
        rec["tuning_seconds"] = round(time.perf_counter() - t1, 1)
    if deep_dev:   # the fill bonus (recall against precision of the generated words), chosen on dev
        from .realizer import Realizer
        from .tune import dev_grid

        r = Realizer(Model.load(out))
        comp = r.stage("completion").completer
        grid = dev_grid(r, deep_dev, refs, FILL_GRID, lambda f: setattr(comp, "fill", f))
        best = max(grid, key=lambda f: (grid[f], -f))
        crec["fill"] = {"dev": {str(k): v for k, v in grid.items()}, "chosen": best}
        log(f"completion fill bonus: dev {grid} -> {best}")
        comp.fill = best
        m = Model.load(out, mmap=False)
        m.header["sr"]["stages"][0] = r.stage("completion").to_json()
        rec["dev_bleu_deep"] = grid[best]
        if pstage is not None:   # each mark's bias (more or fewer insertions), chosen on dev in turn
            ps, prec = r.stage("punctuation"), {}
            for mark in ps.model.marks:
                grid = dev_grid(r, deep_dev, refs, PUNCT_BIAS_GRID, lambda b: ps.set_bias(mark, b))
                best = max(grid, key=lambda b: (grid[b], -abs(b)))
                ps.set_bias(mark, best)
                prec[mark] = {"dev": {str(k): v for k, v in grid.items()}, "chosen": best}
                rec["dev_bleu_deep"] = grid[best]
            log(f"punctuation biases: {prec}")
            rec["punctuation"] = prec
            at = next(k for k, d in enumerate(m.header["sr"]["stages"]) if d["stage"] == "punctuation")
            m.header["sr"]["stages"][at] = ps.to_json()
    rec.update(completion=dict(crec, left_out=dict(dropped)), track="deep",
               total_seconds=round(time.perf_counter() - t0, 1))
    m.header["training"] = dict(m.header.get("training", {}), completion=rec["completion"], track="deep",
                                total_seconds=rec["total_seconds"], tuning=rec.get("tuning"),
                                dev_bleu_deep=rec.get("dev_bleu_deep"), punctuation=rec.get("punctuation"))
    m.save(out, compact=compact)
    return rec
