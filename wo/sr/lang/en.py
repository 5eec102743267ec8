"""English: what the English treebanks do not teach (Zhang & Clark 2015, section 5.7, for the NLG
2011 task): lemminflect's dictionary inflection for unseen (lemma, features), the forms only the
context decides (a/an, not/n't, contracted auxiliaries) and a/an agreement with the next word."""
from __future__ import annotations

import sys

from typing import Dict, List, Optional, Sequence

from . import Language
from ..feats import parse_feats

# English context rules: lemma -> extra candidates that only the context decides
EN_CONTEXT = {
    "a": ["a", "an"],
    "an": ["a", "an"],
    "not": ["not", "n't"],
}
# contracted alternatives of auxiliary forms (full form -> contraction)
EN_CONTRACT = {"is": "'s", "are": "'re", "am": "'m", "has": "'s", "have": "'ve", "will": "'ll",
               "would": "'d", "had": "'d"}

# UD morphology -> Penn Treebank tag, for lemminflect
def ptb_tag(upos: str, feats: Dict[str, str]) -> Optional[str]:
    if upos in ("NOUN", "PROPN"):
        plural = feats.get("Number") == "Plur"
        return ("NNPS" if plural else "NNP") if upos == "PROPN" else ("NNS" if plural else "NN")
    if upos in ("VERB", "AUX"):
        vf, tense = feats.get("VerbForm"), feats.get("Tense")
        if vf == "Ger" or (vf == "Part" and tense == "Pres"):
            return "VBG"
        if vf == "Part":
            return "VBN"
        if vf == "Inf":
            return "VB"
        if tense == "Past":
            return "VBD"
        if tense == "Pres":
            return "VBZ" if feats.get("Person") == "3" and feats.get("Number") == "Sing" else "VBP"
        return "VB"
    if upos in ("ADJ", "ADV"):
        deg = feats.get("Degree")
        base = "JJ" if upos == "ADJ" else "RB"
        return base + ("R" if deg == "Cmp" else "S" if deg == "Sup" else "")
    return None


# word beginnings spelt with a vowel but said with a consonant, and silent-h words
_A_BEFORE = ("uni", "use", "usu", "uti", "ure", "uro", "eu", "ewe", "one", "once", "ubiq", "ufo")
_AN_BEFORE = ("hour", "honest", "honor", "honour", "heir", "herb")
_AN_LETTERS = set("aefhilmnorsx")   # letter names said with a vowel first: "an FBI", "an MRI"


def article(next_word: str) -> str:
    """The English indefinite article before ``next_word``: "an" before a vowel sound, else "a".

    By spelling: vowel-spelt words said with a consonant ("a university", "a one") and a silent
    h ("an hour") come from prefix lists; an all-capital word of two to five letters is read
    letter by letter ("an FBI", "a CD"), and so is a single letter, alone or before a hyphen ("an
    X-ray"); a number by its spoken start ("an 8", "an 11", "an
    18,000").  A heuristic: the EWT training treebank's exceptions to it are mostly its writers'
    slips ("a answer", "an Nikon"), so none are learned.
    """
    w = next_word.strip("\"'“”‘’`(")
    if not w:
        return "a"
    low = w.lower()
    if w[0].isdigit():
        digits = "".join(ch for ch in w if ch.isdigit() or ch == ",").replace(",", "")
        if digits.startswith("8"):
            return "an"
        if digits[:2] in ("11", "18") and len(digits) in (2, 5, 8):
            return "an"
        return "a"
    if (1 < len(w) <= 5 and w.isupper() and w.isalpha()) or (w[0].isalpha() and (len(w) == 1 or w[1] == "-")):
        return "an" if low[0] in _AN_LETTERS else "a"   # read letter by letter: "an FBI", "an X-ray"
    if low.startswith(_AN_BEFORE):
        return "an"
    if low.startswith(_A_BEFORE):
        return "a"
    return "an" if low[0] in "aeiou" else "a"


def agree_articles(tokens: Sequence[str], lemmas: Sequence[str]) -> List[str]:
    """Make every a/an token agree with the next word that has a letter or digit
    (:func:`article`).

    tokens: output forms (list of n str); lemmas: the lemma of each (n str).  Tokens whose lemma
    is not a/an, and an article with no word after it, are kept; so is the case of the first
    letter.  Returns a new list of n str.
    """
    out = list(tokens)
    for j in range(len(out) - 1):
        t = out[j]
        if t.lower() not in ("a", "an") or lemmas[j].lower() not in ("a", "an"):
            continue
        k = j + 1
        while k < len(out) and not any(ch.isalnum() for ch in out[k]):
            k += 1
        if k == len(out):
            continue
        a = article(out[k])
        out[j] = a if t[:1].islower() else a[:1].upper() + a[1:]
    return out




class _NoSpacy:
    """A meta-path finder that makes ``import spacy`` fail (nothing is put in ``sys.modules``)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "spacy" or name.startswith("spacy."):
            raise ModuleNotFoundError("spaCy is not needed here", name=name)
        return None


def import_lemminflect():
    """The ``lemminflect`` module, imported without spaCy when spaCy is not loaded yet.

    lemminflect's ``__init__`` imports spaCy only to register two ``Token`` extensions wo never
    uses; spaCy's import is 0.6 s of a 2 s ``wo sr realize`` on the 153 sentences of en_partut.
    A later ``import spacy`` works as usual (the finder is removed at once).
    """
    if "lemminflect" in sys.modules or "spacy" in sys.modules:
        import lemminflect
        return lemminflect
    finder = _NoSpacy()
    sys.meta_path.insert(0, finder)
    try:
        import lemminflect
    finally:
        sys.meta_path.remove(finder)
    return lemminflect


# plural endings -> the singular endings they may come from (base guesses for plural_lemma)
_PLURAL_ENDS = (("ies", ("y",)), ("ves", ("f", "fe")), ("ices", ("ex", "ix")), ("es", ("", "is")), ("s", ("",)),
                ("i", ("us",)), ("a", ("um", "on")), ("ae", ("a",)), ("men", ("man",)), ("ren", ("",)),
                ("en", ("",)), ("eet", ("oot",)), ("eeth", ("ooth",)), ("ice", ("ouse",)), ("people", ("person",)))


def plural_lemma(lemminflect, lemma: str) -> bool:
    """Whether ``lemma`` is itself the plural of another noun of lemminflect's dictionary
    (*fungi*, *bacteria*, *criteria*, *children*, *fifths*): some treebanks (ParTUT) lemmatize
    such plurals to themselves, and inflecting them again gives *fungis*.  The singulars tried
    are guessed from the plural endings (:data:`_PLURAL_ENDS`) and looked up in the inflection
    table lemminflect has loaded anyway (its lemma table would add 0.13 s to a run); words
    outside the dictionary are not guessed at (*bus*, *lens*)."""
    low = lemma.lower()
    for end, subs in _PLURAL_ENDS:
        if low.endswith(end):
            for sub in subs:
                base = low[:len(low) - len(end)] + sub
                if base != low and low in lemminflect.getAllInflections(base, upos="NOUN").get("NNS", ()):
                    return True
    return False


class English(Language):
    """English rules: lemminflect, context candidates, a/an agreement."""

    def __init__(self):
        super().__init__("en")
        self._lemminflect = None

    def inflect(self, lemma: str, upos: str, feats: str) -> Optional[str]:
        """lemminflect's form for the Penn tag of (UPOS, FEATS), or None."""
        tag = ptb_tag(upos, parse_feats(feats))
        if tag is None:
            return None
        if self._lemminflect is None:
            self._lemminflect = import_lemminflect()
        L = self._lemminflect
        if tag in ("NNS", "NNPS") and plural_lemma(L, lemma):
            return lemma
        out = L.getInflection(lemma, tag=tag)
        return out[0] if out else None

    def extra_candidates(self, lemma: str, upos: str, forms: Sequence[str]) -> List[str]:
        """a/an, not/n't, and the contraction of an auxiliary's candidate forms."""
        extra = list(EN_CONTEXT.get(lemma.lower(), []))
        for f in forms:
            if f.lower() in EN_CONTRACT and upos == "AUX":
                extra.append(EN_CONTRACT[f.lower()])
        return extra

    def postprocess(self, tokens: Sequence[str], lemmas: Sequence[str], upos: Optional[Sequence[str]] = None,
                    heads: Optional[Sequence[int]] = None) -> List[str]:
        """a/an agreement (:func:`agree_articles`; upos and heads are not needed)."""
        return agree_articles(tokens, lemmas)


LANGUAGE = English()
