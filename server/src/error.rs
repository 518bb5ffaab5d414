//! The one error a request can end in: an HTTP status and a reason, shaped as
//! Elasticsearch shapes its errors so that its clients can read them.

use serde_json::{Value, json};

/// What went wrong with one request, and the status it is answered with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    /// Elasticsearch's `error.type`, e.g. `parsing_exception`.
    pub kind: &'static str,
    /// What was wrong, naming the key or value at fault.
    pub reason: String,
}

impl ApiError {
    pub fn new(status: u16, kind: &'static str, reason: impl Into<String>) -> Self {
        ApiError {
            status,
            kind,
            reason: reason.into(),
        }
    }

    /// A request body or parameter this server cannot accept (400).
    pub fn bad_request(reason: impl Into<String>) -> Self {
        ApiError::new(400, "illegal_argument_exception", reason)
    }

    /// A body that is not the JSON it should be (400).
    pub fn parsing(reason: impl Into<String>) -> Self {
        ApiError::new(400, "parsing_exception", reason)
    }

    /// A failure on the server's side (500), e.g. an index file that cannot be read.
    pub fn internal(reason: impl Into<String>) -> Self {
        ApiError::new(500, "internal_server_error", reason)
    }

    /// The same error with its reason naming `endpoint` (`POST /idx/_bulk: ...`), unless
    /// it already starts with it.
    pub fn at(mut self, endpoint: &str) -> Self {
        if !self.reason.starts_with(endpoint) {
            self.reason = format!("{endpoint}: {}", self.reason);
        }
        self
    }

    /// `{"error": {"type", "reason", "root_cause": [...]}, "status"}`, as Elasticsearch
    /// answers, so that a client written for it shows the reason.
    pub fn body(&self) -> Value {
        let cause = json!({"type": self.kind, "reason": self.reason});
        json!({
            "error": {"type": self.kind, "reason": self.reason, "root_cause": [cause]},
            "status": self.status,
        })
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.kind, self.reason)
    }
}

impl std::error::Error for ApiError {}
