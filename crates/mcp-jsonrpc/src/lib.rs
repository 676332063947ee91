//! JSON-RPC 2.0 envelope and the MCP peer engine.
//!
//! Owns request/response correlation, cancellation, progress and timeouts, and the `Transport` trait that every transport implements.
//!
//! This crate is a placeholder in the layered workspace (see `ARCHITECTURE.md`); its API
//! arrives with the issue that builds it.
//!
//! ```
//! use mcp_jsonrpc as _;
//! ```
