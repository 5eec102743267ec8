"""Deep-track (SR'19 T2) input made from a UD tree, and its agreement with the official files.

The SR'19 deep track (Mille et al. 2019, the SR'19 overview, section 2) keeps the content words
of a UD tree; function words go, their meaning kept as features of the word they hang from;
relations become predicate-argument ones (``A1``.., ``A1INV``.., ``AM``, ``NAME``, ``LIST``,
``ROOT``...); a ``_`` PRON node stands for an argument the surface leaves out.  The rules here
were read off the aligned official English-ParTUT T2 train (``original_id`` on every kept
node) and are written in UD terms (relations, UPOS, features); word lists only where UD has
nothing to go by (:data:`COMPLEMENTIZERS`, the modal and future auxiliaries, :data:`NOT_ARTICLES`).

What the official data shows (English-ParTUT train, 27,021 nodes) and the converter does:

* **The tree is the UD tree minus words.**  Every kept node keeps its UD head, and only leaves
  are removed: a function word with a dependent of its own stays (relation ``AUX`` for an
  auxiliary, ``A2INV`` for a preposition or conjunction, ``DEP`` for punctuation).
* **Removed leaves:** ``aux`` (and ``aux:pass``), ``cop``, ``case``, ``punct``, ``expl``; a
  ``det`` with ``PronType=Art`` (the articles); a ``fixed`` ADP or SCONJ; a ``mark`` of an
  argument clause (``ccomp``, ``csubj``, ``xcomp``, through ``conj``) or a complementizer
  (*that*) anywhere; a relative pronoun (``PronType=Rel``) that is an argument or adjunct of
  the verb of its ``acl:relcl``.  Other marks (*if*, *when*, *to* of a purpose clause) stay.
* **Relations** by UD relation: subjects ``A1`` (passive ones ``A2``), ``iobj`` ``A3``, the
  other complements (``obj``, ``ccomp``, ``xcomp``) numbered ``A2``, ``A3``.. in surface order
  among the free slots; ``nmod``, ``obl``, ``advcl``, ``appos``... ``AM``; ``amod`` of an ADJ,
  ``advmod``, ``det``, ``nummod`` ``A1INV``; ``cc``, ``mark``, ``case``, ``cop`` ``A2INV``;
  ``conj`` ``LIST``; ``flat``, ``compound``, ``fixed`` ``NAME``.  A clause modifying a noun
  (``acl``) is the inverse of the slot the noun fills in it: the removed relative pronoun's
  (subject ``A1INV``, object ``A2INV``, adjunct ``AMINV``), a participle's ``A2`` (``A2INV``,
  its object then ``A3``), a to-infinitive ``AM``, else the first of ``A1``, ``A2`` that no
  dependent fills (``AMINV`` when both are).
* **Features:** agreement and form morphology dropped (verb ``Number``, ``Person``,
  ``VerbForm``, ``Mood`` but ``Imp`` and ``Cnd``; ADJ/DET ``Number``, ``Gender``; PRON
  ``Gender``; ``Case``, ``Polarity``, ``Typo`` everywhere); ``Definite`` from the article;
  ``Tense``, ``Aspect`` (``Perf``, ``Prog``, ``PerfProg``), ``Mood`` (``Pot`` for *can/may*,
  ``Nec`` for *must/shall/should*), ``Voice=Pass`` from the auxiliary chain (a kept auxiliary's
  too; a non-verbal predicate also takes an auxiliary's ``Person``); ``ClauseType`` on the head
  of a clause-ending mark (``Dec`` . , ``Int`` ?, ``Exc`` !, ``Par`` :; the first one per head).
* **``_`` nodes:** a verb that is finite (itself or an auxiliary ``VerbForm=Fin``) and has no
  subject (nor expletive, nor removed relative pronoun subject) gets an ``A1`` ``_`` PRON node:
  ``Number=..|Gender=-|Person=..|PronType=Prs``, number and person from its verb group (``-``
  when absent; neither: no node, unless an imperative (person 2) or a finite past tense).
* ``lin``: :func:`wo.sr.t1.lin_values` over the kept nodes, punctuation unmarked.

Use :func:`make_deep_input` for one sentence, :func:`compare` for the agreement with official
T2 files aligned by ``original_id``, :func:`compare_bags` for files without alignment.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Dict, List, Optional, Sequence, Tuple

from ..io.conllu import Sentence
from ..io.trees import permutation
from .feats import TASK_FEATS, parse_feats
from .t1 import SRSentence, lin_values

# ------------------------------------------------------------------------ the few word lists
# a `mark` with one of these lemmas goes wherever it stands (UD marks a complementizer only by
# its lemma; the clause it introduces may be a noun's complement, acl, which keeps other marks)
COMPLEMENTIZERS = frozenset(["that", "que", "dass", "daß", "che", "dat", "att", "że", "že", "hogy", "că"])
# PronType=Art determiners that are content words ("another" = an + other)
NOT_ARTICLES = frozenset(["another"])
# auxiliaries of modality and future (UD has no feature for them)
MOOD_AUX = {"can": "Pot", "could": "Pot", "may": "Pot", "might": "Pot",
            "must": "Nec", "shall": "Nec", "should": "Nec", "ought": "Nec",
            "können": "Pot", "dürfen": "Pot", "mögen": "Pot", "müssen": "Nec", "sollen": "Nec",
            "pouvoir": "Pot", "poder": "Pot", "potere": "Pot", "devoir": "Nec", "deber": "Nec",
            "dever": "Nec", "dovere": "Nec", "kunnen": "Pot", "mogen": "Pot", "moeten": "Nec"}
FUTURE_AUX = frozenset(["will", "would", "werden", "zullen"])
# an English aux "be" before a participle is progressive (ParTUT labels some passive "be" aux)
PROGRESSIVE_AUX = frozenset(["be"])

# ------------------------------------------------------------------------ relation tables
_REMOVED = frozenset(["aux", "cop", "case", "punct", "expl"])   # base relations, leaves only
_ARG_CLAUSE = frozenset(["ccomp", "csubj", "xcomp"])
_SUBJ = frozenset(["nsubj", "csubj"])
_COMPLEMENT = frozenset(["obj", "ccomp", "xcomp"])
_REL_BASE = {"nmod": "AM", "obl": "AM", "advcl": "AM", "appos": "AM", "discourse": "AM", "dislocated": "AM",
             "advmod": "A1INV", "nummod": "A1INV", "det": "A1INV", "clf": "A1INV",
             "cc": "A2INV", "mark": "A2INV", "case": "A2INV", "cop": "A2INV",
             "conj": "LIST", "list": "LIST", "flat": "NAME", "compound": "NAME", "fixed": "NAME",
             "vocative": "ADDRESSEE", "aux": "AUX", "goeswith": "GOESWITH", "parataxis": "PARATAXIS",
             "orphan": "DEP", "punct": "DEP", "dep": "DEP", "reparandum": "DEP", "expl": "DEP", "root": "ROOT",
             "nsubj": "A1", "csubj": "A1", "iobj": "A3"}
_REL_FULL = {"nmod:poss": "AM", "det:poss": "AM", "nsubj:pass": "A2", "csubj:pass": "A2"}
# surface-only features, by UPOS (Mille et al. 2019: the deep input keeps meaning, not agreement)
# (any UPOS: the form's case, verb form and orthography; then by UPOS, agreement)
_SURFACE = frozenset(["Case", "VerbForm", "PrepCase", "Typo", "Style"])
_VERBAL_DROP = _SURFACE | {"Number", "Person", "Gender", "Polarity", "Voice", "Definite", "Clusivity", "Polite"}
_DROP = {"VERB": _VERBAL_DROP, "AUX": _VERBAL_DROP,
         "ADJ": _SURFACE | {"Number", "Gender", "Definite", "Animacy", "Polarity"},
         "DET": _SURFACE | {"Number", "Gender", "Animacy"},
         "PRON": _SURFACE | {"Gender", "Animacy"},
         "NUM": _SURFACE | {"Gender", "Animacy"},
         "ADV": _SURFACE | {"Polarity"}, "PART": _SURFACE | {"Polarity"}}
_KEPT_MOODS = frozenset(["Imp", "Cnd"])
CLAUSE_TYPES = {".": "Dec", "...": "Dec", "....": "Dec", "…": "Dec", "?": "Int", "!": "Exc", ":": "Par",
                "。": "Dec", "？": "Int", "！": "Exc", "؟": "Int"}
# the added features, in the order they are written after the kept UD ones
_ADDED = ("Definite", "Tense", "Aspect", "Mood", "Voice", "Person", "ClauseType")
BLANK_LEMMA = "_"


def _base(rel: str) -> str:
    return rel.split(":", 1)[0]


class _UD:
    """Lookups over one UD sentence: children, parsed features, base relations."""

    __slots__ = ("s", "n", "kids", "fd", "base")

    def __init__(self, s: Sentence):
        self.s = s
        self.n = n = len(s)
        self.kids: List[List[int]] = [[] for _ in range(n)]
        for j, h in enumerate(s.heads):
            if h > 0:
                self.kids[h - 1].append(j)
        self.fd = [parse_feats(f) for f in s.feats]
        self.base = [_base(r) for r in s.deprels]

    def clause_rel(self, j: int) -> str:
        """The relation of word ``j`` with the first conjunct's (``conj`` chains followed up)."""
        s, seen = self.s, 0
        while self.base[j] == "conj" and s.heads[j] > 0 and seen < self.n:
            j, seen = s.heads[j] - 1, seen + 1
        return s.deprels[j]


# ------------------------------------------------------------------------ removal
def removed_words(u: _UD) -> List[bool]:
    """Per UD word (0-based), whether the deep input leaves it out (module docstring): a leaf
    that is an auxiliary, copula, adposition, punctuation, expletive, article, fixed adposition
    or conjunction, the mark of an argument clause or a complementizer, or a relative pronoun
    of a relative clause's verb."""
    s = u.s
    out = [False] * u.n
    for j in range(u.n):
        if u.kids[j]:
            continue
        b = u.base[j]
        if b in _REMOVED:
            out[j] = True
        elif b == "det":
            out[j] = u.fd[j].get("PronType") == "Art" and s.lemmas[j].lower() not in NOT_ARTICLES
        elif b == "fixed":
            out[j] = s.upos[j] in ("ADP", "SCONJ")
        elif b == "mark":
            h = s.heads[j] - 1
            out[j] = (s.lemmas[j].lower() in COMPLEMENTIZERS
                      or (h >= 0 and _base(u.clause_rel(h)) in _ARG_CLAUSE))
        elif u.fd[j].get("PronType") == "Rel" and s.heads[j] > 0:
            out[j] = s.deprels[s.heads[j] - 1] == "acl:relcl" and b in (
                "nsubj", "obj", "iobj", "obl", "advmod", "nmod")
    return out


# ------------------------------------------------------------------------ features
def _chain(u: _UD, p: int) -> List[int]:
    """The auxiliary chain of predicate ``p``: its aux/cop children (a kept one too: the official
    data gives its meaning to the predicate all the same), outermost first (surface order,
    reversed when the predicate comes first: a verb-final clause), then ``p``."""
    aux = [k for k in u.kids[p] if u.base[k] in ("aux", "cop")]
    if aux and p < aux[0]:
        aux.reverse()
    return aux + [p]


def tam_features(u: _UD, p: int) -> Dict[str, str]:
    """``Tense``, ``Aspect``, ``Mood``, ``Voice`` (and ``Person`` on a non-verbal predicate) that
    the auxiliaries of predicate ``p`` add (dict of str, empty if none).  The official data's
    choices: a finite non-passive auxiliary makes the tense ``Pres`` (*had done*, *could do*;
    ``Past`` in 8 % of such cases, not told apart here), a future auxiliary ``Fut``, a passive
    auxiliary or copula gives its own tense (a copula only where the predicate has none); an
    auxiliary before a gerund or present participle ``Prog``, before a past participle ``Perf``
    (*be*: ``Prog``), none through a copula (*has been able*); ``Voice=Pass`` only for a
    non-finite passive clause with a mark and no complement clause (*to be done*); a non-verbal
    predicate takes an auxiliary's ``Person`` (*may be clear*: ``Person=3``), not a copula's."""
    s, fd = u.s, u.fd
    ch = _chain(u, p)
    if len(ch) == 1:
        return {}
    out: Dict[str, str] = {}
    aspect = []
    mood = None
    fut = False
    passive = False
    for a, nxt in zip(ch, ch[1:]):
        lem = s.lemmas[a].lower()
        rel = s.deprels[a]
        if rel == "aux:pass" or u.base[a] == "cop":
            passive = passive or rel == "aux:pass"
            continue
        if lem in FUTURE_AUX:
            fut = True
            continue
        if lem in MOOD_AUX:
            mood = mood or MOOD_AUX[lem]
            continue
        if s.deprels[nxt] == "cop" or (fd[a].get("VerbForm") == "Part" and lem not in PROGRESSIVE_AUX):
            continue   # "has been able", ParTUT's participle "had": no aspect in the official data
        nf = fd[nxt]
        vf, tense = nf.get("VerbForm"), nf.get("Tense")
        if vf == "Ger" or (vf == "Part" and tense == "Pres"):
            aspect.append("Prog")
        elif vf == "Part":
            aspect.append("Prog" if lem in PROGRESSIVE_AUX else "Perf")
    first = ch[0]
    f0 = fd[first]
    own = fd[p].get("Tense")
    if fut:
        out["Tense"] = "Fut"
    elif f0.get("VerbForm") == "Fin" or "Tense" in f0:
        r0 = s.deprels[first]
        if r0 != "aux:pass" and u.base[first] == "aux" and f0.get("VerbForm") == "Fin":
            out["Tense"] = "Pres"
        elif u.base[first] == "cop" and own:
            out["Tense"] = own
        elif f0.get("Tense"):
            out["Tense"] = f0["Tense"]
    elif own:
        out["Tense"] = own
    if aspect:
        out["Aspect"] = "PerfProg" if ("Perf" in aspect and "Prog" in aspect) else aspect[0]
    if mood:
        out["Mood"] = mood
    kid_rels = {u.base[k] for k in u.kids[p]}
    if (passive and not fut and not mood and not any(fd[a].get("VerbForm") == "Fin" for a in ch[:-1])
            and "mark" in kid_rels and not kid_rels & {"xcomp", "ccomp"}):
        out["Voice"] = "Pass"
    if s.upos[p] not in ("VERB", "AUX"):
        for a in ch[:-1]:
            if u.base[a] == "aux" and "Person" in fd[a]:
                out["Person"] = fd[a]["Person"]
                break
    return out


def clause_types(u: _UD) -> Dict[int, str]:
    """Word (0-based) -> ``ClauseType`` from the punctuation: the head of a mark in
    :data:`CLAUSE_TYPES` (``.`` ``Dec``, ``?`` ``Int``, ``!`` ``Exc``, ``:`` ``Par``), the first
    such mark where a word heads several."""
    s = u.s
    out: Dict[int, str] = {}
    for j in range(u.n):
        if s.upos[j] == "PUNCT" and s.lemmas[j] in CLAUSE_TYPES and s.heads[j] > 0:
            out.setdefault(s.heads[j] - 1, CLAUSE_TYPES[s.lemmas[j]])
    return out


def node_features(u: _UD, p: int, gone: Sequence[bool], ctype: Optional[str]) -> str:
    """The FEATS string of kept word ``p``: its UD features less the surface-only ones
    (:data:`_DROP`), then those its removed dependents add."""
    s, fd = u.s, u.fd
    drop = _DROP.get(s.upos[p], _SURFACE)
    own = {k: v for k, v in fd[p].items() if k not in drop and k not in TASK_FEATS}
    if "Mood" in own and own["Mood"] not in _KEPT_MOODS:
        del own["Mood"]
    add: Dict[str, str] = {}
    for k in u.kids[p]:
        if gone[k] and u.base[k] == "det" and "Definite" not in add:
            d = fd[k].get("Definite")
            if d:
                add["Definite"] = d
    add.update(tam_features(u, p))
    if ctype:
        add["ClauseType"] = ctype
    for k, v in add.items():
        if k in own:
            own[k] = v
    parts = [f"{k}={v}" for k, v in own.items()]
    parts += [f"{k}={add[k]}" for k in _ADDED if k in add and k not in own]
    return "|".join(parts) or "_"


# ------------------------------------------------------------------------ relations
def _relpron_role(u: _UD, p: int, gone: Sequence[bool]) -> Optional[str]:
    """The UD relation of the removed relative pronoun of clause ``p``, or None."""
    for k in u.kids[p]:
        if gone[k] and u.fd[k].get("PronType") == "Rel":
            return u.s.deprels[k]
    return None


def deep_relations(u: _UD, gone: Sequence[bool]) -> List[str]:
    """Per UD word, its deep relation (meaningful on kept words only; see the module docstring).
    A predicate's slots: a noun it modifies may take one first (:func:`_acl_inverse`), then its
    subjects (``A1``, a passive one ``A2``), ``iobj`` (``A3``), its other complements in surface
    order (the free slots up to ``A3``, then ``AM``), and last the noun, if it had not yet one."""
    s = u.s
    rels = [""] * u.n
    for j in range(u.n):
        if gone[j]:
            continue
        r, b = s.deprels[j], u.base[j]
        rel = _REL_FULL.get(r) or _REL_BASE.get(b, "DEP")
        if b == "amod":
            rel = "A1INV" if s.upos[j] == "ADJ" else "AM"
        rels[j] = rel
    for p in range(u.n):
        if gone[p] or not u.kids[p]:
            continue
        kids = [k for k in u.kids[p] if not gone[k]]
        acl = u.base[p] == "acl" and s.heads[p] > 0
        inverse, reserved = _acl_inverse(u, p, gone) if acl else (None, None)
        used = {reserved} if reserved else set()
        for k in kids:
            if u.base[k] in _SUBJ:
                slot = 2 if s.deprels[k] in _REL_FULL else 1
                while f"A{slot}" in used:
                    slot += 1
                rels[k] = f"A{slot}"
                used.add(rels[k])
        for k in kids:
            if u.base[k] == "iobj":
                used.add("A3")
        slot = 2
        for k in kids:
            if u.base[k] in _COMPLEMENT:
                while f"A{slot}" in used:
                    slot += 1
                rels[k] = f"A{slot}" if slot <= 3 else "AM"
                used.add(f"A{slot}")
        if acl:
            rels[p] = inverse or next((f"{a}INV" for a in ("A1", "A2") if a not in used), "AMINV")
    for p in range(u.n):   # a clause modifying a noun with no dependents of its own
        if not gone[p] and not u.kids[p] and u.base[p] == "acl" and s.heads[p] > 0:
            inverse, _ = _acl_inverse(u, p, gone)
            rels[p] = inverse or "A1INV"
    return rels


def _acl_inverse(u: _UD, p: int, gone: Sequence[bool]) -> Tuple[Optional[str], Optional[str]]:
    """The relation of a clause ``p`` modifying a noun when its form fixes it, and the slot the
    noun takes before ``p``'s own dependents are numbered: (relation or None, slot or None).

    The removed relative pronoun's role (a verb's subject ``A1INV``, object ``A2INV``, adjunct
    ``AMINV``; a non-verbal predicate's subject takes ``A1``); a bare participle (no auxiliary:
    the official data reads it as passive) ``A2INV``, its A2 taken first; a to-infinitive with
    no subject ``AM``.  None: the first slot left free."""
    s, fd = u.s, u.fd[p]
    kids = u.kids[p]
    verbal = s.upos[p] in ("VERB", "AUX") and not any(u.base[k] == "cop" for k in kids)
    vf = fd.get("VerbForm")
    bare = vf == "Part" and not any(u.base[k] in ("aux", "cop") for k in kids)
    role = _relpron_role(u, p, gone)
    if role is not None:
        rb = _base(role)
        if not verbal:
            return (None, "A1") if rb in _SUBJ else ("AMINV", None)
        if (bare and rb in ("nsubj", "obj")) or role in ("nsubj:pass", "csubj:pass") or rb == "obj":
            return "A2INV", "A2"
        if rb in _SUBJ:
            return "A1INV", "A1"
        return ("A3INV", "A3") if rb == "iobj" else ("AMINV", None)
    if not any(u.base[k] in _SUBJ for k in kids if not gone[k]):
        aux = [k for k in kids if u.base[k] == "aux"]
        if (vf == "Inf" or any(u.fd[k].get("VerbForm") == "Inf" for k in aux)) and not any(
                u.fd[k].get("VerbForm") == "Fin" for k in aux):
            return "AM", None
    if bare:
        return "A2INV", "A2"
    return None, None


# ------------------------------------------------------------------------ `_` nodes
def _blank_subject(u: _UD, p: int) -> Optional[str]:
    """The FEATS of the ``_`` subject of predicate ``p``, or None when it gets none: a verb (or
    a kept copula) that is finite itself or through an auxiliary, with no subject, and whose
    verb group shows the subject's number or person (or is an imperative or a finite past
    tense).  ``Number`` and ``Person``: the first auxiliary's that has one, else the verb's
    (``-`` if none; an imperative's person with neither: 2, the addressee)."""
    s = u.s
    if s.upos[p] not in ("VERB", "AUX") or u.base[p] in ("aux", "acl", "fixed"):
        return None
    group = []
    for k in u.kids[p]:
        b = u.base[k]
        if b in _SUBJ or b == "expl":
            return None
        if b in ("aux", "cop"):
            group.append(u.fd[k])
    group.append(u.fd[p])
    if not any(f.get("VerbForm") == "Fin" for f in group):
        return None
    number = next((f["Number"] for f in group if "Number" in f), None)
    person = next((f["Person"] for f in group if "Person" in f), None)
    if not number and not person:
        # no agreement shown: ParTUT's "Thank you", "Look how..." get no node; an imperative's
        # subject is the addressee; a past tense (English shows no person in it) gets one
        if u.fd[p].get("Mood") == "Imp":
            person = "2"
        elif not any(f.get("Tense") == "Past" and f.get("VerbForm") == "Fin" for f in group):
            return None
    return f"Number={number or '-'}|Gender=-|Person={person or '-'}|PronType=Prs"


# ------------------------------------------------------------------------ the sentence
def deep_nodes(sent: Sentence) -> Tuple[List[int], List[str], List[str], List[int], List[str], List[int]]:
    """The deep tree of a UD sentence before scrambling: kept words in surface order, then the
    ``_`` nodes.  Returns (orig, feats, deprels, heads, upos, lin): orig 1-based UD positions
    (0 for a ``_`` node), heads 1-based node indices (0 root), lin per node (0 none)."""
    u = _UD(sent)
    gone = removed_words(u)
    rels = deep_relations(u, gone)
    ctype = clause_types(u)
    kept = [j for j in range(u.n) if not gone[j]]
    node = {j: i for i, j in enumerate(kept)}
    orig = [j + 1 for j in kept]
    feats, deprels, heads, upos = [], [], [], []
    for j in kept:
        feats.append(node_features(u, j, gone, ctype.get(j)))
        deprels.append(rels[j])
        h = sent.heads[j]
        heads.append(node[h - 1] + 1 if h > 0 else 0)
        upos.append(sent.upos[j])
    # lin over the kept nodes, punctuation left unmarked
    lrels = [sent.deprels[j] if u.base[j] != "punct" else "_punct" for j in kept]
    lin = lin_values(heads, lrels)
    for j in kept:
        f = _blank_subject(u, j)
        if f is not None:
            orig.append(0)
            feats.append(f)
            deprels.append("A1")
            heads.append(node[j] + 1)
            upos.append("PRON")
            lin.append(0)
    return orig, feats, deprels, heads, upos, lin


def make_deep_input(sent: Sentence, seed: int, index: int, with_gold: bool = False) -> SRSentence:
    """SR'19 deep-track (T2) input of one UD sentence (syntactic words), as the official
    conversion made it (Mille et al. 2019, SR'19 overview, section 2; the rules in the module
    docstring).

    Node ids are scrambled by :func:`wo.io.trees.permutation` (``seed``, ``index``) as
    :func:`wo.sr.t1.make_input` does.  Returns a :class:`wo.sr.t1.SRSentence`: lemmas (``_`` for
    an added subject node, the form for a word whose lemma the treebank leaves out), upos, xpos
    ``_`` (the official T2 files have none), feats (deep features), heads (1-based, 0 root),
    deprels (deep relations), lin (on the kept nodes, as the official files have it), forms
    (the UD form with ``with_gold``, else None; None on ``_`` nodes), orig (1-based UD positions,
    0 on ``_`` nodes, with ``with_gold``; else None) and ref (the UD sentence with ``with_gold``,
    written as the ``# gold`` comment by :func:`wo.sr.t1.format_t1`).  Raises ValueError for a
    sentence whose heads are not a tree (negative or out of range).
    """
    n0 = len(sent)
    if any(h < 0 or h > n0 for h in sent.heads):
        raise ValueError(f"sentence {sent.sent_id}: heads are not a tree")
    orig, feats, deprels, heads, upos, lin = deep_nodes(sent)
    n = len(orig)
    perm = permutation(n, seed, index)
    where = {old: new for new, old in enumerate(perm)}

    def lemma(o: int) -> str:
        if not o:
            return BLANK_LEMMA
        x = sent.lemmas[o - 1]
        if x == "_" and sent.forms[o - 1] not in ("_", ""):
            f = sent.forms[o - 1]
            return f[:1].lower() + f[1:] if o == 1 and f[:1].isupper() and not f.isupper() else f
        return x

    out_orig = [orig[perm[j]] for j in range(n)]
    return SRSentence(
        lemmas=[lemma(o) for o in out_orig],
        upos=[upos[perm[j]] for j in range(n)],
        xpos=["_"] * n,
        feats=[feats[perm[j]] for j in range(n)],
        heads=[0 if heads[perm[j]] == 0 else where[heads[perm[j]] - 1] + 1 for j in range(n)],
        deprels=[deprels[perm[j]] for j in range(n)],
        lin=[lin[perm[j]] for j in range(n)],
        forms=[sent.forms[o - 1] if with_gold and o else None for o in out_orig],
        orig=out_orig if with_gold else None,
        sent_id=sent.sent_id, line=sent.line, ref=sent if with_gold else None)


# ------------------------------------------------------------------------ agreement
FEATURE_KEYS = ("Definite", "Tense", "Aspect", "Mood", "ClauseType", "Voice", "Number", "Person", "PronType",
                "Gender", "Degree", "Poss", "NumType", "Polarity", "VerbForm")


def _pairs(feats: str) -> set:
    return {f"{k}={v}" for k, v in parse_feats(feats).items() if k not in TASK_FEATS}


def _prf(tp: int, n_pred: int, n_gold: int) -> Dict[str, float]:
    p = 100.0 * tp / n_pred if n_pred else 0.0
    r = 100.0 * tp / n_gold if n_gold else 0.0
    return {"precision": round(p, 2), "recall": round(r, 2),
            "f1": round(2 * p * r / (p + r), 2) if p + r else 0.0, "gold": n_gold, "predicted": n_pred}


def compare(official: Sequence[SRSentence], converted: Sequence[SRSentence]) -> dict:
    """Agreement of converted T2 sentences with official ones, node by node.

    official, converted: lists of :class:`wo.sr.t1.SRSentence` of the same sentences in the
    same order, both with ``orig`` (the official aligned train's ``original_id``; the converter's
    with ``with_gold``).  Nodes are matched by UD position, ``_`` nodes by (head's UD position,
    relation).  Returns a dict: ``sentences``; ``kept`` (precision/recall/f1 of the kept UD
    positions); ``blank`` (of the ``_`` nodes); ``relation_accuracy``, ``head_accuracy`` and
    ``labelled_accuracy``, ``lin_accuracy`` (percent, on the nodes kept by both, ``both``);
    ``features``: per key
    precision/recall of its key=value pairs on the nodes kept by both (``_`` nodes matched
    included) and ``feature_values`` per key=value; ``exact_sentences`` (percent of sentences
    whose node set, relations, heads and features all agree); ``relation_confusion``: the 15
    most frequent (official, converted) relation disagreements.  Raises ValueError when the
    lists differ in length or a sentence has no ``orig``.
    """
    if len(official) != len(converted):
        raise ValueError(f"{len(official)} official sentences but {len(converted)} converted")
    kept_tp = kept_p = kept_g = 0
    bl_tp = bl_p = bl_g = 0
    both = rel_ok = head_ok = las_ok = lin_ok = 0
    ftp: Counter = Counter()
    fpred: Counter = Counter()
    fgold: Counter = Counter()
    confusion: Counter = Counter()
    exact = 0
    for o, c in zip(official, converted):
        if o.orig is None or c.orig is None:
            raise ValueError(f"sentence {o.sent_id or c.sent_id}: no original_id alignment")

        def index(s: SRSentence):
            kept, blanks = {}, defaultdict(list)
            for i, x in enumerate(s.orig):
                if x:
                    kept[x] = i
            for i, x in enumerate(s.orig):
                if not x:
                    h = s.heads[i]
                    blanks[(s.orig[h - 1] if h else 0, s.deprels[i])].append(i)
            return kept, blanks

        ok_, ob_ = index(o)
        ck_, cb_ = index(c)
        common = ok_.keys() & ck_.keys()
        kept_tp += len(common)
        kept_p += len(ck_)
        kept_g += len(ok_)
        pairs = [(ok_[x], ck_[x]) for x in common]
        nb_o = sum(len(v) for v in ob_.values())
        nb_c = sum(len(v) for v in cb_.values())
        bl_p += nb_c
        bl_g += nb_o
        for key, lst in ob_.items():
            m = min(len(lst), len(cb_.get(key, ())))
            bl_tp += m
            pairs += list(zip(lst[:m], cb_[key][:m]))
        same = len(common) == len(ok_) == len(ck_) and nb_o == nb_c
        for i, j in pairs:
            if o.orig[i]:
                both += 1
                ho = o.orig[o.heads[i] - 1] if o.heads[i] else 0
                hc = c.orig[c.heads[j] - 1] if c.heads[j] else 0
                r = o.deprels[i] == c.deprels[j]
                rel_ok += r
                head_ok += ho == hc
                lin_ok += o.lin[i] == c.lin[j]
                las_ok += r and ho == hc
                if not r:
                    confusion[(o.deprels[i], c.deprels[j])] += 1
                same = same and r and ho == hc
            po, pc = _pairs(o.feats[i]), _pairs(c.feats[j])
            same = same and po == pc
            for kv in po & pc:
                ftp[kv] += 1
            for kv in pc:
                fpred[kv] += 1
            for kv in po:
                fgold[kv] += 1
        exact += same
    by_key: Dict[str, List[int]] = defaultdict(lambda: [0, 0, 0])
    for table, slot in ((ftp, 0), (fpred, 1), (fgold, 2)):
        for kv, v in table.items():
            by_key[kv.split("=", 1)[0]][slot] += v
    pct = lambda a, b: round(100.0 * a / b, 2) if b else 0.0  # noqa: E731
    keys = [k for k in FEATURE_KEYS if k in by_key] + sorted(k for k in by_key if k not in FEATURE_KEYS)
    return {
        "sentences": len(official),
        "kept": _prf(kept_tp, kept_p, kept_g),
        "blank": _prf(bl_tp, bl_p, bl_g),
        "both": both,
        "relation_accuracy": pct(rel_ok, both),
        "head_accuracy": pct(head_ok, both),
        "labelled_accuracy": pct(las_ok, both),
        "lin_accuracy": pct(lin_ok, both),
        "exact_sentences": pct(exact, len(official)),
        "features": {k: _prf(*by_key[k]) for k in keys},
        "feature_values": {kv: _prf(ftp[kv], fpred[kv], fgold[kv])
                           for kv in sorted(fgold.keys() | fpred.keys())},
        "relation_confusion": [[a, b, n] for (a, b), n in confusion.most_common(15)],
    }


def compare_bags(official: Sequence[SRSentence], converted: Sequence[SRSentence]) -> dict:
    """Agreement without an alignment (the official dev and test files have no
    ``original_id``): per sentence, multisets compared.

    Returns a dict of precision/recall/f1 (see :func:`compare`'s ``kept``) for ``kept``: the
    (lemma, UPOS) bag of the nodes with a word; ``blank``: the ``_`` nodes by (head lemma,
    relation); ``labelled``: (lemma, UPOS, relation, head lemma) (the relation and head
    agreement); ``unlabelled``: (lemma, UPOS, head lemma); ``features``: per key, the
    (lemma, UPOS, key=value) bag (a ``_`` node's by its head lemma); ``sentences``.  Raises
    ValueError when the lists differ in length."""
    if len(official) != len(converted):
        raise ValueError(f"{len(official)} official sentences but {len(converted)} converted")
    tot = {k: [0, 0, 0] for k in ("kept", "blank", "labelled", "unlabelled")}
    feats: Dict[str, List[int]] = defaultdict(lambda: [0, 0, 0])

    def bags(s: SRSentence):
        low = [x.lower() for x in s.lemmas]
        hl = lambda i: low[s.heads[i] - 1] if s.heads[i] else "<root>"  # noqa: E731
        b: Dict[str, Counter] = {k: Counter() for k in tot}
        f: Dict[str, Counter] = defaultdict(Counter)
        for i, x in enumerate(low):
            if s.lemmas[i] == BLANK_LEMMA:
                b["blank"][(hl(i), s.deprels[i])] += 1
                for kv in _pairs(s.feats[i]):
                    f[kv.split("=", 1)[0]][("_", hl(i), kv)] += 1
                continue
            b["kept"][(x, s.upos[i])] += 1
            b["labelled"][(x, s.upos[i], s.deprels[i], hl(i))] += 1
            b["unlabelled"][(x, s.upos[i], hl(i))] += 1
            for kv in _pairs(s.feats[i]):
                f[kv.split("=", 1)[0]][(x, s.upos[i], kv)] += 1
        return b, f

    for o, c in zip(official, converted):
        bo, fo = bags(o)
        bc, fc = bags(c)
        for k, t in tot.items():
            t[0] += sum((bo[k] & bc[k]).values())
            t[1] += sum(bc[k].values())
            t[2] += sum(bo[k].values())
        for k in fo.keys() | fc.keys():
            t = feats[k]
            t[0] += sum((fo[k] & fc[k]).values())
            t[1] += sum(fc[k].values())
            t[2] += sum(fo[k].values())
    keys = [k for k in FEATURE_KEYS if k in feats] + sorted(k for k in feats if k not in FEATURE_KEYS)
    out = {"sentences": len(official)}
    out.update({k: _prf(*t) for k, t in tot.items()})
    out["features"] = {k: _prf(*feats[k]) for k in keys}
    return out
