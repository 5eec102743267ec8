"""The front-end protocol every system shares (wo.system): results that are wo.system.Result,
one cached worker (wo.io.batch.load_system) that notices a retrained model, the model loaded
once per process, `wo sr realize` on the batch spine (--on-error, both files), defaults in
--help, the shipped LM as the default of `wo idl` and `wo gyro`, and the names of inputs in
messages."""
import pathlib

import pytest

from tests.conftest import EWT, ROOT, conllu_blocks, write_blocks
from wo.cli import main

PT = ROOT / "tests" / "data" / "sr" / "pt_bosque-test-40.conllu.xz"
LM = ROOT / "corpora" / "models" / "wo-en-4gram.wolm"
DEP = ROOT / "corpora" / "models" / "wo-ewt-dep-lm.wo"
BAGS = ["the dog barked .", "she gave him a book ."]


def _bags(tmp_path, lines=BAGS):
    p = tmp_path / "bags.txt"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _first_conllu(tmp_path, n):
    return write_blocks(tmp_path / f"first{n}.conllu", conllu_blocks(str(EWT / "en_ewt-ud-test.conllu.xz"))[:n])


def test_every_system_class_has_the_protocol():
    from wo import system
    from wo.ccg.linearizer import Linearizer as CCG, Result as CCGResult
    from wo.dep.linearizer import Linearizer as Dep, Result as DepResult
    from wo.gyro.realize import GyroRealizer, GyroResult
    from wo.idl.realize import IDLRealizer, Realization
    from wo.smt.translate import Translation, Translator
    from wo.sr.realizer import Realizer, SRResult

    pairs = [(Dep, DepResult, "dep"), (CCG, CCGResult, "ccg"), (Realizer, SRResult, "sr"),
             (IDLRealizer, Realization, "idl"), (GyroRealizer, GyroResult, "gyro"), (Translator, Translation, "smt")]
    for cls, res, name in pairs:
        assert issubclass(cls, system.System) and cls.name == name
        assert issubclass(res, system.Result)
        for meth in ("load", "decode_item", "fallback"):
            assert getattr(cls, meth) is not getattr(system.System, meth), (cls, meth)


@pytest.mark.skipif(not (DEP.exists() and LM.exists()), reason="shipped models not in the tree")
def test_decoded_items_are_results_with_the_common_fields():
    from wo.dep.linearizer import Linearizer
    from wo.idl.realize import IDLRealizer
    from wo.system import Result
    from wo.sr.realizer import Realizer
    from wo.sr.t1 import make_input
    from wo.io.conllu import read_conllu

    words = "the dog barked .".split()
    dep = Linearizer.load(str(DEP))
    r = dep.decode_item((words, None, None))
    assert isinstance(r, Result) and sorted(r.tokens) == sorted(words) and r.status == "ok" and r.pops > 0
    assert r.seconds > 0 and r.message == "" and r.score != 0.0
    bad = dep.decode_batch([([], None, None), (words, None, None)])
    assert bad[0].status == "error" and bad[0].failed and "empty input" in bad[0].message
    assert bad[1].tokens == r.tokens                                    # the others are unaffected
    idl = IDLRealizer.load(None)                                        # the shipped 4-gram
    q = idl.decode_batch([("dog the barked .", 1, "bag")])[0]
    assert isinstance(q, Result) and q.tokens == ["the", "dog", "barked", "."] and q.score == q.log10_prob < 0
    sr = Realizer.load(None)                                            # the shipped English model
    sent = read_conllu(str(_first_conllu(pathlib.Path(__import__("tempfile").mkdtemp()), 1)))[0]
    t1 = make_input(sent, 1, 0)
    s = sr.decode_item(t1)
    assert isinstance(s, Result) and len(s.tokens) == len(sent.forms) and s.status in ("ok", "completed")
    f = sr.fallback(t1, "broken")
    assert f.status == "error" and f.tokens == list(t1.lemmas) and f.message == "broken"


@pytest.mark.skipif(not DEP.exists(), reason="shipped model not in the tree")
def test_the_worker_cache_reloads_a_retrained_model(tmp_path):
    """One cached worker for every system, keyed by the model file's path, mtime and size: a model
    rewritten at the same path is loaded again (the copies it replaced, except SR's, kept the old
    one); the same file and options give the same object."""
    import os

    from wo.dep.linearizer import Linearizer
    from wo.io.batch import load_system, system_worker
    from wo.model import Model

    path = str(tmp_path / "m.wo")
    m = Model.load(str(DEP))
    m.header.setdefault("decode", {})["budget_factor"] = 7.0
    m.save(path, compact="float16")
    opts = {"lm": "none"}
    a = load_system(Linearizer, path, opts)
    assert load_system(Linearizer, path, dict(opts)) is a and a.budget_factor == 7.0
    assert load_system(Linearizer, path, {"lm": "none", "timeout": 1.0}) is not a     # options are in the key
    st = os.stat(path)
    m.header["decode"]["budget_factor"] = 3.0                                          # retrained, same path
    m.save(path, compact="float16")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    b = load_system(Linearizer, path, opts)
    assert b is not a and b.budget_factor == 3.0
    res = system_worker(Linearizer, path, opts, [("the dog barked .".split(), None, None)])
    assert load_system(Linearizer, path, opts) is b and res[0].pops <= max(8, int(3.0 * 4))


@pytest.mark.skipif(not DEP.exists(), reason="shipped model not in the tree")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_model_is_loaded_once_by_the_parent(tmp_path, monkeypatch, jobs):
    """`wo linearize` loads the model file once in this process (it used to load it twice:
    once to check it, once more in the in-process worker); with --jobs 2 the parent loads it
    once to check it and the workers load their own."""
    from wo import io as _io  # noqa: F401
    from wo.io import batch
    from wo.model import Model

    monkeypatch.setattr(batch, "_SYSTEMS", {})
    calls = []
    real = Model.load.__func__

    def counting(cls, path, *a, **k):
        calls.append(str(path))
        return real(cls, path, *a, **k)

    monkeypatch.setattr(Model, "load", classmethod(counting))
    out = tmp_path / "o.txt"
    assert main(["linearize", "--model", str(DEP), "--lm", "none", "--input", str(_first_conllu(tmp_path, 3)),
                 "--output", str(out), "--jobs", jobs, "--quiet"]) == 0
    assert calls.count(str(DEP)) == 1, calls
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


def _pt_t1(tmp_path):
    t1 = tmp_path / "pt.t1"
    assert main(["sr", "make-input", "--ud", str(PT), "--out", str(t1), "--seed", "3"]) == 0
    return t1


def _break_second_sentence(t1, out):
    """A copy of T1 file ``t1`` whose 2nd sentence has two roots; returns its first line number."""
    blocks = t1.read_text(encoding="utf-8").split("\n\n")
    lines = blocks[1].split("\n")
    for k, ln in enumerate(lines):
        cols = ln.split("\t")
        if len(cols) == 10 and cols[6] != "0":
            cols[6] = "0"
            lines[k] = "\t".join(cols)
            break
    blocks[1] = "\n".join(lines)
    out.write_text("\n\n".join(blocks), encoding="utf-8")
    return len(blocks[0].split("\n")) + 2


def test_sr_realize_on_error_keeps_the_other_sentences(tmp_path, capsys):
    t1 = _pt_t1(tmp_path)
    bad = tmp_path / "bad.t1"
    line = _break_second_sentence(t1, bad)
    plain = tmp_path / "plain.txt"
    assert main(["sr", "realize", "--lang", "pt_bosque", "--input", str(t1), "--output", str(plain), "--quiet"]) == 0
    ref = plain.read_text(encoding="utf-8").split("\n\n")
    ref_tok = (tmp_path / "plain.txt.tok").read_text(encoding="utf-8").splitlines()
    n = len(ref_tok)
    assert n == 40
    capsys.readouterr()
    for mode in ("fallback", "skip"):
        out = tmp_path / f"{mode}.txt"
        assert main(["sr", "realize", "--lang", "pt_bosque", "--input", str(bad), "--output", str(out),
                     "--on-error", mode, "--quiet"]) == 1
        err = capsys.readouterr().err
        assert f"{bad}:{line}: T1 input needs exactly one root" in err and "Traceback" not in err, err
        got = out.read_text(encoding="utf-8").split("\n\n")
        tok = (tmp_path / f"{mode}.txt.tok").read_text(encoding="utf-8").splitlines()
        assert len(tok) == n and got[0] == ref[0] and got[2:] == ref[2:] and tok[:1] + tok[2:] == ref_tok[:1] + ref_tok[2:]
        assert got[1].split("\n")[0] == ref[1].split("\n")[0]        # the same sent_id
        if mode == "skip":
            assert got[1].split("\n")[1] == "# text = " and tok[1] == ""
        else:
            assert tok[1] and tok[1] != ref_tok[1]                  # the lemmas in input order
    out = tmp_path / "fail.txt"
    assert main(["sr", "realize", "--lang", "pt_bosque", "--input", str(bad), "--output", str(out),
                 "--on-error", "fail", "--quiet"]) == 2
    assert "nothing written" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "fail.txt.tok").exists()


def test_stdin_is_named_in_messages(tmp_path, capsys, monkeypatch):
    import io

    t1 = _pt_t1(tmp_path)
    bad = tmp_path / "bad.t1"
    line = _break_second_sentence(t1, bad)

    class Stdin:
        buffer = io.BytesIO(bad.read_bytes())

    monkeypatch.setattr("sys.stdin", Stdin())
    monkeypatch.setattr("wo.io.text._STDIN_CACHE", None, raising=False)
    capsys.readouterr()
    assert main(["sr", "realize", "--lang", "pt_bosque", "--input", "-", "--output", str(tmp_path / "o.txt"),
                 "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"<stdin>:{line}: T1 input needs exactly one root" in err and "-:" not in err, err


def test_help_shows_the_defaults(capsys):
    for argv, shown in ((["idl", "realize", "--help"], ["(default: astar)", "(default: 1000000)"]),
                        (["linearize", "--help"], ["(default: fallback)", "(default: loky)", "(default: 200)"]),
                        (["sr", "realize", "--help"], ["(default: fallback)"]),
                        (["gyro", "realize", "--help"], ["(default: 3)", "(default: 500)", "(default: 0.5)"])):
        with pytest.raises(SystemExit) as ex:
            main(argv)
        assert ex.value.code == 0
        text = " ".join(capsys.readouterr().out.split())
        for s in shown:
            assert s in text, (argv, s)
        assert "(default: None)" not in text and "(default: False)" not in text


@pytest.mark.skipif(not LM.exists(), reason="shipped LM not in the tree")
def test_idl_and_gyro_run_without_lm(tmp_path):
    bags = _bags(tmp_path)
    for verb in (["idl", "realize", "--input-format", "bag"], ["gyro", "realize", "--input-format", "bag"]):
        out = tmp_path / "out.txt"
        assert main(verb + ["--input", str(bags), "--output", str(out), "--quiet"]) == 0
        got = out.read_text(encoding="utf-8").splitlines()
        with_lm = tmp_path / "with.txt"
        assert main(verb + ["--lm", str(LM), "--input", str(bags), "--output", str(with_lm), "--quiet"]) == 0
        assert got == with_lm.read_text(encoding="utf-8").splitlines()
        assert [sorted(x.split()) for x in got] == [sorted(b.split()) for b in BAGS]


def test_smt_names_a_tsv_input_as_such(tmp_path, capsys):
    from wo.smt.translate import read_lines

    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("en\tzh\tattribution\nHello.\t你好。\tx\n", encoding="utf-8")
    lines, is_tsv = read_lines(str(tsv), with_format=True)
    assert is_tsv and [x.text for x in lines] == ["你好。"]
    plain = tmp_path / "zh.txt"
    plain.write_text("你好。\n", encoding="utf-8")
    assert read_lines(str(plain), with_format=True)[1] is False
    assert main(["smt", "translate", "--input", str(tsv), "--output", str(tmp_path / "en.txt")]) == 0
    err = capsys.readouterr().err
    assert "read as a Tatoeba TSV (its zh column)" in err and "Chinese lines" not in err, err
