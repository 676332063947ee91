//! Every kind of return value.

use mcp_sdk::server::{Completion, CompletionRequest, ToolError};
use mcp_sdk::types::{AnyResourceContents, CallToolResult, ContentBlock, GetPromptResult, PromptMessage, TextResourceContents};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

#[mcp_sdk::tool]
fn structured() -> Point {
    Point { x: 1, y: 2 }
}

#[mcp_sdk::tool]
fn wrapped() -> Vec<Point> {
    Vec::new()
}

#[mcp_sdk::tool]
fn listed() -> mcp_sdk::server::Json<Vec<Point>> {
    mcp_sdk::server::Json(Vec::new())
}

#[mcp_sdk::tool]
fn text() -> &'static str {
    "text"
}

#[mcp_sdk::tool]
fn block() -> ContentBlock {
    ContentBlock::text("block")
}

#[mcp_sdk::tool]
fn whole() -> CallToolResult {
    CallToolResult::success(vec![])
}

#[mcp_sdk::tool]
fn unit() {}

#[mcp_sdk::tool]
fn fallible() -> Result<Point, std::num::ParseIntError> {
    Ok(Point { x: "1".parse()?, y: 0 })
}

#[mcp_sdk::tool]
fn tool_error() -> Result<String, ToolError> {
    Ok(String::new())
}

#[mcp_sdk::prompt]
fn messages() -> Vec<PromptMessage> {
    Vec::new()
}

#[mcp_sdk::prompt]
fn whole_prompt() -> Result<GetPromptResult, String> {
    Ok(GetPromptResult::new(vec![]))
}

fn complete(_: CompletionRequest) -> Result<Completion, String> {
    Ok(Completion::default())
}

#[mcp_sdk::resource("x://{a}", complete(a = complete))]
fn contents(a: String) -> Vec<AnyResourceContents> {
    vec![AnyResourceContents::TextResourceContents(TextResourceContents::new("x://", a))]
}

#[mcp_sdk::resource("x://fixed")]
async fn text_contents() -> TextResourceContents {
    TextResourceContents::new("x://fixed", "")
}

fn main() {
    assert!(structured::tool().definition().output_schema.is_some());
    assert!(wrapped::tool().definition().output_schema.is_some());
    assert!(text::tool().definition().output_schema.is_none());
    assert_eq!(listed::tool().definition().output_schema.as_ref().unwrap()["type"], "array");
    let _ = (block::tool(), whole::tool(), unit::tool(), fallible::tool(), tool_error::tool());
    let _ = (messages::prompt(), whole_prompt::prompt(), contents::template(), text_contents::resource());
}
