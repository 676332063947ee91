//! The MCP client runtime: connect to any MCP server and call it with typed methods.
//!
//! - [`ClientBuilder::connect`] finds the server's protocol era over any transport: it probes
//!   with `server/discover` and speaks the stateless revision 2026-07-28 to a server that
//!   lists it, and performs the `initialize` handshake with the others (offering the newest
//!   session revision and accepting an older one the server answers with);
//!   [`ClientBuilder::protocol_version`] and [`ClientBuilder::session_revisions_only`] pin an era.
//!   [`ClientBuilder::spawn`] runs a server as a child process first.
//! - [`ClientBuilder::connect_http`] connects to a server's Streamable HTTP endpoint (or a
//!   HTTP+SSE one); a session the server ends is renewed by itself.
//! - Typed calls: [`Client::list_tools`], [`Client::call_tool`], [`Client::get_prompt`],
//!   [`Client::read_resource`], ... and `list_all_*` helpers that follow `nextCursor` to the end,
//!   the same in both eras. A call for a capability the server did not declare fails at once,
//!   without a round trip.
//! - Handlers for the server's requests (sampling, elicitation, roots) declare the matching
//!   client capabilities; in 2026-07-28 they answer the server's input requests
//!   (`input_required` results), and the call is sent again with the answers, transparently.
//!   Notifications (log messages, list changes, resource updates) reach a callback and a
//!   stream; in 2026-07-28 change notifications come on subscriptions ([`Client::listen`]).
//! - [`ClientBuilder::layer`] puts layers around every request the client sends
//!   ([`middleware`]): retry with backoff on transport errors, logging, metrics, or your own.
//! - [`Client::close`] ends the connection gracefully: what was sent before is written, then a
//!   child server is stopped the way the specification asks.
//! - [`ToolHeaders`] reads a tool's `x-mcp-header` declarations (2026-07-28, SEP-2243) and
//!   makes the `Mcp-Param-*` headers of a call, as the client does over Streamable HTTP, for a
//!   program that sends `tools/call` by other means (a proxy).
//!
//! ## Features
//!
//! Additive; the default is `http`, `oauth` and `jsonschema`. Without any, a client connects over stdio
//! ([`ClientBuilder::spawn`], always there: it costs only tokio's process support) or over any
//! [`Transport`](mcp_jsonrpc::Transport) given to [`ClientBuilder::connect`].
//!
//! | feature | what it adds |
//! |---|---|
//! | `http` | [`ClientBuilder::connect_http`] and the [`http`] module: Streamable HTTP and HTTP+SSE, with HTTPS (reqwest, rustls) |
//! | `oauth` | OAuth 2.1 for HTTP: `http::oauth` and `HttpClientConfig::oauth` (discovery, registration, the authorization code flow with PKCE, refresh, step-up) |
//! | `jsonschema` | `ClientBuilder::validate_arguments` and `ClientBuilder::validate_structured_content`: tool arguments and structured results checked against the tools' schemas, with the `jsonschema` crate |
//! | `opentelemetry` | not default: each request carries the W3C trace context of its `mcp.client.request` span in `_meta` (`traceparent`, `tracestate`, `baggage`), through `tracing-opentelemetry` (see `docs/tracing.md`) |
//!
//! Without `jsonschema` the two validation options do not exist (a call to one does not
//! compile), so a client never believes it validates when it does not.
//!
//! ```no_run
//! use mcp_client::ClientBuilder;
//! use mcp_transport_stdio::ChildCommand;
//!
//! # async fn run() -> Result<(), mcp_client::ClientError> {
//! let client = ClientBuilder::new("my-app", "1.0").spawn(ChildCommand::new("npx").args(["-y", "some-mcp-server"])).await?;
//! println!("connected to {}", client.server_info().name);
//! for tool in client.list_all_tools().await? {
//!     println!("tool {}", tool.name);
//! }
//! let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
//! println!("{:?}", result.content);
//! client.close().await?;
//! # Ok(()) }
//! ```

mod builder;
mod cache;
mod calls;
mod client;
mod connection;
mod error;
mod listen;
pub mod middleware;
mod serve;
mod trace;
mod validate;
mod wire;

/// The HTTP client transport's configuration and types (`mcp-transport-http`'s `client`
/// module): [`http::HttpClientConfig`] for [`ClientBuilder::connect_http_with`],
/// [`http::AuthProvider`], [`http::StreamableHttpTransport`], [`http::HttpSseTransport`].
#[cfg(feature = "http")]
pub use mcp_transport_http::client as http;

pub use builder::ClientBuilder;
pub use calls::{apps, skills, tasks};
pub use client::Client;
pub use error::{ClientError, Violation};
pub use listen::{Subscription, SubscriptionEnd};
pub use mcp_jsonrpc::CallOptions;
pub use middleware::ClientMiddleware;
pub use serve::handlers::{ElicitationHandler, RootsHandler, SamplingHandler, apply_elicitation_defaults};
pub use serve::input::input_key;
pub use serve::input_tasks;
pub use wire::event::ServerEvent;
pub use wire::tool_headers::{InvalidToolHeaders, ToolHeaders};
