"""CCG word ordering on the shared search core (Zhang & Clark 2015, §3), on real EWT-CCG data.

Small slices so the file runs well under a minute: the grammar is read off all of
corpora/ccg-en/train (2 s), a model is trained on 300 training sentences for one epoch.
"""
import json
import os

import numpy as np
import pytest

from wo.ccg import read_auto
from wo.ccg.auto import format_derivation
from wo.ccg.core import CCGSearch
from wo.ccg.instance import build_tree, make_instance
from wo.ccg.linearizer import Linearizer, read_ccg_items, run
from wo.ccg.train import build_tables, scrambled, train
from wo.cli import main
from wo.eval.metrics import score
from wo.model import Model

ROOT = os.path.join(os.path.dirname(__file__), "..", "corpora", "ccg-en")


@pytest.fixture(scope="module")
def data(ccg_train, ccg_dev):
    """(train, dev) derivations of corpora/ccg-en (read once per session)."""
    return ccg_train, ccg_dev


@pytest.fixture(scope="module")
def tables(data):
    """CCGTables of the grammar read off all of train."""
    return build_tables(data[0])[3]


@pytest.fixture(scope="module")
def model_path(data, tmp_path_factory):
    """A model trained on 300 train sentences for one epoch (dev[:60] for its BLEU)."""
    out = str(tmp_path_factory.mktemp("ccg") / "small-ccg.wo")
    train(data[0][:300], data[1][:60], 1, out, hash_bits=20, log=lambda m: None)
    return out


def shape(tree):
    """Categories, words and bracketing of a derivation (heads left out)."""
    if tree.is_leaf:
        return (str(tree.cat), tree.word)
    return (str(tree.cat),) + tuple(shape(c) for c in tree.children)


def tables_cover(d, tables):
    """True if forced decoding can rebuild ``d`` with these tables: every lexical category is
    proposed for its word and POS, every binary and unary rule instance is applied, and no
    unary rule sits on another unary rule (an edge has at most one)."""
    for leaf in d.leaves():
        k = tables.cat_id.get(str(leaf.cat))
        if k is None or k not in tables.lexical(leaf.word, leaf.pos):
            return False
    for nd in d.nodes():
        ids = [tables.cat_id.get(str(c.cat)) for c in nd.children] + [tables.cat_id.get(str(nd.cat))]
        if None in ids:
            return False
        if len(nd.children) == 2:
            key = (ids[0] << 32) | ids[1]
            j = np.searchsorted(tables.bin_key, key)
            if j >= len(tables.bin_key) or tables.bin_key[j] != key:
                return False
            rng = range(tables.bin_start[j], tables.bin_start[j + 1])
            if ids[2] not in [int(tables.bin_res[r]) for r in rng]:
                return False
        else:
            if tables.unary_rule(ids[0], ids[1]) < 0:
                return False
            if not nd.children[0].is_leaf and len(nd.children[0].children) == 1:
                return False
    return True


def test_forced_decoding_reaches_gold(data, tables):
    """Forced decoding rebuilds the reference derivation of every dev sentence the tables
    cover (and of most others: the gold lexical category is added in training instances)."""
    dev = data[1][:200]
    cs = CCGSearch(tables, np.zeros(1 << 16, dtype=np.float32), 16)
    covered = reached = reached_covered = 0
    for i, d in enumerate(dev):
        forms, pos, perm = scrambled(d, 1, i)
        inst = make_instance(forms, pos, tables, gold=d, gold_pos=perm)
        ok, order, trees, _ = cs.forced(inst, 200_000)
        cov = tables_cover(d, tables)
        covered += cov
        reached += ok
        if cov:
            assert ok, f"dev sentence {i} is covered by the grammar but forced decoding failed"
            reached_covered += 1
        if ok:   # the derivation found is the reference one
            assert len(trees) == 1
            tree, idx = build_tree(trees[0], inst, tables, forms)
            assert [perm[j] for j in idx] == list(range(len(d)))
            assert shape(tree) == shape(d.root)
    print(f"\nforced decoding: {reached}/{len(dev)} dev sentences reach the gold derivation "
          f"({reached / len(dev):.1%}); {covered} covered by the tables, all reached")
    assert covered >= 0.5 * len(dev)
    assert reached_covered == covered


@pytest.mark.slow
def test_dp_chart_one_edge_per_signature_and_the_best(data, model_path):
    """After decoding, the chart holds one edge per DP-signature, and no expanded edge of a
    kept signature scores higher than the kept edge (completions off: they expand nothing)."""
    lin = Linearizer.load(model_path, complete_beam=0)
    g, s = lin.core.grammar, lin.core.search
    checked = 0
    for i, d in enumerate(data[1][:30]):
        forms, pos, _ = scrambled(d, 1, i)
        lin.linearize(forms, pos)
        chart = g.dp_signatures_of_chart(s)
        sigs = [c[1] for c in chart]
        assert len(sigs) == len(set(sigs)), "two chart edges share a DP-signature"
        best = {sig: sc for _, sig, sc, _ in chart}
        for e, sig, sc in g.popped_signatures(s):
            if sig in best:
                # every expanded edge with a kept signature scores no higher than the kept one
                assert sc <= best[sig] + 1e-9
                checked += 1
    assert checked > 0


@pytest.mark.slow
def test_outputs_are_permutations_with_derivations(data, model_path):
    """Every output contains each input word exactly once, with a derivation over them."""
    lin = Linearizer.load(model_path)
    statuses = {}
    for i, d in enumerate(data[1][:80]):
        forms, pos, _ = scrambled(d, 1, i)
        r = lin.linearize(forms, pos)
        assert sorted(r.order) == list(range(len(forms)))
        assert r.tokens == [forms[j] for j in r.order]
        leaves = r.derivation.leaves()
        assert [x.word for x in leaves] == r.tokens
        assert sum(1 for h in r.heads if h == 0) == 1
        statuses[r.status] = statuses.get(r.status, 0) + 1
    print("\nstatus of 80 dev sentences:", statuses)


@pytest.mark.slow
def test_bad_auto_input_reports_file_line_and_goes_on(data, model_path, tmp_path):
    """Malformed .auto derivations are reported as file:line and the others come out."""
    src = os.path.join(ROOT, "dev.auto.xz")
    import lzma

    with lzma.open(src, "rt", encoding="utf-8") as fh:
        lines = [next(fh).rstrip("\n") for _ in range(20)]
    lines[5] = lines[5].replace("(<L", "(<Q", 1)           # sentence 3, line 6
    lines[9] = "(<T S 0 2> (<L NP NN NN x NP>)"           # sentence 5, line 10: truncated
    bad = tmp_path / "bad.auto"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    msgs = []
    summ = run(model_path, str(bad), str(out), report=msgs.append)
    assert summ.sentences == 10 and summ.failed == 2
    assert msgs[0].startswith(f"{bad}:6: bad .auto derivation: unexpected token")
    assert msgs[1].startswith(f"{bad}:10: bad .auto derivation: truncated")
    got = out.read_text(encoding="utf-8").split("\n")[:-1]
    items, fmt = read_ccg_items(str(bad))
    assert fmt == "auto" and len(got) == 10
    for it, rec in zip(items, got):
        if it.error is None:
            assert sorted(rec.split()) == sorted(it.forms)
        else:
            assert rec == ""
    # the CLI: exit code 1 (some sentences failed), the derivations written in .auto
    out2 = tmp_path / "out.auto"
    assert main(["ccg", "linearize", "--model", model_path, "--input", str(bad), "--output", str(out2),
                 "--format", "auto", "--quiet"]) == 1
    back = [d for d in read_auto(str(out2)) if d.error is None]
    assert len(back) == 8
    for d, rec in zip(back, [r for r, it in zip(got, items) if it.error is None]):
        assert d.words == rec.split()
        assert format_derivation(d.root)     # a well-formed derivation


@pytest.mark.slow
def test_short_training_beats_random_order(data, model_path):
    """A short training run orders dev bags clearly better than their shuffled order."""
    dev = data[1][:60]
    refs = [" ".join(d.words) for d in dev]
    rand = score([" ".join(scrambled(d, 1, i)[0]) for i, d in enumerate(dev)], refs).bleu
    m = Model.load(model_path)
    bleu = m.header["training"]["dev_bleu"]
    ep = m.header["training"]["epochs"][0]
    print(f"\n300 sentences x 1 epoch: dev[:60] BLEU {bleu:.2f}, random order {rand:.2f}; "
          f"{ep['updates']} updates, {ep['dp_pruned_gold_updates']} for gold edges pruned by a "
          "same-signature edge")
    assert bleu > rand + 2.0
    # the section 3.5 case (a gold edge pruned by a non-gold edge of its DP-signature) happens
    assert 0 < ep["dp_pruned_gold_updates"] < ep["updates"]


@pytest.mark.slow
def test_jobs_give_the_same_bytes(data, model_path, tmp_path):
    """--jobs 2 (longest sentences first, results in input order) = --jobs 1, byte for byte."""
    from wo.ccg.auto import write_auto

    src = tmp_path / "dev40.auto"
    write_auto(data[1][:40], str(src))
    outs = []
    for j in (1, 2):
        out = tmp_path / f"out{j}.jsonl"
        assert main(["ccg", "linearize", "--model", model_path, "--input", str(src), "--output", str(out),
                     "--format", "jsonl", "--jobs", str(j), "--quiet"]) in (0, 1)
        outs.append([json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()])
    strip = lambda recs: [{k: v for k, v in r.items() if k != "seconds"} for r in recs]   # noqa: E731
    assert len(outs[0]) == 40 and strip(outs[0]) == strip(outs[1])
