"""What other tools produce, as wo's sentences: a parse from conllu, spaCy or stanza becomes a
:class:`wo.io.conllu.Sentence` (:func:`to_ud`), which the systems turn into their input (SR:
:func:`wo.sr.interop.to_sentences`; dependency linearization: :meth:`wo.dep.linearizer.Linearizer.prepare`).

:func:`to_ud` takes, one sentence or many: :class:`wo.io.conllu.Sentence`, a ``conllu.TokenList``
or a CoNLL-U string, a spaCy ``Doc`` (one sentence per ``doc.sents`` when the parser set them)
or ``Span``, a stanza ``Document`` or ``Sentence``; lists and tuples of them.  The libraries are
optional: an object is recognised by its module and class name, never by importing them.
"""
from __future__ import annotations

from typing import List

from .conllu import Sentence, sentence_from_tokenlist


def _from_spacy_tokens(toks, sent_id: str) -> Sentence:
    """A UD Sentence from spaCy tokens (a Span or a sentence-less Doc): FORM text, LEMMA
    ``lemma_``, UPOS ``pos_``, XPOS ``tag_``, FEATS ``morph``, HEAD the head's position in
    the span (0 for the span's root or a head outside it), DEPREL ``dep_`` (spaCy's ROOT as root)."""
    toks = list(toks)
    first = toks[0].i if toks else 0
    n = len(toks)

    def head(t) -> int:
        h = t.head.i - first
        return 0 if t.head.i == t.i or not 0 <= h < n else h + 1

    def rel(t) -> str:
        d = t.dep_ or "dep"
        return "root" if d.upper() == "ROOT" or head(t) == 0 else d

    return Sentence(forms=[t.text for t in toks], lemmas=[t.lemma_ or t.text for t in toks],
                    upos=[t.pos_ or "X" for t in toks], xpos=[t.tag_ or "_" for t in toks],
                    feats=[str(t.morph) or "_" for t in toks], heads=[head(t) for t in toks],
                    deprels=[rel(t) for t in toks], misc=["_"] * n, sent_id=sent_id)


def _from_stanza(sent, sent_id: str) -> Sentence:
    """A UD Sentence from a stanza Sentence's syntactic words."""
    ws = list(sent.words)
    return Sentence(forms=[w.text for w in ws], lemmas=[w.lemma or w.text for w in ws],
                    upos=[w.upos or "X" for w in ws], xpos=[w.xpos or "_" for w in ws],
                    feats=[w.feats or "_" for w in ws], heads=[int(w.head or 0) for w in ws],
                    deprels=[w.deprel or "dep" for w in ws], misc=["_"] * len(ws),
                    sent_id=str(getattr(sent, "sent_id", None) or sent_id))


def to_ud(x, index: int = 0) -> List[Sentence]:
    """The UD sentences (:class:`wo.io.conllu.Sentence`) of ``x`` (see the module docstring).
    Raises TypeError for anything else (plain text included: it is not a parse), ValueError for
    a CoNLL-U string that does not parse."""
    mod = type(x).__module__ or ""
    name = type(x).__name__
    if isinstance(x, Sentence):
        return [x]
    if isinstance(x, str):
        if "\t" not in x:
            raise TypeError(f"{x[:40]!r} is plain text, not a parse: parse it first (spaCy, stanza) or pass CoNLL-U")
        import conllu

        try:
            tls = conllu.parse(x)
        except Exception as exc:   # conllu's ParseException and friends
            raise ValueError(f"not CoNLL-U text ({exc})") from None
        if not tls:
            raise ValueError("no sentence in the CoNLL-U text")
        return [sentence_from_tokenlist(tl, 0, index + k) for k, tl in enumerate(tls)]
    if mod.startswith("conllu") and name == "TokenList":
        return [sentence_from_tokenlist(x, 0, index)]
    if mod.startswith("spacy") and name == "Doc":
        if x.has_annotation("SENT_START") or x.has_annotation("DEP"):
            return [_from_spacy_tokens(s, str(index + k + 1)) for k, s in enumerate(x.sents)]
        return [_from_spacy_tokens(x, str(index + 1))]
    if mod.startswith("spacy") and name == "Span":
        return [_from_spacy_tokens(x, str(index + 1))]
    if mod.startswith("stanza") and name == "Document":
        return [_from_stanza(s, str(index + k + 1)) for k, s in enumerate(x.sentences)]
    if mod.startswith("stanza") and name == "Sentence":
        return [_from_stanza(x, str(index + 1))]
    if isinstance(x, (list, tuple)) and x and not isinstance(x[0], str):
        out: List[Sentence] = []
        for y in x:
            out.extend(to_ud(y, index + len(out)))
        return out
    raise TypeError(f"cannot read a {mod + '.' if mod and mod != 'builtins' else ''}{name} as a sentence: pass "
                    "a conllu TokenList or CoNLL-U text, a spaCy Doc/Span or a stanza Document/Sentence")
