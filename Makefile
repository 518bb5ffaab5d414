# The commands a person types. `make test` is what CI runs (.ci/run).
CARGO ?= cargo
RELEASE_BIN := target/release
DEMO_DIR := demo-data

.PHONY: test fmt-check clippy doc unit demo usage-check install build bench

test: fmt-check clippy doc unit quarantine bench-test

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The library's documentation builds with no warning (broken or private links included).
doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --workspace

unit:
	$(CARGO) test --workspace

build:
	$(CARGO) build --release --workspace

demo: build
	bash scripts/demo.sh

# The README's Usage block, run exactly as written (needs make demo first).
usage-check: build
	bash scripts/usage-check.sh

# heddle-eval and heddle-corpus into ~/.cargo/bin (on the PATH rustup set up), reusing
# this repository's release build.
install:
	$(CARGO) install --locked --target-dir target --path eval
	$(CARGO) install --locked --target-dir target --path corpus-tools

# The default (derived) ladder on the demo corpus, three repetitions (docs/PERF.md).
# Builds the demo index first if it is missing. Figures go to results/ (git-ignored).
# Override e.g. BENCH_FLAGS="--rates 50,100,200 --samples 2000".
BENCH_OUT ?= results/bench
BENCH_FLAGS ?= --repeat 3 --sequential 10000
bench: build
	@test -d $(DEMO_DIR)/index || bash scripts/demo.sh
	@mkdir -p $(BENCH_OUT)
	$(RELEASE_BIN)/heddle-eval bench --index $(DEMO_DIR)/index \
		--queries $(DEMO_DIR)/corpus/queries.jsonl $(BENCH_FLAGS) \
		--json $(BENCH_OUT)/bench.json --svg $(BENCH_OUT)/bench.svg

# Instructions per query (docs/PERF.md, "Instructions per query"): 1,000 queries of the
# demo corpus counted under valgrind's callgrind, per query class. Installs Debian's
# valgrind if it is missing (as root, or with sudo). Not in `make test`.
# Override e.g. COST_FLAGS="--count 200 --candidate main".
COST_FLAGS ?= --count 1000
.PHONY: cost valgrind
valgrind:
	@command -v valgrind >/dev/null 2>&1 || { \
		echo "valgrind is missing: installing Debian's"; \
		if [ "$$(id -u)" = 0 ]; then apt-get update && apt-get install -y valgrind; \
		elif command -v sudo >/dev/null 2>&1; then sudo apt-get update && sudo apt-get install -y valgrind; \
		else echo "run as root, or: apt-get install valgrind" >&2; exit 1; fi; }
cost: build valgrind
	@test -d $(DEMO_DIR)/index || bash scripts/demo.sh
	@mkdir -p results
	$(RELEASE_BIN)/heddle-eval cost --index $(DEMO_DIR)/index \
		--queries $(DEMO_DIR)/corpus/queries.jsonl $(COST_FLAGS) --json results/cost.json

# The HTML reports (`--html`) in a real browser: a small synthetic index, a short `bench`
# and `bench --writes`, each page rendered by headless Chromium (screenshot and DOM under
# results/report-check/); fails on a missing section or chart, an SVG that is not
# well-formed, or a console error. Not in `make test`: CI has no browser. Chromium comes
# from Debian (installed when run as root or with sudo; otherwise the script says how),
# or CHROMIUM=/path. REPORT_CHECK_PROFILE=debug skips the release build.
.PHONY: report-check
report-check:
	bash scripts/report-check.sh

# The official Python clients against `heddle-eval serve` (README, "Over HTTP"):
# elasticsearch 9.x and opensearch-py, pinned in scripts/clients-check-requirements.txt,
# from PyPI into a virtualenv (target/clients-venv, or CLIENTS_VENV=DIR), run ping, info,
# searches, count, bulk with and without an index, get, index and delete by id and error
# handling against a small index; fails on any difference from what the clients expect.
# Not in `make test`: it needs PyPI. CLIENTS_CHECK_PROFILE=release uses a release build.
.PHONY: clients-check
clients-check:
	bash scripts/clients-check.sh

# Crash and concurrency stress, longer than `make test` runs them: 1,000 kill -9 runs of a
# committing writer, then a minute of a writer, background merges and two readers.
STRESS_KILLS ?= 1000
STRESS_SECS ?= 60
.PHONY: stress fuzz quality
stress:
	HEDDLE_KILLS=$(STRESS_KILLS) $(CARGO) test --release -p heddle-eval --test kill9 -- --nocapture
	HEDDLE_STRESS_SECS=$(STRESS_SECS) $(CARGO) test --release -p heddle --test stress -- --nocapture

# Rebuilds, other processes and kills, longer than `make test` runs them: 200 kill -9 of
# `index --force` at random moments (the old or the new index must be whole after each),
# then a minute of commits, merges and rebuilds beside two reader processes that open,
# reload and search in a loop (no reader may fail; `check` clean after).
TORTURE_KILLS ?= 200
TORTURE_SECS ?= 60
.PHONY: torture
torture:
	HEDDLE_REBUILD_KILLS=$(TORTURE_KILLS) HEDDLE_REBUILD_DOCS=50000 HEDDLE_TORTURE_SECS=$(TORTURE_SECS) \
		$(CARGO) test --release -p heddle-eval --test rebuild -- --nocapture --test-threads 1 \
		kill_9_of_index_force readers_in_other_processes

# Every decoder of on-disk bytes under cargo-fuzz, FUZZ_SECONDS each (default 30).
fuzz:
	bash scripts/fuzz.sh

# SciFact flat BM25 against the published Anserini figures (docs/RESULTS.md).
SCIFACT ?= ../shared/data/scifact
quality: build
	@mkdir -p results
	$(RELEASE_BIN)/heddle-eval index --corpus $(SCIFACT) --index results/scifact-index --analyzer lucene-english --per-field --force
	$(RELEASE_BIN)/heddle-eval quality --index results/scifact-index --queries $(SCIFACT)/queries.jsonl \
		--qrels $(SCIFACT)/qrels/test.tsv --k1 0.9 --b 0.4 --remove-query --run-out results/scifact-flat.run

# Lucene's own SciFact figure beside heddle's and the published one (issue 34): `make
# quality`, then Lucene 9.9.1 (bench/lucene/HeddleLucene.java `quality`: Anserini's BEIR
# baseline in Lucene's public API: EnglishAnalyzer over title + text, bag-of-words
# queries, BM25 0.9/0.4, the query's own document removed) writes its run, and
# compare-runs prints both with the paired bootstrap. Needs the JDK and jar of
# lucene-setup; not part of make test.
.PHONY: quality-lucene
quality-lucene: lucene-setup quality
	java -cp $(LUCENE_JAR):$(abspath $(LUCENE_CLASSES)) HeddleLucene quality \
		--corpus $(SCIFACT)/corpus.jsonl --queries $(SCIFACT)/queries.jsonl \
		--qrels $(SCIFACT)/qrels/test.tsv --index results/scifact-lucene-index \
		--out results/scifact-lucene.run --k1 0.9 --b 0.4
	@echo "published (Anserini/pyserini 2CR, BM25 flat, k1 0.9 b 0.4): nDCG@10 0.6789, R@100 0.9253"
	@echo "A = heddle (lucene-english, exact lengths), B = Lucene 9.9.1 (EnglishAnalyzer, one-byte norms):"
	$(RELEASE_BIN)/heddle-eval compare-runs results/scifact-flat.run results/scifact-lucene.run \
		--qrels $(SCIFACT)/qrels/test.tsv

# The three arms on SciFact (issue 16): fetches the model once with pip, encodes SciFact
# once (cached), and prints text / vector / hybrid nDCG@10 and R@100 with paired-bootstrap
# intervals against text (docs/RESULTS.md, "The hybrid arm").
.PHONY: hybrid
hybrid: build
	bash scripts/hybrid.sh

# The opt-in int8 encoder against f32 (issue 32): per-text cosine, and the vector and
# hybrid arms' nDCG@10 with paired-bootstrap intervals on SciFact and on SciFact
# known-item (titles as queries; scripts/known-item-set.py). Encodes both sets with both
# encoders once (cached; about 15 minutes of both cores the first time).
.PHONY: int8-quality
int8-quality: build
	bash scripts/int8-quality.sh

# What the hybrid arm's nDCG@10 and R@100 lose when each stream is read less deep than
# 1,000 (scripts/fusion-depth.sh): SciFact and SciFact known-item, each depth against
# 1,000 with paired-bootstrap intervals. Encodes both sets once (cached).
.PHONY: fusion-depth
fusion-depth: build
	bash scripts/fusion-depth.sh

# Issue 16's three arms at full scale (scripts/arms-scale.sh): the 171k synthetic corpus
# encoded once (about 1 h 50 min of both cores the first time; cached and resumable),
# the vector graph's recall on its real embeddings, and each arm's ladder at 10,000 requests a rung
# (about half an hour). ARMS_CORPUS=DIR runs it on another BEIR corpus.
.PHONY: arms-scale
arms-scale: build
	$(CARGO) build --release -p heddle --example vector_ann
	bash scripts/arms-scale.sh

# heddle against tantivy (bench/, its own workspace: docs/PERF.md, "heddle against tantivy").
# `quarantine` proves that tantivy is nowhere in the root workspace's dependency tree;
# `bench-test` keeps bench/ formatted, clippy-clean and tested (debug profile, fixture corpus).
.PHONY: quarantine bench-test compare
quarantine:
	@mkdir -p target
	$(CARGO) tree --workspace --target all --edges normal,build,dev --prefix none > target/quarantine.tree
	@if grep -i tantivy target/quarantine.tree Cargo.lock; then \
		echo "quarantine: tantivy is in the root workspace's dependency tree" >&2; exit 1; \
	else \
		echo "quarantine: $$(sort -u target/quarantine.tree | wc -l) crates in the root workspace's tree, none of them tantivy"; \
	fi
	@# The vector peer (usearch and its C++ bridge) lives in bench/ alone, as tantivy does.
	@if grep -iE '^(usearch|cxx|cxx-build|numkong) ' target/quarantine.tree || grep -iE '^name = "(usearch|cxx|numkong)"' Cargo.lock; then \
		echo "quarantine: the vector peer (usearch) is in the root workspace's dependency tree" >&2; exit 1; \
	fi
	@# The model runtime (candle, tokenizers) belongs to heddle-encoder alone.
	@if $(CARGO) tree -p heddle --target all --edges normal,build --prefix none | grep -iE '^(candle-|gemm|tokenizers |heddle-encoder )'; then \
		echo "quarantine: the engine depends on the encoder's model runtime" >&2; exit 1; \
	fi

bench-test:
	cd bench && $(CARGO) fmt --check
	cd bench && $(CARGO) clippy --all-targets -- -D warnings
	cd bench && $(CARGO) test

# Both engines on one BEIR corpus: indexes (kept under COMPARE_DIR/work and reused while
# corpus and settings are unchanged), agreement check, sequential pass, an 8-rung derived
# ladder alternating engines rung by rung, per-engine peak RSS, the heddle/tantivy ratios,
# and each engine's highest rate held and how it degrades at twice that (issue 6). The
# rungs run to 4× the smaller capacity C so that twice any held rate up to 2 C is a rung
# (heddle's capacity has been 1.5–1.8 C, so it may hold 1.5 C: 3 C must be there).
# Default: the full-scale synthetic TREC-COVID-style corpus (171,332 documents), generated
# on first use, and 1,000 queries generated from the corpus itself, 200 of each class
# (sampled, frequent-rare, all-rare, all-frequent, long: docs/CORPUS.md), so the classes
# a pooled figure hides are always there; the sequential pass reports them query by query.
# Any BEIR set: make compare CORPUS=DIR (its class queries are generated the same way), or
# QUERIES=FILE for a query set of your own.
# COMPARE_FLAGS adds flags, e.g. --rebuild, --analysis native, --repeat 3.
# LADDER is the ladder's shape: rates derived from the measured capacity (the default), or
# named, LADDER="--rates 500,750,1000,1500,2000" (the two cannot be combined).
LADDER ?= --fractions 0.25,0.5,0.75,1,1.5,2,3,4
COMPARE_DIR ?= results/compare
CORPUS ?= $(COMPARE_DIR)/synth
QUERY_CLASSES ?= sampled,frequent-rare,all-rare,all-frequent,long
QUERIES ?= $(COMPARE_DIR)/queries-$(notdir $(abspath $(CORPUS))).jsonl
COMPARE_OUT ?= $(COMPARE_DIR)/out
COMPARE_FLAGS ?=
compare: $(CORPUS)/corpus.jsonl $(QUERIES)
	cd bench && $(CARGO) build --release
	@mkdir -p $(COMPARE_OUT)
	bench/target/release/heddle-bench bench --corpus $(CORPUS) --queries $(QUERIES) \
		--workdir $(COMPARE_DIR)/work/$(notdir $(CORPUS)) \
		$(LADDER) --samples 10000 --inflight 64 \
		--json $(COMPARE_OUT)/ladder.json --svg $(COMPARE_OUT)/ladder.svg \
		--compare-json $(COMPARE_OUT)/compare.json $(COMPARE_FLAGS)

# heddle against Lucene 9.9.1 (bench/: heddle-bench lucene; docs/DECISIONS.md, "Lucene as a
# second peer"). Installs what it needs and says so: a JDK from apt if javac is missing, the
# pyserini 1.6.0 sdist from PyPI (its Anserini 1.7.1 fat jar holds Lucene 9.9.1), kept in
# LUCENE_CACHE outside the repository and checked by sha256. Nothing of this is needed by
# make test or CI. The three engines: heddle in-process, heddle-child and Lucene (both children
# over the same line protocol); the ratio to quote is heddle-child/lucene.
# LUCENE_FLAGS="--analysis native": heddle's lucene-english against Lucene's own
# EnglishAnalyzer over the raw text (indexes under WORK/native-lucene); the agreement is
# reported, not required, and every output is labelled NATIVE (the answers differ).
# LUCENE_FLAGS="--agreement-only" stops after the agreement check.
# make compare-all: the same with tantivy in this process as a fourth engine (heddle-bench
# lucene --tantivy; matched analysis): heddle, tantivy and Lucene in one sequential pass and
# one ladder, the table with heddle/tantivy beside the Lucene ratios.
LUCENE_CACHE ?= $(HOME)/.cache/heddle/lucene
LUCENE_JAR := $(LUCENE_CACHE)/pyserini-1.6.0/pyserini/resources/jars/anserini-1.7.1-fatjar.jar
LUCENE_JAR_SHA256 := 183bf5b53c82441b249d475f66f73aaa3e7dedd8892dece747e3680a1fda34f3
LUCENE_CLASSES := bench/target/lucene-classes
LUCENE_FLAGS ?=
LUCENE_PEERS ?=
# Requests per rung and queries per engine in the sequential pass (p99 needs 10,000). On a
# busy machine the derived ladder refuses a disturbed calibration: name the rates, e.g.
# LADDER="--rates 500,750,1000,1500,2000" LUCENE_FLAGS="--max-others-cpu 2 --max-lag-ratio 1000"
# (docs/RESULTS.md, "heddle against Lucene 9.9.1: timing").
LUCENE_SAMPLES ?= 10000
.PHONY: compare-lucene compare-all lucene-setup
# Its own variable, not LUCENE_FLAGS: a LUCENE_FLAGS given on the command line would
# replace a target's addition to it and drop tantivy.
compare-all: LUCENE_PEERS := --tantivy
compare-all: compare-lucene

lucene-setup:
	@if ! command -v javac >/dev/null; then \
		echo "compare-lucene: installing openjdk-17-jdk-headless with apt-get (javac is missing)"; \
		apt-get update && apt-get install -y openjdk-17-jdk-headless; fi
	@mkdir -p $(LUCENE_CACHE)
	@if [ ! -f $(LUCENE_JAR) ]; then \
		echo "compare-lucene: downloading the pyserini 1.6.0 sdist from PyPI into $(LUCENE_CACHE) (165 MB)"; \
		pip download --no-deps --no-binary :all: pyserini==1.6.0 -d $(LUCENE_CACHE) && \
		tar xzf $(LUCENE_CACHE)/pyserini-1.6.0.tar.gz -C $(LUCENE_CACHE) --wildcards '*/anserini-1.7.1-fatjar.jar'; fi
	@echo "$(LUCENE_JAR_SHA256)  $(LUCENE_JAR)" | sha256sum -c -
	@mkdir -p $(LUCENE_CLASSES)
	javac --release 17 -cp $(LUCENE_JAR) -d $(LUCENE_CLASSES) bench/lucene/HeddleLucene.java

compare-lucene: lucene-setup $(CORPUS)/corpus.jsonl $(QUERIES)
	cd bench && $(CARGO) build --release
	@mkdir -p $(COMPARE_OUT)
	bench/target/release/heddle-bench lucene --corpus $(CORPUS) --queries $(QUERIES) \
		--workdir $(COMPARE_DIR)/work/$(notdir $(CORPUS)) \
		--lucene-classpath $(LUCENE_JAR):$(abspath $(LUCENE_CLASSES)) \
		$(LADDER) --samples $(LUCENE_SAMPLES) --inflight 64 \
		--sequential-samples $(LUCENE_SAMPLES) \
		--json $(COMPARE_OUT)/lucene-ladder.json --compare-json $(COMPARE_OUT)/lucene.json $(LUCENE_PEERS) $(LUCENE_FLAGS)

# heddle's approximate vector search against usearch's HNSW, in bench/ (issue 31;
# docs/PERF.md, "heddle against a vector peer"): SciFact's real MiniLM vectors (make
# hybrid's cache, encoded once if missing: 5-10 minutes of CPU), 171k noisy copies of them,
# a 171k clustered mixture, and the synthetic corpus's embeddings when make arms-scale left
# them; each engine's effort swept, the two compared at recall 0.90/0.95/0.99, then the
# ladder and serving memory at 0.95. Tables, recall-QPS charts (SVG, HTML) under
# results/vectors (scripts/vectors-compare.sh: VECTORS_SETS, VECTORS_FLAGS, ...).
# scripts/vectors-python.sh puts faiss-cpu and hnswlib on the same files (not in make test).
.PHONY: vectors-compare
vectors-compare:
	$(CARGO) build --release -p heddle-eval
	cd bench && $(CARGO) build --release
	bash scripts/vectors-compare.sh

# Issue 18's cost-growth study (docs/RESULTS.md, "How every cost grows: 171k to 1.7M
# documents"; docs/SCALE.md): synthetic corpora of 171k, 500k and 1.7M documents, both
# engines in the same memory budget and threads, at each engine's natural segment count
# and merged to one; the table with each engine's growth exponents and one log-log SVG
# per family of figures under results/scale. 51 minutes on 2 cores the first time
# (corpora, indexes and finished runs are reused after; SCALE_REMEASURE=1 redoes runs).
# Override SCALE_SIZES, SCALE_MEMORY_MIB, SCALE_MODES or SCALE_FLAGS (scripts/scale.sh).
.PHONY: scale
scale:
	$(CARGO) build --release -p heddle-corpus
	cd bench && $(CARGO) build --release
	bash scripts/scale.sh

$(COMPARE_DIR)/synth/corpus.jsonl:
	$(CARGO) build --release -p heddle-corpus
	$(RELEASE_BIN)/heddle-corpus synth --out $(COMPARE_DIR)/synth --seed 7

$(COMPARE_DIR)/queries-%.jsonl: $(CORPUS)/corpus.jsonl
	$(CARGO) build --release -p heddle-corpus
	$(RELEASE_BIN)/heddle-corpus queries --corpus $(CORPUS) --out $@ --count 1000 \
		--class $(QUERY_CLASSES)

# The text encoder (encoder/, crate heddle-encoder: all-MiniLM-L6-v2 in Rust).
# encoder-fixture rewrites encoder/tests/fixtures/minilm-reference.json with
# sentence-transformers itself, in a virtualenv from PyPI (torch's wheel and its CUDA
# libraries: ~4 GB, once); the fixture is committed, so only a change of model or of the
# test sentences needs it. FIXTURE_VENV reuses an environment elsewhere.
# encoder-throughput: documents/s at 1 and 2 threads on SciFact's corpus (title + text, as
# BEIR), the model fetched with pip on first use; THROUGHPUT_FLAGS e.g. "--limit 500 --batch 8".
FIXTURE_VENV ?= target/encoder-fixture-venv
THROUGHPUT_FLAGS ?= --limit 1000
.PHONY: encoder-fixture encoder-throughput
encoder-fixture:
	test -x $(FIXTURE_VENV)/bin/python || python3 -m venv $(FIXTURE_VENV)
	$(FIXTURE_VENV)/bin/pip install --disable-pip-version-check -r scripts/encoder-fixture-requirements.txt
	$(FIXTURE_VENV)/bin/python scripts/encoder-fixture.py

encoder-throughput:
	$(CARGO) run --release -p heddle-encoder --example throughput -- $(SCIFACT)/corpus.jsonl $(THROUGHPUT_FLAGS)

# encoder-anchor: ONNX Runtime fp32 (from PyPI) and heddle-encoder on the same texts in one
# run, three rounds, medians: SciFact's 300 test queries one at a time (p50/p99 at 1 and 2
# threads) and its first 1,000 documents (documents/s at 2 threads). The ONNX model is
# exported once from sentence-transformers with torch (the fixture's requirements) into
# target/encoder-anchor/, and checked against the fidelity fixture on every run. Not in
# `make test`: it downloads torch once and takes minutes. ANCHOR_FLAGS e.g.
# "--rounds 1 --documents 200 --document-threads 1,2".
ANCHOR_VENV ?= target/encoder-anchor-venv
ANCHOR_FLAGS ?=
.PHONY: encoder-anchor
encoder-anchor:
	$(CARGO) build --release -p heddle-encoder --example throughput
	test -x $(ANCHOR_VENV)/bin/python || python3 -m venv $(ANCHOR_VENV)
	$(ANCHOR_VENV)/bin/pip install --disable-pip-version-check -q -r scripts/encoder-anchor-requirements.txt
	SCIFACT=$(SCIFACT) $(ANCHOR_VENV)/bin/python scripts/encoder-anchor.py \
		--heddle $(RELEASE_BIN)/examples/throughput $(ANCHOR_FLAGS)
