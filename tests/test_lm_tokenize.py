"""Raw paragraphs to LM text (wo.lm.tokenize, `wo lm tokenize`, `wo lm train --tokenize`):
tokens as the treebank writes them, bad lines counted and never fatal."""
import json
import lzma
import pathlib

from tests.conftest import EWT, wo_cli
from wo.lm.tokenize import tokenize_files, tokenize_paragraphs

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _ewt_text(n):
    out = []
    for b in lzma.open(EWT / "en_ewt-ud-dev.conllu.xz", "rt", encoding="utf-8").read().split("\n\n"):
        text = [ln[9:] for ln in b.split("\n") if ln.startswith("# text = ")]
        toks = [ln.split("\t")[1] for ln in b.split("\n") if ln and ln.split("\t")[0].isdigit()]
        if text and toks:
            out.append((text[0], toks))
        if len(out) == n:
            break
    return out


def test_tokens_match_the_treebank(tmp_path):
    """Measured on all of EWT dev: 89.3 % of the sentences tokenized exactly as the gold tokens,
    token F1 97.25 (``bench/lm_text.py tokenizers``); here the first 300 sentences, each given as
    one paragraph, through the worker and through the file interface."""
    data = _ewt_text(300)
    res = tokenize_paragraphs("en", [t for t, _ in data])
    exact = sum(1 for (sents, n), (_, gold) in zip(res, data) if " ".join(sents).split() == gold)
    assert exact / len(data) > 0.85
    assert all(n == len(" ".join(sents).split()) for sents, n in res)
    raw = tmp_path / "raw.txt"
    raw.write_text("".join(t + "\n" for t, _ in data), encoding="utf-8")
    st = tokenize_files([str(raw)], str(tmp_path / "tok.txt"))
    lines = (tmp_path / "tok.txt").read_text(encoding="utf-8").splitlines()
    assert st["paragraphs"] == 300 and st["sentences"] == len(lines) >= 300
    assert [t for ln in lines for t in ln.split()] == [t for sents, _ in res for s in sents for t in s.split()]


def test_bad_raw_text_is_counted_not_fatal(tmp_path):
    raw = tmp_path / "bad.txt"
    raw.write_bytes("\ufeffFirst paragraph. Two sentences here.\n".encode("utf-8") + b"\n   \n"
                    + b"caf\xe9 latin-1 line\n" + b"bin\x00ary\n" + ("x" * 1_000_001).encode() + b"\n"
                    + "Last one, fine.\n".encode("utf-8"))
    out = tmp_path / "lm.wolm"
    p = wo_cli(["lm", "train", "--text", raw, "--tokenize", "en", "--order", "3", "--out", out])
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    from wo.lm.model import LanguageModel

    lm = LanguageModel.load(str(out))
    tok = lm.header["tokenized"]
    assert tok["paragraphs"] == 2 and tok["sentences"] == 3 and tok["lang"] == "en"
    assert tok["skipped: empty"] == 2 and tok["skipped: not UTF-8"] == 1
    assert tok["skipped: binary (NUL)"] == 1 and tok["skipped: over max_chars"] == 1
    assert lm.header["sources"] == ["bad.txt"]
    assert lm.score(["Last", "one", ",", "fine", "."]) > lm.score(["fine", "Last", ".", "one", ","])


def test_unknown_language_is_one_line_exit_2(tmp_path):
    raw = tmp_path / "r.txt"
    raw.write_text("Hello there.\n", encoding="utf-8")
    p = wo_cli(["lm", "tokenize", "--input", raw, "--output", tmp_path / "t.txt", "--lang", "qq"])
    assert p.returncode == 2 and "Traceback" not in p.stderr and "qq" in p.stderr
    assert json.dumps(p.stderr.count("\n")) == "1"
