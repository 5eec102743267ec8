"""Linear-BLEU minimum Bayes risk gains over a list of strings (Tromble, Kumar, Och &
Macherey 2008, section 3): shared by GYRO's lattice reranking and the SMT n-best reranker.
"""
from __future__ import annotations

import math
from typing import Dict, List, Sequence

import numpy as np

# Tromble et al. (2008), section 5: the linear BLEU approximation's average unigram precision
# p and decay ratio r of the n-gram precisions
MBR_P, MBR_R = 0.85, 0.7


def linear_bleu_gains(strings: Sequence[Sequence[str]], log10_weights: Sequence[float],
                      scale: float = 1.0, order: int = 4) -> np.ndarray:
    """Each string's expected linear-BLEU gain against the list itself as evidence space.

    The posterior of string i is proportional to 10^(scale * log10_weights[i]); an n-gram's
    posterior p(u) is the total posterior of the strings containing it; string e gains
    sum_{n=1..order} theta_n sum_{u in e, |u|=n} #u(e) p(u), theta_n = 1 / (4 p r^(n-1)).
    The length term theta_0 |e| is left out: it is constant for strings of one length (a bag's
    orders) and a linear feature of length otherwise.

    strings: K token lists; log10_weights: float[K] (log10 probabilities or model scores).
    Returns float64[K].  Raises ValueError if the lengths of the two differ.
    """
    if len(strings) != len(log10_weights):
        raise ValueError(f"{len(strings)} strings but {len(log10_weights)} weights")
    if not len(strings):
        return np.zeros(0, dtype=np.float64)
    lps = np.asarray(log10_weights, dtype=np.float64) * scale * math.log(10.0)
    post = np.exp(lps - lps.max())
    post /= post.sum()
    grams: List[Dict[tuple, int]] = []
    pu: Dict[tuple, float] = {}
    for toks, p in zip(strings, post):
        g: Dict[tuple, int] = {}
        for n in range(1, order + 1):
            for i in range(len(toks) - n + 1):
                u = tuple(toks[i:i + n])
                g[u] = g.get(u, 0) + 1
        grams.append(g)
        for u in g:
            pu[u] = pu.get(u, 0.0) + p
    theta = [0.0] + [1.0 / (4 * MBR_P * MBR_R ** (n - 1)) for n in range(1, order + 1)]
    return np.array([sum(theta[len(u)] * c * pu[u] for u, c in g.items()) for g in grams], dtype=np.float64)
