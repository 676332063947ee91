//! `/metrics` over a real socket (issue 31): the endpoint serves the Prometheus text format,
//! and what a client does moves its counters: requests and errors by method and code,
//! durations, live sessions; an unknown method is counted as `other`, so clients cannot grow
//! the label set; every series names the instance. A connection over another transport (an
//! in-memory one, served as stdio is) is counted the same.
#![cfg(feature = "http")]

use std::sync::Arc;

use mcp_jsonrpc::transport::memory;
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig, metrics};
use mcp_server::{Server, ToolDef};
use mcp_test_support::prometheus::Scrape;
use mcp_test_support::{Session, Wire};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tokio::net::TcpListener;

const ACCEPT_BOTH: &str = "application/json, text/event-stream";

struct Endpoint {
    base: String,
    http: reqwest::Client,
}

impl Endpoint {
    async fn scrape(&self) -> Scrape {
        let response = self.http.get(format!("{}/metrics", self.base)).send().await.unwrap();
        assert_eq!(response.status(), 200, "GET /metrics");
        let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
        Scrape::parse(&response.text().await.unwrap())
    }

    /// POSTs `body` (in `session` if given): the answer's status, session id and JSON body.
    async fn post(&self, session: Option<&str>, body: Value) -> (u16, Option<String>, Value) {
        let mut post = self
            .http
            .post(format!("{}/mcp", self.base))
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(session) = session {
            post = post.header("mcp-session-id", session);
        }
        let response = post.body(body.to_string()).send().await.unwrap();
        let status = response.status().as_u16();
        let id = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
        let text = response.text().await.unwrap();
        let json = if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap() };
        (status, id, json)
    }

    async fn request(&self, session: &str, id: u64, method: &str, params: Value) -> Value {
        let (status, _, body) =
            self.post(Some(session), json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        assert_eq!(status, 200, "{method}: {body}");
        body
    }
}

#[tokio::test]
async fn metrics_move_with_the_requests_served() {
    let handle = metrics::install_prometheus(Some("test-a")).unwrap();
    let echo = ToolDef::new("echo", json!({"type": "object"}), |args, _| async move {
        let text = args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
    .unwrap();
    let server = Server::builder("metrics", "1.0.0").tools([echo]).build().unwrap();
    let memory_server = server.clone();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let config = HttpServerConfig::default().json_response(true).metrics(handle);
    tokio::spawn(server::serve_listener(Arc::new(server), config, listener));
    let endpoint = Endpoint { base, http: reqwest::Client::new() };

    let before = endpoint.scrape().await;
    assert_eq!(before.sum("mcp_sessions", &[]), 0.0);

    let (status, session, _) = endpoint
        .post(
            None,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}),
        )
        .await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(endpoint.post(Some(&session), initialized).await.0, 202);
    for id in 1..=3 {
        let answer = endpoint.request(&session, id, "tools/call", json!({"name": "echo", "arguments": {}})).await;
        assert!(answer.get("result").is_some(), "{answer}");
    }
    let unknown_tool = endpoint.request(&session, 4, "tools/call", json!({"name": "nope", "arguments": {}})).await;
    let unknown_tool_code = unknown_tool["error"]["code"].as_i64().expect("an error");
    // Methods no server serves: counted as `other`, never by the name a client chose.
    for (id, method) in [(5, "acme/nope"), (6, "acme/other"), (7, "sampling/createMessage")] {
        let answer = endpoint.request(&session, id, method, json!({})).await;
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
    }

    let during = endpoint.scrape().await;
    assert_eq!(during.sum("mcp_sessions", &[]), 1.0, "one live session");
    let moved = |name: &str, labels: &[(&str, &str)]| during.sum(name, labels) - before.sum(name, labels);
    assert_eq!(moved("mcp_requests_total", &[("method", "initialize")]), 1.0);
    assert_eq!(moved("mcp_requests_total", &[("method", "tools/call")]), 4.0);
    assert_eq!(moved("mcp_requests_total", &[("method", "other")]), 3.0);
    let code = unknown_tool_code.to_string();
    assert_eq!(moved("mcp_request_errors_total", &[("method", "tools/call"), ("code", &code)]), 1.0);
    assert_eq!(moved("mcp_request_errors_total", &[("method", "other"), ("code", "-32601")]), 3.0);
    assert_eq!(moved("mcp_request_duration_seconds_count", &[("method", "tools/call")]), 4.0);
    assert_eq!(moved("mcp_request_duration_seconds_bucket", &[("method", "tools/call"), ("le", "+Inf")]), 4.0);
    assert!(during.sum("mcp_request_duration_seconds_sum", &[("method", "tools/call")]) > 0.0);
    let methods = during.label_values("mcp_request", "method");
    assert_eq!(methods, ["initialize", "other", "tools/call"], "a bounded label set");
    // Every series names the instance.
    assert!(during.samples.iter().all(|s| s.labels.get("mcp_instance").is_some_and(|i| i == "test-a")));
    // The help text of a metric the SDK records.
    let text = endpoint.http.get(format!("{}/metrics", endpoint.base)).send().await.unwrap().text().await.unwrap();
    assert!(text.contains("# TYPE mcp_request_duration_seconds histogram"), "{text}");

    // The session ends: no longer live.
    let deleted = endpoint.http.delete(format!("{}/mcp", endpoint.base)).header("mcp-session-id", &session);
    assert_eq!(deleted.send().await.unwrap().status(), 200);
    let after = endpoint.scrape().await;
    assert_eq!(after.sum("mcp_sessions", &[]), 0.0, "the ended session is not live");

    // Another transport: a connection served as stdio's is (`Server::serve_stdio` is
    // `serve` of the stdio transport).
    let (a, b) = memory(64);
    let _peer = memory_server.connect(a);
    let mut session = Session::new(Wire::new(b), "2025-11-25");
    session
        .result(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    session.result("tools/call", json!({"name": "echo", "arguments": {}})).await;
    session.error("acme/nope", json!({})).await;
    let memory = endpoint.scrape().await;
    let moved = |name: &str, labels: &[(&str, &str)]| memory.sum(name, labels) - after.sum(name, labels);
    assert_eq!(memory.sum("mcp_sessions", &[]), 1.0, "the connection's session is live");
    assert_eq!(moved("mcp_requests_total", &[("method", "tools/call")]), 1.0);
    assert_eq!(moved("mcp_request_errors_total", &[("method", "other"), ("code", "-32601")]), 1.0);
    assert_eq!(moved("mcp_request_duration_seconds_count", &[("method", "initialize")]), 1.0);
}
