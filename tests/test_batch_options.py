"""The batch options every decoding verb shares (wo.cli.common.batch_options over the batch spine
wo.io.batch): --format jsonl (one object per input item, in input order, with the common fields
of wo.system.Result), --on-error fallback|skip|fail on real slices with one broken item,
--backend dask on a loopback cluster, and Result.text as one property."""
import json
import lzma

import pytest

from tests.conftest import CCG, EWT, ROOT, SHIPPED, SHIPPED_LM, conllu_blocks, wo_cli, write_blocks
from tests.test_protocol import _break_second_sentence

PT = ROOT / "tests" / "data" / "sr" / "pt_bosque-test-40.conllu.xz"
TATOEBA = ROOT / "corpora" / "tatoeba-zh-en" / "test.tsv.xz"
VERBS = (["linearize"], ["dep", "linearize"], ["ccg", "linearize"], ["sr", "realize"], ["idl", "realize"],
         ["gyro", "realize"], ["smt", "translate"])
BASE = {"tokens": list, "score": (float, int, type(None)), "status": str, "seconds": (float, int), "pops": int,
        "message": str}


def _base_fields(rec: dict) -> None:
    for key, typ in BASE.items():
        assert key in rec and isinstance(rec[key], typ), (key, rec)
    assert all(isinstance(t, str) for t in rec["tokens"]) and rec["seconds"] >= 0 and rec["pops"] >= 0


def _jsonl(path) -> list:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(x, parse_constant=lambda c: pytest.fail(f"{c} is not JSON")) for x in lines]


def _short_ewt(n: int, most: int = 12) -> list:
    """The first ``n`` EWT test sentence blocks of at most ``most`` words."""
    out = []
    for b in conllu_blocks(str(EWT / "en_ewt-ud-test.conllu.xz")):
        words = [ln for ln in b.split("\n") if ln and not ln.startswith("#") and ln.split("\t")[0].isdigit()]
        if len(words) <= most:
            out.append(b)
        if len(out) == n:
            return out
    raise AssertionError("not enough short sentences")


def _broken_second(blocks):
    """``blocks`` with the second block's first word line cut to 7 columns; (blocks, its line number)."""
    lines = blocks[1].split("\n")
    k = next(i for i, ln in enumerate(lines) if not ln.startswith("#"))
    lines[k] = "\t".join(lines[k].split("\t")[:7])
    before = sum(len(b.split("\n")) + 1 for b in blocks[:1])
    return [blocks[0], "\n".join(lines)] + list(blocks[2:]), before + k + 1


def _sent_ids(blocks):
    return [next(ln.split("=", 1)[1].strip() for ln in b.split("\n") if ln.startswith("# sent_id")) for b in blocks]


def test_every_decoding_verb_declares_the_same_batch_options():
    """--jobs, --on-error, --format (text and jsonl at least), --backend, --scheduler and --quiet:
    the same defaults, choices and help on all six verbs (the --on-error help names each
    verb's own fallback record)."""
    from wo.cli import build_parser

    def actions(argv):
        p = build_parser()
        for name in argv:
            sub = next(a for a in p._actions if a.__class__.__name__ == "_SubParsersAction")
            p = sub.choices[name]
        return {a.dest: a for a in p._actions}

    seen = {}
    for argv in VERBS:
        acts = actions(argv)
        for dest in ("jobs", "on_error", "format", "backend", "scheduler", "quiet"):
            assert dest in acts, (argv, dest)
        assert acts["jobs"].default == 1 and acts["on_error"].default == "fallback"
        assert acts["on_error"].choices == ["fallback", "skip", "fail"]
        assert acts["backend"].choices == ["loky", "dask"] and acts["backend"].default == "loky"
        assert acts["scheduler"].default is None and acts["format"].default == "text"
        assert {"text", "jsonl"} <= set(acts["format"].choices), argv
        for dest in ("jobs", "backend", "scheduler", "quiet"):
            seen.setdefault(dest, set()).add(acts[dest].help)
        assert acts["on_error"].help.startswith("record of an input that fails: ")
    assert all(len(h) == 1 for h in seen.values()), seen
    assert actions(["linearize"])["format"].choices == ["text", "jsonl", "detok", "conllu"]
    assert actions(["ccg", "linearize"])["format"].choices == ["text", "jsonl", "auto"]


def test_results_have_one_text_property():
    import inspect

    from wo.ccg.linearizer import Result as CCGResult
    from wo.dep.linearizer import Result as DepResult
    from wo.gyro.realize import GyroResult
    from wo.idl.realize import Realization
    from wo.smt.translate import Translation
    from wo.sr.realizer import SRResult
    from wo.system import Result

    for cls in (Result, DepResult, CCGResult, SRResult, Realization, GyroResult, Translation):
        assert isinstance(inspect.getattr_static(cls, "text"), property), cls
    r = DepResult(["the", "dog", "barked"], [1, 0, 2], [2, 0, 2], ["DT", "NN", "VBD"], status="ok")
    assert r.text == "the dog barked" and r.base_record()["tokens"] == ["the", "dog", "barked"]
    t = Translation(["I", "like", "cats", "."], "I like cats.", [1, -1, 1, 1], 3)
    assert t.text == "I like cats." and t.detok == "I like cats."
    assert Realization.error("bad").base_record()["score"] is None       # NaN is not JSON: null


# ---------------------------------------------------------------- dep and CCG: a CoNLL-U slice of EWT test
@pytest.mark.skipif(not SHIPPED.exists(), reason="shipped model not in the tree")
@pytest.mark.parametrize("verb", [["linearize", "--model", SHIPPED], ["ccg", "linearize"]], ids=["dep", "ccg"])
def test_linearizers_jsonl_and_on_error(tmp_path, verb):
    blocks = _short_ewt(4)
    good = write_blocks(tmp_path / "good.conllu", blocks)
    broken, line = _broken_second(blocks)
    bad = write_blocks(tmp_path / "bad.conllu", broken)
    text, js = tmp_path / "o.txt", tmp_path / "o.jsonl"
    assert wo_cli([*verb, "--input", good, "--output", text, "--quiet"]).returncode == 0
    assert wo_cli([*verb, "--input", good, "--output", js, "--format", "jsonl", "--quiet"]).returncode == 0
    recs = _jsonl(js)
    lines = text.read_text(encoding="utf-8").splitlines()
    assert [r["sent_id"] for r in recs] == _sent_ids(blocks) and len(lines) == 4
    for rec, ln, b in zip(recs, lines, blocks):
        _base_fields(rec)
        assert " ".join(rec["tokens"]) == ln and rec["status"] != "error" and rec["pops"] > 0
        forms = [x.split("\t")[1] for x in b.split("\n") if x and x.split("\t")[0].isdigit()]
        assert sorted(rec["tokens"]) == sorted(forms)
    outs = {}
    for mode in ("fallback", "skip"):
        p = wo_cli([*verb, "--input", bad, "--output", tmp_path / f"{mode}.txt", "--on-error", mode, "--quiet"])
        assert p.returncode == 1 and f"{bad}:{line}: expected 10 tab-separated columns" in p.stderr, p.stderr
        outs[mode] = (tmp_path / f"{mode}.txt").read_text(encoding="utf-8").splitlines()
        assert len(outs[mode]) == 4 and [outs[mode][0]] + outs[mode][2:] == [lines[0]] + lines[2:]
    assert outs["skip"][1] == "" and outs["fallback"][1] != ""               # skip drops it, fallback has words
    p = wo_cli([*verb, "--input", bad, "--output", js, "--format", "jsonl", "--on-error", "skip", "--quiet"])
    recs = _jsonl(js)
    assert p.returncode == 1 and len(recs) == 4 and recs[1]["status"] == "error" and recs[1]["message"]
    p = wo_cli([*verb, "--input", bad, "--output", tmp_path / "fail.txt", "--on-error", "fail", "--quiet"])
    assert p.returncode == 2 and f"{bad}:{line}:" in p.stderr and "nothing written" in p.stderr
    assert not (tmp_path / "fail.txt").exists() and "Traceback" not in p.stderr


# ---------------------------------------------------------------- SR: the Portuguese test slice as T1
def _pt_t1(tmp_path):
    t1 = tmp_path / "pt.t1"
    assert wo_cli(["sr", "make-input", "--ud", PT, "--out", t1, "--seed", "3"]).returncode == 0
    return t1


def test_sr_jsonl_has_one_record_per_sentence_and_agrees_with_the_submission(tmp_path):
    t1 = _pt_t1(tmp_path)
    sub, js = tmp_path / "sub.txt", tmp_path / "o.jsonl"
    assert wo_cli(["sr", "realize", "--lang", "pt_bosque", "--input", t1, "--output", sub, "--quiet"]).returncode == 0
    assert wo_cli(["sr", "realize", "--lang", "pt_bosque", "--input", t1, "--output", js, "--format", "jsonl",
                   "--quiet"]).returncode == 0
    assert not (tmp_path / "o.jsonl.tok").exists()                          # jsonl carries the tokens itself
    recs = _jsonl(js)
    blocks = [b for b in sub.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    tok = (tmp_path / "sub.txt.tok").read_text(encoding="utf-8").splitlines()
    ids = [ln.split("=", 1)[1].strip() for ln in t1.read_text(encoding="utf-8").splitlines()
           if ln.startswith("# sent_id")]
    assert len(recs) == len(blocks) == len(tok) == 40 and [r["sent_id"] for r in recs] == ids
    for rec, b, t in zip(recs, blocks, tok):
        _base_fields(rec)
        assert b.split("\n")[1] == f"# text = {rec['text']}" and " ".join(rec["tokens"]) == t
        assert len(rec["order"]) == len(rec["heads"]) == len(rec["labels"]) == len(rec["tokens"])
        assert sorted(rec["order"]) == list(range(len(rec["tokens"]))) and rec["status"] != "error"
    bad = tmp_path / "bad.t1"
    line = _break_second_sentence(t1, bad)
    for mode in ("fallback", "skip"):
        p = wo_cli(["sr", "realize", "--lang", "pt_bosque", "--input", bad, "--output", js, "--format", "jsonl",
                    "--on-error", mode, "--quiet"])
        assert p.returncode == 1 and f"{bad}:{line}: T1 input needs exactly one root" in p.stderr, p.stderr
        got = _jsonl(js)
        assert len(got) == 40 and got[0] == {**recs[0], "seconds": got[0]["seconds"]}
        assert got[1]["status"] == "error" and got[1]["sent_id"] == ids[1] and got[1]["tokens"]   # its lemmas
    p = wo_cli(["sr", "realize", "--lang", "pt_bosque", "--input", bad, "--output", tmp_path / "f.jsonl",
                "--format", "jsonl", "--on-error", "fail", "--quiet"])
    assert p.returncode == 2 and f"{bad}:{line}:" in p.stderr and not (tmp_path / "f.jsonl").exists()


# ---------------------------------------------------------------- IDL and GYRO: the shipped 4-gram
IDL_LINES = ["I(finally, C(L(D(C(the, prisoners), C(the, captives))), were, released))",
             "I(the, dog",                                                 # never closed
             "I(she, gave, him, L(C(a, book)))"]


@pytest.mark.skipif(not SHIPPED_LM.exists(), reason="shipped LM not in the tree")
def test_idl_jsonl_and_on_error(tmp_path):
    src = tmp_path / "in.idl"
    src.write_text("\n".join(IDL_LINES) + "\n", encoding="utf-8")
    base = ["idl", "realize", "--lm", SHIPPED_LM, "--input", src]
    outs = {}
    for mode in ("fallback", "skip"):
        p = wo_cli(base + ["--output", tmp_path / f"{mode}.txt", "--on-error", mode])
        assert p.returncode == 1 and f"{src}:2:" in p.stderr and "never closed" in p.stderr, p.stderr
        assert "3 expressions" in p.stderr and "read as IDL-expressions" in p.stderr
        outs[mode] = (tmp_path / f"{mode}.txt").read_text(encoding="utf-8").splitlines()
    # an expression that cannot be read has no words to fall back on: both give an empty line
    assert outs["fallback"] == outs["skip"] and len(outs["skip"]) == 3 and outs["skip"][1] == ""
    assert {"finally", "the", "were", "released"} <= set(outs["skip"][0].split()) and outs["skip"][2]
    p = wo_cli(base + ["--output", tmp_path / "o.jsonl", "--format", "jsonl", "--quiet"])
    recs = _jsonl(tmp_path / "o.jsonl")
    assert p.returncode == 1 and len(recs) == 3
    for rec, ln in zip(recs, outs["fallback"]):
        _base_fields(rec)
        assert rec["text"] == ln == " ".join(rec["tokens"])
    assert recs[1]["status"] == "error" and recs[1]["score"] is None and "never closed" in recs[1]["message"]
    assert recs[0]["score"] == recs[0]["log10_prob"] < 0 and recs[2]["status"] == "ok"
    p = wo_cli(base + ["--output", tmp_path / "f.txt", "--on-error", "fail", "--quiet"])
    assert p.returncode == 2 and f"{src}:2:" in p.stderr and not (tmp_path / "f.txt").exists()


@pytest.mark.skipif(not SHIPPED_LM.exists(), reason="shipped LM not in the tree")
def test_gyro_jsonl_and_on_error(tmp_path):
    blocks = _short_ewt(4, most=8)
    good = write_blocks(tmp_path / "good.conllu", blocks)
    broken, line = _broken_second(blocks)
    bad = write_blocks(tmp_path / "bad.conllu", broken)
    base = ["gyro", "realize", "--lm", SHIPPED_LM, "--quiet"]
    assert wo_cli(base + ["--input", good, "--output", tmp_path / "o.txt"]).returncode == 0
    assert wo_cli(base + ["--input", good, "--output", tmp_path / "o.jsonl", "--format", "jsonl"]).returncode == 0
    lines = (tmp_path / "o.txt").read_text(encoding="utf-8").splitlines()
    recs = _jsonl(tmp_path / "o.jsonl")
    assert len(recs) == len(lines) == 4
    for rec, ln, b in zip(recs, lines, blocks):
        _base_fields(rec)
        forms = [x.split("\t")[1] for x in b.split("\n") if x and x.split("\t")[0].isdigit()]
        assert rec["text"] == ln == " ".join(rec["tokens"]) and sorted(rec["tokens"]) == sorted(forms)
        assert rec["score"] == rec["log10_prob"] < 0 and rec["status"] == "ok"
    outs = {}
    for mode in ("fallback", "skip"):
        p = wo_cli(base + ["--input", bad, "--output", tmp_path / f"{mode}.txt", "--on-error", mode])
        assert p.returncode == 1 and f"{bad}:{line}: expected 10 tab-separated columns" in p.stderr, p.stderr
        outs[mode] = (tmp_path / f"{mode}.txt").read_text(encoding="utf-8").splitlines()
        assert len(outs[mode]) == 4 and [outs[mode][0]] + outs[mode][2:] == [lines[0]] + lines[2:]
    assert outs["skip"][1] == "" and outs["fallback"][1] != ""
    p = wo_cli(base + ["--input", bad, "--output", tmp_path / "f.txt", "--on-error", "fail"])
    assert p.returncode == 2 and f"{bad}:{line}:" in p.stderr and not (tmp_path / "f.txt").exists()


# ---------------------------------------------------------------- SMT: Tatoeba test pairs
@pytest.mark.slow
def test_smt_jsonl_and_on_error(tmp_path):
    pytest.importorskip("jieba")
    with lzma.open(TATOEBA, "rt", encoding="utf-8") as fh:
        rows = fh.read().split("\n")[:5]                    # the header and 4 pairs
    en, zh, attr = rows[4].split("\t")
    rows[2] = rows[2].split("\t")[0]                         # line 3: the zh column is missing
    rows.append(f"{en}\t\U00020000\U00020001\t{attr}")      # line 6: nothing the phrase table knows
    src = tmp_path / "pairs.tsv"
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    base = ["smt", "translate", "--input", src, "--quiet"]
    outs = {}
    for mode in ("fallback", "skip"):
        p = wo_cli(base + ["--output", tmp_path / f"{mode}.txt", "--on-error", mode])
        assert p.returncode == 1 and f"{src}:3: expected 3 tab-separated columns" in p.stderr, p.stderr
        assert f"{src}:6: no translation options" in p.stderr
        outs[mode] = (tmp_path / f"{mode}.txt").read_text(encoding="utf-8").splitlines()
        assert len(outs[mode]) == 5 and outs[mode][1] == ""                  # no English for a broken line
    assert outs["fallback"][:4] == outs["skip"][:4] and all(outs["skip"][k] for k in (0, 2, 3))
    assert outs["fallback"][4] == "\U00020000 \U00020001" and outs["skip"][4] == ""   # copied, or dropped
    p = wo_cli(base + ["--output", tmp_path / "o.jsonl", "--format", "jsonl"])
    recs = _jsonl(tmp_path / "o.jsonl")
    assert p.returncode == 1 and len(recs) == 5
    for rec, ln in zip(recs, outs["fallback"]):
        _base_fields(rec)
        assert rec["text"] == ln
    assert [r["status"] == "error" for r in recs] == [False, True, False, False, True]
    assert recs[0]["pops"] > 0 and recs[0]["seconds"] > 0 and recs[0]["tokens"]
    p = wo_cli(base + ["--output", tmp_path / "f.txt", "--on-error", "fail"])
    assert p.returncode == 2 and f"{src}:3:" in p.stderr and not (tmp_path / "f.txt").exists()
    del rows[2]                                  # only the sentence that fails in the decoder is left
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    p = wo_cli(base + ["--output", tmp_path / "f.txt", "--on-error", "fail"])
    assert p.returncode == 2 and f"stopped at {src}:5 (--on-error fail); nothing written" in p.stderr, p.stderr
    assert not (tmp_path / "f.txt").exists() and "Traceback" not in p.stderr


# ---------------------------------------------------------------- --backend dask on a loopback cluster
@pytest.fixture(scope="module")
def loopback_cluster():
    """A 2-worker Dask cluster on 127.0.0.1 (processes), as tests/test_batch.py starts one."""
    distributed = pytest.importorskip("dask.distributed", reason="dask.distributed not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.mark.slow
@pytest.mark.skipif(not SHIPPED_LM.exists(), reason="shipped LM not in the tree")
def test_dask_backend_equals_the_local_run(tmp_path, loopback_cluster):
    """`wo idl realize`, `wo sr realize` and `wo ccg linearize` give the same bytes on the Dask
    cluster as in this process (bad items included)."""
    idl = tmp_path / "in.idl"
    idl.write_text("\n".join(IDL_LINES) + "\n", encoding="utf-8")
    t1 = _pt_t1(tmp_path)
    with lzma.open(CCG / "test.auto.xz", "rb") as fh:
        auto = tmp_path / "six.auto"
        auto.write_bytes(b"\n".join(fh.read().split(b"\n")[:12]) + b"\n")
    runs = {"idl": ["idl", "realize", "--lm", SHIPPED_LM, "--input", idl, "--format", "jsonl"],
            "sr": ["sr", "realize", "--lang", "pt_bosque", "--input", t1],
            "ccg": ["ccg", "linearize", "--input", auto]}
    for name, argv in runs.items():
        local, dask = tmp_path / f"{name}.local", tmp_path / f"{name}.dask"
        a = wo_cli(argv + ["--output", local, "--quiet"])
        b = wo_cli(argv + ["--output", dask, "--quiet", "--backend", "dask", "--scheduler", loopback_cluster])
        assert a.returncode == b.returncode and "Traceback" not in b.stderr, b.stderr
        if name == "idl":   # timings differ; everything else is the same
            strip = lambda p: [{k: v for k, v in r.items() if "seconds" not in k} for r in _jsonl(p)]  # noqa: E731
            assert strip(local) == strip(dask) and len(strip(dask)) == 3
        else:
            assert local.read_bytes() == dask.read_bytes() and local.stat().st_size > 0
    assert (tmp_path / "sr.local.tok").read_bytes() == (tmp_path / "sr.dask.tok").read_bytes()


def test_ccg_fallback_is_the_fixed_seed_shuffle_not_the_reference_order(tmp_path):
    """A sentence `wo ccg linearize` cannot decode (here: longer than --max-length) is written as
    its words in the evaluation shuffle, as `wo linearize` does: an .auto file is in reference
    order, so its input order would score perfectly."""
    from wo.ccg.linearizer import read_ccg_items
    from wo.io.trees import permutation

    with lzma.open(CCG / "test.auto.xz", "rb") as fh:
        auto = tmp_path / "six.auto"
        auto.write_bytes(b"\n".join(fh.read().split(b"\n")[:12]) + b"\n")
    items, _ = read_ccg_items(str(auto))
    out = tmp_path / "out.txt"
    p = wo_cli(["ccg", "linearize", "--input", auto, "--output", out, "--max-length", "8", "--quiet"])
    assert p.returncode == 1 and "more than --max-length 8" in p.stderr, p.stderr   # failed sentences: exit 1
    lines = out.read_text(encoding="utf-8").splitlines()
    long = [i for i, it in enumerate(items) if len(it.forms) > 8]
    assert len(lines) == len(items) == 6 and long
    for i in long:
        perm = permutation(len(items[i].forms), 1, i)
        assert lines[i].split() == [items[i].forms[j] for j in perm] != items[i].forms
