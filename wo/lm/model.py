"""The n-gram language model of wo: load either format, map words to ids, score text.

>>> lm = LanguageModel.load("model.wolm")            # probing or trie file, or an ARPA file
>>> lm.score(["the", "cat", "sat"])                 # log10 p(the cat sat </s> | <s>)
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from typing import Dict, Iterable, List, Optional, Sequence

import numpy as np

from .estimation import BOS_ID, EOS_ID, UNK_ID, NgramTables, perplexity
from .files import MAGIC, LMError, is_arpa_name, query_arrays, read_arpa, read_binary, write_arpa, write_binary

THREAD_BYTES = 1 << 20   # text longer than this is scored in parallel threads (score_bytes)


@dataclass
class CorpusScore:
    """Scores of a text as KenLM's ``query`` reports them (``<s>``/``</s>`` added per line).

    sentences, words (tokens without ``</s>``), oov (tokens that are ``<unk>``), log10_prob
    (total, ``</s>`` included), perplexity (over words + ``</s>``), perplexity_excluding_oov
    (OOV tokens and their probabilities left out).
    """

    sentences: int
    words: int
    oov: int
    log10_prob: float
    perplexity: float
    perplexity_excluding_oov: float

    def to_json(self) -> str:
        """One JSON object with the field names as keys."""
        return json.dumps(asdict(self))


SHARED_LMS = 16                               # LMs kept by LanguageModel.shared
_SHARED: Dict[tuple, tuple] = {}              # (path, mtime) -> (LM, checksum verified)


class LanguageModel:
    """An n-gram LM in backoff form with Cython queries: ``core`` is a ``wo._fast._lm.NgramModel``
    (probing tables) or its subclass ``wo._fast._lmtrie.TrieModel`` (trie, exact or quantized),
    with the same LMState and calls, so every decoder takes either.

    Built by :meth:`load` (binary: memory-mapped, the file's magic decides the structure; ARPA:
    read into memory) or from :class:`wo.lm.estimation.NgramTables`.  Attributes: order, vocab
    (list of words, id = index), ids (dict word -> id), header (dict), format ("probing",
    "trie", "trie-q<bits>").
    """

    def __init__(self, vocab: List[str], uni: Optional[np.ndarray], tables: Optional[List[np.ndarray]], header: dict,
                 path: Optional[str] = None, core=None):
        from .._fast._lm import NgramModel

        self.vocab = vocab
        self._ids: Optional[Dict[str, int]] = None
        self.header = header
        self.path = path
        # core: the Cython query object the decoders hold -- NgramModel (probing tables) or its
        # subclass wo._fast._lmtrie.TrieModel (trie file), the same LMState and calls
        self.core = core if core is not None else NgramModel(uni, tables, BOS_ID, EOS_ID, UNK_ID)
        self.order = int(self.core.lm_order)
        # the words' UTF-8 bytes end to end and their offsets, from one encode of the joined
        # vocabulary (no word holds a newline: the files store one word per line)
        joined = np.frombuffer("\n".join(vocab).encode("utf-8"), dtype=np.uint8)
        sep = np.flatnonzero(joined == 10)
        offsets = np.empty(len(vocab) + 1, dtype=np.int64)
        offsets[0] = 0
        offsets[1:-1] = sep - np.arange(sep.shape[0])
        offsets[-1] = joined.shape[0] - sep.shape[0]
        self.core.set_vocab(np.ascontiguousarray(joined[joined != 10]), offsets)

    @property
    def ids(self) -> Dict[str, int]:
        """word -> id (built on first use: scoring raw text maps words in Cython and never needs it)."""
        if self._ids is None:
            self._ids = {w: i for i, w in enumerate(self.vocab)}
        return self._ids

    @property
    def format(self) -> str:
        """The query structure: "probing", "trie" (exact) or "trie-q<bits>" (quantized)."""
        return str(getattr(self.core, "lm_format", "probing"))

    @classmethod
    def from_tables(cls, t: NgramTables, fmt: str = "probing") -> "LanguageModel":
        """In-memory model from estimated or ARPA tables: fmt "probing" (hash tables), "trie"
        (exact) or "trie-q<bits>" (:mod:`wo.lm.trie`).  Raises ValueError on an n-gram key
        collision or an unknown format."""
        from .trie import build_trie, make_model, parse_format

        kind, q, arr = parse_format(fmt)
        header = dict(t.meta, order=t.order, counts=t.counts())
        if kind == "trie":
            uni, uptr, info, orders = build_trie(t, q, arr)
            return cls(list(t.vocab), None, None, dict(header, structure="trie", quant_bits=q, trie=info),
                       core=make_model(uni, uptr, info, orders, q))
        uni, tables = query_arrays(t)
        return cls(list(t.vocab), uni, tables, header)

    @classmethod
    def load(cls, path: str, verify: bool = True) -> "LanguageModel":
        """Load a wo binary LM, probing or trie (memory-mapped; the magic decides), or an ARPA
        file (by content, any name).

        Raises LMError naming the file for a file that is none of them or is damaged,
        FileNotFoundError.
        """
        from .trie import TRIE_MAGIC, read_trie

        with open(path, "rb") as fh:
            head = fh.read(8)
        if head == MAGIC:
            header, vocab, uni, tables = read_binary(path, verify)
            return cls(vocab, uni, tables, header, path)
        if head == TRIE_MAGIC:
            header, vocab, core = read_trie(path, verify)
            return cls(vocab, None, None, header, path, core=core)
        if head.startswith(b"WOMODEL"):
            raise LMError(f"{path}: a wo model file (`wo sr models`, `wo linearize --model`), not a language model "
                          f"(.wolm or ARPA)")
        m = cls.from_tables(read_arpa(path))
        m.path = path
        return m

    @classmethod
    def shared(cls, path: str, verify: bool = True) -> "LanguageModel":
        """The LM file at ``path`` loaded once per process (memory-mapped; later calls with the
        same file, e.g. a model's feature LM, its bag search and its tree reranker naming the
        same 4-gram, get the same object; the SHARED_LMS most recent files are kept).  verify:
        check the checksum (:meth:`load`), once per file and process (by default: a bag
        search's, a reranker's or an SR stage's LM is checked as the LM given with ``--lm``;
        about 50 ms for the 47 MB English 4-gram).  Raises as :meth:`load` (LMError naming
        the file for a checksum mismatch)."""
        key = (os.path.abspath(path), os.path.getmtime(path))
        got = _SHARED.pop(key, None)
        if got is None or (verify and not got[1]):
            got = (cls.load(path, verify=verify), verify)
        _SHARED[key] = got          # most recent last
        while len(_SHARED) > SHARED_LMS:
            del _SHARED[next(iter(_SHARED))]
        return got[0]

    def fingerprint(self) -> dict:
        """What a model trained with this LM records to check the LM it decodes with:
        {"order", "vocab_size", "vocab_md5"} (md5 of the vocabulary in id order, one word per
        line).  Two LMs with the same fingerprint map every word to the same id."""
        import hashlib

        if getattr(self, "_fp", None) is None:
            h = hashlib.md5("\n".join(self.vocab).encode("utf-8")).hexdigest()
            self._fp = {"order": self.order, "vocab_size": len(self.vocab), "vocab_md5": h}
        return dict(self._fp)

    def word_ids(self, tokens: Sequence[str]) -> np.ndarray:
        """int32 ids of tokens (``<unk>`` = 0 for unknown words); mapped once per sentence, by
        the core's vocabulary hash (no Python dict of the whole vocabulary is built)."""
        if not tokens:
            return np.zeros(0, dtype=np.int32)
        if self._ids is None:
            text = "\n".join(tokens)
            if text.count("\n") == len(tokens) - 1:   # no token holds a newline
                try:
                    return self.core.word_ids(text.encode("utf-8"), len(tokens))
                except UnicodeEncodeError:   # a lone surrogate: the dict says <unk> for it
                    pass
        get = self.ids.get
        return np.fromiter((get(t, UNK_ID) for t in tokens), dtype=np.int32, count=len(tokens))

    def score(self, tokens: Sequence[str], bos: bool = True, eos: bool = True) -> float:
        """log10 probability of a tokenized sentence (``<s>``/``</s>`` added unless disabled)."""
        return float(self.core.word_scores(self.word_ids(tokens), bos, eos).sum())

    def word_scores(self, tokens: Sequence[str], bos: bool = True, eos: bool = True) -> np.ndarray:
        """log10 p of each token given its history (and of ``</s>`` last): float64[len(tokens)(+1)]."""
        return self.core.word_scores(self.word_ids(tokens), bos, eos)

    def score_lines(self, lines: Iterable[str]):
        """Per-sentence log10 probabilities and the corpus totals of tokenized lines (tokens
        separated by ASCII spaces or tabs; ``<s>``/``</s>`` added per line, as KenLM's query).

        Returns (float64[S] log10 per line, :class:`CorpusScore`).
        """
        data = "\n".join(lines).encode("utf-8") + b"\n"
        return self.score_bytes(data if data != b"\n" else b"")

    def score_bytes(self, data: bytes, threads: Optional[int] = None):
        """:meth:`score_lines` over raw UTF-8 text (one sentence per line): the whole loop,
        splitting and vocabulary look-up included, runs in Cython without the GIL.  Text of more
        than THREAD_BYTES is cut at line ends into ``threads`` pieces (default: the CPUs, at most
        4) scored in parallel threads (the model is read-only); the result is the same."""
        buf = np.frombuffer(data, dtype=np.uint8)
        k = threads if threads is not None else min(4, os.cpu_count() or 1)
        k = max(1, min(k, len(data) // THREAD_BYTES))
        if k == 1:
            per, oov, oovp, W = self.core.score_text(buf)
        else:
            cuts = [0]
            for j in range(1, k):
                nl = data.find(b"\n", max(cuts[-1], len(data) * j // k))
                if nl < 0:
                    break
                cuts.append(nl + 1)
            cuts.append(len(data))
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(len(cuts) - 1) as ex:
                parts = list(ex.map(lambda ab: self.core.score_text(buf[ab[0]:ab[1]]),
                                    [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]))
            per = np.concatenate([p[0] for p in parts])
            oov = np.concatenate([p[1] for p in parts])
            oovp = np.concatenate([p[2] for p in parts])
            W = sum(int(p[3]) for p in parts)
        S, O = per.shape[0], int(oov.sum())
        total = float(per.sum())
        cs = CorpusScore(S, int(W), O, total, perplexity(total, W + S),
                         perplexity(total - float(oovp.sum()), W + S - O))
        return per, cs

    def save(self, path: str) -> None:
        """Not supported for loaded models (write tables with :func:`wo.lm.files.write_binary`)."""
        raise LMError("a loaded model cannot be re-saved; convert its ARPA file with 'wo lm convert'")


def save_tables(t: NgramTables, path: str, fmt: str = "probing") -> dict:
    """Write tables as ARPA when ``path`` ends in .arpa(.gz/.xz), else as wo's binary in
    ``fmt``: "probing" (hash tables), "trie" (exact) or "trie-q<bits>" (quantized; trie-q8 is
    KenLM's ``trie -q 8 -b 8``, :mod:`wo.lm.trie`), a trie name with "-a" for compressed
    pointers (trie-q8-a: KenLM's ``-a``).  Returns the binary header (or the
    tables' meta for ARPA).  Raises OSError, ValueError for an unknown format (or a format
    given with an ARPA name)."""
    from .trie import parse_format, write_trie

    kind, q, arr = parse_format(fmt)
    if is_arpa_name(path):
        if fmt != "probing":
            raise ValueError(f"{path}: --format {fmt} is for wo's binary; an .arpa name writes ARPA")
        write_arpa(t, path)
        return dict(t.meta, counts=t.counts())
    if kind == "trie":
        return write_trie(t, path, q, arr)
    return write_binary(t, path)
