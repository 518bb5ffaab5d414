//! Who may ask: the checks every request passes before it is routed, so that a web page
//! open in a browser on this machine cannot write to the server or read from it.
//!
//! A browser sends a cross-origin `POST` with a `text/plain`, form or multipart body (or
//! none named) without asking first, so such a body is refused whatever the endpoint; a
//! page served from a name the attacker controls can rebind that name to 127.0.0.1 and
//! read the answers, so a `Host` that is not this server's address is refused; and a
//! request that says it comes from a page of another origin (`Origin`) is refused.
//! Clients that are not browsers send JSON with its type, the `Host` they connected to,
//! and no `Origin`.

use std::net::{IpAddr, SocketAddr};

use hyper::HeaderMap;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN, TRANSFER_ENCODING};

use crate::error::ApiError;

/// The body types accepted, on every endpoint: JSON and newline-delimited JSON, plain or
/// as the Elasticsearch clients name them (`application/vnd.elasticsearch+json;
/// compatible-with=9`). Parameters after `;` (a charset, the compatibility version) are
/// not checked.
const BODY_TYPES: [&str; 4] = [
    "application/json",
    "application/x-ndjson",
    "application/vnd.elasticsearch+json",
    "application/vnd.elasticsearch+x-ndjson",
];

/// The addresses a request may name as its `Host` (and an `Origin` may be at).
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    /// The address the listener is bound to.
    listening: SocketAddr,
    /// Further host names (`serve --allow-remote NAME,...`), lowercase.
    names: Vec<String>,
}

impl Guard {
    pub(crate) fn new(listening: SocketAddr, names: &[String]) -> Self {
        Guard {
            listening,
            names: names.iter().map(|n| n.to_ascii_lowercase()).collect(),
        }
    }

    /// Refuses a request whose `Host`, `Origin` or body type is not one this server takes.
    /// `endpoint` names the request in the refusal (`POST /idx/_bulk`).
    pub(crate) fn check(&self, headers: &HeaderMap, endpoint: &str) -> Result<(), ApiError> {
        let forbidden = |reason: String| ApiError::new(403, "security_exception", reason);
        let host = headers
            .get(HOST)
            .map(|h| h.to_str().unwrap_or("(not text)"))
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "{endpoint}: the request has no Host header; send the address it is \
                     sent to ({})",
                    self.listening
                ))
            })?;
        if !self.accepts_authority(host) {
            return Err(forbidden(format!(
                "{endpoint}: Host [{host}] is not this server's address ({}); a name other \
                 than an IP address or localhost must be given to serve --allow-remote",
                self.listening
            )));
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let origin = origin.to_str().unwrap_or("(not text)");
            let same = origin
                .strip_prefix("http://")
                .is_some_and(|authority| self.accepts_authority(authority));
            if !same {
                return Err(forbidden(format!(
                    "{endpoint}: requests from web pages of other origins are refused \
                     (Origin [{origin}]); this server is http://{}",
                    self.listening
                )));
            }
        }
        check_body_type(headers, endpoint)
    }

    /// Whether `HOST[:PORT]` names this server: the port it listens on (80 if none is
    /// given) and a host that is the address it listens on, a loopback name when it
    /// listens on one (or on every address), any IP address when it listens on every
    /// address (an address, unlike a name, cannot be rebound to this machine by a page),
    /// or a name given to `--allow-remote`.
    fn accepts_authority(&self, authority: &str) -> bool {
        let Some((host, port)) = split_authority(authority) else {
            return false;
        };
        if port != self.listening.port() {
            return false;
        }
        let host = host.to_ascii_lowercase();
        let bound = self.listening.ip();
        let loopback_ok = bound.is_loopback() || bound.is_unspecified();
        match host.parse::<IpAddr>() {
            Ok(ip) => ip == bound || (loopback_ok && ip.is_loopback()) || bound.is_unspecified(),
            Err(_) => (loopback_ok && host == "localhost") || self.names.contains(&host),
        }
    }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port` → (host without brackets, port); `None` if
/// malformed.
fn split_authority(authority: &str) -> Option<(&str, u16)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        match after {
            "" => (host, None),
            p => (host, Some(p.strip_prefix(':')?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host.contains(['/', '@', ' ']) {
        return None;
    }
    let port = match port {
        None => 80,
        Some(p) => p.parse().ok()?,
    };
    Some((host, port))
}

/// A body must say it is JSON or NDJSON; a request with no `Content-Type` may carry no
/// body at all. (A browser sends a body it does not type, or types as text or a form,
/// across origins without a preflight.)
fn check_body_type(headers: &HeaderMap, endpoint: &str) -> Result<(), ApiError> {
    let refused = |what: String| {
        ApiError::new(
            406,
            "media_type_header_exception",
            format!(
                "{endpoint}: {what}; send application/json (or application/x-ndjson to \
                 _bulk)"
            ),
        )
    };
    match headers.get(CONTENT_TYPE) {
        Some(value) => {
            let text = value.to_str().unwrap_or("(not text)");
            let media = text.split(';').next().unwrap_or("").trim();
            if BODY_TYPES.iter().any(|t| media.eq_ignore_ascii_case(t)) {
                Ok(())
            } else {
                Err(refused(format!(
                    "Content-Type header [{text}] is not supported"
                )))
            }
        }
        None => {
            let length = headers
                .get(CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .map(|v| v.trim() != "0");
            let has_body = length.unwrap_or(false) || headers.contains_key(TRANSFER_ENCODING);
            if has_body {
                Err(refused(
                    "a request body needs a Content-Type header".to_string(),
                ))
            } else {
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    fn loopback() -> Guard {
        Guard::new("127.0.0.1:9200".parse().unwrap(), &[])
    }

    #[test]
    fn host_must_be_the_listening_address() {
        let g = loopback();
        for ok in [
            "127.0.0.1:9200",
            "localhost:9200",
            "LOCALHOST:9200",
            "[::1]:9200",
        ] {
            let h = headers(&[("host", ok)]);
            assert!(g.check(&h, "GET /").is_ok(), "{ok}");
        }
        for bad in [
            "evil.example:9200",
            "127.0.0.1:9201",
            "127.0.0.1",
            "10.0.0.1:9200",
            "localhost.evil.example:9200",
            "",
            "[::1",
        ] {
            let h = headers(&[("host", bad)]);
            let e = g.check(&h, "GET /").unwrap_err();
            assert_eq!(e.status, 403, "{bad}");
            assert!(e.reason.contains("GET /"), "{}", e.reason);
        }
        assert_eq!(g.check(&HeaderMap::new(), "GET /").unwrap_err().status, 400);
    }

    #[test]
    fn allow_remote_names_are_accepted_and_every_address_takes_ip_literals() {
        let g = Guard::new("0.0.0.0:80".parse().unwrap(), &["Search.LAN".into()]);
        for ok in ["search.lan", "192.168.1.9", "localhost:80", "[fe80::1]"] {
            assert!(g.check(&headers(&[("host", ok)]), "x").is_ok(), "{ok}");
        }
        assert!(g.check(&headers(&[("host", "other.lan")]), "x").is_err());
        let g = Guard::new("192.168.1.9:9200".parse().unwrap(), &[]);
        assert!(
            g.check(&headers(&[("host", "192.168.1.9:9200")]), "x")
                .is_ok()
        );
        assert!(
            g.check(&headers(&[("host", "192.168.1.10:9200")]), "x")
                .is_err()
        );
        assert!(
            g.check(&headers(&[("host", "localhost:9200")]), "x")
                .is_err()
        );
    }

    #[test]
    fn foreign_origins_are_refused() {
        let g = loopback();
        let ok = headers(&[
            ("host", "127.0.0.1:9200"),
            ("origin", "http://localhost:9200"),
        ]);
        assert!(g.check(&ok, "x").is_ok());
        for bad in [
            "http://evil.example",
            "null",
            "https://127.0.0.1:9200",
            "http://127.0.0.1:8080",
        ] {
            let mut h = headers(&[("host", "127.0.0.1:9200")]);
            h.insert(ORIGIN, HeaderValue::from_static(bad));
            let e = g.check(&h, "POST /idx/_bulk").unwrap_err();
            assert_eq!(e.status, 403, "{bad}");
            assert!(e.reason.contains(bad) && e.reason.contains("POST /idx/_bulk"));
        }
    }

    #[test]
    fn bodies_must_be_json_or_ndjson() {
        let g = loopback();
        for ok in [
            "application/json",
            "application/json; charset=UTF-8",
            "application/x-ndjson",
            "application/vnd.elasticsearch+json; compatible-with=9",
            "Application/VND.Elasticsearch+X-NDJSON;compatible-with=9",
        ] {
            let mut h = headers(&[("host", "127.0.0.1:9200"), ("content-length", "5")]);
            h.insert(CONTENT_TYPE, HeaderValue::from_static(ok));
            assert!(g.check(&h, "x").is_ok(), "{ok}");
        }
        for bad in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/jsonx",
            "",
        ] {
            let mut h = headers(&[("host", "127.0.0.1:9200")]);
            h.insert(CONTENT_TYPE, HeaderValue::from_static(bad));
            let e = g.check(&h, "POST /idx/_bulk").unwrap_err();
            assert_eq!(e.status, 406, "{bad}");
            assert!(e.reason.contains("POST /idx/_bulk"));
        }
        // No type: only without a body.
        let h = headers(&[("host", "127.0.0.1:9200"), ("content-length", "0")]);
        assert!(g.check(&h, "x").is_ok());
        let h = headers(&[("host", "127.0.0.1:9200"), ("content-length", "2")]);
        assert_eq!(g.check(&h, "x").unwrap_err().status, 406);
        let h = headers(&[("host", "127.0.0.1:9200"), ("transfer-encoding", "chunked")]);
        assert_eq!(g.check(&h, "x").unwrap_err().status, 406);
    }
}
