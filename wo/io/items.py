"""Batch input and output: readers that never lose a sentence, validation, writers.

Readers turn a file into :class:`Item` objects, one per input sentence, each either usable or
carrying an error message and the line it refers to; a bad sentence never stops the others.

Formats (``--input-format``):

* ``conllu``: CoNLL-U (UD).  ``_`` in XPOS or HEAD means unknown.  Multiword-token ranges and
  empty nodes are skipped (syntactic words only).
* ``bag``: one sentence per line, space-separated tokens; a token ``word/TAG`` carries a POS tag
  when TAG looks like a tag (``[A-Z$][A-Z0-9$.,:;()'`#|-]*`` or a punctuation tag) and word is
  no URL (``://``).
* ``zgen``: ZGen's 4-column format, one token per line: form, POS, head (0-based, -1 = none),
  label; blank line between sentences.  A form ``__a_b__`` is a base-NP unit: its words keep
  their internal order and move as one token; it is expanded on output.
* ``auto``: chosen from the first non-comment lines (10 tab-separated columns: conllu; 4
  columns with an integer third column: zgen; else bag).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from .conllu import Sentence, parse_block
from .text import detokenize, exists, read_blocks, space_after

FORMATS = ("auto", "conllu", "bag", "zgen")
OUTPUT_FORMATS = ("text", "detok", "conllu", "jsonl")
_TAG = re.compile(r"^(?:[A-Z$][A-Z0-9$|_+-]*|[.,:;()'`#\"-]+|-[LR][RCS]B-)$")


@dataclass
class Item:
    """One input sentence.

    forms: list of n str (base-NP units joined with ``_`` stay one token); pos: list of n
    (str or None); heads: list of n int (1-based, 0 root, -1 unknown); sent_id: str;
    line: 1-based line of the sentence start (or of the offending line when ``error``);
    error: message or None; units: per token, the list of words it stands for (ZGen base NPs).
    """

    forms: List[str]
    pos: List[Optional[str]]
    heads: List[int]
    sent_id: str
    line: int
    error: Optional[str] = None
    units: Optional[List[List[str]]] = None
    gold: Optional[Sentence] = None   # the Sentence when read from CoNLL-U

    def __len__(self):
        return len(self.forms)


def first_lines(path: str, most: int) -> List[bytes]:
    """Up to ``most`` lines (bytes, without their line end) from the start of ``path``: read
    lazily from a regular file (``.xz``/``.gz`` decompressed), from the cached bytes of a stream
    (:func:`wo.io.text.iter_raw_lines`); ``\n``, ``\r\n`` and a lone ``\r`` end a line.
    Raises FileNotFoundError, CompressedInputError for a cut, corrupt or mislabelled
    compressed input met in those lines, OSError."""
    from itertools import islice

    from .text import iter_raw_lines

    return list(islice(iter_raw_lines(path), most))


def detect_format(path: str) -> str:
    """Detect the input format from content (see the module docstring)."""
    lines = []   # the first 20 content lines; an invalid byte does not change the format (its line is reported later)
    for raw in first_lines(path, 2000):
        ln = raw.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r")
        if ln.strip() and not ln.startswith("#"):
            lines.append(ln)
        if len(lines) >= 20:
            break
    if lines and sum(1 for ln in lines if len(ln.split("\t")) == 10) >= max(1, len(lines) // 2):
        return "conllu"

    def zgen_like(ln):
        c = ln.split()
        return len(c) == 4 and re.fullmatch(r"-?\d+", c[2]) is not None

    if lines and sum(1 for ln in lines if zgen_like(ln)) >= max(1, (len(lines) + 1) // 2):
        return "zgen"
    return "bag"


def _conllu_item(path: str, start: int, lines, index: int) -> Item:
    """One CoNLL-U block as an Item (errors attached, never raised)."""
    sent, err = parse_block(start, lines, index)
    item = Item(sent.forms, [None if t == "_" else t for t in sent.xpos], sent.heads, sent.sent_id,
                start, gold=sent)
    if err:
        item.line, item.error = err
    return item

def _bag_item(start: int, lines, index: int) -> List[Item]:
    out = []
    for no, txt in lines:
        if txt is None:
            out.append(Item([], [], [], str(len(out) + index + 1), no, "invalid UTF-8"))
            continue
        forms, pos = [], []
        for tok in txt.split():
            w, sep, t = tok.rpartition("/")
            if sep and w and "://" not in w and _TAG.match(t):       # a URL's last segment is no tag
                forms.append(w); pos.append(t)
            else:
                forms.append(tok); pos.append(None)
        out.append(Item(forms, pos, [-1] * len(forms), str(index + len(out) + 1), no))
    return out


def _zgen_item(start: int, lines, index: int) -> Item:
    forms, pos, heads, units = [], [], [], []
    err = None
    raw_heads = []
    for no, txt in lines:
        if txt is None:
            err = err or (no, "invalid UTF-8")
            continue
        c = txt.split()
        if len(c) != 4:
            err = err or (no, f"expected 4 columns (form POS head label), found {len(c)}")
            continue
        if not re.fullmatch(r"-?\d+", c[2]):
            err = err or (no, f"head {c[2]!r} is not an integer")
            continue
        f = c[0]
        if f.startswith("__") and f.endswith("__") and len(f) > 4:
            units.append(f[2:-2].split("_"))
        else:
            units.append([f])
        forms.append(f)
        pos.append(None if c[1] in ("_", "-", "") else c[1])
        raw_heads.append(int(c[2]))
    for h in raw_heads:
        heads.append(-1 if h < 0 else h + 1)  # ZGen: 0-based, -1 none; no explicit root marker
    item = Item(forms, pos, heads, str(index + 1), start, units=units)
    if err:
        item.line, item.error = err
    return item


def conllu_blocks(path: str) -> List[Tuple[int, list]]:
    """The sentence blocks of a CoNLL-U file as :func:`read_items` reads them: (first line,
    [(line number, text), ...]) per block, comment-only blocks left out.  Raises
    FileNotFoundError if the file does not exist."""
    if not exists(path):
        raise FileNotFoundError(2, "no such file", path)
    return [(start, lines) for start, lines in read_blocks(path)
            if not all(t is not None and t.startswith("#") for _, t in lines)]


def read_items(path: str, fmt: str = "auto") -> Tuple[List[Item], str]:
    """Read every sentence of ``path``; returns (items, format used).

    Raises FileNotFoundError if the file does not exist; every other problem is attached to
    the item it concerns (``Item.error``), never raised.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown input format {fmt!r}")
    if not exists(path):
        raise FileNotFoundError(2, "no such file", path)
    if fmt == "auto":
        fmt = detect_format(path)
    items: List[Item] = []
    if fmt == "conllu":
        return [_conllu_item(path, start, lines, i) for i, (start, lines) in enumerate(conllu_blocks(path))], fmt
    for start, lines in read_blocks(path):
        if fmt == "zgen":
            items.append(_zgen_item(start, lines, len(items)))
        else:
            items.extend(_bag_item(start, lines, len(items)))
    return items, fmt


def validate(item: Item, max_length: int, known_tags: Optional[set] = None) -> Optional[str]:
    """Check an item's constraints; return an error message or None.

    Problems: empty sentence, more than ``max_length`` tokens, heads out of range, a token
    that is its own head, several roots, cycles in the given heads, POS tags not in
    ``known_tags``.  Given heads that are acyclic with at most one root can always be
    linearized projectively, so these checks are exactly the unsatisfiable cases.
    """
    n = len(item.forms)
    if n == 0:
        return "empty sentence"
    if n > max_length:
        return f"sentence has {n} tokens, more than --max-length {max_length} (refused to bound memory)"
    for i, h in enumerate(item.heads):
        if h < -1 or h > n:
            return f"head {h} of token {i + 1} is out of range (sentence has {n} tokens)"
        if h == i + 1:
            return f"token {i + 1} is its own head"
    if sum(1 for h in item.heads if h == 0) > 1:
        return "several roots in the given heads"
    for i in range(n):
        seen = set()
        j = i
        while j >= 0 and item.heads[j] > 0:
            if j in seen:
                return f"cycle in the given heads through token {i + 1}"
            seen.add(j)
            j = item.heads[j] - 1
    if known_tags is not None:
        for i, t in enumerate(item.pos):
            if t is not None and t not in known_tags:
                return f"unknown POS tag {t!r} on token {i + 1}"
    return None


def expand_units(item: Item, tokens: Sequence[str], order: Sequence[int]) -> List[str]:
    """Expand ZGen base-NP units in output order."""
    if not item.units:
        return list(tokens)
    out = []
    for i in order:
        out.extend(item.units[i])
    return out


def format_result(item: Item, res, fmt: str) -> str:
    """One output record (without the trailing newline) for a result in ``fmt``: text, detok
    (base-NP units expanded), jsonl (``tokens``/``heads``/``pos`` one per token, a unit as one
    token, and for ZGen input with units ``words``, the expanded words) or conllu (a unit is one
    token line; ``# text`` expanded)."""
    words = expand_units(item, res.tokens, res.order) if item.units else list(res.tokens)
    if fmt == "text":
        return " ".join(words)
    if fmt == "detok":
        return detokenize(words, None if item.units else res.pos)
    if fmt == "jsonl":   # tokens, heads and pos align (a base-NP unit is one token; ``words`` expands it)
        rec = {"sent_id": item.sent_id, "tokens": list(res.tokens), "heads": res.heads, "pos": res.pos,
               "score": res.score, "status": res.status, "seconds": round(res.seconds, 6),
               "pops": res.pops, "edges": res.edges, "message": res.message}
        if item.units:
            rec["words"] = words
        return json.dumps(rec, ensure_ascii=False)
    # conllu: valid UD (UPOS from the given tree, else from the predicted PTB tag; DEPREL root,
    # the given relation where the word kept its given head, else dep; LEMMA given, else English)
    gold = item.gold if item.gold is not None and not item.units and len(item.gold) == len(res.tokens) else None
    toks = [" ".join(w.split()) or "_" for w in res.tokens]
    text = " ".join(detokenize(words, None if item.units else res.pos).split())
    glued = space_after(text, toks)
    if glued is None:   # base-NP units (the text is their words), or the detokenizer rewrote a token
        if not item.units:
            text = " ".join(toks)   # the text the token lines spell
        glued = [False] * len(toks)
    lines = [f"# sent_id = {item.sent_id}", f"# text = {text}"]
    for j, (w, h, p) in enumerate(zip(toks, res.heads, res.pos), 1):
        i = res.order[j - 1] if gold is not None else -1
        upos = gold.upos[i] if gold is not None and gold.upos[i] != "_" else PTB_UPOS.get(p or "", "X")
        lemma = gold.lemmas[i] if gold is not None and gold.lemmas[i] != "_" else _lemma(w, upos, p)
        feats = gold.feats[i] if gold is not None else "_"
        rel = "root" if h == 0 else "punct" if upos == "PUNCT" else "dep"
        if gold is not None and h > 0 and gold.heads[i] > 0 and res.order[h - 1] == gold.heads[i] - 1 \
                and gold.deprels[i] not in ("_", "root"):
            rel = gold.deprels[i]
        lines.append("\t".join([str(j), w, lemma, upos, p or "_", feats, str(h), rel, "_",
                                "SpaceAfter=No" if glued[j - 1] else "_"]))
    return "\n".join(lines) + "\n"


# Penn Treebank tags -> UD UPOS (the English treebanks' conversion: UD English-EWT's XPOS/UPOS pairs)
PTB_UPOS = {
    "NN": "NOUN", "NNS": "NOUN", "NNP": "PROPN", "NNPS": "PROPN", "VB": "VERB", "VBD": "VERB", "VBG": "VERB",
    "VBN": "VERB", "VBP": "VERB", "VBZ": "VERB", "MD": "AUX", "JJ": "ADJ", "JJR": "ADJ", "JJS": "ADJ", "AFX": "ADJ",
    "RB": "ADV", "RBR": "ADV", "RBS": "ADV", "WRB": "ADV", "PRP": "PRON", "PRP$": "PRON", "WP": "PRON", "WP$": "PRON",
    "EX": "PRON", "DT": "DET", "PDT": "DET", "WDT": "DET", "IN": "ADP", "RP": "ADP", "TO": "PART", "POS": "PART",
    "CC": "CCONJ", "CD": "NUM", "UH": "INTJ", "SYM": "SYM", "$": "SYM", "#": "SYM", "FW": "X", "LS": "X", "ADD": "X",
    "GW": "X", "XX": "X", ".": "PUNCT", ",": "PUNCT", ":": "PUNCT", "``": "PUNCT", "''": "PUNCT", "-LRB-": "PUNCT",
    "-RRB-": "PUNCT", "HYPH": "PUNCT", "NFP": "PUNCT"}


def _lemma(form: str, upos: str, tag: Optional[str]) -> str:
    """The lemma of a word the input gave none for: lemminflect's English lemma for a PTB-tagged
    word (the shipped dependency models are English), else ``_`` (unknown)."""
    if tag not in PTB_UPOS:
        return "_"
    if upos in ("PUNCT", "SYM", "NUM", "X", "PROPN"):
        return form
    if upos not in ("NOUN", "VERB", "AUX", "ADJ", "ADV"):   # lemminflect's classes (it prints on others)
        return form.lower()
    try:
        from lemminflect import getLemma

        got = getLemma(form.lower() if upos != "PROPN" else form, upos=upos)
    except Exception:   # noqa: BLE001 (an unknown UPOS or word: no lemma rather than no output)
        got = ()
    return got[0] if got else form.lower()
