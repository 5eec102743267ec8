"""Chinese->English translation by syntactic generation (Zhang, Song, Song, Zhu & Liu 2014).

Lexical transfer (word alignment, consistent and cohesive phrase pairs, translation options)
feeds the best-first synthesis decoder of the shared search core, whose leaves are translation
options over a source coverage vector.
"""
