//! The HTTP client transports: Streamable HTTP, and legacy HTTP+SSE.
//!
//! A tour:
//! - [`HttpClientConfig`]: the endpoint URL, extra headers, an [`AuthProvider`], timeouts,
//!   bounds, the [`ReconnectPolicy`] of SSE streams, a [`reqwest::Client`] of your own.
//! - [`StreamableHttpTransport`]: a [`Transport`](mcp_jsonrpc::Transport) for any connection
//!   (`mcp-client`'s `ClientBuilder::connect_http` makes one for you). If the POST of
//!   `initialize` is refused with a 4xx other than 401 and 403, it falls back to legacy
//!   HTTP+SSE on the same URL, as the specification's backwards-compatibility procedure says,
//!   and re-sends `initialize` there: the connection above sees nothing of it.
//! - [`LegacySseTransport`]: the 2024-11-05 transport, explicitly.
//! - [`HttpErrorKind`], [`is_session_expired`]: the error responses the transport makes up
//!   when HTTP fails a request.
//! - [`ToolHeaders`], [`encode_header_value`]: the `x-mcp-header` declarations of a tool and
//!   the encoding of 2026-07-28 header values.
//!
//! What the Streamable HTTP transport does:
//! - Every message is a POST (`Accept: application/json, text/event-stream`), each request
//!   in its own task, at most [`HttpClientConfig::max_in_flight`] at once. Notifications and
//!   responses are POSTed in order, each waiting for its `202`, so that a request never
//!   overtakes the `notifications/initialized` before it.
//! - Answers: a JSON body (one message or a batch), or an SSE stream whose `message` events
//!   are read until the request is answered. Every message goes into one bounded queue
//!   ([`HttpClientConfig::inbound_capacity`]).
//! - The session: the `Mcp-Session-Id` of the answer to `initialize`, and the revision the
//!   server answered with, go with every later request (`Mcp-Session-Id`,
//!   `MCP-Protocol-Version`).
//! - After `notifications/initialized` was accepted, a GET opens the stream of
//!   server-initiated messages (405: the server has none). It is reopened with its
//!   `Last-Event-ID` when it ends.
//! - Resumption (SEP-1699): a request's SSE stream that ends before the answer is resumed
//!   with GET and the `Last-Event-ID` of its last event, after the server's `retry` (exactly)
//!   or a backoff, a bounded number of times.
//! - Errors: an error status, a connection failure or a stream that cannot be resumed fails
//!   the request with a JSON-RPC error response (status and body text in the message), so
//!   the call fails instead of waiting. A 404 to a request with a session id means the
//!   session expired: the error says so ([`is_session_expired`]), later requests fail at once,
//!   and the next `initialize` starts a new session (`mcp-client` does this by itself and
//!   retries the call). A 401 asks the [`AuthProvider`], then fails with an error that says
//!   authorization is required.
//! - Closing: the streams stop and a DELETE ends the session (a 405 is fine).
//! - Revision 2026-07-28 (stateless): a request whose `_meta` carries
//!   `io.modelcontextprotocol/protocolVersion` of 2026-07-28 or later goes without a session id,
//!   with `MCP-Protocol-Version` (that revision), `Mcp-Method`, `Mcp-Name` (for `tools/call`,
//!   `prompts/get`, `resources/read`) and the `Mcp-Param-{Name}` headers of the tool's
//!   `x-mcp-header` arguments ([`ToolHeaders`]; the declarations come from the `tools/list`
//!   answers the transport carries). Its stream is not resumed; cancelling it closes the stream
//!   instead of POSTing `notifications/cancelled`; a JSON-RPC error in the body of a 4xx answer
//!   is delivered as the server sent it. Such a request does not decide the transport: the
//!   fallback to legacy HTTP+SSE still happens at a later `initialize`, whose refusal with a
//!   2026-07-28 error (-32020, -32021, -32022) is delivered instead.
//!
//! ```no_run
//! use std::sync::Arc;
//! use mcp_jsonrpc::{CallOptions, Peer, PeerConfig, Router};
//! use mcp_transport_http::client::{HttpClientConfig, StreamableHttpTransport};
//! use mcp_types::{ClientCapabilities, Implementation, InitializeRequest, InitializeRequestParams};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = HttpClientConfig::parse("http://127.0.0.1:8080/mcp")?;
//! let transport = StreamableHttpTransport::new(config)?;
//! let session = transport.handle();
//! let peer = Peer::spawn(transport, Arc::new(Router::new()), PeerConfig::default());
//! let params = InitializeRequestParams::new(
//!     ClientCapabilities::default(),
//!     Implementation::new("my-app", "1.0"),
//!     "2025-11-25",
//! );
//! let init = peer.request::<InitializeRequest>(params, CallOptions::default()).await?;
//! println!("{} in session {:?}", init.server_info.name, session.session_id());
//! # Ok(()) }
//! ```

mod auth;
mod config;
mod core;
mod error;
mod param_headers;
mod sse;
mod transport;

pub use auth::{AuthProvider, Unauthorized};
pub use config::{HttpClientConfig, ReconnectPolicy};
pub use error::{HTTP_TRANSPORT_ERROR, HttpClientError, HttpErrorKind, http_status, is_session_expired};
pub use http::{HeaderMap, HeaderName, HeaderValue};
pub use param_headers::{InvalidToolHeaders, ToolHeaders, encode_header_value};
pub use reqwest;
pub use transport::{HttpClientHandle, HttpClientRead, HttpClientWrite, LegacySseTransport, StreamableHttpTransport};
pub use url::Url;
