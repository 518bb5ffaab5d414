#!/usr/bin/env bash
# make scale: issue 18's cost-growth study. Synthetic TREC-COVID-style corpora at
# SCALE_SIZES documents (same model and seed: each a prefix of the next), one query set
# generated from the smallest (the same queries at every size), and at each size both
# engines built in the same memory budget and threads, then compared twice: at each
# engine's natural segment count (its own merge policy during the build) and merged to
# one segment. Indexes are kept under $SCALE_DIR/work and reused while corpus and
# settings are unchanged (as `make compare` does); corpora are generated once.
# Ends with `heddle-bench scale`: the table with growth exponents ($SCALE_DIR/scale.md)
# and one log-log SVG per family of figures.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release
BENCH=bench/target/release/heddle-bench
DIR=${SCALE_DIR:-results/scale}
SIZES=${SCALE_SIZES:-171332 500000 1700000}
MEMORY_MIB=${SCALE_MEMORY_MIB:-128}
MODES=${SCALE_MODES:-natural 1}
# A shorter ladder than `make compare`'s: 5 rungs, not 8, of 10,000 requests each (the
# fewest that report a p99), so that six comparisons fit well under the hour; 3 C stays,
# so twice a held rate up to 1.5 C is a rung.
FLAGS=${SCALE_FLAGS:---fractions 0.5,1,1.5,2,3 --samples 10000 --inflight 64 --sequential-samples 10000 --memory-requests 3000 --agreement-depth 100}
started=$(date +%s)
say() { echo "scale: $* ($(( ($(date +%s) - started) / 60 )) min elapsed)" >&2; }

mkdir -p "$DIR"
for n in $SIZES; do
  if [ ! -s "$DIR/synth-$n/corpus.jsonl" ]; then
    say "generating the $n-document corpus"
    "$BIN/heddle-corpus" synth --out "$DIR/synth-$n" --seed 7 --docs "$n"
  fi
done
smallest=$(printf '%s\n' $SIZES | sort -n | head -n 1)
QUERIES="$DIR/queries.jsonl"
if [ ! -s "$QUERIES" ]; then
  say "generating 1,000 class queries from the $smallest-document corpus"
  # Written aside and renamed, so that an interrupted run leaves no partial query set.
  "$BIN/heddle-corpus" queries --corpus "$DIR/synth-$smallest" --out "$QUERIES.partial" \
    --count 1000 --class sampled,frequent-rare,all-rare,all-frequent,long
  mv "$QUERIES.partial" "$QUERIES"
fi

runs=()
total=$(( $(echo $SIZES | wc -w) * $(echo $MODES | wc -w) ))
step=0
for n in $SIZES; do
  for mode in $MODES; do
    step=$((step + 1))
    case "$mode" in
      natural) label=natural ;;
      matched) label=matched ;;
      *) label="merged-to-$mode" ;;
    esac
    out="$DIR/runs/$n-$label"
    mkdir -p "$out"
    say "[$step/$total] $n documents, $label segments, --memory-mib $MEMORY_MIB"
    # shellcheck disable=SC2086
    "$BENCH" bench --corpus "$DIR/synth-$n" --queries "$QUERIES" \
      --workdir "$DIR/work/$n-$label" --memory-mib "$MEMORY_MIB" --segments "$mode" \
      $FLAGS --json "$out/ladder.json" --svg "$out/ladder.svg" \
      --compare-json "$out/compare.json" > "$out/report.txt"
    runs+=("$label=$out/compare.json")
  done
done
say "writing the table and the charts"
"$BENCH" scale "${runs[@]}" --out "$DIR"
say "done: $DIR/scale.md and $DIR/scale-*.svg"
