"""Run the two peer realisers, IMSurReal and ZGen_SR, on the multilingual SR data and record their figures.

Reproduce (the data in ``out/sr-multi/CODE/`` comes from ``python bench/sr_multi.py prepare``)::

    # once: the peers' sources and tools (see /work/shared/tools/{imsurreal,zgen}/README.md)
    #   fetch github:EggplantElf/IMSurReal and github:SUTDNLP/ZGen, then
    #   git --git-dir=MIRROR archive HEAD | tar -x -C ~/imsurreal-src
    #   git --git-dir=MIRROR archive HEAD -- . ':(exclude)bin/ZGen_SR' | tar -x -C ~/zgen-src
    #   apt-get install -y time cmake libboost-dev libboost-{program-options,log,regex,serialization,thread,system,test}-dev
    nohup nice -n 19 python3 bench/sr_peers.py --tb it_partut fr_partut ... > ~/sr-peers.log 2>&1 &
    python3 bench/sr_peers.py --tb it_partut --systems zgen          # one system only
    python3 bench/sr_peers.py --tb it_partut --rescore-only          # re-read outputs, rewrite JSON

For each treebank CODE and system, in this order and one at a time:

* IMSurReal (``imsurreal-peer.sh``, TSP linearizer + inflection, TSP_STEPS=8000, INF_STEPS=6000, each followed
  by as many fine-tuning steps, the two trained in parallel), WORKDIR ``~/.cache/wo-peers/imsurreal/CODE``,
  TRAIN/DEV = ``out/sr-multi/CODE/{train,dev}.conllu``, T1 = ``test.t1`` (``wo sr make-input --seed 3``),
  REF = ``test.conllu``, NAME=test;
* ZGen_SR (``zgen-peer.sh``, beam 64, input type ``full`` = unordered tree, 5 training passes), WORKDIR
  ``~/.cache/wo-peers/zgen/CODE``, TRAIN = ``train.conllu``, TEST = ``test.conllu`` (shuffled by the script,
  seed 11), NAME=CODE-test.

Every peer command runs under ``nice -n 19``.  Results go to ``bench/results/sr_multi/peers/``:
``CODE.SYSTEM.json`` (one record), the hypotheses xz-compressed (``CODE.imsurreal.hyp.xz`` with its inflection,
``.lemma.hyp.xz`` lemmas in its order, ``.gold.hyp.xz`` gold forms in its order; ``CODE.zgen.hyp.xz``), and a
line per finished run in ``PROGRESS.md``.

Scoring (the SR'19 way, as wo's results count it): sacrebleu corpus BLEU, ``tokenize='none'``, lower-cased;
references are the syntactic words of ``test.conllu``, a space inside a form written ``_`` (the same is done to
the hypothesis tokens, so that one form stays one token, as ``imsurreal-peer.sh`` scores; where forms have spaces,
e.g. vi_vtb, ``bleu_detail.space_split`` also scores them split at the spaces).  The ``.hyp.xz`` files hold the
forms as the peers write them (joined by spaces, inner spaces kept), which is how wo's ``sr_score`` reads them.  IMSurReal's "gold order" BLEU puts the gold forms in
its predicted order: each output row of its TSP step carries the T1 token id (column 10, original_id; column 1 is
renumbered in output order), and the T1 token id maps
to the UD token through ``wo sr make-input --with-gold --seed 3`` (the same permutation as ``test.t1``, checked
column by column against it).  ZGen is scored lower-cased and also case-sensitive (as its script prints it).
"""
from __future__ import annotations

import argparse
import datetime
import json
import lzma
import os
import re
import shlex
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

from common import ROOT, cpu_name, parse_time_v   # the standard library only: no wo, numpy or sacrebleu here
SHARED = os.environ.get("WO_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
TOOLS = os.path.join(SHARED, "tools")
DATA = os.path.join(ROOT, "out", "sr-multi")
RES = os.path.join(ROOT, "bench", "results", "sr_multi", "peers")
CACHE = os.path.expanduser(os.environ.get("WO_PEERS_CACHE", "~/.cache/wo-peers"))
IMS_VENV = os.path.expanduser(os.environ.get("IMS_VENV", "~/.cache/imsurreal-venv"))
WO_PY = os.environ.get("WO_PY", next((p for p in (os.path.join(ROOT, ".venv", "bin", "python"),)
                                     if os.path.exists(p)), sys.executable))            # a python with wo's deps
SCORE_PY = os.environ.get("SCORE_PY", os.path.join(IMS_VENV, "bin", "python"))   # a python with sacrebleu

ORDER = ["it_partut", "fr_partut", "el_gdt", "vi_vtb", "fr_sequoia", "en_lines", "tr_imst", "pt_bosque", "pt_gsd",
         "ja_gsd", "ko_gsd", "ru_gsd", "id_gsd", "es_gsd", "fr_gsd", "de_gsd", "zh_gsdsimp", "en_ewt"]
TSP_STEPS, INF_STEPS = 8000, 6000
ZGEN_PASSES, ZGEN_TYPES = 5, "full"


# ------------------------------------------------------------------------------------------------ helpers
def log(msg: str) -> None:
    """Print a time-stamped progress message to stderr."""
    print(f"[sr_peers {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def conllu_sentences(path: str, ud: bool = True) -> List[List[List[str]]]:
    """Sentences of a CoNLL-U file as lists of split rows; with ``ud`` only syntactic words (integer ids)."""
    opener = lzma.open if path.endswith(".xz") else open
    out, rows = [], []
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if rows:
                    out.append(rows)
                rows = []
            elif not line.startswith("#"):
                c = line.split("\t")
                if not ud or c[0].isdigit():
                    rows.append(c)
    if rows:
        out.append(rows)
    return out


def tok(form: str) -> str:
    """One token as scored: a space inside a form becomes ``_`` (as in the references)."""
    return form.replace(" ", "_")


def ref_forms(test_conllu: str) -> List[List[str]]:
    """Reference sentences: the forms of the syntactic words of the UD test file."""
    return [[c[1] for c in s] for s in conllu_sentences(test_conllu)]


def score_forms(hyp: List[List[str]], ref: List[List[str]], lowercase: bool = True) -> Dict:
    """BLEU of hypothesis forms against reference forms, one form = one token (inner spaces as ``_``, as
    imsurreal-peer.sh scores); when a form has a space, also ``space_split`` (forms split at spaces, as
    wo's ``sr_score`` reads the lines of the .hyp.xz files)."""
    b = bleu([" ".join(tok(f) for f in s) for s in hyp], [" ".join(tok(f) for f in s) for s in ref], lowercase)
    if any(" " in f for s in hyp + ref for f in s):
        b["space_split"] = bleu([" ".join(s) for s in hyp], [" ".join(s) for s in ref], lowercase)
    return b


def lines(sents: List[List[str]]) -> List[str]:
    """Sentences of forms as lines (forms joined by a space, as the peers write their hypothesis files)."""
    return [" ".join(s) for s in sents]


def bleu(hyp: List[str], ref: List[str], lowercase: bool = True) -> Dict:
    """sacrebleu corpus BLEU (tokenize none, lower-cased by default) in SCORE_PY: {score, signature} or {error}."""
    if len(hyp) != len(ref):
        return {"error": f"line count {len(hyp)} != {len(ref)}"}
    code = ("import json, sys, sacrebleu\n"
            "from sacrebleu.metrics import BLEU\n"
            "d = json.load(sys.stdin)\n"
            "m = BLEU(tokenize='none', lowercase=d['lc'], force=True)\n"
            "s = m.corpus_score(d['h'], [d['r']])\n"
            "print(json.dumps({'score': round(s.score, 2), 'signature': str(m.get_signature()),"
            " 'detail': str(s)}))\n")
    p = subprocess.run([SCORE_PY, "-c", code], input=json.dumps({"h": hyp, "r": ref, "lc": lowercase}),
                       capture_output=True, text=True)
    if p.returncode:
        return {"error": p.stderr.strip()[-500:]}
    return json.loads(p.stdout)


def write_xz(path: str, lines: List[str]) -> None:
    """Write lines (one sentence each) to an xz-compressed file."""
    with lzma.open(path, "wt", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)


def time_file(path: str) -> Dict:
    """Wall seconds, CPU seconds and max RSS (MiB) from a ``/usr/bin/time -v`` report; {} if absent."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8", errors="replace") as f:
        t = parse_time_v(f.read())
    names = {"wall_s": ("wall_s", 1), "user_s": ("user_s", None), "sys_s": ("sys_s", None),
             "rss_mb": ("rss_mb", 0), "exit_status": ("exit", None)}
    return {names[k][0]: (v if names[k][1] is None else round(v, names[k][1] or None)) for k, v in t.items() if k in names}


def run_peer(cmd: List[str], env: Dict[str, str], logpath: str) -> Tuple[int, str, float]:
    """Run a peer script (stdout+stderr into logpath); returns (exit code, its output, wall seconds)."""
    t0 = time.time()
    with open(logpath, "w", encoding="utf-8") as f:   # streamed, so that a long run can be watched
        rc = subprocess.run(cmd, env={**os.environ, **env}, stdout=f, stderr=subprocess.STDOUT).returncode
    with open(logpath, encoding="utf-8", errors="replace") as f:
        return rc, f.read(), time.time() - t0


def cmd_string(env: Dict[str, str], cmd: List[str]) -> str:
    """The command as one shell line (environment assignments first)."""
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + " ".join(map(shlex.quote, cmd))


def append_progress(code: str, system: str, rec: Dict) -> None:
    """One line in PROGRESS.md: treebank, system, BLEU, gold-order BLEU, decode s, train s (or the failure)."""
    path = os.path.join(RES, "PROGRESS.md")
    new = not os.path.exists(path)
    with open(path, "a", encoding="utf-8") as f:
        if new:
            f.write("| treebank | system | BLEU | gold-order BLEU | decode s | train s | when |\n"
                    "|---|---|---|---|---|---|---|\n")
        when = rec.get("date", "")[:16]
        if rec.get("status") != "ok":
            f.write(f"| {code} | {system} | FAILED: {rec.get('error', '?')[:120]} | | | | {when} |\n")
            return
        g = rec.get("bleu_gold_order", "n/a" if system == "imsurreal" else "(=BLEU, forms given)")
        f.write(f"| {code} | {system} | {rec.get('bleu')} | {g} | {rec.get('decode_wall_s')} | "
                f"{rec.get('train_s')} | {when} |\n")


def save(code: str, system: str, rec: Dict) -> None:
    """Write bench/results/sr_multi/peers/CODE.SYSTEM.json (keeping a hand-written "manual_notes" entry)."""
    path = os.path.join(RES, f"{code}.{system}.json")
    if os.path.exists(path) and "manual_notes" not in rec:
        try:
            old = json.load(open(path, encoding="utf-8"))
            if old.get("manual_notes"):
                rec["manual_notes"] = old["manual_notes"]
        except ValueError:
            pass
    with open(os.path.join(RES, f"{code}.{system}.json"), "w", encoding="utf-8") as f:
        json.dump(rec, f, indent=1, ensure_ascii=False)
        f.write("\n")


def data_ready(code: str) -> Optional[str]:
    """None when out/sr-multi/CODE holds non-empty train/dev/test/test.t1/data.json, else what is missing."""
    d = os.path.join(DATA, code)
    missing = [n for n in ("data.json", "train.conllu", "dev.conllu", "test.conllu", "test.t1")
               if not os.path.exists(os.path.join(d, n)) or os.path.getsize(os.path.join(d, n)) == 0]
    return ", ".join(missing) if missing else None


# ------------------------------------------------------------------------------------------------ IMSurReal
def gold_map(code: str, work: str) -> Tuple[Optional[List[Dict[int, str]]], str]:
    """Per test sentence, T1 token id -> gold form, or (None, why not).

    Regenerates the T1 with gold (``make_input(..., seed 3, with_gold)`` from wo, the same permutation that made
    ``test.t1``) into WORK/test.gold.t1 and checks it agrees with test.t1 on id, lemma, UPOS, XPOS, HEAD, DEPREL;
    when it does not (a T1 not made by wo, e.g. en_partut's official SR'19 test), :func:`gold_map_aligned`.
    """
    maps, why = gold_map_wo(code, work)
    if maps is not None:
        return maps, why
    maps, why2 = gold_map_aligned(code, work)
    return (maps, why2) if maps is not None else (None, f"{why}; and {why2}")


def gold_map_aligned(code: str, work: str) -> Tuple[Optional[List[Dict[int, str]]], str]:
    """T1 token id -> gold form through IMSurReal's own tree aligner (``IMSurReal/align.py UD T1 OUT``, which
    matches the T1 tree to the UD tree by lemmas): every sentence must align, without missing words, and the
    aligned lemmas must be test.t1's."""
    d = os.path.join(DATA, code)
    src = os.path.expanduser(os.environ.get("IMS_SRC", "~/imsurreal-src"))
    out = os.path.join(work, "test.aligned.t1")
    p = subprocess.run([os.path.join(IMS_VENV, "bin", "python"), os.path.join(src, "IMSurReal", "align.py"),
                        os.path.join(d, "test.conllu"), os.path.join(d, "test.t1"), out],
                       capture_output=True, text=True)
    if p.returncode or not os.path.exists(out):
        return None, "IMSurReal's align.py failed: " + (p.stderr or p.stdout).strip()[-300:]
    t = conllu_sentences(os.path.join(d, "test.t1"), ud=False)
    ud = conllu_sentences(os.path.join(d, "test.conllu"))
    maps: List[Optional[Dict[int, str]]] = [None] * len(t)
    k = 0
    for block in open(out, encoding="utf-8").read().split("\n\n"):
        m = re.search(r"^# sent_id = (\d+)$", block, re.M)
        rows = [l.split("\t") for l in block.split("\n") if l and not l.startswith("#")]
        if not m or not rows:
            continue
        k = int(m.group(1)) - 1
        ts = t[k]
        lem = {int(c[0]): c[1] for c in ts}
        if len(rows) != len(ts) or len(ts) != len(ud[k]) or any(lem.get(int(c[0])) != c[1] for c in rows):
            continue
        maps[k] = {int(c[0]): c[2] for c in rows}
    bad = [i + 1 for i, m in enumerate(maps) if m is None]
    if bad:
        return None, (f"IMSurReal's align.py aligned {len(t) - len(bad)} of {len(t)} sentences "
                      f"(not: {bad[:20]})")
    return maps, "T1 id -> gold form through IMSurReal's align.py (test.t1 is not wo's seed-3 T1)"


def gold_map_wo(code: str, work: str) -> Tuple[Optional[List[Dict[int, str]]], str]:
    """T1 token id -> gold form through wo's ``make_input(seed 3, with_gold)``, checked against test.t1."""
    d = os.path.join(DATA, code)
    gold_t1 = os.path.join(work, "test.gold.t1")
    code_py = ("import sys; sys.path.insert(0, sys.argv[1])\n"
               "from wo.io.conllu import read_conllu\n"
               "from wo.sr.t1 import format_t1, make_input\n"
               "with open(sys.argv[3], 'w', encoding='utf-8') as f:\n"
               "    for i, s in enumerate(read_conllu(sys.argv[2])):\n"
               "        f.write(format_t1(make_input(s, 3, i, True), True) + '\\n')\n")
    p = subprocess.run([WO_PY, "-c", code_py, ROOT, os.path.join(d, "test.conllu"), gold_t1],
                       capture_output=True, text=True)
    if p.returncode:
        return None, "could not regenerate the gold T1 with wo: " + p.stderr.strip()[-300:]
    g, t = conllu_sentences(gold_t1, ud=False), conllu_sentences(os.path.join(d, "test.t1"), ud=False)
    if len(g) != len(t):
        return None, f"gold T1 has {len(g)} sentences, test.t1 {len(t)}"
    # a UD word without a lemma: test.t1 made before make_input gave it the form as a stand-in lemma has
    # "_" there, the regenerated gold T1 the stand-in
    same = lambda a, b: a == b or (b[1] == "_" and a[:1] + a[2:] == b[:1] + b[2:])  # noqa: E731
    maps = []
    for i, (gs, ts) in enumerate(zip(g, t)):
        if len(gs) != len(ts) or not all(same([c[k] for k in (0, 1, 3, 4, 6, 7)], [d[k] for k in (0, 1, 3, 4, 6, 7)])
                                         for c, d in zip(gs, ts)):
            return None, f"sentence {i + 1}: the regenerated gold T1 differs from test.t1 (permutation changed?)"
        maps.append({int(c[0]): c[2] for c in gs})
    return maps, ""


def imsurreal_record(code: str, work: str, rec: Dict) -> Dict:
    """Score IMSurReal's outputs in WORK (test.inf.conllu, test.tsp.conllu), write the .hyp.xz files, fill rec."""
    d = os.path.join(DATA, code)
    ref = ref_forms(os.path.join(d, "test.conllu"))
    tsp = conllu_sentences(os.path.join(work, "test.tsp.conllu"), ud=False)
    inf = conllu_sentences(os.path.join(work, "test.inf.conllu"), ud=False)
    hyp = [[c[2] for c in s] for s in inf]          # column 3: predicted form
    lem = [[c[1] for c in s] for s in tsp]          # column 2: lemma, in the predicted order
    spaced = sum(" " in c[2] for s in inf for c in s)
    rec["sentences"] = {"ref": len(ref), "tsp_out": len(tsp), "inf_out": len(inf)}
    if [[c[0] for c in s] for s in tsp] != [[c[0] for c in s] for s in inf]:
        rec["note_inf_order"] = "the inflection output's token order differs from the TSP output's"
    b = score_forms(hyp, ref)
    rec["bleu"] = b.get("score")
    rec["bleu_detail"] = b
    rec["sacrebleu_signature"] = b.get("signature")
    bl = score_forms(lem, ref)
    rec["bleu_lemma_order"] = bl.get("score")
    if spaced:
        rec["note_spaces"] = (f"{spaced} predicted forms contain a space: BLEU counts each form as one token "
                              "('_' for the space, in hypothesis and reference); *_detail.space_split splits them")
    write_xz(os.path.join(RES, f"{code}.imsurreal.hyp.xz"), lines(hyp))
    write_xz(os.path.join(RES, f"{code}.imsurreal.lemma.hyp.xz"), lines(lem))
    maps, why = gold_map(code, work)
    if maps is None:
        rec["bleu_gold_order"] = None
        rec["gold_order_unavailable"] = why
        return rec
    gold, bad = [], []
    if any(not c[9].isdigit() for s in tsp for c in s):
        rec["bleu_gold_order"] = None
        rec["gold_order_unavailable"] = "TSP output rows without an integer original_id (column 10)"
        return rec
    for i, (s, m) in enumerate(zip(tsp, maps)):
        ids = [int(c[9]) for c in s]
        if sorted(ids) != sorted(m):
            bad.append(i + 1)
        gold.append([m[j] for j in ids if j in m])
    if len(tsp) != len(maps):
        rec["bleu_gold_order"] = None
        rec["gold_order_unavailable"] = f"TSP output has {len(tsp)} sentences, T1 {len(maps)}"
        return rec
    gb = score_forms(gold, ref)
    rec["bleu_gold_order"] = gb.get("score")
    rec["bleu_gold_order_detail"] = gb
    rec["gold_order_mapping_source"] = why or "wo make_input(seed 3, with_gold)"
    rec["gold_order_mapping"] = ("TSP output column 10 (original_id) = the T1 token id (IMSurReal renumbers column "
                                 "1 in its output order and keeps the input id there), T1 id -> gold form via wo "
                                 "make_input(seed 3, with_gold), checked against test.t1")
    if bad:
        rec["gold_order_bad_sentences"] = bad[:50]
        rec["gold_order_note"] = f"{len(bad)} sentences whose output ids are not a permutation of the T1 ids"
    write_xz(os.path.join(RES, f"{code}.imsurreal.gold.hyp.xz"), lines(gold))
    return rec


def run_or_reread(work: str, output: str, stale: tuple, label: str, rec: Dict, cmd: List[str],
                  env: Dict[str, str], rescore_only: bool) -> Tuple[int, str]:
    """Run a peer script in WORK (its log in WORK/driver.log), after removing the ``stale``
    outputs of an earlier run; with ``rescore_only``, re-read that log instead (rc 0 when
    ``output`` exists; the record's date from the log).  Returns (exit code, log text); sets
    ``rec["script_wall_s"]`` for a run."""
    logpath = os.path.join(work, "driver.log")
    if rescore_only:
        text = open(logpath, encoding="utf-8", errors="replace").read() if os.path.exists(logpath) else ""
        if os.path.exists(logpath):
            rec["date"] = datetime.datetime.fromtimestamp(os.path.getmtime(logpath)).isoformat(timespec="seconds")
        return (0 if os.path.exists(os.path.join(work, output)) else 1), text
    for f in stale:      # no stale outputs (zgen: without prep.done it re-converts the treebank's data)
        if os.path.exists(os.path.join(work, f)):
            os.remove(os.path.join(work, f))
    log(f"{label}: {rec['command']}")
    rc, text, wall = run_peer(cmd, env, logpath)
    rec["script_wall_s"] = round(wall, 1)
    return rc, text


def run_imsurreal(code: str, rescore_only: bool = False) -> Dict:
    """Train (unless the models are there) and decode IMSurReal on CODE; write and return its JSON record."""
    d = os.path.join(DATA, code)
    work = os.path.join(CACHE, "imsurreal", code)
    os.makedirs(work, exist_ok=True)
    env = {"TRAIN": os.path.join(d, "train.conllu"), "DEV": os.path.join(d, "dev.conllu"),
           "T1": os.path.join(d, "test.t1"), "REF": os.path.join(d, "test.conllu"), "NAME": "test",
           "TSP_STEPS": str(TSP_STEPS), "INF_STEPS": str(INF_STEPS), "IMS_VENV": IMS_VENV}
    cmd = ["nice", "-n", "19", "bash", os.path.join(TOOLS, "imsurreal", "imsurreal-peer.sh"), work]
    rec = {"treebank": code, "system": "imsurreal", "date": datetime.datetime.now().isoformat(timespec="seconds"),
           "cpu": cpu_name(cores=True), "command": cmd_string(env, cmd), "workdir": work,
           "tsp_steps": TSP_STEPS, "inf_steps": INF_STEPS,
           "steps_note": "each task trains max_step steps, then as many fine-tuning steps (IMSurReal's schedule)",
           "data": json.load(open(os.path.join(d, "data.json"), encoding="utf-8"))}
    rc, out = run_or_reread(work, "test.inf.conllu", ("test.inf.conllu", "test.tsp.conllu"), f"imsurreal {code}",
                            rec, cmd, env, rescore_only)
    last = [l for l in out.splitlines() if l.startswith("imsurreal ")]
    m = re.match(r"imsurreal \S+: BLEU (.+?) \(lemma order (.+?)\); decode (\S+) s (\S+) MB; "
                 r"train tsp (\S+) s, inf (\S+) s", last[-1]) if last else None
    if rc or not m:
        rec["status"] = "failed"
        rec["exit_code"] = rc
        rec["error"] = "\n".join(out.strip().splitlines()[-6:])
        for task in ("tsp", "inf"):
            lp = os.path.join(work, f"log.train.{task}")
            if os.path.exists(lp):
                rec[f"log_train_{task}_tail"] = "\n".join(open(lp, errors="replace").read().splitlines()[-5:])
        save(code, "imsurreal", rec)
        return rec
    rec["status"] = "ok"
    rec["final_line"] = last[-1]
    rec["bleu_script"], rec["bleu_lemma_order_script"] = m.group(1), m.group(2)
    rec["decode_wall_s"], rec["decode_rss_mb"] = float(m.group(3)), int(m.group(4))
    tt, ti = time_file(os.path.join(work, "time.train.tsp")), time_file(os.path.join(work, "time.train.inf"))
    rec["train_tsp"], rec["train_inf"] = tt, ti
    rec["train_s"] = max(tt.get("wall_s", 0), ti.get("wall_s", 0))   # the two train in parallel
    rec["train_cpu_s"] = round(sum(t.get("user_s", 0) + t.get("sys_s", 0) for t in (tt, ti)), 1)
    rec["train_note"] = ("train_s = the longer wall time of tsp and inf, which train in parallel (2 cores), under "
                         "nice 19 beside other work (so wall times are upper bounds); train_cpu_s = their CPU sum")
    rec["decode_tsp"] = time_file(os.path.join(work, "time.pred.tsp"))
    rec["decode_inf"] = time_file(os.path.join(work, "time.pred.inf"))
    la = re.search(r"load average before: ([\d. ]+)[;)]", out)
    rec["load_average_before_decode"] = la.group(1).strip() if la else None
    rec["retrained"] = "not retrained" not in out
    imsurreal_record(code, work, rec)
    tr = os.path.join(work, "train.t1")        # a converted copy of the corpus: the script remakes it each run
    if os.path.exists(tr):
        os.remove(tr)
    save(code, "imsurreal", rec)
    return rec


# ------------------------------------------------------------------------------------------------ ZGen
def zgen_hyp(work: str) -> List[List[str]]:
    """ZGen's full-type output (WORK/test.full.out): per sentence its forms in order, escapes undone."""
    sents, cur = [], []
    for line in open(os.path.join(work, "test.full.out"), encoding="utf-8"):
        line = line.rstrip("\n")
        if line:
            cur.append(line.split("\t")[0].replace("\u2017", "_").replace("\u00a0", " "))
        else:
            sents.append(cur)
            cur = []
    if cur:
        sents.append(cur)
    return sents


ZGEN_MAX_TAGS = 1000   # ZGen_SR keeps tag sets in std::bitset<1024>


def zgen_inputs(d: str, work: str) -> Tuple[str, str, str]:
    """ZGen_SR's train and test CoNLL-U for the treebank in ``d``: the files themselves, or, when
    the treebank has more than ZGEN_MAX_TAGS distinct XPOS (pt_bosque: 4,522 feature-laden tags;
    ZGen aborts with ``bitset::set`` out of range), copies in ``work`` with XPOS blanked, so that
    zgen-peer.sh uses UPOS.  Returns (train, test, a note for the record)."""
    train, test = os.path.join(d, "train.conllu"), os.path.join(d, "test.conllu")
    tags = set()
    with open(train, encoding="utf-8") as f:
        for ln in f:
            c = ln.rstrip("\n").split("\t")
            if len(c) == 10 and c[0].isdigit():
                tags.add(c[4])
    if len(tags) <= ZGEN_MAX_TAGS:
        return train, test, ""
    out = []
    for src in (train, test):
        dst = os.path.join(work, os.path.basename(src).replace(".conllu", ".upos.conllu"))
        with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as g:
            for ln in f:
                c = ln.rstrip("\n").split("\t")
                if len(c) == 10:
                    c[4] = "_"
                    ln = "\t".join(c) + "\n"
                g.write(ln)
        out.append(dst)
    return out[0], out[1], f"; UPOS instead of XPOS ({len(tags)} distinct XPOS in train, ZGen takes <= 1024)"


def run_zgen(code: str, rescore_only: bool = False) -> Dict:
    """Train (unless the model is there) and decode ZGen_SR (full trees, 5 passes) on CODE; write its record."""
    d = os.path.join(DATA, code)
    work = os.path.join(CACHE, "zgen", code)
    os.makedirs(work, exist_ok=True)
    name = f"{code}-test"
    train, test, pos_note = zgen_inputs(d, work)
    env = {"TRAIN": train, "TEST": test, "NAME": name,
           "TYPES": ZGEN_TYPES, "PASSES": str(ZGEN_PASSES), "BLEU_PY": SCORE_PY}
    cmd = ["nice", "-n", "19", "bash", os.path.join(TOOLS, "zgen", "zgen-peer.sh"), work]
    rec = {"treebank": code, "system": "zgen", "date": datetime.datetime.now().isoformat(timespec="seconds"),
           "cpu": cpu_name(cores=True), "command": cmd_string(env, cmd), "workdir": work, "type": ZGEN_TYPES,
           "passes": ZGEN_PASSES, "beam": 64, "input": "test.conllu shuffled by zgen-peer.sh (seed 11), "
           "FORM XPOS HEAD DEPREL (XPOS or UPOS where XPOS is _); gold forms given" + pos_note,
           "data": json.load(open(os.path.join(d, "data.json"), encoding="utf-8"))}
    rc, out = run_or_reread(work, "test.full.out", ("test.full.out", "prep.done"), f"zgen {code}",
                            rec, cmd, env, rescore_only)
    last = [l for l in out.splitlines() if l.startswith("zgen ")]
    m = re.match(r"zgen full: (\S+) s (\S+) MB", last[-1]) if last else None
    if rc or not m:
        rec["status"] = "failed"
        rec["exit_code"] = rc
        rec["error"] = "\n".join(out.strip().splitlines()[-6:])
        save(code, "zgen", rec)
        return rec
    rec["status"] = "ok"
    rec["final_line"] = last[-1]
    rec["decode_wall_s"], rec["decode_rss_mb"] = float(m.group(1)), int(m.group(2))
    rec["decode"] = time_file(os.path.join(work, "time.test.full"))
    passes = [time_file(os.path.join(work, f"time.train.full.{p}")) for p in range(1, ZGEN_PASSES + 1)]
    rec["train_passes"] = passes
    rec["train_s"] = round(sum(p.get("wall_s", 0) for p in passes), 1)
    rec["train_cpu_s"] = round(sum(p.get("user_s", 0) + p.get("sys_s", 0) for p in passes), 1)
    rec["retrained"] = "not retrained" not in out
    bs = re.search(r"full: BLEU (\S+)", out)
    rec["bleu_script_case_sensitive"] = bs.group(1) if bs else None
    perm = re.search(r"(\d+) sentences out of (\d+); (\d+) not a permutation", out)
    if perm:
        rec["sentences_out"], rec["sentences_in"], rec["not_permutation"] = map(int, perm.groups())
    la = re.search(r"decoding \S+, full, one process \(load average before: ([\d. ]+)[;)]", out)
    rec["load_average_before_decode"] = la.group(1).strip() if la else None
    ref = ref_forms(os.path.join(d, "test.conllu"))
    hyp = zgen_hyp(work)
    b = score_forms(hyp, ref)
    rec["bleu"] = b.get("score")
    rec["bleu_detail"] = b
    rec["sacrebleu_signature"] = b.get("signature")
    bc = score_forms(hyp, ref, lowercase=False)
    rec["bleu_case_sensitive"] = bc.get("score")
    rec["bleu_gold_order"] = rec["bleu"]
    rec["gold_order_note"] = "ZGen orders the gold forms (no inflection), so its BLEU is a gold-form order BLEU"
    write_xz(os.path.join(RES, f"{code}.zgen.hyp.xz"), lines(hyp))
    for f in ("train.conllu", "train.ref", "train.none.in", "train.full.in", "test.none.in", "test.none.bag",
              "test.none.shuf.conllu", "prep.done"):   # converted corpus copies: remade by the next run
        if os.path.exists(os.path.join(work, f)):
            os.remove(os.path.join(work, f))
    save(code, "zgen", rec)
    return rec


# ------------------------------------------------------------------------------------------------ main
def main(argv: Optional[List[str]] = None) -> int:
    """Run the requested systems over the requested treebanks (waiting for data that is not there yet)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tb", nargs="+", default=ORDER, help="treebank codes, in order (default: all)")
    ap.add_argument("--systems", nargs="+", default=["imsurreal", "zgen"], choices=["imsurreal", "zgen"])
    ap.add_argument("--rescore-only", action="store_true", help="re-read existing outputs, rewrite the JSON")
    ap.add_argument("--skip-done", action="store_true", help="skip a treebank/system whose JSON says ok")
    ap.add_argument("--wait", type=float, default=20, help="minutes to wait for data that is not ready yet")
    a = ap.parse_args(argv)
    os.makedirs(RES, exist_ok=True)
    todo = list(a.tb)
    waited_since: Dict[str, float] = {}
    while todo:
        code = next((c for c in todo if data_ready(c) is None), None)
        if code is None:
            stale = [c for c in todo if time.time() - waited_since.setdefault(c, time.time()) > a.wait * 60]
            for c in stale:
                log(f"{c}: data not ready after {a.wait} min ({data_ready(c)}), skipped")
                todo.remove(c)
            if todo:
                time.sleep(30)
            continue
        todo.remove(code)
        for system in a.systems:
            jp = os.path.join(RES, f"{code}.{system}.json")
            if a.skip_done and os.path.exists(jp) and json.load(open(jp)).get("status") == "ok":
                log(f"{code} {system}: done already")
                continue
            try:
                rec = (run_imsurreal if system == "imsurreal" else run_zgen)(code, a.rescore_only)
            except Exception as exc:   # record and move on
                rec = {"treebank": code, "system": system, "status": "failed",
                       "date": datetime.datetime.now().isoformat(timespec="seconds"),
                       "error": f"driver error: {type(exc).__name__}: {exc}"}
                save(code, system, rec)
            log(f"{code} {system}: {rec.get('status')} BLEU {rec.get('bleu')} gold-order {rec.get('bleu_gold_order')}"
                f" decode {rec.get('decode_wall_s')} s train {rec.get('train_s')} s {rec.get('error', '')}")
            if not a.rescore_only:
                append_progress(code, system, rec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
