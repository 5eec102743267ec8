"""Shared fixtures: real EWT slices from corpora/ and a small model trained on real data."""
import pathlib

import pytest

from wo.io import read_conllu

ROOT = pathlib.Path(__file__).resolve().parent.parent
EWT = ROOT / "corpora" / "ud-en-ewt"
SHIPPED = ROOT / "corpora" / "models" / "wo-ewt-dep.wo"


@pytest.fixture(scope="session")
def ewt_dev():
    return read_conllu(str(EWT / "en_ewt-ud-dev.conllu.xz"))


@pytest.fixture(scope="session")
def ewt_train_slice():
    return read_conllu(str(EWT / "en_ewt-ud-train.conllu.xz"))[:400]


@pytest.fixture(scope="session")
def small_model(tmp_path_factory, ewt_train_slice):
    """A model trained for 2 epochs on 400 real EWT train sentences (~10 s)."""
    from wo.dep.train import train

    path = tmp_path_factory.mktemp("model") / "small.wo"
    train(ewt_train_slice, [], 2, str(path), hash_bits=18, log=lambda m: None)
    return str(path)


@pytest.fixture(scope="session")
def model_path(small_model):
    """The shipped pretrained model when present (it is in the repository), else the small one."""
    return str(SHIPPED) if SHIPPED.exists() else small_model


def assert_lm_features_are_the_sentence_score(core, lm, words) -> None:
    """The real-valued LM features of the last goal edge of ``core.search`` are the LM's log10
    probability of ``words``: the in-string feature without <s>/</s>, plus the sentence feature
    with them (the LM features of ``wo._fast._lmfeat``, any grammar)."""
    feats = core.search.real_features_of(core.search.last_goal)
    f_lm, f_sent = core.grammar.lm_feature_indices
    assert set(feats) == {f_lm, f_sent}
    assert abs(feats[f_lm] + feats[f_sent] - lm.score(words)) < 1e-3
    assert abs(feats[f_lm] - lm.score(words, bos=False, eos=False)) < 1e-3
