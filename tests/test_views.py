"""LMs over views of a tree (wo.lm.views): POS and dependency LMs, and the shipped model's
rerankers of tree inputs (decode.tree_rerank, ``--tree-rerank``)."""
import random
import shutil

import pytest

from tests.conftest import EWT, ROOT, conllu_blocks
from wo.cli import main
from wo.lm import LanguageModel
from wo.lm.views import score_view, sequences, view_of
from wo.model import Model, ModelError

MODELS = ROOT / "corpora" / "models"
VIEW_LMS = {"dep-mix": ("wo-ewt-depmix4.wolm", 4), "dep-word": ("wo-ewt-depword4.wolm", 4),
            "pos": ("wo-ewt-pos6.wolm", 6)}


def test_sequences_of_each_view_on_a_small_tree():
    words = "The cat sat on the mat .".split()
    tags = "DT NN VBD IN DT NN .".split()
    heads = [2, 3, 0, 6, 6, 3, 3]
    assert sequences("words", words, tags, heads) == [words]
    assert sequences("pos", words, tags, heads) == [tags]
    assert sequences("dep-mix", words, tags, heads) == [
        ["G_VBD", "the", "H_NN"], ["G_ROOT", "NN", "H_VBD", "NN", "."], ["G_VBD", "on", "the", "H_NN"]]
    assert sequences("dep-word", words, tags, heads) == [
        ["G_VBD", "the", "H_cat"], ["G_ROOT", "cat", "H_sat", "mat", "."], ["G_VBD", "on", "the", "H_mat"]]
    # another order of the same tree changes the dependents' sequences, not their members
    order = [5, 4, 3, 0, 1, 2, 6]
    where = {i: j for j, i in enumerate(order)}
    moved = sequences("dep-mix", [words[i] for i in order], [tags[i] for i in order],
                      [0 if heads[i] == 0 else where[heads[i] - 1] + 1 for i in order])
    assert moved[0] == ["G_VBD", "H_NN", "the", "on"]
    assert sorted(map(sorted, moved)) == sorted(map(sorted, sequences("dep-mix", words, tags, heads)))
    with pytest.raises(ValueError, match="unknown view"):
        sequences("deps", words, tags, heads)


@pytest.mark.slow
@pytest.mark.parametrize("view", sorted(VIEW_LMS))
def test_shipped_view_lms_are_rebuilt_byte_for_byte_by_their_command(view, tmp_path):
    """corpora/models/wo-ewt-{depmix4,depword4,pos6}.wolm come from EWT train by
    ``wo lm train --conllu ... --view V --order N``; the view is in the header."""
    name, order = VIEW_LMS[view]
    out = tmp_path / name
    assert main(["lm", "train", "--conllu", str(EWT / "en_ewt-ud-train.conllu.xz"), "--view", view,
                 "--order", str(order), "--out", str(out), "--quiet"]) == 0
    assert out.read_bytes() == (MODELS / name).read_bytes()
    lm = LanguageModel.load(str(out))
    assert view_of(lm) == view and lm.header["sources"] == ["en_ewt-ud-train.conllu.xz"]


def test_dependency_lms_prefer_the_treebank_order_of_held_out_trees(ewt_dev):
    """On EWT dev trees (not in the LMs' text), the gold order of each tree scores higher than a
    random order of the same words with the same tree in nearly every sentence (100, 100 and 99
    of 100 here)."""
    lms = {v: LanguageModel.load(str(MODELS / n)) for v, (n, _) in VIEW_LMS.items()}
    rng = random.Random(3)
    wins = {v: 0 for v in lms}
    sents = [s for s in ewt_dev[:300] if 6 <= len(s) <= 30][:100]
    for s in sents:
        tags = list(s.xpos)
        order = list(range(len(s)))
        rng.shuffle(order)
        where = {i: j for j, i in enumerate(order)}
        heads = [0 if s.heads[i] == 0 else where[s.heads[i] - 1] + 1 for i in order]
        for v, lm in lms.items():
            gold = score_view(lm, s.forms, tags, list(s.heads))
            wins[v] += gold > score_view(lm, [s.forms[i] for i in order], [tags[i] for i in order], heads)
    assert all(w >= 95 for w in wins.values()), wins


def test_view_lm_needs_trees_and_the_binary_format(tmp_path, capsys):
    txt = tmp_path / "t.txt"
    txt.write_text("a b c\n", encoding="utf-8")
    assert main(["lm", "train", "--text", str(txt), "--view", "pos", "--out", str(tmp_path / "x.wolm")]) == 2
    assert main(["lm", "train", "--conllu", str(EWT / "en_ewt-ud-dev.conllu.xz"), "--view", "pos",
                 "--out", str(tmp_path / "x.arpa")]) == 2
    assert main(["lm", "train", "--out", str(tmp_path / "x.wolm")]) == 2
    err = capsys.readouterr().err
    assert "needs trees" in err and "ARPA cannot hold it" in err and "either --text" in err


@pytest.mark.slow
def test_shipped_model_reranks_tree_inputs_by_its_header_and_not_bags(tmp_path, ewt_dev):
    """wo-ewt-dep-lm.wo names rerankers for tree inputs (decode.tree_rerank), used when asked
    for (tree_rerank=True).  The chosen output maximises F + sum of w log10 p (each LM in its
    view) + w F(no-LM model) against the plain decoder's output; bags are decoded as before;
    a missing file is refused."""
    from wo.dep.linearizer import Linearizer, tree_rerankers_of

    path = str(MODELS / "wo-ewt-dep-lm.wo")
    dflt, plain = Linearizer.load(path, tree_rerank=True), Linearizer.load(path)
    lms, models = dflt.tree_rerank_lms, dflt.tree_rerank_models
    assert {view_of(lm) for lm, _ in lms} == {"words", "pos", "dep-mix", "dep-word"} and len(models) == 1
    assert plain.tree_rerank_lms == [] and plain.tree_rerank_models == []

    def combined(r, n):
        v = r.score * (2 * n - 1) + sum(w * score_view(lm, r.tokens, r.pos, r.heads) for lm, w in lms)
        for other, w in models:
            v += w * other.parse(r.tokens, r.pos, heads=r.heads).parsed_score()
        return v

    changed = 0
    sents = ewt_dev[:40]
    for s in sents:
        pos, n = list(s.xpos), len(s)
        a, r = plain.linearize(s.forms, pos, list(s.heads)), dflt.linearize(s.forms, pos, list(s.heads))
        assert [0 if h == 0 else r.order[h - 1] + 1 for h in r.heads] == [s.heads[i] for i in r.order]
        assert combined(r, n) >= combined(a, n) - 1e-4
        cands = [c for _, c in plain.nbest(s.forms, pos, list(s.heads))]    # what the rerankers choose from
        assert cands[0].tokens == a.tokens and r.tokens in [c.tokens for c in cands] and len(cands) <= 20
        changed += r.tokens != a.tokens
    assert changed >= 3
    for s in sents[:8]:
        assert dflt.linearize(s.forms).tokens == plain.linearize(s.forms).tokens
    # a header naming a file that is not there is refused, naming it
    m = Model.load(path, mmap=False)
    m.header["decode"]["tree_rerank"] = {"lms": [["missing-view.wolm", 1.0]]}
    m.save(str(tmp_path / "m.wo"))
    shutil.copy(MODELS / "wo-en-4gram.wolm", tmp_path / "wo-en-4gram.wolm")
    with pytest.raises(ModelError, match="missing-view.wolm"):
        tree_rerankers_of(Model.load(str(tmp_path / "m.wo")))
    assert Linearizer.load(str(tmp_path / "m.wo")).tree_rerank_lms == []        # not asked for: not loaded
    with pytest.raises(ModelError, match="missing-view.wolm"):
        Linearizer.load(str(tmp_path / "m.wo"), tree_rerank=True)


@pytest.mark.slow
def test_cli_tree_rerank_and_rerank_lm_weights(tmp_path, capsys, ewt_dev):
    """``--tree-rerank`` reranks with the header's files, ``--rerank-lm PATH:W`` with one LM:
    each output is a permutation of its input; bad specs are user errors."""
    src = tmp_path / "in.conllu"
    src.write_text(_first_sentences(3), encoding="utf-8")
    outs = {}
    for name, extra in (("default", []), ("tree", ["--tree-rerank"]),
                        ("pos", ["--rerank-lm", str(MODELS / "wo-ewt-pos6.wolm") + ":0.5"])):
        out = tmp_path / f"{name}.txt"
        assert main(["dep", "linearize", "--input", str(src), "--output", str(out), "--given", "full",
                     "--quiet"] + extra) == 0
        outs[name] = out.read_text(encoding="utf-8").splitlines()
        assert len(outs[name]) == 3
        assert [sorted(x.split()) for x in outs[name]] == [sorted(" ".join(s.forms).split()) for s in ewt_dev[:3]]
    assert main(["dep", "linearize", "--input", str(src), "--output", str(tmp_path / "x"),
                 "--rerank-lm", str(MODELS / "wo-ewt-pos6.wolm") + ":heavy"]) == 2
    assert main(["dep", "linearize", "--input", str(src), "--output", str(tmp_path / "x"),
                 "--rerank-lm", str(tmp_path / "nope.wolm")]) == 2
    err = capsys.readouterr().err
    assert "expected PATH or PATH:WEIGHT" in err and "nope.wolm: no such LM file" in err


def _first_sentences(n):
    return "".join(block + "\n\n" for block in conllu_blocks(str(EWT / "en_ewt-ud-dev.conllu.xz"))[:n])
