//! The example of docs/client.md's "Client middleware" section, run as a test; `docs_match`
//! checks that the docs show this file's code as it is, from its first `use` on.

use std::time::Duration;

use mcp_client::ClientBuilder;
use mcp_client::middleware::{
    BoxFuture, ClientMiddleware, ClientRequest, ClientResponse, Logging, Metrics, Next, Retry,
};

/// Gives each `tools/call` a timeout, unless the caller set one.
struct ToolTimeout(Duration);

impl ClientMiddleware for ToolTimeout {
    fn call<'a>(&'a self, mut request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
        if request.method() == "tools/call" {
            request.options.timeout.get_or_insert(self.0);
        }
        next.run(request)
    }
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("my-app", "1.0")
        .layer(Logging::new())
        .layer(Metrics::new())
        .layer(Retry::new().max_attempts(4).idempotent_tool("search"))
        .layer(ToolTimeout(Duration::from_secs(30)))
}

/// docs/client.md shows this file from its first `use` to here.
#[test]
fn docs_match() {
    let this = include_str!("docs_middleware.rs");
    let code = &this[this.find("\nuse ").unwrap() + 1..this.find("\n/// docs/client.md shows").unwrap() + 1];
    let docs = include_str!("../../../docs/client.md");
    assert!(
        docs.contains(&format!("```rust\n{code}```\n")),
        "docs/client.md's \"Client middleware\" example is not:\n{code}"
    );
}

/// The example's client calls a server through its layers.
#[tokio::test]
async fn the_example_client_calls_through_its_layers() {
    use mcp_server::{Server, ToolDef, ToolError};
    use mcp_types::{CallToolResult, ContentBlock};
    let search = ToolDef::new("search", serde_json::json!({"type": "object"}), |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("hit")]))
    })
    .unwrap();
    let server = Server::builder("s", "1").tool(search).build().unwrap();
    let (a, b) = mcp_jsonrpc::transport::memory(16);
    server.connect(a);
    let client = builder().connect(b).await.unwrap();
    let result = client.call_tool("search", serde_json::json!({})).await.unwrap();
    assert_eq!(result.content, vec![ContentBlock::text("hit")]);
}
