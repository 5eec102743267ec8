"""The decoding settings of a trained SR model, chosen on held-out data (the second half of
``wo sr train``): the treebank's own n-gram LMs (or a large LM shipped for its language), their
weights in the choice of forms and in each domain's rescoring, the lifting threshold, the
allomorph table and its weight, and the form context model and its weight.

Each step decodes the dev set with the model's stages (:mod:`wo.sr.stages`), changing one
stage's settings at a time, and keeps the best by dev BLEU (the SR'19 metric on lower-cased
tokens), ties to the simpler setting.  The choices and their grids are returned as a record and
written into the model file.
"""
from __future__ import annotations

import os
from typing import Callable, Dict, Optional, Sequence

from .inflect import Allomorphs, FormContext

FORM_PENALTIES = (0.0, 0.5, 1.0, 2.0)          # log10 cost per rank down a token's candidates
LIFT_THRESHOLDS = (0.3, 0.5, 0.7, 0.9, 2.0)    # the lifting model's threshold (2.0: no lifting)
# words / dep-mix LM weights on each domain's final beam (heavier words weights won on dev for
# en_ewt's 4-gram, fr_partut and vi_vtb)
WORDS_WEIGHTS = (0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
DEPMIX_WEIGHTS = (0.0, 0.5, 1.0)
# a large LM shipped for a language takes the treebank's own words LM's place, with heavier
# weights (en_partut dev, gold forms: own LM 85.77, the large 4-gram at weight 20 88.78)
LARGE_LMS = {"en": "wo-en-wiki-4gram.wolm"}
LARGE_WORDS_WEIGHTS = (0.0, 1.0, 5.0, 10.0, 20.0, 40.0)
ALLOMORPH_WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0)
# the form context model is kept where it adds at least this much dev BLEU (ja +5.03, pt_gsd
# +0.63, el +0.52, tr +0.41 took it; it_partut +0.17 did not)
CONTEXT_MIN_GAIN = 0.2
LM_ORDER, LM_PRUNE = 4, (0, 1, 1)


def dev_bleu(realizer, dev: Sequence, refs: Sequence[str]) -> float:
    """SR BLEU (2 decimals, lower-cased tokens) of ``realizer`` on the T1 sentences ``dev``
    against the tokenized references ``refs`` (a bad sentence gives its lemmas)."""
    from ..eval.metrics import sr_score

    return round(sr_score([realizer.realize(s).text if not s.error else " ".join(s.lemmas) for s in dev],
                          list(refs), bleu_only=True).bleu, 2)


def dev_grid(realizer, dev: Sequence, refs: Sequence[str], values: Sequence, apply: Callable) -> dict:
    """:func:`dev_bleu` of ``realizer`` at each of ``values`` (``apply(value)`` sets it on the
    realizer's stages first): dict value -> BLEU, in the order of ``values``; the last value
    stays applied.  The caller picks (ties broken its own way) and applies the winner."""
    grid = {}
    for v in values:
        apply(v)
        grid[v] = dev_bleu(realizer, dev, refs)
    return grid


def build_lm(trees: Sequence, view: str, out: str, log: Callable[[str], None] = lambda m: None) -> str:
    """An LM of ``view`` (:mod:`wo.lm.views`: ``words``, ``dep-mix``) over the training trees
    (:class:`wo.io.conllu.Sentence`, reference order with heads), order 4, n-grams seen once
    pruned from the trigrams (as ``wo lm train --conllu --view VIEW --order 4 --prune 0 1 1``),
    written to ``out`` (wo's binary).  Returns ``out``.  Raises ValueError for an empty text."""
    import tempfile

    from ..lm.estimation import train
    from ..lm.model import save_tables
    from ..lm.views import treebank_lines

    fd, tmp = tempfile.mkstemp(prefix="wo-view-", suffix=".txt")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for line in treebank_lines(trees, view):
                f.write(line + "\n")
        t = train([tmp], LM_ORDER, prune=list(LM_PRUNE), log=lambda m: None)
    finally:
        os.unlink(tmp)
    t.meta.update(sources=["training trees"], view=view)
    save_tables(t, out)
    log(f"{view} LM: {os.path.basename(out)} ({os.path.getsize(out) / 1e3:.0f} kB)")
    return out


def large_lm(lang: str) -> Optional[str]:
    """The path of the large words LM shipped for ``lang`` (:data:`LARGE_LMS`), or None."""
    from ..resources import model_dirs

    name = LARGE_LMS.get(lang)
    if not name:
        return None
    return next((os.path.join(d, name) for d in model_dirs() if os.path.isfile(os.path.join(d, name))), None)


def tune_lms(r, dev, refs, words, dep, words_weights: Sequence[float], log) -> dict:
    """The LMs' part of the tuning, on the loaded realiser ``r`` (its stages changed in place):
    the penalty per candidate rank in the choice of forms (FORM_PENALTIES, against no LM), then
    the words and dep-mix weights of each domain's rescoring, then the lifting threshold
    (LIFT_THRESHOLDS).  Returns the record (grids and choices)."""
    order, forms, lift = r.stage("order"), r.stage("forms"), r.stage("lift")

    def set_lms(use: bool, fp: float = 1.0, a: float = 1.0, b: float = 0.0) -> None:
        order.words_lm, order.words_weight = (words if use else None), a
        order.view_lms = [(dep, b)] if use and b else []
        forms.lm, forms.penalty = (words if use else None), fp

    def bleu() -> float:
        return dev_bleu(r, dev, refs)

    set_lms(False)
    grid = {"none": bleu()}
    for fp in FORM_PENALTIES:
        set_lms(True, fp, 0.0)
        grid[f"forms {fp}"] = bleu()
    best_fp = max(FORM_PENALTIES, key=lambda fp: (grid[f"forms {fp}"], fp))
    use_lm = grid[f"forms {best_fp}"] > grid["none"]
    for a in words_weights:
        for b in DEPMIX_WEIGHTS:
            if a or b:
                set_lms(True, best_fp, a, b)
                grid[f"forms {best_fp} words {a} dep-mix {b}"] = bleu()
    grid[f"forms {best_fp} words 0.0 dep-mix 0.0"] = grid[f"forms {best_fp}"]
    key = max((k for k in grid if k.startswith(f"forms {best_fp} words")),
              key=lambda k: (grid[k], -sum(float(x) for x in k.split()[3::2])))
    a, b = float(key.split()[3]), float(key.split()[5])
    use_lm = use_lm or (a > 0 or b > 0) and grid[key] > grid["none"]
    set_lms(use_lm, best_fp, a, b)
    lift_grid = {}
    if lift is not None and lift.model is not None:
        for th in LIFT_THRESHOLDS:
            lift.threshold = th
            lift_grid[th] = bleu()
        lift.threshold = max(LIFT_THRESHOLDS, key=lambda th: (lift_grid[th], th))
    rec = {"dev_grid": grid, "form_penalty": best_fp if use_lm else None, "words_weight": a if use_lm else 0.0,
           "depmix_weight": b if use_lm else 0.0, "dev_bleu_plain": grid["none"],
           "lift_grid": {str(k): v for k, v in lift_grid.items()},
           "lift_threshold": lift.threshold if lift is not None else None,
           "dev_bleu": lift_grid[lift.threshold] if lift_grid else grid[key] if use_lm else grid["none"]}
    if not use_lm:   # no LM: the forms take their first candidate, the domains their model order
        order.words_weight, forms.penalty = 1.0, 1.0
    log(f"LMs: dev {grid['none']} without, {grid[key]} with (forms {best_fp}, words {a}, dep-mix {b}; used "
        f"{use_lm}); lifting threshold {rec['lift_threshold']}: {rec['dev_bleu']}")
    return rec


def tune_allomorphs(r, gold: Sequence, dev, refs, log) -> dict:
    """The allomorph table (counted with or without the previous word's last vowel as a
    context, :meth:`wo.sr.inflect.Allomorphs.build`) and its weight (ALLOMORPH_WEIGHTS, 0 =
    off) in the forms stage of ``r``, by dev BLEU (ties: the smaller weight, then no vowels)."""
    forms = r.stage("forms")
    grid, tables = {}, {}
    for vowels in (False, True):
        tables[vowels] = forms.allomorphs = Allomorphs.build(gold, vowels=vowels)
        for wt in ALLOMORPH_WEIGHTS:
            if wt == 0 and vowels:
                grid[(wt, vowels)] = grid[(wt, False)]   # the table is not read at weight 0
                continue
            forms.allomorph_weight = wt
            grid[(wt, vowels)] = dev_bleu(r, dev, refs)
    best, vowels = max(grid, key=lambda x: (grid[x], -x[0], not x[1]))
    forms.allomorphs, forms.allomorph_weight = tables[vowels], best
    rec = {"keys": len(tables[vowels]), "dev_grid": {str(k): v for (k, vw), v in grid.items() if not vw},
           "dev_grid_vowels": {str(k): v for (k, vw), v in grid.items() if vw}, "allomorph_weight": best,
           "vowels": vowels, "dev_bleu": grid[(best, vowels)]}
    log(f"allomorphs: {rec['keys']} keys; dev {rec['dev_grid']}, with the last vowel {rec['dev_grid_vowels']} "
        f"-> weight {best}{' with vowels' if vowels else ''}")
    return rec


def tune_context(r, gold: Sequence, dev, refs, log) -> dict:
    """The form context model (:class:`wo.sr.inflect.FormContext`, without and with the
    next-initial templates) and its weight in the forms stage of ``r``, by dev BLEU
    (:meth:`FormContext.choose`); left out where it adds under CONTEXT_MIN_GAIN."""
    forms, lex = r.stage("forms"), r.lexicon
    models = {ni: FormContext.build(gold, lex.table, next_initial=ni) for ni in (False, True)}

    def bleu(wt: float) -> float:
        forms.context_weight = wt
        return dev_bleu(r, dev, refs)

    best, ni, grid = FormContext.choose(forms, models, bleu)
    gain = grid[(best, ni)] - grid[(0.0, False)]
    if gain < CONTEXT_MIN_GAIN:
        best, forms.context = 0.0, None
    forms.context_weight = best
    rec = {"weights": len(models[ni]), "next_initial": ni, "dev_grid": {str(k): v for (k, n), v in grid.items() if not n},
           "dev_grid_next_initial": {str(k): v for (k, n), v in grid.items() if n}, "context_weight": best,
           "min_gain": CONTEXT_MIN_GAIN, "dev_bleu": grid[(best, ni)] if best else grid[(0.0, False)]}
    log(f"form context: dev {rec['dev_grid']}, with the next initial {rec['dev_grid_next_initial']} -> "
        f"{f'weight {best}' + (' with the next initial' if ni else '') if best else 'not taken'}")
    return rec


def tune_model(path: str, trees: Sequence, gold: Sequence, dev: Sequence, refs: Sequence[str], lang: str,
               log: Callable[[str], None] = lambda m: None, lms: Optional[Dict[str, str]] = None) -> dict:
    """Choose the decoding settings of the local-orderer SR model at ``path`` on ``dev`` (T1
    sentences) and ``refs`` (tokenized references) and write them into the model file.

    trees: the training sentences in reference order with their heads (the LMs' text); gold:
    the same for the allomorph and context tables (heads not needed).  The treebank's own LMs
    (words and dep-mix views, :func:`build_lm`) are written beside the model as
    ``STEM.words4.wolm`` and ``STEM.depmix4.wolm``; where wo ships a large LM for ``lang``
    (:data:`LARGE_LMS`) it replaces the words LM, with LARGE_WORDS_WEIGHTS.  ``lms``
    ({"words": path, "dep-mix": path}) gives LMs instead.  Steps: :func:`tune_lms`,
    :func:`tune_allomorphs`, :func:`tune_context`.  An LM the model does not use in the end
    is deleted.  Returns the record {"lms": ..., "lm": ..., "allomorphs": ..., "context": ...}.
    Raises OSError if the model or LMs cannot be written."""
    from ..lm.model import LanguageModel
    from ..model import Model
    from .realizer import Realizer

    stem = os.path.splitext(path)[0]
    lms = dict(lms or {})
    made = []
    big = large_lm(lang)
    if "words" not in lms:
        if big:
            lms["words"] = big
        else:
            lms["words"] = build_lm(trees, "words", f"{stem}.words{LM_ORDER}.wolm", log)
            made.append(lms["words"])
    if "dep-mix" not in lms:
        lms["dep-mix"] = build_lm(trees, "dep-mix", f"{stem}.depmix{LM_ORDER}.wolm", log)
        made.append(lms["dep-mix"])
    words = LanguageModel.load(lms["words"], verify=False)
    dep = LanguageModel.load(lms["dep-mix"], verify=False)
    head, _ = Model.read_header(path)
    m = Model.load(path, mmap=False)
    r = Realizer(m, rerank_lm="none", gold_forms=False)   # dev T1 with gold forms: inflect all the same
    ww = LARGE_WORDS_WEIGHTS if lms["words"] == big else WORDS_WEIGHTS
    rec = {"lms": {v: os.path.basename(p) for v, p in lms.items()}}
    rec["lm"] = tune_lms(r, dev, refs, words, dep, ww, log)
    rec["allomorphs"] = tune_allomorphs(r, gold, dev, refs, log)
    rec["context"] = tune_context(r, gold, dev, refs, log)
    r.stage("candidates").gold_forms = True   # as trained: the model orders given gold forms
    m.header["sr"] = dict(m.header["sr"], stages=[st.to_json() for st in r.stages])
    m.header.setdefault("training", {})["tuning"] = rec
    m.save(path, compact=head.get("weights_dtype") or False)
    used = {f for st in r.stages for f in st.files()}
    for p in made:
        if os.path.basename(p) not in used:
            os.unlink(p)
    rec["dev_bleu"] = rec["context"]["dev_bleu"]
    return rec

