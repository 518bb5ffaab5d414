//! The ranking flags `search` and `quality` share: one field, or a fusion of streams.

use anyhow::{Context, bail};
use clap::Args;
use heddle::fusion::{DEFAULT_RRF_K, Rrf};
use heddle::{Bm25Params, Field};

use crate::quality::{self, Combine, Retrieval};

#[derive(Debug, Args)]
pub struct RankingArgs {
    /// The field a single stream scores: flat, or title / text on an index built with
    /// --per-field.
    #[arg(long, default_value = "flat", conflicts_with = "fuse")]
    pub field: String,
    /// Fuse these streams with reciprocal rank fusion: a comma-separated list of
    /// FIELD[:K1:B], e.g. flat,title,text or flat,flat:1.2:0.75 (K1 from 0 to 1000, B from
    /// 0 to 1, as --k1 and --b).
    #[arg(long)]
    pub fuse: Option<String>,
    /// How fused streams combine: rrf (reciprocal rank fusion), sum (weighted sum of
    /// BM25 scores; `--fuse title,text --combine sum` is Anserini's multifield baseline),
    /// or minmax / zscore (weighted sum of each stream's scores normalised over its
    /// results, for streams on different scales).
    #[arg(long, default_value = "rrf", requires = "fuse")]
    pub combine: String,
    /// One weight per fused stream; all 1 by default.
    #[arg(long, requires = "fuse")]
    pub weights: Option<String>,
    /// RRF's k: a document at rank r of a stream earns weight / (k + r).
    #[arg(long, default_value_t = DEFAULT_RRF_K, requires = "fuse")]
    pub rrf_k: f64,
    /// How many results of each stream are fused, from 1 to 4294967295 (default: 1000 with
    /// rrf, or the results asked for if more, so that a fused score does not change with
    /// --k; every matching document with sum); a stream never yields more than the
    /// index's live documents.
    #[arg(long, requires = "fuse")]
    pub depth: Option<u64>,
}

impl RankingArgs {
    /// How one query's ranked list is produced, keeping `hits` results.
    pub fn retrieval(
        &self,
        bm25: Bm25Params,
        hits: usize,
        remove_query: bool,
    ) -> anyhow::Result<Retrieval> {
        if hits == 0 {
            bail!("at least one hit must be asked for");
        }
        let depth = self.depth.map(|d| result_count("--depth", d)).transpose()?;
        let Some(fuse) = &self.fuse else {
            let field = Field::parse(&self.field)?;
            return Ok(Retrieval::single(field, bm25, hits, remove_query));
        };
        let streams = quality::parse_streams(fuse)?;
        let weights = match &self.weights {
            Some(w) => quality::parse_weights(w, streams.len())?,
            None => vec![1.0; streams.len()],
        };
        let combine = Combine::parse(&self.combine).context("--combine")?;
        Ok(Retrieval {
            streams,
            weights,
            combine,
            rrf: Rrf {
                k: self.rrf_k,
                depth,
            },
            bm25,
            hits,
            remove_query,
        })
    }
}

/// The most results a command may ask for (`--k`, `--hits`, `--depth`): doc ids are u32,
/// so no index holds more documents. Searches clamp any count to the live documents
/// anyway; this refuses a number that can only be a mistake.
pub(super) const MAX_RESULTS: u64 = u32::MAX as u64;

/// A user's count of results, checked: at least 1 and at most [`MAX_RESULTS`].
pub(super) fn result_count(flag: &str, n: u64) -> anyhow::Result<usize> {
    if n == 0 {
        bail!("{flag} 0 asks for no hits: give 1 or more");
    }
    if n > MAX_RESULTS {
        bail!(
            "{flag} {n} is more than any index can hold (at most {MAX_RESULTS}: document ids are 32-bit)"
        );
    }
    usize::try_from(n).with_context(|| format!("{flag} {n} does not fit this machine's memory"))
}

/// `--k1` and `--b`, checked by the engine's own rule (finite, k1 from 0 to 1000, b from 0
/// to 1), so that a bad value is refused before the index is opened.
pub(super) fn bm25_flags(k1: f64, b: f64) -> anyhow::Result<Bm25Params> {
    Bm25Params::new(k1, b).with_context(|| format!("--k1 {k1:?} --b {b:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_counts_are_refused_outside_one_to_u32_max() {
        assert_eq!(result_count("--k", 1).unwrap(), 1);
        assert_eq!(result_count("--k", MAX_RESULTS).unwrap(), u32::MAX as usize);
        let zero = result_count("--k", 0).unwrap_err().to_string();
        assert_eq!(zero, "--k 0 asks for no hits: give 1 or more");
        let big = result_count("--depth", u64::MAX).unwrap_err().to_string();
        assert!(
            big.starts_with("--depth 18446744073709551615 is more than"),
            "{big}"
        );
    }
}
