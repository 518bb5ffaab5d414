#!/usr/bin/env bash
# make demo: generate a small TREC-COVID-style corpus, index it, run a few searches, then
# measure it: a short open-loop ladder and one writes-arm trial, reports under demo-data/report.
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

# The main job is the measurement: a short open-loop ladder and one writes-arm trial.
REPORT="$DATA/report"
mkdir -p "$REPORT"
echo
echo "== 4. a short open-loop latency ladder on the demo index: 4 rungs, 2,000 requests each"
echo "   (a quantile is shown only with 100 requests beyond it: p90 needs 1,000, p99 10,000,"
echo "   so this short run has p50 and p90 but no p99; \`make bench\` runs 10,000 a rung)"
"$BIN/heddle-eval" bench --index "$DATA/index" --queries "$DATA/corpus/queries.jsonl" \
  --rates 250,500,1000,2000 --samples 2000 --min-duration 0 \
  --json "$REPORT/ladder.json" --svg "$REPORT/ladder.svg" --html "$REPORT/ladder.html"

echo
echo "== 5. what a commit costs the reads beside it: one writes-arm trial on a copy of the index"
echo "   (4,000 reads at 400/s while 5,000 documents are added and committed; the index itself"
echo "   is not touched and is checked byte-identical afterwards)"
"$BIN/heddle-eval" bench --writes --index "$DATA/index" --queries "$DATA/corpus/queries.jsonl" \
  --rate 400 --samples 4000 --write-docs 5000 --commit-threads 1 \
  --json "$REPORT/writes.json" --svg "$REPORT/writes.svg" --html "$REPORT/writes.html"

echo
echo "demo done: corpus in $DATA/corpus, index in $DATA/index (all git-ignored)"
echo "reports: $REPORT/ladder.html and $REPORT/writes.html (open in a browser: tables, charts,"
echo "         the machine they were measured on), with the charts and figures as .svg and .json"
echo "next: make compare   (heddle against tantivy on the 171,332-document synthetic corpus)"
echo "      make quality   (SciFact against Anserini's published BM25 figures; SCIFACT=DIR if it is"
echo "                      not at ../shared/data/scifact: BEIR's scifact.zip, unpacked)"
echo "      make bench     (the derived ladder on this index, 10,000 requests a rung, 3 repetitions)"
