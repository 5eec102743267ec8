#!/usr/bin/env bash
# bench/imsurreal_t2.sh WORKDIR: train and time IMSurReal's deep-track (SR'19 T2) pipeline (github EggplantElf/IMSurReal
# v2.0; Yu et al. 2019, 2020), so that wo's deep track can be set side by side with it on the same data and machine.
# The T2 sibling of ../shared/tools/imsurreal/imsurreal-peer.sh (T1), whose venv steps it repeats.
#   1. a Python 3.8 venv (dyNET 2.1.2 has CPU wheels for 3.8 only) in $IMS_VENV;
#   2. unless WORKDIR holds the three models (or RETRAIN=1): aligns the T2 train and dev files with their UD references
#      by IMSurReal's own align.py (original_id on every node, the removed function words added as <LOST> tokens), as
#      its README prescribes, then trains its T2 models: tsp (the TSP linearizer of the content nodes), gen (completion:
#      the function words generated around each head, in the predicted order) and inf (inflection), each
#      `main.py train --tasks T --max_step N` (N steps, then up to N fine-tuning steps; dev = model selection), under
#      `nice -n $NICE`, TRAIN_JOBS at a time, each timed with /usr/bin/time -v;
#   3. decodes T2 tsp -> gen -> inf (as run_all.sh does, swap and contraction aside: English ParTUT needs neither),
#      each step a whole process timed with /usr/bin/time -v (wall seconds and peak RSS per step, summed);
#   4. writes WORKDIR/NAME.hyp (the inflected forms), NAME.lemma.hyp (the lemmas after completion, before inflection)
#      and NAME.order.hyp (the content lemmas in tsp order, before completion), one sentence per line in T2's order,
#      and with REF (the UD file of the T2 input's sentences) scores them as the SR'19 bars count them: sacrebleu on
#      lower-cased tokens, tokenize none, against REF's forms (BLEU) and lemmas (lemma-order BLEU), plus the
#      function-word bag precision/recall/F1 of the completion (bench/sr_deep_fw.py); all in WORKDIR/NAME.json.
# Environment: TRAIN_T2, TRAIN_UD, DEV_T2, DEV_UD (T2 input and its UD sentences, plain or .xz; needed to train),
# T2 (the T2 input to decode; without it the script only trains), REF (its UD file), NAME (output prefix, default test),
# IMS_SRC (default ~/imsurreal-src), IMS_VENV (default ~/.cache/imsurreal-venv), PY38 (a python3.8),
# TSP_STEPS, GEN_STEPS, INF_STEPS (4000 each, as IMSurReal's run_all.sh), TRAIN_JOBS (1: the models one after
# another; 2: two at a time), NICE (10), RETRAIN=1.
# Last line: "imsurreal-t2 NAME: BLEU b (lemmas after completion bl; fw P/R/F1); decode WALL s RSS MB (per step)".
set -euo pipefail
W=${1:?usage: imsurreal_t2.sh WORKDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${IMS_SRC:-$HOME/imsurreal-src}
VENV=${IMS_VENV:-$HOME/.cache/imsurreal-venv}
T1PEER=${T1PEER:-$HERE/../../shared/tools/imsurreal}
TRAIN_T2=${TRAIN_T2:-}; TRAIN_UD=${TRAIN_UD:-}; DEV_T2=${DEV_T2:-}; DEV_UD=${DEV_UD:-}
T2=${T2:-}; REF=${REF:-}; NAME=${NAME:-test}
TSP_STEPS=${TSP_STEPS:-4000}; GEN_STEPS=${GEN_STEPS:-4000}; INF_STEPS=${INF_STEPS:-4000}
TRAIN_JOBS=${TRAIN_JOBS:-1}; NICE=${NICE:-10}
TASKS="tsp gen inf"
abs() { [ -z "$1" ] || echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
TRAIN_T2=$(abs "$TRAIN_T2"); TRAIN_UD=$(abs "$TRAIN_UD"); DEV_T2=$(abs "$DEV_T2"); DEV_UD=$(abs "$DEV_UD")
T2=$(abs "$T2"); REF=$(abs "$REF")
mkdir -p "$W"; W=$(cd "$W" && pwd)
log() { echo "[imsurreal-t2 $(date +%H:%M:%S)] $*" >&2; }
[ -f "$SRC/IMSurReal/main.py" ] || { echo "no IMSurReal source in $SRC: see ../shared/tools/imsurreal/README.md" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time missing (apt-get install time)" >&2; exit 1; }
# The T1 script's patch (a `lin` constraint naming a token the subtree lacks crashes the TSP decoder), applied once.
P=$T1PEER/imsurreal-lin-constraints.patch
[ -f "$P" ] && ( cd "$SRC" && if patch -p1 -N --dry-run -s < "$P" >/dev/null 2>&1; then patch -p1 -N -s < "$P"; fi )

# --- 1. the venv (as imsurreal-peer.sh) ----------------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
  P=${PY38:-$(command -v python3.8 || ls "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.8.*/bin/python3.8 2>/dev/null | head -1 || true)}
  [ -n "$P" ] || { echo "no python3.8 found (set PY38)" >&2; exit 1; }
  log "making $VENV with $P"
  "$P" -m venv "$VENV"
  "$VENV/bin/pip" install -q "dyNET==2.1.2" "numpy<1.25" ortools python-Levenshtein nltk mosestokenizer tqdm sacrebleu
fi
PY=$VENV/bin/python
wall() { awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; printf "%.1f", s}' "$1"; }
rss()  { awk -F': ' '/Maximum resident set size/{printf "%.0f", $2/1024}' "$1"; }
steps_of() { case $1 in tsp) echo "$TSP_STEPS";; gen) echo "$GEN_STEPS";; inf) echo "$INF_STEPS";; esac; }
cd "$SRC"

# --- 2. alignment (IMSurReal's align.py) and training ---------------------------------------------------------
need=""
for task in $TASKS; do
  if [ ! -s "$W/$task.mdl" ] || [ "${RETRAIN:-0}" = 1 ]; then need="$need $task"; fi
done
if [ -n "$need" ]; then
  for v in TRAIN_T2 TRAIN_UD DEV_T2 DEV_UD; do [ -n "${!v}" ] || { echo "set $v to train ($need )" >&2; exit 1; }; done
  for part in train dev; do
    t2=$TRAIN_T2; ud=$TRAIN_UD; [ $part = dev ] && { t2=$DEV_T2; ud=$DEV_UD; }
    # empty nodes (ID n.m, enhanced UD) dropped from the reference: IMSurReal's reader takes integer IDs only
    xz -dcf "$t2" > "$W/$part.t2.conllu"; xz -dcf "$ud" | awk -F'\t' '$1 !~ /^[0-9]+\.[0-9]+$/' > "$W/$part.ud.conllu"
    "$PY" IMSurReal/align.py "$W/$part.ud.conllu" "$W/$part.t2.conllu" "$W/$part.gold.conllu" > "$W/log.align.$part" 2>&1 \
      || { echo "align.py failed on $part: $(tail -2 "$W/log.align.$part")" >&2; exit 1; }
    log "aligned $part: $(grep -c '^# sent_id' "$W/$part.gold.conllu") of $(grep -c '^$' "$W/$part.t2.conllu") sentences, $(grep -c '<LOST>' "$W/$part.gold.conllu") function words as <LOST>"
  done
  running=0
  for task in $need; do
    if [ "$running" -ge "$TRAIN_JOBS" ]; then wait -n || true; running=$((running - 1)); fi
    rm -f "$W/$task.mdl" "$W/$task.mdl."*
    log "training $task ($(steps_of $task) steps, then up to as many fine-tuning steps; nice -n $NICE; load $(cut -d' ' -f1-3 /proc/loadavg))"
    nice -n "$NICE" /usr/bin/time -v -o "$W/time.train.$task" "$PY" IMSurReal/main.py train -m "$W/$task.mdl" \
      -t "$W/train.gold.conllu" -d "$W/dev.gold.conllu" --tasks $task --max_step "$(steps_of $task)" > "$W/log.train.$task" 2>&1 &
    running=$((running + 1))
  done
  wait || true
  for task in $need; do
    [ -s "$W/$task.mdl" ] || { echo "training $task failed: $(tail -2 "$W/log.train.$task")" >&2; exit 1; }
    log "trained $task in $(wall "$W/time.train.$task") s, peak $(rss "$W/time.train.$task") MB"
  done
fi
[ -n "$T2" ] || { log "no T2 input to decode: done"; exit 0; }

# --- 3. timed decoding: tsp -> gen -> inf, each a whole process -------------------------------------------------
log "decoding $T2 (load average before: $(cut -d' ' -f1-3 /proc/loadavg); keep the machine quiet)"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
in=$T2
for task in $TASKS; do
  /usr/bin/time -v -o "$W/time.pred.$NAME.$task" "$PY" IMSurReal/main.py pred -m "$W/$task.mdl" -i "$in" \
    -p "$W/$NAME.$task.conllu" > "$W/log.pred.$NAME.$task" 2>&1 \
    || { echo "decoding ($task) failed: $(tail -1 "$W/log.pred.$NAME.$task")" >&2; exit 1; }
  in=$W/$NAME.$task.conllu
done

# --- 4. outputs, scores, record ---------------------------------------------------------------------------------
"$PY" - "$W" "$NAME" "$T2" "$REF" "$HERE/sr_deep_fw.py" "$load_before" "$TASKS" <<'PY'
import json, os, subprocess, sys, datetime, platform
W, name, t2, ref, fw_script, load_before, tasks = sys.argv[1:8]
tasks = tasks.split()
def sentences(path, ud=False):
    rows = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            if rows: yield rows
            rows = []
        elif not line.startswith("#"):
            c = line.split("\t")
            if not ud or c[0].isdigit(): rows.append(c)
    if rows: yield rows
def write(path, sents, col):
    with open(path, "w", encoding="utf-8") as f:
        for s in sents:
            f.write(" ".join(c[col].replace(" ", "_") for c in s) + "\n")
P = lambda suffix: os.path.join(W, f"{name}.{suffix}")
# IMSurReal's output files: the tokens in the predicted order, column 2 the lemma, column 3 the (predicted) form
write(P("hyp"), sentences(P("inf.conllu")), 2)
write(P("lemma.hyp"), sentences(P("gen.conllu")), 1)
write(P("order.hyp"), sentences(P("tsp.conllu")), 1)
n_in = sum(1 for _ in sentences(t2))
def wall(path):
    for line in open(path):
        if "Elapsed (wall clock)" in line:
            s = 0.0
            for x in line.rsplit(": ", 1)[1].strip().split(":"): s = s * 60 + float(x)
            return s
def rss(path):
    for line in open(path):
        if "Maximum resident set size" in line: return int(line.rsplit(": ", 1)[1]) / 1024
steps = {t: {"seconds": round(wall(os.path.join(W, f"time.pred.{name}.{t}")), 2),
             "peak_rss_mb": round(rss(os.path.join(W, f"time.pred.{name}.{t}")))} for t in tasks}
rec = {"name": name, "input": t2, "reference": ref or None, "sentences": n_in,
       "decode_seconds": {**{t: v["seconds"] for t, v in steps.items()}, "total": round(sum(v["seconds"] for v in steps.values()), 2)},
       "decode_peak_rss_mb": {**{t: v["peak_rss_mb"] for t, v in steps.items()}, "max": max(v["peak_rss_mb"] for v in steps.values())},
       "load_average_before": load_before, "date": datetime.datetime.now().isoformat(timespec="seconds")}
if ref:
    import sacrebleu
    from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu
    BLEU = sacrebleu.BLEU(tokenize="none", force=True)   # the hypotheses and references are lower-cased here
    refs = list(sentences(ref, ud=True))
    rf = [" ".join(c[1].replace(" ", "_") for c in s).lower() for s in refs]
    rl = [" ".join(c[2].replace(" ", "_") for c in s).lower() for s in refs]
    open(P("ref.txt"), "w", encoding="utf-8").write("".join(x + "\n" for x in rf))
    open(P("ref.lemma.txt"), "w", encoding="utf-8").write("".join(x + "\n" for x in rl))
    def score(hyp_path, r):
        h = [l.rstrip("\n").lower() for l in open(hyp_path, encoding="utf-8")]
        if len(h) != len(r): raise SystemExit(f"{hyp_path}: {len(h)} lines but {len(r)} references")
        sb = BLEU.corpus_score(h, [r])
        nl = corpus_bleu([[x.split()] for x in r], [x.split() for x in h], smoothing_function=SmoothingFunction().method2)
        return sb, 100 * nl
    b, bn = score(P("hyp"), rf)
    bl, bln = score(P("lemma.hyp"), rl)
    bo, bon = score(P("order.hyp"), rl)
    fw = json.loads(subprocess.run([sys.executable, fw_script, t2, P("lemma.hyp"), ref, "--json"], check=True,
                                   capture_output=True, text=True).stdout)
    rec.update(bleu=round(b.score, 2), bleu_signature=str(BLEU.get_signature()),
               lemma_order_bleu=round(bl.score, 2), content_order_bleu=round(bo.score, 2),
               nltk_bleu=round(bn, 2), nltk_lemma_order_bleu=round(bln, 2), function_words=fw)
json.dump(rec, open(P("json"), "w"), indent=1)
if ref:
    fw = rec["function_words"]
    print(f"imsurreal-t2 {name}: BLEU {rec['bleu']:.2f} (lemmas after completion {rec['lemma_order_bleu']:.2f}; function words "
          f"P/R/F1 {fw['precision']:.1f}/{fw['recall']:.1f}/{fw['f1']:.1f}); decode {rec['decode_seconds']['total']:.1f} s "
          f"{rec['decode_peak_rss_mb']['max']} MB (" + ", ".join(f"{t} {rec['decode_seconds'][t]:.1f} s" for t in tasks) + ")")
else:
    print(f"imsurreal-t2 {name}: decode {rec['decode_seconds']['total']:.1f} s {rec['decode_peak_rss_mb']['max']} MB")
PY
