"""The dependency grammar on the shared search core, with the array-level API the front ends use.

:class:`DepSearch` pairs a :class:`wo._fast._dep.DepGrammar` with a
:class:`wo._fast._search.Search` (training: :class:`wo._fast._train.Trainer`) over one weight
vector; each call sets the instance arrays and runs the driver.  Array shapes and dtypes are those of ``DepGrammar.set_instance``.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .._fast._dep import DepGrammar
from .._fast._search import Search
from .._fast._train import Trainer
from ..model import check_lm_fit, resolve_lm  # noqa: F401  (re-exported: the LM a model decodes with)
from ..model import search_property as _forward


class DepSearch:
    """Decoder and trainer for dependency word ordering (Zhang & Clark 2015, Algorithms 3-4, section 4).

    weights: float32[2**hash_bits] (read-only is fine for decoding); accum: float64 of the same
    shape for training (averaging accumulator); lm: a :class:`wo.lm.LanguageModel` whose
    log10 probabilities enter as real-valued features (instances then need ``leaf_lm``).  Instance arguments, in order: tok_word
    uint32[n], given_head int32[n], given_ndeps int32[n], leaf_tok int32[L], leaf_pos uint32[L];
    keywords leaf_word, tok_label, tok_lin (SR input); gold (training, forced decoding).
    Raises ValueError for bad arrays (see ``DepGrammar.set_instance``).
    """

    def __init__(self, weights: np.ndarray, hash_bits: int, accum: Optional[np.ndarray] = None, lm=None):
        self.grammar = DepGrammar()
        self.lm = lm
        if lm is not None:
            self.grammar.set_lm(lm.core)
        self.search = (Search(self.grammar, weights, hash_bits) if accum is None
                       else Trainer(self.grammar, weights, hash_bits, accum))

    def use_lm(self, lm) -> None:
        """Switch to another LM (a :class:`wo.lm.LanguageModel` or None) between sentences, as
        jackknifed training does; the weights are kept."""
        self.lm = lm
        self.grammar.set_lm(lm.core if lm is not None else None)

    def kwargs(self, inst) -> dict:
        """Keyword arrays of an instance for this search: ``inst.extra()`` plus, with an LM,
        ``leaf_lm`` (the LM ids of the leaves' words, mapped once per sentence)."""
        kw = dict(inst.extra())
        if self.lm is not None:
            kw["leaf_lm"] = self.lm.word_ids(inst.leaf_form)
        return kw

    def decode(self, tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, beam: int, max_pops: int,
               timeout: float = 0.0, complete_beam: int = 4, max_edges: int = 4_000_000,
               leaf_word=None, tok_label=None, tok_lin=None, goal_patience: int = 0, leaf_lm=None,
               tok_order=None):
        """Decode one instance; returns (order int32[n] leaf ids, heads int32[n] head token or
        -1, scaled score, status int, pops, edges) as ``Search.decode``.  With ``tok_order``
        (int32[n], the fixed surface position of every token) the search parses that string:
        the result is the model's best tree for it (``DepGrammar.set_instance``)."""
        self.grammar.set_instance(tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, None,
                                  leaf_word, tok_label, tok_lin, leaf_lm, tok_order)
        return self.search.decode(beam, max_pops, timeout, complete_beam, max_edges, goal_patience)

    def forced(self, tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold, max_pops: int,
               leaf_word=None, tok_label=None, tok_lin=None, leaf_lm=None):
        """Forced decoding towards ``gold``; returns (reached, order or None, heads or None, score)."""
        self.grammar.set_instance(tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold,
                                  leaf_word, tok_label, tok_lin, leaf_lm)
        return self.search.forced(max_pops)

    def train_one(self, tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold, beam: int,
                  max_pops: int, leaf_word=None, tok_label=None, tok_lin=None, leaf_lm=None):
        """Algorithm 3 on one sentence; returns (reached_gold, pops, updates)."""
        self.grammar.set_instance(tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold,
                                  leaf_word, tok_label, tok_lin, leaf_lm)
        return self.search.train_one(beam, max_pops)

    def train_easy_first(self, tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold,
                         leaf_word=None, tok_label=None, tok_lin=None, leaf_lm=None):
        """The easy-first training pass on one sentence; returns (steps, updates)."""
        self.grammar.set_instance(tok_word, given_head, given_ndeps, leaf_tok, leaf_pos, gold,
                                  leaf_word, tok_label, tok_lin, leaf_lm)
        return self.search.train_easy_first()

    def features_of_last_edge(self) -> np.ndarray:
        """Feature indices (uint32[k]) of the most recent edge's action (testing aid)."""
        return self.search.features_of_last_edge()

    # training state shared with the trainer (the Search's attributes)
    n_updates = _forward("n_updates", "Large-margin updates made so far.")
    avg_count = _forward("avg_count", "Averaging count c (theta_avg = W - U / c).", settable=True)
    max_tau = _forward("max_tau", "Cap on the update step tau (0 = uncapped).", settable=True)
    last_pops = _forward("last_pops", "Pops of the last call.")
    last_edges = _forward("last_edges", "Edges built by the last call.")
    total_edges = _forward("total_edges", "Edges built by every call so far.")
