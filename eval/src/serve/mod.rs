//! heddle over HTTP: `heddle-eval serve`, a server speaking a small subset of the
//! Elasticsearch API, and the HTTP backend that lets `bench --target` drive it (or any
//! server speaking that subset) with the same open-loop instrument.
//!
//! Like the rest of the harness it stands outside the engine: [`HeddleService`] calls
//! heddle's public API, and the server is generic over a [`SearchService`], so that the
//! instrument's synthetic backends can sit behind it in tests ([`BackendService`]).
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
mod client;
mod dsl;
mod error;
mod reload;
mod routes;
mod server;
mod service;

pub use bulk::{BulkOp, parse_bulk};
pub use client::{HttpBackend, HttpFactory, Target};
pub use dsl::{
    DEFAULT_SIZE, MAX_RESULT_WINDOW, MultiMatchKind, Query, SearchRequest, UrlParams, parse_search,
    parse_search_with,
};
pub use error::ApiError;
pub use reload::Reloader;
pub use routes::SERVICE_MICROS_HEADER;
pub use server::{RunningServer, ServerConfig, bind, runtime, serve};
pub use service::{BackendService, BulkItem, HeddleService, SearchService, ServedHit};
