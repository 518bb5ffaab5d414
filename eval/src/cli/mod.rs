//! The `heddle-eval` command line. Each subcommand lives in its own file.

mod add;
mod check;
mod compare_runs;
mod crash_writer;
mod delete;
pub(crate) mod display;
#[cfg(feature = "embed")]
mod embed;
mod feed;
mod index;
mod merge;
mod quality;
pub(crate) mod ranking;
pub use ranking::encoder_by_name;
mod read_loop;
mod search;
mod serve;

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
    /// Search an index with BM25: one query, or a topics file into a TREC run.
    Search(search::SearchArgs),
    /// Delete documents by external id, in one commit.
    Delete(delete::DeleteArgs),
    /// Merge segments now (deleted documents are purged).
    Merge(merge::MergeArgs),
    /// Open-loop latency ladder: p50/p99/p99.9, shed, RSS, faults per rung.
    Bench(crate::bench::BenchArgs),
    /// Verify every checksum and structure of an index; say what is damaged.
    Check(check::CheckArgs),
    /// Test helper: commit numbered batches forever (for kill -9 tests).
    #[command(hide = true)]
    CrashWriter(crash_writer::CrashWriterArgs),
    /// Test helper: open, reload and search in a loop, counting failures.
    #[command(hide = true)]
    ReadLoop(read_loop::ReadLoopArgs),
    /// nDCG@10 and recall@100 (or -m measures) on judged queries, as trec_eval -c; writes the run.
    Quality(quality::QualityArgs),
    /// Compare two TREC runs query by query: differences with paired bootstrap intervals.
    CompareRuns(compare_runs::CompareRunsArgs),
    /// Serve an index over HTTP: an Elasticsearch `_search`/`_bulk` subset.
    Serve(serve::ServeArgs),
    /// Two builds in matched ABBA runs: per-figure verdicts gated by the noise floor.
    Ab(crate::ab::AbArgs),
    /// Instructions and simulated cache misses per query, per class (valgrind's callgrind).
    Cost(crate::cost::CostArgs),
    /// Encode a BEIR corpus and queries with all-MiniLM-L6-v2 into vectors files
    /// (cached, resumable).
    #[cfg(feature = "embed")]
    Embed(embed::EmbedArgs),
}

/// The most threads any flag may ask for (`--threads` of every command, `--commit-threads`):
/// far above any machine this runs on (more threads than cores only add memory and
/// switches), low enough that a typo (100000) is refused instead of spawning thousands.
/// The engine's writer has the same bound (`IndexWriter::set_threads`).
pub const MAX_THREADS: usize = 1024;

/// clap's parser for a thread count: 0 to [`MAX_THREADS`], refused by name beyond.
pub fn thread_count() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(0..=MAX_THREADS as u64)
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Index(args) => index::run(&args),
        Command::Add(args) => add::run(&args),
        Command::Search(args) => search::run(&args),
        Command::Delete(args) => delete::run(&args),
        Command::Merge(args) => merge::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Bench(args) if args.writes => {
            crate::bench::writes::run(&args, &crate::bench::engines_for(&args)?).map(drop)
        }
        Command::Bench(args) => {
            crate::bench::run(&args, &crate::bench::engines_for(&args)?).map(drop)
        }
        Command::CrashWriter(args) => crash_writer::run(&args),
        Command::ReadLoop(args) => read_loop::run(&args),
        Command::Quality(args) => quality::run(&args),
        Command::CompareRuns(args) => compare_runs::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Ab(args) => crate::ab::run(&args).map(drop),
        Command::Cost(args) => crate::cost::run(&args),
        #[cfg(feature = "embed")]
        Command::Embed(args) => embed::run(&args),
    }
}

/// What a command needs done before the process has a second thread (`main` calls it
/// right after parsing the command line).
///
/// # Safety
///
/// May write the environment: call it before any other thread of the process exists.
pub unsafe fn before_threads(cli: &Cli) {
    #[cfg(feature = "embed")]
    if let Command::Embed(_) = cli.command {
        // SAFETY: passed on from the caller.
        unsafe { embed::before_threads() };
    }
    let _ = cli;
}

/// Every visible argument of `command`'s subcommands (hidden subcommands included) that
/// has no line of help, as `subcommand --arg`: what a command line's test asserts empty.
pub fn arguments_without_help(command: &clap::Command) -> Vec<String> {
    let mut missing = Vec::new();
    for sub in command.get_subcommands() {
        for arg in sub.get_arguments() {
            if !arg.is_hide_set() && arg.get_help().is_none() {
                missing.push(format!("{} --{}", sub.get_name(), arg.get_id()));
            }
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Flags without a line of help (`add --index`, …): every visible argument of every
    /// subcommand, the hidden test helpers' included, must have one.
    #[test]
    fn every_argument_has_help() {
        let missing = super::arguments_without_help(&super::Cli::command());
        assert!(missing.is_empty(), "without help: {missing:?}");
    }
}
