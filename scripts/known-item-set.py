#!/usr/bin/env python3
"""SciFact known-item: a second judged set made from SciFact's corpus alone (issue 32).

Samples N documents (seeded) that have both a title and a text; each sampled title
becomes a query judged relevant (grade 1) to its own document and to no other. The corpus
is every SciFact document with its title removed, so a title never finds itself word for
word: the query class is "an article's title, find its abstract" (short, topical, written
by the abstract's authors, exactly one relevant document). It leaves out what SciFact's
own queries are: claims written by others, with several relevant documents or none
lexically close.

usage: known-item-set.py SCIFACT_DIR OUT_DIR [--count 1000] [--seed 32]
Writes OUT_DIR/corpus.jsonl, OUT_DIR/queries.jsonl, OUT_DIR/qrels/test.tsv (BEIR layout).
"""

import argparse
import json
import os
import random


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scifact")
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=32)
    args = parser.parse_args()

    documents = []
    with open(os.path.join(args.scifact, "corpus.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                documents.append(json.loads(line))
    eligible = [d for d in documents if d.get("title", "").strip() and d.get("text", "").strip()]
    if len(eligible) < args.count:
        raise SystemExit(f"only {len(eligible)} documents have a title and a text")
    chosen = random.Random(args.seed).sample(eligible, args.count)

    os.makedirs(os.path.join(args.out, "qrels"), exist_ok=True)
    with open(os.path.join(args.out, "corpus.jsonl"), "w", encoding="utf-8") as f:
        for d in documents:
            f.write(json.dumps({"_id": d["_id"], "title": "", "text": d.get("text", "")}) + "\n")
    with open(os.path.join(args.out, "queries.jsonl"), "w", encoding="utf-8") as f:
        for d in chosen:
            f.write(json.dumps({"_id": "t" + d["_id"], "text": d["title"].strip()}) + "\n")
    with open(os.path.join(args.out, "qrels", "test.tsv"), "w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for d in chosen:
            f.write(f"t{d['_id']}\t{d['_id']}\t1\n")
    print(
        f"{args.out}: {len(documents)} documents without titles, {args.count} title queries "
        f"(seed {args.seed}) of {len(eligible)} eligible, one relevant document each"
    )


if __name__ == "__main__":
    main()
