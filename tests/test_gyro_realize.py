"""GYRO realisation (de Gispert et al. 2014): the paper's Figure 1 language, multisets, LM
lattices that score as the LM does, the unpruned best path = the best string of the language,
every output a permutation of its bag, and the CLI."""
import itertools
import pathlib
import json

import pytest

from tests.conftest import EWT, ROOT

SHIPPED_LM = ROOT / "corpora" / "models" / "wo-en-4gram.wolm"
from wo.gyro import PhraseIndex, build_arrays, write_index
from wo.gyro.realize import PAPER_LEVELS, GyroRealizer
from wo.lm.model import LanguageModel


@pytest.fixture(scope="module")
def setup(tmp_path_factory, ewt_dev, shipped_lm):
    sents = [list(s.forms) for s in ewt_dev]
    d = tmp_path_factory.mktemp("gyro")
    txt = d / "dev.txt"
    txt.write_text("".join(" ".join(s) + "\n" for s in sents[200:]), encoding="utf-8")
    write_index(build_arrays([str(txt)], max_n=5), str(d / "dev.woidx"))
    return PhraseIndex.load(str(d / "dev.woidx")), shipped_lm, sents[:200], d


@pytest.mark.parametrize("engine", ["chart", "fst"])
def test_the_papers_example_and_multisets(setup, engine):
    idx, lm, _, _ = setup
    g = GyroRealizer(idx, lm, engine=engine)
    assert g.language(list("abcde"), [["a", "b"], ["b", "a"], ["d", "e", "c"]]) == \
        ["a b d e c", "b a d e c", "d e c a b", "d e c b a"]                   # Figure 1
    assert g.language(list("aab"), [["a", "b"], ["a"]]) == ["a a b", "a b a"]
    assert g.language(list("abc"), [["a", "b"]]) == []                       # c is never covered


def _small_bags(sents, k):
    """The first k real bags of 4-6 words, sorted (order given away by nothing)."""
    return [sorted(s) for s in sents if 4 <= len(s) <= 6][:k]


def test_unpruned_best_path_is_the_best_string_of_the_language(setup):
    idx, lm, sents, _ = setup
    checked = 0
    for bag in _small_bags(sents, 8):
        g = GyroRealizer(idx, lm, r=len(bag) + 1, nbest=3, levels=("unigram",))     # no pruning
        strings = {" ".join(p) for p in itertools.permutations(bag)}
        best = max(lm.score(x.split()) for x in strings)
        res = g.realize(bag)
        assert res.status == "ok" and res.level == "unigram"
        assert res.log10_prob == pytest.approx(best, abs=1e-4)
        assert [p for _, p in res.nbest] == sorted((p for _, p in res.nbest), reverse=True)
        checked += 1
    assert checked == 8


@pytest.mark.parametrize("engine", ["chart", "fst"])
def test_outputs_are_permutations_scored_by_the_lm(setup, engine):
    idx, lm, sents, _ = setup
    g = GyroRealizer(idx, lm, r=3, beta=2.0, nbest=2, engine=engine, levels=PAPER_LEVELS)
    levels = set()
    for s in [x for x in sents if 3 <= len(x) <= 12][:25]:
        res = g.realize(list(reversed(s)))
        assert sorted(res.text.split()) == sorted(s)
        assert res.log10_prob == pytest.approx(lm.score(res.text.split()), abs=1e-9)
        levels.add(res.level)
    assert levels <= {"phrases", "bigram", "unigram"} and levels & {"phrases", "bigram"}   # phrase rules parsed some


def test_cli_realize(setup, tmp_path):
    from wo.cli import main

    idx, lm, sents, d = setup
    src = tmp_path / "bags.txt"
    src.write_bytes("cat the on sat mat the .\n".encode() + b"bad \xff\xfe utf8\n" + b"barked dog The loudly .\n")
    out = tmp_path / "out.jsonl"
    rc = main(["gyro", "realize", "--index", str(d / "dev.woidx"), "--lm", str(SHIPPED_LM), "--input", str(src),
               "--output", str(out), "--format", "jsonl", "--quiet", "--nbest", "2", "--levels", "phrases,bigram,unigram"])
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert rc == 1 and len(recs) == 3                        # the bad line is reported, not lost
    assert recs[1]["status"] == "error"
    assert sorted(recs[0]["text"].split()) == sorted("cat the on sat mat the .".split())
    assert sorted(recs[2]["text"].split()) == sorted("barked dog The loudly .".split())
    assert all(len(r["nbest"]) <= 2 for r in recs)


def test_engines_derive_the_same_language_on_real_bags(setup):
    """The chart (C pools) and the OpenFst acceptors give the same unpruned language for real
    bags with the index's phrase rules (repeated words included)."""
    idx, lm, sents, _ = setup
    g = GyroRealizer(idx, lm)
    n = 0
    for s in sents:
        if not 5 <= len(s) <= 7:
            continue
        phrases = [ph for ph in idx.lookup(s, min_n=2, max_n=5)] + [[w] for w in s if len(s) % 2]
        chart, fst = g.language(s, phrases, "chart"), g.language(s, phrases, "fst")
        assert chart == fst
        assert all(sorted(x.split()) == sorted(s) for x in chart)
        n += bool(chart)
    assert n >= 5


def _fewest_rules(toks, rules):
    """The fewest rules whose concatenation is toks (None if none): brute-force DP."""
    best = [0] + [None] * len(toks)
    for j in range(1, len(toks) + 1):
        for i in range(j):
            if best[i] is not None and tuple(toks[i:j]) in rules:
                c = best[i] + 1
                best[j] = c if best[j] is None else min(best[j], c)
    return best[-1]


def test_weighted_grammar_scores_lm_minus_penalty_per_rule(setup):
    """Unpruned, the weighted grammar's best string maximises log10 p(s) - penalty x (fewest
    rules deriving s) over all permutations (brute force on real bags)."""
    idx, lm, sents, _ = setup
    checked = 0
    for bag in _small_bags(sents, 6):
        g = GyroRealizer(idx, lm, r=len(bag) + 1, levels=("weighted",), rule_penalty=0.7)
        res = g.realize(bag)
        rules = {tuple(p) for p in idx.lookup(bag, min_n=2, max_n=5)} | {(w,) for w in bag}
        best = max(lm.score(list(p)) - 0.7 * _fewest_rules(p, rules) for p in set(itertools.permutations(bag)))
        got = lm.score(res.text.split()) - 0.7 * _fewest_rules(res.text.split(), rules)
        assert got == pytest.approx(best, abs=1e-4)
        checked += 1
    assert checked == 6


def test_mbr_prefers_the_consensus_string():
    from wo.gyro.realize import mbr_rerank

    finals = [("x y z w".split(), -1.0), ("a b c d".split(), -1.1), ("a b c e".split(), -1.15),
              ("a b d c".split(), -1.2)]
    out = mbr_rerank(finals, scale=1.0)
    assert out[0][0] == "a b c d".split()             # shares most n-gram mass with the others
    assert sorted(" ".join(t) for t, _ in out) == sorted(" ".join(t) for t, _ in finals)
    assert mbr_rerank(finals, scale=50.0)[0][0] == "x y z w".split()    # sharp posterior: the MAP string


@pytest.mark.slow
def test_cli_jobs_give_the_same_bytes(setup, tmp_path):
    """--jobs 1 and --jobs 2 write identical output (CoNLL-U input, shuffled per sentence)."""
    from wo.cli import main

    src = EWT / "en_ewt-ud-dev.conllu.xz"
    sub = tmp_path / "dev20.conllu"
    from wo.io.text import open_text

    blocks, cur = [], []
    with open_text(str(src)) as fh:
        for ln in fh:
            cur.append(ln)
            if not ln.strip():
                blocks.append("".join(cur))
                cur = []
                if len(blocks) == 20:
                    break
    sub.write_text("".join(blocks), encoding="utf-8")
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}.txt"
        assert main(["gyro", "realize", "--lm", str(SHIPPED_LM), "--input", str(sub), "--output", str(out),
                     "--jobs", jobs, "--quiet", "--beta", "2"]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and len(outs[0].splitlines()) == 20


def test_dependency_model_reranks_the_nbest_and_gives_the_tree(setup):
    """``dep=``: the "+depLM" rescoring with the shipped dependency model.  Every output is a
    permutation with a projective tree over it; weight 0 keeps the LM's choice; a large weight
    picks the candidate the dependency model rates best; the CLI writes the tree in jsonl."""
    from wo.dep.linearizer import Linearizer
    from wo.io import is_projective
    from wo.io.trees import permutation

    _, lm, sents, d = setup
    dep = Linearizer.load(str(ROOT / "corpora" / "models" / "wo-ewt-dep-lm.wo"))
    bags = [[s[j] for j in permutation(len(s), 1, i)] for i, s in enumerate(sents) if 5 <= len(s) <= 12][:12]
    plain = GyroRealizer(None, lm, nbest=8)
    lm_only = GyroRealizer(None, lm, dep=dep, dep_weight=0.0, dep_nbest=8, dep_own=False)
    heavy = GyroRealizer(None, lm, dep=dep, dep_weight=1000.0, dep_nbest=8)
    moved = 0
    for bag in bags:
        p, z, h = plain.realize(bag), lm_only.realize(bag), heavy.realize(bag)
        assert z.text == p.text                        # weight 0, same candidates: the LM's best
        assert sorted(h.text.split()) == sorted(bag)
        assert len(h.heads) == len(bag) and h.heads.count(0) == 1 and is_projective(h.heads)
        cands = [t.split() for t, _ in p.nbest] + [dep.linearize(bag).tokens]
        assert h.dep_score == pytest.approx(max(dep.parse(c).score for c in cands), abs=1e-6)
        moved += h.text != p.text
    assert moved >= 3                                  # the syntax model disagrees with the LM
    src = d / "bags.txt"
    src.write_text("".join(" ".join(b) + "\n" for b in bags[:3]), encoding="utf-8")
    out = d / "dep.jsonl"
    from wo.cli import main

    assert main(["gyro", "realize", "--lm", str(SHIPPED_LM), "--dep-model", str(ROOT / "corpora" / "models" / "wo-ewt-dep-lm.wo"),
                 "--input", str(src), "--input-format", "bag", "--format", "jsonl", "--output", str(out), "--quiet"]) == 0
    recs = [json.loads(ln) for ln in out.read_text(encoding="utf-8").splitlines()]
    assert len(recs) == 3 and all(len(r["heads"]) == len(r["text"].split()) for r in recs)


def test_timeout_gives_every_word_once_in_bounded_time():
    """--timeout: a 300-word bag stops parsing when the time is out (checked per cell) and gets
    the greedy LM order, status "timeout" (it took 71 s without a timeout)."""
    import random
    import time

    from wo.gyro.realize import GyroRealizer
    from wo.lm.model import LanguageModel

    root = pathlib.Path(__file__).resolve().parent.parent
    lm = LanguageModel.load(str(root / "corpora" / "models" / "wo-en-4gram.wolm"))
    words = (root / "README.md").read_text(encoding="utf-8").split()[:3000]
    bag = random.Random(1).sample(words, 300)
    g = GyroRealizer(None, lm, levels=("unigram",), timeout=1.0)
    t0 = time.perf_counter()
    r = g.realize(bag)
    assert r.status == "timeout" and sorted(r.text.split()) == sorted(bag)
    assert time.perf_counter() - t0 < 30.0


def test_split_bound_and_join_filter(setup):
    """max_split 1 still derives every permutation (unpruned: the best string of the language);
    a join filter too loose to bind changes nothing; the default slack joins fewer pairs and
    every output stays a permutation scored by the LM."""
    import numpy as np

    from wo._fast._gyro import GyroChart

    idx, lm, sents, _ = setup
    for bag in _small_bags(sents, 6):
        g = GyroRealizer(idx, lm, r=len(bag) + 1, nbest=3, levels=("unigram",), max_split=1)
        best = max(lm.score(list(p)) for p in itertools.permutations(bag))
        assert g.realize(bag).log10_prob == pytest.approx(best, abs=1e-4)
    bags = [s for s in sents if 12 <= len(s) <= 20][:6]
    for bag in bags:
        words = sorted(set(bag))
        mult = np.array([bag.count(w) for w in words], dtype=np.int32)
        lmid = np.ascontiguousarray(lm.word_ids(words), dtype=np.int32)
        flat = np.arange(len(words), dtype=np.int32)
        off = np.arange(len(words) + 1, dtype=np.int64)
        runs = {}
        for slack in (-1.0, 100.0, 0.5):
            ch = GyroChart(lm.core, lmid, mult)
            st, toks, sc = ch.parse(flat, off, r=3, beta=4.0, row_cap=300, keep=50, slack=slack)
            assert st == 0
            runs[slack] = (toks.tolist(), sc.tolist(), ch.pair_calls)
            for row, s in zip(toks[:5], sc[:5]):
                assert sorted(words[i] for i in row) == sorted(bag)
                assert s == pytest.approx(lm.score([words[i] for i in row]), abs=1e-3)
        assert runs[100.0][:2] == runs[-1.0][:2]
        assert runs[0.5][2] < runs[-1.0][2]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_impossible_word_in_the_lm_is_realised_not_a_crash(tmp_path, jobs):
    """An ARPA unigram of log10 probability -inf (KenLM reads it as such) in a bag of 12+ words:
    the chart subtracted cached boundary scores (-inf - -inf = NaN) and its selection walked
    past the candidate array: exit 139, every sentence lost (TerminatedWorkerError with jobs)."""
    import subprocess
    import sys

    words = "the a dog cat sat on mat quickly big small red blue green house tree ran".split()
    uni = [f"-99\t<s>\t-0.3", "-1.0\t</s>", "-2.0\t<unk>"] + [
        f"{'-inf' if w == 'dog' else format(-1.0 - i * 0.05, '.3f')}\t{w}\t-0.2" for i, w in enumerate(words)]
    arpa = tmp_path / "inf.arpa"
    arpa.write_text("\\data\\\nngram 1=%d\nngram 2=3\n\n\\1-grams:\n%s\n\n\\2-grams:\n-0.5\t<s> the\n-0.3\tthe dog\n"
                    "-0.4\tdog sat\n\n\\end\\\n" % (len(uni), "\n".join(uni)), encoding="utf-8")
    bags = tmp_path / "bags.txt"
    bags.write_text(" ".join(words) + "\n" + " ".join(reversed(words)) + "\nthe dog sat\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    p = subprocess.run([sys.executable, "-m", "wo.cli", "gyro", "realize", "--lm", str(arpa), "--input", str(bags),
                        "--output", str(out), "--jobs", jobs, "--quiet"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-800:]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [sorted(x.split()) for x in lines] == [sorted(words), sorted(words), sorted("the dog sat".split())]
