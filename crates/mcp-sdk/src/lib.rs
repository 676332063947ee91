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
//! | [`macros`] | `mcp-macros` | `#[tool]`, `#[prompt]`, `#[resource]` |
//!
//! ```
//! use mcp_sdk::types::{CallToolResult, ContentBlock, ProtocolVersion};
//!
//! let result = CallToolResult::success(vec![ContentBlock::text("hello")]);
//! let json = mcp_sdk::types::to_value_for(&result, ProtocolVersion::V2025_06_18).unwrap();
//! assert_eq!(json["content"][0]["text"], "hello");
//! ```

pub use mcp_client as client;
pub use mcp_jsonrpc as jsonrpc;
pub use mcp_macros as macros;
pub use mcp_server as server;
pub use mcp_types as types;

/// Transports.
pub mod transport {
    pub use mcp_transport_http as http;
    pub use mcp_transport_stdio as stdio;
}
