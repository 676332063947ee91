//! Hand-written helpers on the generated JSON-RPC types: the error object as a Rust error, and
//! conversions for request ids and progress tokens.

use std::fmt;

use crate::{ErrorCode, ErrorObject, ProgressToken, RequestId};

impl ErrorObject {
    /// An error object with a code, a message and data.
    pub fn with_data(code: ErrorCode, message: impl Into<String>, data: serde_json::Value) -> Self {
        let mut e = ErrorObject::new(code.code(), message);
        e.data = Some(data);
        e
    }

    /// The code as an [`ErrorCode`].
    pub fn error_code(&self) -> ErrorCode {
        ErrorCode(self.code)
    }

    /// -32700: the message was not valid JSON.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        ErrorObject::new(ErrorCode::PARSE_ERROR.code(), format!("parse error: {detail}"))
    }

    /// -32600: the message was JSON but not a valid JSON-RPC message.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        ErrorObject::new(ErrorCode::INVALID_REQUEST.code(), format!("invalid request: {detail}"))
    }

    /// -32601: no such method.
    pub fn method_not_found(method: &str) -> Self {
        ErrorObject::new(ErrorCode::METHOD_NOT_FOUND.code(), format!("method not found: {method}"))
    }

    /// -32602: the params do not fit the method.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        ErrorObject::new(ErrorCode::INVALID_PARAMS.code(), format!("invalid params: {detail}"))
    }

    /// -32603: the receiver failed.
    pub fn internal_error(detail: impl fmt::Display) -> Self {
        ErrorObject::new(ErrorCode::INTERNAL_ERROR.code(), format!("internal error: {detail}"))
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::String(s) => write!(f, "{s:?}"),
            RequestId::Integer(n) => write!(f, "{n}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Integer(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl From<RequestId> for ProgressToken {
    fn from(id: RequestId) -> Self {
        match id {
            RequestId::String(s) => ProgressToken::String(s),
            RequestId::Integer(n) => ProgressToken::Integer(n),
        }
    }
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        ProgressToken::Integer(n)
    }
}

impl fmt::Display for ProgressToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgressToken::String(s) => write!(f, "{s:?}"),
            ProgressToken::Integer(n) => write!(f, "{n}"),
        }
    }
}
