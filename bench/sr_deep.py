"""The deep track (SR'19 T2): wo against IMSurReal, treebank by treebank.

    python bench/sr_deep.py train [--tb en_partut] [--thorough]   # wo sr train on T2 -> out/sr-deep/TB/TB-deep.wo
    python bench/sr_deep.py eval  [--tb en_partut] [--split dev|test]   # wo sr realize, scored
    python bench/sr_deep.py ship  [--tb en_partut]                # corpora/models/sr/TB-deep.wo
    python bench/sr_deep.py peer  [--tb en_partut]                # IMSurReal's T2 pipeline beside wo (timing, scores)
    python bench/sr_deep.py table                                 # docs/sr-deep.md from bench/results/sr_deep/

Data: en_partut is the official SR'19 data (T2 train aligned with ``original_id``, its UD
references; T2 dev and the official T2 test, which IMSurReal's repository distributes with its
UD reference, ``~/imsurreal-src/data``; the test is decoded once, for the final figure).
``en_partut-conv`` trains on the same UD sentences converted by ``wo sr make-input --track deep``
and is scored on the official dev (the converter against the official files).  Any other code
is a UD treebank, split as for the shallow track (``bench/sr_multi.py prepare``: a dev-only
treebank trains on 90 % of dev) and converted the same way (train and dev ``--with-gold``, test
``--seed 3``).

Figures per decode: SR'19 BLEU, NIST, DIST on lower-cased tokens with sacrebleu's signature;
the completion measured on its own: precision/recall/F1 of the generated function words (by
lemma, micro-averaged over sentences: the lemmas of the realised sentence minus the input's,
against the reference's lemmas minus the input's, as multisets) and the BLEU of the lemma
sequence in output order; sentences/s and peak RSS of the whole ``wo sr realize`` process.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from typing import List, Sequence

from common import ROOT, cpu_name
from sr_multi import SHARED, _decode, wo

WORK = os.path.join(ROOT, "out", "sr-deep")
RES = os.path.join(ROOT, "bench", "results", "sr_deep")
SHIP = os.path.join(ROOT, "corpora", "models", "sr")
IMS = os.environ.get("IMS_SRC", os.path.expanduser("~/imsurreal-src"))
# the completion's preposition association table per language (bench/sr_deep_assoc.py; English only)
ASSOC = {"en": os.path.join(ROOT, "corpora", "assoc", "en-wiki-case.json.gz")}
LICENCE = {"en_partut": "CC BY-NC-SA 4.0", "en_ewt": "CC BY-SA 4.0", "en_lines": "CC BY-NC-SA 4.0",
           "fr_sequoia": "LGPL-LR", "fr_partut": "CC BY-NC-SA 4.0", "es_gsd": "CC BY-SA 4.0"}


def sources(tb: str) -> dict:
    """The files of treebank ``tb``: train/dev T2 and UD, test T2 and UD."""
    if tb == "en_partut":
        d = os.path.join(SHARED, "corpora", "sr19-en_partut")
        return {"train": f"{d}/T2-en_partut-ud-train.conllu", "train_ref": f"{d}/UD-en_partut-ud-train.conllu",
                "dev": f"{d}/T2-en_partut-ud-dev.conllu", "dev_ref": f"{d}/UD-en_partut-ud-dev.conllu",
                "test": f"{IMS}/data/T2/en_partut-ud-test_DEEP.conllu",
                "test_ref": f"{IMS}/data/UD/en_partut-ud-test.conllu", "lang": "en",
                "data": "the official SR'19 English-ParTUT T2 train with its UD references"}
    w = os.path.join(WORK, tb)
    if tb == "en_partut-conv":   # the converter against the official files: same sentences, dev official
        d = os.path.join(SHARED, "corpora", "sr19-en_partut")
        _convert(f"{d}/UD-en_partut-ud-train.conllu", f"{w}/train.t2", gold=True)
        return {"train": f"{w}/train.t2", "dev": f"{d}/T2-en_partut-ud-dev.conllu",
                "dev_ref": f"{d}/UD-en_partut-ud-dev.conllu", "lang": "en",
                "data": "UD English-ParTUT train converted by wo sr make-input --track deep"}
    if tb == "en_partut+ewt":   # the official train with its references inline, then EWT train converted
        d = os.path.join(SHARED, "corpora", "sr19-en_partut")
        _with_gold(f"{d}/T2-en_partut-ud-train.conllu", f"{d}/UD-en_partut-ud-train.conllu", f"{w}/partut.t2")
        _convert(os.path.join(ROOT, "corpora", "ud-en-ewt", "en_ewt-ud-train.conllu.xz"), f"{w}/ewt.t2", gold=True)
        if not os.path.exists(f"{w}/train.t2"):
            with open(f"{w}/train.t2", "w", encoding="utf-8") as out:
                for part in ("partut", "ewt"):
                    out.write(open(f"{w}/{part}.t2", encoding="utf-8").read())
        off = sources("en_partut")
        return {"train": f"{w}/train.t2", "dev": off["dev"], "dev_ref": off["dev_ref"], "test": off["test"],
                "test_ref": off["test_ref"], "lang": "en",
                "data": "the official SR'19 English-ParTUT T2 train (1,781 sentences) + UD English-EWT train "
                        "converted by wo sr make-input --track deep (12,544 sentences)"}
    import sr_multi

    ud = os.path.join(sr_multi.WORK, tb)   # the shallow track's splits (dev-only treebanks: 90 % of dev trains)
    files = {split: os.path.join(ud, f"{split}.conllu") for split in ("train", "dev", "test")}
    if not all(os.path.exists(f) for f in files.values()):
        sr_multi.prepare(tb, lambda m: print(m, file=sys.stderr))
    _convert(files["train"], f"{w}/train.t2", gold=True)
    _convert(files["dev"], f"{w}/dev.t2", gold=True)
    _convert(files["test"], f"{w}/test.t2", gold=False)
    return {"train": f"{w}/train.t2", "dev": f"{w}/dev.t2", "dev_ref": files["dev"], "test": f"{w}/test.t2",
            "test_ref": files["test"], "lang": tb.split("_")[0],
            "data": f"UD {tb} converted by wo sr make-input --track deep",
            "trained_on": json.load(open(os.path.join(ud, "data.json")))["trained_on"]}


def _with_gold(t2: str, ud: str, out: str) -> None:
    """An official T2 file with its UD references inline, as ``make-input --track deep
    --with-gold`` writes them (``# gold``, forms in column 3), so that it joins converted files
    in one training file.  Raises SystemExit when the files do not align."""
    from wo.io import read_conllu
    from wo.sr.t1 import format_t1, read_t1

    if os.path.exists(out):
        return
    xs, refs = read_t1(t2), read_conllu(ud)
    if len(xs) != len(refs):
        raise SystemExit(f"{t2}: {len(xs)} sentences, {ud}: {len(refs)}")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        for k, (x, ref) in enumerate(zip(xs, refs)):
            x.ref = ref
            x.forms = [ref.forms[o - 1] if o else "_" for o in x.orig]
            x.sent_id = f"partut-{x.sent_id or k + 1}"
            fh.write(format_t1(x, with_gold=True) + "\n\n")


def _convert(ud: str, out: str, gold: bool) -> None:
    """``wo sr make-input --track deep`` (seed 1 with gold, else seed 3) unless ``out`` exists."""
    if os.path.exists(out):
        return
    os.makedirs(os.path.dirname(out), exist_ok=True)
    p, _, _ = wo("sr", "make-input", "--track", "deep", "--ud", ud, "--out", out,
                 *(["--with-gold"] if gold else ["--seed", "3"]))
    if p.returncode != 0:
        raise SystemExit(f"make-input {ud} failed: {p.stderr[-2000:]}")


def model_path(tb: str) -> str:
    return os.path.join(WORK, tb, f"{tb}-deep.wo")


def train(tb: str, log, thorough: bool = False, jobs: int = 2) -> dict:
    """``wo sr train`` on the T2 train file with its UD references, timed whole process."""
    from wo.model import Model

    src = sources(tb)
    os.makedirs(os.path.join(WORK, tb), exist_ok=True)
    model = model_path(tb)
    refs = (["--train-ref", src["train_ref"]] if "train_ref" in src else []) + (
        ["--dev-ref", src["dev_ref"]] if tb.startswith("en_partut") else [])
    assoc = ["--set", f"deep.assoc={ASSOC[src['lang']]}"] if src["lang"] in ASSOC else []
    args = ["sr", "train", "--train", src["train"], "--dev", src["dev"], *refs, "--lang", src["lang"],
            "--jobs", str(jobs), "--model", model, "--quiet", *assoc, *(["--thorough"] if thorough else [])]
    p, secs, rss = wo(*args)
    if p.returncode != 0:
        raise SystemExit(f"{tb}: wo sr train failed: {p.stderr[-2000:]}")
    rec = Model.read_header(model)[0]["training"]
    rec.update(command="wo " + " ".join(_rel(x) for x in args), wall_seconds=round(secs, 1), peak_rss_mb=round(rss),
               model_bytes=os.path.getsize(model), machine=cpu_name(cores=True))
    os.makedirs(RES, exist_ok=True)
    with open(os.path.join(RES, f"{tb}.train.json"), "w") as f:
        json.dump(rec, f, indent=1)
    log(f"{tb}: trained in {secs:.0f} s (peak {rss:.0f} MB), dev BLEU {rec.get('dev_bleu_deep')}")
    return rec


def _rel(x: str) -> str:
    x = str(x)
    return os.path.relpath(x, ROOT) if x.startswith(ROOT) else x.replace(SHARED, "../shared").replace(IMS, "~/imsurreal-src")


def function_words(inputs: Sequence, predicted: Sequence[Sequence[str]], refs: Sequence) -> dict:
    """Precision/recall/F1 (percent) of the generated function words by lemma: per sentence the
    multiset of predicted lemmas minus the input's (``_`` nodes aside), against the reference's
    lemmas minus the input's; micro-averaged.  inputs: deep sentences; predicted: lemma lists;
    refs: UD sentences."""
    tp = fp = fn = 0
    for t, pred, ref in zip(inputs, predicted, refs):
        given = Counter(x.lower() for x in t.lemmas if x != "_")
        p = Counter(x.lower() for x in pred) - given
        g = Counter(x.lower() for x in ref.lemmas) - given
        tp += sum((p & g).values())
        fp += sum((p - g).values())
        fn += sum((g - p).values())
    pr, rc = 100 * tp / max(1, tp + fp), 100 * tp / max(1, tp + fn)
    return {"precision": round(pr, 2), "recall": round(rc, 2), "f1": round(2 * pr * rc / max(1e-9, pr + rc), 2)}


def completed_lemmas(model: str, sents: Sequence) -> List[List[str]]:
    """The lemmas of each realised sentence in output order (the completed tree, punctuation
    inserted), by the stages run in this process."""
    from wo.sr.realizer import Realizer

    r = Realizer.load(model)
    out = []
    for s in sents:
        try:
            st = r.start(s)
            for stage in r.stages:
                stage(st)
            out.append([st.sentence.lemmas[i] for i in st.order])
        except ValueError:
            out.append([x for x in s.lemmas if x != "_"])
    return out


def evaluate(tb: str, log, split: str = "dev") -> dict:
    """Decode SPLIT once with ``wo sr realize`` (whole process timed) and score it."""
    from wo.eval import sr_score
    from wo.io import read_conllu
    from wo.sr.t1 import read_t1

    src = sources(tb)
    model = model_path(tb)
    out = os.path.join(WORK, tb, f"{split}.hyp")
    refs = read_conllu(src[f"{split}_ref"])
    recs, secs, rss, cmd = _decode(model, src[split], out)
    hyp = [ln.rstrip("\n") for ln in open(out + ".tok", encoding="utf-8")]
    sc = sr_score(hyp, [" ".join(s.forms) for s in refs])
    inputs = read_t1(src[split])
    lemmas = completed_lemmas(model, inputs)
    lemma_bleu = sr_score([" ".join(x) for x in lemmas], [" ".join(s.lemmas) for s in refs], bleu_only=True).bleu
    rec = {"treebank": tb, "split": split, "sentences": len(refs), "bleu": round(sc.bleu, 2), "nist": round(sc.nist, 2),
           "dist": round(sc.dist, 2), "sacrebleu": round(sc.sacrebleu, 2), "signature": sc.signature,
           "lemma_order_bleu": round(lemma_bleu, 2), "function_words": function_words(inputs, lemmas, refs),
           "seconds": round(secs, 2), "sentences_per_second": round(len(refs) / secs, 1), "peak_rss_mb": round(rss),
           "model_bytes": os.path.getsize(model), "command": cmd, "machine": cpu_name(cores=True),
           "status": dict(Counter(r["status"] for r in recs))}
    os.makedirs(RES, exist_ok=True)
    with open(os.path.join(RES, f"{tb}.{split}.json"), "w") as f:
        json.dump(rec, f, indent=1)
    log(f"{tb} {split}: BLEU {rec['bleu']} NIST {rec['nist']} DIST {rec['dist']}, lemmas in order {rec['lemma_order_bleu']}, "
        f"function words {rec['function_words']}, {secs:.2f} s whole process")
    return rec


IMS_WORK = os.environ.get("IMS_T2_WORK", os.path.expanduser("~/imsurreal-t2"))


def peer(tb: str, log, repeat: int = 3) -> dict:
    """IMSurReal v2.0's T2 pipeline (``bench/imsurreal_t2.sh``: tsp -> gen -> inf, each a whole
    process, models trained into $IMS_T2_WORK/TB beforehand) and ``wo sr realize`` side by side
    on TB's test, alternating, ``repeat`` times; medians.  wo's output must equal its recorded
    test decode (the test is not decoded for a new figure: this is timing); IMSurReal's output
    is scored as wo's (SR'19 BLEU/NIST/DIST, lemmas in order, function words).  Writes
    bench/results/sr_deep/imsurreal.TB.json."""
    import statistics
    import subprocess

    from wo.eval import sr_score
    from wo.io import read_conllu
    from wo.sr.t1 import read_t1

    src = sources(tb)
    model = model_path(tb)
    w = os.path.join(IMS_WORK, tb)
    for task in ("tsp", "gen", "inf"):
        if not os.path.exists(os.path.join(w, f"{task}.mdl")):
            raise SystemExit(f"no IMSurReal {task} model in {w}: train it with bench/imsurreal_t2.sh (see its header)")
    mine = os.path.join(WORK, tb, "test.hyp")
    scratch = os.path.join(WORK, tb, "test.peer.hyp")
    ims_s, ims_rss, wo_s, wo_rss = [], [], [], []
    env = dict(os.environ, T2=src["test"], REF=src["test_ref"], NAME="test")
    for k in range(repeat):
        p = subprocess.run(["bash", os.path.join(ROOT, "bench", "imsurreal_t2.sh"), w], env=env, capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise SystemExit(f"imsurreal_t2.sh failed: {p.stderr[-1500:]}")
        r = json.load(open(os.path.join(w, "test.json")))
        ims_s.append(r["decode_seconds"]["total"])
        ims_rss.append(r["decode_peak_rss_mb"]["max"])
        _, secs, rss, cmd = _decode(model, src["test"], scratch)
        wo_s.append(secs)
        wo_rss.append(rss)
        log(f"{tb} run {k + 1}: IMSurReal {ims_s[-1]:.2f} s ({r['decode_seconds']}), wo {secs:.2f} s")
    if open(scratch + ".tok", encoding="utf-8").read() != open(mine + ".tok", encoding="utf-8").read():
        raise SystemExit(f"{scratch}.tok differs from the recorded decode {mine}.tok: not the model that was scored")
    refs = read_conllu(src["test_ref"])
    inputs = read_t1(src["test"])
    lines = lambda path: [ln.rstrip("\n") for ln in open(path, encoding="utf-8")]   # noqa: E731
    hyp = lines(os.path.join(w, "test.hyp"))
    lem = [x.split() for x in lines(os.path.join(w, "test.lemma.hyp"))]
    sc = sr_score(hyp, [" ".join(s.forms) for s in refs])
    lemma_bleu = sr_score([" ".join(x) for x in lem], [" ".join(s.lemmas) for s in refs], bleu_only=True).bleu

    def train_s(task):
        f = os.path.join(w, f"time.train.{task}")
        for ln in open(f):
            if "Elapsed (wall clock)" in ln:
                t = 0.0
                for x in ln.rsplit(": ", 1)[1].strip().split(":"):
                    t = t * 60 + float(x)
                return t
        return None

    ours = json.load(open(os.path.join(RES, f"{tb}.test.json")))
    ims_med, wo_med = statistics.median(ims_s), statistics.median(wo_s)
    rec = {"treebank": tb, "split": "test", "sentences": len(refs), "system": "IMSurReal v2.0 T2 (tsp, gen, inf)",
           "bleu": round(sc.bleu, 2), "nist": round(sc.nist, 2), "dist": round(sc.dist, 2),
           "sacrebleu": round(sc.sacrebleu, 2), "signature": sc.signature, "lemma_order_bleu": round(lemma_bleu, 2),
           "function_words": function_words(inputs, lem, refs),
           "decode_seconds": {"imsurreal": ims_s, "wo": wo_s, "imsurreal_median": ims_med, "wo_median": wo_med,
                              "ratio": round(ims_med / wo_med, 2)},
           "decode_peak_rss_mb": {"imsurreal": max(ims_rss), "wo": max(wo_rss)},
           "imsurreal_steps_last_run": r["decode_seconds"],
           "train_seconds": {t: train_s(t) for t in ("tsp", "gen", "inf")},
           "train_steps": "8000 + fine-tuning (--max_step 8000), dev for model selection",
           "wo": {k: ours[k] for k in ("bleu", "nist", "dist", "lemma_order_bleu", "function_words")},
           "wo_command": cmd, "machine": cpu_name(cores=True),
           "note": "timings alternate IMSurReal and wo in one run on a quiet machine; wo's output is its recorded "
                   "test decode (checked), IMSurReal's is scored here with wo's metrics"}
    with open(os.path.join(RES, f"imsurreal.{tb}.json"), "w") as f:
        json.dump(rec, f, indent=1)
    log(f"{tb}: IMSurReal BLEU {rec['bleu']} (wo {ours['bleu']}); decode {ims_med:.2f} s against wo {wo_med:.2f} s "
        f"({rec['decode_seconds']['ratio']}x)")
    return rec


def ship(tb: str, log) -> str:
    """Copy the trained model to corpora/models/sr/TB-deep.wo with its data, licence and test
    figures in the header (the catalogue of ``wo sr models``)."""
    from wo.model import Model

    src = model_path(tb)
    head, _ = Model.read_header(src)
    m = Model.load(src, mmap=False)
    res_path = os.path.join(RES, f"{tb}.test.json")
    res = json.load(open(res_path)) if os.path.exists(res_path) else {}
    sr = dict(m.header["sr"])
    sr["data"] = {"treebank": tb, "trained_on": sources(tb).get("trained_on", "train"), "train_sentences": m.header["training"].get(
        "completion", {}).get("examples"), "licence": LICENCE.get(tb, "see corpora/README.md"),
        "source": sources(tb)["data"]}
    sr["results"] = {k: res[k] for k in ("bleu", "nist", "dist", "signature") if k in res}
    from wo.sr.realizer import Realizer

    if sr["stages"] and sr["stages"][0].get("stage") == "completion":   # a model written before the packed header:
        sr["stages"] = list(sr["stages"])                                  # its completion weights as raw arrays
        sr["stages"][0] = Realizer(m).stage("completion").to_json()
    m.header["sr"] = sr
    out = os.path.join(SHIP, f"{tb}-deep.wo")
    m.save(out, compact=head.get("weights_dtype") or "q8")
    import shutil

    from wo.sr.stages import named_files

    for name in named_files(m.header):   # the model's own LMs (a shipped one, the English 4-gram, is found there)
        if not os.path.exists(os.path.join(ROOT, "corpora", "models", name)):
            shutil.copyfile(os.path.join(os.path.dirname(src), name), os.path.join(SHIP, name))
    if res:   # the size shipped (the packed header can make it smaller than the model decoded; same weights)
        res["shipped_bytes"] = os.path.getsize(out)
        json.dump(res, open(res_path, "w"), indent=1)
    log(f"{tb}: shipped {out} ({os.path.getsize(out) / 1e6:.1f} MB)")
    return out


def models_readme(log) -> None:
    """The deep-track section of corpora/models/sr/README.md, from the shipped CODE-deep.wo headers."""
    import glob

    from wo.model import Model
    from wo.sr.stages import named_files

    rows = []
    for p in sorted(glob.glob(os.path.join(SHIP, "*-deep.wo"))):
        h = Model.read_header(p)[0]
        d = h["sr"].get("data", {})
        lms = ", ".join(f"`{x}`" if os.path.exists(os.path.join(SHIP, x)) else f"`../{x}`" for x in named_files(h))
        rows.append(f"| `{os.path.basename(p)}` | {h['sr'].get('lang')} | {d.get('source', '')} "
                    f"({d.get('trained_on', 'train')}, {d.get('train_sentences') or 0:,} sentences); LMs: {lms} | "
                    f"{os.path.getsize(p) / 1e6:.1f} MB | {d.get('licence', '')} |")
    section = ("## Deep-track (SR'19 T2) models\n\nMade by `python bench/sr_deep.py train`, `eval --split test`, `ship`"
               " (one `wo sr train` on T2 input: the completion and punctuation stages around the shallow-track"
               " stages; `docs/sr.md#the-deep-track-t2`), this table by `python bench/sr_deep.py table`. Figures:"
               " `../../../docs/sr-deep.md`.\n\n| file | lang | trained on | size | licence |\n|---|---|---|---|---|\n"
               + "\n".join(rows) + "\n")
    path = os.path.join(SHIP, "README.md")
    text = open(path, encoding="utf-8").read()
    head = text.split("## Deep-track (SR'19 T2) models")[0].rstrip("\n")
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + "\n\n" + section)
    log(f"wrote {path}")


def _prf(r: dict) -> str:
    return f"{r['precision']:.2f} / {r['recall']:.2f} / {r['f1']:.2f}"


def table(log) -> str:
    """docs/sr-deep.md from bench/results/sr_deep/*.json."""
    rows = []
    for name in sorted(os.listdir(RES)) if os.path.isdir(RES) else []:
        if name.endswith(".test.json") or name.endswith(".dev.json"):
            r = json.load(open(os.path.join(RES, name)))
            tr = os.path.join(RES, f"{r['treebank']}.train.json")
            t = json.load(open(tr)) if os.path.exists(tr) else {}
            fw = r["function_words"]
            data = ("official" if r["treebank"] == "en_partut" else "converted train, official dev"
                    if r["treebank"] == "en_partut-conv" else "converted")
            rows.append(f"| {r['treebank']} | {data} | {r['split']} | {r['bleu']:.2f} | {r['nist']:.2f} | {r['dist']:.2f} | "
                        f"{r['lemma_order_bleu']:.2f} | {fw['precision']:.1f} / {fw['recall']:.1f} / {fw['f1']:.1f} | "
                        f"{r['sentences_per_second']:.0f} ({r['seconds']:.2f} s) | {r.get('shipped_bytes', r['model_bytes']) / 1e6:.1f} | "
                        f"{t.get('wall_seconds', '-')} |")
    conv = os.path.join(RES, "convert.json")
    if os.path.exists(conv):
        c = json.load(open(conv))
        t, d = c["train"], c["dev_bags"]
        text_conv = ("\n## The UD -> T2 converter against the official files\n\n`wo sr make-input --track deep` on the UD"
                     " sentences of the official English-ParTUT T2 files (`python bench/sr_deep_convert.py`; train aligned"
                     " node by node, dev by per-sentence bags):\n\n| measure | train | dev |\n|---|---|---|\n"
                     f"| kept nodes P / R / F1 | {_prf(t['kept'])} | {_prf(d['kept'])} |\n"
                     f"| `_` nodes P / R / F1 | {_prf(t['blank'])} | {_prf(d['blank'])} |\n"
                     f"| relations (accuracy; dev: labelled-bag F1) | {t['relation_accuracy']} | {d['labelled']['f1']} |\n"
                     f"| heads (accuracy) | {t['head_accuracy']} | |\n"
                     f"| sentences exactly as the official | {t['exact_sentences']} % | |\n")
        text_conv += "".join(f"| {k} P / R / F1 | {_prf(v)} | {_prf(d['features'][k]) if k in d['features'] else ''} |\n"
                             for k, v in t["features"].items())
    else:
        text_conv = ""
    text = ("# Deep track (SR'19 T2): results\n\nGenerated by `python bench/sr_deep.py table` from `bench/results/sr_deep/`."
            " BLEU, NIST and DIST are the SR'19 metrics on lower-cased tokens (sacrebleu signature in each JSON record);"
            " function words: precision / recall / F1 of the generated words by lemma; lemmas in order: BLEU of the"
            " lemma sequence of the realised sentence; speed: the whole `wo sr realize` process, one job; training:"
            " the whole `wo sr train` process on 2 cores.\n\nData: *official*: the SR'19 English-ParTUT T2 files (the"
            " official test from IMSurReal's repository, decoded once); *converted*: the UD treebank split as for the"
            " shallow track (`bench/sr_multi.py prepare`; es_gsd trains on 90 % of dev) and converted by `wo sr"
            " make-input --track deep` (train and dev with `--with-gold`, test with `--seed 3`); en_partut-conv: the"
            " official training sentences converted, scored on the official dev (the converter against the official"
            " files: within 2 BLEU is the goal).\n\n"
            "| treebank | data | split | BLEU | NIST | DIST | lemmas in order | function words P / R / F1 |"
            " sentences/s (s) | model MB | training s |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
            + "\n".join(rows) + "\n")
    peers = sorted(n for n in os.listdir(RES) if n.startswith("imsurreal.") and n.endswith(".json")) \
        if os.path.isdir(RES) else []
    if peers:
        text += ("\n## IMSurReal side by side\n\nIMSurReal v2.0's deep-track pipeline (TSP linearizer, completion,"
                 " inflection; `bench/imsurreal_t2.sh`, 8,000 steps per model and as many fine-tuning steps) trained on the"
                 " same files and decoded beside wo in one run (`python bench/sr_deep.py peer`: alternating, 3 runs,"
                 " medians; each system's whole processes, one job). Scored with wo's metrics.\n\n"
                 "| treebank | IMSurReal BLEU | wo BLEU | IMSurReal lemmas in order | wo | IMSurReal function words"
                 " P / R / F1 | wo | IMSurReal decode s | wo decode s | speed ratio | IMSurReal training s |\n"
                 "|---|---|---|---|---|---|---|---|---|---|---|\n")
        for n in peers:
            r = json.load(open(os.path.join(RES, n)))
            f, g, d = r["function_words"], r["wo"]["function_words"], r["decode_seconds"]
            ts = r["train_seconds"]
            text += (f"| {r['treebank']} | {r['bleu']:.2f} | {r['wo']['bleu']:.2f} | {r['lemma_order_bleu']:.2f} |"
                     f" {r['wo']['lemma_order_bleu']:.2f} | {f['precision']:.1f} / {f['recall']:.1f} / {f['f1']:.1f} |"
                     f" {g['precision']:.1f} / {g['recall']:.1f} / {g['f1']:.1f} | {d['imsurreal_median']:.2f} |"
                     f" {d['wo_median']:.2f} | {d['ratio']:.1f}x |"
                     f" {sum(v for v in ts.values() if v):.0f} |\n")
    text += text_conv
    path = os.path.join(ROOT, "docs", "sr-deep.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    log(f"wrote {path}")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("train", "eval", "ship", "peer", "table"))
    ap.add_argument("--tb", nargs="+", default=["en_partut"])
    ap.add_argument("--split", default="dev", choices=("dev", "test"))
    ap.add_argument("--thorough", action="store_true")
    a = ap.parse_args(argv)

    def log(m):
        print(m, file=sys.stderr)

    for tb in a.tb if a.what != "table" else []:
        if a.what == "train":
            train(tb, log, a.thorough)
        elif a.what == "eval":
            evaluate(tb, log, a.split)
        elif a.what == "ship":
            ship(tb, log)
        elif a.what == "peer":
            peer(tb, log)
    if a.what == "table":
        table(log)
        models_readme(log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
