"""The input layer where the file-layer matrix (tests/test_file_layer.py) does not reach: the LM
verbs that read text or ARPA files (``wo lm train``, ``wo lm convert``, ``wo lm score --lm``,
``wo lm tokenize``), ``wo gyro realize`` and ``wo smt translate`` on CR-only line ends, and
the inputs that can be read only once (``-``, a named pipe) carrying CR-only line ends or a cut
``.xz`` stream.

Every case runs the real command line (``tests.conftest.wo_cli``) and checks: no traceback; a
CR-only or mixed CRLF/CR input gives byte for byte what the same input with LF line ends gives;
a compressed input cut in the middle, or plain text named ``.xz``/``.gz``, is one line on
standard error naming the user's path, exit 2, and no output file.
"""
import gzip
import lzma
import os
import pathlib
import threading

import pytest

from tests.conftest import ROOT, SHIPPED_LM, wo_cli

GOLD_TEXT = ROOT / "tests" / "data" / "golden" / "ewt-test-full-300.txt.xz"
PT = ROOT / "tests" / "data" / "sr" / "pt_bosque-test-40.conllu.xz"
TATOEBA = ROOT / "corpora" / "tatoeba-zh-en" / "test.tsv.xz"

BAD = ["xz_truncated", "gz_truncated", "xz_text", "gz_text"]
ENDINGS = ["cr", "cr_mixed"]


def _text(n: int = 60) -> bytes:
    """``n`` tokenized English sentences (LF line ends)."""
    with lzma.open(GOLD_TEXT, "rb") as fh:
        return b"\n".join(fh.read().split(b"\n")[:n]) + b"\n"


def _ends(data: bytes, case: str) -> bytes:
    """``data`` with CR-only line ends, or alternating CRLF and CR ones."""
    if case == "cr":
        return data.replace(b"\n", b"\r")
    parts = data.split(b"\n")
    return b"".join(p + (b"\r\n" if k % 2 else b"\r") for k, p in enumerate(parts[:-1])) + parts[-1]


def _bad(tmp: pathlib.Path, stem: str, data: bytes, case: str) -> pathlib.Path:
    """A compressed file of ``data`` cut in half, or ``data`` as it is under a compressed name."""
    kind = case.split("_")[0]
    path = tmp / f"{stem}.{kind}"
    packed = lzma.compress(data) if kind == "xz" else gzip.compress(data, mtime=0)
    path.write_bytes(packed[:len(packed) // 2] if case.endswith("_truncated") else data)
    return path


def _one_line_error(p, path: pathlib.Path, case: str) -> None:
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"wo: {path}: "), p.stderr
    assert case.split("_")[0] in lines[0][len(f"wo: {path}: "):], p.stderr
    assert ("truncated" in lines[0]) == case.endswith("_truncated"), p.stderr


def _no_outputs(tmp: pathlib.Path, *names: str) -> None:
    left = [x for x in os.listdir(tmp) if x.startswith(".wo-") or x in names]
    assert not left, left


# ---------------------------------------------------------------- wo lm train
@pytest.fixture(scope="module")
def arpa(tmp_path_factory):
    """An order-3 ARPA file trained on 60 real sentences with LF line ends, and its bytes."""
    d = tmp_path_factory.mktemp("lm")
    (d / "text.txt").write_bytes(_text())
    p = wo_cli(["lm", "train", "--text", d / "text.txt", "--order", "3", "--out", d / "lm.arpa", "--quiet"])
    assert p.returncode == 0, p.stderr
    return d / "lm.arpa"


@pytest.mark.parametrize("case", ENDINGS)
def test_lm_train_reads_cr_line_ends_as_lf(arpa, tmp_path, case):
    (tmp_path / "text.txt").write_bytes(_ends(_text(), case))
    p = wo_cli(["lm", "train", "--text", tmp_path / "text.txt", "--order", "3", "--out", tmp_path / "lm.arpa",
                "--quiet"])
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert (tmp_path / "lm.arpa").read_bytes() == arpa.read_bytes()


@pytest.mark.parametrize("case", BAD)
def test_lm_train_refuses_a_cut_or_mislabelled_compressed_text(tmp_path, case):
    src = _bad(tmp_path, "text", _text(), case)
    p = wo_cli(["lm", "train", "--text", src, "--order", "3", "--out", tmp_path / "lm.wolm", "--quiet"])
    _one_line_error(p, src, case)
    _no_outputs(tmp_path, "lm.wolm")


# ---------------------------------------------------------------- wo lm convert, wo lm score --lm ARPA
@pytest.mark.parametrize("case", ENDINGS)
def test_lm_convert_reads_cr_line_ends_as_lf(arpa, tmp_path, case):
    src = tmp_path / "cr.arpa"
    src.write_bytes(_ends(arpa.read_bytes(), case))
    outs = {}
    for name, path in (("lf", arpa), ("cr", src)):
        p = wo_cli(["lm", "convert", path, tmp_path / f"{name}.out.arpa"])
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
        outs[name] = (tmp_path / f"{name}.out.arpa").read_bytes()
    assert outs["cr"] == outs["lf"]


@pytest.mark.parametrize("case", BAD)
def test_lm_convert_refuses_a_cut_or_mislabelled_compressed_arpa(arpa, tmp_path, case):
    src = _bad(tmp_path, "lm.arpa", arpa.read_bytes(), case)
    p = wo_cli(["lm", "convert", src, tmp_path / "lm.wolm"])
    _one_line_error(p, src, case)
    _no_outputs(tmp_path, "lm.wolm")


@pytest.mark.parametrize("case", BAD)
def test_lm_score_refuses_a_cut_or_mislabelled_compressed_arpa_lm(arpa, tmp_path, case):
    src = _bad(tmp_path, "lm.arpa", arpa.read_bytes(), case)
    (tmp_path / "in.txt").write_bytes(_text(3))
    p = wo_cli(["lm", "score", "--lm", src, "--input", tmp_path / "in.txt", "--per-sentence",
                "--output", tmp_path / "out.txt"])
    _one_line_error(p, src, case)
    _no_outputs(tmp_path, "out.txt")


# ---------------------------------------------------------------- wo lm tokenize (raw paragraphs)
@pytest.mark.parametrize("case", ENDINGS + BAD)
def test_lm_tokenize_line_ends_and_compressed_input(tmp_path, case):
    pytest.importorskip("spacy")
    raw = b"The cat sat. It was happy!\nA second paragraph here.\nAnd a third one.\n"
    (tmp_path / "lf.txt").write_bytes(raw)
    assert wo_cli(["lm", "tokenize", "--input", tmp_path / "lf.txt", "--output", tmp_path / "lf.tok",
                   "--quiet"]).returncode == 0
    if case in ENDINGS:
        (tmp_path / "in.txt").write_bytes(_ends(raw, case))
        p = wo_cli(["lm", "tokenize", "--input", tmp_path / "in.txt", "--output", tmp_path / "out.tok", "--quiet"])
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
        assert (tmp_path / "out.tok").read_bytes() == (tmp_path / "lf.tok").read_bytes()
    else:
        src = _bad(tmp_path, "in.txt", raw, case)
        p = wo_cli(["lm", "tokenize", "--input", src, "--output", tmp_path / "out.tok", "--quiet"])
        _one_line_error(p, src, case)
        _no_outputs(tmp_path, "out.tok")


# ---------------------------------------------------------------- other verbs on CR-only bags
def _same_output_as_lf(tmp_path, argv, data: bytes, case: str, records: int) -> None:
    """``argv`` (with IN and OUT) gives the same output on ``data`` with ``case`` line ends as with
    LF, ``records`` lines."""
    outs = {}
    for name, body in (("lf", data), (case, _ends(data, case))):
        (tmp_path / f"{name}.in").write_bytes(body)
        p = wo_cli([tmp_path / f"{name}.in" if a == "IN" else tmp_path / f"{name}.out" if a == "OUT" else a
                    for a in argv])
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
        outs[name] = (tmp_path / f"{name}.out").read_bytes()
    assert outs[case] == outs["lf"] and outs["lf"].count(b"\n") == records


@pytest.mark.skipif(not SHIPPED_LM.exists(), reason="shipped LM not in the tree")
def test_gyro_realize_reads_cr_only_bags_as_lines(tmp_path):
    data = b"".join([ln + b"\n" for ln in _text(40).split(b"\n") if 3 <= len(ln.split()) <= 6][:3])
    _same_output_as_lf(tmp_path, ["gyro", "realize", "--lm", SHIPPED_LM, "--input-format", "bag", "--input", "IN",
                                  "--output", "OUT", "--quiet"], data, "cr", 3)


def test_smt_translate_reads_cr_only_lines(tmp_path):
    pytest.importorskip("jieba")
    with lzma.open(TATOEBA, "rb") as fh:
        rows = fh.read().split(b"\n")[:4]                     # the header and 3 pairs
    _same_output_as_lf(tmp_path, ["smt", "translate", "--input", "IN", "--output", "OUT", "--quiet"],
                       b"\n".join(rows) + b"\n", "cr", 3)


# ---------------------------------------------------------------- inputs read once
def _pt_conllu() -> bytes:
    with lzma.open(PT, "rb") as fh:
        blocks = [b for b in fh.read().split(b"\n\n") if b.strip()][:3]
    return b"\n\n".join(blocks) + b"\n\n"


@pytest.mark.parametrize("case", ENDINGS)
def test_standard_input_with_cr_line_ends(tmp_path, case):
    data = _pt_conllu()
    (tmp_path / "lf.conllu").write_bytes(data)
    p = wo_cli(["linearize", "--input", tmp_path / "lf.conllu", "--output", tmp_path / "lf.txt"])
    assert p.returncode == 0, p.stderr
    p = wo_cli(["linearize", "--input", "-", "--output", tmp_path / "cr.txt"], stdin=_ends(data, case))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert (tmp_path / "cr.txt").read_bytes() == (tmp_path / "lf.txt").read_bytes()
    assert (tmp_path / "lf.txt").read_bytes().count(b"\n") == 3


@pytest.mark.parametrize("verb", ["linearize", "lm score"])
def test_a_named_pipe_carrying_a_cut_xz_stream(tmp_path, verb):
    """A stream is decompressed by its magic bytes (no name to go by): cut, it is one line naming
    the pipe, exit 2, no output file."""
    data = _pt_conllu() if verb == "linearize" else _text(3)
    packed = lzma.compress(data)
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)

    def feed():
        try:
            with open(fifo, "wb") as fh:
                fh.write(packed[:len(packed) // 2])
        except OSError:
            pass

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    argv = (["linearize"] if verb == "linearize" else ["lm", "score", "--lm", SHIPPED_LM, "--per-sentence"])
    p = wo_cli(argv + ["--input", fifo, "--output", tmp_path / "out.txt"])
    t.join(10)
    _one_line_error(p, fifo, "xz_truncated")
    _no_outputs(tmp_path, "out.txt")
