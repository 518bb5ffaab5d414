//! The writes arm over HTTP: documents as a `_bulk` body of `create` actions, deletes by
//! id, and what a `_bulk` answer says (Elasticsearch's shape, which `serve` answers).

use std::time::Duration;

use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::bench::backend::{CommitReport, ServerTime};

/// Longest one `_bulk` may take: a commit of many documents on a slow disk is slow.
pub(super) const BULK_TIMEOUT: Duration = Duration::from_secs(600);

/// Ids per delete request at the end of the writes arm: a body well under any server's
/// limit (`serve --max-body` is 10 MiB by default).
pub(super) const DELETES_PER_REQUEST: usize = 5_000;

/// `{"create": {"_id": …}}` then `{"title": …, "text": …}` for each document.
pub(super) fn create_body(docs: &[heddle::Document]) -> anyhow::Result<Vec<u8>> {
    anyhow::ensure!(!docs.is_empty(), "a commit with no documents added");
    let mut body = Vec::new();
    for d in docs {
        serde_json::to_writer(&mut body, &json!({"create": {"_id": d.id}}))?;
        body.push(b'\n');
        serde_json::to_writer(&mut body, &json!({"title": d.title, "text": d.text}))?;
        body.push(b'\n');
    }
    Ok(body)
}

/// `{"delete": {"_id": …}}` for each id.
pub(super) fn delete_body(ids: &[String]) -> anyhow::Result<Vec<u8>> {
    let mut body = Vec::new();
    for id in ids {
        serde_json::to_writer(&mut body, &json!({"delete": {"_id": id}}))?;
        body.push(b'\n');
    }
    Ok(body)
}

#[derive(Deserialize)]
struct BulkResponse {
    took: Option<u64>,
    #[serde(default)]
    errors: bool,
    #[serde(default)]
    items: Vec<Value>,
}

/// Fails if any item failed (a delete of an absent id has not: 404 `not_found`); else
/// the server's `took`, if it gave one.
pub(super) fn check_bulk(bytes: &[u8]) -> anyhow::Result<Option<u64>> {
    let r: BulkResponse = serde_json::from_slice(bytes).with_context(|| {
        format!(
            "a _bulk answer without Elasticsearch's shape: {}",
            String::from_utf8_lossy(bytes)
                .chars()
                .take(300)
                .collect::<String>()
        )
    })?;
    for item in &r.items {
        let Some((action, result)) = item.as_object().and_then(|o| o.iter().next()) else {
            continue;
        };
        let status = result["status"].as_u64().unwrap_or(0);
        let absent = action == "delete" && status == 404;
        if status >= 300 && !absent {
            bail!(
                "{action} of [{}] failed with {status}: {}",
                result["_id"].as_str().unwrap_or("?"),
                result["error"]["reason"]
                    .as_str()
                    .map_or_else(|| result["error"].to_string(), str::to_string)
            );
        }
    }
    if r.errors {
        bail!("the _bulk answer says errors: true but names no failed item");
    }
    Ok(r.took)
}

/// A `_bulk`'s cost as the writes arm records a commit: the server's own time and the
/// rest of the round trip (the body on the wire, the answer back), or the round trip
/// whole if the server did not say.
pub(super) fn report(wall: Duration, server: Option<ServerTime>) -> CommitReport {
    let phases = match server {
        Some(s) => {
            let server = Duration::from_micros(s.micros).min(wall);
            vec![
                ("server".to_string(), server),
                ("transport".to_string(), wall - server),
            ]
        }
        None => vec![("bulk request".to_string(), wall)],
    };
    CommitReport {
        phases,
        exclusive: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_bodies_and_answers() {
        let docs = [heddle::Document::new("w-1", "T", "x \"y\"")];
        let body = String::from_utf8(create_body(&docs).unwrap()).unwrap();
        assert_eq!(
            body,
            "{\"create\":{\"_id\":\"w-1\"}}\n{\"text\":\"x \\\"y\\\"\",\"title\":\"T\"}\n"
        );
        let body = String::from_utf8(delete_body(&["a".into(), "b".into()]).unwrap()).unwrap();
        assert_eq!(
            body,
            "{\"delete\":{\"_id\":\"a\"}}\n{\"delete\":{\"_id\":\"b\"}}\n"
        );

        let ok = br#"{"took":5,"errors":false,"items":[{"delete":{"_id":"a","status":404,"result":"not_found"}}]}"#;
        assert_eq!(check_bulk(ok).unwrap(), Some(5));
        let es = br#"{"took":2,"errors":true,"items":[{"create":{"_id":"a","status":409,"error":{"type":"version_conflict_engine_exception","reason":"document already exists"}}}]}"#;
        let e = check_bulk(es).unwrap_err().to_string();
        assert!(
            e.contains("create of [a] failed with 409: document already exists"),
            "{e}"
        );
        assert!(check_bulk(b"nope").is_err());
    }
}
