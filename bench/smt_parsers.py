"""Train the small spaCy tagger + dependency parsers of the Chinese->English syntactic SMT (``wo.smt.parse``).

    OMP_NUM_THREADS=1 .venv/bin/python bench/smt_parsers.py [--lang en zh] [--ewt corpora/ud-en-ewt]
        [--shared ../shared] [--work /work/smtdata/parsers] [--out corpora/models/smt]
        [--results bench/results/smt/parsers.json] [--max-steps 8000] [--max-minutes 19]
        [--patience 2000] [--eval-frequency 200] [--skip-train]

Relative paths are taken relative to the repository root (so ``--shared ../shared`` is
``/work/shared`` for a checkout at ``/work/main``).  Steps, per language:

1. convert CoNLL-U to spaCy DocBin files under ``--work`` (one Doc per sentence, syntactic words only:
   multi-word-token ranges ``3-4`` and empty nodes ``8.1`` are skipped);
2. ``python -m spacy train`` from a blank pipeline (tok2vec HashEmbedCNN width 96 depth 4 with
   prefix/suffix/shape features, tagger and parser listening to it, no static vectors) on one CPU
   thread (``--gpu-id -1``, ``OMP_NUM_THREADS=1``), bounded by ``--max-steps``, early stopping
   ``--patience`` and a hard wall-clock cap ``--max-minutes`` (the run is stopped; ``model-best``,
   written at every improvement on dev, is kept);
3. copy ``model-best`` to ``--out/{en,zh}-parser`` and evaluate it through ``wo.smt.parse``
   (the shipped API: pre-tokenized input, one tree per sentence) on every dev set;
4. write ``--results`` (JSON): tag accuracy, UAS, LAS (all tokens and without punctuation) per dev set,
   training sentences/words, wall time, model size.

English (UD English-EWT v2.16): ``tag_`` = XPOS (PTB), dependency labels = the full UD deprel
(``nmod:poss``, ``obl:tmod``, ...).  Train on train, select and report on dev.

Chinese (``--shared``/corpora/ud-zh): ``tag_`` = UPOS, labels = full UD v2 deprels.  Train on
UD Chinese 1.3 train (traditional script, UD v1) converted to simplified script (OpenCC t2s on FORM
and LEMMA, ASCII punctuation to full-width) and to UD v2 labels (``V1_TO_V2`` below), plus GSDSimp test,
plus 80 % of Beginner (every 5th sentence, index % 5 == 4, held out).  Dev (model selection: both
together; reported separately): GSDSimp dev and the held-out 20 % of Beginner.
"""
from __future__ import annotations

import argparse
import json
import lzma
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# --------------------------------------------------------------------------------------------------
# CoNLL-U reading and UD v1 -> v2 conversion
# --------------------------------------------------------------------------------------------------

# Plain relabelling of UD v1 relations (the UD v2 guidelines' renamings).
V1_TO_V2 = {
    "dobj": "obj",
    "nsubjpass": "nsubj:pass",
    "csubjpass": "csubj:pass",
    "auxpass": "aux:pass",
    "neg": "advmod",
    "mwe": "fixed",
    "name": "flat",
    "foreign": "flat:foreign",
    "remnant": "orphan",
}
# ASCII punctuation of the v1.3 file -> the full-width forms used by GSDSimp / Beginner.
PUNCT_T2S = {",": "，", ".": "。", "(": "（", ")": "）", ":": "：", ";": "；", "?": "？", "!": "！",
             "「": "“", "」": "”", "『": "‘", "』": "’"}
PREDICATE_UPOS = {"VERB", "ADJ", "AUX"}


def open_text(path: Path):
    """Open a plain or xz-compressed text file."""
    path = Path(path)
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8")
    if not path.exists() and Path(str(path) + ".xz").exists():
        return lzma.open(str(path) + ".xz", "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_sentences(path: Path) -> list[list[dict]]:
    """Sentences of a CoNLL-U file as lists of syntactic words.

    Each word is a dict with ``form, lemma, upos, xpos, feats (str), head (0-based, -1 root), deprel``.
    Multi-word-token range lines and empty nodes are skipped.
    """
    import conllu

    out = []
    with open_text(path) as f:
        for sent in conllu.parse_incr(f):
            words = [t for t in sent if isinstance(t["id"], int)]
            ids = {t["id"]: i for i, t in enumerate(words)}
            rows = []
            for t in words:
                feats = t["feats"] or {}
                rows.append({
                    "form": t["form"],
                    "lemma": t["lemma"] or "_",
                    "upos": t["upos"] or "X",
                    "xpos": t["xpos"] or t["upos"] or "X",
                    "feats": "|".join(f"{k}={v}" for k, v in sorted(feats.items())),
                    "head": ids[t["head"]] if t["head"] else -1,
                    "deprel": t["deprel"],
                    "space": not (t["misc"] or {}).get("SpaceAfter") == "No",
                })
            if rows:
                out.append(rows)
    return out


def v1_to_v2(sents: list[list[dict]], known: set[str]) -> list[list[dict]]:
    """UD Chinese 1.3 (traditional, UD v1) -> simplified script, UD v2 labels and UPOS (in place).

    * FORM and LEMMA: OpenCC ``t2s``; PUNCT forms: ASCII -> full-width (``PUNCT_T2S``).
    * UPOS: CONJ -> CCONJ.
    * ``V1_TO_V2`` renamings; ``nmod`` / ``nmod:tmod`` on a predicate head (VERB/ADJ/AUX) -> ``obl`` /
      ``obl:tmod``; ``case:aspect`` (了 着 过) -> AUX ``aux`` (and 著 -> 着); the relativiser 的 (XPOS DEC),
      labelled ``acl:relcl`` in v1, -> SCONJ ``mark:rel``; ``case:dec`` (的) -> SCONJ ``mark:rel`` when
      ``Case=Rel``, else PART ``case``.
    * UD 1.3 differs from the v2 GSD annotation in more ways than these (e.g. some adverbs are ``mark``,
      some prepositions ``acl``); those are left as they are.
    * any other label not in ``known`` (the labels of the v2 treebanks) -> the part before ':'.
    """
    from opencc import OpenCC

    cc = OpenCC("t2s")
    for s in sents:
        for w in s:
            w["form"] = cc.convert(w["form"])
            if w["lemma"] != "_":
                w["lemma"] = cc.convert(w["lemma"])
            if w["upos"] == "PUNCT":
                w["form"] = PUNCT_T2S.get(w["form"], w["form"])
            if w["upos"] == "CONJ":
                w["upos"] = "CCONJ"
        for w in s:
            d = V1_TO_V2.get(w["deprel"], w["deprel"])
            head_upos = s[w["head"]]["upos"] if w["head"] >= 0 else None
            if d in ("nmod", "nmod:tmod") and head_upos in PREDICATE_UPOS:
                d = "obl" if d == "nmod" else "obl:tmod"
            elif d == "case:aspect":
                d, w["upos"] = "aux", "AUX"
                w["form"] = {"著": "着"}.get(w["form"], w["form"])  # t2s keeps the ambiguous 著
            elif d == "acl:relcl" and w["xpos"] == "DEC":  # v1 labels the relativiser 的 itself
                d, w["upos"] = "mark:rel", "SCONJ"
            elif d == "case:dec":
                if "Case=Rel" in w["feats"]:
                    d, w["upos"] = "mark:rel", "SCONJ"
                else:
                    d = "case"
            if d not in known and d != "root":
                d = d.split(":")[0]
            w["deprel"] = d
    return sents


def to_docbin(nlp, sents: list[list[dict]], tag_field: str, path: Path, zh: bool) -> None:
    """Write sentences as a DocBin: one Doc per sentence, ``tag_`` from ``tag_field``, heads, deps
    (UD ``root`` stored as spaCy's ``ROOT``)."""
    from spacy.tokens import Doc, DocBin

    db = DocBin(store_user_data=False)
    for s in sents:
        words = [w["form"] for w in s]
        spaces = [False] * len(s) if zh else [w["space"] for w in s]
        heads = [w["head"] if w["head"] >= 0 else i for i, w in enumerate(s)]
        deps = ["ROOT" if w["head"] < 0 else w["deprel"] for w in s]
        doc = Doc(nlp.vocab, words=words, spaces=spaces, tags=[w[tag_field] for w in s],
                  heads=heads, deps=deps, sent_starts=[True] + [False] * (len(s) - 1))
        db.add(doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    db.to_disk(path)


# --------------------------------------------------------------------------------------------------
# config
# --------------------------------------------------------------------------------------------------

CONFIG = """
[paths]
train = null
dev = null
vectors = null
init_tok2vec = null

[system]
gpu_allocator = null
seed = {seed}

[nlp]
lang = "{lang}"
pipeline = ["tok2vec","tagger","parser"]
batch_size = 256
disabled = []
before_creation = null
after_creation = null
after_pipeline_creation = null
{tokenizer}

[components]

[components.tok2vec]
factory = "tok2vec"

[components.tok2vec.model]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 96
depth = 4
embed_size = {embed_size}
window_size = 1
maxout_pieces = 3
subword_features = true

[components.tagger]
factory = "tagger"
label_smoothing = 0.0
neg_prefix = "!"
overwrite = false
scorer = {{"@scorers":"spacy.tagger_scorer.v1"}}

[components.tagger.model]
@architectures = "spacy.Tagger.v2"
nO = null
normalize = false

[components.tagger.model.tok2vec]
@architectures = "spacy.Tok2VecListener.v1"
width = ${{components.tok2vec.model.width}}
upstream = "tok2vec"

[components.parser]
factory = "parser"
learn_tokens = false
min_action_freq = 1
moves = null
scorer = {{"@scorers":"spacy.parser_scorer.v1"}}
update_with_oracle_cut_size = 100

[components.parser.model]
@architectures = "spacy.TransitionBasedParser.v2"
state_type = "parser"
extra_state_tokens = false
hidden_width = 64
maxout_pieces = 2
use_upper = true
nO = null

[components.parser.model.tok2vec]
@architectures = "spacy.Tok2VecListener.v1"
width = ${{components.tok2vec.model.width}}
upstream = "tok2vec"

[corpora]

[corpora.train]
@readers = "spacy.Corpus.v1"
path = ${{paths.train}}
max_length = 0
gold_preproc = true
limit = 0
augmenter = null

[corpora.dev]
@readers = "spacy.Corpus.v1"
path = ${{paths.dev}}
max_length = 0
gold_preproc = true
limit = 0
augmenter = null

[training]
dev_corpus = "corpora.dev"
train_corpus = "corpora.train"
seed = ${{system.seed}}
gpu_allocator = ${{system.gpu_allocator}}
dropout = 0.1
accumulate_gradient = 1
patience = {patience}
max_epochs = 0
max_steps = {max_steps}
eval_frequency = {eval_frequency}
frozen_components = []
annotating_components = []
before_to_disk = null
before_update = null

[training.batcher]
@batchers = "spacy.batch_by_words.v1"
discard_oversize = false
tolerance = 0.2
get_length = null

[training.batcher.size]
@schedules = "compounding.v1"
start = 100
stop = 1000
compound = 1.002
t = 0.0

[training.logger]
@loggers = "spacy.ConsoleLogger.v1"
progress_bar = false

[training.optimizer]
@optimizers = "Adam.v1"
beta1 = 0.9
beta2 = 0.999
L2_is_weight_decay = true
L2 = 0.01
grad_clip = 1.0
use_averages = true
eps = 0.00000001
learn_rate = 0.001

[training.score_weights]
tag_acc = 0.34
dep_uas = 0.33
dep_las = 0.33
dep_las_per_type = null
sents_p = null
sents_r = null
sents_f = null

[pretraining]

[initialize]
vectors = ${{paths.vectors}}
init_tok2vec = ${{paths.init_tok2vec}}
vocab_data = null
lookups = null
before_init = null
after_init = null

[initialize.components]

[initialize.tokenizer]
"""

TOKENIZERS = {
    "en": 'tokenizer = {"@tokenizers":"spacy.Tokenizer.v1"}',
    # char segmentation: no pkuseg / jieba needed to load (wo.smt.parse never runs the tokenizer)
    "zh": '\n[nlp.tokenizer]\n@tokenizers = "spacy.zh.ChineseTokenizer"\nsegmenter = "char"',
}


def write_config(path: Path, lang: str, args) -> None:
    """Write the training config of ``lang`` (see ``CONFIG``)."""
    text = CONFIG.format(lang=lang, tokenizer=TOKENIZERS[lang], seed=args.seed,
                         embed_size=args.embed_size, patience=args.patience,
                         max_steps=args.max_steps, eval_frequency=args.eval_frequency)
    path.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# steps
# --------------------------------------------------------------------------------------------------


def prepare(lang: str, args, log) -> dict:
    """Convert the treebanks of ``lang``; return {"train": [...], "dev": {name: sents}, "paths": ...}."""
    import spacy

    nlp = spacy.blank(lang) if lang == "en" else spacy.blank(
        "zh", config={"nlp": {"tokenizer": {"segmenter": "char"}}})
    work = args.work / lang
    if lang == "en":
        train = read_sentences(args.ewt / "en_ewt-ud-train.conllu.xz")
        dev = {"ewt-dev": read_sentences(args.ewt / "en_ewt-ud-dev.conllu")}
        tag_field = "xpos"
        sources = {"ewt-train": len(train)}
    else:
        zh = args.shared / "corpora" / "ud-zh"
        gsd_dev = read_sentences(zh / "zh_gsdsimp-ud-dev.conllu")
        gsd_test = read_sentences(zh / "zh_gsdsimp-ud-test.conllu")
        beginner = read_sentences(zh / "zh_beginner-ud-test.conllu")
        known = {w["deprel"] for s in gsd_dev + gsd_test + beginner for w in s}
        v13 = v1_to_v2(read_sentences(zh / "zh-ud-train.v1.3.conllu"), known)
        beg_train = [s for i, s in enumerate(beginner) if i % 5 != 4]
        beg_dev = [s for i, s in enumerate(beginner) if i % 5 == 4]
        train = v13 + gsd_test + beg_train
        dev = {"gsdsimp-dev": gsd_dev, "beginner-heldout": beg_dev}
        tag_field = "upos"
        sources = {"ud-zh-1.3-train (t2s, v1->v2)": len(v13), "gsdsimp-test": len(gsd_test),
                   "beginner (80%, i % 5 != 4)": len(beg_train)}
    to_docbin(nlp, train, tag_field, work / "train.spacy", lang == "zh")
    all_dev = [s for d in dev.values() for s in d]
    to_docbin(nlp, all_dev, tag_field, work / "dev.spacy", lang == "zh")
    log(f"[{lang}] train {len(train)} sentences {sum(map(len, train))} words; dev "
        + ", ".join(f"{k} {len(v)}" for k, v in dev.items()))
    return {"train": train, "dev": dev, "tag_field": tag_field, "sources": sources}


def train(lang: str, args, log) -> dict:
    """Run ``spacy train`` in a subprocess on one thread; stop it after ``--max-minutes``."""
    work = args.work / lang
    cfg = work / "config.cfg"
    write_config(cfg, lang, args)
    out = work / "train"
    if out.exists():
        shutil.rmtree(out)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "spacy", "train", str(cfg), "--output", str(out), "--gpu-id", "-1",
           "--paths.train", str(work / "train.spacy"), "--paths.dev", str(work / "dev.spacy")]
    log(f"[{lang}] " + " ".join(cmd))
    t0 = time.time()
    stopped = False
    with open(work / "train.log", "w") as logf:
        proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        try:
            proc.wait(timeout=args.max_minutes * 60)
        except subprocess.TimeoutExpired:
            stopped = True
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
    wall = time.time() - t0
    if not (out / "model-best").exists():
        raise RuntimeError(f"training {lang} produced no model-best; see {work / 'train.log'}")
    if not stopped and proc.returncode != 0:
        raise RuntimeError(f"spacy train failed ({proc.returncode}); see {work / 'train.log'}")
    log(f"[{lang}] trained in {wall:.0f} s" + (" (stopped at --max-minutes)" if stopped else ""))
    return {"wall_seconds": round(wall, 1), "stopped_at_time_cap": stopped,
            "log_tail": _log_tail(work / "train.log")}


def _log_tail(path: Path) -> dict:
    """Last evaluation row of a spaCy console log: epoch, step and best score seen."""
    rows = []
    for line in Path(path).read_text(errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 9 and parts[0].isdigit() and parts[1].isdigit():
            rows.append(parts)
    if not rows:
        return {}
    # the console shows SCORE rounded: recompute it from TAG_ACC, DEP_UAS, DEP_LAS (score_weights)
    best = max(rows, key=lambda r: 0.34 * float(r[-5]) + 0.33 * float(r[-3]) + 0.33 * float(r[-2]))
    return {"epochs": int(rows[-1][0]) + 1, "steps": int(rows[-1][1]), "best_step": int(best[1]),
            "best_dev_during_training": {"tag_acc": float(best[-5]), "uas_no_punct": float(best[-3]),
                                         "las_no_punct": float(best[-2])},
            "evaluations": len(rows)}


META = {
    "en": {"name": "wo_smt_en_parser", "version": "1.0.0",
           "description": "wo SMT English tagger (PTB XPOS) + UD dependency parser, trained by "
                          "bench/smt_parsers.py on UD English-EWT v2.16 train",
           "license": "CC BY-SA 4.0 (derived from UD English-EWT)",
           "sources": [{"name": "UD English-EWT v2.16", "license": "CC BY-SA 4.0"}]},
    "zh": {"name": "wo_smt_zh_parser", "version": "1.0.0",
           "description": "wo SMT Chinese (simplified, pre-segmented) UPOS tagger + UD v2 dependency parser, "
                          "trained by bench/smt_parsers.py on UD Chinese 1.3 train (OpenCC t2s, v1->v2), "
                          "GSDSimp test and 80% of Beginner",
           "license": "CC BY-NC-SA 4.0 (NonCommercial: trained on UD Chinese 1.3, CC BY-NC-SA 4.0, and "
                      "UD Chinese-Beginner, CC BY-NC-SA 3.0)",
           "sources": [{"name": "UD Chinese 1.3 train", "license": "CC BY-NC-SA 4.0"},
                       {"name": "UD Chinese-GSDSimp v2.16 test", "license": "CC BY-SA 4.0"},
                       {"name": "UD Chinese-Beginner (80%)", "license": "CC BY-NC-SA 3.0"}]},
}


def ship(lang: str, args, log) -> Path:
    """Copy model-best to ``--out/<lang>-parser`` (replacing it)."""
    src = args.work / lang / "train" / "model-best"
    dst = args.out / f"{lang}-parser"
    if dst.exists():
        shutil.rmtree(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst)
    meta_path = dst / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta.update(META[lang])
    meta_path.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    log(f"[{lang}] shipped {dst} ({dir_size(dst) / 1e6:.1f} MB)")
    return dst


def dir_size(path: Path) -> int:
    """Total bytes of the files under ``path``."""
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def is_punct(w: dict) -> bool:
    """Punctuation in the UD sense (deprel punct)."""
    return w["deprel"] == "punct"


def evaluate(parser, sents: list[list[dict]], tag_field: str) -> dict:
    """Tag accuracy, UAS and LAS of ``parser`` on gold ``sents`` (all tokens, and without punct)."""
    t0 = time.time()
    parses = parser.parse([[w["form"] for w in s] for s in sents])
    secs = time.time() - t0
    n = tag = uas = las = 0
    np_ = uas_np = las_np = 0
    for s, p in zip(sents, parses):
        for i, w in enumerate(s):
            n += 1
            tag += p.pos[i] == w[tag_field]
            gold_label = "root" if w["head"] < 0 else w["deprel"]
            u = p.heads[i] == w["head"]
            lab = u and p.labels[i] == gold_label
            uas += u
            las += lab
            if not is_punct(w):
                np_ += 1
                uas_np += u
                las_np += lab
    pct = lambda a, b: round(100.0 * a / max(b, 1), 2)
    return {"sentences": len(sents), "words": n, "tag_acc": pct(tag, n), "uas": pct(uas, n),
            "las": pct(las, n), "uas_no_punct": pct(uas_np, np_), "las_no_punct": pct(las_np, np_),
            "words_per_second": round(n / secs, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lang", nargs="+", default=["en", "zh"], choices=["en", "zh"])
    ap.add_argument("--ewt", default="corpora/ud-en-ewt", help="UD English-EWT directory")
    ap.add_argument("--shared", default="../shared", help="shared data root (holds corpora/ud-zh)")
    ap.add_argument("--work", default="/work/smtdata/parsers", help="DocBins, configs, training output")
    ap.add_argument("--out", default="corpora/models/smt", help="where <lang>-parser is shipped")
    ap.add_argument("--results", default="bench/results/smt/parsers.json")
    ap.add_argument("--max-steps", type=int, default=8000)
    ap.add_argument("--max-minutes", type=float, default=19.0, help="hard wall-clock cap per training")
    ap.add_argument("--patience", type=int, default=2000, help="steps without dev improvement")
    ap.add_argument("--eval-frequency", type=int, default=200)
    ap.add_argument("--embed-size", type=int, default=4000, help="HashEmbedCNN NORM rows (others half)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-train", action="store_true", help="only evaluate and ship existing model-best")
    args = ap.parse_args(argv)
    for name in ("ewt", "shared", "work", "out", "results"):
        p = Path(getattr(args, name))
        setattr(args, name, (p if p.is_absolute() else ROOT / p).resolve())

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    from wo.smt.parse import load_parser

    for lang in args.lang:
        data = prepare(lang, args, log)
        entry = results.get(lang, {}) if args.skip_train else {}
        if not args.skip_train:
            entry["training"] = train(lang, args, log)
        elif "training" in entry and (args.work / lang / "train.log").exists():
            entry["training"]["log_tail"] = _log_tail(args.work / lang / "train.log")
        path = ship(lang, args, log)
        parser = load_parser(lang, str(path))
        entry.update({
            "model": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path),
            "model_bytes": dir_size(path),
            "tag": "XPOS (PTB)" if lang == "en" else "UPOS",
            "labels": "full UD v2 deprel (subtypes kept)",
            "n_labels": len(parser.labels),
            "train_sentences": len(data["train"]),
            "train_words": sum(map(len, data["train"])),
            "train_sources": data["sources"],
            "dev": {k: evaluate(parser, v, data["tag_field"]) for k, v in data["dev"].items()},
            "settings": {"max_steps": args.max_steps, "max_minutes": args.max_minutes,
                         "patience": args.patience, "eval_frequency": args.eval_frequency,
                         "embed_size": args.embed_size, "seed": args.seed, "threads": 1},
        })
        for k, v in entry["dev"].items():
            log(f"[{lang}] {k}: tag {v['tag_acc']} UAS {v['uas']} LAS {v['las']} "
                f"(no punct {v['uas_no_punct']}/{v['las_no_punct']})")
        results[lang] = entry
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    log(f"wrote {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
