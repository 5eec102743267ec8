"""wo smt translate's input handling with the shipped model: Traditional characters are converted
(OpenCC t2s) before segmentation, source words without a translation are reported (jsonl
"unknown" and one summary line), and the phrase table, parsed lazily for a fast start, answers
exactly as the fully parsed table."""
import gzip
import json
import lzma
import pathlib
import random

import pytest

from wo.smt.phrases import PhraseTable
from wo.smt.prep import segment_zh, to_simplified

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLE = ROOT / "corpora" / "models" / "smt" / "phrases.tsv.gz"
TEST = ROOT / "corpora" / "tatoeba-zh-en" / "test.tsv.xz"


@pytest.fixture(scope="module")
def translator():
    from wo.smt.translate import Translator

    return Translator()


def test_t2s_converts_traditional_and_leaves_the_simplified_test_set_unchanged():
    assert to_simplified("這是我的書。") == "这是我的书。"
    assert to_simplified("我們走吧。Tom 說 OK!") == "我们走吧。Tom 说 OK!"
    zh = [line.split("\t")[1] for line in lzma.open(TEST, "rt", encoding="utf-8").read().splitlines()[1:]]
    assert len(zh) == 1000 and all(to_simplified(z) == z for z in zh)
    assert segment_zh("這是我的書。", simplify=True) == segment_zh("这是我的书。")
    assert segment_zh("這是我的書。") != segment_zh("这是我的书。")       # training keeps the corpus as is


def test_traditional_input_translates_as_its_simplified_form(translator):
    trad, simp = translator.translate(["這是我的書。", "这是我的书。"])
    assert trad.text == simp.text == "This is my book."
    assert trad.unknown == simp.unknown == []


def test_unknown_source_words_are_listed_not_dropped_silently(translator, tmp_path):
    from wo.smt.translate import run

    (tmp_path / "zh.txt").write_text("汤姆喜欢吃榴莲。\n我们走吧。\n", encoding="utf-8")
    reports = []
    summ = run(str(tmp_path / "zh.txt"), str(tmp_path / "en.jsonl"), output_format="jsonl", report=reports.append)
    recs = [json.loads(x) for x in (tmp_path / "en.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["unknown"] for r in recs] == [["榴莲"], []]
    assert "榴莲" not in recs[0]["text"] and recs[0]["text"].startswith("Tom")
    assert summ.sentences == 2
    assert reports == ['1 of 2 sentences have source words with no translation in the phrase table (left out of '
                       'the English; --format jsonl lists them per line under "unknown")']


def test_a_sentence_the_table_does_not_know_is_copied_and_listed(translator):
    from wo.smt.synth import Source

    r = translator.translate_parsed(Source(["榴莲"], ["NOUN"], [-1], ["root"]))
    assert r.status == "error" and r.tokens == ["榴莲"] and r.unknown == ["榴莲"]


def test_lazily_parsed_table_answers_as_the_fully_parsed_one(tmp_path):
    lazy = PhraseTable.load(str(TABLE))
    full = PhraseTable.load(str(TABLE))
    full._parse_all()
    assert lazy._lines is not None and full._lines is None
    srcs = sorted(full._table)
    random.seed(7)
    for src in random.sample(srcs, 2000) + [("不存在的词",), ("a b",)]:
        assert lazy.translations(src) == full.translations(src)
    for sent in (["我们", "走", "吧", "。"], ["汤姆", "在", "哪里", "？"], segment_zh("他不可能生病了。")):
        assert lazy.options(sent) == full.options(sent)
        assert lazy.options(sent, max_per_span=2, lam=0.3) == full.options(sent, max_per_span=2, lam=0.3)
    assert lazy.max_src_len == full.max_src_len == max(len(s) for s in srcs)
    assert (len(lazy), lazy.n_sources) == (len(full), full.n_sources) == (202025, len(srcs))
    lazy.save(str(tmp_path / "again.tsv.gz"))
    assert gzip.decompress((tmp_path / "again.tsv.gz").read_bytes()) == gzip.decompress(TABLE.read_bytes())


def test_a_malformed_table_line_is_named_at_load(tmp_path):
    lines = gzip.decompress(TABLE.read_bytes()).decode("utf-8").split("\n")[:50]
    lines[17] = lines[17].rsplit("\t", 1)[0]               # line 18: 4 columns
    bad = tmp_path / "bad.tsv.gz"
    bad.write_bytes(gzip.compress("\n".join(lines).encode("utf-8") + b"\n"))
    with pytest.raises(ValueError, match=r"bad\.tsv\.gz:18: expected 5 columns, found 4"):
        PhraseTable.load(str(bad))
    bad.write_bytes(gzip.compress(b"not a table\n"))
    with pytest.raises(ValueError, match="not a wo phrase table"):
        PhraseTable.load(str(bad))


def test_a_table_whose_phrase_lines_are_not_together_is_read_as_a_whole(tmp_path):
    """A hand-made table may list one source phrase in several places; the lazy reader merges
    them (a later duplicate line wins) as the full reader does."""
    lines = gzip.decompress(TABLE.read_bytes()).decode("utf-8").split("\n")[1:400]
    random.seed(3)
    random.shuffle(lines)
    dup = lines[5].split("\t")
    lines.append("\t".join(dup[:4] + ["999"]))
    path = tmp_path / "shuffled.tsv.gz"
    path.write_bytes(gzip.compress(("#wo-phrase-table\t1\n" + "\n".join(lines) + "\n").encode("utf-8")))
    lazy, full = PhraseTable.load(str(path)), PhraseTable.load(str(path))
    full._parse_all()
    assert lazy._runs is None and len(lazy._index) == len(full._table)
    for src in full._table:
        assert lazy.translations(src) == full.translations(src)
    src = tuple(dup[0].split(" "))
    assert any(r[0] == tuple(dup[1].split(" ")) and r[4] == 999 for r in lazy.translations(src))
