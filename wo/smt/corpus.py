"""The training pipeline of ``wo smt train`` (Zhang et al. 2014, sections 2.1 and 2.2.2):
read TSV pairs, segment Chinese (jieba), tokenize and truecase English (Moses), parse both
sides (the shipped spaCy parsers), align (eflomal, grow-diag-final-and), extract consistent
and cohesive phrase pairs, estimate the English LM, train the synthesis model.

``bench/smt_data.py`` runs the same steps with per-stage caches and statistics.
"""
from __future__ import annotations

import os
import sys
import tempfile
from typing import Callable, Dict, List, Optional, Sequence

MAX_LEN = 5


def prepare(pairs, tokenizer, parsers: Optional[Dict[str, object]] = None) -> List[dict]:
    """Corpus records of sentence pairs (:class:`wo.smt.prep.Pair`): ``en_raw``, ``zh_raw``,
    ``en`` (tokenized, truecased), ``zh`` (segmented) and, with ``parsers`` ({"en": Parser,
    "zh": Parser}), ``{lang}_pos``, ``{lang}_heads`` (0-based, -1 root), ``{lang}_labels``.
    Raises ValueError naming the pair for a side that is empty after tokenization."""
    from .prep import segment_zh

    recs = []
    for k, p in enumerate(pairs):
        r = {"en_raw": p.en, "zh_raw": p.zh, "en": tokenizer(p.en), "zh": segment_zh(p.zh)}
        if not r["en"] or not r["zh"]:
            raise ValueError(f"pair {k + 1}: a side is empty after tokenization")
        recs.append(r)
    for lang, parser in (parsers or {}).items():
        for b in range(0, len(recs), 500):
            batch = recs[b:b + 500]
            for r, pa in zip(batch, parser.parse([r[lang] for r in batch])):
                r[f"{lang}_pos"], r[f"{lang}_heads"], r[f"{lang}_labels"] = (
                    list(pa.pos), [int(h) for h in pa.heads], list(pa.labels))
    return recs


def phrase_table(train: Sequence[dict], links: Sequence, max_len: int = MAX_LEN):
    """The :class:`wo.smt.phrases.PhraseTable` of parsed training records and their
    symmetrised alignments (one list of (source, target) links per record)."""
    from .phrases import PhraseTable, extract

    return PhraseTable.build((r["zh"], extract(len(r["zh"]), r["en"], r["en_pos"], r["en_heads"], ls,
                                               max_len=max_len))
                             for r, ls in zip(train, links))


def train_from_tsv(train_tsv: str, dev_tsv: str, model_out: str, lm: Optional[str] = None,
                   lm_text: Sequence[str] = (), epochs: int = 6, work: Optional[str] = None,
                   hash_bits: int = 21, dev_limit: int = 0, seed: int = 1,
                   log: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> dict:
    """The whole of ``wo smt train``: writes ``model_out`` and, beside it, the phrase table
    (``<model>.phrases.tsv.gz``), the reranker's word lexicons
    (``<model>.lexicon.tsv.gz``, ``<model>.model1.tsv.gz``), the truecaser and (without ``lm``) a 4-gram LM of the
    training English side plus ``lm_text`` (``<model>.lm.wolm``).  Returns the training
    record.  Raises ValueError for malformed TSV input (file and line named)."""
    from ..extras import require

    require("smt", "wo smt train")
    from ..lm.estimation import train as lm_train
    from ..lm.files import write_binary
    from ..lm.model import LanguageModel
    from .align import align_directions, symmetrize
    from .lexicon import Lexicon
    from .parse import load_parser
    from .prep import EnglishTokenizer, Truecaser, read_pairs
    from .train import train

    base = os.path.splitext(model_out)[0]
    tr_pairs, dev_pairs = read_pairs(train_tsv), read_pairs(dev_tsv)
    tok = EnglishTokenizer()
    tc = Truecaser().train([tok.tokenize(p.en) for p in tr_pairs])
    tc.save(base + ".truecase.json.gz")
    tok = EnglishTokenizer(tc)
    parsers = {"en": load_parser("en"), "zh": load_parser("zh")}
    log(f"preparing {len(tr_pairs)} training and {len(dev_pairs)} dev pairs (segment, tokenize, parse)")
    train_recs = prepare(tr_pairs, tok, parsers)
    dev_recs = prepare(dev_pairs, tok, {"zh": parsers["zh"]})
    log("aligning (eflomal, grow-diag-final-and)")
    fwd, rev = align_directions([r["zh"] for r in train_recs], [r["en"] for r in train_recs], seed=seed)
    links = [symmetrize([tuple(x) for x in f], [tuple(x) for x in r], "grow-diag-final-and")
             for f, r in zip(fwd, rev)]
    table = phrase_table(train_recs, links)
    tname = os.path.basename(base) + ".phrases.tsv.gz"
    table.save(os.path.join(os.path.dirname(os.path.abspath(model_out)), tname))
    log(f"phrase table: {len(table)} pairs over {table.n_sources} source phrases")
    if lm is None:
        with tempfile.TemporaryDirectory(dir=work) as d:
            txt = os.path.join(d, "train.en")
            with open(txt, "w", encoding="utf-8") as fh:
                fh.writelines(" ".join(r["en"]) + "\n" for r in train_recs)
            tables = lm_train([txt, *lm_text], 4, log=log)
            lm = base + ".lm.wolm"
            write_binary(tables, lm)
        log(f"LM: {lm}")
    lex = Lexicon.from_links((r["zh"], r["en"], ls) for r, ls in zip(train_recs, links))
    xname = os.path.basename(base) + ".lexicon.tsv.gz"
    lex.save(os.path.join(os.path.dirname(os.path.abspath(model_out)), xname))
    log("IBM model 1 (EM, both directions)")
    m1 = Lexicon.model1((r["zh"], r["en"]) for r in train_recs)
    mname = os.path.basename(base) + ".model1.tsv.gz"
    m1.save(os.path.join(os.path.dirname(os.path.abspath(model_out)), mname))
    lmm = LanguageModel.load(lm)
    return train(train_recs, dev_recs, table, lmm, epochs, model_out, tname, hash_bits=hash_bits,
                 seed=seed, dev_limit=dev_limit, lexicon=lex, lexicon_file=xname, model1=m1,
                 model1_file=mname, log=log)
