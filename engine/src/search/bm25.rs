//! Okapi BM25 with the Robertson–Sparck Jones IDF made non-negative:
//!
//! `score(d) = Σ_t qtf(t) · idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))`,
//! `idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))`.
//!
//! `N` and `df` are totals over every segment of the snapshot, `dl` is the document's
//! exact flat length (heddle does not quantize lengths), `avgdl` the snapshot's mean.

use crate::error::{Error, Result};
use crate::postings::{BlockBound, Interp};

/// BM25's free parameters, chosen per query. Build them with [`Bm25Params::new`] to have
/// them checked at once; [`Searcher::search`](crate::Searcher::search) checks them anyway.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    /// Term-frequency saturation, in `0..=`[`Bm25Params::MAX_K1`].
    pub k1: f64,
    /// Length normalisation, in `0..=1`.
    pub b: f64,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params { k1: 1.2, b: 0.75 }
    }
}

impl Bm25Params {
    /// The largest k1 accepted. A term's score is at most `qtf · idf · (k1 + 1)` and idf
    /// stays below 45 for any document count a u64 can hold, so every score stays finite
    /// by a huge margin (k1 = 1e308 made them all infinite); useful k1 sit far below it
    /// (tuning grids rarely pass 3).
    pub const MAX_K1: f64 = 1000.0;

    /// Checked parameters: `0 ≤ k1 ≤ MAX_K1` and `0 ≤ b ≤ 1`, NaN and infinities refused.
    pub fn new(k1: f64, b: f64) -> Result<Self> {
        let params = Bm25Params { k1, b };
        params.validate()?;
        Ok(params)
    }

    /// Refuses parameters that would make a score infinite or NaN, or break the pruning
    /// bounds (which assume a score grows with tf and shrinks with length).
    pub fn validate(&self) -> Result<()> {
        // `contains` is false for NaN, and the ranges are finite, so this refuses both.
        if !(0.0..=Self::MAX_K1).contains(&self.k1) {
            return Err(Error::InvalidArgument(format!(
                "BM25 k1 must be a number from 0 to {} (got {:?})",
                Self::MAX_K1,
                self.k1
            )));
        }
        if !(0.0..=1.0).contains(&self.b) {
            return Err(Error::InvalidArgument(format!(
                "BM25 b must be a number from 0 to 1 (got {:?})",
                self.b
            )));
        }
        Ok(())
    }
}

pub(crate) fn idf(doc_count: u64, df: u64) -> f64 {
    let (n, df) = (doc_count as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The per-document part of a term's score, precomputed for one query: only `tf` and
/// `dl` vary per posting.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TermScorer {
    /// qtf · idf · (k1 + 1)
    weight: f64,
    /// k1 · (1 − b)
    k1_const: f64,
    /// k1 · b / avgdl
    k1_per_len: f64,
    /// Where this query's t = k1_per_len / (k1_const + k1_per_len) falls among a block
    /// bound's points (the same for every block: worked out once).
    interp: Interp,
}

impl TermScorer {
    pub(crate) fn new(params: Bm25Params, idf: f64, query_tf: u32, avgdl: f64) -> Self {
        let Bm25Params { k1, b } = params;
        let k1_const = k1 * (1.0 - b);
        let k1_per_len = if avgdl > 0.0 { k1 * b / avgdl } else { 0.0 };
        let scale = k1_const + k1_per_len;
        TermScorer {
            weight: query_tf as f64 * idf * (k1 + 1.0),
            k1_const,
            k1_per_len,
            interp: Interp::at(if scale > 0.0 { k1_per_len / scale } else { 0.0 }),
        }
    }

    #[inline]
    pub(crate) fn score(&self, tf: u32, doc_len: u32) -> f64 {
        let tf = tf as f64;
        let norm = self.k1_const + self.k1_per_len * doc_len as f64;
        self.weight * tf / (tf + norm)
    }

    /// An upper bound on `score` for every posting `bound` covers. `score` is
    /// `w / (1 + α/tf + β·len/tf)` with α = k1(1−b), β = k1·b/avgdl, that is
    /// `w / (1 + (α+β)·((1−t)/tf + t·len/tf))` with t = β/(α+β); the block bound gives a
    /// lower bound of the minimum of that last factor (see [`BlockBound`]). Used by
    /// pruning, whose comparisons carry a relative margin for rounding.
    #[inline]
    pub(crate) fn bound(&self, bound: BlockBound) -> f64 {
        self.bound_from_h(bound.h(self.interp))
    }

    /// [`Self::bound`] from the block's `h` at [`Self::interp`] (`f64::INFINITY` for an
    /// empty block: 0).
    #[inline]
    pub(crate) fn bound_from_h(&self, h: f64) -> f64 {
        if h == f64::INFINITY {
            return 0.0; // past the end of a list: nothing scores
        }
        self.weight / (1.0 + (self.k1_const + self.k1_per_len) * h)
    }

    /// Where this query's t falls among a block bound's points.
    #[inline]
    pub(crate) fn interp(&self) -> Interp {
        self.interp
    }
}
