//! `stdio_child`: a small server over stdio, which the gateway's tests mount as a child
//! process (`Source::stdio`): its tool `add` adds two numbers, `pid` answers its process id.
//!
//! `cargo run -p mcp-gateway --example stdio_child`

use mcp_server::{Server, ToolDef, ToolError};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}});
    let add = ToolDef::new("add", schema, |args, _ctx| async move {
        let number = |key: &str| args.get(key).and_then(serde_json::Value::as_f64).unwrap_or_default();
        let sum = number("a") + number("b");
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(sum.to_string())]))
    })
    .expect("the tool `add`");
    let pid = ToolDef::new("pid", json!({"type": "object"}), |_args, _ctx| async {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(std::process::id().to_string())]))
    })
    .expect("the tool `pid`");
    let server = Server::builder("child", "1.0").tool(add).tool(pid).build().expect("the server");
    server.serve_stdio().await;
}
