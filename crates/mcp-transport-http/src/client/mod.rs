//! The HTTP client transports: Streamable HTTP, and HTTP+SSE (the 2024-11-05 transport).
//!
//! The transports carry frames: what a message is, they learn from the engine (each
//! [`Outbound`](mcp_jsonrpc::Outbound) says whether it is a request, with its id, a
//! notification, a response, or the cancellation of a request), and what it means to the HTTP
//! session from the MCP client, as per-message [`RequestHeaders`] hints. They parse incoming
//! messages only for the ids of responses, to know when a request's stream is done (and the
//! answer to `initialize` for the negotiated revision, which the client could only tell
//! later, through the write queue).
//!
//! A tour:
//! - [`HttpClientConfig`]: the endpoint URL, extra headers, an [`AuthProvider`], timeouts,
//!   bounds, the [`ReconnectPolicy`] of SSE streams, a [`reqwest::Client`] of your own.
//! - [`StreamableHttpTransport`]: a [`Transport`](mcp_jsonrpc::Transport) for any connection
//!   (`mcp-client`'s `ClientBuilder::connect_http` makes one for you). If the POST of
//!   `initialize` is refused with a 4xx other than 401 and 403, it falls back to HTTP+SSE on
//!   the same URL, as the specification's backwards-compatibility procedure says, and
//!   re-sends `initialize` there: the connection above sees nothing of it.
//! - [`HttpSseTransport`]: the HTTP+SSE transport, explicitly.
//! - [`RequestHeaders`], [`encode_header_value`]: what the client tells the transport about a
//!   message (`initialize`, `notifications/initialized`, a stateless request's headers), and
//!   the encoding of 2026-07-28 header values.
//! - [`HttpRequestError`], [`HttpErrorKind`]: why HTTP failed a request, as the call's
//!   [`CallError::Transport`](mcp_jsonrpc::CallError::Transport).
//!
//! What the Streamable HTTP transport does:
//! - Every message is a POST (`Accept: application/json, text/event-stream`), each request
//!   in its own task, at most [`HttpClientConfig::max_in_flight`] at once. Notifications and
//!   responses are POSTed in order, each waiting for its `202`, so that a request never
//!   overtakes the `notifications/initialized` before it.
//! - Answers: a JSON body (one message or a batch), or an SSE stream whose `message` events
//!   are read until the request is answered. Every message goes into one bounded queue
//!   ([`HttpClientConfig::inbound_capacity`]).
//! - The session: the `Mcp-Session-Id` of the answer to the request hinted
//!   [`RequestHeaders::initialize`], and the revision the server answered it with, go with
//!   every later message (`Mcp-Session-Id`, `MCP-Protocol-Version`).
//! - After `notifications/initialized` was accepted, a GET opens the stream of
//!   server-initiated messages (405: the server has none). It is reopened with its
//!   `Last-Event-ID` when it ends.
//! - Resumption (SEP-1699): a request's SSE stream that ends before the answer is resumed
//!   with GET and the `Last-Event-ID` of its last event, after the server's `retry` (exactly)
//!   or a backoff, a bounded number of times.
//! - Errors: an error status, a connection failure or a stream that cannot be resumed fails
//!   the request with an [`HttpRequestError`] (status and body text in the message), so the
//!   call fails instead of waiting. A 404 to a request with a session id means the session
//!   expired: the error says so ([`HttpRequestError::is_session_expired`]), later requests
//!   fail at once, and the next `initialize` starts a new session (`mcp-client` does this by
//!   itself and retries the call). A 401 asks the [`AuthProvider`], then fails with an error
//!   that says authorization is required.
//! - Closing: the streams stop and a DELETE ends the session (a 405 is fine).
//! - Revision 2026-07-28 (stateless): a request hinted [`RequestHeaders::stateless`] goes
//!   without a session id, with the headers it was handed (`MCP-Protocol-Version`,
//!   `Mcp-Method`, `Mcp-Name`, `Mcp-Param-{Name}`: `mcp-client` computes them, with the
//!   `x-mcp-header` declarations of the tools it listed). Its stream is not resumed;
//!   cancelling it closes the stream instead of POSTing `notifications/cancelled`; a JSON-RPC
//!   error in the body of a 4xx answer is delivered as the server sent it. Such a request does
//!   not decide the transport: the fallback to HTTP+SSE still happens at a later
//!   `initialize`, unless its refusal carries one of the JSON-RPC errors the client named
//!   final ([`RequestHeaders::final_errors`]: `mcp-client` names the errors only servers of the
//!   stateless revision send), which is delivered instead.
//!
//! ```no_run
//! use std::sync::Arc;
//! use mcp_jsonrpc::{CallOptions, Peer, PeerConfig, Router};
//! use mcp_transport_http::client::{HttpClientConfig, RequestHeaders, StreamableHttpTransport};
//! use mcp_types::{
//!     ClientCapabilities, Implementation, InitializeRequest, InitializeRequestParams, InitializedNotification,
//! };
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = HttpClientConfig::parse("http://127.0.0.1:8080/mcp")?;
//! let transport = StreamableHttpTransport::new(config)?;
//! let session = transport.handle();
//! let peer = Peer::spawn(transport, Arc::new(Router::new()), PeerConfig::default());
//! // What the transport cannot learn from the frame: this request begins a session.
//! let options = CallOptions::default().hints(RequestHeaders::initialize().into_hints());
//! let params = InitializeRequestParams::new(
//!     ClientCapabilities::default(),
//!     Implementation::new("my-app", "1.0"),
//!     "2025-11-25",
//! );
//! let init = peer.request::<InitializeRequest>(params, options).await?;
//! println!("{} in session {:?}", init.server_info.name, session.session_id());
//! // The handshake's end: the stream of server-initiated messages opens after it.
//! let done = RequestHeaders::initialized().into_hints();
//! peer.notify_with_hints::<InitializedNotification>(Default::default(), done).await?;
//! # Ok(()) }
//! ```

mod auth;
mod config;
mod core;
mod error;
mod hints;
#[cfg(feature = "oauth")]
pub mod oauth;
pub(crate) mod request;
mod sse;
mod transport;

/// The SSE parser, for the fuzz targets of `crates/mcp-fuzz` (not a stable API).
#[doc(hidden)]
pub mod fuzzing {
    pub use super::sse::{SseEvent, SseParser};
}

pub use auth::{AuthProvider, Unauthorized};
pub use config::{DEFAULT_MAX_MESSAGE_SIZE, HttpClientConfig, ReconnectPolicy};
pub use error::{HttpClientError, HttpErrorKind, HttpRequestError};
pub use hints::{RequestHeaders, encode_header_value};
pub use http::{HeaderMap, HeaderName, HeaderValue};
pub use reqwest;
#[allow(deprecated)]
pub use transport::LegacySseTransport;
pub use transport::{HttpClientHandle, HttpClientRead, HttpClientWrite, HttpSseTransport, StreamableHttpTransport};
pub use url::Url;
