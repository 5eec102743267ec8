"""Forms chosen by their neighbours (wo.sr.inflect.Allomorphs), learned from a real treebank:
English a/an from the EWT training file, no rule written."""
import os

import pytest

from wo.io import read_conllu
from wo.sr.inflect import Allomorphs, Lexicon
from wo.sr.forms import choose_forms

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EWT_TRAIN = os.path.join(ROOT, "corpora", "ud-en-ewt", "en_ewt-ud-train.conllu.xz")


@pytest.fixture(scope="module")
def ewt_allomorphs():
    return Allomorphs.build(read_conllu(EWT_TRAIN)[:3000])


def _key(lemma, upos, feats):
    return Lexicon.keys(lemma, upos, "", feats)[1]


def test_article_form_follows_the_next_word(ewt_allomorphs):
    a = _key("a", "DET", "Definite=Ind|PronType=Art")
    assert a in ewt_allomorphs and {"a", "an"} <= set(ewt_allomorphs.total[a])
    assert ewt_allomorphs.score(a, "an", "e", "next") > 0.3 > -0.3 > ewt_allomorphs.score(a, "a", "e", "next")
    assert ewt_allomorphs.score(a, "a", "d", "next") > 0 > ewt_allomorphs.score(a, "an", "d", "next")
    # a key with one form, or an unseen character, gives no evidence
    assert ewt_allomorphs.score(_key("dog", "NOUN", "Number=Sing"), "dog", "a", "prev") == 0.0
    assert ewt_allomorphs.score(a, "an", "\u4e00", "next") == 0.0


def test_choose_forms_uses_the_evidence_without_an_lm(ewt_allomorphs):
    a = _key("a", "DET", "Definite=Ind|PronType=Art")
    keys = [a, _key("apple", "NOUN", "Number=Sing")]
    cands = [["a", "an"], ["apple"]]
    assert choose_forms(None, cands, 0.5, keys=keys, allomorphs=ewt_allomorphs, allomorph_weight=0.0) == ["a", "apple"]
    assert choose_forms(None, cands, 0.5, keys=keys, allomorphs=ewt_allomorphs, allomorph_weight=2.0) == ["an", "apple"]
    keys2 = [a, _key("dog", "NOUN", "Number=Sing")]
    assert choose_forms(None, [["an", "a"], ["dog"]], 0.5, keys=keys2, allomorphs=ewt_allomorphs,
                        allomorph_weight=2.0) == ["a", "dog"]


def test_json_round_trip_in_the_lexicon(ewt_allomorphs):
    lex = Lexicon({}, None, "en", allomorphs=ewt_allomorphs)
    back = Lexicon.from_json(lex.to_json())
    a = _key("a", "DET", "Definite=Ind|PronType=Art")
    assert back.allomorphs.score(a, "an", "e", "next") == ewt_allomorphs.score(a, "an", "e", "next")
    assert Lexicon.from_json(Lexicon({}, None, "en").to_json()).allomorphs is None
