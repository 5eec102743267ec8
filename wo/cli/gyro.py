"""``wo gyro index|lookup|realize``: GYRO phrase-based word ordering (de Gispert et al. 2014)."""
from __future__ import annotations

import json
import os

from .common import (EXIT_OK, EXIT_USER, STDIO_HELP, batch_options, batch_run, err, finite_float, nonneg_float,
                     nonneg_int, positive_float, positive_int)


def cmd_gyro_index(a) -> int:
    """``wo gyro index``: the phrase index of a text collection (map-reduce n-gram counting)."""
    import time

    from ..gyro.index import build_arrays, write_index

    t0 = time.perf_counter()
    try:
        arr = build_arrays(a.text, max_n=a.max_n, min_count=a.min_count, jobs=a.jobs, backend=a.backend,
                           scheduler=a.scheduler, report=lambda m: None if a.quiet else err(m))
    except ValueError as exc:
        err(str(exc))
        return EXIT_USER
    head = write_index(arr, a.out)
    if not a.quiet:
        err(f"wrote {a.out} (n-grams of orders 2..{head['max_n']}: {head['ngrams']}; "
             f"{os.path.getsize(a.out) / 2 ** 20:.1f} MB; {time.perf_counter() - t0:.1f} s)")
    return EXIT_OK


def cmd_gyro_lookup(a) -> int:
    """``wo gyro lookup``: the indexed phrases of each input bag, one JSON list per line."""
    from ..gyro.index import PhraseIndex, PhraseIndexError
    from ..io.text import AtomicWriter, open_text

    try:
        idx = PhraseIndex.load(a.index)
    except PhraseIndexError as exc:
        err(str(exc))
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
    """``wo gyro realize``: GYRO (Algorithm 3) over a phrase index and an n-gram LM; with
    ``--dep-model`` its best strings reranked by that dependency model (the command line hands
    GYRO the dependency system's linearizer class: GYRO imports no other system)."""
    from ..gyro.index import PhraseIndexError
    from ..gyro.realize import run

    dep = {}
    if a.dep_model:
        from ..dep.linearizer import Linearizer

        dep = {"dep_model": a.dep_model, "dep_system": Linearizer, "dep_weight": a.dep_weight,
               "dep_nbest": a.dep_nbest, "dep_own": not a.no_dep_own, "dep_budget": a.dep_budget}
    try:
        return batch_run(a, lambda bar: run(
            a.index, a.lm, a.input, a.output, rescore_path=a.rescore_lm, input_format=a.input_format,
            output_format=a.format, jobs=a.jobs, seed=a.seed, on_error=a.on_error, backend=a.backend,
            scheduler=a.scheduler, progress=bar.update,
            report=lambda m: (bar.clear(), err(m)), r=a.r, beta=a.beta, nbest=a.nbest,
            max_states=a.max_states, row_states=a.row_states, engine=a.engine, row_cap=a.row_cap,
            keep=a.keep, future=not a.no_future, mbr=a.mbr, mbr_scale=a.mbr_scale,
            join_slack=a.join_slack, max_split=a.max_split,
            levels=tuple(a.levels.split(",")), min_n=a.min_n, rule_penalty=a.rule_penalty, timeout=a.timeout,
            **dep))
    except (ValueError, PhraseIndexError) as exc:   # a bad option (r, beta, nbest, format) or index file
        err(str(exc))
        return EXIT_USER


def register(sub) -> None:
    """Add the ``gyro`` verbs to the ``wo`` subparsers ``sub``."""
    from ..gyro.realize import DEFAULT_DEP_NBEST, DEFAULT_DEP_WEIGHT, DEFAULT_JOIN_SLACK, DEFAULT_ROW_CAP, DEFAULT_TIMEOUT

    gy = sub.add_parser("gyro", help="GYRO phrase-based word ordering (de Gispert et al. 2014)")
    gs = gy.add_subparsers(dest="verb", required=True, metavar="VERB")
    t = gs.add_parser("index", help="build the phrase index of a text collection (n-grams 2..N)")
    t.add_argument("--text", nargs="+", required=True, help="tokenized text, one sentence per line (.xz/.gz ok)")
    t.add_argument("--out", required=True, help="output index file")
    t.set_defaults(output_files=("out",), input_files=("text",))
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
    lk.set_defaults(output_files=("output",))
    lk.add_argument("--min-n", type=positive_int, default=2)
    lk.add_argument("--max-n", type=nonneg_int, default=0, help="0: the index's longest")
    lk.add_argument("--min-count", type=positive_int, default=1)
    lk.set_defaults(func=cmd_gyro_lookup)
    rz = gs.add_parser("realize", help="order each bag by phrase-based parsing and LM-pruned generation")
    rz.add_argument("--index", default=None, help="phrase index (wo gyro index); needed by the phrase levels")
    rz.add_argument("--lm", default=None, help="n-gram LM used while parsing (binary or ARPA; default: the shipped "
                                               "English 4-gram, corpora/models/wo-en-4gram.wolm)")
    rz.add_argument("--rescore-lm", default=None, help="higher-order LM applied to the final lattice")
    rz.add_argument("--input", default="-", help=f"bags (one per line) or CoNLL-U {STDIO_HELP}; default -")
    rz.add_argument("--output", default="-", help="output file; default -")
    rz.add_argument("--input-format", default="auto", choices=["auto", "bag", "conllu"])
    rz.add_argument("--r", type=int, default=3, help="first row pruned (Algorithm 3)")
    rz.add_argument("--beta", type=positive_float, default=4.0, help="pruning weight, log10 units")
    rz.add_argument("--nbest", type=int, default=1, help="realisations per bag (jsonl)")
    rz.add_argument("--engine", default="chart", choices=["chart", "fst"],
                    help="chart: cells of LM-scored strings in C pools (default); fst: OpenFst acceptors (pynini)")
    rz.add_argument("--row-cap", type=int, default=DEFAULT_ROW_CAP,
                    help="chart: strings kept per pruned row (chosen on EWT dev bags with the shipped 4-gram)")
    rz.add_argument("--keep", type=int, default=1000, help="chart: sentences kept in the output lattice")
    rz.add_argument("--join-slack", type=finite_float, default=DEFAULT_JOIN_SLACK,
                    help="chart: skip a join B.C whose score, with the bag's bigram of the boundary words in place "
                         "of the LM's boundary n-grams, is below the row's threshold by more than this (log10; "
                         "negative: join every pair the bounds admit)")
    rz.add_argument("--max-split", type=int, default=0,
                    help="chart: join B.C only where B or C has at most this many words (0: every split)")
    rz.add_argument("--timeout", type=nonneg_float, default=DEFAULT_TIMEOUT,
                    help="chart: seconds per bag (0 = none); past it the bag gets the greedy LM order (status timeout)")
    rz.add_argument("--no-future", action="store_true",
                    help="chart: prune rows by fragment score alone (the paper), without the estimate of the words left out")
    rz.add_argument("--levels", default="unigram",
                    help="grammars tried in turn: phrases (min-n..5-grams), bigram (+ 2-grams), unigram (+ every word); "
                         "the paper's: phrases,bigram,unigram; default 'unigram' alone (permutation under the LM, "
                         "best on EWT dev with a 5 M-word collection); weighted: every phrase and word as a rule, "
                         "each rule application costing --rule-penalty (chart engine)")
    rz.add_argument("--rule-penalty", type=finite_float, default=0.5, help="log10 cost per rule of the weighted grammar")
    rz.add_argument("--min-n", type=int, default=3, help="shortest phrase rule of the first grammar")
    rz.add_argument("--mbr", action="store_true", help="minimum Bayes risk reranking of the output lattice (Tromble et al. 2008)")
    rz.add_argument("--mbr-scale", type=positive_float, default=1.0, help="posterior scale of --mbr")
    rz.add_argument("--dep-model", default=None,
                    help="rerank the --dep-nbest best strings with this dependency model (the paper's +depLM "
                         "rescoring with wo's syntax model; e.g. corpora/models/wo-ewt-dep-lm.wo); jsonl gets the tree")
    rz.add_argument("--dep-weight", type=finite_float, default=DEFAULT_DEP_WEIGHT,
                    help="weight of the dependency model's score against log10 p (chosen on EWT dev)")
    rz.add_argument("--dep-nbest", type=positive_int, default=DEFAULT_DEP_NBEST, help="strings reranked by --dep-model")
    rz.add_argument("--dep-budget", type=positive_float, default=200.0,
                    help="pops per word of the dependency model's parse of each reranked string")
    rz.add_argument("--no-dep-own", action="store_true",
                    help="do not add the dependency model's own output to the strings it reranks")
    rz.add_argument("--max-states", type=positive_int, default=2_000_000,
                    help="memory bound per bag: strings of unpruned rows (chart) or acceptor states (fst)")
    rz.add_argument("--row-states", type=positive_int, default=20_000, help="fst: states kept by a row's pruning")
    rz.add_argument("--seed", type=int, default=1, help="shuffle seed for CoNLL-U input")
    batch_options(rz, format_help="output: the realisation, or JSON lines (one object per bag: text, tokens, score, "
                                  "status, seconds, pops, message, log10_prob, level, nbest, cells, states, pool_mb; "
                                  "heads and dep_score with --dep-model)")
    rz.set_defaults(func=cmd_gyro_realize)

