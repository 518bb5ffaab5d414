//! What `heddle-eval serve` searches: heddle's index behind heddle-server's
//! [`SearchService`] ([`HeddleService`], ranking as `quality` ranks), and any bench
//! [`Backend`] behind it ([`BackendService`]), so that the synthetic backends of the
//! instrument's tests can be served over HTTP too.

use std::sync::{Arc, Mutex};

use heddle::fusion::{DEFAULT_RRF_K, Rrf};
use heddle::{Bm25Params, Field, SearchOptions};

use heddle_server::{
    ApiError, BulkItem, BulkOp, MultiMatchKind, Query, SearchRequest, SearchService, ServedHit,
    StoredDoc,
};

use crate::bench::backend::{Backend, Unsupported};
use crate::quality::{
    Combine, DEFAULT_FUSION_DEPTH, Retrieval, StreamSpec, VECTOR_STREAM, parse_streams,
    parse_weights,
};

/// A heddle index. Searches take the snapshot published when they start; `_bulk` takes
/// the writer for the length of one request and publishes to the same [`heddle::Index`],
/// so its commit is seen by the next search without a reload.
pub struct HeddleService {
    index: heddle::Index,
    bm25: Bm25Params,
    /// Serialises this server's bulk requests, so that the second waits instead of being
    /// refused as another writer (a writer in another process is refused with 409).
    writes: Mutex<()>,
}

impl HeddleService {
    pub fn new(index: heddle::Index, bm25: Bm25Params) -> Self {
        HeddleService {
            index,
            bm25,
            writes: Mutex::new(()),
        }
    }

    /// How `query` is ranked on this index, keeping `hits` results.
    fn retrieval(&self, query: &Query, hits: usize) -> Result<Retrieval, ApiError> {
        let indexed = self.index.fields();
        let field = |name: &str| -> Result<Field, ApiError> {
            let f = Field::parse(name).map_err(|_| {
                ApiError::bad_request(format!(
                    "no field [{name}]: heddle indexes flat (title and text as one), title \
                     and text"
                ))
            })?;
            if !indexed.contains(&f) {
                return Err(ApiError::bad_request(format!(
                    "field [{name}] is not indexed on its own here (the index was built \
                     without --per-field): use flat"
                )));
            }
            Ok(f)
        };
        match query {
            Query::Match { field: name, .. } => {
                Ok(Retrieval::single(field(name)?, self.bm25, hits, false))
            }
            Query::MultiMatch { fields, kind, .. } => {
                let mut r = Retrieval::single(Field::Flat, self.bm25, hits, false);
                r.streams = fields
                    .iter()
                    .map(|(name, _)| Ok(StreamSpec::bm25(field(name)?)))
                    .collect::<Result<_, ApiError>>()?;
                r.weights = fields.iter().map(|(_, w)| *w).collect();
                r.combine = match kind {
                    MultiMatchKind::MostFields => Combine::Sum,
                    MultiMatchKind::Rrf => Combine::Rrf,
                };
                r.rrf = Rrf {
                    k: DEFAULT_RRF_K,
                    depth: Some(served_depth(hits)),
                };
                Ok(r)
            }
            Query::Fuse {
                streams,
                combine,
                weights,
                rrf_k,
                ..
            } => {
                let bad = |e: anyhow::Error| ApiError::bad_request(format!("[heddle_fuse] {e:#}"));
                let specs = parse_streams(streams).map_err(bad)?;
                for s in &specs {
                    match s {
                        StreamSpec::Bm25 { field: f, .. } => {
                            field(f.name())?;
                        }
                        // The server encodes no query: it has no model loaded.
                        StreamSpec::Vector => {
                            return Err(ApiError::bad_request(format!(
                                "[heddle_fuse] [streams] the {VECTOR_STREAM} stream is not served: this server loads no query encoder"
                            )));
                        }
                    }
                }
                let weights = match weights {
                    Some(w) => {
                        let list: Vec<String> = w.iter().map(f64::to_string).collect();
                        parse_weights(&list.join(","), specs.len()).map_err(bad)?
                    }
                    None => vec![1.0; specs.len()],
                };
                let k = rrf_k.unwrap_or(DEFAULT_RRF_K);
                if !(k.is_finite() && k >= 0.0) {
                    return Err(ApiError::bad_request(format!(
                        "[heddle_fuse] [rrf_k] {k} must be a non-negative number"
                    )));
                }
                let mut r = Retrieval::single(Field::Flat, self.bm25, hits, false);
                r.combine = Combine::parse(combine)
                    .map_err(|e| ApiError::bad_request(format!("[heddle_fuse] [combine] {e}")))?;
                r.streams = specs;
                r.weights = weights;
                r.rrf = Rrf {
                    k,
                    depth: Some(served_depth(hits)),
                };
                Ok(r)
            }
        }
    }
}

impl SearchService for HeddleService {
    fn search(&self, request: &SearchRequest) -> Result<Vec<ServedHit>, ApiError> {
        let wanted = request.from + request.size;
        let retrieval = self.retrieval(&request.query, wanted)?;
        let searcher = self.index.searcher();
        let hits = retrieval
            .rank(&searcher, "", request.query.text())
            .map_err(|e| ApiError::internal(format!("searching: {e:#}")))?;
        Ok(hits
            .into_iter()
            .map(|h| ServedHit {
                id: h.id,
                score: h.score,
                title: h.title,
            })
            .collect())
    }

    /// Every live document, or the union of the documents each of the query's BM25
    /// streams matches (a document matches a stream when it holds a word of the query in
    /// the stream's field), every match read, not only the ranked ones.
    fn count(&self, query: Option<&Query>) -> Result<u64, ApiError> {
        let Some(query) = query else {
            return Ok(self.index.num_docs());
        };
        let retrieval = self.retrieval(query, 1)?;
        let mut fields: Vec<Field> = Vec::new();
        for spec in &retrieval.streams {
            if let StreamSpec::Bm25 { field, .. } = spec
                && !fields.contains(field)
            {
                fields.push(*field);
            }
        }
        let searcher = self.index.searcher();
        let mut matched: Vec<u64> = Vec::new();
        for field in &fields {
            let opts = SearchOptions {
                k: usize::MAX,
                bm25: self.bm25,
                field: *field,
            };
            let docs = searcher
                .search_docs(query.text(), &opts)
                .map_err(|e| ApiError::internal(format!("counting: {e}")))?;
            matched.extend(docs.into_iter().map(|(doc, _)| doc));
        }
        if fields.len() > 1 {
            matched.sort_unstable();
            matched.dedup();
        }
        Ok(matched.len() as u64)
    }

    /// A scan of the stored ids ([`heddle::Searcher::document`]) of the snapshot
    /// published when the request starts.
    fn get(&self, id: &str) -> Result<Option<StoredDoc>, ApiError> {
        let found = self
            .index
            .searcher()
            .document(id)
            .map_err(|e| ApiError::internal(format!("reading document [{id}]: {e}")))?;
        Ok(found.map(|hit| StoredDoc { title: hit.title }))
    }

    /// One commit for the whole request. Background merges are off: a merge would be
    /// joined when the writer is dropped at the end of the request, making it wait.
    fn bulk(&self, ops: Vec<BulkOp>) -> Result<Vec<BulkItem>, ApiError> {
        let _turn = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let mut writer = self.index.writer().map_err(|e| match e {
            heddle::Error::Locked { .. } => ApiError::new(
                409,
                "version_conflict_engine_exception",
                format!("another writer holds the index: {e}"),
            ),
            e => ApiError::internal(format!("taking the index's writer: {e}")),
        })?;
        writer.set_background_merges(false);
        let mut items = Vec::with_capacity(ops.len());
        for op in ops {
            let (action, id) = (op.action(), op.id().to_string());
            let (status, result) = match op {
                BulkOp::Delete(id) => {
                    if writer.delete(&id) {
                        (200, "deleted")
                    } else {
                        (404, "not_found")
                    }
                }
                BulkOp::Index(doc) => {
                    let existed = writer.delete(&doc.id);
                    add(&mut writer, doc)?;
                    if existed {
                        (200, "updated")
                    } else {
                        (201, "created")
                    }
                }
                BulkOp::Create(doc) => {
                    add(&mut writer, doc)?;
                    (201, "created")
                }
            };
            items.push(BulkItem {
                action,
                id,
                status,
                result,
            });
        }
        writer
            .commit()
            .map_err(|e| ApiError::internal(format!("committing: {e}")))?;
        Ok(items)
    }
}

/// Buffers `doc`; a refusal (a duplicate id, a document too large) drops the whole
/// batch, so that a refused request commits nothing.
fn add(writer: &mut heddle::IndexWriter, doc: heddle::Document) -> Result<(), ApiError> {
    let id = doc.id.clone();
    writer.add(doc).map_err(|e| {
        writer.rollback();
        let status = if matches!(e, heddle::Error::DuplicateId { .. }) {
            409
        } else {
            400
        };
        ApiError::new(
            status,
            "document_refused_exception",
            format!("document [{id}]: {e}; nothing in this request was committed"),
        )
    })
}

/// Any bench [`Backend`] as a service: the query's text goes to [`Backend::search`],
/// hits come back with a score of 1 / rank and no title. This is how the instrument's
/// tests put a synthetic backend (with a known service time and stall) behind HTTP.
pub struct BackendService {
    backend: Arc<dyn Backend>,
}

impl BackendService {
    pub fn new(backend: Arc<dyn Backend>) -> Self {
        BackendService { backend }
    }
}

impl SearchService for BackendService {
    fn search(&self, request: &SearchRequest) -> Result<Vec<ServedHit>, ApiError> {
        let ids = self
            .backend
            .search(request.query.text(), request.from + request.size)
            .map_err(|e| ApiError::internal(format!("searching: {e:#}")))?;
        Ok(ids
            .into_iter()
            .enumerate()
            .map(|(i, id)| ServedHit {
                id,
                score: 1.0 / (i + 1) as f64,
                title: String::new(),
            })
            .collect())
    }

    /// A bench backend cannot count its documents.
    fn count(&self, _: Option<&Query>) -> Result<u64, ApiError> {
        Err(ApiError::new(
            501,
            "unsupported_operation_exception",
            "this backend cannot count its documents",
        ))
    }

    fn bulk(&self, ops: Vec<BulkOp>) -> Result<Vec<BulkItem>, ApiError> {
        let mut docs = Vec::new();
        for op in &ops {
            match op {
                BulkOp::Create(d) | BulkOp::Index(d) => docs.push(d.clone()),
                BulkOp::Delete(_) => {
                    return Err(ApiError::new(
                        501,
                        "unsupported_operation_exception",
                        "this backend cannot delete",
                    ));
                }
            }
        }
        let refused = |e: anyhow::Error| {
            let status = if e.downcast_ref::<Unsupported>().is_some() {
                501
            } else {
                500
            };
            ApiError::new(status, "unsupported_operation_exception", format!("{e:#}"))
        };
        self.backend.add_documents(&docs).map_err(refused)?;
        self.backend.commit().map_err(refused)?;
        Ok(ops
            .iter()
            .map(|op| BulkItem {
                action: op.action(),
                id: op.id().to_string(),
                status: 201,
                result: "created",
            })
            .collect())
    }
}

/// How deep the server reads each stream of a fused query, a score sum included: the
/// CLI's `--combine sum` reads every match (an exact sum), which a request must not be
/// able to ask of a server (a frequent word's every match, per field, stored fields and
/// all). A document outside a stream's first this many gets nothing from it.
fn served_depth(hits: usize) -> usize {
    DEFAULT_FUSION_DEPTH.max(hits)
}
