//! `heddle-eval embed`: all-MiniLM-L6-v2 vectors of a BEIR corpus and its queries, through
//! a cache that a second run reads instead of encoding, and that a killed run resumes.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{ArgGroup, Args};

use crate::embed::{self, Embedded, FillOptions, Input, MiniLm, TextEncoder};
use crate::progress::{plural, thousands};

/// Texts a batch unless told: see docs/DECISIONS.md ("Embedding a corpus") for the
/// measurement behind it.
pub const DEFAULT_BATCH: usize = 1;

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("inputs").required(true).multiple(true).args(["corpus", "queries"])))]
pub struct EmbedArgs {
    /// BEIR directory holding corpus.jsonl (or the file itself): each document is
    /// encoded as its title, a space and its text, trimmed (as BEIR's dense evaluation
    /// does).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Queries to encode too (or alone): BEIR queries.jsonl or TREC topics
    /// (qid<TAB>text); each query's text as it is.
    #[arg(long)]
    pub queries: Option<PathBuf>,
    /// Also write the corpus's vectors here, one {"_id", "vector"} line a document in
    /// corpus order (for `index --vectors`; the cache's own file works too, in another
    /// order).
    #[arg(long, value_name = "FILE", requires = "corpus")]
    pub out: Option<PathBuf>,
    /// Also write the queries' vectors here, in query order (for `search --query-vectors`).
    #[arg(long, value_name = "FILE", requires = "queries")]
    pub queries_out: Option<PathBuf>,
    /// The embeddings cache's root: each input gets a directory below it named by the
    /// sha256 of its texts and of the model [default: $XDG_CACHE_HOME/heddle/embeddings,
    /// else ~/.cache/heddle/embeddings].
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Worker threads, each encoding a batch at a time on one core (0: one per core; at
    /// most 1024).
    #[arg(long, default_value_t = 0, value_parser = crate::cli::thread_count())]
    pub threads: usize,
    /// Texts encoded together (similar lengths side by side, each padded to the longest).
    #[arg(long, default_value_t = DEFAULT_BATCH)]
    pub batch: usize,
    /// While this file exists, workers wait before their next batch (e.g.
    /// /tmp/quiet-please, for sharing the machine with someone measuring).
    #[arg(long, value_name = "FILE")]
    pub pause_while: Option<PathBuf>,
    /// The model: minilm (all-MiniLM-L6-v2 in f32) or minilm-int8 (its linear layers in
    /// int8, opt-in). Each has its own cache directory: int8 vectors are never read as
    /// f32 ones, nor the other way round.
    #[arg(long, value_parser = ["minilm", "minilm-int8"], default_value = "minilm")]
    pub encoder: String,
    /// Seconds between two progress lines on stderr.
    #[arg(long, default_value_t = 10)]
    pub progress_secs: u64,
}

pub fn run(args: &EmbedArgs) -> anyhow::Result<()> {
    if args.batch == 0 {
        anyhow::bail!("--batch must be at least 1");
    }
    crate::allocator::keep_freed_memory();
    for (p, flag) in [(&args.out, "--out"), (&args.queries_out, "--queries-out")] {
        if let Some(p) = p {
            crate::output::check_file(p, flag)?;
        }
    }
    let root = match &args.cache {
        Some(dir) => dir.clone(),
        None => embed::default_cache_root()?,
    };
    let threads = match args.threads {
        0 => std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        n => n,
    };
    let options = FillOptions {
        threads,
        batch: args.batch,
        pause_while: args.pause_while.clone(),
        progress_every: Duration::from_secs(args.progress_secs),
        ..FillOptions::default()
    };
    let started = std::time::Instant::now();
    let precision = embed::minilm_precision(&args.encoder).with_context(|| {
        format!(
            "--encoder {:?}: expected minilm or minilm-int8",
            args.encoder
        )
    })?;
    let encoder = MiniLm::load(precision)?;
    crate::note!(
        "embed: model loaded in {:.2} s: {}",
        started.elapsed().as_secs_f64(),
        encoder.identity().name
    );
    let say = |line: &str| crate::note!("{line}");
    // Queries first: a query set is small, and its vectors are useful before a long
    // corpus is done.
    let jobs = [
        (
            args.queries.clone().map(Input::Queries),
            args.queries_out.as_deref(),
        ),
        (args.corpus.clone().map(Input::Corpus), args.out.as_deref()),
    ];
    for (input, out) in jobs {
        let Some(input) = input else { continue };
        let done = embed::embed(&input, &encoder, &root, &options, out, &say)?;
        print_summary(&input, &done, threads, args.batch)?;
        if let Some(out) = out {
            crate::outln!("  written in input order to {}", out.display());
        }
    }
    Ok(())
}

fn print_summary(
    input: &Input,
    done: &Embedded,
    threads: usize,
    batch: usize,
) -> anyhow::Result<()> {
    let noun = input.noun();
    if done.fill.encoded == 0 {
        crate::outln!(
            "{}: {} {noun}, all from the cache",
            input.path().display(),
            thousands(done.items as u64)
        );
    } else {
        crate::outln!(
            "{}: {} {noun}, {} encoded now ({} from the cache) in {:.1} s: {:.2} {noun}/s \
             ({threads} threads, batch {batch}{})",
            input.path().display(),
            thousands(done.items as u64),
            thousands(done.fill.encoded),
            thousands(done.cached as u64),
            done.fill.seconds,
            done.fill.encoded as f64 / done.fill.seconds.max(1e-9),
            if done.fill.paused_seconds > 0.0 {
                format!(", {:.0} s paused not counted", done.fill.paused_seconds)
            } else {
                String::new()
            }
        );
    }
    crate::outln!(
        "  vectors: {} ({})",
        done.vectors.display(),
        plural(done.items as u64, "line")
    );
    Ok(())
}

/// What `embed` needs set before any thread exists: candle's kernels on one thread each
/// (every worker is one busy thread).
///
/// # Safety
///
/// Writes the environment: call it before any other thread of the process exists.
pub unsafe fn before_threads() {
    // SAFETY: the caller promises no other thread exists.
    unsafe { heddle_encoder::set_kernel_threads(NonZeroUsize::MIN) };
}
