"""LM text from raw paragraphs: how well tokenizers match the treebank, and the vocabulary
mismatch of LM text with EWT dev.

Reproduce::

    python bench/lm_text.py tokenizers      # -> bench/results/lm/tokenizers.json
    python bench/lm_text.py oov --text out/lm/wiki.tok.txt ../shared/corpora/text-en/*.txt*
                                            # -> bench/results/lm/oov.json

``tokenizers``: the ``# text`` lines of UD English-EWT dev tokenized by spaCy's rule-based
English tokenizer (``wo.lm.tokenize``), sacremoses and NLTK's Treebank tokenizer, against the
gold tokens: token F1 over character spans (whitespace ignored) and the share of sentences
tokenized exactly.  ``oov``: per tokenized text file, the share of EWT dev tokens (and types)
that the file's vocabulary lacks, case-sensitive; "all but wiki": the files whose name has no
"wiki", together.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
RES = os.path.join(ROOT, "bench", "results", "lm")
DEV = os.path.join(ROOT, "corpora", "ud-en-ewt", "en_ewt-ud-dev.conllu.xz")


def ewt_dev():
    """(raw text, gold tokens) of every EWT dev sentence with a ``# text`` line (``wo.io.read_conllu``)."""
    from wo.io import read_conllu

    return [(s.meta["text"], list(s.forms)) for s in read_conllu(DEV) if s.meta.get("text") and len(s)]


def _spans(toks):
    out, i = set(), 0
    for t in toks:
        t = "".join(t.split())
        out.add((i, len(t)))
        i += len(t)
    return out


def tokenizer_scores(tokenize, data) -> dict:
    """Token F1 (character spans) and exact-sentence share (percent) of ``tokenize(str) ->
    list[str]`` on (text, gold tokens) pairs."""
    c = p = g = exact = 0
    for text, gold in data:
        pred = tokenize(text)
        a, b = _spans(pred), _spans(gold)
        c, p, g = c + len(a & b), p + len(a), g + len(b)
        exact += pred == gold
    return {"token_f1": round(200.0 * c / max(1, p + g), 2), "exact_sentences": round(100.0 * exact / len(data), 2)}


def cmd_tokenizers(_a) -> dict:
    import nltk
    import sacremoses
    import spacy
    from nltk.tokenize import TreebankWordTokenizer
    from sacremoses import MosesTokenizer

    from wo.lm.tokenize import pipeline

    data = ewt_dev()
    nlp = pipeline("en")
    mt, tb = MosesTokenizer(lang="en"), TreebankWordTokenizer()
    rec = {"data": "UD English-EWT dev, # text lines against the gold tokens", "sentences": len(data),
           "command": "python bench/lm_text.py tokenizers", "tokenizers": {}}
    for name, fn, ver in (
            ("spacy (wo.lm.tokenize)", lambda s: [t.text for t in nlp.tokenizer(s) if not t.is_space], spacy.__version__),
            ("sacremoses", lambda s: mt.tokenize(s, escape=False), sacremoses.__version__),
            ("nltk treebank", tb.tokenize, nltk.__version__)):
        t0 = time.perf_counter()
        r = tokenizer_scores(fn, data)
        r.update(version=ver, seconds=round(time.perf_counter() - t0, 2))
        rec["tokenizers"][name] = r
        print(name, r, file=sys.stderr)
    return rec


def cmd_oov(a) -> dict:
    from wo.io.text import open_text

    dev = [t for _, toks in ewt_dev() for t in toks]
    dev_types = set(dev)
    rec = {"data": "UD English-EWT dev tokens", "tokens": len(dev), "types": len(dev_types),
           "command": "python bench/lm_text.py oov --text " + " ".join(os.path.relpath(p, ROOT) for p in a.text),
           "files": {}}
    union: Counter = Counter()
    for path in a.text + ["ALL"]:
        vocab: Counter = Counter()
        if path == "ALL":   # every file together
            vocab = union
        else:
            with open_text(path) as fh:
                for line in fh:
                    vocab.update(line.split())
            if "wiki" not in path:
                union.update(vocab)
        miss = sum(1 for t in dev if t not in vocab)
        r = {"tokens": sum(vocab.values()), "types": len(vocab), "oov_tokens_percent": round(100.0 * miss / len(dev), 2),
             "oov_types_percent": round(100.0 * sum(1 for t in dev_types if t not in vocab) / len(dev_types), 2)}
        rec["files"]["all but wiki" if path == "ALL" else os.path.relpath(os.path.abspath(path), ROOT)] = r
        print(path, r, file=sys.stderr)
    return rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["tokenizers", "oov"])
    ap.add_argument("--text", nargs="*", default=[], help="oov: tokenized text files")
    a = ap.parse_args(argv)
    rec = cmd_tokenizers(a) if a.step == "tokenizers" else cmd_oov(a)
    os.makedirs(RES, exist_ok=True)
    with open(os.path.join(RES, f"{a.step}.json"), "w", encoding="utf-8") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
