"""N-best reranking of the synthesis decoder's popped goals (Och et al. 2004 style): a linear
combination of the synthesis model's scores with sentence-level features the best-first search
cannot see until a hypothesis is complete (the LM's full-sentence log10 probability, the summed
log10 P(trans), target length, source coverage), its weights tuned on dev BLEU by coordinate
ascent over a grid (a simple form of MERT, Och 2003).
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence

import numpy as np

FEATURES = ("scaled", "total", "lm", "ptrans", "words", "coverage", "options")
DEFAULT_WEIGHTS = {"scaled": 1.0}
GRID = (-3.0, -2.0, -1.0, -0.5, -0.25, -0.1, 0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0)


def features(cand, inst, lm) -> np.ndarray:
    """float64[7] reranking features of one candidate (a :class:`wo.smt.synth.Decoded` from
    ``SMTSearch.candidates``) of instance ``inst``: scaled score, unscaled score F, LM log10
    p(<s> tokens </s>), sum of log10 P(trans) of its options, target words, share of source
    words covered, options used."""
    opts = [inst.options[i] for i in cand.options]
    cov = sum(o.src_hi - o.src_lo for o in opts)
    return np.array([cand.score, getattr(cand, "F", 0.0), lm.score(cand.tokens) if lm is not None else 0.0,
                     sum(math.log10(max(o.prob, 1e-9)) for o in opts), len(cand.tokens),
                     cov / max(1, inst.n), len(opts)], dtype=np.float64)


def pick(feats: np.ndarray, w: np.ndarray) -> int:
    """Index of the best candidate under weights ``w`` (float64[7]); feats float64[K, 7]."""
    return int(np.argmax(feats @ w))


def weights_vector(weights: Optional[Dict[str, float]]) -> np.ndarray:
    """float64[7] from a {feature name: weight} dict (missing names: 0)."""
    w = dict(DEFAULT_WEIGHTS if weights is None else weights)
    return np.array([float(w.get(k, 0.0)) for k in FEATURES], dtype=np.float64)


def tune(nbest: Sequence[np.ndarray], texts: Sequence[Sequence[str]], refs: Sequence[str],
         rounds: int = 3, log=lambda m: None) -> Dict[str, float]:
    """Coordinate ascent on corpus BLEU (sacrebleu 13a): nbest[i] float64[K_i, 7] features of
    sentence i's candidates, texts[i] their detokenized strings, refs[i] the reference.
    Starts from the synthesis model's own choice (scaled score alone).  Returns the weights."""
    from sacrebleu.metrics import BLEU

    bleu = BLEU(tokenize="13a")
    w = weights_vector(None)

    def score(wv):
        hyp = [t[pick(f, wv)] if len(t) else "" for f, t in zip(nbest, texts)]
        return bleu.corpus_score(hyp, [list(refs)]).score

    best = score(w)
    log(f"rerank: start {best:.2f}")
    for r in range(rounds):
        improved = False
        for j, name in enumerate(FEATURES):
            for v in GRID:
                if v == w[j]:
                    continue
                cand = w.copy()
                cand[j] = v
                s = score(cand)
                if s > best + 1e-9:
                    best, w, improved = s, cand, True
            log(f"rerank: round {r + 1} {name} -> {w[j]:g} ({best:.2f})")
        if not improved:
            break
    return {k: float(v) for k, v in zip(FEATURES, w) if v != 0.0}
