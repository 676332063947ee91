//! JSON-RPC and MCP error codes, as an open set.

use std::fmt;

/// An error code of a JSON-RPC error object. Any integer is kept; the named constants are the
/// codes JSON-RPC and MCP define.
///
/// ```
/// use mcp_types::{ErrorCode, ProtocolVersion};
///
/// assert_eq!(ErrorCode::METHOD_NOT_FOUND.code(), -32601);
/// assert_eq!(ErrorCode::resource_not_found(ProtocolVersion::V2025_06_18), ErrorCode::RESOURCE_NOT_FOUND);
/// assert_eq!(ErrorCode::resource_not_found(ProtocolVersion::V2026_07_28), ErrorCode::INVALID_PARAMS);
/// assert_eq!(ErrorCode::from(-1).name(), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Invalid method parameters.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// The request timed out (as the official SDKs use it).
    pub const REQUEST_TIMEOUT: ErrorCode = ErrorCode(-32001);
    /// Resource not found, in the session revisions (2026-07-28 uses `INVALID_PARAMS`).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// The request needs a URL-mode elicitation first (2025-11-25).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
    /// An HTTP header does not match the body (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// A client capability the request needs was not declared (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The request's protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);

    const NAMED: [(ErrorCode, &'static str); 11] = [
        (Self::PARSE_ERROR, "parse error"),
        (Self::INVALID_REQUEST, "invalid request"),
        (Self::METHOD_NOT_FOUND, "method not found"),
        (Self::INVALID_PARAMS, "invalid params"),
        (Self::INTERNAL_ERROR, "internal error"),
        (Self::REQUEST_TIMEOUT, "request timeout"),
        (Self::RESOURCE_NOT_FOUND, "resource not found"),
        (Self::URL_ELICITATION_REQUIRED, "URL elicitation required"),
        (Self::HEADER_MISMATCH, "header mismatch"),
        (Self::MISSING_REQUIRED_CLIENT_CAPABILITY, "missing required client capability"),
        (Self::UNSUPPORTED_PROTOCOL_VERSION, "unsupported protocol version"),
    ];

    /// The integer code.
    pub const fn code(self) -> i64 {
        self.0
    }

    /// A short name for a known code.
    pub fn name(self) -> Option<&'static str> {
        Self::NAMED.iter().find(|(c, _)| *c == self).map(|(_, n)| *n)
    }

    /// The code for "resource not found" in a given revision: -32002 in the session revisions,
    /// -32602 (invalid params) in 2026-07-28.
    pub const fn resource_not_found(version: crate::ProtocolVersion) -> ErrorCode {
        if version.is_stateless() { Self::INVALID_PARAMS } else { Self::RESOURCE_NOT_FOUND }
    }
}

impl From<i64> for ErrorCode {
    fn from(code: i64) -> Self {
        ErrorCode(code)
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{} ({n})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
