#!/usr/bin/env bash
# The spaCy pipeline of the parse-and-regenerate example (corpora/packages/en_wo_ud_ewt): UD
# English-EWT train (corpora/ud-en-ewt) converted by `spacy convert`, the last 100 documents
# (1,000 sentences) held out for spaCy's model selection (EWT dev stays unseen: it is where the
# example is measured), trained with config.cfg on one thread (about half an hour on one core),
# packaged by `spacy package` with meta.json.  Run by `make spacy-ewt`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY="${PY:-$ROOT/.venv/bin/python}"
W="${WORK:-$ROOT/out/spacy-ewt}"
mkdir -p "$W/corpus"
xz -dc "$ROOT/corpora/ud-en-ewt/en_ewt-ud-train.conllu.xz" > "$W/train.conllu"
"$PY" -m spacy convert "$W/train.conllu" "$W/corpus" -c conllu -n 10
"$PY" - "$W" <<'PYEOF'
import sys
import spacy
from spacy.tokens import DocBin
w = sys.argv[1]
docs = list(DocBin().from_disk(f"{w}/corpus/train.spacy").get_docs(spacy.blank("en").vocab))
DocBin(docs=docs[:-100]).to_disk(f"{w}/corpus/fit.spacy")
DocBin(docs=docs[-100:]).to_disk(f"{w}/corpus/heldout.spacy")
PYEOF
OMP_NUM_THREADS=1 "$PY" -m spacy train "$HERE/config.cfg" --paths.train "$W/corpus/fit.spacy" \
    --paths.dev "$W/corpus/heldout.spacy" -o "$W/out"
rm -rf "$W/pkg" && mkdir -p "$W/pkg"
"$PY" -m spacy package "$W/out/model-best" "$W/pkg" --meta-path "$HERE/meta.json" --build none --force
rm -rf "$ROOT/corpora/packages/en_wo_ud_ewt"
mv "$W/pkg/en_wo_ud_ewt-0.1.0" "$ROOT/corpora/packages/en_wo_ud_ewt"
du -sh "$ROOT/corpora/packages/en_wo_ud_ewt"
