# The commands a person types. `make test` is what CI runs (.ci/run).
CARGO ?= cargo
RELEASE_BIN := target/release
DEMO_DIR := demo-data

.PHONY: test fmt-check clippy unit demo build bench

test: fmt-check clippy unit

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

unit:
	$(CARGO) test --workspace

build:
	$(CARGO) build --release --workspace

demo: build
	bash scripts/demo.sh

# The default (derived) ladder on the demo corpus, three repetitions (docs/PERF.md).
# Builds the demo index first if it is missing. Figures go to results/ (git-ignored).
# Override e.g. BENCH_FLAGS="--rates 50,100,200 --samples 2000".
BENCH_OUT ?= results/bench
BENCH_FLAGS ?= --repeat 3
bench: build
	@test -d $(DEMO_DIR)/index || bash scripts/demo.sh
	$(RELEASE_BIN)/heddle-eval bench --index $(DEMO_DIR)/index \
		--queries $(DEMO_DIR)/corpus/queries.jsonl $(BENCH_FLAGS) \
		--json $(BENCH_OUT)/bench.json --svg $(BENCH_OUT)/bench.svg

# Crash and concurrency stress, longer than `make test` runs them: 1,000 kill -9 runs of a
# committing writer, then a minute of a writer, background merges and two readers.
STRESS_KILLS ?= 1000
STRESS_SECS ?= 60
.PHONY: stress fuzz quality
stress:
	HEDDLE_KILLS=$(STRESS_KILLS) $(CARGO) test --release -p heddle-eval --test kill9 -- --nocapture
	HEDDLE_STRESS_SECS=$(STRESS_SECS) $(CARGO) test --release -p heddle --test stress -- --nocapture

# Every decoder of on-disk bytes under cargo-fuzz, FUZZ_SECONDS each (default 30).
fuzz:
	bash scripts/fuzz.sh

# SciFact flat BM25 against the published Anserini figures (docs/RESULTS.md).
SCIFACT ?= ../shared/data/scifact
quality: build
	$(RELEASE_BIN)/heddle-eval index --corpus $(SCIFACT) --index results/scifact-index --analyzer lucene-english --per-field --force
	$(RELEASE_BIN)/heddle-eval quality --index results/scifact-index --queries $(SCIFACT)/queries.jsonl \
		--qrels $(SCIFACT)/qrels/test.tsv --k1 0.9 --b 0.4 --remove-query --run-out results/scifact-flat.run
