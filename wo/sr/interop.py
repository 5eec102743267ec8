"""What other tools produce, as wo's SR input: a parse from conllu, spaCy or stanza becomes T1
input (the SR'19 shallow track: lemmas, UPOS, features and the unordered tree, the word order
hidden by a fixed shuffle, :func:`wo.sr.t1.make_input`), so a pipeline can regenerate text
from a parse without an adapter of its own.

:func:`to_sentences` takes, one sentence or many: :class:`wo.sr.t1.SRSentence` (unchanged),
:class:`wo.io.conllu.Sentence`, a ``conllu.TokenList`` or a CoNLL-U string, a spaCy ``Doc``
(one sentence per ``doc.sents`` when the parser set them) or ``Span``, a stanza ``Document`` or
``Sentence``; lists and tuples of them.  The libraries are optional: an object is recognised
by its module and attributes, never by importing them.
"""
from __future__ import annotations

from typing import List

from ..io.interop import to_ud
from .t1 import SRSentence, make_input


def to_sentences(x, seed: int = 1, index: int = 0) -> List[SRSentence]:
    """T1 input (:class:`wo.sr.t1.SRSentence`) for each sentence of ``x``: an SRSentence as it
    is, anything :func:`to_ud` takes through :func:`wo.sr.t1.make_input` (words shuffled with
    ``seed``, sentence ``index`` + k: the order a parse gives away is hidden).  Raises
    TypeError / ValueError as :func:`to_ud`, ValueError for a word without a head."""
    if isinstance(x, SRSentence):
        return [x]
    if isinstance(x, (list, tuple)) and x and all(isinstance(y, SRSentence) for y in x):
        return list(x)
    out = []
    for k, s in enumerate(to_ud(x, index)):
        if any(h < 0 for h in s.heads):
            raise ValueError(f"sentence {s.sent_id}: a word has no head (a dependency parse is needed)")
        out.append(make_input(s, seed, index + k))
    return out
