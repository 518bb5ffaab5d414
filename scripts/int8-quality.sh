#!/usr/bin/env bash
# The int8 encoder's quality against f32 (issue 32, item 2; docs/RESULTS.md, "An opt-in
# int8 encoder"), on two judged sets:
#
#   scifact     SciFact's 5,183 documents and 300 test queries
#   known-item  SciFact known-item: 1,000 sampled titles as queries, each judged relevant
#               to its own document, the documents encoded without their titles
#               (scripts/known-item-set.py, seed 32)
#
# For each set and each encoder (minilm, minilm-int8): the corpus and queries embedded
# (`heddle-eval embed`; each encoder has its own cache entry), an index with that
# encoder's document vectors, and the vector and hybrid arms with exact vector search (so
# that only the encoder differs); then compare-runs, f32 against int8, for each arm
# (paired bootstrap, 95% interval), and also f32 documents with int8 queries (the case of
# an index built with f32 that encodes its queries in int8). Per-text cosine of int8 to
# f32 with scripts/vectors-cosine.py.
#
# SCIFACT as for make hybrid; INT8_OUT where everything goes (default results/int8);
# INT8_PAUSE_WHILE a file whose presence pauses embedding (e.g. a quiet-window file).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release
SCIFACT=${SCIFACT:-../shared/data/scifact}
OUT=${INT8_OUT:-results/int8}
PAUSE=()
[ -n "${INT8_PAUSE_WHILE:-}" ] && PAUSE=(--pause-while "$INT8_PAUSE_WHILE")
mkdir -p "$OUT"

source scripts/judged-sets.sh
make_judged_sets "$OUT"

for set in $JUDGED_SETS; do
  judged_set "$set" "$OUT"
  dir=$OUT/$set
  mkdir -p "$dir"
  echo "===== $set"
  for encoder in minilm minilm-int8; do
    echo "== embed ($encoder)"
    "$BIN/heddle-eval" embed --encoder "$encoder" "${PAUSE[@]}" --corpus "$data" \
      --out "$dir/$encoder-corpus.jsonl" --queries "$data/queries.jsonl" \
      --queries-out "$dir/$encoder-queries.jsonl"
    "$BIN/heddle-eval" index --corpus "$data" --vectors "$dir/$encoder-corpus.jsonl" \
      --index "$dir/index-$encoder" --analyzer lucene-english --force >/dev/null
  done
  echo "== cosine of int8 to f32, per text"
  python3 scripts/vectors-cosine.py "$dir/minilm-queries.jsonl" "$dir/minilm-int8-queries.jsonl" \
    --qrels "$qrels" --label "$set queries" --json "$dir/cosine.jsonl"
  python3 scripts/vectors-cosine.py "$dir/minilm-corpus.jsonl" "$dir/minilm-int8-corpus.jsonl" \
    --label "$set documents" --json "$dir/cosine.jsonl"
  # runs: f32 (f32 documents, f32 queries), int8 (int8 both), mixed (f32 documents, int8 queries)
  for arm in vector hybrid; do
    for run in f32 int8 mixed; do
      case $run in
        f32) index=minilm; queries=minilm ;;
        int8) index=minilm-int8; queries=minilm-int8 ;;
        mixed) index=minilm; queries=minilm-int8 ;;
      esac
      echo "-- $arm, $run"
      "$BIN/heddle-eval" quality --index "$dir/index-$index" --queries "$data/queries.jsonl" \
        --qrels "$qrels" --k1 0.9 --b 0.4 "${remove[@]}" --arm "$arm" \
        --query-vectors "$dir/$queries-queries.jsonl" --vector-search exact \
        --run-out "$dir/$arm-$run.run" --tag "$arm-$run"
    done
    for run in int8 mixed; do
      echo "== $set $arm: f32 against $run (B − A, paired bootstrap)"
      "$BIN/heddle-eval" compare-runs "$dir/$arm-f32.run" "$dir/$arm-$run.run" --qrels "$qrels"
    done
  done
done
