//! heddle-eval's side of HTTP: heddle's index (and the instrument's synthetic backends)
//! behind heddle-server's [`SearchService`], which `heddle-eval serve` serves, and the HTTP
//! backend that lets `bench --target` drive it (or any server speaking that subset) with
//! the same open-loop instrument.
//!
//! The server itself (routes, the query subset, the bulk format, the listener) is the
//! heddle-server crate, re-exported here.

mod client;
mod service;

pub use client::{HttpBackend, HttpFactory, Target};
pub use heddle_server::*;
pub use service::{BackendService, HeddleService};
