//! tantivy's side: an index of the same BEIR corpus and a backend that asks it the same
//! bag-of-words question heddle answers.
//!
//! Schema: `id` and `title` stored (heddle's store keeps both too), `flat` indexed with
//! term frequencies and field norms, no positions (heddle keeps none), title and text
//! added as two values of `flat` so that its length is the token count of both, as
//! heddle's flat length is.
//!
//! A query is built directly, never through `QueryParser` (whose syntax would change
//! the question): the query text is analysed with the field's own tokenizer, and each
//! distinct token becomes one `TermQuery` in a `Should` disjunction, boosted by how
//! often it occurs in the query. tantivy folds a boost into the term's BM25 weight, so a
//! repeated word weighs `count × idf`, as in heddle, and the disjunction keeps its
//! block-max WAND path (every clause is still a plain term scorer).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use heddle_eval::bench::{Backend, BackendFactory, CommitReport, WriteOptions};
use heddle_eval::progress::{Progress, thousands};
use tantivy::collector::TopDocs;
use tantivy::indexer::NoMergePolicy;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use super::{BuildOptions, BuildStats, Engine, ScoredHit, ScoredSearch, dir_size};
use crate::analysis::{Analysis, Peer};
use crate::reference::CollectionStats;
use crate::tokenizer::{HEDDLE_TOKENIZER, HeddleTokenizer};

/// The version this crate pins (`=0.27.0` in bench/Cargo.toml); reports name it.
pub const TANTIVY_VERSION: &str = "0.27.0";

/// tantivy's own English analyzer, registered by default in every index.
const NATIVE_TOKENIZER: &str = "en_stem";

struct Fields {
    id: Field,
    title: Field,
    flat: Field,
}

/// One document as both `build` and the writes arm add it: id and title stored, title and
/// text indexed together in `flat` (heddle's flat field).
fn tantivy_doc(f: &Fields, id: &str, title: &str, text: &str) -> TantivyDocument {
    let mut d = TantivyDocument::default();
    d.add_text(f.id, id);
    d.add_text(f.title, title);
    d.add_text(f.flat, title);
    d.add_text(f.flat, text);
    d
}

fn schema(analysis: Analysis) -> (Schema, Fields) {
    let tokenizer = match analysis {
        Analysis::Matched => HEDDLE_TOKENIZER,
        Analysis::Native => NATIVE_TOKENIZER,
    };
    let mut builder = Schema::builder();
    let id = builder.add_text_field("id", STORED);
    let title = builder.add_text_field("title", STORED);
    let flat = builder.add_text_field(
        "flat",
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(IndexRecordOption::WithFreqs)
                .set_fieldnorms(true),
        ),
    );
    (builder.build(), Fields { id, title, flat })
}

/// Registers the tokenizer a matched-mode index needs (tokenizers are not persisted).
fn register(index: &Index, analysis: Analysis) {
    if analysis == Analysis::Matched {
        index.tokenizers().register(
            HEDDLE_TOKENIZER,
            HeddleTokenizer::new(analysis.heddle_analyzer(Peer::Tantivy)),
        );
    }
}

fn fields(index: &Index) -> anyhow::Result<Fields> {
    let schema = index.schema();
    Ok(Fields {
        id: schema.get_field("id")?,
        title: schema.get_field("title")?,
        flat: schema.get_field("flat")?,
    })
}

pub(super) fn build(corpus: &Path, dir: &Path, opts: &BuildOptions) -> anyhow::Result<BuildStats> {
    ensure!(
        opts.threads >= 1,
        "tantivy needs at least one indexing thread"
    );
    let started = Instant::now();
    let mut progress = Progress::new("build tantivy");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let (schema, f) = schema(opts.analysis);
    let index = Index::create_in_dir(dir, schema)?;
    register(&index, opts.analysis);
    let mut writer: IndexWriter<TantivyDocument> =
        index.writer_with_num_threads(opts.threads, opts.memory_bytes)?;
    // segments 0: tantivy's default merge policy runs while it indexes. Otherwise
    // segments are merged explicitly below, down to the count asked for.
    if opts.segments > 0 {
        writer.set_merge_policy(Box::new(NoMergePolicy));
    }
    let mut reader = heddle_corpus::beir::open_corpus(corpus)?;
    let path = reader.path().to_path_buf();
    let mut docs = 0u64;
    while let Some(doc) = reader.next() {
        let doc = doc.with_context(|| format!("{}:{}", path.display(), reader.line()))?;
        writer.add_document(tantivy_doc(&f, &doc.id, &doc.title, &doc.text))?;
        docs += 1;
        progress.tick(|| format!("{} documents added", thousands(docs)));
    }
    let added = started.elapsed().as_secs_f64();
    progress.say(&format!("{} documents added; committing", thousands(docs)));
    writer.commit()?;
    let committed = started.elapsed().as_secs_f64();
    let flushed = index.searchable_segment_ids()?.len();
    // With tantivy's own policy its merges ran while it indexed: no peak before them.
    let pre_merge_peak_rss_kib = (opts.segments > 0).then(crate::child::vm_hwm_kib).flatten();
    let merged = opts.segments > 0 && merge_down(&index, &mut writer, opts.segments)?;
    if merged {
        progress.say(&format!(
            "merged {flushed} segments into {}",
            index.searchable_segment_ids()?.len()
        ));
    }
    writer.garbage_collect_files().wait()?;
    writer.wait_merging_threads()?;
    let seconds = started.elapsed().as_secs_f64();
    let segments = index.searchable_segment_ids()?.len();
    Ok(BuildStats {
        engine: Engine::Tantivy,
        docs,
        seconds,
        docs_per_sec: docs as f64 / seconds.max(1e-9),
        bytes: dir_size(dir)?,
        segments,
        phases: vec![
            ("read and add".into(), added),
            ("commit".into(), committed - added),
            (
                format!("merge {flushed} → {segments} segments"),
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

/// Merges the smallest segments together until at most `target` remain. Returns whether
/// anything was merged.
fn merge_down(
    index: &Index,
    writer: &mut IndexWriter<TantivyDocument>,
    target: usize,
) -> anyhow::Result<bool> {
    let mut metas = index.searchable_segment_metas()?;
    if metas.len() <= target {
        return Ok(false);
    }
    metas.sort_by_key(|m| m.num_docs());
    let take = metas.len() - target + 1;
    let ids: Vec<_> = metas[..take].iter().map(|m| m.id()).collect();
    writer.merge(&ids).wait()?;
    Ok(true)
}

/// Opens tantivy indexes for the instrument.
#[derive(Debug, Clone)]
pub struct TantivyFactory {
    dir: PathBuf,
    analysis: Analysis,
}

impl TantivyFactory {
    pub fn new(dir: &Path, analysis: Analysis) -> Self {
        TantivyFactory {
            dir: dir.to_path_buf(),
            analysis,
        }
    }
}

impl BackendFactory for TantivyFactory {
    fn name(&self) -> &str {
        Engine::Tantivy.name()
    }

    fn open(&self, _index: &Path) -> anyhow::Result<Arc<dyn Backend>> {
        Ok(Arc::new(TantivyBackend::open(&self.dir, self.analysis)?))
    }

    fn source_dir(&self, _index: &Path) -> PathBuf {
        self.dir.clone()
    }

    fn open_for_writes(
        &self,
        dir: &Path,
        options: &WriteOptions,
    ) -> anyhow::Result<Arc<dyn Backend>> {
        Ok(Arc::new(TantivyWriting::open(
            dir,
            self.analysis,
            options.threads,
        )?))
    }
}

/// An open tantivy index: a reader that reloads only when told (never, here), as
/// heddle's index handle does.
pub struct TantivyBackend {
    reader: IndexReader,
    fields: Fields,
    /// The field's tokenizer, cloned per query (tantivy's analyzers take `&mut self`).
    analyzer: TextAnalyzer,
}

impl TantivyBackend {
    pub fn open(dir: &Path, analysis: Analysis) -> anyhow::Result<Self> {
        let index = Index::open_in_dir(dir)
            .with_context(|| format!("opening tantivy index {}", dir.display()))?;
        register(&index, analysis);
        TantivyBackend::with_index(&index)
    }

    /// A backend over `index`, whose tokenizer is already registered.
    fn with_index(index: &Index) -> anyhow::Result<Self> {
        let fields = fields(index)?;
        let analyzer = index.tokenizer_for_field(fields.flat)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(TantivyBackend {
            reader,
            fields,
            analyzer,
        })
    }

    /// The disjunction for `text`: one term query per distinct token, boosted by its
    /// count in the query.
    pub fn query(&self, text: &str) -> BooleanQuery {
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        let mut analyzer = self.analyzer.clone();
        let mut stream = analyzer.token_stream(text);
        while stream.advance() {
            *counts.entry(stream.token().text.clone()).or_insert(0) += 1;
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = counts
            .into_iter()
            .map(|(token, count)| {
                let term = TermQuery::new(
                    Term::from_field_text(self.fields.flat, &token),
                    IndexRecordOption::WithFreqs,
                );
                let q: Box<dyn Query> = if count == 1 {
                    Box::new(term)
                } else {
                    Box::new(BoostQuery::new(Box::new(term), count as f32))
                };
                (Occur::Should, q)
            })
            .collect();
        BooleanQuery::new(clauses)
    }

    /// N, the total token count of `flat` and each term's df: what BM25 reads.
    pub fn collection_stats<'a>(
        &self,
        terms: impl IntoIterator<Item = &'a str>,
    ) -> anyhow::Result<CollectionStats> {
        let searcher = self.reader.searcher();
        let mut total_tokens = 0;
        for segment in searcher.segment_readers() {
            total_tokens += segment.inverted_index(self.fields.flat)?.total_num_tokens();
        }
        let mut df = HashMap::new();
        for t in terms {
            let term = Term::from_field_text(self.fields.flat, t);
            df.insert(t.to_string(), searcher.doc_freq(&term)?);
        }
        Ok(CollectionStats {
            docs: searcher
                .segment_readers()
                .iter()
                .map(|s| u64::from(s.max_doc()))
                .sum(),
            total_tokens,
            df,
        })
    }

    fn top(&self, text: &str, k: usize) -> anyhow::Result<Vec<(f32, String)>> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let query = self.query(text);
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(k).order_by_score())?;
        let mut out = Vec::with_capacity(top.len());
        for (score, address) in top {
            // The stored document: external id and title, as heddle reads its store.
            let doc: TantivyDocument = searcher.doc(address)?;
            let id = doc
                .get_first(self.fields.id)
                .and_then(|v| v.as_str())
                .context("a document without a stored id")?;
            let _title = doc.get_first(self.fields.title);
            out.push((score, id.to_string()));
        }
        Ok(out)
    }
}

impl Backend for TantivyBackend {
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<String>> {
        Ok(self.top(query, k)?.into_iter().map(|(_, id)| id).collect())
    }
}

impl ScoredSearch for TantivyBackend {
    fn search_scored(&self, query: &str, k: usize) -> anyhow::Result<Vec<ScoredHit>> {
        Ok(self
            .top(query, k)?
            .into_iter()
            .map(|(score, id)| ScoredHit {
                id,
                score: score as f64,
            })
            .collect())
    }
}

/// tantivy's indexing memory for the writes arm, over all its threads: enough that a
/// 20,000-document batch is one segment per indexing thread.
const WRITES_MEMORY_BYTES: usize = 512 << 20;

/// tantivy opened for the writes arm: the searching backend above, and a writer with
/// `threads` indexing threads and no merges (as heddle's writer in the arm). A commit
/// is tantivy's `commit()` followed by a manual `reload()` of the reader: tantivy's
/// commit does not make documents visible to an open reader by itself.
struct TantivyWriting {
    backend: TantivyBackend,
    fields: Fields,
    writer: Mutex<IndexWriter<TantivyDocument>>,
}

impl TantivyWriting {
    fn open(dir: &Path, analysis: Analysis, threads: usize) -> anyhow::Result<Self> {
        let index = Index::open_in_dir(dir)
            .with_context(|| format!("opening tantivy index {}", dir.display()))?;
        register(&index, analysis);
        let backend = TantivyBackend::with_index(&index)?;
        let writer: IndexWriter<TantivyDocument> =
            index.writer_with_num_threads(threads.max(1), WRITES_MEMORY_BYTES)?;
        writer.set_merge_policy(Box::new(NoMergePolicy));
        Ok(TantivyWriting {
            backend,
            fields: fields(&index)?,
            writer: Mutex::new(writer),
        })
    }
}

impl Backend for TantivyWriting {
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<String>> {
        self.backend.search(query, k)
    }

    /// Documents as `build` makes them. tantivy's indexing threads analyse them as they
    /// arrive, so this call already does part of the indexing (it blocks when their
    /// queue is full).
    fn add_documents(&self, docs: &[heddle::Document]) -> anyhow::Result<()> {
        let writer = self.writer.lock().expect("writer poisoned");
        let f = &self.fields;
        for doc in docs {
            writer.add_document(tantivy_doc(f, &doc.id, &doc.title, &doc.text))?;
        }
        Ok(())
    }

    /// Phases as tantivy exposes them: `prepare` (the indexing threads finish, and
    /// serialize and fsync their segments), `commit` (deletes, meta.json written
    /// atomically and the directory fsynced, unused files collected), `reload` (the
    /// reader opens the new segment and swaps its searcher). tantivy does not measure
    /// an exclusive window; its reader swaps searchers through an `ArcSwap`.
    fn commit(&self) -> anyhow::Result<CommitReport> {
        let mut writer = self.writer.lock().expect("writer poisoned");
        let t = Instant::now();
        let prepared = writer.prepare_commit()?;
        let prepare = t.elapsed();
        let t = Instant::now();
        prepared.commit()?;
        let commit = t.elapsed();
        drop(writer);
        let t = Instant::now();
        self.backend.reader.reload()?;
        let reload = t.elapsed();
        let phases: Vec<(String, Duration)> = vec![
            ("prepare".to_string(), prepare),
            ("commit".to_string(), commit),
            ("reload".to_string(), reload),
        ];
        Ok(CommitReport {
            phases,
            exclusive: None,
        })
    }
}
