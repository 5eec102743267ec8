"""Corpus preparation for Chinese->English syntactic SMT: reading, segmenting, tokenizing, truecasing.

* :func:`read_pairs` reads the Tatoeba TSV files (``en<TAB>zh<TAB>attribution`` with a header line).
* :func:`segment_zh` segments Chinese with jieba (deterministic: the bundled dictionary, HMM on).
* :class:`EnglishTokenizer` is the Moses tokenizer (sacremoses, ``escape=False``, no aggressive dash
  splitting) followed by a :class:`Truecaser`.
* :class:`Truecaser` is sacremoses' port of the Moses truecaser (train-truecaser.perl /
  truecase.perl, run with one process, so deterministic; ties between casings go to the casing
  seen first), saved as a small gzip JSON file of casing counts.
* :func:`detokenize` is the Moses detokenizer plus an upper-cased first letter (the output side's
  de-truecasing).
"""
from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence

__all__ = [
    "Pair", "read_pairs", "segment_zh", "Truecaser", "EnglishTokenizer", "detokenize",
]


@dataclass(frozen=True)
class Pair:
    """One sentence pair of the corpus: raw English, raw Chinese, and its licence attribution."""

    en: str
    zh: str
    attribution: str


def read_pairs(path: str) -> List[Pair]:
    """Read a ``en<TAB>zh<TAB>attribution`` TSV file (header line first) into :class:`Pair` s.

    The file is read as bytes and decoded line by line, so that a malformed line is reported with
    its number. Raises ``ValueError`` naming the file and the (1-based) line for: a line that is
    not UTF-8, a line without exactly three tab-separated columns, an empty (or all-whitespace)
    English or Chinese side, or a header other than ``en, zh, attribution``. Surrounding
    whitespace of each side is stripped; blank lines at the end of the file are ignored.
    """
    pairs: List[Pair] = []
    from ..io.text import read_bytes

    raw_lines = read_bytes(path).split(b"\n")        # .xz / .gz read transparently
    while raw_lines and not raw_lines[-1].strip():
        raw_lines.pop()
    for lineno, raw in enumerate(raw_lines, 1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{path}:{lineno}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
        if lineno == 1:
            line = line.lstrip("\ufeff")
        cols = line.split("\t")
        if len(cols) != 3:
            raise ValueError(f"{path}:{lineno}: expected 3 tab-separated columns (en, zh, attribution), "
                             f"found {len(cols)}")
        if lineno == 1:
            if [c.strip() for c in cols] != ["en", "zh", "attribution"]:
                raise ValueError(f"{path}:{lineno}: expected the header 'en<TAB>zh<TAB>attribution', "
                                 f"found {line[:60]!r}")
            continue
        en, zh, attribution = (c.strip() for c in cols)
        if not en:
            raise ValueError(f"{path}:{lineno}: empty English side")
        if not zh:
            raise ValueError(f"{path}:{lineno}: empty Chinese side")
        pairs.append(Pair(en, zh, attribution))
    if not raw_lines:
        raise ValueError(f"{path}:1: empty file (no header line)")
    return pairs


_jieba = None
_t2s = None


def _get_jieba():
    global _jieba
    if _jieba is None:
        import logging

        from ..extras import require

        require("smt", "segmenting Chinese", modules=["jieba"])
        import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        _jieba = jieba
    return _jieba


def to_simplified(text: str) -> str:
    """``text`` with Traditional Chinese characters converted to Simplified ones (OpenCC
    ``t2s``, phrase-aware: opencc-python-reimplemented, in the smt extra).  Simplified text
    comes back unchanged (all 2,000 lines of Tatoeba dev and test do); Latin letters, digits and
    punctuation are kept.  Raises :class:`wo.extras.MissingExtra` when OpenCC is not installed."""
    global _t2s
    if _t2s is None:
        from ..extras import require

        require("smt", "converting Traditional Chinese", modules=["opencc"])
        from opencc import OpenCC

        _t2s = OpenCC("t2s")
    return _t2s.convert(text)


def segment_zh(text: str, presegmented: Optional[bool] = None, simplify: bool = False) -> List[str]:
    """Segment a Chinese sentence into words with jieba (precise mode, HMM on; deterministic).

    ``simplify``: convert Traditional characters to Simplified ones first
    (:func:`to_simplified`; ``wo smt translate`` does, as its model, phrase table and parser
    are Simplified; training leaves the corpus as it is).

    Whitespace is never part of a token. If ``presegmented`` is True the text is split on
    whitespace; if False it is segmented with jieba after removing all whitespace. If None (the
    default) it is detected: text containing whitespace counts as already segmented when it has
    at least 3/4 as many whitespace-separated chunks as jieba finds words in it. Raw Tatoeba
    sentences with stray spaces (``他是一个 DJ 。``, ``你喜欢吗 ?``) fall below that and are
    segmented; jieba output joined by spaces is recognised and split back unchanged.
    """
    if simplify:
        text = to_simplified(text)
    chunks = text.split()
    if presegmented is True:
        return chunks
    jieba = _get_jieba()
    # Spaces in raw Chinese are typographic (around Latin words, before punctuation): the text is
    # joined and segmented as a whole, except that a space between two Latin letters or digits
    # keeps those words apart.
    words = [w for w in jieba.lcut(_join_chunks(chunks), HMM=True) if w.strip()]
    if presegmented is None and len(chunks) > 1 and len(chunks) >= 0.75 * len(words):
        return chunks
    return words


_LATIN_END = re.compile(r"[A-Za-z0-9]$")
_LATIN_START = re.compile(r"^[A-Za-z0-9]")


def _join_chunks(chunks: Sequence[str]) -> str:
    out = ""
    for c in chunks:
        if out and _LATIN_END.search(out) and _LATIN_START.search(c):
            out += " "
        out += c
    return out


def _moses_tokenizer():
    from sacremoses import MosesTokenizer

    return MosesTokenizer(lang="en")


class Truecaser:
    """Moses truecaser (sacremoses ``MosesTruecaser``), trained on tokenized English sentences.

    Training counts the surface casings of every token not at a sentence start (the first token,
    and tokens after a sentence-final ``. : ? !`` or after sentence-initial quotes/brackets, are
    not counted). Truecasing changes a sentence-initial token to its most frequent casing, keeps
    a non-initial token whose casing was seen in training, and changes other non-initial tokens
    of a known word to the most frequent casing (``truecase.perl`` semantics, ``use_known``).
    Unknown words are left as they are.
    """

    def __init__(self, casing: Optional[dict] = None):
        """Make a truecaser from casing counts ``{lowercased: {surface: count}}`` (None: untrained)."""
        from sacremoses import MosesTruecaser

        self._mt = MosesTruecaser()
        self.casing = {}
        if casing is not None:
            self._set(casing)

    def _set(self, casing: dict) -> None:
        from collections import Counter, defaultdict

        # forms inserted by (-count, form): most_common's ties (insertion order) then go to the
        # smallest form, the same for a trained and a loaded model
        cas = defaultdict(Counter)
        for low in sorted(casing):
            for form, n in sorted(casing[low].items(), key=lambda fn: (-fn[1], fn[0])):
                cas[low][form] += n
        self.casing = {low: dict(c) for low, c in cas.items()}
        self._mt.model = self._mt._casing_to_model(cas)

    def train(self, sentences: Iterable[Sequence[str]]) -> "Truecaser":
        """Train on tokenized sentences (lists of tokens, in their original casing); returns self."""
        model = self._mt.train([list(s) for s in sentences], processes=1)
        self._set(model["casing"])
        return self

    def truecase(self, tokens: Sequence[str]) -> List[str]:
        """Truecase one tokenized sentence (a list of tokens); returns a new list of tokens."""
        if not self.casing:
            raise ValueError("Truecaser is not trained: call train() or Truecaser.load()")
        if not tokens:
            return []
        out = self._mt.truecase(" ".join(tokens), use_known=True)
        if len(out) != len(tokens):  # defensive: split_xml must not change the token count
            raise AssertionError(f"truecasing changed the token count: {tokens!r} -> {out!r}")
        return out

    def save(self, path: str) -> None:
        """Save the casing counts as gzip JSON (sorted keys, no timestamp: byte-reproducible)."""
        casing = {k: dict(sorted(v.items())) for k, v in sorted(self.casing.items())}
        data = {"format": "wo-truecaser-1", "casing": casing}
        blob = json.dumps(data, ensure_ascii=False, sort_keys=False, separators=(",", ":")).encode("utf-8")
        with open(path, "wb") as f:
            f.write(gzip.compress(blob, mtime=0))

    @classmethod
    def load(cls, path: str) -> "Truecaser":
        """Load a truecaser written by :meth:`save`."""
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        if data.get("format") != "wo-truecaser-1":
            raise ValueError(f"{path}: not a wo truecaser file")
        return cls(data["casing"])


def _ptb_clitics(toks: List[str]) -> List[str]:
    out: List[str] = []
    for t in toks:
        low = t.lower().replace("\u2019", "'")
        if low == "'t" and out and len(out[-1]) > 1 and out[-1][-1] in "nN":
            prev = out.pop()
            out.extend((prev[:-1], prev[-1] + t))
        elif low == "'clock" and out and out[-1].lower() == "o":
            out[-1] += t
        else:
            out.append(t)
    return out


_NT = re.compile(r"^[nN]['\u2019][tT]$")


class EnglishTokenizer:
    """Moses tokenizer for English (``escape=False``, ``aggressive_dash_splits=False``) plus truecasing.

    ``EnglishTokenizer(truecaser)`` tokenizes and truecases; with ``truecaser=None`` it only
    tokenizes (used to produce the truecaser's training data).
    """

    def __init__(self, truecaser: Optional[Truecaser] = None):
        """Wrap a Moses tokenizer; ``truecaser`` (optional) is applied after tokenization."""
        self._tok = _moses_tokenizer()
        self.truecaser = truecaser

    def tokenize(self, text: str) -> List[str]:
        """Moses-tokenize ``text`` (no truecasing), with negative contractions split the PTB way.

        Moses splits ``don't`` into ``don 't``; the parsers (trained on UD EWT) and the Penn
        Treebank expect ``do n't`` (``can't`` -> ``ca n't``, ``won't`` -> ``wo n't``), so the
        ``n`` moves to the clitic. ``o 'clock`` is joined back into ``o'clock``. Curly
        apostrophes (U+2019) are made straight first.
        :func:`detokenize` undoes both.
        """
        text = text.replace("\u2019", "'")  # Moses splits "That’s" into That ’ s
        return _ptb_clitics(self._tok.tokenize(text, escape=False, aggressive_dash_splits=False))

    def __call__(self, text: str) -> List[str]:
        """Tokenize ``text`` and truecase it if a truecaser was given."""
        toks = self.tokenize(text)
        return self.truecaser.truecase(toks) if self.truecaser is not None else toks


_detok = None


def detokenize(tokens: Sequence[str]) -> str:
    """Join English tokens into a sentence: Moses detokenizer, then the first letter upper-cased.

    PTB negative clitics are joined first (``do n't`` -> ``don't``, ``ca n't`` -> ``can't``).
    The first alphanumeric character is upper-cased if it is a letter (``" it 's`` ->
    ``"It's``; a leading number is left alone). This undoes truecasing's sentence-initial
    lower-casing for output.
    """
    global _detok
    if _detok is None:
        from sacremoses import MosesDetokenizer

        _detok = MosesDetokenizer(lang="en")
    joined: List[str] = []
    for t in tokens:  # PTB "do n't" -> "don't" (see EnglishTokenizer.tokenize)
        if joined and _NT.match(t):
            joined[-1] += t
        else:
            joined.append(t)
    text = _detok.detokenize(joined)
    for i, ch in enumerate(text):
        if ch.isalnum():
            if ch.isalpha():
                text = text[:i] + ch.upper() + text[i + 1:]
            break
    return text
