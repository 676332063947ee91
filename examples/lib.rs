//! Runnable examples of the MCP Rust SDK (`cargo run --release --example <name>`), and the
//! pieces they share.

pub mod echo {
    //! The `echo` server: one tool `echo` ({"text": string} in, the same text out) and a
    //! `sleep` tool ({"ms": integer}) for concurrency tests.

    use std::time::Duration;

    use mcp_sdk::jsonrpc::PeerConfig;
    use mcp_sdk::server::{DefinitionError, Server, ToolDef, ToolError};
    use mcp_sdk::types::{CallToolResult, ContentBlock};

    /// The server, with the given connection limits.
    pub fn server(config: PeerConfig) -> Result<Server, DefinitionError> {
        let echo = ToolDef::new(
            "echo",
            serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            |args, _ctx| async move {
                let text = args.get("text").and_then(|t| t.as_str()).unwrap_or_default();
                Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
            },
        )?
        .description("Returns the text it is given");
        let sleep = ToolDef::new(
            "sleep",
            serde_json::json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}, "required": ["ms"]}),
            |args, _ctx| async move {
                let ms = args.get("ms").and_then(|m| m.as_u64()).unwrap_or(0).min(60_000);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!("slept {ms} ms"))]))
            },
        )?
        .description("Answers after `ms` milliseconds");
        Server::builder("echo", env!("CARGO_PKG_VERSION")).peer_config(config).tool(echo).tool(sleep).build()
    }
}
