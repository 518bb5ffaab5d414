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
