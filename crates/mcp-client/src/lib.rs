//! The MCP client runtime: connect to any MCP server and call it with typed methods.
//!
//! Speaks every supported protocol revision over any transport.
//!
//! This crate is a placeholder in the layered workspace (see `ARCHITECTURE.md`); its API
//! arrives with the issue that builds it.
//!
//! ```
//! use mcp_client as _;
//! ```
