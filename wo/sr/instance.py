"""Search instances of T1 sentences (Zhang & Clark 2015, section 5.7 on the shared search
core): the section 5.7 alignment of training sentences, the tree a sentence is trained on
(non-projective trees lifted), and the search arrays of the search orderer."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np

from ..dep.instance import QUESTION_MARKS, ROOT, SearchArrays, gold_arrays
from ..io.conllu import Sentence
from ..io.trees import is_projective, projectivize
from ..model import atom
from .inflect import Lexicon
from .t1 import SRSentence, lin_values

# ---------------------------------------------------------------------------------- alignment
def align(s: SRSentence, ref: Sequence[str], lex: Lexicon, max_steps: int = 20000) -> Optional[List[int]]:
    """Gold positions of the tokens of ``s`` in the reference tokens ``ref`` (section 5.7).

    Each token may take a reference position whose word (lower-cased) is one of its candidate
    forms, its lemma or its gold form; ambiguities are resolved by a depth-first search, most
    constrained token first, that keeps only assignments whose tree is projective in the
    reference order and respects ``lin``.  Returns a list of 1-based positions, or None when no
    alignment exists within ``max_steps``.
    """
    n = len(s)
    if len(ref) != n:
        return None
    low = [w.lower() for w in ref]
    opts = []
    for i in range(n):
        c = {f.lower() for f in lex.candidates(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])[0]}
        c.add(s.lemmas[i].lower())
        if s.forms[i]:
            c.add(s.forms[i].lower())
        o = [p for p in range(n) if low[p] in c]
        if not o:
            return None
        opts.append(o)
    order = sorted(range(n), key=lambda i: (len(opts[i]), i))
    pos = [-1] * n
    used = [False] * n
    steps = 0

    def ok_full() -> bool:
        sh = [0] * n
        for i in range(n):
            sh[pos[i]] = 0 if s.heads[i] == 0 else pos[s.heads[i] - 1] + 1
        if not is_projective(sh):
            return False
        surf = [0] * n
        for i in range(n):
            surf[pos[i]] = i
        lin = lin_values(sh, [s.deprels[surf[p]] for p in range(n)])
        return all(lin[pos[i]] == s.lin[i] for i in range(n) if s.lin[i])

    def dfs(k: int) -> bool:
        nonlocal steps
        steps += 1
        if steps > max_steps:
            return False
        if k == n:
            return ok_full()
        i = order[k]
        for p in opts[i]:
            if not used[p]:
                used[p] = True
                pos[i] = p
                if dfs(k + 1):
                    return True
                used[p] = False
        pos[i] = -1
        return False

    if dfs(0):
        return [p + 1 for p in pos]
    return None
# ---------------------------------------------------------------------------------- instances
@dataclass
class SRInstance(SearchArrays):
    """Search arrays of one T1 sentence, tokens in canonical order (input order irrelevant).

    arrays(): (tok_word uint32[n], given_head int32[n], given_ndeps int32[n], leaf_tok int32[L],
    leaf_pos uint32[L]); extra(): dict(leaf_word uint32[L], tok_label uint32[n], tok_lin int32[n]);
    leaf_form: list[str] of length L; canon int64[n]: canonical token c = input token canon[c];
    gold: optional 6-tuple of reference arrays (see ``DepSearch.forced``).
    """

    tok_word: np.ndarray
    given_head: np.ndarray
    given_ndeps: np.ndarray
    leaf_tok: np.ndarray
    leaf_pos: np.ndarray
    leaf_word: np.ndarray
    tok_label: np.ndarray
    tok_lin: np.ndarray
    leaf_form: List[str]
    canon: np.ndarray
    gold: Optional[tuple] = None
    added_gold: int = 0
    lifted: bool = False

    def extra(self) -> dict:
        """The keyword ``DepSearch`` arguments for SR input."""
        return {"leaf_word": self.leaf_word, "tok_label": self.tok_label, "tok_lin": self.tok_lin}


def output_tree(s: SRSentence, idx: Sequence[int]):
    """The UPOS (list of n str) and heads (list of n int: 0-based output positions, -1 for the
    root or a head not in the output) of the tokens of ``s`` in the output order ``idx``."""
    at = {t: p for p, t in enumerate(idx)}
    return [s.upos[i] for i in idx], [at.get(s.heads[i] - 1, -1) if s.heads[i] else -1 for i in idx]


def rerank_lin(heads: Sequence[int], lin: Sequence[int]) -> List[int]:
    """Renumber ``lin`` ranks 1..K per head and side, keeping their order (input may have gaps)."""
    groups: Dict[tuple, List[int]] = defaultdict(list)
    for i, v in enumerate(lin):
        if v:
            groups[(heads[i], v > 0)].append(i)
    out = [0] * len(lin)
    for (_, right), ids in groups.items():
        for r, i in enumerate(sorted(ids, key=lambda i: (abs(lin[i]), i)), 1):
            out[i] = r if right else -r
    return out


def training_tree(s: SRSentence, gold_positions: Optional[Sequence[int]]):
    """The tree a sentence is trained on: (heads 1-based, lin, was_lifted).  A tree that is not
    projective in the reference order (``gold_positions``, 1-based per token) is projectivised
    by lifting (:func:`wo.io.trees.projectivize`), and ``lin`` is recomputed on the lifted tree
    for the tokens that carry it; ``lin`` ranks are then renumbered per head and side."""
    n = len(s)
    heads, lin = list(s.heads), list(s.lin)
    was_lifted = False
    if gold_positions is not None:
        surf = [0] * n
        for i, p in enumerate(gold_positions):
            surf[p - 1] = i
        sh = [0 if heads[surf[p]] == 0 else gold_positions[heads[surf[p]] - 1] for p in range(n)]
        was_lifted = not is_projective(sh)
        if was_lifted:
            lifted = projectivize(sh)
            heads = [0 if lifted[gold_positions[i] - 1] == 0 else surf[lifted[gold_positions[i] - 1] - 1] + 1
                     for i in range(n)]
            # lin is relative to the head: recompute it on the lifted tree for lin-marked tokens
            lv = lin_values(lifted, [s.deprels[surf[p]] for p in range(n)])
            lin = [lv[gold_positions[i] - 1] if s.lin[i] else 0 for i in range(n)]
    return heads, rerank_lin(heads, lin), was_lifted


def tag_of(s: SRSentence, i: int) -> str:
    """The tag of token ``i`` the features and view LMs use: its XPOS, else its UPOS."""
    return s.xpos[i] if s.xpos[i] != "_" else s.upos[i]


def question_heads(s: SRSentence) -> List[bool]:
    """Per token: True if it heads a question clause, i.e. has a ``punct`` dependent whose
    lemma is a question mark (UD attaches the "?" to the clause it ends)."""
    out = [False] * len(s)
    for i in range(len(s)):
        h = s.heads[i]
        if h > 0 and s.deprels[i] == "punct" and s.lemmas[i] in QUESTION_MARKS:
            out[h - 1] = True
    return out


def sr_instance(s: SRSentence, lex: Lexicon, gold_positions: Optional[Sequence[int]] = None,
                question_labels: bool = False, gold_forms: bool = False,
                cands: Optional[Sequence[Sequence[str]]] = None) -> SRInstance:
    """Build the search arrays for a T1 sentence.

    question_labels: the label of every dependent of a question clause's head
    (:func:`question_heads`) gets a "?" mark, so the label-conjoined templates learn question
    order apart from statement order ("do you know", "what is it"); models record whether they
    were trained so (``header["sr"]["question_labels"]``).

    With ``gold_positions`` (1-based reference position per token, e.g. ``s.orig``) and gold
    forms in ``s.forms``, the reference arrays are added for training; a gold form missing from
    the candidates is added (counted in ``added_gold``).  gold_forms (decoding only): when every
    token has its gold form in column 3 (``wo sr make-input --with-gold``), that form is its only
    candidate, so the search orders the given words (ordering measured apart from inflection,
    as the peers' "gold forms" figures are); a reference tree that is not projective
    in the reference order is projectivised by lifting, and the lifted heads become the given
    heads, so no word is lost.  Raises ValueError on an empty sentence.
    """
    n = len(s)
    if n == 0:
        raise ValueError("empty sentence")
    use_gold = gold_forms and gold_positions is None and n > 0 and all(s.forms)
    heads, lin, was_lifted = training_tree(s, gold_positions)
    given = cands if gold_positions is None else None
    cands, gold_form, added = [], [""] * n, 0
    for i in range(n):
        if given is not None:
            cands.append(list(given[i]))
            continue
        if use_gold:   # ordering only: the T1 input's gold forms are the candidates
            cands.append([s.forms[i]])
            continue
        c, _ = lex.candidates(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])
        if gold_positions is not None and s.forms[i]:
            g = s.forms[i]
            if g not in c:   # the sentence-initial capital is not part of the candidates
                g = Lexicon.surface(g, s.lemmas[i], gold_positions[i] - 1)
                if g not in c:
                    c = c + [g]
                    added += 1
            gold_form[i] = g
        cands.append(c)
    key = []
    for i in range(n):
        h = heads[i]
        hk = "<ROOT>" if h == 0 else s.lemmas[h - 1] + "\t" + s.deprels[h - 1]
        ndep = sum(1 for x in heads if x == i + 1)
        key.append((s.lemmas[i], tag_of(s, i), s.deprels[i], hk, lin[i], ndep, tuple(cands[i]), s.feats[i]))
    order = sorted(range(n), key=lambda i: key[i])
    canon = np.asarray(order, dtype=np.int64)
    where = np.empty(n, dtype=np.int64)
    where[canon] = np.arange(n)
    tok_word = np.array([atom(s.lemmas[i]) for i in order], dtype=np.uint32)
    given_head = np.empty(n, dtype=np.int32)
    for c, i in enumerate(order):
        given_head[c] = ROOT if heads[i] == 0 else where[heads[i] - 1]
    given_ndeps = np.zeros(n, dtype=np.int32)
    for c in range(n):
        if given_head[c] >= 0:
            given_ndeps[given_head[c]] += 1
    qh = [False] * n
    if question_labels:
        q = question_heads(s)
        qh = [heads[i] > 0 and q[heads[i] - 1] for i in range(n)]
    leaf_tok, leaf_form, leaf_pos = [], [], []
    for c, i in enumerate(order):
        for f in cands[i]:
            leaf_tok.append(c)
            leaf_form.append(f)
            leaf_pos.append(atom(tag_of(s, i)))
    inst = SRInstance(tok_word, given_head, given_ndeps, np.asarray(leaf_tok, dtype=np.int32),
                      np.asarray(leaf_pos, dtype=np.uint32),
                      np.array([atom(f) for f in leaf_form], dtype=np.uint32),
                      np.array([atom("dep:" + s.deprels[i] + ("?" if qh[i] else "")) for i in order],
                               dtype=np.uint32),
                      np.array([lin[i] for i in order], dtype=np.int32), leaf_form, canon,
                      added_gold=added, lifted=gold_positions is not None and was_lifted)
    if gold_positions is not None:
        g = Sentence([s.forms[i] or "" for i in range(n)], list(s.lemmas), list(s.upos),
                     [tag_of(s, i) for i in range(n)], list(s.feats), heads, list(s.deprels),
                     ["_"] * n, meta={"_gold_pos": [p - 1 for p in gold_positions]})
        arrs = gold_arrays(g, order, where)
        inst.gold = arrs + (np.array([atom(gold_form[i]) for i in order], dtype=np.uint32),)
    return inst
