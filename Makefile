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
