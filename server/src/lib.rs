//! heddle over HTTP: a server speaking a small subset of the Elasticsearch API, run by
//! `heddle-eval serve`.
//!
//! It stands outside the engine: the server is generic over a [`SearchService`], which
//! heddle-eval implements for heddle's index (ranking as its `quality` command ranks) and
//! for the instrument's synthetic backends (in tests).
//!
//! Endpoints (all JSON; errors are `{"error": {"type", "reason"}, "status"}`; every
//! response carries the server's own time on it in `X-Heddle-Service-Micros` and
//! `X-Elastic-Product: Elasticsearch`, which the official clients require):
//!
//! | request | answer |
//! | --- | --- |
//! | `GET /` | name and version |
//! | `GET /_cluster/health` | `{"status": "green", ...}` while the server runs |
//! | `POST /{index}/_search` | `took`, `hits.total`, `hits.hits[]._id/_score/_source.title` |
//! | `POST /_bulk`, `POST /{index}/_bulk` | `index`/`create`/`delete` lines applied in one commit |
//! | `GET`/`POST /{index}/_count` | `{"count": …}`: live documents, or those the query matches |
//! | `GET`/`PUT`/`DELETE /{index}/_doc/{id}` | one document read, written or deleted |
//!
//! Every request must name this server in `Host`, come from no foreign `Origin`, and
//! type any body as JSON (`guard.rs`).
//!
//! The query subset is described at [`parse_search`]'s module (`dsl.rs`), the bulk format
//! at [`parse_bulk`]'s (`bulk.rs`).

/// `eprintln!` that never panics: a standard error that cannot be written (`2>/dev/full`)
/// loses the server's note, not the server.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

mod bulk;
mod dsl;
mod error;
mod guard;
mod reload;
mod routes;
mod server;
mod service;

pub use bulk::{BulkOp, BulkPath, parse_bulk, parse_document};
pub use dsl::{
    DEFAULT_SIZE, DEFAULT_TRACK_TOTAL_HITS, MAX_RESULT_WINDOW, MultiMatchKind, Query,
    SearchRequest, TrackTotal, UrlParam, UrlParams, parse_count, parse_search, parse_search_with,
};
pub use error::ApiError;
pub use reload::Reloader;
pub use routes::{ES_API_VERSION, PRODUCT_HEADER, SERVICE_MICROS_HEADER};
pub use server::{RunningServer, ServerConfig, bind, runtime, serve};
pub use service::{BulkItem, SearchService, ServedHit, StoredDoc};
