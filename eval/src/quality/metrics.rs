//! The measures of `trec_eval -c`: nDCG@k, MAP (and MAP@k), reciprocal rank (and
//! MRR@k), P@k and recall@k, computed as trec_eval computes them.
//!
//! - The ranking is the run's, in trec_eval's order (score descending, ties by document
//!   id descending; see [`super::run`]).
//! - A document is relevant when its judged grade is at least 1 (trec_eval's default
//!   relevance level); unjudged documents, grade 0 and negative grades are not.
//! - nDCG: the gain of a document is its judged grade when that is above 0, else 0.
//!   The discount of rank `r` is `log2(r + 1)`. The ideal ranking is every judged document
//!   with a grade above 0, best grade first, whether the run retrieved it or not, cut at
//!   `k` like the run. A query whose ideal gain is 0 (no relevant document) scores 0.
//! - AP (`map`): the precision at the rank of each relevant document retrieved, summed,
//!   over all relevant documents (retrieved or not); `map_cut.k` counts only the first
//!   `k` ranks but still divides by all relevant documents.
//! - `recip_rank`: 1 / the rank of the first relevant document. trec_eval has no cut-off
//!   for it; MRR@k (`recip_rank_cut_k`) is `recip_rank` of the run cut at `k` (what
//!   ir_measures calls RR@k).
//! - `P.k`: relevant documents among the first `k` over `k`, however many were retrieved.
//! - `recall.k`: relevant documents among the first `k` over all relevant documents.
//! - Every measure is 0 for a query with no relevant document. The mean is over every
//!   query in the qrels (trec_eval's `-c`): a judged query that retrieved nothing counts
//!   as 0; queries of the run without judgments are ignored.
//!
//! A worked example (grades: a = 2, b = 1, c = 0; the run ranks c, b, x, a):
//! DCG@10 = 0/log2 2 + 1/log2 3 + 0/log2 4 + 2/log2 5 = 0.631 + 0.861 = 1.492;
//! the ideal ranking a, b gives 2/log2 2 + 1/log2 3 = 2.631; nDCG@10 = 0.5672.
//! AP = (1/2 + 2/4) / 2 = 0.5; recip_rank = 1/2; P@2 = 1/2; recall@2 = 1/2.

use std::collections::BTreeMap;

use anyhow::{Context, bail};

use super::run::{Run, RunEntry};

/// Relevance judgments: query id → (document id → grade).
pub type Qrels = BTreeMap<String, BTreeMap<String, i32>>;

/// A per-query measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// `ndcg_cut.k`
    NdcgAt(usize),
    /// `recall.k`
    RecallAt(usize),
    /// `P.k`
    PrecisionAt(usize),
    /// `map` (`None`), or `map_cut.k`
    Map(Option<usize>),
    /// `recip_rank` (`None`), or `recip_rank` of the run cut at `k`
    RecipRank(Option<usize>),
}

/// The measures `quality` and `compare-runs` report without `-m`: nDCG@10 and recall@100.
pub const METRICS: [Metric; 2] = [Metric::NdcgAt(10), Metric::RecallAt(100)];

/// The names [`Metric::parse`] accepts, for help texts and errors.
pub const METRIC_NAMES: &str = "ndcg_cut.K (nDCG@K), map (MAP), map_cut.K (MAP@K), recip_rank (MRR), \
     MRR@K, P.K (P@K), recall.K (R@K)";

impl Metric {
    /// Parses one measure, by its trec_eval name (`ndcg_cut.10`, `ndcg_cut_10`, `map`,
    /// `map_cut.100`, `recip_rank`, `P.10`, `recall.100`) or the name people write
    /// (`nDCG@10`, `MAP`, `MAP@100`, `MRR`, `MRR@10`, `P@10`, `R@100`, `recall@100`).
    pub fn parse(name: &str) -> anyhow::Result<Metric> {
        let name = name.trim();
        // `map` and `recip_rank` take no cut-off, and `recip_rank` has an underscore of
        // its own; the others end in `.K`, `_K` or `@K`.
        let (family, cut) = match name.rfind(['.', '_', '@']) {
            _ if name.eq_ignore_ascii_case("recip_rank") => (name, None),
            Some(split) => (&name[..split], Some(&name[split + 1..])),
            None => (name, None),
        };
        let k = cut
            .map(|c| {
                c.parse::<usize>().ok().filter(|&k| k > 0).with_context(|| {
                    format!("metric {name:?}: cut-off {c:?} is not a whole number ≥ 1")
                })
            })
            .transpose()?;
        let family = family.to_ascii_lowercase();
        let metric = match (family.as_str(), k) {
            ("ndcg_cut" | "ndcg", Some(k)) => Metric::NdcgAt(k),
            ("recall" | "r", Some(k)) => Metric::RecallAt(k),
            ("p", Some(k)) => Metric::PrecisionAt(k),
            ("map", None) => Metric::Map(None),
            ("map_cut" | "map", Some(k)) => Metric::Map(Some(k)),
            ("recip_rank" | "mrr", None) => Metric::RecipRank(None),
            ("recip_rank_cut" | "mrr" | "rr", Some(k)) => Metric::RecipRank(Some(k)),
            _ => bail!("unknown metric {name:?}; known: {METRIC_NAMES}"),
        };
        Ok(metric)
    }

    /// Parses `-m` values: each a comma-separated list of measures, where a bare number
    /// is one more cut-off of the measure before it (trec_eval's `P.5,10`).
    pub fn parse_list<S: AsRef<str>>(values: &[S]) -> anyhow::Result<Vec<Metric>> {
        let mut out: Vec<Metric> = Vec::new();
        for value in values {
            for item in value.as_ref().split(',').filter(|s| !s.trim().is_empty()) {
                let metric = match (item.trim().parse::<usize>(), out.last()) {
                    (Ok(k), Some(&last)) if k > 0 && last.cut().is_some() => last.with_cut(k),
                    _ => Metric::parse(item)?,
                };
                if !out.contains(&metric) {
                    out.push(metric);
                }
            }
        }
        if out.is_empty() {
            bail!("no metric given; known: {METRIC_NAMES}");
        }
        Ok(out)
    }

    fn cut(self) -> Option<usize> {
        match self {
            Metric::NdcgAt(k) | Metric::RecallAt(k) | Metric::PrecisionAt(k) => Some(k),
            Metric::Map(k) | Metric::RecipRank(k) => k,
        }
    }

    fn with_cut(self, k: usize) -> Metric {
        match self {
            Metric::NdcgAt(_) => Metric::NdcgAt(k),
            Metric::RecallAt(_) => Metric::RecallAt(k),
            Metric::PrecisionAt(_) => Metric::PrecisionAt(k),
            Metric::Map(_) => Metric::Map(Some(k)),
            Metric::RecipRank(_) => Metric::RecipRank(Some(k)),
        }
    }

    /// The name people write: `nDCG@10`, `R@100`, `P@10`, `MAP`, `MAP@100`, `MRR@10`.
    pub fn label(self) -> String {
        match self {
            Metric::NdcgAt(k) => format!("nDCG@{k}"),
            Metric::RecallAt(k) => format!("R@{k}"),
            Metric::PrecisionAt(k) => format!("P@{k}"),
            Metric::Map(None) => "MAP".to_string(),
            Metric::Map(Some(k)) => format!("MAP@{k}"),
            Metric::RecipRank(None) => "MRR".to_string(),
            Metric::RecipRank(Some(k)) => format!("MRR@{k}"),
        }
    }

    /// trec_eval's output name: `ndcg_cut_10`, `recall_100`, `P_10`, `map`, `map_cut_100`,
    /// `recip_rank`; MRR@10, which trec_eval lacks, is `recip_rank_cut_10`.
    pub fn trec_name(self) -> String {
        match self {
            Metric::NdcgAt(k) => format!("ndcg_cut_{k}"),
            Metric::RecallAt(k) => format!("recall_{k}"),
            Metric::PrecisionAt(k) => format!("P_{k}"),
            Metric::Map(None) => "map".to_string(),
            Metric::Map(Some(k)) => format!("map_cut_{k}"),
            Metric::RecipRank(None) => "recip_rank".to_string(),
            Metric::RecipRank(Some(k)) => format!("recip_rank_cut_{k}"),
        }
    }

    /// The measure for one query: `ranked` in trec_eval's order, `judged` its qrels.
    pub fn score(self, ranked: &[RunEntry], judged: &BTreeMap<String, i32>) -> f64 {
        match self {
            Metric::NdcgAt(k) => ndcg_at(ranked, judged, k),
            Metric::RecallAt(k) => recall_at(ranked, judged, k),
            Metric::PrecisionAt(k) => precision_at(ranked, judged, k),
            Metric::Map(k) => average_precision(cut(ranked, k), judged),
            Metric::RecipRank(k) => reciprocal_rank(cut(ranked, k), judged),
        }
    }
}

fn cut(ranked: &[RunEntry], k: Option<usize>) -> &[RunEntry] {
    &ranked[..k.map_or(ranked.len(), |k| k.min(ranked.len()))]
}

fn is_relevant(judged: &BTreeMap<String, i32>, doc: &str) -> bool {
    judged.get(doc).is_some_and(|&g| g >= 1)
}

fn relevant_count(judged: &BTreeMap<String, i32>) -> usize {
    judged.values().filter(|&&g| g >= 1).count()
}

/// P@k: relevant documents among the first `k`, over `k`.
pub fn precision_at(ranked: &[RunEntry], judged: &BTreeMap<String, i32>, k: usize) -> f64 {
    let found = ranked
        .iter()
        .take(k)
        .filter(|e| is_relevant(judged, &e.doc_id))
        .count();
    found as f64 / k as f64
}

/// Average precision over every relevant document (0 when there is none).
pub fn average_precision(ranked: &[RunEntry], judged: &BTreeMap<String, i32>) -> f64 {
    let relevant = relevant_count(judged);
    if relevant == 0 {
        return 0.0;
    }
    let mut found = 0usize;
    let mut sum = 0.0;
    for (i, e) in ranked.iter().enumerate() {
        if is_relevant(judged, &e.doc_id) {
            found += 1;
            sum += found as f64 / (i + 1) as f64;
        }
    }
    sum / relevant as f64
}

/// 1 / the rank of the first relevant document (0 when none is retrieved).
pub fn reciprocal_rank(ranked: &[RunEntry], judged: &BTreeMap<String, i32>) -> f64 {
    ranked
        .iter()
        .position(|e| is_relevant(judged, &e.doc_id))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

/// A sum that starts from +0.0: `Iterator::sum` of no `f64` is -0.0, which would print
/// as `-0.0` for a query that retrieved nothing.
fn sum(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, |a, x| a + x)
}

fn discount(rank_from_zero: usize) -> f64 {
    ((rank_from_zero + 2) as f64).log2()
}

/// nDCG@k with trec_eval's `ndcg_cut` semantics (see the module docs).
pub fn ndcg_at(ranked: &[RunEntry], judged: &BTreeMap<String, i32>, k: usize) -> f64 {
    let dcg = sum(ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, e)| match judged.get(&e.doc_id) {
            Some(&grade) if grade > 0 => grade as f64 / discount(i),
            _ => 0.0,
        }));
    let mut ideal: Vec<i32> = judged.values().copied().filter(|&g| g > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg = sum(ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, &g)| g as f64 / discount(i)));
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
        sum(self.per_query.values().map(|v| v[m])) / self.per_query.len() as f64
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

    #[test]
    fn the_other_measures_of_the_worked_example() {
        let j = judged(&[("a", 2), ("b", 1), ("c", 0)]);
        let r = ranked(&["c", "b", "x", "a"]);
        close(average_precision(&r, &j), 0.5);
        close(Metric::Map(Some(2)).score(&r, &j), 0.25);
        close(reciprocal_rank(&r, &j), 0.5);
        assert_eq!(Metric::RecipRank(Some(1)).score(&r, &j), 0.0);
        close(precision_at(&r, &j, 2), 0.5);
        // P@k divides by k even when fewer documents were retrieved.
        close(precision_at(&r, &j, 10), 0.2);
    }

    #[test]
    fn a_query_that_retrieved_nothing_scores_positive_zero() {
        let j = judged(&[("a", 1)]);
        for m in [
            Metric::NdcgAt(10),
            Metric::RecallAt(100),
            Metric::PrecisionAt(5),
            Metric::Map(None),
            Metric::RecipRank(Some(10)),
        ] {
            let v = m.score(&[], &j);
            assert!(v == 0.0 && v.is_sign_positive(), "{m:?}: {v:?}");
        }
        let e = evaluate(&Run::new(), &[("q".to_string(), j)].into(), &METRICS);
        assert!(e.mean(0).is_sign_positive());
        assert_eq!(format!("{:.4} {}", e.mean(0), e.mean(0)), "0.0000 0");
    }

    #[test]
    fn metric_names_parse_as_trec_eval_and_people_write_them() {
        let cases = [
            ("ndcg_cut.10", Metric::NdcgAt(10)),
            ("ndcg_cut_10", Metric::NdcgAt(10)),
            ("nDCG@10", Metric::NdcgAt(10)),
            ("map", Metric::Map(None)),
            ("MAP", Metric::Map(None)),
            ("map_cut.100", Metric::Map(Some(100))),
            ("MAP@100", Metric::Map(Some(100))),
            ("recip_rank", Metric::RecipRank(None)),
            ("MRR", Metric::RecipRank(None)),
            ("MRR@10", Metric::RecipRank(Some(10))),
            ("recip_rank_cut_10", Metric::RecipRank(Some(10))),
            ("P.5", Metric::PrecisionAt(5)),
            ("P@5", Metric::PrecisionAt(5)),
            ("recall.100", Metric::RecallAt(100)),
            ("R@100", Metric::RecallAt(100)),
        ];
        for (name, want) in cases {
            assert_eq!(Metric::parse(name).unwrap(), want, "{name}");
            assert_eq!(Metric::parse(&want.trec_name()).unwrap(), want);
        }
        for bad in ["ndcg", "P.0", "P.x", "bpref", "recall"] {
            assert!(Metric::parse(bad).is_err(), "{bad}");
        }
        // trec_eval's `P.5,10`, repeats and comma lists.
        assert_eq!(
            Metric::parse_list(&["P.5,10", "map,ndcg_cut.10", "P@5"]).unwrap(),
            [
                Metric::PrecisionAt(5),
                Metric::PrecisionAt(10),
                Metric::Map(None),
                Metric::NdcgAt(10)
            ]
        );
        assert!(Metric::parse_list(&["map,10"]).is_err());
    }
}
