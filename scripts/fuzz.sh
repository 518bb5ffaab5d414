#!/usr/bin/env bash
# make fuzz: run every cargo-fuzz target for FUZZ_SECONDS (default 30) each.
# Needs cargo-fuzz (installed here if missing) and a nightly compiler: the nightly
# toolchain if rustup has one, else the stable one with RUSTC_BOOTSTRAP=1.
# A crash is saved under fuzz/artifacts/TARGET/; turn it into a regression test in
# engine/tests/decoders_never_panic.rs named after what it found.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
SECONDS_EACH=${FUZZ_SECONDS:-30}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  FUZZ=(cargo +nightly fuzz)
else
  export RUSTC_BOOTSTRAP=1
  FUZZ=(cargo fuzz)
fi
for target in footer manifest termdict postings store lengths vectors graph deletes; do
  echo "== fuzz $target for ${SECONDS_EACH}s"
  "${FUZZ[@]}" run "$target" -- -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -max_len=65536
done
echo "fuzz: all targets ran ${SECONDS_EACH}s without a crash"
