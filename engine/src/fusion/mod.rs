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

pub use normalized::{Normalization, normalized_sum};
pub use rrf::{DEFAULT_RRF_K, Fused, Rrf, Stream};
pub use sum::{ScoredStream, weighted_sum};
