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
# Sized so that the study fits in about an hour on 2 cores (the 1.7M corpus dominates:
# tantivy's capacity there is a few tens of queries a second, and a p99 needs 10,000
# requests a rung). Below a million documents: 5 rungs (0.5 to 3 C; 3 C so that twice a
# held rate up to 1.5 C is a rung) of 10,000 requests. From a million: 3 rungs (0.5, 1
# and 2 C), and in the merged modes 2,000 requests a rung (p50 and p90, but no p99 and
# so no held rate: the sequential pass still gives p99). SCALE_FLAGS adds flags to every
# run (others than these). A run whose compare.json exists is not measured again (an
# interrupted study resumes where it stopped): delete it, or SCALE_REMEASURE=1, to redo.
COMMON="--inflight 64 --sequential-samples 10000 --memory-requests 3000 --agreement-depth 100"
ladder_flags() { # size mode
  if [ "$1" -lt 1000000 ]; then
    echo "--fractions 0.5,1,1.5,2,3 --samples 10000"
  elif [ "$2" = natural ]; then
    echo "--fractions 0.5,1,2 --samples 10000"
  else
    echo "--fractions 0.5,1,2 --samples 2000"
  fi
}
EXTRA=${SCALE_FLAGS:-}
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
    runs+=("$label=$out/compare.json")
    if [ -s "$out/compare.json" ] && [ -z "${SCALE_REMEASURE:-}" ]; then
      say "[$step/$total] $n documents, $label segments: reusing $out/compare.json (delete it to measure again)"
      continue
    fi
    say "[$step/$total] $n documents, $label segments, --memory-mib $MEMORY_MIB"
    # shellcheck disable=SC2086
    "$BENCH" bench --corpus "$DIR/synth-$n" --queries "$QUERIES" \
      --workdir "$DIR/work/$n-$label" --memory-mib "$MEMORY_MIB" --segments "$mode" \
      $COMMON $(ladder_flags "$n" "$mode") $EXTRA \
      --json "$out/ladder.json" --svg "$out/ladder.svg" \
      --compare-json "$out/compare.json.partial" > "$out/report.txt"
    mv "$out/compare.json.partial" "$out/compare.json"
  done
done
say "writing the table and the charts"
"$BENCH" scale "${runs[@]}" --out "$DIR"
say "done: $DIR/scale.md and $DIR/scale-*.svg"
