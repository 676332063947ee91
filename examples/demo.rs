//! Demo: one tool definition and one tool result, written as each protocol revision sees them.
//!
//! Run it with `cargo run --release --example demo`. Later it grows into a client talking to
//! the example server.

use mcp_sdk::types::{CallToolResult, ProtocolVersion, Tool, to_string_for};

fn main() -> anyhow::Result<()> {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"]
    });
    let mut tool = Tool::new("add", schema.as_object().cloned().unwrap_or_default());
    tool.title = Some("Add two numbers".into());
    tool.description = Some("Adds a and b".into());
    let result = CallToolResult::structured(serde_json::json!({"sum": 3}));

    for version in ProtocolVersion::ALL {
        println!("== {version}");
        println!("tool:   {}", to_string_for(&tool, version)?);
        println!("result: {}", to_string_for(&result, version)?);
    }
    Ok(())
}
