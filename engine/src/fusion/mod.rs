//! Rank fusion: several ranked lists of the same documents merged into one.
//!
//! Fusion knows nothing about what produced a list (BM25 over one field or another, other
//! parameters, another engine): a stream is only an ordered slice of keys, best first.
//! Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009) scores a key by
//! `Σ_s w_s / (k + rank_s)` over the streams `s` that hold it, `rank_s` counted from 1.
//! [`weighted_sum`] adds the streams' own scores instead (CombSUM), for streams whose
//! scores share a scale; [`normalized_sum`] puts each stream's scores on a common scale
//! first (min-max or z-score), for streams that do not (BM25 beside a cosine).
//!
//! ```
//! use heddle::fusion::{Rrf, Stream};
//! let bm25 = ["d1", "d2", "d3"];
//! let title = ["d3", "d1"];
//! let fused = Rrf::default().fuse(&[Stream::new(&bm25), Stream::new(&title)]).unwrap();
//! // d1: 1/61 + 1/62, d3: 1/63 + 1/61, d2: 1/62
//! let order: Vec<&str> = fused.iter().map(|f| f.key).collect();
//! assert_eq!(order, ["d1", "d3", "d2"]);
//! ```

mod normalized;
mod rrf;
mod sum;

use crate::error::{Error, Result};

/// The largest stream weight: with scores of any stream heddle makes (BM25, or an inner
/// product of vectors of norm at most 1e18) a weighted score stays far below f64's
/// largest value, so no fused score is infinite and no ranking is arbitrary.
pub const MAX_WEIGHT: f64 = 1e6;

/// The largest RRF `k`: beyond it `w / (k + r)` no longer tells neighbouring ranks
/// apart in f64 (at 1e308 every score is the same), and the usual k is 60.
pub const MAX_RRF_K: f64 = 1e6;

/// Each weight finite, 0 to [`MAX_WEIGHT`], and not all of them 0 (a fusion of streams
/// that all contribute nothing would rank nothing and say "no document matches").
pub(crate) fn check_weights(what: &str, weights: impl Iterator<Item = f64>) -> Result<()> {
    let mut any = false;
    let mut positive = false;
    for w in weights {
        any = true;
        if !(w.is_finite() && (0.0..=MAX_WEIGHT).contains(&w)) {
            return Err(Error::InvalidArgument(format!(
                "{what} weights must be finite, 0 to {MAX_WEIGHT:e} (got {w})"
            )));
        }
        positive |= w > 0.0;
    }
    if any && !positive {
        return Err(Error::InvalidArgument(format!(
            "{what} weights are all 0: at least one stream must count"
        )));
    }
    Ok(())
}

pub use normalized::{Normalization, normalized_sum};
pub use rrf::{DEFAULT_RRF_K, Fused, Rrf, Stream};
pub use sum::{ScoredStream, weighted_sum};
