"""Evaluation: BLEU (sacrebleu, tokenize none), exact match, words recovered."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import List, Sequence


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


def score(hyps: Sequence[str], refs: Sequence[str], tokenize: str = "none") -> Scores:
    """Score tokenized hypotheses against tokenized references (space-joined tokens).

    BLEU is sacrebleu's corpus BLEU, case-sensitive, with tokenize='none' (word ordering: the
    tokens are given) or any sacrebleu tokenizer, e.g. '13a' for detokenized MT output.
    Raises ValueError if the two lists differ in length.
    """
    from sacrebleu.metrics import BLEU

    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    bleu = BLEU(tokenize=tokenize, force=True)
    res = bleu.corpus_score(list(hyps), [list(refs)])
    exact = sum(1 for h, r in zip(hyps, refs) if h.split() == r.split())
    rec = tot = 0
    for h, r in zip(hyps, refs):
        rc, hc = Counter(r.split()), Counter(h.split())
        rec += sum(min(c, hc[w]) for w, c in rc.items())
        tot += sum(rc.values())
    n = max(1, len(refs))
    return Scores(res.score, str(bleu.get_signature()), 100.0 * exact / n, 100.0 * rec / max(1, tot), len(refs))


@dataclass
class SRScores:
    """The SR shared-task automatic metrics on lower-cased, whitespace-tokenized text.

    bleu: NLTK ``corpus_bleu`` (4-gram, uniform weights, smoothing ``method2``) x 100, as the
    SR'18/'19 evaluation script computes it; nist: NLTK ``corpus_nist`` with n=4; dist:
    100 x (1 - sum of character edit distances / sum of max(len(hyp), len(ref))), over the
    space-joined token strings (Levenshtein distance, rapidfuzz); sacrebleu: sacrebleu corpus
    BLEU on the same lower-cased tokens (tokenize none) with its ``signature``; exact: share of
    sentences equal to the reference (0-100); sentences: int.
    """

    bleu: float
    nist: float
    dist: float
    sacrebleu: float
    signature: str
    exact: float
    sentences: int

    def __str__(self) -> str:
        return (f"BLEU = {self.bleu:.2f}  NIST = {self.nist:.2f}  DIST = {self.dist:.2f}  "
                f"exact match = {self.exact:.2f}%  sentences = {self.sentences}\n"
                f"sacrebleu BLEU = {self.sacrebleu:.2f}  signature: {self.signature}")


def sr_score(hyps: Sequence[str], refs: Sequence[str], bleu_only: bool = False) -> SRScores:
    """SR automatic metrics of tokenized hypotheses against tokenized references (one str each).

    Both sides are lower-cased and split on whitespace (the SR evaluation script's
    normalisation).  bleu_only: compute the SR BLEU alone (epoch selection during training);
    the other fields are then NaN ("" for the signature).  Raises ValueError if the lists
    differ in length.
    """
    from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu
    from nltk.translate.nist_score import corpus_nist
    from rapidfuzz.distance import Levenshtein
    from sacrebleu.metrics import BLEU

    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    H = [h.lower().split() for h in hyps]
    R = [r.lower().split() for r in refs]
    bleu = corpus_bleu([[r] for r in R], H, smoothing_function=SmoothingFunction().method2)
    if bleu_only:
        nan = float("nan")
        return SRScores(100.0 * bleu, nan, nan, nan, "", nan, len(R))
    try:
        nist = corpus_nist([[r] for r in R], H, n=4)
    except ZeroDivisionError:
        nist = 0.0
    edits = total = 0
    for h, r in zip(H, R):
        a, b = " ".join(h), " ".join(r)
        edits += Levenshtein.distance(a, b)
        total += max(len(a), len(b))
    sb = BLEU(tokenize="none", lowercase=True, force=True)
    res = sb.corpus_score([" ".join(h) for h in H], [[" ".join(r) for r in R]])
    exact = sum(1 for h, r in zip(H, R) if h == r)
    n = max(1, len(R))
    return SRScores(100.0 * bleu, float(nist), 100.0 * (1.0 - edits / max(1, total)), res.score,
                    str(sb.get_signature()), 100.0 * exact / n, len(R))


def read_sentences(path: str) -> List[str]:
    """The tokenized sentences of an evaluation file (``-`` = standard input; .xz/.gz read
    transparently): the forms of each sentence of a CoNLL-U file (detected by a tab-separated
    line with a numeric first column in its first 4 KB), else one sentence per line.  Raises
    FileNotFoundError, InputError for malformed CoNLL-U."""
    from ..io.conllu import read_conllu
    from ..io.text import open_text

    with open_text(path) as fh:
        head = fh.read(4096)
    if "\t" in head and any(ln.split("\t")[0].isdigit() for ln in head.splitlines()):
        return [s.text() for s in read_conllu(path)]
    with open_text(path) as fh:
        return [ln.rstrip("\n") for ln in fh]
