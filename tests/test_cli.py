import json
import lzma
import os
import pathlib
import subprocess
import sys

import pytest

from tests.conftest import CCG, EWT, PT_TEST, ROOT, conllu_blocks, wo_cli, write_blocks
from wo.cli import main


def _slice(tmp_path, n=25):
    """The first ``n`` sentences of EWT dev as a CoNLL-U file."""
    return write_blocks(tmp_path / "slice.conllu", conllu_blocks(str(EWT / "en_ewt-ud-dev.conllu.xz"))[:n])


def test_linearize_and_evaluate_end_to_end(tmp_path, model_path, capsys):
    src = _slice(tmp_path)
    out = tmp_path / "out.txt"
    rc = main(["linearize", "--model", model_path, "--input", str(src), "--output", str(out),
               "--given", "full", "--budget-factor", "10", "--quiet"])
    assert rc == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 25
    capsys.readouterr()
    rc = main(["evaluate", "--hyp", str(out), "--ref", str(src), "--json"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert res["recovered"] == 100.0
    assert res["bleu"] > 30.0          # full trees constrain the order heavily
    assert "tok:none" in res["signature"] and "case:mixed" in res["signature"]


def test_jsonl_output(tmp_path, model_path):
    src = _slice(tmp_path, 5)
    out = tmp_path / "out.jsonl"
    assert main(["linearize", "--model", model_path, "--input", str(src), "--output", str(out),
                 "--format", "jsonl", "--quiet"]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 5 and all(r["status"] in ("ok", "completed", "fallback") for r in rows)
    assert all(len(r["tokens"]) == len(r["heads"]) == len(r["pos"]) for r in rows)


def test_malformed_input_reports_file_and_line(tmp_path, model_path, capsys):
    src = _slice(tmp_path, 3)
    lines = src.read_text().splitlines()
    bad_line = next(i for i, ln in enumerate(lines) if ln and not ln.startswith("#") and i > 12)
    cols = lines[bad_line].split("\t")
    lines[bad_line] = "\t".join(cols[:7])
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "o.txt"
    rc = main(["linearize", "--model", model_path, "--input", str(src), "--output", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 1                      # some sentences failed, the others are linearized
    assert f"{src}:{bad_line + 1}:" in err and "columns" in err
    lines = out.read_text().splitlines()
    assert len(lines) == 3
    rc = main(["linearize", "--model", model_path, "--input", str(src), "--output", str(tmp_path / "f.txt"),
               "--quiet", "--on-error", "fail"])
    assert rc == 2 and not (tmp_path / "f.txt").exists()


def test_bad_model_is_a_clear_error_without_traceback(tmp_path):
    src = _slice(tmp_path, 2)
    bad = tmp_path / "bad.wo"
    bad.write_text("not a model")
    p = wo_cli(["linearize", "--model", bad, "--input", src, "--output", tmp_path / "o.txt"])
    assert p.returncode == 2
    assert "not a wo model" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.slow
def test_train_command_writes_a_loadable_model(tmp_path, capsys):
    from wo.model import Model

    tr = write_blocks(tmp_path / "train.conllu", conllu_blocks(str(EWT / "en_ewt-ud-train.conllu.xz"))[:80])
    dev = _slice(tmp_path, 15)
    out = tmp_path / "m.wo"
    rc = main(["train", "--train", str(tr), "--dev", str(dev), "--epochs", "2", "--model", str(out),
               "--hash-bits", "16"])
    assert rc == 0
    rec = json.loads(capsys.readouterr().out)
    assert len(rec["epochs"]) == 2 and rec["best_epoch"] in (1, 2)
    m = Model.load(str(out))
    assert m.hash_bits == 16 and m.header["training"]["train_sentences"] <= 80
    assert abs(m.weights).sum() > 0


@pytest.mark.parametrize("args", [["sr", "models"], ["sr", "evaluate", "--hyp", "REF", "--ref", "REF"]])
def test_standard_output_closed_early_is_one_line_not_a_traceback(args, tmp_path):
    """`wo ... | head -c1`: the reader goes away; wo says so in one line and exits 2 (a real
    process: its standard output is a pipe nobody reads)."""
    ref = tmp_path / "ref.txt"
    ref.write_text("a b c\n" * 5000, encoding="utf-8")
    args = [str(ref) if a == "REF" else a for a in args]
    p = subprocess.Popen([sys.executable, "-m", "wo.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=str(pathlib.Path(__file__).resolve().parent.parent))
    p.stdout.close()                       # nobody reads standard output
    err = p.stderr.read().decode()
    assert p.wait() == 2
    assert "Traceback" not in err and "broken pipe" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [
    ["sr", "realize", "--model", "DIR", "--input", "DEVNULL"],
    ["linearize", "--input", "DIR"],
    ["linearize", "--input", "TESTFILE", "--output", "DIR"],
    ["evaluate", "--hyp", "DIR", "--ref", "DIR"],
    ["evaluate", "--tokenize", "bogus", "--hyp", "TESTFILE", "--ref", "TESTFILE"],
])
def test_a_directory_or_a_bad_choice_is_one_line_and_exit_2(args, tmp_path):
    d = tmp_path / "adir"
    d.mkdir()
    args = [{"DIR": str(d), "DEVNULL": os.devnull, "TESTFILE": str(PT_TEST)}.get(a, a) for a in args]
    p = wo_cli(args)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    assert str(d) in p.stderr or "bogus" in p.stderr
    assert not [x for x in os.listdir(tmp_path) if x.startswith(".wo-out")]   # no temporary file left behind


@pytest.mark.parametrize("args,says", [
    (["train", "--train", "TESTFILE", "--epochs", "1", "--model", "DIR"], "is a directory, not an output file"),
    (["sr", "train", "--train", "T1", "--lang", "pt", "--epochs", "1", "--model", "DIR"], "is a directory, not an output file"),
    (["lm", "train", "--text", "TEXT", "--order", "2", "--out", "DIR"], "is a directory, not an output file"),
    (["linearize", "--input", "TESTFILE", "--output", "DIR"], "is a directory, not an output file"),
    (["sr", "make-input", "--ud", "TESTFILE", "--out", "TEXT/x.t1"], "is a file, not a directory"),
    # the first input is not T1 (or not UTF-8): read first, it would be the error reported
    (["sr", "train", "--train", "TESTFILE", "--lang", "pt", "--dev", "T1", "--dev-ref", "MISSING", "--model", "OUT"],
     "missing.conllu: no such file"),
    (["sr", "train", "--train", "TESTFILE", "--lang", "pt", "--mwt", "DIR", "--model", "OUT"],
     "is a directory, not an input"),
    (["lm", "train", "--text", "BAD", "MISSING", "--out", "OUT"], "missing.conllu: no such file"),
])
def test_an_output_that_cannot_be_written_is_refused_before_any_work(args, says, tmp_path):
    """A directory as the output model, or a path through a file, is refused when the command
    starts (one line, exit 2), not after the training or the decoding it would have lost; so is
    a training command's missing or directory input, before the first input is read."""
    from wo.cli import main

    d = tmp_path / "adir"
    d.mkdir()
    text = tmp_path / "text.txt"
    text.write_text("a b c\nb c d\n" * 200, encoding="utf-8")
    t1 = tmp_path / "in.t1"
    assert main(["sr", "make-input", "--ud", str(PT_TEST), "--out", str(t1), "--seed", "1"]) == 0
    (tmp_path / "bad.txt").write_bytes(b"a b\n\xff\xfe c\n")
    names = {"BAD": str(tmp_path / "bad.txt"), "DIR": str(d), "TESTFILE": str(PT_TEST), "T1": str(t1), "TEXT": str(text),
             "MISSING": str(tmp_path / "missing.conllu"), "OUT": str(tmp_path / "out.wo")}
    args = [names.get(a, a.replace("TEXT", str(text))) for a in args]
    p = wo_cli(args)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and says in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "epoch" not in p.stderr and os.listdir(d) == [] and not (tmp_path / "out.wo").exists()


@pytest.mark.parametrize("args,says", [
    (["sr", "train", "--train", "TESTFILE", "--lang", "pt", "--set", "order.hash_bits=40", "--model", "OUT"], "8..30"),
    (["train", "--train", "TESTFILE", "--hash-bits", "4", "--model", "OUT"], "between 8 and 30"),
    (["lm", "train", "--text", "TESTFILE", "--order", "3", "--prune", "0", "1", "1", "--out", "OUT"],
     "at most 2 for order 3"),
    (["lm", "train", "--text", "TESTFILE", "--order", "3", "--prune", "0", "-1", "--out", "OUT"], "0 or more"),
    (["train", "--train", "TESTFILE", "--dev", "TESTFILE", "--dev-limit", "-5", "--model", "OUT"], "0 or more"),
    (["lm", "train", "--text", "TESTFILE", "--max-tokens", "0", "--out", "OUT"], "a positive integer"),
    (["gyro", "realize", "--input", "TESTFILE", "--dep-nbest", "-1", "--output", "OUT"], "a positive integer"),
    (["train", "--train", "TESTFILE", "--train-budget", "nan", "--model", "OUT"], "a positive number"),
    (["linearize", "--input", "TESTFILE", "--rerank-weight", "nan", "--output", "OUT"], "a finite number"),
    (["sr", "realize", "--input", "TESTFILE", "--set", "lift.threshold=nan", "--output", "OUT"], "a finite number"),
    # the rule a model header's stage settings follow (before: a MemoryError for every sentence)
    (["sr", "realize", "--input", "TESTFILE", "--set", "order.beam=-3", "--output", "OUT"],
     "not an integer of at least 1"),
])
def test_a_number_out_of_range_is_a_usage_error(args, says, tmp_path):
    """--hash-bits 40 asked numpy for 4 TiB and ended in a traceback, and so did --train-budget
    nan; extra --prune values were dropped silently, and so were the last five dev sentences with
    --dev-limit -5; a NaN weight decoded with it.  Each is a usage error (exit 2), and nothing is
    written."""
    out = tmp_path / "out.bin"
    p = wo_cli([{"TESTFILE": str(PT_TEST), "OUT": str(out)}.get(a, a) for a in args])
    assert p.returncode == 2 and says in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not out.exists()


def test_lifting_at_threshold_zero_realises_every_sentence(tmp_path):
    """lift.threshold=0 (lift wherever training ever lifted) failed 39 of 40 sentences with
    'max() arg is an empty sequence': a context never lifted in training met the threshold."""
    t1, out = tmp_path / "in.t1", tmp_path / "out.jsonl"
    assert main(["sr", "make-input", "--ud", str(PT_TEST), "--out", str(t1), "--seed", "1"]) == 0
    assert main(["sr", "realize", "--lang", "pt_bosque", "--input", str(t1), "--set", "lift.threshold=0",
                 "--format", "jsonl", "--output", str(out), "--quiet"]) == 0
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(recs) == 40 and {r["status"] for r in recs} == {"ok"}


def test_make_input_refuses_text_without_token_lines(tmp_path, capsys):
    """A realiser's output (comment lines only) given to make-input wrote an empty T1 file and
    exited 0; an empty file still gives an empty T1 file."""
    t1, sub, out = tmp_path / "in.t1", tmp_path / "sub.txt", tmp_path / "out.t1"
    assert main(["sr", "make-input", "--ud", str(PT_TEST), "--out", str(t1), "--seed", "1"]) == 0
    assert main(["sr", "realize", "--lang", "pt_bosque", "--input", str(t1), "--output", str(sub), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["sr", "make-input", "--ud", str(sub), "--out", str(out)]) == 2
    assert "no CoNLL-U sentence" in capsys.readouterr().err and not out.exists()
    (tmp_path / "empty.conllu").write_text("", encoding="utf-8")
    assert main(["sr", "make-input", "--ud", str(tmp_path / "empty.conllu"), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == ""
    # a submission file as the reference (another system's output) is read as a hypothesis file is
    assert main(["sr", "evaluate", "--hyp", str(sub), "--ref", str(sub), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["exact"] == 100.0 and rec["sentences"] == 40


def test_running_out_of_memory_is_one_line(monkeypatch, capsys):
    """A MemoryError (a table larger than the machine) is reported in one line, exit 2."""
    import wo.cli.sr as cli_sr

    def boom(a):
        raise MemoryError("Unable to allocate 4.00 TiB for an array")
    monkeypatch.setattr(cli_sr, "cmd_sr_models", boom)
    assert main(["sr", "models"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wo: out of memory: Unable to allocate 4.00 TiB") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args,says", [
    (["linearize", "--model", "models/wo-ewt-sr.wo", "--input", "TESTFILE"], "an SR model (wo sr realize), not a dependency"),
    (["linearize", "--model", "models/wo-ewt-ccg-lm.wo", "--input", "TESTFILE"], "a CCG model"),
    (["linearize", "--model", "models/wo-tatoeba-smt.wo", "--input", "TESTFILE"], "an SMT model"),
    (["lm", "score", "--lm", "models/wo-ewt-sr.wo", "--input", "TESTFILE"], "not a language model"),
])
def test_a_model_of_another_system_is_refused_in_one_line(args, says):
    args = [str(PT_TEST) if a == "TESTFILE" else (str(ROOT / "corpora" / a) if a.startswith("models/") else a) for a in args]
    p = wo_cli(args)
    assert p.returncode == 2 and says in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert p.stdout == ""                      # no word salad


@pytest.mark.parametrize("args", [["linearize", "--budget", "0"], ["linearize", "--beam-factor", "0"],
                                  ["linearize", "--timeout", "-1"], ["sr", "realize", "--timeout", "nan"],
                                  ["sr", "train", "--epochs", "0", "--train", "x", "--model", "y"],
                                  ["ccg", "linearize", "--budget-factor", "-3"],
                                  ["smt", "translate", "--beta", "nan"], ["smt", "translate", "--beta", "1.5"]])
def test_impossible_search_settings_are_usage_errors(args):
    p = wo_cli([*args, "--input", os.devnull])
    assert p.returncode == 2 and "must be" in p.stderr and "Traceback" not in p.stderr, p.stderr


def _conllu_head(tmp_path, n_lines=60):
    """The first 4 sentences of the Portuguese test slice (60 lines), as bytes."""
    with lzma.open(PT_TEST, "rb") as fh:
        data = b"\n".join(fh.read().split(b"\n")[:n_lines]) + b"\n"
    return data


def _wo_process(args, **kw):
    """``wo ARGS`` as a real process (for what needs one: named pipes, /dev/stdin)."""
    return subprocess.run([sys.executable, "-m", "wo.cli", *args], capture_output=True, cwd=str(ROOT), timeout=120, **kw)


def test_named_pipes_and_dev_stdin_are_read_once(tmp_path):
    import threading

    data = _conllu_head(tmp_path)
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    threading.Thread(target=lambda: fifo.write_bytes(data), daemon=True).start()
    p = _wo_process(["linearize", "--input", str(fifo), "--output", str(tmp_path / "o1.txt")])
    assert p.returncode == 0 and b"read as conllu" in p.stderr, p.stderr
    assert len((tmp_path / "o1.txt").read_text(encoding="utf-8").splitlines()) == 4
    p = _wo_process(["linearize", "--input", "/dev/stdin", "--output", str(tmp_path / "o2.txt")], input=data)
    assert p.returncode == 0 and len((tmp_path / "o2.txt").read_text(encoding="utf-8").splitlines()) == 4


def test_an_invalid_byte_or_a_bom_does_not_change_the_format(tmp_path):
    data = _conllu_head(tmp_path)
    i = data.index(b"\t", 200)
    (tmp_path / "bad.conllu").write_bytes(data[:i - 2] + b"\xff" + data[i - 1:])
    (tmp_path / "bom.conllu").write_bytes(b"\xef\xbb\xbf" + data)
    p = wo_cli(["linearize", "--input", tmp_path / "bad.conllu", "--output", tmp_path / "o.txt"])
    err = p.stderr
    assert "read as conllu" in err and "bad.conllu:5: invalid UTF-8" in err, err
    assert len((tmp_path / "o.txt").read_text(encoding="utf-8").splitlines()) == 4   # one record per sentence
    p = wo_cli(["linearize", "--input", tmp_path / "bom.conllu", "--output", tmp_path / "o.txt"])
    assert p.returncode == 0 and "read as conllu" in p.stderr, p.stderr
    assert len((tmp_path / "o.txt").read_text(encoding="utf-8").splitlines()) == 4


def test_ccg_auto_with_an_invalid_byte_or_a_bom_stays_auto(tmp_path):
    with lzma.open(CCG / "test.auto.xz", "rb") as fh:
        lines = fh.read().split(b"\n")[:6]
    bad = list(lines)
    bad[3] = bad[3][:20] + b"\xff" + bad[3][21:]
    (tmp_path / "bad.auto").write_bytes(b"\n".join(bad) + b"\n")
    (tmp_path / "bom.auto").write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n")
    for name, line_error in (("bad.auto", "bad.auto:4: invalid UTF-8"), ("bom.auto", None)):
        p = wo_cli(["ccg", "linearize", "--input", tmp_path / name, "--output", tmp_path / "o.txt"])
        err = p.stderr
        assert "read as auto" in err and (line_error is None or line_error in err), err
        assert len((tmp_path / "o.txt").read_text(encoding="utf-8").splitlines()) == 3


def test_the_error_fallback_does_not_give_the_reference_back(tmp_path):
    """A CoNLL-U sentence that fails validation is output shuffled with the decoding's fixed
    seed, not in its (reference) input order."""
    from wo.io.trees import permutation

    blocks = [b for b in _conllu_head(tmp_path, 10_000).decode("utf-8").split("\n\n") if b.strip()][:4]
    k = max(range(4), key=lambda i: blocks[i].count("\n"))       # the longest sentence
    lines = blocks[k].split("\n")
    j = next(i for i, ln in enumerate(lines) if ln.split("\t")[0].isdigit())
    c = lines[j].split("\t")
    c[6] = "999"
    lines[j] = "\t".join(c)
    blocks[k] = "\n".join(lines)
    src = tmp_path / "bad.conllu"
    src.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    p = wo_cli(["linearize", "--input", src, "--output", tmp_path / "o.txt", "--given", "full"])
    assert p.returncode == 1 and "out of range" in p.stderr
    forms = [ln.split("\t")[1] for ln in lines if ln.split("\t")[0].isdigit()]
    out = (tmp_path / "o.txt").read_text(encoding="utf-8").splitlines()[k].split()
    assert out == [forms[i] for i in permutation(len(forms), 1, k)] and out != forms
    # under --given none only FORM is read: the bad tree does not fail the sentence
    p = wo_cli(["linearize", "--input", src, "--output", tmp_path / "o.txt", "--given", "none"])
    assert p.returncode == 0 and "out of range" not in p.stderr, p.stderr
    assert sorted((tmp_path / "o.txt").read_text(encoding="utf-8").splitlines()[k].split()) == sorted(forms)


def test_outputs_to_pipes_links_and_missing_directories(tmp_path):
    import threading

    src = tmp_path / "in.conllu"
    src.write_bytes(_conllu_head(tmp_path))
    fifo = tmp_path / "out.fifo"                    # a named pipe stays a pipe and gets the records
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    p = wo_cli(["linearize", "--input", src, "--output", fifo])
    reader.join(60)
    assert p.returncode == 0 and fifo.is_fifo() and len(got[0].splitlines()) == 4
    target = tmp_path / "target.txt"                # a symbolic link: its target is written, the link stays
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    p = wo_cli(["linearize", "--input", src, "--output", link])
    assert p.returncode == 0 and link.is_symlink() and len(target.read_text(encoding="utf-8").splitlines()) == 4
    missing = tmp_path / "nodir" / "x.txt"          # a missing directory is named by the user's path
    p = wo_cli(["linearize", "--input", src, "--output", missing])
    assert p.returncode == 2 and str(missing) in p.stderr and ".wo-out" not in p.stderr


def test_idl_lines_nested_too_deep_or_not_utf8_fail_alone(tmp_path):
    src = tmp_path / "in.idl"
    src.write_bytes(("I(" * 1000 + "a" + ")" * 1000 + "\n").encode() + b"I(a, b)\n\xff c\nI(d, e)\n")
    p = wo_cli(["idl", "realize", "--lm", ROOT / "corpora" / "models" / "wo-en-4gram.wolm",
                "--input", src, "--output", tmp_path / "o.txt"])
    err = p.stderr
    assert p.returncode == 1 and "Traceback" not in err
    assert "in.idl:1:1: expression nested more than" in err and "in.idl:3:1: invalid UTF-8" in err
    out = (tmp_path / "o.txt").read_text(encoding="utf-8").split("\n")
    assert sorted(out[1].split()) == ["a", "b"] and sorted(out[3].split()) == ["d", "e"]


def test_a_ud_file_given_as_t1_input_is_refused_with_the_command_that_makes_t1():
    p = wo_cli(["sr", "realize", "--lang", "pt", "--input", PT_TEST])
    assert p.returncode == 2 and "not T1 input" in p.stderr and "wo sr make-input --ud" in p.stderr
    assert p.stdout == ""
    t1 = wo_cli(["sr", "make-input", "--ud", PT_TEST, "--seed", "3"]).stdout_bytes
    p = wo_cli(["sr", "realize", "--lang", "pt", "--quiet"], stdin=t1)
    assert p.returncode == 0 and p.stdout.count("# text = ") == 40


def test_a_lin_rank_beyond_the_heads_dependents_fails_that_sentence_only(tmp_path):
    import re as _re

    lines = wo_cli(["sr", "make-input", "--ud", PT_TEST, "--seed", "3"]).stdout.split("\n")
    k = next(i for i, ln in enumerate(lines) if "lin=" in ln)
    c = lines[k].split("\t")
    c[5] = _re.sub(r"lin=[+-]\d+", "lin=+99", c[5])
    lines[k] = "\t".join(c)
    src = tmp_path / "bad.t1"
    src.write_text("\n".join(lines), encoding="utf-8")
    p = wo_cli(["sr", "realize", "--lang", "pt", "--input", src, "--output", tmp_path / "o.txt"])
    assert p.returncode == 1 and "lin=+99, but its head has" in p.stderr
    assert len((tmp_path / "o.txt.tok").read_text(encoding="utf-8").splitlines()) == 40


@pytest.mark.slow
def test_smt_input_without_translation_options_is_an_error_record_not_an_empty_line():
    p = wo_cli(["smt", "translate"], stdin="abc\n你好\n")
    out = p.stdout.splitlines()
    assert p.returncode == 1 and "<stdin>:1: no translation options" in p.stderr
    assert out[0] == "abc" and out[1].strip()


# ---------------------------------------------------------------- Ctrl-C (SIGINT to the process group)
def _test_blocks(n=None):
    """The first ``n`` sentences (all when None) of EWT test, as CoNLL-U blocks."""
    blocks = conllu_blocks(str(EWT / "en_ewt-ud-test.conllu.xz"))
    return blocks if n is None else blocks[:n]


def _ctrl_c_when(args, ready, limit=60.0):
    """Start ``wo ARGS`` in its own process group, wait until ``ready(pid)`` (polled every 20 ms,
    at most ``limit`` seconds), then send SIGINT to the whole group as a terminal's Ctrl-C does.
    Returns (exit code, stderr text, whether ready() became true)."""
    import signal
    import time

    root = pathlib.Path(__file__).resolve().parent.parent
    # a terminal's default SIGINT disposition in the child, whatever this process inherited (a CI
    # runner or `cmd &` may start it with SIGINT ignored, which Python then keeps ignoring)
    p = subprocess.Popen([sys.executable, "-m", "wo.cli", *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, cwd=str(root), start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t_end = time.monotonic() + limit
    ok = False
    while time.monotonic() < t_end and p.poll() is None:
        if ready(p.pid):
            ok = True
            break
        time.sleep(0.02)
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGINT)
    try:
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    return p.returncode, _without_loky_warnings(err.decode()), ok


def _without_loky_warnings(err):
    """stderr without the "leaked semlock" warnings that joblib's process pool (loky) sometimes
    prints at shutdown when interrupted (its resource tracker's, not wo's)."""
    out, skip = [], False
    for ln in err.splitlines(keepends=True):
        if "resource_tracker" in ln and "UserWarning" in ln:
            skip = True
            continue
        if skip and ln.startswith((" ", "\t")):
            continue
        skip = False
        out.append(ln)
    return "".join(out)


def _children(pid, marker):
    """How many child processes of ``pid`` have ``marker`` in their command line."""
    n = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            if ppid == pid:
                with open(f"/proc/{d}/cmdline", "rb") as fh:
                    n += marker.encode() in fh.read()
        except (OSError, ValueError, IndexError):
            continue
    return n


def _temp_output(d):
    """The temporary output file wo writes in directory ``d`` (None before it exists)."""
    tmp = [x for x in d.iterdir() if x.name.startswith(".wo-out-")]
    return tmp[0] if tmp else None


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_keeps_the_finished_prefix(tmp_path, jobs):
    """Ctrl-C during `wo linearize --jobs 1|2` on EWT test: exit 130, one line saying how many
    records were kept, and the output is the first N records of an uninterrupted run (with
    --jobs 2 it used to keep 0: the longest sentences ran first, so no prefix was finished)."""
    out = tmp_path / "o.txt"
    out.write_text("an older run's output\n", encoding="utf-8")
    src = str(EWT / "en_ewt-ud-test.conllu.xz")

    def some_records(pid):
        t = _temp_output(tmp_path)
        return t is not None and t.stat().st_size > 0

    rc, err, ready = _ctrl_c_when(["linearize", "--jobs", jobs, "--input", src, "--output", str(out)], some_records)
    assert ready, "no record was written within 60 s"
    assert rc == 130 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    got = out.read_text(encoding="utf-8").splitlines()
    n = len(got)
    assert 0 < n < 2077 and f"kept the first {n} of 2077" in err, err
    head = write_blocks(tmp_path / "head.conllu", _test_blocks(n))
    ref = wo_cli(["linearize", "--jobs", "2", "--input", head, "--output", tmp_path / "ref.txt", "--quiet"])
    assert ref.returncode == 0, ref.stderr
    assert out.read_bytes() == (tmp_path / "ref.txt").read_bytes()
    assert _temp_output(tmp_path) is None


@pytest.mark.slow
def test_ctrl_c_before_any_record_keeps_the_old_output(tmp_path):
    """Ctrl-C after the run has started (its workers are up) but before its first record: the
    file already at the output path is left as it was (not replaced by an empty file), exit 130."""
    import time

    out = tmp_path / "o.txt"
    out.write_text("an older run's output\n", encoding="utf-8")
    src = str(EWT / "en_ewt-ud-test.conllu.xz")
    def workers_running(pid):          # past the spawn of the workers, before the first batch ends
        if _temp_output(tmp_path) is None or _children(pid, "LokyProcess") < 2:
            return False
        time.sleep(0.3)
        return True

    rc, err, ready = _ctrl_c_when(["linearize", "--jobs", "2", "--input", src, "--output", str(out)],
                                  workers_running)
    assert ready and rc == 130 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and "left as it was" in err, err
    assert out.read_text(encoding="utf-8") == "an older run's output\n"
    assert _temp_output(tmp_path) is None


@pytest.mark.slow
def test_smt_every_chinese_line_gives_a_translation_or_a_file_line_error(tmp_path):
    """Every input line of `wo smt translate` gives a non-empty output line, or an error named
    file:line with exit 1 while the other lines are still translated.  Lines without any
    translation option (Latin text, digits, punctuation the table lacks, emoji, control and
    zero-width characters, a lone BOM) used to give an empty line with exit 0."""
    import unicodedata

    lines = ["你好", "", "   ", "\u3000", "\x0c", "。", "，。！？", "abc", "123", "\x01\x02", "\u200b",
             "…", "——", "\x00", "🙂", "\ufeff", "我不干了。", "xqz qqv 你", "的", "《》"]
    src = tmp_path / "zh.txt"
    src.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode("utf-8") + b"\n")   # and a BOM first
    p = wo_cli(["smt", "translate", "--input", src, "--output", tmp_path / "en.txt", "--format", "jsonl"])
    err = p.stderr
    assert p.returncode == 1 and "Traceback" not in err, err
    out = [json.loads(x) for x in (tmp_path / "en.txt").read_text(encoding="utf-8").splitlines()]
    assert len(out) == len(lines)

    def blank(s):      # nothing visible: separators, control and format characters only
        return all(unicodedata.category(c)[0] in "CZ" for c in s)

    for no, (line, rec) in enumerate(zip(lines, out), 1):
        named = f"{src}:{no}: " in err
        assert named == (rec["status"] == "error"), (line, rec)
        assert named or not blank(rec["text"]), (line, rec)
    for no in (1, 6, 17, 19):                       # real Chinese: translated
        assert out[no - 1]["status"] in ("ok", "completed") and not blank(out[no - 1]["text"])
    assert out[0]["text"] == out[0]["text"].lstrip("\ufeff")
    assert all(f"{src}:{no}: empty line" in err for no in (2, 3, 4, 5))
    assert all(f"{src}:{no}: no visible characters" in err for no in (10, 11, 14, 16))
