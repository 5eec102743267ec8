"""N-best reranking of the synthesis decoder's popped goals (Och et al. 2004): a linear
combination of the synthesis model's scores with sentence-level features the best-first search
cannot see until a hypothesis is complete:

* the LM's full-sentence log10 probability, the summed log10 P(trans), target length, source
  coverage and options used;
* IBM model 1 scores in both directions (Och et al. 2004, section 6.1), once with the lexical
  weights of the word alignments and once with EM-trained model 1 tables
  (:class:`wo.smt.lexicon.Lexicon`);
* the candidate's linear-BLEU MBR gain against the n-best list (Tromble et al. 2008,
  :func:`wo.eval.mbr.linear_bleu_gains`, posterior from the scaled score).

Weights are tuned on dev: pairwise ranking optimisation (PRO, Hopkins & May 2011) on sentence
BLEU, then coordinate ascent on corpus BLEU from PRO's weights (a simple form of MERT, Och
2003).  On Tatoeba dev, two-fold cross-validated, this tuner and the added features give 25.9
BLEU against 24.0 for the seven first features tuned by a coordinate grid alone
(``bench/smt_rerank.py``); the model 1 tables bring it to 26.6.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence

import numpy as np

from ..eval.mbr import linear_bleu_gains

FEATURES = ("scaled", "total", "lm", "ptrans", "words", "coverage", "options", "ibm1_ef", "ibm1_fe", "lmbr",
            "m1_ef", "m1_fe")
DEFAULT_WEIGHTS = {"scaled": 1.0}
NBEST = 200           # candidates reranked (chosen on dev: 200 > 100 > 50)
LMBR_SCALE = 10.0     # posterior sharpness of the MBR gain (dev: 10 > 3 > 30)


def features(cands, src_tokens: Sequence[str], options, lm, lexicon=None, model1=None,
             lmbr_scale: float = LMBR_SCALE) -> np.ndarray:
    """float64[K, 12] reranking features (``FEATURES``) of K candidates (:class:`wo.smt.synth.
    Decoded`, from ``SMTSearch.candidates``) of one source sentence: scaled score, unscaled
    score F, LM log10 p(<s> tokens </s>), sum of log10 P(trans) of the options, target words,
    share of source words covered, options used, IBM-1 log10 P(e|f) and P(f|e) with the link
    lexicon (0 without one), linear-BLEU gain against the list, IBM-1 log10 P(e|f) and P(f|e)
    with the EM model 1 tables (0 without them).  options: the sentence's translation options
    (``Decoded.options`` indexes them)."""
    n = max(1, len(src_tokens))
    rows = []
    for c in cands:
        opts = [options[i] for i in c.options]
        rows.append((c.score, getattr(c, "F", c.score), lm.score(c.tokens) if lm is not None else 0.0,
                     sum(math.log10(max(o.prob, 1e-9)) for o in opts), len(c.tokens),
                     sum(o.src_hi - o.src_lo for o in opts) / n, len(opts), 0.0, 0.0, 0.0, 0.0, 0.0))
    f = np.array(rows, dtype=np.float64).reshape(len(rows), len(FEATURES))
    if len(rows):
        toks = [c.tokens for c in cands]
        if lexicon is not None:
            f[:, 7:9] = lexicon.ibm1_many(src_tokens, toks)
        f[:, 9] = linear_bleu_gains(toks, f[:, 0], lmbr_scale)
        if model1 is not None:
            f[:, 10:12] = model1.ibm1_many(src_tokens, toks)
    return f


def pick(feats: np.ndarray, w: np.ndarray) -> int:
    """Index of the best candidate under weights ``w`` (float64[d]); feats float64[K, d]."""
    return int(np.argmax(feats @ w))


def weights_vector(weights: Optional[Dict[str, float]]) -> np.ndarray:
    """float64[12] from a {feature name: weight} dict (missing names: 0)."""
    w = dict(DEFAULT_WEIGHTS if weights is None else weights)
    return np.array([float(w.get(k, 0.0)) for k in FEATURES], dtype=np.float64)


def pro(nbest: Sequence[np.ndarray], sbleu: Sequence[np.ndarray], seed: int = 1, gamma: int = 5000,
        xi: int = 50, min_diff: float = 5.0, l2: float = 1e-3, iters: int = 300) -> np.ndarray:
    """Pairwise ranking optimisation (Hopkins & May 2011, section 3): per sentence, sample
    ``gamma`` candidate pairs, keep the ``xi`` with the largest sentence-BLEU difference (above
    ``min_diff`` BLEU points), and fit a logistic regression without intercept (L2 ``l2``,
    batch gradient descent) to their standardised feature differences.

    nbest[i]: float64[K_i, d]; sbleu[i]: float64[K_i] sentence BLEU of the candidates.
    Returns float64[d] weights in the features' own scale, the first normalised to |1|.
    Raises ValueError when no sentence has two candidates of different BLEU."""
    rng = np.random.default_rng(seed)
    sd = np.concatenate([f for f in nbest if len(f)]).std(axis=0)
    sd[sd == 0] = 1.0
    X = []
    for f, sb in zip(nbest, sbleu):
        k = len(f)
        if k < 2:
            continue
        a, b = rng.integers(0, k, gamma), rng.integers(0, k, gamma)
        d = sb[a] - sb[b]
        keep = np.abs(d) > min_diff
        a, b, d = a[keep], b[keep], d[keep]
        top = np.argsort(-np.abs(d), kind="stable")[:xi]
        X.append((f[a[top]] - f[b[top]]) / sd * np.sign(d[top])[:, None])
    if not X or not sum(len(x) for x in X):
        raise ValueError("PRO: no candidate pairs differ in sentence BLEU")
    X = np.concatenate(X)
    X = np.concatenate([X, -X])
    y = np.concatenate([np.ones(len(X) // 2), np.zeros(len(X) // 2)])
    w = np.zeros(X.shape[1])
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        w -= 0.5 * (X.T @ (p - y) / len(y) + l2 * w)
    w = w / sd
    return w / abs(w[0]) if w[0] != 0 else w


MULTIPLES = (0.0, 0.25, 0.5, 0.75, 1.5, 2.0, 4.0)


def sentence_bleus(texts: Sequence[Sequence[str]], refs: Sequence[str]) -> List[np.ndarray]:
    """sacrebleu sentence BLEU (13a, exp smoothing, effective order) of every candidate:
    float64[K_i] per sentence."""
    from sacrebleu.metrics import BLEU

    sb = BLEU(tokenize="13a", effective_order=True)
    return [np.array([sb.sentence_score(t, [r]).score for t in ts]) for ts, r in zip(texts, refs)]


def ascend(nbest: Sequence[np.ndarray], texts: Sequence[Sequence[str]], refs: Sequence[str],
           w: np.ndarray, grid: Optional[Sequence[float]] = None, rounds: int = 3, log=lambda m: None):
    """Coordinate ascent on corpus BLEU (sacrebleu 13a) from weights ``w`` (float64[d]): each
    weight in turn tries the values of ``grid`` or, without one, ``MULTIPLES`` of its current
    value; a change is kept when BLEU rises.  Returns (weights float64[d], BLEU)."""
    from sacrebleu.metrics import BLEU

    bleu = BLEU(tokenize="13a")

    def score(wv):
        hyp = [t[pick(f, wv)] if len(t) else "" for f, t in zip(nbest, texts)]
        return bleu.corpus_score(hyp, [list(refs)]).score

    w = np.array(w, dtype=np.float64)
    best = score(w)
    for r in range(rounds):
        improved = False
        for j in range(len(w)):
            for v in (grid if grid is not None else MULTIPLES):
                cand = w.copy()
                cand[j] = v if grid is not None else w[j] * v     # multiples of the current value
                if cand[j] == w[j]:
                    continue
                s = score(cand)
                if s > best + 1e-9:
                    best, w, improved = s, cand, True
        log(f"rerank: round {r + 1}: {best:.2f}")
        if not improved:
            break
    return w, best


def tune(nbest: Sequence[np.ndarray], texts: Sequence[Sequence[str]], refs: Sequence[str],
         rounds: int = 3, seed: int = 1, log=lambda m: None) -> Dict[str, float]:
    """Tune the reranker on dev: :func:`pro` on sacrebleu sentence BLEU, then :func:`ascend`
    over multiples of PRO's weights.  nbest[i] float64[K_i, 12] features of sentence i's
    candidates, texts[i] their detokenized strings, refs[i] the reference.  Returns the
    weights {feature name: weight}."""
    base = weights_vector(None)
    log(f"rerank: search's own choice {ascend(nbest, texts, refs, base, rounds=0)[1]:.2f}")
    try:
        w = pro(nbest, sentence_bleus(texts, refs), seed=seed)
    except ValueError:                  # no candidate pairs differ: keep the search's choice
        w = base
    w, _ = ascend(nbest, texts, refs, w, rounds=rounds, log=log)
    return {k: float(v) for k, v in zip(FEATURES, w) if v != 0.0}
