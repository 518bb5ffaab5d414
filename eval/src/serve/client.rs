//! The HTTP backend of `bench --target`: each search is one `POST {target}/_search` in
//! the Elasticsearch subset that `serve` speaks, so the same run can drive heddle's
//! server, an Elasticsearch or OpenSearch node, or Quickwit's Elasticsearch endpoint.
//!
//! The request: `{"query": {"match": {FIELD: TEXT}}, "size": k, "_source": false,
//! "track_total_hits": false}`. The one response field read: `hits.hits[]._id`, in
//! order. Anything but a 2xx is a failed request, with the server's `error.reason`.
//!
//! Each worker thread of the rung blocks in its own request; connections are kept
//! alive in a pool whose idle size is the in-flight cap, and a request that finds no
//! idle connection opens one instead of waiting: the pool can never queue a request
//! (docs/DECISIONS.md, "The HTTP backend").

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::json;

use crate::bench::backend::{Backend, BackendFactory};
use crate::bench::stats::LatencyHistogram;

/// Longest one request may take before it counts as failed: far beyond any tail worth
/// measuring, short enough that a dead server does not hang a rung.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// A pooled connection idle longer than this is not reused. `serve` closes a connection
/// idle for its client timeout (10 s by default); retiring ours well before it means a
/// request is never written into a connection the server is closing at that moment.
const MAX_IDLE_AGE: Duration = Duration::from_secs(5);

/// A `--target` URL taken apart: `http://HOST:PORT[/PREFIX]/INDEX`. The index is the
/// last path segment; what comes before it is where the server mounts its Elasticsearch
/// API (Quickwit's is `/api/v1/_elastic`, a proxied Elasticsearch may have its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `http://HOST:PORT`, no trailing slash.
    pub base: String,
    /// The path before the index: empty, or `/SEGMENT[/SEGMENT…]`.
    pub prefix: String,
    pub index: String,
}

impl Target {
    pub fn parse(url: &str) -> anyhow::Result<Target> {
        let Some(rest) = url.strip_prefix("http://") else {
            if url.starts_with("https://") {
                bail!(
                    "--target {url}: https is not supported (this build has no TLS); use http://"
                );
            }
            bail!("--target {url}: expected http://HOST:PORT/INDEX");
        };
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        let path = path.trim_end_matches('/');
        let (prefix, index) = path.rsplit_once('/').unwrap_or(("", path));
        let bad_prefix = !prefix.is_empty() && prefix.split('/').any(str::is_empty);
        if host.is_empty() || index.is_empty() || bad_prefix {
            bail!(
                "--target {url}: expected http://HOST:PORT/INDEX (or http://HOST:PORT/PREFIX/INDEX), \
                 an index name after the host"
            );
        }
        Ok(Target {
            base: format!("http://{host}"),
            prefix: if prefix.is_empty() {
                String::new()
            } else {
                format!("/{prefix}")
            },
            index: index.to_string(),
        })
    }

    /// The port of a target on this machine (a loopback address or `localhost`).
    pub fn local_port(&self) -> Option<u16> {
        let host_port = self.base.strip_prefix("http://")?;
        let (host, port) = host_port.rsplit_once(':')?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let local = host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        local.then(|| port.parse().ok()).flatten()
    }

    pub fn url(&self) -> String {
        format!("{}{}/{}", self.base, self.prefix, self.index)
    }
}

/// Opens an [`HttpBackend`] on a target; the index path the bench passes is ignored.
#[derive(Debug, Clone)]
pub struct HttpFactory {
    pub target: Target,
    /// The field each `match` names (`--target-field`).
    pub field: String,
    /// Idle connections kept alive: the in-flight cap.
    pub pool: usize,
}

impl BackendFactory for HttpFactory {
    fn name(&self) -> &str {
        "http"
    }

    /// Checks that the target answers a search before any rung starts, so that a wrong
    /// URL fails here with its reason rather than as a rung of errors.
    fn open(&self, _index: &Path) -> anyhow::Result<Arc<dyn Backend>> {
        let backend = HttpBackend::new(&self.target, &self.field, self.pool);
        backend
            .search("heddle", 1)
            .with_context(|| format!("checking --target {}", self.target.url()))?;
        backend.take_client_time();
        Ok(Arc::new(backend))
    }
}

/// A search endpoint over HTTP/1.1 keep-alive connections.
pub struct HttpBackend {
    agent: ureq::Agent,
    search_url: String,
    field: String,
    /// Per request: building the body plus parsing the answer — the client's own work,
    /// apart from the wire and the server.
    client: Mutex<LatencyHistogram>,
    /// The server's process when the target is on this machine (found once, at open).
    server_pid: Option<u32>,
}

impl HttpBackend {
    pub fn new(target: &Target, field: &str, pool: usize) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_idle_connections(pool.max(1))
            .max_idle_connections_per_host(pool.max(1))
            .timeout_global(Some(REQUEST_TIMEOUT))
            .max_idle_age(MAX_IDLE_AGE)
            // Never through a proxy named by the environment (ureq's default): the
            // latency measured must be the target's, and the report names only it.
            .proxy(None)
            .build();
        HttpBackend {
            agent: ureq::Agent::new_with_config(config),
            search_url: format!("{}/_search", target.url()),
            field: field.to_string(),
            client: Mutex::new(LatencyHistogram::default()),
            server_pid: target
                .local_port()
                .and_then(crate::bench::probe::listener_pid),
        }
    }
}

/// The part of a `_search` response the backend reads.
#[derive(Deserialize)]
struct SearchResponse {
    hits: Hits,
}

#[derive(Deserialize)]
struct Hits {
    hits: Vec<HitId>,
}

#[derive(Deserialize)]
struct HitId {
    #[serde(rename = "_id")]
    id: String,
}

/// An error response's reason, if it has Elasticsearch's shape.
#[derive(Deserialize)]
struct ErrorResponse {
    error: ErrorBody,
}

#[derive(Deserialize)]
struct ErrorBody {
    reason: String,
}

impl Backend for HttpBackend {
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<String>> {
        let built = Instant::now();
        let body = serde_json::to_vec(&json!({
            "query": {"match": {&self.field: query}},
            "size": k,
            "_source": false,
            "track_total_hits": false,
        }))?;
        let sent = Instant::now();
        let mut response = self
            .agent
            .post(&self.search_url)
            .header("content-type", "application/json")
            .send(&body[..])
            .with_context(|| format!("POST {}", self.search_url))?;
        let status = response.status();
        let bytes = response
            .body_mut()
            .read_to_vec()
            .with_context(|| format!("reading the answer of {}", self.search_url))?;
        let received = Instant::now();
        if !status.is_success() {
            let reason = serde_json::from_slice::<ErrorResponse>(&bytes)
                .map(|e| e.error.reason)
                .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).chars().take(300).collect());
            bail!("{} answered {status}: {reason}", self.search_url);
        }
        let parsed: SearchResponse = serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "{} answered without hits.hits[]._id: {}",
                self.search_url,
                String::from_utf8_lossy(&bytes)
                    .chars()
                    .take(300)
                    .collect::<String>()
            )
        })?;
        let ids = parsed.hits.hits.into_iter().map(|h| h.id).collect();
        let client = (sent - built) + received.elapsed();
        if let Ok(mut h) = self.client.lock() {
            h.record_nanos(client.as_nanos() as u64);
        }
        Ok(ids)
    }

    fn local_server(&self) -> Option<u32> {
        self.server_pid
    }

    fn take_client_time(&self) -> Option<LatencyHistogram> {
        let mut h = self.client.lock().ok()?;
        Some(std::mem::take(&mut *h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_host_an_optional_prefix_and_one_index() {
        let t = Target::parse("http://127.0.0.1:9200/scifact/").unwrap();
        assert_eq!(t.base, "http://127.0.0.1:9200");
        assert_eq!(t.index, "scifact");
        assert_eq!(t.url(), "http://127.0.0.1:9200/scifact");
        let quickwit = Target::parse("http://127.0.0.1:7280/api/v1/_elastic/hdfs").unwrap();
        assert_eq!(quickwit.base, "http://127.0.0.1:7280");
        assert_eq!(quickwit.prefix, "/api/v1/_elastic");
        assert_eq!(quickwit.index, "hdfs");
        assert_eq!(quickwit.url(), "http://127.0.0.1:7280/api/v1/_elastic/hdfs");
        assert_eq!(quickwit.local_port(), Some(7280));
        for bad in [
            "127.0.0.1:9200/x",
            "http://127.0.0.1:9200",
            "http://127.0.0.1:9200/",
            "http://h/a//b",
            "http:///x",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
        let tls = Target::parse("https://h/x").unwrap_err().to_string();
        assert!(tls.contains("https is not supported"), "{tls}");
    }
}
