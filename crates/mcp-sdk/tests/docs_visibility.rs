//! The example of docs/server.md's "Visibility" section, run as a test; `docs_match` checks
//! that the docs show this file's code as it is, from its first `use` on.
#![cfg(all(feature = "testing", feature = "macros", feature = "auth"))]

use mcp_sdk::server::{Context, Item, Server, ToolError, Viewer};
use mcp_sdk::types::ProtocolVersion;
use mcp_sdk::{testing, tool};
use serde_json::json;

/// Empties the cache (administrators only).
#[tool]
fn admin_flush() -> String {
    "flushed".into()
}

/// Shows around, once per session.
#[tool]
async fn tour(ctx: Context) -> Result<String, ToolError> {
    ctx.session().hide_tool("tour").await?;
    Ok("welcome".into())
}

/// `admin_*` items only for tokens with the `admin` scope.
fn visible(item: Item<'_>, who: &Viewer<'_>) -> bool {
    !item.name().starts_with("admin_") || who.principal().is_some_and(|p| p.has_scope("admin"))
}

fn server() -> Server {
    Server::builder("shop", "1.0").tool(admin_flush::tool()).tool(tour::tool()).visibility(visible).build().unwrap()
}

#[tokio::test]
async fn hidden_tools_are_unknown() {
    // In memory, no token: `admin_flush` is hidden. A session revision, so `tour` can hide itself.
    let client = testing::client().revision(ProtocolVersion::V2025_11_25).connect(&server()).await.unwrap();
    let names = |tools: Vec<mcp_sdk::types::Tool>| tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert_eq!(names(client.list_all_tools().await.unwrap()), ["tour"]);
    assert!(client.call_tool("admin_flush", json!({})).await.is_err(), "unknown, as if absent");

    client.call_tool("tour", json!({})).await.unwrap();
    assert!(client.list_all_tools().await.unwrap().is_empty(), "hidden from this session now");
}

/// docs/server.md shows this file from its first `use` to the end.
#[test]
fn docs_match() {
    let this = include_str!("docs_visibility.rs");
    let code = &this[this.find("\nuse ").unwrap() + 1..this.find("\n/// docs/server.md shows").unwrap() + 1];
    let docs = include_str!("../../../docs/server.md");
    assert!(docs.contains(&format!("```rust\n{code}```\n")), "docs/server.md's \"Visibility\" example is not:\n{code}");
}
