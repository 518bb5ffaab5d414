//! The agreement check: before anything is timed, every query runs on both engines and
//! their top-k external ids are compared. Two engines that return different documents
//! are not answering the same question, and their speeds are not comparable.
//!
//! A query's top k can differ for a reason that is no disagreement: documents tied in
//! score at the cut, which each engine orders by its own internal doc id. tantivy makes
//! such ties common, since it stores each document's length in one byte (exact to 40
//! tokens, then steps of 2, 4, 8, … — under 1/8 of the length), so documents whose
//! lengths share a step and whose term frequencies match score identically; heddle
//! keeps the exact length. A query is therefore classed as
//!
//! - **identical**: the same set of ids in the top k;
//! - **tie at the cut**: the sets differ, but in one engine's own scores every id in the
//!   difference scores exactly that engine's k-th score, so that engine could have
//!   returned the other's set by breaking its ties the other way;
//! - **length code**: the sets differ beyond ties, and a reference BM25
//!   ([`crate::reference`]) reproduces, for every document in either top k, heddle's
//!   score from the exact length and tantivy's from its one-byte length code: both
//!   engines computed the same function of the same tokens, and the one-byte length is
//!   the whole difference (set by [`explain`]);
//! - **differs**: anything else (shown, with both engines' scores).
//!
//! The agreement figure is (identical + tied) / queries. Matched analysis passes when at
//! least [`MATCHED_THRESHOLD`] of the queries are identical, tied at the cut, or shown
//! to differ by the length code alone (docs/DECISIONS.md says why the last counts).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::engines::ScoredHit;

/// The share of queries that must agree in matched mode.
pub const MATCHED_THRESHOLD: f64 = 0.95;

/// Scores within this relative distance are the same score (tantivy scores in f32 and may
/// sum a document's terms in another order than its neighbour's).
pub const TIE_TOLERANCE: f64 = 1e-6;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Identical,
    TieAtCut,
    LengthCode,
    Differs,
}

/// A document in either engine's top k of a query that is not identical, with each
/// engine's rank (1-based) and score where its deep list holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocScores {
    pub id: String,
    pub rank_a: Option<usize>,
    pub score_a: Option<f64>,
    pub rank_b: Option<usize>,
    pub score_b: Option<f64>,
}

/// One query's comparison.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueryAgreement {
    pub query_id: String,
    pub query: String,
    /// Ids in both top-k sets.
    pub overlap: usize,
    pub k: usize,
    pub class: Class,
    /// Relative score difference (|a − b| / a) between the engines, for the ids in both
    /// top-k sets: the largest.
    pub max_score_diff: Option<f64>,
    /// For a query that is not identical: both engines' top k, with scores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tops: Option<(Vec<ScoredHit>, Vec<ScoredHit>)>,
    /// For a query that is not identical: every id in either top k, with both engines'
    /// ranks and scores from their deep lists.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub docs: Vec<DocScores>,
}

/// The whole check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgreementReport {
    pub engines: (String, String),
    pub k: usize,
    /// How deep each engine was asked, to find the other's ids among its ties.
    pub depth: usize,
    pub queries: usize,
    pub identical: usize,
    pub tie_at_cut: usize,
    /// Shown by the reference BM25 to differ by tantivy's length code alone.
    #[serde(default)]
    pub length_code: usize,
    pub differs: usize,
    /// (identical + tie at the cut) / queries: the agreement figure.
    pub agreeing: f64,
    /// (identical + tie at the cut + length code) / queries: what the gate reads.
    #[serde(default)]
    pub agreeing_explained: f64,
    /// Mean over queries of overlap / k.
    pub mean_overlap: f64,
    /// Median and largest relative score difference over ids in both top-k sets.
    pub score_diff_median: Option<f64>,
    pub score_diff_max: Option<f64>,
    /// Whether the reference BM25 was run on the queries that differ ([`explain`]):
    /// always in matched analysis; in native analysis only where one engine's tokens
    /// can stand for both (against Lucene, heddle's `lucene-english`).
    #[serde(default)]
    pub length_code_checked: bool,
    pub per_query: Vec<QueryAgreement>,
}

impl AgreementReport {
    /// Whether enough queries agree, counting those that differ by the length code alone.
    pub fn passes(&self, threshold: f64) -> bool {
        self.agreeing_explained >= threshold
    }

    /// The gate before anything is timed: passes at `threshold` (`None`: the agreement is
    /// reported, never required), or, failing, goes on with a warning under
    /// `allow_disagreement` and otherwise stops with the share of queries that differ
    /// unexplained.
    pub fn require(&self, threshold: Option<f64>, allow_disagreement: bool) -> anyhow::Result<()> {
        let Some(threshold) = threshold.filter(|&t| !self.passes(t)) else {
            return Ok(());
        };
        let (a, b) = &self.engines;
        if allow_disagreement {
            eprintln!(
                "{a} and {b} DISAGREE; going on because of --allow-disagreement: the figures below are not a speed comparison"
            );
            return Ok(());
        }
        anyhow::bail!(
            "{a} and {b} disagree on {:.1}% of the queries (at most {:.0}% may): not a speed comparison; see the exceptions above (--allow-disagreement to time them anyway)",
            100.0 * (1.0 - self.agreeing_explained),
            100.0 * (1.0 - threshold)
        )
    }

    fn recount(&mut self) {
        let count = |c: Class| self.per_query.iter().filter(|q| q.class == c).count();
        self.identical = count(Class::Identical);
        self.tie_at_cut = count(Class::TieAtCut);
        self.length_code = count(Class::LengthCode);
        self.differs = count(Class::Differs);
        let n = self.queries.max(1) as f64;
        if self.queries == 0 {
            (self.agreeing, self.agreeing_explained) = (1.0, 1.0);
        } else {
            self.agreeing = (self.identical + self.tie_at_cut) as f64 / n;
            self.agreeing_explained =
                (self.identical + self.tie_at_cut + self.length_code) as f64 / n;
        }
    }
}

/// Reclassifies every query that differs as [`Class::LengthCode`] where `reproduces`
/// says the reference BM25 gives both engines' scores for all of its documents.
pub fn explain(report: &mut AgreementReport, mut reproduces: impl FnMut(&QueryAgreement) -> bool) {
    report.length_code_checked = true;
    for q in report.per_query.iter_mut() {
        if q.class == Class::Differs && reproduces(q) {
            q.class = Class::LengthCode;
        }
    }
    report.recount();
}

fn doc_scores(a: &[ScoredHit], b: &[ScoredHit], k: usize) -> Vec<DocScores> {
    let mut ids: Vec<&str> = Vec::new();
    for h in a.iter().take(k).chain(b.iter().take(k)) {
        if !ids.contains(&h.id.as_str()) {
            ids.push(&h.id);
        }
    }
    let find = |l: &[ScoredHit], id: &str| {
        l.iter()
            .position(|h| h.id == id)
            .map(|i| (i + 1, l[i].score))
    };
    ids.into_iter()
        .map(|id| {
            let (ra, sa) = find(a, id).unzip();
            let (rb, sb) = find(b, id).unzip();
            DocScores {
                id: id.to_string(),
                rank_a: ra,
                score_a: sa,
                rank_b: rb,
                score_b: sb,
            }
        })
        .collect()
}

/// Compares two deep result lists (best first, each at least `k` long where the engine
/// matched that many) on their top `k`.
pub fn classify(a: &[ScoredHit], b: &[ScoredHit], k: usize) -> (usize, Class) {
    let top =
        |l: &[ScoredHit]| -> HashSet<String> { l.iter().take(k).map(|h| h.id.clone()).collect() };
    let (ta, tb) = (top(a), top(b));
    let overlap = ta.intersection(&tb).count();
    if ta == tb {
        return (overlap, Class::Identical);
    }
    if explained_by_ties(a, &ta, &tb, k) || explained_by_ties(b, &tb, &ta, k) {
        (overlap, Class::TieAtCut)
    } else {
        (overlap, Class::Differs)
    }
}

/// Whether the engine that produced `list` (top set `mine`) could have returned `theirs`
/// by breaking ties at its k-th score differently: every id in either difference is in
/// `list` with exactly the k-th score.
fn explained_by_ties(
    list: &[ScoredHit],
    mine: &HashSet<String>,
    theirs: &HashSet<String>,
    k: usize,
) -> bool {
    if list.len() < k || mine.len() != theirs.len() {
        return false;
    }
    let cut = list[k - 1].score;
    let at_cut = |id: &String| {
        list.iter()
            .find(|h| &h.id == id)
            .is_some_and(|h| same_score(h.score, cut))
    };
    mine.symmetric_difference(theirs).all(at_cut)
}

fn same_score(a: f64, b: f64) -> bool {
    (a - b).abs() <= TIE_TOLERANCE * a.abs().max(b.abs())
}

/// Relative differences between the two engines' scores for the ids in both top k.
pub fn score_diffs(a: &[ScoredHit], b: &[ScoredHit], k: usize) -> Vec<f64> {
    a.iter()
        .take(k)
        .filter_map(|ha| {
            let hb = b.iter().take(k).find(|h| h.id == ha.id)?;
            (ha.score != 0.0).then(|| (ha.score - hb.score).abs() / ha.score.abs())
        })
        .collect()
}

/// Builds the report from each query's two deep lists.
pub fn report(
    engines: (&str, &str),
    k: usize,
    depth: usize,
    results: Vec<(String, String, Vec<ScoredHit>, Vec<ScoredHit>)>,
) -> AgreementReport {
    let mut per_query = Vec::with_capacity(results.len());
    let mut all_diffs = Vec::new();
    for (query_id, query, a, b) in results {
        let (overlap, class) = classify(&a, &b, k);
        let diffs = score_diffs(&a, &b, k);
        let max_score_diff = diffs.iter().copied().reduce(f64::max);
        all_diffs.extend(diffs);
        let differ = class != Class::Identical;
        let tops = differ.then(|| {
            (
                a.iter().take(k).cloned().collect(),
                b.iter().take(k).cloned().collect(),
            )
        });
        per_query.push(QueryAgreement {
            query_id,
            query,
            overlap,
            k,
            class,
            max_score_diff,
            tops,
            docs: if differ {
                doc_scores(&a, &b, k)
            } else {
                Vec::new()
            },
        });
    }
    let n = per_query.len();
    all_diffs.sort_by(f64::total_cmp);
    let mut report = AgreementReport {
        engines: (engines.0.to_string(), engines.1.to_string()),
        k,
        depth,
        queries: n,
        identical: 0,
        tie_at_cut: 0,
        length_code: 0,
        differs: 0,
        agreeing: 0.0,
        agreeing_explained: 0.0,
        mean_overlap: if n == 0 {
            1.0
        } else {
            per_query
                .iter()
                .map(|q| q.overlap as f64 / k.max(1) as f64)
                .sum::<f64>()
                / n as f64
        },
        score_diff_median: all_diffs
            .get(all_diffs.len().div_ceil(2).saturating_sub(1))
            .copied(),
        score_diff_max: all_diffs.last().copied(),
        length_code_checked: false,
        per_query,
    };
    report.recount();
    report
}

/// The check as text: the headline, the overlap distribution, and every query that is
/// not identical.
pub fn render(r: &AgreementReport, threshold: Option<f64>) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let (a, b) = (&r.engines.0, &r.engines.1);
    let _ = writeln!(
        out,
        "agreement ({a} vs {b}, top {} of {} queries): {} identical, {} tied at the cut → {:.1}% agree",
        r.k,
        r.queries,
        r.identical,
        r.tie_at_cut,
        100.0 * r.agreeing,
    );
    let verdict = match threshold {
        Some(t) if r.passes(t) => format!("≥ {:.0}% required: PASS", 100.0 * t),
        Some(t) => format!("≥ {:.0}% required: FAIL", 100.0 * t),
        None => "no threshold: the engines analyse text differently".to_string(),
    };
    match threshold {
        _ if threshold.is_some() || r.length_code_checked => {
            let _ = writeln!(
                out,
                "  of the rest, {} differ by {b}'s one-byte length code alone (reference BM25 reproduces both engines' scores), {} differ otherwise → {:.1}% explained ({verdict})",
                r.length_code,
                r.differs,
                100.0 * r.agreeing_explained,
            );
        }
        // The reference BM25 scores one token stream for both engines: without one it
        // is not run, and a difference is not split into length code and analysis.
        _ => {
            let _ = writeln!(
                out,
                "  the other {} differ, by analysis or by {b}'s one-byte length code (not told apart: the reference BM25 needs one token stream for both) ({verdict})",
                r.queries - r.identical - r.tie_at_cut,
            );
        }
    }
    let mut by_overlap = vec![0usize; r.k + 1];
    for q in &r.per_query {
        by_overlap[q.overlap.min(r.k)] += 1;
    }
    let dist: Vec<String> = (0..=r.k)
        .rev()
        .filter(|&o| by_overlap[o] > 0)
        .map(|o| format!("{o}/{}: {}", r.k, by_overlap[o]))
        .collect();
    let _ = writeln!(
        out,
        "  top-{} overlap per query: {}; mean {:.3}",
        r.k,
        dist.join(", "),
        r.mean_overlap
    );
    if let (Some(med), Some(max)) = (r.score_diff_median, r.score_diff_max) {
        let _ = writeln!(
            out,
            "  scores of ids in both top {}: relative difference median {:.2e}, max {:.2e}",
            r.k, med, max
        );
    }
    for q in r.per_query.iter().filter(|q| q.class != Class::Identical) {
        let _ = writeln!(
            out,
            "  {} query {} ({}/{}): {:?}",
            match q.class {
                Class::TieAtCut => "tie",
                Class::LengthCode => "length code",
                _ => "DIFFERS",
            },
            q.query_id,
            q.overlap,
            q.k,
            q.query
        );
        if let Some((ta, tb)) = &q.tops {
            let only = |x: &[ScoredHit], y: &[ScoredHit]| -> Vec<String> {
                x.iter()
                    .filter(|h| !y.iter().any(|o| o.id == h.id))
                    .map(|h| format!("{} ({:.4})", h.id, h.score))
                    .collect()
            };
            let cut = |x: &[ScoredHit]| x.last().map_or(f64::NAN, |h| h.score);
            let _ = writeln!(
                out,
                "    only {a}: {} [{a}'s cut {:.4}]; only {b}: {} [{b}'s cut {:.4}]",
                only(ta, tb).join(", "),
                cut(ta),
                only(tb, ta).join(", "),
                cut(tb)
            );
        }
    }
    // Within 100 columns: a long line goes on, indented, on the next.
    out.lines()
        .flat_map(heddle_eval::env::render::wrap)
        .map(|l| l + "\n")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_stops_on_unexplained_differences_unless_allowed_or_unrequired() {
        let mut r = report(("heddle", "lucene"), 10, 100, Vec::new());
        // 80% agree strictly, 94% once the length code is counted: below a 95% bar.
        r.agreeing = 0.80;
        r.agreeing_explained = 0.94;
        let error = r.require(Some(0.95), false).unwrap_err().to_string();
        assert!(
            error.contains("heddle and lucene disagree on 6.0% of the queries"),
            "{error}"
        );
        assert!(r.require(Some(0.95), true).is_ok());
        assert!(r.require(None, false).is_ok());
        r.agreeing_explained = 0.95;
        assert!(r.require(Some(0.95), false).is_ok());
    }

    fn hits(v: &[(&str, f64)]) -> Vec<ScoredHit> {
        v.iter()
            .map(|&(id, score)| ScoredHit {
                id: id.to_string(),
                score,
            })
            .collect()
    }

    #[test]
    fn same_sets_in_another_order_are_identical() {
        let a = hits(&[("a", 3.0), ("b", 2.0), ("c", 1.0)]);
        let b = hits(&[("b", 3.1), ("a", 3.0), ("c", 1.0)]);
        assert_eq!(classify(&a, &b, 3), (3, Class::Identical));
    }

    #[test]
    fn a_tie_at_the_cut_in_either_engine_is_not_a_disagreement() {
        // Engine b has c and d tied at its k-th score and kept d; a ranks c above d.
        let a = hits(&[("a", 3.0), ("b", 2.0), ("c", 1.02), ("d", 1.01)]);
        let b = hits(&[("a", 3.0), ("b", 2.0), ("d", 1.0), ("c", 1.0)]);
        assert_eq!(classify(&a, &b, 3), (2, Class::TieAtCut));
        assert_eq!(classify(&b, &a, 3), (2, Class::TieAtCut), "either side");
    }

    #[test]
    fn a_difference_without_a_tie_is_a_disagreement() {
        let a = hits(&[("a", 3.0), ("b", 2.0), ("c", 1.5), ("d", 1.0)]);
        let b = hits(&[("a", 3.0), ("b", 2.0), ("d", 1.5), ("c", 1.0)]);
        assert_eq!(classify(&a, &b, 3), (2, Class::Differs));
        // Tied with the cut but beyond the depth asked: not shown to be a tie.
        let shallow = hits(&[("a", 3.0), ("b", 2.0), ("d", 1.0)]);
        let other = hits(&[("a", 3.0), ("b", 2.0), ("c", 1.0)]);
        assert_eq!(classify(&shallow, &other, 3), (2, Class::Differs));
    }

    #[test]
    fn fewer_matches_than_k_compare_what_matched() {
        let a = hits(&[("a", 1.0)]);
        assert_eq!(classify(&a, &a.clone(), 10), (1, Class::Identical));
        assert_eq!(classify(&a, &[], 10), (0, Class::Differs));
    }

    #[test]
    fn the_report_counts_and_passes_at_the_threshold() {
        let same = hits(&[("a", 2.0), ("b", 1.0)]);
        let mut results: Vec<_> = (0..19)
            .map(|i| (i.to_string(), "q".to_string(), same.clone(), same.clone()))
            .collect();
        results.push((
            "19".into(),
            "q".into(),
            same.clone(),
            hits(&[("a", 2.0), ("z", 1.5)]),
        ));
        let mut r = report(("heddle", "tantivy"), 2, 10, results);
        assert_eq!((r.identical, r.tie_at_cut, r.differs), (19, 0, 1));
        assert!((r.agreeing - 0.95).abs() < 1e-12);
        assert!(r.passes(MATCHED_THRESHOLD));
        let q = &r.per_query[19];
        assert_eq!(q.docs.len(), 3, "a, b and z: {:?}", q.docs);
        let z = q.docs.iter().find(|d| d.id == "z").unwrap();
        assert_eq!((z.rank_a, z.rank_b, z.score_b), (None, Some(2), Some(1.5)));
        assert!((r.mean_overlap - (19.0 + 0.5) / 20.0).abs() < 1e-12);
        let text = render(&r, Some(MATCHED_THRESHOLD));
        assert!(text.contains("95.0% agree"), "{text}");
        assert!(text.contains("DIFFERS query 19"), "{text}");
        assert!(text.contains("only tantivy: z (1.5000)"), "{text}");
        assert!(text.contains("required: PASS"), "{text}");
        // Without a threshold (native analysis) and unexplained, nothing claims the
        // length code.
        let native = render(&r, None);
        assert!(native.contains("the other 1 differ"), "{native}");
        assert!(native.contains("no threshold"), "{native}");
        assert!(!native.contains("length code alone"), "{native}");

        explain(&mut r, |q| q.query_id == "19");
        assert!(r.length_code_checked);
        assert_eq!((r.length_code, r.differs), (1, 0));
        let native = render(&r, None);
        assert!(
            native.contains("1 differ by tantivy's one-byte length code alone"),
            "explained, a native report splits the rest too: {native}"
        );
        assert!(native.contains("no threshold"), "{native}");
        assert!(
            (r.agreeing - 0.95).abs() < 1e-12,
            "the figure counts ties only"
        );
        assert!((r.agreeing_explained - 1.0).abs() < 1e-12);
    }
}
