//! The Streamable HTTP transport (and the HTTP+SSE transport of 2024-11-05), server and client.
//!
//! - [`server`] (feature `server`): an axum router serving one MCP endpoint, with sessions,
//!   SSE streams, resumability and DNS-rebinding protection, plus the HTTP+SSE `/sse` +
//!   `/messages` endpoints of 2024-11-05.
//! - [`client`] (feature `client`): a [`Transport`](mcp_jsonrpc::Transport) that speaks
//!   Streamable HTTP over reqwest, falling back to HTTP+SSE.
//!
//! ```
//! use mcp_transport_http::headers;
//! assert_eq!(headers::MCP_SESSION_ID, "mcp-session-id");
//! ```

pub mod headers;

#[cfg(feature = "client")]
pub mod client;
#[cfg(any(feature = "auth", feature = "oauth"))]
mod protected_resource;
#[cfg(feature = "server")]
pub mod server;
