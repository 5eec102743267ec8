"""SR as a list of stages: the stage protocol, the expert settings (--set), models written before
the stage list, a stage added from outside, and the recipe's choices on dev and by
cross-validation."""
import pytest

from tests.conftest import wo_cli
from wo.model import Model
from wo.sr.inflect import Allomorphs
from wo.sr.realizer import Realizer
from wo.sr.stages import (ROLES, STAGES, LanguageStage, SRState, Stage, apply_settings, legacy_stages, load_stages,
                          named_files, parse_settings, register, stage_list)
from wo.sr.t1 import read_t1


def test_every_registered_stage_has_a_role_and_settings_it_can_take():
    assert {cls.role for cls in STAGES.values()} == set(ROLES)
    for name, cls in STAGES.items():
        assert cls.name == name and cls.__doc__
        st = cls()   # every stage has defaults
        for key in cls.SETTINGS:
            assert hasattr(st, key), (name, key)


def test_a_trained_model_records_its_stages_in_the_order_they_run(pt_local):
    head = Model.read_header(pt_local["model"])[0]
    names = [d["stage"] for d in head["sr"]["stages"]]
    assert names == ["lift", "candidates", "order-local", "forms", "language", "contractions"]
    r = Realizer.load(pt_local["model"])
    assert [st.name for st in r.stages] == names
    # the LMs the tuning chose are beside the model, and the stages name them
    for name in named_files(head):
        assert (pt_local["dir"] / name).is_file(), name


def test_the_realizer_is_its_stages_run_in_turn(pt_local):
    r = Realizer.load(pt_local["model"])
    for s in read_t1(pt_local["t1"])[:8]:
        state = r.start(s)
        seen = []
        for st in r.stages:
            st(state)
            seen.append((st.role, state.cands is not None, state.order is not None, state.tokens is not None))
        assert seen[1][1] and not seen[1][2]            # candidates before any order
        assert seen[2][2] and not seen[2][3]            # the order before the tokens
        out = r.realize(s)
        assert out.tokens == state.tokens and out.order == state.order and out.heads == state.output_heads()


def test_legacy_headers_map_onto_the_stage_list():
    """A model written before the stage list (``sr.lexicon``, ``sr.order``, ``decode``) gets the
    same decoding as stages: the word LM in the order stage's rescoring and the forms stage."""
    head = {"sr": {"lang": "fr", "lexicon": {"table": {}, "lang": "fr", "allomorphs": {"prev": {}, "next": {}, "total": {}},
                                             "context": {"weights": {"f\x1fa": 1.0}}},
                   "lift": {"table": {}, "threshold": 0.7}, "mwt": {"table": {"de le": "du"}},
                   "order": {"kind": "local", "feature_set": "local-order-v3", "beam": 16, "r2l": 0.5}},
            "decode": {"rerank_lm": "x.wolm", "rerank_weight": 10.0, "rerank_lms": [["y.wolm", 0.5]],
                       "form_penalty": 2.0, "allomorph_weight": 1.0, "context_weight": 0.25}}
    st = legacy_stages(head)
    assert [d["stage"] for d in st] == ["lift", "candidates", "order-local", "forms", "language", "contractions"]
    assert st[0]["threshold"] == 0.7 and "allomorphs" not in st[1]["lexicon"] and "context" not in st[1]["lexicon"]
    assert st[2]["words_lm"] == "x.wolm" and st[2]["words_weight"] == 10.0 and st[2]["view_lms"] == [["y.wolm", 0.5]]
    assert st[2]["r2l"] == 0.5 and "kind" not in st[2]
    assert st[3]["lm"] == "x.wolm" and st[3]["penalty"] == 2.0 and st[3]["allomorph_weight"] == 1.0
    assert st[3]["context_weight"] == 0.25 and st[3]["context"]["weights"]
    assert st[4] == {"stage": "language", "lang": "fr", "rules": True}
    assert st[5]["table"] == {"de le": "du"}
    assert named_files(head) == ["x.wolm", "y.wolm"]
    assert stage_list({"sr": {"stages": st}}) == st


def test_settings_change_the_loaded_stages_and_bad_ones_say_why(pt_local):
    r = Realizer.load(pt_local["model"])
    apply_settings(r.stages, parse_settings(["lift.threshold=2", "forms.penalty=0.5", "order.beam=4"]))
    assert r.stage("lift").threshold == 2.0 and r.stage("forms").penalty == 0.5
    assert r.stage("order").beam == 4 and r.stage("order").orderer.core.beam == 4
    for bad, says in ((["lift.nope=1"], "no setting 'nope'"), (["order.beam=x"], "not a int"),
                      (["lift.threshold=nan"], "finite"), (["search.beam=1"], "no 'search' stage"),
                      (["forms.context_weight=1"] if r.stage("forms").context is None else ["lift.x=1"],
                       "no form context model" if r.stage("forms").context is None else "no setting")):
        with pytest.raises(ValueError, match=says):
            apply_settings(r.stages, parse_settings(bad))
    with pytest.raises(ValueError, match="ROLE.KEY=VALUE"):
        parse_settings(["threshold=2"])


def test_realize_set_on_the_command_line(pt_local, tmp_path):
    """``wo sr realize --set``: the command line decodes as the realiser with those settings
    (no LM: the stages' LMs off, which changes some dev sentences of this model); a bad setting
    is one line, exit 2, nothing written."""
    dev = str(pt_local["dir"] / "dev.t1")
    out = {}
    nolm = ["order.words_lm=none", "order.view_lms=none", "forms.lm=none"]
    for name, sets in (("default", []), ("nolm", nolm)):
        p = wo_cli(["sr", "realize", "--model", pt_local["model"], "--input", dev, "--output",
                    tmp_path / f"{name}.txt", "--quiet", *[x for kv in sets for x in ("--set", kv)]])
        assert p.returncode == 0, p.stderr
        out[name] = (tmp_path / f"{name}.txt.tok").read_text(encoding="utf-8").splitlines()
        r = Realizer.load(pt_local["model"], settings=parse_settings(sets))
        assert out[name] == [r.realize(s).text for s in read_t1(dev)]
    assert Realizer.load(pt_local["model"], settings=parse_settings(nolm)).stage("forms").lm is None
    p = wo_cli(["sr", "realize", "--model", pt_local["model"], "--input", pt_local["t1"], "--output",
                tmp_path / "bad.txt", "--set", "order.nope=1"])
    assert p.returncode == 2 and "no setting 'nope'" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "bad.txt").exists()
    p = wo_cli(["sr", "train", "--train", pt_local["t1"], "--model", tmp_path / "x.wo", "--lang", "pt",
                "--set", "order.sig=perhaps"])
    assert p.returncode == 2 and "order.sig=perhaps: not a true/false" in p.stderr and "Traceback" not in p.stderr


def test_a_stage_from_outside_runs_where_the_model_puts_it(pt_local, tmp_path):
    """A registered subclass of Stage, inserted into a model's stage list, runs in its place and
    is saved and loaded with the model."""

    @register
    class Shout(Stage):
        """Upper-cases the realised tokens of the given lemmas (a toy of the protocol)."""
        role, name = "language", "test-shout"
        SETTINGS = {}

        def __init__(self, lemmas=()):
            self.lemmas = set(lemmas)

        def __call__(self, state: SRState) -> None:
            s = state.sentence
            state.tokens = [t.upper() if s.lemmas[i] in self.lemmas else t for t, i in zip(state.tokens, state.order)]

        def to_json(self):
            return {"stage": self.name, "lemmas": sorted(self.lemmas)}

        @classmethod
        def from_json(cls, d, model=None, options=None):
            return cls(d.get("lemmas", ()))

    try:
        m = Model.load(pt_local["model"], mmap=False)
        stages = m.header["sr"]["stages"]
        at = [d["stage"] for d in stages].index("language") + 1
        stages.insert(at, Shout(["o"]).to_json())
        path = tmp_path / "shout.wo"
        m.save(str(path), compact="q8")
        for name in named_files(m.header):   # its LMs beside it
            (tmp_path / name).write_bytes((pt_local["dir"] / name).read_bytes())
        r, plain = Realizer.load(str(path)), Realizer.load(pt_local["model"])
        assert [st.name for st in r.stages][at] == "test-shout"
        sents = read_t1(pt_local["t1"])[:10]
        changed = 0
        for s in sents:
            a, b = r.realize(s), plain.realize(s)
            assert [t.lower() for t in a.tokens] == [t.lower() for t in b.tokens]
            changed += a.tokens != b.tokens
        assert changed >= 3   # "o" is the commonest Portuguese article
    finally:
        STAGES.pop("test-shout", None)


def test_the_language_stage_applies_rules_then_the_capital():
    st = LanguageStage("en")
    from wo.sr.t1 import SRSentence

    s = SRSentence(["a", "apple"], ["DET", "NOUN"], ["DT", "NN"], ["_", "_"], [2, 0], ["det", "root"], [0, 0],
                   [None, None])
    state = SRState(s, [2, 0], order=[0, 1], forms=["a", "apple"])
    st(state)
    assert state.tokens == ["An", "apple"]
    st.rules = False
    st(state)
    assert state.tokens == ["A", "apple"]


def test_the_tuning_keeps_the_best_dev_settings(pt_local):
    """wo sr train's tuning on dev: the chosen LM weights are the grid's best (ties: the
    smaller weights), the lifting threshold the best of its grid, and the model decodes with
    them."""
    rec = pt_local["record"]["tuning"]["lm"]
    grid = rec["dev_grid"]
    fp = max((0.0, 0.5, 1.0, 2.0), key=lambda f: (grid[f"forms {f}"], f))
    rows = {k: v for k, v in grid.items() if k.startswith(f"forms {fp} words")}
    best = max(rows.values())
    used = rec["form_penalty"] is not None
    if used:
        assert rows[f"forms {fp} words {rec['words_weight']} dep-mix {rec['depmix_weight']}"] == best
    lift = rec["lift_grid"]
    assert lift[str(rec["lift_threshold"])] == max(lift.values())
    r = Realizer.load(pt_local["model"])
    assert r.stage("lift").threshold == rec["lift_threshold"]
    if used:
        assert r.stage("order").words_weight == rec["words_weight"] and r.stage("forms").penalty == fp


@pytest.mark.slow
def test_templates_by_cross_validation_follow_the_rule(pt_train):
    """wo.sr.select on 400 Portuguese sentences: every template it adds gained MIN_GAIN over
    what was chosen and beat it on MIN_FOLDS folds; when it stops, the best candidate did not."""
    from wo.sr.select import MIN_FOLDS, MIN_GAIN, choose_templates
    from wo.sr.t1 import make_input

    sents = [make_input(s, 3, i, True) for i, s in enumerate(pt_train)]
    spec, rec = choose_templates(sents, [s.orig for s in sents], hash_bits=18, jobs=2)
    assert set(spec) == {"suffix", "sig", "ends"} and 50 < rec["base"] <= 100
    cur, chosen = rec["base"], []
    for k, rnd in enumerate(rec["rounds"]):
        ok = [n for n in rnd if rnd[n]["bleu"] - cur >= MIN_GAIN and rnd[n]["folds_better"] >= MIN_FOLDS]
        if ok:
            name = max(ok, key=lambda n: rnd[n]["bleu"])
            chosen.append(name)
            cur = rnd[name]["bleu"]
        else:
            assert k == len(rec["rounds"]) - 1   # the first round without a gain is the last
    assert rec["cv_bleu"] == cur and all(n in rec["chosen"] for n in chosen)
    assert (rec["chosen"] == "none") == (not chosen)


def test_several_perceptrons_on_two_processes_train_as_one_process(tmp_path, pt_train):
    """With several perceptrons (here one each way) ``--jobs 2`` trains each whole in a worker:
    the weights equal those of one process (iterative parameter mixing would change them)."""
    import numpy as np

    from tests.conftest import t1_file

    train = t1_file(tmp_path / "train.t1", pt_train[:150], gold=True)
    models = []
    for jobs in (1, 2):
        path = tmp_path / f"j{jobs}.wo"
        p = wo_cli(["sr", "train", "--train", train, "--lang", "pt", "--epochs", 2, "--jobs", jobs, "--set",
                    "order.hash_bits=16", "--model", path, "--quiet"])
        assert p.returncode == 0, p.stderr
        models.append(Model.load(str(path)))
    assert models[1].header["training"]["parallel"] == "perceptrons" and models[0].hash_bits == 17
    assert np.array_equal(np.asarray(models[0].weights), np.asarray(models[1].weights))


def test_dev_with_gold_forms_is_decoded_with_inflection(tmp_path, pt_train):
    """The newcomer's recipe makes dev with ``--with-gold`` too: training and tuning decode it
    without its gold forms (the same dev BLEU as dev without them), and the model still orders
    given gold forms at realisation time."""
    from tests.conftest import t1_file
    from wo.sr.stages import stage_list

    train = t1_file(tmp_path / "train.t1", pt_train[:150], gold=True)
    bleus = []
    for gold in (False, True):
        dev = t1_file(tmp_path / f"dev{gold}.t1", pt_train[150:190], gold=gold)
        ref = t1_file(tmp_path / f"ref{gold}.t1", pt_train[150:190], gold=True)
        path = tmp_path / f"m{gold}.wo"
        p = wo_cli(["sr", "train", "--train", train, "--dev", dev, "--dev-ref", ref, "--lang", "pt", "--epochs", 1,
                    "--set", "order.hash_bits=16", "--set", "tune.lms=false", "--model", path, "--quiet"])
        assert p.returncode == 0, p.stderr
        head = Model.read_header(str(path))[0]
        bleus.append(head["training"]["dev_bleu"])
        assert next(d for d in stage_list(head) if d["stage"] == "candidates")["gold_forms"] is True
    assert bleus[0] == bleus[1] < 99


def test_each_stage_fits_what_the_trainer_builds(pt_local, pt_train):
    """Stage.fit on the training data gives the tables wo sr train built in its workers: the
    lifting model, the lexicon, the allomorph counts and the contractions of the model file."""
    from tests.conftest import PT_TRAIN
    from wo.sr.stages import CandidateStage, ContractionStage, FormStage, LiftStage, TrainingData
    from wo.sr.t1 import gold_sentences, make_input

    sents = [make_input(s, 3, i, True) for i, s in enumerate(pt_train[:340])]
    data = TrainingData(sents, [s.orig for s in sents], gold_sentences(sents), mwt_files=[str(PT_TRAIN)])
    model = {d["stage"]: d for d in Model.read_header(pt_local["model"])[0]["sr"]["stages"]}
    lift, cand, forms, mwt = LiftStage(), CandidateStage(lang="pt"), FormStage(), ContractionStage()
    for st in (lift, cand, forms, mwt):
        st.fit(data)
    assert lift.model.table == model["lift"]["table"]
    assert cand.to_json()["lexicon"]["table"] == model["candidates"]["lexicon"]["table"]
    assert forms.allomorphs.to_json() == Allomorphs.build(data.gold).to_json()
    assert mwt.to_json()["table"] == model["contractions"]["table"] and len(mwt.table) > 5
