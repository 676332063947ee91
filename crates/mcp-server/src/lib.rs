//! The MCP server runtime: lifecycle, tools, prompts, resources, completions, logging.
//!
//! Handlers are registered on a builder and served over any transport.
//!
//! This crate is a placeholder in the layered workspace (see `ARCHITECTURE.md`); its API
//! arrives with the issue that builds it.
//!
//! ```
//! use mcp_server as _;
//! ```
