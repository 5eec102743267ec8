"""The choice of forms of an ordered sentence among each token's candidates: a left-to-right
beam search under a word LM, with the allomorph and form-context evidence
(:class:`wo.sr.inflect.Allomorphs`, :class:`wo.sr.inflect.FormContext`)."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import numpy as np


def choose_forms(lm, cands: Sequence[Sequence[str]], penalty: float, beam: int = 8,
                 keys: Optional[Sequence[str]] = None, allomorphs=None, allomorph_weight: float = 0.0,
                 context: Optional[Sequence[Sequence[float]]] = None, context_weight: float = 0.0) -> List[str]:
    """The form of each token of an ordered sentence, chosen among its candidates (best first)
    by a left-to-right beam search under the word LM ``lm`` (lower-cased forms, log10 p with
    sentence boundaries; None: no LM term) minus ``penalty`` per rank down a token's candidate
    list, plus ``allomorph_weight`` x the neighbour-character evidence of the
    :class:`wo.sr.inflect.Allomorphs` table for the tokens' lexicon ``keys`` (each form against
    the previous word's last character and last vowel and the next word's first character),
    plus ``context_weight`` x ``context[pos][rank]`` (per output position, one score per
    candidate: :meth:`wo.sr.inflect.FormContext.scores`).

    cands: per output position, a non-empty list of str; keys: per output position, the
    lexicon key (:meth:`wo.sr.inflect.Lexicon.keys` [1]).  Returns list[str], one per position.
    """
    allo = allomorphs if allomorph_weight and allomorphs is not None and keys is not None else None
    # the LM's word ids of every candidate, mapped once
    cids = [lm.word_ids([f.lower() for f in c]) for c in cands] if lm is not None else None
    # a hypothesis: (score, node); a node (form, previous node, forms so far, the LM ids of the
    # last three forms) or None before the first form
    hyps: list = [(0.0, None)]
    for pos, c in enumerate(cands):
        ids = cids[pos].tolist() if cids is not None else None
        if len(c) == 1 and len(hyps) == 1:   # one hypothesis, one form: nothing to choose
            sc, node = hyps[0]
            n, hist = (node[2], node[3]) if node is not None else (0, ())
            hyps = [(sc, (c[0], node, n + 1, (hist + (ids[0],))[-3:] if ids is not None else ()))]
            continue
        nxt = []
        terms: Dict[Optional[str], List[float]] = {}   # the allomorph terms of c after a previous form
        for sc, node in hyps:
            n, hist = (node[2], node[3]) if node is not None else (0, ())
            # log10 p of each candidate after the last three forms (after <s> near the start)
            lp = lm.core.next_scores(np.array(hist, dtype=np.int32), cids[pos], n < 4).tolist() \
                if lm is not None else [0.0] * len(c)
            if allo is not None:
                prev = node[0] if node is not None else None
                at = terms.get(prev)
                if at is None:
                    at = terms[prev] = [allomorph_weight * a for a in _allomorph_terms(allo, keys, pos, c, prev)]
                lp = [x + y for x, y in zip(lp, at)]
            for r, f in enumerate(c):
                p = lp[r]
                if context is not None:
                    p += context_weight * context[pos][r]
                nxt.append((sc + p - penalty * r, (f, node, n + 1, (hist + (ids[r],))[-3:] if ids is not None else ())))
        nxt.sort(key=lambda x: -x[0])
        hyps = nxt[:beam]
    if allo is not None and cands and keys[-1] in allo and len(hyps) > 1:
        hyps = sorted(((sc + allomorph_weight * allo.score(keys[-1], node[0], allo.EOS, "next"), node)
                       for sc, node in hyps), key=lambda x: -x[0])
    out: List[str] = []
    node = hyps[0][1]
    while node is not None:
        out.append(node[0])
        node = node[1]
    return out[::-1]


def _allomorph_terms(allo, keys: Sequence[str], pos: int, cands: Sequence[str], prev: Optional[str]) -> List[float]:
    """:func:`choose_forms`' allomorph evidence of each candidate form at output position
    ``pos`` after the form ``prev`` (None at the start): the form against the previous word's
    last character and last vowel, and the previous form against the candidate's first
    character (unweighted sums, one per candidate)."""
    out = []
    mine, theirs = keys[pos] in allo, prev is not None and keys[pos - 1] in allo
    last = prev[-1:].lower() if prev is not None else allo.BOS
    v = allo.last_vowel(prev) if prev is not None and mine else None
    for f in cands:
        a = 0.0
        if mine:
            a += allo.score(keys[pos], f, last, "prev")
            if v is not None:   # tables counted without vowel keys score 0 here
                a += allo.score(keys[pos], f, v, "prev")
        if theirs:
            a += allo.score(keys[pos - 1], prev, f[:1].lower(), "next")
        out.append(a)
    return out
