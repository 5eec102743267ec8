"""Evaluation: BLEU with sacrebleu's signature, exact match, words recovered, and the SR'18/'19
shared-task metrics (BLEU, NIST, DIST on lower-cased tokens)."""
from .metrics import Scores, SRScores, score, sr_score

__all__ = ["Scores", "SRScores", "score", "sr_score"]
