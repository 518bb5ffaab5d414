#!/usr/bin/env bash
# make arms-scale: issue 16's three arms at full scale. On the synthetic TREC-COVID-style
# corpus (171,332 documents, generated with seed 7 on first use) or any BEIR directory
# (ARMS_CORPUS): every document encoded once with all-MiniLM-L6-v2 (the embeddings cache:
# resumable, and a second run encodes nothing), an index with the vectors, the graph's recall@10
# against exact search on the real embeddings, then the open-loop ladder of each arm
# (text, vector, hybrid) with the query's encoding inside every request.
#
# Encoding is most of the cost: about 1 h 50 min of both cores for the 171k corpus at the
# encoder's 2-thread rate (docs/RESULTS.md, "Encoder throughput"); after that the index,
# recall and ladders take about half an hour. Interrupting the encoding keeps what it
# finished; `make arms-scale` again resumes it.
#
# Relative paths below are taken from the repository's root (where make runs).
# ARMS_CORPUS     BEIR directory (default results/compare/synth, generated if missing)
# ARMS_QUERIES    queries (default: 1,000 generated from the corpus, 200 of each class,
#                 as `make compare` uses: docs/CORPUS.md)
# ARMS_OUT        where vectors, index and reports go (default results/arms-<corpus name>)
# ARMS_SAMPLES    requests a rung (default 10,000: a p99 needs them)
# ARMS_FRACTIONS  rungs, as fractions of each arm's calibrated capacity (default 0.25,0.5)
# ARMS_ARMS       which arms' ladders to run (default text,vector,hybrid)
# ARMS_EMBED_FLAGS more flags for `heddle-eval embed`, e.g. `--pause-while /tmp/quiet-please`
#                 to pause the encoding while someone else measures on the machine
# ARMS_BENCH_FLAGS more flags for the vector and hybrid arms' `heddle-eval bench`, e.g.
#                 `--encode-batch 4` (queries already waiting encoded together)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release
CORPUS=${ARMS_CORPUS:-results/compare/synth}
OUT=${ARMS_OUT:-results/arms-$(basename "$CORPUS")}
QUERIES=${ARMS_QUERIES:-$OUT/queries.jsonl}
SAMPLES=${ARMS_SAMPLES:-10000}
FRACTIONS=${ARMS_FRACTIONS:-0.25,0.5}
ARMS=${ARMS_ARMS:-text,vector,hybrid}
read -r -a EMBED_FLAGS <<< "${ARMS_EMBED_FLAGS:-}"
read -r -a BENCH_FLAGS <<< "${ARMS_BENCH_FLAGS:-}"
mkdir -p "$OUT"

if [ ! -f "$CORPUS/corpus.jsonl" ]; then
  if [ -z "${ARMS_CORPUS:-}" ]; then
    echo "== 0. the synthetic corpus (171,332 documents, seed 7)"
    "$BIN/heddle-corpus" synth --out "$CORPUS" --seed 7
  else
    echo "make arms-scale: $CORPUS/corpus.jsonl is missing (ARMS_CORPUS=$CORPUS)" >&2
    exit 1
  fi
fi
if [ ! -f "$QUERIES" ]; then
  if [ -n "${ARMS_QUERIES:-}" ]; then
    echo "make arms-scale: $QUERIES is missing (ARMS_QUERIES)" >&2
    exit 1
  fi
  echo "== 0. 1,000 queries from the corpus, 200 of each class"
  "$BIN/heddle-corpus" queries --corpus "$CORPUS" --out "$QUERIES" --count 1000 \
    --class sampled,frequent-rare,all-rare,all-frequent,long
fi

echo "== 1. embeddings of the corpus and the queries (all-MiniLM-L6-v2; cached, resumable)"
"$BIN/heddle-eval" embed --corpus "$CORPUS" --out "$OUT/corpus-vectors.jsonl" \
  --queries "$QUERIES" --queries-out "$OUT/query-vectors.jsonl" ${EMBED_FLAGS[@]+"${EMBED_FLAGS[@]}"}

echo
echo "== 2. an index with the vectors"
"$BIN/heddle-eval" index --corpus "$CORPUS" --vectors "$OUT/corpus-vectors.jsonl" \
  --index "$OUT/index" --force

echo
echo "== 3. the graph's recall@10 against exact search, on the real embeddings"
echo "-- the queries' own vectors"
"$BIN/examples/vector_ann" --embeddings "$OUT/corpus-vectors.jsonl" \
  --query-embeddings "$OUT/query-vectors.jsonl" --queries "$(wc -l < "$OUT/query-vectors.jsonl" | tr -d " ")" \
  --ef 10,16,24,32,48,64,96,128 \
  | tee "$OUT/recall-queries.txt"
echo "-- 200 documents held out of the index as queries"
"$BIN/examples/vector_ann" --embeddings "$OUT/corpus-vectors.jsonl" --ef 16,32,64,128 \
  | tee "$OUT/recall-documents.txt"

echo
echo "== 4. each arm's open-loop ladder ($SAMPLES requests a rung, rungs at $FRACTIONS of capacity)"
for arm in ${ARMS//,/ }; do
  echo "-- $arm"
  flags=()
  if [ "$arm" != text ]; then flags=(${BENCH_FLAGS[@]+"${BENCH_FLAGS[@]}"}); fi
  "$BIN/heddle-eval" bench --index "$OUT/index" --queries "$QUERIES" --arm "$arm" \
    --samples "$SAMPLES" --fractions "$FRACTIONS" --json "$OUT/$arm.json" \
    ${flags[@]+"${flags[@]}"} | tee "$OUT/$arm.txt"
done
