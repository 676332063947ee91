//! The metrics layer (issue 32) over a real socket, alone in its binary (the recorder is the
//! process's): per-tool call counts by outcome and latency histograms, served by `/metrics`;
//! the `tool` label bounded by the server's tools (`other` for any name a client sends), in a
//! session and in 2026-07-28, and over an in-memory connection as well.
#![cfg(feature = "http")]

use std::sync::Arc;

use mcp_jsonrpc::transport::memory;
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig, metrics};
use mcp_server::middleware::metrics::ToolMetrics;
use mcp_server::{Server, ToolDef, ToolError};
use mcp_test_support::prometheus::Scrape;
use mcp_test_support::{Session, Wire};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tokio::net::TcpListener;

#[tokio::test]
async fn tool_metrics_count_calls_by_tool_and_outcome() {
    let handle = metrics::install_prometheus(Some("mw")).unwrap();
    let echo = ToolDef::new("echo", json!({"type": "object"}), |_, _| async {
        Ok(CallToolResult::success(vec![ContentBlock::text("hi")]))
    })
    .unwrap();
    let fail = ToolDef::new("fail", json!({"type": "object"}), |_, _| async {
        Err::<CallToolResult, _>(ToolError::Tool("no".into()))
    })
    .unwrap();
    let server = Server::builder("mw", "1.0").tools([echo, fail]).middleware(ToolMetrics::new()).build().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let config = HttpServerConfig::default().json_response(true).metrics(handle);
    tokio::spawn(server::serve_listener(Arc::new(server.clone()), config, listener));
    let http = reqwest::Client::new();

    // 2026-07-28 requests over HTTP.
    let post = |name: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }}});
        http.post(format!("{base}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", name)
            .body(body.to_string())
            .send()
    };
    for name in ["echo", "echo", "fail", "a-name-the-client-chose"] {
        let answer: Value = post(name).await.unwrap().json().await.unwrap();
        assert_eq!(answer["id"], 1, "{answer}");
    }
    // A session over an in-memory connection.
    let (a, b) = memory(64);
    let _peer = server.connect(a);
    let mut session = Session::new(Wire::new(b), "2025-11-25");
    session
        .result(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    session.result("tools/call", json!({"name": "echo", "arguments": {}})).await;
    session.result("tools/list", json!({})).await;

    let text = http.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
    let scrape = Scrape::parse(&text);
    let calls = |tool: &str, outcome: &str| scrape.sum("mcp_tool_calls_total", &[("tool", tool), ("outcome", outcome)]);
    assert_eq!(calls("echo", "ok"), 3.0, "{text}");
    assert_eq!(calls("fail", "tool_error"), 1.0, "{text}");
    assert_eq!(calls("other", "error"), 1.0, "{text}");
    assert_eq!(scrape.sum("mcp_tool_call_duration_seconds_count", &[("tool", "echo")]), 3.0, "{text}");
    assert_eq!(scrape.label_values("mcp_tool_call", "tool"), ["echo", "fail", "other"], "a bounded label set");
    assert!(text.contains("# TYPE mcp_tool_call_duration_seconds histogram"), "{text}");
}
