//! The `_bulk` body: newline-delimited JSON, an action line then (for `index` and
//! `create`) a document line, as Elasticsearch reads it.
//!
//! ```text
//! {"index": {"_id": "d1"}}
//! {"title": "Bats", "text": "Bats host many coronaviruses."}
//! {"delete": {"_id": "d2"}}
//! ```
//!
//! The whole body is parsed before anything is written, so a malformed line refuses
//! the batch (naming the line) and commits nothing — where Elasticsearch would apply
//! the lines before it.

use serde_json::Value;

use crate::error::ApiError;

/// One operation of a bulk request.
#[derive(Debug, Clone, PartialEq)]
pub enum BulkOp {
    /// `index`: add the document, replacing one with the same id.
    Index(heddle::Document),
    /// `create`: add the document; an existing id refuses the batch.
    Create(heddle::Document),
    /// `delete`: remove the document if it exists.
    Delete(String),
}

impl BulkOp {
    /// The action's name, as the response's `items` key it.
    pub fn action(&self) -> &'static str {
        match self {
            BulkOp::Index(_) => "index",
            BulkOp::Create(_) => "create",
            BulkOp::Delete(_) => "delete",
        }
    }

    pub fn id(&self) -> &str {
        match self {
            BulkOp::Index(d) | BulkOp::Create(d) => &d.id,
            BulkOp::Delete(id) => id,
        }
    }
}

/// Where a bulk request was sent: `/{index}/_bulk`, where an action's `_index` may be
/// left out, or `/_bulk`, where every action must name its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkPath {
    Index,
    Root,
}

/// Parses a bulk body for the index named `index`, the one this server serves: an
/// action's `_index` must be it (and must be given when the request was sent to
/// `/_bulk`). Blank lines are skipped.
pub fn parse_bulk(body: &[u8], index: &str, path: BulkPath) -> Result<Vec<BulkOp>, ApiError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::parsing(format!("the bulk body is not UTF-8: {e}")))?;
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty());
    let mut ops = Vec::new();
    while let Some((n, line)) = lines.next() {
        let action: Value = serde_json::from_str(line)
            .map_err(|e| ApiError::parsing(format!("bulk line {n}: not JSON: {e}")))?;
        let Some((name, meta)) = action
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.iter().next())
        else {
            return Err(ApiError::parsing(format!(
                "bulk line {n}: an action line is one of {{\"index\"|\"create\"|\"delete\": \
                 {{\"_id\": \"…\"}}}}"
            )));
        };
        let id = action_id(n, name, meta, index, path)?;
        let op = match name.as_str() {
            "delete" => BulkOp::Delete(id),
            "index" | "create" => {
                let Some((m, source)) = lines.next() else {
                    return Err(ApiError::parsing(format!(
                        "bulk line {n}: [{name}] has no document line after it"
                    )));
                };
                let doc = document(&format!("bulk line {m}"), id, source)?;
                if name == "index" {
                    BulkOp::Index(doc)
                } else {
                    BulkOp::Create(doc)
                }
            }
            other => {
                return Err(ApiError::parsing(format!(
                    "bulk line {n}: unknown action [{other}] (index, create or delete)"
                )));
            }
        };
        ops.push(op);
    }
    if ops.is_empty() {
        return Err(ApiError::parsing("the bulk body holds no action"));
    }
    Ok(ops)
}

/// The `_id` of an action line; `_index`, if present, must name this index.
fn action_id(
    n: usize,
    name: &str,
    meta: &Value,
    index: &str,
    path: BulkPath,
) -> Result<String, ApiError> {
    let Some(meta) = meta.as_object() else {
        return Err(ApiError::parsing(format!(
            "bulk line {n}: [{name}] must be an object"
        )));
    };
    match (meta.get("_index"), path) {
        (Some(Value::String(named)), _) if named == index => {}
        (None, BulkPath::Index) => {}
        (None, BulkPath::Root) => {
            return Err(ApiError::new(
                400,
                "action_request_validation_exception",
                format!(
                    "bulk line {n}: [{name}] names no [_index]; a request to /_bulk must name \
                     it on every action (this server serves [{index}])"
                ),
            ));
        }
        (Some(Value::String(named)), _) => {
            return Err(ApiError::new(
                404,
                "index_not_found_exception",
                format!(
                    "bulk line {n}: no such index [{named}]: this server serves [{index}]; \
                     nothing in this request was applied"
                ),
            ));
        }
        (Some(other), _) => {
            return Err(ApiError::parsing(format!(
                "bulk line {n}: [_index] must be a string, got {other}"
            )));
        }
    }
    match meta.get("_id") {
        Some(Value::String(id)) if !id.is_empty() => Ok(id.clone()),
        _ => Err(ApiError::bad_request(format!(
            "bulk line {n}: [{name}] needs a non-empty string [_id] (heddle does not make ids)"
        ))),
    }
}

/// A `_doc` request's body, the document stored under `id`: as a bulk document line.
pub fn parse_document(body: &[u8], id: &str) -> Result<heddle::Document, ApiError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::parsing(format!("the _doc body is not UTF-8: {e}")))?;
    document("the _doc body", id.to_string(), text)
}

/// A document line (`at` says where it is, e.g. `bulk line 4`): `title` and `text`, both
/// optional strings; other keys are refused so that a misspelt field cannot be dropped
/// without a word.
fn document(at: &str, id: String, line: &str) -> Result<heddle::Document, ApiError> {
    let n = at;
    let v: Value =
        serde_json::from_str(line).map_err(|e| ApiError::parsing(format!("{n}: not JSON: {e}")))?;
    let Some(o) = v.as_object() else {
        return Err(ApiError::parsing(format!(
            "{n}: a document must be an object"
        )));
    };
    let (mut title, mut text) = (String::new(), String::new());
    for (key, value) in o {
        let slot = match key.as_str() {
            "title" => &mut title,
            "text" => &mut text,
            other => {
                return Err(ApiError::bad_request(format!(
                    "{n}: field [{other}] is not one heddle stores (title, text)"
                )));
            }
        };
        *slot = value
            .as_str()
            .ok_or_else(|| ApiError::bad_request(format!("{n}: [{key}] must be a string")))?
            .to_string();
    }
    Ok(heddle::Document::new(id, title, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_action() {
        let body = "{\"index\":{\"_id\":\"a\"}}\n{\"title\":\"T\",\"text\":\"x\"}\n\n\
                    {\"create\":{\"_index\":\"idx\",\"_id\":\"b\"}}\n{\"text\":\"y\"}\n\
                    {\"delete\":{\"_id\":\"c\"}}\n";
        let ops = parse_bulk(body.as_bytes(), "idx", BulkPath::Index).unwrap();
        assert_eq!(
            ops,
            vec![
                BulkOp::Index(heddle::Document::new("a", "T", "x")),
                BulkOp::Create(heddle::Document::new("b", "", "y")),
                BulkOp::Delete("c".into()),
            ]
        );
    }

    #[test]
    fn refusals_name_the_line() {
        let r = |b: &str| {
            parse_bulk(b.as_bytes(), "idx", BulkPath::Index)
                .unwrap_err()
                .reason
        };
        assert!(r("").contains("no action"));
        assert!(r("{\"index\":{\"_id\":\"a\"}}\n").contains("line 1"));
        assert!(r("{\"delete\":{}}").contains("[_id]"));
        assert!(r("{\"delete\":{\"_id\":\"a\",\"_index\":\"other\"}}").contains("other"));
        assert!(r("{\"update\":{\"_id\":\"a\"}}\n{}").contains("[update]"));
        assert!(
            r("{\"index\":{\"_id\":\"a\"}}\n{\"body\":\"x\"}").contains("line 2: field [body]")
        );
        assert!(r("{\"index\":{\"_id\":\"a\"}}\n{\"text\":3}").contains("[text]"));
        assert!(r("nope").contains("line 1: not JSON"));
    }

    #[test]
    fn a_root_bulk_needs_the_served_index_on_every_action() {
        let body = "{\"index\":{\"_index\":\"idx\",\"_id\":\"a\"}}\n{\"text\":\"x\"}\n\
                    {\"delete\":{\"_index\":\"idx\",\"_id\":\"b\"}}\n";
        let ops = parse_bulk(body.as_bytes(), "idx", BulkPath::Root).unwrap();
        assert_eq!(
            ops,
            vec![
                BulkOp::Index(heddle::Document::new("a", "", "x")),
                BulkOp::Delete("b".into())
            ]
        );
        let e = parse_bulk(b"{\"delete\":{\"_id\":\"b\"}}", "idx", BulkPath::Root).unwrap_err();
        assert_eq!(e.status, 400);
        assert!(e.reason.contains("line 1") && e.reason.contains("[_index]"));
        let other = "{\"delete\":{\"_index\":\"idx\",\"_id\":\"a\"}}\n\
                     {\"delete\":{\"_index\":\"logs\",\"_id\":\"b\"}}";
        for path in [BulkPath::Root, BulkPath::Index] {
            let e = parse_bulk(other.as_bytes(), "idx", path).unwrap_err();
            assert_eq!(e.status, 404);
            assert!(
                e.reason.contains("line 2: no such index [logs]"),
                "{}",
                e.reason
            );
        }
    }

    #[test]
    fn a_doc_body_is_read_as_a_document_line() {
        let d = parse_document(br#"{"title":"T","text":"x"}"#, "a").unwrap();
        assert_eq!(d, heddle::Document::new("a", "T", "x"));
        let e = parse_document(br#"{"body":"x"}"#, "a").unwrap_err();
        assert!(
            e.reason.contains("the _doc body: field [body]"),
            "{}",
            e.reason
        );
    }
}
