//! `heddle-eval add`: documents from a JSONL file into an existing index, one commit
//! (of as many segments as the memory budget wrote).
//! Any bad line or duplicate id aborts before the commit: the index is left as it was.

use std::path::{Path, PathBuf};

use clap::Args;
use heddle::Index;
use heddle_corpus::beir::{BeirError, LineProblem};

use super::feed::duplicate_id;
use crate::progress::{CommitLines, Progress, plural, thousands};
use crate::vectors::DocumentVectors;

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The index directory (an index made by `heddle-eval index`).
    #[arg(long)]
    pub index: PathBuf,
    /// Documents in BEIR corpus.jsonl form.
    #[arg(long)]
    pub docs: PathBuf,
    /// Replace documents whose id is already in the index (in the same commit). An id
    /// given twice in --docs is still an error: which of the two is meant?
    #[arg(long)]
    pub upsert: bool,
    /// Refuse a document whose title and text exceed this many bytes (a line is read no
    /// further than 6 times this plus 64 KiB, the most such a document takes in JSON).
    #[arg(long, default_value_t = heddle::DEFAULT_MAX_DOCUMENT_BYTES)]
    pub max_doc_bytes: usize,
    /// Threads used to build segments (0: one per core; at most 1024).
    #[arg(long, default_value_t = 0, value_parser = crate::cli::thread_count())]
    pub threads: usize,
    /// Memory budget in MiB for the documents read and the build of their segment:
    /// when they reach it, a segment is written (published with the others by the one
    /// commit at the end) and the memory freed. 0: no budget, one segment.
    #[arg(long, default_value_t = super::index::DEFAULT_MEMORY_MB)]
    pub memory_mb: usize,
    /// The documents' vectors, for an index that stores them: a JSONL file of
    /// {"_id": "...", "vector": [numbers]} lines of the index's dimension, exactly one
    /// for each document of --docs (as `index --vectors`).
    #[arg(long, value_name = "FILE")]
    pub vectors: Option<PathBuf>,
}

pub fn run(args: &AddArgs) -> anyhow::Result<()> {
    let index = Index::open(&args.index)?;
    let mut vectors = match (&args.vectors, index.vector_dim()) {
        (None, None) => None,
        (Some(path), Some(dim)) => Some(DocumentVectors::open(path, Some(dim))?),
        (None, Some(dim)) => anyhow::bail!(
            "{}: stores a vector of {dim} dimensions with every document; give the new \
             documents' vectors with --vectors FILE",
            args.index.display()
        ),
        (Some(_), None) => anyhow::bail!(
            "{}: stores no vectors (build it with `index --vectors` to have them); \
             --vectors cannot be used",
            args.index.display()
        ),
    };
    let mut writer = index.writer()?;
    // Freed build memory goes back to the system after each budget flush.
    crate::allocator::return_memory_after_flushes(&mut writer);
    writer.set_threads(args.threads)?;
    writer.set_max_document_bytes(args.max_doc_bytes);
    writer.set_memory_budget(super::index::memory_budget(args.memory_mb));
    let mut reader = heddle_corpus::beir::open_corpus(&args.docs)?;
    reader.set_max_document_bytes(args.max_doc_bytes);
    let path = reader.path().to_path_buf();
    let mut progress = Progress::new("add");
    while let Some(doc) = reader.next() {
        let doc = doc.map_err(|e| with_hint(e, args.max_doc_bytes))?;
        let id = doc.id.clone();
        let line = reader.line();
        let doc = match vectors.as_mut() {
            None => doc,
            Some(vectors) => match vectors.take(&id)? {
                Some(vector) => doc.with_vector(vector),
                None => {
                    let missing = vectors.missing(&path, line, &id);
                    anyhow::bail!("{missing}; nothing was committed");
                }
            },
        };
        // An id the file repeats is refused under --upsert too (which copy is meant?):
        // the writer knows, so no map of every id read grows with the file.
        let added = if args.upsert {
            writer.upsert_refusing_repeats(doc)
        } else {
            writer.add(doc)
        };
        match added {
            Err(heddle::Error::DuplicateId { .. }) => {
                // Under --upsert an id already in the index is replaced, not refused.
                return Err(duplicate_id(
                    &path,
                    line,
                    &id,
                    args.max_doc_bytes,
                    !args.upsert,
                ));
            }
            added => added.map_err(|e| add_error(e, &path, line, &id))?,
        }
        progress.tick(|| format!("{} read", plural(writer.buffered() as u64, "document")));
    }
    if let Some(vectors) = &vectors {
        vectors
            .check_all_taken(&path)
            .map_err(|e| anyhow::anyhow!("{e}; nothing was committed"))?;
    }
    let stats = CommitLines::commit(&mut writer, &progress)?;
    writer.wait_for_merges()?;
    crate::outln!(
        "added {} ({} replaced) to {} (generation {}, {} in all)",
        plural(stats.docs as u64, "document"),
        thousands(stats.deleted as u64),
        args.index.display(),
        stats.generation,
        plural(index.num_docs(), "document")
    );
    Ok(())
}

/// Names the flag behind the limit an over-long line broke (`index` reads its corpus
/// with the same limit and can call this too).
pub(super) fn with_hint(e: BeirError, max_doc_bytes: usize) -> anyhow::Error {
    match e.problem() {
        Some(LineProblem::LineTooLong { .. }) => anyhow::anyhow!(
            "{e}: more than a document of --max-doc-bytes {max_doc_bytes} can take as JSON"
        ),
        _ => e.into(),
    }
}

/// An error of `IndexWriter::add`, blamed on the corpus line only when the document is
/// what is wrong: an error writing a segment the memory budget flushed (a full disk)
/// is the index's, and says so, naming the line only as how far the input was read.
pub(super) fn add_error(e: heddle::Error, path: &Path, line: u64, id: &str) -> anyhow::Error {
    use heddle::Error::*;
    let about_the_document = matches!(
        e,
        DuplicateId { .. } | DocumentTooLarge { .. } | DocumentVector { .. } | EmptyId
    );
    if about_the_document {
        anyhow::Error::new(e).context(format!("{}:{line}: document {id:?}", path.display()))
    } else {
        anyhow::Error::new(e).context(format!(
            "writing the index (the input was read up to {}:{line}); nothing was committed",
            path.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk while a budget flush writes a segment is the index's error, not the
    /// corpus line's; a document's own problem names its line.
    #[test]
    fn only_a_documents_own_problem_is_blamed_on_its_line() {
        let path = Path::new("c.jsonl");
        let full = heddle::Error::Io {
            path: "idx/seg-000002.store".into(),
            error: std::sync::Arc::new(std::io::Error::from_raw_os_error(libc::ENOSPC)),
        };
        let message = format!("{:#}", add_error(full, path, 7, "d7"));
        assert!(message.starts_with("writing the index"), "{message}");
        assert!(!message.contains("document \"d7\""), "{message}");
        let message = format!("{:#}", add_error(heddle::Error::EmptyId, path, 7, ""));
        assert!(message.starts_with("c.jsonl:7: document"), "{message}");
    }
}
