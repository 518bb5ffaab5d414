//! What the official Elasticsearch clients rely on (issue 33, items 1–4) and what keeps a
//! web page from using the server (item 6): the product header and the root's version,
//! `_count` of a query, `_bulk` without an index in the path, messages naming their
//! endpoint, `hits.total` as `track_total_hits` asks, single-precision scores, `_doc`
//! writes by id, and the refusal of foreign hosts, origins and body types. Every server
//! listens on a free loopback port and every read has a timeout.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use heddle_eval::serve::{HeddleService, RunningServer, ServerConfig};
use serde_json::Value;

const IO_TIMEOUT: Duration = Duration::from_secs(20);

/// 20 documents about covid (`d0`…`d19`) and one about bats, per field.
fn server(dir: &std::path::Path) -> RunningServer {
    let settings = heddle::IndexSettings {
        per_field: true,
        ..heddle::IndexSettings::default()
    };
    let index = heddle::Index::create(dir.join("idx"), settings).unwrap();
    let mut w = index.writer().unwrap();
    for i in 0..20 {
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
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap());
    config.search_threads = 2;
    let service = Arc::new(HeddleService::new(index, heddle::Bm25Params::default()));
    RunningServer::start(config, "idx", service).unwrap()
}

/// One request on its own connection with `headers` (each `Name: value`): the status,
/// the response's header block, and the JSON body.
fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[String],
    body: &str,
) -> (u16, String, Value) {
    let mut raw = format!("{method} {path} HTTP/1.1\r\n");
    for h in headers {
        raw.push_str(h);
        raw.push_str("\r\n");
    }
    raw.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    s.write_all(raw.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {out:?}"));
    (
        status,
        head.to_ascii_lowercase(),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

/// As a well-behaved client sends it: this server's Host, a JSON body type.
fn request(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, Value) {
    let headers = [
        format!("Host: {addr}"),
        "Content-Type: application/json".to_string(),
    ];
    let (status, _, v) = send(addr, method, path, &headers, body);
    (status, v)
}

fn reason(v: &Value) -> &str {
    v["error"]["reason"].as_str().unwrap_or_default()
}

fn count(addr: SocketAddr) -> u64 {
    let (status, v) = request(addr, "GET", "/idx/_count", "");
    assert_eq!(status, 200, "{v}");
    v["count"].as_u64().unwrap()
}

#[test]
fn every_answer_names_the_product_and_the_root_an_elasticsearch_version() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let addr = server.addr();
    let host = [format!("Host: {addr}")];
    for (method, path) in [("GET", "/"), ("HEAD", "/"), ("GET", "/nope/_search")] {
        let (_, head, _) = send(addr, method, path, &host, "");
        assert!(
            head.contains("\r\nx-elastic-product: elasticsearch"),
            "{method} {path}: {head}"
        );
    }
    let (status, v) = request(addr, "GET", "/", "");
    assert_eq!(status, 200);
    let number = v["version"]["number"].as_str().unwrap();
    assert!(number.starts_with("9."), "{v}");
    assert_eq!(v["version"]["heddle"], env!("CARGO_PKG_VERSION"));
    server.stop().unwrap();
}

#[test]
fn count_counts_what_its_query_matches_and_refuses_what_search_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let a = server.addr();
    let bats = r#"{"query":{"match":{"text":"bats"}}}"#;
    for method in ["GET", "POST"] {
        let (status, v) = request(a, method, "/idx/_count", bats);
        assert_eq!(
            (status, &v["count"]),
            (200, &Value::from(1)),
            "{method}: {v}"
        );
        let (status, v) = request(a, method, "/idx/_count", "");
        assert_eq!(
            (status, &v["count"]),
            (200, &Value::from(21)),
            "{method}: {v}"
        );
    }
    // A union over fields: "bats" is in the title of one and the text of the same one,
    // "covid" in 20 texts.
    let multi = r#"{"query":{"multi_match":{"query":"bats covid","fields":["title","text"]}}}"#;
    assert_eq!(request(a, "POST", "/idx/_count", multi).1["count"], 21);
    let title = r#"{"query":{"match":{"title":"covid"}}}"#;
    assert_eq!(request(a, "POST", "/idx/_count", title).1["count"], 0);
    for (body, needle) in [
        (r#"{"foo":1}"#, "unknown key [foo] in the _count body"),
        ("not json", "_count body is not JSON"),
        (r#"{"query":{"match":{"author":"x"}}}"#, "no field [author]"),
        (r#"{"query":{"term":{"text":"x"}}}"#, "unknown query [term]"),
    ] {
        let (status, v) = request(a, "POST", "/idx/_count", body);
        assert_eq!(status, 400, "{body}: {v}");
        assert!(reason(&v).contains(needle), "{body}: {v}");
    }
    // Every refusal starts with the endpoint it is about.
    for (method, path, body) in [
        ("POST", "/idx/_count", r#"{"query":{"match_all":{}}}"#),
        ("GET", "/idx/_search", r#"{"query":{"match_all":{}}}"#),
        ("POST", "/idx/_bulk", "{\"update\":{\"_id\":\"a\"}}\n{}\n"),
        ("PUT", "/idx/_doc/a", "[]"),
        ("GET", "/idx/_mapping", ""),
    ] {
        let (status, v) = request(a, method, path, body);
        assert!(status >= 400, "{method} {path}: {v}");
        let wanted = format!("{method} {path}: ");
        assert!(reason(&v).starts_with(&wanted), "{wanted}: {v}");
    }
    let (status, v) = request(a, "POST", "/idx/_count?q=bats", "");
    assert_eq!(status, 400);
    assert!(
        reason(&v).contains("POST /idx/_count") && reason(&v).contains("[q]"),
        "{v}"
    );
    server.stop().unwrap();
}

#[test]
fn bulk_without_an_index_in_the_path_takes_actions_naming_the_served_index() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let a = server.addr();
    let body = "{\"index\":{\"_index\":\"idx\",\"_id\":\"zebra\"}}\n{\"title\":\"Zebra\"}\n\
                {\"delete\":{\"_index\":\"idx\",\"_id\":\"bats\"}}\n";
    let (status, v) = request(a, "POST", "/_bulk?refresh=true", body);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["items"][0]["index"]["result"], "created");
    assert_eq!(v["items"][1]["delete"]["result"], "deleted");
    assert_eq!(count(a), 21);
    // Another index: refused by name, and nothing of the request applied.
    let other = "{\"delete\":{\"_index\":\"idx\",\"_id\":\"d0\"}}\n\
                 {\"delete\":{\"_index\":\"logs\",\"_id\":\"d1\"}}\n";
    let (status, v) = request(a, "POST", "/_bulk", other);
    assert_eq!(status, 404, "{v}");
    assert!(reason(&v).contains("no such index [logs]"), "{v}");
    assert_eq!(count(a), 21);
    let (status, v) = request(a, "POST", "/_bulk", "{\"delete\":{\"_id\":\"d0\"}}\n");
    assert_eq!(status, 400, "{v}");
    assert!(reason(&v).contains("[_index]"), "{v}");
    assert_eq!(count(a), 21);
    // Each refusal names the endpoint it is about.
    for (path, endpoint) in [
        ("/_bulk?pipeline=x", "POST /_bulk"),
        ("/idx/_bulk?pipeline=x", "POST /idx/_bulk"),
    ] {
        let (status, v) = request(a, "POST", path, other);
        assert_eq!(status, 400, "{v}");
        let r = reason(&v);
        assert!(r.contains(endpoint) && r.contains("[pipeline]"), "{v}");
        assert!(!r.contains("_search"), "{v}");
    }
    server.stop().unwrap();
}

#[test]
fn hits_total_follows_track_total_hits_and_scores_are_single_precision() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let a = server.addr();
    let total = |extra: &str| {
        let body = format!(r#"{{"query":{{"match":{{"flat":"covid"}}}},"size":5{extra}}}"#);
        let (status, v) = request(a, "POST", "/idx/_search", &body);
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["hits"]["hits"].as_array().unwrap().len(), 5);
        v["hits"].get("total").cloned()
    };
    let exact = serde_json::json!({"value": 20, "relation": "eq"});
    assert_eq!(
        total(""),
        Some(exact.clone()),
        "counted up to 10,000 by default"
    );
    assert_eq!(total(r#","track_total_hits":true"#), Some(exact));
    assert_eq!(
        total(r#","track_total_hits":12"#),
        Some(serde_json::json!({"value": 12, "relation": "gte"}))
    );
    assert_eq!(
        total(r#","track_total_hits":3"#),
        Some(serde_json::json!({"value": 3, "relation": "gte"}))
    );
    assert_eq!(total(r#","track_total_hits":false"#), None);
    let body = r#"{"query":{"match":{"flat":"covid"}},"track_total_hits":"all"}"#;
    assert_eq!(request(a, "POST", "/idx/_search", body).0, 400);

    let (_, v) = request(
        a,
        "POST",
        "/idx/_search",
        r#"{"query":{"match":{"text":"bats"}}}"#,
    );
    let score = v["hits"]["hits"][0]["_score"].as_f64().unwrap();
    assert!(score > 0.0);
    assert_eq!(
        score, score as f32 as f64,
        "an f32, as Elasticsearch's: {v}"
    );
    assert_eq!(v["hits"]["max_score"].as_f64(), Some(score));
    server.stop().unwrap();
}

#[test]
fn documents_are_written_read_and_deleted_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let a = server.addr();
    let doc = r#"{"title":"Zebra","text":"zebra stripes"}"#;
    let (status, v) = request(a, "PUT", "/idx/_doc/zebra?refresh=true", doc);
    assert_eq!(
        (status, &v["result"]),
        (201, &Value::from("created")),
        "{v}"
    );
    assert_eq!(v["_id"], "zebra");
    let (status, v) = request(a, "POST", "/idx/_doc/zebra", doc);
    assert_eq!(
        (status, &v["result"]),
        (200, &Value::from("updated")),
        "{v}"
    );
    assert_eq!(count(a), 22);
    let (_, v) = request(
        a,
        "POST",
        "/idx/_search",
        r#"{"query":{"match":{"flat":"zebra"}}}"#,
    );
    assert_eq!(v["hits"]["hits"][0]["_id"], "zebra", "{v}");
    let (status, v) = request(a, "PUT", "/idx/_doc/x", r#"{"body":"misspelt"}"#);
    assert_eq!(status, 400);
    assert!(reason(&v).contains("field [body]"), "{v}");
    let (status, v) = request(a, "GET", "/idx/_doc/zebra", "");
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        (&v["found"], &v["_source"]["title"]),
        (&Value::from(true), &Value::from("Zebra"))
    );
    let (status, v) = request(a, "GET", "/idx/_doc/d3", "");
    assert_eq!(
        (status, &v["_source"]["title"]),
        (200, &Value::from("title 3")),
        "{v}"
    );
    let (status, v) = request(a, "DELETE", "/idx/_doc/zebra", "");
    assert_eq!(
        (status, &v["result"]),
        (200, &Value::from("deleted")),
        "{v}"
    );
    let (status, v) = request(a, "GET", "/idx/_doc/zebra", "");
    assert_eq!(
        (status, &v["found"]),
        (404, &Value::from(false)),
        "deleted: {v}"
    );
    let (status, v) = request(a, "DELETE", "/idx/_doc/zebra", "");
    assert_eq!(
        (status, &v["result"]),
        (404, &Value::from("not_found")),
        "{v}"
    );
    assert_eq!(count(a), 21);
    let (status, v) = request(a, "PUT", "/nope/_doc/zebra", doc);
    assert_eq!(status, 404, "{v}");
    server.stop().unwrap();
}

#[test]
fn requests_a_web_page_could_send_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let a = server.addr();
    let delete = "{\"delete\":{\"_id\":\"bats\"}}\n";
    // Bodies a browser sends across origins without asking first.
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        None,
    ] {
        let mut headers = vec![format!("Host: {a}")];
        headers.extend(content_type.map(|t| format!("Content-Type: {t}")));
        for path in [
            "/idx/_bulk",
            "/_bulk",
            "/idx/_search",
            "/idx/_count",
            "/idx/_doc/bats",
        ] {
            let (status, _, v) = send(a, "POST", path, &headers, delete);
            assert_eq!(status, 406, "{path} {content_type:?}: {v}");
            assert!(reason(&v).contains(&format!("POST {path}")), "{v}");
        }
    }
    assert_eq!(count(a), 21, "no refused request wrote");
    // A name that is not this server's (DNS rebinding), and a foreign page.
    let json = "Content-Type: application/json".to_string();
    let port = a.port();
    for host in [
        format!("evil.example:{port}"),
        format!("127.0.0.1:{}", port + 1),
    ] {
        let (status, _, v) = send(a, "GET", "/idx/_count", &[format!("Host: {host}")], "");
        assert_eq!(status, 403, "{host}: {v}");
        assert!(reason(&v).contains(&host), "{v}");
    }
    let (status, _, v) = send(a, "GET", "/", &[], "");
    assert_eq!(status, 400, "no Host: {v}");
    let foreign = [
        format!("Host: {a}"),
        json.clone(),
        "Origin: http://evil.example".into(),
    ];
    let (status, _, v) = send(a, "POST", "/idx/_bulk", &foreign, delete);
    assert_eq!(status, 403, "{v}");
    assert_eq!(count(a), 21);
    // The server's own names pass, with or without an Origin of its own.
    for host in [format!("localhost:{port}"), a.to_string()] {
        let own = [
            format!("Host: {host}"),
            json.clone(),
            format!("Origin: http://{a}"),
        ];
        let (status, _, v) = send(a, "GET", "/idx/_count", &own, "");
        assert_eq!(status, 200, "{host}: {v}");
    }
    server.stop().unwrap();
}

#[test]
fn names_given_to_allow_remote_are_accepted_as_host_and_origin() {
    let dir = tempfile::tempdir().unwrap();
    let index =
        heddle::Index::create(dir.path().join("idx"), heddle::IndexSettings::default()).unwrap();
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap());
    config.allowed_hosts = vec!["search.lan".to_string()];
    let service = Arc::new(HeddleService::new(index, heddle::Bm25Params::default()));
    let server = RunningServer::start(config, "idx", service).unwrap();
    let a = server.addr();
    let port = a.port();
    let named = [
        format!("Host: SEARCH.lan:{port}"),
        format!("Origin: http://search.lan:{port}"),
    ];
    let (status, _, v) = send(a, "GET", "/idx/_count", &named, "");
    assert_eq!((status, &v["count"]), (200, &Value::from(0)), "{v}");
    let other = [format!("Host: other.lan:{port}")];
    let (status, _, v) = send(a, "GET", "/idx/_count", &other, "");
    assert_eq!(status, 403, "{v}");
    server.stop().unwrap();
}
