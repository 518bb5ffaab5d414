//! heddle's side: the index built the way `heddle-eval index` builds it (in its memory
//! budget if one is given, one commit), and the instrument's own heddle backend opened at
//! its directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use heddle::{Index, IndexSettings, SearchOptions};
use heddle_eval::allocator::return_memory_after_flushes;
use heddle_eval::bench::{Backend, BackendFactory, HeddleFactory, WriteOptions};
use heddle_eval::progress::{Progress, thousands};

use super::{BuildOptions, BuildStats, Engine, ScoredHit, ScoredSearch, dir_size};

pub(super) fn build(corpus: &Path, dir: &Path, opts: &BuildOptions) -> anyhow::Result<BuildStats> {
    let started = Instant::now();
    let mut progress = Progress::new("build heddle");
    let index = Index::create(
        dir,
        IndexSettings {
            analyzer: heddle::AnalyzerConfig::preset(&opts.heddle_analyzer)?,
            per_field: false,
            ..Default::default()
        },
    )?;
    let mut writer = index.writer()?;
    // As `heddle-eval index` does: freed build memory goes back to the system.
    return_memory_after_flushes(&mut writer);
    writer.set_threads(opts.threads)?;
    if opts.memory_bytes > 0 {
        writer.set_memory_budget(opts.memory_bytes);
    }
    // segments 0: the merge policy runs after the commit, as `heddle-eval add` lets it.
    writer.set_background_merges(opts.segments == 0);
    let mut reader = heddle_corpus::beir::open_corpus(corpus)?;
    let path = reader.path().to_path_buf();
    while let Some(doc) = reader.next() {
        let doc = doc?;
        writer
            .add(doc)
            .with_context(|| format!("{}:{}", path.display(), reader.line()))?;
        progress.tick(|| {
            format!(
                "{} documents read, {} segments written",
                thousands(writer.buffered() as u64),
                writer.flushed_segments()
            )
        });
    }
    let read = started.elapsed().as_secs_f64();
    progress.say(&format!(
        "{} documents read; committing on {} threads",
        thousands(writer.buffered() as u64),
        opts.threads
    ));
    let stats = writer.commit()?;
    let committed = started.elapsed().as_secs_f64();
    let published = index.segments().len();
    let pre_merge_peak_rss_kib = crate::child::vm_hwm_kib();
    if opts.segments == 0 {
        progress.say(&format!(
            "committed {published} segments; waiting for merges"
        ));
        writer.wait_for_merges()?;
    } else if published > opts.segments {
        progress.say(&format!(
            "committed {published} segments; merging down to {}",
            opts.segments
        ));
        writer.merge(opts.segments)?;
    }
    drop(writer);
    let seconds = started.elapsed().as_secs_f64();
    let segments = index.segments().len();
    progress.say(&format!("{segments} segments"));
    Ok(BuildStats {
        engine: Engine::Heddle,
        docs: stats.docs as u64,
        seconds,
        docs_per_sec: stats.docs as f64 / seconds.max(1e-9),
        bytes: dir_size(dir)?,
        segments,
        phases: vec![
            ("read, buffer and flush".into(), read),
            ("analysis".into(), stats.analysis.as_secs_f64()),
            ("encoding".into(), stats.encoding.as_secs_f64()),
            ("write".into(), stats.write.as_secs_f64()),
            ("fsync".into(), stats.fsync.as_secs_f64()),
            ("commit total".into(), stats.total.as_secs_f64()),
            (
                format!("merge {published} → {segments} segments"),
                seconds - committed,
            ),
        ],
        peak_rss_kib: None,
        pre_merge_peak_rss_kib,
        threads: opts.threads,
        memory_bytes: Some(opts.memory_bytes),
        segment_target: Some(opts.segments),
    })
}

/// The instrument's [`HeddleFactory`] (the very backend `heddle-eval bench` runs),
/// opening the index at a fixed directory.
#[derive(Debug, Clone)]
pub struct HeddleAt {
    dir: PathBuf,
    /// At the engine's default BM25, which is tantivy's.
    factory: HeddleFactory,
}

impl HeddleAt {
    pub fn new(dir: &Path) -> Self {
        HeddleAt {
            dir: dir.to_path_buf(),
            factory: HeddleFactory::default(),
        }
    }

    /// At another BM25 than the engine's default (the Lucene comparison takes any).
    pub fn with_bm25(dir: &Path, bm25: heddle::Bm25Params) -> Self {
        HeddleAt {
            dir: dir.to_path_buf(),
            factory: HeddleFactory {
                bm25,
                ..HeddleFactory::default()
            },
        }
    }
}

impl BackendFactory for HeddleAt {
    fn name(&self) -> &str {
        self.factory.name()
    }

    fn open(&self, _index: &Path) -> anyhow::Result<Arc<dyn Backend>> {
        self.factory.open(&self.dir)
    }

    fn source_dir(&self, _index: &Path) -> PathBuf {
        self.dir.clone()
    }

    fn open_for_writes(
        &self,
        dir: &Path,
        options: &WriteOptions,
    ) -> anyhow::Result<Arc<dyn Backend>> {
        self.factory.open_for_writes(dir, options)
    }
}

/// heddle with scores, for the agreement check.
pub struct HeddleScored {
    index: Index,
    bm25: heddle::Bm25Params,
}

impl HeddleScored {
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        let index =
            Index::open(dir).with_context(|| format!("opening heddle index {}", dir.display()))?;
        Ok(HeddleScored {
            index,
            bm25: heddle::Bm25Params::default(),
        })
    }

    /// At another BM25 than the engine's default.
    pub fn with_bm25(mut self, bm25: heddle::Bm25Params) -> Self {
        self.bm25 = bm25;
        self
    }

    /// The documents BM25 counts as N.
    pub fn num_docs(&self) -> u64 {
        self.index.searcher().num_docs()
    }

    /// The documents holding `term` (an analysed token) in the flat field.
    pub fn doc_freq(&self, term: &str) -> anyhow::Result<u64> {
        Ok(self.index.searcher().doc_freq(heddle::Field::Flat, term)?)
    }
}

impl ScoredSearch for HeddleScored {
    fn search_scored(&self, query: &str, k: usize) -> anyhow::Result<Vec<ScoredHit>> {
        let opts = SearchOptions {
            k,
            bm25: self.bm25,
            ..SearchOptions::default()
        };
        Ok(self
            .index
            .searcher()
            .search(query, &opts)?
            .into_iter()
            .map(|h| ScoredHit {
                id: h.id,
                score: h.score,
            })
            .collect())
    }
}
