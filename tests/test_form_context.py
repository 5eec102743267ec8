"""The context model of the forms (wo.sr.inflect.FormContext): a token's candidate forms scored
against its neighbours in the realised sentence, learned from the treebank."""
import pytest

from wo.sr.inflect import FormContext, Lexicon
from wo.sr.models import find_model
from wo.sr.forms import choose_forms
from wo.sr.realizer import Realizer
from tests.conftest import PT_TRAIN


@pytest.fixture(scope="module")
def ja():
    return Realizer.load(find_model("ja"))


def _choose(r, lemma, nxt):
    """The form the shipped model's context model gives ``lemma`` (VERB) before the auxiliary ``nxt``."""
    cands = r.lexicon.candidates(lemma, "VERB", "_", "_")[0]
    ctx = r.stage("forms").context.scores([lemma, nxt], ["VERB", "AUX"], ["root", "aux"], [-1, 0], [cands, [nxt]])
    return choose_forms(None, [cands, [nxt]], 0.0, context=ctx, context_weight=r.stage("forms").context_weight)[0]


def test_japanese_verb_forms_follow_the_next_auxiliary(ja):
    """UD Japanese lemmas are dictionary forms and FEATS are empty, so the form of a verb is
    the one its auxiliary asks for: *行っ* before *た* and *て*, *行き* before *ます*, the *-a*
    stem before *ない*; without the context model the lexicon's most frequent form is taken."""
    assert ja.stage("forms").context_weight > 0 and len(ja.stage("forms").context) > 1000
    cands = ja.lexicon.candidates("行く", "VERB", "_", "_")[0]
    assert {"行っ", "行き"} <= set(cands) and cands[0] not in ("行っ", "行き")
    assert _choose(ja, "行く", "た") == "行っ"
    assert _choose(ja, "行く", "て") == "行っ"
    assert _choose(ja, "行く", "ます") == "行き"
    assert _choose(ja, "行く", "ない").endswith("か")
    assert choose_forms(None, [cands, ["た"]], 0.0) == [cands[0], "た"]   # no context: the first candidate
    # the edit-script features reach forms by their script: 言う before た is いっ
    assert _choose(ja, "言う", "た") == "いっ"


def test_scores_shape_and_single_candidates(ja):
    fc = ja.stage("forms").context
    sc = fc.scores(["行く", "た"], ["VERB", "AUX"], ["root", "aux"], [-1, 0], [["行っ", "行き", "いく"], ["た"]])
    assert len(sc) == 2 and len(sc[0]) == 3 and sc[1] == [0.0]
    ctx = FormContext.contexts(["行く", "た", "。"], ["VERB", "AUX", "PUNCT"], ["root", "aux", "punct"], [-1, 0, 0])
    assert ctx[0][:3] == ("た", "AUX", "。") and ctx[0][3:5] == ("<s>", "<s>")
    assert ctx[1][5] == "aux\x1fVERB>" and ctx[2][0] == "</s>" and ctx[0][5] == "root\x1fROOT"


def test_build_learns_from_the_treebank_and_round_trips():
    """Built from UD sentences in reference order: a Portuguese slice (400 training sentences);
    tokens whose key has one form are not instances; the JSON form in the lexicon is exact."""
    from wo.io import read_conllu

    sents = read_conllu(str(PT_TRAIN))
    lex = Lexicon.build(sents, lang="pt", context=True)
    assert lex.context is not None and len(lex.context) > 0
    assert Lexicon.build(sents[:50], lang="pt").context is None   # only when asked for
    assert lex.context_next.next_initial and not lex.context.next_initial
    back = Lexicon.from_json(lex.to_json())
    assert back.context.weights == lex.context.weights
    assert back.context_next.weights == lex.context_next.weights and back.context_next.next_initial
    assert Lexicon.from_json(Lexicon({}, None, "pt").to_json()).context is None
    templates = {"r", "f", "s", "fnl", "fnu", "fpl", "fpu", "frl", "fn2", "snl", "snu", "spu", "srl", "sn2"}
    assert {f.split("\x1f")[0] for f in lex.context.weights} <= templates


def test_train_chooses_the_form_context_on_dev(pt_local):
    """``wo sr train`` with a dev set learns the context model of the forms, without and with the
    next-initial templates, and keeps one of them with its weight where dev BLEU rises by at
    least CONTEXT_MIN_GAIN (the tuning record keeps dev BLEU by weight of each); else the
    model has none and a weight of 0."""
    from wo.model import Model
    from wo.sr.stages import stage_list
    from wo.sr.tune import CONTEXT_MIN_GAIN

    rec = pt_local["record"]["tuning"]["context"]
    grids = {False: rec["dev_grid"], True: rec["dev_grid_next_initial"]}
    for grid in grids.values():
        assert set(grid) == {str(w) for w in FormContext.WEIGHTS} and all(0 < v <= 100 for v in grid.values())
    best, ni = max(((w, n) for w in FormContext.WEIGHTS for n in (False, True)),
                   key=lambda x: (grids[x[1]][str(x[0])], not x[1], -x[0]))
    forms = next(d for d in stage_list(Model.read_header(pt_local["model"])[0]) if d["stage"] == "forms")
    if grids[ni][str(best)] - grids[False]["0.0"] >= CONTEXT_MIN_GAIN:
        assert forms["context_weight"] == best and forms["context"].get("next_initial", False) == ni
    else:
        assert forms["context_weight"] == 0.0 and "context" not in forms


def test_context_weight_needs_a_context_model(tmp_path):
    """``--set forms.context_weight`` on a model without a context model is a user error that says so."""
    from tests.conftest import wo_cli

    t1 = tmp_path / "ja.t1"
    t1.write_text("# sent_id = 1\n1\t行く\t_\tVERB\t_\t_\t0\troot\t_\toriginal_id=1\n"
                  "2\tた\t_\tAUX\t_\t_\t1\taux\t_\toriginal_id=2\n\n", encoding="utf-8")
    p = wo_cli(["sr", "realize", "--lang", "vi_vtb", "--input", t1, "--output", tmp_path / "vi.txt",
                "--set", "forms.context_weight=1"])
    assert p.returncode == 2 and "no form context model" in p.stderr and "Traceback" not in p.stderr
    p = wo_cli(["sr", "realize", "--lang", "ja", "--input", t1, "--output", tmp_path / "ja.txt", "--quiet"])
    assert p.returncode == 0
    assert "# text = 行った" in (tmp_path / "ja.txt").read_text(encoding="utf-8")


def test_next_initial_templates_round_trip_and_reach_the_next_word():
    """With ``next_initial`` each candidate also meets the next lemma's first character: the
    shipped Greek model writes the accusative article *την* before a vowel and *τη* before *σ*,
    and the flag survives the lexicon's JSON form (a model without it scores as before)."""
    el = Realizer.load(find_model("el"))
    fc = el.stage("forms").context
    assert fc.next_initial and el.stage("forms").context_weight > 0
    assert FormContext.from_json(fc.to_json()).next_initial
    assert not FormContext.from_json(FormContext({"f\x1fa": 1.0}).to_json()).next_initial
    assert any(f.startswith("fn1\x1f") for f in fc.weights)
    cands = ["τη", "την"]

    def article(nxt):
        sc = fc.scores(["ο", nxt], ["DET", "NOUN"], ["det", "obj"], [1, -1], [cands, [nxt]])
        return cands[max(range(2), key=lambda r: sc[0][r])]

    assert article("αγορά") == "την" and article("σχολή") == "τη"
