"""IDL-expressions: parser, IDL-graph unfolding against the operator semantics, and the
LM-intersection searches (A*, greedy A*, beam, BFS) on real bags with the shipped LM."""
import json
import random

import pytest

from wo.idl.expr import IDLSyntaxError, Op, Word, bag, language, parse, words
from wo.idl.graph import bag_unfolding, compile_expr, unfold_language
from tests.conftest import ROOT, wo_cli

LM = ROOT / "corpora" / "models" / "wo-en-4gram.wolm"
PAPER = "I(finally, C(L(D(C(the, prisoners), C(the, captives))), were, released))"


@pytest.fixture(scope="module")
def lm():
    from wo.lm.model import LanguageModel

    return LanguageModel.load(str(LM))


def test_the_papers_expression_accepts_and_rejects_the_strings_it_lists():
    e = parse(PAPER)
    lang = language(e)
    assert unfold_language(compile_expr(e)) == lang
    for s in ["finally the prisoners were released", "the captives finally were released",
              "the prisoners were finally released"]:
        assert tuple(s.split()) in lang
    for s in ["the finally captives were released", "the prisoners were released",
              "finally the captives released were"]:
        assert tuple(s.split()) not in lang
    # the same expression in Nederhof & Satta's notation
    uni = parse("\u2016(finally, \u00b7(\u00d7(\u2228(\u00b7(the, prisoners), \u00b7(the, captives))), were, released))")
    assert uni == e and len(lang) == 8


def _random_expr(rng, depth=0):
    if depth >= 3 or rng.random() < 0.35:
        return Word(rng.choice("abcd"))
    op = rng.choice("CIDL")
    if op == "L":
        return Op("L", (_random_expr(rng, depth + 1),))
    return Op(op, tuple(_random_expr(rng, depth + 1) for _ in range(rng.randint(2, 3))))


def test_unfolding_gives_the_language_of_the_operator_semantics_on_random_expressions():
    rng = random.Random(5)
    n_locked = 0
    for _ in range(300):
        e = _random_expr(rng)
        if len(words(e)) > 9:
            continue
        n_locked += "L(" in str(e)
        assert unfold_language(compile_expr(e)) == language(e), str(e)
        assert parse(str(e)) == e                      # printing round-trips
    assert n_locked > 30


def test_parser_errors_give_line_and_column():
    cases = {"C(a, b": (1, 2, "unbalanced"), "C(a, b))": (1, 8, "unbalanced"),
             "I(a, C())": (1, 6, "empty operator"), "X(a, b)": (1, 1, "unknown operator 'X'"),
             "C(a,, b)": (1, 5, "expression expected"), "L(a, b)": (1, 1, "exactly one"),
             'C(a, "b': (1, 6, "unterminated")}
    for text, (line, col, msg) in cases.items():
        with pytest.raises(IDLSyntaxError) as ei:
            parse(text, line=7)
        assert (ei.value.line, ei.value.column) == (7, col) and msg in ei.value.message, text
    # operator names are words unless "(" follows; quoted words may hold anything
    assert parse('C(I, "(", ",", L)') == Op("C", (Word("I"), Word("("), Word(","), Word("L")))


def test_bag_unfolding_formula_counts_the_states_bfs_unfolds(lm):
    from wo.idl.realize import IDLRealizer

    for toks in (["a", "b", "c"], ["the", "cat", "the", "mat", "."], ["x", "x", "x", "y"]):
        r = IDLRealizer(lm, algorithm="bfs").realize(bag(toks))
        cnt = {}
        for t in toks:
            cnt[t] = cnt.get(t, 0) + 1
        assert r.full_unfolding == bag_unfolding(list(cnt.values()), lm.order - 1)
        assert r.states == r.full_unfolding              # every state unfolded


def _dev_bags(ewt_dev, lo, hi, n, seed=13):
    out = []
    for i, s in enumerate(ewt_dev):
        toks = list(s.forms)
        if lo <= len(toks) <= hi:
            rng = random.Random(f"{seed}:{i}")
            sh = list(toks)
            rng.shuffle(sh)
            out.append((toks, sh))
        if len(out) == n:
            break
    return out


def test_astar_finds_the_bfs_optimum_on_real_bags_and_unfolds_less(lm, ewt_dev):
    from wo.idl.realize import IDLRealizer

    bfs, astar = IDLRealizer(lm, algorithm="bfs"), IDLRealizer(lm, algorithm="astar")
    paper = IDLRealizer(lm, algorithm="astar", lookahead=False)     # the paper's heuristic alone
    visited = []
    unfolded = [0, 0]
    for ref, sh in _dev_bags(ewt_dev, 3, 7, 25):
        a, b, c = astar.realize(bag(sh)), bfs.realize(bag(sh)), paper.realize(bag(sh))
        assert a.status == b.status == c.status == "ok"
        assert a.log10_prob == pytest.approx(b.log10_prob, abs=1e-4)
        assert c.log10_prob == pytest.approx(b.log10_prob, abs=1e-4)
        assert sorted(a.text.split()) == sorted(ref)
        assert a.log10_prob >= lm.score(ref) - 1e-4          # no string beats the optimum
        visited.append(a.states / a.full_unfolding)
        unfolded[0] += a.states
        unfolded[1] += c.states
    assert sum(visited) / len(visited) < 0.5
    assert unfolded[0] < unfolded[1]          # the lookahead's tighter bound unfolds fewer states


def test_every_algorithm_outputs_each_bag_word_once_and_scores_as_wo_lm_score(lm, ewt_dev):
    from wo.idl.realize import IDLRealizer

    for alg in ("astar", "greedy-astar", "beam"):
        r = IDLRealizer(lm, algorithm=alg, max_states=200_000)
        for ref, sh in _dev_bags(ewt_dev, 8, 12, 4):
            out = r.realize(bag(sh))
            assert sorted(out.text.split()) == sorted(ref), alg
            assert out.log10_prob == pytest.approx(lm.score(out.text.split()), abs=1e-9)
    # the state bound: a path is still completed greedily, with every word once
    ref, sh = _dev_bags(ewt_dev, 18, 25, 1)[0]
    out = IDLRealizer(lm, algorithm="astar", max_states=500).realize(bag(sh))
    assert out.status == "max-states" and sorted(out.text.split()) == sorted(ref)


def test_nothing_is_ever_inserted_into_a_locked_phrase(lm):
    from wo.idl.realize import IDLRealizer

    # free, the LM puts "united" between "the" and "states"; the lock forbids it
    free = IDLRealizer(lm).realize(parse("I(the, states, president, of, the, united)")).text
    assert "the united states" in free
    e = parse("I(L(C(the, states)), president, of, the, united)")
    for alg in ("astar", "greedy-astar", "beam", "bfs"):
        out = IDLRealizer(lm, algorithm=alg).realize(e).text
        assert "the states" in out and sorted(out.split()) == sorted(words(e)), (alg, out)
    # two locks side by side stay apart, and a lock inside an interleave inside a lock
    e = parse("I(L(C(a, b, c)), L(C(x, y, z)), L(I(u, L(C(v, w)))))")
    lang = unfold_language(compile_expr(e))
    assert lang == language(e) and len(lang) == 6 * 2
    assert all("a b c" in " ".join(s) and "x y z" in " ".join(s) and "v w" in " ".join(s) for s in lang)


def test_cli_reports_malformed_lines_and_realises_the_others(tmp_path):
    inp = tmp_path / "in.idl"
    inp.write_text(PAPER + "\nC(a, b\nI(cat, the)\nFOO(x)\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    p = wo_cli(["idl", "realize", "--lm", LM, "--input", inp, "--output", out, "--format", "jsonl", "--quiet"])
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert f"{inp}:2:2: unbalanced brackets" in p.stderr and f"{inp}:4:1: unknown operator 'FOO'" in p.stderr
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["status"] for r in recs] == ["ok", "error", "ok", "error"]
    assert recs[2]["text"] == "the cat"
    assert set(recs[0]) >= {"text", "log10_prob", "states", "full_unfolding", "seconds", "status"}
    # the reported log10_prob is what wo lm score --per-sentence gives
    hyp = tmp_path / "hyp.txt"
    hyp.write_text(recs[0]["text"] + "\n")
    q = wo_cli(["lm", "score", "--lm", LM, "--input", hyp, "--per-sentence"])
    assert q.returncode == 0, q.stderr
    assert float(q.stdout.split()[0]) == pytest.approx(recs[0]["log10_prob"], abs=1e-5)


def test_readme_idl_example_gives_the_output_it_shows():
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"\$ echo '(.*?)' \\\n\s*\| wo idl realize --lm (\S+)\n(.*?)\n", text)
    assert m, "README has no wo idl example"
    p = wo_cli(["idl", "realize", "--lm", ROOT / m.group(2), "--quiet"], stdin=m.group(1) + "\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == m.group(3).strip()


def test_batch_output_does_not_depend_on_jobs(tmp_path, ewt_dev):
    from wo.idl.realize import run

    inp = tmp_path / "bags.txt"
    inp.write_text("".join(" ".join(sh) + "\n" for _, sh in _dev_bags(ewt_dev, 5, 12, 12)), encoding="utf-8")
    outs = []
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}.jsonl"
        summ = run(str(LM), str(inp), str(out), input_format="bag", output_format="jsonl", jobs=jobs,
                   algorithm="greedy-astar", k=2)
        assert summ.sentences == 12 and summ.failed == 0
        outs.append([json.loads(x)["text"] for x in out.read_text().splitlines()])
    assert outs[0] == outs[1] and all(outs[0])


def test_search_scores_from_the_heuristic_tables_equal_the_lm(lm, ewt_dev):
    """A* and A*_k score with the candidate tables (no LM query in the search); the path's
    log10 probability must be the LM's, with and without the one-step lookahead."""
    from wo.idl.realize import IDLRealizer

    for alg in ("astar", "greedy-astar"):
        for la in (True, False):
            r = IDLRealizer(lm, algorithm=alg, k=2, lookahead=la)
            for ref, sh in _dev_bags(ewt_dev, 4, 9, 6):
                g, s = r.search_for(bag(sh))
                res = s.run(alg, 2, -1.0, 1_000_000, 0.0, False, la)
                words = [g.tokens[t] for t in res["tokens"]][1:-1]     # without <s>, </s>
                assert sorted(words) == sorted(ref)
                assert res["log10_prob"] == pytest.approx(lm.score(words), abs=1e-4)


def test_bag_unfolding_closed_form_matches_enumeration_and_is_fast():
    """The generating-function count equals a direct enumeration of the states (sequences of the
    last K words x sub-multisets used before them) on small bags, and a 200-word bag takes well
    under a second (it took a minute by enumeration, outside any --timeout)."""
    import random
    import time

    from wo.idl.graph import bag_unfolding

    def enumerate_states(counts, K):
        W, n, total = len(counts), sum(counts), 2

        def seqs(left, L):
            if L == 0:
                yield left
                return
            for w in range(W):
                if left[w]:
                    yield from seqs(left[:w] + [left[w] - 1] + left[w + 1:], L - 1)
        for k in range(0, min(K, n + 1)):
            total += sum(1 for _ in seqs(list(counts), k))
        if n >= K:
            for rest in seqs(list(counts), K):
                prod = 1
                for c in rest:
                    prod *= c + 1
                total += prod
        return total

    rng = random.Random(3)
    for _ in range(200):
        counts = [rng.randint(1, 3) for _ in range(rng.randint(1, 5))]
        K = rng.randint(0, 4)
        assert bag_unfolding(counts, K) == enumerate_states(counts, K), (counts, K)
    t0 = time.perf_counter()
    assert bag_unfolding([1] * 200, 3) > 10 ** 60
    assert time.perf_counter() - t0 < 5.0
