//! The state a fleet of MCP server instances shares, on Redis: any instance serves any client.
//!
//! Placeholder: filled in by issue 20 (see docs/deploy.md).
