"""Batch processing on real EWT slices and deliberately corrupted copies."""
import json

import conllu
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import EWT, conllu_blocks
from wo.io.batch import FailFast, Interrupted
from wo.dep.linearizer import run
from wo.io.items import detect_format, read_items
from wo.dep.linearizer import Linearizer


def _blocks(n, start=0):
    return list(conllu_blocks(str(EWT / "en_ewt-ud-dev.conllu.xz"))[start:start + n])


def _write(tmp_path, name, blocks):
    p = tmp_path / name
    p.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return p


def test_readers_and_auto_detection(tmp_path):
    src = _write(tmp_path, "a.conllu", _blocks(5))
    items, fmt = read_items(str(src))
    assert fmt == "conllu" and len(items) == 5 and all(it.error is None for it in items)
    bag = tmp_path / "a.txt"
    bag.write_text("the/DT dog/NN barked/VBD ./.\nand/or this is it\n", encoding="utf-8")
    items, fmt = read_items(str(bag))
    assert fmt == "bag" and items[0].pos == ["DT", "NN", "VBD", "."] and items[1].forms[0] == "and/or"
    zg = tmp_path / "a.zgen"
    zg.write_text("barked VBD -1 ROOT\n__the_dog__ NN 0 SBJ\n. . 0 P\n\nhi UH -1 _\n", encoding="utf-8")
    items, fmt = read_items(str(zg))
    assert fmt == "zgen" and len(items) == 2
    assert items[0].heads == [-1, 1, 1] and items[0].units[1] == ["the", "dog"]
    assert detect_format(str(src)) == "conllu" and detect_format(str(zg)) == "zgen"


def test_zgen_base_np_units_are_kept_together(tmp_path, model_path):
    zg = tmp_path / "a.zgen"
    zg.write_text("barked VBD -1 ROOT\n__the_big_dog__ NN 0 SBJ\nloudly RB 0 ADV\n. . 0 P\n", encoding="utf-8")
    out = tmp_path / "o.txt"
    summ = run(model_path, str(zg), str(out), given="full", report=lambda m: None)
    toks = out.read_text().split()
    assert summ.failed == 0 and sorted(toks) == sorted(["barked", "the", "big", "dog", "loudly", "."])
    i = toks.index("the")
    assert toks[i:i + 3] == ["the", "big", "dog"]


@pytest.mark.parametrize("fmt", ["text", "detok", "conllu", "jsonl"])
def test_writers(tmp_path, model_path, fmt):
    src = _write(tmp_path, "a.conllu", _blocks(6, 10))
    out = tmp_path / f"o.{fmt}"
    summ = run(model_path, str(src), str(out), output_format=fmt, given="full", report=lambda m: None)
    assert summ.sentences == 6 and summ.failed == 0
    text = out.read_text(encoding="utf-8")
    if fmt == "conllu":
        sents = conllu.parse(text)
        assert len(sents) == 6
        for s in sents:
            assert "sent_id" in s.metadata and "text" in s.metadata
            assert [t["id"] for t in s] == list(range(1, len(s) + 1))
            assert sum(1 for t in s if t["head"] == 0) == 1
    elif fmt == "jsonl":
        rows = [json.loads(x) for x in text.splitlines()]
        assert len(rows) == 6 and all(set(r) >= {"sent_id", "tokens", "heads", "pos", "score", "status",
                                                   "seconds", "pops"} for r in rows)
    else:
        assert len(text.splitlines()) == 6
        if fmt == "detok":
            assert any(" ." not in ln and ln.endswith(".") for ln in text.splitlines())


def test_bad_sentences_do_not_affect_the_others(tmp_path, model_path):
    blocks = _blocks(8, 30)
    # given trees (under --given none a bad tree does not fail the sentence: only FORM is read)
    good = run(model_path, str(_write(tmp_path, "g.conllu", blocks)), str(tmp_path / "g.txt"), given="full",
               report=lambda m: None)
    assert good.failed == 0
    bad = list(blocks)
    lines = bad[2].split("\n")
    k = next(i for i, ln in enumerate(lines) if ln[:1].isdigit())
    cols = lines[k].split("\t")
    cols[6] = "99"                                   # head out of range
    lines[k] = "\t".join(cols)
    bad[2] = "\n".join(lines)
    lines = bad[5].split("\n")
    k = next(i for i, ln in enumerate(lines) if ln[:1].isdigit())
    cols = lines[k].split("\t")
    cols[0] = "x"                                    # non-integer id
    lines[k] = "\t".join(cols)
    bad[5] = "\n".join(lines)
    src = _write(tmp_path, "b.conllu", bad)
    msgs = []
    summ = run(model_path, str(src), str(tmp_path / "b.txt"), given="full", report=msgs.append)
    assert summ.failed == 2 and len(msgs) == 2
    assert all(m.startswith(f"{src}:") for m in msgs)
    g = (tmp_path / "g.txt").read_text().splitlines()
    b = (tmp_path / "b.txt").read_text().splitlines()
    assert len(b) == 8
    assert [x for i, x in enumerate(g) if i not in (2, 5)] == [x for i, x in enumerate(b) if i not in (2, 5)]
    summ = run(model_path, str(src), str(tmp_path / "s.txt"), on_error="skip", given="full", report=lambda m: None)
    assert (tmp_path / "s.txt").read_text().split("\n")[2] == ""
    with pytest.raises(FailFast):
        run(model_path, str(src), str(tmp_path / "f.txt"), on_error="fail", given="full", report=lambda m: None)
    assert not (tmp_path / "f.txt").exists()


def test_constraint_errors_and_length_limit(tmp_path, model_path):
    p = tmp_path / "c.zgen"
    p.write_text("a DT 1 x\nb NN 0 x\n\n"          # cycle
                 "a DT -1 x\nb NN -1 x\n\n"        # fine
                 "a XYZ -1 x\nb NN -1 x\n\n"       # unknown POS
                 + "".join(f"w{i} NN -1 x\n" for i in range(30)), encoding="utf-8")
    msgs = []
    summ = run(model_path, str(p), str(tmp_path / "o.txt"), given="full", max_length=20, report=msgs.append)
    assert summ.sentences == 4 and summ.failed == 3
    assert "cycle" in msgs[0] and "unknown POS" in msgs[1] and "max-length" in msgs[2]
    assert all(m.startswith(f"{p}:") for m in msgs)


def test_ctrl_c_keeps_a_valid_prefix(tmp_path, model_path):
    src = _write(tmp_path, "a.conllu", _blocks(100, 50))
    out = tmp_path / "o.txt"
    calls = []

    def progress(k):
        calls.append(k)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as ei:
        run(model_path, str(src), str(out), progress=progress, report=lambda m: None)
    lines = out.read_text().splitlines()
    assert len(lines) == ei.value.done and 0 < len(lines) < 100
    full = tmp_path / "full.txt"
    run(model_path, str(src), str(full), report=lambda m: None)
    assert full.read_text().splitlines()[:len(lines)] == lines


@pytest.mark.slow
def test_jobs_output_byte_identical(tmp_path, model_path):
    src = _write(tmp_path, "a.conllu", _blocks(80, 200))
    run(model_path, str(src), str(tmp_path / "1.jsonl"), jobs=1, output_format="conllu", report=lambda m: None)
    run(model_path, str(src), str(tmp_path / "2.jsonl"), jobs=2, output_format="conllu", report=lambda m: None)
    assert (tmp_path / "1.jsonl").read_bytes() == (tmp_path / "2.jsonl").read_bytes()


def test_dask_backend_equals_local_run(tmp_path, model_path):
    distributed = pytest.importorskip("dask.distributed", reason="dask.distributed not installed")
    src = _write(tmp_path, "a.conllu", _blocks(40, 300))
    run(model_path, str(src), str(tmp_path / "local.txt"), report=lambda m: None)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        run(model_path, str(src), str(tmp_path / "dask.txt"), backend="dask",
            scheduler=cluster.scheduler_address, report=lambda m: None)
    assert (tmp_path / "local.txt").read_bytes() == (tmp_path / "dask.txt").read_bytes()


def test_linearize_file_api(tmp_path, model_path):
    src = _write(tmp_path, "a.conllu", _blocks(5, 400))
    lin = Linearizer.load(model_path)
    summ = lin.linearize_file(str(src), str(tmp_path / "o.jsonl"), output_format="jsonl", given="pos")
    assert summ.sentences == 5 and len((tmp_path / "o.jsonl").read_text().splitlines()) == 5


# ---------------------------------------------------------------- property-based fuzzing
_REAL = None
FUZZ_COUNT = {"examples": 0}


def _real_blocks():
    global _REAL
    if _REAL is None:
        _REAL = [b for b in _blocks(400) if 3 <= b.count("\n") <= 14]
    return _REAL


def _corrupt(block, op, r):
    lines = block.split("\n")
    tok = [i for i, ln in enumerate(lines) if ln[:1].isdigit()]
    k = tok[r % len(tok)]
    cols = lines[k].split("\t")
    if op == "columns":
        lines[k] = "\t".join(cols[: r % 9 + 1])
    elif op == "id":
        cols[0] = ["x", "1.5.2", "-", "", "٣"][r % 5]; lines[k] = "\t".join(cols)
    elif op == "head":
        cols[6] = ["-3", "abc", "1000", "", "2.0"][r % 5]; lines[k] = "\t".join(cols)
    elif op == "range":
        cols[6] = str(len(tok) + 1 + r % 5); lines[k] = "\t".join(cols)
    elif op == "cycle":
        a, b = tok[0], tok[-1]
        ca, cb = lines[a].split("\t"), lines[b].split("\t")
        ca[6], cb[6] = cb[0], ca[0]
        lines[a], lines[b] = "\t".join(ca), "\t".join(cb)
    elif op == "roots":
        for i in tok[:2]:
            c = lines[i].split("\t"); c[6] = "0"; lines[i] = "\t".join(c)
    elif op == "empty":
        lines = [ln for ln in lines if ln.startswith("#")] or ["# sent_id = empty"]
    elif op == "utf8":
        return ("\n".join(lines)).encode("utf-8").replace(b"\t", b"\t\xff\xfe", 1)
    elif op == "garbage":
        lines.insert(r % (len(lines) + 1), "garbage line without tabs " + str(r))
    elif op == "self":
        cols[6] = cols[0]; lines[k] = "\t".join(cols)
    return "\n".join(lines).encode("utf-8")


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.integers(0, 10 ** 6),
                          st.sampled_from(["none", "columns", "id", "head", "range", "cycle", "roots",
                                           "empty", "utf8", "garbage", "self"]),
                          st.integers(0, 10 ** 6)), min_size=1, max_size=4))
def test_fuzz_malformed_inputs(tmp_path_factory, model_path, spec):
    real = _real_blocks()
    parts = []
    if all(op == "none" for _, op, _ in spec):      # every generated input has a malformed sentence
        si, _, r = spec[0]
        spec = [(si, ["columns", "id", "head", "range", "cycle", "roots", "empty", "utf8", "garbage",
                      "self"][r % 10], r)] + spec[1:]
    for si, op, r in spec:
        b = real[si % len(real)]
        parts.append(b.encode("utf-8") if op == "none" else _corrupt(b, op, r))
    d = tmp_path_factory.getbasetemp() / "fuzz"
    d.mkdir(exist_ok=True)
    src = d / "in.conllu"
    src.write_bytes(b"\n\n".join(parts) + b"\n\n")
    out = d / "out.jsonl"
    msgs = []
    summ = run(model_path, str(src), str(out), output_format="jsonl", given="full", max_pops=8,
               complete_beam=2, report=msgs.append)
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == summ.sentences
    assert summ.failed == len(msgs) == sum(1 for r in rows if r["status"] == "error")
    for m in msgs:
        path, line, _ = m.split(":", 2)
        assert path == str(src) and int(line) >= 1
    FUZZ_COUNT["examples"] += 1


def _square_batch(offset, batch):
    """Worker for the scheduling test: (item, item**2 + offset, pid) per item."""
    import os as _os

    return [(x, x * x + offset, _os.getpid()) for x in batch]


def test_longest_first_scheduling_keeps_input_order_and_results():
    from wo.io.batch import map_batches

    items = list(range(200))
    seen = []
    one = map_batches(_square_batch, (7,), items, jobs=1, chunk=16)
    two = map_batches(_square_batch, (7,), items, jobs=2, chunk=16, on_batch=seen.extend,
                      cost=lambda x: (x * 37) % 101)          # an order unlike the input's
    assert [r[:2] for r in two] == [r[:2] for r in one] == [(x, x * x + 7) for x in items]
    assert [r[0] for r in seen] == items                      # handed over in input order


def test_schedule_keeps_a_growing_input_order_prefix():
    """Batches come in windows of consecutive items (longest first inside), after the items
    that alone would make a tail; every index once, so a finished prefix grows window by
    window (what Ctrl-C keeps with --jobs > 1)."""
    from wo.io.batch import schedule

    costs = [(i * 37) % 101 + 1 for i in range(2000)]
    costs[1500] = 10 ** 6                                     # one item costlier than all the others
    groups = schedule(costs, 2, 32)
    assert sorted(i for g in groups for i in g) == list(range(2000))
    assert groups[0] == [1500]
    seen, window = set(), 2 * 32
    for k, g in enumerate(groups[1:], 1):
        seen.update(g)
        assert all(costs[a] >= costs[b] for a, b in zip(g, g[1:]))     # longest first inside a batch
        if k % 2 == 0:                                              # a window = one batch per worker
            rest = sorted(seen - {1500})
            assert rest == [i for i in range(2000) if i != 1500][:len(rest)]
    assert schedule([], 2, 32) == []


def test_a_ctrl_c_that_python_drops_is_raised_again(capfd):
    """A KeyboardInterrupt raised inside a finalizer is dropped by Python (printed as 'Exception
    ignored'); during a batch it is not printed and the next safe point raises it again."""
    import os
    import signal

    from wo.io.batch import _DeferInterrupt

    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            sum(range(1000))                   # the handler runs here, inside __del__

    # Python's own handler, as in a terminal (a CI runner may start the tests with SIGINT ignored)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with _DeferInterrupt() as guard:
            Finalized()                        # collected at once: the KeyboardInterrupt is dropped
            with pytest.raises(KeyboardInterrupt):
                guard.check()
        assert "KeyboardInterrupt" not in capfd.readouterr().err
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
