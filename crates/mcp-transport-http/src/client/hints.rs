//! The per-request HTTP headers the MCP client hands the transport with an outgoing message
//! ([`RequestHeaders`], as [`FrameHints`]): which message begins a session, which one
//! completes its handshake, and the headers of a stateless (2026-07-28) request (its revision,
//! `Mcp-Method`, `Mcp-Name`, `Mcp-Param-{Name}`). The transport sends what it is handed and
//! learns nothing by reading the messages.
//!
//! ```
//! use mcp_jsonrpc::CallOptions;
//! use mcp_transport_http::client::RequestHeaders;
//!
//! let headers = RequestHeaders::stateless("2026-07-28", "tools/call")
//!     .name("sql")
//!     .param("Region", "Hello, 世界");
//! assert_eq!(headers.header("mcp-param-region").unwrap(), "=?base64?SGVsbG8sIOS4lueVjA==?=");
//! let options = CallOptions::default().hints(headers.into_hints());
//! # let _ = options;
//! ```

use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use mcp_jsonrpc::FrameHints;

/// The request metadata headers of 2026-07-28.
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
/// The prefix of mirrored-argument headers.
const PARAM_PREFIX: &str = "mcp-param-";
const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// What a message is to the HTTP session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Role {
    /// Nothing special: sent in the session, if there is one.
    #[default]
    Plain,
    /// `initialize`: a new session begins (and, the first time, the POST may be refused by
    /// an HTTP+SSE server).
    Initialize,
    /// `notifications/initialized`: the handshake is complete; the GET stream may open.
    Initialized,
    /// A stateless request: no session, its own headers, no resumption.
    Stateless,
}

/// What the MCP client tells the HTTP client transport about one outgoing message: hand it
/// over as [`FrameHints`] ([`RequestHeaders::into_hints`], then
/// [`CallOptions::hints`](mcp_jsonrpc::CallOptions::hints) or
/// [`Peer::notify_with_hints`](mcp_jsonrpc::Peer::notify_with_hints)). `mcp-client` does it
/// for every message that needs it; a message without hints goes in the session as it is.
#[derive(Debug, Clone, Default)]
pub struct RequestHeaders {
    pub(crate) role: Role,
    /// `MCP-Protocol-Version` of a stateless request.
    pub(crate) version: Option<HeaderValue>,
    /// `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`.
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// JSON-RPC error codes that, in the body of a 4xx answer, are the server's own answer.
    pub(crate) final_errors: &'static [i64],
}

impl RequestHeaders {
    /// `initialize`: a new session begins, without a session id; the revision of its answer
    /// goes as `MCP-Protocol-Version` from then on. A transport that may fall
    /// back to HTTP+SSE does so when the POST is refused with a 4xx (other than 401 and 403),
    /// unless [`final_errors`](Self::final_errors) says the refusal is the server's answer.
    pub fn initialize() -> Self {
        RequestHeaders { role: Role::Initialize, ..Default::default() }
    }

    /// `notifications/initialized`: once the server accepted it, the stream of
    /// server-initiated messages opens.
    pub fn initialized() -> Self {
        RequestHeaders { role: Role::Initialized, ..Default::default() }
    }

    /// A stateless request of revision `version` (2026-07-28): no session id, its own POST and
    /// stream (not resumed), `MCP-Protocol-Version: version`, `Mcp-Method: method`; a JSON-RPC
    /// error in the body of a 4xx answer is delivered as the server sent it, and cancelling it
    /// closes its stream instead of POSTing `notifications/cancelled`.
    pub fn stateless(version: &str, method: &str) -> Self {
        let mut headers = Vec::new();
        if let Ok(method) = HeaderValue::from_str(method) {
            headers.push((MCP_METHOD, method));
        }
        RequestHeaders {
            role: Role::Stateless,
            version: HeaderValue::from_str(version).ok(),
            headers,
            final_errors: &[],
        }
    }

    /// Adds `Mcp-Name` (the tool, prompt or resource the request names), encoded with
    /// [`encode_header_value`].
    pub fn name(mut self, name: &str) -> Self {
        self.headers.push((MCP_NAME, encode_header_value(name)));
        self
    }

    /// Adds `Mcp-Param-{name}: value` (an argument the tool mirrors with `x-mcp-header`; the
    /// value as text, encoded with [`encode_header_value`]). A name that is not an HTTP token
    /// is skipped.
    pub fn param(mut self, name: &str, value: &str) -> Self {
        let header = format!("{PARAM_PREFIX}{}", name.to_ascii_lowercase());
        match HeaderName::from_bytes(header.as_bytes()) {
            Ok(header) => self.headers.push((header, encode_header_value(value))),
            Err(_) => tracing::debug!(name, "not an HTTP token; no Mcp-Param header"),
        }
        self
    }

    /// JSON-RPC error codes that, in the body of a 4xx answer to this message, are the
    /// server's answer: delivered as it sent them, and for `initialize` no fallback to
    /// HTTP+SSE (the client knows which errors only servers of the stateless revision send).
    pub fn final_errors(mut self, codes: &'static [i64]) -> Self {
        self.final_errors = codes;
        self
    }

    /// The value of a header this message gets (`mcp-method`, `mcp-name`, `mcp-param-…`).
    pub fn header(&self, name: &str) -> Option<&HeaderValue> {
        self.headers.iter().find(|(n, _)| n.as_str().eq_ignore_ascii_case(name)).map(|(_, v)| v)
    }

    /// The hints to hand the connection with the message.
    pub fn into_hints(self) -> FrameHints {
        Arc::new(self)
    }

    /// The headers of a message's hints, if they are ours.
    pub(crate) fn of(hints: Option<&FrameHints>) -> Option<&RequestHeaders> {
        hints?.downcast_ref::<RequestHeaders>()
    }
}

/// Whether `s` can be sent as it is: visible ASCII, spaces and tabs inside, no leading or
/// trailing whitespace, not empty, and not looking like the Base64 sentinel.
fn is_plain(s: &str) -> bool {
    let sentinel = s.starts_with(SENTINEL_PREFIX) && s.ends_with(SENTINEL_SUFFIX);
    !s.is_empty()
        && !sentinel
        && s.trim_matches(|c| c == ' ' || c == '\t') == s
        && s.bytes().all(|b| b == b'\t' || (0x20..=0x7e).contains(&b))
}

/// Encodes a value for `Mcp-Name` or `Mcp-Param-{Name}`: the value itself when it is a safe
/// plain ASCII field value, else `=?base64?{Base64 of its UTF-8}?=` (also for the empty
/// string and for values that look like the sentinel).
///
/// ```
/// use mcp_transport_http::client::encode_header_value;
/// assert_eq!(encode_header_value("us west 1"), "us west 1");
/// assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
/// assert_eq!(encode_header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
/// assert_eq!(encode_header_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
/// ```
pub fn encode_header_value(value: &str) -> HeaderValue {
    if is_plain(value)
        && let Ok(v) = HeaderValue::from_str(value)
    {
        return v;
    }
    let encoded = format!("{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}", base64(value.as_bytes()));
    // Base64 and the sentinel are visible ASCII.
    HeaderValue::from_str(&encoded).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Standard Base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648() {
        for (plain, encoded) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE=")]
        {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn values_are_encoded_as_the_specification_shows() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(encode_header_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode_header_value("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(encode_header_value("a\tb"), "a\tb");
        assert_eq!(encode_header_value("line1\r\nline2"), "=?base64?bGluZTENCmxpbmUy?=");
        assert_eq!(encode_header_value(""), "=?base64??=");
    }

    #[test]
    fn param_names_are_lowercased_and_checked() {
        let h = RequestHeaders::stateless("2026-07-28", "tools/call").param("Region", "x").param("bad name", "y");
        assert_eq!(h.header("mcp-param-region").unwrap(), "x");
        assert_eq!(h.headers.len(), 2, "method and region only: {h:?}");
        assert_eq!(h.header("mcp-method").unwrap(), "tools/call");
    }
}
