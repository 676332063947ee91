//! The stdio transport: newline-delimited JSON over a child's or our own stdin/stdout.
//!
//! Server side reads stdin and writes stdout; client side spawns the server as a child process.
//!
//! This crate is a placeholder in the layered workspace (see `ARCHITECTURE.md`); its API
//! arrives with the issue that builds it.
//!
//! ```
//! use mcp_transport_stdio as _;
//! ```
