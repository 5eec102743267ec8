"""Evaluation: BLEU (sacrebleu, tokenize none), exact match, words recovered."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence


@dataclass
class Scores:
    """Corpus scores.  bleu: sacrebleu BLEU (0-100); signature: sacrebleu's reproducibility
    signature; exact: exact-match rate (0-100); recovered: share of reference words present in
    the hypothesis, as a multiset (0-100); sentences: int."""

    bleu: float
    signature: str
    exact: float
    recovered: float
    sentences: int

    def __str__(self) -> str:
        return (f"BLEU = {self.bleu:.2f}  exact match = {self.exact:.2f}%  words recovered = "
                f"{self.recovered:.2f}%  sentences = {self.sentences}\nsacrebleu signature: {self.signature}")


def score(hyps: Sequence[str], refs: Sequence[str]) -> Scores:
    """Score tokenized hypotheses against tokenized references (space-joined tokens).

    BLEU is sacrebleu's corpus BLEU with tokenize='none', case-sensitive.  Raises ValueError if
    the two lists differ in length.
    """
    from sacrebleu.metrics import BLEU

    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    bleu = BLEU(tokenize="none", force=True)
    res = bleu.corpus_score(list(hyps), [list(refs)])
    exact = sum(1 for h, r in zip(hyps, refs) if h.split() == r.split())
    rec = tot = 0
    for h, r in zip(hyps, refs):
        rc, hc = Counter(r.split()), Counter(h.split())
        rec += sum(min(c, hc[w]) for w, c in rc.items())
        tot += sum(rc.values())
    n = max(1, len(refs))
    return Scores(res.score, str(bleu.get_signature()), 100.0 * exact / n, 100.0 * rec / max(1, tot), len(refs))
