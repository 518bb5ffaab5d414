#!/usr/bin/env python3
"""Cosine, per id, between two vectors files ({"_id", "vector"} lines, as `heddle-eval
embed --out/--queries-out` write them): how far one encoder's vectors moved from
another's on the same texts. Prints the count, min, 1st percentile, median and mean, and
the ids of the lowest few.

usage: vectors-cosine.py A.jsonl B.jsonl [--qrels TSV] [--label TEXT] [--json OUT]
--qrels keeps only the ids a BEIR qrels file judges as queries (SciFact's 300 test
queries of its 1,109).
"""

import argparse
import json
import math


def read(path):
    vectors = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                record = json.loads(line)
                vectors[record["_id"]] = record["vector"]
    return vectors


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm > 0 else float("nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--label", default="")
    parser.add_argument("--json")
    parser.add_argument("--qrels")
    args = parser.parse_args()
    a, b = read(args.a), read(args.b)
    if args.qrels:
        with open(args.qrels, encoding="utf-8") as f:
            judged = {line.split("\t")[0] for line in list(f)[1:] if line.strip()}
        a = {i: v for i, v in a.items() if i in judged}
        b = {i: v for i, v in b.items() if i in judged}
    if set(a) != set(b):
        raise SystemExit(f"the files hold different ids ({len(a)} and {len(b)})")
    values = sorted((cosine(a[i], b[i]), i) for i in a)
    n = len(values)
    # Nearest-rank quantiles, as the rest of heddle takes them.
    quantile = lambda q: values[max(1, math.ceil(q * n)) - 1][0]
    summary = {
        "label": args.label,
        "count": n,
        "min": values[0][0],
        "p01": quantile(0.01),
        "median": quantile(0.5),
        "mean": sum(v for v, _ in values) / n,
        "lowest": [[i, v] for v, i in values[:5]],
    }
    print(
        f"{args.label}: {n} texts, cosine min {summary['min']:.4f}, p1 {summary['p01']:.4f}, "
        f"median {summary['median']:.4f}, mean {summary['mean']:.4f}; lowest "
        + ", ".join(f"{i} {v:.4f}" for v, i in values[:3])
    )
    if args.json:
        with open(args.json, "a", encoding="utf-8") as f:
            f.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()
