"""The Python API a pipeline calls: models by name as the CLI resolves them, a streaming
``pipe`` on loaded objects (an iterable in, a generator out, the same results with forked
processes), readable reprs, and clear TypeErrors for input of the wrong kind."""
import pytest

from tests.conftest import ROOT

PT = ROOT / "tests" / "data" / "sr" / "pt_bosque-test-40.conllu.xz"


def test_realizer_loads_shipped_models_by_code_and_by_language():
    from wo.sr.models import find_model
    from wo.sr.realizer import Realizer

    r = Realizer.load("pt_bosque")
    assert r.model.path == find_model("pt_bosque") and r.lang == "pt" and r.track == "shallow"
    assert "pt_bosque.wo" in repr(r) and "track='shallow'" in repr(r)
    assert Realizer.load(lang="pt").model.path == find_model("pt")
    deep = Realizer.load(lang="fr_partut", track="deep")
    assert deep.track == "deep" and deep.model.path.endswith("fr_partut-deep.wo")
    assert Realizer.load("fr_partut-deep").model.path == deep.model.path
    with pytest.raises(FileNotFoundError, match="xx_nowhere: no such model file.*wo sr models"):
        Realizer.load("xx_nowhere")
    with pytest.raises(ValueError, match="track"):
        Realizer.load(lang="pt", track="t2")


def test_realizer_pipe_streams_a_generator_and_forks_to_the_same_results():
    import types

    from wo.io import read_conllu
    from wo.sr.realizer import Realizer
    from wo.sr.t1 import make_input

    r = Realizer.load("pt_bosque")
    gold = read_conllu(str(PT))
    sents = (make_input(s, seed=3, index=i) for i, s in enumerate(gold))      # a generator, not a list
    out = r.pipe(sents, batch_size=7)
    assert isinstance(out, types.GeneratorType)
    one = [x.tokens for x in out]
    assert len(one) == len(gold) == 40 and all(one)
    assert one == [r.realize(make_input(s, seed=3, index=i)).tokens for i, s in enumerate(gold)]
    two = [x.tokens for x in r.pipe((make_input(s, seed=3, index=i) for i, s in enumerate(gold)), batch_size=5,
                                    n_process=2)]
    assert two == one
    with pytest.raises(TypeError, match="plain text, not a parse"):
        next(r.pipe(["Ele comeu ."]))
    with pytest.raises(ValueError, match="batch_size"):
        next(r.pipe([], batch_size=0))


def test_linearizer_refuses_a_string_for_a_bag_and_pipes_bags():
    from wo.dep.linearizer import Linearizer

    lin = Linearizer.load()
    with pytest.raises(TypeError, match=r"not a string: pass 'barked dog'.split\(\)"):
        lin.linearize("barked dog")             # before: ordered the characters, status "completed"
    with pytest.raises(TypeError, match="list of str"):
        lin.linearize([["dog"], ["The"]])
    bags = [["dog", "The", "barked"], ["cat", "a", "sat"], "oops".split()]
    got = [x.tokens for x in lin.pipe(iter(bags), batch_size=2)]
    assert [sorted(t) for t in got] == [sorted(b) for b in bags]
    with pytest.raises(TypeError, match="not a string"):
        list(lin.pipe(["barked dog"]))


def test_package_metadata_marks_typing_and_the_python_the_code_needs():
    import ast
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert (ROOT / "wo" / "py.typed").exists() and "py.typed" in meta["tool"]["setuptools"]["package-data"]["wo"]
    # the code imports dataclasses.KW_ONLY (3.10+): the metadata must not promise 3.9
    uses_kw_only = "KW_ONLY" in (ROOT / "wo" / "system.py").read_text(encoding="utf-8")
    low = meta["project"]["requires-python"].split("#")[0].strip()
    assert not uses_kw_only or low in (">=3.10", ">=3.11", ">=3.12"), low
    ast.parse((ROOT / "wo" / "system.py").read_text(encoding="utf-8"), feature_version=(3, 10))


@pytest.mark.parametrize("track", ["shallow", "deep"])
def test_sr_realize_writes_the_realised_tree_as_conllu(tmp_path, track):
    import conllu

    from wo.cli import main
    from wo.sr.t1 import read_t1

    if track == "shallow":
        src = tmp_path / "pt.t1"
        assert main(["sr", "make-input", "--ud", str(PT), "--out", str(src), "--seed", "3"]) == 0
        lang = "pt_bosque"
    else:   # the official en_partut T2 slice: content words only, the function words generated
        src = ROOT / "tests" / "data" / "sr" / "en_partut-t2-train-60.conllu.xz"
        lang = "en_partut"
    out = tmp_path / "out.conllu"
    assert main(["sr", "realize", "--lang", lang, "--input", str(src), "--output", str(out), "--format", "conllu",
                 "--quiet"]) == 0
    inputs = read_t1(str(src))
    sents = conllu.parse(out.read_text(encoding="utf-8"))
    tok = (tmp_path / "out.conllu.tok").read_text(encoding="utf-8").splitlines()
    assert len(sents) == len(inputs) == len(tok)
    for s, t, line in zip(sents, inputs, tok):
        words = [w for w in s if isinstance(w["id"], int)]
        assert [w["id"] for w in words] == list(range(1, len(words) + 1))
        assert sum(1 for w in words if w["head"] == 0) == 1 and s.to_tree() is not None   # one tree
        assert all(w["deprel"] != "_" and w["upos"] != "_" and w["lemma"] != "_" for w in words)
        assert s.metadata["sent_id"] == t.sent_id and s.metadata["text"]
        assert " ".join(w["form"] for w in words).lower() == line.lower()             # the .tok twin's words
        given = [x for x in t.lemmas if x != "_"]
        if track == "shallow":
            assert sorted(w["lemma"] for w in words) == sorted(given)
        else:
            assert len(words) >= len(given)                                         # function words generated
    if track == "deep":
        assert sum(len([w for w in s if isinstance(w["id"], int)]) for s in sents) > \
            sum(len([x for x in t.lemmas if x != "_"]) for t in inputs) * 1.3
    else:   # Portuguese contractions (de + o -> do) as multiword-token ranges
        assert any(isinstance(w["id"], tuple) for s in sents for w in s)
    _udapi_reads(out)
    _ud_validates(out, lang.split("_")[0])   # before: 'SpaceAfter=No' missing, a # text without its ranges


def _pt_tokenlists():
    import conllu
    import lzma

    return conllu.parse(lzma.open(PT, "rt", encoding="utf-8").read())


def test_realizer_takes_a_conllu_tokenlist_conllu_text_and_a_spacy_doc():
    from wo.sr.realizer import Realizer

    r = Realizer.load("pt_bosque")
    tls = _pt_tokenlists()[:5]
    for tl in tls:   # before: AttributeError
        words = [t for t in tl if isinstance(t["id"], int)]
        got = r.realize(tl)
        assert got.status == "ok" and len(got.tokens) == len(words)
        assert r.realize(tl.serialize()).tokens == got.tokens                      # the same sentence as text
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import Doc

    for tl in tls:
        ws = [t for t in tl if isinstance(t["id"], int)]
        doc = Doc(spacy.blank("pt").vocab, words=[t["form"] for t in ws],
                  heads=[(t["head"] - 1) if t["head"] else k for k, t in enumerate(ws)],
                  deps=[t["deprel"] if t["head"] else "ROOT" for t in ws], pos=[t["upos"] for t in ws],
                  tags=[t["xpos"] or "_" for t in ws], lemmas=[t["lemma"] for t in ws],
                  morphs=[("|".join(f"{k}={v}" for k, v in t["feats"].items()) if t["feats"] else "") for t in ws])
        assert r.realize(doc[:]).tokens == r.realize(tl).tokens                    # a Span, the same T1 input
    with pytest.raises(TypeError, match="cannot read a int as a sentence"):
        r.realize(42)
    with pytest.raises(ValueError, match="one sentence per item"):
        r.realize("".join(tl.serialize() for tl in tls[:2]))


def test_realizer_takes_a_stanza_sentence():
    stanza = pytest.importorskip("stanza")
    from stanza.models.common.doc import Document

    from wo.sr.realizer import Realizer

    tl = _pt_tokenlists()[0]
    ws = [t for t in tl if isinstance(t["id"], int)]
    doc = Document([[{"id": t["id"], "text": t["form"], "lemma": t["lemma"], "upos": t["upos"], "xpos": t["xpos"],
                      "feats": "|".join(f"{k}={v}" for k, v in t["feats"].items()) if t["feats"] else None,
                      "head": t["head"], "deprel": t["deprel"]} for t in ws]])
    r = Realizer.load("pt_bosque")
    assert r.realize(doc.sentences[0]).tokens == r.realize(tl).tokens


def test_sr_models_with_no_model_installed_says_how_to_get_one(tmp_path):
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import sys
        import wo.resources as R
        R.model_dirs = lambda: []                  # as if no model package were installed
        R.package_dirs = lambda: []
        from wo.cli import main
        sys.exit(main(["sr", "models"]))
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 1 and p.stdout == "", (p.stdout, p.stderr)       # before: a bare header, exit 0
    assert "no SR model found" in p.stderr and "wo-models-sr" in p.stderr and "Traceback" not in p.stderr


def test_wo_models_and_wo_sr_models_are_one_catalogue():
    """Before: `wo models` counted an SR model's side LMs and `wo sr models` did not, and the two
    gave the English SR model different licences."""
    import os

    from wo.resources import list_models as every
    from wo.sr.models import list_models

    cat = {os.path.realpath(r["path"]): r for r in every()}
    rows = list_models()
    assert len(rows) >= 20
    for r in rows:
        c = cat[os.path.realpath(r["path"])]
        assert (r["bytes"], r["data"]["licence"]) == (c["bytes"], c["licence"]), r["code"]
        assert r["model_bytes"] == os.path.getsize(r["path"]) <= r["bytes"]


def test_readers_take_paths_open_files_and_text():
    """Before: read_t1 and read_conllu took only paths (io.StringIO was a TypeError)."""
    import io
    import lzma
    import pathlib

    from wo import read_conllu, read_t1
    from wo.io.conllu import InputError
    from wo.sr.t1 import format_t1, make_input

    text = lzma.open(PT, "rt", encoding="utf-8").read()
    ref = read_conllu(str(PT))
    assert len(ref) == 40
    for src in (pathlib.Path(PT), io.StringIO(text), text, io.BytesIO(text.encode()), lzma.open(PT, "rb")):
        assert read_conllu(src) == ref, type(src).__name__
    t1 = "\n".join(format_t1(make_input(s, 3, i)) for i, s in enumerate(ref)) + "\n"
    from_text = read_t1(t1)
    assert [s.lemmas for s in read_t1(io.StringIO(t1))] == [s.lemmas for s in from_text] and len(from_text) == 40
    with pytest.raises(InputError, match=r"^<text>:1: expected 10 tab-separated columns"):
        read_conllu("1\tx\n")
    with pytest.raises(TypeError, match="a path, an open file or text"):
        read_conllu(42)


UPOS = {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT", "SCONJ",
        "SYM", "VERB", "X"}


@pytest.mark.parametrize("given", ["bags", "none", "full"])
def test_linearize_conllu_output_is_valid_ud(tmp_path, given):
    """Before: LEMMA, UPOS and DEPREL were `_` (not UD)."""
    import conllu

    from wo.cli import main
    from wo.io import read_conllu

    ewt = read_conllu(str(ROOT / "corpora" / "ud-en-ewt" / "en_ewt-ud-test.conllu.xz"))[:15]
    src = tmp_path / "in.conllu"
    if given == "bags":
        src = tmp_path / "bags.txt"
        src.write_text("".join(" ".join(s.forms) + "\n" for s in ewt), encoding="utf-8")
        args = []
    else:
        import lzma

        blocks = lzma.open(ROOT / "corpora" / "ud-en-ewt" / "en_ewt-ud-test.conllu.xz", "rt", encoding="utf-8").read()
        src.write_text("\n\n".join(blocks.split("\n\n")[:15]) + "\n\n", encoding="utf-8")
        args = ["--given", given]
    out = tmp_path / "out.conllu"
    assert main(["linearize", "--input", str(src), "--output", str(out), "--format", "conllu", "--quiet", *args]) == 0
    sents = conllu.parse(out.read_text(encoding="utf-8"))
    assert len(sents) == 15
    for s, g in zip(sents, ewt):
        words = [w for w in s if isinstance(w["id"], int)]
        assert sorted(w["form"] for w in words) == sorted(g.forms)
        assert all(w["upos"] in UPOS and w["lemma"] not in ("_", "") and w["deprel"] not in ("_", "") for w in words)
        assert [w["deprel"] for w in words if w["head"] == 0] == ["root"] and s.to_tree() is not None
        if given != "bags":   # the input's lemmas and UPOS carried over
            assert sorted((w["form"], w["lemma"], w["upos"]) for w in words) == sorted(zip(g.forms, g.lemmas, g.upos))
        if given == "full":   # the given tree: its relations too
            assert sorted((w["form"], w["deprel"]) for w in words) == sorted(zip(g.forms, g.deprels))
    _udapi_reads(out)
    _ud_validates(out, "en")   # before: 'SpaceAfter=No' missing where # text glues words


def _ud_validates(path, lang: str):
    """The UD project's own validator (udtools' ``udvalidate``, where it installs) passes the
    file at level 2: the format, the tree, multiword-token ranges, and the ``# text`` that the
    token lines spell with their ``SpaceAfter=No`` marks (levels 3 and up check the annotation
    wo copies from its input)."""
    import subprocess
    import sys

    pytest.importorskip("udtools")
    p = subprocess.run([sys.executable, "-c", "import sys; from udtools.cli import main; sys.exit(main())",
                        "--lang", lang, "--level", "2", "--max-err", "5", str(path)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "PASSED" in p.stdout + p.stderr, (p.stdout + p.stderr)[-3000:]


def _udapi_reads(path):
    """udapi (where it installs) reads the file as trees, and its ud.MarkBugs finds no
    punctuation relation and no structure bug in what wo generated."""
    udapi = pytest.importorskip("udapi")
    from udapi.block.ud.markbugs import MarkBugs
    from udapi.core.document import Document

    doc = Document(str(path))
    assert doc.bundles and all(len(b.trees) == 1 and b.trees[0].descendants for b in doc.bundles)
    MarkBugs().apply_on_document(doc)
    bugs = {n.misc["Bug"] for b in doc.bundles for t in b.trees for n in t.descendants if n.misc["Bug"]}
    assert not bugs & {"punct-deprel", "punct-child", "rel-upos-punct", "root-not-root", "multi-subj"}, bugs
    return udapi


def test_the_distribution_name_is_free_of_the_index_s_unrelated_wo():
    """The package index's `wo` is another project (a workflow tool) that also installs a module
    `wo`: wo is distributed as wo-nlg, and every install hint names that."""
    import tomllib

    from wo.extras import MissingExtra

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["name"] == "wo-nlg" and meta["scripts"] == {"wo": "wo.cli:main"}
    assert all(x.startswith("wo-nlg[") for x in meta["optional-dependencies"]["all"])
    assert "pip install 'wo-nlg[smt]'" in str(MissingExtra("smt", ["spaCy"]))
    assert "**`wo-nlg`**" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_progress_bars_learn_their_total_once_the_input_is_read(tmp_path):
    """Before: `43sent [00:09, 7.07sent/s]`, no total, percentage or ETA."""
    import io

    from tqdm import tqdm

    from wo.sr.realizer import run

    t1 = tmp_path / "pt.t1"
    from wo.cli import main

    assert main(["sr", "make-input", "--ud", str(PT), "--out", str(t1), "--seed", "3"]) == 0
    buf = io.StringIO()
    bar = tqdm(unit="sent", file=buf, disable=False, mininterval=0)
    from wo.sr.models import find_model

    run(find_model("pt_bosque"), str(t1), str(tmp_path / "out.txt"), progress=bar.update)
    bar.close()
    assert bar.total == 40 and bar.n == 40
    assert "100%" in buf.getvalue() and "40/40" in buf.getvalue()


def test_given_full_on_a_plain_bag_is_refused(tmp_path):
    """Before: ignored with exit 0 (a bag has no tree to give); now each bag line is that
    sentence's error (exit 1, its words in input order)."""
    import subprocess
    import sys

    bags = tmp_path / "bags.txt"
    bags.write_text("barked dog The\n", encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "wo.cli", "linearize", "--input", str(bags), "--given", "full"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stderr and p.stdout.split() == ["barked", "dog", "The"]
    assert f"{bags}:1: --given full needs the tree" in p.stderr   # the sentence's error, its words as given


def test_linearizer_pipes_parsed_sentences_with_their_trees():
    from wo.dep.linearizer import Linearizer
    from wo.io import read_conllu

    lin = Linearizer.load()   # the English model: EWT sentences
    import conllu
    import lzma

    text = lzma.open(ROOT / "corpora" / "ud-en-ewt" / "en_ewt-ud-test.conllu.xz", "rt", encoding="utf-8").read()
    tls = conllu.parse("\n\n".join(text.split("\n\n")[:6]) + "\n\n")
    gold = read_conllu(str(ROOT / "corpora" / "ud-en-ewt" / "en_ewt-ud-test.conllu.xz"))[:6]
    got = list(lin.pipe(tls, batch_size=4))
    for r, g in zip(got, gold):
        assert sorted(r.tokens) == sorted(g.forms)
        # the given tree: each word keeps its head
        pos = {i: j for j, i in enumerate(r.order)}
        assert all(r.heads[pos[i]] == (0 if h == 0 else pos[h - 1] + 1) for i, h in enumerate(g.heads))
    with pytest.raises(TypeError, match="cannot read a int"):
        next(lin.pipe([42]))


def test_decode_batch_refuses_items_of_the_wrong_kind():
    """Before: decode_batch([["dog", "The"]]) failed with a TypeError from inside."""
    from wo.dep.linearizer import Linearizer

    lin = Linearizer.load()
    with pytest.raises(TypeError, match=r"decode_batch takes prepared \(words, pos, heads\) items.*pipe\(bags\)"):
        lin.decode_batch([["dog", "The"]])
    got = lin.decode_batch([lin.prepare(["dog", "The", "barked"])])
    assert sorted(got[0].tokens) == ["The", "barked", "dog"]


def test_every_loaded_system_names_its_model_in_its_repr():
    from wo.dep.linearizer import Linearizer
    from wo.idl.realize import IDLRealizer

    assert repr(Linearizer.load()) == "<Linearizer wo-ewt-dep-lm.wo>"
    assert repr(IDLRealizer.load()) == "<IDLRealizer wo-en-4gram.wolm>"


def test_realizer_detokenize_is_the_submission_text(tmp_path):
    """Realizer.detokenize gives the running text the submission's ``# text`` line has:
    contractions made (pt de + o -> do) and the Moses detokenizer's spacing."""
    from wo.cli import main
    from wo.sr.realizer import Realizer
    from wo.sr.t1 import read_t1

    src, out = tmp_path / "pt.t1", tmp_path / "pt.txt"
    assert main(["sr", "make-input", "--ud", str(PT), "--out", str(src), "--seed", "3"]) == 0
    assert main(["sr", "realize", "--lang", "pt_bosque", "--input", str(src), "--output", str(out), "--quiet"]) == 0
    texts = [ln[len("# text = "):] for ln in out.read_text(encoding="utf-8").splitlines() if ln.startswith("# text = ")]
    sr = Realizer.load("pt_bosque")
    got = [sr.detokenize(r) for r in sr.pipe(read_t1(str(src)))]
    assert got == texts and any(r.ranges for r in sr.pipe(read_t1(str(src))))
    assert sum(" do " in " " + t + " " or " da " in " " + t + " " for t in got) >= 5


def test_an_intra_word_hyphen_is_written_without_spaces(tmp_path):
    """A hyphen tagged HYPH (UD English's intra-word hyphen) is joined to its neighbours in the
    running text: the submission's ``# text``, the CoNLL-U output (``SpaceAfter=No`` on both
    sides, valid for the UD validator) and Realizer.detokenize; the tokens are unchanged.
    Before: "a 15 - year term"."""
    import lzma
    import re

    from wo.cli import main
    from wo.sr.lang import language

    en = language("en")
    assert en.detokenize(["a", "15", "-", "year", "term"], ["DT", "CD", "HYPH", "NN", "NN"]) == "a 15-year term"
    assert en.detokenize(["a", "15", "-", "year", "term"]) == "a 15 - year term"            # no tags: as Moses
    assert en.detokenize(["yes", "-", "no"], ["UH", ":", "UH"]) == "yes - no"                 # a dash stays apart
    from wo.io.text import detokenize

    for f in (en.detokenize, detokenize):   # UD's "do n't": Moses alone writes "do n't"
        assert f(["I", "do", "n't", "know", ",", "they", "ca", "n't", "."]) == "I don't know, they can't."
    blocks = lzma.open(ROOT / "corpora" / "ud-en-ewt" / "en_ewt-ud-test.conllu.xz", "rt", encoding="utf-8").read()
    hyph = [b for b in blocks.split("\n\n") if "\tHYPH\t" in b][:20]
    ud = tmp_path / "hyph.conllu"
    ud.write_text("\n\n".join(hyph) + "\n\n", encoding="utf-8")
    src, out, conl = tmp_path / "in.t1", tmp_path / "out.txt", tmp_path / "out.conllu"
    assert main(["sr", "make-input", "--ud", str(ud), "--out", str(src)]) == 0
    assert main(["sr", "realize", "--input", str(src), "--output", str(out), "--quiet"]) == 0
    texts = [ln for ln in out.read_text(encoding="utf-8").splitlines() if ln.startswith("# text = ")]
    glued = sum(len(re.findall(r"\w-\w", t)) for t in texts)
    assert glued >= 15, texts                                        # before: 0 (" - " everywhere)
    assert main(["sr", "realize", "--input", str(src), "--output", str(conl), "--format", "conllu", "--quiet"]) == 0
    assert [ln for ln in conl.read_text(encoding="utf-8").splitlines() if ln.startswith("# text = ")] == texts
    _ud_validates(conl, "en")
