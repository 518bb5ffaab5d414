//! heddle behind the [`Backend`] trait.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

use super::{Backend, BackendFactory};

/// Opens heddle indexes.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeddleFactory;

impl BackendFactory for HeddleFactory {
    fn name(&self) -> &str {
        "heddle"
    }

    fn open(&self, index: &Path) -> anyhow::Result<Arc<dyn Backend>> {
        let index = heddle::Index::open(index)
            .with_context(|| format!("opening heddle index {}", index.display()))?;
        Ok(Arc::new(HeddleBackend { index }))
    }
}

/// An open heddle index. Each search takes the snapshot current at its start, as a
/// server would, so that the cost of doing so is measured and later commits are seen.
struct HeddleBackend {
    index: heddle::Index,
}

impl Backend for HeddleBackend {
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<String>> {
        let opts = heddle::SearchOptions {
            k,
            ..heddle::SearchOptions::default()
        };
        let hits = self.index.searcher().search(query, &opts)?;
        Ok(hits.into_iter().map(|h| h.id).collect())
    }
}
