#!/usr/bin/env bash
# make fusion-depth: what the hybrid arm's ranking loses when each stream is read less deep
# (`quality --depth`, `bench --depth`). Reading 1,000 deep is BEIR's convention for fused
# runs; a served request reads what its top 10 needs, and each place read costs time in
# both streams and in the fusion (docs/RESULTS.md, "Where a hybrid request's time goes").
#
# On two judged sets (as scripts/int8-quality.sh, whose second set this reuses):
#   scifact     SciFact's 5,183 documents and 300 test queries (claims, several relevant)
#   known-item  1,000 SciFact titles as queries, each judged relevant to its own abstract
#               (scripts/known-item-set.py, seed 32)
# the hybrid arm (BM25 k1 0.9 b 0.4 and the vector stream by the default graph walk, RRF
# k = 60) at each depth of FUSION_DEPTHS, each compared with depth 1,000 by compare-runs
# (nDCG@10 and R@100, paired bootstrap 95% interval).
#
# Embeddings come from `heddle-eval embed`'s cache (encoded once, about 4 minutes of both
# cores a set the first time). SCIFACT as for make hybrid; FUSION_OUT where everything goes
# (default results/fusion-depth); FUSION_PAUSE_WHILE a file whose presence pauses encoding.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release
SCIFACT=${SCIFACT:-../shared/data/scifact}
OUT=${FUSION_OUT:-results/fusion-depth}
DEPTHS=${FUSION_DEPTHS:-10 20 50 100 200}
PAUSE=()
[ -n "${FUSION_PAUSE_WHILE:-}" ] && PAUSE=(--pause-while "$FUSION_PAUSE_WHILE")
mkdir -p "$OUT"

source scripts/judged-sets.sh
make_judged_sets "$OUT"

for set in $JUDGED_SETS; do
  judged_set "$set" "$OUT"
  dir=$OUT/$set
  mkdir -p "$dir"
  echo "===== $set"
  "$BIN/heddle-eval" embed "${PAUSE[@]}" --corpus "$data" --out "$dir/corpus-vectors.jsonl" \
    --queries "$data/queries.jsonl" --queries-out "$dir/query-vectors.jsonl" --progress-secs 60
  "$BIN/heddle-eval" index --corpus "$data" --vectors "$dir/corpus-vectors.jsonl" \
    --index "$dir/index" --analyzer lucene-english --force >/dev/null
  for depth in 1000 $DEPTHS; do
    echo "-- hybrid, each stream read $depth deep"
    "$BIN/heddle-eval" quality --index "$dir/index" --queries "$data/queries.jsonl" \
      --qrels "$qrels" --k1 0.9 --b 0.4 "${remove[@]}" --arm hybrid --depth "$depth" \
      --query-vectors "$dir/query-vectors.jsonl" \
      --run-out "$dir/hybrid-$depth.run" --tag "hybrid-$depth"
  done
  for depth in $DEPTHS; do
    echo "== $set: depth 1000 (A) against depth $depth (B), paired bootstrap"
    "$BIN/heddle-eval" compare-runs "$dir/hybrid-1000.run" "$dir/hybrid-$depth.run" --qrels "$qrels"
  done
done
