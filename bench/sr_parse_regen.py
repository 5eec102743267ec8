"""Parse and regenerate: raw text -> a spaCy pipeline trained on UD -> ``wo sr realize`` -> BLEU
against the text.

    python bench/sr_parse_regen.py [--pipeline en_wo_ud_ewt] [--split dev] [--limit N]

Each sentence of UD English-EWT dev is given as its ``# text`` (raw, untokenized) to the spaCy
pipeline ``en_wo_ud_ewt`` (``corpora/packages/en_wo_ud_ewt``: tagger, morphologizer, parser and
trainable lemmatizer trained on EWT train by ``make spacy-ewt``; model selection on the last 1,000
training sentences, so EWT dev is held out from both the parser and the SR model).  Every
parsed sentence (``doc.sents``) is realised by the shipped English SR model (``Realizer.load(lang=
"en")``, trained on EWT train) through :meth:`wo.system.System.pipe`: the parse's word order is
hidden by :func:`wo.sr.interop.to_sentences` (a fixed shuffle) before realisation.  A text that
the parser splits into several sentences gives their realisations joined by a space.

Figures, written to ``bench/results/sr_parse_regen.json``:

* sacrebleu's corpus BLEU of the detokenized realisations against the raw texts (default
  13a tokenization, cased: what a user who regenerates text would compute);
* SR'19 BLEU/NIST/DIST (lower-cased tokens, :func:`wo.eval.sr_score`) of the realised tokens
  against EWT's gold tokens;
* the same model from the gold trees (``wo sr make-input`` of EWT dev, seed 1): what the
  parser's errors cost;
* the pipeline's own accuracy on EWT dev (spaCy's scorer: UPOS, morphology, lemma, UAS, LAS,
  sentence F);
* sentences/s of the parse and of the realisation, in this process (models loaded).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

RES = os.path.join(ROOT, "bench", "results", "sr_parse_regen.json")
EWT = os.path.join(ROOT, "corpora", "ud-en-ewt", "en_ewt-ud-{split}.conllu.xz")


def regenerate(nlp, realizer, texts, batch_size: int = 64):
    """(per text: detokenized realisation, realised tokens) through the pipeline and the
    realiser; and (parse seconds, realise seconds, sentences parsed)."""
    from wo.sr.interop import to_sentences

    t0 = time.perf_counter()
    docs = list(nlp.pipe(texts, batch_size=batch_size))
    t1 = time.perf_counter()
    owner, sents = [], []
    for k, doc in enumerate(docs):
        for s in to_sentences(doc, seed=1, index=len(sents)):
            owner.append(k)
            sents.append(s)
    results = list(realizer.pipe(sents, batch_size=batch_size))
    t2 = time.perf_counter()
    text = [[] for _ in texts]
    toks = [[] for _ in texts]
    for k, r in zip(owner, results):
        text[k].append(realizer.detokenize(r))
        toks[k].extend(r.tokens)
    return [" ".join(x) for x in text], toks, (t1 - t0, t2 - t1, len(sents))


def parser_scores(nlp, gold) -> dict:
    """spaCy's scorer on the gold UD sentences (raw text in, aligned to the gold tokens)."""
    from spacy.tokens import Doc
    from spacy.training import Example

    exs = []
    for s in gold:
        ref = Doc(nlp.vocab, words=s.forms, heads=[(h - 1) if h else i for i, h in enumerate(s.heads)],
                  deps=[d if h else "ROOT" for d, h in zip(s.deprels, s.heads)], pos=list(s.upos),
                  lemmas=list(s.lemmas), morphs=[("" if f == "_" else f) for f in s.feats],
                  sent_starts=[True] + [False] * (len(s.forms) - 1))
        exs.append(Example(nlp.make_doc(" ".join(s.forms)), ref))
    sc = nlp.evaluate(exs)
    keys = {"pos_acc": "upos", "morph_acc": "morphology", "lemma_acc": "lemma", "dep_uas": "uas", "dep_las": "las",
            "sents_f": "sentence_f"}
    return {name: round(100 * sc[k], 2) for k, name in keys.items() if sc.get(k) is not None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pipeline", default="en_wo_ud_ewt", help="spaCy pipeline: package name or directory")
    ap.add_argument("--split", default="dev", choices=["dev"])
    ap.add_argument("--limit", type=int, default=0)
    a = ap.parse_args(argv)

    import sacrebleu
    import spacy

    from common import cpu_name
    from wo.eval import sr_score
    from wo.io import read_conllu
    from wo.sr.realizer import Realizer
    from wo.sr.t1 import make_input

    gold = read_conllu(EWT.format(split=a.split))
    texts = [line for line in _texts(EWT.format(split=a.split))]
    if a.limit:
        gold, texts = gold[:a.limit], texts[:a.limit]
    assert len(texts) == len(gold)
    nlp = spacy.load(a.pipeline)
    r = Realizer.load(lang="en")
    hyp, toks, (parse_s, realise_s, n_parsed) = regenerate(nlp, r, texts)
    bleu = sacrebleu.BLEU()
    sb = bleu.corpus_score(hyp, [texts])
    sc = sr_score([" ".join(t) for t in toks], [" ".join(s.forms) for s in gold])
    t0 = time.perf_counter()
    from_gold = [" ".join(x.tokens) for x in r.pipe([make_input(s, 1, i) for i, s in enumerate(gold)], batch_size=64)]
    gold_s = time.perf_counter() - t0
    gsc = sr_score(from_gold, [" ".join(s.forms) for s in gold])
    rec = {"split": a.split, "sentences": len(texts), "sentences_parsed": n_parsed, "pipeline": a.pipeline,
           "pipeline_meta": {k: nlp.meta.get(k) for k in ("name", "version", "spacy_version", "pipeline")},
           "sr_model": repr(r),
           "sacrebleu_detok": round(sb.score, 2), "sacrebleu_signature": str(bleu.get_signature()),
           "sr_bleu": round(sc.bleu, 2), "sr_nist": round(sc.nist, 2), "sr_dist": round(sc.dist, 2),
           "sr_signature": sc.signature,
           "from_gold_trees": {"sr_bleu": round(gsc.bleu, 2), "sr_nist": round(gsc.nist, 2),
                               "sr_dist": round(gsc.dist, 2), "seconds": round(gold_s, 2)},
           "parser": parser_scores(nlp, gold),
           "parse_sentences_per_second": round(len(texts) / parse_s, 1),
           "realise_sentences_per_second": round(n_parsed / realise_s, 1),
           "machine": cpu_name(cores=True),
           "command": "python bench/sr_parse_regen.py" + (f" --limit {a.limit}" if a.limit else ""),
           "examples": [{"text": t, "regenerated": h} for t, h in list(zip(texts, hyp))[:5]]}
    if not a.limit:
        os.makedirs(os.path.dirname(RES), exist_ok=True)
        with open(RES, "w", encoding="utf-8") as fh:
            json.dump(rec, fh, indent=1, ensure_ascii=False)
    print(json.dumps({k: v for k, v in rec.items() if k != "examples"}, indent=1))
    return 0


def _texts(path):
    import lzma

    with lzma.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("# text = "):
                yield line[len("# text = "):].rstrip("\n")


if __name__ == "__main__":
    sys.exit(main())
