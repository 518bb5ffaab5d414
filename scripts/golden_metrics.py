#!/usr/bin/env python3
"""Expected figures for eval/tests/metrics_golden.rs, computed by trec_eval's own code.

    python3 -m venv /tmp/venv-te && /tmp/venv-te/bin/pip install pytrec_eval-terrier
    /tmp/venv-te/bin/python scripts/golden_metrics.py \
        eval/tests/data/metrics/case.qrels eval/tests/data/metrics/case.run \
        > eval/tests/data/metrics/expected.tsv

pytrec_eval links trec_eval's C code, so each figure is trec_eval's. Two things are done
here, as `trec_eval -c` does or as trec_eval lacks:
- `-c`: a query of the qrels that the run does not retrieve for scores 0 on every
  measure, and the mean ("all") is over every query of the qrels.
- MRR@k (`recip_rank_cut_k`, not a trec_eval measure): recip_rank when the first
  relevant document is within the first k (recip_rank >= 1/k), else 0. The run is not
  cut or sorted here, so trec_eval's tie order is the only one in play.

Output: `measure<TAB>query<TAB>value` lines, value in Python's shortest round-trip form.
"""

import sys
from importlib.metadata import version

import pytrec_eval

MEASURES = {
    "ndcg_cut.5,10",
    "map",
    "map_cut.5,10",
    "recip_rank",
    "P.5,10",
    "recall.5,10,100",
}
RR_CUTS = (1, 5)


def read_qrels(path):
    qrels = {}
    for line in open(path):
        if line.strip():
            qid, _, doc, rel = line.split()
            qrels.setdefault(qid, {})[doc] = int(rel)
    return qrels


def read_run(path):
    run = {}
    for line in open(path):
        if line.strip():
            qid, _, doc, _rank, score, _tag = line.split()
            run.setdefault(qid, {})[doc] = float(score)
    return run


def main(qrels_path, run_path):
    qrels = read_qrels(qrels_path)
    run = read_run(run_path)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    names = sorted(next(iter(per_query.values())).keys())
    for k in RR_CUTS:
        names.append(f"recip_rank_cut_{k}")
        for values in per_query.values():
            rr = values["recip_rank"]
            values[f"recip_rank_cut_{k}"] = rr if rr >= 1.0 / k else 0.0
    print(f"# pytrec_eval-terrier {version('pytrec_eval-terrier')}, trec_eval -c semantics; "
          f"made by scripts/golden_metrics.py")
    for name in names:
        total = 0.0
        for qid in sorted(qrels):
            value = per_query.get(qid, {}).get(name, 0.0)
            total += value
            print(f"{name}\t{qid}\t{value!r}")
        print(f"{name}\tall\t{total / len(qrels)!r}")


if __name__ == "__main__":
    main(*sys.argv[1:])
