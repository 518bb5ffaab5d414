//! `heddle-eval serve` as a client meets it: each error path answered with a 4xx and a
//! JSON reason, malformed and slow and vanishing clients survived, bulk writes visible
//! after their commit, and a graceful stop that lets a request in flight finish. Every
//! server listens on a free loopback port and is stopped by the test; every read has a
//! timeout, so no test can hang.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use heddle_eval::bench::backend::synthetic::{ServiceModel, Synthetic};
use heddle_eval::serve::{BackendService, HeddleService, RunningServer, ServerConfig};
use serde_json::Value;

/// Longest any read waits: far beyond what a passing test needs.
const IO_TIMEOUT: Duration = Duration::from_secs(20);

fn config() -> ServerConfig {
    let mut c = ServerConfig::new("127.0.0.1:0".parse().unwrap());
    c.search_threads = 2;
    c.max_body = 4096;
    // Long enough that a loaded CI machine cannot trip them on a whole request, short
    // enough that the slow-client tests end quickly.
    c.header_timeout = Duration::from_secs(2);
    c.body_timeout = Duration::from_secs(2);
    c.grace = Duration::from_secs(10);
    c
}

/// A per-field heddle index of `n` documents `d0…` about covid and masks, plus `bats`.
fn index(dir: &Path, n: usize) -> heddle::Index {
    let settings = heddle::IndexSettings {
        per_field: true,
        ..heddle::IndexSettings::default()
    };
    let index = heddle::Index::create(dir.join("idx"), settings).unwrap();
    let mut w = index.writer().unwrap();
    for i in 0..n {
        w.add(heddle::Document::new(
            format!("d{i}"),
            format!("title {i}"),
            format!("covid transmission masks number {i}"),
        ))
        .unwrap();
    }
    w.add(heddle::Document::new(
        "bats",
        "Bats",
        "bats host coronaviruses",
    ))
    .unwrap();
    w.commit().unwrap();
    index
}

fn heddle_server(dir: &Path) -> RunningServer {
    let service = Arc::new(HeddleService::new(
        index(dir, 20),
        heddle::Bm25Params::default(),
    ));
    RunningServer::start(config(), "idx", service).unwrap()
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    s.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    s
}

/// Everything the server sends until it closes the connection (`Connection: close`).
fn exchange(addr: SocketAddr, raw: &[u8]) -> String {
    let mut s = connect(addr);
    s.write_all(raw).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// One request on its own connection: the status and the JSON body.
fn request(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, Value) {
    let raw = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    parse(&exchange(addr, raw.as_bytes()))
}

fn parse(response: &str) -> (u16, Value) {
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {response:?}"));
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

fn search(addr: SocketAddr, body: &str) -> (u16, Value) {
    request(addr, "POST", "/idx/_search", body)
}

fn ids(v: &Value) -> Vec<String> {
    v["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["_id"].as_str().unwrap().to_string())
        .collect()
}

/// The status and the error's reason, which must name `needle`.
fn refused(addr: SocketAddr, method: &str, path: &str, body: &str, needle: &str) -> u16 {
    let (status, v) = request(addr, method, path, body);
    let reason = v["error"]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(needle),
        "{method} {path} {body}: {status} {v} lacks {needle:?}"
    );
    assert_eq!(v["status"], status, "the body repeats the status");
    status
}

#[test]
fn searches_answer_in_elasticsearchs_shape() {
    let dir = tempfile::tempdir().unwrap();
    let server = heddle_server(dir.path());
    let addr = server.addr();
    let (status, v) = search(addr, r#"{"query":{"match":{"text":"bats"}},"size":3}"#);
    assert_eq!(status, 200, "{v}");
    assert_eq!(ids(&v), ["bats"]);
    assert_eq!(v["hits"]["hits"][0]["_source"]["title"], "Bats");
    assert!(v["hits"]["hits"][0]["_score"].as_f64().unwrap() > 0.0);
    assert_eq!(v["hits"]["total"]["value"], 1);
    assert_eq!(
        v["hits"]["total"]["relation"], "eq",
        "fewer than asked: every match"
    );
    assert!(v["took"].is_u64());
    // The server's own time, in microseconds, on every response.
    let raw = exchange(
        server.addr(),
        format!("GET /_cluster/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    );
    let micros = raw
        .lines()
        .find_map(|l| l.strip_prefix("x-heddle-service-micros: "))
        .unwrap_or_else(|| panic!("no service time in {raw:?}"));
    assert!(micros.trim().parse::<u64>().is_ok(), "{micros:?}");

    let (_, v) = search(addr, r#"{"query":{"match":{"flat":"covid"}},"size":5}"#);
    assert_eq!(ids(&v).len(), 5);
    assert_eq!(
        v["hits"]["total"],
        serde_json::json!({"value": 20, "relation": "eq"}),
        "every match counted (up to track_total_hits' 10,000)"
    );
    let (_, paged) = search(
        addr,
        r#"{"query":{"match":{"flat":"covid"}},"size":2,"from":3}"#,
    );
    assert_eq!(ids(&paged), ids(&v)[3..5]);
    // A page past the last match: no hits, and the total is still every match (one).
    let (status, past) = search(
        addr,
        r#"{"query":{"match":{"text":"bats"}},"size":3,"from":5}"#,
    );
    assert_eq!(status, 200, "{past}");
    assert!(ids(&past).is_empty(), "{past}");
    assert_eq!(
        (
            &past["hits"]["total"]["value"],
            &past["hits"]["total"]["relation"]
        ),
        (&Value::from(1), &Value::from("eq")),
        "{past}"
    );
    // A page that ends the matches: the total counts the ones before it too.
    let (_, last) = search(
        addr,
        r#"{"query":{"match":{"text":"bats"}},"size":3,"from":0}"#,
    );
    assert_eq!(last["hits"]["total"]["value"], 1);
    // size and from in the URL override the body's, as in Elasticsearch; a parameter
    // this server would otherwise ignore is refused, not ignored.
    let (status, v) = request(
        addr,
        "POST",
        "/idx/_search?size=2&from=3&pretty",
        r#"{"query":{"match":{"flat":"covid"}},"size":9}"#,
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(ids(&v), ids(&paged));
    for (url, needle) in [
        ("/idx/_search?filter_path=hits", "[filter_path]"),
        (
            "/idx/_search?size=many",
            "[size] must be a non-negative integer",
        ),
        ("/idx/_search?size=0", "[size] 0"),
        ("/idx/_search?from=9999", "Result window is too large"),
    ] {
        let status = refused(
            addr,
            "POST",
            url,
            r#"{"query":{"match":{"flat":"covid"}}}"#,
            needle,
        );
        assert_eq!(status, 400, "{url}");
    }
    let (status, _) = request(addr, "GET", "/?pretty", "");
    assert_eq!(status, 200);
    refused(addr, "GET", "/_cluster/health?size=3", "", "[size]");
    let (_, v) = search(
        addr,
        r#"{"query":{"multi_match":{"query":"bats","fields":["title^2","text"]}}}"#,
    );
    assert_eq!(ids(&v)[0], "bats");
    let (_, v) = search(
        addr,
        r#"{"query":{"heddle_fuse":{"query":"bats"}},"_source":false}"#,
    );
    assert_eq!(ids(&v)[0], "bats");
    assert!(v["hits"]["hits"][0].get("_source").is_none());

    let (status, v) = request(addr, "GET", "/", "");
    assert_eq!(
        (status, &v["version"]["distribution"]),
        (200, &Value::from("heddle"))
    );
    let (status, v) = request(addr, "GET", "/_cluster/health", "");
    assert_eq!((status, &v["status"]), (200, &Value::from("green")));
    server.stop().unwrap();
}

#[test]
fn bad_requests_get_a_4xx_naming_what_was_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let server = heddle_server(dir.path());
    let a = server.addr();
    let s = "/idx/_search";
    assert_eq!(refused(a, "POST", s, "{\"query\":", "not JSON"), 400);
    assert_eq!(refused(a, "POST", s, "", "empty"), 400);
    assert_eq!(refused(a, "POST", s, r#"{"size":3}"#, "no [query]"), 400);
    let wrong_field = r#"{"query":{"match":{"author":"x"}}}"#;
    assert_eq!(refused(a, "POST", s, wrong_field, "no field [author]"), 400);
    let unknown = r#"{"query":{"term":{"text":"x"}}}"#;
    assert_eq!(refused(a, "POST", s, unknown, "unknown query [term]"), 400);
    for (size, needle) in [
        ("0", "[size] 0"),
        ("-5", "-5"),
        ("1e3", "1000.0"),
        ("100000", "100000"),
    ] {
        let body = format!(r#"{{"query":{{"match":{{"text":"x"}}}},"size":{size}}}"#);
        assert_eq!(refused(a, "POST", s, &body, needle), 400, "size {size}");
    }
    let q = r#"{"query":{"match":{"text":"x"}}}"#;
    assert_eq!(
        refused(a, "POST", "/nope/_search", q, "no such index [nope]"),
        404
    );
    assert_eq!(
        refused(a, "POST", "/nope/_bulk", "{}", "no such index [nope]"),
        404
    );
    assert_eq!(refused(a, "GET", "/idx/_mapping", "", "no handler"), 404);
    assert_eq!(refused(a, "DELETE", s, q, "Incorrect HTTP method"), 405);
    let big = format!(
        r#"{{"query":{{"match":{{"text":"{}"}}}}}}"#,
        "a ".repeat(3000)
    );
    assert_eq!(
        refused(a, "POST", s, &big, "over this server's limit of 4096"),
        413
    );
    server.stop().unwrap();
}

#[test]
fn a_body_without_a_length_is_cut_off_at_the_limit_too() {
    let dir = tempfile::tempdir().unwrap();
    let server = heddle_server(dir.path());
    let chunk = "x".repeat(3000);
    let raw = format!(
        "POST /idx/_search HTTP/1.1\r\nHost: {addr}\r\nTransfer-Encoding: chunked\r\n\
         Content-Type: application/json\r\n\
         Connection: close\r\n\r\n{len:x}\r\n{chunk}\r\n{len:x}\r\n{chunk}\r\n0\r\n\r\n",
        len = chunk.len(),
        addr = server.addr()
    );
    let (status, v) = parse(&exchange(server.addr(), raw.as_bytes()));
    assert_eq!(status, 413, "{v}");
    server.stop().unwrap();
}

#[test]
fn survives_malformed_http_slow_clients_and_abrupt_disconnects() {
    let dir = tempfile::tempdir().unwrap();
    let server = heddle_server(dir.path());
    let addr = server.addr();
    let ok = r#"{"query":{"match":{"text":"bats"}}}"#;

    // A request line that is not HTTP: refused (400) and the connection closed.
    let answer = exchange(addr, b"GARBAGE\r\n\r\n");
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 400"),
        "{answer:?}"
    );
    let answer = exchange(addr, b"POST /idx/_search HTTP/9.9\r\nHost: t\r\n\r\n");
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1"),
        "{answer:?}"
    );

    // Headers that never finish: the connection is closed at the header timeout
    // (2 s here), long before the test's own read timeout.
    let mut slow = connect(addr);
    slow.write_all(b"POST /idx/_search HTTP/1.1\r\nHost: t\r\n")
        .unwrap();
    let started = Instant::now();
    let mut buf = Vec::new();
    let _ = slow.read_to_end(&mut buf);
    assert!(
        started.elapsed() < IO_TIMEOUT,
        "a client that never finished its headers kept its connection"
    );

    // A body that never finishes: 408 once the body timeout passes.
    let mut slow = connect(addr);
    slow.write_all(
        format!(
            "POST /idx/_search HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: 100\r\n\r\n{{\"qu"
        )
        .as_bytes(),
    )
    .unwrap();
    let mut buf = Vec::new();
    let _ = slow.read_to_end(&mut buf);
    let (status, v) = parse(&String::from_utf8_lossy(&buf));
    assert_eq!(status, 408, "{v}");

    // Clients that vanish: mid-headers, mid-body, and right after a whole request.
    for partial in [
        &b"POST /idx/_se"[..],
        b"POST /idx/_search HTTP/1.1\r\nHost: t\r\nContent-Length: 50\r\n\r\n{",
        b"POST /idx/_search HTTP/1.1\r\nHost: t\r\nContent-Length: 36\r\n\r\n{\"query\":{\"match\":{\"text\":\"bats\"}}}",
    ] {
        let mut s = connect(addr);
        s.write_all(partial).unwrap();
        drop(s);
    }
    drop(TcpStream::connect(addr).unwrap());

    let (status, v) = search(addr, ok);
    assert_eq!(
        (status, ids(&v)),
        (200, vec!["bats".to_string()]),
        "still serving"
    );
    server.stop().unwrap();
}

#[test]
fn bulk_writes_are_visible_after_their_commit_and_a_refused_batch_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = heddle_server(dir.path());
    let a = server.addr();
    let count = || {
        request(a, "GET", "/idx/_count", "").1["count"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(count(), 21);
    let body = "{\"index\":{\"_id\":\"zebra\"}}\n{\"title\":\"Zebra\",\"text\":\"zebra stripes\"}\n\
                {\"delete\":{\"_id\":\"bats\"}}\n{\"delete\":{\"_id\":\"absent\"}}\n";
    let (status, v) = request(a, "POST", "/idx/_bulk", body);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["errors"], false);
    assert_eq!(v["items"][0]["index"]["result"], "created");
    assert_eq!(v["items"][1]["delete"]["result"], "deleted");
    assert_eq!(v["items"][2]["delete"]["status"], 404);
    let (_, hits) = search(a, r#"{"query":{"match":{"flat":"zebra"}}}"#);
    assert_eq!(ids(&hits), ["zebra"], "the added document is found");
    let (_, hits) = search(a, r#"{"query":{"match":{"flat":"bats"}}}"#);
    assert!(ids(&hits).is_empty(), "the deleted one is not: {hits}");
    assert_eq!(count(), 21);

    // `create` of an existing id refuses the whole batch: the delete before it too.
    let body =
        "{\"delete\":{\"_id\":\"d0\"}}\n{\"create\":{\"_id\":\"zebra\"}}\n{\"text\":\"again\"}\n";
    assert_eq!(
        refused(a, "POST", "/idx/_bulk", body, "document [zebra]"),
        409
    );
    assert_eq!(count(), 21, "nothing of the refused batch was committed");
    let bad = "{\"index\":{\"_id\":\"x\"}}\n{\"body\":\"misspelt\"}\n";
    assert_eq!(
        refused(a, "POST", "/idx/_bulk", bad, "line 2: field [body]"),
        400
    );
    // `refresh` (as Elasticsearch clients send it) is accepted on _bulk: every commit is
    // visible when it returns. Not on _search, and not with another value.
    let one = "{\"delete\":{\"_id\":\"zebra\"}}\n";
    let (status, v) = request(a, "POST", "/idx/_bulk?refresh=true", one);
    assert_eq!(status, 200, "{v}");
    assert_eq!(count(), 20);
    let (_, hits) = search(a, r#"{"query":{"match":{"flat":"zebra"}}}"#);
    assert!(ids(&hits).is_empty(), "deleted and visible at once: {hits}");
    refused(a, "POST", "/idx/_bulk?refresh=soon", one, "[refresh]");
    let q = r#"{"query":{"match":{"flat":"zebra"}}}"#;
    refused(a, "POST", "/idx/_search?refresh=true", q, "[refresh]");
    server.stop().unwrap();
}

#[test]
fn a_commit_by_another_process_is_picked_up_by_the_reloader() {
    let dir = tempfile::tempdir().unwrap();
    let served = index(dir.path(), 3);
    let _reloader =
        heddle_eval::serve::Reloader::start(served.clone(), Duration::from_millis(20)).unwrap();
    let server = RunningServer::start(
        config(),
        "idx",
        Arc::new(HeddleService::new(served, heddle::Bm25Params::default())),
    )
    .unwrap();
    // Another handle on the directory stands for another process: its commit reaches
    // the server's index only through the manifest on disk.
    let other = heddle::Index::open(dir.path().join("idx")).unwrap();
    let mut w = other.writer().unwrap();
    w.add(heddle::Document::new("late", "Late", "okapi"))
        .unwrap();
    w.commit().unwrap();
    drop(w);
    let deadline = Instant::now() + IO_TIMEOUT;
    loop {
        let (_, v) = search(server.addr(), r#"{"query":{"match":{"flat":"okapi"}}}"#);
        if ids(&v) == ["late"] {
            break;
        }
        assert!(Instant::now() < deadline, "the commit was never picked up");
        std::thread::sleep(Duration::from_millis(20));
    }
    server.stop().unwrap();
}

#[test]
fn stopping_lets_a_request_in_flight_finish_and_then_refuses_connections() {
    let backend = Arc::new(Synthetic::new(ServiceModel::constant(
        Duration::from_millis(700),
    )));
    let server = RunningServer::start(
        config(),
        "idx",
        Arc::new(BackendService::new(backend.clone())),
    )
    .unwrap();
    let addr = server.addr();
    let client = std::thread::spawn(move || search(addr, r#"{"query":{"match":{"text":"x"}}}"#));
    let deadline = Instant::now() + IO_TIMEOUT;
    while backend.calls() == 0 {
        assert!(
            Instant::now() < deadline,
            "the request never reached the backend"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    server.stop().expect("a graceful stop");
    let (status, v) = client.join().unwrap();
    assert_eq!(status, 200, "the request in flight finished: {v}");
    assert!(TcpStream::connect(addr).is_err(), "no longer listening");
}

#[test]
fn a_slow_search_does_not_stop_the_server_accepting_and_answering() {
    // One search thread, held by a 3 s search: the reactor must still accept and answer.
    let backend = Arc::new(Synthetic::new(ServiceModel::constant(Duration::from_secs(
        3,
    ))));
    let mut c = config();
    c.search_threads = 1;
    let server =
        RunningServer::start(c, "idx", Arc::new(BackendService::new(backend.clone()))).unwrap();
    let addr = server.addr();
    let slow = std::thread::spawn(move || search(addr, r#"{"query":{"match":{"text":"x"}}}"#));
    let deadline = Instant::now() + IO_TIMEOUT;
    while backend.calls() == 0 {
        assert!(
            Instant::now() < deadline,
            "the search never reached the backend"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let (status, v) = request(addr, "GET", "/_cluster/health", "");
    assert_eq!(status, 200, "{v}");
    let (status, _) = request(addr, "POST", "/idx/_search", "{bad");
    assert_eq!(
        status, 400,
        "a bad request is refused without waiting for a search thread"
    );
    assert!(
        !slow.is_finished(),
        "both answers came while the slow search still held the only search thread"
    );
    assert_eq!(slow.join().unwrap().0, 200);
    server.stop().unwrap();
}

/// A service whose commit cannot finish until a search has been answered: on the search
/// threads, the `_bulk` would hold the only one and the search could never run.
#[derive(Default)]
struct CommitWaitsForASearch {
    /// (a commit is running, a search was answered)
    state: std::sync::Mutex<(bool, bool)>,
    changed: std::sync::Condvar,
}

impl heddle_eval::serve::SearchService for CommitWaitsForASearch {
    fn search(
        &self,
        _: &heddle_eval::serve::SearchRequest,
    ) -> Result<Vec<heddle_eval::serve::ServedHit>, heddle_eval::serve::ApiError> {
        self.state.lock().unwrap().1 = true;
        self.changed.notify_all();
        Ok(Vec::new())
    }

    fn count(
        &self,
        _: Option<&heddle_eval::serve::Query>,
    ) -> Result<u64, heddle_eval::serve::ApiError> {
        Ok(0)
    }

    fn bulk(
        &self,
        _: Vec<heddle_eval::serve::BulkOp>,
    ) -> Result<Vec<heddle_eval::serve::BulkItem>, heddle_eval::serve::ApiError> {
        let mut state = self.state.lock().unwrap();
        state.0 = true;
        self.changed.notify_all();
        let (state, _) = self
            .changed
            .wait_timeout_while(state, IO_TIMEOUT / 2, |s| !s.1)
            .unwrap();
        if state.1 {
            Ok(Vec::new())
        } else {
            Err(heddle_eval::serve::ApiError::internal(
                "no search was answered while this commit ran",
            ))
        }
    }
}

#[test]
fn a_search_is_answered_while_a_bulk_commits() {
    // One search thread: a `_bulk` run on it would keep the search below from running
    // until the commit gave up waiting for it.
    let mut c = config();
    c.search_threads = 1;
    let service = Arc::new(CommitWaitsForASearch::default());
    let server = RunningServer::start(c, "idx", service.clone()).unwrap();
    let addr = server.addr();
    let bulk = std::thread::spawn(move || {
        request(addr, "POST", "/idx/_bulk", "{\"delete\":{\"_id\":\"a\"}}\n")
    });
    {
        let state = service.state.lock().unwrap();
        let (state, _) = service
            .changed
            .wait_timeout_while(state, IO_TIMEOUT, |s| !s.0)
            .unwrap();
        assert!(state.0, "the bulk never reached the service");
    }
    let (status, v) = search(addr, r#"{"query":{"match":{"text":"x"}}}"#);
    assert_eq!(status, 200, "{v}");
    let (status, v) = bulk.join().unwrap();
    assert_eq!(
        status, 200,
        "the commit saw a search answered meanwhile: {v}"
    );
    server.stop().unwrap();
}
