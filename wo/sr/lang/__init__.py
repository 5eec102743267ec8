"""Language modules for shared-task realisation: what a treebank cannot teach.

Everything a realiser needs is learned from the treebank (:mod:`wo.sr.inflect`,
:mod:`wo.sr.morph`, the search's features); a language module adds optional rules that a
treebank of that language does not give, selected by the model's language code
(``header["sr"]["lang"]``).  A language with rules is one file ``wo/sr/lang/CODE.py`` that
defines ``LANGUAGE``, an instance of a :class:`Language` subclass; every other code gets the
plain :class:`Language`, which adds nothing and detokenizes by its script.

Hooks (each optional):

* :meth:`Language.inflect`: a form from a dictionary of the language, tried after the treebank
  lexicon and before the learned edit scripts (English: lemminflect);
* :meth:`Language.extra_candidates`: forms only the context decides (English: a/an, n't,
  contractions), added to a token's candidates for the joint search;
* :meth:`Language.postprocess`: rules applied to the realised tokens (English: a/an agreement;
  Greek: the accent an enclitic pronoun adds to its host);
* :meth:`Language.to_inflector` / :meth:`Language.from_inflector`: the alphabet the learned
  inflection model works in (Korean: conjoining jamo, so that syllable contractions are
  suffix edits);
* :meth:`Language.capitalise`: the sentence-initial capital (Turkish: dotted İ);
* :meth:`Language.detokenize`: the ``# text`` line (sacremoses' Moses detokenizer per language;
  no spaces for Chinese and Japanese).
"""
from __future__ import annotations

import importlib
from typing import Dict, List, Optional, Sequence

# scripts written without spaces between words
NO_SPACE = {"zh", "ja", "th", "lo", "km", "my", "bo"}


class Language:
    """The language-independent defaults (see the module docstring).  ``code``: ISO 639-1."""

    def __init__(self, code: str = "xx"):
        self.code = code or "xx"
        self._detok = None

    def inflect(self, lemma: str, upos: str, feats: str) -> Optional[str]:
        """A dictionary form for (lemma, UPOS, canonical FEATS), or None (default: none)."""
        return None

    def extra_candidates(self, lemma: str, upos: str, forms: Sequence[str]) -> List[str]:
        """Forms to add to a token's candidates ``forms`` (default: none)."""
        return []

    def to_inflector(self, s: str) -> str:
        """A lemma or form as the learned inflection model (:mod:`wo.sr.morph`) sees it
        (default: unchanged)."""
        return s

    def from_inflector(self, s: str) -> str:
        """Inverse of :meth:`to_inflector` for the model's predicted forms (default: unchanged)."""
        return s

    def postprocess(self, tokens: Sequence[str], lemmas: Sequence[str], upos: Optional[Sequence[str]] = None,
                    heads: Optional[Sequence[int]] = None) -> List[str]:
        """Rules over the realised tokens (n str, in output order) with their lemmas (n str),
        UPOS (n str) and heads (n int: the head's 0-based output position, -1 for the root);
        returns n str."""
        return list(tokens)

    def capitalise(self, tokens: Sequence[str]) -> List[str]:
        """Upper-case the first letter of the first token that has a letter (a no-op in
        scripts without case)."""
        out = list(tokens)
        for j, t in enumerate(out):
            if any(ch.isalpha() for ch in t):
                out[j] = self.upper(t[:1]) + t[1:]
                break
        return out

    def upper(self, s: str) -> str:
        """Upper case of ``s`` in this language."""
        return s.upper()

    def detokenize(self, tokens: Sequence[str], xpos: Optional[Sequence[str]] = None) -> str:
        """Running text from tokens: joined without spaces for scripts written so
        (:data:`NO_SPACE`), else sacremoses' Moses detokenizer for the language.  xpos: per
        token its XPOS (n str), or None; a hyphen tagged ``HYPH`` (UD English's intra-word
        hyphen: *15 - year* -> *15-year*) is joined to its neighbours
        (:func:`wo.io.text.moses_tokens`, which also joins English *n't*)."""
        if self.code in NO_SPACE:
            return "".join(tokens)
        if self._detok is None:
            from sacremoses import MosesDetokenizer

            self._detok = MosesDetokenizer(lang=self.code)
        from ...io.text import moses_tokens

        return self._detok.detokenize(moses_tokens(tokens, xpos, self.code))


_CACHE: Dict[str, Language] = {}


def language(code: Optional[str]) -> Language:
    """The language module for an ISO 639-1 code (``wo.sr.lang.CODE.LANGUAGE`` when that file
    exists, else the plain :class:`Language`).  None or "" gives the language-independent one."""
    code = (code or "xx").lower()
    if code not in _CACHE:
        try:
            mod = importlib.import_module(f"{__name__}.{code}")
            _CACHE[code] = mod.LANGUAGE
        except ModuleNotFoundError:
            _CACHE[code] = Language(code)
    return _CACHE[code]
