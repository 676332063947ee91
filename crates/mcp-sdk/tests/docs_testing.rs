//! The example of docs/server.md's "Testing" section, run as a test; `docs_match` checks
//! that the docs show this file's code as it is, from its first `use` on.
#![cfg(all(feature = "testing", feature = "macros"))]

use mcp_sdk::server::{Context, Server, ToolError};
use mcp_sdk::types::{
    CreateMessageRequestParams, CreateMessageResult, Role, SamplingContent, SamplingMessage, TextContent,
};
use mcp_sdk::{testing, tool};
use serde_json::json;

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Asks the client's model.
#[tool]
async fn ask(question: String, ctx: Context) -> Result<String, ToolError> {
    let message = SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new(question)));
    match ctx.create_message(CreateMessageRequestParams::new(50, vec![message])).await?.content {
        SamplingContent::Text(answer) => Ok(answer.text),
        _ => Err(ToolError::new("the model did not answer with text")),
    }
}

fn server() -> Server {
    Server::builder("calc", "1.0").tool(add::tool()).tool(ask::tool()).build().unwrap()
}

#[tokio::test]
async fn add_adds() {
    let client = testing::connect(&server()).await.unwrap();
    let result = client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(result.structured_content.unwrap()["result"], 5);
}

#[tokio::test]
async fn ask_passes_the_models_answer_on() {
    let client = testing::client()
        .on_sampling(|_request| {
            Ok(CreateMessageResult::new(Role::Assistant, SamplingContent::Text(TextContent::new("4")), "stub"))
        })
        .connect(&server())
        .await
        .unwrap();
    let result = client.call_tool("ask", json!({"question": "2+2?"})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("4"));
}

/// docs/server.md shows this file from its first `use` to the end.
#[test]
fn docs_match() {
    let this = include_str!("docs_testing.rs");
    let code = &this[this.find("\nuse ").unwrap() + 1..this.find("\n/// docs/server.md shows").unwrap() + 1];
    let docs = include_str!("../../../docs/server.md");
    assert!(docs.contains(&format!("```rust\n{code}```\n")), "docs/server.md's \"Testing\" example is not:\n{code}");
}
