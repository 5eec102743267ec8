"""The CCG model as a parser of given strings (``Linearizer.parse``: edges combine only when
adjacent) and the bag search a CCG model names (GYRO's n-best reranked by its parses)."""
import random

import numpy as np
import pytest

from tests.conftest import ROOT
from wo.ccg.linearizer import Linearizer
from wo.cli import main

MODELS = ROOT / "corpora" / "models"
CCG_LM = MODELS / "wo-ewt-ccg-lm.wo"


@pytest.fixture(scope="module")
def ccg_own():
    return Linearizer.load(str(CCG_LM), bag_search="ccg")


def _sents(ccg_dev, n):
    return [d for d in ccg_dev if d.error is None and 4 <= len(d.words) <= 25][:n]


def test_parse_keeps_the_given_order_and_prefers_the_reference(ccg_own, ccg_dev):
    """The reference strings of EWT-CCG dev parse in their own order (a derivation whose leaves
    are the words as given); where a shuffle of the same words also parses, the model scores
    the reference higher in most pairs."""
    parsed = both = ref_better = 0
    sents = _sents(ccg_dev, 40)
    for i, d in enumerate(sents):
        w = list(d.words)
        r = ccg_own.parse(w)
        f = r.parsed_score()
        if f is not None:
            parsed += 1
            assert r.tokens == w and r.order == list(range(len(w)))
            assert [x.word for x in r.derivation.leaves()] == w and len(r.categories) == len(w)
        sh = w[:]
        random.Random(i).shuffle(sh)
        g = ccg_own.parse(sh).parsed_score()
        if f is not None and g is not None and sh != w:
            both += 1
            ref_better += f > g
    assert parsed >= 0.6 * len(sents)
    assert both >= 8 and ref_better >= 0.8 * both


def test_fixed_order_instances_are_checked(ccg_own):
    from wo.ccg.instance import make_instance

    inst = make_instance(["the", "dog", "barked"], [None] * 3, ccg_own.tables)
    with pytest.raises(ValueError, match="not a permutation"):
        ccg_own.core.decode(inst, 8, 100, tok_order=np.array([0, 0, 1], dtype=np.int32))


def test_shipped_ccg_model_orders_word_bags_with_its_bag_search(tmp_path, ccg_own, ccg_dev):
    """Bags of words without POS: the shipped CCG model names GYRO's n-best under the large
    4-gram, each string parsed by the model (``wo-ewt-ccg-lm.decode.json``); the output is a
    string of the bag with the model's derivation of it.  With POS, or ``--bag-search ccg``,
    the model's own search."""
    dflt = Linearizer.load(str(CCG_LM))
    assert dflt.bag is not None and ccg_own.bag is None
    changed = 0
    for d in _sents(ccg_dev, 12):
        w = list(d.words)
        random.Random(7).shuffle(w)
        r = dflt.linearize(w)
        assert sorted(r.tokens) == sorted(w) and [w[i] for i in r.order] == r.tokens
        assert [x.word for x in r.derivation.leaves()] == r.tokens and r.status == "ok"
        p = ccg_own.parse(r.tokens, budget_factor=dflt.bag.gyro.dep_budget)   # the parse that chose it
        assert p.parsed_score() is not None and p.score == pytest.approx(r.score)
        own = ccg_own.linearize(w)
        changed += own.tokens != r.tokens
        pos = list(d.pos)
        assert dflt.linearize(d.words, pos).tokens == ccg_own.linearize(d.words, pos).tokens
    assert changed >= 4
    src = tmp_path / "bags.txt"
    src.write_text("dog barked the loudly .\n", encoding="utf-8")
    for extra in ([], ["--bag-search", "ccg"]):
        out = tmp_path / "out.txt"
        assert main(["ccg", "linearize", "--input", str(src), "--output", str(out), "--quiet"] + extra) == 0
        assert sorted(out.read_text(encoding="utf-8").split()) == sorted("dog barked the loudly .".split())
