//! Attribute macros that turn plain functions into MCP tools, prompts and resources.
//!
//! `#[tool]`, `#[prompt]` and `#[resource]` arrive with the server runtime; this crate is the
//! proc-macro leaf of the workspace (it depends on syn, quote and proc-macro2 only) and its
//! output names runtime paths through the `mcp-sdk` facade.
