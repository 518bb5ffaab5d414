#!/usr/bin/env bash
# The int8 encoder's speed against f32 (issue 32, item 2; docs/RESULTS.md, "An opt-in
# int8 encoder"): the throughput example, f32 and int8 alternating (which goes first
# alternates by round), on SciFact's 300 test queries one at a time (1 kernel thread,
# then 2) and its first 1,000 documents (2 workers, 1 kernel thread each). Prints the load average before and after
# each round; appends every run's JSON to OUT/speed.jsonl. Run it on a quiet machine.
#
# ROUNDS (default 3); SCIFACT as for make hybrid; INT8_OUT (default results/int8).
set -euo pipefail
cd "$(dirname "$0")/.."
SCIFACT=${SCIFACT:-../shared/data/scifact}
OUT=${INT8_OUT:-results/int8}
ROUNDS=${ROUNDS:-3}
EXAMPLE=target/release/examples/throughput
mkdir -p "$OUT"
[ -x "$EXAMPLE" ] || { echo "build it first: cargo build --release -p heddle-encoder --example throughput" >&2; exit 1; }

for round in $(seq 1 "$ROUNDS"); do
  echo "== round $round; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  order="f32 int8"
  [ $((round % 2)) -eq 0 ] && order="int8 f32"
  for precision in $order; do
    for kernel_threads in 1 2; do
      "$EXAMPLE" --queries "$SCIFACT/queries.jsonl" --qrels "$SCIFACT/qrels/test.tsv" \
        --threads 1 --kernel-threads "$kernel_threads" --precision "$precision" \
        --json "$OUT/speed.jsonl" 2>/dev/null | sed "s/^/[$precision] /"
    done
    "$EXAMPLE" "$SCIFACT/corpus.jsonl" --limit 1000 --threads 2 --kernel-threads 1 \
      --precision "$precision" --json "$OUT/speed.jsonl" 2>/dev/null | sed "s/^/[$precision] /"
  done
  echo "   load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
