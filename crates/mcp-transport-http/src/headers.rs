//! Header names and media types of the Streamable HTTP transport, and the reading of header
//! values in the Base64 sentinel form of 2026-07-28.

use std::borrow::Cow;

/// The session id the server issues at initialize; the client sends it on every request.
pub const MCP_SESSION_ID: &str = "mcp-session-id";
/// The negotiated protocol revision, sent by the client on every request after initialize.
pub const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The id of the last SSE event a client saw, sent when it resumes a stream.
pub const LAST_EVENT_ID: &str = "last-event-id";
/// The request's method, mirrored from the body (2026-07-28).
pub const MCP_METHOD: &str = "mcp-method";
/// The name (or URI) a `tools/call`, `prompts/get` or `resources/read` request names,
/// mirrored from the body (2026-07-28).
pub const MCP_NAME: &str = "mcp-name";
/// The prefix of the headers that mirror tool arguments (`Mcp-Param-{name}`, 2026-07-28).
pub const MCP_PARAM_PREFIX: &str = "mcp-param-";
/// JSON bodies.
pub const APPLICATION_JSON: &str = "application/json";
/// Server-sent events.
pub const TEXT_EVENT_STREAM: &str = "text/event-stream";

/// A header that mirrors a value of the body cannot be read: it is repeated, is not visible
/// ASCII, or its Base64 sentinel form does not decode to UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the header value is malformed")]
pub struct MalformedHeader;

/// The value of header `name` as it mirrors a value of the body (2026-07-28 `Mcp-Method`,
/// `Mcp-Name`, `Mcp-Param-*`): trimmed, and decoded from the Base64 sentinel form
/// (`=?base64?…?=`) if it has it. `None` when the header is absent.
///
/// ```
/// use http::{HeaderMap, HeaderValue};
/// use mcp_transport_http::headers::{MCP_NAME, mirrored_value};
///
/// let mut headers = HeaderMap::new();
/// headers.insert(MCP_NAME, HeaderValue::from_static("=?base64?IHBhZGRlZCA=?="));
/// assert_eq!(mirrored_value(&headers, MCP_NAME).unwrap().unwrap(), " padded ");
/// assert!(mirrored_value(&headers, "mcp-param-region").is_none());
/// ```
pub fn mirrored_value(
    headers: &http::HeaderMap,
    name: impl http::header::AsHeaderName,
) -> Option<Result<Cow<'_, str>, MalformedHeader>> {
    let mut all = headers.get_all(name).iter();
    let raw = all.next()?;
    if all.next().is_some() {
        return Some(Err(MalformedHeader));
    }
    let Ok(text) = raw.to_str() else { return Some(Err(MalformedHeader)) };
    let text = text.trim();
    Some(match text.strip_prefix("=?base64?").and_then(|t| t.strip_suffix("?=")) {
        Some(encoded) => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .map(Cow::Owned)
                .ok_or(MalformedHeader)
        }
        None => Ok(Cow::Borrowed(text)),
    })
}
