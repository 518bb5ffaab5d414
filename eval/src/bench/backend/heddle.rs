//! heddle behind the [`Backend`] trait.

use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::Context;

use super::{
    Answer, AnswerParts, Backend, BackendFactory, CommitReport, Unsupported, WriteOptions,
};
use crate::quality::Retrieval;

/// Opens heddle indexes; searches rank with BM25 at `bm25` (the engine's default unless
/// `bench --k1/--b` say otherwise), or as `ranking` says (the vector and hybrid arms).
#[derive(Debug, Clone, Default)]
pub struct HeddleFactory {
    pub bm25: heddle::Bm25Params,
    /// `bench --arm vector|hybrid`: each request ranked by this, its query encoded
    /// inside the request. `None`: BM25 over the flat field.
    pub ranking: Option<Arc<Retrieval>>,
    /// `bench --encode-batch`: the most waiting requests a worker takes together, their
    /// queries encoded in one run of the model (1: one at a time).
    pub encode_batch: usize,
}

impl BackendFactory for HeddleFactory {
    fn name(&self) -> &str {
        "heddle"
    }

    fn open(&self, index: &Path) -> anyhow::Result<Arc<dyn Backend>> {
        let index = heddle::Index::open(index)
            .with_context(|| format!("opening heddle index {}", index.display()))?;
        Ok(Arc::new(HeddleBackend {
            index,
            writer: None,
            bm25: self.bm25,
            ranking: self.ranking.clone(),
            encode_batch: self.encode_batch,
        }))
    }

    /// Takes the index's writer up front (it reads every live id once), so that a
    /// commit measured later pays only for itself. Background merges are off: a merge
    /// started by one commit would compete with the reads measured after it.
    fn open_for_writes(
        &self,
        dir: &Path,
        options: &WriteOptions,
    ) -> anyhow::Result<Arc<dyn Backend>> {
        let index = heddle::Index::open(dir)
            .with_context(|| format!("opening heddle index {}", dir.display()))?;
        let mut writer = index
            .writer()
            .with_context(|| format!("taking the writer of {}", dir.display()))?;
        writer.set_threads(options.threads)?;
        writer.set_background_merges(false);
        Ok(Arc::new(HeddleBackend {
            index,
            writer: Some(Mutex::new(writer)),
            bm25: self.bm25,
            ranking: self.ranking.clone(),
            encode_batch: self.encode_batch,
        }))
    }
}

/// An open heddle index. Each search takes the snapshot current at its start, as a
/// server would, so that the cost of doing so is measured and later commits are seen.
struct HeddleBackend {
    index: heddle::Index,
    /// Present when opened for writes. Only the writes arm's writer thread locks it;
    /// searches never do.
    writer: Option<Mutex<heddle::IndexWriter>>,
    bm25: heddle::Bm25Params,
    ranking: Option<Arc<Retrieval>>,
    encode_batch: usize,
}

impl HeddleBackend {
    fn writer(&self, operation: &'static str) -> anyhow::Result<&Mutex<heddle::IndexWriter>> {
        self.writer
            .as_ref()
            .ok_or_else(|| Unsupported::new(operation).into())
    }
}

/// A ranking's top `k` and where its time went, as the rung records it.
fn ranked_answer(
    (hits, parts): (Vec<crate::quality::RankedHit>, crate::quality::RequestParts),
    k: usize,
) -> Answer {
    Answer {
        ids: hits.into_iter().take(k).map(|h| h.id).collect(),
        server: None,
        parts: Some(AnswerParts::of(&parts)),
    }
}

impl Backend for HeddleBackend {
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<String>> {
        Ok(self.answer(query, k)?.ids)
    }

    /// The vector and hybrid arms say where the request's time went.
    fn answer(&self, query: &str, k: usize) -> anyhow::Result<Answer> {
        if let Some(ranking) = &self.ranking {
            let ranked = ranking.rank_timed(&self.index.searcher(), "", query)?;
            return Ok(ranked_answer(ranked, k));
        }
        let opts = heddle::SearchOptions {
            k,
            bm25: self.bm25,
            ..heddle::SearchOptions::default()
        };
        let hits = self.index.searcher().search(query, &opts)?;
        Ok(Answer {
            ids: hits.into_iter().map(|h| h.id).collect(),
            server: None,
            parts: None,
        })
    }

    /// A batch only where there are queries to encode.
    fn batch_limit(&self) -> usize {
        match &self.ranking {
            Some(r) if r.has_vector_stream() => self.encode_batch.max(1),
            _ => 1,
        }
    }

    /// The queries encoded in one run of the model, then each searched in turn on the
    /// snapshot current at its own start; each request's encoding part is the batch's.
    fn answer_batch(
        &self,
        queries: &[&str],
        k: usize,
        done: &mut dyn FnMut(usize, anyhow::Result<Answer>),
    ) {
        let Some(ranking) = self.ranking.as_ref().filter(|_| queries.len() > 1) else {
            return super::answer_each(self, queries, k, done);
        };
        let pairs: Vec<(&str, &str)> = queries.iter().map(|&q| ("", q)).collect();
        let (vectors, encode) = match ranking.query_vectors_of(&pairs) {
            Ok(encoded) => encoded,
            Err(e) => {
                for i in 0..queries.len() {
                    done(i, Err(anyhow::anyhow!("{e:#}")));
                }
                return;
            }
        };
        for (i, &query) in queries.iter().enumerate() {
            let vector = vectors.as_ref().map(|v| v[i].as_slice());
            let ranked =
                ranking.rank_timed_given(&self.index.searcher(), "", query, vector, encode);
            done(i, ranked.map(|ranked| ranked_answer(ranked, k)));
        }
    }

    /// The flat field's document frequencies over the live documents of this moment's
    /// snapshot, for the index's own analysis of the query.
    fn term_shares(&self, query: &str) -> anyhow::Result<Option<Vec<f64>>> {
        let searcher = self.index.searcher();
        let docs = searcher.num_docs().max(1) as f64;
        let mut terms = self.index.analyzer().tokens(query);
        terms.sort();
        terms.dedup();
        let mut shares = Vec::with_capacity(terms.len());
        for t in &terms {
            shares.push(searcher.doc_freq(heddle::Field::Flat, t)? as f64 / docs);
        }
        Ok(Some(shares))
    }

    /// Buffers the documents (a copy each). A rejected document (duplicate id, too
    /// large) drops the whole buffer, so that a failed batch leaves nothing behind.
    fn add_documents(&self, docs: &[heddle::Document]) -> anyhow::Result<()> {
        let mut writer = self
            .writer("add_documents")?
            .lock()
            .expect("writer poisoned");
        for doc in docs {
            if let Err(e) = writer.add(doc.clone()) {
                writer.rollback();
                return Err(e).context("adding a document");
            }
        }
        Ok(())
    }

    fn commit(&self) -> anyhow::Result<CommitReport> {
        let stats = self
            .writer("commit")?
            .lock()
            .expect("writer poisoned")
            .commit()?;
        let mut phases = vec![
            ("analysis".to_string(), stats.analysis),
            ("encoding".to_string(), stats.encoding),
            ("write".to_string(), stats.write),
            ("fsync".to_string(), stats.fsync),
            ("manifest".to_string(), stats.manifest),
            ("publish".to_string(), stats.publish),
        ];
        // Locking, file collection and bookkeeping: what the named phases leave out.
        let named: std::time::Duration = phases.iter().map(|(_, d)| *d).sum();
        phases.push(("other".to_string(), stats.total.saturating_sub(named)));
        Ok(CommitReport {
            phases,
            exclusive: Some(stats.exclusive),
        })
    }
}
