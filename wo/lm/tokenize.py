"""Raw text to LM text: sentence splitting and tokenization of paragraphs by spaCy.

An n-gram LM for word ordering must be estimated on text tokenized as the treebanks are
(UD/PTB conventions: punctuation apart, "do n't", "U.S." one token), or its n-grams do not
match the decoder's words.  spaCy's rule-based English tokenizer (``spacy.blank("en")``) with
its punctuation sentencizer is the closest of the libraries measured against the gold tokens of
the ``# text`` lines of UD English-EWT dev (2,001 sentences; token F1 by character spans /
sentences tokenized exactly): spaCy 97.25 / 89.26, sacremoses 94.27 / 78.16, NLTK's Treebank
tokenizer 91.30 / 79.11 (``bench/lm_text.py tokenizers``).  About 120,000 words a second per
process.

Bad raw text is counted, never fatal: lines that are not UTF-8, contain NUL bytes (binary),
are empty or longer than ``max_chars`` characters are skipped and reported by kind.
"""
from __future__ import annotations

import os
from collections import Counter
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

SHARD_LINES = 2000       # paragraphs per worker batch
MAX_CHARS = 100_000      # longer lines are skipped (a 1 MB line is not a paragraph)
_NLP: Dict[str, object] = {}


def pipeline(lang: str = "en"):
    """The cached spaCy pipeline of ``lang``: a blank tokenizer plus the rule-based
    sentencizer.  Raises ValueError for a language spaCy has no tokenizer for."""
    nlp = _NLP.get(lang)
    if nlp is None:
        from ..extras import require

        require("smt", "tokenizing raw text (spaCy)", modules=["spacy"])
        import spacy

        try:
            nlp = spacy.blank(lang)
        except (ImportError, KeyError, ValueError) as exc:
            raise ValueError(f"no spaCy tokenizer for language {lang!r} ({exc})") from None
        nlp.add_pipe("sentencizer")
        _NLP[lang] = nlp
    return nlp


def tokenize_paragraphs(lang: str, batch: List[str]) -> List[Tuple[List[str], int]]:
    """Split and tokenize raw paragraphs (str, no newline): per paragraph (its sentences as
    space-joined tokens, its token count).  A token's inner whitespace (none in English) is
    removed so that a token stays one word.  The worker of :func:`tokenize_file`."""
    nlp = pipeline(lang)
    out = []
    for doc in nlp.pipe(batch, batch_size=256):
        sents, n = [], 0
        for s in doc.sents:
            toks = ["".join(t.text.split()) for t in s if not t.is_space]
            toks = [t for t in toks if t]
            if toks:
                sents.append(" ".join(toks))
                n += len(toks)
        out.append((sents, n))
    return out


def raw_lines(path: str, stats: Counter, max_chars: int = MAX_CHARS) -> Iterator[str]:
    """The usable paragraphs of a raw text file (``.xz``/``.gz`` ok), whitespace normalised;
    counts in ``stats``: lines, and skipped ones by kind ("not UTF-8", "binary (NUL)",
    "empty", "over max_chars").  ``\n``, ``\r\n`` and a lone ``\r`` end a line
    (:func:`wo.io.text.iter_raw_lines`).  Raises FileNotFoundError, CompressedInputError (naming
    ``path``) for a cut, corrupt or mislabelled compressed file, OSError."""
    from ..io.text import iter_raw_lines

    for raw in iter_raw_lines(path):
        stats["lines"] += 1
        if b"\0" in raw:
            stats["skipped: binary (NUL)"] += 1
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            stats["skipped: not UTF-8"] += 1
            continue
        if stats["lines"] == 1 and line.startswith("\ufeff"):
            line = line[1:]
        if len(line) > max_chars:
            stats["skipped: over max_chars"] += 1
            continue
        line = " ".join(line.split())
        if not line:
            stats["skipped: empty"] += 1
            continue
        yield line


def tokenize_files(paths: Sequence[str], out: str, lang: str = "en", jobs: int = 1, backend: str = "loky",
                   scheduler: Optional[str] = None, max_chars: int = MAX_CHARS,
                   log: Callable[[str], None] = lambda m: None) -> dict:
    """Tokenize raw paragraph files into ``out`` (one sentence per line, tokens joined by
    spaces; plain UTF-8, or xz-compressed when ``out`` ends in ``.xz``), in ``jobs`` processes
    (joblib, or Dask with ``backend="dask"``), file by file so memory stays bounded.

    Returns the statistics: paragraphs, sentences, tokens, lines, skipped lines by kind,
    seconds.  The output is written to a temporary file renamed into place at the end
    (:class:`wo.io.text.AtomicWriter`): a failed run leaves no partial output.  Raises
    FileNotFoundError, ValueError (unknown language), CompressedInputError (an input cut short,
    corrupt or not in the format its name says), OSError."""
    import time

    from ..io.batch import map_batches
    from ..io.text import AtomicWriter

    t0 = time.perf_counter()
    pipeline(lang)   # fail early on an unknown language
    stats: Counter = Counter()
    fo = AtomicWriter(out)      # a failed input (a cut .xz) leaves no partial output behind
    try:
        for path in paths:
            lines = list(raw_lines(path, stats, max_chars))
            shards = [lines[i:i + SHARD_LINES] for i in range(0, len(lines), SHARD_LINES)]
            for res in map_batches(tokenize_paragraphs, (lang,), lines, jobs=jobs, chunk=SHARD_LINES,
                                   backend=backend, scheduler=scheduler) if shards else []:
                sents, n = res
                stats["paragraphs"] += 1
                stats["sentences"] += len(sents)
                stats["tokens"] += n
                for s in sents:
                    fo.write(s)
            log(f"{os.path.basename(path)}: {stats['paragraphs']} paragraphs, {stats['tokens']} tokens so far")
    except BaseException:
        fo.abort()
        raise
    fo.commit()
    rec = dict(sorted(stats.items()))
    rec["seconds"] = round(time.perf_counter() - t0, 1)
    return rec
