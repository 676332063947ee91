//! The Streamable HTTP transport (and legacy HTTP+SSE), server and client.
//!
//! Server side is a tower service / axum router; client side speaks it over reqwest.
//!
//! This crate is a placeholder in the layered workspace (see `ARCHITECTURE.md`); its API
//! arrives with the issue that builds it.
//!
//! ```
//! use mcp_transport_http as _;
//! ```
