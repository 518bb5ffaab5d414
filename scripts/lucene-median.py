#!/usr/bin/env python3
"""The issue-34 ratios of several `heddle-bench lucene --compare-json` runs, each run's
and their median (docs/RESULTS.md, "heddle against Lucene 9.9.1: timing").

usage: lucene-median.py RUN.json...

child/lucene: heddle-child over lucene, both through the child protocol (build and
bytes: heddle's index, which heddle-child serves); heddle/child: heddle in-process over
heddle-child (what the protocol adds); with --tantivy, heddle/tantivy (both in process).
Class rows: the per-query medians' p50 and p99 within each document-frequency class.
"""
import json
import statistics
import sys


def eng(r, name):
    return next(e for e in r["engines"] if e["engine"] == name)


def held(e):
    h = e.get("held") or {}
    return (h.get("held") or {}).get("rate")


def div(a, b):
    return a / b if a is not None and b else None


def latency_rows(out, label, a, b, per_query, quantiles=("p50", "p99")):
    """Engine a against engine b: the sequential pass, its classes (per_query's by_df,
    whose columns are a then b) and the highest rate held, each as (a, b, a/b)."""
    names = f"({a['engine']}, {b['engine']})"
    for q in ("p50", "p99"):
        x, y = a["sequential"]["latency_us"][q], b["sequential"]["latency_us"][q]
        out[f"{label}sequential {q} µs {names}"] = (x, y, div(x, y))
    for row in (per_query or {}).get("by_df", []):
        for q in quantiles:
            x, y = row["us"][0][q], row["us"][1][q]
            out[f"{label}  {row['class']} {q}"] = (x, y, div(x, y))
    out[f"{label}highest rate held /s {names}"] = (held(a), held(b), div(held(a), held(b)))


def rows(r):
    h, c, l = eng(r, "heddle"), eng(r, "heddle-child"), eng(r, "lucene")
    out = {}
    out["build s (heddle, lucene)"] = (h["build_secs"], l["build_secs"], div(h["build_secs"], l["build_secs"]))
    out["index bytes"] = (h["index_bytes"], l["index_bytes"], div(h["index_bytes"], l["index_bytes"]))
    latency_rows(out, "", c, l, r.get("per_query"))
    latency_rows(out, "protocol: ", h, c, r.get("per_query_protocol"), quantiles=("p50",))
    heap = (l.get("memory") or {}).get("heap") or {}
    if heap:
        out["lucene: GC collections, longest pause ms (memory rung)"] = (
            heap.get("gc_count"), heap.get("longest_gc_millis"), None)
    t = next((e for e in r["engines"] if e["engine"] == "tantivy"), None)
    if t is not None:
        out["tantivy: build s (heddle, tantivy)"] = (h["build_secs"], t["build_secs"], div(h["build_secs"], t["build_secs"]))
        out["tantivy: index bytes"] = (h["index_bytes"], t["index_bytes"], div(h["index_bytes"], t["index_bytes"]))
        latency_rows(out, "tantivy: ", h, t, r.get("per_query_tantivy"))
    return out


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float) and v < 10:
        return f"{v:.2f}"
    return f"{v:,.0f}" if isinstance(v, (int, float)) else str(v)


def main():
    runs = [json.load(open(p)) for p in sys.argv[1:]]
    tables = [rows(r) for r in runs]
    for p, r in zip(sys.argv[1:], runs):
        a = r["agreement"]
        print(f"{p}: agreement {100 * a['agreeing']:.1f}% identical or tied, "
              f"{100 * a['agreeing_explained']:.1f}% explained, {a['queries']} queries")
    print("figure | " + " | ".join(f"run {i + 1} (a, b, ratio)" for i in range(len(runs))) + " | median ratio")
    for key in tables[0]:
        cells, ratios = [], []
        for t in tables:
            a, b, x = t.get(key, (None, None, None))
            cells.append(f"{fmt(a)}, {fmt(b)}, {fmt(x)}")
            if x is not None:
                ratios.append(x)
        med = f"{statistics.median(ratios):.2f}×" if ratios else "-"
        print(f"{key} | " + " | ".join(cells) + f" | {med}")


if __name__ == "__main__":
    main()
