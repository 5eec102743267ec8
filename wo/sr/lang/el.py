"""Greek: the accent an enclitic pronoun adds to its host.

A Greek word stressed on its antepenultimate syllable takes a second acute on its last syllable
when a weak (enclitic) pronoun follows it: *το όνομα* but *το όνομά της*, *η πρόταση* but *η
πρότασή σας*, *τα χρήματά τους*.  The treebank writes the host with both accents only in those
contexts, so a form learned from it carries the second accent or not by chance of what it was
seen with, and the inflection model cannot produce the second accent for a key it never saw
before an enclitic (UD Greek GDT, dev, shipped model of session 27: 19 of 10,443 tokens lack the
accent, 8 have it where no enclitic follows).  The rule here is applied to the realised tokens
once their order is known: the second accent is removed from every form, then added to a host
stressed on its antepenultimate syllable whose next token is an enclitic pronoun attached to it.

Syllables are counted on the written vowels, a digraph (αι, ει, οι, ου, υι, αυ, ευ; not with a
diaeresis) as one.  Synizesis (*σπίτια* is two syllables, *σχέδια* three) is not written, so
such words are counted by their letters; on UD Greek GDT train, the rule reproduces the
treebank's form for 121 of the 147 hosts it changes (the rest: synizesis, 10; hosts the writer
left with one accent, about 10).
"""
from __future__ import annotations

import unicodedata
from typing import List, Optional, Sequence

from . import Language

ACUTE = "\u0301"
DIAERESIS = "\u0308"
VOWELS = frozenset("αεηιουω")
DIGRAPHS = frozenset(("αι", "ει", "οι", "ου", "υι", "αυ", "ευ"))
# the weak forms of the personal pronouns (genitive and accusative), lower case
ENCLITICS = frozenset(("μου", "σου", "του", "της", "μας", "σας", "τους", "τον", "την", "τη", "το", "τα", "τις"))


def vowel_groups(d: str) -> List[List[int]]:
    """The syllable nuclei of a lower-case NFD string ``d``: per written vowel group (a vowel,
    or a digraph without a diaeresis on its second letter), [start, end, accented (0/1)] as
    character offsets into ``d``, left to right."""
    out: List[List[int]] = []
    i, n = 0, len(d)
    while i < n:
        if d[i] not in VOWELS:
            i += 1
            continue
        j, acc = i + 1, 0
        while j < n and unicodedata.combining(d[j]):
            acc |= d[j] == ACUTE
            j += 1
        end = j
        if not acc and j < n and d[i] + d[j] in DIGRAPHS:
            k, dia, acc2 = j + 1, False, 0
            while k < n and unicodedata.combining(d[k]):
                acc2 |= d[k] == ACUTE
                dia |= d[k] == DIAERESIS
                k += 1
            if not dia:
                end, acc = k, acc2
        out.append([i, end, int(acc)])
        i = end
    return out


def enclitic_accent(word: str, enclitic_follows: bool) -> str:
    """``word`` (any case, NFC or not) with the enclitic accent right: a second acute on its last
    syllable removed, then put back when ``enclitic_follows`` and the word is stressed on its
    antepenultimate syllable.  Returns NFC.  A word with no Greek vowel is returned as it is;
    in a compound written with a hyphen or a slash (*Γάλλο-Πρωσικό*) only its last part counts."""
    cut = max(word.rfind("-"), word.rfind("/")) + 1
    if cut:
        return word[:cut] + enclitic_accent(word[cut:], enclitic_follows)
    d = unicodedata.normalize("NFD", word)
    groups = vowel_groups(d.lower())
    if not groups:
        return word
    accents = [len(groups) - 1 - k for k, g in enumerate(groups) if g[2]]
    if len(accents) == 2 and accents[-1] == 0:    # the second accent, on the last syllable
        s, e, _ = groups[-1]
        d = d[:s] + d[s:e].replace(ACUTE, "") + d[e:]
        groups = vowel_groups(d.lower())
        accents = accents[:1]
    if enclitic_follows and accents == [2]:
        s, e, _ = groups[-1]
        pos = e
        while pos > s and unicodedata.combining(d[pos - 1]):
            pos -= 1
        d = d[:pos] + ACUTE + d[pos:]
    return unicodedata.normalize("NFC", d)


class Greek(Language):
    """Greek: the enclitic accent (:func:`enclitic_accent`) on the realised tokens."""

    def postprocess(self, tokens: Sequence[str], lemmas: Sequence[str], upos: Optional[Sequence[str]] = None,
                    heads: Optional[Sequence[int]] = None) -> List[str]:
        """The enclitic accent on each token: an enclitic follows when the next token is a
        PRON whose form is a weak pronoun (:data:`ENCLITICS`) and whose head is this token.
        tokens, lemmas, upos: n str in output order; heads: n int, each token's head as a
        0-based output position (-1: the root).  Without upos and heads nothing changes."""
        if upos is None or heads is None:
            return list(tokens)
        out = list(tokens)
        n = len(out)
        for j in range(n):
            follows = (j + 1 < n and upos[j + 1] == "PRON" and heads[j + 1] == j
                       and out[j + 1].lower() in ENCLITICS)
            out[j] = enclitic_accent(out[j], follows)
        return out


LANGUAGE = Greek("el")
