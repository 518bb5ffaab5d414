//! Bag-of-terms query sets for any corpus: each query mixes frequent, medium and rare terms.

use super::df::{BANDS, DfTable};
use crate::beir::Query;
use crate::synth::{Purpose, Stream};

/// How often each band of [`BANDS`] supplies a term: 30% frequent, 40% medium, 30% rare.
pub const BAND_WEIGHTS: [f64; 3] = [0.3, 0.4, 0.3];

/// Why no query set could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuerySetError {
    /// No term of the corpus falls in any band: the corpus is too small or too uniform.
    #[error(
        "no content word of the corpus has a document frequency in any band (corpus of {})",
        crate::stats::plural(*docs, "document")
    )]
    NoTerms { docs: u64 },
    /// The term count range is empty or starts at zero.
    #[error("term count range {min}..{max} is empty; use e.g. 2..5")]
    BadRange { min: usize, max: usize },
}

/// `count` queries of `min..=max` distinct terms each. Each term's band is drawn by
/// [`BAND_WEIGHTS`] (a band with no terms is skipped), then a term uniformly within it.
/// Ids are `1`, `2`, … Deterministic in `seed`.
pub fn term_queries(
    table: &DfTable,
    count: usize,
    min: usize,
    max: usize,
    seed: u64,
) -> Result<Vec<Query>, QuerySetError> {
    if min == 0 || min > max {
        return Err(QuerySetError::BadRange { min, max });
    }
    let bands: Vec<Vec<(&str, u32)>> = BANDS.iter().map(|b| table.band_terms(b)).collect();
    let weights: Vec<f64> = bands
        .iter()
        .zip(BAND_WEIGHTS)
        .map(|(terms, w)| if terms.is_empty() { 0.0 } else { w })
        .collect();
    let total: f64 = weights.iter().sum();
    if total == 0.0 {
        return Err(QuerySetError::NoTerms { docs: table.docs });
    }
    let available: usize = bands.iter().map(Vec::len).sum();
    let mut queries = Vec::with_capacity(count);
    for q in 0..count {
        let mut s = Stream::new(seed, Purpose::Queries, q as u64);
        let k = (s.between(min as u64, max as u64) as usize).min(available);
        let mut terms: Vec<&str> = Vec::with_capacity(k);
        while terms.len() < k {
            let band = pick_band(&weights, s.uniform() * total);
            let (term, _) = bands[band][s.below(bands[band].len() as u64) as usize];
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
        queries.push(Query::new((q + 1).to_string(), terms.join(" ")));
    }
    Ok(queries)
}

/// The band that `x` (in `[0, sum(weights))`) falls in, never one of weight zero.
pub(crate) fn pick_band(weights: &[f64], mut x: f64) -> usize {
    let mut last = 0;
    for (band, &w) in weights.iter().enumerate() {
        if w > 0.0 {
            if x < w {
                return band;
            }
            x -= w;
            last = band;
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> DfTable {
        let mut terms = Vec::new();
        for i in 0..20 {
            terms.push((format!("freq{i}"), 500));
            terms.push((format!("mid{i}"), 50));
            terms.push((format!("rare{i}"), 5));
        }
        DfTable::new(10_000, terms)
    }

    #[test]
    fn queries_have_the_asked_term_counts_and_mix_bands() {
        let qs = term_queries(&table(), 200, 2, 5, 9).unwrap();
        assert_eq!(qs.len(), 200);
        assert_eq!(qs[0].id, "1");
        let mut seen = [0; 3];
        for q in &qs {
            let terms: Vec<&str> = q.text.split(' ').collect();
            assert!((2..=5).contains(&terms.len()), "{q:?}");
            for t in terms {
                let band = ["freq", "mid", "rare"]
                    .iter()
                    .position(|p| t.starts_with(p))
                    .unwrap();
                seen[band] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n > 100), "{seen:?}");
        assert_eq!(qs, term_queries(&table(), 200, 2, 5, 9).unwrap());
        assert_ne!(qs, term_queries(&table(), 200, 2, 5, 10).unwrap());
    }

    #[test]
    fn pick_band_skips_empty_bands_even_at_the_edge() {
        assert_eq!(pick_band(&[0.3, 0.4, 0.3], 0.0), 0);
        assert_eq!(pick_band(&[0.3, 0.4, 0.3], 0.65), 1);
        assert_eq!(pick_band(&[0.0, 0.4, 0.0], 0.1), 1);
        assert_eq!(pick_band(&[0.3, 0.4, 0.0], 0.7), 1);
    }

    #[test]
    fn errors_for_bad_ranges_and_empty_bands() {
        assert!(matches!(
            term_queries(&table(), 1, 3, 2, 0),
            Err(QuerySetError::BadRange { .. })
        ));
        let empty = DfTable::new(10, vec![("the".into(), 10)]);
        assert!(matches!(
            term_queries(&empty, 1, 1, 2, 0),
            Err(QuerySetError::NoTerms { .. })
        ));
    }
}
