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
  does, never by a path into the clone). Every printed line is shown, in order, as a
  ``# -> LINE`` comment (on the print line or the line after it); the printed lines must equal
  them.
* ```text: not run: option synopses, format samples, diagrams, and commands that take minutes
  or need files that do not ship. A ```text block shows no ``$ `` prompt. The format samples of
  docs/formats.md are checked against wo's readers and writers by the tests at the end.

In an expected line (console or python), ``...`` matches any text. A page's sh and console
blocks run in page order (a later block may read what an earlier one wrote).
"""
import importlib.util
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
SLOW_PAGES = {"README.md", "docs/sr.md", "docs/lm.md", "docs/smt.md", "docs/gyro.md"}
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


def _page_param(page: pathlib.Path):
    rel = _rel(page)
    return pytest.param(page, id=rel, marks=[pytest.mark.slow] if rel in SLOW_PAGES else [])


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
@pytest.mark.parametrize("page", [_page_param(p) for p in EXAMPLE_PAGES])
def test_shell_and_console_examples_run_and_print_what_they_show(page):
    """Each page's sh and console blocks, in page order, from the repository root."""
    failed, ran = [], 0
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


PYTHON_PAGES = [p for p in _pages() if any(t == "python" for _, t, _ in _blocks(p))]


@pytest.mark.parametrize("page", [_page_param(p) for p in PYTHON_PAGES])
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
