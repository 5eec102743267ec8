"""The package shape: no import circles, one subpackage per system, the public API, and the shipped
models decoding exactly as recorded (dependency: golden outputs made by the monolithic core;
SR: recorded when the current SR model was shipped)."""
import ast
import json
import lzma
import pathlib
import re
import subprocess
import sys

import pytest

from tests.conftest import EWT, ROOT, SHIPPED, conllu_blocks, wo_cli, write_blocks

PKG = ROOT / "wo"
GOLDEN = ROOT / "tests" / "data" / "golden"
SR_MODEL = ROOT / "corpora" / "models" / "wo-ewt-sr.wo"


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


# a string constant naming a wo module, as the registries that importlib resolves hold them:
# "wo.gyro.bag", "wo.gyro.bag:GyroBagSearch"
_MODULE_STRING = re.compile(r"wo(?:\.\w+)*(?::\w+(?:\.\w+)*)?")


def _call_name(func) -> str:
    """``import_module`` for ``importlib.import_module(...)`` and for ``import_module(...)``
    (``from importlib import import_module``); ``__import__`` for both spellings of it."""
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _docstrings(tree) -> set:
    """The ids of the docstring nodes of a module, its classes and functions (prose, not registries)."""
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def _name_pattern(arg, mod: str, package: str, base) -> str:
    """A regular expression for the module names an ``import_module``/``__import__`` argument
    (a string or an f-string) can give: its constant parts literally, ``{__name__}`` and
    ``{__package__}`` as the module's own, any other field as any dotted name; a relative name
    (".x") resolved against ``base`` (the ``package`` argument) or the module's package."""
    pat = ""
    for p in (arg.values if isinstance(arg, ast.JoinedStr) else [arg]):
        if isinstance(p, ast.Constant):
            pat += re.escape(str(p.value))
        elif isinstance(p.value, ast.Name) and p.value.id == "__name__":
            pat += re.escape(mod)
        elif isinstance(p.value, ast.Name) and p.value.id == "__package__":
            pat += re.escape(package)
        else:
            pat += r"[\w.]+"
    level = 0
    while pat.startswith(r"\."):
        pat, level = pat[2:], level + 1
    if level:
        anchor = (base or package).split(".")
        anchor = anchor[:len(anchor) - (level - 1)]
        pat = re.escape(".".join(anchor)) + (r"\." + pat if pat else "")
    return pat


def _dynamic_imports(tree, mod: str, is_pkg: bool, known: set):
    """The wo modules a module imports through ``importlib.import_module`` / ``__import__`` and
    through the string registries it holds ("wo.x.y" or "wo.x.y:Name" constants outside
    docstrings, which it resolves with importlib).  An argument that is a string or an f-string
    gives every module it can name (``f"{__name__}.{code}"``: each submodule); any other
    argument (a variable) stands for the registry strings of the module.  Returns (set of module
    names, list of "module:line" of the calls it cannot follow: a variable argument in a module
    without registry strings)."""
    package = mod if is_pkg else mod.rpartition(".")[0]
    docs = _docstrings(tree)
    calls = [n for n in ast.walk(tree)
             if isinstance(n, ast.Call) and _call_name(n.func) in ("import_module", "__import__") and n.args]
    args = {id(a) for n in calls for a in list(n.args) + [k.value for k in n.keywords]}
    registry, unfollowed, out = set(), [], set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs | args
                and _MODULE_STRING.fullmatch(node.value) and node.value.partition(":")[0] in known):
            registry.add(node.value.partition(":")[0])
    for node in calls:
        arg = node.args[0]
        base = next((k.value for k in node.keywords if k.arg == "package"), None)
        if base is None and len(node.args) > 1 and _call_name(node.func) == "import_module":
            base = node.args[1]
        if isinstance(base, ast.Name):
            base = {"__name__": mod, "__package__": package}.get(base.id)
        elif isinstance(base, ast.Constant):
            base = base.value
        if isinstance(arg, ast.JoinedStr) or (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            pat = _name_pattern(arg, mod, package, base)
            out |= {m for m in known if re.fullmatch(pat, m)}
        elif registry:
            out |= registry
        else:
            unfollowed.append(f"{mod}:{node.lineno}")
    return out | registry, unfollowed


def _lazy_names(path: pathlib.Path, known: set) -> dict:
    """The names a package's ``__init__`` gives lazily (a module-level ``__getattr__`` over a
    dict literal of name -> module, as ``wo.__init__``'s public API): name -> module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if not any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
        return {}
    out = {}
    for n in tree.body:
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(n.value, ast.Dict):
            for k, v in zip(n.value.keys, n.value.values):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Constant) and v.value in known:
                    out[k.value] = v.value
    return out


def _scan():
    """(module -> set of wo modules it imports, list of dynamic imports not followed).  An
    import counts wherever it is (module level or inside functions): ``import``, ``from ...
    import`` (a name a package gives lazily counts as its module), and the dynamic imports of
    :func:`_dynamic_imports`."""
    paths = {_module_name(p): p for p in PKG.rglob("*.py")}
    known = set(paths)
    lazy = {mod: _lazy_names(p, known) for mod, p in paths.items() if p.name == "__init__.py"}
    graph, unfollowed = {}, []
    for mod, path in paths.items():
        is_pkg = path.name == "__init__.py"
        deps = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                names = [target] + [f"{target}.{a.name}" for a in node.names]
                names += [lazy[target][a.name] for a in node.names if a.name in lazy.get(target, {})]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for t in names:
                if t.startswith("wo"):
                    deps.add(t)
        dyn, missed = _dynamic_imports(tree, mod, is_pkg, known)
        graph[mod] = deps | dyn
        unfollowed += missed
    out = {}
    for mod, deps in graph.items():
        edges = set()
        for t in deps:
            while t and t not in known:
                t = t.rpartition(".")[0]
            # importing a module imports its packages too; a module's own ancestors are already
            # being imported when it runs
            while t and t != mod and not mod.startswith(t + "."):
                edges.add(t)
                t = t.rpartition(".")[0]
        out[mod] = edges
    return out, unfollowed


def _imports():
    """Module -> set of wo modules it imports (module level or inside functions, through
    ``importlib`` and string registries too; :func:`_scan`)."""
    return _scan()[0]


def test_the_graph_follows_importlib_and_registries():
    """Imports made by name are edges too: the root package's lazy public API, a language
    module found by its code, and no dynamic import the scan cannot follow."""
    graph, unfollowed = _scan()
    assert {"wo.dep", "wo.sr", "wo.gyro"} <= graph["wo"]                 # wo.__getattr__ over _API
    assert {"wo.sr.lang.en", "wo.sr.lang.el"} <= graph["wo.sr.lang"]     # language(): f"{__name__}.{code}"
    assert not unfollowed, f"dynamic imports the layout test cannot follow: {unfollowed}"


def _circles(graph) -> list:
    """One import circle (a list of modules, first = last) per strongly connected component of
    ``graph`` with more than one module (Tarjan's algorithm)."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def connect(m):
        index[m] = low[m] = len(index)
        stack.append(m)
        on.add(m)
        for d in sorted(graph.get(m, ())):
            if d not in index:
                connect(d)
                low[m] = min(low[m], low[d])
            elif d in on:
                low[m] = min(low[m], index[d])
        if low[m] == index[m]:
            comp = []
            while True:
                d = stack.pop()
                on.discard(d)
                comp.append(d)
                if d == m:
                    break
            if len(comp) > 1:
                comps.append(set(comp))

    for m in sorted(graph):
        if m not in index:
            connect(m)
    out = []
    for comp in comps:   # a shortest circle through the component's first module
        start = min(comp)
        paths, seen = [[start]], {start}
        while paths:
            path = paths.pop(0)
            nxt = sorted(d for d in graph[path[-1]] if d in comp)
            if start in nxt:
                out.append(path + [start])
                break
            for d in nxt:
                if d not in seen:
                    seen.add(d)
                    paths.append(path + [d])
    return out


def test_no_import_circles():
    graph = _imports()
    assert "wo.dep.linearizer" in graph and "wo.io.batch" in graph
    circles = _circles(graph)
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)


def _under(mod: str, packages) -> bool:
    """True when ``mod`` is one of ``packages`` or inside one of them."""
    return any(mod == p or mod.startswith(p + ".") for p in packages)


# the floors shared by every system, the systems, and the command line over them
SHARED = ("wo.io", "wo.eval", "wo.lm", "wo.model", "wo.learn", "wo.system", "wo.resources", "wo.extras")
SYSTEMS = ("wo.dep", "wo.sr", "wo.ccg", "wo.gyro", "wo.idl", "wo.smt")


def test_layers_import_only_downwards():
    """The shared floors know no system (a registry lives with its system: ``wo.model`` holds no
    system's options); GYRO, the bag search of the dependency and CCG linearizers, imports no
    other system; the dependency system imports no SR; nothing imports the command line."""
    graph = _imports()
    for mod, deps in graph.items():
        if _under(mod, SHARED):
            assert not any(_under(d, SYSTEMS + ("wo.cli",)) for d in deps), (mod, deps)
        if _under(mod, ("wo.gyro",)):
            assert not any(_under(d, SYSTEMS + ("wo.cli",)) for d in deps if not _under(d, ("wo.gyro",))), (mod, deps)
        if _under(mod, ("wo.dep",)):
            assert not any(_under(d, ("wo.sr", "wo.cli")) for d in deps), (mod, deps)
        if not _under(mod, ("wo.cli",)):
            assert not any(_under(d, ("wo.cli",)) for d in deps), (mod, deps)


def test_public_api():
    import wo

    for name in wo.__all__:
        assert getattr(wo, name) is not None
    from wo.dep import Linearizer
    from wo.sr import Realizer

    assert wo.Linearizer is Linearizer and wo.Realizer is Realizer
    with pytest.raises(AttributeError):
        wo.NoSuchThing


def _first(n, tmp_path):
    return write_blocks(tmp_path / f"test{n}.conllu", conllu_blocks(str(EWT / "en_ewt-ud-test.conllu.xz"))[:n])


def _golden(name):
    with lzma.open(GOLDEN / name, "rt", encoding="utf-8") as fh:
        return fh.read().splitlines()


@pytest.mark.slow
@pytest.mark.skipif(not SHIPPED.exists(), reason="shipped model not in the tree")
@pytest.mark.parametrize("given,n,golden", [("none", 80, "ewt-test-bag-80.txt.xz"),
                                            ("full", 300, "ewt-test-full-300.txt.xz")])
def test_shipped_dependency_model_decodes_as_before_the_core_split(tmp_path, given, n, golden):
    from wo.cli import main

    out = tmp_path / "out.txt"
    assert main(["dep", "linearize", "--model", str(SHIPPED), "--lm", "none", "--input", str(_first(n, tmp_path)),
                 "--output", str(out), "--given", given, "--bag-search", "dep", "--quiet"]) == 0
    assert out.read_text(encoding="utf-8").splitlines() == _golden(golden)


@pytest.mark.slow
@pytest.mark.skipif(not SR_MODEL.exists(), reason="shipped SR model not in the tree")
def test_shipped_sr_model_realises_as_recorded(tmp_path):
    """The shipped SR model's output on 200 test sentences, recorded when that model was shipped
    (the local orderer with the large English 4-gram and the dep-mix LM); core changes must not move it."""
    from wo.cli import main

    t1 = tmp_path / "in.t1"
    assert main(["sr", "make-input", "--ud", str(_first(200, tmp_path)), "--out", str(t1), "--seed", "1"]) == 0
    out = tmp_path / "sr.txt"
    assert main(["sr", "realize", "--input", str(t1), "--output", str(out), "--set", "order.words_lm=none",
                 "--set", "order.view_lms=none", "--set", "forms.lm=none", "--quiet"]) == 0
    assert (tmp_path / "sr.txt.tok").read_text(encoding="utf-8").splitlines() == _golden("ewt-test-sr-200.tok.xz")
    # the default: the forms and each domain's beam rescored with the LMs the model header names
    assert main(["sr", "realize", "--input", str(t1), "--output", str(out), "--quiet"]) == 0
    rr = (tmp_path / "sr.txt.tok").read_text(encoding="utf-8").splitlines()
    assert rr == _golden("ewt-test-sr-200-rerank.tok.xz")
    assert 5 <= sum(a != b for a, b in zip(rr, _golden("ewt-test-sr-200.tok.xz"))) <= 100


def test_shipped_sr_models_find_the_lms_they_name_and_no_lm_is_left_unused():
    """Every LM a shipped SR model's stages name (:func:`wo.sr.stages.named_files`)
    is shipped where the realiser looks (beside the model, corpora/models/sr, or in
    corpora/models; a clean clone has only what git tracks), and every LM in corpora/models/sr
    is named by some model (a shipped LM nobody reads is dead weight in git history)."""
    from wo.model import Model
    from wo.sr.stages import named_files

    sr = SHIPPED.parent / "sr"
    named = set()
    for p in sorted(sr.glob("*.wo")):
        for name in named_files(Model.read_header(str(p))[0]):
            assert (sr / name).is_file() or (SHIPPED.parent / name).is_file(), f"{p.name} names {name}: not shipped"
            named.add(name)
    assert named >= {p.name for p in sr.glob("*.wolm")}


@pytest.mark.slow
@pytest.mark.skipif(not (SHIPPED.parent / "wo-en-wiki-4gram.wolm").exists(), reason="shipped LMs not in the tree")
def test_shipped_tree_default_decodes_as_recorded(tmp_path):
    """``wo linearize`` on trees with the shipped LM model: by default (its sidecar
    ``wo-ewt-dep-lm.decode.json``: ``tree_rerank.default``) the popped goals of a search with
    beam 32 per word are reranked by the Wikipedia 4-gram and three EWT view LMs; 150 EWT test
    trees as recorded when that default was shipped.  ``--no-tree-rerank`` gives the search's
    own outputs: some differ, every word is kept."""
    from wo.cli import main

    src = _first(150, tmp_path)
    out, plain = tmp_path / "rr.txt", tmp_path / "plain.txt"
    assert main(["linearize", "--input", str(src), "--output", str(out), "--given", "full", "--quiet"]) == 0
    rr = out.read_text(encoding="utf-8").splitlines()
    assert rr == _golden("ewt-test-full-150-default.txt.xz")
    assert main(["linearize", "--input", str(src), "--output", str(plain), "--given", "full", "--no-tree-rerank",
                 "--quiet"]) == 0
    pl = plain.read_text(encoding="utf-8").splitlines()
    assert 5 <= sum(a != b for a, b in zip(rr, pl)) <= 75
    assert all(sorted(a.split()) == sorted(b.split()) for a, b in zip(rr, pl))


@pytest.mark.slow
@pytest.mark.skipif(not (SHIPPED.parent / "wo-en-wiki-4gram.wolm").exists(), reason="shipped LMs not in the tree")
def test_shipped_bag_default_decodes_as_recorded(tmp_path):
    """``wo linearize`` on bags: the search the shipped model names (corpora/models/
    wo-ewt-dep-lm.decode.json: GYRO's n-best under the large 4-gram, reranked by the model) on
    40 EWT test bags, recorded when it became the default; every word once, and outputs unlike
    the model's own search (``--bag-search dep``)."""
    from wo.cli import main

    src = _first(40, tmp_path)
    out, own = tmp_path / "bag.txt", tmp_path / "dep.txt"
    assert main(["linearize", "--input", str(src), "--output", str(out), "--quiet"]) == 0
    got = out.read_text(encoding="utf-8").splitlines()
    assert got == _golden("ewt-test-bag-default-40.txt.xz")
    assert main(["linearize", "--input", str(src), "--output", str(own), "--bag-search", "dep", "--quiet"]) == 0
    dep = own.read_text(encoding="utf-8").splitlines()
    assert all(sorted(a.split()) == sorted(b.split()) for a, b in zip(got, dep))
    assert sum(a != b for a, b in zip(got, dep)) >= 10


def _wo(args, stdin=""):
    """``wo ARGS`` in this process (``tests.conftest.wo_cli``), ``stdin`` as its standard input."""
    return wo_cli(args, stdin)


@pytest.mark.skipif(not SHIPPED.exists(), reason="shipped model not in the tree")
def test_pipe_bag_to_sentence_with_defaults():
    """A real pipe into a real ``wo`` process: the default model, bag input, records on stdout."""
    r = subprocess.run([sys.executable, "-m", "wo.cli", "linearize"], input="barked dog The loudly .\ncat the sat mat on the .\n",
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    assert sorted(lines[0].split()) == sorted("barked dog The loudly .".split())
    assert sorted(lines[1].split()) == sorted("cat the sat mat on the .".split())
    assert "read as bag" in r.stderr and "<stdin>" in r.stderr   # summaries on stderr only


@pytest.mark.slow
@pytest.mark.skipif(not SHIPPED.exists(), reason="shipped model not in the tree")
def test_dash_means_stdio_for_every_file_argument(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)               # a file named "-" would appear here
    src = _first(6, tmp_path)
    conllu = src.read_text(encoding="utf-8")
    r = _wo(["dep", "linearize", "--input", "-", "--output", "-", "--given", "full", "--format", "conllu",
             "--quiet"], conllu)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("# sent_id") == 6 and r.stderr == ""
    assert not (ROOT / "-").exists()
    hyps = [" ".join(ln.split("\t")[1] for ln in block.splitlines() if ln and not ln.startswith("#"))
            for block in r.stdout.split("\n\n") if block.strip()]
    ev = _wo(["evaluate", "--hyp", "-", "--ref", str(src), "--json"], "\n".join(hyps) + "\n")
    assert ev.returncode == 0, ev.stderr
    assert json.loads(ev.stdout)["recovered"] == 100.0 and json.loads(ev.stdout)["sentences"] == 6
    t1 = _wo(["sr", "make-input", "--ud", "-"], conllu)
    assert t1.returncode == 0 and t1.stdout.count("\n\n") == 6
    sr = _wo(["sr", "realize", "--quiet"], t1.stdout)
    assert sr.returncode == 0, sr.stderr
    assert sr.stdout.count("# text = ") == 6


def test_version_and_aliases():
    import wo

    r = _wo(["--version"])
    assert r.returncode == 0 and r.stdout.strip() == f"wo {wo.__version__}"
    h = _wo(["--help"]).stdout
    for verb in ("dep", "sr", "evaluate", "train", "linearize"):
        assert verb in h
    assert "linearize" in _wo(["dep", "--help"]).stdout
