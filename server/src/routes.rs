//! One HTTP request to one response: the routes, the body limits, and the hop of every
//! search and write off the reactor onto the search threads.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use crate::bulk::{BulkOp, BulkPath, parse_bulk, parse_document};
use crate::dsl::{SearchRequest, TrackTotal, UrlParam, UrlParams, parse_count, parse_search_with};
use crate::error::ApiError;
use crate::guard::Guard;
use crate::service::{BulkItem, SearchService, ServedHit};

/// What every request of one server shares.
pub(crate) struct App {
    /// The index's name in paths (`/{name}/_search`).
    pub name: String,
    pub service: Arc<dyn SearchService>,
    /// Largest request body accepted, in bytes; a larger one gets 413.
    pub max_body: usize,
    /// Longest a request body may take to arrive once its headers have; then 408.
    pub body_timeout: Duration,
    /// One write at a time (`_bulk`, `_doc`), waited for on the reactor (a queued write
    /// holds no thread) and run on a thread of its own, never on the search threads.
    pub writes: tokio::sync::Semaphore,
    /// Which `Host`, `Origin` and body types are accepted.
    pub guard: Guard,
}

pub(crate) type Reply = Response<Full<Bytes>>;

/// The response header carrying the server's own time on a request, in microseconds:
/// from when hyper hands the parsed request line and headers to the handler to when the
/// response, its body serialised, is handed back to hyper. So it holds reading the body,
/// the wait for a search thread, the search and the JSON; not the reactor's delay before
/// the headers are parsed, nor writing the response to the socket. The HTTP backend
/// reports it per rung beside the latency it observes (docs/PERF.md, "Over HTTP").
pub const SERVICE_MICROS_HEADER: &str = "x-heddle-service-micros";

/// The header the official Elasticsearch clients (8.x and 9.x) look for on every
/// successful answer, refusing the server without it (`UnsupportedProductError`).
pub const PRODUCT_HEADER: &str = "x-elastic-product";

/// The Elasticsearch API version whose subset this server speaks, as `GET /` reports it
/// (`version.number`); heddle's own version is beside it.
pub const ES_API_VERSION: &str = "9.0.0";

/// Answers one request; every failure becomes a JSON error response whose reason starts
/// with the endpoint it is about (`POST /idx/_count: ...`), never a dropped connection or
/// a panic. Every response carries [`SERVICE_MICROS_HEADER`] and
/// [`PRODUCT_HEADER`].
pub(crate) async fn handle(app: Arc<App>, req: Request<Incoming>) -> Result<Reply, Infallible> {
    let started = Instant::now();
    let endpoint = format!("{} {}", req.method(), req.uri().path());
    let mut reply = match route(&app, req, started).await {
        Ok(reply) => reply,
        Err(e) => reply(e.status, &e.at(&endpoint).body()),
    };
    let micros = started.elapsed().as_micros() as u64;
    let headers = reply.headers_mut();
    headers.insert(SERVICE_MICROS_HEADER, HeaderValue::from(micros));
    headers.insert(PRODUCT_HEADER, HeaderValue::from_static("Elasticsearch"));
    Ok(reply)
}

async fn route(app: &App, req: Request<Incoming>, started: Instant) -> Result<Reply, ApiError> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let endpoint = format!("{method} {path}");
    app.guard.check(req.headers(), &endpoint)?;
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let query = req.uri().query().map(str::to_string);
    let params = |accepted: &[UrlParam]| UrlParams::parse(query.as_deref(), &endpoint, accepted);
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
            params(&[])?;
            Ok(reply(200, &about(app)))
        }
        ["_cluster", "health"] => {
            allow(&[Method::GET], "GET")?;
            params(&[])?;
            Ok(reply(200, &health()))
        }
        [index, "_search"] => {
            allow(&[Method::GET, Method::POST], "GET, POST")?;
            let url = params(&[UrlParam::Size, UrlParam::From])?;
            known_index(app, index, &endpoint)?;
            let body = read_body(app, req, &endpoint).await?;
            let service = app.service.clone();
            let parsed = small(&body)
                .then(|| parse_search_with(&body, &url))
                .transpose()?;
            let (hits, total, request) = off_reactor(move || {
                let request = match parsed {
                    Some(request) => request,
                    None => parse_search_with(&body, &url)?,
                };
                let hits = service.search(&request)?;
                let total = total_hits(service.as_ref(), &request, hits.len())?;
                Ok((hits, total, request))
            })
            .await?;
            Ok(reply(
                200,
                &search_response(&app.name, &hits, total, &request, started),
            ))
        }
        ["_bulk"] | [_, "_bulk"] => {
            allow(&[Method::POST, Method::PUT], "POST, PUT")?;
            params(&[UrlParam::Refresh])?;
            let path_kind = match parts.as_slice() {
                [index, _] => {
                    known_index(app, index, &endpoint)?;
                    BulkPath::Index
                }
                _ => BulkPath::Root,
            };
            let body = read_body(app, req, &endpoint).await?;
            let name = app.name.clone();
            let parsed = small(&body)
                .then(|| parse_bulk(&body, &name, path_kind))
                .transpose()?;
            let items = write(app, move || match parsed {
                Some(ops) => Ok(ops),
                None => parse_bulk(&body, &name, path_kind),
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
            allow(&[Method::GET, Method::POST], "GET, POST")?;
            params(&[])?;
            known_index(app, index, &endpoint)?;
            let body = read_body(app, req, &endpoint).await?;
            let query = parse_count(&body)?;
            let service = app.service.clone();
            let count = off_reactor(move || service.count(query.as_ref())).await?;
            Ok(reply(200, &json!({"count": count, "_shards": shards()})))
        }
        [index, "_doc", id] => {
            known_index(app, index, &endpoint)?;
            let id = (*id).to_string();
            if method == Method::GET || method == Method::HEAD {
                params(&[])?;
                let service = app.service.clone();
                let (lookup, name) = (id.clone(), app.name.clone());
                let found = off_reactor(move || service.get(&lookup)).await?;
                return Ok(match found {
                    Some(doc) => reply(
                        200,
                        &json!({"_index": name, "_id": id, "found": true,
                                "_source": {"title": doc.title}}),
                    ),
                    None => reply(404, &json!({"_index": name, "_id": id, "found": false})),
                });
            }
            allow(
                &[
                    Method::GET,
                    Method::HEAD,
                    Method::PUT,
                    Method::POST,
                    Method::DELETE,
                ],
                "GET, HEAD, PUT, POST, DELETE",
            )?;
            params(&[UrlParam::Refresh])?;
            let op = if method == Method::DELETE {
                BulkOp::Delete(id)
            } else {
                let body = read_body(app, req, &endpoint).await?;
                BulkOp::Index(parse_document(&body, &id)?)
            };
            let mut items = write(app, move || Ok(vec![op])).await?;
            let item = items
                .pop()
                .ok_or_else(|| ApiError::internal("the write answered nothing"))?;
            Ok(reply(
                item.status,
                &json!({"_index": app.name, "_id": item.id, "result": item.result,
                        "_shards": shards()}),
            ))
        }
        [index] if !index.starts_with('_') => {
            allow(&[Method::GET, Method::HEAD], "GET, HEAD")?;
            params(&[])?;
            known_index(app, index, &endpoint)?;
            Ok(reply(200, &json!({app.name.as_str(): {"aliases": {}}})))
        }
        _ => Err(ApiError::new(
            404,
            "resource_not_found_exception",
            format!(
                "no handler for [{method}] [{path}]: this server answers GET /, \
                 GET /_cluster/health, POST /{{index}}/_search, POST /_bulk, \
                 POST /{{index}}/_bulk, GET or POST /{{index}}/_count and \
                 GET, PUT or DELETE /{{index}}/_doc/{{id}}"
            ),
        )),
    }
}

/// Applies the operations `parse` gives (it runs on the write thread: a large body is
/// parsed there, not on the reactor), one write at a time.
async fn write(
    app: &App,
    parse: impl FnOnce() -> Result<Vec<BulkOp>, ApiError> + Send + 'static,
) -> Result<Vec<BulkItem>, ApiError> {
    let service = app.service.clone();
    let _turn = app
        .writes
        .acquire()
        .await
        .map_err(|e| ApiError::internal(format!("waiting for the writer: {e}")))?;
    on_write_thread(move || service.bulk(parse()?)).await
}

/// `hits.total` as Elasticsearch reports it for `request.track_total_hits` (`None`: not
/// reported), given that the service ranked `ranked` hits for it. Matches are counted
/// only when the ranking cannot say: fewer ranked than `from + size` means every match
/// was ranked.
fn total_hits(
    service: &dyn SearchService,
    request: &SearchRequest,
    ranked: usize,
) -> Result<Option<(u64, &'static str)>, ApiError> {
    let ranked = ranked as u64;
    let complete = ranked < (request.from + request.size) as u64;
    let capped = |count: u64, limit: u64| {
        if count > limit {
            (limit, "gte")
        } else {
            (count, "eq")
        }
    };
    // A service that cannot count (a bench backend) reports what it ranked, as a floor.
    let count = || match service.count(Some(&request.query)) {
        Err(e) if e.status == 501 => Ok(None),
        other => other.map(Some),
    };
    Ok(match request.track_total {
        TrackTotal::Off => None,
        TrackTotal::UpTo(limit) if complete || ranked > limit => Some(capped(ranked, limit)),
        TrackTotal::Exact if complete => Some((ranked, "eq")),
        TrackTotal::UpTo(limit) => Some(count()?.map_or((ranked, "gte"), |c| capped(c, limit))),
        TrackTotal::Exact => Some(count()?.map_or((ranked, "gte"), |c| (c, "eq"))),
    })
}

fn shards() -> Value {
    json!({"total": 1, "successful": 1, "skipped": 0, "failed": 0})
}

fn known_index(app: &App, name: &str, endpoint: &str) -> Result<(), ApiError> {
    if name == app.name {
        return Ok(());
    }
    Err(ApiError::new(
        404,
        "index_not_found_exception",
        format!(
            "{endpoint}: no such index [{name}]: this server serves [{}]",
            app.name
        ),
    ))
}

/// The body, refused with 413 past the limit (by its Content-Length before a byte is
/// read, or as it arrives) and with 408 if it takes longer than the body timeout.
async fn read_body(app: &App, req: Request<Incoming>, endpoint: &str) -> Result<Bytes, ApiError> {
    let too_large = |n: String| {
        ApiError::new(
            413,
            "content_too_long_exception",
            format!(
                "{endpoint}: the request body ({n}) is over this server's limit of {} bytes \
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
        return Err(too_large(format!("{n} bytes")));
    }
    let limited = Limited::new(req.into_body(), app.max_body);
    match tokio::time::timeout(app.body_timeout, limited.collect()).await {
        Err(_) => Err(ApiError::new(
            408,
            "request_timeout",
            format!(
                "{endpoint}: the request body did not arrive within {:?}",
                app.body_timeout
            ),
        )),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            Err(too_large(format!("more than {} bytes", app.max_body)))
        }
        Ok(Err(e)) => Err(ApiError::bad_request(format!(
            "{endpoint}: reading the request body: {e}"
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
/// the page is what follows the first `from`. Scores are single-precision, as
/// Elasticsearch's are (Lucene scores in `float`).
fn search_response(
    name: &str,
    ranked: &[ServedHit],
    total: Option<(u64, &'static str)>,
    request: &SearchRequest,
    started: Instant,
) -> Value {
    let page = ranked.get(request.from..).unwrap_or_default();
    let page = &page[..page.len().min(request.size)];
    // Elasticsearch's max_score is the best of all matches, not of the page.
    let max_score = ranked.first().map(|h| h.score as f32);
    let hits: Vec<Value> = page
        .iter()
        .map(|h| {
            let mut hit = json!({"_index": name, "_id": h.id, "_score": h.score as f32});
            if request.source {
                hit["_source"] = json!({"title": h.title});
            }
            hit
        })
        .collect();
    let mut body = json!({
        "took": millis(started),
        "timed_out": false,
        "_shards": shards(),
        "hits": {"max_score": max_score, "hits": hits},
    });
    if let Some((value, relation)) = total {
        body["hits"]["total"] = json!({"value": value, "relation": relation});
    }
    body
}

/// `GET /`: who answers, shaped as Elasticsearch's root (clients read
/// `version.number`); heddle's own version is `version.heddle`.
fn about(app: &App) -> Value {
    json!({
        "name": "heddle",
        "cluster_name": "heddle",
        "index": app.name,
        "version": {
            "number": ES_API_VERSION,
            "distribution": "heddle",
            "build_flavor": "default",
            "minimum_wire_compatibility_version": "8.0.0",
            "minimum_index_compatibility_version": "8.0.0",
            "heddle": env!("CARGO_PKG_VERSION"),
        },
        "tagline": "heddle-eval serve: an Elasticsearch API subset over a heddle index",
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
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}
