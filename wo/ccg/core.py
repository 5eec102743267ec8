"""The CCG grammar on the shared search core: :class:`CCGSearch` pairs a
:class:`wo._fast._ccg.CCGGrammar` (tables of one model) with a :class:`wo._fast._search.Search`
(training: its subclass :class:`wo._fast._train.Trainer`) over one weight vector (Zhang & Clark
2015, §3, Algorithms 1 and 3)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from .._fast._ccg import CCGGrammar
from .._fast._search import Search
from .._fast._train import Trainer
from ..model import search_property
from .instance import CCGTables, Instance


class CCGSearch:
    """Decoder and trainer for CCG word ordering.

    tables: :class:`wo.ccg.instance.CCGTables`; weights: float32[2**hash_bits] (read-only is
    fine for decoding); accum: float64 of the same shape for training (averaging); lm: a
    :class:`wo.lm.LanguageModel` whose log10 probabilities enter as real-valued features
    (Zhang, Blackwood & Clark 2012), or None.  Every call takes an
    :class:`wo.ccg.instance.Instance` (with ``gold`` for training and forced decoding).
    Raises ValueError for bad arrays (see ``CCGGrammar.set_instance``).
    """

    def __init__(self, tables: CCGTables, weights: np.ndarray, hash_bits: int,
                 accum: Optional[np.ndarray] = None, lm=None):
        self.tables = tables
        self.grammar = CCGGrammar()
        self.grammar.set_tables(*tables.arrays())
        self.lm = lm
        self.grammar.set_lm(lm.core if lm is not None else None)
        self.search = (Search(self.grammar, weights, hash_bits) if accum is None
                       else Trainer(self.grammar, weights, hash_bits, accum))

    def _set(self, inst: Instance, gold: bool = False, tok_order: Optional[np.ndarray] = None) -> None:
        """Install an instance (with its gold arrays if ``gold``; with an LM, the LM ids of the
        leaves' words, int32[L], mapped once per call; tok_order int32[n]: the position of each
        canonical token in a string to parse)."""
        leaf_lm = None
        if self.lm is not None:
            leaf_lm = np.ascontiguousarray(self.lm.word_ids(inst.tok_form)[inst.leaf_tok])
        self.grammar.set_instance(*inst.arrays(), gold=inst.gold if gold else None, leaf_lm=leaf_lm,
                                  tok_order=tok_order)

    def decode(self, inst: Instance, beam: int, max_pops: int, timeout: float = 0.0,
               complete_beam: int = 4, max_edges: int = 4_000_000, goal_patience: int = 0,
               tok_order: Optional[np.ndarray] = None):
        """Algorithm 1 with DP-signature pruning; returns ``Search.decode``'s (order int32[n]
        leaf ids, analysis (list of derivation trees), scaled score, status, pops, edges).
        tok_order int32[n] (position of each canonical token in a given string): parse that
        string instead (edges combine only when adjacent in it)."""
        self._set(inst, tok_order=tok_order)
        return self.search.decode(beam, max_pops, timeout, complete_beam, max_edges, goal_patience)

    def forced(self, inst: Instance, max_pops: int):
        """Forced decoding towards ``inst.gold``: (reached, order or None, analysis or None, score)."""
        self._set(inst, gold=True)
        return self.search.forced(max_pops)

    def train_one(self, inst: Instance, beam: int, max_pops: int):
        """Algorithm 3 on one sentence; returns (reached_gold, pops, updates)."""
        self._set(inst, gold=True)
        return self.search.train_one(beam, max_pops)

    def train_easy_first(self, inst: Instance):
        """The easy-first training pass (matches the decoder's merge completion); (steps, updates)."""
        self._set(inst, gold=True)
        return self.search.train_easy_first()

    n_updates = search_property("n_updates", "Large-margin updates made so far.")
    n_dp_pruned_gold = search_property(
        "n_dp_pruned_gold", "Updates made because a gold edge was pruned from the chart by a "
        "same-DP-signature non-gold edge (section 3.5; that edge is the negative example).")
    avg_count = search_property("avg_count", "Averaging count c (theta_avg = W - U / c).", settable=True)
    max_tau = search_property("max_tau", "Cap on the update step tau (0 = uncapped).", settable=True)
