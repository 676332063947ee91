//! Errors of the client transports: setting up a connection, and HTTP failing a request.

/// Why a client transport could not be set up or connected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpClientError {
    /// The URL does not parse, or is not `http`/`https`.
    #[error("invalid URL {0}")]
    InvalidUrl(String),
    /// The HTTP client could not be built (TLS backend).
    #[error("cannot build the HTTP client")]
    Client(#[source] reqwest::Error),
    /// An HTTP request failed (connection refused, timeout, broken stream).
    #[error("HTTP request failed")]
    Request(#[source] reqwest::Error),
    /// The server answered with an error status.
    #[error("HTTP {status}{}", if .body.is_empty() { String::new() } else { format!(": {}", .body) })]
    Status {
        /// The status.
        status: http::StatusCode,
        /// The start of the body, as text.
        body: String,
    },
    /// The HTTP+SSE stream did not announce where to POST messages.
    #[error("HTTP+SSE: {0}")]
    Endpoint(String),
    /// No answer in time.
    #[error("timed out: {0}")]
    Timeout(String),
}

/// What went wrong with a request at the HTTP level (see [`HttpRequestError::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HttpErrorKind {
    /// 404 to a request that carried a session id: the server ended the session. The client
    /// must initialize a new one (`mcp-client` does so by itself).
    SessionExpired,
    /// 401: the server wants authorization (see [`AuthProvider`](super::AuthProvider)).
    Unauthorized,
    /// Another error status.
    Status,
    /// The request could not be sent or its answer not received (connection refused, reset).
    Connection,
    /// The response's SSE stream ended before the answer and could not be resumed.
    StreamEnded,
    /// The response was neither JSON nor an SSE stream, or not valid.
    BadResponse,
    /// The response was larger than the configured limit.
    TooLarge,
}

impl HttpErrorKind {
    /// A short name (`sessionExpired`, `unauthorized`, `status`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            HttpErrorKind::SessionExpired => "sessionExpired",
            HttpErrorKind::Unauthorized => "unauthorized",
            HttpErrorKind::Status => "status",
            HttpErrorKind::Connection => "connection",
            HttpErrorKind::StreamEnded => "streamEnded",
            HttpErrorKind::BadResponse => "badResponse",
            HttpErrorKind::TooLarge => "tooLarge",
        }
    }
}

impl std::fmt::Display for HttpErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why HTTP failed a request: the call waiting for it fails with
/// [`CallError::Transport`](mcp_jsonrpc::CallError::Transport) holding this error (and
/// `mcp-client` with `ClientError::Transport`), instead of waiting. The message has the
/// status and the start of the body; [`kind`](Self::kind) and [`status`](Self::status) are
/// for matching.
///
/// ```
/// use mcp_jsonrpc::CallError;
/// use mcp_transport_http::client::{HttpErrorKind, HttpRequestError};
///
/// fn expired(e: &CallError) -> bool {
///     e.transport_error()
///         .and_then(|e| e.downcast_ref::<HttpRequestError>())
///         .is_some_and(|e| e.kind() == HttpErrorKind::SessionExpired)
/// }
/// # let _ = expired;
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct HttpRequestError {
    kind: HttpErrorKind,
    status: Option<http::StatusCode>,
    message: String,
    #[source]
    source: Option<reqwest::Error>,
    retry_after: Option<std::time::Duration>,
}

impl HttpRequestError {
    /// An error of `kind`, with the answer's status if there was one.
    pub(crate) fn new(kind: HttpErrorKind, status: Option<http::StatusCode>, message: String) -> Self {
        HttpRequestError { kind, status, message, source: None, retry_after: None }
    }

    /// A request or response that broke (kind [`HttpErrorKind::Connection`]).
    pub(crate) fn connection(status: Option<http::StatusCode>, message: String, source: reqwest::Error) -> Self {
        HttpRequestError { kind: HttpErrorKind::Connection, status, message, source: Some(source), retry_after: None }
    }

    /// What went wrong.
    pub fn kind(&self) -> HttpErrorKind {
        self.kind
    }

    /// The status of the server's answer, if one came.
    pub fn status(&self) -> Option<http::StatusCode> {
        self.status
    }

    /// How long the server asked to wait before trying again: the `Retry-After` header of an
    /// error status (429, 503), in delay-seconds (an HTTP date is not read).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        self.retry_after
    }

    /// This error with the server's `Retry-After`.
    pub(crate) fn with_retry_after(mut self, retry_after: Option<std::time::Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }

    /// Whether the server ended the session the request was sent in (HTTP 404 to its
    /// `Mcp-Session-Id`): a new `initialize` starts a new one.
    pub fn is_session_expired(&self) -> bool {
        self.kind == HttpErrorKind::SessionExpired
    }
}
