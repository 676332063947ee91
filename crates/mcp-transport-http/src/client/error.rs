//! Errors of the client transports: setting up a connection, and the JSON-RPC error responses
//! the transport makes up when HTTP fails a request.

use bytes::Bytes;
use mcp_jsonrpc::message;
use mcp_types::{ErrorCode, ErrorObject, RequestId};

/// Why a client transport could not be set up or connected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpClientError {
    /// The URL does not parse, or is not `http`/`https`.
    #[error("invalid URL {0}")]
    InvalidUrl(String),
    /// The HTTP client could not be built (TLS backend).
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// An HTTP request failed (connection refused, timeout, broken stream).
    #[error("HTTP request failed: {0}")]
    Request(#[source] reqwest::Error),
    /// The server answered with an error status.
    #[error("HTTP {status}{}", if .body.is_empty() { String::new() } else { format!(": {}", .body) })]
    Status {
        /// The status.
        status: http::StatusCode,
        /// The start of the body, as text.
        body: String,
    },
    /// The legacy SSE stream did not announce where to POST messages.
    #[error("legacy HTTP+SSE: {0}")]
    Endpoint(String),
    /// No answer in time.
    #[error("timed out: {0}")]
    Timeout(String),
}

/// The code of the error responses the transport makes up for requests HTTP failed
/// (-32000, in JSON-RPC's range for implementation-defined errors). What failed is in
/// `data` (see [`HttpErrorKind::of`]).
pub const HTTP_TRANSPORT_ERROR: ErrorCode = ErrorCode(-32000);

/// The `data` member that tells the transport's error responses apart.
const KIND_KEY: &str = "httpTransportError";
const STATUS_KEY: &str = "httpStatus";

/// What went wrong with a request at the HTTP level.
///
/// The transport answers a request that HTTP failed with a JSON-RPC error response (code
/// [`HTTP_TRANSPORT_ERROR`], message with the status and body text), so the call fails
/// instead of waiting; its `data` is `{"httpTransportError": "<kind>", "httpStatus": <n>}`.
///
/// ```
/// use mcp_transport_http::client::HttpErrorKind;
/// use mcp_types::ErrorObject;
///
/// let e: ErrorObject = serde_json::from_value(serde_json::json!({
///     "code": -32000, "message": "session expired",
///     "data": {"httpTransportError": "sessionExpired", "httpStatus": 404}
/// })).unwrap();
/// assert_eq!(HttpErrorKind::of(&e), Some(HttpErrorKind::SessionExpired));
/// ```
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
    /// The name used in `data`.
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

    /// The kind of an error response the transport made up, `None` for any other error
    /// (the server's own).
    pub fn of(error: &ErrorObject) -> Option<HttpErrorKind> {
        let name = error.data.as_ref()?.get(KIND_KEY)?.as_str()?;
        [
            HttpErrorKind::SessionExpired,
            HttpErrorKind::Unauthorized,
            HttpErrorKind::Status,
            HttpErrorKind::Connection,
            HttpErrorKind::StreamEnded,
            HttpErrorKind::BadResponse,
            HttpErrorKind::TooLarge,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for HttpErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether `error` is the transport's answer to a request sent in a session the server has
/// ended (HTTP 404 with `Mcp-Session-Id`): a new `initialize` starts a new session.
pub fn is_session_expired(error: &ErrorObject) -> bool {
    HttpErrorKind::of(error) == Some(HttpErrorKind::SessionExpired)
}

/// The HTTP status carried by one of the transport's error responses.
pub fn http_status(error: &ErrorObject) -> Option<u16> {
    HttpErrorKind::of(error)?;
    error.data.as_ref()?.get(STATUS_KEY)?.as_u64().and_then(|s| u16::try_from(s).ok())
}

/// The error object for a failed request.
pub(crate) fn error_object(kind: HttpErrorKind, status: Option<http::StatusCode>, message: String) -> ErrorObject {
    let mut data = serde_json::Map::new();
    data.insert(KIND_KEY.to_owned(), kind.as_str().into());
    if let Some(s) = status {
        data.insert(STATUS_KEY.to_owned(), s.as_u16().into());
    }
    ErrorObject::with_data(HTTP_TRANSPORT_ERROR, message, serde_json::Value::Object(data))
}

/// The error response frame for request `id`.
pub(crate) fn error_frame(id: &RequestId, error: &ErrorObject) -> Bytes {
    message::encode_error(Some(id), error)
}
