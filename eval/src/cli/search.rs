//! `heddle-eval search`: one query, the top k hits.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use heddle::{Field, Index, SearchOptions};

use super::display::escape_controls;
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
    /// The query; several words are joined with spaces. Words after `--` are never
    /// options (`search --index I -- -word`). With no words, or `-`, the query is read
    /// from stdin.
    #[arg(conflicts_with = "query_text")]
    pub query: Vec<String>,
    /// The query as one argument, which may start with `-` (`--query -word`).
    #[arg(long = "query", value_name = "TEXT", allow_hyphen_values = true)]
    pub query_text: Option<String>,
}

/// The longest query read from stdin: far beyond any real query, and a bound on what a
/// mistaken pipe (a whole corpus, say) can make the command hold.
const MAX_STDIN_QUERY_BYTES: u64 = 1 << 20;

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
    let query = query_text(args)?;
    let index = Index::open(&args.index)?;
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
            println!(
                "{:>3}  {:<24} {:>9.4}  {}",
                i + 1,
                escape_controls(id),
                score,
                escape_controls(title)
            );
        }
    }
    Ok(())
}

/// The query from `--query`, the words, or stdin (no words, or `-`).
fn query_text(args: &SearchArgs) -> anyhow::Result<String> {
    if let Some(text) = &args.query_text {
        return Ok(text.clone());
    }
    if !(args.query.is_empty() || args.query == ["-"]) {
        return Ok(args.query.join(" "));
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        bail!("no query: give its words, --query TEXT, or pipe it on stdin");
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(MAX_STDIN_QUERY_BYTES + 1)
        .read_to_end(&mut bytes)
        .context("reading the query from stdin")?;
    if bytes.len() as u64 > MAX_STDIN_QUERY_BYTES {
        bail!("the query on stdin is longer than {MAX_STDIN_QUERY_BYTES} bytes");
    }
    String::from_utf8(bytes).context("the query on stdin is not UTF-8")
}
