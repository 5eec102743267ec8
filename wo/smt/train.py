"""Training of the synthesis model (Zhang et al. 2014, section 2.2.2): oracle derivations by
constrained search towards the parsed reference, scaled large-margin learning-guided search
(Zhang & Clark 2015, Algorithm 3), averaged parameters, the iteration chosen on dev BLEU.
"""
from __future__ import annotations

import os
import random
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from .._fast._weights import averaged
from ..learn import epoch_loop, train_pass
from ..model import Model, TagDictionary
from .options import Option
from .synth import (DEFAULTS, SMT_FEATURE_SET, SYSTEM, T_LM_NGRAMS, T_R_COVER, T_R_PTRANS, T_R_WORDS,
                    SMTSearch, build_instance, source_of)

def own_pairs(rec: dict, max_len: int) -> Dict[tuple, Dict[tuple, int]]:
    """The phrase pairs a training record contributed to the table (needs ``links``):
    {source phrase: {target words: count}}."""
    from .phrases import extract

    own: Dict[tuple, Dict[tuple, int]] = {}
    for p in extract(len(rec["zh"]), rec["en"], rec["en_pos"], rec["en_heads"],
                     [tuple(x) for x in rec["links"]], max_len=max_len):
        d = own.setdefault(tuple(rec["zh"][p.src_lo:p.src_hi]), {})
        d[p.words] = d.get(p.words, 0) + 1
    return own


def loo_options(table, src_tokens: Sequence[str], own: Dict[tuple, Dict[tuple, int]], max_len: int,
                lam: float) -> List[Option]:
    """Translation options with the sentence's own phrase pairs left out (leaving-one-out,
    Wuebker, Mauser & Ney 2010): counts minus the sentence's own, P(trans) renormalised, the
    lambda * P_max filter applied as in :meth:`PhraseTable.options`.  Without it, a training
    pair of at most ``max_len`` words per side is one option covering everything, and the
    oracle derivation teaches nothing about synthesis."""
    out: List[Option] = []
    n = len(src_tokens)
    for lo in range(n):
        for hi in range(lo + 1, min(n, lo + max_len) + 1):
            src = tuple(src_tokens[lo:hi])
            rows = table.translations(src)
            if not rows:
                continue
            mine = own.get(src, {})
            kept = [(w, p, h, r, c - mine.get(w, 0)) for w, p, h, r, c, _ in rows if c - mine.get(w, 0) > 0]
            total = sum(k[4] for k in kept)
            if not kept:
                continue
            kept.sort(key=lambda k: (-k[4], k[0]))
            cut = lam * kept[0][4] / total
            for w, p, h, r, c in kept:
                if c / total < cut:
                    break
                out.append(Option(lo, hi, w, p, h, r, c / total, c))
    return out


def make_instances(records: Sequence[dict], table, lm, opts: dict, gold: bool = False,
                   log: Callable[[str], None] = lambda m: None):
    """Instances of corpus records (see ``bench/smt_data.py`` for the record keys).

    With ``gold`` the reference (``en``, ``en_heads``) gives the oracle; records without one
    are dropped and counted; records with alignment ``links`` get leave-one-out options
    (:func:`loo_options`).  Returns (instances, indices of the records kept, stats dict).
    """
    insts, keep = [], []
    stats = {"records": len(records), "no_options": 0, "no_oracle": 0, "oracle": 0}
    for i, r in enumerate(records):
        src = source_of(r)
        if not src.tokens:
            stats["no_options"] += 1
            continue
        if gold and opts.get("loo", True) and "links" in r:
            options = loo_options(table, src.tokens, own_pairs(r, opts["max_len"]), opts["max_len"], opts["lam"])
        else:
            options = table.options(src.tokens, max_len=opts["max_len"], lam=opts["lam"])
        if not options:
            stats["no_options"] += 1
            continue
        inst = build_instance(src, options, opts["beta"], lm, r["en"] if gold else None,
                              r["en_heads"] if gold else None, substitute=opts.get("substitute", 0.0))
        if gold and inst.gold is None:
            stats["no_oracle"] += 1
            continue
        stats["oracle"] += int(inst.gold is not None)
        stats["substitute"] = stats.get("substitute", 0) + int(inst.substitute)
        insts.append(inst)
        keep.append(i)
    return insts, keep, stats


def train(train_recs: Sequence[dict], dev_recs: Sequence[dict], table, lm, epochs: int, out: str,
          table_file: str, hash_bits: int = 21, seed: int = 1, max_tau: float = 0.05,
          opts: Optional[dict] = None, dev_limit: int = 0, lexicon=None, lexicon_file: Optional[str] = None,
          model1=None, model1_file: Optional[str] = None,
          log: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> dict:
    """Train the synthesis model and save the best-epoch averaged model to ``out``.

    train_recs/dev_recs: parsed corpus records; table: :class:`wo.smt.phrases.PhraseTable`
    (``table_file``: its file name, recorded in the model and looked up beside it); lm: a
    :class:`wo.lm.LanguageModel` (the real-valued 4-gram feature) or None; opts: decoding and
    option settings (``DEFAULTS``); lexicon, model1: the link and EM
    :class:`wo.smt.lexicon.Lexicon` of the n-best reranker (``lexicon_file``, ``model1_file``:
    their file names, recorded in the model and looked up beside it).
    Weights float32[2**hash_bits].  Returns the training
    record (per epoch: seconds, updates, share of sentences whose gold goal was reached, dev
    BLEU).  Raises OSError if ``out`` cannot be written.
    """
    from .translate import corpus_bleu_of

    o = dict(DEFAULTS, **(opts or {}))
    t0 = time.perf_counter()
    insts, _, stats = make_instances(train_recs, table, lm, o, gold=True)
    log(f"{len(insts)} of {len(train_recs)} training pairs have an oracle derivation "
        f"({stats['no_oracle']} without, {stats['no_options']} without options)")
    dev = list(dev_recs[:dev_limit] if dev_limit else dev_recs)
    header = {"system": SYSTEM,
              "smt": {"feature_set": SMT_FEATURE_SET, "phrase_table": table_file,
                      "max_len": o["max_len"], "lam": o["lam"], "beta": o["beta"],
                      **({"lexicon": lexicon_file} if lexicon_file else {}),
                      **({"model1": model1_file} if model1_file else {})},
              "decode": {"beam_factor": o["beam_factor"], "max_pops": o["max_pops"],
                         "complete_beam": o["complete_beam"]}}
    record = {"epochs": [], "train_pairs": len(train_recs), "oracle_pairs": len(insts),
              "oracle_share": round(len(insts) / max(1, len(train_recs)), 4), "oracle_stats": stats,
              "hash_bits": hash_bits, "max_tau": max_tau, "options": o, "seconds_instances": 0.0}
    record["seconds_instances"] = round(time.perf_counter() - t0, 1)
    if lm is not None:
        header["lm"] = dict(lm.fingerprint(), file=os.path.basename(lm.path or "lm"),
                            path=os.path.abspath(lm.path or ""))
    W = np.zeros(1 << hash_bits, dtype=np.float32)
    U = np.zeros(1 << hash_bits, dtype=np.float64)
    init = o.get("init_real")
    if init:
        # start the real-valued weights (LM, log10 P(trans), target words, source words) at
        # given values, e.g. those tuned for the phrase-based baselines on dev
        from .._fast._search import feature_hash
        idx = feature_hash(np.array([[T_LM_NGRAMS], [T_R_PTRANS], [T_R_WORDS], [T_R_COVER]], dtype=np.uint32),
                           hash_bits)
        W[idx] = np.asarray(init, dtype=np.float32)
    core = SMTSearch(W, hash_bits, U, lm)
    core.max_tau = max_tau
    rng = random.Random(seed)
    td = TagDictionary({}, [])

    def step(j: int, inst) -> tuple:
        r, p, _ = core.train_one(inst, int(o["beam_factor"] * inst.n), int(o["train_pops"]))
        return r, p

    return epoch_loop(epochs, lambda ep: train_pass(core, insts, rng, step),
                      lambda: Model(averaged(W, U, core.avg_count), hash_bits, td, dict(header)), out, record,
                      (lambda model: corpus_bleu_of(model, dev, table, lm, o)[0]) if dev else None, log, t0,
                      finish=(lambda final: tune_rerank(final, dev, table, lm, o, lexicon, model1, log))
                      if dev and o.get("rerank", True) else None)


def tune_rerank(model, dev: Sequence[dict], table, lm, opts: dict, lexicon=None, model1=None,
                log=lambda m: None):
    """Tune the n-best reranker (:mod:`wo.smt.rerank`) of a trained model on dev records and
    store it in the model header (``rerank``, ``rerank_nbest``, ``rerank_lmbr_scale``,
    ``training.dev_bleu_reranked``); the caller saves the model.  Returns (weights dict, dev
    BLEU with them)."""
    from .rerank import LMBR_SCALE, NBEST, tune, weights_vector, pick
    from .translate import Translator
    from ..eval.metrics import score

    model.header["rerank_nbest"], model.header["rerank_lmbr_scale"] = NBEST, LMBR_SCALE
    tr = Translator(model, lm=lm if lm is not None else "none", table=table, parser=False, rerank=False,
                    beam_factor=opts.get("beam_factor"), max_pops=opts.get("max_pops"),
                    beta=opts.get("beta"), complete_beam=opts.get("complete_beam"), lexicon=lexicon,
                    model1=model1)
    nb, texts = zip(*[tr.nbest_features(source_of(r)) for r in dev])
    refs = [r["en_raw"] for r in dev]
    w = tune(nb, texts, refs, log=log)
    wv = weights_vector(w)
    hyp = [t[pick(f, wv)] if len(t) else "" for f, t in zip(nb, texts)]
    b = score(hyp, refs, tokenize="13a").bleu
    log(f"reranker tuned on {len(dev)} dev pairs: {w} -> dev BLEU {b:.2f}")
    model.header["rerank"] = w
    model.header.setdefault("training", {})["dev_bleu_reranked"] = b
    return w, b
