//! The example of docs/server.md's "Composing servers" section, run as a test; `docs_match`
//! checks that the docs show this file's code as it is, from its first `use` on.
#![cfg(all(feature = "gateway", feature = "testing", feature = "macros"))]

use mcp_sdk::gateway::{Gateway, Source};
use mcp_sdk::server::Server;
use mcp_sdk::{testing, tool};
use serde_json::json;

/// Searches the issues.
#[tool]
fn search(query: String) -> String {
    format!("3 issues match {query:?}")
}

/// Says hello.
#[tool]
fn hello() -> &'static str {
    "hello"
}

#[tokio::test]
async fn a_gateway_serves_two_servers_under_prefixes() {
    let github = Server::builder("github", "1.0").tool(search::tool()).build().unwrap();
    let local = Server::builder("local", "1.0").tool(hello::tool()).build().unwrap();
    let gateway: Server = Gateway::builder("gateway", "1.0")
        .mount("github", Source::local(github))
        .mount("", local) // unprefixed
        .build()
        .await
        .unwrap();

    let client = testing::connect(&gateway).await.unwrap();
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["github_search", "hello"]);
    let found = client.call_tool("github_search", json!({"query": "gateway"})).await.unwrap();
    assert_eq!(found.content[0].as_text(), Some("3 issues match \"gateway\""));
}

/// docs/server.md shows this file from its first `use` to the end.
#[test]
fn docs_match() {
    let this = include_str!("docs_gateway.rs");
    let code = &this[this.find("\nuse ").unwrap() + 1..this.find("\n/// docs/server.md shows").unwrap() + 1];
    let docs = include_str!("../../../docs/server.md");
    assert!(
        docs.contains(&format!("```rust\n{code}```\n")),
        "docs/server.md's \"Composing servers\" example is not:\n{code}"
    );
}
