"""The n-gram language model of wo: load either format, map words to ids, score text.

>>> lm = LanguageModel.load("model.wolm")            # or an ARPA file from KenLM/SRILM/IRSTLM
>>> lm.score(["the", "cat", "sat"])                 # log10 p(the cat sat </s> | <s>)
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Dict, Iterable, List, Optional, Sequence

import numpy as np

from .estimation import BOS_ID, EOS_ID, UNK_ID, NgramTables, perplexity
from .files import MAGIC, LMError, is_arpa_name, query_arrays, read_arpa, read_binary, write_arpa, write_binary


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


class LanguageModel:
    """An n-gram LM in backoff form with Cython queries (``wo._fast._lm.NgramModel``).

    Built by :meth:`load` (binary: memory-mapped; ARPA: read into memory) or from
    :class:`wo.lm.estimation.NgramTables`.  Attributes: order, vocab (list of words, id =
    index), ids (dict word -> id), header (dict).
    """

    def __init__(self, vocab: List[str], uni: np.ndarray, tables: List[np.ndarray], header: dict,
                 path: Optional[str] = None):
        from .._fast._lm import NgramModel

        self.vocab = vocab
        self.ids: Dict[str, int] = {w: i for i, w in enumerate(vocab)}
        self.header = header
        self.order = len(tables) + 1
        self.path = path
        self.core = NgramModel(uni, tables, BOS_ID, EOS_ID, UNK_ID)
        enc = [w.encode("utf-8") for w in vocab]
        offsets = np.zeros(len(enc) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, enc), dtype=np.int64, count=len(enc)), out=offsets[1:])
        self.core.set_vocab(np.frombuffer(b"".join(enc), dtype=np.uint8), offsets)

    @classmethod
    def from_tables(cls, t: NgramTables) -> "LanguageModel":
        """In-memory model from estimated or ARPA tables (builds the probing tables).
        Raises ValueError on an n-gram key collision."""
        uni, tables = query_arrays(t)
        return cls(list(t.vocab), uni, tables, dict(t.meta, order=t.order, counts=t.counts()))

    @classmethod
    def load(cls, path: str, verify: bool = True) -> "LanguageModel":
        """Load a wo binary LM (memory-mapped) or an ARPA file (by content, any name).

        Raises LMError for a file that is neither or is damaged, FileNotFoundError.
        """
        with open(path, "rb") as fh:
            head = fh.read(8)
        if head == MAGIC:
            header, vocab, uni, tables = read_binary(path, verify)
            return cls(vocab, uni, tables, header, path)
        if head.startswith(b"WOMODEL"):
            raise LMError(f"{path}: a wo model file (`wo sr models`, `wo linearize --model`), not a language model "
                          f"(.wolm or ARPA)")
        m = cls.from_tables(read_arpa(path))
        m.path = path
        return m

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
        """int32 ids of tokens (``<unk>`` = 0 for unknown words); mapped once per sentence."""
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

    def score_bytes(self, data: bytes):
        """:meth:`score_lines` over raw UTF-8 text (one sentence per line): the whole loop,
        splitting and vocabulary look-up included, runs in Cython without the GIL."""
        per, oov, oovp, W = self.core.score_text(np.frombuffer(data, dtype=np.uint8))
        S, O = per.shape[0], int(oov.sum())
        total = float(per.sum())
        cs = CorpusScore(S, int(W), O, total, perplexity(total, W + S),
                         perplexity(total - float(oovp.sum()), W + S - O))
        return per, cs

    def save(self, path: str) -> None:
        """Not supported for loaded models (write tables with :func:`wo.lm.files.write_binary`)."""
        raise LMError("a loaded model cannot be re-saved; convert its ARPA file with 'wo lm convert'")


def save_tables(t: NgramTables, path: str) -> dict:
    """Write tables as ARPA when ``path`` ends in .arpa(.gz/.xz), else as wo's binary; returns
    the binary header (or the tables' meta for ARPA).  Raises OSError."""
    if is_arpa_name(path):
        write_arpa(t, path)
        return dict(t.meta, counts=t.counts())
    return write_binary(t, path)
