"""Inflection front end for shared-task input: candidate word forms per lemma.

Zhang & Clark 2015, section 5.7 (NLG 2011 shared task): each input lemma gets the set of word
forms it may take; a token with several candidates becomes one mutually exclusive group in the
search (exactly one member is used), so inflection is decided jointly with the order.  The
paper's candidate sets averaged 1.15 forms per token.

Sources of candidates, in order:

1. the **lexicon** learned from a training treebank: (lemma, UPOS, XPOS, FEATS) -> forms with
   counts, backed off to (lemma, UPOS, FEATS); forms seen with a share of at least
   ``min_share`` are candidates.  Works for any UD language from its treebank alone.
2. the language module's dictionary, where it has one (:mod:`wo.sr.lang`; English:
   lemminflect) for unseen lemma/feature combinations;
3. the **learned inflection model** (:mod:`wo.sr.morph`): edit-script classification over the
   lemma's suffixes and the features, language independent (models trained before it have the
   older per-(UPOS, FEATS) suffix rules instead);
4. the lexicon at (lemma, UPOS), then the lemma itself.
The language module adds the forms only the context decides (English: a/an, not/n't, the
contracted forms of be, have, will, would).

Case: forms are stored as they occur, except that a sentence-initial capital is removed unless
the lemma itself is capitalised (proper nouns, "I"); sentence-initial capitalisation is
restored on output.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from .feats import TASK_FEATS, feats_key, morph_key, parse_feats  # noqa: F401  (re-exported)

CANDIDATE_CACHE = 1 << 18   # memoised candidate sets per Lexicon (Lexicon.candidates)


def _edit(lemma: str, form: str) -> Tuple[int, str]:
    """The lemma -> form edit as (characters stripped from the lemma's end, suffix added)."""
    i = 0
    while i < min(len(lemma), len(form)) and lemma[i] == form[i]:
        i += 1
    return len(lemma) - i, form[i:]


class Lexicon:
    """Candidate forms for (lemma, UPOS, XPOS, FEATS), learned from a treebank.

    ``table``: dict key -> Counter(form -> count) at three back-off levels (:meth:`keys`);
    ``inflector``: the learned edit-script classifier (:class:`wo.sr.morph.EditInflector`) for
    combinations the table lacks; ``rules``: the suffix rules of models trained before the
    edit-script classifier (dict (UPOS, FEATS) -> dict lemma ending (0-3 characters) ->
    Counter((strip, suffix))), used only when a model has no ``inflector``; ``lang``: ISO 639-1
    code selecting the language module (:func:`wo.sr.lang.language`); ``allomorphs``: the
    :class:`Allomorphs` table (None in models trained before it); ``context``: the
    :class:`FormContext` model (None in models trained before it); ``context_next``: while a
    model trains, the same with the next-initial templates (the trainer keeps one of the two).
    Build with :meth:`build`; store with :meth:`to_json` / :meth:`from_json` (model header).
    """

    def __init__(self, table: Dict[str, Dict[str, int]], rules: Optional[Dict[str, Dict[str, Dict[str, int]]]],
                 lang: Optional[str], min_share: float = 0.05, max_forms: int = 4, inflector=None,
                 inflect_k: int = 2, allomorphs: Optional["Allomorphs"] = None,
                 context: Optional["FormContext"] = None, context_next: Optional["FormContext"] = None):
        from .lang import language

        self.table = table
        self.rules = rules or {}
        self.lang = lang or "xx"
        self.language = language(self.lang)
        self.min_share = min_share
        self.max_forms = max_forms
        self.inflector = inflector
        self.inflect_k = inflect_k
        self.allomorphs = allomorphs
        self.context = context
        self.context_next = context_next
        self._cand_cache: Dict[tuple, Tuple[List[str], str]] = {}   # :meth:`candidates`

    @property
    def english(self) -> bool:
        """True for an English model (the English language module applies)."""
        return self.lang == "en"

    # ----------------------------------------------------------------- building
    @staticmethod
    def keys(lemma: str, upos: str, xpos: str, feats: str) -> List[str]:
        """Back-off keys, most specific first."""
        m = feats_key(feats)
        return [f"{lemma}\t{upos}\t{xpos}\t{m}", f"{lemma}\t{upos}\t\t{m}", f"{lemma}\t{upos}"]

    @staticmethod
    def surface(form: str, lemma: str, index: int) -> str:
        """The form as stored: sentence-initial capitals removed unless the lemma has one."""
        if index == 0 and form[:1].isupper() and not lemma[:1].isupper() and not (
                len(form) > 1 and form.isupper()):   # acronyms keep their case
            low = form[:1].lower()
            if len(low) > 1:   # Turkish İ lower-cases to i + combining dot
                low = low[:1]
            return low + form[1:]
        return form

    @classmethod
    def build(cls, sents: Iterable, lang: Optional[str] = None, min_share: float = 0.05,
              english: Optional[bool] = None, learned: bool = True, context: bool = False) -> "Lexicon":
        """Learn the lexicon and the inflection model from UD sentences (:class:`wo.io.Sentence`).

        lang: ISO 639-1 code of the language module (``english=True`` is the older spelling of
        ``lang="en"``); learned: the edit-script classifier (:mod:`wo.sr.morph`), else the
        older suffix rules.  The allomorph table (:class:`Allomorphs`) is counted from the same
        sentences; with ``context`` the context model of the forms (:class:`FormContext`) is
        trained on them too, without and with the next-initial templates (``context`` and
        ``context_next``; pt_bosque, 7,018 sentences: 2.0 s each on top of 1.8 s).  Built with
        the cyclic garbage collector paused (:func:`wo.learn.collector_paused`: its tables are
        hundreds of thousands of dicts)."""
        from ..learn import collector_paused

        with collector_paused():
            return cls._build(sents, lang, min_share, english, learned, context)

    @classmethod
    def _build(cls, sents: Iterable, lang: Optional[str], min_share: float, english: Optional[bool],
               learned: bool, context: bool = False) -> "Lexicon":
        from .lang import language
        from .morph import build_inflector

        if english is not None and lang is None:
            lang = "en" if english else None
        sents = list(sents)
        to_inf = language(lang).to_inflector   # the inflection model's alphabet (Korean: jamo)
        table: Dict[str, Dict[str, int]] = defaultdict(dict)   # dicts, not Counters: 200k of them
        rules: Dict[str, Dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
        examples, sentence = [], []
        for si, s in enumerate(sents):
            for i in range(len(s)):
                lemma, form = s.lemmas[i], s.forms[i]
                if lemma == "_" or not form:
                    continue
                f = cls.surface(form, lemma, i)
                for k in cls.keys(lemma, s.upos[i], s.xpos[i], s.feats[i]):
                    c = table[k]
                    c[f] = c.get(f, 0) + 1
                mk = feats_key(s.feats[i])
                if learned:
                    examples.append((to_inf(lemma), s.upos[i], mk, to_inf(f)))
                    sentence.append(si)
                    continue
                strip, suf = _edit(lemma.lower(), f.lower())
                rk = f"{s.upos[i]}\t{mk}"
                for n in range(0, 4):
                    if n <= len(lemma):
                        rules[rk][lemma.lower()[len(lemma) - n:]][f"{strip}\t{suf}"] += 1
        table = {k: dict(v) for k, v in table.items()}
        return cls(table, {k: {e: dict(c) for e, c in v.items()} for k, v in rules.items()},
                   lang, min_share, inflector=build_inflector(examples, sentence) if learned else None,
                   allomorphs=Allomorphs.build(sents), context=FormContext.build(sents, table) if context else None,
                   context_next=FormContext.build(sents, table, next_initial=True) if context else None)

    def to_json(self) -> dict:
        """JSON-serialisable form (stored in the model header)."""
        d = {"table": self.table, "english": self.english, "lang": self.lang,
             "min_share": self.min_share, "max_forms": self.max_forms}
        if self.allomorphs is not None:
            d["allomorphs"] = self.allomorphs.to_json()
        if self.context is not None:
            d["context"] = self.context.to_json()
        if self.context_next is not None:
            d["context_next"] = self.context_next.to_json()
        if self.inflector is not None:
            d["inflector"] = self.inflector.to_json()
            d["inflect_k"] = self.inflect_k
        else:
            d["rules"] = self.rules
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Lexicon":
        """Inverse of :meth:`to_json` (models without ``lang`` have ``english``)."""
        from .morph import EditInflector

        lang = d.get("lang") or ("en" if d.get("english") else None)
        inf = EditInflector.from_json(d["inflector"]) if "inflector" in d else None
        allo = Allomorphs.from_json(d["allomorphs"]) if "allomorphs" in d else None
        ctx = FormContext.from_json(d["context"]) if "context" in d else None
        nxt = FormContext.from_json(d["context_next"]) if "context_next" in d else None
        return cls(d["table"], d.get("rules"), lang, d.get("min_share", 0.05), d.get("max_forms", 4),
                   inflector=inf, inflect_k=d.get("inflect_k", 2), allomorphs=allo, context=ctx, context_next=nxt)

    # ----------------------------------------------------------------- candidates
    def _rule_form(self, lemma: str, upos: str, feats: str) -> Optional[str]:
        r = self.rules.get(f"{upos}\t{feats_key(feats)}")
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

    def candidates(self, lemma: str, upos: str, xpos: str, feats: str) -> Tuple[List[str], str]:
        """Candidate forms of one token, best first, and the source that gave them.

        Returns (list of 1..max_forms distinct str, source in {"lexicon", "backoff", "learned",
        "rules", "dictionary", "lemma"}); the language module may add context forms (English:
        a/an, not/n't, contractions).  Memoised per token fields, language module and inflector
        weights (at most CANDIDATE_CACHE entries): a corpus repeats its tokens, training decodes
        dev every epoch.
        """
        inf = self.inflector
        ck = (lemma, upos, xpos, feats, id(self.language), id(inf), inf.char_weight if inf is not None else None,
              inf.alt_penalty if inf is not None else None, inf.tier_weight if inf is not None else None)
        cache = self._cand_cache
        hit = cache.get(ck)
        if hit is None:
            if len(cache) >= CANDIDATE_CACHE:
                cache.clear()
            hit = cache[ck] = self._candidates(lemma, upos, xpos, feats)
        return list(hit[0]), hit[1]

    def _candidates(self, lemma: str, upos: str, xpos: str, feats: str) -> Tuple[List[str], str]:
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
        if not forms:
            f = self.language.inflect(lemma, upos, feats)
            if f:
                forms, source = [f], "dictionary"
        if not forms and self.inflector is not None:
            lg = self.language
            forms = [lg.from_inflector(x) for x in self.inflector.predict(lg.to_inflector(lemma), upos, feats_key(feats),
                                                                            k=self.inflect_k)]
            source = "learned" if forms else source
        elif not forms:
            f = self._rule_form(lemma, upos, feats)
            if f:
                forms, source = [f], "rules"
        if not forms:
            forms = from_table(keys[2])
            source = "backoff" if forms else source
        if not forms:
            forms = [lemma]
        for f in self.language.extra_candidates(lemma, upos, list(forms)):
            if f not in forms:
                forms.append(f)
        return forms, source


class Allomorphs:
    """Forms chosen by their neighbours: for each (lemma, UPOS, FEATS) that takes several forms
    in the training treebank, how often each (lower-cased) form follows a word ending in a
    character and precedes a word starting with one (elision and euphony: fr *le/l'*, it
    *lo/il/l'*, el *τη/την*, the vowel harmony of Turkish clitics *mi/mı/mu*; learned, no
    language is special-cased).

    ``prev``/``next``: dict key -> dict character -> dict form -> count (key: the lexicon's
    ``lemma\tUPOS\t\tFEATS``, :meth:`Lexicon.keys`; character: the neighbour's last/first
    character lower-cased, ``<s>``/``</s>`` at the sentence boundaries; in ``prev`` also the previous word's last vowel,
    ``~`` + vowel, :meth:`last_vowel`); ``total``: dict key ->
    dict form -> count.  :meth:`score` is the log10 ratio p(form | key, character) / p(form |
    key), the context's evidence alone (the candidate order and the LM already carry the
    prior), with p(form | key, c) = (n(c, form) + p(form | key)) / (n(c) + 1).
    Build with :meth:`build`; JSON with :meth:`to_json` / :meth:`from_json` (in the lexicon).
    """

    BOS, EOS = "<s>", "</s>"

    def __init__(self, prev: Dict[str, Dict[str, Dict[str, int]]], nxt: Dict[str, Dict[str, Dict[str, int]]],
                 total: Dict[str, Dict[str, int]]):
        self.prev, self.next, self.total = prev, nxt, total
        self._memo: Dict[Tuple[str, str, str, str], float] = {}   # score()'s results

    def __contains__(self, key: str) -> bool:
        return key in self.total

    def __len__(self) -> int:
        return len(self.total)

    @classmethod
    def build(cls, sents: Iterable, vowels: bool = False) -> "Allomorphs":
        """Count from UD sentences (:class:`wo.io.Sentence`, syntactic words; tokens with lemma
        ``_`` are skipped as keys but count as neighbours); only keys with at least two distinct
        lower-cased forms are kept.  ``vowels``: count the previous word's last vowel too (a
        per-treebank choice made on dev: tr dev BLEU 61.40 -> 61.91 with it, fr_partut 84.13 ->
        83.91)."""
        def add(table: dict, ctx: str, f: str) -> None:
            c = table.setdefault(ctx, {})
            c[f] = c.get(f, 0) + 1

        seen = []   # (key, form, sentence, position) of every counted token
        total: Dict[str, Dict[str, int]] = {}
        for s in sents:
            for i in range(len(s)):
                lemma = s.lemmas[i]
                if lemma == "_" or not s.forms[i]:
                    continue
                k = Lexicon.keys(lemma, s.upos[i], s.xpos[i], s.feats[i])[1]
                f = Lexicon.surface(s.forms[i], lemma, i).lower()
                add(total, k, f)
                seen.append((k, f, s, i))
        keep = {k: None for k, c in total.items() if len(c) > 1}   # the table's order is the data's
        prev: Dict[str, Dict[str, Dict[str, int]]] = {k: {} for k in keep}
        nxt: Dict[str, Dict[str, Dict[str, int]]] = {k: {} for k in keep}
        for k, f, s, i in seen:     # the contexts of the kept keys only
            if k not in keep:
                continue
            add(prev[k], s.forms[i - 1][-1:].lower() if i > 0 else cls.BOS, f)
            v = cls.last_vowel(s.forms[i - 1]) if vowels and i > 0 else None
            if v is not None:
                add(prev[k], v, f)
            add(nxt[k], s.forms[i + 1][:1].lower() if i + 1 < len(s) else cls.EOS, f)
        return cls(prev, nxt, {k: total[k] for k in keep})

    @staticmethod
    def last_vowel(word: str) -> Optional[str]:
        """The context key of a word's last vowel (:data:`wo.sr.morph.VOWELS`, lower-cased),
        ``"~"`` + vowel, or None for a word without one.  Vowel harmony reaches past the last
        character: tr *kitap mı* / *ev mi* both end in a consonant."""
        from .morph import VOWELS

        for ch in reversed(word.lower()):
            if ch in VOWELS:
                return "~" + ch
        return None

    def to_json(self) -> dict:
        """JSON-serialisable form."""
        return {"prev": self.prev, "next": self.next, "total": self.total}

    @classmethod
    def from_json(cls, d: dict) -> "Allomorphs":
        """Inverse of :meth:`to_json`."""
        return cls(d["prev"], d["next"], d["total"])

    def score(self, key: str, form: str, char: str, side: str) -> float:
        """log10 p(form | key, neighbour character) - log10 p(form | key); side "prev" (char:
        the preceding word's last character, or BOS) or "next" (the following word's first
        character, or EOS).  0.0 for a key with one form.  Memoised (the choice of forms asks
        the same question for every hypothesis of its beam)."""
        q = (key, form, char, side)
        got = self._memo.get(q)
        if got is None:
            if len(self._memo) >= self.MEMO:
                self._memo.clear()
            got = self._memo[q] = self._score(key, form, char, side)
        return got

    MEMO = 1 << 20   # memoised scores kept at most (then the memo starts again)

    def _score(self, key: str, form: str, char: str, side: str) -> float:
        """:meth:`score` without the memo."""
        tot = self.total.get(key)
        if tot is None:
            return 0.0
        form = form.lower()
        n = sum(tot.values())
        base = (tot.get(form, 0) + 0.1) / (n + 0.1 * (len(tot) + 1))
        t = (self.prev if side == "prev" else self.next)[key].get(char)
        if not t:
            return 0.0
        return math.log10((t.get(form, 0) + base) / (sum(t.values()) + 1.0)) - math.log10(base)


class FormContext:
    """Forms chosen by their context in the realised sentence: a linear model scoring each
    candidate form of a token against its neighbours' lemmas and UPOS, its relation and the
    side of its head (Japanese *行く* is *行っ* before *た*, *行き* before *ます*, *行か* before
    *ない*; Greek *τη/την*; Turkish clitics), trained as an averaged perceptron (Collins 2002)
    over the training tokens whose (lemma, UPOS, FEATS) takes several forms, in reference
    order.  Each feature pairs the candidate with one context, either as the form itself or
    as its edit script from the lemma with the token's UPOS (:func:`wo.sr.morph.edit_script`),
    so that it reaches lemmas the table has not seen with that context.

    ``weights``: dict feature string -> float (averaged weight; the template id first, the
    parts joined by U+001F); ``next_initial``: two more templates, the form and the script each
    with the next lemma's first character (elision and euphony: fr *le/l'*, el *τη/την*; chosen
    per treebank on dev).  :meth:`scores` gives per output position one score per candidate
    (perceptron units; the realiser adds ``context_weight`` x it to the choice of forms,
    :func:`wo.sr.realizer.choose_forms`).  Build with :meth:`build`; JSON with :meth:`to_json`.
    Raises nothing of its own (a malformed JSON form raises KeyError in :meth:`from_json`).
    """

    EPOCHS = 5
    WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)   # the weights a dev set chooses among (wo.sr.tune.tune_context)

    def __init__(self, weights: Dict[str, float], next_initial: bool = False):
        self.weights = weights
        self.next_initial = next_initial

    def __len__(self) -> int:
        return len(self.weights)

    @staticmethod
    def contexts(lemmas: Sequence[str], upos: Sequence[str], deprels: Sequence[str],
                 head_pos: Sequence[int]) -> List[Tuple[str, ...]]:
        """Per position of a realised sentence (all sequences in output order; head_pos: the
        head's output position, -1 for the root), its context atoms: next lemma, next UPOS,
        the lemma after it, previous lemma, previous UPOS, relation with the head's UPOS and
        side (lemmas lower-cased)."""
        n = len(lemmas)
        low = [x.lower() for x in lemmas]
        out = []
        for i in range(n):
            h = head_pos[i]
            hd = "ROOT" if h < 0 else upos[h] + ("<" if h > i else ">")
            out.append((low[i + 1] if i + 1 < n else "</s>", upos[i + 1] if i + 1 < n else "</s>",
                        low[i + 2] if i + 2 < n else "</s>", low[i - 1] if i else "<s>",
                        upos[i - 1] if i else "<s>", deprels[i] + "\x1f" + hd))
        return out

    @staticmethod
    def features(lemma: str, upos: str, form: str, rank: int, ctx: Tuple[str, ...],
                 next_initial: bool = False) -> List[str]:
        """The feature strings of candidate ``form`` (lower-cased; ``rank``: its place in the
        candidate list) of a token with ``lemma`` and ``upos`` in context ``ctx``
        (:meth:`contexts`); next_initial: with the two next-initial templates."""
        from .morph import edit_script

        nl, nu, n2, pl, pu, rel = ctx
        sc = upos + "\x1f" + (edit_script(lemma.lower(), form) or "?")
        extra = ["fn1\x1f" + form + "\x1f" + nl[:1], "sn1\x1f" + sc + "\x1f" + nl[:1]] if next_initial else []
        return extra + ["r\x1f" + str(min(rank, 3)), "f\x1f" + form, "s\x1f" + sc,
                "fnl\x1f" + form + "\x1f" + nl, "fnu\x1f" + form + "\x1f" + nu, "fpl\x1f" + form + "\x1f" + pl,
                "fpu\x1f" + form + "\x1f" + pu, "frl\x1f" + form + "\x1f" + rel,
                "fn2\x1f" + form + "\x1f" + nl + "\x1f" + n2,
                "snl\x1f" + sc + "\x1f" + nl, "snu\x1f" + sc + "\x1f" + nu, "spu\x1f" + sc + "\x1f" + pu,
                "srl\x1f" + sc + "\x1f" + rel, "sn2\x1f" + sc + "\x1f" + nl + "\x1f" + n2]

    def score(self, lemma: str, upos: str, form: str, rank: int, ctx: Tuple[str, ...]) -> float:
        """w . phi of one candidate (see :meth:`features`)."""
        w = self.weights
        return sum(w.get(f, 0.0) for f in self.features(lemma, upos, form, rank, ctx, self.next_initial))

    def scores(self, lemmas: Sequence[str], upos: Sequence[str], deprels: Sequence[str],
               head_pos: Sequence[int], cands: Sequence[Sequence[str]]) -> List[List[float]]:
        """Per output position, the score of each of its candidate forms (``cands``: lists of
        str, best first; the other sequences as :meth:`contexts`).  A position with one
        candidate gets [0.0]."""
        ctxs = self.contexts(lemmas, upos, deprels, head_pos)
        return [[self.score(lemmas[i], upos[i], f.lower(), r, ctxs[i]) for r, f in enumerate(c)] if len(c) > 1
                else [0.0] * len(c) for i, c in enumerate(cands)]

    @classmethod
    def build(cls, sents: Iterable, table: Dict[str, Dict[str, int]], min_share: float = 0.0,
              max_forms: int = 8, epochs: int = EPOCHS, seed: int = 1, next_initial: bool = False) -> "FormContext":
        """Train on UD sentences (:class:`wo.io.Sentence`, reference order): every token whose
        lexicon key (:meth:`Lexicon.keys` [1]) has at least two forms in ``table`` (the
        lexicon's table) is an instance, its candidates those forms lower-cased, by frequency,
        as the lexicon offers them (at least ``min_share`` of the key's count, at most
        ``max_forms``; tokens whose form is not among them are left out).  ``epochs`` passes of
        the averaged perceptron over a shuffle fixed by ``seed``; next_initial: see the class."""
        import random

        ids: Dict[str, int] = {}   # feature string -> index into the weight lists
        insts = []
        for s in sents:
            n = len(s)
            head_pos = [h - 1 for h in s.heads]
            ctxs = None
            for i in range(n):
                if s.lemmas[i] == "_" or not s.forms[i]:
                    continue
                c = table.get(Lexicon.keys(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])[1])
                if not c:
                    continue
                forms: Dict[str, int] = {}
                for f, k in c.items():
                    forms[f.lower()] = forms.get(f.lower(), 0) + k
                if len(forms) < 2:
                    continue
                tot = sum(forms.values())
                cand = [f for f in sorted(forms, key=lambda f: (-forms[f], f)) if forms[f] >= min_share * tot][:max_forms]
                gold = Lexicon.surface(s.forms[i], s.lemmas[i], i).lower()
                if len(cand) < 2 or gold not in cand:
                    continue
                if ctxs is None:
                    ctxs = cls.contexts(s.lemmas, s.upos, s.deprels, head_pos)
                feats = [[ids.setdefault(x, len(ids))
                          for x in cls.features(s.lemmas[i], s.upos[i], f, r, ctxs[i], next_initial)]
                         for r, f in enumerate(cand)]
                insts.append((cand.index(gold), feats))
        w = [0.0] * len(ids)
        u = [0.0] * len(ids)
        get = w.__getitem__
        step = 1
        order = list(range(len(insts)))
        rng = random.Random(seed)
        for _ in range(epochs):
            rng.shuffle(order)
            for j in order:
                g, feats = insts[j]
                best, top = 0, None
                for r, fs in enumerate(feats):   # the first of equal scores (the more frequent form)
                    v = sum(map(get, fs))
                    if top is None or v > top:
                        best, top = r, v
                if best != g:
                    for f in feats[g]:
                        w[f] += 1.0
                        u[f] += step
                    for f in feats[best]:
                        w[f] -= 1.0
                        u[f] -= step
                step += 1
        # one decimal: pt_gsd's 343k weights compress to 2.1 MB instead of 2.6, dev BLEU 72.51 -> 72.50
        avg = {x: round(w[k] - u[k] / step, 1) for x, k in ids.items()}
        return cls({x: v for x, v in avg.items() if v}, next_initial)

    @classmethod
    def choose(cls, lexicon: "Lexicon", variants: Dict[bool, Optional["FormContext"]],
               dev_bleu: Callable[[float], float]) -> Tuple[float, bool, Dict[Tuple[float, bool], float]]:
        """The context model and weight a dev set chooses (:func:`wo.sr.tune.tune_context`, the
        bench's ``context`` step): each variant (keyed by ``next_initial``; None skipped) is set
        as ``lexicon.context`` and ``dev_bleu(weight)`` scores it at every weight of WEIGHTS
        (weight 0 once: the model is not read there); the best by dev BLEU, on ties the one
        without the next-initial templates, then the smaller weight, is left in
        ``lexicon.context``.  Returns (weight, next_initial, grid {(weight, next_initial): dev
        BLEU}).  Raises ValueError when every variant is None."""
        grid: Dict[Tuple[float, bool], float] = {}
        for ni, fc in variants.items():
            if fc is None:
                continue
            lexicon.context = fc
            for wt in cls.WEIGHTS:
                zero = [v for (w, _), v in grid.items() if w == 0.0]
                grid[(wt, ni)] = zero[0] if wt == 0.0 and zero else dev_bleu(wt)
        if not grid:
            raise ValueError("no context model to choose")
        best, ni = max(grid, key=lambda x: (grid[x], not x[1], -x[0]))
        lexicon.context = variants[ni]
        return best, ni, grid

    def to_json(self) -> dict:
        """JSON-serialisable form."""
        return {"weights": self.weights, **({"next_initial": True} if self.next_initial else {})}

    @classmethod
    def from_json(cls, d: dict) -> "FormContext":
        """Inverse of :meth:`to_json`."""
        return cls(d["weights"], bool(d.get("next_initial", False)))


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
