//! The `mcp.server.request` span of each request, as transcripts over the in-memory transport
//! with a subscriber layer that records spans: its fields (OpenTelemetry's MCP semantic
//! conventions) and the `traceparent` a request carries in `_meta`, in a session revision and
//! in 2026-07-28. (With or without the `opentelemetry` feature: the field is recorded either
//! way.)

use std::time::Duration;

use mcp_jsonrpc::transport::memory;
use mcp_server::{PromptDef, Server, TaskSupport, ToolDef, ToolError};
use mcp_test_support::Wire;
use mcp_test_support::spans::{Spans, assert_fields};
use mcp_types::{CallToolResult, ContentBlock, ErrorObject, GetPromptResult, PromptMessage, Role};
use serde_json::{Value, json};

const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

fn server() -> Server {
    let echo = ToolDef::new("echo", json!({"type": "object"}), |args, _ctx| async move {
        let text = args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
    .unwrap();
    let review = PromptDef::new("review", |_args, _ctx| async move {
        Ok::<_, ErrorObject>(GetPromptResult::new(vec![PromptMessage::new(Role::User, ContentBlock::text("Review"))]))
    });
    let work = ToolDef::new("work", json!({"type": "object"}), |_args, _ctx| async move {
        tracing::info!("task work");
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("worked")]))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    Server::builder("traced", "1.0").tool(echo).tool(work).prompt(review).build().unwrap()
}

/// Sends a request and returns its response.
async fn call(wire: &mut Wire, id: impl Into<Value>, method: &str, params: Value) -> Value {
    wire.send(json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})).await;
    wire.recv().await
}

/// A session revision: the span of each request names its method, id, revision and target;
/// the `traceparent` of `_meta` is a field of the span of the request that carried it, an
/// error response's code is recorded, and the responses are what they are without tracing.
#[tokio::test]
async fn a_session_requests_span_records_its_traceparent() {
    let (spans, _guard) = Spans::install();
    let (a, b) = memory(64);
    let server = server();
    server.connect(a);
    let mut wire = Wire::new(b).with_timeout(Duration::from_secs(60));
    let init =
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let answer = call(&mut wire, 1, "initialize", init).await;
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;

    let params = json!({"name": "echo", "arguments": {"text": "hi"}, "_meta": {"traceparent": TRACEPARENT}});
    let answer = call(&mut wire, 2, "tools/call", params).await;
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hi"}]}}));
    let answer = call(&mut wire, "three", "prompts/get", json!({"name": "review"})).await;
    assert_eq!(answer["result"]["messages"][0]["content"]["text"], "Review");
    let answer = call(&mut wire, 4, "no/such", json!({"_meta": {"traceparent": "garbage"}})).await;
    assert_eq!(answer["error"]["code"], -32601);

    // What the client chose is cut to 256 bytes in a field, at a character boundary.
    let long = json!({"name": "é".repeat(200), "_meta": {"traceparent": "x".repeat(1000)}});
    let answer = call(&mut wire, 5, "tools/call", long).await;
    assert!(answer.get("error").is_some() || answer["result"]["isError"] == true, "{answer}");

    let requests = spans.named("mcp.server.request");
    assert_eq!(requests.len(), 5, "{requests:?}");
    assert_fields(&requests[4], &[("gen_ai.tool.name", &"é".repeat(128)), ("traceparent", &"x".repeat(256))]);
    assert_fields(
        &requests[0],
        &[("mcp.method.name", "initialize"), ("jsonrpc.request.id", "1"), ("otel.name", "initialize")],
    );
    assert!(!requests[0].contains_key("traceparent"), "{:?}", requests[0]);
    assert_fields(
        &requests[1],
        &[
            ("mcp.method.name", "tools/call"),
            ("jsonrpc.request.id", "2"),
            ("mcp.protocol.version", "2025-11-25"),
            ("gen_ai.tool.name", "echo"),
            ("gen_ai.operation.name", "execute_tool"),
            ("otel.name", "tools/call echo"),
            ("otel.kind", "server"),
            ("traceparent", TRACEPARENT),
        ],
    );
    assert!(!requests[1].contains_key("error.type"), "{:?}", requests[1]);
    assert_fields(
        &requests[2],
        &[("jsonrpc.request.id", "three"), ("gen_ai.prompt.name", "review"), ("otel.name", "prompts/get review")],
    );
    assert!(!requests[2].contains_key("traceparent"), "{:?}", requests[2]);
    // Whatever it holds, the member is recorded as it came; the error is on the span.
    assert_fields(
        &requests[3],
        &[("traceparent", "garbage"), ("error.type", "-32601"), ("rpc.response.status_code", "-32601")],
    );
}

/// 2026-07-28: the same span for a request of the stateless revision, its revision read from
/// `_meta`, with the trace context beside the revision's own `_meta` members.
#[tokio::test]
async fn a_stateless_requests_span_records_its_traceparent() {
    let (spans, _guard) = Spans::install();
    let (a, b) = memory(64);
    let server = server();
    server.connect(a);
    let mut wire = Wire::new(b).with_timeout(Duration::from_secs(60));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "traceparent": TRACEPARENT,
        "tracestate": "rojo=00f067aa0ba902b7",
        "baggage": "userId=alice",
    });
    let params = json!({"name": "echo", "arguments": {"text": "stateless"}, "_meta": meta});
    let answer = call(&mut wire, 7, "tools/call", params).await;
    assert_eq!(answer["result"]["content"][0]["text"], "stateless", "{answer}");

    let requests = spans.named("mcp.server.request");
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_fields(
        &requests[0],
        &[
            ("mcp.method.name", "tools/call"),
            ("jsonrpc.request.id", "7"),
            ("mcp.protocol.version", "2026-07-28"),
            ("gen_ai.tool.name", "echo"),
            ("traceparent", TRACEPARENT),
        ],
    );
}

/// The events `message` were logged in the task span of task `id`, itself a child of the span
/// of the request `request_id` that made the task, which carried `TRACEPARENT`.
fn assert_task_traced(spans: &Spans, id: &str, request_id: &str) {
    let events = spans.events("task work");
    assert_eq!(events.len(), 1, "{events:?}");
    let (name, task) = events[0].clone().expect("the handler's log is in no span");
    assert_eq!(name, "mcp.server.task", "{task:?}");
    assert_fields(&task, &[("mcp.task.id", id), ("gen_ai.tool.name", "work"), ("otel.name", "task work")]);
    let parents = spans.parents("mcp.server.task");
    assert_eq!(parents.len(), 1, "{parents:?}");
    let (name, request) = parents[0].clone().expect("the task's span has no parent");
    assert_eq!(name, "mcp.server.request");
    assert_fields(&request, &[("mcp.method.name", "tools/call"), ("jsonrpc.request.id", request_id)]);
    assert_fields(&request, &[("traceparent", TRACEPARENT)]);
}

/// A task's work (2025-11-25) runs in a span of its own, a child of the span of the
/// `tools/call` that made the task: its logs are in the request's trace.
#[tokio::test]
async fn a_tasks_work_runs_in_a_span_under_the_request_that_made_it() {
    let (spans, _guard) = Spans::install();
    let (a, b) = memory(64);
    let server = server();
    server.connect(a);
    let mut wire = Wire::new(b).with_timeout(Duration::from_secs(60));
    let init =
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    call(&mut wire, 1, "initialize", init).await;
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let params = json!({"name": "work", "arguments": {}, "task": {}, "_meta": {"traceparent": TRACEPARENT}});
    let created = call(&mut wire, 2, "tools/call", params).await;
    let id = created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();
    wire.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": id}})).await;
    loop {
        let frame = wire.recv().await;
        if frame["id"] == 3 {
            assert_eq!(frame["result"]["content"][0]["text"], "worked", "{frame}");
            break;
        }
    }
    assert_task_traced(&spans, &id, "2");
}

/// The same for a task of the 2026-07-28 extension.
#[tokio::test]
async fn an_extension_tasks_work_runs_in_a_span_under_the_request_that_made_it() {
    let (spans, _guard) = Spans::install();
    let (a, b) = memory(64);
    let server = server();
    server.connect(a);
    let mut wire = Wire::new(b).with_timeout(Duration::from_secs(60));
    let meta = |traceparent: bool| {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        });
        if traceparent {
            meta["traceparent"] = json!(TRACEPARENT);
        }
        meta
    };
    let created = call(&mut wire, 7, "tools/call", json!({"name": "work", "arguments": {}, "_meta": meta(true)})).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    for n in 8.. {
        let task = call(&mut wire, n, "tasks/get", json!({"taskId": id, "_meta": meta(false)})).await;
        if task["result"]["status"] == "completed" {
            break;
        }
        assert!(n < 10_000, "{task}");
        tokio::task::yield_now().await;
    }
    assert_task_traced(&spans, &id, "7");
}
