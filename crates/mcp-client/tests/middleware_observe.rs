//! The client's `Logging` and `Metrics` layers (`mcp_client::middleware`) over stdio and
//! HTTP: the events, their spans and the metrics of a list, a call, an error and a custom
//! method.
//!
//! Alone in their binary, one at a time: under `cargo test` the tests of a binary share a
//! process, and a span's interest is cached per callsite for the whole process; a test that
//! emits the client's request span without a subscriber, while another installs its own,
//! can leave that span disabled for the other (seen in a CI run: the events were recorded,
//! outside any span).

use mcp_client::ClientBuilder;
use mcp_client::ClientError;
use mcp_client::middleware::{Logging, Metrics};
use mcp_server::{Server, ToolDef, ToolError};
use mcp_test_support::spans::{Spans, assert_fields};
use mcp_types::{CallToolResult, ContentBlock, ToolAnnotations};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use serde_json::json;

/// One test at a time (see the module's docs).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `echo` and `lookup` (`idempotentHint: true`).
fn server() -> Server {
    let echo = ToolDef::new("echo", json!({"type": "object"}), |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("echo")]))
    })
    .unwrap();
    let lookup = ToolDef::new("lookup", json!({"type": "object"}), |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("found")]))
    })
    .unwrap()
    .annotations(ToolAnnotations { idempotent_hint: Some(true), ..Default::default() });
    Server::builder("layered", "1.0").tool(echo).tool(lookup).build().unwrap()
}

/// A metric as recorded: its name, labels and value.
type Metric = (String, Vec<(String, String)>, DebugValue);

/// What the metrics recorder holds: counters and histograms by name and labels.
fn recorded(snapshotter: &Snapshotter) -> Vec<Metric> {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let key = key.key();
            let labels = key.labels().map(|l| (l.key().to_owned(), l.value().to_owned())).collect();
            (key.name().to_owned(), labels, value)
        })
        .collect()
}

fn counter(all: &[Metric], name: &str, labels: &[(&str, &str)]) -> u64 {
    all.iter()
        .filter(|(n, l, _)| n == name && labels.iter().all(|(k, v)| l.iter().any(|(lk, lv)| lk == k && lv == v)))
        .map(|(_, _, v)| if let DebugValue::Counter(c) = v { *c } else { 0 })
        .sum()
}

fn histogram_len(all: &[Metric], name: &str, method: &str) -> usize {
    all.iter()
        .filter(|(n, l, _)| n == name && l.iter().any(|(k, v)| k == "method" && v == method))
        .map(|(_, _, v)| if let DebugValue::Histogram(h) = v { h.len() } else { 0 })
        .sum()
}

/// Checks what `Logging` and `Metrics` recorded of a `tools/list`, a `tools/call` and a
/// JSON-RPC error (`prompts/get` of a server without prompts), and that a custom method is
/// counted as `other`.
async fn exercise_logging_and_metrics(client: &mcp_client::Client, spans: &Spans, snapshotter: &Snapshotter) {
    client.list_tools(None).await.unwrap();
    client.call_tool("lookup", json!({})).await.unwrap();
    let error = client
        .send_request::<mcp_types::GetPromptRequest>(
            mcp_types::GetPromptRequestParams::new("none"),
            mcp_client::CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Remote(_)), "{error:?}");
    let _ = client.request_raw("acme/unknown", None).await.unwrap_err();

    let done = spans.event_fields("client request done");
    let methods: Vec<&str> = done.iter().map(|f| f["method"].as_str()).collect();
    assert_eq!(methods, ["tools/list", "tools/call"], "{done:?}");
    assert_fields(&done[1], &[("tool", "lookup"), ("outcome", "ok"), ("level", "INFO")]);
    assert!(done[1]["duration_ms"].parse::<f64>().unwrap() >= 0.0);
    let failed = spans.event_fields("client request failed");
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert_fields(&failed[0], &[("method", "prompts/get"), ("outcome", "error"), ("level", "WARN")]);
    assert_fields(&failed[1], &[("method", "acme/unknown"), ("outcome", "error")]);
    // Each event in its request's span.
    for span in spans.events("client request done") {
        assert_eq!(span.map(|(name, _)| name), Some("mcp.client.request"));
    }

    let all = recorded(snapshotter);
    let requests = "mcp_client_requests_total";
    assert_eq!(counter(&all, requests, &[("method", "tools/list"), ("outcome", "ok")]), 1);
    assert_eq!(counter(&all, requests, &[("method", "tools/call"), ("outcome", "ok")]), 1);
    assert_eq!(counter(&all, requests, &[("method", "prompts/get"), ("outcome", "error")]), 1);
    assert_eq!(counter(&all, requests, &[("method", "other"), ("outcome", "error")]), 1);
    assert_eq!(histogram_len(&all, "mcp_client_request_duration_seconds", "tools/call"), 1);
    assert_eq!(histogram_len(&all, "mcp_client_request_duration_seconds", "other"), 1);
}

/// `Logging` and `Metrics` over stdio: a child server (a shell script that answers by
/// method).
#[cfg(unix)]
#[tokio::test]
async fn logging_and_metrics_over_stdio() {
    let _one = ONE_AT_A_TIME.lock().await;
    use mcp_transport_stdio::ChildCommand;
    const SCRIPT: &str = r#"
while read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^[^}]*"id":\([0-9]*\).*/\1/p')
  [ -z "$id" ] && continue
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"lookup","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"found"}]}}\n' "$id" ;;
    *) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"unknown method"}}\n' "$id" ;;
  esac
done
"#;
    let (spans, _guard) = Spans::install();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let _metrics = metrics::set_default_local_recorder(&recorder);
    let client = ClientBuilder::new("c", "1")
        .session_revisions_only()
        .layer(Logging::new())
        .layer(Metrics::new())
        .spawn(ChildCommand::new("sh").args(["-c", SCRIPT]))
        .await
        .unwrap();
    exercise_logging_and_metrics(&client, &spans, &snapshotter).await;
    client.close().await.unwrap();
}

#[cfg(feature = "http")]
mod http {
    use super::*;
    use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};

    /// [`server`] over Streamable HTTP on a free port: its port.
    async fn serve() -> u16 {
        let router = server().http_router(HttpServerConfig::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { server::serve_router(listener, router, &HttpServerConfig::default()).await });
        port
    }

    #[tokio::test]
    async fn logging_and_metrics_over_http() {
        let _one = ONE_AT_A_TIME.lock().await;
        let (spans, _guard) = Spans::install();
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        let _metrics = metrics::set_default_local_recorder(&recorder);
        let port = serve().await;
        let url = format!("http://127.0.0.1:{port}/mcp");
        let client =
            ClientBuilder::new("c", "1").layer(Logging::new()).layer(Metrics::new()).connect_http(&url).await.unwrap();
        exercise_logging_and_metrics(&client, &spans, &snapshotter).await;
        client.close().await.unwrap();
    }
}
