#!/usr/bin/env bash
# Two (or more) builds of the encoder's throughput example on the same texts, interleaved:
# for each round, each text length and each kernel-thread count, every build in turn encodes
# the same text of that many word pieces (one text, repeated) one call at a time. Printed per
# build, length and threads: the median over rounds of each run's fastest call, its 10th
# percentile and its median.
#
# Why these figures: this host has slow spells (a third of a second or more at 1.5-1.8x) and
# a run's p50 moves with them; a run's fastest calls mostly miss them, so the median over
# rounds of a run's minimum or p10 tells two builds apart where a p50 does not. Why one text
# repeated: a length's cost without the mix of lengths a query set has.
#
# Usage: scripts/encoder-ab.sh [-r ROUNDS] [-l "24 40 240"] [-t "1 2"] [-n TEXTS] BUILD...
#   BUILD: a release build of `cargo build --release -p heddle-encoder --example throughput`
#   at 49b0e0d or later (it needs --per-text), copied aside (e.g.
#   cp target/release/examples/throughput /tmp/tp-before). The builds' order is reversed
#   every other round, so a slow spell does not always fall on the same build.
set -euo pipefail

rounds=3
lengths="24 40 240"
threads="1 2"
texts=60
while getopts "r:l:t:n:" option; do
    case "$option" in
        r) rounds=$OPTARG ;;
        l) lengths=$OPTARG ;;
        t) threads=$OPTARG ;;
        n) texts=$OPTARG ;;
        *) sed -n '2,17p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
    sed -n '2,17p' "$0" >&2
    exit 2
fi
for build in "$@"; do
    [ -x "$build" ] || { echo "encoder-ab: $build is not an executable" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for length in $lengths; do
    # "cell" is one word piece; with [CLS] and [SEP] the text is `length` pieces.
    python3 - "$length" "$texts" > "$work/q$length.jsonl" <<'EOF'
import json, sys
length, count = int(sys.argv[1]), int(sys.argv[2])
text = " ".join(["cell"] * max(length - 2, 0))
for index in range(count):
    print(json.dumps({"_id": str(index), "text": text}))
EOF
done

: > "$work/calls.tsv"
for round in $(seq "$rounds"); do
    for length in $lengths; do
        for kernel_threads in $threads; do
            builds=("$@")
            if [ $((round % 2)) -eq 0 ]; then
                builds=()
                for ((index = $#; index >= 1; index--)); do builds+=("${!index}"); done
            fi
            for build in "${builds[@]}"; do
                echo -ne "\rround $round/$rounds, $length pieces, $kernel_threads thread(s), $(basename "$build")        " >&2
                rm -f "$work/run.tsv"
                if ! "$build" --queries "$work/q$length.jsonl" --threads 1 \
                    --kernel-threads "$kernel_threads" --per-text "$work/run.tsv" \
                    > /dev/null 2> "$work/run.log"; then
                    echo >&2
                    echo "encoder-ab: $build failed:" >&2
                    cat "$work/run.log" >&2
                    exit 1
                fi
                awk -v r="$round" -v l="$length" -v k="$kernel_threads" -v b="$build" \
                    '{ print r "\t" l "\t" k "\t" b "\t" $NF }' "$work/run.tsv" >> "$work/calls.tsv"
            done
        done
    done
done
echo >&2

python3 - "$work/calls.tsv" <<'EOF'
import collections, math, statistics, sys


def quantile(ordered, fraction):
    """Nearest rank, as the throughput example and the anchor take it."""
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]


runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    round_number, length, threads, build, ms = line.rstrip("\n").split("\t")
    runs[(int(length), int(threads), build, round_number)].append(float(ms))
figures = collections.defaultdict(list)
for (length, threads, build, _), calls in runs.items():
    calls.sort()
    figures[(length, threads, build)].append(
        (calls[0], quantile(calls, 0.10), quantile(calls, 0.50)))
print("| pieces | kernel threads | build | min | p10 | p50 | (ms, median over rounds) |")
print("|---|---|---|---|---|---|---|")
for (length, threads, build), rows in sorted(figures.items()):
    low, tenth, middle = (statistics.median(row[i] for row in rows) for i in range(3))
    print(f"| {length} | {threads} | {build} | {low:.2f} | {tenth:.2f} | {middle:.2f} | {len(rows)} rounds |")
EOF
