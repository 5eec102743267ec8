"""The manual and the docs: docs/results.md is what bench/results_doc.py makes from the records,
the README stays short, every relative link resolves, every example runs, and no page carries
the project's issue or session numbers (they belong in NOTES.md).

Every fenced code block of README.md and docs/*.md is tagged, and the tag says how it is checked:

* ```sh: commands, one per line (``\\`` continues a line, ``#`` lines are comments), run with
  ``sh`` from the repository root; each must exit 0. Examples finish in seconds on shipped
  files (corpora/, tests/data/) and write only to standard output or ``out/`` (gitignored).
* ```console: ``$ command`` lines, each followed by the exact lines it prints on standard output
  (none shown: it prints nothing); run from the repository root, exit 0, output compared.
* ```python: run by the installed package's interpreter in a subprocess whose working directory
  is an empty temporary directory (so a snippet finds the shipped models as a user's script
  does, never by a path into the clone). Every printed line is shown as a ``# -> LINE``
  comment (on its print call's line); the printed lines must equal those comments, in order.
* ```text: not run: option synopses, format samples, diagrams, and commands that take minutes
  or need files that do not ship. A ```text block shows no ``$ `` prompt; its ``wo`` commands
  name only verbs and options the command line has, and a synopsis lists every option of its
  verb (with the choices argparse allows). The format samples of docs/formats.md are checked
  against wo's readers and writers by the tests at the end.

In an expected line (console or python), ``...`` matches any text. A page's sh and console
blocks run in page order (a later block may read what an earlier one wrote).
"""
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
BIN = pathlib.Path(sys.executable).parent


def _results_doc():
    spec = importlib.util.spec_from_file_location("results_doc", ROOT / "bench" / "results_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fenced(text: str, tag: str):
    """The bodies of the fenced code blocks tagged ``tag``."""
    return re.findall(rf"^```{tag}\n(.*?)^```", text, flags=re.S | re.M)


def _commands(body: str):
    """Shell commands of a block: one per line, ``\\`` continuing a line, comments dropped."""
    out, cur = [], ""
    for line in body.splitlines():
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        cur += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            out.append(cur.strip())
            cur = ""
    return out


def _env():
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_results_page_is_what_the_records_give():
    text = _results_doc().render(str(ROOT))
    page = (DOCS / "results.md").read_text(encoding="utf-8")
    assert page == text, "docs/results.md is stale: run python bench/results_doc.py"
    assert "[sr-multi.md](sr-multi.md)" in text
    for section in re.split(r"^#{2,4} ", text, flags=re.M):
        if "\n|" in section:   # a table names the command that reproduces it
            assert "Reproduce" in section, section.splitlines()[0]


def test_results_generator_is_deterministic_and_places_every_readme_record():
    mod = _results_doc()
    assert mod.render(str(ROOT)) == mod.render(str(ROOT))
    R = mod.Records(str(ROOT))   # (render raises when a README record table is not placed)
    for rel in R.glob("readme/*.json"):
        rec = R(rel)
        assert rec["source"].startswith("README.md at commit "), rel
        for tid, t in rec["tables"].items():
            assert t.get("command") and t.get("title"), (rel, tid)


def test_readme_is_a_short_manual():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 320, f"README.md has {len(lines)} lines; results go to docs/results.md"


def _pages():
    return [README] + sorted(DOCS.glob("*.md"))


def _anchors(page: pathlib.Path):
    """GitHub's anchors of a Markdown page's headings."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    out = set()
    for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M):
        out.add(re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-"))
    return out


def test_every_relative_link_resolves():
    bad = []
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)   # links in code blocks are not links
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path) if path else page
            if not dest.exists():
                bad.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                bad.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not bad, bad


def test_no_issue_or_session_numbers_in_the_manual():
    pat = re.compile(r"\b(?:issue|session)s? ?#?\d+|\b(?:first|second|third|\w+th) session\b", re.I)
    bad = []
    for page in _pages():
        if page.name == "sr-multi.md":   # generated by bench/sr_multi.py table, not by hand
            continue
        for no, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if pat.search(line):
                bad.append(f"{page.relative_to(ROOT)}:{no}: {line.strip()[:80]}")
    assert not bad, bad


def test_layout_section_lists_the_compiled_modules_and_packages():
    text = README.read_text(encoding="utf-8")
    layout = text[text.index("## Layout"):]
    for p in sorted((ROOT / "wo" / "_fast").glob("*.pyx")) + sorted((ROOT / "wo" / "_fast").glob("*.pxd")):
        assert re.search(rf"\b{p.stem}\b", layout), f"README layout misses wo/_fast/{p.name}"
    for d in sorted(x for x in (ROOT / "wo").iterdir() if (x / "__init__.py").exists() and x.name != "_fast"):
        assert f"wo/{d.name}/" in layout, f"README layout misses wo/{d.name}/"




# ------------------------------------------------------------------------------ the examples
TAGS = ("sh", "console", "python", "text")
# the example runs that take more than about 5 s on a quiet machine (SMT loads spaCy and jieba)
SLOW_SHELL = {"README.md", "docs/dep.md", "docs/sr.md", "docs/lm.md", "docs/gyro.md", "docs/smt.md"}
SLOW_PYTHON = {"README.md", "docs/smt.md"}
HAS_WO = (BIN / "wo").exists()
needs_wo = pytest.mark.skipif(not HAS_WO, reason="the wo command is not installed beside this python")


def _rel(page: pathlib.Path) -> str:
    return str(page.relative_to(ROOT))


def _blocks(page: pathlib.Path):
    """The fenced code blocks of a page: (line of the opening fence, tag, body), the body
    dedented by the fence's indentation (a block inside a list item)."""
    out, lines, i = [], page.read_text(encoding="utf-8").splitlines(), 0
    while i < len(lines):
        m = re.match(r"^( *)```(\S*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent, tag, start, body = len(m.group(1)), m.group(2), i + 1, []
        i += 1
        while i < len(lines) and not re.match(rf"^ {{{indent}}}```\s*$", lines[i]):
            body.append(lines[i][indent:])
            i += 1
        out.append((start, tag, "\n".join(body) + "\n"))
        i += 1
    return out


def _matches(actual, expected) -> bool:
    """Lines equal, ``...`` in an expected line matching any text."""
    if len(actual) != len(expected):
        return False
    for a, e in zip(actual, expected):
        pat = ".*".join(re.escape(part) for part in e.split("..."))
        if not re.fullmatch(pat, a):
            return False
    return True


def _console(body: str):
    """(command, expected stdout lines) of each ``$ `` line of a console block."""
    lines, out, i = body.splitlines(), [], 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise AssertionError(f"console line without a command before it: {lines[i]!r}")
        cmd = lines[i][2:]
        while cmd.endswith("\\"):
            i += 1
            cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        out.append((cmd, expected))
    return out


def _python_expected(body: str):
    """The lines a python block says it prints: its ``# -> LINE`` comments, in order."""
    return [m.group(1) for m in re.finditer(r"#\s*-> ?(.*)$", body, flags=re.M)]


def _run(cmd: str, cwd=ROOT, **kw):
    return subprocess.run(cmd, shell=True, cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=300, **kw)


def _tree_changes() -> set:
    """``git status`` lines of the checkout (untracked files included; ``out/`` is ignored); empty
    when this is no git checkout."""
    r = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                       capture_output=True, text=True)
    return set(r.stdout.splitlines()) if r.returncode == 0 else set()


def _page_param(page: pathlib.Path, slow=()):
    rel = _rel(page)
    return pytest.param(page, id=rel, marks=[pytest.mark.slow] if rel in slow else [])


EXAMPLE_PAGES = [p for p in _pages() if any(t != "text" for _, t, _ in _blocks(p))]


def test_every_code_block_is_tagged_and_shows_prompts_only_where_they_run():
    bad = []
    for page in _pages():
        for line, tag, body in _blocks(page):
            if tag not in TAGS:
                bad.append(f"{_rel(page)}:{line}: ```{tag} (use one of {', '.join(TAGS)})")
            elif tag == "text" and re.search(r"^\$ ", body, flags=re.M):
                bad.append(f"{_rel(page)}:{line}: a ```text block with `$ ` prompts: make it console or sh")
    assert not bad, "\n".join(bad)


def test_the_readme_runs_an_example_of_every_system_and_a_python_one():
    run = "".join(body for _, tag, body in _blocks(README) if tag in ("sh", "console"))
    for cmd in ("wo linearize", "wo sr realize", "wo ccg linearize", "wo lm score", "wo idl realize",
                "wo gyro realize", "wo smt translate"):
        assert cmd in run, f"README.md runs no example of `{cmd}`"
    assert any(tag == "python" for _, tag, _ in _blocks(README))


@needs_wo
@pytest.mark.parametrize("page", [_page_param(p, SLOW_SHELL) for p in EXAMPLE_PAGES])
def test_shell_and_console_examples_run_and_print_what_they_show(page):
    """Each page's sh and console blocks, in page order, from the repository root; they write
    nothing into the repository but under the gitignored ``out/``."""
    failed, ran, before = [], 0, _tree_changes()
    for line, tag, body in _blocks(page):
        where = f"{_rel(page)}:{line} ```{tag}"
        if tag == "sh":
            for cmd in _commands(body):
                r, ran = _run(cmd), ran + 1
                if r.returncode != 0:
                    failed.append(f"{where}: {cmd}\n  exit {r.returncode}: {r.stderr.strip()[-400:]}")
        elif tag == "console":
            for cmd, expected in _console(body):
                r, ran = _run(cmd), ran + 1
                if r.returncode != 0:
                    failed.append(f"{where}: {cmd}\n  exit {r.returncode}: {r.stderr.strip()[-400:]}")
                elif not _matches(r.stdout.splitlines(), expected):
                    failed.append(f"{where}: {cmd}\n  shows {expected}\n  prints {r.stdout.splitlines()}")
    assert not failed, "\n".join(failed)
    assert ran or not any(t in ("sh", "console") for _, t, _ in _blocks(page))
    wrote = sorted(_tree_changes() - before)
    assert not wrote, f"the examples of {_rel(page)} wrote into the repository: {wrote}"


PYTHON_PAGES = [p for p in _pages() if any(t == "python" for _, t, _ in _blocks(p))]


@pytest.mark.parametrize("page", [_page_param(p, SLOW_PYTHON) for p in PYTHON_PAGES])
def test_python_examples_run_from_anywhere_and_print_what_they_show(page, tmp_path):
    """Each python block in a fresh interpreter whose working directory is an empty temporary
    directory (not the clone); its printed lines are its ``# -> `` comments."""
    failed = []
    for k, (line, tag, body) in enumerate(_blocks(page)):
        if tag != "python":
            continue
        where = f"{_rel(page)}:{line} ```python"
        cwd = tmp_path / f"block{k}"
        cwd.mkdir()
        expected = _python_expected(body)
        r = subprocess.run([sys.executable, "-c", body], cwd=cwd, env=_env(), capture_output=True,
                           text=True, timeout=300)
        if r.returncode != 0:
            failed.append(f"{where}: exit {r.returncode}: {r.stderr.strip()[-600:]}")
        elif not _matches(r.stdout.splitlines(), expected):
            failed.append(f"{where}:\n  shows  {expected}\n  prints {r.stdout.splitlines()}")
    assert not failed, "\n".join(failed)


# ------------------------------------------------------------ the format samples of formats.md
FORMATS = DOCS / "formats.md"


def _sample(heading: str) -> str:
    """The body of the first code block under the ``### heading`` of docs/formats.md."""
    at = FORMATS.read_text(encoding="utf-8").splitlines().index(f"### {heading}") + 1
    return next(body for line, tag, body in _blocks(FORMATS) if line > at)


def test_formats_bag_sample_reads_as_bags_with_and_without_tags(tmp_path):
    from wo.io.items import read_items

    f = tmp_path / "bags.txt"
    f.write_text(_sample("Bags of words"), encoding="utf-8")
    items, fmt = read_items(str(f), "auto")
    assert fmt == "bag"
    assert [it.forms for it in items] == [["barked", "dog", "The", "loudly", "."]] * 2
    assert items[0].pos == [None] * 5 and items[1].pos == ["VBD", "NN", "DT", "RB", "."]


def test_formats_zgen_sample_reads_as_zgen_and_its_unit_moves_as_one(tmp_path):
    from tests.conftest import wo_cli
    from wo.io.items import read_items

    f = tmp_path / "zgen.txt"
    f.write_text(_sample("ZGen 4-column") + "\n", encoding="utf-8")
    items, fmt = read_items(str(f), "auto")
    assert fmt == "zgen" and len(items) == 1
    it = items[0]
    assert it.forms == ["__The_dog__", "barked", "loudly", "."] and it.pos == ["NN", "VBD", "RB", "."]
    assert it.heads == [2, -1, 2, 2] and it.units == [["The", "dog"], ["barked"], ["loudly"], ["."]]
    r = wo_cli(["linearize", "--input", str(f), "--given", "full", "--quiet"])
    assert r.returncode == 0 and r.stdout.split() [:2] == ["The", "dog"] and len(r.stdout.split()) == 5
    rec = json.loads(wo_cli(["linearize", "--input", str(f), "--given", "full", "--format", "jsonl"]).stdout)
    assert len(rec["tokens"]) == len(rec["heads"]) == len(rec["pos"]) == 4   # as formats.md says
    assert rec["words"] == r.stdout.split() and "__The_dog__" in rec["tokens"]
    conllu = wo_cli(["linearize", "--input", str(f), "--given", "full", "--format", "conllu"]).stdout
    assert "\t__The_dog__\t" in conllu and "# text = The dog" in conllu


def test_formats_t1_sample_is_rows_of_the_shipped_t1_file():
    from tests.conftest import conllu_blocks
    from wo.sr import read_t1

    rows = _sample("SR'19 T1 input").splitlines()
    path = ROOT / "corpora" / "sr19-en_partut" / "T1-en_partut-ud-dev.conllu.xz"
    first = conllu_blocks(str(path))[0].splitlines()
    assert [r for r in first if r in rows] == rows, "the sample is not the first sentence's rows"
    s = read_t1(str(path))[0]
    ids = [int(r.split("\t")[0]) - 1 for r in rows]   # tokens in file order, ids 1..n
    assert [s.lemmas[i] for i in ids] == ["service", ".", "firm"]
    assert [s.lin[i] for i in ids] == [0, 2, 0] and [s.heads[i] for i in ids] == [14, 6, 0]


def test_formats_auto_sample_parses_and_is_written_back_as_it_is():
    import lzma

    from wo.ccg.auto import format_derivation, parse_derivation
    from tests.conftest import wo_cli

    header, line = _sample("CCGbank `.auto`").splitlines()
    tree = parse_derivation(line)
    assert [(x.word, x.pos) for x in tree.leaves()] == [("Bush", "NNP"), ("left", "VBD")]
    assert format_derivation(tree) == line
    assert header == "ID=<sent_id> PARSER=GOLD NUMPARSE=1"
    with lzma.open(ROOT / "corpora" / "ccg-en" / "test.auto.xz", "rt", encoding="utf-8") as fh:
        assert re.fullmatch(r"ID=\S+ PARSER=GOLD NUMPARSE=1", fh.readline().rstrip("\n"))
    r = wo_cli(["ccg", "linearize", "--format", "auto", "--quiet"], stdin="left/VBD Bush/NNP\n")
    out = r.stdout.splitlines()
    assert r.returncode == 0 and out[0] == "ID=1 PARSER=WO NUMPARSE=1"
    assert sorted(x.word for x in parse_derivation(out[1]).leaves()) == ["Bush", "left"]


def test_formats_idl_grammar_operators_are_the_parsers():
    from wo.idl.expr import Op, Word, parse

    grammar = _sample("IDL-expressions").splitlines()
    names = grammar[1].split(":=")[1].split("concatenation")[0].split("|")
    notation = grammar[2].split("|", 1)[1].split("the same")[0].split("|")
    names, notation = [x.strip() for x in names], [x.strip() for x in notation]
    assert names == ["C", "I", "D", "L"]
    for op in names + notation:
        e = parse(f"{op}(a)") if op in ("L", "×") else parse(f"{op}(a, b)")
        assert isinstance(e, Op) and e.op in names, op
    assert [parse(f"{op}(a)" if op == "×" else f"{op}(a, b)").op for op in notation] == ["C", "I", "I", "D", "L"]
    assert parse("I") == Word("I") and parse('"a, (b)"') == Word("a, (b)")


def test_formats_tatoeba_sample_is_the_head_of_the_shipped_dev_file():
    import lzma

    with lzma.open(ROOT / "corpora" / "tatoeba-zh-en" / "dev.tsv.xz", "rt", encoding="utf-8") as fh:
        head = [fh.readline(), fh.readline()]
    assert _sample("Tatoeba TSV") == "".join(head)


def _json_fields_table():
    """{system: the field names docs/formats.md lists for its JSON lines}: the common fields of
    the first table plus the system's own of the second (ccg: "the same plus" dep's)."""
    text = FORMATS.read_text(encoding="utf-8")
    common_start = text.index("Every JSON lines record has the fields of `wo.system.Result`")
    own_start = text.index("and the system's own:", common_start)
    common = set(re.findall(r"^\| `([a-z_0-9]+)` \|", text[common_start:own_start], flags=re.M))
    out = {}
    for system, cell in re.findall(r"^\| (\w+) \| (.*) \|$", text[own_start:], flags=re.M):
        if system == "system":
            continue
        cell = cell.split("with `--dep-model` also")[0]
        while re.search(r"\([^()]*\)", cell):
            cell = re.sub(r"\([^()]*\)", "", cell)
        names = set(re.findall(r"`([a-z_0-9]+)`", cell)) - {"glued", "ok", "max-states", "timeout", "error"}
        out[system] = common | names | (out["dep"] if "the same plus" in cell else set())
    return out


_T1 = "".join("\t".join(row.split() + ["_", "_"]) + "\n" for row in [
    "1 bark _ VERB VBD Mood=Ind|Tense=Past|VerbForm=Fin 0 root", "2 dog _ NOUN NN Number=Sing 1 nsubj",
    "3 the _ DET DT Definite=Def|PronType=Art 2 det", "4 loudly _ ADV RB _ 1 advmod",
    "5 . _ PUNCT . lin=+1 1 punct"]) + "\n"
JSONL_RUNS = {
    "dep": (["linearize"], "barked dog The loudly .\n"),
    "ccg": (["ccg", "linearize"], "barked/VBD dog/NN The/DT loudly/RB ./.\n"),
    "sr": (["sr", "realize"], _T1),
    "idl": (["idl", "realize", "--input-format", "bag"], "barked dog The loudly .\n"),
    "gyro": (["gyro", "realize"], "barked dog The loudly .\n"),
    "smt": (["smt", "translate"], "我喜欢猫。\n"),
}


@pytest.mark.parametrize("system", [s if s != "smt" else pytest.param(s, marks=pytest.mark.slow)
                                    for s in JSONL_RUNS])
def test_formats_json_fields_are_what_each_system_writes(system):
    from tests.conftest import wo_cli

    fields = _json_fields_table()
    assert set(fields) == set(JSONL_RUNS)
    argv, stdin = JSONL_RUNS[system]
    r = wo_cli(argv + ["--format", "jsonl", "--quiet"], stdin=stdin)
    assert r.returncode == 0, r.stderr
    assert set(json.loads(r.stdout)) == fields[system], f"docs/formats.md lists other {system} fields"
    if system == "gyro":
        r = wo_cli(argv + ["--format", "jsonl", "--quiet", "--dep-model", str(ROOT / "corpora/models/wo-ewt-dep-lm.wo")],
                   stdin=stdin)
        assert set(json.loads(r.stdout)) == fields[system] | {"heads", "dep_score"}


# ---------------------------------------------------------------- the commands of text blocks
def _text_commands():
    """(page, block line, command) of every ``wo ...`` line of the ```text blocks (synopses and
    the commands not run), a synopsis' indented ``[...]``/``--...`` lines and ``\\`` lines joined."""
    for page in _pages():
        for line, tag, body in _blocks(page):
            if tag != "text":
                continue
            cur = None
            for ln in body.splitlines():
                if ln.startswith("wo "):
                    if cur:
                        yield cur
                    cur = (page, line, ln)
                elif cur and ln.startswith(" ") and ln.strip().startswith(("[", "-")):
                    cur = (page, line, cur[2].rstrip("\\ ") + " " + ln.strip())
                elif cur:
                    yield cur
                    cur = None
            if cur:
                yield cur


def test_the_commands_not_run_name_only_options_wo_has():
    """The option synopses and the long commands in ```text blocks use verbs and options that
    ``wo VERB --help`` lists (a stale option fails here)."""
    from tests.conftest import wo_cli

    helps, bad, seen = {}, [], 0
    for page, line, cmd in _text_commands():
        words = cmd.split("#")[0].split()[1:]
        verb = []
        for w in words:
            if not re.fullmatch(r"[a-z][a-z-]*", w):
                break
            verb.append(w)
        key = tuple(verb)
        if key not in helps:
            r = wo_cli(list(key) + ["--help"])
            helps[key] = r.stdout if r.returncode == 0 else None
        if helps[key] is None:
            bad.append(f"{_rel(page)}:{line}: `wo {' '.join(key)}` is no command: {cmd}")
            continue
        for opt in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", cmd))):
            seen += 1
            if not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", helps[key]):
                bad.append(f"{_rel(page)}:{line}: `wo {' '.join(key)}` has no {opt}")
    assert seen > 100
    assert not bad, "\n".join(bad)


def _verb_options():
    """{verb words: [option strings of each option]} of the wo command line (argparse)."""
    import argparse

    from wo.cli import build_parser

    def subs(p):
        return next((a.choices for a in p._actions if isinstance(a, argparse._SubParsersAction)), {})

    out = {}
    for name, sp in subs(build_parser()).items():
        for verb, vp in (subs(sp).items() or [(None, sp)]):
            key = (name,) if verb is None else (name, verb)
            out[key] = [(a.option_strings, a.choices) for a in vp._actions
                        if a.option_strings and "--help" not in a.option_strings and a.help != argparse.SUPPRESS]
    return out


def test_the_synopses_list_every_option_of_their_verb():
    """The synopses (```text blocks of ``wo VERB ... [--option ...]`` lines) list every option
    each verb has, so a new option cannot go undocumented."""
    listed, choices, cmds = {}, {}, list(_text_commands())
    synopses = {(page, line) for page, line, cmd in cmds if "[--" in cmd}   # blocks of synopses
    for page, line, cmd in cmds:
        if (page, line) not in synopses:
            continue
        words = cmd.split("#")[0].split()[1:]
        verb = tuple(w for w in words[:2] if re.fullmatch(r"[a-z][a-z-]*", w))
        listed.setdefault((_rel(page), line, verb), set()).update(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", cmd))
        for opt, alts in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*) ([\w.-]+(?:\|[\w.-]+)+)", cmd):
            choices[(_rel(page), line, verb, opt)] = alts.split("|")
    options, bad = _verb_options(), []
    for (page, line, verb), opts in listed.items():
        for names, allowed in options[verb]:
            if not opts & set(names):
                bad.append(f"{page}:{line}: the synopsis of `wo {' '.join(verb)}` misses {names[0]}")
            for name in names:
                shown = choices.get((page, line, verb, name))
                if allowed and shown and sorted(shown) != sorted(allowed):
                    bad.append(f"{page}:{line}: `wo {' '.join(verb)} {name}` takes {'|'.join(allowed)}, "
                               f"the synopsis says {'|'.join(shown)}")
    assert len(listed) >= 15
    assert not bad, "\n".join(bad)


def test_every_option_the_manual_names_is_an_option_of_wo():
    """An ``--option`` named anywhere in the README or the hand-written docs (prose and tables
    too) is an option of some ``wo`` verb (the generated results pages name bench scripts')."""
    known = {n for verb in _verb_options().values() for names, _ in verb for n in names}
    known |= {"--help", "--hypothesis-show-statistics"}   # argparse's own; pytest's (reliability.md)
    bad = []
    for page in _pages():
        if page.name in ("results.md", "sr-multi.md"):
            continue
        for no, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            bad += [f"{_rel(page)}:{no}: {o}" for o in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", line)
                    if o not in known]
    assert not bad, "\n".join(bad)
