"""``wo sr make-input|train|realize|models|evaluate``: the Surface Realisation shared task (SR'19 T1)."""
from __future__ import annotations

import argparse
import gc
import json
import sys

from ..io.text import display_name
from .common import (EXIT_OK, EXIT_SOME_FAILED, EXIT_USER, STDIO_HELP, batch_options, batch_run, err, nonneg_float, positive_float,
                     positive_int)


def cmd_sr_make_input(a) -> int:
    """``wo sr make-input``: UD CoNLL-U -> SR'19 T1 input, or T2 (deep track) with ``--track deep``
    (:func:`wo.sr.t2make.make_deep_input`)."""
    from ..io.conllu import read_conllu
    from ..io.text import AtomicWriter, read_bytes
    from ..sr.t1 import format_t1, make_input

    sents = read_conllu(a.ud)
    if not sents:
        data = read_bytes(a.ud)
        if data.strip():   # an empty file gives an empty T1 file; text without a token line is a mistake
            err(f"{display_name(a.ud)}: no CoNLL-U sentence (no token lines); --ud takes a UD CoNLL-U file"
                + (" (this looks like a wo sr realize output)" if data.lstrip().startswith(b"# sent_id") else ""))
            return EXIT_USER
    deep = a.track == "deep"
    if deep:
        from ..sr.t2make import make_deep_input as make
    else:
        make = make_input
    w = AtomicWriter(a.out)
    bad = 0
    try:
        for i, s in enumerate(sents):
            try:
                w.write(format_t1(make(s, a.seed, i, a.with_gold), a.with_gold))
            except ValueError as exc:   # a sentence the deep conversion cannot take: reported, left out
                bad += 1
                err(f"{display_name(a.ud)}:{s.line}: {exc} (sentence left out)")
        w.commit()
    except BaseException:
        w.abort()
        raise
    print(f"wo: {len(sents) - bad} sentences written to {display_name(a.out, 'stdout')} ({'T2' if deep else 'T1'}, "
          f"seed {a.seed}{', with gold forms and original_id' if a.with_gold else ''})", file=sys.stderr)
    return EXIT_OK if not bad else EXIT_SOME_FAILED


# what `wo sr train --set KEY=VALUE` takes: the training's own switches (the order stage's
# model and search, the search orderer's training, the file) with their types and defaults


def _suffix_spec(v: str) -> str:
    from ..sr.order import suffix_function

    suffix_function(v)
    return v


_suffix_spec.__name__ = "suffix spec (none, morpheme, chars:N)"
def _flag(v: str) -> bool:
    """``--set`` type of a switch (:func:`wo.sr.stages.flag`, imported when used)."""
    from ..sr.stages import flag

    return flag(v)


def _stage_pairs(pairs):
    """:func:`wo.sr.stages.parse_settings`, imported when used (the CLI starts without the SR stack)."""
    from ..sr.stages import parse_settings

    return parse_settings(pairs)


_flag.__name__ = "true/false"
TRAIN_SETTINGS = {
    "order.method": (str, "local", "local (each head's domain ordered by a linear model) or search (the best-first "
                                   "search over the whole tree with joint inflection)"),
    "order.beam": (int, 16, "local: states per step of the domain search"),
    "order.suffix": (_suffix_spec, "none", "local: suffix templates: none, morpheme (UD Korean), chars:N"),
    "order.sig": (_flag, False, "local: domain-signature templates (German clause types)"),
    "order.ends": (_flag, False, "local: phrase-ends templates (Japanese particles)"),
    "order.seeds": (int, 1, "local: perceptrons per direction averaged (3 with --thorough)"),
    "order.r2l": (float, 0.5, "local: weight of the right-to-left model rescoring each domain's beam (0: none)"),
    "order.templates": (str, "given", "local: given (order.suffix, order.sig, order.ends as set) or cv (chosen by "
                                      "cross-validation on the training file; --thorough)"),
    "order.cv_budget": (float, 0.0, "local, order.templates=cv: seconds the cross-validation may spend; it stops "
                                    "adding templates past it (0: no limit)"),
    "order.hash_bits": (int, 20, "weight table of 2^b float32 per direction, 8..30 (search: 23)"),
    "order.beam_factor": (float, 8.0, "search: chart size k*n during training"),
    "order.train_budget": (float, 100.0, "search: training pops per word"),
    "order.question_labels": (_flag, True, "search: mark the labels of a question clause's dependents"),
    "order.lm": (str, "", "search: n-gram LM over lower-cased forms as real-valued features"),
    "deep.punctuation": (_flag, True, "deep track: the comma inserted after ordering (false: generated with the "
                                      "other function words, before ordering)"),
    "deep.assoc": (str, "", "deep track: a count file of case/mark word association (bench/sr_deep_assoc.py count) "
                            "whose pruned table gives the completion features and travels in the model (empty: none)"),
    "deep.assoc_min": (int, 20, "deep track, deep.assoc: keys counted at least this often are kept"),
    "deep.assoc_keys": (str, "hd,h,d", "deep track, deep.assoc: the tables kept (hd, h, d: case words by head and "
                                       "node lemma, head, node; mhd, mh, md: mark words, which lost on dev)"),
    "train.dev_limit": (int, 0, "use only the first N dev sentences (0: all)"),
    "train.compact": (str, "q8", "weights as none (float32), float16 or q8 (8-bit log-scale codes)"),
    "tune.lms": (_flag, True, "choose LMs, weights, the lifting threshold, allomorphs and form context on dev"),
    "tune.words_lm": (str, "", "an LM file to use as the words LM instead of one built from the training trees"),
    "tune.depmix_lm": (str, "", "an LM file (view dep-mix) to use instead of one built from the training trees"),
}


def train_settings(pairs) -> dict:
    """``--set`` pairs of ``wo sr train`` -> {key: typed value} over TRAIN_SETTINGS (defaults
    filled in).  Raises ValueError naming a bad key or value."""
    from ..sr.stages import parse_settings

    out = {k: d for k, (_, d, _) in TRAIN_SETTINGS.items()}
    for role, kv in parse_settings(pairs or []).items():
        for k, v in kv.items():
            key = f"{role}.{k}"
            if key not in TRAIN_SETTINGS:
                raise ValueError(f"--set {key}: unknown (wo sr train takes: {', '.join(TRAIN_SETTINGS)})")
            cast = TRAIN_SETTINGS[key][0]
            try:
                out[key] = cast(v)
            except (TypeError, ValueError):
                raise ValueError(f"--set {key}={v}: not a {getattr(cast, '__name__', 'value')}") from None
    if out["order.method"] not in ("local", "search"):
        raise ValueError(f"--set order.method={out['order.method']}: local or search")
    if not 8 <= out["order.hash_bits"] <= 30:
        raise ValueError(f"--set order.hash_bits={out['order.hash_bits']}: 8..30")
    if out["order.seeds"] < 1 or out["order.beam"] < 1 or out["train.dev_limit"] < 0:
        raise ValueError("--set order.seeds and order.beam take 1 or more, train.dev_limit 0 or more")
    for key in ("order.r2l", "order.cv_budget"):
        if not 0 <= out[key] < float("inf"):
            raise ValueError(f"--set {key} takes a number of 0 or more")
    if out["order.templates"] not in ("given", "cv"):
        raise ValueError(f"--set order.templates={out['order.templates']}: given or cv")
    if out["train.compact"] not in ("none", "float16", "q8"):
        raise ValueError(f"--set train.compact={out['train.compact']}: none, float16 or q8")
    return out


def _set_type(check, what: str):
    """An argparse type of ``--set``: the pair, once ``check([pair])`` accepts it (its
    ValueError becomes the usage error)."""
    def parse(pair: str) -> str:
        try:
            check([pair])
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return pair
    parse.__name__ = what
    return parse


def cmd_sr_train(a) -> int:
    """``wo sr train``: the whole recipe of an SR model (:func:`wo.sr.train.train_model`): the
    stages fitted on the training file, the order model trained with the best epoch chosen on
    dev, then the LMs, weights and tables of the decoding chosen on dev."""
    from ..io.conllu import read_conllu
    from ..sr.t1 import read_references, read_t1
    from ..sr.train import train_model

    try:
        opts = train_settings(a.set)
    except ValueError as exc:
        err(str(exc))
        return EXIT_USER
    given = {p.split("=", 1)[0] for p in a.set or []}
    if a.thorough and "order.seeds" not in given:
        opts["order.seeds"] = 3
    if a.thorough and not given & {"order.templates", "order.suffix", "order.sig", "order.ends"}:
        opts["order.templates"] = "cv"
    from ..io.text import check_input_path

    for key in ("order.lm", "tune.words_lm", "tune.depmix_lm"):
        if opts[key]:
            check_input_path(opts[key])
    train = read_t1(a.train, jobs=a.jobs if a.backend == "loky" else 1)
    gc.freeze()   # this process: the training sentences live to its end, the collector no longer walks them
    bad = [s for s in train if s.error]
    for s in bad[:20]:
        err(f"{display_name(a.train)}:{s.line}: {s.error} (sentence skipped)")
    ref_ud = read_conllu(a.train_ref) if a.train_ref else None
    if ref_ud is not None and len(ref_ud) != len(train):
        err(f"{a.train_ref}: {len(ref_ud)} sentences but {a.train} has {len(train)}")
        return EXIT_USER
    dev, dev_refs = [], []
    if a.dev:
        dev = read_t1(a.dev)
        if not a.dev_ref and dev and all(s.ref is not None for s in dev if not s.error):   # deep, with # gold
            dev_refs = [" ".join(s.ref.forms) if s.ref is not None else "" for s in dev]
        else:
            dev_refs = read_references(a.dev_ref or a.dev)
        if opts["train.dev_limit"]:
            dev, dev_refs = dev[:opts["train.dev_limit"]], dev_refs[:opts["train.dev_limit"]]
        if len(dev_refs) != len(dev):
            err(f"{a.dev_ref or a.dev}: {len(dev_refs)} references but {a.dev} has {len(dev)} sentences")
            return EXIT_USER
    from ..sr.t1 import is_deep

    deep = any(is_deep(s) for s in train if not s.error)
    if a.track != "auto" and deep != (a.track == "deep"):
        err(f"{display_name(a.train)}: {'deep' if deep else 'shallow'}-track input, but --track {a.track}")
        return EXIT_USER
    if dev and any(is_deep(s) for s in dev if not s.error) != deep:
        err(f"{display_name(a.dev)}: the dev file is not of the training file's track ({'deep' if deep else 'shallow'})")
        return EXIT_USER
    log = (lambda m: None) if a.quiet else (lambda m: print(f"wo: {m}", file=sys.stderr))
    punct = opts.pop("deep.punctuation")
    assoc = None
    assoc_spec = (opts.pop("deep.assoc"), opts.pop("deep.assoc_min"), opts.pop("deep.assoc_keys"))
    if assoc_spec[0] and deep:
        from ..sr.complete import Assoc

        try:
            assoc = Assoc.from_counts(assoc_spec[0], min_count=assoc_spec[1],
                                      keys=[k for k in assoc_spec[2].split(",") if k])
        except (OSError, ValueError, KeyError) as exc:
            err(f"--set deep.assoc={assoc_spec[0]}: {exc}")
            return EXIT_USER
    kw = dict(epochs=a.epochs, mwt_files=a.mwt or ([a.train_ref] if a.train_ref else []), opts=opts, seed=a.seed,
              jobs=a.jobs, backend=a.backend, scheduler=a.scheduler, log=log)
    if deep:
        from ..sr.train import train_deep_model

        try:
            rec = train_deep_model(train, dev, dev_refs, a.model, a.lang, ref_ud=ref_ud,
                                   punctuation=punct, assoc=assoc, **kw)
        except ValueError as exc:
            err(str(exc))
            return EXIT_USER
    else:
        rec = train_model(train, dev, dev_refs, a.model, a.lang, ref_ud=ref_ud, **kw)
    if not a.quiet:
        t = rec.get("tuning", {})
        err(f"{display_name(a.model)}: trained on {rec['train_sentences']} sentences in {rec['total_seconds']:.0f} s; "
            f"best epoch {rec.get('best_epoch')} (dev BLEU {rec.get('dev_bleu') or 0:.2f})"
            + (f", tuned dev BLEU {t['dev_bleu']}" if t.get("dev_bleu") is not None else ""))
    return EXIT_OK


def cmd_sr_realize(a) -> int:
    """``wo sr realize``: T1 input -> SR submission file and its .tok twin, on the batch spine
    (:func:`wo.sr.realizer.run`: ``--on-error``, atomic outputs, the finished prefix on Ctrl-C)."""
    from ..lm.model import LMError
    from ..model import ModelError
    from ..sr.models import resolve_model
    from ..sr.realizer import run

    want = a.model or a.lang
    if want:
        from ..sr.t1 import peek_track

        try:
            a.model = resolve_model(want, peek_track(a.input))
        except FileNotFoundError as exc:
            err(str(exc))
            return EXIT_USER
    from ..sr.stages import parse_settings

    try:
        settings = parse_settings(a.set or [])
    except ValueError as exc:
        err(str(exc))
        return EXIT_USER
    opts = {"timeout": a.timeout, "max_memory": a.max_memory, "gold_forms": not a.no_gold_forms,
            "settings": settings}
    try:
        return batch_run(a, lambda bar: run(
            a.model, a.input, a.output, tok=a.tok or "auto", output_format=a.format, jobs=a.jobs,
            on_error=a.on_error, backend=a.backend,
            scheduler=a.scheduler, progress=bar.update, report=lambda m: (bar.clear(), err(m)), **opts))
    except FileNotFoundError as exc:
        if exc.filename == a.input:
            raise
        err(f"{exc.filename}: no such file (--model, or an LM named by --set)")
        return EXIT_USER
    except UnicodeDecodeError:
        raise                                   # main names it
    except (ValueError, ModelError, LMError) as exc:
        err(str(exc))
        return EXIT_USER


def cmd_sr_models(a) -> int:
    """``wo sr models``: the shipped SR models with their language, training data, licence and
    test figures; exit 1 with how to get one when none is installed."""
    from ..sr.models import list_models

    rows = list_models()
    if a.json:
        print(json.dumps(rows, indent=1))
        return EXIT_OK if rows else 1
    if not rows:
        from ..resources import model_dirs

        err("no SR model found: install the model package (`pip install ./corpora/packages/wo-models-sr` in a "
            "clone of wo), set WO_MODEL_DIR to a directory holding sr/CODE.wo, or train one with `wo sr train` "
            f"(searched: {', '.join(model_dirs()) or 'nothing'})")
        return 1
    print(f"{'model':<15} {'track':<7} {'lang':<5} {'MB':>5}  {'trained on':<34} {'test BLEU':>9} {'gold-form':>9}  "
          f"licence")
    for r in rows:
        d, res = r["data"], r["results"]
        on = d.get("trained_on", "")
        if d.get("train_sentences"):
            on = f"{on} ({d['train_sentences']:,} sentences)"
        bleu = f"{res['bleu']:.2f}" if "bleu" in res else "-"
        gold = f"{res['gold_bleu']:.2f}" if "gold_bleu" in res else "-"
        print(f"{r['code']:<15} {r['track']:<7} {r['lang']:<5} {r['bytes'] / 1e6:>5.1f}  {on:<34} {bleu:>9} {gold:>9}  "
              f"{d.get('licence', '')}")
    return EXIT_OK


def cmd_sr_evaluate(a) -> int:
    """``wo sr evaluate``: SR metrics (BLEU, NIST, DIST) on lower-cased tokens, plus sacrebleu."""
    from ..eval.metrics import sr_score
    from ..sr.t1 import read_hypotheses, read_references

    hyps, refs = read_hypotheses(a.hyp), read_references(a.ref)
    if len(hyps) != len(refs):
        err(f"{display_name(a.hyp)}: {len(hyps)} sentences but {display_name(a.ref)} has {len(refs)}")
        return EXIT_USER
    sc = sr_score(hyps, refs)
    print(json.dumps(sc.__dict__) if a.json else sc)
    return EXIT_OK


def register(sub) -> None:
    """Add the ``sr`` verbs to the ``wo`` subparsers ``sub``."""
    sr = sub.add_parser("sr", help="Surface Realisation shared task (SR'19 shallow track, T1)")
    ss = sr.add_subparsers(dest="verb", required=True, metavar="VERB")
    m = ss.add_parser("make-input", help="UD CoNLL-U -> T1 input (scrambled ids, lemmas, lin)")
    m.add_argument("--ud", default="-", help=f"UD CoNLL-U (.xz ok) {STDIO_HELP}; default -")
    m.add_argument("--out", "--output", dest="out", default="-", help=f"T1 output {STDIO_HELP}; default -")
    m.set_defaults(output_files=("out",))
    m.add_argument("--track", choices=("shallow", "deep"), default="shallow",
                   help="shallow (T1, the default) or deep (T2: content words and predicate-argument relations)")
    m.add_argument("--with-gold", action="store_true", help="gold form in column 3 and original_id "
                                                              "(deep: and the UD sentence as a # gold comment)")
    m.add_argument("--seed", type=int, default=1)
    m.set_defaults(func=cmd_sr_make_input)
    t = ss.add_parser("train", help="train an SR model: every stage, then its decoding chosen on --dev",
                      description="Train an SR model on T1 input with gold forms (wo sr make-input --with-gold): "
                                  "lifting, candidate forms and inflection, the ordering model (best epoch by dev "
                                  "BLEU), contractions; then, on --dev, the treebank's LMs, their weights, the lifting "
                                  "threshold, the allomorphs and the form context. Expert settings: --set KEY=VALUE "
                                  "(docs/sr.md lists the keys).")
    t.add_argument("--train", required=True, help="T1 training input with gold forms and original_id, or --train-ref")
    t.add_argument("--train-ref", help="UD file with the training references (alignment, lexicon, contractions)")
    t.add_argument("--dev", help="T1 dev input: chooses the epoch and the decoding settings (no --dev: none tuned)")
    t.add_argument("--dev-ref", help="dev references: UD CoNLL-U or tokenized lines (default: --dev with gold)")
    t.add_argument("--model", required=True, help="output model file (its LMs are written beside it)")
    t.set_defaults(output_files=("model",), input_files=("train", "train_ref", "dev", "dev_ref", "mwt"))
    t.add_argument("--lang", required=True, help="ISO 639-1 language code: selects the language module (en: "
                   "lemminflect, a/an, contractions) and the detokenizer; 'xx' for none")
    t.add_argument("--epochs", type=positive_int, default=8, help="training epochs (default 8)")
    t.add_argument("--mwt", nargs="+", default=None,
                   help="UD CoNLL-U file(s) whose multiword-token lines teach the contractions "
                        "(fr du = de le); default: --train-ref")
    t.add_argument("--track", choices=("auto", "shallow", "deep"), default="auto",
                   help="shallow (T1) or deep (T2: function words generated) track; default: read from --train")
    t.add_argument("--thorough", action="store_true",
                   help="the shipped models' recipe: ordering templates chosen by cross-validation on the training "
                        "file and three perceptrons per direction (pt_gsd, 10k sentences: 10 min on 2 cores)")
    t.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", type=_set_type(train_settings, "KEY=VALUE"),
                   help="expert setting, repeatable (e.g. order.suffix=chars:2, order.r2l=0; docs/sr.md)")
    t.add_argument("--jobs", type=positive_int, default=1,
                   help="processes: the perceptrons train side by side (one perceptron: its shards are mixed "
                        "after each epoch, McDonald et al. 2010); the cross-validation and the domains too")
    t.add_argument("--backend", default="loky", choices=["loky", "dask"], help="process pool or Dask cluster")
    t.add_argument("--scheduler", default=None, help="Dask scheduler address for --backend dask")
    t.add_argument("--seed", type=int, default=1, help="seed of the training shuffles")
    t.add_argument("--quiet", action="store_true", help="no progress messages")
    t.set_defaults(func=cmd_sr_train)
    r = ss.add_parser("realize", help="T1 input -> SR submission file (+ .tok)",
                      description="Realise T1 input with an SR model's stages. Expert settings: --set "
                                  "ROLE.KEY=VALUE (e.g. lift.threshold=2, forms.lm=none; docs/sr.md).")
    r.add_argument("--model", default=None,
                   help="model file, or a shipped model's treebank code (pt_bosque) or language code (pt); "
                        "default: the shipped English model")
    r.add_argument("--lang", default=None, help="language or treebank code of a shipped model (`wo sr models`)")
    r.add_argument("--input", default="-", help=f"T1 input {STDIO_HELP}; default -")
    r.add_argument("--output", default="-", help=f"submission file {STDIO_HELP}; default -")
    r.add_argument("--tok", default=None, help="tokenized twin (default: OUTPUT.tok; none for -, a pipe or a device)")
    batch_options(r, formats=("text", "jsonl", "conllu"), fallback="its lemmas in input order",
                  skip="its sent_id with an empty text and an empty .tok line",
                  format_help="output: the SR submission file (text) and its .tok twin, JSON lines (one "
                              "object per sentence: sent_id, text, tokens, score, status, seconds, pops, message, "
                              "surface, order, heads, labels, edges; a .tok twin only with --tok), or CoNLL-U: the "
                              "realised tree in output order (forms, lemmas, UPOS, XPOS, FEATS, heads, relations)")
    r.add_argument("--timeout", type=nonneg_float, default=0.0, help="seconds per sentence (0 = none)")
    r.add_argument("--max-memory", type=positive_float, default=None, metavar="MB",
                   help="search orderer: memory per sentence in MiB (default 1536: a worker stays under ~2 GB); "
                        "past it the search stops with what it has (status memory)")
    r.add_argument("--no-gold-forms", action="store_true",
                   help="inflect even when the T1 input carries gold forms in column 3 (by default they "
                        "are used, so only the order is predicted)")
    r.add_argument("--set", action="append", default=[], metavar="ROLE.KEY=VALUE", type=_set_type(_stage_pairs, "ROLE.KEY=VALUE"),
                   help="expert setting of a stage, repeatable (e.g. lift.threshold=2, forms.lm=none; docs/sr.md)")
    r.set_defaults(func=cmd_sr_realize)
    ls = ss.add_parser("models", help="list the shipped SR models (language, data, licence, test figures)")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_sr_models)
    e = ss.add_parser("evaluate", help="SR metrics: BLEU, NIST, DIST (lower-cased tokens) + sacrebleu")
    e.add_argument("--hyp", required=True, help=f"tokenized lines, or an SR submission file with its .tok {STDIO_HELP}")
    e.add_argument("--ref", required=True, help="UD CoNLL-U, T1 with gold, or tokenized lines")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_sr_evaluate)

