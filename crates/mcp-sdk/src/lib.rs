//! The Model Context Protocol SDK for Rust, in one import path.
//!
//! This facade re-exports the layer crates, which stay usable on their own:
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | [`types`] | `mcp-types` | wire types for every protocol revision |
//! | [`jsonrpc`] | `mcp-jsonrpc` | JSON-RPC envelope and peer engine |
//! | [`transport::stdio`] | `mcp-transport-stdio` | stdio transport |
//! | [`transport::http`] | `mcp-transport-http` | Streamable HTTP transport |
//! | [`server`] | `mcp-server` | server runtime |
//! | [`client`] | `mcp-client` | client runtime |
//! | [`macros`] | `mcp-macros` | `#[tool]`, `#[prompt]`, `#[resource]`, `#[handlers]` |
//! | [`gateway`] | `mcp-gateway` | servers composed into one under prefixes, local and remote |
//! | [`testing`] | (here) | a client connected to a server in memory, for tests |
//!
//! ## Features
//!
//! Additive; the default, `full`, is everything. Pick fewer to compile less: a stdio-only
//! server with macros (`default-features = false, features = ["server", "macros", "stdio"]`)
//! compiles no HTTP stack (hyper, axum, reqwest, rustls) and no `jsonschema`.
//!
//! | feature | what it adds |
//! |---|---|
//! | `server` | [`server`]: the server runtime |
//! | `client` | [`client`]: the client runtime (it can always spawn a server as a child process) |
//! | `macros` | `#[tool]`, `#[prompt]`, `#[resource]`, `#[handlers]` (implies `server`) |
//! | `stdio` | [`transport::stdio`], `Server::serve_stdio` |
//! | `http-server` | serving over Streamable HTTP and HTTP+SSE (`Server::serve_http`; implies `server`) |
//! | `http-client` | connecting over Streamable HTTP and HTTP+SSE, with HTTPS (`ClientBuilder::connect_http`; implies `client`) |
//! | `oauth` | OAuth 2.1 for the HTTP client: `mcp_sdk::client::http::oauth`, `HttpClientConfig::oauth` |
//! | `auth` | the HTTP server as an OAuth 2.1 resource server: `HttpServerConfig::auth`, [`transport::http::server::auth`], `Context::principal`, `ToolDef::scopes` (implies `http-server`; no reqwest) |
//! | `testing` | [`testing`]: a [`client::Client`] connected to a [`server::Server`] in memory in one line, for unit tests (implies `server` and `client`) |
//! | `gateway` | [`gateway`]: servers mounted into one under prefixes, local and remote (implies `server` and `client`; with `http-client`, remote servers over Streamable HTTP) |
//! | `jsonschema` | the server checks tool arguments against any input schema (without it, schemas outside a built-in subset are not checked); the client gets `validate_arguments` and `validate_structured_content` |
//! | `full` | all of the above (default) |
//! | `metrics` | not in `full`: `GET /metrics` in the Prometheus text format beside the HTTP endpoint (`HttpServerConfig::metrics`, `transport::http::server::metrics`; implies `http-server`; see `docs/deploy.md`, "Metrics") |
//! | `opentelemetry` | not in `full`: the request spans of the server and client wired to OpenTelemetry through `tracing-opentelemetry`, the W3C trace context carried in `_meta` (see `docs/tracing.md`) |
//!
//! The macros are also at the root: `#[mcp_sdk::tool]`, `#[mcp_sdk::prompt]`,
//! `#[mcp_sdk::resource]`, `#[mcp_sdk::handlers]` (see [`macros`] and `docs/server.md`).
//!
//! ```
//! /// Adds two numbers.
//! #[mcp_sdk::tool]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! let server = mcp_sdk::server::Server::builder("calc", "1.0").tool(add::tool()).build().unwrap();
//! assert_eq!(server.tools()[0].name, "add");
//! ```
//!
//! ```
//! use mcp_sdk::types::{CallToolResult, ContentBlock, ProtocolVersion};
//!
//! let result = CallToolResult::success(vec![ContentBlock::text("hello")]);
//! let json = mcp_sdk::types::to_value_for(&result, ProtocolVersion::V2025_06_18).unwrap();
//! assert_eq!(json["content"][0]["text"], "hello");
//! ```

#[cfg(feature = "client")]
pub use mcp_client as client;
#[cfg(feature = "gateway")]
pub use mcp_gateway as gateway;
pub use mcp_jsonrpc as jsonrpc;
#[cfg(feature = "macros")]
pub use mcp_macros as macros;
#[cfg(feature = "server")]
pub use mcp_server as server;
pub use mcp_types as types;

#[cfg(feature = "macros")]
pub use mcp_macros::{handlers, prompt, resource, tool};

#[cfg(feature = "macros")]
#[doc(hidden)]
pub mod __private;

#[cfg(feature = "testing")]
pub mod testing;

/// Transports.
pub mod transport {
    #[cfg(any(feature = "http-server", feature = "http-client"))]
    pub use mcp_transport_http as http;
    #[cfg(any(feature = "stdio", feature = "client"))]
    pub use mcp_transport_stdio as stdio;
}
