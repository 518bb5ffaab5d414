//! The HTTP backend of `bench --target`: each search is one `POST {target}/_search` in
//! the Elasticsearch subset that `serve` speaks, so the same run can drive heddle's
//! server, an Elasticsearch or OpenSearch node, or Quickwit's Elasticsearch endpoint.
//!
//! The request: `{"query": {"match": {FIELD: TEXT}}, "size": k, "_source": false,
//! "track_total_hits": false}`. The response fields read: `hits.hits[]._id`, in order,
//! and the server's own time, from heddle's `X-Heddle-Service-Micros` header or else
//! Elasticsearch's `took`. Anything but a 2xx is a failed request, with the server's
//! `error.reason`.
//!
//! An async client (hyper's HTTP/1.1 connections on one tokio thread of its own,
//! [`ClientThread`]): the rung's dispatcher hands it each request at its due time
//! ([`Issue`]) and nothing waits on a request in flight. Its [`Pool`] holds one
//! keep-alive connection per in-flight request, opened before the first request and
//! kept fresh off the measured path, so an admitted request always finds one: the pool
//! can never be the queue (docs/DECISIONS.md, "The HTTP backend").

mod pool;
mod writes;

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{CONNECTION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Request, StatusCode};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::oneshot;

use self::pool::Pool;
use crate::bench::backend::{
    Answer, Backend, BackendFactory, CommitReport, Done, Finished, Issue, ServerClock, ServerTime,
    WriteOptions,
};
use crate::bench::stats::LatencyHistogram;
use heddle_server::SERVICE_MICROS_HEADER;

/// Longest one search may take before it counts as failed: far beyond any tail worth
/// measuring, short enough that a dead server does not hang a rung.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

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

    /// `HOST:PORT` (port 80 if the URL names none).
    pub fn host_port(&self) -> String {
        let host = self.base.trim_start_matches("http://");
        let bracketed_v6 = host.starts_with('[') && host.ends_with(']');
        if bracketed_v6 || !host.contains(':') {
            format!("{host}:80")
        } else {
            host.to_string()
        }
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

    /// The path of `endpoint` (`_search`, `_bulk`) of this index.
    fn path(&self, endpoint: &str) -> String {
        format!("{}/{}/{endpoint}", self.prefix, self.index)
    }
}

/// Opens an [`HttpBackend`] on a target; the index path the bench passes is ignored.
#[derive(Debug, Clone)]
pub struct HttpFactory {
    pub target: Target,
    /// The field each `match` names (`--target-field`).
    pub field: String,
    /// Keep-alive connections held open: the in-flight cap.
    pub pool: usize,
}

impl HttpFactory {
    /// [`open`](BackendFactory::open), as the concrete backend (the writes arm deletes
    /// what it wrote through it).
    pub fn open_http(&self) -> anyhow::Result<Arc<HttpBackend>> {
        let backend = HttpBackend::new(&self.target, &self.field, self.pool)?;
        backend
            .search("heddle", 1)
            .with_context(|| format!("checking --target {}", self.target.url()))?;
        backend.fill().with_context(|| {
            format!(
                "opening {} connections to {}",
                self.pool,
                self.target.host_port()
            )
        })?;
        backend.take_client_time();
        Ok(Arc::new(backend))
    }
}

impl BackendFactory for HttpFactory {
    fn name(&self) -> &str {
        "http"
    }

    /// Checks that the target answers a search before any rung starts, so that a wrong
    /// URL fails here with its reason rather than as a rung of errors; then opens the
    /// pool's connections.
    fn open(&self, _index: &Path) -> anyhow::Result<Arc<dyn Backend>> {
        Ok(self.open_http()?)
    }

    /// The target's own index, for the writes arm over HTTP (`--writes-to-target`): what
    /// it adds is posted to the target's `_bulk`. `dir` and the commit threads are the
    /// server's business, not this client's.
    fn open_for_writes(
        &self,
        _dir: &Path,
        _options: &WriteOptions,
    ) -> anyhow::Result<Arc<dyn Backend>> {
        Ok(self.open_http()?)
    }
}

/// What every request of a backend shares, on the client's thread.
struct Shared {
    target: Target,
    /// The target's addresses, resolved once.
    addrs: Vec<SocketAddr>,
    host: HeaderValue,
    search_path: String,
    field: String,
    /// Connections for searches: one per in-flight request.
    pool: Pool,
    /// One connection of its own for `_bulk` (the writes arm), so that a write never
    /// takes a search's.
    writer: Pool,
    /// Per request: building the body plus parsing the answer — the client's own work,
    /// apart from the wire and the server.
    client: Mutex<LatencyHistogram>,
}

/// A search endpoint over HTTP/1.1 keep-alive connections, driven by an async client.
pub struct HttpBackend {
    shared: Arc<Shared>,
    /// The writes arm's documents, waiting for its commit (`_bulk`).
    pending: Mutex<Vec<heddle::Document>>,
    thread: ClientThread,
    /// The server's process when the target is on this machine (found once, at open).
    server_pid: Option<u32>,
}

impl HttpBackend {
    /// A backend on `target` with room for `pool` searches in flight; no connection is
    /// opened yet ([`HttpFactory::open_http`] opens them).
    pub fn new(target: &Target, field: &str, pool: usize) -> anyhow::Result<Self> {
        let host_port = target.host_port();
        let addrs: Vec<SocketAddr> = host_port
            .to_socket_addrs()
            .with_context(|| format!("resolving {host_port}"))?
            .collect();
        anyhow::ensure!(!addrs.is_empty(), "{host_port} resolves to no address");
        let host = target.base.trim_start_matches("http://");
        let shared = Arc::new(Shared {
            target: target.clone(),
            addrs,
            host: HeaderValue::from_str(host).with_context(|| format!("host {host:?}"))?,
            search_path: target.path("_search"),
            field: field.to_string(),
            pool: Pool::new(pool.max(1)),
            writer: Pool::new(1),
            client: Mutex::new(LatencyHistogram::default()),
        });
        let thread = ClientThread::start(shared.clone())?;
        Ok(HttpBackend {
            shared,
            pending: Mutex::new(Vec::new()),
            thread,
            server_pid: target
                .local_port()
                .and_then(crate::bench::probe::listener_pid),
        })
    }

    /// Opens every search connection the pool holds, before any is measured.
    fn fill(&self) -> anyhow::Result<()> {
        let shared = self.shared.clone();
        self.thread
            .run(async move { shared.pool.fill(&shared.addrs).await })?
    }

    /// Connections opened since the backend was made, in all (the pool's own, and those a
    /// request had to open).
    pub fn connections_opened(&self) -> u64 {
        self.shared.pool.opened()
    }

    fn search_url(&self) -> String {
        format!("{}{}", self.shared.target.base, self.shared.search_path)
    }
}

impl Shared {
    /// One search on a pooled connection: the ids, the server's time, whether a
    /// connection had to be opened for it.
    async fn search(self: &Arc<Self>, query: String, k: usize) -> (anyhow::Result<Answer>, bool) {
        let built = Instant::now();
        let body = match serde_json::to_vec(&json!({
            "query": {"match": {&self.field: query}},
            "size": k,
            "_source": false,
            "track_total_hits": false,
        })) {
            Ok(b) => b,
            Err(e) => return (Err(e.into()), false),
        };
        let building = built.elapsed();
        let (reply, connected) = match self.exchange(&self.pool, &self.search_path, body).await {
            Ok(r) => r,
            Err((e, connected)) => {
                return (
                    Err(e.context(format!("POST {}{}", self.target.base, self.search_path))),
                    connected,
                );
            }
        };
        let received = Instant::now();
        let parsed = parse_search(&reply, &self.target, &self.search_path);
        if let Ok(mut h) = self.client.lock() {
            h.record_nanos((building + received.elapsed()).as_nanos() as u64);
        }
        (parsed, connected)
    }

    /// `POST path` with a JSON body on a connection of `pool`, the whole answer read. A
    /// connection that fails before the request is written is replaced and the request
    /// tried on another (it never reached the server); once written, a failure is the
    /// request's.
    async fn exchange(
        &self,
        pool: &Pool,
        path: &str,
        body: Vec<u8>,
    ) -> Result<(Reply, bool), (anyhow::Error, bool)> {
        let mut connected = false;
        let body = Bytes::from(body);
        loop {
            let mut lease = match pool.check_out(&self.addrs).await {
                Ok(l) => l,
                Err(e) => return Err((e, true)),
            };
            connected |= lease.fresh;
            if lease.sender().ready().await.is_err() {
                // Closed while idle (the server's idle timeout, a restart): not sent.
                lease.discard();
                continue;
            }
            let request = Request::post(path)
                .header(HOST, self.host.clone())
                .header(CONTENT_TYPE, "application/json")
                .body(Full::new(body.clone()))
                .map_err(|e| (anyhow::Error::from(e), connected))?;
            let response = match lease.sender().send_request(request).await {
                Ok(r) => r,
                Err(e) => {
                    lease.discard();
                    return Err((e.into(), connected));
                }
            };
            let status = response.status();
            let server_micros = response
                .headers()
                .get(SERVICE_MICROS_HEADER)
                .and_then(server_micros);
            let closing = response
                .headers()
                .get(CONNECTION)
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"));
            let bytes = match response.into_body().collect().await {
                Ok(b) => b.to_bytes(),
                Err(e) => {
                    lease.discard();
                    return Err((
                        anyhow::Error::from(e).context("reading the answer"),
                        connected,
                    ));
                }
            };
            if closing {
                lease.discard();
            } else {
                lease.give_back();
            }
            return Ok((
                Reply {
                    status,
                    server_micros,
                    bytes,
                },
                connected,
            ));
        }
    }
}

/// One answer, read whole.
struct Reply {
    status: StatusCode,
    /// `X-Heddle-Service-Micros`, if sent.
    server_micros: Option<u64>,
    bytes: Bytes,
}

impl Reply {
    /// The reason of a non-2xx answer, from Elasticsearch's error shape if it has it.
    fn failure(&self, url: &str) -> Option<anyhow::Error> {
        if self.status.is_success() {
            return None;
        }
        let reason = serde_json::from_slice::<ErrorResponse>(&self.bytes)
            .map(|e| e.error.reason)
            .unwrap_or_else(|_| snippet(&self.bytes));
        Some(anyhow::anyhow!("{url} answered {}: {reason}", self.status))
    }
}

fn parse_search(reply: &Reply, target: &Target, path: &str) -> anyhow::Result<Answer> {
    let url = format!("{}{path}", target.base);
    if let Some(e) = reply.failure(&url) {
        return Err(e);
    }
    let parsed: SearchResponse = serde_json::from_slice(&reply.bytes).with_context(|| {
        format!(
            "{url} answered without hits.hits[]._id: {}",
            snippet(&reply.bytes)
        )
    })?;
    Ok(Answer {
        ids: parsed.hits.hits.into_iter().map(|h| h.id).collect(),
        server: server_time(reply.server_micros, parsed.took),
        parts: None,
    })
}

fn snippet(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).chars().take(300).collect()
}

/// The part of a `_search` response the backend reads.
#[derive(Deserialize)]
struct SearchResponse {
    hits: Hits,
    /// Elasticsearch's own time on the search, whole milliseconds.
    took: Option<u64>,
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

impl Issue for HttpBackend {
    /// Hands the search to the client's thread and returns: the dispatcher never waits.
    fn issue(&self, query: &str, k: usize, done: Done) {
        let shared = self.shared.clone();
        let query = query.to_string();
        self.thread.spawn(async move {
            let started = Instant::now();
            let (result, connected) =
                match tokio::time::timeout(REQUEST_TIMEOUT, shared.search(query, k)).await {
                    Ok(r) => r,
                    Err(_) => (
                        Err(anyhow::anyhow!(
                            "POST {}{}: no answer within {REQUEST_TIMEOUT:?}",
                            shared.target.base,
                            shared.search_path
                        )),
                        false,
                    ),
                };
            done(Finished {
                started,
                done: Instant::now(),
                result,
                connected,
            });
        });
    }
}

impl Backend for HttpBackend {
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<String>> {
        Ok(self.answer(query, k)?.ids)
    }

    /// One search, waited for (warm-up, the sequential pass, the writes arm's checks).
    fn answer(&self, query: &str, k: usize) -> anyhow::Result<Answer> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.issue(
            query,
            k,
            Box::new(move |f| {
                let _ = tx.send(f.result);
            }),
        );
        rx.recv().unwrap_or_else(|_| {
            Err(anyhow::anyhow!(
                "POST {}: the client stopped before answering",
                self.search_url()
            ))
        })
    }

    fn issuer(&self) -> Option<&dyn Issue> {
        Some(self)
    }

    fn local_server(&self) -> Option<u32> {
        self.server_pid
    }

    fn take_client_time(&self) -> Option<LatencyHistogram> {
        let mut h = self.shared.client.lock().ok()?;
        Some(std::mem::take(&mut *h))
    }

    /// Buffers the documents for the next commit (the writes arm over HTTP).
    fn add_documents(&self, docs: &[heddle::Document]) -> anyhow::Result<()> {
        self.pending
            .lock()
            .map_err(|_| anyhow::anyhow!("the write buffer is poisoned"))?
            .extend_from_slice(docs);
        Ok(())
    }

    /// Posts every buffered document to the target's `_bulk` as `create` (an id the
    /// index holds already refuses, never replaces), with `refresh=true`: visible to
    /// searches when it returns, as heddle's `_bulk` always is.
    fn commit(&self) -> anyhow::Result<CommitReport> {
        let docs = std::mem::take(
            &mut *self
                .pending
                .lock()
                .map_err(|_| anyhow::anyhow!("the write buffer is poisoned"))?,
        );
        self.bulk(writes::create_body(&docs)?)
    }
}

impl HttpBackend {
    /// Deletes documents by id through `_bulk` (`refresh=true`): what the writes arm
    /// added, at its end. An id the index no longer holds is not an error.
    pub fn delete_documents(&self, ids: &[String]) -> anyhow::Result<()> {
        for chunk in ids.chunks(writes::DELETES_PER_REQUEST) {
            self.bulk(writes::delete_body(chunk)?)?;
        }
        Ok(())
    }

    /// One `_bulk` request on the writer's own connection: where its time went.
    fn bulk(&self, body: Vec<u8>) -> anyhow::Result<CommitReport> {
        let shared = self.shared.clone();
        let path = format!("{}?refresh=true", shared.target.path("_bulk"));
        let url = format!("{}{path}", shared.target.base);
        let started = Instant::now();
        let reply = self.thread.run(async move {
            match tokio::time::timeout(
                writes::BULK_TIMEOUT,
                shared.exchange(&shared.writer, &path, body),
            )
            .await
            {
                Ok(Ok((reply, _))) => Ok(reply),
                Ok(Err((e, _))) => Err(e),
                Err(_) => Err(anyhow::anyhow!(
                    "no answer within {:?}",
                    writes::BULK_TIMEOUT
                )),
            }
        })?;
        let wall = started.elapsed();
        let reply = reply.with_context(|| format!("POST {url}"))?;
        if let Some(e) = reply.failure(&url) {
            return Err(e);
        }
        let took = writes::check_bulk(&reply.bytes).with_context(|| format!("POST {url}"))?;
        Ok(writes::report(wall, server_time(reply.server_micros, took)))
    }
}

/// `X-Heddle-Service-Micros`, if a number.
fn server_micros(value: &HeaderValue) -> Option<u64> {
    value.to_str().ok()?.trim().parse().ok()
}

/// The server's own time on a request: heddle's header (µs) where it is sent, else
/// Elasticsearch's `took` (ms), else nothing.
fn server_time(header_micros: Option<u64>, took_ms: Option<u64>) -> Option<ServerTime> {
    match (header_micros, took_ms) {
        (Some(micros), _) => Some(ServerTime {
            micros,
            clock: ServerClock::Header,
        }),
        (None, Some(ms)) => Some(ServerTime {
            micros: ms.saturating_mul(1_000),
            clock: ServerClock::Took,
        }),
        (None, None) => None,
    }
}

/// The client's thread: a current-thread tokio runtime that runs every request and
/// connection of one backend, and the pool's upkeep. Stopped (its requests dropped)
/// when the backend is.
struct ClientThread {
    handle: tokio::runtime::Handle,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ClientThread {
    fn start(shared: Arc<Shared>) -> anyhow::Result<ClientThread> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .context("starting the HTTP client's runtime")?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("heddle-http-client".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let upkeep = async {
                        tokio::join!(
                            shared.pool.keep(&shared.addrs),
                            shared.writer.keep(&shared.addrs)
                        )
                    };
                    tokio::select! {
                        _ = stopped => {}
                        _ = upkeep => {}
                    }
                });
            })
            .context("starting the HTTP client's thread")?;
        Ok(ClientThread {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    fn spawn(&self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        self.handle.spawn(work);
    }

    /// Runs `work` on the client's thread and waits for its result.
    fn run<T: Send + 'static>(
        &self,
        work: impl std::future::Future<Output = T> + Send + 'static,
    ) -> anyhow::Result<T> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.spawn(async move {
            let _ = tx.send(work.await);
        });
        rx.recv()
            .map_err(|_| anyhow::anyhow!("the HTTP client's thread stopped"))
    }
}

impl Drop for ClientThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_time_comes_from_the_header_else_took_else_nowhere() {
        let header = ServerTime {
            micros: 431,
            clock: ServerClock::Header,
        };
        assert_eq!(server_time(Some(431), Some(7)), Some(header));
        assert_eq!(
            server_time(None, Some(7)),
            Some(ServerTime {
                micros: 7_000,
                clock: ServerClock::Took
            })
        );
        assert_eq!(server_time(None, None), None);
    }

    #[test]
    fn targets_are_host_an_optional_prefix_and_one_index() {
        let t = Target::parse("http://127.0.0.1:9200/scifact/").unwrap();
        assert_eq!(t.base, "http://127.0.0.1:9200");
        assert_eq!(t.index, "scifact");
        assert_eq!(t.url(), "http://127.0.0.1:9200/scifact");
        assert_eq!(t.host_port(), "127.0.0.1:9200");
        assert_eq!(t.path("_bulk"), "/scifact/_bulk");
        let quickwit = Target::parse("http://127.0.0.1:7280/api/v1/_elastic/hdfs").unwrap();
        assert_eq!(quickwit.base, "http://127.0.0.1:7280");
        assert_eq!(quickwit.prefix, "/api/v1/_elastic");
        assert_eq!(quickwit.index, "hdfs");
        assert_eq!(quickwit.url(), "http://127.0.0.1:7280/api/v1/_elastic/hdfs");
        assert_eq!(quickwit.path("_search"), "/api/v1/_elastic/hdfs/_search");
        assert_eq!(quickwit.local_port(), Some(7280));
        assert_eq!(Target::parse("http://es/x").unwrap().host_port(), "es:80");
        assert_eq!(
            Target::parse("http://[::1]/x").unwrap().host_port(),
            "[::1]:80"
        );
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
