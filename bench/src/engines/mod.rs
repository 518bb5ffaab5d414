//! The two engines compared: how each builds its index from a BEIR corpus, opens it
//! behind the instrument's [`BackendFactory`], and answers a query with scores (for the
//! agreement check).

mod heddle_engine;
mod tantivy_engine;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::bail;
use heddle_eval::bench::BackendFactory;
use serde::{Deserialize, Serialize};

use crate::analysis::{Analysis, Peer};

pub use heddle_engine::{HeddleAt, HeddleScored};
pub use tantivy_engine::{TANTIVY_VERSION, TantivyBackend, TantivyFactory};

/// An engine of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Heddle,
    Tantivy,
}

impl Engine {
    pub const ALL: [Engine; 2] = [Engine::Heddle, Engine::Tantivy];

    pub fn name(self) -> &'static str {
        match self {
            Engine::Heddle => "heddle",
            Engine::Tantivy => "tantivy",
        }
    }

    pub fn parse(name: &str) -> anyhow::Result<Engine> {
        match name {
            "heddle" => Ok(Engine::Heddle),
            "tantivy" => Ok(Engine::Tantivy),
            _ => bail!("unknown engine {name:?}; heddle-bench has: heddle, tantivy"),
        }
    }

    /// Builds this engine's index of `corpus` in `dir` (which must not exist yet).
    pub fn build(
        self,
        corpus: &Path,
        dir: &Path,
        opts: &BuildOptions,
    ) -> anyhow::Result<BuildStats> {
        match self {
            Engine::Heddle => heddle_engine::build(corpus, dir, opts),
            Engine::Tantivy => tantivy_engine::build(corpus, dir, opts),
        }
    }

    /// The instrument's view of the index in `dir`: whatever path the instrument passes
    /// to `open` is ignored, since each engine has its own index.
    pub fn factory(self, dir: &Path, analysis: Analysis) -> Box<dyn BackendFactory> {
        match self {
            Engine::Heddle => Box::new(HeddleAt::new(dir)),
            Engine::Tantivy => Box::new(TantivyFactory::new(dir, analysis)),
        }
    }

    /// Opens the index in `dir` for scored searches (the agreement check).
    pub fn scored(self, dir: &Path, analysis: Analysis) -> anyhow::Result<Arc<dyn ScoredSearch>> {
        Ok(match self {
            Engine::Heddle => Arc::new(HeddleScored::open(dir)?),
            Engine::Tantivy => Arc::new(TantivyBackend::open(dir, analysis)?),
        })
    }
}

/// How an index is built. Both engines get the same `threads`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildOptions {
    pub analysis: Analysis,
    /// heddle's analyzer preset ([`Analysis::heddle_analyzer`]): `english`, or
    /// `lucene-english` against Lucene's own analysis. Part of the build key, so that
    /// an index of one is never reused for the other; records written before it was
    /// kept were all `english`.
    #[serde(default = "english")]
    pub heddle_analyzer: String,
    pub threads: usize,
    /// 0: the engine's own merge policy runs during the build and is waited for (heddle
    /// without a budget builds one segment); N: merged down to at most N after it.
    pub segments: usize,
    /// heddle: the writer's memory budget (0: none, one commit of everything); tantivy:
    /// the indexing arena over all threads.
    pub memory_bytes: usize,
}

fn english() -> String {
    "english".to_string()
}

impl BuildOptions {
    /// The options of a comparison with `peer` in `analysis`.
    pub fn new(
        analysis: Analysis,
        peer: Peer,
        threads: usize,
        segments: usize,
        memory_bytes: usize,
    ) -> Self {
        BuildOptions {
            analysis,
            heddle_analyzer: analysis.heddle_analyzer(peer).name,
            threads,
            segments,
            memory_bytes,
        }
    }
}

/// What building one index took and produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildStats {
    pub engine: Engine,
    pub docs: u64,
    /// From opening the corpus to a durable, merged index.
    pub seconds: f64,
    pub docs_per_sec: f64,
    /// Every file the engine wrote, in bytes.
    pub bytes: u64,
    pub segments: usize,
    /// Where the time went, in the engine's own terms.
    pub phases: Vec<(String, f64)>,
    /// Peak resident memory of the process that built it (VmHWM), KiB; the build runs in
    /// a process of its own so that this is the engine's alone. Merges included.
    pub peak_rss_kib: Option<u64>,
    /// The same peak just before the merges asked for after the build (heddle's merge
    /// policy after its commit, or a merge down to N): the budgeted build alone. Absent
    /// where merges run during the build (tantivy's own policy) or in older records.
    #[serde(default)]
    pub pre_merge_peak_rss_kib: Option<u64>,
    pub threads: usize,
    /// The memory and segment settings it was built with ([`BuildOptions`]); absent in
    /// older records.
    #[serde(default)]
    pub memory_bytes: Option<usize>,
    #[serde(default)]
    pub segment_target: Option<usize>,
}

/// One hit with its score, for the agreement check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredHit {
    pub id: String,
    pub score: f64,
}

/// An engine answering with scores: the agreement check compares rankings and
/// explains differences by ties in either engine's scores.
pub trait ScoredSearch: Send + Sync {
    fn search_scored(&self, query: &str, k: usize) -> anyhow::Result<Vec<ScoredHit>>;
}

/// The total size in bytes of every file under `dir`.
pub fn dir_size(dir: &Path) -> anyhow::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        if meta.is_dir() {
            total += dir_size(&entry.path())?;
        } else {
            total += meta.len();
        }
    }
    Ok(total)
}

/// Resolves a BEIR directory to its corpus.jsonl (a file is taken as it is).
pub fn corpus_file(corpus: &Path) -> PathBuf {
    if corpus.is_dir() {
        corpus.join("corpus.jsonl")
    } else {
        corpus.to_path_buf()
    }
}
