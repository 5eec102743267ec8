"""Shared fixtures: the real corpora read once per session (EWT, EWT-CCG, the Portuguese SR
slices), small models trained once on real data, the shipped models, and :func:`wo_cli`, which
runs the command line in this process.

Tests that take more than a few seconds on a quiet 2-core machine are marked ``slow``:
``pytest -m "not slow" tests`` is the quick run, ``make test`` runs everything.
"""
import functools
import io
import pathlib
import sys
import traceback
from dataclasses import dataclass
from typing import Sequence, Tuple, Union

import pytest

from wo.io import read_conllu

ROOT = pathlib.Path(__file__).resolve().parent.parent
EWT = ROOT / "corpora" / "ud-en-ewt"
CCG = ROOT / "corpora" / "ccg-en"
MODELS = ROOT / "corpora" / "models"
SHIPPED = MODELS / "wo-ewt-dep.wo"
SHIPPED_LM = MODELS / "wo-en-4gram.wolm"
SR_DATA = ROOT / "tests" / "data" / "sr"
PT_TRAIN = SR_DATA / "pt_bosque-train-400.conllu.xz"
PT_TEST = SR_DATA / "pt_bosque-test-40.conllu.xz"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: takes more than about 5 s on a quiet 2-core machine; "
                   "`pytest -m \"not slow\" tests` leaves these out (make test runs them)")


# ---------------------------------------------------------------- the command line in this process
@dataclass
class CliRun:
    """What one ``wo`` command did: returncode (int), stdout and stderr (str, UTF-8 decoded with
    replacement), stdout_bytes (the bytes written to standard output)."""

    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: bytes


def wo_cli(argv: Sequence, stdin: Union[bytes, str, None] = None) -> CliRun:
    """Run ``wo ARGV`` in this process through ``wo.cli.main`` (no interpreter start-up).

    Standard input is ``stdin`` (bytes or str; empty when None) and standard output and error
    are captured for the call; wo's cache of standard input is emptied before and restored
    after.  An argparse usage error (SystemExit) gives its exit code; an exception escaping
    ``main`` is printed to the captured stderr as the interpreter would ("Traceback ...") with
    exit code 1, so a test that asserts there is no traceback still fails.  Process behaviour
    (signals, the installed script's exit status, ``/dev/stdin``, a closed standard output)
    needs a real process: use ``subprocess`` for those.
    """
    import wo.io.text as text_module
    from wo.cli import main

    data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
    out, err = io.BytesIO(), io.BytesIO()
    streams = (io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"),
               io.TextIOWrapper(out, encoding="utf-8", write_through=True),
               io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True))
    saved = sys.stdin, sys.stdout, sys.stderr, text_module._STDIN_CACHE
    sys.stdin, sys.stdout, sys.stderr = streams
    text_module._STDIN_CACHE = None
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:          # argparse: usage errors (2), --help (0)
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception:                  # what a process would print as a traceback
        traceback.print_exc(file=sys.stderr)
        rc = 1
    finally:
        for s in streams[1:]:
            s.flush()
        sys.stdin, sys.stdout, sys.stderr, text_module._STDIN_CACHE = saved
    return CliRun(rc, out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace"),
                  out.getvalue())


# ---------------------------------------------------------------- real data, read once
@functools.lru_cache(maxsize=None)
def conllu_blocks(path: str) -> Tuple[str, ...]:
    """The non-blank sentence blocks of a (.xz) CoNLL-U file as text, read once per session
    (to write slices and deliberately damaged copies of real data)."""
    import lzma

    opener = lzma.open if str(path).endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return tuple(b for b in fh.read().split("\n\n") if b.strip())


def write_blocks(path: pathlib.Path, blocks: Sequence[str]) -> pathlib.Path:
    """Write CoNLL-U blocks as a file (blank-line separated, a blank line at the end)."""
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def ewt_train():
    """All of EWT train (12,544 sentences), parsed once.  Shared: do not modify."""
    return read_conllu(str(EWT / "en_ewt-ud-train.conllu.xz"))


@pytest.fixture(scope="session")
def ewt_dev():
    """All of EWT dev (2,001 sentences), parsed once.  Shared: do not modify."""
    return read_conllu(str(EWT / "en_ewt-ud-dev.conllu.xz"))


@pytest.fixture(scope="session")
def ewt_train_slice(ewt_train):
    return ewt_train[:400]


@pytest.fixture(scope="session")
def ewt_train_text(ewt_train, tmp_path_factory):
    """EWT train forms, one sentence per line (the text the LM tests train on)."""
    p = tmp_path_factory.mktemp("ewt-text") / "train.txt"
    p.write_text("\n".join(" ".join(s.forms) for s in ewt_train) + "\n", encoding="utf-8")
    return str(p)


@pytest.fixture(scope="session")
def ccg_train():
    """All of EWT-CCG train (12,220 derivations), read once.  Shared: do not modify."""
    from wo.ccg import read_auto

    return read_auto(CCG / "train.auto.xz")


@pytest.fixture(scope="session")
def ccg_dev():
    """All of EWT-CCG dev (1,969 derivations), read once.  Shared: do not modify."""
    from wo.ccg import read_auto

    return read_auto(CCG / "dev.auto.xz")


@pytest.fixture(scope="session")
def pt_train():
    """The 400-sentence Portuguese (Bosque) training slice in tests/data/sr."""
    return read_conllu(str(PT_TRAIN))


@pytest.fixture(scope="session")
def pt_test():
    """The 40-sentence Portuguese (Bosque) test slice in tests/data/sr."""
    return read_conllu(str(PT_TEST))


# ---------------------------------------------------------------- models
@pytest.fixture(scope="session")
def small_model(tmp_path_factory, ewt_train_slice):
    """A model trained for 2 epochs on 400 real EWT train sentences (~10 s)."""
    from wo.dep.train import train

    path = tmp_path_factory.mktemp("model") / "small.wo"
    train(ewt_train_slice, [], 2, str(path), hash_bits=18, log=lambda m: None)
    return str(path)


@pytest.fixture(scope="session")
def model_path(request):
    """The shipped pretrained model when present (it is in the repository), else the small one
    (trained only then)."""
    return str(SHIPPED) if SHIPPED.exists() else request.getfixturevalue("small_model")


def t1_file(path, sents, gold=False, with_orig=None) -> str:
    """Write ``sents`` (UD sentences) as T1 input (``make_input`` seed 3; ``gold``: with the gold
    forms; ``with_orig=False``: without the original ids) to ``path``; returns the path."""
    from wo.sr.t1 import format_t1, make_input

    with open(path, "w", encoding="utf-8") as f:
        for i, s in enumerate(sents):
            x = make_input(s, 3, i, gold)
            if with_orig is False:
                x.orig = None
            f.write(format_t1(x, gold) + "\n")
    return str(path)


def _tiny_pt_model(d, name, train, test, *train_args):
    """A tiny Portuguese model trained by the CLI on 340 sentences of the training slice
    ``train`` (dev: the rest), with ``train_args`` added; returns the fixture dict (dir, model,
    training record, the test sentences ``test``, their T1 and gold-form T1 files)."""
    from wo.model import Model

    tr = t1_file(d / "train.t1", train[:340], gold=True)
    dv = t1_file(d / "dev.t1", train[340:])
    (d / "dev.txt").write_text("".join(" ".join(s.forms) + "\n" for s in train[340:]), encoding="utf-8")
    model = d / name
    p = wo_cli(["sr", "train", "--train", tr, "--dev", dv, "--dev-ref", d / "dev.txt", "--lang", "pt", "--mwt",
                PT_TRAIN, "--set", "order.hash_bits=18", *train_args, "--model", model, "--quiet"])
    assert p.returncode == 0, p.stderr
    return {"dir": d, "model": str(model), "record": Model.read_header(str(model))[0]["training"], "test": test,
            "t1": t1_file(d / "test.t1", test), "gold_t1": t1_file(d / "test.gold.t1", test, gold=True, with_orig=False)}


@pytest.fixture(scope="session")
def pt(tmp_path_factory, pt_train, pt_test):
    """A tiny Portuguese model of the search orderer trained by the CLI (2 shards of parameter
    mixing, compact).  Shared by test_sr_multi and test_sr_order: write new files only."""
    return _tiny_pt_model(tmp_path_factory.mktemp("pt"), "pt.wo", pt_train, pt_test, "--epochs", 2, "--jobs", 2,
                          "--set", "train.compact=float16", "--set", "order.method=search")


@pytest.fixture(scope="session")
def pt_local(tmp_path_factory, pt_train, pt_test):
    """A tiny Portuguese model of the local orderer trained by the CLI (the default orderer)."""
    return _tiny_pt_model(tmp_path_factory.mktemp("ptl"), "ptl.wo", pt_train, pt_test, "--epochs", 3)


@pytest.fixture(scope="session")
def shipped_lm():
    """The shipped 4-gram LM (corpora/models/wo-en-4gram.wolm), loaded once.  Shared: read only."""
    from wo.lm import LanguageModel

    return LanguageModel.load(str(SHIPPED_LM))


def assert_lm_features_are_the_sentence_score(core, lm, words) -> None:
    """The real-valued LM features of the last goal edge of ``core.search`` are the LM's log10
    probability of ``words``: the in-string feature without <s>/</s>, plus the sentence feature
    with them (the LM features of ``wo._fast._lmfeat``, any grammar)."""
    feats = core.search.real_features_of(core.search.last_goal)
    f_lm, f_sent = core.grammar.lm_feature_indices
    assert set(feats) == {f_lm, f_sent}
    assert abs(feats[f_lm] + feats[f_sent] - lm.score(words)) < 1e-3
    assert abs(feats[f_lm] - lm.score(words, bos=False, eos=False)) < 1e-3
