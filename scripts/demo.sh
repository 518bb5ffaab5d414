#!/usr/bin/env bash
# make demo: generate a small TREC-COVID-style corpus, index it, run a few searches.
# Needs nothing outside the repository. Binaries come from `make build` (release).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release
DATA=demo-data
DOCS=${DEMO_DOCS:-20000}

echo "== 1. generate a synthetic TREC-COVID-style corpus ($DOCS documents, built-in model, seed 1)"
"$BIN/heddle-corpus" synth --out "$DATA/corpus" --docs "$DOCS" --seed 1
"$BIN/heddle-corpus" stats --corpus "$DATA/corpus" | head -16

echo
echo "== 2. index it (english analyzer: stop words + Snowball stemming)"
"$BIN/heddle-eval" index --corpus "$DATA/corpus" --index "$DATA/index" --force

echo
echo "== 3. search it with BM25 (k1=1.2, b=0.75), using three of the corpus's own queries"
head -n 3 "$DATA/corpus/queries.jsonl" | while IFS= read -r line; do
  query=$(printf '%s' "$line" | sed -E 's/.*"text": ?"([^"]*)".*/\1/')
  echo
  echo "query: $query"
  "$BIN/heddle-eval" search --index "$DATA/index" --k 5 "$query"
done

echo
echo "demo done: corpus in $DATA/corpus, index in $DATA/index (both git-ignored)"
