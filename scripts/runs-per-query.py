#!/usr/bin/env python3
"""Per-query nDCG@10 of two TREC run files against BEIR qrels, and the queries where they
differ, with the rank of each judged document in each run (docs/RESULTS.md, issue 34:
heddle's SciFact 0.6777 against Lucene's 0.6789).

usage: runs-per-query.py QRELS.tsv A.run B.run

nDCG@10 as trec_eval computes it: gain = relevance, discount log2(rank + 1), the ideal
from the judged documents; each run ordered by score descending, ties by document id
descending (trec_eval's order).
"""
import math
import sys
from collections import defaultdict


def read_qrels(path):
    q = defaultdict(dict)
    for line in open(path):
        f = line.split()
        if len(f) < 3 or f[0] == "query-id":
            continue
        q[f[0]][f[1]] = int(f[2])
    return q


def read_run(path):
    r = defaultdict(list)
    for line in open(path):
        qid, _, doc, _, score, _ = line.split()
        r[qid].append((float(score), doc))
    return {q: [d for _, d in sorted(v, key=lambda x: (-x[0], [-ord(c) for c in x[1]]))] for q, v in r.items()}


def ndcg10(ranked, rel):
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(rel.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def main():
    qrels, a, b = read_qrels(sys.argv[1]), read_run(sys.argv[2]), read_run(sys.argv[3])
    sa = sb = 0.0
    rows = []
    for q, rel in qrels.items():
        x, y = ndcg10(a.get(q, []), rel), ndcg10(b.get(q, []), rel)
        sa, sb = sa + x, sb + y
        if abs(x - y) > 1e-12:
            ranks = []
            for d in sorted(rel):
                ra = a.get(q, []).index(d) + 1 if d in a.get(q, []) else None
                rb = b.get(q, []).index(d) + 1 if d in b.get(q, []) else None
                ranks.append(f"{d}: {ra}→{rb}")
            rows.append((y - x, q, x, y, ", ".join(ranks)))
    n = len(qrels)
    print(f"nDCG@10 A {sa / n:.6f}  B {sb / n:.6f}  ({n} queries, {len(rows)} differ)")
    for d, q, x, y, ranks in sorted(rows, reverse=True):
        print(f"  query {q}: A {x:.4f}  B {y:.4f}  ({d:+.4f}); judged rank A→B {ranks}")


if __name__ == "__main__":
    main()
