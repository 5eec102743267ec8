"""Surface Realisation shared-task input (SR'19 shallow track, T1): reading, making, realising.

T1 input is an unordered, lemmatised, labelled UD tree: CoNLL-U shaped, token ids scrambled,
column 2 the lemma, column 3 ``_`` (or the gold form in aligned training files), UPOS, XPOS,
FEATS (morphology, ``lin=+-k`` ordering hints, ``original_id=N`` gold positions in aligned
files), HEAD and DEPREL.  Realisation follows Zhang & Clark 2015 section 5.7 (joint inflection
and ordering for the NLG 2011 task): every token's candidate forms (:mod:`wo.inflect`) are one
mutually exclusive group of leaf edges, given heads and labels are constraints, labels add a
copy of the direction templates conjoined with the label, and ``lin`` is a hard constraint.

``lin`` (checked on all 7,008 occurrences in the ParTUT T1 train file, and reproduced exactly by
:func:`lin_values`): the sign says on which side of its head the token stands, k its rank by
closeness among the head's dependents on that side that carry ``lin``.  Tokens with ``lin``:
every ``punct``, ``flat``, ``flat:foreign``, ``fixed``, ``compound``, ``compound:prt``, and a
``conj`` when another dependent of its head on the same side is one of those or a ``conj``.
"""
from __future__ import annotations

import dataclasses
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .data import (ROOT, Sentence, atom, gold_arrays, is_projective, permutation,
                   projectivize)
from .inflect import Lexicon, TASK_FEATS, parse_feats

LIN_RELATIONS = ("punct", "flat", "flat:foreign", "fixed", "compound", "compound:prt")
DEFAULT_SR_BEAM_FACTOR = 16.0
DEFAULT_SR_BUDGET_FACTOR = 200.0
DEFAULT_SR_COMPLETE_BEAM = 32


@dataclass
class SRSentence:
    """One T1 sentence, tokens in file order (ids 1..n in that order).

    lemmas, upos, xpos, deprels: list[str]; feats: list[str] morphology only (``_`` if none);
    heads: list[int] 1-based (0 = root); lin: list[int] (0 = none); forms: list[str or None]
    gold forms when known; orig: list[int] 1-based gold positions (``original_id``) or None;
    sent_id: str; line: 1-based first line in the file; error: message or None.
    """

    lemmas: List[str]
    upos: List[str]
    xpos: List[str]
    feats: List[str]
    heads: List[int]
    deprels: List[str]
    lin: List[int]
    forms: List[Optional[str]]
    orig: Optional[List[int]] = None
    sent_id: str = ""
    line: int = 0
    error: Optional[str] = None

    def __len__(self) -> int:
        return len(self.lemmas)


# ---------------------------------------------------------------------------------- reading
def _from_sentence(s: Sentence, index: int) -> SRSentence:
    n = len(s)
    feats, lin, orig = [], [], []
    for i in range(n):
        d = parse_feats(s.feats[i])
        try:
            lin.append(int(d.get("lin", "0")))
        except ValueError:
            raise ValueError(f"token {i + 1}: lin={d.get('lin')!r} is not an integer")
        if "original_id" in d:
            try:
                orig.append(int(d["original_id"]))
            except ValueError:
                raise ValueError(f"token {i + 1}: original_id={d['original_id']!r} is not an integer")
        feats.append("|".join(f"{k}={v}" for k, v in d.items() if k not in TASK_FEATS) or "_")
    has_orig = len(orig) == n and n > 0
    if orig and not has_orig:
        raise ValueError("original_id on some tokens only")
    if has_orig and sorted(orig) != list(range(1, n + 1)):
        raise ValueError("original_id values are not a permutation of 1..n")
    forms = [None if f == "_" else f for f in s.lemmas]   # column 3
    return SRSentence(list(s.forms), list(s.upos), list(s.xpos), feats, list(s.heads),
                      list(s.deprels), lin, forms, orig if has_orig else None,
                      s.sent_id, s.line)


def check_sr(s: SRSentence) -> Optional[str]:
    """Problems that make a T1 sentence unusable (message) or None: missing heads, cycles, roots."""
    from .io import Item, validate

    n = len(s)
    if any(h < 0 for h in s.heads):
        return "T1 input needs a head for every token"
    if sum(1 for h in s.heads if h == 0) != 1:
        return "T1 input needs exactly one root"
    msg = validate(Item(s.lemmas, [None] * n, s.heads, s.sent_id, s.line), 10 ** 6)
    if msg:
        return msg
    return None


def read_t1(path: str) -> List[SRSentence]:
    """Read a T1 file (or any UD-shaped file read as T1).  One :class:`SRSentence` per block.

    A malformed sentence is returned with ``error`` set (``file:line`` in ``line``), never
    dropped.  Raises FileNotFoundError for a missing file.
    """
    from .io import read_items

    items, _ = read_items(path, "conllu")
    out = []
    for i, it in enumerate(items):
        s = it.gold
        if it.error:
            sr = SRSentence(list(s.forms), ["_"] * len(s), ["_"] * len(s), ["_"] * len(s),
                            [-1] * len(s), ["_"] * len(s), [0] * len(s), [None] * len(s), None,
                            it.sent_id, it.line, it.error)
        else:
            try:
                sr = _from_sentence(s, i)
                sr.error = check_sr(sr)
            except ValueError as exc:
                sr = SRSentence(list(s.forms), list(s.upos), list(s.xpos), ["_"] * len(s), list(s.heads),
                                list(s.deprels), [0] * len(s), [None] * len(s), None, it.sent_id,
                                it.line, str(exc))
        out.append(sr)
    return out


def lin_values(heads: Sequence[int], deprels: Sequence[str]) -> List[int]:
    """SR'19 ``lin`` annotations of a tree in surface order (see the module docstring).

    heads: 1-based (0 = root), deprels: list[str]; returns list[int] (0 = no ``lin``).
    """
    n = len(heads)
    kids: Dict[int, List[int]] = defaultdict(list)
    for i, h in enumerate(heads):
        kids[h].append(i + 1)
    out = [0] * n
    for h, ds in kids.items():
        if h == 0:
            continue
        for side in (-1, 1):
            sib = [d for d in ds if (d > h) == (side > 0)]
            fixed = [d for d in sib if deprels[d - 1] in LIN_RELATIONS]
            conj = [d for d in sib if deprels[d - 1] == "conj"]
            marked = set(fixed)
            for d in conj:
                if len(fixed) + len(conj) > 1:
                    marked.add(d)
            for rank, d in enumerate(sorted(marked, key=lambda d: abs(d - h)), 1):
                out[d - 1] = side * rank
    return out


def make_input(sent: Sentence, seed: int, index: int, with_gold: bool = False) -> SRSentence:
    """T1 input from a UD sentence (syntactic words), as SR'19 made it.

    Token ids scrambled with :func:`wo.data.permutation` (fixed ``seed``), lemma in column 2,
    ``_`` in column 3 (the gold form with ``with_gold``), UPOS/XPOS/FEATS/HEAD/DEPREL kept,
    ``lin`` added (:func:`lin_values`), ``original_id`` with ``with_gold``.
    """
    n = len(sent)
    perm = permutation(n, seed, index)
    where = {old: new for new, old in enumerate(perm)}
    lin = lin_values(sent.heads, sent.deprels)
    pick = lambda xs: [xs[perm[j]] for j in range(n)]  # noqa: E731
    heads = [0 if sent.heads[perm[j]] == 0 else where[sent.heads[perm[j]] - 1] + 1 for j in range(n)]
    feats = []
    for j in range(n):
        d = {k: v for k, v in parse_feats(sent.feats[perm[j]]).items() if k not in TASK_FEATS}
        feats.append("|".join(f"{k}={v}" for k, v in d.items()) or "_")
    return SRSentence(pick(sent.lemmas), pick(sent.upos), pick(sent.xpos), feats, heads,
                      pick(sent.deprels), pick(lin), pick(sent.forms) if with_gold else [None] * n,
                      [perm[j] + 1 for j in range(n)] if with_gold else None, sent.sent_id, sent.line)


def format_t1(s: SRSentence, with_gold: bool = True) -> str:
    """One T1 block (with a ``# sent_id`` comment, no ``# text``), without the trailing blank line."""
    lines = [f"# sent_id = {s.sent_id}"]
    for j in range(len(s)):
        extra = []
        if s.lin[j]:
            extra.append(f"lin={s.lin[j]:+d}")
        if with_gold and s.orig:
            extra.append(f"original_id={s.orig[j]}")
        f = s.feats[j]
        feats = "|".join(([] if f == "_" else [f]) + extra) or "_"
        form = s.forms[j] if with_gold and s.forms[j] else "_"
        lines.append("\t".join([str(j + 1), s.lemmas[j], form, s.upos[j], s.xpos[j], feats,
                                str(s.heads[j]), s.deprels[j], "_", "_"]))
    return "\n".join(lines) + "\n"


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
class SRInstance:
    """Search arrays of one T1 sentence, tokens in canonical order (input order irrelevant).

    arrays(): (tok_word uint32[n], given_head int32[n], given_ndeps int32[n], leaf_tok int32[L],
    leaf_pos uint32[L]); extra(): dict(leaf_word uint32[L], tok_label uint32[n], tok_lin int32[n]);
    leaf_form: list[str] of length L; canon int64[n]: canonical token c = input token canon[c];
    gold: optional 6-tuple of reference arrays (see ``SearchCore.forced``).
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

    @property
    def n(self) -> int:
        """Number of tokens."""
        return int(self.tok_word.shape[0])

    def arrays(self):
        """The positional SearchCore arguments."""
        return (self.tok_word, self.given_head, self.given_ndeps, self.leaf_tok, self.leaf_pos)

    def extra(self) -> dict:
        """The keyword SearchCore arguments for SR input."""
        return {"leaf_word": self.leaf_word, "tok_label": self.tok_label, "tok_lin": self.tok_lin}


def _rerank(heads: Sequence[int], lin: Sequence[int]) -> List[int]:
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


def _pos(s: SRSentence, i: int) -> str:
    return s.xpos[i] if s.xpos[i] != "_" else s.upos[i]


def sr_instance(s: SRSentence, lex: Lexicon, gold_positions: Optional[Sequence[int]] = None) -> SRInstance:
    """Build the search arrays for a T1 sentence.

    With ``gold_positions`` (1-based reference position per token, e.g. ``s.orig``) and gold
    forms in ``s.forms``, the reference arrays are added for training; a gold form missing from
    the candidates is added (counted in ``added_gold``); a reference tree that is not projective
    in the reference order is projectivised by lifting, and the lifted heads become the given
    heads, so no word is lost.  Raises ValueError on an empty sentence.
    """
    n = len(s)
    if n == 0:
        raise ValueError("empty sentence")
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
    lin = _rerank(heads, lin)
    cands, gold_form, added = [], [""] * n, 0
    for i in range(n):
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
        key.append((s.lemmas[i], _pos(s, i), s.deprels[i], hk, lin[i], ndep, tuple(cands[i]), s.feats[i]))
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
    leaf_tok, leaf_form, leaf_pos = [], [], []
    for c, i in enumerate(order):
        for f in cands[i]:
            leaf_tok.append(c)
            leaf_form.append(f)
            leaf_pos.append(atom(_pos(s, i)))
    inst = SRInstance(tok_word, given_head, given_ndeps, np.asarray(leaf_tok, dtype=np.int32),
                      np.asarray(leaf_pos, dtype=np.uint32),
                      np.array([atom(f) for f in leaf_form], dtype=np.uint32),
                      np.array([atom("dep:" + s.deprels[i]) for i in order], dtype=np.uint32),
                      np.array([lin[i] for i in order], dtype=np.int32), leaf_form, canon,
                      added_gold=added, lifted=gold_positions is not None and was_lifted)
    if gold_positions is not None:
        g = Sentence([s.forms[i] or "" for i in range(n)], list(s.lemmas), list(s.upos),
                     [_pos(s, i) for i in range(n)], list(s.feats), heads, list(s.deprels),
                     ["_"] * n, meta={"_gold_pos": [p - 1 for p in gold_positions]})
        arrs = gold_arrays(g, order, where)
        inst.gold = arrs + (np.array([atom(gold_form[i]) for i in order], dtype=np.uint32),)
    return inst


# ---------------------------------------------------------------------------------- realising
@dataclass
class SRResult:
    """One realised sentence: tokens (list[str], output order, sentence-initial capital),
    order (list[int]: input token index of each output token), heads (1-based output positions,
    0 root), labels (list[str]), status ("ok", "completed", "fallback", "timeout", "error"),
    pops, edges, seconds, message."""

    tokens: List[str]
    order: List[int]
    heads: List[int]
    labels: List[str]
    status: str = "ok"
    pops: int = 0
    edges: int = 0
    seconds: float = 0.0
    message: str = ""

    def text(self) -> str:
        """Tokens joined by spaces."""
        return " ".join(self.tokens)


def capitalise(tokens: List[str]) -> List[str]:
    """Sentence-initial capital as in running text (first token with a letter)."""
    out = list(tokens)
    for j, t in enumerate(out):
        if any(ch.isalpha() for ch in t):
            out[j] = t[:1].upper() + t[1:]
            break
    return out


class Realizer:
    """Joint inflection and ordering of T1 input with a trained SR model (section 5.7).

    Parameters: model (:class:`wo.model.Model` whose header holds ``sr.lexicon``); beam_factor
    (chart k*n), budget_factor (pops per word), complete_beam, timeout (seconds per sentence),
    patience_factor (pops per word spent after the first goal looking for a better one).
    Raises ValueError if the model is not an SR model.
    """

    def __init__(self, model, beam_factor: Optional[float] = None, budget_factor: Optional[float] = None,
                 complete_beam: Optional[int] = None, timeout: float = 0.0,
                 patience_factor: Optional[float] = None):
        from .dep.core import DepSearch as SearchCore
        from .linearizer import decode_option

        if "sr" not in model.header:
            raise ValueError(f"{model.path or 'model'} is not an SR model (train one with `wo sr train`)")
        self.model = model
        self.lexicon = Lexicon.from_json(model.header["sr"]["lexicon"])
        dec = model.header.get("decode", {})
        self.beam_factor = decode_option(beam_factor, dec, "beam_factor", DEFAULT_SR_BEAM_FACTOR)
        self.budget_factor = decode_option(budget_factor, dec, "budget_factor", DEFAULT_SR_BUDGET_FACTOR)
        self.complete_beam = decode_option(complete_beam, dec, "complete_beam", DEFAULT_SR_COMPLETE_BEAM, int)
        self.patience_factor = decode_option(patience_factor, dec, "patience_factor", 0.0)
        self.timeout = timeout
        self.core = SearchCore(model.weights, model.hash_bits)

    @classmethod
    def load(cls, path: str, **options) -> "Realizer":
        """Load an SR model file (memory-mapped).  Raises ModelError / ValueError."""
        from .model import Model

        return cls(Model.load(path), **options)

    def realize(self, s: SRSentence) -> SRResult:
        """Realise one T1 sentence.  Raises ValueError for an unusable sentence."""
        if s.error:
            raise ValueError(s.error)
        t0 = time.perf_counter()
        n = len(s)
        inst = sr_instance(s, self.lexicon)
        beam = max(1, int(round(self.beam_factor * n)))
        budget = max(8, int(self.budget_factor * n))
        from .linearizer import decode_instance

        order, idx, heads, _, status, pops, edges = decode_instance(
            self.core, inst, beam, budget, self.timeout, self.complete_beam, int(self.patience_factor * n))
        return SRResult(capitalise([inst.leaf_form[leaf] for leaf in order]), idx, heads,
                        [s.deprels[i] for i in idx], status, pops, edges, time.perf_counter() - t0)


def fallback_result(s: SRSentence, message: str) -> SRResult:
    """Error output: the lemmas in input order (status "error")."""
    n = len(s)
    return SRResult(list(s.lemmas), list(range(n)), [0] + [1] * (n - 1) if n else [], list(s.deprels),
                    "error", message=message)


_REALIZERS: Dict[tuple, Realizer] = {}


def _worker(model_path: str, opts: dict, batch: List[SRSentence]) -> List[SRResult]:
    import os

    st = os.stat(model_path)   # a retrained model at the same path is reloaded
    key = (model_path, st.st_mtime_ns, st.st_size, tuple(sorted(opts.items())))
    r = _REALIZERS.get(key)
    if r is None:
        r = Realizer.load(model_path, **opts)
        _REALIZERS.clear()
        _REALIZERS[key] = r
    out = []
    for s in batch:
        try:
            out.append(r.realize(s))
        except (ValueError, MemoryError) as exc:
            out.append(fallback_result(s, str(exc)))
    return out


def realize_many(model_path: str, sents: Sequence[SRSentence], jobs: int = 1, chunk: int = 32,
                 progress: Optional[Callable[[int], None]] = None, **opts) -> List[SRResult]:
    """Realise sentences with ``jobs`` joblib processes; output in input order, identical for any jobs."""
    batches = [list(sents[i:i + chunk]) for i in range(0, len(sents), chunk)]
    out: List[SRResult] = []
    if jobs == 1:
        gen = (_worker(model_path, opts, b) for b in batches)
    else:
        from joblib import Parallel, delayed

        gen = Parallel(n_jobs=jobs, backend="loky", return_as="generator")(
            delayed(_worker)(model_path, opts, b) for b in batches)
    for b, res in zip(batches, gen):
        out.extend(res)
        if progress:
            progress(len(b))
    return out


def write_submission(path: str, sents: Sequence[SRSentence], results: Sequence[SRResult]) -> None:
    """Write the SR submission file (``# sent_id`` and ``# text`` = detokenized sentence per
    sentence, blank line after each) and ``path + '.tok'`` (one tokenized sentence per line)."""
    from .io import AtomicWriter, detokenize

    w, wt = AtomicWriter(path), AtomicWriter(path + ".tok")
    try:
        for s, r in zip(sents, results):
            w.write(f"# sent_id = {s.sent_id}\n# text = {detokenize(r.tokens)}\n")
            wt.write(r.text())
        w.commit()
        wt.commit()
    except BaseException:
        w.abort()
        wt.abort()
        raise


# ---------------------------------------------------------------------------------- training
def gold_positions_for(s: SRSentence, ref: Optional[Sequence[str]], lex: Lexicon) -> Tuple[Optional[List[int]], str]:
    """Reference positions of a training sentence: ``original_id`` if present, else the
    section-5.7 alignment (:func:`align`) against the reference tokens.  Returns (positions or
    None, reason: "original_id", "aligned", "no reference", "not aligned")."""
    if s.orig:
        return list(s.orig), "original_id"
    if ref is None:
        return None, "no reference"
    p = align(s, ref, lex)
    if p is None:
        return None, "not aligned"
    return p, "aligned"


def train_sr(train: Sequence[SRSentence], dev: Sequence[SRSentence], dev_refs: Sequence[str],
             epochs: int, out: str, lexicon: Lexicon, train_refs: Optional[Sequence[Sequence[str]]] = None,
             hash_bits: int = 22, beam_factor: float = 8.0, train_budget_factor: float = 100.0,
             max_tau: float = 0.05, seed: int = 1,
             log: Callable[[str], None] = lambda m: print(m, file=sys.stderr), meta: Optional[dict] = None) -> dict:
    """Train an SR model (Zhang & Clark 2015, Algorithm 3 with the section 5.7 search) and save
    the best epoch (by dev BLEU, SR metric on lower-cased tokens) to ``out``.

    train: T1 sentences with gold forms (column 3) and ``original_id``, or with ``train_refs``
    (reference tokens per sentence) for the alignment; dev/dev_refs: T1 input and tokenized
    references (may be empty: then every epoch is saved).  Each sentence is trained with its
    full given tree, labels and ``lin`` as constraints (Algorithm 3), then an easy-first pass.
    Returns the training record (dropped sentences by reason, gold forms added, per-epoch
    seconds/updates/dev BLEU).
    """
    from .data import TagDictionary
    from .evaluate import sr_score
    from .model import Model
    from .train import run_training

    t_all = time.perf_counter()
    insts, reasons = [], Counter()
    added = 0
    for i, s in enumerate(train):
        if s.error or len(s) == 0:
            reasons["unusable input"] += 1
            continue
        if not all(s.forms):
            if train_refs is None:
                reasons["gold form missing or '_' in column 3, no --train-ref"] += 1
                continue
        ref = train_refs[i] if train_refs is not None else None
        pos, why = gold_positions_for(s, ref, lexicon)
        if pos is None:
            reasons[why] += 1
            continue
        if not all(s.forms):
            s = dataclasses.replace(s, forms=[ref[p - 1] for p in pos])
        inst = sr_instance(s, lexicon, pos)
        added += inst.added_gold
        insts.append(inst)
    lifted = sum(1 for i in insts if i.lifted)
    log(f"SR training on {len(insts)} sentences ({lifted} non-projective ones projectivised); "
        f"dropped: {dict(reasons) or 'none'}; gold forms added to the candidates: {added}")
    record = {"epochs": [], "dropped": dict(reasons), "train_sentences": len(insts), "projectivised": lifted,
              "gold_forms_added": added, "hash_bits": hash_bits, "beam_factor": beam_factor,
              "train_budget_factor": train_budget_factor, "max_tau": max_tau}
    record.update(meta or {})

    def make_model(avg: np.ndarray) -> Model:
        return Model(avg, hash_bits, TagDictionary({}, ["_"]), {
            "kind": "sr", "sr": {"lexicon": lexicon.to_json()},
            "decode": {"beam_factor": DEFAULT_SR_BEAM_FACTOR, "budget_factor": DEFAULT_SR_BUDGET_FACTOR,
                       "complete_beam": DEFAULT_SR_COMPLETE_BEAM}})

    def dev_eval(model: Model) -> float:
        r = Realizer(model)
        return sr_score([r.realize(s).text() if not s.error else " ".join(s.lemmas) for s in dev],
                        list(dev_refs)).bleu

    return run_training(insts, epochs, out, record, make_model, dev_eval if dev else None,
                        hash_bits=hash_bits, max_tau=max_tau, seed=seed, beam_factor=beam_factor,
                        budget_factor=train_budget_factor, easy_first=True, log=log, t_all=t_all)
