import pathlib
import re

from tests.conftest import ROOT, SHIPPED


def test_readme_python_example_runs(model_path):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    code = blocks[0].replace(str(SHIPPED.relative_to(ROOT)), model_path)
    ns = {}
    exec(compile(code, "README.md", "exec"), ns)
    r = ns["r"]
    assert sorted(r.tokens) == sorted(["barked", "dog", "The", "loudly", "."])
