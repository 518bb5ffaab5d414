"""faiss-cpu and hnswlib on the files `heddle-bench vectors` measured (not part of make test).

Reads a set's documents and queries (heddle-eval embed's JSONL or the binary form
`n u32 | dim u32 | n x dim f32`), normalises them as heddle-bench does, computes the exact
top k by brute force, then for each library and search effort: recall@k and the latency of
one query at a time on one thread (median of passes per query; p50 and p99 over every
search). Prints one table row per setting, in the columns of heddle-bench's sweep, and
writes them as JSON (OUT) so that they can sit beside heddle's and usearch's rows.

    python vectors-python.py --base DOCS --queries QUERIES --out OUT.json [--k 10]
"""

import argparse
import json
import os
import struct
import sys
import time

import numpy as np


def read_vectors(path):
    if path.endswith(".jsonl"):
        rows = []
        with open(path) as f:
            for i, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line)["vector"])
                    except (ValueError, KeyError) as e:
                        sys.exit(f"{path}:{i}: not a {{_id, vector}} line ({e})")
        v = np.asarray(rows, dtype=np.float32)
    else:
        with open(path, "rb") as f:
            n, dim = struct.unpack("<II", f.read(8))
        v = np.fromfile(path, dtype="<f4", offset=8)
        if v.size != n * dim:
            sys.exit(f"{path}: the header says {n} x {dim}, the file holds {v.size} values")
        v = v.reshape(n, dim)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    if (norms == 0).any():
        sys.exit(f"{path}: a zero vector")
    return np.ascontiguousarray(v / norms, dtype=np.float32)


def exact_top_k(docs, queries, k):
    out = []
    for start in range(0, len(queries), 256):
        scores = queries[start : start + 256].astype(np.float64) @ docs.T.astype(np.float64)
        top = np.argpartition(-scores, k, axis=1)[:, :k]
        out.extend(set(row) for row in top)
    return out


def measure(search, queries, exact, k, samples):
    found = [search(q) for q in queries]
    recall = float(np.mean([len(exact[i] & set(found[i][:k])) / k for i in range(len(queries))]))
    passes = max(1, -(-samples // len(queries)))
    per_query = [[] for _ in queries]
    every = []
    for _ in range(passes):
        for i, q in enumerate(queries):
            t = time.perf_counter_ns()
            search(q)
            us = (time.perf_counter_ns() - t) / 1000.0
            per_query[i].append(us)
            every.append(us)
    every.sort()
    medians = [float(np.median(p)) for p in per_query]

    def quantile(q):
        rank = max(1, int(np.ceil(q * len(every))))
        return every[rank - 1] if len(every) - rank >= 100 else None

    return {
        "recall": recall,
        "samples": len(every),
        "p50_us": quantile(0.5),
        "p99_us": quantile(0.99),
        "mean_us": float(np.mean(every)),
        "qps": 1e6 / float(np.mean(medians)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--samples", type=int, default=10000)
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import faiss
    import hnswlib

    faiss.omp_set_num_threads(1)
    docs, queries = read_vectors(args.base), read_vectors(args.queries)
    k = args.k
    exact = exact_top_k(docs, queries, k)
    rows = []

    def row(library, setting, build_s, m):
        m.update(library=library, setting=setting, build_seconds=build_s)
        rows.append(m)
        print(
            f"{library:<18} {setting:<14} recall {m['recall']:.4f}  p50 {m['p50_us'] or 0:8.1f} us"
            f"  p99 {m['p99_us'] or 0:8.1f} us  {m['qps']:8.0f} q/s  build {build_s:.1f} s",
            flush=True,
        )

    flat = faiss.IndexFlatIP(docs.shape[1])
    flat.add(docs)
    row("faiss IndexFlatIP", "exact", 0.0, measure(lambda q: flat.search(q[None, :], k)[1][0].tolist(), queries, exact, k, min(args.samples, 2000)))

    nlist = max(1, int(round(np.sqrt(len(docs)))))
    t = time.time()
    quantiser = faiss.IndexFlatIP(docs.shape[1])
    ivf = faiss.IndexIVFFlat(quantiser, docs.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.train(docs)
    ivf.add(docs)
    build = time.time() - t
    for nprobe in (1, 2, 4, 8, 16, 32, 64):
        ivf.nprobe = nprobe
        row("faiss IVFFlat", f"{nlist} lists, nprobe {nprobe}", build, measure(lambda q: ivf.search(q[None, :], k)[1][0].tolist(), queries, exact, k, args.samples))

    t = time.time()
    hnsw = faiss.IndexHNSWFlat(docs.shape[1], 16, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = 128
    hnsw.add(docs)
    build = time.time() - t
    for ef in (16, 32, 64, 128, 256):
        hnsw.hnsw.efSearch = ef
        row("faiss HNSW M=16", f"efSearch {ef}", build, measure(lambda q: hnsw.search(q[None, :], k)[1][0].tolist(), queries, exact, k, args.samples))

    t = time.time()
    h = hnswlib.Index(space="ip", dim=docs.shape[1])
    h.init_index(max_elements=len(docs), M=16, ef_construction=200, random_seed=7)
    h.add_items(docs, np.arange(len(docs)), num_threads=os.cpu_count() or 1)
    build = time.time() - t
    h.set_num_threads(1)
    for ef in (16, 32, 64, 128, 256):
        h.set_ef(max(ef, k))
        row("hnswlib M=16", f"ef {ef}", build, measure(lambda q: h.knn_query(q, k=k)[0][0].tolist(), queries, exact, k, args.samples))

    with open(args.out, "w") as f:
        json.dump({"base": args.base, "queries": args.queries, "k": k, "rows": rows}, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
