//! The two vector engines: heddle's approximate search and the peer (usearch's HNSW),
//! each built from the same vectors into a directory of its own and opened at one
//! search effort behind the instrument's [`BackendFactory`].
//!
//! A request's text is the number of a query vector of the set (the vectors are held by
//! the backend, as an encoder's output would be): both engines are asked the same query
//! by the same text, and parsing it is the same few nanoseconds for both.
//!
//! Search effort is one integer per engine. What it means for heddle is said in one place,
//! [`heddle_options`], so that a change of heddle's approximate search changes one
//! function here.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail, ensure};
use heddle::{Document, Index, IndexSettings, SearchEffort, VectorSearchOptions};
use heddle_eval::bench::{Backend, BackendFactory};
use heddle_eval::progress::{CommitLines, Progress, thousands};
use serde::{Deserialize, Serialize};

use super::data::Vectors;

/// The usearch version the peer was pinned at (bench/Cargo.lock), for tables and JSON.
pub const USEARCH_VERSION: &str = "2.26.6";

/// The peer's index file inside its directory.
const USEARCH_FILE: &str = "index.usearch";

/// An engine of the vector comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VectorEngine {
    Heddle,
    Usearch,
}

impl VectorEngine {
    pub const ALL: [VectorEngine; 2] = [VectorEngine::Heddle, VectorEngine::Usearch];

    pub fn name(self) -> &'static str {
        match self {
            VectorEngine::Heddle => "heddle",
            VectorEngine::Usearch => "usearch",
        }
    }

    pub fn parse(name: &str) -> anyhow::Result<Self> {
        match name {
            "heddle" => Ok(VectorEngine::Heddle),
            "usearch" => Ok(VectorEngine::Usearch),
            _ => bail!("unknown vector engine {name:?}; heddle-bench has: heddle, usearch"),
        }
    }

    /// What the effort integer is, in the engine's own words.
    pub fn effort_name(self) -> &'static str {
        match self {
            VectorEngine::Heddle => "ef (HNSW candidates kept per segment)",
            VectorEngine::Usearch => "expansion_search (HNSW ef)",
        }
    }

    /// The efforts swept when none are given: from too few to find the top 10 to where
    /// recall is at or near 1 on every set measured (docs/RESULTS.md).
    pub fn default_efforts(self) -> Vec<usize> {
        match self {
            VectorEngine::Heddle => vec![10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512],
            VectorEngine::Usearch => vec![10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512],
        }
    }

    /// The configuration the engine is built with, in words (tables, JSON).
    pub fn configuration(self) -> String {
        match self {
            VectorEngine::Heddle => format!(
                "heddle {} HNSW graph a segment at the engine's defaults: m {}, ef_construction {}, f32 rows, inner product ({} kernel), parallel build",
                env!("CARGO_PKG_VERSION"),
                heddle::DEFAULT_M,
                heddle::DEFAULT_EF_CONSTRUCTION,
                heddle::dot_kernel()
            ),
            VectorEngine::Usearch => format!(
                "usearch {USEARCH_VERSION} HNSW: inner product on unit vectors, f32, connectivity {} (default), expansion_add {} (default), multi-threaded add",
                USEARCH_CONNECTIVITY, USEARCH_EXPANSION_ADD
            ),
        }
    }
}

/// usearch's documented defaults (include/usearch/index.hpp: `default_connectivity`,
/// `default_expansion_add`), passed as 0 ("auto") and named here for the reports.
const USEARCH_CONNECTIVITY: usize = 16;
const USEARCH_EXPANSION_ADD: usize = 128;

/// heddle's search at effort `effort`: the one place that maps the effort integer onto
/// heddle's options: the candidates a walk of each segment's graph keeps (HNSW's ef,
/// at least 1).
pub fn heddle_options(k: usize, effort: usize) -> VectorSearchOptions {
    VectorSearchOptions {
        k,
        effort: SearchEffort::Candidates(effort.max(1)),
    }
}

/// How an engine's index is built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VectorBuildOptions {
    pub threads: usize,
    /// heddle: segments to merge down to after the commit (0: as the commit leaves it).
    pub segments: usize,
}

/// What building one index took and produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorBuild {
    pub engine: VectorEngine,
    pub vectors: usize,
    pub dim: usize,
    /// From the first vector added to a durable index on disk.
    pub seconds: f64,
    /// Every file the engine wrote.
    pub bytes: u64,
    pub segments: usize,
    pub threads: usize,
    pub configuration: String,
    /// Peak resident memory of the process that built it (VmHWM), KiB: the vectors as
    /// read are in it too (the same for both engines).
    pub peak_rss_kib: Option<u64>,
    /// The process's resident memory after reading the vectors, before building: what
    /// the peak holds beyond the build itself.
    pub input_rss_kib: Option<u64>,
}

/// Builds `engine`'s index of `docs` in `dir` (which must not exist or be empty).
pub fn build(
    engine: VectorEngine,
    docs: &Vectors,
    dir: &Path,
    opts: &VectorBuildOptions,
) -> anyhow::Result<VectorBuild> {
    ensure!(!docs.is_empty(), "no vectors to index");
    ensure!(opts.threads >= 1, "building needs at least one thread");
    let started = Instant::now();
    let segments = match engine {
        VectorEngine::Heddle => build_heddle(docs, dir, opts)?,
        VectorEngine::Usearch => build_usearch(docs, dir, opts)?,
    };
    Ok(VectorBuild {
        engine,
        vectors: docs.len(),
        dim: docs.dim,
        seconds: started.elapsed().as_secs_f64(),
        bytes: crate::engines::dir_size(dir)?,
        segments,
        threads: opts.threads,
        configuration: engine.configuration(),
        peak_rss_kib: None,
        input_rss_kib: None,
    })
}

fn build_heddle(docs: &Vectors, dir: &Path, opts: &VectorBuildOptions) -> anyhow::Result<usize> {
    let mut progress = Progress::new("build heddle");
    let index = Index::create(
        dir,
        IndexSettings {
            vector_dim: Some(docs.dim),
            ..Default::default()
        },
    )
    .with_context(|| format!("creating a heddle index in {}", dir.display()))?;
    let mut writer = index.writer()?;
    writer.set_threads(opts.threads)?;
    writer.set_background_merges(false);
    for (i, v) in docs.iter().enumerate() {
        writer.add(Document::new(i.to_string(), "", "").with_vector(v.to_vec()))?;
        progress.tick(|| format!("{} vectors added", thousands(i as u64 + 1)));
    }
    progress.say(&format!(
        "{} vectors added; committing on {} threads",
        thousands(docs.len() as u64),
        opts.threads
    ));
    CommitLines::commit(&mut writer, &progress)?;
    let committed = index.segments().len();
    if opts.segments > 0 && committed > opts.segments {
        progress.say(&format!(
            "{committed} segments; merging down to {}",
            opts.segments
        ));
        writer.merge(opts.segments)?;
    }
    drop(writer);
    Ok(index.segments().len())
}

fn build_usearch(docs: &Vectors, dir: &Path, opts: &VectorBuildOptions) -> anyhow::Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let options = usearch::IndexOptions {
        dimensions: docs.dim,
        metric: usearch::MetricKind::IP,
        quantization: usearch::ScalarKind::F32,
        connectivity: 0,
        expansion_add: 0,
        expansion_search: 0,
        multi: false,
    };
    let index = usearch::Index::new(&options).map_err(|e| anyhow::anyhow!("usearch: {e}"))?;
    index
        .reserve_capacity_and_threads(docs.len(), opts.threads)
        .map_err(|e| anyhow::anyhow!("usearch reserve: {e}"))?;
    let added = std::sync::atomic::AtomicUsize::new(0);
    let progress = std::sync::Mutex::new(Progress::new("build usearch"));
    // usearch's documented way to build on several cores: `add` from as many threads as
    // were reserved, each on its own share of the vectors.
    std::thread::scope(|s| -> anyhow::Result<()> {
        let workers: Vec<_> = (0..opts.threads)
            .map(|t| {
                let (index, added, progress) = (&index, &added, &progress);
                s.spawn(move || -> anyhow::Result<()> {
                    for i in (t..docs.len()).step_by(opts.threads) {
                        index
                            .add(i as u64, docs.row(i))
                            .map_err(|e| anyhow::anyhow!("usearch add {i}: {e}"))?;
                        let n = added.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        if n % 1024 == 0
                            && let Ok(mut p) = progress.try_lock()
                        {
                            p.tick(|| format!("{} vectors added", thousands(n as u64)));
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        for w in workers {
            w.join().expect("a usearch build thread panicked")?;
        }
        Ok(())
    })?;
    let path = dir.join(USEARCH_FILE);
    index
        .save(path_str(&path)?)
        .map_err(|e| anyhow::anyhow!("usearch save {}: {e}", path.display()))?;
    // As heddle's commit does: the index is durable before the build is done.
    std::fs::File::open(&path)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("syncing {}", path.display()))?;
    Ok(1)
}

fn path_str(path: &Path) -> anyhow::Result<&str> {
    path.to_str()
        .with_context(|| format!("{}: usearch needs a UTF-8 path", path.display()))
}

/// A vector search at one effort, answering a query vector with external ids.
pub trait VectorSearch: Send + Sync {
    fn search(&self, query: &[f32], k: usize) -> anyhow::Result<Vec<String>>;
}

struct HeddleSearch {
    index: Index,
    effort: usize,
}

impl VectorSearch for HeddleSearch {
    /// The snapshot current at the request's start, as a server takes it.
    fn search(&self, query: &[f32], k: usize) -> anyhow::Result<Vec<String>> {
        let hits = self
            .index
            .searcher()
            .search_vector(query, &heddle_options(k, self.effort))?;
        Ok(hits.into_iter().map(|h| h.id).collect())
    }
}

struct UsearchSearch {
    index: usearch::Index,
}

impl VectorSearch for UsearchSearch {
    fn search(&self, query: &[f32], k: usize) -> anyhow::Result<Vec<String>> {
        let found = self
            .index
            .search(query, k)
            .map_err(|e| anyhow::anyhow!("usearch search: {e}"))?;
        Ok(found.keys.iter().map(|key| key.to_string()).collect())
    }
}

/// Opens `engine`'s index in `dir` at `effort`, for up to `threads` concurrent searches.
pub fn open(
    engine: VectorEngine,
    dir: &Path,
    effort: usize,
    threads: usize,
) -> anyhow::Result<Arc<dyn VectorSearch>> {
    ensure!(effort >= 1, "a search effort of at least 1");
    Ok(match engine {
        VectorEngine::Heddle => {
            let index = Index::open(dir)
                .with_context(|| format!("opening heddle index {}", dir.display()))?;
            Arc::new(HeddleSearch { index, effort })
        }
        VectorEngine::Usearch => {
            let path = dir.join(USEARCH_FILE);
            let index = usearch::Index::restore(path_str(&path)?)
                .map_err(|e| anyhow::anyhow!("opening usearch index {}: {e}", path.display()))?;
            // One search context per concurrent search (the ladder's workers).
            index
                .reserve_capacity_and_threads(index.size(), threads.max(1))
                .map_err(|e| anyhow::anyhow!("usearch reserve: {e}"))?;
            index.change_expansion_search(effort);
            Arc::new(UsearchSearch { index })
        }
    })
}

/// The instrument's view of one engine at one effort: a request's text is the number of
/// a query vector in `queries`.
#[derive(Clone)]
pub struct VectorFactory {
    pub engine: VectorEngine,
    pub dir: PathBuf,
    pub effort: usize,
    pub queries: Arc<Vectors>,
    pub threads: usize,
}

impl BackendFactory for VectorFactory {
    fn name(&self) -> &str {
        self.engine.name()
    }

    /// The instrument's index path is ignored: each engine has its own directory.
    fn open(&self, _index: &Path) -> anyhow::Result<Arc<dyn Backend>> {
        Ok(Arc::new(VectorBackend {
            search: open(self.engine, &self.dir, self.effort, self.threads)?,
            queries: self.queries.clone(),
        }))
    }

    fn source_dir(&self, _index: &Path) -> PathBuf {
        self.dir.clone()
    }
}

/// A [`VectorSearch`] behind the instrument's [`Backend`].
pub struct VectorBackend {
    pub search: Arc<dyn VectorSearch>,
    pub queries: Arc<Vectors>,
}

impl Backend for VectorBackend {
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<String>> {
        let i = query_number(query, self.queries.len())?;
        self.search.search(self.queries.row(i), k)
    }
}

/// The query number a request's text names (`0` to `count - 1`).
pub fn query_number(text: &str, count: usize) -> anyhow::Result<usize> {
    match text.trim().parse::<usize>() {
        Ok(i) if i < count => Ok(i),
        _ => bail!("request {text:?}: not a query number of this set (0 to {count} exclusive)"),
    }
}
