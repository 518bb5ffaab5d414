//! `heddle-child`: heddle serving one index over the child-engine protocol
//! (`heddle_bench::protocol`), as the Lucene child does, so that heddle through the
//! protocol against Lucene through the protocol is the like-for-like comparison and
//! heddle in-process against heddle through the protocol is what the protocol costs.
//!
//! It searches exactly as the instrument's in-process heddle backend does: a snapshot
//! per request, the engine's default BM25 unless --k1/--b say otherwise.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use heddle::{Bm25Params, Field, Index, SearchOptions};
use heddle_bench::protocol::{self, ChildEngine, ChildStats, Ready};

/// heddle serving an index over the child-engine protocol on stdin/stdout.
#[derive(Parser)]
#[command(name = "heddle-child", version)]
struct Args {
    /// The heddle index.
    #[arg(long)]
    index: PathBuf,
    /// Searching threads (requests answered at once).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// BM25 k1.
    #[arg(long, default_value_t = Bm25Params::default().k1)]
    k1: f64,
    /// BM25 b.
    #[arg(long, default_value_t = Bm25Params::default().b)]
    b: f64,
}

struct Heddle {
    index: Index,
    bm25: Bm25Params,
}

impl ChildEngine for Heddle {
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<(f64, String)>> {
        let opts = SearchOptions {
            k,
            bm25: self.bm25,
            ..SearchOptions::default()
        };
        Ok(self
            .index
            .searcher()
            .search(query, &opts)?
            .into_iter()
            .map(|h| (h.score, h.id))
            .collect())
    }

    fn stats(&self, terms: &[String]) -> anyhow::Result<ChildStats> {
        let searcher = self.index.searcher();
        let docs = searcher.num_docs();
        let mut df = Vec::with_capacity(terms.len());
        for t in terms {
            df.push(searcher.doc_freq(Field::Flat, t)?);
        }
        Ok(ChildStats {
            doc_count: docs,
            max_doc: docs,
            total_tokens: 0,
            df,
        })
    }
}

fn run(args: &Args) -> anyhow::Result<()> {
    let started = Instant::now();
    let index = Index::open(&args.index)
        .with_context(|| format!("opening heddle index {}", args.index.display()))?;
    let docs = index.searcher().num_docs();
    let ready = Ready {
        engine: "heddle".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        docs,
        open_ns: started.elapsed().as_nanos() as u64,
    };
    let engine = Heddle {
        index,
        bm25: Bm25Params {
            k1: args.k1,
            b: args.b,
        },
    };
    let stdin = std::io::stdin().lock();
    protocol::serve(&engine, &ready, args.threads, stdin, std::io::stdout())
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("heddle-child: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
