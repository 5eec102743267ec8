"""wo.smt.parsers and ``wo smt train-parser``: the UD Chinese 1.3 -> UD v2 conversion on a real
sentence, one-line errors for bad treebanks, and real (tiny) trainings whose output
``wo.smt.parse`` loads and uses."""
import copy
import json
import sys

import pytest

pytest.importorskip("spacy")

from tests.conftest import EWT, ROOT, conllu_blocks, wo_cli, write_blocks  # noqa: E402
from wo.io import InputError  # noqa: E402
from wo.smt.parsers import (PUNCT_T2S, V1_TO_V2, labels_of, read_treebank, set_name,  # noqa: E402
                            v1_to_v2)

SMT_DATA = ROOT / "tests" / "data" / "smt"
# the first 30 sentences of UD Chinese 1.3 train (traditional script, UD v1; tests/data/smt/README.md)
UD13 = SMT_DATA / "zh-ud13-train30.conllu.xz"
BEGINNER = SMT_DATA / "zh-beginner-heldout50.conllu.xz"
EWT_TRAIN = EWT / "en_ewt-ud-train.conllu.xz"
EWT_DEV = EWT / "en_ewt-ud-dev.conllu.xz"


def test_v1_to_v2_on_the_first_sentence_of_ud_chinese_13():
    pytest.importorskip("opencc")
    v1 = read_treebank(str(UD13))
    assert len(v1) == 30
    s = v1[0]     # 看似簡單, 只是二選一做決擇, 但其實他們代表的是你周遭的親朋好友, 試著給你不同的意見, ...
    assert len(s) == 40 and [w["form"] for w in s[:3]] == ["看似", "簡單", ","]
    assert (s[-2]["form"], s[-2]["head"], s[-2]["deprel"]) == ("自己", -1, "root")
    known = labels_of(read_treebank(str(BEGINNER)))     # UD v2 labels, without mark:rel
    assert "mark:rel" not in known and "obj" in known
    before = copy.deepcopy(s)
    out = v1_to_v2(v1, known | {"mark:rel"})
    assert out is v1
    t = v1[0]
    assert [w["head"] for w in t] == [w["head"] for w in before]           # the tree is kept
    assert [w["form"] for w in t[:3]] == ["看似", "简单", "，"]              # t2s; ASCII -> full-width comma
    assert t[-1]["form"] == "。" and PUNCT_T2S["."] == "。"
    assert [t[i]["form"] for i in (9, 12, 13, 20)] == ["决择", "其实", "他们", "亲朋"]
    # dobj -> obj (二选一 ... 做决择)
    assert (before[9]["deprel"], t[9]["deprel"]) == ("dobj", "obj") and V1_TO_V2["dobj"] == "obj"
    # the relativiser 的 (XPOS DEC, labelled acl:relcl in v1) -> SCONJ mark:rel
    assert (before[15]["form"], before[15]["xpos"], before[15]["deprel"]) == ("的", "DEC", "acl:relcl")
    assert (t[15]["upos"], t[15]["deprel"]) == ("SCONJ", "mark:rel")
    # case:dec 的 without Case=Rel -> PART case
    assert (before[19]["deprel"], before[19]["feats"]) == ("case:dec", "Case=Gen")
    assert (t[19]["upos"], t[19]["deprel"]) == ("PART", "case")
    # the aspect marker 著 (case:aspect) -> AUX aux, written 着
    assert (before[24]["form"], before[24]["deprel"]) == ("著", "case:aspect")
    assert (t[24]["form"], t[24]["upos"], t[24]["deprel"]) == ("着", "AUX", "aux")
    # nmod:tmod on a verb (最後 -> 決定) -> obl:tmod
    assert (before[34]["deprel"], before[t[34]["head"]]["upos"]) == ("nmod:tmod", "VERB")
    assert t[34]["deprel"] == "obl:tmod"
    # a label the v2 treebanks do not have keeps only its part before ':' (mark:rel -> mark here)
    again = v1_to_v2(read_treebank(str(UD13)), known)
    assert again[0][15]["deprel"] == "mark"
    conv = {w["deprel"] for s in again for w in s}
    assert all(d in known or ":" not in d for d in conv), conv - known     # no unknown subtype is left
    assert "nsubj:pass" not in conv and "nsubj" in conv                       # nsubjpass -> nsubj:pass -> nsubj
    assert not conv & {"dobj", "nsubjpass", "auxpass", "neg", "case:dec", "case:aspect"}
    assert all(w["upos"] != "CONJ" for s in again for w in s)


def test_reader_skips_ranges_and_keeps_spaces(tmp_path):
    # EWT sentences with a multiword token (a range line), and SpaceAfter=No
    blocks = [b for b in conllu_blocks(str(EWT_DEV)) if "\n4-5\t" in b or "\n3-4\t" in b][:2]
    assert blocks
    f = write_blocks(tmp_path / "mwt.conllu", blocks)
    sents = read_treebank(str(f))
    assert len(sents) == len(blocks)
    for b, s in zip(blocks, sents):
        words = [c for c in (ln.split("\t") for ln in b.splitlines() if not ln.startswith("#")) if c[0].isdigit()]
        assert [w["form"] for w in s] == [c[1] for c in words]
        assert [w["head"] for w in s] == [int(c[6]) - 1 for c in words]
        assert [w["space"] for w in s] == ["SpaceAfter=No" not in c[9] for c in words]
    assert set_name("a/b/en_ewt-ud-dev.conllu.xz") == "en_ewt-ud-dev"


def _damaged(tmp_path, col, value, name):
    """An EWT dev slice whose 2nd sentence has ``value`` in column ``col`` of its 3rd word;
    returns (path, line number of that word)."""
    blocks = list(conllu_blocks(str(EWT_DEV))[:3])
    lines = blocks[1].split("\n")
    k = [i for i, ln in enumerate(lines) if ln.startswith("3\t")][0]
    cols = lines[k].split("\t")
    cols[col] = value
    lines[k] = "\t".join(cols)
    blocks[1] = "\n".join(lines)
    path = write_blocks(tmp_path / name, blocks)
    first = len(blocks[0].split("\n")) + 2          # the 2nd sentence's first line
    return path, first, first + k


def read_sent_id(path):
    """The sent_id of the 2nd sentence of ``path``."""
    return conllu_blocks(str(path))[1].split("# sent_id = ")[1].split("\n")[0]


def test_bad_treebanks_give_one_line_and_exit_2(tmp_path):
    out = tmp_path / "out"
    # a word without a head: named by the sentence's first line
    f, start, _ = _damaged(tmp_path, 6, "_", "nohead.conllu")
    with pytest.raises(InputError, match="has no head"):
        read_treebank(str(f))
    p = wo_cli(["smt", "train-parser", "--lang", "en", "--train", f, "--dev", EWT_DEV, "--out", out])
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith(f"wo: {f}:{start}: word 3 ") and "has no head" in p.stderr
    assert p.stderr.count("\n") == 1 and not out.exists()
    # a second root: not a tree
    f, start, _ = _damaged(tmp_path, 6, "0", "tworoots.conllu")
    p = wo_cli(["smt", "train-parser", "--lang", "en", "--train", f, "--dev", EWT_DEV, "--out", out])
    assert (p.returncode, p.stderr) == (2, f"wo: {f}:{start}: sentence {read_sent_id(f)} has 2 roots (head 0); "
                                           "a dependency tree has one\n")
    # a malformed line: its own line number
    g, _, line = _damaged(tmp_path, 6, "x", "badhead.conllu")
    p = wo_cli(["smt", "train-parser", "--lang", "en", "--train", EWT_DEV, "--dev", g, "--out", out])
    assert (p.returncode, p.stderr) == (2, f"wo: {g}:{line}: head 'x' is not an integer\n")
    # a missing file, --zh-v1 for English, no training data
    p = wo_cli(["smt", "train-parser", "--lang", "en", "--train", tmp_path / "none.conllu", "--dev", EWT_DEV,
                "--out", out])
    assert (p.returncode, p.stderr) == (2, f"wo: {tmp_path / 'none.conllu'}: no such file\n")
    p = wo_cli(["smt", "train-parser", "--lang", "en", "--zh-v1", UD13, "--dev", EWT_DEV, "--out", out])
    assert p.returncode == 2 and "--lang zh" in p.stderr and p.stderr.count("\n") == 1
    p = wo_cli(["smt", "train-parser", "--lang", "en", "--dev", EWT_DEV, "--out", out])
    assert p.returncode == 2 and "--train" in p.stderr and p.stderr.count("\n") == 1
    p = wo_cli(["smt", "train-parser", "--lang", "en", "--train", EWT_DEV, "--dev", EWT_DEV, "--out", out,
                "--max-steps", "0"])
    assert p.returncode == 2 and "positive integer" in p.stderr
    # an existing directory that is not a spaCy pipeline is not replaced
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine\n")
    from wo.smt.parsers import ship

    with pytest.raises(InputError, match="not a spaCy pipeline"):
        ship(tmp_path, keep)
    assert (keep / "notes.txt").read_text() == "mine\n"


def test_missing_spacy_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", None)
    p = wo_cli(["smt", "train-parser", "--lang", "en", "--train", EWT_DEV, "--dev", EWT_DEV,
                "--out", tmp_path / "out"])
    assert p.returncode == 2 and "Traceback" not in p.stderr and p.stderr.count("\n") == 1
    assert "wo smt train-parser needs spaCy" in p.stderr and "pip install 'wo-nlg[smt]'" in p.stderr


@pytest.mark.slow
def test_train_a_tiny_english_parser_and_parse_with_it(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    train = write_blocks(tmp_path / "train60.conllu", conllu_blocks(str(EWT_TRAIN))[:60])
    dev = write_blocks(tmp_path / "dev20.conllu", conllu_blocks(str(EWT_DEV))[:20])
    out, work = tmp_path / "en-parser", tmp_path / "work"
    p = wo_cli(["smt", "train-parser", "--lang", "en", "--train", train, "--dev", dev, "--out", out,
                "--work", work, "--max-steps", 30, "--eval-frequency", 10, "--embed-size", 1000])
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["train_sentences"] == 60 and rec["train_sources"] == {"train60": 60}
    assert rec["train_words"] == sum(len(s) for s in read_treebank(str(train)))
    assert rec["training"]["log_tail"]["steps"] == 30 and rec["training"]["log_tail"]["evaluations"] == 4
    assert not rec["training"]["stopped_at_time_cap"]
    assert rec["tag"] == "XPOS (PTB)" and rec["settings"]["max_steps"] == 30
    d = rec["dev"]["dev20"]
    assert d["sentences"] == 20 and d["words"] == sum(len(s) for s in read_treebank(str(dev)))
    assert 0 <= d["las"] <= d["uas"] <= 100 and 0 < d["tag_acc"] <= 100
    assert (work / "train.log").is_file() and (work / "train" / "model-best").is_dir()

    from wo.smt.parse import load_parser

    parser = load_parser("en", str(out))
    assert rec["n_labels"] == len(parser.labels) and "root" in parser.labels
    tags = {w["xpos"] for s in read_treebank(str(train)) for w in s}
    words = "The company said it would sell its stake in the unit .".split()
    (parse,) = parser.parse([words])
    assert len(parse.heads) == len(parse.pos) == len(parse.labels) == len(words)
    assert parse.heads.count(-1) == 1 and all(-1 <= h < len(words) for h in parse.heads)
    assert set(parse.pos) <= tags and all(parse.labels)
    # a second run replaces the pipeline in --out
    p = wo_cli(["smt", "train-parser", "--lang", "en", "--train", train, "--dev", dev, "--out", out,
                "--max-steps", 5, "--eval-frequency", 5, "--embed-size", 1000, "--quiet"])
    assert p.returncode == 0 and p.stderr == "" and json.loads(p.stdout)["training"]["log_tail"]["steps"] == 5


@pytest.mark.slow
def test_train_a_tiny_chinese_parser_from_ud_13(tmp_path, monkeypatch):
    pytest.importorskip("opencc")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    out = tmp_path / "zh-parser"
    p = wo_cli(["smt", "train-parser", "--lang", "zh", "--zh-v1", UD13, "--dev", BEGINNER, "--out", out,
                "--max-steps", 20, "--eval-frequency", 10, "--embed-size", 1000])
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["tag"] == "UPOS" and rec["train_sources"] == {"zh-ud13-train30": 30}
    assert rec["dev"]["zh-beginner-heldout50"]["sentences"] == 50
    from wo.smt.parse import load_parser

    parser = load_parser("zh", str(out))
    assert not {"dobj", "nsubjpass", "case:aspect"} & set(parser.labels)   # trained on the v2 labels
    (parse,) = parser.parse([["我", "喜欢", "学习", "中文", "。"]])
    assert len(parse.heads) == len(parse.pos) == 5 and parse.heads.count(-1) == 1
    assert set(parse.pos) <= {w["upos"] for s in v1_to_v2(read_treebank(str(UD13)), set()) for w in s}
