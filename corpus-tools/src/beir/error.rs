//! The typed errors of BEIR reading: which file, which line, what is wrong with it.

use std::path::PathBuf;
use std::sync::Arc;

/// An error reading a BEIR file. `Clone` (io errors are kept behind an `Arc`) so a caller
/// can keep the first error of a run and still report it later.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BeirError {
    /// The file could not be opened or read. Check the path and its permissions.
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        /// Shown in the message itself and deliberately not a `source` (anyhow's `{:#}`
        /// would print it twice).
        error: Arc<std::io::Error>,
    },

    /// One line of the file is malformed. `line` is 1-based, counted as a text editor
    /// counts lines (blank lines included). Fix or remove that line.
    #[error("{path}:{line}: {problem}")]
    Malformed {
        path: PathBuf,
        line: u64,
        problem: LineProblem,
    },
}

impl BeirError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        BeirError::Io {
            path: path.into(),
            error: Arc::new(source),
        }
    }

    /// The 1-based line number of a malformed line, `None` for an io error.
    pub fn line(&self) -> Option<u64> {
        match self {
            BeirError::Io { .. } => None,
            BeirError::Malformed { line, .. } => Some(*line),
        }
    }

    /// What is wrong with the line, `None` for an io error.
    pub fn problem(&self) -> Option<&LineProblem> {
        match self {
            BeirError::Io { .. } => None,
            BeirError::Malformed { problem, .. } => Some(problem),
        }
    }
}

/// What is wrong with one line of a BEIR file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    /// The line is not UTF-8. BEIR files are UTF-8 throughout; re-encode the file.
    #[error("invalid UTF-8 after {valid_up_to} bytes of the line")]
    InvalidUtf8 { valid_up_to: usize },

    /// The line is not one JSON object (a syntax error, trailing characters, or another
    /// JSON type at the top level).
    #[error("invalid JSON at column {column}: {message}")]
    InvalidJson { column: usize, message: String },

    /// A required field is absent.
    #[error("missing field \"{field}\"")]
    MissingField { field: &'static str },

    /// A field that must be a JSON string holds something else.
    #[error("field \"{field}\" is not a string (found {found})")]
    NotAString {
        field: &'static str,
        found: &'static str,
    },

    /// The same field appears twice in one object; which one was meant is unknowable.
    #[error("field \"{field}\" appears twice")]
    DuplicateField { field: &'static str },

    /// `_id` is the empty string; ids identify documents and queries, so one is needed.
    #[error("field \"_id\" is empty")]
    EmptyId,

    /// The line is longer than the reader's limit, which follows from the largest document
    /// accepted (six bytes of JSON for each byte of text, plus 64 KiB); it was read no
    /// further. Raise the document size limit or split the document.
    #[error("line longer than {limit} bytes (not read further)")]
    LineTooLong { limit: u64 },

    /// A JSON string holds a `\uD800`–`\uDFFF` escape that is not half of a surrogate
    /// pair: it encodes no character. Fix the program that wrote the file.
    #[error("lone UTF-16 surrogate {escape} in a JSON string at column {column}")]
    LoneSurrogate { escape: String, column: usize },

    /// An id appears a second time in one file (found by the program feeding it to an
    /// index writer, which refuses the repeat): which document is meant is unknowable.
    /// Remove or rename one of them.
    #[error("duplicate id {id:?}, first seen at line {first_line}")]
    DuplicateId { id: String, first_line: u64 },

    /// A qrels line does not have exactly `query-id`, `corpus-id` and `score`,
    /// separated by tabs.
    #[error("expected {expected} tab-separated columns, found {found}")]
    ColumnCount { expected: usize, found: usize },

    /// A qrels score is not an integer (BEIR relevance grades are 0, 1, 2, ...).
    #[error("score {found:?} is not an integer")]
    BadScore { found: String },

    /// A vectors file's `vector` is not a JSON array of numbers.
    #[error("field \"vector\" is not an array (found {found})")]
    NotAnArray { found: &'static str },

    /// A vectors file's `vector` is `[]`: a vector needs at least one value.
    #[error("field \"vector\" is empty")]
    EmptyVector,

    /// One value of a vector is not a JSON number. `at` counts from 0.
    #[error("vector value {at} is not a number (found {found})")]
    VectorValueNotANumber { at: usize, found: &'static str },

    /// One value of a vector is a number that f32 cannot hold (its magnitude rounds to
    /// infinity): scores would not be numbers. `at` counts from 0; `text` is the value as
    /// the file writes it.
    #[error("vector value {at} ({text}) is not a finite f32")]
    VectorValueNotFinite { at: usize, text: String },

    /// The line writes `NaN`, `Infinity` or `-Infinity`, as Python's `json.dumps` does for
    /// non-finite floats: not JSON, and a vector must be finite. Fix the vector at its
    /// source (a NaN usually means a failed encoding).
    #[error("{literal} at column {column}: a vector's values must be finite numbers")]
    NonFiniteLiteral {
        literal: &'static str,
        column: usize,
    },

    /// A vector's length differs from the file's (or the index's) dimension.
    /// `first_line` is the line that fixed the dimension (the file's first vector);
    /// `None` when it was given up front (an index's dimension).
    #[error(
        "vector has {found} values, expected {expected}{}",
        match first_line {
            Some(line) => format!(" (the dimension of line {line})"),
            None => String::new(),
        }
    )]
    VectorDimension {
        expected: usize,
        found: usize,
        first_line: Option<u64>,
    },

    /// A vector longer than any index can hold (`heddle::MAX_VECTOR_DIM`); it was read no
    /// further.
    #[error("vector has more than {max} values")]
    VectorTooLong { max: usize },
}
