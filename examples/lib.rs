//! Runnable examples of the MCP Rust SDK (`cargo run --release --example <name>`), and the
//! pieces they share.

pub mod echo {
    //! The `echo` server: one tool `echo` ({"text": string} in, the same text out) and a
    //! `sleep` tool ({"ms": integer}) for concurrency tests. Until the server runtime lands it
    //! is written on the JSON-RPC engine directly.

    use std::sync::Arc;
    use std::time::Duration;

    use mcp_sdk::jsonrpc::{ErrorObject, Router};
    use mcp_sdk::types::{
        CallToolRequest, CallToolResult, ContentBlock, Implementation, InitializeRequest,
        InitializeResult, ListToolsRequest, ListToolsResult, ProtocolVersion, ServerCapabilities,
        ServerCapabilitiesTools, Tool,
    };

    /// The tools.
    pub fn tools() -> Vec<Tool> {
        let schema = |props: serde_json::Value, required: &str| {
            serde_json::json!({"type": "object", "properties": props, "required": [required]})
                .as_object()
                .cloned()
                .unwrap_or_default()
        };
        let mut echo = Tool::new(
            "echo",
            schema(serde_json::json!({"text": {"type": "string"}}), "text"),
        );
        echo.description = Some("Returns the text it is given".into());
        let mut sleep = Tool::new(
            "sleep",
            schema(serde_json::json!({"ms": {"type": "integer"}}), "ms"),
        );
        sleep.description = Some("Answers after `ms` milliseconds".into());
        vec![echo, sleep]
    }

    /// The server: handshake, tools/list, tools/call.
    pub fn router() -> Router {
        let tools = Arc::new(tools());
        Router::new()
            .request::<InitializeRequest, _, _>(|params, ctx| async move {
                let version = ProtocolVersion::from_wire(&params.protocol_version)
                    .filter(|v| !v.is_stateless())
                    .unwrap_or(ProtocolVersion::LATEST_SESSION);
                ctx.peer().set_protocol_version(version);
                let capabilities = ServerCapabilities {
                    tools: Some(ServerCapabilitiesTools::default()),
                    ..Default::default()
                };
                Ok(InitializeResult::new(
                    capabilities,
                    version.as_str(),
                    Implementation::new("echo", env!("CARGO_PKG_VERSION")),
                ))
            })
            .request::<ListToolsRequest, _, _>(move |_params, _ctx| {
                let tools = tools.clone();
                async move { Ok(ListToolsResult::new(tools.as_ref().clone())) }
            })
            .request::<CallToolRequest, _, _>(|params, _ctx| async move {
                let args = params.arguments.unwrap_or_default();
                match params.name.as_str() {
                    "echo" => match args.get("text").and_then(|t| t.as_str()) {
                        Some(text) => Ok(CallToolResult::success(vec![ContentBlock::text(text)])),
                        None => Ok(CallToolResult::error("`text` must be a string")),
                    },
                    "sleep" => {
                        let ms = args
                            .get("ms")
                            .and_then(|m| m.as_u64())
                            .unwrap_or(0)
                            .min(60_000);
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                            "slept {ms} ms"
                        ))]))
                    }
                    other => Err(ErrorObject::invalid_params(format!(
                        "unknown tool `{other}`"
                    ))),
                }
            })
    }
}
