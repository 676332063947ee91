//! Runnable examples of the MCP Rust SDK: `cargo run --release --example <name>`.
