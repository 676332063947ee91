//! The cost of the client's layers (`mcp_client::middleware`) per call: a `tools/call` round
//! trip to our server over the in-memory transport, without layers, and with `Logging` and
//! `Metrics` (no subscriber, no recorder: the price of the layered path itself) and `Retry`.
//!
//! `cargo bench -p mcp-client --bench layers`

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_client::ClientBuilder;
use mcp_client::middleware::{Logging, Metrics, Retry};
use mcp_jsonrpc::transport::memory;
use mcp_server::{Server, ToolDef, ToolError};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::json;

fn server() -> Server {
    let echo = ToolDef::new("echo", json!({"type": "object"}), |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("hello world")]))
    })
    .unwrap();
    Server::builder("bench", "1.0").tool(echo).build().unwrap()
}

fn bench(c: &mut Criterion, name: &str, builder: ClientBuilder) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let client = rt.block_on(async {
        let (a, b) = memory(1024);
        server().connect(a);
        builder.session_revisions_only().connect(b).await.unwrap()
    });
    c.bench_function(name, |b| {
        b.iter(|| rt.block_on(client.call_tool("echo", json!({"text": "hello world"}))).unwrap());
    });
}

fn layers(c: &mut Criterion) {
    bench(c, "client tools/call, no layer", ClientBuilder::new("bench", "1"));
    bench(
        c,
        "client tools/call, Logging + Metrics",
        ClientBuilder::new("bench", "1").layer(Logging::new()).layer(Metrics::new()),
    );
    bench(
        c,
        "client tools/call, Logging + Metrics + Retry",
        ClientBuilder::new("bench", "1").layer(Logging::new()).layer(Metrics::new()).layer(Retry::new()),
    );
}

criterion_group!(benches, layers);
criterion_main!(benches);
