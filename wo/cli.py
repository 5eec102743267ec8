"""Command-line interface: ``wo <system> <verb>`` (``wo dep train|linearize``,
``wo ccg train|linearize``, ``wo sr ...``,
``wo lm train|convert|score``, ``wo idl realize``) and ``wo evaluate``; ``wo train`` and
``wo linearize`` are aliases of the ``dep`` verbs.  Every file argument accepts ``-`` for
standard input/output; ``--output`` defaults to standard output and ``--model`` to the
system's shipped model.  Progress bars and summaries go to stderr.

Exit codes: 0 success; 1 some sentences failed (their output line is the fallback, see
``--on-error``); 2 user error (bad arguments, unreadable or malformed input, bad model).
User errors print ``wo: file:line: message`` on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import List

from .io.text import display_name

EXIT_OK, EXIT_SOME_FAILED, EXIT_USER = 0, 1, 2


def _number(cast, ok, what):
    """An argparse type: ``cast`` the text and check it with ``ok``; else a one-line usage error."""
    def parse(text: str):
        try:
            v = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not ok(v) or v != v:
            raise argparse.ArgumentTypeError(f"{text!r}: must be {what}")
        return v
    parse.__name__ = cast.__name__
    return parse


_positive_int = _number(int, lambda v: v > 0, "a positive integer")
_positive_float = _number(float, lambda v: 0 < v < float("inf"), "a positive number")
_nonneg_float = _number(float, lambda v: 0 <= v < float("inf"), "0 or more")
_share = _number(float, lambda v: 0 < v <= 1, "in (0, 1]")


def _bar(quiet: bool, **kw):
    """A tqdm progress bar on stderr, shown only when stderr is a terminal and not ``--quiet``."""
    from tqdm import tqdm

    return tqdm(unit="sent", disable=quiet or not sys.stderr.isatty(), file=sys.stderr,
                dynamic_ncols=True, **kw)


def _err(msg: str) -> None:
    print(f"wo: {msg}", file=sys.stderr)


def cmd_train(a) -> int:
    """``wo dep train``: Algorithm 3 training on CoNLL-U, best dev epoch saved to --model."""
    from .dep.train import train
    from .io.conllu import read_conllu

    tr = read_conllu(a.train)
    dv = read_conllu(a.dev) if a.dev else []
    if a.dev_limit:
        dv = dv[:a.dev_limit]
    rec = train(tr, dv, a.epochs, a.model, hash_bits=a.hash_bits, beam_factor=a.beam_factor,
                train_budget_factor=a.train_budget, budget_factor=a.budget_factor, seed=a.seed,
                train_name=os.path.basename(a.train), dev_name=os.path.basename(a.dev or ""), lm=a.lm,
                lm_folds=a.lm_folds, given=a.train_given, dev_given=a.dev_given,
                question_labels=a.question_labels)
    print(json.dumps(rec, indent=1))
    return EXIT_OK


def _weighted_paths(specs, option: str, what: str, default: float) -> tuple:
    """((path, weight), ...) of PATH[:WEIGHT] specs (``default`` weight without one).
    Raises ValueError naming the option for a bad weight or a missing file."""
    out = []
    for spec in specs:
        path, w = spec, default
        head, sep, tail = spec.rpartition(":")
        if sep and not os.path.exists(spec):
            try:
                path, w = head, float(tail)
            except ValueError:
                raise ValueError(f"{option} {spec}: expected PATH or PATH:WEIGHT") from None
        if not os.path.exists(path):
            raise ValueError(f"{path}: no such {what} file ({option})")
        out.append((path, float(w)))
    return tuple(out)


def cmd_linearize(a) -> int:
    """``wo dep linearize``: batch linearization (wo.dep.run) with a progress bar on stderr."""
    from .dep.linearizer import run
    from .model import default_model

    a.model = a.model or default_model("dep")

    opts = {"beam_factor": a.beam_factor, "budget_factor": a.budget_factor, "max_pops": a.budget,
            "timeout": a.timeout, "patience_factor": a.patience, "lm": a.lm, "max_memory": a.max_memory}
    if a.tree_rerank:
        opts["tree_rerank"] = True
    try:
        if a.rerank_lm:
            opts["rerank_lms"] = _weighted_paths(a.rerank_lm, "--rerank-lm", "LM", a.rerank_weight)
        if a.rerank_model:
            opts["rerank_models"] = _weighted_paths(a.rerank_model, "--rerank-model", "model", 1.0)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USER
    return _batch_run(a, lambda bar: run(
        a.model, a.input, a.output, input_format=a.input_format, output_format=a.format, given=a.given,
        reveal_pos=a.reveal_pos, reveal_heads=a.reveal_heads, seed=a.seed, jobs=a.jobs, on_error=a.on_error,
        max_length=a.max_length, backend=a.backend, scheduler=a.scheduler, progress=bar.update,
        report=lambda m: (bar.clear(), _err(m)), **opts))


def _batch_run(a, go) -> int:
    """Run a batch (``go(bar)`` returns its Summary) with a progress bar; Ctrl-C, fail-fast and
    the closing summary are handled here (exit codes: 0 ok, 1 some failed, 2 user error, 130)."""
    from .io.batch import FailFast, Interrupted

    bar = _bar(a.quiet)
    try:
        summ = go(bar)
    except Interrupted as exc:
        bar.close()
        _err(str(exc))                         # how many records were kept, or that nothing was written
        return 130
    except FailFast as exc:
        bar.close()
        _err(str(exc))
        return EXIT_USER
    except BaseException:
        bar.close()                            # the caller or main reports it
        raise
    bar.close()
    if not a.quiet:
        print(f"wo: {display_name(a.input)} read as {summ.input_format}; {summ.sentences} sentences in "
              f"{summ.seconds:.2f}s ({summ.sentences_per_second:.1f} sentences/s), status {summ.status}",
              file=sys.stderr)
    return EXIT_SOME_FAILED if summ.failed else EXIT_OK


def _read_lines_or_conllu(path: str) -> List[str]:
    from .io.conllu import read_conllu
    from .io.text import open_text

    with open_text(path) as fh:
        head = fh.read(4096)
    if "\t" in head and any(ln.split("\t")[0].isdigit() for ln in head.splitlines()):
        return [s.text() for s in read_conllu(path)]
    with open_text(path) as fh:
        return [ln.rstrip("\n") for ln in fh]


def cmd_evaluate(a) -> int:
    """``wo evaluate``: sacrebleu BLEU (tokenize none), exact match, words recovered."""
    from .eval.metrics import score

    hyps = _read_lines_or_conllu(a.hyp)
    refs = _read_lines_or_conllu(a.ref)
    if len(hyps) != len(refs):
        _err(f"{a.hyp}: {len(hyps)} sentences but {a.ref} has {len(refs)}")
        return EXIT_USER
    sc = score(hyps, refs, tokenize=a.tokenize)
    if a.json:
        print(json.dumps(sc.__dict__))
    else:
        print(sc)
    return EXIT_OK


# ------------------------------------------------------------------ shared task (SR'19 T1)
def _sr_refs(path: str) -> List[str]:
    """Tokenized references: UD CoNLL-U (forms), T1 with gold forms and original_id, or text lines."""
    from .io.text import InputError, open_text
    from .sr.t1 import read_t1

    with open_text(path) as fh:
        head = fh.read(65536)
    if "original_id=" in head:
        out = []
        for s in read_t1(path):
            if s.error or not s.orig or not all(s.forms):
                raise InputError(path, s.line, s.error or "T1 reference without gold forms and original_id")
            toks = [""] * len(s)
            for i, p in enumerate(s.orig):
                toks[p - 1] = s.forms[i]
            out.append(" ".join(toks))
        return out
    return _read_lines_or_conllu(path)


def _sr_hyps(path: str) -> List[str]:
    """Hypotheses: one tokenized sentence per line; for an SR submission file its ``.tok`` twin."""
    from .io.text import STDIO, open_text

    with open_text(path) as fh:
        head = fh.read(4096)
    if head.startswith("# sent_id") and path != STDIO and os.path.exists(path + ".tok"):
        path = path + ".tok"
    elif head.startswith("# sent_id"):
        with open_text(path) as fh:
            return [ln.split("# text = ", 1)[1].rstrip("\n") for ln in fh if ln.startswith("# text = ")]
    return _read_lines_or_conllu(path)


def cmd_sr_make_input(a) -> int:
    """``wo sr make-input``: UD CoNLL-U -> SR'19 T1 input."""
    from .io.conllu import read_conllu
    from .io.text import AtomicWriter
    from .sr.t1 import format_t1, make_input

    sents = read_conllu(a.ud)
    w = AtomicWriter(a.out)
    try:
        for i, s in enumerate(sents):
            w.write(format_t1(make_input(s, a.seed, i, a.with_gold), a.with_gold))
        w.commit()
    except BaseException:
        w.abort()
        raise
    print(f"wo: {len(sents)} sentences written to {display_name(a.out, 'stdout')} (T1, seed {a.seed}"
          f"{', with gold forms and original_id' if a.with_gold else ''})", file=sys.stderr)
    return EXIT_OK


def _lexicon_sentences(train, refs_ud):
    """UD-like sentences in reference order for the lexicon: from the T1 gold or the UD file."""
    from .io.conllu import Sentence

    out = []
    for s in train:
        if s.error or not s.orig or not all(s.forms):
            continue
        surf = [0] * len(s)
        for i, p in enumerate(s.orig):
            surf[p - 1] = i
        pick = lambda xs: [xs[i] for i in surf]  # noqa: E731
        out.append(Sentence(pick(s.forms), pick(s.lemmas), pick(s.upos), pick(s.xpos), pick(s.feats),
                            [0] * len(s), pick(s.deprels), ["_"] * len(s)))
    return out + list(refs_ud or [])


def cmd_sr_train(a) -> int:
    """``wo sr train``: train an SR model on T1 input (gold from original_id or alignment)."""
    from .io.conllu import read_conllu
    from .sr.inflect import Lexicon
    from .sr.t1 import read_t1
    from .sr.train import train_sr

    train = read_t1(a.train)
    bad = [s for s in train if s.error]
    for s in bad[:20]:
        _err(f"{a.train}:{s.line}: {s.error} (sentence skipped)")
    ref_ud = read_conllu(a.train_ref) if a.train_ref else None
    train_refs = [s.forms for s in ref_ud] if ref_ud else None
    if train_refs is not None and len(train_refs) != len(train):
        _err(f"{a.train_ref}: {len(train_refs)} sentences but {a.train} has {len(train)}")
        return EXIT_USER
    if not a.lang:
        _err("wo sr train needs --lang CODE (ISO 639-1, e.g. en, fr, tr; 'xx' for no language module)")
        return EXIT_USER
    lex = Lexicon.build(_lexicon_sentences(train, ref_ud), lang=a.lang)
    from .sr.mwt import Contractions
    mwt_files = a.mwt or ([a.train_ref] if a.train_ref else [])
    contractions = Contractions.build(mwt_files) if mwt_files else None
    dev, dev_refs = [], []
    if a.dev:
        dev = read_t1(a.dev)
        dev_refs = _sr_refs(a.dev_ref or a.dev)
        if a.dev_limit:
            dev, dev_refs = dev[:a.dev_limit], dev_refs[:a.dev_limit]
        if len(dev_refs) != len(dev):
            _err(f"{a.dev_ref or a.dev}: {len(dev_refs)} references but {a.dev} has {len(dev)} sentences")
            return EXIT_USER
    meta = {"train": os.path.basename(a.train), "dev": os.path.basename(a.dev or ""), "lang": a.lang}
    if a.orderer == "local":
        from .sr.train import train_sr_local

        if a.lm:
            _err("--lm belongs to --orderer search")
            return EXIT_USER
        rec = train_sr_local(train, dev, dev_refs, a.epochs, a.model, lex, train_refs=train_refs,
                             hash_bits=a.hash_bits or 20, beam=a.order_beam, seed=a.seed, meta=meta,
                             contractions=contractions, compact=a.compact, jobs=a.jobs, backend=a.backend,
                             scheduler=a.scheduler)
        print(json.dumps(rec, indent=1))
        return EXIT_OK
    rec = train_sr(train, dev, dev_refs, a.epochs, a.model, lex, train_refs=train_refs,
                   hash_bits=a.hash_bits or 23, beam_factor=a.beam_factor, train_budget_factor=a.train_budget,
                   seed=a.seed,
                   meta={"train": os.path.basename(a.train), "dev": os.path.basename(a.dev or ""),
                         "lang": a.lang}, lm=a.lm, question_labels=not a.no_question_labels,
                   contractions=contractions, compact=a.compact, jobs=a.jobs, backend=a.backend,
                   scheduler=a.scheduler)
    print(json.dumps({k: v for k, v in rec.items()}, indent=1))
    return EXIT_OK


def cmd_sr_realize(a) -> int:
    """``wo sr realize``: T1 input -> SR submission file and its .tok twin."""
    import time

    from .lm.model import LMError
    from .model import Model, ModelError, default_model
    from .sr.realizer import PartialRun, Realizer, realize_many, write_submission
    from .sr.t1 import read_t1

    from .sr.models import find_model

    want = a.model or a.lang
    if want:
        path = find_model(want)
        if path is None:
            _err(f"{want}: no such model file, and no shipped SR model for that treebank or language "
                 f"(`wo sr models` lists them)")
            return EXIT_USER
        a.model = path
    a.model = a.model or default_model("sr")
    t0 = time.perf_counter()
    try:
        first = Realizer(Model.load(a.model), lm=a.lm, rerank_lm=a.rerank_lm)   # fail early on a wrong model or a missing LM
    except FileNotFoundError as exc:
        _err(f"{exc.filename}: no such file (--model, --lm or --rerank-lm)")
        return EXIT_USER
    except (ValueError, ModelError, LMError) as exc:
        _err(str(exc))
        return EXIT_USER
    from .sr.t1 import looks_like_ud

    if looks_like_ud(a.input):
        _err(f"{display_name(a.input)}: a UD CoNLL-U file (forms in column 2, # text lines, no lin), not T1 input; "
             f"make T1 input with `wo sr make-input --ud {a.input}`")
        return EXIT_USER
    sents = read_t1(a.input)
    for s in sents:
        if s.error:
            _err(f"{a.input}:{s.line}: {s.error}")
    bar = _bar(a.quiet, total=len(sents))
    opts = {"beam_factor": a.beam_factor, "budget_factor": a.budget_factor, "timeout": a.timeout,
            "patience_factor": a.patience, "lm": a.lm, "max_memory": a.max_memory}
    opts.update(rerank_lm=a.rerank_lm, rerank_weight=a.rerank_weight, gold_forms=not a.no_gold_forms,
                lift_threshold=a.lift_threshold, form_penalty=a.form_penalty)
    if a.tok is None and a.output != "-" and (os.path.isfile(a.output) or not os.path.exists(a.output)):
        a.tok = a.output + ".tok"     # no twin beside a pipe or a device (/dev/null.tok)
    try:
        res = realize_many(a.model, sents, jobs=a.jobs, progress=bar.update, backend=a.backend,
                           scheduler=a.scheduler, **opts)
    except PartialRun as exc:         # Ctrl-C: write the finished prefix, or leave the old files
        from .io.batch import Interrupted

        bar.close()
        k = len(exc.results)
        if k:
            write_submission(a.output, sents[:k], exc.results, tok=a.tok, lang=first.lexicon.lang)
        _err(str(Interrupted(k, len(sents), display_name(a.output, "stdout"), old_kept=not k)))
        return 130
    bar.close()
    failed = sum(1 for r in res if r.status == "error")
    for s, r in zip(sents, res):
        if r.status == "error" and not s.error:
            _err(f"{a.input}:{s.line}: {r.message}")
    write_submission(a.output, sents, res, tok=a.tok, lang=first.lexicon.lang)
    secs = time.perf_counter() - t0
    if not a.quiet:
        wrote = display_name(a.output, "stdout") + (f" and {a.tok}" if a.tok else "")
        print(f"wo: {len(sents)} sentences realised in {secs:.2f}s ({len(sents) / max(secs, 1e-9):.1f} "
              f"sentences/s); {failed} failed; wrote {wrote}", file=sys.stderr)
    return EXIT_SOME_FAILED if failed else EXIT_OK


def cmd_sr_models(a) -> int:
    """``wo sr models``: the shipped SR models with their language, training data, licence and
    test figures."""
    from .sr.models import list_models

    rows = list_models()
    if a.json:
        print(json.dumps(rows, indent=1))
        return EXIT_OK
    print(f"{'model':<12} {'lang':<5} {'MB':>5}  {'trained on':<34} {'test BLEU':>9} {'gold-form':>9}  licence")
    for r in rows:
        d, res = r["data"], r["results"]
        on = d.get("trained_on", "")
        if d.get("train_sentences"):
            on = f"{on} ({d['train_sentences']:,} sentences)"
        bleu = f"{res['bleu']:.2f}" if "bleu" in res else "-"
        gold = f"{res['gold_bleu']:.2f}" if "gold_bleu" in res else "-"
        print(f"{r['code']:<12} {r['lang']:<5} {r['bytes'] / 1e6:>5.1f}  {on:<34} {bleu:>9} {gold:>9}  "
              f"{d.get('licence', '')}")
    return EXIT_OK


def cmd_sr_evaluate(a) -> int:
    """``wo sr evaluate``: SR metrics (BLEU, NIST, DIST) on lower-cased tokens, plus sacrebleu."""
    from .eval.metrics import sr_score

    hyps, refs = _sr_hyps(a.hyp), _sr_refs(a.ref)
    if len(hyps) != len(refs):
        _err(f"{a.hyp}: {len(hyps)} sentences but {a.ref} has {len(refs)}")
        return EXIT_USER
    sc = sr_score(hyps, refs)
    print(json.dumps(sc.__dict__) if a.json else sc)
    return EXIT_OK


# ------------------------------------------------------------------ n-gram language models
def cmd_lm_train(a) -> int:
    """``wo lm train``: interpolated modified Kneser-Ney, ARPA or binary output."""
    from .lm.estimation import train
    from .lm.model import save_tables

    if bool(a.text) == bool(a.conllu):
        _err("give either --text (tokenized text) or --conllu (trees for --view)")
        return EXIT_USER
    if a.text and a.view != "words":
        _err(f"--view {a.view} needs trees: give --conllu instead of --text")
        return EXIT_USER
    from .lm.files import is_arpa_name

    if a.format != "probing" and is_arpa_name(a.out):
        _err(f"{a.out}: --format {a.format} is for wo's binary; an .arpa name writes ARPA")
        return EXIT_USER
    if a.view != "words" and is_arpa_name(a.out):
        _err(f"{a.out}: --view {a.view} is recorded in wo's binary header; ARPA cannot hold it")
        return EXIT_USER
    if a.tokenize and not a.text:
        _err("--tokenize needs --text (raw paragraphs)")
        return EXIT_USER
    tmp = None
    tok_stats = None
    log = (lambda m: None) if a.quiet else (lambda m: print(m, file=sys.stderr))
    try:
        paths = a.text
        if a.conllu:
            tmp = _view_text(a.conllu, a.view)
            paths = [tmp]
        elif a.tokenize:
            import tempfile

            from .lm.tokenize import tokenize_files

            fd, tmp = tempfile.mkstemp(prefix="wo-lm-tok-", suffix=".txt")
            os.close(fd)
            tok_stats = tokenize_files(a.text, tmp, lang=a.tokenize, jobs=a.jobs, backend=a.backend,
                                       scheduler=a.scheduler, log=log)
            log(f"tokenized: {tok_stats}")
            paths = [tmp]
        t = train(paths, a.order, vocab_min_count=a.vocab_min_count, prune=a.prune, jobs=a.jobs,
                  backend=a.backend, scheduler=a.scheduler, max_tokens=a.max_tokens, log=log)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USER
    finally:
        if tmp:
            os.unlink(tmp)
    if a.conllu:
        t.meta.update(sources=[os.path.basename(p) for p in a.conllu], view=a.view)
    if tok_stats is not None:
        t.meta.update(sources=[os.path.basename(p) for p in a.text], tokenized=dict(tok_stats, lang=a.tokenize))
    save_tables(t, a.out, a.format)
    if not a.quiet:
        _err(f"wrote {a.out} (order {t.order}, n-grams {t.counts()}, {a.format})")
    return EXIT_OK


def cmd_lm_tokenize(a) -> int:
    """``wo lm tokenize``: raw paragraphs -> tokenized sentences (wo.lm.tokenize)."""
    from .lm.tokenize import tokenize_files

    try:
        st = tokenize_files(a.input, a.output, lang=a.lang, jobs=a.jobs, backend=a.backend, scheduler=a.scheduler,
                            log=(lambda m: None) if a.quiet else _err)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USER
    if not a.quiet:
        _err(f"wrote {a.output}: " + ", ".join(f"{k} {v}" for k, v in st.items()))
    return EXIT_OK


def _view_text(conllu_paths, view: str) -> str:
    """A temporary text file with the ``view`` sequences (:mod:`wo.lm.views`) of the trees of
    the CoNLL-U files, one per line; the caller deletes it.  Raises ValueError (bad CoNLL-U,
    naming the file and line)."""
    import tempfile

    from .io.conllu import read_conllu
    from .lm.views import treebank_lines

    fd, tmp = tempfile.mkstemp(prefix="wo-view-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        try:
            for path in conllu_paths:
                for line in treebank_lines(read_conllu(path), view):
                    out.write(line + "\n")
        except BaseException:
            out.close()
            os.unlink(tmp)
            raise
    return tmp


def cmd_lm_convert(a) -> int:
    """``wo lm convert``: ARPA (any toolkit) -> wo binary (or ARPA)."""
    from .lm.files import LMError, is_arpa_name, read_arpa
    from .lm.model import save_tables
    from .lm.trie import file_format

    if file_format(a.arpa) != "arpa":     # hashed keys (probing) or a trie: the n-grams' words are not stored
        raise LMError(f"{a.arpa}: a wo binary LM ({file_format(a.arpa)}); convert from its ARPA file or "
                      f"write the format with `wo lm train --format`")
    if a.format != "probing" and is_arpa_name(a.out):
        raise LMError(f"{a.out}: --format {a.format} is for wo's binary; an .arpa name writes ARPA")
    t = read_arpa(a.arpa)
    save_tables(t, a.out, a.format)
    _err(f"wrote {a.out} (order {t.order}, n-grams {t.counts()}, {a.format})")
    return EXIT_OK


def cmd_lm_score(a) -> int:
    """``wo lm score``: corpus log10 probability and perplexity (KenLM query conventions)."""
    from .io.text import BOM, AtomicWriter, decode_utf8, read_bytes
    from .lm.model import LanguageModel

    lm = LanguageModel.load(a.lm)
    data = read_bytes(a.input)
    decode_utf8(data, a.input)        # invalid UTF-8: a user error naming file:line
    if data.startswith(BOM):          # not part of the first word
        data = data[len(BOM):]
    per, cs = lm.score_bytes(data)
    if a.per_sentence:
        w = AtomicWriter(a.output)
        try:
            for p in per:
                w.write(f"{p:.6f}")
            w.commit()
        except BaseException:
            w.abort()
            raise
    if a.json:
        print(cs.to_json(), file=sys.stderr if a.per_sentence and a.output == "-" else sys.stdout)
    elif not (a.per_sentence and a.output == "-"):
        print(f"sentences {cs.sentences}\twords {cs.words}\toov {cs.oov}\tlog10 {cs.log10_prob:.4f}\t"
              f"perplexity {cs.perplexity:.4f}\tperplexity excluding OOV {cs.perplexity_excluding_oov:.4f}")
    return EXIT_OK


def _add_lm(sub) -> None:
    from .lm.trie import lm_format

    lm = sub.add_parser("lm", help="n-gram language models (modified Kneser-Ney, ARPA, binary)")
    ls = lm.add_subparsers(dest="verb", required=True, metavar="VERB")
    t = ls.add_parser("train", help="estimate an interpolated modified Kneser-Ney LM")
    t.add_argument("--text", nargs="+", default=None, help="tokenized text, one sentence per line (.xz/.gz ok)")
    t.add_argument("--tokenize", default=None, metavar="LANG",
                   help="--text is raw paragraphs, one per line: split sentences and tokenize them first "
                        "(spaCy's rule-based tokenizer of LANG, e.g. en; wo.lm.tokenize)")
    t.add_argument("--conllu", nargs="+", default=None,
                   help="treebank files (.xz ok) instead of --text: the LM is estimated on their trees in --view")
    t.add_argument("--view", default="words", choices=["words", "pos", "dep-mix", "dep-word"],
                   help="with --conllu: forms (words), POS sequences (pos), or each head's dependents in order "
                        "(dep-mix, dep-word: a dependency LM for reranking trees; recorded in the header)")
    t.add_argument("--order", type=int, default=4, help="n-gram order, 1..6")
    t.add_argument("--out", required=True, help="output: .arpa(.gz/.xz) writes ARPA, anything else wo's binary")
    t.add_argument("--vocab-min-count", type=int, default=1, help="words seen fewer times become <unk>")
    t.add_argument("--prune", type=int, nargs="*", default=None,
                   help="per order from 2: drop n-grams with adjusted count <= t (KenLM's --prune)")
    t.add_argument("--max-tokens", type=int, default=1000, help="skip (and count) longer lines")
    t.add_argument("--jobs", type=int, default=1)
    t.add_argument("--backend", default="loky", choices=["loky", "dask"])
    t.add_argument("--scheduler", default=None, help="Dask scheduler address for --backend dask")
    t.add_argument("--quiet", action="store_true")
    t.add_argument("--format", type=lm_format, default="probing",
                   help="binary structure: probing (hash tables, fastest), trie (exact, about half the size) or "
                        "trie-q8 (probabilities and backoffs quantized to 8 bits, KenLM's trie -q 8 -b 8)")
    t.set_defaults(func=cmd_lm_train)
    tk = ls.add_parser("tokenize", help="raw paragraphs -> one tokenized sentence per line (spaCy)")
    tk.add_argument("--input", nargs="+", required=True, help="raw text files, one paragraph per line (.xz/.gz ok)")
    tk.add_argument("--output", required=True, help="tokenized text (.xz: compressed)")
    tk.add_argument("--lang", default="en", help="language of spaCy's rule-based tokenizer")
    tk.add_argument("--jobs", type=_positive_int, default=1)
    tk.add_argument("--backend", default="loky", choices=["loky", "dask"])
    tk.add_argument("--scheduler", default=None, help="Dask scheduler address for --backend dask")
    tk.add_argument("--quiet", action="store_true")
    tk.set_defaults(func=cmd_lm_tokenize)
    c = ls.add_parser("convert", help="import an ARPA file (KenLM, SRILM, IRSTLM) as wo's binary")
    c.add_argument("arpa", help="ARPA file (.gz/.xz ok)")
    c.add_argument("out", help="output file (.arpa for ARPA)")
    c.add_argument("--format", type=lm_format, default="probing",
                   help="binary structure: probing (hash tables, fastest), trie (exact, about half the size) or "
                        "trie-q8 (probabilities and backoffs quantized to 8 bits, KenLM's trie -q 8 -b 8)")
    c.set_defaults(func=cmd_lm_convert)
    s = ls.add_parser("score", help="log10 probability and perplexity of a text")
    s.add_argument("--lm", required=True, help="binary or ARPA LM")
    s.add_argument("--input", default="-", help=f"tokenized text {STDIO_HELP}; default -")
    s.add_argument("--output", default="-", help="where --per-sentence writes; default -")
    s.add_argument("--per-sentence", action="store_true", help="one sentence log10 probability per line")
    s.add_argument("--json", action="store_true", help="totals as one JSON object")
    s.set_defaults(func=cmd_lm_score)


STDIO_HELP = "('-' = standard input/output)"


# ------------------------------------------------------------------ IDL-expressions
def cmd_idl_realize(a) -> int:
    """``wo idl realize``: IDL-expressions or bags intersected with an n-gram LM."""
    from .idl.realize import run

    bar = _bar(a.quiet)
    opts = dict(algorithm=a.algorithm, k=a.k, beam=a.beam, max_states=a.max_states, timeout=a.timeout,
                count_unfolding=not a.no_count)
    try:
        summ = run(a.lm, a.input, a.output, input_format=a.input_format, output_format=a.format,
                   jobs=a.jobs, report=lambda m: (bar.clear(), _err(m)), progress=bar.update, **opts)
    except ValueError as exc:
        bar.close()
        _err(str(exc))
        return EXIT_USER
    bar.close()
    if not a.quiet:
        print(f"wo: {display_name(a.input)}: {summ.sentences} expressions in {summ.seconds:.2f}s "
              f"({summ.sentences_per_second:.1f}/s), status {summ.status}", file=sys.stderr)
    return EXIT_SOME_FAILED if summ.failed else EXIT_OK


def _add_idl(sub) -> None:
    idl = sub.add_parser("idl", help="IDL-expressions intersected with an n-gram LM (Soricut & Marcu 2005)")
    isub = idl.add_subparsers(dest="verb", required=True, metavar="VERB")
    r = isub.add_parser("realize", help="the most probable string of each IDL-expression (or bag)")
    r.add_argument("--lm", required=True, help="n-gram LM (wo binary or ARPA)")
    r.add_argument("--input", default="-", help=f"one expression (or bag) per line {STDIO_HELP}; default -")
    r.add_argument("--output", default="-", help=f"one record per input line {STDIO_HELP}; default -")
    r.add_argument("--input-format", default="idl", choices=["idl", "bag"],
                   help="idl: C/I/D/L expressions (see wo.idl.expr); bag: space-separated words")
    r.add_argument("--algorithm", default="astar", choices=["astar", "greedy-astar", "beam", "bfs"])
    r.add_argument("--k", type=int, default=5, help="greedy-astar: unfold only paths within K tokens of the longest")
    r.add_argument("--beam", type=float, default=0.1, help="beam: probability beam p in (0, 1]")
    r.add_argument("--max-states", type=int, default=1_000_000,
                   help="bound on the states created per expression (memory); then the best "
                   "completed or greedily completed path is returned")
    r.add_argument("--timeout", type=_nonneg_float, default=0.0, help="seconds per expression (0 = none)")
    r.add_argument("--no-count", action="store_true", help="do not count the full unfolding")
    r.add_argument("--jobs", type=int, default=1)
    r.add_argument("--format", default="text", choices=["text", "jsonl"])
    r.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    r.set_defaults(func=cmd_idl_realize)


def cmd_ccg_train(a) -> int:
    """``wo ccg train``: Algorithm 3 training on CCGbank .auto derivations, best dev epoch saved."""
    from .ccg.auto import error_lines, read_auto
    from .ccg.train import train

    tr = read_auto(a.train)
    dv = read_auto(a.dev) if a.dev else []
    for msg in error_lines(a.train, tr) + (error_lines(a.dev, dv) if a.dev else []):
        _err(f"{msg} (sentence skipped)")
    if a.dev_limit:
        dv = dv[:a.dev_limit]
    rec = train(tr, dv, a.epochs, a.model, hash_bits=a.hash_bits, beam_factor=a.beam_factor,
                train_budget_factor=a.train_budget, budget_factor=a.budget_factor, seed=a.seed,
                max_cats=a.max_cats, train_name=os.path.basename(a.train),
                dev_name=os.path.basename(a.dev or ""), lm=a.lm)
    print(json.dumps(rec, indent=1))
    return EXIT_OK


def cmd_ccg_linearize(a) -> int:
    """``wo ccg linearize``: batch CCG linearization (wo.ccg.linearizer.run)."""
    from .ccg.linearizer import run
    from .model import default_model

    a.model = a.model or default_model("ccg")
    opts = {"beam_factor": a.beam_factor, "budget_factor": a.budget_factor, "max_pops": a.budget,
            "timeout": a.timeout, "lm": a.lm, "complete_beam": a.complete_beam,
            "patience_factor": a.patience, "max_memory": a.max_memory}
    return _batch_run(a, lambda bar: run(
        a.model, a.input, a.output, input_format=a.input_format, output_format=a.format, seed=a.seed,
        jobs=a.jobs, on_error=a.on_error, max_length=a.max_length, progress=bar.update,
        report=lambda m: (bar.clear(), _err(m)), **opts))


def _add_ccg(sub) -> None:
    from .ccg.instance import DEFAULT_MAX_CATS
    from .ccg.linearizer import DEFAULT_BUDGET_FACTOR as CCG_BUDGET

    ccg = sub.add_parser("ccg", help="CCG-based word ordering with DP-signature pruning (Zhang & Clark 2015, s. 3)")
    cs = ccg.add_subparsers(dest="verb", required=True, metavar="VERB")
    t = cs.add_parser("train", help="train a CCG model (Algorithm 3) on .auto derivations")
    _train_options(t, "CCGbank .auto", 100.0, CCG_BUDGET,
                   "training pops per word (100: +1 BLEU over 30 on 2,000 sentences)")
    t.add_argument("--max-cats", type=int, default=DEFAULT_MAX_CATS,
                   help="lexical categories tried per word and POS (most frequent first)")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--lm", default=None, help="n-gram LM (binary or ARPA) whose scores become features")
    t.set_defaults(func=cmd_ccg_train)
    li = cs.add_parser("linearize", help="order the words of each input sentence with a CCG model")
    li.add_argument("--model", default=None, help="CCG model file (default: the shipped CCG model)")
    li.add_argument("--input", default="-",
                    help=f"input file {STDIO_HELP}, default -; each sentence is shuffled with --seed first")
    li.add_argument("--output", default="-", help=f"output file {STDIO_HELP}; default -")
    li.add_argument("--input-format", default=None, choices=["auto", "bag", "conllu"],
                    help="auto: CCGbank .auto derivations read as bags with POS; default: .auto when "
                         "the file starts with ID=, else bag/conllu by content")
    li.add_argument("--format", default="text", choices=["text", "auto", "jsonl"],
                    help="output: tokenized text, the derivation found (.auto), JSON lines")
    li.add_argument("--seed", type=int, default=1, help="shuffle seed")
    li.add_argument("--budget", type=_positive_int, default=None, help="pop budget per sentence (pops)")
    li.add_argument("--budget-factor", type=_positive_float, default=None, help="pop budget in pops per word")
    li.add_argument("--beam-factor", type=_positive_float, default=None, help="chart size k*n")
    li.add_argument("--timeout", type=_nonneg_float, default=0.0, help="seconds per sentence (0 = none)")
    li.add_argument("--max-memory", type=_positive_float, default=None, metavar="MB",
                    help="search memory per sentence in MiB (default 1536: a worker stays under ~2 GB); past it "
                         "the search stops with what it has (status memory)")
    li.add_argument("--complete-beam", type=_positive_int, default=None, help="beam of the completion phases")
    li.add_argument("--patience", type=_nonneg_float, default=None,
                    help="pops per word spent after the first goal looking for a better one (default: model's)")
    li.add_argument("--jobs", type=int, default=1, help="parallel processes (joblib)")
    li.add_argument("--on-error", default="fallback", choices=["fallback", "skip", "fail"],
                    help="output of a failed sentence: its words in input order, an empty line, or stop")
    li.add_argument("--max-length", type=_positive_int, default=200, help="refuse longer sentences (memory bound)")
    li.add_argument("--lm", default=None, help="n-gram LM path, or 'none' (default: the model's own LM)")
    li.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    li.set_defaults(func=cmd_ccg_linearize)


def cmd_gyro_index(a) -> int:
    """``wo gyro index``: the phrase index of a text collection (map-reduce n-gram counting)."""
    import time

    from .gyro.index import build_arrays, write_index

    t0 = time.perf_counter()
    try:
        arr = build_arrays(a.text, max_n=a.max_n, min_count=a.min_count, jobs=a.jobs, backend=a.backend,
                           scheduler=a.scheduler, report=lambda m: None if a.quiet else _err(m))
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USER
    head = write_index(arr, a.out)
    if not a.quiet:
        _err(f"wrote {a.out} (n-grams of orders 2..{head['max_n']}: {head['ngrams']}; "
             f"{os.path.getsize(a.out) / 2 ** 20:.1f} MB; {time.perf_counter() - t0:.1f} s)")
    return EXIT_OK


def cmd_gyro_lookup(a) -> int:
    """``wo gyro lookup``: the indexed phrases of each input bag, one JSON list per line."""
    from .gyro.index import PhraseIndex, PhraseIndexError
    from .io.text import AtomicWriter, open_text

    try:
        idx = PhraseIndex.load(a.index)
    except PhraseIndexError as exc:
        _err(str(exc))
        return EXIT_USER
    w = AtomicWriter(a.output)
    try:
        with open_text(a.input) as fh:
            for line in fh:
                ph = idx.lookup(line.split(), min_n=a.min_n, max_n=a.max_n or None, min_count=a.min_count)
                w.write(json.dumps([" ".join(p) for p in ph], ensure_ascii=False))
    except BaseException:
        w.abort()
        raise
    w.commit()
    return EXIT_OK


def cmd_gyro_realize(a) -> int:
    """``wo gyro realize``: GYRO (Algorithm 3) over a phrase index and an n-gram LM."""
    from .gyro.index import PhraseIndexError
    from .gyro.realize import run

    try:
        return _batch_run(a, lambda bar: run(
            a.index, a.lm, a.input, a.output, rescore_path=a.rescore_lm, input_format=a.input_format,
            output_format=a.format, jobs=a.jobs, seed=a.seed, progress=bar.update,
            report=lambda m: (bar.clear(), _err(m)), r=a.r, beta=a.beta, nbest=a.nbest,
            max_states=a.max_states, row_states=a.row_states, engine=a.engine, row_cap=a.row_cap,
            keep=a.keep, future=not a.no_future, mbr=a.mbr, mbr_scale=a.mbr_scale,
            levels=tuple(a.levels.split(",")), min_n=a.min_n, rule_penalty=a.rule_penalty, timeout=a.timeout,
            **({"dep_model": a.dep_model, "dep_weight": a.dep_weight, "dep_nbest": a.dep_nbest,
                "dep_own": not a.no_dep_own} if a.dep_model else {})))
    except (ValueError, PhraseIndexError) as exc:   # a bad option (r, beta, nbest, format) or index file
        _err(str(exc))
        return EXIT_USER


def _add_gyro(sub) -> None:
    from .gyro.realize import DEFAULT_DEP_NBEST, DEFAULT_DEP_WEIGHT

    gy = sub.add_parser("gyro", help="GYRO phrase-based word ordering (de Gispert et al. 2014)")
    gs = gy.add_subparsers(dest="verb", required=True, metavar="VERB")
    t = gs.add_parser("index", help="build the phrase index of a text collection (n-grams 2..N)")
    t.add_argument("--text", nargs="+", required=True, help="tokenized text, one sentence per line (.xz/.gz ok)")
    t.add_argument("--out", required=True, help="output index file")
    t.add_argument("--max-n", type=int, default=5, help="longest phrase, 2..6")
    t.add_argument("--min-count", type=int, default=1, help="leave out phrases seen fewer times")
    t.add_argument("--jobs", type=int, default=1)
    t.add_argument("--backend", default="loky", choices=["loky", "dask"])
    t.add_argument("--scheduler", default=None, help="Dask scheduler address for --backend dask")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(func=cmd_gyro_index)
    lk = gs.add_parser("lookup", help="list the indexed phrases made of each bag's words (JSON lines)")
    lk.add_argument("--index", required=True, help="phrase index (wo gyro index)")
    lk.add_argument("--input", default="-", help=f"bags, one per line {STDIO_HELP}; default -")
    lk.add_argument("--output", default="-", help="output file; default -")
    lk.add_argument("--min-n", type=int, default=2)
    lk.add_argument("--max-n", type=int, default=0, help="0: the index's longest")
    lk.add_argument("--min-count", type=int, default=1)
    lk.set_defaults(func=cmd_gyro_lookup)
    rz = gs.add_parser("realize", help="order each bag by phrase-based parsing and LM-pruned generation")
    rz.add_argument("--index", default=None, help="phrase index (wo gyro index); needed by the phrase levels")
    rz.add_argument("--lm", required=True, help="n-gram LM used while parsing (binary or ARPA)")
    rz.add_argument("--rescore-lm", default=None, help="higher-order LM applied to the final lattice")
    rz.add_argument("--input", default="-", help=f"bags (one per line) or CoNLL-U {STDIO_HELP}; default -")
    rz.add_argument("--output", default="-", help="output file; default -")
    rz.add_argument("--input-format", default="auto", choices=["auto", "bag", "conllu"])
    rz.add_argument("--format", default="text", choices=["text", "jsonl"])
    rz.add_argument("--r", type=int, default=3, help="first row pruned (Algorithm 3)")
    rz.add_argument("--beta", type=float, default=4.0, help="pruning weight, log10 units")
    rz.add_argument("--nbest", type=int, default=1, help="realisations per bag (jsonl)")
    rz.add_argument("--engine", default="chart", choices=["chart", "fst"],
                    help="chart: cells of LM-scored strings in C pools (default); fst: OpenFst acceptors (pynini)")
    rz.add_argument("--row-cap", type=int, default=2000, help="chart: strings kept per pruned row (memory bound)")
    rz.add_argument("--keep", type=int, default=1000, help="chart: sentences kept in the output lattice")
    rz.add_argument("--timeout", type=_nonneg_float, default=0.0,
                    help="chart: seconds per bag (0 = none); past it the bag gets the greedy LM order (status timeout)")
    rz.add_argument("--no-future", action="store_true",
                    help="chart: prune rows by fragment score alone (the paper), without the estimate of the words left out")
    rz.add_argument("--levels", default="unigram",
                    help="grammars tried in turn: phrases (min-n..5-grams), bigram (+ 2-grams), unigram (+ every word); "
                         "the paper's: phrases,bigram,unigram; default 'unigram' alone (permutation under the LM, "
                         "best on EWT dev with a 5 M-word collection); weighted: every phrase and word as a rule, "
                         "each rule application costing --rule-penalty (chart engine)")
    rz.add_argument("--rule-penalty", type=float, default=0.5, help="log10 cost per rule of the weighted grammar")
    rz.add_argument("--min-n", type=int, default=3, help="shortest phrase rule of the first grammar")
    rz.add_argument("--mbr", action="store_true", help="minimum Bayes risk reranking of the output lattice (Tromble et al. 2008)")
    rz.add_argument("--mbr-scale", type=float, default=1.0, help="posterior scale of --mbr")
    rz.add_argument("--dep-model", default=None,
                    help="rerank the --dep-nbest best strings with this dependency model (the paper's +depLM "
                         "rescoring with wo's syntax model; e.g. corpora/models/wo-ewt-dep-lm.wo); jsonl gets the tree")
    rz.add_argument("--dep-weight", type=float, default=DEFAULT_DEP_WEIGHT,
                    help="weight of the dependency model's score against log10 p (chosen on EWT dev)")
    rz.add_argument("--dep-nbest", type=int, default=DEFAULT_DEP_NBEST, help="strings reranked by --dep-model")
    rz.add_argument("--no-dep-own", action="store_true",
                    help="do not add the dependency model's own output to the strings it reranks")
    rz.add_argument("--max-states", type=int, default=2_000_000,
                    help="memory bound per bag: strings of unpruned rows (chart) or acceptor states (fst)")
    rz.add_argument("--row-states", type=int, default=20_000, help="fst: states kept by a row's pruning")
    rz.add_argument("--seed", type=int, default=1, help="shuffle seed for CoNLL-U input")
    rz.add_argument("--jobs", type=int, default=1)
    rz.add_argument("--quiet", action="store_true")
    rz.set_defaults(func=cmd_gyro_realize)


def _add_sr(sub) -> None:
    from .sr.realizer import DEFAULT_SR_RERANK_WEIGHT

    sr = sub.add_parser("sr", help="Surface Realisation shared task (SR'19 shallow track, T1)")
    ss = sr.add_subparsers(dest="verb", required=True, metavar="VERB")
    m = ss.add_parser("make-input", help="UD CoNLL-U -> T1 input (scrambled ids, lemmas, lin)")
    m.add_argument("--ud", default="-", help=f"UD CoNLL-U (.xz ok) {STDIO_HELP}; default -")
    m.add_argument("--out", "--output", dest="out", default="-", help=f"T1 output {STDIO_HELP}; default -")
    m.add_argument("--with-gold", action="store_true", help="gold form in column 3 and original_id")
    m.add_argument("--seed", type=int, default=1)
    m.set_defaults(func=cmd_sr_make_input)
    t = ss.add_parser("train", help="train an SR model (inflection and ordering)")
    t.add_argument("--train", required=True, help="T1 training input with gold (original_id) or --train-ref")
    t.add_argument("--train-ref", help="UD file with the training references (alignment, lexicon)")
    t.add_argument("--dev", help="T1 dev input (per-epoch BLEU; best epoch kept)")
    t.add_argument("--dev-ref", help="dev references: UD CoNLL-U or tokenized lines (default: --dev with gold)")
    t.add_argument("--dev-limit", type=int, default=0)
    t.add_argument("--model", required=True, help="output model file")
    t.add_argument("--epochs", type=_positive_int, default=5)
    t.add_argument("--orderer", default="local", choices=["local", "search"],
                   help="local: each head's dependents ordered by a linear model with beam search (wo.sr.order; "
                        "default); search: the best-first search over the whole tree with joint inflection")
    t.add_argument("--order-beam", type=_positive_int, default=16, help="--orderer local: beam of the domain search")
    t.add_argument("--hash-bits", type=int, default=None,
                   help="weight table of 2^b float32 (default 20 for local, 23 for search)")
    t.add_argument("--beam-factor", type=_positive_float, default=8.0, help="chart size k*n during training")
    t.add_argument("--train-budget", type=float, default=100.0, help="training pops per word")
    t.add_argument("--lang", default=None, help="ISO 639-1 language code (required): selects the language "
                   "module (en: lemminflect, a/an, contractions) and the detokenizer; 'xx' for none")
    t.add_argument("--jobs", type=_positive_int, default=1,
                   help="iterative parameter mixing over N shards trained in parallel (McDonald et al. 2010)")
    t.add_argument("--backend", default="loky", choices=["loky", "dask"])
    t.add_argument("--scheduler", default=None, help="Dask scheduler address for --backend dask")
    t.add_argument("--compact", nargs="?", const="float16", default=None, choices=["float16", "q8"],
                   help="save float16 weights (or with q8: 8-bit log-scale codes) and a compressed header")
    t.add_argument("--mwt", nargs="+", default=None,
                   help="UD CoNLL-U file(s) whose multiword-token lines teach the contractions "
                        "(fr du = de le); default: --train-ref")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--lm", default=None, help="n-gram LM over lower-cased forms (real-valued features); "
                   "its text must not contain the training sentences")
    t.add_argument("--no-question-labels", action="store_true",
                   help="do not mark the labels of a question clause's dependents (as models trained before this option)")
    t.set_defaults(func=cmd_sr_train)
    r = ss.add_parser("realize", help="T1 input -> SR submission file (+ .tok)")
    r.add_argument("--model", default=None,
                   help="model file, or a shipped model's treebank code (pt_bosque) or language code (pt); "
                        "default: the shipped English model")
    r.add_argument("--lang", default=None, help="language or treebank code of a shipped model (`wo sr models`)")
    r.add_argument("--input", default="-", help=f"T1 input {STDIO_HELP}; default -")
    r.add_argument("--output", default="-", help=f"submission file {STDIO_HELP}; default -")
    r.add_argument("--tok", default=None, help="tokenized twin (default: OUTPUT.tok; none for -, a pipe or a device)")
    r.add_argument("--jobs", type=int, default=1)
    r.add_argument("--backend", default="loky", choices=["loky", "dask"])
    r.add_argument("--scheduler", default=None, help="Dask scheduler address for --backend dask")
    r.add_argument("--beam-factor", type=_positive_float, default=None)
    r.add_argument("--budget-factor", type=_positive_float, default=None)
    r.add_argument("--timeout", type=_nonneg_float, default=0.0, help="seconds per sentence (0 = none)")
    r.add_argument("--max-memory", type=_positive_float, default=None, metavar="MB",
                   help="search memory per sentence in MiB (default 1536: a worker stays under ~2 GB); past it "
                        "the search stops with what it has (status memory)")
    r.add_argument("--lm", default=None, help="LM path, or 'none' (default: the model's own, if any)")
    r.add_argument("--rerank-lm", default=None,
                   help="rerank the popped goal edges (search orderer) or each domain's final beam (local "
                        "orderer, which also chooses the forms with it) by the model score plus --rerank-weight x "
                        "this LM's log10 p of the realised string; 'none' turns it off (default: the model header's, "
                        "for a shipped model the 4-gram beside it)")
    r.add_argument("--form-penalty", type=float, default=None,
                   help="local orderer: log10 LM cost per rank down a token's candidate forms (default: the model's)")
    r.add_argument("--rerank-weight", type=float, default=None,
                   help=f"weight of --rerank-lm's log10 p (default: the model header's, else {DEFAULT_SR_RERANK_WEIGHT})")
    r.add_argument("--patience", type=_nonneg_float, default=None,
                   help="pops per word spent after the first goal looking for a better one (default: model's)")
    r.add_argument("--lift-threshold", type=float, default=None,
                   help="probability at which a token is lifted for a non-projective order (default: the "
                        "model's; 2 = never)")
    r.add_argument("--no-gold-forms", action="store_true",
                   help="inflect even when the T1 input carries gold forms in column 3 (by default they "
                        "are used, so only the order is predicted)")
    r.add_argument("--quiet", action="store_true")
    r.set_defaults(func=cmd_sr_realize)
    ls = ss.add_parser("models", help="list the shipped SR models (language, data, licence, test figures)")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_sr_models)
    e = ss.add_parser("evaluate", help="SR metrics: BLEU, NIST, DIST (lower-cased tokens) + sacrebleu")
    e.add_argument("--hyp", required=True, help=f"tokenized lines, or an SR submission file with its .tok {STDIO_HELP}")
    e.add_argument("--ref", required=True, help="UD CoNLL-U, T1 with gold, or tokenized lines")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_sr_evaluate)


def _train_options(t, fmt: str, train_budget: float, budget: float, train_budget_help: str) -> None:
    """The options every Algorithm-3 trainer shares (``wo dep train``, ``wo ccg train``)."""
    t.add_argument("--train", required=True, help=f"training {fmt} (.xz ok)")
    t.add_argument("--dev", help=f"dev {fmt} for per-epoch BLEU (best epoch is kept)")
    t.add_argument("--dev-limit", type=int, default=0, help="use only the first N dev sentences")
    t.add_argument("--epochs", type=_positive_int, default=5)
    t.add_argument("--model", required=True, help="output model file")
    t.add_argument("--beam-factor", type=_positive_float, default=4.0, help="chart size k*n during training")
    t.add_argument("--hash-bits", type=int, default=22, help="weight table of 2^b float32")
    t.add_argument("--train-budget", type=float, default=train_budget, help=train_budget_help)
    t.add_argument("--budget-factor", type=_positive_float, default=budget,
                   help="default decoding pops per word stored in the model")


def _add_dep_train(sub, name: str, help_: str) -> None:
    from .dep.linearizer import DEFAULT_BUDGET_FACTOR

    t = sub.add_parser(name, help=help_)
    _train_options(t, "CoNLL-U", 30.0, DEFAULT_BUDGET_FACTOR, "training pops per word")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--lm", default=None, help="n-gram LM (binary or ARPA) whose scores become features")
    t.add_argument("--lm-folds", nargs="+", default=None, metavar="LM",
                   help="K jackknifed LMs: the k-th of K contiguous blocks of --train trains with "
                        "the k-th LM, estimated without that block (bench/jackknife_lms.py builds them)")
    t.add_argument("--train-given", default="none", choices=["none", "full", "mixed"],
                   help="input condition of the training instances: bags of words (default), full "
                        "unordered trees with POS, or every sentence as both")
    t.add_argument("--dev-given", default=None, choices=["none", "full", "both"],
                   help="dev condition the best epoch is chosen on (default: full for --train-given "
                        "full, else none; both = the mean of bag and tree BLEU)")
    t.add_argument("--question-labels", action="store_true",
                   help="label every token of an input with a question mark, so question order is "
                        "learned apart (measured on EWT dev: no gain for this model; SR uses it)")
    t.set_defaults(func=cmd_train)


def _add_dep_linearize(sub, name: str, help_: str) -> None:
    from .dep.linearizer import DEFAULT_RERANK_WEIGHT

    li = sub.add_parser(name, help=help_)
    li.add_argument("--model", default=None, help="model file (default: the shipped dependency model)")
    li.add_argument("--input", default="-",
                    help=f"input file {STDIO_HELP}, default -; each sentence is shuffled with --seed first")
    li.add_argument("--output", default="-", help=f"output file {STDIO_HELP}; default -")
    li.add_argument("--given", default="none", choices=["none", "pos", "heads", "full"],
                    help="which columns are trusted constraints (none = bag of words: forms only)")
    li.add_argument("--reveal-pos", type=float, default=1.0, help="share of given POS kept")
    li.add_argument("--reveal-heads", type=float, default=1.0, help="share of given heads kept")
    li.add_argument("--seed", type=int, default=1, help="shuffle / reveal seed")
    li.add_argument("--budget", type=_positive_int, default=None, help="pop budget per sentence (pops)")
    li.add_argument("--budget-factor", type=_positive_float, default=None, help="pop budget in pops per word")
    li.add_argument("--beam-factor", type=_positive_float, default=None, help="chart size k*n")
    li.add_argument("--timeout", type=_nonneg_float, default=0.0, help="seconds per sentence (0 = none)")
    li.add_argument("--max-memory", type=_positive_float, default=None, metavar="MB",
                    help="search memory per sentence in MiB (default 1536: a worker stays under ~2 GB); past it "
                         "the search stops with what it has (status memory)")
    li.add_argument("--patience", type=_nonneg_float, default=None,
                    help="pops per word spent after the first goal looking for a better one (default: model's)")
    li.add_argument("--jobs", type=int, default=1, help="parallel processes (joblib)")
    li.add_argument("--format", default="text", choices=["text", "detok", "conllu", "jsonl"],
                    help="output: tokenized text, detokenized text, CoNLL-U, JSON lines")
    li.add_argument("--input-format", default="auto", choices=["auto", "conllu", "bag", "zgen"])
    li.add_argument("--on-error", default="fallback", choices=["fallback", "skip", "fail"],
                    help="output of a failed sentence: its words in input order, an empty line, or stop")
    li.add_argument("--max-length", type=_positive_int, default=200, help="refuse longer sentences (memory bound)")
    li.add_argument("--backend", default="loky", choices=["loky", "dask"])
    li.add_argument("--scheduler", default=None, help="Dask scheduler address for --backend dask")
    li.add_argument("--lm", default=None, help="n-gram LM path, or 'none' (default: the model's own LM)")
    li.add_argument("--rerank-lm", nargs="+", default=None, metavar="PATH[:WEIGHT]",
                    help="rerank the popped goal edges (the n-best; hundreds for full trees) by the model score "
                         "plus weight x each LM's log10 p, e.g. a larger LM than the model's own; an LM "
                         "estimated with 'wo lm train --conllu --view V' scores the POS or the dependents "
                         "of each head (a dependency LM) instead of the words")
    li.add_argument("--rerank-weight", type=float, default=DEFAULT_RERANK_WEIGHT,
                    help="weight of a --rerank-lm given without one (chosen on EWT dev trees)")
    li.add_argument("--tree-rerank", action="store_true",
                    help="rerank tree inputs with the rerankers the model header names (decode.tree_rerank; the "
                         "shipped model: its 4-gram, three dependency/POS LMs of EWT trees and the no-LM model; "
                         "EWT test trees 78.65 -> 80.74 BLEU at 1.6x the time)")
    li.add_argument("--rerank-model", nargs="+", default=None, metavar="PATH:WEIGHT",
                    help="other word-ordering models whose weighted scores of each candidate (its string and "
                         "tree) are added when reranking the popped goals (an ensemble)")
    li.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    li.set_defaults(func=cmd_linearize)


# ------------------------------------------------------------------ syntactic SMT (Zhang et al. 2014)
def cmd_smt_train(a) -> int:
    """``wo smt train``: corpus preparation, phrase table, LM and the synthesis model."""
    from .smt.corpus import train_from_tsv

    try:
        rec = train_from_tsv(a.train, a.dev, a.model, lm=a.lm, lm_text=a.lm_text, epochs=a.epochs,
                             work=a.work, hash_bits=a.hash_bits, dev_limit=a.dev_limit,
                             log=(lambda m: None) if a.quiet else _err)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USER
    if not a.quiet:
        _err(f"best epoch {rec['best_epoch']}: dev BLEU {rec['dev_bleu']}; model written to {a.model}")
    return EXIT_OK


def cmd_smt_translate(a) -> int:
    """``wo smt translate``: translate Chinese sentences, one per line."""
    from .smt.translate import run

    return _batch_run(a, lambda bar: run(
        a.input, a.output, model=a.model, lm=a.lm, jobs=a.jobs, tokenized=a.tokenized,
        output_format=a.format, max_length=a.max_length, on_error="fallback", progress=bar.update,
        report=lambda m: (bar.clear(), _err(m)), beam_factor=a.beam_factor, max_pops=a.max_pops,
        beta=a.beta, timeout=a.timeout, max_memory=a.max_memory))


def cmd_smt_evaluate(a) -> int:
    """``wo smt evaluate``: sacrebleu BLEU with 13a tokenization on detokenized output."""
    from .eval.metrics import score
    from .smt.translate import read_lines

    hyps = [x.text or "" for x in read_lines(a.hyp, "en")]
    refs = [x.text or "" for x in read_lines(a.ref, "en")]
    if len(hyps) != len(refs):
        _err(f"{a.hyp}: {len(hyps)} sentences but {a.ref} has {len(refs)}")
        return EXIT_USER
    sc = score(hyps, refs, tokenize="13a")
    print(json.dumps(sc.__dict__) if a.json else sc)
    return EXIT_OK


def _add_smt(sub) -> None:
    sm = sub.add_parser("smt", help="Chinese->English translation by syntactic generation (Zhang et al. 2014)")
    ss = sm.add_subparsers(dest="verb", required=True, metavar="VERB")
    t = ss.add_parser("train", help="prepare the corpus (segment, tokenize, parse, align, extract phrases) and train")
    t.add_argument("--train", required=True, help="training pairs, TSV en<TAB>zh<TAB>attribution with a header")
    t.add_argument("--dev", required=True, help="dev pairs (same format): the epoch is chosen by dev BLEU")
    t.add_argument("--model", required=True, help="output model; the phrase table and LM are written beside it")
    t.add_argument("--lm", default=None, help="English n-gram LM (default: a 4-gram of the training English "
                                              "side plus --lm-text, written beside the model)")
    t.add_argument("--lm-text", nargs="*", default=[], help="more tokenized English text for the LM")
    t.add_argument("--epochs", type=_positive_int, default=6)
    t.add_argument("--hash-bits", type=int, default=21)
    t.add_argument("--dev-limit", type=int, default=0, help="score epochs on the first N dev pairs (0: all)")
    t.add_argument("--work", default=None, help="directory for intermediate files (default: a temporary one)")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(func=cmd_smt_train)
    tr = ss.add_parser("translate", help="translate Chinese sentences (one per line, raw or segmented)")
    tr.add_argument("--model", default=None, help="SMT model (default: the shipped Tatoeba model)")
    tr.add_argument("--input", default="-", help=f"Chinese, one sentence per line, or a Tatoeba TSV (its zh column) {STDIO_HELP}; default -")
    tr.add_argument("--output", default="-", help="English, one line per input line; default -")
    tr.add_argument("--tokenized", action="store_true", help="write tokenized (not detokenized) English")
    tr.add_argument("--format", default="text", choices=["text", "jsonl"])
    tr.add_argument("--lm", default=None, help="n-gram LM path, or 'none' (default: the model's own LM)")
    tr.add_argument("--beam-factor", type=_positive_float, default=None, help="chart size k (k*n edges); default: the model's")
    tr.add_argument("--max-pops", type=_positive_int, default=None, help="expansions L; default: the model's")
    tr.add_argument("--timeout", type=_nonneg_float, default=0.0,
                    help="seconds per sentence of the search (0 = none; status timeout)")
    tr.add_argument("--max-memory", type=_positive_float, default=None, metavar="MB",
                    help="search memory per sentence in MiB (default 1536); past it the search stops (status memory)")
    tr.add_argument("--beta", type=_share, default=None, help="share of source words a goal covers, in (0, 1]; default: the model's")
    tr.add_argument("--max-length", type=_positive_int, default=100, help="refuse longer sentences (source words)")
    tr.add_argument("--jobs", type=int, default=1)
    tr.add_argument("--quiet", action="store_true")
    tr.set_defaults(func=cmd_smt_translate)
    ev = ss.add_parser("evaluate", help="BLEU (sacrebleu, 13a) of detokenized output")
    ev.add_argument("--hyp", required=True, help=f"one sentence per line {STDIO_HELP}")
    ev.add_argument("--ref", required=True, help="references: a Tatoeba TSV of pairs (its en column is used) or one sentence per line")
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(func=cmd_smt_evaluate)


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``wo`` command: ``wo <system> <verb>``, ``wo evaluate``, aliases."""
    from . import __version__

    p = argparse.ArgumentParser(prog="wo", description="Word ordering (text linearization): "
                                "wo <system> <verb> [options]; '-' means standard input/output.")
    p.add_argument("--version", action="version", version=f"wo {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    dep = sub.add_parser("dep", help="dependency-based word ordering (Zhang & Clark 2015)")
    ds = dep.add_subparsers(dest="verb", required=True, metavar="VERB")
    _add_dep_train(ds, "train", "train a model (Algorithm 3)")
    _add_dep_linearize(ds, "linearize", "order the words of each input sentence")
    _add_ccg(sub)
    _add_sr(sub)
    _add_lm(sub)
    _add_idl(sub)
    _add_gyro(sub)
    _add_smt(sub)
    e = sub.add_parser("evaluate", help="BLEU (sacrebleu, tokenize none), exact match, words recovered")
    e.add_argument("--hyp", required=True, help=f"one tokenized sentence per line {STDIO_HELP}")
    e.add_argument("--ref", required=True, help="CoNLL-U or one tokenized sentence per line")
    e.add_argument("--tokenize", default="none", choices=["none", "13a", "intl", "zh", "char"],
                   help="sacrebleu tokenizer: none (tokens given, word ordering; default) or 13a "
                        "(detokenized MT output, e.g. wo smt translate)")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_evaluate)
    _add_dep_train(sub, "train", "alias of 'wo dep train'")
    _add_dep_linearize(sub, "linearize", "alias of 'wo dep linearize'")
    return p


def main(argv=None) -> int:
    """Entry point of the ``wo`` console script; returns the exit code (0, 1, 2 or 130)."""
    from .io.batch import Interrupted
    from .io.text import InputError
    from .lm.files import LMError
    from .model import ModelError

    try:
        args = build_parser().parse_args(argv)
    except KeyboardInterrupt:          # Ctrl-C while the verbs' modules are imported
        _err("interrupted")
        return 130
    for name in ("reveal_pos", "reveal_heads"):
        v = getattr(args, name, None)
        if v is not None and not 0.0 <= v <= 1.0:
            _err(f"--{name.replace('_', '-')} must be in [0, 1]")
            return EXIT_USER
    if getattr(args, "jobs", 1) < 1:
        _err("--jobs must be >= 1")
        return EXIT_USER
    try:
        return args.func(args)
    except (InputError, ModelError, LMError) as exc:
        _err(str(exc))
        return EXIT_USER
    except FileNotFoundError as exc:
        _err(f"{exc.filename}: no such file")
        return EXIT_USER
    except UnicodeDecodeError as exc:
        _err(f"invalid UTF-8 input ({exc.reason} at byte {exc.start})")
        return EXIT_USER
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except Interrupted as exc:   # a batch that did not go through _batch_run (wo idl realize)
        _err(str(exc))
        return 130
    except BrokenPipeError:   # the reader of standard output went away (`wo ... | head`)
        _stdout_gone()
        _err("standard output closed early (broken pipe)")
        return EXIT_USER
    except OSError as exc:    # a directory given as a file, no permission, a full disk, ...
        name = exc.filename2 if exc.filename2 is not None else exc.filename   # a rename: the user's path
        _err(f"{name}: {exc.strerror}" if name is not None else (exc.strerror or str(exc)))
        return EXIT_USER


def _stdout_gone() -> None:
    """Point standard output at /dev/null, so the interpreter's final flush of a closed pipe
    raises nothing more (the Python documentation's recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
