"""Source- and target-side syntax for the syntactic SMT: small spaCy tagger + dependency parsers.

Two pipelines are shipped under ``corpora/models/smt/`` (trained by ``wo smt train-parser``,
:mod:`wo.smt.parsers`, with the recipe of ``bench/smt_parsers.py``; see ``corpora/README.md`` for
data, licences and scores):

* ``en-parser``: English, trained on UD English-EWT train; ``pos`` = PTB tag (XPOS), labels = UD deprels.
* ``zh-parser``: Chinese (simplified script, pre-segmented words), trained on UD Chinese 1.3 train
  (converted to simplified / UD v2), GSDSimp test and 80 % of Beginner; ``pos`` = UPOS,
  labels = UD v2 deprels.  The training data carry NonCommercial licences.

Input is always pre-tokenized: words go straight into ``spacy.tokens.Doc`` and only the pipeline
components (tok2vec, tagger, parser) run, never spaCy's tokenizer.  Nothing is downloaded.

    >>> from wo.smt.parse import load_parser
    >>> p = load_parser("en")
    >>> p.parse([["The", "cat", "sat", "."]])[0].heads
    [1, 2, -1, 2]
"""
from __future__ import annotations

from pathlib import Path
from typing import List, NamedTuple, Optional, Sequence

MODELS = Path(__file__).resolve().parents[2] / "corpora" / "models" / "smt"
LANGS = ("en", "zh")
# label given to a later root when spaCy splits one input sentence into several
EXTRA_ROOT_LABEL = "parataxis"


class Parse(NamedTuple):
    """The analysis of one sentence.

    Attributes:
        pos: one tag per word (``token.tag_``: PTB/XPOS for English, UPOS for Chinese).
        heads: 0-based index of each word's head in the sentence; -1 for the single root.
        labels: dependency label per word (UD relation, e.g. ``nsubj``, ``nmod:poss``; ``root`` for the root).
    """

    pos: List[str]
    heads: List[int]
    labels: List[str]


def default_path(lang: str) -> Path:
    """Directory of the shipped model for ``lang``: ``smt/<lang>-parser`` in the first model
    directory of :func:`wo.resources.model_dirs` that has it (``corpora/models`` of a clone, the
    wo-models-smt package), else ``corpora/models/smt/<lang>-parser`` of the source tree.

    Raises:
        ValueError: ``lang`` is not ``"en"`` or ``"zh"``.
    """
    if lang not in LANGS:
        raise ValueError(f"no parser for language {lang!r}; expected one of {LANGS}")
    from ..resources import find_model

    found = find_model(f"smt/{lang}-parser")
    return Path(found) if found else MODELS / f"{lang}-parser"


class Parser:
    """A loaded spaCy tagger + dependency parser that analyses pre-tokenized sentences.

    Build it with :func:`load_parser`.  Attributes: ``lang`` (``"en"``/``"zh"``), ``path`` (model
    directory), ``nlp`` (the spaCy ``Language``).
    """

    def __init__(self, nlp, lang: str, path: Path):
        """Wrap a loaded spaCy pipeline ``nlp`` (must contain ``tagger`` and ``parser``) for ``lang``."""
        self.nlp = nlp
        self.lang = lang
        self.path = Path(path)

    @property
    def labels(self) -> List[str]:
        """The parser's dependency labels (UD relations; spaCy's ``ROOT`` reported as ``root``)."""
        return sorted({"root" if l == "ROOT" else l for l in self.nlp.get_pipe("parser").labels})

    def parse(self, sents: Sequence[Sequence[str]], batch_size: int = 256) -> List[Parse]:
        """Tag and parse pre-tokenized sentences.

        Args:
            sents: sentences, each a list of words (Chinese: segmented words, no spaces needed).
            batch_size: documents per batch given to the spaCy components.

        Returns:
            One :class:`Parse` per sentence, in order.  Each has exactly one root (head -1) and no
            cycles: if spaCy splits a sentence into several trees, every later root is attached to the
            first root with label ``parataxis``.  An empty sentence gives empty lists.

        Raises:
            TypeError: a sentence is a plain string rather than a list of words.
            ValueError: a word is empty or contains whitespace only.
        """
        from spacy.tokens import Doc

        docs = []
        for s in sents:
            if isinstance(s, str):
                raise TypeError("parse() takes lists of words, not strings (input is pre-tokenized)")
            words = [str(w) for w in s]
            for w in words:
                if not w.strip():
                    raise ValueError(f"empty or whitespace-only word {w!r} in sentence {words!r}")
            spaces = [self.lang != "zh"] * len(words)
            doc = Doc(self.nlp.vocab, words=words, spaces=spaces)
            if len(doc):  # one sentence per input: ask the parser not to split it
                doc[0].is_sent_start = True
                for t in doc[1:]:
                    t.is_sent_start = False
            docs.append(doc)
        out: List[Parse] = [Parse([], [], [])] * len(docs)
        todo = [i for i, d in enumerate(docs) if len(d)]
        parsed = self.nlp.pipe((docs[i] for i in todo), batch_size=batch_size)
        for i, doc in zip(todo, parsed):
            out[i] = _to_parse(doc)
        return out


def _to_parse(doc) -> Parse:
    """Heads/labels of a parsed Doc as one tree: later roots attach to the first root."""
    pos = [t.tag_ for t in doc]
    heads, labels = [], []
    for t in doc:
        label = t.dep_.split("||")[0]  # a leftover pseudo-projective decoration, if any
        if t.head.i == t.i:
            heads.append(-1)
            labels.append("root")
        else:
            heads.append(t.head.i)
            labels.append(label if label and label != "ROOT" else "dep")
    roots = [i for i, h in enumerate(heads) if h == -1]
    if not roots:  # cannot happen with spaCy trees; be safe
        heads[0], labels[0] = -1, "root"
        roots = [0]
    first = roots[0]
    for r in roots[1:]:
        heads[r], labels[r] = first, EXTRA_ROOT_LABEL
    _check_tree(heads)
    return Parse(pos, heads, labels)


def _check_tree(heads: List[int]) -> None:
    """Raise ``AssertionError`` unless ``heads`` is one tree (one root, every word reaches it)."""
    assert heads.count(-1) == 1, heads
    for i in range(len(heads)):
        seen, j = set(), i
        while heads[j] != -1:
            assert j not in seen, f"cycle through word {j}: {heads}"
            seen.add(j)
            j = heads[j]


def load_parser(lang: str, path: Optional[str] = None) -> Parser:
    """Load the tagger + dependency parser for ``lang``.

    Args:
        lang: ``"en"`` (English: PTB tags) or ``"zh"`` (Chinese: UPOS tags).
        path: a spaCy model directory; default the shipped ``corpora/models/smt/<lang>-parser``
            (trained by ``bench/smt_parsers.py``; sources and licences in ``corpora/README.md``), or
            one written by ``wo smt train-parser``.

    Returns:
        A :class:`Parser`.  Loading reads only local files (no download); the tokenizer is never used.

    Raises:
        ValueError: unknown ``lang``, or the model has no ``tagger``/``parser`` component or is for
            another language.
        FileNotFoundError: ``path`` is given and holds no spaCy model.
        wo.model.ModelError: no ``path`` and the shipped parser is not installed (the message
            names the model package to install).
    """
    model = Path(path) if path is not None else default_path(lang)
    if lang not in LANGS:
        raise ValueError(f"no parser for language {lang!r}; expected one of {LANGS}")
    if not (model / "config.cfg").is_file():
        from ..model import ModelError
        from ..resources import missing_model_message

        if path is not None:
            raise FileNotFoundError(f"no spaCy model at {model} (expected {model / 'config.cfg'})")
        raise ModelError(missing_model_message(f"smt/{lang}-parser", f"{lang} parser"))
    import spacy

    nlp = spacy.load(model)
    if nlp.lang != lang:
        raise ValueError(f"model at {model} is for language {nlp.lang!r}, not {lang!r}")
    for name in ("tagger", "parser"):
        if name not in nlp.pipe_names:
            raise ValueError(f"model at {model} has no {name!r} component ({nlp.pipe_names})")
    return Parser(nlp, lang, model)
