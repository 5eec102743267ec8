"""Chinese->English translation by syntactic generation (Zhang, Song, Song, Zhu & Liu 2014).

Lexical transfer (word alignment, consistent and cohesive phrase pairs, translation options)
feeds the best-first synthesis decoder of the shared search core, whose leaves are translation
options over a source coverage vector.
"""

__all__ = ["Translator", "PhraseTable", "Option"]


def __getattr__(name):
    if name == "Translator":
        from .translate import Translator
        return Translator
    if name == "PhraseTable":
        from .phrases import PhraseTable
        return PhraseTable
    if name == "Option":
        from .options import Option
        return Option
    raise AttributeError(name)
