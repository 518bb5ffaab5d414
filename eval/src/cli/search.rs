//! `heddle-eval search`: one query, the top k hits.

use std::path::PathBuf;

use clap::Args;
use heddle::{Field, Index, SearchOptions};

use super::ranking::{RankingArgs, bm25_flags, result_count};
use serde::Serialize;

#[derive(Debug, Args)]
pub struct SearchArgs {
    #[arg(long)]
    pub index: PathBuf,
    /// Hits to return, from 1 to 4294967295; no search returns more than the index's
    /// live documents (the result heap is clamped to them).
    #[arg(long, default_value_t = 10)]
    pub k: u64,
    /// BM25 term-frequency saturation, from 0 to 1000.
    #[arg(long, default_value_t = 1.2)]
    pub k1: f64,
    /// BM25 length normalisation, from 0 to 1.
    #[arg(long, default_value_t = 0.75)]
    pub b: f64,
    #[command(flatten)]
    pub ranking: RankingArgs,
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
    k: u64,
    k1: f64,
    b: f64,
    hits: Vec<JsonHit<'a>>,
}

pub fn run(args: &SearchArgs) -> anyhow::Result<()> {
    let k = result_count("--k", args.k)?;
    let bm25 = bm25_flags(args.k1, args.b)?;
    let index = Index::open(&args.index)?;
    let query = args.query.join(" ");
    let searcher = index.searcher();
    // (id, score, title); fused rankings carry no titles (they rank ids from several
    // streams).
    let hits: Vec<(String, f64, String)> = if args.ranking.fuse.is_none() {
        let opts = SearchOptions {
            k,
            bm25,
            field: Field::parse(&args.ranking.field)?,
        };
        searcher
            .search(&query, &opts)?
            .into_iter()
            .map(|h| (h.id, h.score, h.title))
            .collect()
    } else {
        let retrieval = args.ranking.retrieval(bm25, k, false)?;
        eprintln!("ranking: {}", retrieval.describe());
        retrieval
            .run_query(&searcher, "", &query)?
            .into_iter()
            .map(|e| (e.doc_id, e.score, String::new()))
            .collect()
    };
    if args.json {
        let result = JsonResult {
            query: &query,
            k: args.k,
            k1: args.k1,
            b: args.b,
            hits: hits
                .iter()
                .enumerate()
                .map(|(i, (id, score, title))| JsonHit {
                    rank: i + 1,
                    id,
                    score: *score,
                    title,
                })
                .collect(),
        };
        println!("{}", serde_json::to_string(&result)?);
    } else {
        if hits.is_empty() {
            println!("no documents match {query:?}");
        }
        for (i, (id, score, title)) in hits.iter().enumerate() {
            println!("{:>3}  {:<24} {:>9.4}  {}", i + 1, id, score, title);
        }
    }
    Ok(())
}
