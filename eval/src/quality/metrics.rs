//! nDCG@k and recall@k as `trec_eval -c -m ndcg_cut.k -m recall.k` computes them.
//!
//! - The ranking is the run's, in trec_eval's order (score descending, ties by document
//!   id descending; see [`super::run`]).
//! - nDCG: the gain of a document is its judged grade when that is above 0, else 0
//!   (unjudged documents and negative grades gain nothing). The discount of rank `r` is
//!   `log2(r + 1)`. The ideal ranking is every judged document with a grade above 0,
//!   best grade first, whether the run retrieved it or not, cut at `k` like the run.
//!   A query whose ideal gain is 0 (no relevant document) scores 0.
//! - recall@k: relevant documents (grade ≥ 1) among the first `k`, over all relevant
//!   documents; 0 for a query with none.
//! - The mean is over every query in the qrels (trec_eval's `-c`): a judged query that
//!   retrieved nothing, or has no relevant document, counts as 0.
//!
//! A worked example (grades: a = 2, b = 1, c = 0; the run ranks c, b, x, a):
//! DCG@10 = 0/log2 2 + 1/log2 3 + 0/log2 4 + 2/log2 5 = 0.631 + 0.861 = 1.492;
//! the ideal ranking a, b gives 2/log2 2 + 1/log2 3 = 2.631; nDCG@10 = 0.5672.

use std::collections::BTreeMap;

use super::run::{Run, RunEntry};

/// Relevance judgments: query id → (document id → grade).
pub type Qrels = BTreeMap<String, BTreeMap<String, i32>>;

/// A per-query measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    NdcgAt(usize),
    RecallAt(usize),
}

/// The measures `quality` and `compare-runs` report: nDCG@10 and recall@100.
pub const METRICS: [Metric; 2] = [Metric::NdcgAt(10), Metric::RecallAt(100)];

impl Metric {
    /// The name people write: `nDCG@10`, `R@100`.
    pub fn label(self) -> String {
        match self {
            Metric::NdcgAt(k) => format!("nDCG@{k}"),
            Metric::RecallAt(k) => format!("R@{k}"),
        }
    }

    /// trec_eval's name: `ndcg_cut_10`, `recall_100`.
    pub fn trec_name(self) -> String {
        match self {
            Metric::NdcgAt(k) => format!("ndcg_cut_{k}"),
            Metric::RecallAt(k) => format!("recall_{k}"),
        }
    }

    /// The measure for one query: `ranked` in trec_eval's order, `judged` its qrels.
    pub fn score(self, ranked: &[RunEntry], judged: &BTreeMap<String, i32>) -> f64 {
        match self {
            Metric::NdcgAt(k) => ndcg_at(ranked, judged, k),
            Metric::RecallAt(k) => recall_at(ranked, judged, k),
        }
    }
}

fn discount(rank_from_zero: usize) -> f64 {
    ((rank_from_zero + 2) as f64).log2()
}

/// nDCG@k with trec_eval's `ndcg_cut` semantics (see the module docs).
pub fn ndcg_at(ranked: &[RunEntry], judged: &BTreeMap<String, i32>, k: usize) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, e)| match judged.get(&e.doc_id) {
            Some(&grade) if grade > 0 => grade as f64 / discount(i),
            _ => 0.0,
        })
        .sum();
    let mut ideal: Vec<i32> = judged.values().copied().filter(|&g| g > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, &g)| g as f64 / discount(i))
        .sum();
    if idcg > 0.0 { dcg / idcg } else { 0.0 }
}

/// recall@k: relevant (grade ≥ 1) documents in the first `k` over all relevant ones.
pub fn recall_at(ranked: &[RunEntry], judged: &BTreeMap<String, i32>, k: usize) -> f64 {
    let relevant = judged.values().filter(|&&g| g >= 1).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = ranked
        .iter()
        .take(k)
        .filter(|e| judged.get(&e.doc_id).is_some_and(|&g| g >= 1))
        .count();
    found as f64 / relevant as f64
}

/// Per-query figures for every query in the qrels, and their means.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub metrics: Vec<Metric>,
    /// Query id → one value per metric, in `metrics` order.
    pub per_query: BTreeMap<String, Vec<f64>>,
}

impl Evaluation {
    /// Queries evaluated (every query in the qrels).
    pub fn queries(&self) -> usize {
        self.per_query.len()
    }

    /// The mean of metric number `m` over every evaluated query (0 if there are none).
    pub fn mean(&self, m: usize) -> f64 {
        if self.per_query.is_empty() {
            return 0.0;
        }
        self.per_query.values().map(|v| v[m]).sum::<f64>() / self.per_query.len() as f64
    }

    /// One metric's per-query values, in query id order.
    pub fn column(&self, m: usize) -> Vec<f64> {
        self.per_query.values().map(|v| v[m]).collect()
    }
}

/// Evaluates `run` against `qrels` as `trec_eval -c` does: every query in the qrels
/// counts, queries of the run without judgments are ignored.
pub fn evaluate(run: &Run, qrels: &Qrels, metrics: &[Metric]) -> Evaluation {
    let per_query = qrels
        .iter()
        .map(|(qid, judged)| {
            let ranked = run.get(qid);
            let values = metrics.iter().map(|m| m.score(ranked, judged)).collect();
            (qid.clone(), values)
        })
        .collect();
    Evaluation {
        metrics: metrics.to_vec(),
        per_query,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(pairs: &[(&str, i32)]) -> BTreeMap<String, i32> {
        pairs.iter().map(|&(d, g)| (d.to_string(), g)).collect()
    }

    fn ranked(ids: &[&str]) -> Vec<RunEntry> {
        ids.iter()
            .enumerate()
            .map(|(i, id)| RunEntry::new(*id, 100.0 - i as f64))
            .collect()
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }

    #[test]
    fn the_worked_example_of_the_module_docs() {
        let j = judged(&[("a", 2), ("b", 1), ("c", 0)]);
        let r = ranked(&["c", "b", "x", "a"]);
        let dcg = 1.0 / 3f64.log2() + 2.0 / 5f64.log2();
        let idcg = 2.0 + 1.0 / 3f64.log2();
        close(ndcg_at(&r, &j, 10), dcg / idcg);
        // pytrec_eval (trec_eval's code) gives 0.5672074169568709 for this run.
        assert!((ndcg_at(&r, &j, 10) - 0.5672074169568709).abs() < 1e-12);
    }

    #[test]
    fn graded_gains_are_linear_not_exponential() {
        // Grade 3 at rank 2, grade 1 at rank 1. Linear: (1 + 3/log2 3) / (3 + 1/log2 3).
        // Exponential gains (2^g − 1) would give (1 + 7/log2 3) / (7 + 1/log2 3).
        let j = judged(&[("hi", 3), ("lo", 1)]);
        let r = ranked(&["lo", "hi"]);
        let l3 = 3f64.log2();
        close(ndcg_at(&r, &j, 10), (1.0 + 3.0 / l3) / (3.0 + 1.0 / l3));
    }

    #[test]
    fn the_ideal_uses_every_judged_relevant_document_cut_at_k() {
        // 12 relevant documents, 2 retrieved at the top: the ideal has 10 gains of 1.
        let pairs: Vec<(String, i32)> = (0..12).map(|i| (format!("r{i}"), 1)).collect();
        let j: BTreeMap<String, i32> = pairs.into_iter().collect();
        let r = ranked(&["r0", "r1"]);
        let idcg: f64 = (0..10).map(|i| 1.0 / ((i + 2) as f64).log2()).sum();
        close(ndcg_at(&r, &j, 10), (1.0 + 1.0 / 3f64.log2()) / idcg);
        close(recall_at(&r, &j, 100), 2.0 / 12.0);
    }

    #[test]
    fn fewer_than_k_results_and_relevant_past_the_cut() {
        let j = judged(&[("a", 1)]);
        // Only 3 results, the relevant one third.
        close(ndcg_at(&ranked(&["x", "y", "a"]), &j, 10), 0.5);
        // The relevant one at rank 11: outside nDCG@10, inside R@100.
        let ids: Vec<String> = (0..10).map(|i| format!("n{i}")).collect();
        let mut r: Vec<&str> = ids.iter().map(String::as_str).collect();
        r.push("a");
        close(ndcg_at(&ranked(&r), &j, 10), 0.0);
        close(recall_at(&ranked(&r), &j, 100), 1.0);
        close(recall_at(&ranked(&r), &j, 10), 0.0);
    }

    #[test]
    fn unjudged_zero_and_negative_grades_gain_nothing() {
        let j = judged(&[("a", 1), ("z", 0), ("neg", -1)]);
        let r = ranked(&["unjudged", "z", "neg", "a"]);
        close(ndcg_at(&r, &j, 10), 1.0 / 5f64.log2());
        close(recall_at(&r, &j, 100), 1.0);
    }

    #[test]
    fn a_query_without_relevant_documents_scores_zero() {
        let j = judged(&[("a", 0), ("b", 0)]);
        let r = ranked(&["a", "b"]);
        assert_eq!(ndcg_at(&r, &j, 10), 0.0);
        assert_eq!(recall_at(&r, &j, 100), 0.0);
    }

    #[test]
    fn ties_are_ranked_by_descending_document_id_whatever_the_input_order() {
        // Equal scores: trec_eval puts "b" before "a". Only "a" is relevant.
        let mut run = Run::new();
        run.insert("q", vec![RunEntry::new("a", 1.0), RunEntry::new("b", 1.0)])
            .unwrap();
        let qrels: Qrels = [("q".to_string(), judged(&[("a", 1)]))].into();
        let e = evaluate(&run, &qrels, &METRICS);
        close(e.mean(0), 1.0 / 3f64.log2());
    }

    #[test]
    fn the_mean_counts_every_judged_query_and_ignores_unjudged_ones() {
        let mut run = Run::new();
        run.insert("q1", ranked(&["a"])).unwrap();
        run.insert("not-judged", ranked(&["a"])).unwrap();
        let qrels: Qrels = [
            ("q1".to_string(), judged(&[("a", 1)])),
            ("q2".to_string(), judged(&[("a", 1)])), // retrieved nothing
            ("q3".to_string(), judged(&[("a", 0)])), // nothing relevant
        ]
        .into();
        let e = evaluate(&run, &qrels, &METRICS);
        assert_eq!(e.queries(), 3);
        close(e.mean(0), 1.0 / 3.0);
        close(e.mean(1), 1.0 / 3.0);
        assert_eq!(e.column(0), [1.0, 0.0, 0.0]);
    }
}
