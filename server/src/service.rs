//! What the server searches: the [`SearchService`] trait. heddle-eval puts heddle's index
//! behind it (`HeddleService`, which ranks as the instrument's `quality` does) and any
//! bench backend (`BackendService`, in its tests).

use crate::bulk::BulkOp;
use crate::dsl::{Query, SearchRequest};
use crate::error::ApiError;

/// One hit as the server returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedHit {
    pub id: String,
    pub score: f64,
    pub title: String,
}

/// A document's stored fields, as `GET /{index}/_doc/{id}` returns them in `_source`.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredDoc {
    pub title: String,
}

/// What one bulk operation did: Elasticsearch's `items[]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkItem {
    pub action: &'static str,
    pub id: String,
    /// 201 created, 200 updated or deleted, 404 a delete of an absent id.
    pub status: u16,
    /// `created`, `updated`, `deleted` or `not_found`.
    pub result: &'static str,
}

/// An index the server can search. Called on the server's search threads, never on
/// its reactor, so an implementation may block.
pub trait SearchService: Send + Sync + 'static {
    /// The best `request.from + request.size` hits of `request`, best first. The server
    /// skips `from` itself: how many there were before the skip is what `hits.total`
    /// reports when the query has fewer matches than that.
    fn search(&self, request: &SearchRequest) -> Result<Vec<ServedHit>, ApiError>;

    /// Live documents (`query` `None`), or the live documents `query` matches (any of
    /// its words in any of its fields, as `_search` ranks them): `_count`, and
    /// `hits.total` when the ranking alone cannot say. A query `_search` refuses is
    /// refused the same way.
    fn count(&self, query: Option<&Query>) -> Result<u64, ApiError>;

    /// The stored fields of the live document with external id `id` (`GET
    /// /{index}/_doc/{id}`); `None` if there is none. A service that cannot look a
    /// document up by id refuses with 501.
    fn get(&self, id: &str) -> Result<Option<StoredDoc>, ApiError> {
        let _ = id;
        Err(ApiError::new(
            501,
            "unsupported_operation_exception",
            "this index cannot look a document up by id",
        ))
    }

    /// Applies `ops` and commits them: visible to every search that starts after this
    /// returns. A service that cannot write refuses with 501.
    fn bulk(&self, ops: Vec<BulkOp>) -> Result<Vec<BulkItem>, ApiError> {
        let _ = ops;
        Err(ApiError::new(
            501,
            "unsupported_operation_exception",
            "this index is read-only: it cannot take _bulk writes",
        ))
    }
}
