"""The local orderer of `wo sr` (wo.sr.order): the domain search, its lin constraints, training,
and a tiny Portuguese model realising held-out sentences next to the search orderer."""
import itertools

import numpy as np
import pytest

from wo.eval import sr_score
from wo.model import Model
from wo.sr.order import END, START, LocalOrderer, gold_domains, train_local
from wo.sr.forms import choose_forms
from wo.sr.instance import rerank_lin as _rerank, training_tree
from wo.sr.t1 import make_input

from .test_sr_multi import wo


def _domains(sents):
    out = []
    for i, s in enumerate(sents):
        x = make_input(s, 3, i, True)
        heads, lin, _ = training_tree(x, x.orig)
        out += gold_domains(heads, [p - 1 for p in x.orig], x.lemmas, x.upos, x.deprels, x.feats, lin,
                            [f.lower() for f in x.forms])
    return out


@pytest.fixture(scope="module")
def trained(pt_train):
    """Weights of a local orderer trained on 340 Portuguese sentences (3 epochs, 2^18 weights)."""
    train = pt_train
    doms = _domains(train[:340])
    stats = []
    w = train_local(doms, 3, hash_bits=18, beam=8, on_epoch=lambda ep, avg, st: stats.append(st))
    return w, stats, train


def test_training_makes_fewer_updates_each_epoch(trained):
    _, stats, _ = trained
    ups = [s["updates"] for s in stats]
    assert ups[0] > ups[1] > ups[2] > 0


def test_domain_search_finds_the_best_order_of_small_domains(trained):
    """With a beam wider than the number of partial orders, the search is exact: its order
    scores at least as high as every permutation's (brute force)."""
    w, _, train = trained
    lo = LocalOrderer(w, 18, beam=64)
    doms = [d for d in _domains(train[340:]) if 2 <= len(d) <= 4 and not any(d.side)]
    assert len(doms) >= 20
    for d in doms[:40]:
        seq, score, _, _ = lo.order(d)
        w_ = lo.w
        best = max(sum(w_[lo.seq_features(d, p, True)]) for p in itertools.permutations(range(len(d))))
        assert score == pytest.approx(float(best), abs=1e-4)
        assert float(sum(w_[lo.seq_features(d, seq, True)])) == pytest.approx(score, abs=1e-4)


def test_lin_constraints_are_obeyed(trained):
    """Tokens with lin = -r lie left of their head, r-th closest among the marked ones; +r right."""
    w, _, train = trained
    lo = LocalOrderer(w, 18, beam=8)
    marked = 0
    for i, s in enumerate(train[340:]):
        x = make_input(s, 3, i)
        lin = _rerank(x.heads, x.lin)
        words = [lemma.lower() for lemma in x.lemmas]
        order, _ = lo.linearize(x.heads, x.lemmas, x.upos, x.deprels, x.feats, lin, words)
        assert sorted(order) == list(range(len(x)))
        pos = {t: p for p, t in enumerate(order)}
        for t, v in enumerate(lin):
            if not v:
                continue
            marked += 1
            h = x.heads[t] - 1
            assert (pos[t] < pos[h]) == (v < 0)
            sib = [u for u in range(len(x)) if x.heads[u] == x.heads[t] and lin[u] and (lin[u] < 0) == (v < 0)]
            closer = sorted(sib, key=lambda u: abs(pos[u] - pos[h]))
            assert [abs(lin[u]) for u in closer] == sorted(abs(lin[u]) for u in closer)
    assert marked > 50


def test_contradictory_lin_is_dropped_not_fatal(trained):
    w, _, train = trained
    lo = LocalOrderer(w, 18, beam=8)
    d = next(d for d in _domains(train[340:]) if len(d) >= 3)
    dep = next(x for x in range(len(d)) if x != d.hi)
    d.side[dep], d.rank[dep] = -1, 1
    d.side[d.hi] = 0
    other = next(x for x in range(len(d)) if x not in (dep, d.hi))
    d.side[other], d.rank[other] = 1, 1
    # both constraints can be met: dep left, other right
    seq, _, _, _ = lo.order(d)
    assert seq.index(dep) < seq.index(d.hi) < seq.index(other)
    d.side[other], d.rank[other] = -1, 1   # two left tokens with the same rank: still ordered, no error
    seq, _, _, _ = lo.order(d)
    assert sorted(seq) == list(range(len(d)))


def test_choose_forms_follows_the_lm(tmp_path):
    from wo.lm.estimation import train as train_lm
    from wo.lm.model import LanguageModel

    (tmp_path / "t.txt").write_text("o gato come\n" * 20 + "a casa\n" * 20, encoding="utf-8")
    lm = LanguageModel.from_tables(train_lm([str(tmp_path / "t.txt")], 3, log=lambda m: None))
    assert choose_forms(lm, [["a", "o"], ["gato"], ["come"]], penalty=0.0) == ["o", "gato", "come"]
    assert choose_forms(lm, [["o", "a"], ["casa"]], penalty=0.0) == ["a", "casa"]
    # a large penalty keeps the first candidate
    assert choose_forms(lm, [["a", "o"], ["gato"], ["come"]], penalty=50.0) == ["a", "gato", "come"]


@pytest.mark.slow
def test_local_model_realises_held_out_sentences_better_than_the_search(pt_local, pt):
    rec = pt_local["record"]
    assert rec["orderer"] == "local" and rec["train_sentences"] == 340 and len(rec["epochs"]) == 3
    head, _ = Model.read_header(pt_local["model"])
    assert [d["stage"] for d in head["sr"]["stages"]] == ["lift", "candidates", "order-local", "forms", "language",
                                                        "contractions"] and head["weights_dtype"] == "q8"
    refs = [" ".join(s.forms) for s in pt_local["test"]]
    scores = {}
    for name, fx in (("local", pt_local), ("search", pt)):
        for kind in ("t1", "gold_t1"):
            out = pt_local["dir"] / f"{name}.{kind}.txt"
            wo("sr", "realize", "--model", fx["model"], "--input", fx[kind], "--output", out)
            hyps = (pt_local["dir"] / f"{name}.{kind}.txt.tok").read_text(encoding="utf-8").splitlines()
            assert len(hyps) == len(refs)
            assert all(sorted(h.lower().split()) == sorted(r.lower().split())
                       for h, r in zip(hyps, refs)) or kind == "t1"
            scores[name, kind] = sr_score(hyps, refs).bleu
    # measured: local 78.9 / 83.3, search 43.1 / 44.3 (inflected / gold forms, 40 sentences)
    assert scores["local", "gold_t1"] > scores["search", "gold_t1"] + 5
    assert scores["local", "t1"] > scores["search", "t1"] + 5
    assert scores["local", "gold_t1"] >= scores["local", "t1"]
    # multiword tokens contracted in the submission's text
    text = (pt_local["dir"] / "local.t1.txt").read_text(encoding="utf-8")
    assert " de o " not in text.lower()


def test_a_timeout_gives_a_complete_order(trained):
    import time

    w, _, _ = trained
    lo = LocalOrderer(w, 18, beam=16)
    n = 400                                     # one head with 399 dependents, some with lin
    heads = [0] + [1] * (n - 1)
    rel = ["root"] + ["punct" if i % 7 == 0 else "obl" for i in range(1, n)]
    lin = _rerank(heads, [0] + [(-1 if i % 2 else 1) * (i // 7 + 1) if i % 7 == 0 else 0 for i in range(1, n)])
    words = [f"w{i % 37}" for i in range(n)]
    args = (heads, words, ["NOUN"] * n, rel, ["_"] * n, lin, words)
    order, _ = lo.linearize(*args, deadline=time.perf_counter())     # already past: the fallback order
    assert lo.timed_out and sorted(order) == list(range(n))
    pos = {t: p for p, t in enumerate(order)}
    assert all((pos[t] < pos[0]) == (v < 0) for t, v in enumerate(lin) if v)   # lin still holds
    full, _ = lo.linearize(*args)                                    # no deadline: the search's order
    assert not lo.timed_out and sorted(full) == list(range(n)) and full != order


def test_feature_indices_follow_the_core_hash_convention(trained):
    """A feature's index is MurmurHash3 of its uint32 key words, as the compiled core hashes
    (wo._fast._hash.hash_words), so a compiled orderer can read the same model files."""
    from wo._fast._hash import hash_words

    w, _, train = trained
    lo = LocalOrderer(w, 18)
    d = next(d for d in _domains(train[340:]) if len(d) >= 3)
    keys = lo._step_feats(d, START, 0, 1, False) + lo._step_feats(d, 0, 1, END, True)
    assert len(keys) > 20 and all(all(0 <= a < 2 ** 32 for a in k) for k in keys)
    assert lo._index(keys) == [hash_words(np.asarray(k, dtype=np.uint32)) & ((1 << 18) - 1) for k in keys]


def _exact_share(w, bits, doms) -> float:
    """Share of domains whose best order is the reference order."""
    lo = LocalOrderer(w, bits, beam=8)
    return float(np.mean([tuple(lo.order(d)[0]) == tuple(d.gold) for d in doms]))


def test_domain_set_packs_take_and_concat_exactly(pt_train):
    from wo.sr.order import DomainSet

    doms = _domains(pt_train[:60])
    ds = DomainSet.of(doms)
    assert len(ds) == len(doms)
    idx = [7, 0, len(doms) - 1, 3]
    parts = DomainSet.concat([ds.take(idx[:2]), ds.take(idx[2:])])
    for j, i in enumerate(idx):
        a, b, ctx, hi, gold = parts.view(j)
        a0, b0 = LocalOrderer._arrays(doms[i])
        assert np.array_equal(a, a0) and np.array_equal(b, b0)
        assert ctx == tuple(doms[i].ctx) and hi == doms[i].hi and list(gold) == list(doms[i].gold)


def test_parameter_mixing_trains_as_well_as_one_process(trained):
    """Iterative parameter mixing over 2 loky processes, and the same code path on a loopback
    Dask cluster: the mixed models order held-out domains about as well as sequential training
    (measured, 340 training sentences, 3 epochs, 500 held-out domains: 0.896 of them ordered
    exactly as the reference after sequential training, 0.880 after mixing)."""
    from dask.distributed import LocalCluster

    w1, _, train = trained
    doms = _domains(train[:340])
    held = _domains(train[340:])
    stats = []
    w2 = train_local(doms, 3, hash_bits=18, beam=8, jobs=2, on_epoch=lambda ep, avg, st: stats.append(st))
    assert [s["shards"] for s in stats] == [2, 2, 2] and stats[0]["updates"] > stats[2]["updates"] > 0
    e1, e2 = _exact_share(w1, 18, held), _exact_share(w2, 18, held)
    assert e2 > e1 - 0.04 and e2 > 0.8
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cl:
        w3 = train_local(doms, 3, hash_bits=18, beam=8, jobs=2, backend="dask", scheduler=cl.scheduler_address)
    assert np.array_equal(w2, w3)   # the same shards, seeds and mixing: the same weights


def test_one_dispatch_of_several_perceptrons_trains_each_as_alone(pt_train):
    """wo sr train --seeds/--order-r2l with --jobs 2: every perceptron's shards go to the loky
    workers in one dispatch per epoch (start_epochs); each perceptron's weights are those of its
    epochs run alone, and the record counts the updates of all."""
    from wo.sr.order import DomainSet, LocalTrainer, start_epochs

    ds = DomainSet.of(_domains(pt_train[:200]))
    back = ds.mirrored()

    def trainers():
        return [LocalTrainer(ds, 16, 8, seed=1, jobs=2), LocalTrainer(back, 16, 8, seed=2, jobs=2)]

    together, alone = trainers(), trainers()
    for ep in (1, 2):
        rec = start_epochs(together, ep)()
        ups = [t.epoch(ep)["updates"] for t in alone]
        assert rec["updates"] == sum(ups) > 0 and rec["shards"] == 2
    for a, b in zip(together, alone):
        assert np.array_equal(a.averaged(), b.averaged()) and a.learner.avg_count == b.learner.avg_count
    assert not np.array_equal(together[0].averaged(), together[1].averaged())
    with pytest.raises(ValueError):
        start_epochs([], 1)


@pytest.mark.parametrize("suffix,sig,ends", [(None, False, False), ("chars:2", False, False), ("morpheme", False, False),
                                             (None, True, False), ("chars:2", True, False), (None, False, True),
                                             ("morpheme", True, True)])
def test_compiled_step_features_are_the_documented_templates(pt_train, suffix, sig, ends):
    """The compiled search's feature indices are those of the Python templates
    (LocalOrderer._step_feats), with and without the order suffix, the domain signature and the phrase ends;
    with them, every step has their templates on top."""
    from wo.sr.order import suffix_function

    sfx = suffix_function(suffix)
    doms = []
    for i, s in enumerate(pt_train[:30]):
        x = make_input(s, 3, i, True)
        heads, lin, _ = training_tree(x, x.orig)
        doms += gold_domains(heads, [p - 1 for p in x.orig], x.lemmas, x.upos, x.deprels, x.feats, lin,
                             [f.lower() for f in x.forms], sfx, sig)
    lo = LocalOrderer(np.zeros(1 << 18, dtype=np.float32), 18, suffix=suffix, sig=sig, ends=ends)
    plain = LocalOrderer(np.zeros(1 << 18, dtype=np.float32), 18)
    if sig:   # the head item carries the relation set of the domain's dependents
        assert all(d.kr[d.hi] != 0 for d in doms)
    for d in doms[:60]:
        seq = list(reversed(range(len(d))))
        want, p2, p, hp = [], START, START, False
        for x in seq + [END]:
            want += lo._index(lo._step_feats(d, p2, p, x, hp))
            hp = hp or x == d.hi
            p2, p = p, x
        got = lo.seq_features(d, seq, True)
        assert sorted(got.tolist()) == sorted(want)
        extra = len(got) - len(plain.seq_features(d, seq, True))
        assert extra == ((0 if suffix is None else 7 * len(d) + 4) + (3 * len(d) + 2 if sig else 0)
                         + (4 * (len(d) - 1) if ends else 0))


def test_order_suffix_specs():
    from wo.sr.order import suffix_function

    assert suffix_function(None) is None and suffix_function("none") is None
    assert suffix_function("chars:2")("kitaplar", "kitap") == "ar"
    m = suffix_function("morpheme")
    assert m("학교에서", "학교+에서") == "+에서" and m("학교", "학교") == "" and m("+", "+") == ""
    for bad in ("chars:0", "chars:x", "suffix", "chars:9"):
        with pytest.raises(ValueError):
            suffix_function(bad)
    p = wo("sr", "train", "--train", "x.t1", "--model", "y.wo", "--lang", "pt", "--set", "order.suffix=bogus", check=False)
    assert p.returncode == 2 and "order.suffix" in p.stderr and "Traceback" not in p.stderr



def test_mirrored_domains_are_the_domains_seen_from_the_right(pt_train):
    from wo.sr.order import DomainSet, mirror_arrays

    doms = _domains(pt_train[:60])
    ds = DomainSet.of(doms)
    back = ds.mirrored()
    for i, d in enumerate(doms):
        a, b, ctx, hi, gold = back.view(i)
        a0, b0 = mirror_arrays(*LocalOrderer._arrays(d))
        assert np.array_equal(a, a0) and np.array_equal(b, b0) and list(gold) == list(d.gold)[::-1]
        assert list(a0[4]) == list(LocalOrderer._arrays(d)[0][6])           # first words <-> last words
        assert list(b0[0]) == [-x for x in LocalOrderer._arrays(d)[1][0]]   # lin sides negated
    assert np.array_equal(back.mirrored().atoms, ds.atoms) and np.array_equal(back.mirrored().gold, ds.gold)


def test_sequence_scores_are_the_search_scores(trained):
    """The compiled scores of whole orders equal the beam search's scores of the same orders."""
    w, _, train = trained
    lo = LocalOrderer(w, 18, beam=16)
    seen = 0
    for d in _domains(train[340:])[:200]:
        lo.order(d)
        if len(lo.final_beam) < 2:
            continue
        a, b = lo._arrays(d)
        seqs = np.array([s for _, s in lo.final_beam], dtype=np.int32)
        got = lo.core.sequence_scores(a, b, *d.ctx, d.hi, seqs)
        assert got == pytest.approx([sc for sc, _ in lo.final_beam], abs=1e-4)
        seen += 1
    assert seen >= 20


@pytest.fixture(scope="module")
def pt_r2l(tmp_path_factory, pt_train, pt_test):
    from tests.conftest import _tiny_pt_model

    return _tiny_pt_model(tmp_path_factory.mktemp("ptr"), "ptr.wo", pt_train, pt_test, "--epochs", 3,
                          "--set", "order.r2l=0.5", "--set", "tune.lms=false")


def test_a_right_to_left_model_rescores_each_domains_final_beam(pt_r2l):
    from wo.sr.realizer import Realizer
    from wo.sr.t1 import read_t1

    m = Model.load(pt_r2l["model"])
    order = next(d for d in m.header["sr"]["stages"] if d["stage"] == "order-local")
    assert order["r2l"] == 0.5 and m.hash_bits == 19   # two tables of 2^18
    assert pt_r2l["record"]["r2l"] == 0.5
    r = Realizer(m, rerank_lm="none")
    lo = r.stage("order").orderer
    assert lo.r2l is not None and lo.r2l_weight == 0.5 and lo.bits == 18
    sents = read_t1(pt_r2l["t1"])
    both = [r.realize(s).order for s in sents]
    assert all(sorted(o) == list(range(len(s))) for o, s in zip(both, sents))
    lo.r2l_weight = 0.0   # the left-to-right half alone: as a model without the backward table
    alone = [r.realize(s).order for s in sents]
    head = dict(m.header, sr=dict(m.header["sr"], stages=[
        {k: v for k, v in d.items() if k != "r2l"} for d in m.header["sr"]["stages"]]))
    plain = Realizer(Model(np.array(m.weights[:1 << 18]), 18, m.tagdict, head), rerank_lm="none")
    assert alone == [plain.realize(s).order for s in sents]
    assert any(a != b for a, b in zip(both, alone))   # the backward model changes some orders
    lo.r2l_weight = 0.5
    from wo.sr.order import mirror_arrays

    checked = 0
    for d in _domains(pt_r2l["test"]):
        final = lo.search(*lo._arrays(d), d.ctx, d.hi)[4]
        if len(final) < 2:
            continue
        got = lo._rescore_r2l(d, final)
        a, b = mirror_arrays(*lo._arrays(d))
        back = lo.r2l.sequence_scores(a, b, *d.ctx, d.hi, np.array([q[::-1] for _, q in final], dtype=np.int32))
        want = sorted(((sc + 0.5 * v, q) for (sc, q), v in zip(final, back)), key=lambda x: -x[0])
        assert [q for _, q in got] == [q for _, q in want]
        assert [x for x, _ in got] == pytest.approx([x for x, _ in want])
        checked += 1
    assert checked >= 20
