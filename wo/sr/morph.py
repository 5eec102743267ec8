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

Everything is learned from the treebank; no language is special-cased.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from difflib import SequenceMatcher
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

MAX_SUFFIX = 7
# vowels of the Latin, Greek and Cyrillic scripts (lower case, with the accented letters the UD
# treebanks use); only the vowel-harmony context reads this
VOWELS = set("aeiouyáàâäãåæéèêëíìîïóòôöõøúùûüýÿıąęœ"
             "αεηιουωάέήίόύώϊϋΐΰ"
             "аеёиоуыэюяії")


def edit_script(lemma: str, form: str) -> Optional[str]:
    """The edit script turning ``lemma`` into ``form`` as one tab-joined string
    ``prefix_strip \\t prefix_add \\t suffix_strip \\t suffix_add`` ("" for the identity's parts);
    None when the two share fewer than two characters (suppletion: left to the lexicon)."""
    if lemma == form:
        return "\t\t\t"
    m = SequenceMatcher(None, lemma, form, autojunk=False).find_longest_match(0, len(lemma), 0, len(form))
    if m.size < 2 and not (m.size == 1 and len(lemma) == 1):
        return None
    a, b, k = m.a, m.b, m.size
    return "\t".join((lemma[:a], form[:b], lemma[a + k:], form[b + k:]))


def apply_script(script: str, lemma: str) -> Optional[str]:
    """The form the edit script makes of ``lemma``, or None when the script does not apply."""
    ps, pa, ss, sa = script.split("\t")
    if not lemma.startswith(ps) or not lemma.endswith(ss) or len(lemma) <= len(ps) + len(ss):
        return None
    return pa + lemma[len(ps):len(lemma) - len(ss)] + sa


def contexts(lemma: str, scheme: int = 2) -> List[str]:
    """The lemma contexts of the back-off chain, most specific first (see the module docstring).

    scheme 2: the last 7..2 characters, the last vowel with the last character, the last vowel,
    nothing; scheme 1 (models trained before it): the last 7..1 characters, the last vowel,
    nothing.  Measured on dev tokens with unseen (lemma, UPOS, FEATS), first choice, scheme 1 ->
    2: tr 0.720 -> 0.772, de 0.822 -> 0.824, el 0.830 and it 0.945 the same, ru 0.852 -> 0.843
    (keeping the last character alone between them undoes the Turkish gain: 0.723)."""
    low = lemma.lower()
    last_v = next((ch for ch in reversed(low) if ch in VOWELS), "")
    if scheme == 1:
        out = [f"s{n}:{low[-n:]}" for n in range(min(MAX_SUFFIX, len(low)), 0, -1)]
        return out + [f"v:{last_v}", ""]
    out = [f"s{n}:{low[-n:]}" for n in range(min(MAX_SUFFIX, len(low)), 1, -1)]
    return out + [f"vc:{last_v}:{low[-1:]}", f"v:{last_v}", ""]


def _pairs(feats: str) -> frozenset:
    return frozenset(kv for kv in feats.split("|") if kv and kv != "_")


class EditInflector:
    """Edit-script classifier for inflection (see the module docstring).

    ``table``: dict "UPOS\\tFEATS" -> dict context -> dict script -> token count; ``totals``:
    dict script -> token count (tie-break).  Build with :meth:`build`; JSON with
    :meth:`to_json` / :meth:`from_json` (stored in SR model headers).
    """

    def __init__(self, table: Dict[str, Dict[str, Dict[str, int]]], totals: Dict[str, int], theta: float = 1.0,
                 scheme: int = 2):
        self.table = table
        self.totals = totals
        self._by_upos: Dict[str, List[Tuple[frozenset, str]]] = defaultdict(list)
        for key in table:
            upos, feats = key.split("\t", 1)
            self._by_upos[upos].append((_pairs(feats), key))
        self._nearest: Dict[str, Optional[str]] = {}
        self.theta = theta
        self.scheme = scheme

    @classmethod
    def build(cls, examples: Iterable[Tuple[str, str, str, str]]) -> "EditInflector":
        """Learn from (lemma, UPOS, FEATS, form) tokens (FEATS canonical, forms as stored by the
        lexicon).  Tokens without an edit script (suppletion) are skipped."""
        table: Dict[str, Dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
        totals: Counter = Counter()
        for lemma, upos, feats, form in examples:
            if not lemma or lemma == "_" or not form:
                continue
            sc = edit_script(lemma, form)
            if sc is None:
                continue
            totals[sc] += 1
            t = table[f"{upos}\t{feats}"]
            for c in contexts(lemma, 2):
                t[c][sc] += 1
        return cls({k: {c: dict(v) for c, v in t.items()} for k, t in table.items()}, dict(totals))

    def to_json(self) -> dict:
        """JSON-serialisable form."""
        return {"table": self.table, "totals": self.totals, "scheme": self.scheme}

    @classmethod
    def from_json(cls, d: dict) -> "EditInflector":
        """Inverse of :meth:`to_json`."""
        return cls(d["table"], d["totals"], scheme=d.get("scheme", 1))

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
        of the best's.  Returns [] when nothing applies (unknown UPOS)."""
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
