"""The light install: ``import wo`` and the core commands import no extra, a command that needs a
missing extra fails with one line naming the ``pip install``, and the shipped models are found
from any working directory (the source tree, ``$WO_MODEL_DIR``, an installed model package)."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXTRA_MODULES = ["spacy", "jieba", "eflomal", "opencc", "pynini", "dask", "distributed", "matplotlib"]
CORE_MODULES = ["wo", "wo.dep", "wo.sr", "wo.ccg", "wo.lm", "wo.idl", "wo.gyro", "wo.eval", "wo.io", "wo.model",
                "wo.resources", "wo.extras", "wo.cli", "wo.smt"]


def _python(code: str, cwd, env_extra=None, timeout=600):
    """Run ``code`` in a fresh interpreter whose path holds only this checkout (from ``cwd``)."""
    env = {k: v for k, v in os.environ.items() if k != "WO_MODEL_DIR"}
    env.update(PYTHONPATH=str(ROOT), **(env_extra or {}))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=str(cwd), env=env,
                          capture_output=True, text=True, timeout=timeout)


def _blocking(modules) -> str:
    """Source that makes ``import m`` fail for each of ``modules`` (as if not installed)."""
    return f"import sys\nfor _m in {list(modules)!r}:\n    sys.modules[_m] = None\n"


def test_import_wo_and_every_core_system_imports_no_extra(tmp_path):
    r = _python(f"""
        import importlib, json, sys
        for m in {CORE_MODULES!r}:
            importlib.import_module(m)
        print(json.dumps(sorted(m for m in {EXTRA_MODULES!r} if m in sys.modules)))
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == []


def test_core_commands_run_with_every_extra_missing(tmp_path):
    """wo linearize (shipped model, found with no flag) and wo evaluate on 5 real EWT test
    sentences, in one interpreter where importing any extra fails; afterwards no extra is loaded."""
    src = ROOT / "corpora" / "ud-en-ewt" / "en_ewt-ud-test.conllu.xz"
    import lzma

    blocks = lzma.open(src, "rt", encoding="utf-8").read().split("\n\n")[:5]
    (tmp_path / "five.conllu").write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    r = _python(_blocking(EXTRA_MODULES) + textwrap.dedent("""
        from wo.cli import main
        rc1 = main(["linearize", "--input", "five.conllu", "--output", "out.txt", "--given", "full", "--quiet"])
        rc2 = main(["evaluate", "--hyp", "out.txt", "--ref", "five.conllu"])
        print("RC", rc1, rc2, sorted(m for m in %r if sys.modules.get(m) is not None))
    """ % EXTRA_MODULES), tmp_path)
    assert r.returncode == 0, r.stderr
    assert "RC 0 0 []" in r.stdout, r.stdout + r.stderr
    out = (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines()
    assert len(out) == 5 and all(line.split() for line in out)
    assert "BLEU" in r.stdout


@pytest.mark.parametrize("argv,extra,blocked", [
    (["smt", "translate", "--input", "zh.txt", "--output", "en.txt"], "smt", ["spacy", "jieba", "opencc"]),
    (["smt", "translate", "--input", "zh.txt", "--output", "en.txt"], "smt", ["jieba"]),
    (["lm", "tokenize", "--input", "raw.txt", "--output", "tok.txt"], "smt", ["spacy"]),
])
def test_a_missing_extra_is_one_line_naming_the_pip_install_and_exit_2(tmp_path, argv, extra, blocked):
    (tmp_path / "zh.txt").write_text("我们走吧。\n", encoding="utf-8")
    (tmp_path / "raw.txt").write_text("A paragraph. Two sentences.\n", encoding="utf-8")
    r = _python(_blocking(blocked) + f"from wo.cli import main\nsys.exit(main({argv!r}))\n", tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert f"pip install 'wo-nlg[{extra}]'" in lines[0]
    assert all(b in lines[0].lower() for b in blocked)
    assert not (tmp_path / argv[argv.index("--output") + 1]).exists()


def test_require_names_only_the_missing_packages(tmp_path):
    r = _python(_blocking(["pynini"]) + textwrap.dedent("""
        from wo.extras import MissingExtra, missing, require
        from wo.io.text import InputError
        print(missing("fst"), missing("smt", ["spacy"]))
        try:
            require("fst", "the fst engine (--engine fst)")
        except MissingExtra as exc:
            print(isinstance(exc, InputError), exc)
    """), tmp_path)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    assert first == "['pynini'] []"
    assert second.startswith("True the fst engine (--engine fst) needs pynini, not installed: run  pip install 'wo-nlg[fst]'")


def test_gyro_fst_engine_without_pynini_is_a_missing_extra(tmp_path):
    r = _python(_blocking(["pynini"]) + textwrap.dedent("""
        from wo.gyro.realize import GyroRealizer
        from wo.extras import MissingExtra
        try:
            GyroRealizer(None, None, engine="fst")
        except MissingExtra as exc:
            print("MISSING", exc.extra, exc.missing)
    """), tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "MISSING fst ['pynini']"


def test_shipped_models_are_found_from_an_unrelated_directory(tmp_path):
    r = _python("""
        import json
        from wo.model import default_model
        from wo.resources import find_model, model_dirs
        from wo.smt.translate import default_model_path
        from wo.sr.models import find_model as sr_find
        print(json.dumps([default_model("dep"), default_model("sr"), default_model("ccg"), default_model_path(),
                          sr_find("pt_bosque"), find_model("smt/zh-parser"), model_dirs()]))
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    dep, sr, ccg, smt, pt, parser, dirs = json.loads(r.stdout)
    models = ROOT / "corpora" / "models"
    assert [pathlib.Path(p).resolve() for p in (dep, sr, ccg, smt, pt, parser)] == [
        models / "wo-ewt-dep-lm.wo", models / "wo-ewt-sr.wo", models / "wo-ewt-ccg-lm.wo",
        models / "wo-tatoeba-smt.wo", models / "sr" / "pt_bosque.wo", models / "smt" / "zh-parser"]
    assert pathlib.Path(dirs[0]).resolve() == models


def _fake_model_package(site: pathlib.Path, name: str, files: dict) -> pathlib.Path:
    """An installed model package as pip leaves it: the package directory and a dist-info with
    a ``wo.models`` entry point; ``files`` maps names inside the package to real files."""
    mod = name.replace("-", "_")
    pkg = site / mod
    for rel, target in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, pkg / rel)
    (pkg / "__init__.py").write_text('"""test model package"""\n')
    info = site / f"{mod}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[wo.models]\nx = {mod}\n")
    return pkg


def test_a_model_package_and_WO_MODEL_DIR_are_searched_and_listed(tmp_path):
    models = ROOT / "corpora" / "models"
    site = tmp_path / "site"
    _fake_model_package(site, "wo-models-test", {"sr/zz_test.wo": models / "sr" / "pt_bosque.wo",
                                                 "sr/zz_test.words4.wolm": models / "sr" / "pt_bosque.words4.wolm"})
    own = tmp_path / "own"
    (own / "sr").mkdir(parents=True)
    os.symlink(models / "sr" / "it_partut.wo", own / "sr" / "pt_bosque.wo")   # shadows the clone's pt_bosque
    r = _python(f"""
        import json, sys
        sys.path.insert(0, {str(site)!r})
        from wo.resources import find_model, list_models, model_dirs, package_dirs
        from wo.sr.models import find_model as sr_find
        rows = {{r["name"]: r for r in list_models()}}
        print(json.dumps([model_dirs(), package_dirs(), find_model("sr/zz_test.wo"), sr_find("zz_test"),
                          sr_find("pt_bosque"), rows["sr/zz_test.wo"], rows["sr/pt_bosque.wo"], rows["wo-ewt-dep-lm.wo"]]))
    """, tmp_path / "site", env_extra={"WO_MODEL_DIR": str(own)})
    assert r.returncode == 0, r.stderr
    dirs, pkgs, found, sr_found, pt, zz_row, pt_row, dep_row = json.loads(r.stdout)
    assert dirs == [str(own), str(models), str(site / "wo_models_test")]
    assert pkgs == [["wo-models-test", str(site / "wo_models_test")]]
    assert found == sr_found == str(site / "wo_models_test" / "sr" / "zz_test.wo")
    assert pt == str(own / "sr" / "pt_bosque.wo")
    assert zz_row["source"] == "wo-models-test" and zz_row["system"] == "sr"
    assert zz_row["bytes"] == (models / "sr" / "pt_bosque.wo").stat().st_size + (
        models / "sr" / "pt_bosque.words4.wolm").stat().st_size
    assert zz_row["licence"] == "CC BY-SA 4.0" and "pt_bosque" in zz_row["data"]
    assert pt_row["source"] == "WO_MODEL_DIR" and "it_partut" in pt_row["data"]
    assert dep_row["source"] == "source tree" and dep_row["system"] == "dep" and dep_row["default"] == "wo linearize"


def test_a_missing_shipped_model_names_the_model_package(tmp_path):
    r = _python("""
        from wo.model import ModelError, require_model
        for name in ("wo-ewt-nothing.wo", "sr/xx_none.wo"):
            try:
                require_model(name, "test model")
            except ModelError as exc:
                print(exc)
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    en, sr = r.stdout.splitlines()
    assert en.startswith("no shipped test model wo-ewt-nothing.wo (searched ")
    assert "pip install ./corpora/packages/wo-models-en" in en and "WO_MODEL_DIR" in en and "--model" in en
    assert "pip install ./corpora/packages/wo-models-sr" in sr


def test_wo_models_lists_every_shipped_model(tmp_path, capsys):
    import argparse

    from wo.resources import add_models_command, list_models

    p = argparse.ArgumentParser(prog="wo")
    add_models_command(p.add_subparsers())
    a = p.parse_args(["models", "--json"])
    assert a.func(a) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == list_models()
    names = {r["name"] for r in rows}
    shipped = {f.name for f in (ROOT / "corpora" / "models").glob("*.wo*")} | {
        "sr/" + f.name for f in (ROOT / "corpora" / "models" / "sr").glob("*.wo")}
    assert names == shipped
    smt = next(r for r in rows if r["name"] == "wo-tatoeba-smt.wo")
    assert smt["system"] == "smt" and smt["bytes"] > 50e6 and smt["default"] == "wo smt translate"
    assert all(r["licence"] != "?" and r["data"] != "?" for r in rows)


def test_model_packages_hold_every_model_once():
    """The three model packages' files (symlinks into corpora/models) cover every shipped model
    file exactly once, and each package's globs match its files."""
    pk = ROOT / "corpora" / "packages"
    models = (ROOT / "corpora" / "models").resolve()
    seen = []
    for name in ("wo-models-en", "wo-models-sr", "wo-models-smt"):
        pkg = pk / name / name.replace("-", "_")
        for d, _, files in os.walk(pkg, followlinks=True):
            seen.extend(pathlib.Path(d, f).resolve().relative_to(models) for f in files if f != "__init__.py")
        toml = (pk / name / "pyproject.toml").read_text(encoding="utf-8")
        assert f'"wo.models"]\n{name.split("-")[-1]} = "{name.replace("-", "_")}"' in toml
    everything = [p.relative_to(models) for p in models.rglob("*") if p.is_file()]
    assert sorted(seen) == sorted(everything)


def test_lm_training_on_dask_without_dask_is_a_missing_extra(tmp_path):
    (tmp_path / "text.txt").write_text("a b c\nb c d\n", encoding="utf-8")
    r = _python(_blocking(["dask", "distributed"]) + textwrap.dedent("""
        from wo.cli import main
        sys.exit(main(["lm", "train", "--text", "text.txt", "--order", "2", "--out", "x.wolm", "--backend", "dask"]))
    """), tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        "wo: --backend dask needs dask, distributed, not installed: run  pip install 'wo-nlg[dask]'  "
        "(or pip install '.[dask]' in a clone of wo)"]
    assert not (tmp_path / "x.wolm").exists()
