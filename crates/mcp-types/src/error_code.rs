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
    /// The request timed out (as the official SDKs use it, for a timeout they raise locally;
    /// in the range -32000 to -32019 that 2026-07-28 leaves to implementations). The same
    /// number as [`ErrorCode::SESSION_NOT_FOUND`]: a code alone cannot tell the two apart.
    pub const REQUEST_TIMEOUT: ErrorCode = ErrorCode(-32001);
    /// No session has the `Mcp-Session-Id` a Streamable HTTP request names (answered with
    /// `404 Not Found`). Not a code of the specification: the one the official TypeScript
    /// SDK's server answers with, the same number as [`ErrorCode::REQUEST_TIMEOUT`].
    pub const SESSION_NOT_FOUND: ErrorCode = ErrorCode(-32001);
    /// Resource not found, in the session revisions (2025-11-25 and earlier). 2026-07-28 uses
    /// `INVALID_PARAMS` instead and forbids emitting this code, though clients SHOULD still
    /// accept it from servers of earlier revisions. See [`ErrorCode::resource_not_found`].
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// `URLElicitationRequiredError` (2025-11-25 only): the server requires the client to
    /// complete a URL-mode elicitation first; `data.elicitations` lists them.
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
    /// `HeaderMismatchError` (2026-07-28): the values in the HTTP headers do not match the
    /// corresponding values in the request body, or required headers are missing or
    /// malformed. On HTTP the status is `400 Bad Request`.
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// `MissingRequiredClientCapabilityError` (2026-07-28): processing the request requires a
    /// capability the client did not declare; `data.requiredCapabilities` lists the missing
    /// ones. On HTTP the status is `400 Bad Request`.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// `UnsupportedProtocolVersionError` (2026-07-28): the request's protocol version is
    /// unknown to the server or unsupported; `data.supported` lists the versions the server
    /// supports, `data.requested` repeats the one asked for. On HTTP the status is
    /// `400 Bad Request`.
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);

    const NAMED: [(ErrorCode, &'static str); 11] = [
        (Self::PARSE_ERROR, "parse error"),
        (Self::INVALID_REQUEST, "invalid request"),
        (Self::METHOD_NOT_FOUND, "method not found"),
        (Self::INVALID_PARAMS, "invalid params"),
        (Self::INTERNAL_ERROR, "internal error"),
        // REQUEST_TIMEOUT and SESSION_NOT_FOUND are both -32001: the name says both.
        (Self::REQUEST_TIMEOUT, "request timeout or session not found"),
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
    ///
    /// -32001 has two meanings ([`REQUEST_TIMEOUT`](Self::REQUEST_TIMEOUT) and
    /// [`SESSION_NOT_FOUND`](Self::SESSION_NOT_FOUND)), and its name says both: "request
    /// timeout or session not found". Which one it is depends on where it came from (an HTTP
    /// `404` answer to a request naming a session is the second).
    ///
    /// ```
    /// use mcp_types::ErrorCode;
    ///
    /// assert_eq!(ErrorCode::METHOD_NOT_FOUND.name(), Some("method not found"));
    /// assert_eq!(ErrorCode::SESSION_NOT_FOUND.name(), Some("request timeout or session not found"));
    /// ```
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_code_names_both_meanings() {
        assert_eq!(ErrorCode::REQUEST_TIMEOUT, ErrorCode::SESSION_NOT_FOUND);
        let name = ErrorCode::SESSION_NOT_FOUND.name().unwrap_or_default();
        assert!(name.contains("request timeout") && name.contains("session not found"), "{name}");
        assert_eq!(ErrorCode::REQUEST_TIMEOUT.name(), ErrorCode::SESSION_NOT_FOUND.name());
        assert_eq!(ErrorCode::from(-32001).to_string(), "-32001 (request timeout or session not found)");
    }

    #[test]
    fn each_code_is_named_once() {
        for (i, (code, _)) in ErrorCode::NAMED.iter().enumerate() {
            let same = ErrorCode::NAMED.iter().skip(i + 1).filter(|(c, _)| c == code).count();
            assert_eq!(same, 0, "{code:?} is named twice: one name must say all its meanings");
        }
    }
}
