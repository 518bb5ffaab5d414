//! The `heddle-eval` command line. Each subcommand lives in its own file.

mod add;
mod compare_runs;
mod index;
mod quality;
mod search;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "heddle-eval",
    version,
    about = "Index, search and measure heddle"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a new index from a BEIR corpus.
    Index(index::IndexArgs),
    /// Add documents from a JSONL file to an index and commit them.
    Add(add::AddArgs),
    /// Search an index with BM25.
    Search(search::SearchArgs),
    /// nDCG@10 and recall@100 on judged queries (trec_eval -c semantics); writes the run.
    Quality(quality::QualityArgs),
    /// Compare two TREC runs query by query: differences with paired bootstrap intervals.
    CompareRuns(compare_runs::CompareRunsArgs),
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Index(args) => index::run(&args),
        Command::Add(args) => add::run(&args),
        Command::Search(args) => search::run(&args),
        Command::Quality(args) => quality::run(&args),
        Command::CompareRuns(args) => compare_runs::run(&args),
    }
}
