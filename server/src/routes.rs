//! One HTTP request to one response: the routes, the body limits, and the hop of every
//! search and write off the reactor onto the search threads.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use crate::bulk::parse_bulk;
use crate::dsl::{UrlParams, parse_search_with};
use crate::error::ApiError;
use crate::service::{SearchService, ServedHit};

/// What every request of one server shares.
pub(crate) struct App {
    /// The index's name in paths (`/{name}/_search`).
    pub name: String,
    pub service: Arc<dyn SearchService>,
    /// Largest request body accepted, in bytes; a larger one gets 413.
    pub max_body: usize,
    /// Longest a request body may take to arrive once its headers have; then 408.
    pub body_timeout: Duration,
    /// One `_bulk` at a time, waited for on the reactor (a queued `_bulk` holds no
    /// thread) and run on a thread of its own, never on the search threads.
    pub writes: tokio::sync::Semaphore,
}

pub(crate) type Reply = Response<Full<Bytes>>;

/// The response header carrying the server's own time on a request, in microseconds:
/// from when hyper hands the parsed request line and headers to the handler to when the
/// response, its body serialised, is handed back to hyper. So it holds reading the body,
/// the wait for a search thread, the search and the JSON; not the reactor's delay before
/// the headers are parsed, nor writing the response to the socket. The HTTP backend
/// reports it per rung beside the latency it observes (docs/PERF.md, "Over HTTP").
pub const SERVICE_MICROS_HEADER: &str = "x-heddle-service-micros";

/// Answers one request; every failure becomes a JSON error response, never a dropped
/// connection or a panic. Every response carries [`SERVICE_MICROS_HEADER`].
pub(crate) async fn handle(app: Arc<App>, req: Request<Incoming>) -> Result<Reply, Infallible> {
    let started = Instant::now();
    let mut reply = match route(&app, req, started).await {
        Ok(reply) => reply,
        Err(e) => reply(e.status, &e.body()),
    };
    let micros = started.elapsed().as_micros() as u64;
    reply.headers_mut().insert(
        SERVICE_MICROS_HEADER,
        hyper::header::HeaderValue::from(micros),
    );
    Ok(reply)
}

async fn route(app: &App, req: Request<Incoming>, started: Instant) -> Result<Reply, ApiError> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let url = UrlParams::parse(
        req.uri().query(),
        matches!(parts.as_slice(), [_, "_search"]),
        matches!(parts.as_slice(), [_, "_bulk"]),
    )?;
    let allow = |methods: &[Method], allowed: &str| -> Result<(), ApiError> {
        if methods.contains(&method) {
            return Ok(());
        }
        Err(ApiError::new(
            405,
            "method_not_allowed",
            format!(
                "Incorrect HTTP method for uri [{path}] and method [{method}], allowed: [{allowed}]"
            ),
        ))
    };
    match parts.as_slice() {
        [] => {
            allow(&[Method::GET, Method::HEAD], "GET, HEAD")?;
            Ok(reply(200, &about(app)))
        }
        ["_cluster", "health"] => {
            allow(&[Method::GET], "GET")?;
            Ok(reply(200, &health()))
        }
        [index, "_search"] => {
            allow(&[Method::GET, Method::POST], "GET, POST")?;
            known_index(app, index)?;
            let body = read_body(app, req).await?;
            let service = app.service.clone();
            let parsed = small(&body)
                .then(|| parse_search_with(&body, &url))
                .transpose()?;
            let (hits, from, size, source) = off_reactor(move || {
                let request = match parsed {
                    Some(request) => request,
                    None => parse_search_with(&body, &url)?,
                };
                let hits = service.search(&request)?;
                Ok((hits, request.from, request.size, request.source))
            })
            .await?;
            Ok(reply(
                200,
                &search_response(&app.name, &hits, source, started, from, size),
            ))
        }
        [index, "_bulk"] => {
            allow(&[Method::POST, Method::PUT], "POST, PUT")?;
            known_index(app, index)?;
            let body = read_body(app, req).await?;
            let service = app.service.clone();
            let name = app.name.clone();
            let parsed = small(&body).then(|| parse_bulk(&body, &name)).transpose()?;
            let _turn = app
                .writes
                .acquire()
                .await
                .map_err(|e| ApiError::internal(format!("waiting for the writer: {e}")))?;
            let items = on_write_thread(move || {
                let ops = match parsed {
                    Some(ops) => ops,
                    None => parse_bulk(&body, &name)?,
                };
                service.bulk(ops)
            })
            .await?;
            let items: Vec<Value> = items
                .iter()
                .map(|i| {
                    json!({i.action: {"_index": app.name, "_id": i.id, "status": i.status, "result": i.result}})
                })
                .collect();
            Ok(reply(
                200,
                &json!({"took": millis(started), "errors": false, "items": items}),
            ))
        }
        [index, "_count"] => {
            allow(&[Method::GET], "GET")?;
            known_index(app, index)?;
            let service = app.service.clone();
            let count = off_reactor(move || service.count()).await?;
            Ok(reply(200, &json!({"count": count})))
        }
        [index] if !index.starts_with('_') => {
            allow(&[Method::GET, Method::HEAD], "GET, HEAD")?;
            known_index(app, index)?;
            Ok(reply(200, &json!({app.name.as_str(): {"aliases": {}}})))
        }
        _ => Err(ApiError::new(
            404,
            "resource_not_found_exception",
            format!(
                "no handler for [{method}] [{path}]: this server answers GET /, \
                 GET /_cluster/health, POST /{{index}}/_search, POST /{{index}}/_bulk and \
                 GET /{{index}}/_count"
            ),
        )),
    }
}

fn known_index(app: &App, name: &str) -> Result<(), ApiError> {
    if name == app.name {
        return Ok(());
    }
    Err(ApiError::new(
        404,
        "index_not_found_exception",
        format!("no such index [{name}]: this server serves [{}]", app.name),
    ))
}

/// The body, refused with 413 past the limit (by its Content-Length before a byte is
/// read, or as it arrives) and with 408 if it takes longer than the body timeout.
async fn read_body(app: &App, req: Request<Incoming>) -> Result<Bytes, ApiError> {
    let too_large = |n: String| {
        ApiError::new(
            413,
            "content_too_long_exception",
            format!(
                "the request body ({n} bytes) is over this server's limit of {} bytes \
                 (serve --max-body)",
                app.max_body
            ),
        )
    };
    if let Some(n) = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        && n > app.max_body as u64
    {
        return Err(too_large(n.to_string()));
    }
    let limited = Limited::new(req.into_body(), app.max_body);
    match tokio::time::timeout(app.body_timeout, limited.collect()).await {
        Err(_) => Err(ApiError::new(
            408,
            "request_timeout",
            format!(
                "the request body did not arrive within {:?}",
                app.body_timeout
            ),
        )),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            Err(too_large("more than that".to_string()))
        }
        Ok(Err(e)) => Err(ApiError::bad_request(format!(
            "reading the request body: {e}"
        ))),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

/// Runs `work` on the runtime's blocking pool (the search threads, `serve --threads`):
/// a slow search holds one of them, never the reactor that accepts and reads.
async fn off_reactor<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(format!("the search thread failed: {e}")))?
}

/// Whether a body is parsed on the reactor, so that a bad request is refused at once
/// even while every search thread is busy; a larger one is parsed where it is served,
/// because parsing up to --max-body would hold the reactor, and every connection with it.
fn small(body: &[u8]) -> bool {
    const INLINE_PARSE_BYTES: usize = 64 << 10;
    body.len() <= INLINE_PARSE_BYTES
}

/// Runs a `_bulk` on a thread of its own: on the search pool, a commit would hold a search
/// thread for its whole length and two of them would stop every search (`--threads 2`),
/// which is exactly the wait on a commit the server promises searches never have.
async fn on_write_thread<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let (done, result) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("heddle-serve-write".into())
        .spawn(move || {
            let _ = done.send(work());
        })
        .map_err(|e| ApiError::internal(format!("starting the write thread: {e}")))?;
    result
        .await
        .map_err(|_| ApiError::internal("the write thread failed"))?
}

/// Elasticsearch's response shape, for the service's best `from + size` hits (`ranked`):
/// the page is what follows the first `from`. heddle collects the top hits without
/// counting every match, so `hits.total` is a lower bound (`gte`) unless fewer than
/// `from + size` were ranked, when it is every match (`eq`), however far `from` went.
fn search_response(
    name: &str,
    ranked: &[ServedHit],
    source: bool,
    started: Instant,
    from: usize,
    size: usize,
) -> Value {
    let matched = ranked.len();
    let relation = if matched < from.saturating_add(size) {
        "eq"
    } else {
        "gte"
    };
    let page = ranked.get(from..).unwrap_or_default();
    let page = &page[..page.len().min(size)];
    // Elasticsearch's max_score is the best of all matches, not of the page.
    let max_score = ranked.first().map(|h| h.score);
    let hits: Vec<Value> = page
        .iter()
        .map(|h| {
            let mut hit = json!({"_index": name, "_id": h.id, "_score": h.score});
            if source {
                hit["_source"] = json!({"title": h.title});
            }
            hit
        })
        .collect();
    json!({
        "took": millis(started),
        "timed_out": false,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
        "hits": {
            "total": {"value": matched, "relation": relation},
            "max_score": max_score,
            "hits": hits,
        },
    })
}

/// `GET /`: who answers, as Elasticsearch's root does.
fn about(app: &App) -> Value {
    json!({
        "name": "heddle",
        "cluster_name": "heddle",
        "index": app.name,
        "version": {
            "number": env!("CARGO_PKG_VERSION"),
            "distribution": "heddle",
        },
        "tagline": "heddle-eval serve: an Elasticsearch _search subset over a heddle index",
    })
}

/// `GET /_cluster/health`: one node, always green while it answers.
fn health() -> Value {
    json!({
        "cluster_name": "heddle",
        "status": "green",
        "timed_out": false,
        "number_of_nodes": 1,
        "number_of_data_nodes": 1,
        "active_shards": 1,
    })
}

/// Elasticsearch's `took`: whole milliseconds since the request's headers were read,
/// truncated as Elasticsearch truncates them (the same span as [`SERVICE_MICROS_HEADER`],
/// ended before the body is serialised).
fn millis(started: Instant) -> u64 {
    started.elapsed().as_millis() as u64
}

pub(crate) fn reply(status: u16, body: &Value) -> Reply {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut r = Response::new(Full::new(Bytes::from(bytes)));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}
