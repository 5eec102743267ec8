"""CCG derivations in CCGbank .auto format and the grammar read off them (wo.ccg), on the real
converted EWT data in corpora/ccg-en: byte-identical round trips, the counts stated in the data's
README, categories, reading past broken sentences, rule extraction, tag dictionary, coverage."""
import gzip
import io
import json
import lzma
import sys

import numpy as np
import pytest

from tests.conftest import ROOT
from wo.ccg import (AutoFormatError, CategoryError, CategoryTable, Derivation, Leaf, Node, argument,
                    atom, backward, format_derivation, forward, parse_category, parse_derivation,
                    read_auto, result, write_auto)
from wo.ccg.grammar import README_ORDER, Grammar, classify_binary, combinators

CCG = ROOT / "corpora" / "ccg-en"


def _text(name):
    with lzma.open(CCG / name, "rt", encoding="utf-8") as fh:
        return fh.read()


@pytest.fixture(scope="module")
def train(ccg_train):
    return ccg_train


@pytest.fixture(scope="module")
def dev(ccg_dev):
    return ccg_dev


@pytest.fixture(scope="module")
def grammar(train):
    return Grammar.from_derivations(train)


# --- reading and writing the real files ------------------------------------------------------

def test_dev_round_trip_is_byte_identical(dev, tmp_path):
    assert not [d for d in dev if d.error]
    out = tmp_path / "dev.auto"
    write_auto(dev, str(out))
    assert out.read_bytes() == _text("dev.auto.xz").encode("utf-8")
    buf = io.StringIO()                                   # the file-object path of write_auto
    write_auto(dev, buf)
    assert buf.getvalue() == out.read_text(encoding="utf-8")


def test_train_round_trip_is_byte_identical(train, tmp_path):
    lines = _text("train.auto.xz").split("\n")
    # a slice through the file path (.xz written and read back) ...
    part = tmp_path / "slice.auto.xz"
    write_auto(train[3000:4500], str(part))
    again = read_auto(part)
    assert [d.sent_id for d in again] == [d.sent_id for d in train[3000:4500]]
    assert lzma.decompress(part.read_bytes()).decode("utf-8") == "\n".join(lines[6000:9000]) + "\n"
    # ... and the whole of train in memory
    buf = io.StringIO()
    write_auto(train, buf)
    assert buf.getvalue() == "\n".join(lines)


@pytest.mark.parametrize("name,sentences,leaves", [("train.auto.xz", 12220, 194444),
                                                  ("dev.auto.xz", 1969, 24189),
                                                  ("test.auto.xz", 2049, 24331)])
def test_counts_match_the_data_readme(name, sentences, leaves, train, dev):
    ds = {"train.auto.xz": train, "dev.auto.xz": dev}.get(name) or read_auto(CCG / name)
    assert len(ds) == sentences
    assert not [d for d in ds if d.error]
    assert sum(len(d) for d in ds) == leaves
    assert len({d.sent_id for d in ds}) == sentences
    for d in ds:
        assert d.header == f"ID={d.sent_id} PARSER=GOLD NUMPARSE=1"
        assert d.words and all(w and " " not in w for w in d.words)
        assert all(d.pos) and len(d.pos) == len(d.words)
        for n in d.nodes():
            assert len(n.children) in (1, 2) and n.head < len(n.children)


def test_first_dev_sentence_and_line_numbers(dev):
    d = dev[0]
    assert d.sent_id == "weblog-blogspot.com_nominations_20041117172713_ENG_20041117_172713-0001"
    assert d.words == ["From", "the", "AP", "comes", "this", "story", ":"]
    assert d.pos == ["IN", "DT", "NNP", "VBZ", "DT", "NN", ":"]
    assert [str(c) for c in d.categories] == ["((S/NP)/(S/NP))/NP", "NP/NP", "NP", "S/NP", "NP/NP", "NP", ":"]
    assert str(d.root.cat) == "S" and d.root.head == 0
    assert d.leaves()[0].predarg == "(((S{102}/NP{104}){102}/(S{102}/NP{104}){102}){110}/NP{110}){113}"
    assert [x.line for x in dev[:3]] == [1, 3, 5] and dev[-1].line == 2 * len(dev) - 1


def test_bracket_words_are_read_as_words(dev, train):
    words = {w for d in dev for w in d.words}
    assert {"(", ")", ":)", "<<", "[", "]"} <= words
    assert "->" in {w for d in train for w in d.words}
    d = parse_derivation("(<T NP 0 2> (<T NP 1 2> (<L NP/NP -LRB- -LRB- ( NP/NP>) (<L NP NN NN :) NP>) ) "
                         "(<L . -RRB- -RRB- ) .>) )")
    assert [x.word for x in d.leaves()] == ["(", ":)", ")"]
    assert format_derivation(d) == ("(<T NP 0 2> (<T NP 1 2> (<L NP/NP -LRB- -LRB- ( NP/NP>) (<L NP NN NN :) NP>) ) "
                                    "(<L . -RRB- -RRB- ) .>) )")


def test_one_word_sentences_are_bare_leaves(train):
    ones = [d for d in train if len(d) == 1]
    assert ones and all(d.root.is_leaf for d in ones)
    assert format_derivation(ones[0].root).startswith("(<L ")


# --- categories --------------------------------------------------------------------------------

def test_every_dev_category_parses_and_prints_back(dev):
    cats = {str(x.cat) for d in dev for x in d.leaves()} | {str(n.cat) for d in dev for n in d.nodes()}
    assert len(cats) > 200
    table = CategoryTable()
    for s in sorted(cats):
        c = parse_category(s)
        assert str(c) == s and parse_category(str(c)) is c
        if c.is_complex:
            rebuilt = (forward if c.is_forward else backward)(result(c), argument(c))
            assert rebuilt is c
        assert table.string(table.id(s)) == s
    assert len(table) == len(cats) and table.get("NP/NP") >= 0 and table.get("N/N") == -1


def test_category_parsing_details():
    c = parse_category("((S\\NP)/(S\\NP))/NP")
    assert c.is_forward and str(c.arg) == "NP" and str(c.result) == "(S\\NP)/(S\\NP)"
    assert str(result(result(c))) == "S\\NP" and argument(result(c)) is parse_category("S\\NP")
    assert parse_category("S\\NP/NP") is parse_category("(S\\NP)/NP")       # left-associative
    assert str(parse_category("((NP))")) == "NP"
    f = parse_category("(S[dcl]\\NP)/NP[nb]")
    assert str(f) == "(S[dcl]\\NP)/NP[nb]" and f.arg.atom == "NP" and f.arg.feature == "nb"
    assert str(parse_category("(S\\NP)[conj]")) == "(S\\NP)[conj]"
    assert str(parse_category("(S\\NP)[conj]/NP")) == "(S\\NP)[conj]/NP"
    for p in (",", ".", ";", ":"):
        assert parse_category(p).is_punct and parse_category(p).is_atomic
    assert parse_category("conj").is_conj and not parse_category("conj").is_punct
    assert atom("S", "dcl") is parse_category("S[dcl]")
    assert str(forward(backward("S", "NP"), "NP")) == "(S\\NP)/NP"
    for bad in ["", "(NP", "NP)", "/NP", "NP/", "S[dcl", "NP NP", "S[]", "()", "(" * 2000 + "NP" + ")" * 2000]:
        with pytest.raises(CategoryError):
            parse_category(bad)
    with pytest.raises(CategoryError):
        result("NP")
    t = CategoryTable(["NP", "S", "S\\NP"])
    assert CategoryTable(t.to_list()).to_list() == ["NP", "S", "S\\NP"] and "S" in t and "((" not in t


# --- bad input -------------------------------------------------------------------------------

GOOD = "(<T S 1 2> (<L NP NNP NNP Bush NP{1}>) (<L S\\NP VBD VBD left S{2}\\NP{1}>) )"


def _write(tmp_path, lines, name="in.auto", end="\n"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + end, encoding="utf-8")
    return p


def _h(i):
    return f"ID=s{i} PARSER=GOLD NUMPARSE=1"


@pytest.mark.parametrize("broken,message", [
    (GOOD + " )", "bad .auto derivation: unbalanced ')'"),
    (GOOD[:-2], "bad .auto derivation: truncated: 1 node(s) not closed"),
    ("(<T S 1 2> (<L NP NNP NNP Bush NP{1}>) )", "bad .auto derivation: expected 2 children, got 1"),
    ("(<T S 0 1> (<L NP NNP NNP Bush NP>) (<L S\\NP VBD VBD left S\\NP>) )",
     "bad .auto derivation: expected 1 children, got more"),
    ("(<T S 1 3> (<L NP NNP NNP Bush NP>) (<L S\\NP VBD VBD left S\\NP>) )", "bad .auto derivation: node"),
    ("(<T S 1 2> (<L NP NNP NNP Bush>) (<L S\\NP VBD VBD left S\\NP>) )", "bad .auto derivation: leaf"),
    ("(<T S/(NP 1 2> (<L NP NNP NNP Bush NP>) (<L S\\NP VBD VBD left S\\NP>) )", "bad .auto derivation: bad category"),
    ("(<T S 1 2> (<L NP NNP NNP Bush NP>) (<L S\\NP VBD VBD left S\\NP>) ) (<L NP NN NN x NP>)",
     "bad .auto derivation: text after the end of the tree"),
])
def test_bad_derivation_is_reported_at_its_line_and_the_others_are_kept(tmp_path, broken, message):
    p = _write(tmp_path, [_h(1), GOOD, _h(2), broken, _h(3), GOOD])
    ds = read_auto(p)
    assert [d.sent_id for d in ds] == ["s1", "s2", "s3"]
    assert ds[1].error.startswith(message) and ds[1].line == 4 and ds[1].root is None
    assert ds[0].error is None and ds[0].line == 1 and ds[0].words == ["Bush", "left"]
    assert ds[2].error is None and ds[2].line == 5 and ds[2].words == ["Bush", "left"]
    with pytest.raises(AutoFormatError, match="bad .auto derivation"):
        parse_derivation(broken)
    with pytest.raises(ValueError, match="line 4"):
        write_auto(ds, io.StringIO())


def test_missing_id_line_and_missing_derivation_line(tmp_path):
    p = _write(tmp_path, [_h(1), GOOD, GOOD, _h(3), _h(4), GOOD, "junk", _h(5), GOOD])
    ds = read_auto(p)
    assert [(d.sent_id, d.line, d.error is None) for d in ds] == [
        ("s1", 1, True), ("", 3, False), ("s3", 4, False), ("s4", 5, True), ("", 7, False), ("s5", 8, True)]
    assert "without an ID= line" in ds[1].error
    assert "ID line without a derivation line" in ds[2].error
    assert "expected an ID= line" in ds[4].error


def test_truncated_last_line_on_real_data(tmp_path):
    lines = _text("dev.auto.xz").split("\n")[:10]
    lines[9] = lines[9][:len(lines[9]) // 2]
    p = _write(tmp_path, lines, end="")                  # cut mid-line, no final newline
    ds = read_auto(p)
    assert len(ds) == 5 and all(d.error is None for d in ds[:4])
    assert ds[4].line == 10 and ds[4].error.startswith("bad .auto derivation: truncated")
    p = _write(tmp_path, lines[:9], name="noderiv.auto")  # file ends after an ID line
    ds = read_auto(p)
    assert len(ds) == 5 and ds[4].line == 9 and "end of file" in ds[4].error


def test_invalid_utf8_line_and_compressed_and_stdin_input(tmp_path, monkeypatch, dev):
    p = tmp_path / "bad.auto"
    p.write_bytes(b"\n".join([_h(1).encode(), b"(<L NP NN NN caf\xe9 NP>)", _h(2).encode(), GOOD.encode()]) + b"\n")
    ds = read_auto(p)
    assert ds[0].error == "invalid UTF-8" and ds[0].line == 2 and ds[1].error is None and ds[1].line == 3
    text = _text("dev.auto.xz")
    gz = tmp_path / "dev.auto.gz"
    gz.write_bytes(gzip.compress(text.encode("utf-8")))
    assert [d.words for d in read_auto(gz)] == [d.words for d in dev]
    from wo.io import text as textmod

    monkeypatch.setattr(textmod, "_STDIN_CACHE", None)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))
    assert len(read_auto("-")) == len(dev)


def test_tree_objects():
    d = Derivation("x", parse_derivation(GOOD), None)
    assert d.words == ["Bush", "left"] and len(d) == 2 and len(d.nodes()) == 1
    buf = io.StringIO()
    write_auto([d], buf)
    assert buf.getvalue() == "ID=x PARSER=GOLD NUMPARSE=1\n" + GOOD + "\n"
    built = Node("S", 1, [Leaf("NP", "NNP", "Bush", "NP{1}"), Leaf("S\\NP", "VBD", "left", "S{2}\\NP{1}")])
    assert built == d.root and format_derivation(built) == GOOD
    assert format_derivation(Leaf("NP", "NN", "dog")) == "(<L NP NN NN dog NP>)"
    with pytest.raises(ValueError):
        Node("S", 2, [Leaf("NP", "NN", "dog")] * 2)
    with pytest.raises(ValueError):
        Node("S", 0, [])


# --- the grammar -------------------------------------------------------------------------------

def test_grammar_counts_match_the_data_readme(grammar):
    assert grammar.sentences == 12220
    assert grammar.n_binary == 888                 # README: 888 distinct binary rule instances
    assert grammar.n_unary == 58                   # README: 58 distinct unary rule instances
    assert len(grammar.lexical) == 554
    assert sum(1 for n in grammar.lexical.values() if n >= 10) == 162
    top = sorted(grammar.lexical.items(), key=lambda kv: -kv[1])[:10]
    assert top == [("NP", 49049), ("NP/NP", 33837), ("(S\\NP)/(S\\NP)", 15064), (".", 11975), ("S\\NP", 9763),
                   ("(S\\NP)/NP", 9709), ("((S\\NP)\\(S\\NP))/NP", 6959), (",", 6676), ("conj", 6519),
                   ("(NP\\NP)/NP", 5629)]
    assert grammar.roots["S"] == 8073 and grammar.roots["NP"] == 2659 and grammar.roots["S\\NP"] == 1488
    u = grammar.unary
    assert (u["S\\NP"]["NP\\NP"], u["S"]["NP\\NP"], u["S\\NP"]["(S\\NP)\\(S\\NP)"], u["S"]["(S\\NP)\\(S\\NP)"],
            u["S"]["S/S"]) == (1048, 325, 249, 211, 129)


def test_combinator_labels(grammar):
    # the README's table of binary node tokens, reproduced with its precedence (fc/bc first)
    assert grammar.combinator_counts(README_ORDER) == {
        "fa": 99627, "ba": 49353, "rp": 13722, "conj": 6516, "coord": 6363, "lp": 5802, "bc": 441,
        "fc": 397, "conj_r": 3, "unary": 2299}
    # every README fc/bc token is an X X -> X instance: by default they are coordination
    counts = grammar.combinator_counts()
    assert counts["coord"] == 6363 + 397 + 441 and "fc" not in counts and "bc" not in counts
    assert "other" not in counts
    assert grammar.binary[("NP/NP", "NP")]["NP"] > 20000
    assert grammar.combinator("NP/NP", "NP", "NP") == "fa"
    assert grammar.binary[("NP", "S\\NP")]["S"] > 1000 and grammar.combinator("NP", "S\\NP", "S") == "ba"
    assert grammar.has_binary("S", ".", "S") and grammar.combinator("S", ".", "S") == "rp"
    assert grammar.has_binary("conj", "NP", "NP") and grammar.combinator("conj", "NP", "NP") == "conj"
    assert combinators("NP/NP", "NP/NP", "NP/NP") == ("fc", "coord")
    assert classify_binary("NP/NP", "NP/NP", "NP/NP") == "coord"
    assert classify_binary("S/NP", "NP/NP", "S/NP") == "fc"
    assert classify_binary("NP\\NP", "S\\NP", "S\\NP") == "bc"
    assert classify_binary(",", "NP", "NP") == "lp" and classify_binary("NP", "conj", "NP") == "conj_r"
    assert classify_binary("S[dcl]/NP", "NP[nb]", "S[dcl]") == "fa"
    assert classify_binary("S[dcl]/NP[nb]", "NP[pl]", "S[dcl]") == "other"
    assert classify_binary("NP", "NP", "S") == "other"


def test_tag_dictionary_falls_back_to_pos(grammar):
    word_cats = grammar.categories("the", "DT")
    assert grammar.word_count("the") >= 20 and word_cats[0] == "NP/NP"
    assert set(word_cats) == set(grammar.words["the"])
    unseen = "Zyxwvutsrq"
    assert grammar.word_count(unseen) == 0
    nnp = grammar.categories(unseen, "NNP")
    assert nnp == grammar.categories(unseen, "NNP", min_count=1)
    assert nnp[:2] == ["NP", "NP/NP"] and all(grammar.pos["NNP"][c] >= 10 for c in nnp)
    assert set(nnp) == {c for c, n in grammar.pos["NNP"].items() if n >= 10}
    assert len(grammar.categories(unseen, "NNP", pos_cutoff=1)) == len(grammar.pos["NNP"]) > len(nnp)
    # a word seen fewer than min_count times also uses its POS
    rare = next(w for w, c in grammar.words.items() if sum(c.values()) == 3)
    assert grammar.categories(rare, "NN") == grammar.categories(unseen, "NN")
    assert grammar.categories(rare, "NN", min_count=3) == sorted(grammar.words[rare],
                                                                 key=lambda c: (-grammar.words[rare][c], c))
    # unknown or missing POS: every frequent lexical category
    assert grammar.categories(unseen, None) == grammar.categories(unseen, "NO-SUCH-TAG")
    assert len(grammar.categories(unseen, None)) == 162


def test_coverage(grammar, train, dev, capsys):
    assert all(grammar.coverage(d, min_count=1, pos_cutoff=1).covered for d in train[:2000])
    r = grammar.coverage_report(dev)
    assert (r["sentences"], r["rules_covered"], r["covered"]) == (1969, 1944, 1617)
    with capsys.disabled():
        print(f"\nCCG grammar from train: {grammar.n_binary} binary, {grammar.n_unary} unary instances, "
              f"{len(grammar.lexical)} lexical categories; dev coverage {r['share']:.1%} of sentences "
              f"(rules {r['rules_share']:.1%}, tag dictionary {r['lexical_share']:.1%}; "
              f"leaves {r['leaf_share']:.1%}, binary nodes {r['binary_token_share']:.2%})")
    d = Derivation("x", parse_derivation("(<T S 0 2> (<L NP NN NN dog NP>) (<L NP NN NN cat NP>) )"))
    cov = grammar.coverage(d)
    assert not cov.covered and not cov.rules and cov.lexical and cov.missing == ["binary NP NP -> S"]
    with pytest.raises(ValueError):
        grammar.coverage(Derivation("y", None, error="broken"))


def test_grammar_save_load_is_deterministic(grammar, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    grammar.save(a)
    again = Grammar.load(a)
    again.save(b)
    assert a.read_bytes() == b.read_bytes()
    assert a.stat().st_size < 2_000_000
    assert again.binary == grammar.binary and again.unary == grammar.unary
    assert again.words == grammar.words and again.pos == grammar.pos and again.roots == grammar.roots
    obj = json.loads(a.read_text(encoding="utf-8"))
    assert ["NP/NP", "NP", "NP", grammar.binary[("NP/NP", "NP")]["NP"], "fa"] in obj["binary"]
    xz = tmp_path / "g.json.xz"
    grammar.save(xz)
    assert Grammar.load(xz).binary == grammar.binary
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(ValueError):
        Grammar.load(bad)
    bad.write_text('{"format": "wo-ccg-grammar", "version": 1, "sentences": 1, "binary": [["NP/", "NP", "NP", 1]],'
                   ' "unary": [], "words": {}, "pos": {}, "roots": {}}', encoding="utf-8")
    with pytest.raises(ValueError):
        Grammar.load(bad)


def test_grammar_arrays(grammar):
    table = CategoryTable()
    arr = grammar.arrays(table)
    assert arr["binary"].dtype == np.int32 and arr["binary"].shape == (888, 4)
    assert arr["unary"].shape == (58, 3) and arr["lexical"].shape == (554, 2)
    assert int(arr["binary"][:, 3].sum()) == sum(grammar.binary_instances().values())
    row = next(r for r in arr["binary"] if (table.string(r[0]), table.string(r[1]), table.string(r[2])) == ("NP/NP", "NP", "NP"))
    assert row[3] == grammar.binary[("NP/NP", "NP")]["NP"]


def test_io_does_not_import_ccg():
    from tests.test_layout import _imports

    graph = _imports()
    assert "wo.ccg.auto" in graph and "wo.ccg.grammar" in graph
    for mod, deps in graph.items():
        if mod.startswith(("wo.io", "wo.eval", "wo.model", "wo.lm", "wo.learn", "wo.system")):
            assert not any(d.startswith("wo.ccg") for d in deps), (mod, deps)
        # the shared layers only (the LM, the training loop, the system protocol) and GYRO, the bag
        # search the CCG model names (wo.gyro.bag, which imports no other system); no other system
        if mod.startswith("wo.ccg"):
            assert all(d.startswith(("wo.io", "wo.ccg", "wo.eval", "wo.model", "wo._fast", "wo.lm", "wo.learn", "wo.system",
                                     "wo.gyro")) for d in deps), (mod, deps)
