#!/usr/bin/env python3
"""How far two TREC runs of the same queries agree in their top k, without judgments: for a
corpus with none (the synthetic one), whether a cheaper setting (a shallower fusion depth, a
smaller beam) ranks as the reference does (docs/RESULTS.md, "How deep a hybrid request needs
to read each stream").

usage: runs-agreement.py A.run B.run [--k 10]

Each run's list is taken in its rank column's order. Printed: the queries in A, how many
have the same top k in B as a set and in the same order, the mean and the smallest share
of A's top k found in B's, and the queries missing from B. Exits 1 when the runs hold no
query in common.
"""
import argparse
import sys
from collections import defaultdict


def read_run(path, k):
    ranked = defaultdict(list)
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 6:
                sys.exit(f"{path}:{number}: expected 6 columns (qid Q0 docid rank score tag), "
                         f"found {len(fields)}")
            try:
                rank = int(fields[3])
            except ValueError:
                sys.exit(f"{path}:{number}: rank {fields[3]!r} is not a whole number")
            ranked[fields[0]].append((rank, fields[2]))
    return {query: [doc for _, doc in sorted(docs)[:k]] for query, docs in ranked.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    if args.k < 1:
        sys.exit("--k must be at least 1")
    a, b = read_run(args.a, args.k), read_run(args.b, args.k)
    common = sorted(set(a) & set(b))
    if not common:
        sys.exit(f"{args.a} and {args.b} share no query")
    same_set = same_order = 0
    shares = []
    for query in common:
        top_a, top_b = a[query], b[query]
        same_set += set(top_a) == set(top_b)
        same_order += top_a == top_b
        shares.append(len(set(top_a) & set(top_b)) / max(len(top_a), 1))
    count = len(common)
    print(f"{count} queries in both runs ({len(set(a) - set(b))} of A's missing from B); top {args.k}:")
    print(f"  the same documents: {same_set} ({same_set / count:.1%}); "
          f"in the same order: {same_order} ({same_order / count:.1%})")
    print(f"  share of A's top {args.k} in B's: mean {sum(shares) / count:.4f}, "
          f"smallest {min(shares):.2f}")


if __name__ == "__main__":
    main()
