import re

from tests.conftest import ROOT, SHIPPED


def test_readme_python_example_runs(model_path, tmp_path):
    import lzma

    with lzma.open(ROOT / "corpora/ud-en-ewt/en_ewt-ud-dev.conllu.xz", "rt", encoding="utf-8") as fh:
        blocks = fh.read().split("\n\n")[:20]
    small_input = tmp_path / "dev20.conllu"
    small_input.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    code = blocks[0].replace(str(SHIPPED.relative_to(ROOT)), model_path)
    code = code.replace("corpora/ud-en-ewt/en_ewt-ud-dev.conllu.xz", str(small_input))
    code = code.replace('"dev.bags.txt"', repr(str(tmp_path / "dev.bags.txt")))
    ns = {}
    exec(compile(code, "README.md", "exec"), ns)
    r = ns["r"]
    assert sorted(r.tokens) == sorted(["barked", "dog", "The", "loudly", "."])
    assert ns["summary"].sentences == 20 and len((tmp_path / "dev.bags.txt").read_text().splitlines()) == 20


def test_readme_sr_example_runs():
    from tests.conftest import ROOT as R

    assert (R / "corpora" / "models" / "wo-ewt-sr.wo").exists(), "the SR model ships with the repository"
    text = (R / "README.md").read_text(encoding="utf-8")
    code = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "Realizer" in b][0]
    import os
    cwd = os.getcwd()
    os.chdir(R)
    try:
        ns = {}
        exec(compile(code, "README.md", "exec"), ns)
    finally:
        os.chdir(cwd)
    r, s = ns["r"], ns["sents"][0]
    assert sorted(r.order) == list(range(len(s))) and r.tokens[0][0].isupper()
