"""Multilingual surface realisation: every UD treebank, wo against IMSurReal and ZGen_SR.

    python bench/sr_multi.py prepare [--tb CODE ...]     # data into out/sr-multi/CODE/
    python bench/sr_multi.py train   [--tb CODE ...] [--jobs 2]   # one wo sr train --thorough each (out/sr-multi/CODE/CODE.wo)
    python bench/sr_multi.py eval    [--tb CODE ...] [--split test|dev]   # wo sr realize runs, scored
    python bench/sr_multi.py ship    [--tb CODE ...]     # the model and its LMs into corpora/models/sr
    python bench/sr_multi.py table                       # docs/sr-multi.md from bench/results/sr_multi/

Data protocol (the same for wo and the peers):
* a treebank with a train file: train on train, choose epochs on dev, decode test once;
* a dev/test-only treebank (SR'19 languages whose train file could not be obtained): the first
  90 % of dev sentences train, the last 10 % choose epochs, test is decoded once; every figure
  of such a treebank is marked "trained on dev";
* zh: UD Chinese 1.3 train (traditional script, UD v1 labels) converted by
  ``wo.smt.parsers.v1_to_v2`` (OpenCC t2s, v1 -> v2 labels) plus the first 90 % of GSDSimp dev
  (the 1.3 annotation differs from GSDSimp's: 13.6 % of dev tokens have a relation/UPOS pair the
  converted train never has), the last 10 % of dev choose epochs, GSDSimp test.
* T1 inputs: ``wo sr make-input --seed 3`` (test and dev, no gold); training T1 with
  ``--with-gold`` (gold forms in column 3, ``original_id``).
* References: the syntactic words of the UD file (the SR'19 metrics on lower-cased tokens).
"""
from __future__ import annotations

import argparse
import glob
import json
import lzma
import os
import statistics
import sys
import time
from typing import Sequence

from common import ROOT, WO, cpu_name, read_text, run_timed
SHARED = os.environ.get("WO_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
MULTI = os.path.join(SHARED, "corpora", "ud-multi")
WORK = os.path.join(ROOT, "out", "sr-multi")
RES = os.path.join(ROOT, "bench", "results", "sr_multi")

# code -> language; with a train file or dev/test only
WITH_TRAIN = ["en_lines", "fr_sequoia", "fr_partut", "it_partut", "pt_bosque", "pt_gsd", "tr_imst",
              "el_gdt", "vi_vtb"]
DEV_ONLY = ["ja_gsd", "ko_gsd", "ru_gsd", "id_gsd", "es_gsd", "fr_gsd", "de_gsd"]
OTHER = ["en_ewt", "en_partut", "zh_gsdsimp"]
ALL = ["en_ewt", "en_partut"] + WITH_TRAIN + ["zh_gsdsimp"] + DEV_ONLY


LICENCE = {
    "en_ewt": "CC BY-SA 4.0", "en_partut": "CC BY-NC-SA 4.0", "en_lines": "CC BY-NC-SA 4.0",
    "fr_sequoia": "LGPL-LR", "fr_partut": "CC BY-NC-SA 4.0", "it_partut": "CC BY-NC-SA 4.0",
    "pt_bosque": "CC BY-SA 4.0", "pt_gsd": "CC BY-SA 4.0", "tr_imst": "CC BY-NC-SA 4.0",
    "el_gdt": "CC BY-NC-SA 3.0", "vi_vtb": "CC BY-SA 4.0", "zh_gsdsimp": "CC BY-NC-SA 4.0 (UD Chinese 1.3 train) and CC BY-SA 4.0 (GSDSimp dev)",
    "ja_gsd": "CC BY-SA 4.0", "ko_gsd": "CC BY-SA 4.0", "ru_gsd": "CC BY-SA 4.0", "id_gsd": "CC BY-SA 4.0",
    "es_gsd": "CC BY-SA 4.0", "fr_gsd": "CC BY-SA 4.0", "de_gsd": "CC BY-SA 4.0",
}
SHIP = os.path.join(ROOT, "corpora", "models", "sr")
ENGLISH_SR = os.path.join(ROOT, "corpora", "models", "wo-ewt-sr.wo")   # en_ewt's model: the English default


def shipped_model(tb: str) -> str:
    """The path of treebank ``tb``'s shipped model (en_ewt: the English default, else sr/TB.wo)."""
    return ENGLISH_SR if tb == "en_ewt" else os.path.join(SHIP, f"{tb}.wo")
# Expert settings of single treebanks (``wo sr train --set``), each chosen by 5-fold cross-validation on the
# training file before ``wo sr train`` chose templates itself; empty: every treebank takes the recipe as it is.
SETTINGS = {"en_ewt": [f"tune.depmix_lm={os.path.join(ROOT, 'corpora', 'models', 'wo-ewt-depmix4.wolm')}"]}   # the dep-mix LM of EWT train that
# ships for the dependency system (unpruned, 4.1 MB), not a second, pruned one (as the English model before the recipe)


def lang_of(tb: str) -> str:
    """ISO 639-1 code of a treebank code (``pt_bosque`` -> ``pt``)."""
    return tb.split("_")[0]


def blocks(text: str):
    """CoNLL-U sentence blocks (str, no trailing blank line)."""
    return [b.strip("\n") for b in text.split("\n\n") if b.strip("\n")]


def sources(tb: str) -> dict:
    """Source files: {"train": [paths] or blocks, "dev", "test", "trained_on": "train"|"dev"}."""
    if tb == "en_ewt":
        d = os.path.join(ROOT, "corpora", "ud-en-ewt")
        return {"train": os.path.join(d, "en_ewt-ud-train.conllu.xz"),
                "dev": os.path.join(d, "en_ewt-ud-dev.conllu.xz"),
                "test": os.path.join(d, "en_ewt-ud-test.conllu.xz"), "trained_on": "train"}
    if tb == "en_partut":
        d = os.path.join(SHARED, "corpora", "sr19-en_partut")
        # the official SR'19 test is not in ../shared; IMSurReal's repository (data/) has it
        ims = os.path.join(os.environ.get("IMS_SRC", os.path.expanduser("~/imsurreal-src")), "data")
        test = os.path.join(ims, "UD", "en_partut-ud-test.conllu")
        return {"train": os.path.join(d, "UD-en_partut-ud-train.conllu"),
                "dev": os.path.join(d, "UD-en_partut-ud-dev.conllu"),
                "test": test if os.path.exists(test) else None,
                "official_t1_test": os.path.join(ims, "T1", "en_partut-ud-test.conllu") if os.path.exists(test) else None,
                "trained_on": "train"}
    if tb == "zh_gsdsimp":
        d = os.path.join(SHARED, "corpora", "ud-zh")
        return {"train": os.path.join(d, "zh-ud-train.v1.3.conllu"), "dev": os.path.join(d, "zh_gsdsimp-ud-dev.conllu"),
                "test": os.path.join(d, "zh_gsdsimp-ud-test.conllu"), "trained_on": "train (UD 1.3, converted) + 90 % of dev"}
    d = os.path.join(MULTI, tb)
    f = lambda s: os.path.join(d, f"{tb}-ud-{s}.conllu.xz")  # noqa: E731
    if tb in DEV_ONLY:
        return {"train": None, "dev": f("dev"), "test": f("test"), "trained_on": "dev"}
    return {"train": f("train"), "dev": f("dev"), "test": f("test"), "trained_on": "train"}


def convert_zh_train(path: str) -> str:
    """UD Chinese 1.3 train -> CoNLL-U text in simplified script with UD v2 labels (wo.smt.parsers.v1_to_v2)."""
    from wo.smt.parsers import labels_of, read_treebank, v1_to_v2

    known = labels_of(read_treebank(sources("zh_gsdsimp")["dev"]))
    sents = v1_to_v2(read_treebank(path), known)
    out = []
    for i, s in enumerate(sents):
        rows = [f"# sent_id = zh-v1.3-train-{i + 1}"]
        for j, w in enumerate(s):
            misc = "_" if w["space"] else "SpaceAfter=No"
            rows.append("\t".join([str(j + 1), w["form"], w["lemma"] if w["lemma"] != "_" else w["form"], w["upos"],
                                   w["xpos"], w["feats"] or "_", str(w["head"] + 1), w["deprel"], "_", misc]))
        out.append("\n".join(rows))
    return "\n\n".join(out) + "\n\n"


def prepare(tb: str, log) -> dict:
    """Write out/sr-multi/TB/{train,dev,test}.conllu and T1 files; return the data record."""
    from wo.io import read_conllu
    from wo.sr.t1 import format_t1, make_input

    src = sources(tb)
    w = os.path.join(WORK, tb)
    os.makedirs(w, exist_ok=True)
    if src["trained_on"] != "train":   # dev-trained, or zh: the converted 1.3 train and 90 % of dev
        dv = blocks(read_text(src["dev"]))
        k = len(dv) - len(dv) // 10
        tr = blocks(convert_zh_train(src["train"])) if tb == "zh_gsdsimp" else []
        parts = {"train": tr + dv[:k], "dev": dv[k:], "test": blocks(read_text(src["test"]))}
    else:
        parts = {s: blocks(read_text(src[s])) for s in ("train", "dev", "test") if src[s]}
    rec = {"treebank": tb, "lang": lang_of(tb), "trained_on": src["trained_on"]}
    for split, bl in parts.items():
        p = os.path.join(w, f"{split}.conllu")
        with open(p, "w", encoding="utf-8") as f:
            f.write("\n\n".join(bl) + "\n\n")
        sents = read_conllu(p)
        gold = split == "train"
        with open(os.path.join(w, f"{split}.t1"), "w", encoding="utf-8") as f:
            for i, s in enumerate(sents):
                f.write(format_t1(make_input(s, 3, i, gold), gold) + "\n")
        if split == "test":   # the same T1 with the gold forms: ordering-only figures
            with open(os.path.join(w, "test.gold.t1"), "w", encoding="utf-8") as f:
                for i, s in enumerate(sents):
                    x = make_input(s, 3, i, True)
                    x.orig = None   # gold forms in column 3, no original_id (the order stays hidden)
                    f.write(format_t1(x, True) + "\n")
        if split == "test" and src.get("official_t1_test"):   # decode the official SR'19 T1 input
            import shutil

            shutil.copyfile(os.path.join(w, "test.t1"), os.path.join(w, "test.seed3.t1"))
            shutil.copyfile(src["official_t1_test"], os.path.join(w, "test.t1"))
            rec["test_t1"] = "official SR'19 T1 test (IMSurReal repository, data/T1)"
        rec[split] = {"sentences": len(sents), "words": sum(len(s) for s in sents)}
        log(f"{tb} {split}: {len(sents)} sentences, {rec[split]['words']} words")
    _write_record(w, "data.json", rec)
    return rec


def _write_record(w: str, name: str, rec: dict) -> None:
    """Write the step record ``rec`` as out/sr-multi/TB/NAME (``w``: the treebank's directory)."""
    with open(os.path.join(w, name), "w") as f:
        json.dump(rec, f, indent=1)


def wo(*args, log=None):
    """Run ``wo ARGS`` in a subprocess (exit 0 or 1, else SystemExit); returns (``common.Run``, wall
    seconds, peak RSS MB)."""
    r = run_timed([*WO, *args], ok=(0, 1))
    return r, r.wall_s, r.rss_mb


def model_name(tb: str) -> str:
    """The model file name of treebank ``tb`` (its LMs take its stem: TB.words4.wolm)."""
    return "wo-ewt-sr.wo" if tb == "en_ewt" else f"{tb}.wo"


def trained_model(tb: str, suffix: str = "") -> str:
    """out/sr-multi/TB/NAME: where ``train`` writes TB's model."""
    name = model_name(tb)
    return os.path.join(WORK, tb, name[:-3] + suffix + ".wo")


def train(tb: str, log, epochs: int = 8, suffix: str = "", jobs: int = 1, extra: Sequence[str] = (),
          thorough: bool = True) -> dict:
    """One ``wo sr train`` on out/sr-multi/TB (the whole recipe: stages, order model with the
    best epoch by dev BLEU, decoding chosen on dev) -> out/sr-multi/TB/NAME.wo and train.json
    (its training record, the command, wall seconds and peak RSS)."""
    from wo.model import Model

    w = os.path.join(WORK, tb)
    model = trained_model(tb, suffix)
    args = ["sr", "train", "--train", f"{w}/train.t1", "--dev", f"{w}/dev.t1", "--dev-ref", f"{w}/dev.conllu",
            "--lang", lang_of(tb), "--mwt", f"{w}/train.conllu", "--epochs", str(epochs), "--jobs", str(jobs),
            *(["--thorough"] if thorough else []), *[x for kv in SETTINGS.get(tb, []) for x in ("--set", kv)],
            *extra, "--model", model, "--quiet"]
    log(f"{tb}: wo {' '.join(args)}")
    p, secs, rss = wo(*args)
    if p.returncode != 0:
        raise SystemExit(f"{tb}: wo sr train failed: {p.stderr[-2000:]}")
    rec = Model.read_header(model)[0]["training"]
    rec.update(command="wo " + " ".join(os.path.relpath(x, ROOT) if x.startswith(ROOT) else x for x in args),
               wall_seconds=round(secs, 1), peak_rss_mb=round(rss), model_bytes=os.path.getsize(model))
    with open(os.path.join(w, f"train{suffix}.json"), "w") as f:
        json.dump(rec, f, indent=1)
    log(f"{tb}: trained in {secs:.0f}s, best epoch {rec.get('best_epoch')} dev {rec.get('dev_bleu')}, tuned dev "
        f"{rec.get('tuning', {}).get('dev_bleu')}")
    return rec


def _decode(model: str, t1: str, out: str, jobs: int = 1, *sets: str) -> tuple:
    """``wo sr realize --format jsonl`` of ``t1`` into ``out`` (tokenized twin ``out.tok``), timed
    whole process: (records, seconds, peak RSS MB, the command)."""
    args = ["sr", "realize", "--model", model, "--input", t1, "--output", out, "--tok", out + ".tok", "--format",
            "jsonl", "--jobs", str(jobs), "--quiet", *[x for kv in sets for x in ("--set", kv)]]
    p, secs, rss = wo(*args)
    if p.returncode != 0:
        raise SystemExit(f"wo {' '.join(args)} failed: {p.stderr[-2000:]}")
    with open(out, encoding="utf-8") as f:
        recs = [json.loads(ln) for ln in f]
    return recs, secs, rss, "wo " + " ".join(os.path.relpath(x, ROOT) if x.startswith(ROOT) else x for x in args)


def evaluate(tb: str, log, split: str = "test", model: str = None, jobs: int = 1, suffix: str = "") -> dict:
    """Decode SPLIT of TB once with ``wo sr realize`` (timed whole process) and score it.

    Figures: SR'19 BLEU/NIST/DIST (lower-cased syntactic words, :func:`wo.eval.sr_score`) with
    sacrebleu's signature; BLEU with gold forms (``test.gold.t1``: ordering only); surface BLEU
    (multiword tokens contracted on both sides); inflection accuracy of the realised forms
    (overall and for lemmas unseen in training); non-projective sentences (share, exact match
    and BLEU of wo's output on them, with and without lifting: ``--set lift.threshold=2``);
    sentences/s, peak RSS, model size.  Every decode is a ``wo sr realize`` run.
    """
    from wo.eval import sr_score
    from wo.io import is_projective, permutation, read_conllu
    from wo.model import Model
    from wo.sr.mwt import read_ranges, surface_tokens
    from wo.sr.stages import stage_list

    w = os.path.join(WORK, tb)
    model = model or trained_model(tb, suffix)
    out = os.path.join(w, f"{split}{suffix}.hyp")
    ref_path = os.path.join(w, f"{split}.conllu")
    refs = read_conllu(ref_path)
    ref_tok = [" ".join(s.forms) for s in refs]
    head = Model.read_header(model)[0]
    order = next(d for d in stage_list(head) if d["stage"].startswith("order"))
    rec = {"treebank": tb, "lang": lang_of(tb), "split": split, "model": os.path.relpath(model, ROOT),
           "orderer": order["stage"].split("-")[1], "model_bytes": os.path.getsize(model), "sentences": len(refs),
           "words": sum(len(s) for s in refs), "trained_on": sources(tb)["trained_on"]}
    # 1. the timed decode (whole process)
    res, secs, rss, cmd = _decode(model, f"{w}/{split}.t1", out, jobs)
    hyp = [ln.rstrip("\n") for ln in open(out + ".tok", encoding="utf-8")]
    sc = sr_score(hyp, ref_tok)
    rec.update(command=cmd, seconds=round(secs, 2), sentences_per_second=round(len(refs) / secs, 1),
               peak_rss_mb=round(rss), bleu=round(sc.bleu, 2), nist=round(sc.nist, 2), dist=round(sc.dist, 2),
               sacrebleu=round(sc.sacrebleu, 2), exact=round(sc.exact, 2), signature=sc.signature)
    log(f"{tb} {split}: BLEU {sc.bleu:.2f} NIST {sc.nist:.2f} DIST {sc.dist:.2f} ({secs:.1f}s)")
    # 2. ordering only, with the gold forms
    if split == "test":
        gres, gsecs, _, _ = _decode(model, f"{w}/{split}.gold.t1", os.path.join(w, f"{split}{suffix}.gold.hyp"), jobs)
        g = sr_score([" ".join(x["tokens"]) for x in gres], ref_tok)
        rec.update(gold_bleu=round(g.bleu, 2), gold_sacrebleu=round(g.sacrebleu, 2), gold_exact=round(g.exact, 2),
                   gold_seconds=round(gsecs, 2))
        log(f"{tb} {split}: gold-form BLEU {g.bleu:.2f}")
    # 3. per-token figures on wo's own T1 (en_partut: the official T1 above has another token order)
    own = f"{w}/{split}.seed3.t1"
    if os.path.exists(own):
        res, _, _, _ = _decode(model, own, os.path.join(w, f"{split}{suffix}.seed3.hyp"), jobs)
        rec["per_token_input"] = "wo sr make-input --seed 3 (the official T1 has another token order)"
    before, _, _, _ = _decode(model, own if os.path.exists(own) else f"{w}/{split}.t1",
                              os.path.join(w, f"{split}{suffix}.nolift.hyp"), jobs, "lift.threshold=2")
    before = [" ".join(x["tokens"]) for x in before]
    after = [" ".join(x["tokens"]) for x in res]
    rec["lifted_sentences"] = sum(1 for a, b in zip(after, before) if a != b)
    train_lemmas = {l for s in read_conllu(os.path.join(w, "train.conllu")) for l in s.lemmas}
    hit = tot = uhit = utot = 0
    for k, (u, x) in enumerate(zip(refs, res)):
        perm = permutation(len(u), 3, k)   # T1 token j is UD word perm[j] (wo sr make-input --seed 3)
        for pos, j in enumerate(x["order"]):
            ok = x["tokens"][pos].lower() == u.forms[perm[j]].lower()
            hit += ok
            tot += 1
            if u.lemmas[perm[j]] not in train_lemmas:
                uhit += ok
                utot += 1
    rec.update(inflection=round(100.0 * hit / max(1, tot), 2), inflection_unseen=round(100.0 * uhit / max(1, utot), 2),
               unseen_lemma_share=round(100.0 * utot / max(1, tot), 2))
    surf_ref = [" ".join(surface_tokens(wd, rg)) for wd, rg in read_ranges(ref_path)]
    if len(surf_ref) == len(res) and any(d["stage"] == "contractions" for d in stage_list(head)):
        rec["surface_bleu"] = round(sr_score([" ".join(x["surface"]) for x in res], surf_ref).bleu, 2)
    npi = [k for k, u in enumerate(refs) if not is_projective(u.heads)]
    rec["nonprojective_share"] = round(100.0 * len(npi) / max(1, len(refs)), 2)
    if npi:
        pj = [k for k in range(len(refs)) if k not in set(npi)]
        for tag, hs in (("", after), ("_before", before)):
            nsc = sr_score([hs[k] for k in npi], [ref_tok[k] for k in npi])
            psc = sr_score([hs[k] for k in pj], [ref_tok[k] for k in pj])
            rec.update({f"nonprojective_exact{tag}": round(nsc.exact, 2), f"nonprojective_bleu{tag}": round(nsc.bleu, 2),
                        f"projective_exact{tag}": round(psc.exact, 2), f"projective_bleu{tag}": round(psc.bleu, 2)})
        rec["bleu_before"] = round(sr_score(before, ref_tok).bleu, 2)
        rec["bleu_after"] = round(sr_score(after, ref_tok).bleu, 2)
    t = head.get("training", {})
    tr = os.path.join(w, f"train{suffix}.json")
    if os.path.exists(tr):
        t = dict(t, **json.load(open(tr)))
    rec.update(templates=t.get("templates", {}).get("chosen"), seeds=t.get("seeds"), r2l=t.get("r2l"),
               tuning={k: (t.get("tuning") or {}).get("lm", {}).get(k) for k in ("form_penalty", "words_weight",
                                                                               "depmix_weight", "lift_threshold")})
    rec["tuning"].update(lms=(t.get("tuning") or {}).get("lms"),
                         allomorph_weight=(t.get("tuning") or {}).get("allomorphs", {}).get("allomorph_weight"),
                         context_weight=(t.get("tuning") or {}).get("context", {}).get("context_weight"))
    rec.update(train_seconds=t.get("wall_seconds", t.get("total_seconds")), best_epoch=t.get("best_epoch"),
               dev_bleu=t.get("dev_bleu"), tuned_dev_bleu=t.get("tuning", {}).get("dev_bleu"),
               epochs=len(t.get("epochs", [])), train_command=t.get("command"), train_peak_rss_mb=t.get("peak_rss_mb"))
    os.makedirs(RES, exist_ok=True)
    with open(os.path.join(RES, f"{tb}.{split}{suffix}.json"), "w") as f:
        json.dump(rec, f, indent=1)
    log(f"{tb} {split}: {json.dumps(rec)}")
    return rec


def ship(tb: str, log) -> str:
    """Copy out/sr-multi/TB/NAME.wo to corpora/models/sr/TB.wo (en_ewt: corpora/models/wo-ewt-sr.wo)
    with the LMs it names that are not shipped yet; the copy's header also records the training
    data, its licence and the test figures of bench/results/sr_multi/TB.test.json (the
    catalogue of ``wo sr models``).  The stages and weights are the trained ones, unchanged."""
    import shutil

    from wo.model import Model
    from wo.sr.stages import named_files

    w = os.path.join(WORK, tb)
    src = trained_model(tb)
    data = json.load(open(os.path.join(w, "data.json")))
    head, _ = Model.read_header(src)
    m = Model.load(src, mmap=False)
    res_path = os.path.join(RES, f"{tb}.test.json")
    res = json.load(open(res_path)) if os.path.exists(res_path) else {}
    sr = dict(m.header["sr"])
    sr["data"] = {"treebank": tb, "trained_on": data["trained_on"], "train_sentences": data["train"]["sentences"],
                  "train_words": data["train"]["words"], "licence": LICENCE.get(tb, "see corpora/README.md")}
    sr["results"] = {k: res[k] for k in ("bleu", "nist", "dist", "gold_bleu", "inflection", "signature") if k in res}
    m.header["sr"] = sr
    out = shipped_model(tb)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    m.save(out, compact=head.get("weights_dtype") or "q8")
    models = os.path.join(ROOT, "corpora", "models")
    for name in named_files(m.header):
        if os.path.exists(os.path.join(models, name)):
            continue   # a shipped LM (the large English 4-gram): found in the shipped directory, not copied
        shutil.copyfile(os.path.join(w, name), os.path.join(os.path.dirname(out), name))
    log(f"{tb}: shipped {out} ({os.path.getsize(out) / 1e6:.1f} MB)")
    return out


def peer_scores(tb: str) -> dict:
    """The peers' test outputs rescored with wo's scorer (:func:`wo.eval.sr_score`, lower-cased
    syntactic words) against out/sr-multi/TB/test.conllu: {"imsurreal": {...}, "zgen": {...}}."""
    from wo.eval import sr_score
    from wo.io import read_conllu

    ref_path = os.path.join(WORK, tb, "test.conllu")
    cache = os.path.join(RES, "peers", f"{tb}.rescored.json")
    out = {}
    if not os.path.exists(ref_path):   # no data here (CI): the last rescoring
        return json.load(open(cache)) if os.path.exists(cache) else out
    refs = [" ".join(s.forms) for s in read_conllu(ref_path)]
    peers = os.path.join(RES, "peers")
    for system, files in (("imsurreal", {"bleu": "hyp", "gold_bleu": "gold.hyp"}), ("zgen", {"gold_bleu": "hyp"})):
        jp = os.path.join(peers, f"{tb}.{system}.json")
        if not os.path.exists(jp):
            continue
        rec = json.load(open(jp))
        ent = {"decode_seconds": rec.get("decode_wall_s"), "status": rec.get("status", "?")}
        for key, suffix in files.items():
            hp = os.path.join(peers, f"{tb}.{system}.{suffix}.xz")
            if os.path.exists(hp):
                with lzma.open(hp, "rt", encoding="utf-8") as f:
                    hyp = [ln.rstrip("\n") for ln in f]
                if len(hyp) == len(refs):
                    ent[key] = round(sr_score(hyp, refs).bleu, 2)
        out[system] = ent
    if out:
        with open(cache, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
    return out


def _f(x, nd=2) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def templates_taken() -> str:
    """The ordering templates each treebank's model took (its test record's ``templates``)."""
    out = []
    for tb in ALL:
        p = os.path.join(RES, f"{tb}.test.json")
        t = json.load(open(p)).get("templates") if os.path.exists(p) else None
        if t and t != "none":
            out.append(f"{tb} {t}")
    return "; ".join(out) or "none"


def before_recipe() -> str:
    """The test figures of the models shipped before the one-command recipe, against the current."""
    p = os.path.join(RES, "before-recipe.json")
    if not os.path.exists(p):
        return "–"
    old = json.load(open(p))["treebanks"]
    out = []
    for tb in ALL:
        q = os.path.join(RES, f"{tb}.test.json")
        if tb in old and os.path.exists(q):
            r = json.load(open(q))
            out.append(f"{tb} {_f(old[tb].get('bleu'))} / {_f(old[tb].get('gold_bleu'))} "
                       f"({r['bleu'] - old[tb]['bleu']:+.2f} / {r.get('gold_bleu', 0) - (old[tb].get('gold_bleu') or 0):+.2f})")
    return "; ".join(out)


def table(log, write: bool = True) -> str:
    """docs/sr-multi.md from bench/results/sr_multi/*.test.json and the peers' records (their
    outputs rescored when out/sr-multi/TB/test.conllu is there, else the last rescoring in
    peers/TB.rescored.json); returns the text, written with ``write``."""
    rows = []
    for tb in ALL:
        p = os.path.join(RES, f"{tb}.test.json")
        if not os.path.exists(p):
            continue
        r = json.load(open(p))
        peers = peer_scores(tb)
        ims, zg = peers.get("imsurreal", {}), peers.get("zgen", {})
        on = {"train": "train", "dev": "dev\\*"}.get(r["trained_on"], "train†")
        speed = ""
        sp = os.path.join(RES, f"speed.{tb}.json")
        if os.path.exists(sp):   # measured side by side in one run
            sr = json.load(open(sp))
            speed = (f"**{sr['remake']['speedup_chained']:.1f}×**‡" if "remake" in sr   # the remade model
                     else f"**{sr['recheck']['speedup_chained']:.1f}×**‡" if "recheck" in sr   # chained since
                     else f"**{sr['speedup']:.1f}×**")
        elif ims.get("decode_seconds") and r.get("seconds"):   # separate runs, machine under load
            speed = f"({ims['decode_seconds'] / r['seconds']:.1f}×)"
        rows.append("| " + " | ".join([
            tb, on, f"{r['sentences']:,}", _f(r.get("bleu")), _f(r.get("nist")), _f(r.get("dist")),
            _f(r.get("gold_bleu")), _f(ims.get("bleu")), _f(ims.get("gold_bleu")),
            _f(r["bleu"] - ims["bleu"] if "bleu" in ims else None, 1) + " / "
            + _f(r["gold_bleu"] - ims["gold_bleu"] if "gold_bleu" in ims and "gold_bleu" in r else None, 1),
            _f(zg.get("gold_bleu")),
            _f(r.get("surface_bleu")), f"{_f(r.get('inflection'), 1)} ({_f(r.get('inflection_unseen'), 1)})",
            f"{_f(r.get('nonprojective_share'), 1)} / {_f(r.get('nonprojective_exact'), 1)}",
            _f(r.get("sentences_per_second"), 0), speed, _f(r.get("model_bytes", 0) / 1e6, 1),
            _f(r.get("train_seconds"), 0)]) + " |")
    head = [
        "# Surface realisation in every UD language: `wo sr` against IMSurReal and ZGen_SR",
        "",
        "Generated by `python bench/sr_multi.py table` from `bench/results/sr_multi/*.test.json` "
        "(written by `python bench/sr_multi.py eval --tb CODE`) and `bench/results/sr_multi/peers/` "
        "(written by `python bench/sr_peers.py`); do not edit by hand.",
        "",
        "Protocol: T1 input made by `wo sr make-input --seed 3` from the UD test file; BLEU, NIST and DIST as "
        "SR'19 defines them (NLTK BLEU with smoothing method 2 and NIST, character edit distance) on "
        "lower-cased syntactic words (`wo sr evaluate`); the peers' outputs are rescored with the same "
        "scorer. *Gold forms*: the T1 input with the gold forms (`wo sr make-input --with-gold`), so "
        "only the order is predicted (ZGen_SR always has the gold forms). *Surface*: multiword tokens "
        "contracted on both sides (fr *du* = *de le*). *Inflection*: share of realised tokens whose form "
        "is the gold form (lower-cased), in brackets for lemmas unseen in training. *Non-proj.*: share of "
        "test sentences with crossing arcs / wo's exact matches among them. *Speed-up*: IMSurReal's "
        "whole-process decoding time over wo's (one process each, same machine): in bold when measured side "
        "by side in one run (`speed.CODE.json`), in brackets from separate runs under load; ‡ the model or "
        "the code changed after that run, and the figure chains two side-by-side ratios: IMSurReal's time over "
        "wo's then, times wo's time then over wo's now (the code and model of that run's commit against "
        "the current, `python bench/sr_multi.py recheck-speed`), and for the models remade by one command times "
        "the old model's time over the new one's with the same code (`remake` in `speed.CODE.json`).",
        "",
        "\\* trained on 90 % of the dev file (the official train file could not be obtained), epochs "
        "chosen on the other 10 %. † zh: UD Chinese 1.3 train converted to simplified "
        "script and UD v2 labels (`wo.smt.parsers.v1_to_v2`) plus 90 % of the GSDSimp dev file (the 1.3 "
        "annotation differs from GSDSimp's), epochs chosen on the other 10 %, tested on GSDSimp. en_partut: the "
        "official SR'19 T1 test (from IMSurReal's repository, `data/T1`); en_ewt: the shipped English model.",
        "",
        "Every model is made by one command, `wo sr train --thorough` (`python bench/sr_multi.py train`, "
        "the command in each record): the ordering templates chosen by 5-fold cross-validation on the training "
        "file, three perceptrons each way (a right-to-left model rescoring each domain's beam at weight 0.5), "
        "the best of 8 epochs on dev, then on dev the treebank's own LMs (for English the large 4-gram "
        "`wo-en-wiki-4gram.wolm`) and their weights, the lifting threshold, the allomorph and form context "
        "weights. *train s*: that command's wall time on 2 cores. Templates taken: " + templates_taken() + ".",
        "",
        "Before this recipe (the models shipped until then, `before-recipe.json`), test BLEU / with gold forms: "
        + before_recipe() + ".",
        "",
        "| treebank | trained on | test sent. | BLEU | NIST | DIST | BLEU gold forms | IMSurReal BLEU | "
        "IMSurReal gold forms | wo − IMSurReal (BLEU / gold forms) | ZGen_SR gold forms | surface BLEU | inflection % (unseen) | non-proj. % / exact % "
        "| sent./s | speed-up vs IMSurReal | model MB | train s |",
        "|" + "---|" * 18,
    ]
    sig = None
    for tb in ALL:
        p = os.path.join(RES, f"{tb}.test.json")
        if os.path.exists(p):
            sig = json.load(open(p)).get("signature")
            break
    text = "\n".join(head + rows) + "\n"
    extra = []
    for p in sorted(glob.glob(os.path.join(RES, "ipm.*.json"))):
        r = json.load(open(p))
        a, b = r["runs"]["1"], r["runs"]["2"]
        o = r.get("orderer", "search")
        rep = f", median of {r['repeat']} runs" if r.get("repeat", 1) > 1 else ""
        ep = (f" (the epochs with their dev decoding {r['epochs_speedup']:.2f}x)" if "epochs_speedup" in r else "")
        shp = (f" --as-shipped`, i.e. `{' '.join(r['options'])}` as its shipped model; "
               if r.get("options") else "`; ")
        extra.append(f"* **Parallel training, {o} orderer** (iterative parameter mixing, `python bench/sr_multi.py "
                     f"ipm --orderer {o} --tb {r['treebank']} --epochs {r['epochs']}{shp}{r['cpu']}, {r['nproc']} "
                     f"cores{rep}): `--jobs 1` {a['wall_seconds']:.0f} s, dev BLEU {a['dev_bleu']:.2f}; `--jobs 2` "
                     f"{b['wall_seconds']:.0f} s, dev BLEU {b['dev_bleu']:.2f}: **{r['speedup']:.2f}x** faster{ep}, "
                     f"{r['dev_bleu_difference']:+.2f} BLEU.")
    op = os.path.join(RES, "orderers.json")
    if os.path.exists(op):   # the search orderer's shipped figures against the local orderer's
        old = json.load(open(op))["search"]
        pairs = []
        for tb in ALL:
            p = os.path.join(RES, f"{tb}.test.json")
            r = json.load(open(p)) if os.path.exists(p) else {}
            if tb in old and r.get("orderer") == "local":
                o = old[tb]
                data = (f" [the search model trained on {o['trained_on']}, the local one on {r.get('trained_on')}]"
                        if o.get("trained_on", r.get("trained_on")) != r.get("trained_on") else "")
                pairs.append(f"{tb} {_f(o.get('bleu'))} → {_f(r.get('bleu'))} ({_f(o.get('gold_bleu'))} → "
                             f"{_f(r.get('gold_bleu'))}){data}")
        if pairs:
            extra.append("* **Local orderer against the search orderer** (test BLEU, in brackets with gold forms; "
                         "search: the models shipped before, `orderers.json`; local: this table): " + "; ".join(pairs) + ".")
    for p in sorted(glob.glob(os.path.join(RES, "size.*.json"))):
        r = json.load(open(p))
        extra.append(f"* **Model size** ({os.path.basename(p)[5:-5]} dev): float32 {r['float32']['bytes'] / 1e6:.1f} MB, "
                     f"BLEU {r['float32']['dev_bleu']:.2f}; compact float16 {r['float16_compact']['bytes'] / 1e6:.1f} MB, "
                     f"BLEU {r['float16_compact']['dev_bleu']:.2f}"
                     + (f"; q8 (sign + 7-bit log magnitude) {r['q8']['bytes'] / 1e6:.1f} MB, BLEU {r['q8']['dev_bleu']:.2f}"
                        if "q8" in r else "") + ".")
        more = r.get("more_treebanks_dev_float16_vs_q8", {})
        if more:
            extra.append("  float16 → q8 on other treebanks' dev: " + "; ".join(
                f"{t} {v[0][0] / 1e6:.1f} → {v[1][0] / 1e6:.1f} MB, {v[0][1]:.2f} → {v[1][1]:.2f}"
                for t, v in more.items() if t != "note") + ". Every shipped model is q8.")
    if extra:
        text += "\n" + "\n".join(extra) + "\n"
    if sig:
        text += f"\nsacrebleu on the same tokens: `{sig}` (in each record as `sacrebleu`).\n"
    if write:
        path = os.path.join(ROOT, "docs", "sr-multi.md")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        log(f"wrote {path} ({len(rows)} treebanks)")
    return text


def models_readme(log) -> None:
    """corpora/models/sr/README.md: the shipped SR models with their training data and licence."""
    from wo.model import Model
    from wo.sr.stages import named_files

    rows, named = [], set()
    for tb in ALL:
        p = os.path.join(SHIP, f"{tb}.wo")
        if not os.path.exists(p):
            continue
        h = Model.read_header(p)[0]
        named.update(named_files(h))
        sr = h["sr"]
        d = sr.get("data", {})
        src = {"train": "train split", "dev": "90 % of the dev split (no train file could be obtained)"}.get(
            d.get("trained_on"), d.get("trained_on", ""))
        rows.append(f"| `{tb}.wo` | {sr.get('lang')} | UD {tb} ({src}): {d.get('train_sentences', 0):,} sentences, "
                    f"{d.get('train_words', 0):,} words | {os.path.getsize(p) / 1e6:.1f} MB | {d.get('licence')} |")
    text = "\n".join([
        "# Shipped SR models (`wo sr realize --lang CODE`, `wo sr models`)",
        "",
        "One `wo sr` model per UD treebank, made by `make sr-models` (`python bench/sr_multi.py prepare "
        "train eval ship table`) from `../shared/corpora/ud-multi` (and `ud-zh` for zh), each by one command: "
        "`wo sr train --thorough --lang CODE --train train.t1 --dev dev.t1 --dev-ref dev.conllu --mwt train.conllu` "
        "(the command is in each model's test record); the LMs (`CODE.words4.wolm`, `CODE.depmix4.wolm`) "
        "are built by it from the same train split and choose the forms and rescore each domain's beam, with "
        "weights chosen on dev (English: the large English 4-gram `../wo-en-wiki-4gram.wolm` in place of its "
        "own word LM). "
        "The English EWT model is `../wo-ewt-sr.wo`. Test figures: `../../../docs/sr-multi.md`.",
        "",
        "A model is a work derived from its treebank and carries the treebank's licence; **several are "
        "non-commercial (CC BY-NC-SA)**. Upstream licence texts: `../shared/corpora/ud-multi/CODE/LICENSE.txt` "
        "(not copied here; the models contain no sentences, only weights, a lexicon of word forms and "
        "inflection/contraction/lifting tables learned from the treebank).",
        "",
        "| file | lang | trained on | size | licence |",
        "|---|---|---|---|---|",
    ] + rows) + "\n"
    if not rows:
        return
    for p in glob.glob(os.path.join(SHIP, "*.wolm")):   # an LM no shipped model names any more
        if os.path.basename(p) not in named:
            os.unlink(p)
            log(f"removed {p}")
    path = os.path.join(SHIP, "README.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    log(f"wrote {path}")


def speed(tb: str, log, runs: int = 3) -> dict:
    """Whole-process decoding time of wo (the shipped model) and IMSurReal (its trained TSP and
    inflection models in ~/.cache/wo-peers/imsurreal/TB) on out/sr-multi/TB/test.t1, one process
    at a time, alternating, ``runs`` times each -> bench/results/sr_multi/speed.TB.json (medians
    and their ratio).  Other jobs on the machine should be paused (SIGSTOP) while it runs."""
    import statistics
    import tempfile

    w = os.path.join(WORK, tb)
    ims_dir = os.path.join(os.path.expanduser(os.environ.get("WO_PEERS_CACHE", "~/.cache/wo-peers")), "imsurreal", tb)
    src = os.path.expanduser(os.environ.get("IMS_SRC", "~/imsurreal-src"))
    py = os.path.join(os.path.expanduser(os.environ.get("IMS_VENV", "~/.cache/imsurreal-venv")), "bin", "python")
    for f in ("tsp.mdl", "inf.mdl"):
        if not os.path.exists(os.path.join(ims_dir, f)):
            raise SystemExit(f"{ims_dir}/{f} missing: train IMSurReal first (bench/sr_peers.py --tb {tb})")
    model = shipped_model(tb)
    tmp = tempfile.mkdtemp(prefix="wo-speed-")
    wo_cmd = [*WO, "sr", "realize", "--model", model, "--input", f"{w}/test.t1",
              "--output", os.path.join(tmp, "hyp.txt"), "--quiet"]
    ims_cmds = [[py, "IMSurReal/main.py", "pred", "-m", os.path.join(ims_dir, "tsp.mdl"), "-i", f"{w}/test.t1",
                 "-p", os.path.join(tmp, "tsp.conllu")],
                [py, "IMSurReal/main.py", "pred", "-m", os.path.join(ims_dir, "inf.mdl"), "-i",
                 os.path.join(tmp, "tsp.conllu"), "-p", os.path.join(tmp, "inf.conllu")]]
    secs = {"wo": [], "imsurreal": []}
    for _ in range(runs):
        secs["wo"].append(round(run_timed(wo_cmd).wall_s, 2))
        secs["imsurreal"].append(round(sum(run_timed(c, cwd=src).wall_s for c in ims_cmds), 2))
    med = {k: statistics.median(v) for k, v in secs.items()}
    rec = {"treebank": tb, "what": f"whole-process decoding of out/sr-multi/{tb}/test.t1 (wo sr make-input --seed 3), "
           f"one process each, alternating, same machine, {runs} runs",
           "commands": {"wo": "wo sr realize --model %s --input test.t1 --output hyp.txt --quiet" % os.path.relpath(model, ROOT),
                        "imsurreal": "IMSurReal/main.py pred -m tsp.mdl -i test.t1 -p tsp.conllu && "
                                     "IMSurReal/main.py pred -m inf.mdl -i tsp.conllu -p inf.conllu"},
           "seconds": secs, "median_seconds": med, "speedup": round(med["imsurreal"] / med["wo"], 1),
           "cpu": cpu_name(cores=True), "script": f"python bench/sr_multi.py speed --tb {tb}"}
    with open(os.path.join(RES, f"speed.{tb}.json"), "w") as f:
        json.dump(rec, f, indent=1)
    log(f"{tb}: wo {med['wo']} s, IMSurReal {med['imsurreal']} s: {rec['speedup']}x")
    return rec


def recheck_speed(tb: str, log, old_tree: str, runs: int = 5) -> dict:
    """wo's whole-process decoding time on out/sr-multi/TB/test.t1 with the code and model of
    the commit that wrote speed.TB.json's side-by-side run (a worktree of it at ``old_tree``, its Cython built)
    against the current ones, one process each, alternating, ``runs`` times each.  When the
    model or the code changed after the side-by-side run against IMSurReal (whose models are
    not kept on every machine), the two ratios chain: IMSurReal over wo then (measured side by
    side) times wo then over wo now (measured side by side here) -> "recheck" in speed.TB.json.
    Raises SystemExit if the worktree is not at that commit."""
    import statistics
    import subprocess
    import tempfile

    path = os.path.join(RES, f"speed.{tb}.json")
    rec = json.load(open(path))
    if "recheck" in rec:   # the commit of the side-by-side run, not of an earlier recheck
        then = subprocess.run(["git", "rev-parse", rec["recheck"]["commits"]["then"]], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
    else:
        then = subprocess.run(["git", "log", "-1", "--format=%H", "--", os.path.relpath(path, ROOT)], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
    at = subprocess.run(["git", "rev-parse", "HEAD"], cwd=old_tree, capture_output=True, text=True).stdout.strip()
    if at != then:
        raise SystemExit(f"{old_tree} is at {at[:7] or '?'}, not at {then[:7]} (the commit of {path})")
    now = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="wo-speed-")
    t1 = os.path.join(WORK, tb, "test.t1")

    def cmd(tree: str) -> list:
        model = os.path.join(tree, os.path.relpath(shipped_model(tb), ROOT))
        return [sys.executable, "-m", "wo.cli", "sr", "realize", "--model", model, "--input", t1,
                "--output", os.path.join(tmp, "hyp.txt"), "--quiet"]

    secs = {"then": [], "now": []}
    for _ in range(runs):
        secs["then"].append(round(run_timed(cmd(old_tree), cwd=old_tree).wall_s, 2))
        secs["now"].append(round(run_timed(cmd(ROOT)).wall_s, 2))
    med = {k: statistics.median(v) for k, v in secs.items()}
    ratio = med["then"] / med["now"]
    rec["recheck"] = {
        "what": f"wo sr realize on out/sr-multi/{tb}/test.t1, the code and model of {then[:7]} (the side-by-side "
                f"run above) against those of {now[:7]}, one process each, alternating, {runs} runs",
        "commits": {"then": then[:7], "now": now[:7]}, "seconds": secs, "median_seconds": med,
        "then_over_now": round(ratio, 3), "speedup_chained": round(rec["speedup"] * ratio, 1),
        "cpu": cpu_name(cores=True), "script": f"python bench/sr_multi.py recheck-speed --tb {tb} --old-tree DIR"}
    with open(path, "w") as f:
        json.dump(rec, f, indent=1)
    log(f"{tb}: wo then {med['then']} s, now {med['now']} s ({ratio:.3f}): IMSurReal speed-up "
        f"{rec['speedup']} -> {rec['recheck']['speedup_chained']}x")
    return rec


def ipm(tb: str, log, epochs: int = 2, orderer: str = "local", repeat: int = 1, shipped: bool = False) -> dict:
    """Iterative parameter mixing against one process, side by side in one run: ``wo sr train``
    on TB with --jobs 1, then --jobs 2 (same epochs, data and settings; no tuning;
    ``repeat`` times, alternating), whole-process wall time (median) and best dev BLEU of each
    -> bench/results/sr_multi/ipm.TB.json (search) or ipm.TB.local.json; shipped (local
    orderer): with the shipped recipe's order settings (``--thorough``: three perceptrons each
    way) -> ipm.TB.local.shipped.json."""
    from wo.model import Model

    w = os.path.join(WORK, tb)
    rec = {"treebank": tb, "orderer": orderer, "epochs": epochs, "cpu": cpu_name(cores=False),
           "nproc": os.cpu_count(), "repeat": repeat, "runs": {}}
    opts = (["--thorough"] if shipped and orderer == "local" else
            ["--set", "order.r2l=0"] if orderer == "local" else ["--set", "order.method=search"])
    for rep in range(repeat):
        for jobs in (1, 2):
            args = ["sr", "train", "--train", f"{w}/train.t1", "--dev", f"{w}/dev.t1", "--dev-ref", f"{w}/dev.conllu",
                    "--lang", lang_of(tb), "--epochs", str(epochs), "--jobs", str(jobs), "--mwt", f"{w}/train.conllu",
                    "--set", "tune.lms=false", *opts, "--model", f"{w}/ipm{jobs}.wo", "--quiet"]
            p, secs, rss = wo(*args)
            t = Model.read_header(f"{w}/ipm{jobs}.wo")[0]["training"]
            run = rec["runs"].setdefault(str(jobs), {
                "command": "wo " + " ".join(os.path.relpath(x, ROOT) if x.startswith(ROOT) else x for x in args),
                "wall_seconds_each": [], "peak_rss_mb": round(rss), "dev_bleu": round(t["dev_bleu"], 2),
                "best_epoch": t["best_epoch"], "epoch_dev_bleu": [round(e["dev_bleu"], 2) for e in t["epochs"]],
                "epoch_seconds": [e["seconds"] for e in t["epochs"]],
                "dev_seconds": [e.get("dev_seconds") for e in t["epochs"]]})
            run["wall_seconds_each"].append(round(secs, 1))
            run["wall_seconds"] = round(statistics.median(run["wall_seconds_each"]), 1)
            log(f"{tb} {orderer} --jobs {jobs}: {secs:.0f}s, dev {t['dev_bleu']:.2f}")
    r1, r2 = rec["runs"]["1"], rec["runs"]["2"]
    rec["speedup"] = round(r1["wall_seconds"] / r2["wall_seconds"], 2)
    # the epochs with their dev decoding: one after the other with one job; with two, each
    # epoch's training overlaps the previous epoch's dev decoding (only the last one's stands alone)
    rec["epochs_speedup"] = round((sum(r1["epoch_seconds"]) + sum(r1["dev_seconds"]))
                                  / (sum(r2["epoch_seconds"]) + r2["dev_seconds"][-1]), 2)
    rec["dev_bleu_difference"] = round(r2["dev_bleu"] - r1["dev_bleu"], 2)
    os.makedirs(RES, exist_ok=True)
    rec["options"] = opts if shipped and orderer == "local" else []
    name = f"ipm.{tb}{'.local' if orderer == 'local' else ''}{'.shipped' if rec['options'] else ''}.json"
    with open(os.path.join(RES, name), "w") as f:
        json.dump(rec, f, indent=1)
    log(f"{tb}: --jobs 2 is {rec['speedup']}x faster, dev BLEU {rec['dev_bleu_difference']:+.2f}")
    return rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["prepare", "train", "eval", "ship", "table", "ipm", "speed", "recheck-speed"])
    ap.add_argument("--split", default="test", choices=["test", "dev"])
    ap.add_argument("--model", default=None, help="model file (eval; default out/sr-multi/TB/TB.wo)")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=1, help="train: processes (parameter mixing)")
    ap.add_argument("--fast", action="store_true", help="train: without --thorough (one perceptron each way)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="train: more wo sr train --set")
    ap.add_argument("--orderer", default="local", choices=["local", "search"], help="ipm: the orderer")
    ap.add_argument("--repeat", type=int, default=1, help="ipm: side-by-side repetitions (median wall time)")
    ap.add_argument("--as-shipped", action="store_true", help="ipm: with the shipped recipe's order settings")
    ap.add_argument("--suffix", default="", help="model name suffix (experiments)")
    ap.add_argument("--tb", nargs="*", default=None, help="treebank codes (default: all)")
    ap.add_argument("--old-tree", default=None,
                    help="recheck-speed: a worktree at the commit of speed.TB.json, its Cython built")
    a = ap.parse_args(argv)
    log = lambda m: print(f"[sr_multi {time.strftime('%H:%M:%S')}] {m}", file=sys.stderr, flush=True)  # noqa: E731
    if a.step == "table":
        table(log)
        models_readme(log)
        return 0
    for tb in a.tb or ALL:
        if a.step == "prepare":
            prepare(tb, log)
        elif a.step == "train":
            train(tb, log, a.epochs, a.suffix, a.jobs, [x for kv in a.set for x in ("--set", kv)], not a.fast)
        elif a.step == "eval":
            evaluate(tb, log, a.split, a.model, suffix=a.suffix)
        elif a.step == "ship":
            ship(tb, log)
        elif a.step == "ipm":
            ipm(tb, log, a.epochs, a.orderer, a.repeat, a.as_shipped)
        elif a.step == "speed":
            speed(tb, log)
        elif a.step == "recheck-speed":
            if not a.old_tree:
                ap.error("recheck-speed needs --old-tree")
            recheck_speed(tb, log, a.old_tree)
    return 0


if __name__ == "__main__":
    sys.exit(main())
