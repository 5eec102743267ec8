"""The local orderer's templates chosen by cross-validation on the training file (``wo sr train
--thorough``): suffix templates (a word's last characters, or the last morpheme of a lemma
written with "+"), the domain-signature templates and the phrase-ends templates
(:class:`wo.sr.order.LocalOrderer`).

Each candidate is measured as ordering-only BLEU with the gold forms (one left-to-right
perceptron, mean of epochs 4-8, 5 folds: each holds out a fifth of the file, at most 1,000
sentences, and trains on at most 4,000 of the rest), and added greedily: each round takes the best of the
candidates that add at least :data:`MIN_GAIN` BLEU to what is chosen already and beat it on
:data:`MIN_FOLDS` of the 5 folds, until none does.  The gains that set the threshold (5-fold CV
on the training files, NOTES.md): tr chars:2 +0.88, ko morpheme +0.40, de signature +0.82, ja
phrase ends +0.93 were taken; tr phrase ends +0.27 and every other candidate (-1.1 to +0.12)
were not.
"""
from __future__ import annotations

import random
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

MIN_GAIN = 0.3
MIN_FOLDS = 4      # ... and beats it on at least this many of the folds
FOLDS = 5
MAX_HELD_OUT = 1000   # held-out sentences a fold: a fifth of the file, at most this many
MAX_TRAIN = 4000
EPOCHS = (4, 8)   # mean of these epochs, inclusive
MORPHEME_SHARE = 0.2   # lemmas written as morphemes joined by "+" (UD Korean): the morpheme suffix is a candidate


def candidates(sents: Sequence) -> List[Tuple[str, dict]]:
    """The templates worth trying on training T1 sentences ``sents``: (name, spec change)."""
    lemmas = [l for s in sents for l, u in zip(s.lemmas, s.upos) if u not in ("PUNCT", "SYM")]
    plus = sum(1 for l in lemmas if "+" in l[1:]) / max(1, len(lemmas))
    out = [("suffix chars:2", {"suffix": "chars:2"})]
    if plus >= MORPHEME_SHARE:
        out.append(("suffix morpheme", {"suffix": "morpheme"}))
    return out + [("signature", {"sig": True}), ("phrase ends", {"ends": True})]


def _fold_task(spec: dict, train: list, held: list, hash_bits: int, beam: int, seed: int) -> List[float]:
    """Train one perceptron on ``train`` (tuples of a training tree, :func:`choose_templates`) and
    return the held-out ordering-only BLEU after each epoch of EPOCHS."""
    from ..eval.metrics import sr_score
    from ..learn import collector_paused
    from .order import LocalOrderer, LocalTrainer, gold_domains, suffix_function
    from .instance import rerank_lin

    sfx = suffix_function(spec.get("suffix"))
    with collector_paused():
        doms = []
        for heads, pos, lemmas, upos, deprels, feats, lin, words in train:
            doms += gold_domains(heads, pos, lemmas, upos, deprels, feats, lin, words, sfx, spec.get("sig", False))
        tr = LocalTrainer(doms, hash_bits, beam, seed, suffix=spec.get("suffix"), sig=spec.get("sig", False),
                          ends=spec.get("ends", False))
        refs = []
        for heads, pos, lemmas, upos, deprels, feats, lin, words in held:
            ref = [""] * len(words)
            for i, p in enumerate(pos):
                ref[p] = words[i]
            refs.append(" ".join(ref))
        out = []
        for ep in range(1, EPOCHS[1] + 1):
            tr.epoch(ep)
            if ep < EPOCHS[0]:
                continue
            lo = LocalOrderer(tr.averaged(), hash_bits, beam, spec.get("suffix"), spec.get("sig", False),
                              spec.get("ends", False))
            hyps = []
            for heads, pos, lemmas, upos, deprels, feats, lin, words in held:
                idx, _ = lo.linearize(heads, lemmas, upos, deprels, feats, rerank_lin(heads, lin), words)
                hyps.append(" ".join(words[i] for i in idx))
            out.append(sr_score(hyps, refs, bleu_only=True).bleu)
    return out


def _trees(sents: Sequence, positions: Sequence[Sequence[int]]) -> list:
    """Per sentence, the tuple the folds train and decode on: (heads of the training tree
    (lifted where the reference order is not projective), 0-based reference positions, lemmas,
    UPOS, relations, FEATS, lin, lower-cased gold forms)."""
    from .instance import training_tree

    out = []
    for s, pos in zip(sents, positions):
        heads, lin, _ = training_tree(s, pos)
        out.append((heads, [p - 1 for p in pos], list(s.lemmas), list(s.upos), list(s.deprels), list(s.feats), lin,
                    [f.lower() for f in s.forms]))
    return out


def cross_validate(trees: list, specs: Sequence[dict], hash_bits: int = 20, beam: int = 16, seed: int = 1,
                   jobs: int = 1) -> List[List[float]]:
    """Held-out ordering-only BLEU of each template spec, per fold (the mean over EPOCHS; folds
    as the module docstring says), every (spec, fold) a task of ``jobs`` loky processes."""
    from joblib import Parallel, delayed

    idx = list(range(len(trees)))
    random.Random(seed).shuffle(idx)
    k = min(MAX_HELD_OUT, max(1, len(idx) // FOLDS))
    folds = []
    for f in range(FOLDS):
        held = idx[f * k:(f + 1) * k]
        if not held:
            break
        rest = [i for i in idx if i not in set(held)][:MAX_TRAIN]
        folds.append(([trees[i] for i in rest], [trees[i] for i in held]))
    tasks = [(si, delayed(_fold_task)(dict(sp), tr, he, hash_bits, beam, seed)) for si, sp in enumerate(specs)
             for tr, he in folds]
    res = Parallel(n_jobs=jobs, backend="loky")(t for _, t in tasks) if jobs > 1 else [
        t[0](*t[1], **t[2]) for _, t in tasks]
    scores: Dict[int, List[float]] = {}
    for (si, _), r in zip(tasks, res):
        scores.setdefault(si, []).append(sum(r) / len(r))
    return [v for _, v in sorted(scores.items())]


def choose_templates(sents: Sequence, positions: Sequence[Sequence[int]], hash_bits: int = 20, beam: int = 16,
                     seed: int = 1, jobs: int = 1, log: Callable[[str], None] = lambda m: None,
                     budget: Optional[float] = None) -> Tuple[dict, dict]:
    """The templates chosen for the training sentences ``sents`` with their reference positions
    (1-based per token): greedy forward selection by cross-validation (module docstring); stops
    early once ``budget`` seconds are spent.  Returns (spec {"suffix", "sig", "ends"}, record of
    every round's CV BLEU)."""
    t0 = time.perf_counter()
    trees = _trees(sents, positions)
    chosen: dict = {"suffix": None, "sig": False, "ends": False}
    left = candidates(sents)
    rec: dict = {"rounds": [], "min_gain": MIN_GAIN, "min_folds": MIN_FOLDS, "folds": FOLDS,
                 "max_held_out": MAX_HELD_OUT, "max_train": MAX_TRAIN}
    current: Optional[List[float]] = None   # the chosen spec's BLEU per fold
    mean = lambda v: round(sum(v) / len(v), 2)  # noqa: E731
    while left and (budget is None or time.perf_counter() - t0 < budget):
        specs = ([dict(chosen)] if current is None else []) + [dict(chosen, **ch) for _, ch in left]
        got = cross_validate(trees, specs, hash_bits, beam, seed, jobs)
        if current is None:
            current, got = got[0], got[1:]
            rec["base"] = mean(current)
        rnd = {name: {"bleu": mean(v), "folds_better": sum(a > b for a, b in zip(v, current))}
               for (name, _), v in zip(left, got)}
        rec["rounds"].append(rnd)
        log(f"templates by {len(trees)}-sentence CV: {mean(current)} with {_name(chosen)}; adding {rnd}")
        ok = [i for i in range(len(left)) if mean(got[i]) - mean(current) >= MIN_GAIN
              and rnd[left[i][0]]["folds_better"] >= min(MIN_FOLDS, len(current))]
        if not ok:
            break
        best = max(ok, key=lambda i: mean(got[i]))
        name, ch = left.pop(best)
        chosen.update(ch)
        current = got[best]
        if "suffix" in ch:   # one suffix template at most
            left = [(n, c) for n, c in left if "suffix" not in c]
    rec.update(chosen=_name(chosen), cv_bleu=mean(current) if current else None,
               seconds=round(time.perf_counter() - t0, 1))
    return chosen, rec


def _name(spec: dict) -> str:
    parts = ([f"suffix {spec['suffix']}"] if spec.get("suffix") else []) + (["signature"] if spec.get("sig") else []) \
        + (["phrase ends"] if spec.get("ends") else [])
    return ", ".join(parts) or "none"
