"""The search's memory bound (``--max-memory``, ``Search.edge_limit``): a huge input stops at
the bound with a complete output (status "memory"), the process stays near the bound, and the
other sentences of the file are decoded exactly as without it."""
import json
import lzma
import pathlib
import subprocess
import sys

import pytest

from tests.conftest import EWT, wo_cli
from wo._fast._search import DEFAULT_MAX_MEMORY_MB, EDGE_BYTES, edges_for_memory
from wo.dep.linearizer import Linearizer

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _words(n):
    """The first n tokens of EWT dev, as one bag."""
    out = []
    with lzma.open(EWT / "en_ewt-ud-dev.conllu.xz", "rt", encoding="utf-8") as fh:
        for line in fh:
            c = line.split("\t")
            if len(c) == 10 and c[0].isdigit():
                out.append(c[1])
                if len(out) == n:
                    break
    return out


def test_edges_for_memory():
    assert edges_for_memory(None) == (DEFAULT_MAX_MEMORY_MB << 20) // EDGE_BYTES
    assert edges_for_memory(100) == (100 << 20) // EDGE_BYTES
    with pytest.raises(ValueError):
        edges_for_memory(0)


def test_the_edge_limit_stops_search_and_completions_with_every_word_once(model_path):
    words = _words(400)
    lin = Linearizer.load(model_path, max_memory=20)
    limit = lin.core.search.edge_limit
    r = lin.linearize(words)
    assert r.status == "memory" and lin.core.search.last_capped
    assert sorted(r.tokens) == sorted(words)
    # the search stops at the limit, overshooting by one pop's expansion at most (chart + leaves pairs)
    assert limit <= r.edges <= limit + 2 * (int(lin.beam_factor * 400) + 400) * 2
    # a normal sentence is not touched by the default bound
    small = Linearizer.load(model_path)
    r2 = small.linearize(words[:20])
    assert r2.status != "memory" and r2.edges < small.core.search.edge_limit


def _run_measured(args):
    """Run ``wo ARGS`` in a fresh interpreter; returns (exit code, stderr, peak RSS of wo in MiB)."""
    code = ("import resource, subprocess, sys; p = subprocess.run([sys.executable, '-m', 'wo.cli'] + sys.argv[1:], "
            "capture_output=True, text=True); sys.stderr.write(p.stderr); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024); sys.exit(p.returncode)")
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=str(ROOT),
                       timeout=300)
    return p.returncode, p.stderr, int(p.stdout.split()[-1])


def test_a_huge_bag_stops_at_max_memory_and_the_others_are_unaffected(tmp_path, model_path):
    """Measured: a 3,000-word bag with --max-memory 60 peaks at 191 MiB, the process and its
    model included (1.4 s); a 5,000-word bag at the default bound peaks at 1.58 GB (before the
    bound it grew past 20 GB and was killed)."""
    words = _words(3000)
    normal = ["The dog barked loudly .", "She said that it was fine ."]
    src = tmp_path / "bags.txt"
    src.write_text(f"{normal[0]}\n{' '.join(words)}\n{normal[1]}\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    rc, err, rss = _run_measured(["linearize", "--model", model_path, "--input", str(src), "--output", str(out),
                                  "--input-format", "bag", "--format", "jsonl", "--max-length", "10000",
                                  "--max-memory", "60", "--quiet"])
    assert rc == 0, err
    assert "Traceback" not in err
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["status"] for r in recs][1] == "memory"
    assert sorted(recs[1]["tokens"]) == sorted(words)
    assert rss < 60 + 400, f"peak RSS {rss} MiB"
    # the other sentences: exactly what they get alone
    alone = tmp_path / "alone.txt"
    alone.write_text("\n".join(normal) + "\n", encoding="utf-8")
    out2 = tmp_path / "alone.jsonl"
    r = wo_cli(["linearize", "--model", model_path, "--input", alone, "--output", out2, "--input-format", "bag",
                "--format", "jsonl", "--quiet"])
    assert r.returncode == 0, r.stderr
    recs2 = [json.loads(x) for x in out2.read_text(encoding="utf-8").splitlines()]
    assert [recs[0]["tokens"], recs[2]["tokens"]] == [recs2[0]["tokens"], recs2[1]["tokens"]]


@pytest.mark.parametrize("verb", [["linearize"], ["ccg", "linearize"], ["sr", "realize"]])
def test_max_memory_must_be_positive(verb):
    p = wo_cli([*verb, "--max-memory", "0", "--input", "-"])
    assert p.returncode == 2 and "Traceback" not in p.stderr and "max-memory" in p.stderr
