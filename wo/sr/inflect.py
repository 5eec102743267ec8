"""Inflection front end for shared-task input: candidate word forms per lemma.

Zhang & Clark 2015, section 5.7 (NLG 2011 shared task): each input lemma gets the set of word
forms it may take; a token with several candidates becomes one mutually exclusive group in the
search (exactly one member is used), so inflection is decided jointly with the order.  The
paper's candidate sets averaged 1.15 forms per token.

Sources of candidates, in order:

1. the **lexicon** learned from a training treebank: (lemma, UPOS, XPOS, FEATS) -> forms with
   counts, backed off to (lemma, UPOS, FEATS); forms seen with a share of at least
   ``min_share`` are candidates.  Works for any UD language from its treebank alone.
2. for English, **lemminflect** (``english=True``) for unseen lemma/feature combinations;
3. **suffix rules** learned from the same treebank: per (UPOS, FEATS), the most frequent
   lemma -> form edit (strip k characters, add a suffix) among lemmas with the longest shared
   ending (language independent);
4. the lexicon at (lemma, UPOS), then the lemma itself.
For English, context rules add what the lexicon cannot decide: a/an, not/n't, the contracted
forms of be, have, will, would ('s, 're, 'm, 've, 'll, 'd).

Case: forms are stored as they occur, except that a sentence-initial capital is removed unless
the lemma itself is capitalised (proper nouns, "I"); sentence-initial capitalisation is
restored on output.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

# SR'19 FEATS that are task annotations, not morphology
TASK_FEATS = ("lin", "original_id")

# English context rules: lemma -> extra candidates that only the context decides
EN_CONTEXT = {
    "a": ["a", "an"],
    "an": ["a", "an"],
    "not": ["not", "n't"],
}
# contracted alternatives of auxiliary forms (full form -> contraction)
EN_CONTRACT = {"is": "'s", "are": "'re", "am": "'m", "has": "'s", "have": "'ve", "will": "'ll",
               "would": "'d", "had": "'d"}

# UD morphology -> Penn Treebank tag, for lemminflect
def _ptb_tag(upos: str, feats: Dict[str, str]) -> Optional[str]:
    if upos in ("NOUN", "PROPN"):
        plural = feats.get("Number") == "Plur"
        return ("NNPS" if plural else "NNP") if upos == "PROPN" else ("NNS" if plural else "NN")
    if upos in ("VERB", "AUX"):
        vf, tense = feats.get("VerbForm"), feats.get("Tense")
        if vf == "Ger" or (vf == "Part" and tense == "Pres"):
            return "VBG"
        if vf == "Part":
            return "VBN"
        if vf == "Inf":
            return "VB"
        if tense == "Past":
            return "VBD"
        if tense == "Pres":
            return "VBZ" if feats.get("Person") == "3" and feats.get("Number") == "Sing" else "VBP"
        return "VB"
    if upos in ("ADJ", "ADV"):
        deg = feats.get("Degree")
        base = "JJ" if upos == "ADJ" else "RB"
        return base + ("R" if deg == "Cmp" else "S" if deg == "Sup" else "")
    return None


def parse_feats(feats: str) -> Dict[str, str]:
    """``Number=Sing|Tense=Past`` -> dict; ``_`` or empty -> {}."""
    out = {}
    if feats and feats != "_":
        for kv in feats.split("|"):
            if "=" in kv:
                k, v = kv.split("=", 1)
                out[k] = v
    return out


def morph_key(feats: Dict[str, str]) -> str:
    """Canonical FEATS string without the task annotations (``lin``, ``original_id``)."""
    return "|".join(f"{k}={v}" for k, v in sorted(feats.items()) if k not in TASK_FEATS) or "_"


def _edit(lemma: str, form: str) -> Tuple[int, str]:
    """The lemma -> form edit as (characters stripped from the lemma's end, suffix added)."""
    i = 0
    while i < min(len(lemma), len(form)) and lemma[i] == form[i]:
        i += 1
    return len(lemma) - i, form[i:]


class Lexicon:
    """Candidate forms for (lemma, UPOS, XPOS, FEATS), learned from a treebank.

    ``table``: dict key -> Counter(form -> count) at three back-off levels; ``rules``: dict
    (UPOS, FEATS) -> dict lemma ending (0-3 characters) -> Counter((strip, suffix)).
    Build with :meth:`build`; store with :meth:`to_json` / :meth:`from_json` (model header).
    """

    def __init__(self, table: Dict[str, Dict[str, int]], rules: Dict[str, Dict[str, Dict[str, int]]],
                 english: bool, min_share: float = 0.05, max_forms: int = 4):
        self.table = table
        self.rules = rules
        self.english = english
        self.min_share = min_share
        self.max_forms = max_forms
        self._lemminflect = None

    # ----------------------------------------------------------------- building
    @staticmethod
    def keys(lemma: str, upos: str, xpos: str, feats: str) -> List[str]:
        """Back-off keys, most specific first."""
        m = morph_key(parse_feats(feats))
        return [f"{lemma}\t{upos}\t{xpos}\t{m}", f"{lemma}\t{upos}\t\t{m}", f"{lemma}\t{upos}"]

    @staticmethod
    def surface(form: str, lemma: str, index: int) -> str:
        """The form as stored: sentence-initial capitals removed unless the lemma has one."""
        if index == 0 and form[:1].isupper() and not lemma[:1].isupper() and not (
                len(form) > 1 and form.isupper()):   # acronyms keep their case
            return form[:1].lower() + form[1:]
        return form

    @classmethod
    def build(cls, sents: Iterable, english: bool = False, min_share: float = 0.05) -> "Lexicon":
        """Learn the lexicon and suffix rules from UD sentences (:class:`wo.data.Sentence`)."""
        table: Dict[str, Counter] = defaultdict(Counter)
        rules: Dict[str, Dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
        for s in sents:
            for i in range(len(s)):
                lemma, form = s.lemmas[i], s.forms[i]
                if lemma == "_" or not form:
                    continue
                f = cls.surface(form, lemma, i)
                for k in cls.keys(lemma, s.upos[i], s.xpos[i], s.feats[i]):
                    table[k][f] += 1
                strip, suf = _edit(lemma.lower(), f.lower())
                rk = f"{s.upos[i]}\t{morph_key(parse_feats(s.feats[i]))}"
                for n in range(0, 4):
                    if n <= len(lemma):
                        rules[rk][lemma.lower()[len(lemma) - n:]][f"{strip}\t{suf}"] += 1
        return cls({k: dict(v) for k, v in table.items()},
                   {k: {e: dict(c) for e, c in v.items()} for k, v in rules.items()},
                   english, min_share)

    def to_json(self) -> dict:
        """JSON-serialisable form (stored in the model header)."""
        return {"table": self.table, "rules": self.rules, "english": self.english,
                "min_share": self.min_share, "max_forms": self.max_forms}

    @classmethod
    def from_json(cls, d: dict) -> "Lexicon":
        """Inverse of :meth:`to_json`."""
        return cls(d["table"], d["rules"], d["english"], d.get("min_share", 0.05), d.get("max_forms", 4))

    # ----------------------------------------------------------------- candidates
    def _rule_form(self, lemma: str, upos: str, feats: str) -> Optional[str]:
        r = self.rules.get(f"{upos}\t{morph_key(parse_feats(feats))}")
        if not r:
            return None
        low = lemma.lower()
        for n in range(3, -1, -1):
            c = r.get(low[len(low) - n:]) if n <= len(low) else None
            if c:
                best = max(sorted(c), key=lambda e: c[e])
                strip, suf = best.split("\t")
                stem = lemma[:len(lemma) - int(strip)] if int(strip) else lemma
                return stem + suf
        return None

    def _en_form(self, lemma: str, upos: str, feats: str) -> Optional[str]:
        tag = _ptb_tag(upos, parse_feats(feats))
        if tag is None:
            return None
        if self._lemminflect is None:
            import lemminflect
            self._lemminflect = lemminflect
        out = self._lemminflect.getInflection(lemma, tag=tag)
        return out[0] if out else None

    def candidates(self, lemma: str, upos: str, xpos: str, feats: str) -> Tuple[List[str], str]:
        """Candidate forms of one token, best first, and the source that gave them.

        Returns (list of 1..max_forms distinct str, source in {"lexicon", "backoff", "rules",
        "lemminflect", "lemma"}).  English context rules add a/an, not/n't and contractions.
        """
        forms: List[str] = []
        source = "lemma"
        keys = self.keys(lemma, upos, xpos, feats)

        def from_table(k: str) -> List[str]:
            c = self.table.get(k)
            if not c:
                return []
            tot = sum(c.values())
            return [f for f, n in sorted(c.items(), key=lambda x: (-x[1], x[0]))
                    if n / tot >= self.min_share][:self.max_forms]

        for level, k in enumerate(keys[:2]):
            forms = from_table(k)
            if forms:
                source = "lexicon" if level == 0 else "backoff"
                break
        if not forms and self.english:
            f = self._en_form(lemma, upos, feats)
            if f:
                forms, source = [f], "lemminflect"
        if not forms:
            f = self._rule_form(lemma, upos, feats)
            if f:
                forms, source = [f], "rules"
        if not forms:
            forms = from_table(keys[2])
            source = "backoff" if forms else source
        if not forms:
            forms = [lemma]
        if self.english:
            extra = EN_CONTEXT.get(lemma.lower(), [])
            for f in list(forms):
                if f.lower() in EN_CONTRACT and upos == "AUX":
                    extra = extra + [EN_CONTRACT[f.lower()]]
            for f in extra:
                if f not in forms:
                    forms.append(f)
        return forms, source


# word beginnings spelt with a vowel but said with a consonant, and silent-h words
_A_BEFORE = ("uni", "use", "usu", "uti", "ure", "uro", "eu", "ewe", "one", "once", "ubiq", "ufo")
_AN_BEFORE = ("hour", "honest", "honor", "honour", "heir", "herb")
_AN_LETTERS = set("aefhilmnorsx")   # letter names said with a vowel first: "an FBI", "an MRI"


def article(next_word: str) -> str:
    """The English indefinite article before ``next_word``: "an" before a vowel sound, else "a".

    By spelling: vowel-spelt words said with a consonant ("a university", "a one") and a silent
    h ("an hour") come from prefix lists; an all-capital word of two to five letters is read
    letter by letter ("an FBI", "a CD"), and so is a single letter, alone or before a hyphen ("an
    X-ray"); a number by its spoken start ("an 8", "an 11", "an
    18,000").  A heuristic: the EWT training treebank's exceptions to it are mostly its writers'
    slips ("a answer", "an Nikon"), so none are learned.
    """
    w = next_word.strip("\"'“”‘’`(")
    if not w:
        return "a"
    low = w.lower()
    if w[0].isdigit():
        digits = "".join(ch for ch in w if ch.isdigit() or ch == ",").replace(",", "")
        if digits.startswith("8"):
            return "an"
        if digits[:2] in ("11", "18") and len(digits) in (2, 5, 8):
            return "an"
        return "a"
    if (1 < len(w) <= 5 and w.isupper() and w.isalpha()) or (w[0].isalpha() and (len(w) == 1 or w[1] == "-")):
        return "an" if low[0] in _AN_LETTERS else "a"   # read letter by letter: "an FBI", "an X-ray"
    if low.startswith(_AN_BEFORE):
        return "an"
    if low.startswith(_A_BEFORE):
        return "a"
    return "an" if low[0] in "aeiou" else "a"


def agree_articles(tokens: Sequence[str], lemmas: Sequence[str]) -> List[str]:
    """Make every a/an token agree with the next word that has a letter or digit
    (:func:`article`).

    tokens: output forms (list of n str); lemmas: the lemma of each (n str).  Tokens whose lemma
    is not a/an, and an article with no word after it, are kept; so is the case of the first
    letter.  Returns a new list of n str.
    """
    out = list(tokens)
    for j in range(len(out) - 1):
        t = out[j]
        if t.lower() not in ("a", "an") or lemmas[j].lower() not in ("a", "an"):
            continue
        k = j + 1
        while k < len(out) and not any(ch.isalnum() for ch in out[k]):
            k += 1
        if k == len(out):
            continue
        a = article(out[k])
        out[j] = a if t[:1].islower() else a[:1].upper() + a[1:]
    return out


def coverage(lex: Lexicon, sents: Sequence, lower: bool = True) -> dict:
    """Oracle coverage on UD sentences: share of tokens whose gold form is among the candidates.

    Returns {"tokens", "candidates_per_token", "coverage", "first_correct", "by_source"}; with
    ``lower`` the comparison ignores case (the SR metrics are computed on lower-cased text).
    """
    n = tot = hit = first = 0
    by_source: Counter = Counter()
    norm = (lambda x: x.lower()) if lower else (lambda x: x)
    for s in sents:
        for i in range(len(s)):
            if s.lemmas[i] == "_":
                continue
            cands, src = lex.candidates(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])
            n += 1
            tot += len(cands)
            by_source[src] += 1
            g = norm(s.forms[i])
            if any(norm(c) == g for c in cands):
                hit += 1
            if norm(cands[0]) == g:
                first += 1
    return {"tokens": n, "candidates_per_token": tot / max(1, n), "coverage": hit / max(1, n),
            "first_correct": first / max(1, n), "by_source": dict(by_source)}
