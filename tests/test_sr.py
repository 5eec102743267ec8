"""SR'19 shallow track (T1): reader, make-input, inflection candidates, joint search, CLI."""
import pathlib

import numpy as np
import pytest

from tests.conftest import wo_cli
from wo.dep.core import DepSearch
from wo.io import read_conllu
from wo.eval import sr_score
from wo.sr.inflect import Lexicon, coverage
from wo.sr.instance import align, sr_instance
from wo.sr.realizer import Realizer, realize_many
from wo.sr.t1 import format_t1, lin_values, make_input, read_t1
from wo.sr.train import train_sr

ROOT = pathlib.Path(__file__).resolve().parent.parent
PARTUT = ROOT / "corpora" / "sr19-en_partut"
EWT = ROOT / "corpora" / "ud-en-ewt"


@pytest.fixture(scope="module")
def partut():
    return {
        "t1_train": read_t1(str(PARTUT / "T1-en_partut-ud-train.conllu.xz")),
        "t1_dev": read_t1(str(PARTUT / "T1-en_partut-ud-dev.conllu.xz")),
        "ud_train": read_conllu(str(PARTUT / "UD-en_partut-ud-train.conllu.xz")),
        "ud_dev": read_conllu(str(PARTUT / "UD-en_partut-ud-dev.conllu.xz")),
    }


@pytest.fixture(scope="module")
def lex(partut):
    return Lexicon.build(partut["ud_train"], english=True)


@pytest.fixture(scope="module")
def sr_model(tmp_path_factory, partut, lex):
    path = tmp_path_factory.mktemp("sr") / "partut.wo"
    train_sr(partut["t1_train"][:400], [], [], 2, str(path), lex, hash_bits=18, log=lambda m: None)
    return str(path)


def test_reader_on_real_partut_files(partut):
    tr, dv = partut["t1_train"], partut["t1_dev"]
    assert len(tr) == 1781 and len(dv) == 156
    assert not any(s.error for s in tr + dv)
    assert all(s.orig and sorted(s.orig) == list(range(1, len(s) + 1)) for s in tr)
    assert all(s.orig is None and not any(s.forms) for s in dv)
    assert sum(1 for s in tr for v in s.lin if v) == 7008
    # lemma in column 2, gold form in column 3, task features removed from FEATS
    for s, u in zip(tr[:200], partut["ud_train"][:200]):
        for i in range(len(s)):
            p = s.orig[i] - 1
            assert s.forms[i] == u.forms[p] and s.lemmas[i] == u.lemmas[p]
            assert "lin=" not in s.feats[i] and "original_id" not in s.feats[i]


def test_lin_rule_reproduces_every_partut_annotation(partut):
    checked = 0
    for s, u in zip(partut["t1_train"], partut["ud_train"]):
        lv = lin_values(u.heads, u.deprels)
        for i in range(len(s)):
            assert s.lin[i] == lv[s.orig[i] - 1], (u.sent_id, i)
            checked += bool(s.lin[i])
    assert checked == 7008


def test_reading_t1_on_two_processes_gives_what_one_reads(tmp_path, ewt_dev):
    """read_t1(jobs=2) parses contiguous parts of the file in two processes: the same
    sentences, indices, line numbers and per-sentence errors (a broken block in the second
    half, a comment-only block) as one process."""
    blocks = [format_t1(make_input(s, 7, i, True)) for i, s in enumerate(ewt_dev[:61])]
    broken = blocks[45].split("\n")
    broken[3] = broken[3].replace("\t", " ", 2)          # a token line with too few columns
    blocks[45] = "\n".join(broken)
    blocks.insert(20, "# only a comment\n")
    path = tmp_path / "mixed.t1"
    path.write_text("\n".join(blocks), encoding="utf-8")
    one, two = read_t1(str(path)), read_t1(str(path), jobs=2)
    assert len(one) == 61 and one == two
    bad = [s for s in two if s.error]
    assert len(bad) == 1 and "columns" in bad[0].error and bad[0].line > 1
    # a line that is not UTF-8 in the part a worker reads, three parts
    data = path.read_bytes().split(b"\n")
    at = max(i for i, ln in enumerate(data) if ln.startswith(b"3\t"))
    data[at] = data[at].replace(b"\t", b"\xff\t", 1)
    path.write_bytes(b"\n".join(data))
    one, three = read_t1(str(path)), read_t1(str(path), jobs=3)
    assert len(one) == 61 and one == three
    assert "UTF-8" in three[-1].error


def test_make_input_then_gold_reconstruction_returns_the_sentence(tmp_path, ewt_dev):
    ud = ewt_dev[:300]
    path = tmp_path / "dev.t1"
    path.write_text("\n".join(format_t1(make_input(s, 7, i, True)) for i, s in enumerate(ud)), encoding="utf-8")
    back = read_t1(str(path))
    assert len(back) == len(ud)
    moved = 0
    for s, u in zip(back, ud):
        assert s.error is None
        toks, heads = [None] * len(s), [None] * len(s)
        for i, p in enumerate(s.orig):
            toks[p - 1] = s.forms[i]
            heads[p - 1] = 0 if s.heads[i] == 0 else s.orig[s.heads[i] - 1]
        assert toks == u.forms and heads == u.heads
        moved += s.orig != list(range(1, len(s) + 1))
    assert moved > 250   # ids really are scrambled
    plain = make_input(ud[0], 7, 0, False)
    assert plain.orig is None and not any(plain.forms)


@pytest.mark.slow
def test_candidate_coverage_on_real_dev_slice(ewt_train, ewt_dev):
    train = ewt_train
    dev = ewt_dev[:500]
    lx = Lexicon.build(train, english=True)
    c = coverage(lx, dev)
    assert c["coverage"] >= 0.98
    assert c["candidates_per_token"] <= 1.3
    # without the English module (any UD language: treebank lexicon + learned edit scripts)
    plain = Lexicon.build(train)
    assert plain.lang == "xx" and not plain.english
    c2 = coverage(plain, dev)
    assert c2["coverage"] >= 0.97 and "dictionary" not in c2["by_source"] and c2["by_source"]["learned"] > 0


def test_gold_trees_reachable_with_groups_labels_and_lin(partut, lex):
    core = DepSearch(np.zeros(1 << 12, dtype=np.float32), 12)
    for s, u in zip(partut["t1_train"], partut["ud_train"]):
        inst = sr_instance(s, lex, s.orig)
        ok, order, _, _ = core.forced(*inst.arrays(), inst.gold, 10 ** 6, **inst.extra())
        assert ok, u.sent_id
        assert [inst.leaf_form[leaf].lower() for leaf in order] == [w.lower() for w in u.forms]


@pytest.mark.slow
def test_alignment_recovers_original_ids(partut, lex):
    n = same = 0
    for s, u in zip(partut["t1_train"][:200], partut["ud_train"][:200]):
        p = align(s, u.forms, lex)
        if p is not None:
            n += 1
            toks = [None] * len(s)
            for i, q in enumerate(p):
                toks[q - 1] = s.forms[i]
            same += toks == u.forms
    assert n >= 150 and same == n


@pytest.mark.slow
def test_outputs_use_one_form_per_token_and_respect_tree_labels_and_lin(sr_model, partut):
    dev = partut["t1_dev"]
    res = realize_many(sr_model, dev)
    r = Realizer.load(sr_model)
    for s, out in zip(dev, res):
        n = len(s)
        assert out.status in ("ok", "completed")
        assert sorted(out.order) == list(range(n))
        for j, i in enumerate(out.order):
            cands, _ = r.lexicon.candidates(s.lemmas[i], s.upos[i], s.xpos[i], s.feats[i])
            assert out.tokens[j].lower() in [c.lower() for c in cands]
            assert out.labels[j] == s.deprels[i]
            h = out.heads[j]
            assert (h == 0) == (s.heads[i] == 0)
            if h:
                assert out.order[h - 1] == s.heads[i] - 1
        pos = {i: j for j, i in enumerate(out.order)}
        for i in range(n):
            if s.lin[i]:
                h = s.heads[i] - 1
                side = [k for k in range(n) if s.heads[k] - 1 == h and s.lin[k] and
                        (s.lin[k] > 0) == (s.lin[i] > 0)]
                assert (pos[i] > pos[h]) == (s.lin[i] > 0)
                rank = sorted(side, key=lambda k: abs(pos[k] - pos[h])).index(i) + 1
                assert rank == abs(s.lin[i])
    refs = [u.text() for u in partut["ud_dev"]]
    assert sr_score([o.text for o in res], refs).bleu > 50.0


@pytest.mark.slow
def test_jobs_and_input_order_do_not_change_the_output(sr_model, partut):
    dev = partut["t1_dev"][:40]
    a = [o.text for o in realize_many(sr_model, dev, jobs=1)]
    b = [o.text for o in realize_many(sr_model, dev, jobs=2, chunk=7)]
    assert a == b
    # re-scramble the ids of every sentence: same realisation
    ud = []
    for i, s in enumerate(dev):
        perm = list(reversed(range(len(s))))
        where = {old: new for new, old in enumerate(perm)}
        pick = lambda xs: [xs[k] for k in perm]  # noqa: E731
        heads = [0 if s.heads[k] == 0 else where[s.heads[k] - 1] + 1 for k in perm]
        ud.append(type(s)(pick(s.lemmas), pick(s.upos), pick(s.xpos), pick(s.feats), heads,
                          pick(s.deprels), pick(s.lin), pick(s.forms), None, s.sent_id, s.line))
    c = [o.text for o in realize_many(sr_model, ud)]
    assert a == c


def test_sr_metrics():
    refs = ["The cat sat on the mat .", "a b c d e"]
    perfect = sr_score(refs, refs)
    assert perfect.bleu == pytest.approx(100.0) and perfect.dist == pytest.approx(100.0)
    assert perfect.exact == 100.0
    low = sr_score(["the cat sat on the mat .", "e d c b a"], refs)
    assert low.exact == 50.0 and low.bleu < 100.0 and low.dist < 100.0
    # lower-casing: case differences do not count
    assert sr_score(["THE CAT SAT ON THE MAT .", "a b c d e"], refs).bleu == pytest.approx(100.0)


def _wo(*args):
    return wo_cli(args)


@pytest.mark.slow
def test_sr_cli_end_to_end(tmp_path, sr_model, model_path):
    t1 = tmp_path / "dev.t1"
    ud = PARTUT / "UD-en_partut-ud-dev.conllu.xz"
    p = _wo("sr", "make-input", "--ud", str(ud), "--out", str(t1))
    assert p.returncode == 0, p.stderr
    # an .xz output is compressed and reads back the same
    p = _wo("sr", "make-input", "--ud", str(ud), "--out", str(tmp_path / "dev.t1.xz"))
    assert p.returncode == 0, p.stderr
    import lzma
    assert lzma.open(tmp_path / "dev.t1.xz", "rt", encoding="utf-8").read() == t1.read_text(encoding="utf-8")
    # break one sentence: a head out of range; the others must still be realised
    blocks = t1.read_text(encoding="utf-8").split("\n\n")
    lines = blocks[3].split("\n")
    cols = lines[2].split("\t")
    cols[6] = "999"
    lines[2] = "\t".join(cols)
    blocks[3] = "\n".join(lines)
    t1.write_text("\n\n".join(blocks), encoding="utf-8")
    out = tmp_path / "out.txt"
    p = _wo("sr", "realize", "--model", sr_model, "--input", str(t1), "--output", str(out), "--quiet")
    assert p.returncode == 1
    assert f"{t1}:" in p.stderr and "Traceback" not in p.stderr
    text = out.read_text(encoding="utf-8")
    assert text.count("# sent_id = ") == 156 and text.count("# text = ") == 156
    tok = (tmp_path / "out.txt.tok").read_text(encoding="utf-8").splitlines()
    assert len(tok) == 156
    first = [ln for ln in text.splitlines() if ln.startswith("# text = ")][0][9:]
    assert first[0].isupper()
    p = _wo("sr", "evaluate", "--hyp", str(out), "--ref", str(ud))
    assert p.returncode == 0 and "NIST" in p.stdout and "case:lc" in p.stdout
    # a word-ordering model is not an SR model: clear error, exit 2
    p = _wo("sr", "realize", "--model", model_path, "--input", str(t1), "--output", str(out))
    assert p.returncode == 2 and "not an SR model" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.slow
def test_sr_with_the_lm(tmp_path, partut, lex):
    """An SR model trained with the n-gram LM names it in its header; the realizer loads it
    (or decodes without it on request); outputs stay one form per token in a permutation of
    the input, and the LM changes some of them."""
    from wo.model import Model

    lm_path = ROOT / "corpora" / "models" / "wo-en-4gram.wolm"
    path = tmp_path / "sr-lm.wo"
    rec = train_sr(partut["t1_train"][:200], [], [], 1, str(path), lex, hash_bits=18, log=lambda m: None,
                   lm=str(lm_path))
    assert rec["lm"]["file"] == "wo-en-4gram.wolm"
    m = Model.load(str(path))
    assert m.header["lm"]["order"] == 4
    with_lm = Realizer(m)
    assert with_lm.stage("order").lm is not None and with_lm.stage("order").lm.order == 4
    without = Realizer(m, lm="none")
    assert without.stage("order").lm is None
    dev = partut["t1_dev"][:40]
    a = [with_lm.realize(s) for s in dev]
    b = [without.realize(s) for s in dev]
    for s, r in zip(dev, a):
        assert sorted(r.order) == list(range(len(s)))
    assert any(x.tokens != y.tokens for x, y in zip(a, b))
    assert [r.tokens for r in realize_many(str(path), dev[:10])] == [r.tokens for r in a[:10]]


@pytest.mark.slow
def test_decoding_score_cache_changes_no_sr_output(sr_model, partut):
    """SR input (candidate forms, label-conjoined templates, lin): the decoding score caches of
    the dependency grammar change no output and no score of the returned edge."""
    r = Realizer.load(sr_model)
    srch = r.stage("order").core.search
    for s in partut["t1_dev"][:25]:
        outs = []
        for flag in (True, False):
            srch.score_cache = flag
            outs.append(r.realize(s).text)
            stored, fresh = srch.derivation_score(srch.last_goal)
            assert abs(stored - fresh) <= 1e-9 * max(1.0, abs(fresh))
        assert outs[0] == outs[1]
    srch.score_cache = True


def test_article_by_the_sound_of_the_next_word():
    from wo.sr.lang.en import agree_articles, article

    an = ["apple", "hour", "honest", "FBI", "MRI", "8", "11", "18,000", "X-ray", "umbrella"]
    a = ["car", "university", "European", "one", "CD", "US", "1,100", "5", "useful", "house"]
    assert [article(w) for w in an] == ["an"] * len(an)
    assert [article(w) for w in a] == ["a"] * len(a)
    out = agree_articles(["An", '"', "car", '"', "a", "idea", "a"], ["a", "_", "car", "_", "a", "idea", "a"])
    assert out == ["A", '"', "car", '"', "an", "idea", "a"]
    # only articles change: "a" as another lemma's form is left alone
    assert agree_articles(["a", "apple"], ["have", "apple"]) == ["a", "apple"]


@pytest.mark.slow
def test_realised_articles_agree_and_only_articles_change(sr_model, partut):
    from wo.sr.lang.en import article

    dev = partut["t1_dev"]
    on, off = Realizer.load(sr_model), Realizer.load(sr_model, articles=False)
    changed = 0
    refs = [u.text() for u in partut["ud_dev"]]
    hyp_on, hyp_off = [], []
    for s in dev:
        a, b = on.realize(s), off.realize(s)
        assert a.order == b.order
        for j, (x, y) in enumerate(zip(a.tokens, b.tokens)):
            lemma = s.lemmas[a.order[j]].lower()
            if x != y:
                assert lemma in ("a", "an") and {x.lower(), y.lower()} == {"a", "an"}
                changed += 1
            if lemma in ("a", "an") and x.lower() in ("a", "an") and j + 1 < len(a.tokens) \
                    and a.tokens[j + 1][:1].isalnum():
                assert x.lower() == article(a.tokens[j + 1])
        hyp_on.append(a.text); hyp_off.append(b.text)
    assert changed > 0
    assert sr_score(hyp_on, refs).bleu > sr_score(hyp_off, refs).bleu


@pytest.mark.slow
def test_question_labels_mark_exactly_the_question_clause_dependents(lex, sr_model, ewt_dev):
    from wo.sr.instance import question_heads

    ud = [u for u in ewt_dev[:600] if "?" in u.forms]
    assert len(ud) >= 20
    marked = 0
    for i, u in enumerate(ud):
        s = make_input(u, 1, i)
        q = question_heads(s)
        qm = [j for j in range(len(s)) if s.lemmas[j] == "?" and s.deprels[j] == "punct"]
        assert sorted(s.heads[j] - 1 for j in qm) == [h for h in range(len(s)) if q[h]]
        a, b = sr_instance(s, lex), sr_instance(s, lex, question_labels=True)
        assert (a.tok_word == b.tok_word).all() and (a.given_head == b.given_head).all()
        for c, j in enumerate(a.canon):
            under_q = s.heads[j] > 0 and q[s.heads[j] - 1]
            assert (a.tok_label[c] != b.tok_label[c]) == under_q
            marked += under_q
    assert marked > 50
    # the model records the option in its order stage, and decodes as recorded
    assert Realizer.load(sr_model).stage("order").question_labels is True
    from wo.model import Model
    m = Model.load(sr_model)
    next(d for d in m.header["sr"]["stages"] if d["stage"] == "order-search")["question_labels"] = False
    assert Realizer(m).stage("order").question_labels is False


@pytest.mark.slow
def test_rerank_lm_comes_from_the_model_header_and_rescoring_picks_the_best_goal(sr_model, ewt_dev):
    """A search-orderer SR model names its reranking LM in its header (``decode.rerank_lm``);
    "none" turns it off, a missing file is refused; the reranked output maximises F + w log10 p
    over the strings the plain decode's popped goals give."""
    from wo.model import Model, ModelError

    root = pathlib.Path(__file__).resolve().parent.parent
    m = Model.load(sr_model)
    order = next(d for d in m.header["sr"]["stages"] if d["stage"] == "order-search")
    order.update(rerank_lm=str(root / "corpora" / "models" / "wo-en-4gram.wolm"), rerank_weight=1.0,
                 patience_factor=100.0)
    on, off = Realizer(m), Realizer(m, rerank_lm="none")
    assert on.stage("order").rerank_lm is not None and off.stage("order").rerank_lm is None
    assert on.stage("order").rerank_weight == 1.0
    m2 = Model.load(sr_model)
    next(d for d in m2.header["sr"]["stages"] if d["stage"] == "order-search")["rerank_lm"] = "missing.wolm"
    with pytest.raises(ModelError, match="missing.wolm"):
        Realizer(m2)
    st = on.stage("order")
    sents = [make_input(s, 1, i) for i, s in enumerate(ewt_dev[:60])]
    moved = 0
    for s in sents:
        a, b = off.realize(s), on.realize(s)
        assert sorted(a.order) == sorted(b.order) == list(range(len(s)))
        moved += a.tokens != b.tokens
        if a.tokens != b.tokens:   # the reranker's choice scores at least as well as the decoder's
            fa = st.rerank_lm.score(a.tokens) * st.rerank_weight
            fb = st.rerank_lm.score(b.tokens) * st.rerank_weight
            assert fb > fa
    assert moved >= 3
