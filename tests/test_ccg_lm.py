"""The n-gram LM inside the CCG search (the LM features the dependency grammar uses, shared in
``wo._fast._lmfeat``), on real EWT-CCG data: the LM features of a derivation add up to the LM's
log10 probability of the sentence, forced decoding still reaches the gold derivations, training
learns a positive LM weight, outputs are permutations, and the CLI trains with ``--lm`` and
finds the LM beside the model."""
import os
import random

import numpy as np
import pytest

from tests.conftest import assert_lm_features_are_the_sentence_score, wo_cli
from wo.ccg.core import CCGSearch
from wo.ccg.instance import make_instance
from wo.ccg.train import build_tables, scrambled, train_epoch, training_instances
from wo.cli import main
from wo.lm import LanguageModel, train as lm_train

ROOT = os.path.join(os.path.dirname(__file__), "..")


@pytest.fixture(scope="module")
def data(ccg_train, ccg_dev):
    return ccg_train[:400], ccg_dev[:60]


@pytest.fixture(scope="module")
def tables(data):
    return build_tables(data[0])[3]


@pytest.fixture(scope="module")
def lm_path(data, tmp_path_factory):
    """A trigram LM of the training slice's words (binary)."""
    d = tmp_path_factory.mktemp("ccglm")
    txt = d / "train.txt"
    txt.write_text("\n".join(" ".join(x.words) for x in data[0]) + "\n", encoding="utf-8")
    assert main(["lm", "train", "--text", str(txt), "--order", "3", "--out", str(d / "small.wolm"), "--quiet"]) == 0
    return str(d / "small.wolm")


def test_lm_features_of_a_derivation_sum_to_the_sentence_log10_probability(data, tables, lm_path):
    lm = LanguageModel.load(lm_path)
    W = (np.random.default_rng(0).normal(size=1 << 16) * 0.01).astype(np.float32)
    core = CCGSearch(tables, W, 16, lm=lm)
    checked = 0
    for i, d in enumerate(data[1][:40]):
        forms, pos, _ = scrambled(d, 1, i)
        inst = make_instance(forms, pos, tables)
        order, trees, *_ = core.decode(inst, 6 * inst.n, 30 * inst.n, complete_beam=8)
        if core.search.last_goal < 0 or inst.n < 2:
            continue
        words = [inst.tok_form[inst.leaf_tok[leaf]] for leaf in order]
        assert sorted(words) == sorted(forms)
        assert_lm_features_are_the_sentence_score(core, lm, words)
        checked += 1
    assert checked >= 30


def test_forced_decoding_with_the_lm_reaches_what_it_reaches_without(data, tables, lm_path):
    lm = LanguageModel.load(lm_path)
    plain = CCGSearch(tables, np.zeros(1 << 12, dtype=np.float32), 12)
    with_lm = CCGSearch(tables, np.zeros(1 << 12, dtype=np.float32), 12, lm=lm)
    reached = 0
    for i, d in enumerate(data[1]):
        if d.error is not None or d.root is None:
            continue
        forms, pos, perm = scrambled(d, 5, i)
        inst = make_instance(forms, pos, tables, gold=d, gold_pos=perm)
        a = plain.forced(inst, 10 ** 6)
        b = with_lm.forced(inst, 10 ** 6)
        assert bool(a[0]) == bool(b[0]), d.sent_id
        if b[0]:
            assert [inst.tok_form[inst.leaf_tok[leaf]] for leaf in b[1]] == d.words
            reached += 1
    assert reached >= 20


def test_training_with_the_lm_learns_a_positive_weight(data, tables, lm_path):
    lm = LanguageModel.load(lm_path)
    insts, _ = training_instances(data[0][:150], tables)
    W = np.zeros(1 << 18, dtype=np.float32)
    U = np.zeros(1 << 18, dtype=np.float64)
    core = CCGSearch(tables, W, 18, U, lm=lm)
    core.max_tau = 0.05
    train_epoch(core, insts, random.Random(1), 4.0, 30.0)
    f_lm, _ = core.grammar.lm_feature_indices
    assert W[f_lm] > 0          # a higher LM probability is learned to be better


def test_cli_trains_with_an_lm_and_decoding_finds_it_beside_the_model(data, lm_path, tmp_path):
    from wo.ccg.auto import format_derivation

    d = tmp_path / "m"
    d.mkdir()
    lm_here = d / "small.wolm"
    lm_here.write_bytes(open(lm_path, "rb").read())
    tr = tmp_path / "train.auto"
    tr.write_text("".join(f"ID={x.sent_id} PARSER=GOLD NUMPARSE=1\n{format_derivation(x.root)}\n"
                          for x in data[0][:80]), encoding="utf-8")
    model = d / "m-ccg.wo"
    assert main(["ccg", "train", "--train", str(tr), "--epochs", "1", "--hash-bits", "16",
                 "--model", str(model), "--lm", str(lm_here)]) == 0
    run = lambda *a: wo_cli(["ccg", "linearize", "--model", model, *a], stdin="the dog barked .\n")  # noqa: E731
    r = run()
    assert r.returncode == 0 and sorted(r.stdout.split()) == sorted("the dog barked .".split()), r.stderr
    assert run("--lm", "none").returncode == 0
    lm_here.rename(tmp_path / "elsewhere.wolm")          # the LM is gone: a clear error, no traceback
    r = run()
    assert r.returncode == 2 and "--lm" in r.stderr and "Traceback" not in r.stderr
    # a model trained without an LM refuses one
    r = wo_cli(["ccg", "linearize", "--model", os.path.join(ROOT, "corpora", "models", "wo-ewt-ccg.wo"),
                "--lm", tmp_path / "elsewhere.wolm"], stdin="the dog barked .\n")
    assert r.returncode == 2 and "without an n-gram LM" in r.stderr and "Traceback" not in r.stderr
