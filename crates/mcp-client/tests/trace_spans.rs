//! The `mcp.client.request` span of each request, `initialize` included (with or without the
//! `opentelemetry` feature), against our server over the in-memory transport: its fields (OpenTelemetry's MCP
//! semantic conventions), the request id the server saw, a failure's code; and a `traceparent`
//! the caller put in `_meta` reaching the server's span as it was written.

use mcp_client::{CallOptions, ClientBuilder, ClientError};
use mcp_jsonrpc::transport::memory;
use mcp_server::{Server, ToolDef, ToolError};
use mcp_test_support::spans::{Spans, assert_fields};
use mcp_types::{CallToolRequestParams, CallToolResult, ContentBlock, RequestMetaObject};
use serde_json::json;

const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

fn server() -> Server {
    let echo = ToolDef::new("echo", json!({"type": "object"}), |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("ok")]))
    })
    .unwrap();
    Server::builder("traced", "1.0").tool(echo).build().unwrap()
}

#[tokio::test]
async fn each_request_has_a_client_span_and_a_callers_traceparent_reaches_the_server() {
    let (spans, _guard) = Spans::install();
    let server = server();
    let (a, b) = memory(64);
    server.connect(a);
    let client = ClientBuilder::new("traced-client", "1.0").session_revisions_only().connect(b).await.unwrap();

    let mut params = CallToolRequestParams::new("echo");
    params.meta = Some(RequestMetaObject {
        extra: serde_json::from_value(json!({"traceparent": TRACEPARENT})).unwrap(),
        ..Default::default()
    });
    let result = client.call_tool_with(params, CallOptions::default()).await.unwrap();
    assert_eq!(result.content, vec![ContentBlock::text("ok")]);
    let error = client.send_request::<mcp_types::GetPromptRequest>(
        mcp_types::GetPromptRequestParams::new("none"),
        CallOptions::default(),
    );
    assert!(matches!(error.await, Err(ClientError::Remote(e)) if e.code == -32601));

    let sent = spans.named("mcp.client.request");
    let served = spans.named("mcp.server.request");
    assert_eq!(sent.len(), 3, "{sent:?}");
    // The handshake too.
    assert_fields(&sent[0], &[("mcp.method.name", "initialize"), ("mcp.protocol.version", "2025-11-25")]);
    assert_eq!(sent[0]["jsonrpc.request.id"], served[0]["jsonrpc.request.id"]);
    let sent = &sent[1..];
    assert_fields(
        &sent[0],
        &[
            ("mcp.method.name", "tools/call"),
            ("mcp.protocol.version", "2025-11-25"),
            ("gen_ai.tool.name", "echo"),
            ("gen_ai.operation.name", "execute_tool"),
            ("otel.name", "tools/call echo"),
            ("otel.kind", "client"),
        ],
    );
    assert!(!sent[0].contains_key("error.type"), "{:?}", sent[0]);
    // The id the server answered, and the caller's traceparent, untouched.
    let call = served.iter().find(|s| s["mcp.method.name"] == "tools/call").unwrap();
    assert_eq!(sent[0]["jsonrpc.request.id"], call["jsonrpc.request.id"]);
    assert_fields(call, &[("traceparent", TRACEPARENT)]);
    assert_fields(
        &sent[1],
        &[("mcp.method.name", "prompts/get"), ("error.type", "-32601"), ("rpc.response.status_code", "-32601")],
    );
    client.close().await.unwrap();
}

/// At 2026-07-28 the calls that take their own way (a list page, a custom request, a tool
/// called as a task and the extension's `tasks/get`) each have their span, with the id the
/// server saw.
#[tokio::test]
async fn stateless_lists_custom_requests_and_tasks_have_spans_too() {
    use mcp_client::tasks::ToolTask;
    let (spans, _guard) = Spans::install();
    let task = ToolDef::new("task", json!({"type": "object"}), |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
    })
    .unwrap()
    .task_support(mcp_server::TaskSupport::Required);
    let server = Server::builder("traced", "1.0").tool(task).build().unwrap();
    let (a, b) = memory(64);
    server.connect(a);
    let client = ClientBuilder::new("traced-client", "1.0").connect(b).await.unwrap();
    assert!(client.protocol_version().is_stateless());

    assert_eq!(client.list_all_tools().await.unwrap().len(), 1);
    let unknown = client.request_raw("acme/unknown", None).await;
    assert!(matches!(unknown, Err(ClientError::Remote(e)) if e.code == -32601));
    let ToolTask::Running(task) = client.call_tool_as_task("task", json!({}), None).await.unwrap() else {
        panic!("no task")
    };
    let result = client.wait_for_task(&task.task_id).await.unwrap();
    assert_eq!(result.content, vec![ContentBlock::text("done")]);

    let sent = spans.named("mcp.client.request");
    let served = spans.named("mcp.server.request");
    let method = |span: &mcp_test_support::spans::Fields| span["mcp.method.name"].clone();
    assert_eq!(
        sent.iter().map(method).filter(|m| m != "server/discover").collect::<Vec<_>>()[..4],
        ["tools/list", "acme/unknown", "tools/call", "tasks/get"],
        "{sent:?}"
    );
    for span in sent.iter().filter(|s| s["mcp.method.name"] != "server/discover") {
        assert_fields(span, &[("mcp.protocol.version", "2026-07-28"), ("otel.kind", "client")]);
        let id = &span["jsonrpc.request.id"];
        assert!(served.iter().any(|s| &s["jsonrpc.request.id"] == id), "{span:?} not served as {served:?}");
    }
    let call = sent.iter().find(|s| s["mcp.method.name"] == "tools/call").unwrap();
    assert_fields(call, &[("gen_ai.tool.name", "task"), ("otel.name", "tools/call task")]);
    let custom = sent.iter().find(|s| s["mcp.method.name"] == "acme/unknown").unwrap();
    assert_fields(custom, &[("error.type", "-32601")]);
}
