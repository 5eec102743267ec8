# wo: two commands do all set-up on a fresh machine with python3 and pip.
PY ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
MODEL ?= corpora/models/wo-ewt-dep-lm.wo
SRMODEL ?= corpora/models/wo-ewt-sr.wo
TEST = corpora/ud-en-ewt/en_ewt-ud-test.conllu.xz
OUT = out

.PHONY: install demo test bench bench-quick lm lm-en lm-wiki sr-models spacy-ewt wheels clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip setuptools

install: $(BIN)/python
	$(BIN)/pip install -e '.[all]'
	$(BIN)/pip install -q ./corpora/packages/en_wo_ud_ewt

demo: install
	mkdir -p $(OUT)
	$(BIN)/wo linearize --model $(MODEL) --input $(TEST) --output $(OUT)/ewt-test.bag.txt --given none --jobs 2
	$(BIN)/wo evaluate --hyp $(OUT)/ewt-test.bag.txt --ref $(TEST)
	$(BIN)/wo linearize --model $(MODEL) --input $(TEST) --output $(OUT)/ewt-test.full.txt --given full --jobs 2
	$(BIN)/wo evaluate --hyp $(OUT)/ewt-test.full.txt --ref $(TEST)
	$(BIN)/wo sr make-input --ud $(TEST) --out $(OUT)/ewt-test.t1 --seed 1
	$(BIN)/wo sr realize --model $(SRMODEL) --input $(OUT)/ewt-test.t1 --output $(OUT)/ewt-test.sr.txt --jobs 2
	$(BIN)/wo sr evaluate --hyp $(OUT)/ewt-test.sr.txt --ref $(TEST)
	$(BIN)/wo sr models
	$(BIN)/wo sr make-input --ud tests/data/sr/pt_bosque-test-40.conllu.xz --out $(OUT)/pt-test.t1 --seed 3
	$(BIN)/wo sr realize --lang pt_bosque --input $(OUT)/pt-test.t1 --output $(OUT)/pt-test.sr.txt
	head -4 $(OUT)/pt-test.sr.txt
	$(BIN)/wo sr evaluate --hyp $(OUT)/pt-test.sr.txt --ref tests/data/sr/pt_bosque-test-40.conllu.xz
	echo 'I(finally, C(L(D(C(the, prisoners), C(the, captives))), were, released))' \
		| $(BIN)/wo idl realize --lm corpora/models/wo-en-4gram.wolm --format jsonl
	$(BIN)/wo ccg linearize --input corpora/ccg-en/test.auto.xz --output $(OUT)/ewt-ccg-test.txt --jobs 2
	head -3 $(OUT)/ewt-ccg-test.txt
	$(BIN)/wo gyro realize --lm corpora/models/wo-en-4gram.wolm --input $(TEST) --output $(OUT)/ewt-test.gyro.txt --jobs 2
	$(BIN)/wo evaluate --hyp $(OUT)/ewt-test.gyro.txt --ref $(TEST)
	$(BIN)/wo smt translate --input corpora/tatoeba-zh-en/test.tsv.xz --output $(OUT)/tatoeba-test.en --jobs 2
	$(BIN)/wo smt evaluate --hyp $(OUT)/tatoeba-test.en --ref corpora/tatoeba-zh-en/test.tsv.xz

test: install
	$(BIN)/python -m pytest -q -n 2 --dist loadfile tests

bench-quick: install
	$(BIN)/python bench/run.py --quick

bench: install
	$(BIN)/python bench/run.py

# every shipped word LM: the default 4-gram and the large 4-gram (Wikipedia + text-en + EWT train)
lm: lm-en lm-wiki

# EWT train forms, one sentence per line (part of both LMs' text)
$(OUT)/ewt-train.txt: install
	mkdir -p $(OUT)
	$(BIN)/python -c "from wo.io import read_conllu; s = read_conllu('corpora/ud-en-ewt/en_ewt-ud-train.conllu.xz'); open('$(OUT)/ewt-train.txt', 'w').write(''.join(' '.join(x.forms) + '\n' for x in s))"

# the default LM (needs ../shared/corpora/text-en): redistributable parts + EWT train forms
TEXTEN ?= ../shared/corpora/text-en
TEXTEN_PARTS = $(TEXTEN)/brown.txt.xz $(TEXTEN)/masc_tagged.txt $(TEXTEN)/state_union.txt $(TEXTEN)/inaugural.txt
lm-en: install $(OUT)/ewt-train.txt
	$(BIN)/wo lm train --text $(TEXTEN_PARTS) $(OUT)/ewt-train.txt --order 4 --prune 0 1 1 \
		--out corpora/models/wo-en-4gram.wolm

# the large 4-gram (corpora/models/wo-en-wiki-4gram.wolm: the Wikipedia text, the same text-en parts
# and EWT train forms, 78 M tokens; needs ../shared/corpora/text-en-wiki and text-en; about 10 min
# (tokenizing 3-10, training 4-5) and 7.4 GB of memory on 2 cores)
WIKI ?= ../shared/corpora/text-en-wiki
lm-wiki: install $(OUT)/ewt-train.txt
	$(BIN)/wo lm tokenize --input $(WIKI)/wiki-0*.txt.xz --output $(OUT)/wiki.tok.txt --jobs 2
	$(BIN)/wo lm train --text $(OUT)/wiki.tok.txt $(TEXTEN_PARTS) $(OUT)/ewt-train.txt --order 4 \
		--prune 1 2 3 --vocab-min-count 2 --jobs 2 --format trie-q8-a --out corpora/models/wo-en-wiki-4gram.wolm

# the SR models (corpora/models/wo-ewt-sr.wo, corpora/models/sr) and docs/sr-multi.md, every treebank of
# bench/sr_multi.py (needs ../shared/corpora; about an hour on 2 cores): each model is one wo sr train --thorough
sr-models: install
	$(BIN)/python bench/sr_multi.py prepare
	$(BIN)/python bench/sr_multi.py train --jobs 2
	$(BIN)/python bench/sr_multi.py eval
	$(BIN)/python bench/sr_multi.py ship
	$(BIN)/python bench/sr_multi.py table

# the spaCy pipeline of the parse-and-regenerate example (corpora/packages/en_wo_ud_ewt; a UD
# tagger, morphologizer, parser and lemmatizer trained on EWT train; about half an hour on one core)
spacy-ewt: install
	bench/spacy_ewt/build.sh

# the distribution wheel and the three model wheels (their files are links into corpora/models), in out/wheels
wheels: install
	$(BIN)/pip wheel --no-deps -w $(OUT)/wheels . ./corpora/packages/wo-models-en ./corpora/packages/wo-models-sr \
		./corpora/packages/wo-models-smt
	ls -l $(OUT)/wheels

clean:
	rm -rf build $(OUT) wo/_fast/*.c wo/_fast/*.so
