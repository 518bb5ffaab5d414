//! The crate's one error type. Variants carry the facts a user needs to fix the problem:
//! which file, what was expected, what was found.

use std::path::PathBuf;
use std::sync::Arc;

/// Result alias used throughout heddle.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in heddle. `Clone` so a failed snapshot load can be
/// reported to several waiters; io errors are therefore kept behind an `Arc`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        /// Shown in the message itself and deliberately not a `source` (anyhow's `{:#}`
        /// would print it twice).
        error: Arc<std::io::Error>,
    },

    /// The file is shorter than its own structure says it must be. Rebuild the index
    /// or restore the file from a backup.
    #[error(
        "{path}: truncated: {what} needs {needed} bytes at offset {offset}, file section has {available}"
    )]
    Truncated {
        path: PathBuf,
        what: &'static str,
        offset: u64,
        needed: u64,
        available: u64,
    },

    /// The file does not end in heddle's footer magic: not a heddle file, or cut short.
    #[error("{path}: bad footer magic (not a heddle index file, or truncated)")]
    BadMagic { path: PathBuf },

    /// Written by a different format version. Rebuild the index with this heddle.
    #[error(
        "{path}: format version {found}, this heddle reads version {expected}; rebuild the index"
    )]
    Version {
        path: PathBuf,
        expected: u32,
        found: u32,
    },

    /// The bytes were changed after they were written (disk corruption, a bad copy).
    /// `start..end` are the bytes whose checksum failed: a chunk of the body, or the
    /// chunk table and footer fields. Rebuild the index or restore the file from a backup;
    /// `heddle-eval check` lists every damaged file.
    #[error(
        "{path}: checksum mismatch in bytes {start}..{end} (stored {stored:#010x}, computed {computed:#010x}): the file is damaged"
    )]
    ChecksumMismatch {
        path: PathBuf,
        start: u64,
        end: u64,
        stored: u32,
        computed: u32,
    },

    /// A structure inside a file is inconsistent (checksums passed, contents do not).
    #[error("{path}: corrupt {what}: {detail}")]
    Corrupt {
        path: PathBuf,
        what: &'static str,
        detail: String,
    },

    /// Something other than a regular file (a symlink, a FIFO, a directory, a device)
    /// stands under a name of the index. heddle creates only regular files, so it was
    /// put there by someone else: heddle neither reads nor writes through it, and does
    /// not remove it. Remove it (or restore the file from a backup).
    #[error(
        "{path}: is {found}, not a regular file; heddle never puts one under an index name (remove it or restore the file)"
    )]
    NotRegular { path: PathBuf, found: &'static str },

    /// A mapped file shrank while it was in use: it was truncated or rewritten in place
    /// under a running reader (docs/FORMAT.md, "Changing files in place"). The
    /// request that read it fails; reopen the index once the file is whole again.
    #[error(
        "{path}: the file shrank while it was mapped (truncated or rewritten in place under a running reader); restore it and reopen the index"
    )]
    ChangedInPlace { path: PathBuf },

    /// The manifest could not be parsed.
    #[error("{path}: manifest is not valid: {detail}")]
    Manifest { path: PathBuf, detail: String },

    /// No index at this path. Create one first (`heddle-eval index`).
    #[error("{path}: no heddle index here (no MANIFEST)")]
    NoIndex { path: PathBuf },

    /// `create` was pointed at a directory that already holds files (an index, or
    /// someone else's files). heddle never creates an index over them: choose another
    /// directory, or replace an existing index with `heddle-eval index --force`.
    #[error("{path}: directory is not empty (holds {found}); refusing to create an index over it")]
    NotEmpty { path: PathBuf, found: String },

    /// Opening kept finding that a newer commit had removed the files of the manifest
    /// it had just read. Another process is committing or merging very fast; try again.
    #[error("{path}: the index changed {attempts} times while it was being opened")]
    KeptChanging { path: PathBuf, attempts: u32 },

    /// Another `IndexWriter` (in this or another process) holds the index's lock.
    #[error("{path}: another writer holds the lock; only one writer per index")]
    Locked { path: PathBuf },

    /// A document's external id is already taken.
    #[error("document id {id:?} is already in the index")]
    DuplicateId { id: String },

    /// A document is larger than the writer's limit
    /// ([`crate::IndexWriter::set_max_document_bytes`]). Split it, or raise the limit.
    #[error("document {id:?} has {bytes} bytes of title and text, over the limit of {limit}")]
    DocumentTooLarge {
        id: String,
        bytes: usize,
        limit: usize,
    },

    /// A document's vector does not fit the index: in an index created with a vector
    /// dimension every document needs a vector of exactly that many finite values; in
    /// any other, none.
    #[error("document {id:?}: {problem}")]
    DocumentVector {
        id: String,
        problem: crate::vectors::VectorProblem,
    },

    /// A query vector does not fit the index (see [`Error::DocumentVector`]).
    #[error("query vector: {problem}")]
    QueryVector {
        problem: crate::vectors::VectorProblem,
    },

    /// A document has an empty external id.
    #[error("document has an empty id")]
    EmptyId,

    #[error("unknown analyzer {name:?}; known: {known}")]
    UnknownAnalyzer { name: String, known: String },

    /// A deliberately injected failure (tests of crash safety).
    #[error("failpoint {0:?} triggered")]
    Failpoint(crate::failpoint::Failpoint),

    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl Error {
    /// An io error saying a file does not exist.
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, Error::Io { error, .. } if error.kind() == std::io::ErrorKind::NotFound)
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            error: Arc::new(source),
        }
    }
}
