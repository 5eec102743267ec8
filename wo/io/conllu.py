"""CoNLL-U (Universal Dependencies) sentences: syntactic words only, strict checks with exact lines.

A :class:`Sentence` is one CoNLL-U sentence restricted to syntactic words (multiword-token
ranges and empty nodes are skipped).  Parsing uses the ``conllu`` library after a line-by-line
check that gives the exact line of a problem.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .text import InputError, read_blocks



@dataclass
class Sentence:
    """One sentence of syntactic words.

    forms, lemmas, upos, xpos, feats, deprels, misc: lists of str (``"_"`` = unknown);
    heads: list of int, 1-based, 0 = root, -1 = unknown; sent_id: str; line: 1-based line of
    the sentence's first line in its file (for error messages).
    """

    forms: List[str]
    lemmas: List[str]
    upos: List[str]
    xpos: List[str]
    feats: List[str]
    heads: List[int]
    deprels: List[str]
    misc: List[str]
    sent_id: str = ""
    line: int = 0
    meta: Dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.forms)

    def text(self) -> str:
        """Space-joined forms (the tokenized reference)."""
        return " ".join(self.forms)


def _feats_str(v) -> str:
    if not v:
        return "_"
    if isinstance(v, str):
        return v
    return "|".join(f"{k}={val}" for k, val in v.items())


def sentence_from_tokenlist(tl, line: int, index: int) -> Sentence:
    """A :class:`Sentence` of syntactic words from a ``conllu.TokenList`` (ranges and empty nodes skipped)."""
    words = [t for t in tl if isinstance(t["id"], int)]
    return Sentence(
        forms=[t["form"] for t in words],
        lemmas=[t["lemma"] or "_" for t in words],
        upos=[t["upos"] or "_" for t in words],
        xpos=[t["xpos"] or "_" for t in words],
        feats=[_feats_str(t["feats"]) for t in words],
        heads=[(-1 if t["head"] is None else int(t["head"])) for t in words],
        deprels=[t["deprel"] or "_" for t in words],
        misc=[_feats_str(t["misc"]) for t in words],
        sent_id=str(tl.metadata.get("sent_id", index + 1)),
        line=line,
        meta=dict(tl.metadata),
    )


_FIELD_PARSERS: dict = {}
_INT = re.compile(r"\d+")
_RANGE_OR_EMPTY = re.compile(r"\d+[-.]\d+")


def _raw(line: List[str], i: int) -> str:
    return line[i]


def _field_parsers() -> dict:
    """``conllu``'s field parsers, except that FEATS, DEPS and MISC stay the strings the file
    has (wo keeps them as strings: parsing them into dicts and joining them again cost a fifth
    of the reading time, and a value without ``=`` survives unchanged)."""
    if not _FIELD_PARSERS:
        import conllu.parser

        _FIELD_PARSERS.update(conllu.parser.DEFAULT_FIELD_PARSERS, feats=_raw, deps=_raw, misc=_raw)
    return _FIELD_PARSERS


def parse_block(start: int, lines, index: int) -> Tuple[Sentence, Optional[Tuple[int, str]]]:
    """Check a CoNLL-U block line by line (exact error lines), then parse it with ``conllu``.

    lines: [(line number, text or None for invalid UTF-8)] of one sentence starting at line
    ``start``; index: 0-based sentence index (default sent_id).  Returns (sentence, error) where
    error is None or (line number, message); with an error the sentence holds what could be
    read (forms only).
    """
    import conllu

    err = None
    nwords = 0
    for no, txt in lines:
        if txt is None:
            err = err or (no, "invalid UTF-8")
            continue
        if txt.startswith("#"):
            continue
        cols = txt.split("\t")
        if len(cols) != 10:
            err = err or (no, f"expected 10 tab-separated columns, found {len(cols)}")
            continue
        tid = cols[0]
        if _RANGE_OR_EMPTY.fullmatch(tid):
            continue
        if not _INT.fullmatch(tid):
            err = err or (no, f"token id {tid!r} is not an integer")
            continue
        if cols[6] != "_" and not _INT.fullmatch(cols[6]):
            err = err or (no, f"head {cols[6]!r} is not an integer")
            continue
        nwords += 1
        if int(tid) != nwords:
            err = err or (no, f"token id {tid} out of sequence (expected {nwords})")
    sent = None
    if err is None:
        try:
            tl = conllu.parse("\n".join(t for _, t in lines) + "\n\n", field_parsers=_field_parsers())[0]
            sent = sentence_from_tokenlist(tl, start, index)
        except Exception as exc:  # the conllu library's own parse errors
            err = (start, f"cannot parse sentence: {exc}")
    if sent is None:
        forms = [t.split("\t")[1] for _, t in lines
                 if t is not None and not t.startswith("#") and len(t.split("\t")) > 1]
        sent = Sentence(forms, ["_"] * len(forms), ["_"] * len(forms), ["_"] * len(forms),
                        ["_"] * len(forms), [-1] * len(forms), ["_"] * len(forms), ["_"] * len(forms),
                        str(index + 1), start, {})
    return sent, err


def read_conllu(path) -> List[Sentence]:
    """Read CoNLL-U strictly: a path (``.xz``/``.gz`` ok, ``-`` = standard input), an open file
    (text or binary) or the text itself (:func:`wo.io.text.input_source`).

    Returns a list of :class:`Sentence`.  Raises FileNotFoundError, TypeError for another kind
    of argument, and :class:`InputError` (``file:line: message``; ``<text>:line`` for text) at
    the first malformed sentence: wrong column count, non-integer id or head, ids out of
    sequence, head out of range, invalid UTF-8.
    """
    from .text import input_source

    with input_source(path, "read_conllu") as src:
        return _read_conllu(src)


def _read_conllu(path: str) -> List[Sentence]:
    out = []
    for start, lines in read_blocks(path):
        if all(t is not None and t.startswith("#") for _, t in lines):
            continue
        sent, err = parse_block(start, lines, len(out))
        if err:
            raise InputError(path, err[0], err[1])
        for i, h in enumerate(sent.heads):
            if h > len(sent.forms):
                raise InputError(path, start, f"head {h} of word {i + 1} is out of range "
                                              f"(sentence has {len(sent.forms)} words)")
        out.append(sent)
    return out
