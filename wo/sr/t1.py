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
import os
import sys
from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from ..io.conllu import Sentence
from ..io.items import Item, read_items, validate
from ..io.trees import permutation
from ..learn import collector_paused
from .feats import TASK_FEATS, parse_feats

_intern = sys.intern

LIN_RELATIONS = ("punct", "flat", "flat:foreign", "fixed", "compound", "compound:prt")


@dataclass
class SRSentence:
    """One T1 sentence, tokens in file order (ids 1..n in that order).

    lemmas, upos, xpos, deprels: list[str]; feats: list[str] morphology only (``_`` if none);
    heads: list[int] 1-based (0 = root); lin: list[int] (0 = none); forms: list[str or None]
    gold forms when known; orig: list[int] 1-based gold positions (``original_id``) or None
    (deep-track input: 0 for a ``_`` node, which has no surface word); sent_id: str; line:
    1-based first line in the file; error: message or None; ref: the reference UD sentence
    a deep-track training file carries (``# gold``), or None.
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
    ref: Optional[Sentence] = None

    def __len__(self) -> int:
        return len(self.lemmas)


# ---------------------------------------------------------------------------------- reading
def _from_sentence(s: Sentence, index: int) -> SRSentence:
    n = len(s)
    feats, lin, orig = [], [], [0] * n
    for i in range(n):
        d = parse_feats(s.feats[i])
        try:
            lin.append(int(d.get("lin", "0")))
        except ValueError:
            raise ValueError(f"token {i + 1}: lin={d.get('lin')!r} is not an integer")
        if "original_id" in d:
            try:
                orig[i] = int(d["original_id"])
            except ValueError:
                raise ValueError(f"token {i + 1}: original_id={d['original_id']!r} is not an integer")
        feats.append("|".join(f"{k}={v}" for k, v in d.items() if k not in TASK_FEATS) or "_")
    has_orig = any(orig)
    if has_orig:
        if is_deep_relations(s.deprels):
            # deep track: the added `_` nodes (no surface word) have none; the others are
            # distinct positions of the surface sentence
            if any(not o and x != "_" for o, x in zip(orig, s.forms)):
                raise ValueError("original_id on some nodes only (every node but the `_` ones needs one)")
            got = [o for o in orig if o]
            if len(set(got)) != len(got) or min(got) < 1:
                raise ValueError("original_id values are not distinct positive positions")
        else:
            if not all(orig):
                raise ValueError("original_id on some tokens only")
            if sorted(orig) != list(range(1, n + 1)):
                raise ValueError("original_id values are not a permutation of 1..n")
    # the strings are interned: a training file repeats its tags, labels and lemmas, and
    # pickling the sentences to worker processes then sends each distinct string once
    # (pt_bosque train: 13.6 -> 5.0 MB, dump and load 0.58 -> 0.3 s)
    forms = [None if f == "_" else _intern(f) for f in s.lemmas]   # column 3
    out = SRSentence([_intern(x) for x in s.forms], [_intern(x) for x in s.upos], [_intern(x) for x in s.xpos],
                     [_intern(x) for x in feats], list(s.heads), [_intern(x) for x in s.deprels], lin, forms,
                     orig if has_orig else None, s.sent_id, s.line)
    if "gold" in s.meta:
        out.ref = gold_from_meta(s.meta["gold"])
    return out


def is_deep_relations(deprels: Sequence[str]) -> bool:
    """True for deep-track (SR'19 T2) relations: they are upper-case (``ROOT``, ``A1``, ``AM``,
    ``NAME``...), UD's lower-case."""
    return any(d[:1].isupper() for d in deprels)


def is_deep(s: SRSentence) -> bool:
    """True when ``s`` is deep-track (T2) input (:func:`is_deep_relations`)."""
    return is_deep_relations(s.deprels)


def gold_from_meta(text: str) -> Sentence:
    """The reference UD sentence a deep-track training file carries in its ``# gold = `` comment
    (``wo sr make-input --track deep --with-gold``): a JSON list of [form, lemma, upos, xpos,
    feats, head, deprel] per syntactic word in order.  Raises ValueError if malformed."""
    import json

    try:
        rows = json.loads(text)
        return Sentence([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows],
                        [r[4] for r in rows], [int(r[5]) for r in rows], [r[6] for r in rows], ["_"] * len(rows))
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise ValueError(f"malformed # gold comment: {exc}")


def gold_to_meta(s: Sentence) -> str:
    """Inverse of :func:`gold_from_meta` (one line of JSON)."""
    import json

    return json.dumps([[s.forms[i], s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i], s.heads[i], s.deprels[i]]
                       for i in range(len(s))], ensure_ascii=False, separators=(",", ":"))


def check_sr(s: SRSentence) -> Optional[str]:
    """Problems that make a T1 sentence unusable (message) or None: an empty lemma, missing
    heads, cycles, roots, a ``lin`` rank beyond the number of its head's dependents (or on the root)."""
    n = len(s)
    track = "T2" if is_deep(s) else "T1"
    if any(h < 0 for h in s.heads):
        return f"{track} input needs a head for every token"
    if sum(1 for h in s.heads if h == 0) != 1:
        return f"{track} input needs exactly one root"
    blank = next((i for i, x in enumerate(s.lemmas) if not x.strip()), None)
    if blank is not None:
        return f"token {blank + 1}: empty LEMMA field"
    msg = validate(Item(s.lemmas, [None] * n, s.heads, s.sent_id, s.line), 10 ** 6)
    if msg:
        return msg
    if is_deep(s):
        # deep-track input: lin ranks count the removed words too (the T2 files keep the T1
        # values), so they only order the marked nodes among themselves
        if any(x == "_" for i, x in enumerate(s.lemmas) if i + 1 in set(s.heads)):
            j = next(i for i, x in enumerate(s.lemmas) if x == "_" and i + 1 in set(s.heads))
            return f"node {j + 1}: a `_` node (an argument with no surface word) has dependents"
        return None
    ndeps = defaultdict(int)
    for h in s.heads:
        ndeps[h] += 1
    for i, v in enumerate(s.lin):   # lin=+k: the k-th closest marked dependent on that side, so k <= the head's dependents
        if v and (s.heads[i] == 0 or abs(v) > ndeps[s.heads[i]]):
            return (f"token {i + 1}: lin={v:+d}, but its head has {ndeps[s.heads[i]]} dependents" if s.heads[i]
                    else f"token {i + 1}: lin={v:+d} on the root")
    return None


def read_t1(path, jobs: int = 1) -> List[SRSentence]:
    """Read T1 input (or any UD-shaped input read as T1): a path, an open file (text or binary)
    or the text itself (:func:`wo.io.text.input_source`).  One :class:`SRSentence` per block.

    A malformed sentence is returned with ``error`` set (``file:line`` in ``line``), never
    dropped.  jobs > 1: the blocks are parsed in ``jobs`` contiguous parts of the file, the
    first (a fifth larger than an even share) here and the others in loky processes (the same
    sentences, indices and line numbers as one process reads; the workers are left running
    for the caller's next tasks).  Raises FileNotFoundError for a missing file.
    """
    from ..io.text import in_memory, input_source

    with input_source(path, "read_t1") as src:
        return _read_t1(src, 1 if in_memory(src) else jobs)   # in memory: read here (workers could not see it)


def _read_t1(path: str, jobs: int) -> List[SRSentence]:
    if jobs > 1:
        from ..io.batch import map_start
        from ..io.items import conllu_blocks

        started = map_start(_t1_part, (path,), [[]] * jobs, jobs=jobs)   # the workers start (and import
        blocks = list(enumerate(conllu_blocks(path)))                   # this module) while the blocks are read
        started()
        # this process takes a fifth more than an even part: the workers' parts travel back
        # pickled (pt_bosque train, 2 jobs, 60 % here: 1.69-1.81 -> 1.56-1.65 s)
        first = min(len(blocks), round(len(blocks) * 1.2 / jobs))
        size = max(1, -(-(len(blocks) - first) // (jobs - 1)))
        parts = [blocks[:first]] + [blocks[i:i + size] for i in range(first, len(blocks), size)]
        # one part is parsed here while the workers parse the others: one process per core, and
        # a part fewer to send and receive (pt_bosque train, 2 jobs: 1.9 -> 1.7 s)
        rest = map_start(_t1_part, (path,), parts[1:], jobs=jobs) if len(parts) > 1 else (lambda: [])
        mine = _t1_part(path, parts[:1])
        return [s for part in mine + rest() for s in part]
    with collector_paused():
        items, _ = read_items(path, "conllu")
        return [_t1_sentence(it, i) for i, it in enumerate(items)]


def _t1_part(path: str, batch: list) -> list:
    """Worker of :func:`read_t1`: per item of ``batch`` (a list of (sentence index, (first
    line, lines)) blocks of ``path``), the list of their :class:`SRSentence`."""
    import conllu  # noqa: F401  (the workers' start-up task imports the parser)

    from ..io.items import _conllu_item

    with collector_paused():
        return [[_t1_sentence(_conllu_item(path, start, lines, i), i) for i, (start, lines) in part]
                for part in batch]


def _t1_sentence(it: Item, i: int) -> SRSentence:
    """The :class:`SRSentence` of the CoNLL-U item ``it``, sentence ``i`` (0-based) of its file
    (errors attached, never raised)."""
    s = it.gold
    if it.error:
        return SRSentence(list(s.forms), ["_"] * len(s), ["_"] * len(s), ["_"] * len(s),
                          [-1] * len(s), ["_"] * len(s), [0] * len(s), [None] * len(s), None,
                          it.sent_id, it.line, it.error)
    try:
        sr = _from_sentence(s, i)
        sr.error = check_sr(sr)
    except ValueError as exc:
        sr = SRSentence(list(s.forms), list(s.upos), list(s.xpos), ["_"] * len(s), list(s.heads),
                        list(s.deprels), [0] * len(s), [None] * len(s), None, it.sent_id,
                        it.line, str(exc))
    return sr


def peek_track(path: str) -> str:
    """``deep`` when the first sentence of the file ``path`` has deep-track (T2) relations,
    else ``shallow`` (also for standard input, a missing or unreadable file: the reader
    reports those)."""
    from ..io.text import STDIO, open_text

    if path == STDIO or not os.path.isfile(path):
        return "shallow"
    try:
        rels = []
        with open_text(path) as fh:
            for line in fh:
                if not line.strip():
                    if rels:
                        break
                    continue
                cols = line.rstrip("\n").split("\t")
                if not line.startswith("#") and len(cols) >= 8:
                    rels.append(cols[7])
        return "deep" if is_deep_relations(rels) else "shallow"
    except Exception:   # a bad file: the reader says what is wrong with it
        return "shallow"


def looks_like_ud(path: str) -> bool:
    """True when ``path`` reads as a UD CoNLL-U file rather than T1 input: it has ``# text``
    lines and not one ``lin=`` annotation (every T1 file marks its punctuation with ``lin``; a UD
    file has the forms in column 2, where T1 has the lemmas)."""
    from ..io.text import read_bytes

    data = read_bytes(path)
    return b"\n# text = " in b"\n" + data and b"lin=" not in data


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
    ``lin`` added (:func:`lin_values`), ``original_id`` with ``with_gold``.  A word whose lemma
    the treebank leaves out (``_``; 18 % of UD Portuguese-GSD's words as rebuilt here) gets its
    form in column 2: a T1 token without a lemma names no word at all.
    """
    n = len(sent)
    if any(x == "_" and f not in ("_", "") for x, f in zip(sent.lemmas, sent.forms)):
        def stand_in(i: int, f: str) -> str:   # a sentence-initial capital is not part of a lemma
            return f[:1].lower() + f[1:] if i == 0 and f[:1].isupper() and not f.isupper() else f
        sent = dataclasses.replace(sent, lemmas=[stand_in(i, f) if x == "_" else x
                                                 for i, (x, f) in enumerate(zip(sent.lemmas, sent.forms))])
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
    """One T1 block (with a ``# sent_id`` comment, no ``# text``), without the trailing blank line.
    with_gold: gold forms in column 3, ``original_id``, and a deep-track sentence's reference
    (``ref``) as its ``# gold`` comment (:func:`gold_to_meta`)."""
    lines = [f"# sent_id = {s.sent_id}"]
    if with_gold and s.ref is not None:
        lines.append(f"# gold = {gold_to_meta(s.ref)}")
    for j in range(len(s)):
        extra = []
        if s.lin[j]:
            extra.append(f"lin={s.lin[j]:+d}")
        if with_gold and s.orig and s.orig[j]:   # 0: a deep-track node with no surface word
            extra.append(f"original_id={s.orig[j]}")
        f = s.feats[j]
        feats = "|".join(([] if f == "_" else [f]) + extra) or "_"
        form = s.forms[j] if with_gold and s.forms[j] else "_"
        lines.append("\t".join([str(j + 1), s.lemmas[j], form, s.upos[j], s.xpos[j], feats,
                                str(s.heads[j]), s.deprels[j], "_", "_"]))
    return "\n".join(lines) + "\n"


def read_references(path: str) -> List[str]:
    """Tokenized references for ``wo sr evaluate``/training dev BLEU: the gold order of a T1 file
    with gold forms and ``original_id`` (detected in its first 64 KB), the forms of UD CoNLL-U,
    a realiser's submission file read as :func:`read_hypotheses` reads it (another system's
    output as the reference), or one tokenized sentence per line.  Raises InputError naming
    file:line for a T1 sentence without gold forms and positions, FileNotFoundError."""
    from ..eval.metrics import read_sentences
    from ..io.text import InputError, open_text

    with open_text(path) as fh:
        head = fh.read(65536)
    if "original_id=" in head:
        out = []
        for s in read_t1(path):
            if s.error or not s.orig or not all(s.forms):
                raise InputError(path, s.line, s.error or "T1 reference without gold forms and original_id")
            toks = [""] * len(s)
            for i, p in enumerate(s.orig):
                toks[p - 1] = s.forms[i]
            out.append(" ".join(toks))
        return out
    if head.startswith("# sent_id") and "\n1\t" not in head:   # a submission file: comments only, no tokens
        return read_hypotheses(path)
    return read_sentences(path)


def read_hypotheses(path: str) -> List[str]:
    """Hypotheses for ``wo sr evaluate``: one tokenized sentence per line; for an SR submission
    file (``# sent_id`` first) its ``.tok`` twin when it exists, else its ``# text`` lines.
    Raises FileNotFoundError."""
    import os

    from ..eval.metrics import read_sentences
    from ..io.text import STDIO, open_text

    with open_text(path) as fh:
        head = fh.read(4096)
    if head.startswith("# sent_id") and path != STDIO and os.path.exists(path + ".tok"):
        path = path + ".tok"
    elif head.startswith("# sent_id"):
        with open_text(path) as fh:
            return [ln.split("# text = ", 1)[1].rstrip("\n") for ln in fh if ln.startswith("# text = ")]
    return read_sentences(path)


def gold_sentences(train: Sequence[SRSentence], refs_ud=None) -> List[Sentence]:
    """UD-like sentences in reference order for building the lexicon: those T1 sentences that
    carry gold forms and ``original_id`` (others skipped), then the UD sentences ``refs_ud``
    (None or a list of :class:`wo.io.conllu.Sentence`)."""
    out = []
    for s in train:
        if s.error or not s.orig or not all(s.forms):
            continue
        surf = [0] * len(s)
        for i, p in enumerate(s.orig):
            surf[p - 1] = i
        pick = lambda xs: [xs[i] for i in surf]  # noqa: E731
        out.append(Sentence(pick(s.forms), pick(s.lemmas), pick(s.upos), pick(s.xpos), pick(s.feats),
                            [0] * len(s), pick(s.deprels), ["_"] * len(s)))
    return out + list(refs_ud or [])
