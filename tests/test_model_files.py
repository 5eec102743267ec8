"""Model, LM, phrase-index, phrase-table and decode-settings files are checked when they are
loaded (issue "Faults a user meets", findings 9 and 1b): each case is a real file of the
repository (a shipped model, LM or phrase table, a phrase index built from EWT text) copied and
damaged the way a user's copy can be (a header that is JSON but not an object, a missing or
ill-typed header value, a decode.json with strings, 1e400, NaN or out-of-range values, a flipped
byte, a cut file), run through the real command line in a process: exit 2, no traceback, one
``wo:`` line that names the damaged file (not the input) and what is wrong with it.
"""
import gzip
import json
import os
import pathlib
import re
import struct
import subprocess
import sys

import pytest

from wo.io.binfile import pack_header, unpack_header

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ROOT / "corpora" / "models"
DEP = MODELS / "wo-ewt-dep.wo"              # float32 weights, plain JSON header
Q8 = MODELS / "sr" / "de_gsd.wo"            # q8 weights (format version 1; re-saved as version 2 below)
LM = MODELS / "wo-en-4gram.wolm"
SMT = MODELS / "wo-tatoeba-smt.wo"
MAGIC = b"WOMODEL\0"
BAGS = "the cat sat on the mat\nwe went home .\n"

pytestmark = pytest.mark.skipif(not (DEP.exists() and Q8.exists() and LM.exists()),
                                reason="the shipped models are not in this checkout")


# ---------------------------------------------------------------------------------- helpers
def wo(*argv, cwd=None):
    """``wo ARGV`` in a new process: (exit code, stderr)."""
    p = subprocess.run([sys.executable, "-m", "wo.cli", *map(str, argv)], stdin=subprocess.DEVNULL,
                       capture_output=True, cwd=cwd, timeout=600)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def assert_refused(rc, stderr, path, what):
    """Exit 2, no traceback, exactly one ``wo:`` line, naming ``path`` and matching ``what``."""
    assert rc == 2, f"exit {rc}: {stderr[-2000:]}"
    assert "Traceback" not in stderr, stderr[-2000:]
    lines = [ln for ln in stderr.splitlines() if ln.startswith("wo: ")]
    assert len(lines) == 1, stderr
    assert str(path) in lines[0], lines[0]
    assert re.search(what, lines[0]), lines[0]


def model_parts(path):
    """(format version, stub header dict, packed blob, weight bytes) of a model file."""
    raw = pathlib.Path(path).read_bytes()
    version, hlen = struct.unpack("<II", raw[8:16])
    stub = json.loads(raw[16:16 + hlen])
    n = stub.get("header_blob_bytes", 0)
    blob = raw[16 + hlen:16 + hlen + n]
    off = 16 + hlen + n
    off += (-off) % 64
    return version, stub, blob, raw[off:]


def write_model(dst, header, blob, weights, version=2):
    """A model file laid out as Model.save does: header (dict, or raw bytes), blob, padding, weights."""
    hb = header if isinstance(header, bytes) else json.dumps(header, sort_keys=True).encode("utf-8")
    pre = MAGIC + struct.pack("<II", version, len(hb)) + hb + blob
    pathlib.Path(dst).write_bytes(pre + b"\0" * ((-len(pre)) % 64) + weights)
    return dst


def linearize(model, tmp):
    bags = tmp / "bags.txt"
    bags.write_text(BAGS, encoding="utf-8")
    return wo("linearize", "--model", model, "--input", bags, "--output", tmp / "out.txt", "--quiet")


# ---------------------------------------------------------------------------------- model headers
def _edit(key, value):
    def f(h):
        h[key] = value
        return h
    return f


def _drop(key):
    def f(h):
        h.pop(key)
        return h
    return f


DEP_HEADERS = {   # case -> (edit of the dependency model's header, what the message says)
    "header_json_list": (lambda h: b"[1, 2, 3]", "JSON object"),
    "header_json_number": (lambda h: b"42", "JSON object"),
    "hash_bits_missing": (_drop("hash_bits"), "hash_bits"),
    "hash_bits_string": (_edit("hash_bits", "22"), "hash_bits"),
    "hash_bits_word": (_edit("hash_bits", "many"), "hash_bits"),
    "hash_bits_negative": (_edit("hash_bits", -3), "hash_bits"),
    "hash_bits_fraction": (_edit("hash_bits", 22.5), "hash_bits"),
    "hash_bits_bool": (_edit("hash_bits", True), "hash_bits"),
    "tagdict_missing": (_drop("tagdict"), "tagdict"),
    "tagdict_list": (_edit("tagdict", []), "tagdict"),
    "tagdict_table_list": (_edit("tagdict", {"table": [], "unknown": []}), "tagdict"),
    "tagdict_tags_number": (_edit("tagdict", {"table": {"the": 5}, "unknown": ["NN"]}), "tagdict"),
    "tagdict_unknown_string": (_edit("tagdict", {"table": {"the": ["DT"]}, "unknown": "NN"}), "tagdict"),
    "weights_dtype_list": (_edit("weights_dtype", ["float32"]), "weights_dtype"),
    "weights_crc32_string": (_edit("weights_crc32", "0"), "weights_crc32"),
    "feature_set_number": (_edit("feature_set", 5), "feature set"),
    "decode_list": (_edit("decode", [1]), "decode"),
    "decode_budget_string": (lambda h: dict(h, decode=dict(h["decode"], budget_factor="fast")), "budget_factor"),
    "decode_beam_negative": (lambda h: dict(h, decode=dict(h["decode"], beam_factor=-4)), "beam_factor"),
}


@pytest.fixture(scope="module")
def dep_parts():
    return model_parts(DEP)


@pytest.mark.parametrize("case", sorted(DEP_HEADERS))
def test_a_bad_model_header_is_one_line_naming_the_model(case, dep_parts, tmp_path):
    version, stub, blob, weights = dep_parts
    edit, what = DEP_HEADERS[case]
    path = write_model(tmp_path / "bad.wo", edit(json.loads(json.dumps(stub))), blob, weights, version)
    assert_refused(*linearize(path, tmp_path), path, what)


def test_a_version1_header_zlib_that_is_not_text_is_one_line(dep_parts, tmp_path):
    """Format version 1 kept the compact header base64-encoded under ``header_zlib``."""
    _, stub, blob, weights = dep_parts
    path = write_model(tmp_path / "v1.wo", dict(stub, header_zlib=12345), blob, weights, version=1)
    assert_refused(*linearize(path, tmp_path), path, "header")


Q8_HEADERS = {   # case -> (edit of (stub, full header in the blob), what the message says)
    "codebook_missing": (lambda s, f: s.pop("codebook"), "codebook"),
    "codebook_string": (lambda s, f: s.update(codebook="abc"), "codebook"),
    "codebook_short": (lambda s, f: s.update(codebook=s["codebook"][:255]), "codebook"),
    "codebook_words": (lambda s, f: s.update(codebook=["x"] * 256), "codebook"),
    "codebook_infinite": (lambda s, f: s.update(codebook=[1e400] * 256), "codebook"),
    "blob_bytes_word": (lambda s, f: s.update(header_blob_bytes="many"), "header"),
    "blob_json_bytes_too_long": (lambda s, f: s.update(header_json_bytes=10 ** 9), "header"),
    "packed_tagdict_number": (lambda s, f: f.update(tagdict=5), "tagdict"),
    "packed_hash_bits_string": (lambda s, f: s.update(hash_bits="21"), "hash_bits"),
}


@pytest.fixture(scope="module")
def q8_v2(tmp_path_factory):
    """The shipped German SR model re-saved by wo in the current compact form (format version
    2: a JSON stub, then the full header packed in a zlib blob; q8 weights, the codebook in the
    stub)."""
    from wo.model import Model

    path = tmp_path_factory.mktemp("q8") / "de_gsd.v2.wo"
    Model.load(str(Q8)).save(str(path), compact="q8")
    assert model_parts(path)[0] == 2 and "header_blob_bytes" in model_parts(path)[1]
    return path


@pytest.mark.parametrize("case", sorted(Q8_HEADERS))
def test_a_bad_packed_q8_header_is_one_line_naming_the_model(case, q8_v2, tmp_path):
    """The compact form: the stub's and the packed header's values are checked alike."""
    version, stub, blob, weights = model_parts(q8_v2)
    edit, what = Q8_HEADERS[case]
    full = unpack_header(stub, blob)
    edit(stub, full)
    if case.startswith("packed_tagdict"):
        fields, blob = pack_header(full)
        stub.update(fields)
    path = write_model(tmp_path / "bad.wo", stub, blob, weights, version)
    assert_refused(*linearize(path, tmp_path), path, what)


def test_the_packed_q8_model_rewritten_unchanged_still_loads(q8_v2, tmp_path):
    """The helpers above rebuild a loadable file (so the cases damage only what they edit)."""
    from wo.model import Model

    version, stub, blob, weights = model_parts(q8_v2)
    path = write_model(tmp_path / "same.wo", stub, blob, weights, version)
    m = Model.load(str(path))
    assert m.hash_bits == stub["hash_bits"] and m.tagdict.tags("und")


# ---------------------------------------------------------------------------------- decode.json
SIDECARS = {   # case -> (decode.json text, the key the message names)
    "budget_string": ('{"budget_factor": "fast"}', "budget_factor"),
    "budget_overflow": ('{"budget_factor": 1e400}', "budget_factor"),
    "budget_negative": ('{"budget_factor": -5}', "budget_factor"),
    "budget_zero": ('{"budget_factor": 0}', "budget_factor"),
    "budget_nan": ('{"budget_factor": NaN}', "budget_factor"),
    "beam_bool": ('{"beam_factor": true}', "beam_factor"),
    "complete_beam_fraction": ('{"complete_beam": 2.5}', "complete_beam"),
    "patience_negative": ('{"patience_factor": -1}', "patience_factor"),
    "tree_budget_string": ('{"tree_budget_factor": "1000"}', "tree_budget_factor"),
    "tree_rerank_list": ('{"tree_rerank": []}', "tree_rerank"),
    "tree_rerank_weight_word": ('{"tree_rerank": {"lms": [["wo-ewt-pos6.wolm", "heavy"]]}}', "tree_rerank"),
    "tree_rerank_models_top_negative": ('{"tree_rerank": {"models_top": -1}}', "models_top"),
    "bag_string": ('{"bag": "gyro"}', "bag"),
    "bag_lm_number": ('{"bag": {"lm": 5}}', "bag"),
    "bag_beta_negative": ('{"bag": {"lm": "wo-en-4gram.wolm", "beta": -1}}', "beta"),
    "bag_r_string": ('{"bag": {"lm": "wo-en-4gram.wolm", "r": "3"}}', r"\br\b"),
    "bag_dep_nbest_zero": ('{"bag": {"lm": "wo-en-4gram.wolm", "dep_nbest": 0}}', "dep_nbest"),
    "not_an_object": ("[1]", "JSON object"),
    "not_json": ("{budget_factor: 3}", "decode-settings"),
}


@pytest.mark.parametrize("case", sorted(SIDECARS))
def test_a_bad_decode_json_is_one_line_naming_it_and_the_key(case, tmp_path):
    model = tmp_path / "m.wo"
    os.symlink(DEP, model)
    text, key = SIDECARS[case]
    side = tmp_path / "m.decode.json"
    side.write_text(text, encoding="utf-8")
    assert_refused(*linearize(model, tmp_path), side, key)


def test_decode_json_and_the_option_share_one_rule(tmp_path):
    """A budget factor of -5 is refused alike on the command line and in decode.json."""
    model = tmp_path / "m.wo"
    os.symlink(DEP, model)
    (tmp_path / "bags.txt").write_text(BAGS, encoding="utf-8")
    rc, opt = wo("linearize", "--model", model, "--input", tmp_path / "bags.txt", "--budget-factor", "-5")
    assert rc == 2 and "must be a positive number" in opt, opt
    (tmp_path / "m.decode.json").write_text('{"budget_factor": -5}', encoding="utf-8")
    rc, side = linearize(model, tmp_path)
    assert rc == 2 and "must be a positive number" in side, side


# ---------------------------------------------------------------------------------- checksums
def flipped(src, dst, where=0.5):
    """A copy of ``src`` with one byte inverted at ``where`` (share of the file)."""
    data = bytearray(pathlib.Path(src).read_bytes())
    data[int(len(data) * where)] ^= 0xFF
    pathlib.Path(dst).write_bytes(bytes(data))
    return dst


@pytest.fixture(scope="module")
def small_index(tmp_path_factory, ewt_dev):
    """A phrase index built by ``wo gyro index`` from 300 EWT dev sentences."""
    d = tmp_path_factory.mktemp("idx")
    text = d / "dev.txt"
    text.write_text("".join(" ".join(s.forms) + "\n" for s in ewt_dev[:300]), encoding="utf-8")
    rc, err = wo("gyro", "index", "--text", text, "--out", d / "dev.woidx", "--quiet")
    assert rc == 0, err
    return d / "dev.woidx"


def _gyro(tmp_path, *extra):
    (tmp_path / "bags.txt").write_text(BAGS, encoding="utf-8")
    return wo("gyro", "realize", "--input", tmp_path / "bags.txt", "--output", tmp_path / "out.txt", "--quiet",
              *extra)


def test_gyro_realize_verifies_its_lm(tmp_path):
    bad = flipped(LM, tmp_path / "bad.wolm")
    assert_refused(*_gyro(tmp_path, "--lm", bad), bad, "checksum")


def test_gyro_realize_verifies_its_rescoring_lm(tmp_path):
    bad = flipped(LM, tmp_path / "bad.wolm")
    assert_refused(*_gyro(tmp_path, "--lm", LM, "--rescore-lm", bad), bad, "checksum")


def test_gyro_realize_verifies_its_phrase_index(tmp_path, small_index):
    bad = flipped(small_index, tmp_path / "bad.woidx", 0.7)
    assert_refused(*_gyro(tmp_path, "--lm", LM, "--index", bad, "--levels", "phrases,bigram,unigram"),
                   bad, "checksum")


def test_idl_realize_verifies_its_lm_as_before(tmp_path):
    bad = flipped(LM, tmp_path / "bad.wolm")
    (tmp_path / "bags.txt").write_text(BAGS, encoding="utf-8")
    assert_refused(*wo("idl", "realize", "--lm", bad, "--input", tmp_path / "bags.txt", "--input-format", "bag",
                       "--output", tmp_path / "out.txt", "--quiet"), bad, "checksum")


def test_linearize_verifies_the_bag_lm_a_decode_json_names(tmp_path):
    model = tmp_path / "m.wo"
    os.symlink(DEP, model)
    bad = flipped(LM, tmp_path / "bad.wolm")
    (tmp_path / "m.decode.json").write_text('{"bag": {"lm": "bad.wolm"}}', encoding="utf-8")
    assert_refused(*linearize(model, tmp_path), bad, "checksum")


def test_linearize_verifies_a_rerank_lm(tmp_path):
    bad = flipped(LM, tmp_path / "bad.wolm")
    (tmp_path / "bags.txt").write_text(BAGS, encoding="utf-8")
    assert_refused(*wo("linearize", "--model", DEP, "--input", tmp_path / "bags.txt", "--rerank-lm", bad,
                       "--output", tmp_path / "out.txt", "--quiet"), bad, "checksum")


def test_a_flipped_byte_in_the_weights_is_one_line(tmp_path):
    bad = flipped(DEP, tmp_path / "bad.wo", 0.9)
    assert_refused(*linearize(bad, tmp_path), bad, "checksum")


# ---------------------------------------------------------------------------------- SMT phrase table
def _smt_dir(tmp_path, phrases: bytes):
    """A copy of the shipped SMT model's directory (symlinks to the real files) whose phrase
    table is ``phrases``; returns (model path, phrase table path)."""
    model = tmp_path / "m.wo"
    os.symlink(SMT, model)
    (tmp_path / "smt").mkdir()
    for f in (MODELS / "smt").iterdir():
        if f.name != "phrases.tsv.gz":
            os.symlink(f, tmp_path / "smt" / f.name)
    table = tmp_path / "smt" / "phrases.tsv.gz"
    table.write_bytes(phrases)
    return model, table


def _real_table():
    return (MODELS / "smt" / "phrases.tsv.gz").read_bytes()


SMT_TABLES = {   # case -> (the damaged phrase table's bytes, what the message says)
    "truncated": (lambda: _real_table()[:len(_real_table()) // 2], "truncated|corrupt"),
    "not_gzip": (lambda: gzip.decompress(_real_table())[:5000], "gzip|corrupt"),
    "empty": (lambda: b"", "truncated|corrupt|empty|not a wo phrase table"),
    "not_utf8": (lambda: gzip.compress(gzip.decompress(_real_table())[:3000] + b"\xff\xfe bad\n"), "UTF-8"),
    "three_columns": (lambda: gzip.compress(gzip.decompress(_real_table())[:3000].rsplit(b"\n", 1)[0]
                                            + b"\nfoo\tbar\tNN\n"), "columns"),
}


@pytest.mark.skipif(not SMT.exists(), reason="the shipped SMT model is not in this checkout")
@pytest.mark.parametrize("case", sorted(SMT_TABLES))
def test_a_damaged_phrase_table_is_one_line_naming_it(case, tmp_path):
    pytest.importorskip("jieba")
    make, what = SMT_TABLES[case]
    model, table = _smt_dir(tmp_path, make())
    (tmp_path / "zh.txt").write_text("我 爱 你 。\n", encoding="utf-8")
    rc, err = wo("smt", "translate", "--model", model, "--input", tmp_path / "zh.txt", "--output",
                 tmp_path / "out.txt", "--tokenized", "--quiet")
    assert_refused(rc, err, table, what)


# ---------------------------------------------------------------------------------- SR stage settings
SR_STAGE_SETTINGS = {   # case -> (stage, key, value, what the message says); before: a traceback, a bare
    # "could not convert string to float", a MemoryError per sentence, or silently taken
    "forms_penalty_null": ("forms", "penalty", None, "penalty = null is not a finite number"),
    "lift_threshold_word": ("lift", "threshold", "x", "threshold = \"x\" is not a finite number"),
    "order_beam_negative": ("order-local", "beam", -3, "beam = -3 is not an integer of at least 1"),
    "order_beam_fraction": ("order-local", "beam", 2.5, "beam = 2.5 is not an integer"),
    "order_words_weight_nan": ("order-local", "words_weight", float("nan"), "words_weight = NaN"),
    "language_rules_string": ("language", "rules", "yes", "rules = \"yes\" is not true or false"),
}


@pytest.fixture(scope="module")
def sr_slice(tmp_path_factory):
    d = tmp_path_factory.mktemp("sr-settings")
    t1 = d / "pt.t1"
    rc, err = wo("sr", "make-input", "--ud", ROOT / "tests" / "data" / "sr" / "pt_bosque-test-40.conllu.xz", "--out", t1)
    assert rc == 0, err
    return t1


@pytest.mark.parametrize("case", sorted(SR_STAGE_SETTINGS))
def test_a_bad_sr_stage_setting_in_the_header_is_one_line_naming_the_model_and_key(case, sr_slice, tmp_path):
    from wo.model import Model

    stage, key, value, what = SR_STAGE_SETTINGS[case]
    m = Model.load(str(MODELS / "sr" / "pt_bosque.wo"), mmap=False)
    hit = [d for d in m.header["sr"]["stages"] if d["stage"] == stage]
    assert hit, stage
    hit[0][key] = value
    bad = tmp_path / "bad.wo"
    m.save(str(bad), compact=m.header.get("weights_dtype") or False)
    for lm in (MODELS / "sr").glob("pt_bosque.*.wolm"):   # the LMs the header names, beside it
        (tmp_path / lm.name).symlink_to(lm)
    rc, err = wo("sr", "realize", "--model", bad, "--input", sr_slice, "--output", tmp_path / "out.txt", "--quiet")
    assert_refused(rc, err, bad, f"stage '{stage}': setting " + re.escape(what))
    assert not (tmp_path / "out.txt").exists()
