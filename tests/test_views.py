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
    """wo-ewt-dep-lm.wo names rerankers for tree inputs (decode.tree_rerank, updated by its
    sidecar file), used by default (its "default": true) unless tree_rerank=False.  Of the
    plain decoder's n-best, the chosen output maximises F + sum of w log10 p (each LM in its
    view) + w F(no-LM model) among the ``models_top`` best by F and the LMs alone (the no-LM
    model parses only those); bags are decoded as before; a missing file is refused."""
    from wo.dep.linearizer import Linearizer, tree_rerankers_of

    path = str(MODELS / "wo-ewt-dep-lm.wo")
    dflt, plain = Linearizer.load(path), Linearizer.load(path, tree_rerank=False)
    lms, models, top = dflt.tree_rerank_lms, dflt.tree_rerank_models, dflt.tree_rerank_top
    assert {view_of(lm) for lm, _ in lms} == {"words", "pos", "dep-mix", "dep-word"} and len(models) == 1
    assert top == 5 and plain.tree_rerank_lms == [] and plain.tree_rerank_models == []

    def stage1(f, r):
        return round(f + sum(w * score_view(lm, r.tokens, r.pos, r.heads) for lm, w in lms), 6)

    def combined(f, r):
        return round(stage1(f, r) + sum(w * other.parse(r.tokens, r.pos, heads=r.heads).parsed_score()
                                        for other, w in models), 6)

    changed = 0
    sents = ewt_dev[:40]
    for s in sents:
        pos = list(s.xpos)
        a, r = plain.linearize(s.forms, pos, list(s.heads)), dflt.linearize(s.forms, pos, list(s.heads))
        assert [0 if h == 0 else r.order[h - 1] + 1 for h in r.heads] == [s.heads[i] for i in r.order]
        cands = plain.nbest(s.forms, pos, list(s.heads))    # what the rerankers choose from
        assert cands[0][1].tokens == a.tokens and len(cands) <= 20
        first = sorted(range(len(cands)), key=lambda i: -stage1(*cands[i]))[:top]
        best = max(combined(*cands[i]) for i in first)
        assert r.tokens in [cands[i][1].tokens for i in first if combined(*cands[i]) == best]
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
    assert Linearizer.load(str(tmp_path / "m.wo")).tree_rerank_lms == []        # no "default": not loaded
    with pytest.raises(ModelError, match="missing-view.wolm"):
        Linearizer.load(str(tmp_path / "m.wo"), tree_rerank=True)


@pytest.mark.slow
def test_cli_tree_rerank_and_rerank_lm_weights(tmp_path, capsys, ewt_dev):
    """Trees are reranked by default with the files the model names (``--no-tree-rerank``: not),
    ``--rerank-lm PATH:W`` with one LM:
    each output is a permutation of its input; bad specs are user errors."""
    src = tmp_path / "in.conllu"
    src.write_text(_first_sentences(3), encoding="utf-8")
    outs = {}
    for name, extra in (("default", []), ("plain", ["--no-tree-rerank"]),
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


def test_decode_settings_sidecar_updates_the_header_key_by_key(tmp_path):
    """A model's decode settings are its header's ``decode`` updated by ``<model>.decode.json``
    beside it: scalars replaced, dict entries merged one level down (so a sidecar can switch the
    tree reranking on and replace its LMs while the header's other entries stay); a sidecar that
    is not a JSON object is refused, naming the file."""
    from wo.model import decode_settings
    from wo.dep.linearizer import Linearizer

    m = tmp_path / "m.wo"
    m.symlink_to(MODELS / "wo-ewt-dep-lm.wo")
    header = Model.load(str(m)).header["decode"]
    assert decode_settings(Model.load(str(m))) == header          # no sidecar: the header's
    side = tmp_path / "m.decode.json"
    side.write_text('{"tree_beam_factor": 16, "tree_rerank": {"default": true, "lms": []}}', encoding="utf-8")
    dec = decode_settings(Model.load(str(m)))
    assert dec["tree_beam_factor"] == 16 and dec["budget_factor"] == header["budget_factor"]
    assert dec["tree_rerank"]["lms"] == [] and dec["tree_rerank"]["models"] == header["tree_rerank"]["models"]
    lin = Linearizer.load(str(m), lm="none")
    assert lin.tree_beam_factor == 16 and lin.tree_rerank and lin.tree_rerank_lms == []
    assert len(lin.tree_rerank_models) == len(header["tree_rerank"]["models"]) >= 1
    assert not Linearizer.load(str(m), lm="none", tree_rerank=False).tree_rerank_models
    for bad in ("[1, 2]", "{not json"):
        side.write_text(bad, encoding="utf-8")
        with pytest.raises(ModelError, match="m.decode.json: not a decode-settings file"):
            decode_settings(Model.load(str(m)))
