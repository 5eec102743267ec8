"""Translation options: the leaves of the synthesis decoder (Zhang et al. 2014, section 2.1)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple


@dataclass(frozen=True)
class Option:
    """One target-language translation of a contiguous source phrase.

    Attributes:
        src_lo, src_hi: the source span [src_lo, src_hi) in the segmented source sentence.
        words: target tokens (tokenized and truecased English), 1..s of them.
        pos: target POS tags (PTB), one per word.
        heads: head of each target word inside the phrase, as an index into ``words``;
            -1 for the phrase's single root (the target side is a projective span with one root).
        root: index of the root word in ``words`` (the phrase's head).
        prob: P(trans) = count(source phrase, target phrase) / count(source phrase).
        count: how often the pair was extracted from the training pairs.
    """

    src_lo: int
    src_hi: int
    words: Tuple[str, ...]
    pos: Tuple[str, ...]
    heads: Tuple[int, ...]
    root: int
    prob: float
    count: int = 1
