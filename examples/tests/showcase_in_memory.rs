//! The showcase server's tools, prompt and resources unit-tested through `mcp_sdk::testing`:
//! a client connected in memory, no process, the client's side answered by closures.

use std::collections::BTreeMap;

use mcp_examples::showcase;
use mcp_sdk::testing;
use mcp_sdk::types::{
    AnyResourceContents, CreateMessageResult, ElicitAction, ElicitResult, ElicitResultContentValue, ProtocolVersion,
    Role, Root, SamplingContent, TextContent,
};
use serde_json::json;

fn text(result: &mcp_sdk::types::CallToolResult) -> &str {
    assert!(!result.is_error(), "{result:?}");
    result.content[0].as_text().unwrap_or_default()
}

#[tokio::test]
async fn add_adds() {
    let server = showcase::server().unwrap();
    let client = testing::connect(&server).await.unwrap();
    let result = client.call_tool("add", json!({"a": 1.5, "b": 2})).await.unwrap();
    assert_eq!(result.structured_content.unwrap()["result"], 3.5);
}

#[tokio::test]
async fn ask_model_reports_what_the_model_said() {
    let server = showcase::server().unwrap();
    let client = testing::client()
        .on_sampling(|_| {
            Ok(CreateMessageResult::new(Role::Assistant, SamplingContent::Text(TextContent::new("4")), "stub"))
        })
        .connect(&server)
        .await
        .unwrap();
    let result = client.call_tool("ask_model", json!({"question": "2+2?"})).await.unwrap();
    assert_eq!(text(&result), "stub says: 4");
}

#[tokio::test]
async fn order_asks_the_user_in_each_revision_with_elicitation() {
    let server = showcase::server().unwrap();
    for revision in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = testing::client()
            .revision(revision)
            .on_elicitation(|_| {
                let mut answer = ElicitResult::new(ElicitAction::Accept);
                answer.content = Some(BTreeMap::from([("quantity".into(), ElicitResultContentValue::Integer(2))]));
                Ok(answer)
            })
            .connect(&server)
            .await
            .unwrap();
        let result = client.call_tool("order", json!({"item": "tea"})).await.unwrap();
        assert_eq!(text(&result), r#"ordered tea: {"quantity":2}"#, "{revision}");
    }
}

#[tokio::test]
async fn roots_lists_the_clients_roots() {
    let server = showcase::server().unwrap();
    let client = testing::client().roots(|| vec![Root::new("file:///work")]).connect(&server).await.unwrap();
    assert_eq!(text(&client.call_tool("roots", json!({})).await.unwrap()), "file:///work");
}

#[tokio::test]
async fn the_review_prompt_and_the_notes() {
    let server = showcase::server().unwrap();
    let client = testing::connect(&server).await.unwrap();
    let args = BTreeMap::from([("code".into(), "fn main() {}".into()), ("language".into(), "rust".into())]);
    let prompt = client.get_prompt("review", args).await.unwrap();
    assert_eq!(prompt.messages[0].content.as_text(), Some("Please review this rust code:\n\nfn main() {}"));
    let read = client.read_resource("notes://ideas").await.unwrap();
    let Some(AnyResourceContents::TextResourceContents(note)) = read.contents.first() else { panic!("{read:?}") };
    assert_eq!(note.text, "a faster MCP SDK");
}
