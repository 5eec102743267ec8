"""The CCG grammar on the shared search core: :class:`CCGSearch` pairs a
:class:`wo._fast._ccg.CCGGrammar` (tables of one model) with a :class:`wo._fast._search.Search`
over one weight vector (Zhang & Clark 2015, §3, Algorithms 1 and 3)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from .._fast._ccg import CCGGrammar
from .._fast._search import Search
from .instance import CCGTables, Instance


class CCGSearch:
    """Decoder and trainer for CCG word ordering.

    tables: :class:`wo.ccg.instance.CCGTables`; weights: float32[2**hash_bits] (read-only is
    fine for decoding); accum: float64 of the same shape for training (averaging).  Every call
    takes an :class:`wo.ccg.instance.Instance` (with ``gold`` for training and forced decoding).
    Raises ValueError for bad arrays (see ``CCGGrammar.set_instance``).
    """

    def __init__(self, tables: CCGTables, weights: np.ndarray, hash_bits: int,
                 accum: Optional[np.ndarray] = None):
        self.tables = tables
        self.grammar = CCGGrammar()
        self.grammar.set_tables(*tables.arrays())
        self.search = Search(self.grammar, weights, hash_bits, accum)

    def decode(self, inst: Instance, beam: int, max_pops: int, timeout: float = 0.0,
               complete_beam: int = 4, max_edges: int = 4_000_000, goal_patience: int = 0):
        """Algorithm 1 with DP-signature pruning; returns ``Search.decode``'s (order int32[n]
        leaf ids, analysis (list of derivation trees), scaled score, status, pops, edges)."""
        self.grammar.set_instance(*inst.arrays())
        return self.search.decode(beam, max_pops, timeout, complete_beam, max_edges, goal_patience)

    def forced(self, inst: Instance, max_pops: int):
        """Forced decoding towards ``inst.gold``: (reached, order or None, analysis or None, score)."""
        self.grammar.set_instance(*inst.arrays(), gold=inst.gold)
        return self.search.forced(max_pops)

    def train_one(self, inst: Instance, beam: int, max_pops: int):
        """Algorithm 3 on one sentence; returns (reached_gold, pops, updates)."""
        self.grammar.set_instance(*inst.arrays(), gold=inst.gold)
        return self.search.train_one(beam, max_pops)

    def train_easy_first(self, inst: Instance):
        """The easy-first training pass (matches the decoder's merge completion); (steps, updates)."""
        self.grammar.set_instance(*inst.arrays(), gold=inst.gold)
        return self.search.train_easy_first()

    @property
    def n_updates(self) -> int:
        """Large-margin updates made so far."""
        return self.search.n_updates

    @property
    def n_dp_pruned_gold(self) -> int:
        """Updates made because a gold edge was pruned from the chart by a same-DP-signature
        non-gold edge (section 3.5; that edge is the negative example)."""
        return self.search.n_dp_pruned_gold

    @property
    def avg_count(self) -> float:
        """Averaging count c (theta_avg = W - U / c)."""
        return self.search.avg_count

    @avg_count.setter
    def avg_count(self, v: float) -> None:
        self.search.avg_count = v

    @property
    def max_tau(self) -> float:
        """Cap on the update step tau (0 = uncapped)."""
        return self.search.max_tau

    @max_tau.setter
    def max_tau(self, v: float) -> None:
        self.search.max_tau = v
