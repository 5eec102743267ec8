"""The n-gram LM inside the dependency search: the LM features of a derivation add up to the
LM's log10 probability of the sentence, forced decoding still reaches the gold trees, outputs
stay permutations of their inputs, and a model without LM decodes exactly as before."""
import numpy as np
import pytest

from tests.conftest import EWT, assert_lm_features_are_the_sentence_score, conllu_blocks, write_blocks, wo_cli
from wo.dep.core import DepSearch
from wo.dep.instance import make_instance
from wo.io import is_projective, scramble
from wo.lm import LanguageModel, train
from wo.model import TagDictionary


@pytest.fixture(scope="module")
def lm(ewt_train_text):
    return LanguageModel.from_tables(train([ewt_train_text], 3, log=lambda m: None))


@pytest.fixture(scope="module")
def dev(ewt_dev):
    return ewt_dev[:80]


def _train_conllu(tmp_path, n: int):
    """The first n sentences of EWT train as a CoNLL-U file (real data for `wo dep train`)."""
    return write_blocks(tmp_path / "train.conllu", conllu_blocks(str(EWT / "en_ewt-ud-train.conllu.xz"))[:n])


def test_lm_features_of_a_derivation_sum_to_the_sentence_log10_probability(lm, dev, ewt_train_slice):
    td = TagDictionary.build(ewt_train_slice)
    rng = np.random.default_rng(0)
    W = (rng.normal(size=1 << 16) * 0.01).astype(np.float32)
    core = DepSearch(W, 16, lm=lm)
    checked = 0
    for i, s in enumerate(dev[:40]):
        sc, _ = scramble(s, 1, i)
        inst = make_instance(sc.forms, [None] * len(sc), [-1] * len(sc), td)
        order, heads, score, status, pops, edges = core.decode(*inst.arrays(), 8 * inst.n, 30 * inst.n,
                                                               complete_beam=8, **core.kwargs(inst))
        if core.search.last_goal < 0 or inst.n < 2:
            continue
        words = [inst.leaf_form[leaf] for leaf in order]
        assert_lm_features_are_the_sentence_score(core, lm, words)
        checked += 1
    assert checked >= 30


def test_forced_decoding_reaches_gold_with_lm_features(lm, dev, ewt_train_slice):
    td = TagDictionary.build(ewt_train_slice)
    core = DepSearch(np.zeros(1 << 12, dtype=np.float32), 12, lm=lm)
    n = 0
    for i, s in enumerate(dev):
        if not is_projective(s.heads):
            continue
        sc, perm = scramble(s, 5, i)
        sc.meta["_gold_pos"] = [int(p) for p in perm]
        inst = make_instance(sc.forms, [None] * len(sc), [-1] * len(sc), td, gold=sc)
        reached, order, heads, _ = core.forced(*inst.arrays(), inst.gold, 10 ** 7, **core.kwargs(inst))
        assert reached, s.sent_id
        assert [inst.leaf_form[leaf] for leaf in order] == s.forms
        n += 1
    assert n > 60


@pytest.mark.slow
def test_training_with_lm_learns_a_weight_and_outputs_are_permutations(lm, dev, ewt_train_slice, tmp_path):
    from wo.dep.train import training_instances, train_epoch
    import random

    td = TagDictionary.build(ewt_train_slice)
    insts, _ = training_instances(ewt_train_slice[:150], td)
    W = np.zeros(1 << 18, dtype=np.float32)
    U = np.zeros(1 << 18, dtype=np.float64)
    core = DepSearch(W, 18, U, lm=lm)
    core.max_tau = 0.05
    train_epoch(core, insts, random.Random(1), 4.0, 30.0)
    f_lm, f_sent = core.grammar.lm_feature_indices
    assert W[f_lm] > 0          # a higher LM probability is learned to be better
    dec = DepSearch(W - (U / core.avg_count).astype(np.float32), 18, lm=lm)
    for i, s in enumerate(dev[:30]):
        sc, _ = scramble(s, 1, i)
        inst = make_instance(sc.forms, [None] * len(sc), [-1] * len(sc), td)
        order, *_ = dec.decode(*inst.arrays(), 6 * inst.n, 30 * inst.n, complete_beam=8, **dec.kwargs(inst))
        assert sorted(inst.leaf_tok[order].tolist()) == list(range(inst.n))


@pytest.mark.slow
def test_cli_trains_with_an_lm_and_decoding_finds_it_beside_the_model(tmp_path, ewt_train_slice):
    from tests.conftest import ROOT
    from wo.cli import main

    d = tmp_path / "m"
    d.mkdir()
    lm_path = d / "small.wolm"
    train_txt = tmp_path / "t.txt"
    train_txt.write_text("\n".join(" ".join(s.forms) for s in ewt_train_slice) + "\n", encoding="utf-8")
    assert main(["lm", "train", "--text", str(train_txt), "--order", "3", "--out", str(lm_path), "--quiet"]) == 0
    conllu = _train_conllu(tmp_path, 60)
    model = d / "m.wo"
    assert main(["dep", "train", "--train", str(conllu), "--epochs", "1", "--hash-bits", "16",
                 "--model", str(model), "--lm", str(lm_path)]) == 0
    run = lambda *a: wo_cli(a, stdin="the dog barked .\n")  # noqa: E731
    r = run("linearize", "--model", str(model))
    assert r.returncode == 0 and sorted(r.stdout.split()) == sorted("the dog barked .".split()), r.stderr
    assert run("linearize", "--model", str(model), "--lm", "none").returncode == 0
    lm_path.rename(tmp_path / "elsewhere.wolm")          # the LM is gone: a clear error, no traceback
    r = run("linearize", "--model", str(model))
    assert r.returncode == 2 and "--lm" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_jackknifed_training_and_lms_that_do_not_fit_are_refused(tmp_path, ewt_train_slice):
    from tests.conftest import ROOT
    from wo.cli import main

    forms = [" ".join(s.forms) for s in ewt_train_slice[:60]]

    def lm_of(name, lines, order=3):
        txt = tmp_path / f"{name}.txt"
        txt.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out = tmp_path / f"{name}.wolm"
        assert main(["lm", "train", "--text", str(txt), "--order", str(order), "--out", str(out), "--quiet"]) == 0
        return str(out)

    full = lm_of("all", forms)
    folds = [lm_of("fold0", forms[30:]), lm_of("fold1", forms[:30])]    # block k left out
    conllu = _train_conllu(tmp_path, 60)
    model = tmp_path / "m.wo"
    assert main(["dep", "train", "--train", str(conllu), "--epochs", "1", "--hash-bits", "16",
                 "--model", str(model), "--lm", full, "--lm-folds", *folds]) == 0
    from wo.model import Model
    ent = Model.load(str(model)).header["lm"]
    assert ent["order"] == 3 and ent["vocab_size"] > 100 and len(ent["vocab_md5"]) == 32
    run = lambda *a: wo_cli(["linearize", "--model", model, *a], stdin="the dog barked .\n")  # noqa: E731
    r = run("--lm", full)
    assert r.returncode == 0 and sorted(r.stdout.split()) == sorted("the dog barked .".split()), r.stderr
    r = run("--lm", lm_of("bigram", forms, order=2))            # another order
    assert r.returncode == 2 and "order-2" in r.stderr and "Traceback" not in r.stderr
    r = run("--lm", folds[0])                                   # same order, another vocabulary
    assert r.returncode == 2 and "vocabulary" in r.stderr and "Traceback" not in r.stderr
    r = wo_cli(["linearize", "--model", ROOT / "corpora/models/wo-ewt-dep.wo", "--lm", full], stdin="the dog barked .\n")
    assert r.returncode == 2 and "without an n-gram LM" in r.stderr


@pytest.mark.slow
def test_parsing_a_given_order_keeps_it_and_finds_the_tree(ewt_dev):
    """``Linearizer.parse``: the shipped LM model's search with the word order fixed returns that
    order, a projective tree over it, and scores other strings of the same bag by the model."""
    from tests.conftest import ROOT
    from wo.dep.linearizer import Linearizer

    lin = Linearizer.load(str(ROOT / "corpora" / "models" / "wo-ewt-dep-lm.wo"))
    good = lin.parse("the cat sat on the mat .".split())
    assert good.order == list(range(7)) and good.status in ("ok", "completed")
    assert good.heads == [2, 3, 0, 6, 6, 3, 3]   # equal words ("the" twice) keep their places
    bad = lin.parse("sat the mat on the cat .".split())
    assert bad.order == list(range(7)) and bad.score < good.score
    sents = ewt_dev[:40]
    beats = 0
    for s in sents:
        r = lin.parse(s.forms)
        assert r.order == list(range(len(s))) and r.tokens == s.forms
        assert sorted(r.heads).count(0) == 1 and is_projective(r.heads)
        out = lin.linearize(s.forms)
        beats += lin.parse(out.tokens).score >= out.score - 1e-6   # the best tree of its own output
    assert beats >= 34   # 37 of 40 here; the parse can also find a better tree than the decode
    core = lin.core
    inst = make_instance(["a", "b"], [None, None], [-1, -1], lin.model.tagdict)
    with pytest.raises(ValueError, match="permutation"):
        core.decode(*inst.arrays(), 4, 100, tok_order=np.array([0, 0], dtype=np.int32), **core.kwargs(inst))


@pytest.mark.slow
def test_reranking_popped_goals_with_an_lm_keeps_the_given_trees(ewt_dev):
    """``Linearizer(rerank_lm=...)``: full trees pop many goals; the chosen one maximises
    F + w * log10 p, keeps the given tree, and weight 0 gives the plain decoder's output."""
    from tests.conftest import ROOT
    from wo.dep.linearizer import Linearizer

    path = str(ROOT / "corpora" / "models" / "wo-ewt-dep-lm.wo")
    lm = LanguageModel.load(str(ROOT / "corpora" / "models" / "wo-en-4gram.wolm"))
    plain, zero = Linearizer.load(path, tree_rerank=False), Linearizer.load(path, rerank_lm=lm, rerank_weight=0.0)
    rr = Linearizer.load(path, rerank_lm=lm, rerank_weight=2.0)
    changed = 0
    for s in ewt_dev[:30]:
        pos = [None if t == "_" else t for t in s.xpos]
        a, z, r = (x.linearize(s.forms, pos, list(s.heads)) for x in (plain, zero, rr))
        assert z.tokens == a.tokens and z.heads == a.heads
        assert sorted(r.order) == list(range(len(s)))
        assert [0 if h == 0 else r.order[h - 1] + 1 for h in r.heads] == [s.heads[i] for i in r.order]
        n = len(s)
        assert (r.score * (2 * n - 1) + 2.0 * lm.score(r.tokens)
                >= a.score * (2 * n - 1) + 2.0 * lm.score(a.tokens) - 1e-5)
        changed += r.tokens != a.tokens
    assert changed >= 2
