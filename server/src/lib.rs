//! heddle over HTTP: a server speaking a small subset of the Elasticsearch API, run by
//! `heddle-eval serve`.
//!
//! It stands outside the engine: the server is generic over a [`SearchService`], which
//! heddle-eval implements for heddle's index (ranking as its `quality` command ranks) and
//! for the instrument's synthetic backends (in tests).
//!
//! Endpoints (all JSON; errors are `{"error": {"type", "reason"}, "status"}`; every
//! response carries the server's own time on it in `X-Heddle-Service-Micros`):
//!
//! | request | answer |
//! | --- | --- |
//! | `GET /` | name and version |
//! | `GET /_cluster/health` | `{"status": "green", ...}` while the server runs |
//! | `POST /{index}/_search` | `took`, `hits.total`, `hits.hits[]._id/_score/_source.title` |
//! | `POST /{index}/_bulk` | `index`/`create`/`delete` lines applied in one commit |
//! | `GET /{index}/_count` | `{"count": live documents}` |
//!
//! The query subset is described at [`parse_search`]'s module (`dsl.rs`), the bulk format
//! at [`parse_bulk`]'s (`bulk.rs`).

mod bulk;
mod dsl;
mod error;
mod reload;
mod routes;
mod server;
mod service;

pub use bulk::{BulkOp, parse_bulk};
pub use dsl::{
    DEFAULT_SIZE, MAX_RESULT_WINDOW, MultiMatchKind, Query, SearchRequest, UrlParams, parse_search,
    parse_search_with,
};
pub use error::ApiError;
pub use reload::Reloader;
pub use routes::SERVICE_MICROS_HEADER;
pub use server::{RunningServer, ServerConfig, bind, runtime, serve};
pub use service::{BulkItem, SearchService, ServedHit};
