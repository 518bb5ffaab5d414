//! The ranking flags `search` and `quality` share: one field, or a fusion of streams.

use anyhow::bail;
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
    /// FIELD[:K1:B], e.g. flat,title,text or flat,flat:1.2:0.75.
    #[arg(long)]
    pub fuse: Option<String>,
    /// How fused streams combine: rrf (reciprocal rank fusion) or sum (weighted sum of
    /// BM25 scores; `--fuse title,text --combine sum` is Anserini's multifield baseline).
    #[arg(long, default_value = "rrf", requires = "fuse")]
    pub combine: String,
    /// One weight per fused stream; all 1 by default.
    #[arg(long, requires = "fuse")]
    pub weights: Option<String>,
    /// RRF's k.
    #[arg(long, default_value_t = DEFAULT_RRF_K, requires = "fuse")]
    pub rrf_k: f64,
    /// How many results of each stream are fused (default: the hits asked for with rrf,
    /// every matching document with sum).
    #[arg(long, requires = "fuse")]
    pub depth: Option<usize>,
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
        let Some(fuse) = &self.fuse else {
            let field = Field::parse(&self.field)?;
            return Ok(Retrieval::single(field, bm25, hits, remove_query));
        };
        let streams = quality::parse_streams(fuse)?;
        let weights = match &self.weights {
            Some(w) => quality::parse_weights(w, streams.len())?,
            None => vec![1.0; streams.len()],
        };
        if self.depth == Some(0) {
            bail!("--depth must be at least 1");
        }
        let combine = match self.combine.as_str() {
            "rrf" => Combine::Rrf,
            "sum" => Combine::Sum,
            other => bail!("--combine {other:?}: expected rrf or sum"),
        };
        Ok(Retrieval {
            streams,
            weights,
            combine,
            rrf: Rrf {
                k: self.rrf_k,
                depth: self.depth,
            },
            bm25,
            hits,
            remove_query,
        })
    }
}
