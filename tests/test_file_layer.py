"""The file layer under odd inputs and outputs, through the real command line.

Every reading and writing verb (``wo linearize``, ``wo sr realize``, ``wo ccg linearize``,
``wo lm score``, ``wo idl realize``, ``wo evaluate``) is run on a tiny real input
(3 sentences) delivered as a named pipe, ``/dev/stdin``, ``-``, a directory, a missing file, an
empty file, a file with a byte order mark, CRLF line ends, CR-only line ends (old Mac), a mix
of CRLF and CR, a latin-1 byte or a NUL byte, compressed (``.xz``, ``.gz``), compressed and cut
in the middle (a half-downloaded file), or plain text named ``.xz`` or ``.gz``, and
writing to a named pipe, a symbolic link, ``/dev/null``, a missing directory, a directory, or a
standard output whose reader has gone (as ``| head -c1`` does).  For each: no Python traceback,
the documented exit code (0 ok, 1 some sentences failed, 2 user error), the user's path named
in the message where there is an error, and the valid sentences still output (the records of
a plain run, byte for byte, where the input means the same).

The cases that need a process of their own (``/dev/stdin``, a standard output whose reader has
gone) run ``python -m wo.cli`` as a subprocess; the others call ``wo.cli.main`` in this process
(``tests.conftest.wo_cli``: the same code after the interpreter's start-up, with standard input,
output and error of the call's own).

``FILE_LAYER_CASES`` counts the cases run by verb (docs/reliability.md quotes the figures).
"""
import gzip
import lzma
import os
import pathlib
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Callable, List, Optional

import pytest

from tests.conftest import wo_cli

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ROOT / "corpora" / "models"
LM = str(MODELS / "wo-en-4gram.wolm")
PT = ROOT / "tests" / "data" / "sr" / "pt_bosque-test-40.conllu.xz"
GOLD_TEXT = ROOT / "tests" / "data" / "golden" / "ewt-test-full-300.txt.xz"
AUTO = ROOT / "corpora" / "ccg-en" / "test.auto.xz"

INPUTS = ["fifo", "dev_stdin", "dash", "directory", "missing", "empty", "bom", "crlf", "latin1", "nul",
          "cr", "cr_mixed", "xz", "gz", "xz_truncated", "gz_truncated", "xz_text", "gz_text"]
COMPRESSED = {"xz": "in.xz", "gz": "in.gz", "xz_truncated": "in.xz", "gz_truncated": "in.gz",
              "xz_text": "in.xz", "gz_text": "in.gz"}      # the input's name in these cases
OUTPUTS = ["out_fifo", "out_symlink", "out_dev_null", "out_missing_dir", "out_directory", "stdout_closed"]
PROCESS = {"dev_stdin", "stdout_closed"}     # cases that need a process of their own
FILE_LAYER_CASES: dict = {}


# ---------------------------------------------------------------- tiny real inputs
def _blocks(data: bytes, n: int) -> bytes:
    """The first ``n`` blank-line separated blocks of CoNLL-U bytes."""
    blocks = [b for b in data.split(b"\n\n") if b.strip()][:n]
    return b"\n\n".join(blocks) + b"\n\n"


def _pt_conllu() -> bytes:
    with lzma.open(PT, "rb") as fh:
        return _blocks(fh.read(), 3)


def _short_lines() -> bytes:
    """Three tokenized English sentences of 4-8 words (for the LM, bags and evaluation)."""
    with lzma.open(GOLD_TEXT, "rt", encoding="utf-8") as fh:
        lines = [ln for ln in fh.read().split("\n") if 4 <= len(ln.split()) <= 8][:3]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _auto() -> bytes:
    with lzma.open(AUTO, "rb") as fh:
        return b"\n".join(fh.read().split(b"\n")[:6]) + b"\n"


_T1 = {}


def _t1() -> bytes:
    """T1 input made from the Portuguese slice by `wo sr make-input` (made once)."""
    if "t1" not in _T1:
        p = wo_cli(["sr", "make-input", "--ud", "-", "--seed", "3"], stdin=_pt_conllu())
        assert p.returncode == 0, p.stderr
        _T1["t1"] = p.stdout_bytes
    return _T1["t1"]


# ---------------------------------------------------------------- the verbs
@dataclass
class Verb:
    """How to run one verb: ``argv(input, output)``, its input bytes, where its 2nd sentence
    starts (to corrupt it), how to cut its output into records, and whether it has an
    output file at all (``wo evaluate`` prints to standard output)."""

    argv: Callable[[str, str], List[str]]
    data: Callable[[], bytes]
    records: Callable[[str], List[str]]
    second: Callable[[bytes], int]          # byte offset inside the 2nd sentence's first word
    has_output: bool = True
    per_sentence: bool = True               # a bad sentence fails alone (else: the whole input)


def _lines(text: str) -> List[str]:
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n") if text else []


def _sr_records(text: str) -> List[str]:
    return [ln for ln in text.split("\n") if ln.startswith("# text = ")]


def _in_conllu_word(data: bytes, block: int = 1) -> int:
    """Offset of the first FORM (or T1 lemma) of block ``block`` + 1 character."""
    start = 0
    for _ in range(block):
        start = data.index(b"\n\n", start) + 2
    line = data.index(b"\n1\t", start - 1) + 1
    return data.index(b"\t", line) + 2


def _in_line_word(data: bytes, line: int = 1) -> int:
    """Offset of the second character of line ``line`` (0-based)."""
    start = 0
    for _ in range(line):
        start = data.index(b"\n", start) + 1
    return start + 1


def _in_auto_word(data: bytes) -> int:
    """Offset inside the first word of the 2nd derivation (line 4 of an .auto file)."""
    start = 0
    for _ in range(3):
        start = data.index(b"\n", start) + 1
    leaf = data.index(b"(<L ", start)
    # (<L CAT POS POS WORD ...>): the word is the 5th field
    fields_at = leaf
    for _ in range(4):
        fields_at = data.index(b" ", fields_at) + 1
    return fields_at + 1


VERBS = {
    "linearize": Verb(lambda i, o: ["linearize", "--input", i, "--output", o], _pt_conllu, _lines, _in_conllu_word),
    "sr realize": Verb(lambda i, o: ["sr", "realize", "--lang", "pt", "--input", i, "--output", o], _t1,
                       _sr_records, _in_conllu_word),
    "ccg linearize": Verb(lambda i, o: ["ccg", "linearize", "--input", i, "--output", o], _auto, _lines, _in_auto_word),
    "lm score": Verb(lambda i, o: ["lm", "score", "--lm", LM, "--per-sentence", "--input", i, "--output", o],
                     _short_lines, _lines, _in_line_word, per_sentence=False),
    "idl realize": Verb(lambda i, o: ["idl", "realize", "--lm", LM, "--input-format", "bag", "--input", i,
                                      "--output", o], _short_lines, _lines, _in_line_word),
    "evaluate": Verb(lambda i, o: ["evaluate", "--hyp", i, "--ref", "REF"], _short_lines, _lines, _in_line_word,
                     has_output=False, per_sentence=False),
}

CASES = [(v, c) for v in VERBS for c in INPUTS + (OUTPUTS if VERBS[v].has_output else ["stdout_closed"])]


# ---------------------------------------------------------------- running a case
@dataclass
class Run:
    rc: int
    stdout: bytes
    stderr: str
    output: Optional[bytes]                 # what reached the output (file, pipe or stdout)


def _reader(path: pathlib.Path, got: list) -> threading.Thread:
    t = threading.Thread(target=lambda: got.append(path.read_bytes()), daemon=True)
    t.start()
    return t


def _writer(path: pathlib.Path, data: bytes) -> threading.Thread:
    def go():
        try:
            with open(path, "wb") as fh:
                fh.write(data)
        except OSError:
            pass
    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


def _unblock(path: pathlib.Path, t: threading.Thread, for_writing: bool) -> None:
    """Release a helper thread still blocked opening a named pipe nobody opened."""
    if t.is_alive():
        try:
            fd = os.open(path, (os.O_WRONLY if for_writing else os.O_RDONLY) | os.O_NONBLOCK)
            os.close(fd)
        except OSError:
            pass
        t.join(5)


def run_case(verb: str, case: str, tmp: pathlib.Path, data: Optional[bytes] = None) -> Run:
    """Run ``verb`` with the input or output ``case`` in directory ``tmp``."""
    v = VERBS[verb]
    data = v.data() if data is None else data
    src = tmp / "in.txt"
    src.write_bytes(data)
    ref = tmp / "ref.txt"                   # wo evaluate's reference: the unchanged input
    ref.write_bytes(data)
    inp, out = str(src), str(tmp / "out.txt")
    stdin = subprocess.DEVNULL
    feed = None
    helper = None
    got: list = []
    if case == "fifo":
        fifo = tmp / "in.fifo"
        os.mkfifo(fifo)
        inp = str(fifo)
        helper = (fifo, _writer(fifo, data), True)
    elif case in ("dev_stdin", "dash"):
        inp = "/dev/stdin" if case == "dev_stdin" else "-"
        stdin, feed = subprocess.PIPE, data
    elif case == "directory":
        inp = str(tmp / "adir")
        os.mkdir(inp)
    elif case == "missing":
        inp = str(tmp / "no-such-input.txt")
    elif case == "empty":
        src.write_bytes(b"")
    elif case == "bom":
        src.write_bytes(b"\xef\xbb\xbf" + data)
    elif case == "crlf":
        src.write_bytes(data.replace(b"\n", b"\r\n"))
    elif case == "cr":
        src.write_bytes(data.replace(b"\n", b"\r"))
    elif case == "cr_mixed":                 # line ends alternate between CRLF and CR
        parts = data.split(b"\n")
        src.write_bytes(b"".join(p + (b"\r\n" if k % 2 else b"\r") for k, p in enumerate(parts[:-1])) + parts[-1])
    elif case in COMPRESSED:
        src = tmp / COMPRESSED[case]
        inp = str(src)
        packed = (lzma.compress(data) if case.startswith("xz") else gzip.compress(data, mtime=0))
        if case.endswith("_truncated"):
            packed = packed[:len(packed) // 2]
        src.write_bytes(data if case.endswith("_text") else packed)
    elif case in ("latin1", "nul"):
        k = v.second(data)
        src.write_bytes(data[:k] + (b"\xe9" if case == "latin1" else b"\x00") + data[k:])
    elif case == "out_fifo":
        fifo = tmp / "out.fifo"
        os.mkfifo(fifo)
        out = str(fifo)
        helper = (fifo, _reader(fifo, got), False)
    elif case == "out_symlink":
        (tmp / "target.txt").write_text("old\n", encoding="utf-8")
        (tmp / "link.txt").symlink_to(tmp / "target.txt")
        out = str(tmp / "link.txt")
    elif case == "out_dev_null":
        out = os.devnull
    elif case == "out_missing_dir":
        out = str(tmp / "no-such-dir" / "out.txt")
    elif case == "out_directory":
        out = str(tmp / "outdir")
        os.mkdir(out)
    elif case == "stdout_closed":
        out = "-"
    argv = [str(ref) if a == "REF" else a for a in v.argv(inp, out)]
    if case not in PROCESS:
        c = wo_cli(argv, stdin=feed)
        rc, stdout, err = c.returncode, c.stdout_bytes, c.stderr.encode("utf-8")
    else:
        p = subprocess.Popen([sys.executable, "-m", "wo.cli", *argv], stdin=stdin, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=str(tmp))
        if case == "stdout_closed":
            p.stdout.close()                    # the reader went away before wo wrote (`| head -c1`)
            if feed is not None:
                p.stdin.write(feed)
            err = p.stderr.read()
            p.wait(120)
            stdout = b""
        else:
            stdout, err = p.communicate(feed, timeout=120)
        rc = p.returncode
    if helper is not None:
        helper[1].join(30)
        _unblock(helper[0], helper[1], helper[2])
    if not v.has_output or out == "-":
        output = stdout
    elif case == "out_fifo":
        output = got[0] if got else None
    elif case == "out_symlink":
        output = (tmp / "target.txt").read_bytes()
    elif os.path.isfile(out):
        output = pathlib.Path(out).read_bytes()
    else:
        output = None
    return Run(rc, stdout, err.decode("utf-8", "replace"), output)


_REFERENCE: dict = {}


def reference(verb: str, tmp_factory) -> List[str]:
    """The records of a plain run of ``verb`` (regular input and output files)."""
    if verb not in _REFERENCE:
        r = run_case(verb, "plain", tmp_factory.mktemp("ref"))
        assert r.rc == 0 and "Traceback" not in r.stderr, r.stderr
        _REFERENCE[verb] = VERBS[verb].records(r.output.decode("utf-8"))
        assert len(_REFERENCE[verb]) == 3 or verb == "evaluate"
    return _REFERENCE[verb]


# ---------------------------------------------------------------- the test
@pytest.mark.parametrize("verb,case", CASES, ids=[f"{v.replace(' ', '-')}-{c}" for v, c in CASES])
def test_file_layer(verb, case, tmp_path, tmp_path_factory):
    v = VERBS[verb]
    want = reference(verb, tmp_path_factory)
    r = run_case(verb, case, tmp_path)
    FILE_LAYER_CASES[verb] = FILE_LAYER_CASES.get(verb, 0) + 1
    assert "Traceback" not in r.stderr, r.stderr
    assert r.rc in (0, 1, 2), r.stderr
    assert not [x for x in os.listdir(tmp_path) if x.startswith(".wo-out")]      # no temporary file left
    text = r.output.decode("utf-8", "replace") if r.output is not None else None

    if case in ("directory", "missing"):                 # user errors naming the user's path
        name = "adir" if case == "directory" else "no-such-input.txt"
        assert r.rc == 2 and str(tmp_path / name) in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert r.output in (None, b""), r.output
    elif case in ("xz_truncated", "gz_truncated", "xz_text", "gz_text"):
        # a cut or mislabelled compressed input: one line naming it, exit 2, no output file
        kind = "xz" if case.startswith("xz") else "gz"
        assert r.rc == 2 and f"{tmp_path / COMPRESSED[case]}: " in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and kind in r.stderr.split(": ", 2)[-1], r.stderr
        assert ("truncated" in r.stderr) == case.endswith("_truncated"), r.stderr
        assert (r.output is None) if v.has_output else r.output == b"", r.output
    elif case in ("out_missing_dir", "out_directory"):
        name = "no-such-dir/out.txt" if case == "out_missing_dir" else "outdir"
        assert r.rc == 2 and str(tmp_path / name) in r.stderr and ".wo-out" not in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    elif case == "stdout_closed":
        assert r.rc == 2 and "broken pipe" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    elif case == "empty":
        if verb == "evaluate":                           # 0 hypotheses for 3 references: a user error
            assert r.rc == 2 and str(tmp_path / "in.txt") in r.stderr, r.stderr
        else:
            assert r.rc == 0 and v.records(text) == [], r.stderr
    elif case in ("latin1", "nul"):
        if case == "latin1" and not v.per_sentence:      # read as a whole: the file and line are named
            assert r.rc == 2 and f"{tmp_path / 'in.txt'}:2:" in r.stderr, r.stderr
        elif case == "latin1":                           # the 2nd sentence fails alone, named file:line
            assert r.rc == 1 and f"{tmp_path / 'in.txt'}:" in r.stderr and "UTF-8" in r.stderr, r.stderr
            recs = v.records(text)
            assert len(recs) == 3 and [recs[0], recs[2]] == [want[0], want[2]]
        else:                                            # a NUL is a character: no failure, others unchanged
            assert r.rc in (0, 1), r.stderr
            if v.has_output:
                recs = v.records(text)
                assert len(recs) == 3 and [recs[0], recs[2]] == [want[0], want[2]]
    elif case == "out_dev_null":
        twin = os.path.exists(os.devnull + ".tok")      # `wo sr realize` once wrote /dev/null.tok
        if twin:
            os.unlink(os.devnull + ".tok")
        assert r.rc == 0 and not twin, r.stderr
        assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
        assert r.output in (None, b"")
    else:                                                # same input, another way: the plain run's records
        assert r.rc == 0, r.stderr
        assert text is not None and v.records(text) == want, (r.stderr, text)
        if case == "out_fifo":
            assert stat.S_ISFIFO(os.stat(tmp_path / "out.fifo").st_mode)
        if case == "out_symlink":
            assert (tmp_path / "link.txt").is_symlink()


def main() -> None:
    """Print the exit code of every case as a Markdown table, and the cases and tracebacks by
    verb (the figures of docs/reliability.md): ``python -m tests.test_file_layer``."""
    import tempfile

    cases = INPUTS + OUTPUTS
    rows, totals = [], []
    for verb, v in VERBS.items():
        codes, tracebacks = [], 0
        for case in cases:
            if not v.has_output and case in OUTPUTS and case != "stdout_closed":
                codes.append("")
                continue
            with tempfile.TemporaryDirectory() as d:
                r = run_case(verb, case, pathlib.Path(d))
            codes.append(str(r.rc))
            tracebacks += "Traceback" in r.stderr
        rows.append(f"| `wo {verb}` | " + " | ".join(codes) + " |")
        totals.append((verb, sum(1 for c in codes if c), tracebacks))
    print("| verb | " + " | ".join(c.replace("_", " ") for c in cases) + " |")
    print("|---|" + "---|" * len(cases))
    print("\n".join(rows))
    print()
    for verb, n, tb in totals:
        print(f"wo {verb}: {n} cases, {tb} tracebacks")
    print(f"all: {sum(n for _, n, _ in totals)} cases, {sum(tb for _, _, tb in totals)} tracebacks")


if __name__ == "__main__":
    main()
