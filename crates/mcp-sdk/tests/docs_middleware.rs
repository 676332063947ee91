//! The example of docs/server.md's "Middleware" section, run as a test; `docs_match` checks
//! that the docs show this file's code as it is, from its first `use` on.
#![cfg(all(feature = "testing", feature = "macros"))]

use std::time::Duration;

use mcp_sdk::jsonrpc::Reply;
use mcp_sdk::server::Server;
use mcp_sdk::server::middleware::limit::{ToolLimit, ToolLimits};
use mcp_sdk::server::middleware::log::RequestLog;
use mcp_sdk::server::middleware::metrics::ToolMetrics;
use mcp_sdk::server::middleware::{BoxFuture, McpRequest, Middleware, Next};
use mcp_sdk::types::ErrorObject;
use mcp_sdk::{testing, tool};
use serde_json::json;

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Refuses calls whose arguments hold a negative number.
struct NoNegatives;

impl Middleware for NoNegatives {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        if let Some(Ok(call)) = req.tool_call()
            && call.arguments.iter().flatten().any(|(_, v)| v.as_i64().is_some_and(|n| n < 0))
        {
            return Box::pin(async { Err(ErrorObject::invalid_params("no negative numbers")) });
        }
        next.run(req)
    }
}

fn server() -> Server {
    let limit = ToolLimit { max_concurrent: Some(8), timeout: Some(Duration::from_secs(30)) };
    Server::builder("calc", "1.0")
        .tool(add::tool())
        // Outermost first: every request is logged and measured, refused ones too.
        .middleware(RequestLog::new())
        .middleware(ToolMetrics::new())
        .middleware(NoNegatives)
        .middleware(ToolLimits::new().default_limit(limit))
        .build()
        .unwrap()
}

#[tokio::test]
async fn negatives_are_refused() {
    let client = testing::connect(&server()).await.unwrap();
    let result = client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(result.structured_content.unwrap()["result"], 5);
    assert!(client.call_tool("add", json!({"a": -2, "b": 3})).await.is_err());
}

/// docs/server.md shows this file from its first `use` to the end.
#[test]
fn docs_match() {
    let this = include_str!("docs_middleware.rs");
    let code = &this[this.find("\nuse ").unwrap() + 1..this.find("\n/// docs/server.md shows").unwrap() + 1];
    let docs = include_str!("../../../docs/server.md");
    assert!(docs.contains(&format!("```rust\n{code}```\n")), "docs/server.md's \"Middleware\" example is not:\n{code}");
}
