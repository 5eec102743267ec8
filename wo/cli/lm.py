"""``wo lm train|tokenize|convert|score``: n-gram language models."""
from __future__ import annotations

import os
import sys

from .common import EXIT_OK, EXIT_USER, STDIO_HELP, err, positive_int


def cmd_lm_train(a) -> int:
    """``wo lm train``: interpolated modified Kneser-Ney, ARPA or binary output."""
    from ..lm.estimation import train
    from ..lm.model import save_tables
    from ..lm.views import view_text_file

    if bool(a.text) == bool(a.conllu):
        err("give either --text (tokenized text) or --conllu (trees for --view)")
        return EXIT_USER
    if a.text and a.view != "words":
        err(f"--view {a.view} needs trees: give --conllu instead of --text")
        return EXIT_USER
    from ..lm.files import is_arpa_name

    if a.format != "probing" and is_arpa_name(a.out):
        err(f"{a.out}: --format {a.format} is for wo's binary; an .arpa name writes ARPA")
        return EXIT_USER
    if a.view != "words" and is_arpa_name(a.out):
        err(f"{a.out}: --view {a.view} is recorded in wo's binary header; ARPA cannot hold it")
        return EXIT_USER
    if a.tokenize and not a.text:
        err("--tokenize needs --text (raw paragraphs)")
        return EXIT_USER
    tmp = None
    tok_stats = None
    log = (lambda m: None) if a.quiet else (lambda m: print(m, file=sys.stderr))
    try:
        paths = a.text
        if a.conllu:
            tmp = view_text_file(a.conllu, a.view)
            paths = [tmp]
        elif a.tokenize:
            import tempfile

            from ..lm.tokenize import tokenize_files

            fd, tmp = tempfile.mkstemp(prefix="wo-lm-tok-", suffix=".txt")
            os.close(fd)
            tok_stats = tokenize_files(a.text, tmp, lang=a.tokenize, jobs=a.jobs, backend=a.backend,
                                       scheduler=a.scheduler, log=log)
            log(f"tokenized: {tok_stats}")
            paths = [tmp]
        t = train(paths, a.order, vocab_min_count=a.vocab_min_count, prune=a.prune, jobs=a.jobs,
                  backend=a.backend, scheduler=a.scheduler, max_tokens=a.max_tokens, log=log)
    except ValueError as exc:
        err(str(exc))
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
        err(f"wrote {a.out} (order {t.order}, n-grams {t.counts()}, {'ARPA' if is_arpa_name(a.out) else a.format})")
    return EXIT_OK


def cmd_lm_tokenize(a) -> int:
    """``wo lm tokenize``: raw paragraphs -> tokenized sentences (wo.lm.tokenize)."""
    from ..lm.tokenize import tokenize_files

    try:
        st = tokenize_files(a.input, a.output, lang=a.lang, jobs=a.jobs, backend=a.backend, scheduler=a.scheduler,
                            log=(lambda m: None) if a.quiet else err)
    except ValueError as exc:
        err(str(exc))
        return EXIT_USER
    if not a.quiet:
        err(f"wrote {a.output}: " + ", ".join(f"{k} {v}" for k, v in st.items()))
    return EXIT_OK


def cmd_lm_convert(a) -> int:
    """``wo lm convert``: ARPA (any toolkit) -> wo binary (or ARPA)."""
    from ..lm.files import LMError, is_arpa_name, read_arpa
    from ..lm.model import save_tables
    from ..lm.trie import file_format

    if file_format(a.arpa) != "arpa":     # hashed keys (probing) or a trie: the n-grams' words are not stored
        raise LMError(f"{a.arpa}: a wo binary LM ({file_format(a.arpa)}); convert from its ARPA file or "
                      f"write the format with `wo lm train --format`")
    if a.format != "probing" and is_arpa_name(a.out):
        raise LMError(f"{a.out}: --format {a.format} is for wo's binary; an .arpa name writes ARPA")
    t = read_arpa(a.arpa)
    save_tables(t, a.out, a.format)
    err(f"wrote {a.out} (order {t.order}, n-grams {t.counts()}, {'ARPA' if is_arpa_name(a.out) else a.format})")
    return EXIT_OK


def cmd_lm_score(a) -> int:
    """``wo lm score``: corpus log10 probability and perplexity (KenLM query conventions)."""
    from .._fast._lm import utf8_error_offset
    from ..io.text import BOM, AtomicWriter, decode_utf8, read_bytes
    from ..lm.model import LanguageModel

    lm = LanguageModel.load(a.lm)
    data = read_bytes(a.input)
    if utf8_error_offset(data) >= 0:  # invalid UTF-8: a user error naming file:line
        decode_utf8(data, a.input)
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


def register(sub) -> None:
    """Add the ``lm`` verbs to the ``wo`` subparsers ``sub``."""
    from ..lm.trie import lm_format

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
    t.set_defaults(output_files=("out",), input_files=("text", "conllu"))
    t.add_argument("--vocab-min-count", type=positive_int, default=1, help="words seen fewer times become <unk>")
    t.add_argument("--prune", type=int, nargs="*", default=None,
                   help="per order from 2: drop n-grams with adjusted count <= t (KenLM's --prune)")
    t.add_argument("--max-tokens", type=positive_int, default=1000, help="skip (and count) longer lines")
    t.add_argument("--jobs", type=int, default=1)
    t.add_argument("--backend", default="loky", choices=["loky", "dask"])
    t.add_argument("--scheduler", default=None, help="Dask scheduler address for --backend dask")
    t.add_argument("--quiet", action="store_true")
    t.add_argument("--format", type=lm_format, default="probing",
                   help="binary structure: probing (hash tables, fastest), trie (exact, about half the size) or "
                        "trie-q8 (probabilities and backoffs quantized to 8 bits, KenLM's trie -q 8 -b 8); "
                        "trie-a, trie-q8-a: the trie with compressed pointers (KenLM's -a)")
    t.set_defaults(func=cmd_lm_train)
    tk = ls.add_parser("tokenize", help="raw paragraphs -> one tokenized sentence per line (spaCy)")
    tk.add_argument("--input", nargs="+", required=True, help="raw text files, one paragraph per line (.xz/.gz ok)")
    tk.add_argument("--output", required=True, help="tokenized text (.xz: compressed)")
    tk.set_defaults(output_files=("output",))
    tk.add_argument("--lang", default="en", help="language of spaCy's rule-based tokenizer")
    tk.add_argument("--jobs", type=positive_int, default=1)
    tk.add_argument("--backend", default="loky", choices=["loky", "dask"])
    tk.add_argument("--scheduler", default=None, help="Dask scheduler address for --backend dask")
    tk.add_argument("--quiet", action="store_true")
    tk.set_defaults(func=cmd_lm_tokenize)
    c = ls.add_parser("convert", help="import an ARPA file (KenLM, SRILM, IRSTLM) as wo's binary")
    c.add_argument("arpa", help="ARPA file (.gz/.xz ok)")
    c.add_argument("out", help="output file (.arpa for ARPA)")
    c.set_defaults(output_files=("out",))
    c.add_argument("--format", type=lm_format, default="probing",
                   help="binary structure: probing (hash tables, fastest), trie (exact, about half the size) or "
                        "trie-q8 (probabilities and backoffs quantized to 8 bits, KenLM's trie -q 8 -b 8); "
                        "trie-a, trie-q8-a: the trie with compressed pointers (KenLM's -a)")
    c.set_defaults(func=cmd_lm_convert)
    s = ls.add_parser("score", help="log10 probability and perplexity of a text")
    s.add_argument("--lm", required=True, help="binary or ARPA LM")
    s.add_argument("--input", default="-", help=f"tokenized text {STDIO_HELP}; default -")
    s.add_argument("--output", default="-", help="where --per-sentence writes; default -")
    s.set_defaults(output_files=("output",))
    s.add_argument("--per-sentence", action="store_true", help="one sentence log10 probability per line")
    s.add_argument("--json", action="store_true", help="totals as one JSON object")
    s.set_defaults(func=cmd_lm_score)

