"""Learned morphological inflection: (lemma, UPOS, FEATS) -> word form by edit-script classification.

For a lemma/feature combination never seen in training, the form is predicted as an *edit
script* applied to the lemma, in the manner of the lemmatisers of Chrupała (2008, "Towards a
machine-learning architecture for lexical functional grammar parsing", ch. 6: shortest edit
scripts) and UDPipe (Straka et al. 2016) and of the SIGMORPHON 2016-2017 baselines (prefix and
suffix edits aligned on the longest common substring):

* an edit script is ``(prefix stripped, prefix added, suffix stripped, suffix added)``, read off
  the longest common substring of lemma and form (``machen -> gemacht``: ``("", "ge", "en",
  "t")``); a form sharing fewer than two characters with its lemma (suppletion) has no script;
* a script applies to a lemma that starts with its stripped prefix and ends with its stripped
  suffix, with at least one character left between them;
* the classifier is a back-off suffix trie (Brants 2000, TnT's suffix guesser; Chrupała 2008):
  counts of scripts per context, where the contexts of a (lemma, UPOS, FEATS) are, most
  specific first, the lemma's last 7, 6, ..., 2 characters, its last vowel with its last
  character, its last vowel (vowel harmony: Turkish, Hungarian, Finnish), and nothing, each
  conjoined with UPOS and FEATS (:func:`contexts`).  The estimate is interpolated along that
  chain from the least specific context (TnT's suffix guesser); ties go to the script with
  more training tokens.  FEATS never seen with the UPOS back
  off to the seen FEATS of that UPOS that share the most attribute=value pairs (then fewer
  differing ones).

A second kind of script (:func:`marked_script`) gives the stem's diacritics a tier of their
own, for stress that moves (el *παράβαση -> παραβάσεις*); :func:`build_inflector` keeps it for a
treebank only where it wins on held-out tokens.

Candidates are then reranked by a character n-gram LM of the treebank's word forms (order 4,
modified Kneser-Ney, :mod:`wo.lm`; :class:`CharLM`): score = log10 p(script | context) + w x
log10 p_char(form), so that of the scripts a context allows the one whose form looks like the
language's words wins (vowel harmony, stem alternations the suffix contexts miss).  The weight
w is chosen when the model is built, on held-out training tokens (every tenth sentence) whose
(lemma, UPOS, FEATS) the rest never has, among CHAR_WEIGHTS, if it gains at least
CHAR_MIN_GAIN there (:func:`build_inflector`).
Measured on dev tokens with unseen (lemma, UPOS, FEATS), first choice, w = 0 -> 1: tr 0.765 ->
0.825, en_lines 0.800 -> 0.853, ko 0.706 -> 0.715, it 0.945 -> 0.949; ru 0.862 -> 0.843, de
0.829 -> 0.825, pt_bosque 0.969 -> 0.964 (w = 0.5: ru 0.862, de 0.833): hence the choice per
treebank.

For a lemma seen in training with other FEATS, a predicted form keeps the stem that lemma's
own forms show before a vowel or a consonant (:func:`stem_finals`: tr *git -> gid-iyorum*, *saç
-> saç-ım* where another lemma's script voices, *ağız -> ağz-ı*), where the held-out tokens
gain JUNCTION_MIN_GAIN with it (tr only).

Everything is learned from the treebank; no language is special-cased.
"""
from __future__ import annotations

import functools
import math
import unicodedata
from collections import Counter, defaultdict
from difflib import SequenceMatcher
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

MAX_SUFFIX = 7
CHAR_LM_ORDER = 4          # order 4: tr dev 0.821 with a 174 kB (zlib) model; order 5: 0.825, 388 kB
CHAR_WEIGHTS = (0.0, 0.25, 0.5, 1.0)
CHAR_CANDIDATES = 10       # scripts reranked by the character LM
CHAR_MIN_GAIN = 0.01       # held-out accuracy a weight must add over none (it_partut: +0.6 points
                           # held out at w = 0.25 were -0.5 on dev; tr: +4.6 held out, +1.6 on dev)
ALT_MIN_KEYS = 3           # a vowel alternation must be seen in this many (UPOS, FEATS) keys
ALT_REL = 0.25             # ... and in at least this share of the keys of either vowel's strongest one (tr: the
                           # harmony pairs a-e, ı-i-u-ü have 52-115 keys; a-ı 11, e-i 9, a-i 4 are other affixes)
ALT_PENALTIES = (1.0, 2.0, 3.0)   # log10 penalty of a variant script, chosen on held-out tokens
ALT_BEAM = 3               # variants made of one script (beam over its vowels by the vowel tier)
ALT_SCRIPTS = 3            # the best scripts whose variants are made
TIER_WEIGHTS = (0.0, 0.5, 1.0, 2.0)   # weight of the vowel tier (:class:`VowelTier`), held-out choice
PREDICT_CACHE = 200_000    # memoised predictions per inflector
ALT_MIN_GAIN = 0.005       # held-out accuracy the variants must add over the character LM alone
JUNCTION_MIN_GAIN = 0.003  # held-out accuracy the lemmas' own stems must add (:func:`stem_finals`; tr only)
MARKS_MIN_SHARE = 0.01     # the marked scripts are tried only if this share of tokens moves a stem mark
                           # (el 7.0 %, fr_sequoia 3.2, fr_gsd 2.7, de 1.2, es 1.0, ru 1.0; pt 0.7, tr 0.2,
                           # it 0.1, ja 0.1, en, ko, vi 0: there they cannot win, and trying costs pt_bosque's
                           # lexicon 20 % more time)
MARKS_MIN_GAIN = 0.01      # held-out accuracy the marked scripts must add (dev, unseen keys, best LM weight:
                           # el 0.830 -> 0.872, es 0.935 -> 0.936, fr_sequoia 0.948 -> 0.924, others equal)
# vowels of the Latin, Greek and Cyrillic scripts (lower case, with the accented letters the UD
# treebanks use); only the vowel-harmony context reads this
VOWELS = set("aeiouyáàâäãåæéèêëíìîïóòôöõøúùûüýÿıąęœ"
             "αεηιουωάέήίόύώϊϋΐΰ"
             "аеёиоуыэюяії")
_BASE_VOWELS = {unicodedata.normalize("NFD", v)[0] for v in VOWELS}   # the vowels without their marks


@functools.lru_cache(maxsize=1 << 18)
def edit_script(lemma: str, form: str) -> Optional[str]:
    """The edit script turning ``lemma`` into ``form`` as one tab-joined string
    ``prefix_strip \\t prefix_add \\t suffix_strip \\t suffix_add`` ("" for the identity's parts);
    None when the two share fewer than two characters (suppletion: left to the lexicon).
    Memoised (a treebank repeats its (lemma, form) pairs many times)."""
    if lemma == form:
        return "\t\t\t"
    m = SequenceMatcher(None, lemma, form, autojunk=False).find_longest_match(0, len(lemma), 0, len(form))
    if m.size < 2 and not (m.size == 1 and len(lemma) == 1):
        return None
    a, b, k = m.a, m.b, m.size
    return "\t".join((lemma[:a], form[:b], lemma[a + k:], form[b + k:]))


def apply_script(script: str, lemma: str) -> Optional[str]:
    """The form the edit script makes of ``lemma``, or None when the script does not apply.
    A script of five fields is a marked one (:func:`marked_script`)."""
    if script.count("\t") == 4:
        return _apply_marked(script, lemma)
    ps, pa, ss, sa = script.split("\t")
    if not lemma.startswith(ps) or not lemma.endswith(ss) or len(lemma) <= len(ps) + len(ss):
        return None
    return pa + lemma[len(ps):len(lemma) - len(ss)] + sa


def _marks(text: str) -> Tuple[str, List[str]]:
    """The base characters of ``text`` in NFD and, per base character, its combining marks."""
    base: List[str] = []
    marks: List[str] = []
    for ch in unicodedata.normalize("NFD", text):
        if base and unicodedata.combining(ch):
            marks[-1] += ch
        else:
            base.append(ch)
            marks.append("")
    return "".join(base), marks


def _stem_marks(base: str, marks: Sequence[str]) -> str:
    """The marks of a stem as positions from its end: ``v<n>:<marks>`` on the n-th vowel from
    the end (1: the last), ``c<n>:<marks>`` on another character n from the end, joined by ","."""
    out = []
    nv = 0
    for i in range(len(base) - 1, -1, -1):
        vowel = base[i].lower() in _BASE_VOWELS
        nv += vowel
        if marks[i]:
            out.append(f"v{nv}:{marks[i]}" if vowel else f"c{len(base) - i}:{marks[i]}")
    return ",".join(reversed(out))


@functools.lru_cache(maxsize=1 << 18)
def marked_script(lemma: str, form: str) -> Optional[str]:
    """The edit script of ``lemma`` -> ``form`` with the stem's diacritics as a tier of their own
    (stress and accent shifts: el *παράβαση -> παραβάσεις*, *κατάλογος -> καταλόγων*; fr *céder ->
    cède*; de *Vater -> Väter*): five tab-joined fields ``prefix_strip, prefix_add, suffix_strip,
    suffix_add, stem_marks``, all in NFD.  The longest common substring is found on the base
    characters (combining marks removed); the stripped and added affixes keep their marks;
    ``stem_marks`` is ``=`` when the kept stem has the lemma's marks, else the form's stem marks
    as positions from the stem's end (:func:`_stem_marks`; "" for none), so that one script
    serves every lemma whose stress moves the same way.  None as :func:`edit_script` (fewer
    than two shared base characters).  Memoised."""
    lb, lm = _marks(lemma)
    fb, fm = _marks(form)
    m = SequenceMatcher(None, lb, fb, autojunk=False).find_longest_match(0, len(lb), 0, len(fb))
    if m.size < 2 and not (m.size == 1 and len(lb) == 1):
        return None
    a, b, k = m.a, m.b, m.size

    def lit(base: str, marks: Sequence[str], i: int, j: int) -> str:
        return "".join(base[x] + marks[x] for x in range(i, j))

    sm = "=" if lm[a:a + k] == fm[b:b + k] else _stem_marks(fb[b:b + k], fm[b:b + k])
    return "\t".join((lit(lb, lm, 0, a), lit(fb, fm, 0, b), lit(lb, lm, a + k, len(lb)), lit(fb, fm, b + k, len(fb)),
                      sm))


def moved_marks(examples: Iterable[Tuple[str, str, str, str]]) -> float:
    """Share of (lemma, UPOS, FEATS, form) tokens whose form moves, adds or drops a diacritic
    of the stem (:func:`marked_script` with stem marks other than "="); 0.0 for none."""
    n = moved = 0
    for lemma, _, _, form in examples:
        if not lemma or lemma == "_" or not form:
            continue
        n += 1
        sc = marked_script(lemma, form)
        moved += sc is not None and not sc.endswith("\t=")
    return moved / n if n else 0.0


def _apply_marked(script: str, lemma: str) -> Optional[str]:
    ps, pa, ss, sa, sm = script.split("\t")
    d = unicodedata.normalize("NFD", lemma)
    if not d.startswith(ps) or not d.endswith(ss) or len(d) <= len(ps) + len(ss):
        return None
    mid = d[len(ps):len(d) - len(ss)]
    if unicodedata.combining(mid[0]):
        return None   # the stripped prefix ended inside a character
    if sm != "=":
        base, _ = _marks(mid)
        marks = [""] * len(base)
        for item in sm.split(",") if sm else ():
            pos, mk = item.split(":", 1)
            n = int(pos[1:])
            if pos[0] == "c":
                i = len(base) - n
            else:
                i, seen = len(base), 0
                while seen < n and i > 0:
                    i -= 1
                    seen += base[i].lower() in _BASE_VOWELS
                if seen < n:
                    return None
            if not 0 <= i < len(base):
                return None
            marks[i] += mk
        mid = "".join(c + x for c, x in zip(base, marks))
    out = pa + mid + sa
    return unicodedata.normalize("NFC", out) if unicodedata.is_normalized("NFC", lemma) else out


@functools.lru_cache(maxsize=1 << 16)
def contexts(lemma: str, scheme: int = 2) -> Tuple[str, ...]:
    """The lemma contexts of the back-off chain, most specific first (see the module docstring).

    scheme 2: the last 7..2 characters, the last vowel with the last character, the last vowel,
    nothing; scheme 1 (models trained before it): the last 7..1 characters, the last vowel,
    nothing.  Measured on dev tokens with unseen (lemma, UPOS, FEATS), first choice, scheme 1 ->
    2: tr 0.720 -> 0.772, de 0.822 -> 0.824, el 0.830 and it 0.945 the same, ru 0.852 -> 0.843
    (keeping the last character alone between them undoes the Turkish gain: 0.723).
    A tuple, memoised."""
    low = lemma.lower()
    last_v = next((ch for ch in reversed(low) if ch in VOWELS), "")
    if scheme == 1:
        out = [f"s{n}:{low[-n:]}" for n in range(min(MAX_SUFFIX, len(low)), 0, -1)]
        return tuple(out + [f"v:{last_v}", ""])
    out = [f"s{n}:{low[-n:]}" for n in range(min(MAX_SUFFIX, len(low)), 1, -1)]
    return tuple(out + [f"vc:{last_v}:{low[-1:]}", f"v:{last_v}", ""])


def _skeleton(text: str) -> str:
    return "".join("V" if ch in VOWELS else ch for ch in text)


def alternations(table: Dict[str, Dict[str, Dict[str, int]]], min_keys: int = ALT_MIN_KEYS) -> Dict[str, str]:
    """Vowel alternations of affixes (vowel harmony: tr *-dı/-di/-du/-dü*, *-amadı/-emedi*),
    learned from an edit-script table (:class:`EditInflector`'s ``table``): two scripts of one
    (UPOS, FEATS) that strip and prefix alike and add suffixes differing only in vowels at the
    same places are one affix in two shapes; a vowel pair is kept when at least ``min_keys``
    (UPOS, FEATS) keys show it, and at least ALT_REL of the keys of the strongest pair of
    either of its vowels (so that tr's harmony classes a/e and ı/i/u/ü stay apart: a pair of
    unrelated affixes that differ in one vowel is rare).  Returns dict vowel -> the vowels it alternates with (a str,
    sorted), {} for a language without such pairs."""
    seen: Dict[Tuple[str, str], set] = defaultdict(set)
    for key, t in table.items():
        groups: Dict[Tuple[str, str, str, str], set] = defaultdict(set)
        for c in t.get("", {}):   # the least specific context holds every script of the key
            ps, pa, ss, sa, *sm = c.split("\t")
            groups[(ps, pa, ss, _skeleton(sa), *sm)].add(sa)
        for g in groups.values():
            if len(g) < 2:
                continue
            g = sorted(g)
            for i, a in enumerate(g):
                for b in g[i + 1:]:
                    diff = [(x, y) for x, y in zip(a, b) if x != y]
                    if len(set(diff)) == 1:   # one vowel pair, at one or more places
                        x, y = diff[0]
                        seen[(min(x, y), max(x, y))].add(key)
    best: Dict[str, int] = defaultdict(int)   # the strongest pair of each vowel
    for (x, y), keys in seen.items():
        best[x] = max(best[x], len(keys))
        best[y] = max(best[y], len(keys))
    out: Dict[str, set] = defaultdict(set)
    for (x, y), keys in seen.items():
        if len(keys) >= min_keys and len(keys) >= ALT_REL * min(best[x], best[y]):
            out[x].add(y)
            out[y].add(x)
    return {v: "".join(sorted(a)) for v, a in sorted(out.items())}


def variants(script: str, lemma: str, alt: Dict[str, str], tier: "VowelTier", beam: int = ALT_BEAM) -> List[str]:
    """The scripts that differ from ``script`` by alternating vowels of its added suffix
    (:func:`alternations`), the ``beam`` best by the vowel tier (:class:`VowelTier`) of the
    form they make of ``lemma`` (a left-to-right beam over the suffix's vowels, each scored
    against the vowel before it); the script itself excluded."""
    ps, pa, ss, sa, *sm = script.split("\t")
    stem = (pa + lemma[len(ps):len(lemma) - len(ss)]).lower()
    last = next((ch for ch in reversed(stem) if ch in VOWELS), None)
    hyps = [(0.0, "", last)]
    for ch in sa:
        alts = alt.get(ch)
        if not alts:
            hyps = [(sc, o + ch, lv if ch not in VOWELS else ch) for sc, o, lv in hyps]
            continue
        nxt = []
        for sc, o, lv in hyps:
            for v in ch + alts:
                nxt.append((sc + (tier.logp(lv, v) if lv is not None else 0.0), o + v, v))
        nxt.sort(key=lambda x: -x[0])
        hyps = nxt[:beam + 1]
    return ["\t".join((ps, pa, ss, o, *sm)) for _, o, _ in hyps if o != sa][:beam]


def _stem_of(lo: str, fo: str) -> Optional[str]:
    """The lemma's stem a lower-cased form ``fo`` of lower-cased lemma ``lo`` begins with, when
    a letter follows it: the lemma itself, the lemma with another last letter (tr *git ->
    gid-iyor*), or the lemma without its second-last letter (tr *ağız -> ağz-ı*); else None."""
    n = len(lo)
    if n < 2 or len(fo) <= n - 1:
        return None
    if len(fo) > n and fo[:n - 1] == lo[:n - 1]:
        return fo[:n]
    if n >= 3 and fo.startswith(lo[:-2] + lo[-1]):
        return lo[:-2] + lo[-1]
    return None


def stem_finals(examples: Iterable[Tuple[str, str, str, str]]) -> Dict[str, Dict[str, Dict[str, int]]]:
    """The stem each lemma shows in training before a vowel ("V") and before a consonant ("C"),
    for the lemmas whose stem alternates (:func:`_stem_of`: tr *git -> gidiyor / gitti*, *kağıt
    -> kağıdı*, *ağız -> ağzı*, and those that do not: *saç -> saçım*, *at -> atıyor*): from
    (lemma, UPOS, FEATS, form) tokens.  A last letter alternates when some lemma ending in it
    shows another one in its place; the lemmas ending in such a letter are kept, and those
    that show their second-last letter dropped.  Returns dict lower-cased lemma -> class ->
    dict stem -> tokens ({} for a language without such alternations).  Used by
    :meth:`EditInflector.predict` to give a form of a lemma seen with other FEATS the stem its
    own forms show (:meth:`EditInflector._junction`)."""
    table: Dict[str, Dict[str, Dict[str, int]]] = {}
    for lemma, _upos, _feats, form in examples:
        if not lemma or lemma == "_" or not form:
            continue
        lo, fo = lemma.lower(), form.lower()
        st = _stem_of(lo, fo)
        if st is None:
            continue
        d = table.setdefault(lo, {}).setdefault("V" if fo[len(st)] in VOWELS else "C", {})
        d[st] = d.get(st, 0) + 1
    alternating = {lo[-1] for lo, t in table.items()
                   if any(len(st) == len(lo) and st != lo for d in t.values() for st in d)}
    return {lo: t for lo, t in table.items()
            if lo[-1] in alternating or any(len(st) < len(lo) for d in t.values() for st in d)}


class VowelTier:
    """A bigram model of the vowel tier of word forms (vowel harmony as a constraint between
    successive vowels, whatever the consonants between them: Goldsmith 1976's autosegmental
    tier; Hayes & Wilson 2008): log10 p(vowel | previous vowel of the same form), add-one
    smoothed over :data:`VOWELS`, counted over distinct lower-cased forms.  ``counts``: dict
    previous vowel -> dict vowel -> count."""

    def __init__(self, counts: Dict[str, Dict[str, int]]):
        self.counts = counts
        self._tot = {v: sum(c.values()) for v, c in counts.items()}

    @classmethod
    def build(cls, forms: Iterable[str]) -> "VowelTier":
        """Count the vowel bigrams of the distinct lower-cased ``forms``."""
        counts: Dict[str, Counter] = defaultdict(Counter)
        for f in dict.fromkeys(f.lower() for f in forms if f):   # distinct, in order (reproducible files)
            vs = [ch for ch in f if ch in VOWELS]
            for a, b in zip(vs, vs[1:]):
                counts[a][b] += 1
        return cls({a: dict(c) for a, c in counts.items()})

    def logp(self, prev: str, vowel: str) -> float:
        """log10 p(vowel | previous vowel), add-one smoothed."""
        c = self.counts.get(prev)
        return math.log10(((c.get(vowel, 0) if c else 0) + 1.0) / (self._tot.get(prev, 0) + len(VOWELS)))

    def score(self, form: str) -> float:
        """Sum of log10 p(v_i | v_(i-1)) over the form's vowels after the first (0.0 for a
        form with fewer than two vowels)."""
        vs = [ch for ch in form.lower() if ch in VOWELS]
        return sum(self.logp(a, b) for a, b in zip(vs, vs[1:]))


def _pairs(feats: str) -> frozenset:
    return frozenset(kv for kv in feats.split("|") if kv and kv != "_")


class EditInflector:
    """Edit-script classifier for inflection (see the module docstring).

    ``table``: dict "UPOS\\tFEATS" -> dict context -> dict script -> token count; ``totals``:
    dict script -> token count (tie-break); ``char_lm``/``char_weight``: the character LM that
    reranks the candidates (:class:`CharLM`, None: none) and its weight.  Build with :meth:`build`; JSON with
    :meth:`to_json` / :meth:`from_json` (stored in SR model headers).
    """

    def __init__(self, table: Dict[str, Dict[str, Dict[str, int]]], totals: Dict[str, int], theta: float = 1.0,
                 scheme: int = 2, char_lm: Optional["CharLM"] = None, char_weight: float = 0.0,
                 alternations: Optional[Dict[str, str]] = None, alt_penalty: Optional[float] = None,
                 tier: Optional["VowelTier"] = None, tier_weight: float = 0.0,
                 finals: Optional[Dict[str, Dict[str, Dict[str, int]]]] = None):
        self.table = table
        self.totals = totals
        self._by_upos: Dict[str, List[Tuple[frozenset, str]]] = defaultdict(list)
        for key in table:
            upos, feats = key.split("\t", 1)
            self._by_upos[upos].append((_pairs(feats), key))
        self._nearest: Dict[str, Optional[str]] = {}
        self.theta = theta
        self.scheme = scheme
        self.char_lm = char_lm
        self.char_weight = char_weight
        self.alternations = alternations or {}
        self.alt_penalty = alt_penalty
        self.tier = tier
        self.tier_weight = tier_weight
        self.finals = finals          # stem_finals(): the lemmas' own stem finals, or None (not used)
        self._cache: Dict[tuple, List[str]] = {}

    @classmethod
    def build(cls, examples: Iterable[Tuple[str, str, str, str]], marks: bool = False) -> "EditInflector":
        """Learn from (lemma, UPOS, FEATS, form) tokens (FEATS canonical, forms as stored by the
        lexicon).  Tokens without an edit script (suppletion) are skipped.  ``marks``: scripts
        with the stem's diacritics as a tier of their own (:func:`marked_script`), else
        :func:`edit_script`."""
        seen: Counter = Counter()    # (key, lemma, script) -> tokens, in first-occurrence order
        totals: Counter = Counter()
        script = marked_script if marks else edit_script
        for lemma, upos, feats, form in examples:
            if not lemma or lemma == "_" or not form:
                continue
            sc = script(lemma, form)
            if sc is None:
                continue
            totals[sc] += 1
            seen[(f"{upos}\t{feats}", lemma, sc)] += 1
        # the contexts of each distinct (key, lemma, script) once, weighted: the same tables, with
        # the same insertion order, as one pass over the tokens
        table: Dict[str, Dict[str, Dict[str, int]]] = {}
        for (key, lemma, sc), n in seen.items():
            t = table.setdefault(key, {})
            for c in contexts(lemma, 2):
                d = t.setdefault(c, {})
                d[sc] = d.get(sc, 0) + n
        return cls(table, dict(totals))

    def to_json(self) -> dict:
        """JSON-serialisable form."""
        d = {"table": self.table, "totals": self.totals, "scheme": self.scheme, "char_weight": self.char_weight}
        if self.char_lm is not None and self.char_weight > 0:
            d["char_lm"] = self.char_lm.to_json()
            if self.alt_penalty is not None and self.alternations and self.tier is not None:
                d["alternations"], d["alt_penalty"] = self.alternations, self.alt_penalty
            if self.tier is not None and (self.tier_weight > 0 or "alt_penalty" in d):
                d["vowel_tier"], d["tier_weight"] = self.tier.counts, self.tier_weight
            if self.finals:
                d["stem_finals"] = self.finals
        return d

    @classmethod
    def from_json(cls, d: dict) -> "EditInflector":
        """Inverse of :meth:`to_json`."""
        lm = CharLM.from_json(d["char_lm"]) if "char_lm" in d else None
        return cls(d["table"], d["totals"], scheme=d.get("scheme", 1), char_lm=lm,
                   char_weight=float(d.get("char_weight", 0.0)), alternations=d.get("alternations"),
                   alt_penalty=d.get("alt_penalty"),
                   tier=VowelTier(d["vowel_tier"]) if "vowel_tier" in d else None,
                   tier_weight=float(d.get("tier_weight", 0.0)), finals=d.get("stem_finals"))

    def _key(self, upos: str, feats: str) -> Optional[str]:
        key = f"{upos}\t{feats}"
        if key in self.table:
            return key
        if key not in self._nearest:
            want = _pairs(feats)
            best = None
            for have, k in self._by_upos.get(upos, ()):
                score = (len(want & have), -len(want ^ have), -len(k))
                if best is None or score > best[0]:
                    best = (score, k)
            self._nearest[key] = best[1] if best else None
        return self._nearest[key]

    def predict(self, lemma: str, upos: str, feats: str, k: int = 2, min_share: float = 0.2) -> List[str]:
        """Up to ``k`` distinct forms for (lemma, UPOS, canonical FEATS), best first: the scripts
        of the most specific context with an applicable one whose count is at least ``min_share``
        of the best's; with a character LM (``char_weight`` > 0), the CHAR_CANDIDATES most
        probable scripts' forms reranked by log10 p + char_weight x log10 p_char(form).
        Returns [] when nothing applies (unknown UPOS).  Predictions are memoised per
        (lemma, UPOS, FEATS, k and the weights), at most PREDICT_CACHE of them."""
        ck = (lemma, upos, feats, k, min_share, self.char_weight, self.alt_penalty, self.tier_weight,
              id(self.char_lm), id(self.tier), id(self.alternations), id(self.finals))
        out = self._cache.get(ck)
        if out is None:
            if len(self._cache) >= PREDICT_CACHE:
                self._cache.clear()
            out = self._cache[ck] = self._predict(lemma, upos, feats, k, min_share)
        return list(out)

    @staticmethod
    def _junction(lemma: str, form: str, fin: Dict[str, Dict[str, int]]) -> Optional[str]:
        """``form`` with the stem the lemma's own training forms show before the letter that
        follows the stem (:func:`stem_finals`; the most frequent one), or None when the form
        already has one of them, begins with no stem of the lemma, or that class was never
        seen."""
        lo = form.lower()
        st = _stem_of(lemma.lower(), lo)
        if st is None:
            return None
        seen = fin.get("V" if lo[len(st)] in VOWELS else "C")
        if not seen or st in seen:
            return None
        new = max(sorted(seen), key=lambda c: seen[c])
        return (new.capitalize() if form[:1].isupper() else new) + form[len(st):]

    def _predict(self, lemma: str, upos: str, feats: str, k: int, min_share: float) -> List[str]:
        key = self._key(upos, feats)
        if key is None:
            return []
        t = self.table[key]
        # interpolated estimate over the chain, least specific context first (TnT, Brants 2000):
        # p_c(s) = (n_c(s) + theta * p_prev(s)) / (N_c + theta), applicable scripts only
        probs: Dict[str, float] = {}
        forms: Dict[str, str] = {}
        for c in reversed(contexts(lemma, self.scheme)):
            counts = t.get(c)
            if not counts:
                continue
            app = {}
            for sc, n in counts.items():
                f = forms.get(sc)
                if f is None:
                    f = apply_script(sc, lemma)
                    if f is None:
                        continue
                    forms[sc] = f
                app[sc] = n
            if not app:
                continue
            tot = sum(app.values())
            th = self.theta
            new = {sc: th * p for sc, p in probs.items()}
            for sc, n in app.items():
                new[sc] = new.get(sc, 0.0) + n
            probs = {sc: v / (tot + th) for sc, v in new.items()}
        if not probs:
            return []
        ranked = sorted(probs, key=lambda sc: (-probs[sc], -self.totals.get(sc, 0), sc))
        if self.char_lm is not None and self.char_weight > 0:
            tier = self.tier if self.tier is not None and self.tier_weight > 0 else None

            def shape(f: str) -> float:   # how much the form looks like the language's words
                x = self.char_weight * self.char_lm.score(f)
                return x + self.tier_weight * tier.score(f) if tier is not None else x

            best: Dict[str, float] = {}
            for sc in ranked[:CHAR_CANDIDATES]:
                f = forms[sc]
                if f not in best:
                    best[f] = math.log10(probs[sc]) + shape(f)
            if self.alt_penalty is not None and self.alternations and self.tier is not None:
                # the affix in its other vowel shapes (harmony the contexts have not seen)
                for sc in ranked[:ALT_SCRIPTS]:
                    base = math.log10(probs[sc]) - self.alt_penalty
                    for v in variants(sc, lemma, self.alternations, self.tier):
                        if v in probs:
                            continue
                        f = apply_script(v, lemma)
                        if f is not None and f not in best:
                            best[f] = base + shape(f)
            if self.finals:
                fin = self.finals.get(lemma.lower())
                if fin:
                    for f in list(best):
                        g = self._junction(lemma, f, fin)
                        if g is not None:
                            sc = best.pop(f)
                            best[g] = max(sc, best.get(g, sc))
            return sorted(best, key=lambda f: -best[f])[:k]
        top = probs[ranked[0]]
        out: List[str] = []
        for sc in ranked:
            if probs[sc] < min_share * top or len(out) >= k:
                break
            if forms[sc] not in out:
                out.append(forms[sc])
        return out
        return []


def accuracy(inflector: EditInflector, tokens: Sequence[Tuple[str, str, str, str]]) -> float:
    """Share of (lemma, UPOS, FEATS, form) tokens whose first prediction equals the form, lower-cased."""
    hit = 0
    for lemma, upos, feats, form in tokens:
        p = inflector.predict(lemma, upos, feats, k=1)
        hit += bool(p) and p[0].lower() == form.lower()
    return hit / max(1, len(tokens))


class CharLM:
    """A character n-gram LM of word forms (modified Kneser-Ney, :mod:`wo.lm`): the characters
    of a lower-cased form are its tokens (a space inside a form is written ``_``), with sentence
    boundaries around the form.  lm: a :class:`wo.lm.model.LanguageModel`; tables: its
    :class:`wo.lm.estimation.NgramTables` (for :meth:`to_json`)."""

    def __init__(self, lm, tables=None):
        self.lm = lm
        self._tables = tables

    @staticmethod
    def _chars(form: str) -> List[str]:
        return list(form.lower().replace(" ", "_"))

    @classmethod
    def build(cls, forms: Iterable[str], order: int = CHAR_LM_ORDER) -> "CharLM":
        """Estimate from word forms (each distinct lower-cased form once).  Raises ValueError
        when there are none."""
        import os
        import tempfile

        from ..lm.estimation import train
        from ..lm.model import LanguageModel

        uniq = sorted({f.lower() for f in forms if f})
        if not uniq:
            raise ValueError("no word forms for the character LM")
        fd, path = tempfile.mkstemp(prefix="wo-charlm-", suffix=".txt")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.writelines(" ".join(cls._chars(f)) + "\n" for f in uniq)
            tables = train([path], order, log=lambda m: None)
        finally:
            os.unlink(path)
        return cls(LanguageModel.from_tables(tables), tables)

    def score(self, form: str) -> float:
        """log10 p(form) under the character LM (with its boundaries)."""
        return float(self.lm.score(self._chars(form)))

    def to_json(self) -> dict:
        """JSON form: the vocabulary and, per order, the n-grams (flattened ids), log10
        probabilities and backoffs (4 decimals)."""
        t = self.tables
        return {"vocab": list(t.vocab), "ngrams": [g.ravel().tolist() for g in t.ngrams],
                "prob": [np.round(p.astype(np.float64), 4).tolist() for p in t.prob],
                "backoff": [np.round(b.astype(np.float64), 4).tolist() for b in t.backoff]}

    @property
    def tables(self):
        """The LM's :class:`wo.lm.estimation.NgramTables` (kept from estimation or JSON)."""
        return self._tables

    @classmethod
    def from_json(cls, d: dict) -> "CharLM":
        """Inverse of :meth:`to_json`."""
        from ..lm.estimation import NgramTables
        from ..lm.model import LanguageModel

        grams = [np.asarray(g, dtype=np.int32).reshape(-1, n) for n, g in enumerate(d["ngrams"], 1)]
        t = NgramTables(list(d["vocab"]), grams, [np.asarray(p, dtype=np.float32) for p in d["prob"]],
                        [np.asarray(b, dtype=np.float32) for b in d["backoff"]], {"order": len(grams)})
        return cls(LanguageModel.from_tables(t), t)


def build_inflector(examples: Sequence[Tuple[str, str, str, str]], sentence: Sequence[int]) -> EditInflector:
    """The edit-script classifier of (lemma, UPOS, FEATS, form) tokens with its character LM,
    whose weight is chosen among CHAR_WEIGHTS on held-out tokens: every tenth sentence
    (``sentence``: the sentence index of each token) is held out, the model is built from the
    rest, and the weight with the best first-choice accuracy on the held-out tokens whose
    (lemma, UPOS, FEATS) the rest lacks wins (ties: the smaller weight) if it adds at least
    CHAR_MIN_GAIN over no LM (else 0).  This is done for both kinds of edit script, plain
    (:func:`edit_script`) and marked (:func:`marked_script`); the marked ones are kept if their
    best accuracy is at least MARKS_MIN_GAIN above the plain ones' (Greek stress shifts).  Then
    the classifier and the LM are built from every token.  The marked kind is tried only where
    at least MARKS_MIN_SHARE of the held-in tokens move a stem mark (:func:`moved_marks`)."""
    rest = [e for e, i in zip(examples, sentence) if i % 10]
    held = [e for e, i in zip(examples, sentence) if i % 10 == 0]
    seen = {(lemma, upos, feats) for lemma, upos, feats, _ in rest}
    test = [e for e in held if (e[0], e[1], e[2]) not in seen and e[0] and e[0] != "_"]
    weight, penalty, tier_weight, marks, use_finals = 0.0, None, 0.0, False, False
    if rest and test:
        lm = CharLM.build(f for *_, f in rest)
        modes = []   # per script kind: (best accuracy, its character LM weight, inflector)
        for mk in (False, True) if moved_marks(rest) >= MARKS_MIN_SHARE else (False,):
            inf = EditInflector.build(rest, marks=mk)
            inf.char_lm = lm
            accs = []
            for w in CHAR_WEIGHTS:
                inf.char_weight = w
                accs.append((accuracy(inf, test), -w))
            best, neg_w = max(accs)
            if best - accs[0][0] < CHAR_MIN_GAIN:
                best, neg_w = accs[0]
            modes.append((best, -neg_w, inf))
        marks = len(modes) > 1 and modes[1][0] - modes[0][0] >= MARKS_MIN_GAIN
        best, weight, inf = modes[marks]
        inf.char_weight = weight
        if weight > 0:
            inf.alternations = alternations(inf.table)
            inf.tier = VowelTier.build(f for *_, f in rest)
            grid = []   # vowel harmony: the affixes' vowel variants and the vowel tier
            for pen in (None,) + (ALT_PENALTIES if inf.alternations else ()):
                for tw in TIER_WEIGHTS:
                    if pen is None and tw == 0:
                        continue
                    inf.alt_penalty, inf.tier_weight = pen, tw
                    grid.append((accuracy(inf, test), -(pen or 0), -tw, pen, tw))
            if grid and max(grid)[0] - best >= ALT_MIN_GAIN:
                penalty, tier_weight = max(grid)[3:]
                best = max(grid)[0]
            inf.alt_penalty, inf.tier_weight = penalty, tier_weight   # the choice so far
            fin = stem_finals(rest)
            if fin:   # the lemmas' own stem finals (tr: git -> gid- before a vowel)
                inf.finals = fin
                use_finals = accuracy(inf, test) - best >= JUNCTION_MIN_GAIN
                inf.finals = None
    final = EditInflector.build(examples, marks=marks)
    if weight > 0:   # else no character LM is kept (the model does not grow)
        final.char_lm = CharLM.build(f for *_, f in examples)
        final.char_weight = weight
        if penalty is not None or tier_weight > 0:
            final.tier, final.tier_weight = VowelTier.build(f for *_, f in examples), tier_weight
        if penalty is not None:
            final.alternations, final.alt_penalty = alternations(final.table), penalty
        if use_finals:
            final.finals = stem_finals(examples)
    return final
