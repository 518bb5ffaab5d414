//! `heddle-eval search`: one query, the top k hits.

use std::path::PathBuf;

use clap::Args;
use heddle::{Bm25Params, Field, Index, SearchOptions};
use serde::Serialize;

#[derive(Debug, Args)]
pub struct SearchArgs {
    #[arg(long)]
    pub index: PathBuf,
    /// Hits to return.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// BM25 term-frequency saturation.
    #[arg(long, default_value_t = 1.2)]
    pub k1: f64,
    /// BM25 length normalisation.
    #[arg(long, default_value_t = 0.75)]
    pub b: f64,
    /// Field to score: flat (title and text together), or title / text on an index built
    /// with --per-field.
    #[arg(long, default_value = "flat")]
    pub field: String,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The query; several words are joined with spaces.
    #[arg(required = true)]
    pub query: Vec<String>,
}

#[derive(Serialize)]
struct JsonHit<'a> {
    rank: usize,
    id: &'a str,
    score: f64,
    title: &'a str,
}

#[derive(Serialize)]
struct JsonResult<'a> {
    query: &'a str,
    k: usize,
    k1: f64,
    b: f64,
    hits: Vec<JsonHit<'a>>,
}

pub fn run(args: &SearchArgs) -> anyhow::Result<()> {
    let index = Index::open(&args.index)?;
    let query = args.query.join(" ");
    let opts = SearchOptions {
        k: args.k,
        bm25: Bm25Params {
            k1: args.k1,
            b: args.b,
        },
        field: Field::parse(&args.field)?,
    };
    let hits = index.searcher().search(&query, &opts)?;
    if args.json {
        let result = JsonResult {
            query: &query,
            k: args.k,
            k1: args.k1,
            b: args.b,
            hits: hits
                .iter()
                .enumerate()
                .map(|(i, h)| JsonHit {
                    rank: i + 1,
                    id: &h.id,
                    score: h.score,
                    title: &h.title,
                })
                .collect(),
        };
        println!("{}", serde_json::to_string(&result)?);
    } else {
        if hits.is_empty() {
            println!("no documents match {query:?}");
        }
        for (i, h) in hits.iter().enumerate() {
            println!("{:>3}  {:<24} {:>9.4}  {}", i + 1, h.id, h.score, h.title);
        }
    }
    Ok(())
}
