//! The subset of Elasticsearch's query DSL that `serve` understands, parsed from a
//! `_search` body into a [`SearchRequest`]; anything else is refused by name.
//!
//! ```json
//! {"query": {"match": {"text": "bat coronavirus"}}, "size": 10}
//! {"query": {"match": {"title": {"query": "bat coronavirus"}}}}
//! {"query": {"multi_match": {"query": "bats", "fields": ["title^2", "text"]}}}
//! {"query": {"heddle_fuse": {"query": "bats", "streams": "flat,title,text"}}}
//! ```
//!
//! The body is walked as a JSON value rather than derived, so that each refusal can
//! name the key it refuses (serde's messages name a type and a column).

use serde_json::{Map, Value};

use crate::error::ApiError;

/// Elasticsearch's default `index.max_result_window`: `from + size` beyond it is refused.
pub const MAX_RESULT_WINDOW: u64 = 10_000;

/// Hits when the body does not say (`size` absent), as Elasticsearch.
pub const DEFAULT_SIZE: usize = 10;

/// Top-level keys accepted and ignored: clients send it, and heddle has no per-request
/// timeout.
const IGNORED_KEYS: [&str; 1] = ["timeout"];

/// Elasticsearch's default `track_total_hits`: matches are counted exactly up to this
/// many, and beyond it `hits.total` says "at least this many".
pub const DEFAULT_TRACK_TOTAL_HITS: u64 = 10_000;

/// How `hits.total` is reported (`track_total_hits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrackTotal {
    /// `false`: no `hits.total` at all, and no counting.
    Off,
    /// A number (the default, [`DEFAULT_TRACK_TOTAL_HITS`]): the count of matches up to
    /// it, else the number with relation `gte`.
    UpTo(u64),
    /// `true`: every match counted.
    Exact,
}

/// One parsed `_search` request.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    pub query: Query,
    /// Hits to skip (`from`), then hits to return (`size`).
    pub from: usize,
    pub size: usize,
    /// `_source: false` leaves `_source` (the title) out of every hit.
    pub source: bool,
    /// `track_total_hits`.
    pub track_total: TrackTotal,
}

/// How hits are ranked; every variant is BM25 over heddle's analysis of `text`.
#[derive(Debug, Clone, PartialEq)]
pub enum Query {
    /// `match`: one field — `title`, `text`, or heddle's `flat` (title and text as one).
    Match { field: String, text: String },
    /// `multi_match`: several fields, each a BM25 stream, combined by `kind`.
    MultiMatch {
        text: String,
        /// Field names with their boosts (`title^2` is weight 2).
        fields: Vec<(String, f64)>,
        kind: MultiMatchKind,
    },
    /// heddle's extension: the streams of `heddle-eval search --fuse`.
    Fuse {
        text: String,
        /// As `--fuse`: `FIELD[:K1:B]`, comma-separated.
        streams: String,
        /// `rrf` (default) or `sum`.
        combine: String,
        weights: Option<Vec<f64>>,
        rrf_k: Option<f64>,
    },
}

/// How `multi_match` combines its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MultiMatchKind {
    /// The weighted sum of the fields' BM25 scores (Elasticsearch's `most_fields`); the
    /// default here, where Elasticsearch's default is `best_fields`, which heddle lacks.
    MostFields,
    /// heddle's extension: reciprocal rank fusion of the fields' rankings.
    Rrf,
}

impl Query {
    /// The text searched, whatever the query type.
    pub fn text(&self) -> &str {
        match self {
            Query::Match { text, .. }
            | Query::MultiMatch { text, .. }
            | Query::Fuse { text, .. } => text,
        }
    }
}

/// Parses a `_search` body. An empty body is refused: heddle has no `match_all`.
pub fn parse_search(body: &[u8]) -> Result<SearchRequest, ApiError> {
    parse_search_with(body, &UrlParams::default())
}

/// What the URL's query string may say: `size` and `from` on `_search`, which override
/// the body's as in Elasticsearch; `refresh` on writes (`true`, `wait_for`, `false` or
/// empty: accepted and ignored, because a heddle write commits and is visible to every
/// later search when it returns, which is what `true` asks); and `pretty` anywhere
/// (indentation only: ignored). Every other parameter is refused, naming the endpoint and
/// what it reads, since ignoring it could change what the caller gets (`filter_path`,
/// `rest_total_hits_as_int`, `q`, `pipeline`, ...) without telling them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlParams {
    pub size: Option<u64>,
    pub from: Option<u64>,
}

/// A URL parameter an endpoint may take besides `pretty`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlParam {
    Size,
    From,
    Refresh,
}

impl UrlParam {
    fn name(self) -> &'static str {
        match self {
            UrlParam::Size => "size",
            UrlParam::From => "from",
            UrlParam::Refresh => "refresh",
        }
    }
}

impl UrlParams {
    /// Parses a query string (`None`: the URL had none) for `endpoint` (named in every
    /// refusal, e.g. `POST /_bulk`), which takes the parameters `accepted`.
    pub fn parse(
        query: Option<&str>,
        endpoint: &str,
        accepted: &[UrlParam],
    ) -> Result<UrlParams, ApiError> {
        let mut params = UrlParams::default();
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let number = |what: &str| {
                value.parse::<u64>().map_err(|_| {
                    ApiError::bad_request(format!(
                        "{endpoint}: URL parameter [{what}] must be a non-negative integer, \
                         not [{value}]"
                    ))
                })
            };
            let param = accepted.iter().find(|p| p.name() == key);
            match (key, param) {
                ("pretty", _) => {}
                (_, Some(UrlParam::Refresh)) => {
                    if !matches!(value, "" | "true" | "wait_for" | "false") {
                        return Err(ApiError::bad_request(format!(
                            "{endpoint}: URL parameter [refresh] must be true, wait_for or \
                             false, not [{value}]"
                        )));
                    }
                }
                (_, Some(UrlParam::Size)) => params.size = Some(number("size")?),
                (_, Some(UrlParam::From)) => params.from = Some(number("from")?),
                (other, None) => {
                    let reads: Vec<&str> = accepted.iter().map(|p| p.name()).collect();
                    let reads = if reads.is_empty() {
                        "no URL parameter (pretty is ignored)".to_string()
                    } else {
                        format!("{} (pretty is ignored)", reads.join(" and "))
                    };
                    return Err(ApiError::bad_request(format!(
                        "{endpoint}: URL parameter [{other}] is not supported; this endpoint \
                         reads {reads}"
                    )));
                }
            }
        }
        Ok(params)
    }
}

/// [`parse_search`], with the URL's `size` and `from` over the body's.
pub fn parse_search_with(body: &[u8], url: &UrlParams) -> Result<SearchRequest, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::parsing(
            "the _search body is empty: send {\"query\": {\"match\": {\"FIELD\": \"TEXT\"}}}",
        ));
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::parsing(format!("the _search body is not JSON: {e}")))?;
    let Value::Object(top) = value else {
        return Err(ApiError::parsing("the _search body must be a JSON object"));
    };
    let mut query = None;
    let (mut from, mut size, mut source) = (0u64, None, true);
    let mut track_total = TrackTotal::UpTo(DEFAULT_TRACK_TOTAL_HITS);
    for (key, v) in &top {
        match key.as_str() {
            "query" => query = Some(parse_query(v)?),
            "size" => size = Some(count("size", v)?),
            "from" => from = count("from", v)?,
            "_source" => {
                source = v.as_bool().ok_or_else(|| {
                    ApiError::parsing("[_source] must be true or false (no field lists)")
                })?
            }
            "track_total_hits" => {
                track_total = match v {
                    Value::Bool(true) => TrackTotal::Exact,
                    Value::Bool(false) => TrackTotal::Off,
                    Value::Number(_) => TrackTotal::UpTo(count("track_total_hits", v)?),
                    other => {
                        return Err(ApiError::parsing(format!(
                            "[track_total_hits] must be true, false or a number, got {other}"
                        )));
                    }
                }
            }
            k if IGNORED_KEYS.contains(&k) => {}
            other => {
                return Err(ApiError::parsing(format!(
                    "unknown key [{other}] in the _search body; _search reads query, size, \
                     from, _source, track_total_hits and timeout"
                )));
            }
        }
    }
    let query = query.ok_or_else(|| ApiError::parsing("the search body has no [query] to run"))?;
    let size = url.size.or(size);
    let from = url.from.unwrap_or(from);
    let size = match size {
        None => DEFAULT_SIZE as u64,
        Some(0) => {
            return Err(ApiError::bad_request(
                "[size] 0 asks for no hits: give 1 or more (heddle has no aggregations)",
            ));
        }
        Some(n) => n,
    };
    if from.saturating_add(size) > MAX_RESULT_WINDOW {
        return Err(ApiError::bad_request(format!(
            "Result window is too large, from + size must be less than or equal to: \
             [{MAX_RESULT_WINDOW}] but was [{}]",
            from.saturating_add(size)
        )));
    }
    Ok(SearchRequest {
        query,
        from: from as usize,
        size: size as usize,
        source,
        track_total,
    })
}

/// Parses a `_count` body: empty (every live document) or `{"query": ...}`, the query
/// as `_search` reads it; anything else is refused as `_search` refuses it.
pub fn parse_count(body: &[u8]) -> Result<Option<Query>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::parsing(format!("the _count body is not JSON: {e}")))?;
    let Value::Object(top) = value else {
        return Err(ApiError::parsing("the _count body must be a JSON object"));
    };
    let mut query = None;
    for (key, v) in &top {
        match key.as_str() {
            "query" => query = Some(parse_query(v)?),
            other => {
                return Err(ApiError::parsing(format!(
                    "unknown key [{other}] in the _count body; _count reads query"
                )));
            }
        }
    }
    Ok(query)
}

/// A non-negative integer (`size`, `from`).
fn count(key: &str, v: &Value) -> Result<u64, ApiError> {
    match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| {
            ApiError::bad_request(format!("[{key}] must be a non-negative integer, got {n}"))
        }),
        other => Err(ApiError::parsing(format!(
            "[{key}] must be a number, got {other}"
        ))),
    }
}

fn parse_query(v: &Value) -> Result<Query, ApiError> {
    let Value::Object(q) = v else {
        return Err(ApiError::parsing("[query] must be an object"));
    };
    let mut entries = q.iter();
    let (Some((kind, body)), None) = (entries.next(), entries.next()) else {
        return Err(ApiError::parsing(
            "[query] must hold exactly one query, e.g. {\"match\": {\"text\": \"…\"}}",
        ));
    };
    match kind.as_str() {
        "match" => parse_match(body),
        "multi_match" => parse_multi_match(body),
        "heddle_fuse" => parse_fuse(body),
        other => Err(ApiError::parsing(format!(
            "unknown query [{other}]; this server speaks match, multi_match and heddle_fuse"
        ))),
    }
}

/// `{"FIELD": "TEXT"}` or `{"FIELD": {"query": "TEXT", "operator": "or"}}`.
fn parse_match(body: &Value) -> Result<Query, ApiError> {
    let Some(m) = body.as_object().filter(|m| m.len() == 1) else {
        return Err(ApiError::parsing(
            "[match] must name exactly one field: {\"match\": {\"FIELD\": \"TEXT\"}}",
        ));
    };
    let (field, spec) = m.iter().next().expect("one entry");
    let text = match spec {
        Value::String(s) => s.clone(),
        Value::Object(o) => {
            for (key, v) in o {
                match key.as_str() {
                    "query" => {}
                    // BM25 over any term is Elasticsearch's default, `or`.
                    "operator" if v.as_str().is_some_and(|s| s.eq_ignore_ascii_case("or")) => {}
                    other => {
                        return Err(ApiError::parsing(format!(
                            "[match] option [{other}] is not supported (only query, and \
                             operator \"or\")"
                        )));
                    }
                }
            }
            text_of("match", o)?
        }
        other => {
            return Err(ApiError::parsing(format!(
                "[match] [{field}] must be a string or {{\"query\": …}}, got {other}"
            )));
        }
    };
    Ok(Query::Match {
        field: field.clone(),
        text,
    })
}

/// Most streams one request may fuse (`multi_match` fields or `heddle_fuse` streams):
/// each is a whole search, and heddle has three fields to name (flat, title, text), so
/// more than a few only repeat work a request should not be able to multiply.
pub const MAX_STREAMS: usize = 8;

fn too_many_streams(what: &str, n: usize) -> ApiError {
    ApiError::bad_request(format!(
        "[{what}] names {n} streams; at most {MAX_STREAMS} (each is a search of its own)"
    ))
}

/// `{"query": "TEXT", "fields": ["title^2", "text"], "type": "most_fields"}`.
fn parse_multi_match(body: &Value) -> Result<Query, ApiError> {
    let o = object("multi_match", body)?;
    let mut fields = Vec::new();
    let mut kind = MultiMatchKind::MostFields;
    for (key, v) in o {
        match key.as_str() {
            "query" => {}
            "fields" => {
                let Some(list) = v.as_array() else {
                    return Err(ApiError::parsing("[multi_match] [fields] must be a list"));
                };
                if list.len() > MAX_STREAMS {
                    return Err(too_many_streams("multi_match", list.len()));
                }
                for f in list {
                    let Some(f) = f.as_str() else {
                        return Err(ApiError::parsing(format!(
                            "[multi_match] [fields] holds {f}, not a field name"
                        )));
                    };
                    fields.push(boosted(f)?);
                }
            }
            "type" => {
                kind = match v.as_str() {
                    Some("most_fields") => MultiMatchKind::MostFields,
                    Some("rrf") => MultiMatchKind::Rrf,
                    _ => {
                        return Err(ApiError::bad_request(format!(
                            "[multi_match] [type] {v} is not supported: most_fields (the \
                             default here) or heddle's rrf"
                        )));
                    }
                }
            }
            other => {
                return Err(ApiError::parsing(format!(
                    "[multi_match] option [{other}] is not supported (query, fields, type)"
                )));
            }
        }
    }
    if fields.is_empty() {
        fields = vec![("title".to_string(), 1.0), ("text".to_string(), 1.0)];
    }
    Ok(Query::MultiMatch {
        text: text_of("multi_match", o)?,
        fields,
        kind,
    })
}

/// `title^2` → (`title`, 2.0); a boost must be a positive finite number.
fn boosted(f: &str) -> Result<(String, f64), ApiError> {
    let Some((name, boost)) = f.split_once('^') else {
        return Ok((f.to_string(), 1.0));
    };
    match boost.parse::<f64>() {
        Ok(b) if b.is_finite() && b > 0.0 => Ok((name.to_string(), b)),
        _ => Err(ApiError::bad_request(format!(
            "[multi_match] field [{f}]: the boost after ^ must be a positive number"
        ))),
    }
}

/// `{"query": "TEXT", "streams": "flat,title,text", "combine": "rrf", "weights": [..],
/// "rrf_k": 60}`: heddle's `--fuse`, `--combine`, `--weights` and `--rrf-k`.
fn parse_fuse(body: &Value) -> Result<Query, ApiError> {
    let o = object("heddle_fuse", body)?;
    let mut streams = None;
    let mut combine = "rrf".to_string();
    let (mut weights, mut rrf_k) = (None, None);
    for (key, v) in o {
        let bad = || ApiError::parsing(format!("[heddle_fuse] [{key}] has the wrong type: {v}"));
        match key.as_str() {
            "query" => {}
            "streams" => streams = Some(v.as_str().ok_or_else(bad)?.to_string()),
            "combine" => combine = v.as_str().ok_or_else(bad)?.to_string(),
            "rrf_k" => rrf_k = Some(v.as_f64().ok_or_else(bad)?),
            "weights" => {
                let list = v.as_array().ok_or_else(bad)?;
                weights = Some(
                    list.iter()
                        .map(|w| w.as_f64().ok_or_else(bad))
                        .collect::<Result<Vec<_>, _>>()?,
                );
            }
            other => {
                return Err(ApiError::parsing(format!(
                    "[heddle_fuse] option [{other}] is not supported (query, streams, \
                     combine, weights, rrf_k)"
                )));
            }
        }
    }
    let streams = streams.unwrap_or_else(|| "flat,title,text".to_string());
    let n = streams.split(',').count();
    if n > MAX_STREAMS {
        return Err(too_many_streams("heddle_fuse", n));
    }
    Ok(Query::Fuse {
        text: text_of("heddle_fuse", o)?,
        streams,
        combine,
        weights,
        rrf_k,
    })
}

fn object<'a>(what: &str, v: &'a Value) -> Result<&'a Map<String, Value>, ApiError> {
    v.as_object()
        .ok_or_else(|| ApiError::parsing(format!("[{what}] must be an object")))
}

fn text_of(what: &str, o: &Map<String, Value>) -> Result<String, ApiError> {
    match o.get("query") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(ApiError::parsing(format!(
            "[{what}] [query] must be a string, got {other}"
        ))),
        None => Err(ApiError::parsing(format!("[{what}] has no [query] text"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<SearchRequest, ApiError> {
        parse_search(s.as_bytes())
    }

    fn reason(s: &str) -> String {
        parse(s).unwrap_err().reason
    }

    #[test]
    fn match_in_both_forms() {
        let a = parse(r#"{"query":{"match":{"text":"bats"}},"size":3}"#).unwrap();
        let b = parse(r#"{"query":{"match":{"text":{"query":"bats","operator":"OR"}}},"size":3}"#)
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.size, 3);
        assert_eq!(
            a.query,
            Query::Match {
                field: "text".into(),
                text: "bats".into()
            }
        );
        assert_eq!(
            parse(r#"{"query":{"match":{"text":"x"}}}"#).unwrap().size,
            DEFAULT_SIZE
        );
    }

    #[test]
    fn multi_match_reads_boosts_and_type() {
        let r = parse(
            r#"{"query":{"multi_match":{"query":"q","fields":["title^2","text"],"type":"rrf"}}}"#,
        )
        .unwrap();
        assert_eq!(
            r.query,
            Query::MultiMatch {
                text: "q".into(),
                fields: vec![("title".into(), 2.0), ("text".into(), 1.0)],
                kind: MultiMatchKind::Rrf
            }
        );
        assert!(
            reason(r#"{"query":{"multi_match":{"query":"q","fields":["title^-1"]}}}"#)
                .contains("title^-1")
        );
        assert!(
            reason(r#"{"query":{"multi_match":{"query":"q","type":"phrase"}}}"#).contains("phrase")
        );
    }

    #[test]
    fn each_refusal_names_what_is_wrong() {
        assert!(reason("{not json").contains("not JSON"));
        assert!(reason("").contains("empty"));
        assert!(reason("[1]").contains("object"));
        assert!(reason(r#"{"size":3}"#).contains("no [query]"));
        assert!(reason(r#"{"query":{"match_all":{}}}"#).contains("[match_all]"));
        assert!(
            reason(r#"{"query":{"match":{"text":"a","title":"b"}}}"#).contains("exactly one field")
        );
        assert!(
            reason(r#"{"query":{"match":{"text":{"query":"a","fuzziness":2}}}}"#)
                .contains("[fuzziness]")
        );
        assert!(reason(r#"{"query":{"match":{"text":7}}}"#).contains("[text]"));
        assert!(reason(r#"{"query":{"match":{"text":"a"}},"aggs":{}}"#).contains("[aggs]"));
        assert!(reason(r#"{"query":{"match":{"text":"a"}},"size":0}"#).contains("[size] 0"));
        assert!(reason(r#"{"query":{"match":{"text":"a"}},"size":-1}"#).contains("-1"));
        assert!(reason(r#"{"query":{"match":{"text":"a"}},"size":"9"}"#).contains("[size]"));
        assert!(reason(r#"{"query":{"match":{"text":"a"}},"size":10001}"#).contains("10001"));
        assert!(
            reason(r#"{"query":{"match":{"text":"a"}},"size":10,"from":18446744073709551615}"#)
                .contains("too large")
        );
        // One request cannot multiply its own cost by naming a stream many times.
        let fields = ["\"text\""; MAX_STREAMS + 1].join(",");
        let multi = format!(r#"{{"query":{{"multi_match":{{"query":"a","fields":[{fields}]}}}}}}"#);
        assert!(reason(&multi).contains("at most 8"), "{}", reason(&multi));
        let streams = ["flat"; MAX_STREAMS + 1].join(",");
        let fuse =
            format!(r#"{{"query":{{"heddle_fuse":{{"query":"a","streams":"{streams}"}}}}}}"#);
        assert!(reason(&fuse).contains("at most 8"), "{}", reason(&fuse));
        let eight = ["flat"; MAX_STREAMS].join(",");
        let fuse = format!(r#"{{"query":{{"heddle_fuse":{{"query":"a","streams":"{eight}"}}}}}}"#);
        assert!(parse(&fuse).is_ok());
    }

    #[test]
    fn fuse_defaults_to_rrf_of_three_streams() {
        let r = parse(r#"{"query":{"heddle_fuse":{"query":"q"}},"_source":false}"#).unwrap();
        assert!(!r.source);
        assert_eq!(r.track_total, TrackTotal::UpTo(DEFAULT_TRACK_TOTAL_HITS));
        assert_eq!(
            r.query,
            Query::Fuse {
                text: "q".into(),
                streams: "flat,title,text".into(),
                combine: "rrf".into(),
                weights: None,
                rrf_k: None
            }
        );
    }
}
