//! `heddle-bench`: `heddle-eval bench` with tantivy beside heddle.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use heddle_bench::child::{self, BuildIndexArgs, ServeRssArgs};
use heddle_bench::compare::{self, CompareArgs};
use heddle_bench::peer::LuceneArgs;
use heddle_bench::vectors::child::{VectorsBuildArgs, VectorsServeArgs};
use heddle_bench::vectors::generate::DataArgs;
use heddle_bench::vectors::run::VectorsArgs;
use heddle_bench::{peer, report, scale, vectors};

/// heddle against tantivy with the same open-loop instrument, queries and tokens.
#[derive(Parser)]
#[command(name = "heddle-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Builds (or reuses) both engines' indexes of a BEIR corpus, checks that they agree,
    /// and compares them: build, size, open, a sequential pass, the open-loop ladder
    /// (engines alternating rung by rung) and peak RSS, as heddle/tantivy ratios. Takes
    /// every `heddle-eval bench` flag but --index.
    Bench(Box<CompareArgs>),
    /// heddle against Lucene (a child JVM running bench/lucene/HeddleLucene.java), with
    /// heddle both in this process and in a child over the same line protocol: indexes,
    /// the agreement gate, open times, the sequential pass, the ladder (engines
    /// alternating rung by rung), each engine's memory, and the table with the
    /// like-for-like ratio (heddle-child/lucene) and the protocol's cost. Takes every
    /// `heddle-eval bench` flag but --index.
    Lucene(Box<LuceneArgs>),
    /// Several runs' --compare-json files: every figure and ratio as median [min–max].
    #[command(visible_alias = "summarize")]
    Summarise {
        /// The --compare-json files of the runs to summarise.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// The cost-growth study: comparison runs of one corpus at several sizes, each given
    /// as LABEL=FILE (a --compare-json file; the label says how its indexes were built,
    /// e.g. natural or one), into a table with each engine's growth exponents
    /// (scale.md) and one log–log SVG per family of figures.
    Scale {
        /// LABEL=FILE, one per run.
        #[arg(required = true, value_name = "LABEL=FILE")]
        runs: Vec<String>,
        /// Directory the table and the SVGs are written to.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// heddle's approximate vector search against usearch's HNSW on one vector set: both
    /// indexes built (in processes of their own), each engine's effort swept for recall@k
    /// against brute-force exact search and latency, the two compared at equal recall
    /// (0.90, 0.95, 0.99), then a sequential pass, the open-loop ladder and serving memory
    /// at the settings of --ladder-recall, as heddle/usearch ratios with a recall–QPS
    /// chart. Takes the ladder's `heddle-eval bench` flags (--rates, --fractions,
    /// --samples, --threads, --inflight, --k, --seed, --repeat …).
    Vectors(Box<VectorsArgs>),
    /// Writes a vector set made from a seed (noisy copies of real vectors, or a clustered
    /// mixture) as OUT/base.bin and OUT/queries.bin.
    VectorsData(DataArgs),
    /// Several `vectors` runs' report.json files in one table: each set's recall-matched
    /// settings and ratios, and its build, size and memory ratios.
    VectorsSummary {
        /// The report.json files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// (Internal) builds one engine's index; prints its stats as JSON.
    #[command(hide = true)]
    BuildIndex(BuildIndexArgs),
    /// (Internal) one engine's memory rung; prints its peak RSS as JSON.
    #[command(hide = true)]
    ServeRss(ServeRssArgs),
    /// (Internal) builds one vector engine's index; prints its stats as JSON.
    #[command(hide = true)]
    VectorsBuild(VectorsBuildArgs),
    /// (Internal) one vector engine's memory rung; prints its peak RSS as JSON.
    #[command(hide = true)]
    VectorsServeRss(VectorsServeArgs),
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("heddle-bench: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    // Each engine has its own index under --workdir: the instrument's --index is set by
    // heddle-bench, not by the user.
    // Nor does it drive a server (`heddle-eval bench --target` does): both engines run
    // in its own child processes.
    let command = Cli::command().mut_subcommand("bench", |c| {
        c.mut_arg("index", |a| {
            a.required(false)
                .required_unless_present(clap::builder::Resettable::<clap::Id>::Reset)
                .hide(true)
                .default_value(".")
        })
        .mut_arg("target", |a| a.hide(true))
        .mut_arg("target_field", |a| a.hide(true))
    });
    // `vectors` writes its own request file and keeps each engine's index under its
    // workdir; the text-only flags of `heddle-eval bench` do not apply to it.
    let command = command.mut_subcommand("vectors", |c| {
        let c = c
            .mut_arg("index", |a| {
                a.required(false)
                    .required_unless_present(clap::builder::Resettable::<clap::Id>::Reset)
                    .hide(true)
            })
            .mut_arg("queries", |a| {
                a.required(false).hide(true).default_value("requests.tsv")
            });
        [
            "target",
            "target_field",
            "arm",
            "encoder",
            "vector_search",
            "k1",
            "b",
            "engines",
            "baseline",
            "label",
            "json",
            "svg",
            "html",
            "sequential",
            "writes",
            "writes_to_target",
            "rate",
            "write_docs",
            "write_corpus",
            "commit_every",
            "commit_threads",
            "scratch",
        ]
        .into_iter()
        .fold(c, |c, id| c.mut_arg(id, |a| a.hide(true)))
    });
    let command = command.mut_subcommand("lucene", |c| {
        c.mut_arg("index", |a| {
            a.required(false)
                .required_unless_present(clap::builder::Resettable::<clap::Id>::Reset)
                .hide(true)
                .default_value(".")
        })
        .mut_arg("target", |a| a.hide(true))
        .mut_arg("target_field", |a| a.hide(true))
    });
    let matches = command.get_matches();
    if let Some(("vectors", m)) = matches.subcommand() {
        for id in [
            "index",
            "queries",
            "target",
            "arm",
            "engines",
            "json",
            "svg",
            "html",
            "writes",
            "sequential",
        ] {
            if m.value_source(id) == Some(ValueSource::CommandLine) {
                bail!(
                    "heddle-bench vectors sets --{} itself (its requests are query numbers, its engines heddle and usearch, its files under --out)",
                    id.replace('_', "-")
                );
            }
        }
    }
    if let Some(("bench", m)) = matches.subcommand() {
        if m.value_source("index") == Some(ValueSource::CommandLine) {
            bail!(
                "heddle-bench builds each engine's index from --corpus under --workdir; it takes no --index"
            );
        }
        if m.value_source("target") == Some(ValueSource::CommandLine) {
            bail!(
                "heddle-bench compares engines it runs itself; to drive a search server use \
                 heddle-eval bench --target URL"
            );
        }
    }
    let cli = Cli::from_arg_matches(&matches)?;
    match cli.command {
        Command::Bench(args) if args.open_only => compare::run_open_only(&args),
        Command::Bench(args) if args.bench.writes => compare::run_writes(&args).map(|_| ()),
        Command::Bench(args) => compare::run(&args).map(|_| ()),
        Command::Lucene(args) => peer::run(&args).map(|_| ()),
        Command::Summarise { files } => {
            let runs = files
                .iter()
                .map(|f| report::read(f))
                .collect::<anyhow::Result<Vec<_>>>()?;
            print!("{}", report::render_summary(&runs));
            Ok(())
        }
        Command::Scale { runs, out } => {
            let runs = runs
                .iter()
                .map(|r| scale::ScaleRun::parse(r))
                .collect::<anyhow::Result<Vec<_>>>()?;
            scale::check(&runs)?;
            print!("{}", scale::render(&runs));
            for path in scale::write(&runs, &out)? {
                eprintln!("scale: wrote {}", path.display());
            }
            Ok(())
        }
        Command::Vectors(args) => vectors::run::run(&args).map(|_| ()),
        Command::VectorsData(args) => vectors::generate::run(&args),
        Command::VectorsSummary { files } => {
            let runs = files
                .iter()
                .map(|f| vectors::report::read(f))
                .collect::<anyhow::Result<Vec<_>>>()?;
            print!("{}", vectors::report::render_summary(&runs));
            Ok(())
        }
        Command::VectorsBuild(args) => vectors::child::build(&args),
        Command::VectorsServeRss(args) => vectors::child::serve_rss(&args),
        Command::BuildIndex(args) => child::build_index(&args),
        Command::ServeRss(args) => child::serve_rss(&args),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Issue 17: every visible flag of every command, hidden internal ones included, has a
    /// line of help.
    #[test]
    fn every_argument_has_help() {
        let missing = heddle_eval::cli::arguments_without_help(&super::Cli::command());
        assert!(missing.is_empty(), "without help: {missing:?}");
    }
}
