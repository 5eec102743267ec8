import numpy as np
import pytest

from wo.dep.core import DepSearch
import dataclasses

from wo.model import TagDictionary
from wo.io import is_projective, projectivize, scramble
from wo.dep.instance import make_instance
from wo.dep.linearizer import Linearizer, given_for, linearize_many
from wo.dep.train import training_instances
from tests.conftest import ROOT


def test_forced_decoding_reaches_every_projective_dev_tree(ewt_dev, ewt_train_slice):
    td = TagDictionary.build(ewt_train_slice)
    core = DepSearch(np.zeros(1 << 12, dtype=np.float32), 12)
    checked = 0
    for i, s in enumerate(ewt_dev):
        if not is_projective(s.heads):
            continue
        sc, perm = scramble(s, 5, i)
        sc.meta["_gold_pos"] = [int(p) for p in perm]
        inst = make_instance(sc.forms, [None] * len(sc), [-1] * len(sc), td, gold=sc)
        reached, order, heads, _ = core.forced(*inst.arrays(), inst.gold, 10 ** 7)
        assert reached, s.sent_id
        toks = [int(inst.canon[inst.leaf_tok[leaf]]) for leaf in order]
        assert [sc.forms[t] for t in toks] == s.forms
        # recognised tree equals the reference tree
        for c in range(inst.n):
            g = inst.gold[0][c]
            assert heads[c] == g
        checked += 1
    assert checked > 1900


def test_projectivized_nonprojective_dev_trees_are_reachable_and_keep_every_word(ewt_dev, ewt_train_slice):
    td = TagDictionary.build(ewt_train_slice)
    core = DepSearch(np.zeros(1 << 12, dtype=np.float32), 12)
    nonproj = [(i, s) for i, s in enumerate(ewt_dev) if not is_projective(s.heads)]
    assert len(nonproj) >= 20
    for i, s in enumerate(ewt_dev[:200]):
        if is_projective(s.heads):
            assert projectivize(s.heads) == s.heads
    for i, s in nonproj:
        lifted = projectivize(s.heads)
        assert is_projective(lifted)
        for d, (old, new) in enumerate(zip(s.heads, lifted)):
            if old != new:  # a lifted word hangs from an ancestor of its old head
                a = old
                while a not in (0, new):
                    a = s.heads[a - 1]
                assert a == new, (s.sent_id, d)
        sc, perm = scramble(dataclasses.replace(s, heads=lifted), 5, i)
        sc.meta["_gold_pos"] = [int(p) for p in perm]
        inst = make_instance(sc.forms, [None] * len(sc), [-1] * len(sc), td, gold=sc)
        reached, order, _, _ = core.forced(*inst.arrays(), inst.gold, 10 ** 7)
        assert reached, s.sent_id
        assert [sc.forms[int(inst.canon[inst.leaf_tok[leaf]])] for leaf in order] == s.forms


@pytest.mark.slow
@pytest.mark.parametrize("given", ["none", "pos", "heads", "full"])
def test_outputs_are_permutations_that_keep_given_pos_and_heads(model_path, ewt_dev, given):
    lin = Linearizer.load(model_path, budget_factor=10)
    for i, s in enumerate(ewt_dev[:60]):
        sc, _ = scramble(s, 1, i)
        pos, heads = given_for(sc, given, 1.0, 1.0, 1, i)
        r = lin.linearize(sc.forms, pos, heads)
        assert sorted(r.order) == list(range(len(sc)))
        assert sorted(r.tokens) == sorted(sc.forms)
        assert sum(1 for h in r.heads if h == 0) == 1
        where = {orig: j for j, orig in enumerate(r.order)}
        for j, orig in enumerate(r.order):
            if pos[orig] is not None:
                assert r.pos[j] == pos[orig]
            if heads[orig] == 0:
                assert r.heads[j] == 0
            elif heads[orig] > 0:
                assert r.heads[j] == where[heads[orig] - 1] + 1
        if given == "full" and r.status == "ok":
            # projective output tree
            arcs = [(min(j + 1, h), max(j + 1, h)) for j, h in enumerate(r.heads) if h > 0]
            assert not any(a < c < b < d for a, b in arcs for c, d in arcs)


def test_partial_constraints_respected(model_path, ewt_dev):
    lin = Linearizer.load(model_path, budget_factor=10)
    for i, s in enumerate(ewt_dev[100:140]):
        sc, _ = scramble(s, 3, i)
        pos, heads = given_for(sc, "full", 0.5, 0.5, 3, i)
        r = lin.linearize(sc.forms, pos, heads)
        where = {orig: j for j, orig in enumerate(r.order)}
        for j, orig in enumerate(r.order):
            if pos[orig] is not None:
                assert r.pos[j] == pos[orig]
            if heads[orig] > 0:
                assert r.heads[j] == where[heads[orig] - 1] + 1


@pytest.mark.slow
def test_same_output_for_jobs_1_and_2_and_for_two_shuffles(model_path, ewt_dev):
    sents = ewt_dev[200:260]
    a = [(scramble(s, 1, i)[0].forms, None, None) for i, s in enumerate(sents)]
    b = [(scramble(s, 99, i)[0].forms, None, None) for i, s in enumerate(sents)]
    r1 = linearize_many(model_path, a, jobs=1, chunk=16, budget_factor=10)
    r2 = linearize_many(model_path, a, jobs=2, chunk=16, budget_factor=10)
    r3 = linearize_many(model_path, b, jobs=1, chunk=16, budget_factor=10)
    assert [r.text for r in r1] == [r.text for r in r2]
    assert [r.heads for r in r1] == [r.heads for r in r2]
    assert [r.text for r in r1] == [r.text for r in r3]


@pytest.mark.slow
def test_training_lowers_violations_per_epoch(ewt_train_slice):
    td = TagDictionary.build(ewt_train_slice)
    insts, _ = training_instances(ewt_train_slice[:150], td)
    W = np.zeros(1 << 18, dtype=np.float32)
    U = np.zeros(1 << 18)
    core = DepSearch(W, 18, U)
    per_epoch, reached = [], []
    for _ in range(3):
        u0, ok = core.n_updates, 0
        for inst in insts:
            r, _, _ = core.train_one(*inst.arrays(), inst.gold, 4 * inst.n, 30 * inst.n)
            core.avg_count += 1
            ok += r
        per_epoch.append(core.n_updates - u0)
        reached.append(ok)
    assert per_epoch[2] < per_epoch[0]
    assert reached[2] > reached[0]
    assert np.abs(W).sum() > 0


def test_goal_patience_returns_a_goal_scored_at_least_as_high(model_path, ewt_dev):
    from wo.dep.instance import make_instance as mk
    from wo.dep.linearizer import Linearizer as Lin, decode_instance

    lin = Lin.load(model_path)
    better = 0
    for i, s in enumerate(ewt_dev[:150]):
        sc, _ = scramble(s, 1, i)
        pos, heads = given_for(sc, "full", 1.0, 1.0, 1, i)
        inst = mk(sc.forms, pos, heads, lin.model.tagdict)
        n = len(sc)
        a = decode_instance(lin.core, inst, 32 * n, 1000 * n, 0.0, 32, 0)
        b = decode_instance(lin.core, inst, 32 * n, 1000 * n, 0.0, 32, 100 * n)
        if a[4] == "ok":
            assert b[4] == "ok" and b[3] >= a[3] - 1e-9
            better += b[3] > a[3] + 1e-9
        assert sorted(b[1]) == list(range(n))
    assert better >= 5   # the first goal popped is often not the best one


@pytest.mark.parametrize("name", ["wo-ewt-dep.wo", "wo-ewt-dep-lm.wo"])
def test_decoding_score_cache_changes_no_output_and_no_edge_score(name, model_path, ewt_dev):
    """Decoding sums each action's template blocks from caches (wo._fast._dep: hashed block
    scores, dense (h, m, dir, dist) and POS-triple caches; wo._fast._lmfeat: LM boundary
    values).  With the caches off every action is hashed afresh: the outputs must not change,
    and the returned edge's score must equal its derivation rescored from scratch."""
    path = ROOT / "corpora" / "models" / name
    lin = Linearizer.load(str(path) if path.exists() else model_path, budget_factor=10)
    srch = lin.core.search
    on, off = [], []
    for i, s in enumerate(ewt_dev[300:325]):
        sc, _ = scramble(s, 5, i)
        for flag, out in ((True, on), (False, off)):
            srch.score_cache = flag
            r = lin.linearize(sc.forms)
            out.append(list(r.order))
            stored, fresh = srch.derivation_score(srch.last_goal)
            assert abs(stored - fresh) <= 1e-9 * max(1.0, abs(fresh)), (i, flag, stored, fresh)
    srch.score_cache = True
    assert on == off


def test_score_cache_fallbacks_on_a_long_bag(model_path, ewt_dev):
    """A bag of 150+ words has more than 256 leaves (POS candidates): the dense arc cache is
    off and the hashed one takes the arc block; outputs and edge scores must not change."""
    words = []
    for s in ewt_dev[400:]:
        words += s.forms
        if len(words) >= 150:
            break
    lin = Linearizer.load(model_path, budget_factor=1, complete_beam=2)
    srch = lin.core.search
    outs = []
    for flag in (True, False):
        srch.score_cache = flag
        r = lin.linearize(words)
        outs.append(list(r.order))
        stored, fresh = srch.derivation_score(srch.last_goal)
        assert abs(stored - fresh) <= 1e-9 * max(1.0, abs(fresh))
    srch.score_cache = True
    inst = make_instance(words, [None] * len(words), [-1] * len(words), lin.model.tagdict)
    assert len(inst.leaf_tok) > 256            # the dense arc cache is off for this input
    assert outs[0] == outs[1]


def test_tree_and_mixed_training_instances_carry_the_tree_and_reach_gold(ewt_train_slice):
    """--train-given full/mixed: the full-tree copies give every head and POS, and forced
    decoding under those constraints still rebuilds the gold tree."""
    td = TagDictionary.build(ewt_train_slice)
    sents = ewt_train_slice[:60]
    bags, _ = training_instances(sents, td)
    kept = []
    mixed, _ = training_instances(sents, td, kept=kept, given="mixed")
    trees, _ = training_instances(sents, td, given="full")
    assert len(mixed) == 2 * len(bags) == 2 * len(trees)
    assert kept[0::2] == kept[1::2]
    for b, m in zip(bags, mixed[0::2]):
        assert (b.given_head == m.given_head).all() and (b.given_head == -1).all()
    W = np.zeros(1 << 18, dtype=np.float32)
    core = DepSearch(W, 18)
    for t in trees:
        assert (t.given_head != -1).all() and len(t.leaf_tok) == t.n   # one POS per word
        gh = t.gold[0]
        assert ((t.given_head == gh) | ((t.given_head == -2) & (gh == -1))).all()
        ok, order, heads, _ = core.forced(*t.arrays(), t.gold, 10 ** 6)
        assert ok and [int(h) for h in heads] == [int(h) for h in gh]
    with pytest.raises(ValueError):
        training_instances(sents, td, given="heads")


def test_question_labels_label_only_questions_and_follow_the_model_header(model_path, ewt_dev):
    from wo.dep.instance import Q_LABEL
    from wo.model import Model, atom

    td = Model.load(model_path).tagdict
    q = next(s for s in ewt_dev if s.forms[-1] == "?")
    plain = next(s for s in ewt_dev if "?" not in s.forms and len(s) > 5)
    n = len(q)
    a = make_instance(q.forms, [None] * n, [-1] * n, td, question_labels=True)
    assert a.extra()["tok_label"].tolist() == [atom(Q_LABEL)] * n
    assert make_instance(q.forms, [None] * n, [-1] * n, td).extra() == {}
    m = len(plain)
    assert make_instance(plain.forms, [None] * m, [-1] * m, td, question_labels=True).extra() == {}
    # the labels change the question's features, so decoding follows the model's header only
    model = Model.load(model_path)
    assert Linearizer(model).question_labels is bool(model.header.get("question_labels", False))
    model.header["question_labels"] = True
    lin = Linearizer(model)
    r = lin.linearize(scramble(q, 1, 0)[0].forms)
    assert sorted(r.tokens) == sorted(q.forms) and lin.question_labels
