//! Hand-written helpers on the generated JSON-RPC types: the error object as a Rust error, and
//! conversions for request ids and progress tokens.

use std::fmt;

use crate::{ElicitRequestURLParams, ErrorCode, ErrorObject, ProgressToken, ProtocolVersion, RequestId};

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

/// The errors MCP defines, built in one place each, with the data the schema gives them.
///
/// ```
/// use mcp_types::{ErrorCode, ErrorObject, ProtocolVersion};
///
/// let e = ErrorObject::unsupported_protocol_version("1999-01-01", [ProtocolVersion::V2026_07_28]);
/// assert_eq!(e.error_code(), ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
/// assert_eq!(e.data, Some(serde_json::json!({"supported": ["2026-07-28"], "requested": "1999-01-01"})));
///
/// let e = ErrorObject::missing_required_client_capability("sampling.tools");
/// assert_eq!(e.data, Some(serde_json::json!({"requiredCapabilities": {"sampling": {"tools": {}}}})));
/// ```
impl ErrorObject {
    /// -32022 (`UnsupportedProtocolVersionError`): the request asked for a protocol version
    /// the receiver does not serve. `requested` is the version as the request wrote it (a
    /// string, normally; the message quotes it only if it is one); `supported` the versions
    /// the receiver serves, in the order to list them.
    pub fn unsupported_protocol_version(
        requested: impl Into<serde_json::Value>,
        supported: impl IntoIterator<Item = ProtocolVersion>,
    ) -> Self {
        let requested = requested.into();
        let supported: Vec<&str> = supported.into_iter().map(ProtocolVersion::as_str).collect();
        ErrorObject::with_data(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version: {}", requested.as_str().unwrap_or_default()),
            serde_json::json!({"supported": supported, "requested": requested}),
        )
    }

    /// -32021 (`MissingRequiredClientCapabilityError`): the request needs a client capability
    /// the client did not declare, named with dots (`"sampling.tools"` requires
    /// `{"sampling": {"tools": {}}}`).
    pub fn missing_required_client_capability(capability: &str) -> Self {
        let required =
            capability.rsplit('.').fold(serde_json::json!({}), |inner, name| serde_json::json!({ name: inner }));
        ErrorObject::with_data(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!("this request needs the client capability `{capability}`"),
            serde_json::json!({"requiredCapabilities": required}),
        )
    }

    /// Resource not found, as a handler of `resources/read` says it: -32002 with the URI as
    /// `data` (the code of the session revisions). A server answers it with the code of the
    /// request's revision ([`ErrorObject::for_revision`]): -32602 in 2026-07-28.
    ///
    /// ```
    /// use mcp_types::{ErrorCode, ErrorObject, ProtocolVersion};
    ///
    /// let e = ErrorObject::resource_not_found("notes://nope");
    /// assert_eq!(e.error_code(), ErrorCode::RESOURCE_NOT_FOUND);
    /// assert_eq!(e.data, Some(serde_json::json!({"uri": "notes://nope"})));
    /// let e = e.for_revision(ProtocolVersion::V2026_07_28);
    /// assert_eq!(e.error_code(), ErrorCode::INVALID_PARAMS);
    /// ```
    pub fn resource_not_found(uri: &str) -> Self {
        ErrorObject::with_data(
            ErrorCode::RESOURCE_NOT_FOUND,
            format!("resource not found: {uri}"),
            serde_json::json!({"uri": uri}),
        )
    }

    /// The error with the code `version` gives its meaning: "resource not found" (-32002 in the
    /// session revisions) is -32602 in 2026-07-28; every other error is unchanged.
    pub fn for_revision(mut self, version: ProtocolVersion) -> Self {
        if self.code == ErrorCode::RESOURCE_NOT_FOUND.code() {
            self.code = ErrorCode::resource_not_found(version).code();
        }
        self
    }

    /// -32020 (`HeaderMismatchError`): an HTTP header is missing, malformed or disagrees with
    /// the request body; `detail` says which.
    pub fn header_mismatch(detail: impl fmt::Display) -> Self {
        ErrorObject::new(ErrorCode::HEADER_MISMATCH.code(), format!("Header mismatch: {detail}"))
    }

    /// -32042 (`URLElicitationRequiredError`, 2025-11-25 only): the request cannot be
    /// processed until the client completes these URL-mode elicitations (each with its
    /// `elicitationId`); the client retries it afterwards.
    ///
    /// ```
    /// use mcp_types::{ElicitRequestURLParams, ErrorCode, ErrorObject};
    ///
    /// let connect = ElicitRequestURLParams::new("Sign in to Example Co", "https://example.com/connect?id=1")
    ///     .with_elicitation_id("1");
    /// let e = ErrorObject::url_elicitation_required("This request requires more information.", vec![connect]);
    /// assert_eq!(e.error_code(), ErrorCode::URL_ELICITATION_REQUIRED);
    /// let data = e.data.unwrap_or_default();
    /// assert_eq!(data["elicitations"][0]["mode"], "url");
    /// assert_eq!(data["elicitations"][0]["elicitationId"], "1");
    /// ```
    pub fn url_elicitation_required(message: impl Into<String>, elicitations: Vec<ElicitRequestURLParams>) -> Self {
        ErrorObject::with_data(
            ErrorCode::URL_ELICITATION_REQUIRED,
            message,
            serde_json::json!({"elicitations": elicitations}),
        )
    }

    /// The URL-mode elicitations a -32042 error ([`url_elicitation_required`](Self::url_elicitation_required))
    /// lists, decoded; `None` for another error, or one whose `data.elicitations` does not
    /// decode.
    ///
    /// ```
    /// use mcp_types::{ElicitRequestURLParams, ErrorObject};
    ///
    /// let connect = ElicitRequestURLParams::new("Sign in", "https://example.com/connect?id=1").with_elicitation_id("1");
    /// let e = ErrorObject::url_elicitation_required("Sign in first.", vec![connect.clone()]);
    /// assert_eq!(e.url_elicitations(), Some(vec![connect]));
    /// assert_eq!(ErrorObject::invalid_params("no").url_elicitations(), None);
    /// ```
    pub fn url_elicitations(&self) -> Option<Vec<ElicitRequestURLParams>> {
        if self.error_code() != ErrorCode::URL_ELICITATION_REQUIRED {
            return None;
        }
        let data = self.data.as_ref()?.get("elicitations")?;
        serde_json::from_value(data.clone()).ok()
    }

    /// -32602 for a request of the stateless revision without a `_meta` member it must carry
    /// (`key`: one of the [`meta`](crate::meta) keys, or `_meta` itself). The data names the
    /// key under `envelope`, which tells an HTTP server to answer `400 Bad Request`.
    pub fn missing_request_metadata(key: &str) -> Self {
        ErrorObject::with_data(
            ErrorCode::INVALID_PARAMS,
            format!("invalid request metadata: `{key}` is missing"),
            serde_json::json!({"envelope": {"key": key, "problem": "missing"}}),
        )
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

impl RequestId {
    /// The id as logs and trace attributes write it: a string id without the quotes
    /// [`Display`](fmt::Display) gives it (`abc`, `7`).
    ///
    /// ```
    /// # use mcp_types::RequestId;
    /// assert_eq!(RequestId::from("abc").unquoted().to_string(), "abc");
    /// assert_eq!(RequestId::from("abc").to_string(), "\"abc\"");
    /// assert_eq!(RequestId::from(7).unquoted().to_string(), "7");
    /// ```
    pub fn unquoted(&self) -> impl fmt::Display + '_ {
        struct Unquoted<'a>(&'a RequestId);
        impl fmt::Display for Unquoted<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.0 {
                    RequestId::String(s) => f.write_str(s),
                    RequestId::Integer(n) => write!(f, "{n}"),
                }
            }
        }
        Unquoted(self)
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
