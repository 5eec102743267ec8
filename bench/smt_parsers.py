"""Rebuild the shipped spaCy tagger + dependency parsers of the Chinese->English syntactic SMT
(``corpora/models/smt/{en,zh}-parser``, loaded by ``wo.smt.parse``) with ``wo smt train-parser``'s
library (``wo.smt.parsers.train_parser``) and the shipped recipe, and write their record.

    OMP_NUM_THREADS=1 .venv/bin/python bench/smt_parsers.py [--lang en zh] [--ewt corpora/ud-en-ewt]
        [--shared ../shared] [--work /work/smtdata/parsers] [--out corpora/models/smt]
        [--results bench/results/smt/parsers.json] [--max-steps 8000] [--max-minutes 19]
        [--patience 2000] [--eval-frequency 200] [--skip-train]

Relative paths are taken relative to the repository root (so ``--shared ../shared`` is
``/work/shared`` for a checkout at ``/work/main``).  Per language, ``--work/<lang>`` keeps the
DocBins, the config, ``train.log`` and spaCy's checkpoints; ``model-best`` is copied to
``--out/<lang>-parser`` (its ``meta.json`` given the name, description and licence below) and
scored through ``wo.smt.parse`` on every dev set; ``--results`` (JSON) gets the record of
``train_parser`` (tag accuracy, UAS, LAS with and without punctuation per dev set, training
sentences/words, wall time, model size) under the language's key.

English (UD English-EWT v2.16): ``tag_`` = XPOS (PTB), labels = the full UD deprel.  Train on
train, select and report on dev.  The same as

    wo smt train-parser --lang en --train corpora/ud-en-ewt/en_ewt-ud-train.conllu.xz \\
        --dev corpora/ud-en-ewt/en_ewt-ud-dev.conllu.xz --out corpora/models/smt/en-parser

Chinese (``--shared``/corpora/ud-zh): ``tag_`` = UPOS, labels = full UD v2 deprels.  Train on
UD Chinese 1.3 train (traditional script, UD v1) converted to simplified script and UD v2
(``--zh-v1``: ``wo.smt.parsers.v1_to_v2``), plus GSDSimp test, plus 80 % of Beginner (every 5th
sentence, index % 5 == 4, held out; this script writes the two parts to ``--work/zh``).  Dev
(model selection: both together; reported separately): GSDSimp dev and the held-out 20 % of
Beginner.

``--skip-train`` re-ships and re-scores an existing ``--work/<lang>/train/model-best`` (the
training figures and settings of the record are kept).
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import common

ROOT = Path(common.ROOT)

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

# the record's names of the training parts and dev sets, in the order of the recipe's files
TRAIN_NAMES = {"en": ["ewt-train"],
               "zh": ["ud-zh-1.3-train (t2s, v1->v2)", "gsdsimp-test", "beginner (80%, i % 5 != 4)"]}
DEV_NAMES = {"en": ["ewt-dev"], "zh": ["gsdsimp-dev", "beginner-heldout"]}


def recipe(lang: str, args) -> dict:
    """The data of ``lang``'s shipped parser: {zh_v1, train, dev} lists of CoNLL-U paths (str).
    For zh the Beginner treebank is split here (``--work/zh/beginner-{train,heldout}.conllu``)."""
    if lang == "en":
        return {"zh_v1": [], "train": [str(args.ewt / "en_ewt-ud-train.conllu.xz")],
                "dev": [str(args.ewt / "en_ewt-ud-dev.conllu.xz")]}
    zh = args.shared / "corpora" / "ud-zh"
    blocks = common.conllu_blocks(str(zh / "zh_beginner-ud-test.conllu"))
    work = args.work / "zh"
    work.mkdir(parents=True, exist_ok=True)
    beg_train = common.write_conllu_blocks(str(work / "beginner-train.conllu"),
                                           [b for i, b in enumerate(blocks) if i % 5 != 4])
    beg_dev = common.write_conllu_blocks(str(work / "beginner-heldout.conllu"),
                                         [b for i, b in enumerate(blocks) if i % 5 == 4])
    return {"zh_v1": [str(zh / "zh-ud-train.v1.3.conllu")],
            "train": [str(zh / "zh_gsdsimp-ud-test.conllu"), beg_train],
            "dev": [str(zh / "zh_gsdsimp-ud-dev.conllu"), beg_dev]}


def verb_line(lang: str, data: dict, out: Path, work: Path, s) -> str:
    """The ``wo smt train-parser`` command line that trains what this script trains."""
    rel = lambda p: str(Path(p).relative_to(ROOT)) if Path(p).is_relative_to(ROOT) else str(p)  # noqa: E731
    argv = ["wo", "smt", "train-parser", "--lang", lang]
    for opt in ("zh_v1", "train", "dev"):
        if data[opt]:
            argv += [f"--{opt.replace('_', '-')}", *map(rel, data[opt])]
    argv += ["--out", rel(out), "--work", rel(work), "--max-steps", s.max_steps, "--max-minutes", s.max_minutes,
             "--patience", s.patience, "--eval-frequency", s.eval_frequency, "--embed-size", s.embed_size,
             "--seed", s.seed]
    return " ".join(shlex.quote(str(a)) for a in argv)


def rename(d: dict, names) -> dict:
    """``d`` with its keys replaced, in order, by ``names``."""
    return dict(zip(names, d.values()))


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

    from wo.smt import parsers as P
    from wo.smt.parse import load_parser

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    settings = P.Settings(max_steps=args.max_steps, max_minutes=args.max_minutes, patience=args.patience,
                          eval_frequency=args.eval_frequency, embed_size=args.embed_size, seed=args.seed)
    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    for lang in args.lang:
        data = recipe(lang, args)
        work, out = args.work / lang, args.out / f"{lang}-parser"
        if args.skip_train:      # re-ship model-best and score it again; the training figures stay
            entry = results.get(lang, {})
            if "training" in entry and (work / "train.log").exists():
                entry["training"]["log_tail"] = P.log_tail(work / "train.log")
            P.ship(work / "train" / "model-best", out, META[lang])
            parser = load_parser(lang, str(out))
            tag = "xpos" if lang == "en" else "upos"
            dev = {P.set_name(p): P.read_treebank(p) for p in data["dev"]}
            entry.update({"model_bytes": P.dir_size(out), "n_labels": len(parser.labels),
                          "dev": {k: P.evaluate(parser, v, tag) for k, v in dev.items()}})
            for k, v in entry["dev"].items():
                log(f"[{lang}] {k}: tag {v['tag_acc']} UAS {v['uas']} LAS {v['las']}")
        else:
            entry = P.train_parser(lang, data["train"], data["dev"], str(out), zh_v1=data["zh_v1"],
                                   settings=settings, work=str(work), meta=META[lang], log=log)
            del entry["lang"]
            entry["train_sources"] = rename(entry["train_sources"], TRAIN_NAMES[lang])
            entry["wo_command"] = verb_line(lang, data, out, work, settings)
        entry["dev"] = rename(entry["dev"], DEV_NAMES[lang])
        entry["model"] = str(out.relative_to(ROOT)) if out.is_relative_to(ROOT) else str(out)
        results[lang] = entry
        common.write_record(str(args.results), results, command=False, indent=2, ensure_ascii=False)
    log(f"wrote {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
