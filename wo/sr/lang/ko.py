"""Korean: the learned inflection model works on conjoining jamo.

UD Korean lemmas are morphemes joined by ``+`` (*수석+연구원+은*, *내다보+았+다*) and the form
writes them as syllables, contracted where a vowel meets a vowel (*내다봤다*).  In Hangul
syllables a contraction rewrites the stem's last syllable, so an edit script learned for one
stem does not apply to another; in jamo (Unicode NFD) it is a suffix edit of the stem's last
vowel (ㅗ + 았 -> ㅘㅆ), which the suffix-keyed edit scripts of :mod:`wo.sr.morph` generalise.
"""
import unicodedata

from . import Language


class Korean(Language):
    """Korean: lemmas without their ``+`` morpheme boundaries, in NFD jamo, for the inflection
    model; its forms composed back (NFC)."""

    def to_inflector(self, s: str) -> str:
        """``s`` without ``+`` (when it has more than that), decomposed into jamo (NFD)."""
        t = s.replace("+", "") if s.strip("+") else s
        return unicodedata.normalize("NFD", t)

    def from_inflector(self, s: str) -> str:
        """The Hangul syllables of a jamo string (NFC)."""
        return unicodedata.normalize("NFC", s)


LANGUAGE = Korean("ko")
