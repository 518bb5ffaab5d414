//! The engine behind the instrument: the harness drives a [`Backend`] and never an engine
//! type, so that heddle, tantivy and the synthetic test backends run through the same code.

mod heddle;
pub mod synthetic;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub use self::heddle::HeddleFactory;

/// One opened index, shared by every worker thread of a rung.
pub trait Backend: Send + Sync {
    /// Runs `query` and returns the external ids of the top `k` documents, best first.
    /// Query analysis belongs to the call: it is part of the latency being measured.
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<String>>;

    /// Adds documents (the writes arm). Engines that cannot write return [`Unsupported`].
    fn add_documents(&self, docs: &[::heddle::Document]) -> anyhow::Result<()> {
        let _ = docs;
        Err(Unsupported::new("add_documents").into())
    }

    /// Makes added documents visible to later searches (the writes arm).
    fn commit(&self) -> anyhow::Result<()> {
        Err(Unsupported::new("commit").into())
    }
}

/// An engine the bench can run: a name for reports and a way to open an index.
pub trait BackendFactory: Send + Sync {
    /// The engine's name in tables, JSON and plots, and in `--engines`.
    fn name(&self) -> &str;

    /// Opens the index at `index` for searching.
    fn open(&self, index: &Path) -> anyhow::Result<Arc<dyn Backend>>;
}

/// The operation a backend does not implement; callers can downcast to it to skip an arm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub operation: &'static str,
}

impl Unsupported {
    pub fn new(operation: &'static str) -> Self {
        Unsupported { operation }
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "this backend does not support `{}`", self.operation)
    }
}

impl std::error::Error for Unsupported {}
