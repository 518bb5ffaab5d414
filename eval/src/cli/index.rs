//! `heddle-eval index`: a BEIR corpus into a new index.
//!
//! The index is built in a sibling directory and moved into place only when complete, so
//! a malformed corpus or a crash leaves whatever was at `--index` exactly as it was.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use heddle::{AnalyzerConfig, Index, IndexSettings};

use crate::progress::{Progress, thousands};

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// BEIR directory holding corpus.jsonl (or the corpus.jsonl file itself).
    #[arg(long)]
    pub corpus: PathBuf,
    /// Where to create the index.
    #[arg(long)]
    pub index: PathBuf,
    /// Analyzer preset: english (stop words + stemming) or plain (lowercase only).
    #[arg(long, default_value = "english")]
    pub analyzer: String,
    /// Threads used to build segments (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Also index title and text as fields of their own (search --field title|text, fusion).
    #[arg(long)]
    pub per_field: bool,
    /// Drop tokens longer than this many characters (stored in the index; applies to
    /// queries too).
    #[arg(long, default_value_t = heddle::analysis::DEFAULT_MAX_TOKEN_CHARS)]
    pub max_token_chars: usize,
    /// Refuse a document whose title and text exceed this many bytes.
    #[arg(long, default_value_t = heddle::DEFAULT_MAX_DOCUMENT_BYTES)]
    pub max_doc_bytes: usize,
    /// Replace an existing index at --index (only once the new one is complete).
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: &IndexArgs) -> anyhow::Result<()> {
    let mut analyzer = AnalyzerConfig::preset(&args.analyzer)?;
    analyzer.max_token_chars = args.max_token_chars;
    if !args.force && is_non_empty_dir(&args.index)? {
        bail!(
            "{}: exists and is not empty; pass --force to replace it",
            args.index.display()
        );
    }
    let staging = staging_dir(&args.index)?;
    let result = build(args, analyzer, &staging);
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
        return result;
    }
    if args.index.exists() {
        std::fs::remove_dir_all(&args.index)
            .with_context(|| format!("removing the old index at {}", args.index.display()))?;
    }
    std::fs::rename(&staging, &args.index)
        .with_context(|| format!("moving the new index into {}", args.index.display()))?;
    Ok(())
}

fn build(args: &IndexArgs, analyzer: AnalyzerConfig, staging: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut progress = Progress::new("index");
    let index = Index::create(
        staging,
        IndexSettings {
            analyzer,
            per_field: args.per_field,
        },
    )?;
    let mut writer = index.writer()?;
    writer.set_threads(args.threads)?;
    writer.set_max_document_bytes(args.max_doc_bytes);
    let mut reader = heddle_corpus::beir::open_corpus(&args.corpus)?;
    let path = reader.path().to_path_buf();
    while let Some(doc) = reader.next() {
        let doc = doc?;
        let id = doc.id.clone();
        writer
            .add(doc)
            .with_context(|| format!("{}:{}: document {id:?}", path.display(), reader.line()))?;
        progress.tick(|| format!("{} documents read", thousands(writer.buffered() as u64)));
    }
    progress.say(&format!(
        "{} documents read; building the segment",
        thousands(writer.buffered() as u64)
    ));
    let stats = writer.commit()?;
    let seconds = started.elapsed().as_secs_f64();
    let bytes = dir_size(staging)?;
    println!(
        "indexed {} documents, {} terms, {} bytes on disk, {:.2} s, {:.0} documents/s",
        thousands(stats.docs as u64),
        thousands(index.term_count()),
        thousands(bytes),
        seconds,
        stats.docs as f64 / seconds.max(1e-9)
    );
    println!(
        "  analyzer {}, commit phases: analysis {:.2} s, encoding {:.2} s, write {:.2} s, fsync {:.2} s, manifest {:.3} s, publish {:.3} s",
        index.analyzer().config().name,
        stats.analysis.as_secs_f64(),
        stats.encoding.as_secs_f64(),
        stats.write.as_secs_f64(),
        stats.fsync.as_secs_f64(),
        stats.manifest.as_secs_f64(),
        stats.publish.as_secs_f64()
    );
    Ok(())
}

fn is_non_empty_dir(path: &Path) -> anyhow::Result<bool> {
    match std::fs::read_dir(path) {
        Ok(mut entries) => Ok(entries.next().is_some()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            bail!("{}: exists and is not a directory", path.display())
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// A fresh directory beside `index` (same filesystem, so the final rename is atomic).
fn staging_dir(index: &Path) -> anyhow::Result<PathBuf> {
    let name = index
        .file_name()
        .with_context(|| format!("{}: not a directory name", index.display()))?;
    let parent = index
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let staging = parent.join(format!(
        ".{}.building-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    if staging.exists() {
        std::fs::remove_dir_all(&staging)?;
    }
    Ok(staging)
}

pub(crate) fn dir_size(dir: &Path) -> anyhow::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let meta = entry?.metadata()?;
        if meta.is_file() {
            total += meta.len();
        }
    }
    Ok(total)
}
