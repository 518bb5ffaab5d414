//! `heddle-eval index`: a BEIR corpus into an index, new or rebuilt.
//!
//! Building is one commit under the index's writer lock (`IndexWriter::reset`): a new
//! index is created empty and filled by that commit; an existing one (only with
//! `--force`) answers from its old segments until the commit's one manifest replace
//! names only the new ones. A malformed corpus, an error, a crash or a kill leaves the
//! last committed state whole, and the next writer removes the files a crash left.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use heddle::{AnalyzerConfig, Index, IndexSettings, IndexWriter};

use super::MAX_THREADS;
use super::feed::duplicate_id;
use crate::progress::{CommitLines, Progress, plural};
use crate::vectors::DocumentVectors;

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// BEIR directory holding corpus.jsonl (or the corpus.jsonl file itself).
    #[arg(long)]
    pub corpus: PathBuf,
    /// The index directory: absent or empty (created), or an index (with --force).
    /// A symbolic link is resolved once and its target used throughout.
    #[arg(long)]
    pub index: PathBuf,
    /// Analyzer preset: english (stop words + Snowball stemming), lucene-english
    /// (the same with Lucene's Porter stemmer) or plain (lowercase only).
    #[arg(long, default_value = "english")]
    pub analyzer: String,
    /// Threads used to build segments (0: one per core; at most 1024).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Memory budget in MiB for the documents read and the build of their segment:
    /// when they reach it, a segment is written (published with the others by the one
    /// commit at the end) and the memory freed. 0: no budget, one segment.
    #[arg(long, default_value_t = DEFAULT_MEMORY_MB)]
    pub memory_mb: usize,
    /// After the build, merge down to at most this many segments (one merge of adjacent
    /// segments; rankings do not change) and say how long it took. Without it the index
    /// keeps the segments the budget wrote, and later commits merge them by the merge
    /// policy — except an index with --vectors, which is merged into one segment and
    /// gets its vector graph then (built once, not for each segment the budget wrote).
    #[arg(long)]
    pub merge_to: Option<usize>,
    /// Also index title and text as fields of their own (search --field title|text, fusion).
    #[arg(long)]
    pub per_field: bool,
    /// Drop tokens longer than this many characters (stored in the index; applies to
    /// queries too).
    #[arg(long, default_value_t = heddle::analysis::DEFAULT_MAX_TOKEN_CHARS)]
    pub max_token_chars: usize,
    /// Refuse a document whose title and text exceed this many bytes (a line is read no
    /// further than 6 times this plus 64 KiB, the most such a document takes in JSON).
    #[arg(long, default_value_t = heddle::DEFAULT_MAX_DOCUMENT_BYTES)]
    pub max_doc_bytes: usize,
    /// Replace the heddle index at --index, in one commit once the new one is built
    /// (readers see the old index until then). Never replaces anything but an index.
    #[arg(long)]
    pub force: bool,
    /// Document order within each segment: none (the corpus order) or bp (recursive
    /// graph bisection: smaller postings, documents sharing terms in the same blocks;
    /// costs build time). Each segment the memory budget writes is reordered on its own.
    #[arg(long, value_enum, default_value_t = ReorderArg::None)]
    pub reorder: ReorderArg,
    /// With --reorder bp: leave out terms in fewer documents than this.
    #[arg(long, default_value_t = heddle::BpConfig::default().min_df)]
    pub bp_min_df: u32,
    /// With --reorder bp: leave out terms in more than this fraction of the documents.
    #[arg(long, default_value_t = heddle::BpConfig::default().max_df_ratio)]
    pub bp_max_df: f64,
    /// With --reorder bp: swap rounds per bisection at most.
    #[arg(long, default_value_t = heddle::BpConfig::default().max_iterations)]
    pub bp_iterations: u32,
    /// With --reorder bp: parts of at most this many documents are not split.
    #[arg(long, default_value_t = heddle::BpConfig::default().min_partition)]
    pub bp_min_partition: u32,
    /// Store a dense vector with every document, from this JSONL file of
    /// {"_id": "...", "vector": [numbers]} lines (any order; `heddle-eval embed` writes
    /// one). Every document needs exactly one; all have the first one's dimension,
    /// which the index keeps. Search them with `search --query-vectors`.
    #[arg(long, value_name = "FILE")]
    pub vectors: Option<PathBuf>,
}

/// The default of `--memory-mb` (index and add).
pub const DEFAULT_MEMORY_MB: usize = 256;

/// The writer's budget for `--memory-mb` (0: none).
pub(crate) fn memory_budget(memory_mb: usize) -> usize {
    match memory_mb {
        0 => usize::MAX,
        mb => mb.saturating_mul(1 << 20),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReorderArg {
    None,
    Bp,
}

impl IndexArgs {
    fn reorder(&self) -> heddle::Reorder {
        match self.reorder {
            ReorderArg::None => heddle::Reorder::None,
            ReorderArg::Bp => heddle::Reorder::Bp(heddle::BpConfig {
                min_df: self.bp_min_df,
                max_df_ratio: self.bp_max_df,
                max_iterations: self.bp_iterations,
                min_partition: self.bp_min_partition,
                ..heddle::BpConfig::default()
            }),
        }
    }
}

/// Refuses numbers that would be accepted and then do nothing sensible: every check
/// here names the flag.
fn check_numbers(args: &IndexArgs) -> anyhow::Result<()> {
    if args.threads > MAX_THREADS {
        bail!(
            "--threads {}: at most {MAX_THREADS} (0: one per core)",
            args.threads
        );
    }
    if args.merge_to == Some(0) {
        bail!("--merge-to 0: an index with documents has at least one segment; give 1 or more");
    }
    if args.max_token_chars == 0 {
        bail!("--max-token-chars 0 would drop every token; give 1 or more");
    }
    if !(args.bp_max_df > 0.0 && args.bp_max_df <= 1.0) {
        bail!(
            "--bp-max-df {}: a fraction of the documents, above 0 and at most 1",
            args.bp_max_df
        );
    }
    Ok(())
}

pub fn run(args: &IndexArgs) -> anyhow::Result<()> {
    check_numbers(args)?;
    let mut analyzer = AnalyzerConfig::preset(&args.analyzer)?;
    analyzer.max_token_chars = args.max_token_chars;
    // Checked through before anything is created: a bad vectors file costs no build.
    let vectors = match &args.vectors {
        Some(path) => Some(DocumentVectors::open(path, None)?),
        None => None,
    };
    let settings = IndexSettings {
        analyzer,
        per_field: args.per_field,
        vector_dim: vectors.as_ref().map(DocumentVectors::dim),
    };
    let target = resolve_link(&args.index)?;
    warn_of_old_staging(&target);
    let existed = target.exists();
    if existed && !target.is_dir() {
        bail!("{}: exists and is not a directory", args.index.display());
    }
    if !existed {
        // As every output: the directory is made, its parent must exist.
        crate::output::check_parent(&target, "--index")?;
    }
    let index = match Index::open(&target) {
        Ok(index) => index,
        Err(heddle::Error::NoIndex { .. }) => {
            Index::create(&target, settings.clone()).map_err(|e| refusal(e, &args.index))?
        }
        // Another heddle's index: what "rebuild the index" asks for, on request only.
        Err(heddle::Error::Version { found, .. }) if !args.force => bail!(
            "{}: holds a heddle index of format version {found}; pass --force to rebuild \
             it in this heddle's format ({})",
            args.index.display(),
            heddle::segment::FORMAT_VERSION
        ),
        Err(heddle::Error::Version { .. }) => Index::clear_other_version(&target, settings.clone())
            .with_context(|| {
                format!(
                    "{}: emptying the index of another format version",
                    args.index.display()
                )
            })?,
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!(
                "{}: cannot open the index there to replace it; heddle replaces only an \
                 index it can read (see heddle-eval check), so move it away by hand",
                args.index.display()
            )));
        }
    };
    let mut writer = index.writer()?;
    // Freed build memory goes back to the system after each budget flush.
    crate::allocator::return_memory_after_flushes(&mut writer);
    // The check that decides, made under the lock: an index with a commit is replaced
    // only on request. (An index at generation 0 holds nothing: a crashed `index` run.)
    let created = index.generation() == 0;
    if !created && !args.force {
        bail!(
            "{}: holds a heddle index ({}); pass --force to replace it",
            args.index.display(),
            plural(index.num_docs(), "document")
        );
    }
    writer
        .reset(settings)
        .map_err(|e| refusal(e, &args.index))?;
    let result = build(args, &index, &mut writer, vectors);
    if result.is_err() && created && index.generation() == 0 {
        // A failed build of a new index leaves no index behind (once it has committed,
        // only `--merge-to` can still fail, and the index stands).
        if let Err(e) = writer.discard_new_index(!existed) {
            crate::note!("index: could not remove the empty index it created: {e}");
        }
    }
    result
}

/// What the user asked for is refused, not failed: say so in the words of the flag.
fn refusal(e: heddle::Error, shown: &Path) -> anyhow::Error {
    match e {
        heddle::Error::NotEmpty { found, .. } => anyhow::anyhow!(
            "{}: holds files heddle did not write ({found}); heddle creates an index only \
             in an absent or empty directory and replaces only a heddle index, with or \
             without --force",
            shown.display()
        ),
        e => anyhow::Error::new(e),
    }
}

/// A symbolic link is resolved once, so that every step works on one directory even
/// if the link is changed meanwhile, and the link itself is left alone.
fn resolve_link(path: &Path) -> anyhow::Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(path)
            .with_context(|| format!("{}: a symbolic link to nothing", path.display())),
        _ => Ok(path.to_path_buf()),
    }
}

/// Older heddles built beside the index in `.NAME.building-PID` and could leave one
/// behind when killed. It lies outside the index directory, which heddle never
/// removes anything from, so it is only pointed out.
fn warn_of_old_staging(index: &Path) {
    let (Some(name), Some(parent)) = (index.file_name(), index.parent()) else {
        return;
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let prefix = format!(".{}.building-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            crate::note!(
                "index: note: {} is a staging directory an interrupted older heddle left; \
                 remove it by hand",
                entry.path().display()
            );
        }
    }
}

fn build(
    args: &IndexArgs,
    index: &Index,
    writer: &mut IndexWriter,
    mut vectors: Option<DocumentVectors>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut progress = Progress::new("index");
    writer.set_threads(args.threads)?;
    writer.set_max_document_bytes(args.max_doc_bytes);
    writer.set_reorder(args.reorder());
    writer.set_memory_budget(memory_budget(args.memory_mb));
    // Merges are asked for (--merge-to), not run in the background: the build's memory
    // and time are the build's.
    writer.set_background_merges(false);
    // A vector index without --merge-to is merged into one segment after its build, and
    // its graph built once, then: a search walks every segment's graph (so segments
    // multiply its cost), and a graph built for each flushed segment would be rebuilt by
    // that merge (docs/DECISIONS.md, "Approximate vector search").
    let graphs_after_merge = vectors.is_some() && args.merge_to.is_none();
    if graphs_after_merge {
        writer.set_graph(heddle::GraphSettings::deferred())?;
    }
    let mut reader = heddle_corpus::beir::open_corpus(&args.corpus)?;
    reader.set_max_document_bytes(args.max_doc_bytes);
    let path = reader.path().to_path_buf();
    while let Some(doc) = reader.next() {
        let doc = doc.map_err(|e| super::add::with_hint(e, args.max_doc_bytes))?;
        let doc = match vectors.as_mut() {
            None => doc,
            Some(vectors) => match vectors.take(&doc.id)? {
                Some(vector) => doc.with_vector(vector),
                None => {
                    let missing = vectors.missing(&path, reader.line(), &doc.id);
                    anyhow::bail!("{missing}; nothing was committed");
                }
            },
        };
        let id = doc.id.clone();
        match writer.add(doc) {
            Err(heddle::Error::DuplicateId { .. }) => {
                // A new index, or one being rebuilt: the id came from this file.
                return Err(duplicate_id(
                    &path,
                    reader.line(),
                    &id,
                    args.max_doc_bytes,
                    false,
                ));
            }
            added => added.map_err(|e| super::add::add_error(e, &path, reader.line(), &id))?,
        }
        progress.tick(|| {
            format!(
                "{} read, {} written",
                plural(writer.buffered() as u64, "document"),
                plural(writer.flushed_segments() as u64, "segment")
            )
        });
    }
    if let Some(vectors) = &vectors {
        vectors
            .check_all_taken(&path)
            .map_err(|e| anyhow::anyhow!("{e}; nothing was committed"))?;
    }
    progress.say(&format!(
        "{} read; building the last segment",
        plural(writer.buffered() as u64, "document")
    ));
    let stats = CommitLines::commit(writer, &progress)?;
    let high_water = writer.memory_high_water();
    let seconds = started.elapsed().as_secs_f64();
    let bytes = dir_size(index.dir())?;
    crate::outln!(
        "indexed {}, {}, {} on disk, {:.2} s, {:.0} documents/s",
        plural(stats.docs as u64, "document"),
        plural(index.term_count(), "term"),
        plural(bytes, "byte"),
        seconds,
        stats.docs as f64 / seconds.max(1e-9)
    );
    crate::outln!(
        "  analyzer {}, commit phases: analysis {:.2} s, reorder {:.2} s, encoding {:.2} s, write {:.2} s, fsync {:.2} s, manifest {:.3} s, publish {:.3} s",
        index.analyzer().config().name,
        stats.analysis.as_secs_f64(),
        stats.reorder.as_secs_f64(),
        stats.encoding.as_secs_f64(),
        stats.write.as_secs_f64(),
        stats.fsync.as_secs_f64(),
        stats.manifest.as_secs_f64(),
        stats.publish.as_secs_f64()
    );
    crate::outln!(
        "  {} committed at once; writer memory at most {:.1} MiB (budget {}), id fingerprints {:.1} MiB",
        plural(stats.segments.len() as u64, "segment"),
        high_water as f64 / f64::from(1 << 20),
        match args.memory_mb {
            0 => "none".to_string(),
            mb => format!("{mb} MiB"),
        },
        writer.id_memory() as f64 / f64::from(1 << 20)
    );
    if let Some(vectors) = &vectors {
        crate::outln!(
            "  a vector of {} dimensions with every document, from {} ({})",
            vectors.dim(),
            args.vectors.as_deref().unwrap_or(Path::new("")).display(),
            plural(vectors.len() as u64, "vector")
        );
    }
    if graphs_after_merge {
        writer.set_graph(heddle::GraphSettings::default())?;
        let started = Instant::now();
        progress.say(&format!(
            "merging {} into one and linking its vectors into a graph",
            plural(index.segments().len() as u64, "segment")
        ));
        let lines = CommitLines::start(&progress);
        writer.set_commit_progress(Some(lines.observer()));
        let merged = writer.merge_into_one();
        writer.set_commit_progress(None);
        drop(lines);
        merged.with_context(|| {
            format!(
                "{}: the index is committed whole, its vectors searched exactly until a \
                 merge builds their graph; merging it into one segment failed",
                args.index.display()
            )
        })?;
        let graphs = index.segments().iter().filter(|s| s.vector_graph).count();
        crate::outln!(
            "  merged to {} ({} with a vector graph) in {:.2} s",
            plural(index.segments().len() as u64, "segment"),
            graphs,
            started.elapsed().as_secs_f64()
        );
    }
    if let Some(target) = args.merge_to {
        let started = Instant::now();
        progress.say(&format!(
            "merging {} down to at most {target}",
            plural(index.segments().len() as u64, "segment")
        ));
        writer.merge(target).with_context(|| {
            format!(
                "{}: the index is committed whole; merging it down to {target} failed",
                args.index.display()
            )
        })?;
        crate::outln!(
            "  merged to {} in {:.2} s",
            plural(index.segments().len() as u64, "segment"),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
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
