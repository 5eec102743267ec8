"""Training the spaCy tagger + dependency parsers of the syntactic SMT (``wo smt train-parser``).

The parsers that :mod:`wo.smt.parse` loads are small spaCy pipelines trained from blank ones on
UD treebanks.  :func:`train_parser` is the whole recipe:

1. read the training and dev CoNLL-U files with :func:`wo.io.read_conllu` (syntactic words only:
   multiword-token ranges ``3-4`` and empty nodes ``8.1`` are skipped; gold heads and labels are
   required) and, for Chinese, convert UD Chinese 1.3 (traditional script, UD v1) training files to
   simplified script and UD v2 (:func:`v1_to_v2`);
2. write them as spaCy ``DocBin`` files (one Doc per sentence; ``tag_`` = XPOS or UPOS);
3. run ``python -m spacy train`` (config :data:`CONFIG`: tok2vec HashEmbedCNN width 96 depth 4
   with prefix/suffix/shape features, tagger and transition-based parser listening to it, no
   static vectors) from a blank pipeline on one CPU thread, bounded by a step count, early
   stopping and a hard wall-clock cap (the run is stopped; ``model-best``, written at every
   improvement on dev, is kept);
4. copy ``model-best`` to the output directory and score it through :mod:`wo.smt.parse` (the API
   the SMT uses: pre-tokenized input, one tree per sentence) on every dev file.

Sentences are handled as lists of word dicts (:func:`words_of`) with the keys ``form, lemma,
upos, xpos, feats`` (str), ``head`` (int, 0-based, -1 for the root), ``deprel`` (str) and
``space`` (bool: no ``SpaceAfter=No``).  spaCy and OpenCC (the ``smt`` extra) are imported only
when needed.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, List, Optional, Sequence

from ..io.text import InputError

Words = List[dict]

# --------------------------------------------------------------------------------------------------
# reading and the UD v1 -> v2 conversion of UD Chinese 1.3
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
# ASCII punctuation of the UD Chinese 1.3 file -> the full-width forms used by GSDSimp / Beginner.
PUNCT_T2S = {",": "，", ".": "。", "(": "（", ")": "）", ":": "：", ";": "；", "?": "？", "!": "！",
             "「": "“", "」": "”", "『": "‘", "』": "’"}
PREDICATE_UPOS = {"VERB", "ADJ", "AUX"}


def words_of(sent, path: str = "") -> Words:
    """The words of a :class:`wo.io.Sentence` as dicts (keys in the module docstring).

    Missing values: LEMMA ``_`` stays ``_``; UPOS ``_`` becomes ``X``; XPOS ``_`` becomes the
    UPOS; FEATS are written ``Key=Value|...`` sorted by key (``""`` when there are none).

    Raises:
        InputError: (``path``:line of the sentence) a word without a head (``_``) or without a
            label, or heads that are not one tree (no root, several roots, a cycle); a parser
            cannot be trained on it.
    """
    rows = []
    for i, form in enumerate(sent.forms):
        if sent.heads[i] < 0 or sent.deprels[i] in ("_", ""):
            what = "head" if sent.heads[i] < 0 else "DEPREL"
            raise InputError(path, sent.line, f"word {i + 1} ({form!r}) of sentence {sent.sent_id} has no "
                                              f"{what} ('_'); training a parser needs gold heads and labels")
        upos = sent.upos[i] if sent.upos[i] != "_" else "X"
        feats = sent.feats[i]
        feats = "" if feats in ("_", "") else "|".join(sorted(feats.split("|"), key=lambda kv: kv.split("=", 1)[0]))
        rows.append({"form": form, "lemma": sent.lemmas[i], "upos": upos,
                     "xpos": sent.xpos[i] if sent.xpos[i] != "_" else upos, "feats": feats,
                     "head": sent.heads[i] - 1, "deprel": sent.deprels[i],
                     "space": "SpaceAfter=No" not in sent.misc[i].split("|")})
    heads = [w["head"] for w in rows]
    if heads.count(-1) != 1:
        raise InputError(path, sent.line, f"sentence {sent.sent_id} has {heads.count(-1)} roots (head 0); "
                                          "a dependency tree has one")
    for i in range(len(heads)):
        seen, j = set(), i
        while heads[j] != -1:
            if j in seen:
                raise InputError(path, sent.line, f"the heads of sentence {sent.sent_id} form a cycle "
                                                  f"through word {j + 1} ({rows[j]['form']!r})")
            seen.add(j)
            j = heads[j]
    return rows


def read_treebank(path: str) -> List[Words]:
    """The sentences of a CoNLL-U file (``.xz``/``.gz`` ok) as lists of word dicts
    (:func:`words_of`), read by :func:`wo.io.read_conllu`; sentences without syntactic words are
    left out.

    Raises:
        FileNotFoundError: no such file.
        InputError: ``file:line: message`` for a malformed sentence or a word without a gold head
            or label.
    """
    from ..io.conllu import read_conllu

    return [words_of(s, path) for s in read_conllu(str(path)) if len(s)]


def labels_of(sents: Sequence[Words]) -> set:
    """The set of dependency labels (DEPREL) of ``sents``."""
    return {w["deprel"] for s in sents for w in s}


def v1_to_v2(sents: List[Words], known: set) -> List[Words]:
    """UD Chinese 1.3 (traditional script, UD v1) -> simplified script, UD v2 labels and UPOS,
    in place; returns ``sents``.

    ``known``: the labels of the UD v2 treebanks trained on with it (e.g. GSDSimp, Beginner).

    * FORM and LEMMA: OpenCC ``t2s``; PUNCT forms: ASCII -> full-width (:data:`PUNCT_T2S`).
    * UPOS: CONJ -> CCONJ.
    * :data:`V1_TO_V2` renamings; ``nmod`` / ``nmod:tmod`` on a predicate head (VERB/ADJ/AUX) ->
      ``obl`` / ``obl:tmod``; ``case:aspect`` (了 着 过) -> AUX ``aux`` (and 著 -> 着); the
      relativiser 的 (XPOS DEC), labelled ``acl:relcl`` in v1, -> SCONJ ``mark:rel``; ``case:dec``
      (的) -> SCONJ ``mark:rel`` when ``Case=Rel``, else PART ``case``.
    * UD 1.3 differs from the v2 GSD annotation in more ways than these (e.g. some adverbs are
      ``mark``, some prepositions ``acl``); those are left as they are.
    * any other label not in ``known`` -> the part before ':'.

    Needs OpenCC (the ``smt`` extra).
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


def blank(lang: str):
    """A blank spaCy pipeline of ``lang`` (Chinese with the dependency-free character segmenter)."""
    import spacy

    if lang == "zh":
        return spacy.blank("zh", config={"nlp": {"tokenizer": {"segmenter": "char"}}})
    return spacy.blank(lang)


def to_docbin(nlp, sents: Sequence[Words], tag_field: str, path: Path, zh: bool) -> None:
    """Write sentences as a spaCy ``DocBin`` at ``path``: one Doc per sentence, ``tag_`` from the
    word key ``tag_field`` (``"xpos"`` or ``"upos"``), heads, deps (UD ``root`` stored as spaCy's
    ``ROOT``); spaces from ``space``, none for Chinese (``zh``)."""
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
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    db.to_disk(path)


# --------------------------------------------------------------------------------------------------
# the spaCy training config
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
LANGS = tuple(TOKENIZERS)


@dataclass
class Settings:
    """The bounds and sizes of one training (the shipped parsers' values are the defaults).

    max_steps: optimizer steps at most; max_minutes: hard wall-clock cap of ``spacy train`` in
    minutes (the run is stopped and the best checkpoint kept; 0 = none); patience: steps without
    a dev improvement before stopping (0 = never); eval_frequency: steps between dev
    evaluations (a checkpoint can only be kept at one); embed_size: rows of the NORM hash
    embedding (the prefix/suffix/shape tables get half); seed: spaCy's random seed."""

    max_steps: int = 8000
    max_minutes: float = 19.0
    patience: int = 2000
    eval_frequency: int = 200
    embed_size: int = 4000
    seed: int = 0


def write_config(path: Path, lang: str, settings: Settings) -> None:
    """Write the spaCy training config of ``lang`` (:data:`CONFIG` with ``settings``) to ``path``."""
    text = CONFIG.format(lang=lang, tokenizer=TOKENIZERS[lang], seed=settings.seed,
                         embed_size=settings.embed_size, patience=settings.patience,
                         max_steps=settings.max_steps, eval_frequency=settings.eval_frequency)
    Path(path).write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# training, shipping, scoring
# --------------------------------------------------------------------------------------------------


def run_spacy_train(work: Path, log: Callable[[str], None], max_minutes: float) -> dict:
    """Run ``python -m spacy train WORK/config.cfg`` on ``WORK/{train,dev}.spacy`` in a child
    process on one CPU thread (``--gpu-id -1``, ``OMP_NUM_THREADS=1``), its console output in
    ``WORK/train.log`` and its checkpoints in ``WORK/train`` (emptied first).  The child is
    stopped after ``max_minutes`` (0 = no cap) and on Ctrl-C (KeyboardInterrupt is re-raised).

    Returns {wall_seconds, stopped_at_time_cap, log_tail (:func:`log_tail`)}.

    Raises:
        InputError: (``train.log``:line) the run wrote no ``model-best`` or failed; the message
            holds the log's last line (e.g. spaCy's complaint about the data).
    """
    work = Path(work)
    out = work / "train"
    if out.exists():
        shutil.rmtree(out)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "spacy", "train", str(work / "config.cfg"), "--output", str(out),
           "--gpu-id", "-1", "--paths.train", str(work / "train.spacy"), "--paths.dev", str(work / "dev.spacy")]
    log(" ".join(cmd))
    t0 = time.time()
    stopped = False
    logpath = work / "train.log"
    with open(logpath, "w") as logf:
        proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            proc.wait(timeout=max_minutes * 60 if max_minutes > 0 else None)
        except subprocess.TimeoutExpired:
            stopped = True
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
        except BaseException:          # Ctrl-C: the child is in its own session, stop it too
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
            raise
    wall = time.time() - t0
    if not (out / "model-best").exists() or (not stopped and proc.returncode != 0):
        lines = logpath.read_text(encoding="utf-8", errors="replace").splitlines()
        last = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), -1)
        why = f"spacy train exited with code {proc.returncode}" if proc.returncode else "spacy train wrote no model-best"
        raise InputError(str(logpath), last + 1, f"{why}: {lines[last].strip() if last >= 0 else '(empty log)'}")
    log(f"trained in {wall:.0f} s" + (" (stopped at the wall-clock cap)" if stopped else ""))
    return {"wall_seconds": round(wall, 1), "stopped_at_time_cap": stopped, "log_tail": log_tail(logpath)}


def log_tail(path: Path) -> dict:
    """The evaluations in a spaCy console log: {epochs, steps (of the last evaluation),
    best_step, best_dev_during_training {tag_acc, uas_no_punct, las_no_punct} (percent),
    evaluations}; {} when there is none.  The best row is the one with the highest
    0.34 TAG_ACC + 0.33 DEP_UAS + 0.33 DEP_LAS (the config's score weights; the console shows
    the score rounded)."""
    rows = []
    for line in Path(path).read_text(errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 9 and parts[0].isdigit() and parts[1].isdigit():
            rows.append(parts)
    if not rows:
        return {}
    best = max(rows, key=lambda r: 0.34 * float(r[-5]) + 0.33 * float(r[-3]) + 0.33 * float(r[-2]))
    return {"epochs": int(rows[-1][0]) + 1, "steps": int(rows[-1][1]), "best_step": int(best[1]),
            "best_dev_during_training": {"tag_acc": float(best[-5]), "uas_no_punct": float(best[-3]),
                                         "las_no_punct": float(best[-2])},
            "evaluations": len(rows)}


def ship(src: Path, dst: Path, meta: Optional[dict] = None) -> Path:
    """Copy the spaCy pipeline directory ``src`` (``model-best``) to ``dst``, replacing a spaCy
    pipeline already there, and update its ``meta.json`` with ``meta``.  Returns ``dst``.

    Raises:
        InputError: ``dst`` exists and is neither an empty directory nor a spaCy pipeline (it is
            not replaced).
    """
    src, dst = Path(src), Path(dst)
    if dst.exists():
        if dst.is_dir() and (not any(dst.iterdir()) or (dst / "config.cfg").is_file()):
            shutil.rmtree(dst)
        else:
            raise InputError(str(dst), 0, "exists and is not a spaCy pipeline directory; not replaced")
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst)
    if meta:
        meta_path = dst / "meta.json"
        m = json.loads(meta_path.read_text())
        m.update(meta)
        meta_path.write_text(json.dumps(m, indent=2, ensure_ascii=False) + "\n")
    return dst


def dir_size(path: Path) -> int:
    """Total bytes of the files under ``path``."""
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def evaluate(parser, sents: Sequence[Words], tag_field: str) -> dict:
    """Tag accuracy, UAS and LAS (percent, 2 decimals) of a :class:`wo.smt.parse.Parser` on gold
    ``sents``, over all words and without punctuation (words labelled ``punct``), with the
    parsing speed.  Returns {sentences, words, tag_acc, uas, las, uas_no_punct, las_no_punct,
    words_per_second}."""
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
            if w["deprel"] != "punct":
                np_ += 1
                uas_np += u
                las_np += lab

    def pct(a, b):
        return round(100.0 * a / max(b, 1), 2)

    return {"sentences": len(sents), "words": n, "tag_acc": pct(tag, n), "uas": pct(uas, n),
            "las": pct(las, n), "uas_no_punct": pct(uas_np, np_), "las_no_punct": pct(las_np, np_),
            "words_per_second": round(n / max(secs, 1e-9), 1)}


def set_name(path: str) -> str:
    """The name of a data set in records: its file name without ``.conllu`` and ``.xz``/``.gz``."""
    name = Path(path).name
    for ext in (".xz", ".gz", ".conllu"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return name


def _unique(names: List[str]) -> List[str]:
    """``names`` with repeats made distinct (``name``, ``name-2``, ...)."""
    out, seen = [], {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}-{seen[n]}")
    return out


def train_parser(lang: str, train: Sequence[str], dev: Sequence[str], out: str, *,
                 zh_v1: Sequence[str] = (), tag: Optional[str] = None, settings: Optional[Settings] = None,
                 work: Optional[str] = None, meta: Optional[dict] = None,
                 log: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> dict:
    """Train a tagger + dependency parser for :mod:`wo.smt.parse` (the whole of
    ``wo smt train-parser``; steps in the module docstring) and write it to the directory ``out``.

    Args:
        lang: ``"en"`` or ``"zh"`` (Chinese: pre-segmented words, written without spaces).
        train: UD v2 training CoNLL-U files (``.xz``/``.gz`` ok), in this order.
        dev: CoNLL-U files for model selection (all together) and the scores (each apart).
        out: output directory (a spaCy pipeline: ``wo.smt.parse.load_parser(lang, out)``); a
            pipeline already there is replaced.
        zh_v1: UD Chinese 1.3 style training files (traditional script, UD v1), converted by
            :func:`v1_to_v2` with the labels of ``train`` and ``dev`` as the known ones; their
            sentences come first in the training data.  Chinese only.
        tag: the column learnt as ``pos``: ``"xpos"`` or ``"upos"``; default XPOS (PTB) for
            English, UPOS for Chinese.
        settings: :class:`Settings` (default: the shipped parsers' ones).
        work: directory for the DocBins, the config, ``train.log`` and spaCy's checkpoints (kept);
            default a temporary directory, removed at the end.
        meta: entries added to the pipeline's ``meta.json`` (name, version, description, licence).
        log: receives progress lines.

    Returns:
        The training record: {lang, training {wall_seconds, stopped_at_time_cap, log_tail},
        model, model_bytes, tag, labels, n_labels, train_sentences, train_words, train_sources
        {set name: sentences}, dev {set name: :func:`evaluate` scores}, settings}.

    Raises:
        wo.extras.MissingExtra: spaCy (or, with ``zh_v1``, OpenCC) is not installed.
        ValueError: unknown ``lang`` or ``tag``, ``zh_v1`` for English, no training or dev file.
        FileNotFoundError: an input file does not exist.
        InputError: ``file:line: message`` for malformed CoNLL-U or a word without a gold head or
            label; a failed ``spacy train`` (naming its log); ``out`` is not replaceable.
    """
    from ..extras import require

    if lang not in LANGS:
        raise ValueError(f"no parser recipe for language {lang!r}; expected one of {LANGS}")
    if zh_v1 and lang != "zh":
        raise ValueError("UD v1 Chinese training files (zh_v1) need lang 'zh'")
    if not (train or zh_v1) or not dev:
        raise ValueError("training a parser needs at least one training file and one dev file")
    tag = tag or ("xpos" if lang == "en" else "upos")
    if tag not in ("xpos", "upos"):
        raise ValueError(f"tag must be 'xpos' or 'upos', not {tag!r}")
    require("smt", "wo smt train-parser", modules=["spacy", "opencc"] if zh_v1 else ["spacy"])
    settings = settings or Settings()
    for p in [*zh_v1, *train, *dev]:
        if not Path(p).is_file():
            raise FileNotFoundError(2, "No such file", str(p))

    tmp = None
    if work is None:
        tmp = tempfile.mkdtemp(prefix="wo-train-parser-")
        work = tmp
    workp = Path(work)
    workp.mkdir(parents=True, exist_ok=True)
    try:
        v2 = {p: read_treebank(p) for p in [*train, *dev]}
        names = _unique([set_name(p) for p in [*zh_v1, *train]])
        parts: List[List[Words]] = []
        if zh_v1:
            known = labels_of([s for ss in v2.values() for s in ss])
            parts += [v1_to_v2(read_treebank(p), known) for p in zh_v1]
        parts += [v2[p] for p in train]
        train_sents = [s for ss in parts for s in ss]
        dev_sets = dict(zip(_unique([set_name(p) for p in dev]), (v2[p] for p in dev)))
        sources = {n: len(ss) for n, ss in zip(names, parts)}
        nlp = blank(lang)
        to_docbin(nlp, train_sents, tag, workp / "train.spacy", lang == "zh")
        to_docbin(nlp, [s for ss in dev_sets.values() for s in ss], tag, workp / "dev.spacy", lang == "zh")
        log(f"[{lang}] train {len(train_sents)} sentences {sum(map(len, train_sents))} words; dev "
            + ", ".join(f"{k} {len(v)}" for k, v in dev_sets.items()))
        write_config(workp / "config.cfg", lang, settings)
        training = run_spacy_train(workp, lambda m: log(f"[{lang}] {m}"), settings.max_minutes)
        dst = ship(workp / "train" / "model-best", Path(out), meta)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    log(f"[{lang}] wrote {dst} ({dir_size(dst) / 1e6:.1f} MB)")

    from .parse import load_parser

    parser = load_parser(lang, str(dst))
    rec = {"lang": lang, "training": training, "model": str(dst), "model_bytes": dir_size(dst),
           "tag": {"xpos": "XPOS (PTB)" if lang == "en" else "XPOS", "upos": "UPOS"}[tag],
           "labels": "full UD v2 deprel (subtypes kept)", "n_labels": len(parser.labels),
           "train_sentences": len(train_sents), "train_words": sum(map(len, train_sents)),
           "train_sources": sources,
           "dev": {k: evaluate(parser, v, tag) for k, v in dev_sets.items()},
           "settings": {**asdict(settings), "threads": 1}}
    for k, v in rec["dev"].items():
        log(f"[{lang}] {k}: tag {v['tag_acc']} UAS {v['uas']} LAS {v['las']} "
            f"(no punct {v['uas_no_punct']}/{v['las_no_punct']})")
    return rec
