//! The MCP client runtime: connect to any MCP server and call it with typed methods.
//!
//! - [`ClientBuilder::connect`] performs the `initialize` handshake over any transport
//!   (offering the newest session revision and accepting an older one the server answers
//!   with); [`ClientBuilder::spawn`] runs a server as a child process first.
//! - [`ClientBuilder::connect_http`] connects to a server's Streamable HTTP endpoint (or a
//!   legacy HTTP+SSE one); a session the server ends is renewed by itself.
//! - Typed calls: [`Client::list_tools`], [`Client::call_tool`], [`Client::get_prompt`],
//!   [`Client::read_resource`], ... and `list_all_*` helpers that follow `nextCursor` to the end.
//!   A call for a capability the server did not declare fails at once, without a round trip.
//! - Handlers for the server's requests (sampling, elicitation, roots) declare the matching
//!   client capabilities; notifications (log messages, list changes, resource updates) reach a
//!   callback and a stream.
//! - [`Client::close`] ends the connection gracefully (and stops a child server the way the
//!   specification asks).
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

mod client;
mod handlers;

/// The HTTP client transport's configuration and types (`mcp-transport-http`'s `client`
/// module): [`http::HttpClientConfig`] for [`ClientBuilder::connect_http_with`],
/// [`http::AuthProvider`], [`http::StreamableHttpTransport`], [`http::LegacySseTransport`].
#[cfg(feature = "http")]
pub use mcp_transport_http::client as http;

pub use client::{CallOptions, Client, ClientBuilder, ClientError, ServerEvent};
pub use handlers::{ElicitationHandler, RootsHandler, SamplingHandler, apply_elicitation_defaults};
