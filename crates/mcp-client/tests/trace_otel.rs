//! The `opentelemetry` feature end to end: our client and our server over real HTTP (a local
//! TCP port), both traced into one OpenTelemetry in-memory exporter. A request made inside a
//! span carries that trace in `_meta`, and the server's span of it is a child of the client's
//! span, in the same trace: in a session revision and in 2026-07-28. A `traceparent` the
//! caller put in `_meta` is the one sent. The server's request to the client (sampling) made
//! by a tool carries the context of the server's span.

#![cfg(all(feature = "opentelemetry", feature = "http"))]

use std::sync::Arc;

use mcp_client::{CallOptions, Client, ClientBuilder};
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_types::{
    CallToolRequestParams, CallToolResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult, ErrorObject,
    RequestMetaObject, Role, SamplingContent, SamplingMessage, TextContent,
};
use opentelemetry::trace::{SpanKind, TraceContextExt as _, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tracing::subscriber::DefaultGuard;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// An OpenTelemetry pipeline into memory, as this thread's subscriber (the test's runtime is
/// single-threaded: client, server and transport all run under it).
fn traced() -> (InMemorySpanExporter, DefaultGuard) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("trace-otel-test"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    (exporter, guard)
}

/// Our server over HTTP on a local port; its URL.
async fn serve() -> String {
    let echo = ToolDef::new("echo", json!({"type": "object"}), |args, _ctx| async move {
        let text = args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
    .unwrap();
    let ask = ToolDef::new("ask", json!({"type": "object"}), |_args, ctx: Context| async move {
        let message = SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new("hi")));
        let answer = ctx.create_message(CreateMessageRequestParams::new(8, vec![message])).await;
        answer.map_err(ToolError::new)?;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("asked")]))
    })
    .unwrap();
    let ask_task = ToolDef::new("ask_task", json!({"type": "object"}), |_args, ctx: Context| async move {
        let message = SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new("hi")));
        let answer = ctx.create_message(CreateMessageRequestParams::new(8, vec![message])).await;
        answer.map_err(ToolError::new)?;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("asked")]))
    })
    .unwrap()
    .task_support(mcp_server::TaskSupport::Optional);
    let server = Server::builder("traced", "1.0").tool(echo).tool(ask).tool(ask_task).build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server::serve_listener(Arc::new(server), HttpServerConfig::default(), listener));
    format!("http://{addr}/mcp")
}

/// The one exported span named `name` of `kind`.
fn the_span<'a>(spans: &'a [SpanData], name: &str, kind: SpanKind) -> &'a SpanData {
    let found: Vec<&SpanData> = spans.iter().filter(|s| s.name == name && s.span_kind == kind).collect();
    assert_eq!(
        found.len(),
        1,
        "one {kind:?} span `{name}` in {:#?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    found[0]
}

/// The value of attribute `key` of `span`, as text.
fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string())
}

/// Calls `echo` inside a span `caller`, then checks the chain caller → client span → server
/// span: one trace, each the parent of the next. Returns the client and server spans.
async fn call_in_a_span(client: &Client, exporter: &InMemorySpanExporter) -> (SpanData, SpanData) {
    let caller = tracing::info_span!("caller");
    let result =
        async { client.call_tool("echo", json!({"text": "traced"})).await.unwrap() }.instrument_in(&caller).await;
    assert_eq!(result.content, vec![ContentBlock::text("traced")]);
    let caller_context = caller.context().span().span_context().clone();
    drop(caller);

    let spans = exporter.get_finished_spans().unwrap();
    let caller = the_span(&spans, "caller", SpanKind::Internal);
    let client_span = the_span(&spans, "tools/call echo", SpanKind::Client);
    let server_span = the_span(&spans, "tools/call echo", SpanKind::Server);
    let trace_id = caller_context.trace_id();
    assert_eq!(caller.span_context.trace_id(), trace_id);
    assert_eq!(client_span.span_context.trace_id(), trace_id);
    assert_eq!(client_span.parent_span_id, caller.span_context.span_id());
    assert_eq!(server_span.span_context.trace_id(), trace_id, "the server's span is in the client's trace");
    assert_eq!(server_span.parent_span_id, client_span.span_context.span_id(), "the client's span is its parent");
    assert!(server_span.parent_span_is_remote);
    for span in [client_span, server_span] {
        assert_eq!(attribute(span, "mcp.method.name").as_deref(), Some("tools/call"));
        assert_eq!(attribute(span, "gen_ai.tool.name").as_deref(), Some("echo"));
        assert!(attribute(span, "jsonrpc.request.id").is_some(), "{span:?}");
    }
    assert_eq!(attribute(client_span, "jsonrpc.request.id"), attribute(server_span, "jsonrpc.request.id"));
    (client_span.clone(), server_span.clone())
}

/// Instruments a future with a span it does not own.
trait InstrumentIn: std::future::Future + Sized {
    fn instrument_in(self, span: &tracing::Span) -> tracing::instrument::Instrumented<Self> {
        tracing::Instrument::instrument(self, span.clone())
    }
}

impl<F: std::future::Future> InstrumentIn for F {}

/// A session revision over Streamable HTTP: both spans name the session.
#[tokio::test]
async fn a_session_request_continues_the_callers_trace_on_the_server() {
    let url = serve().await;
    let (exporter, _guard) = traced();
    let client = ClientBuilder::new("traced-client", "1.0").session_revisions_only().connect_http(&url).await.unwrap();
    exporter.reset();
    let (client_span, server_span) = call_in_a_span(&client, &exporter).await;
    let session = attribute(&server_span, "mcp.session.id");
    assert!(session.as_deref().is_some_and(|s| !s.is_empty()), "{server_span:?}");
    assert_eq!(attribute(&client_span, "mcp.session.id"), session);
    assert_eq!(attribute(&server_span, "mcp.protocol.version").as_deref(), Some("2025-11-25"));
    client.close().await.unwrap();
}

/// 2026-07-28: the trace context beside the revision's own `_meta` members.
#[tokio::test]
async fn a_stateless_request_continues_the_callers_trace_on_the_server() {
    let url = serve().await;
    let (exporter, _guard) = traced();
    let client = ClientBuilder::new("traced-client", "1.0").connect_http(&url).await.unwrap();
    assert!(client.protocol_version().is_stateless());
    exporter.reset();
    let (_client_span, server_span) = call_in_a_span(&client, &exporter).await;
    assert_eq!(attribute(&server_span, "mcp.protocol.version").as_deref(), Some("2026-07-28"));
    client.close().await.unwrap();
}

/// A `traceparent` the caller wrote in `_meta` is not overwritten: the server's span joins
/// that trace, under that parent.
#[tokio::test]
async fn a_traceparent_the_caller_set_is_the_one_sent() {
    let url = serve().await;
    let (exporter, _guard) = traced();
    let client = ClientBuilder::new("traced-client", "1.0").session_revisions_only().connect_http(&url).await.unwrap();
    exporter.reset();
    let mut params = CallToolRequestParams::new("echo");
    params.meta = Some(RequestMetaObject {
        extra: serde_json::from_value(
            json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"}),
        )
        .unwrap(),
        ..Default::default()
    });
    let caller = tracing::info_span!("caller");
    async { client.call_tool_with(params, CallOptions::default()).await.unwrap() }.instrument_in(&caller).await;
    drop(caller);
    let spans = exporter.get_finished_spans().unwrap();
    let server_span = the_span(&spans, "tools/call echo", SpanKind::Server);
    assert_eq!(server_span.span_context.trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(server_span.parent_span_id.to_string(), "00f067aa0ba902b7");
    client.close().await.unwrap();
}

/// A `traceparent` that does not parse (the caller's, kept as written) is not adopted: the
/// server's span stays under its own parent (here none: a new trace).
#[tokio::test]
async fn a_traceparent_that_does_not_parse_is_not_the_servers_parent() {
    let url = serve().await;
    let (exporter, _guard) = traced();
    let client = ClientBuilder::new("traced-client", "1.0").session_revisions_only().connect_http(&url).await.unwrap();
    exporter.reset();
    let mut params = CallToolRequestParams::new("echo");
    params.meta = Some(RequestMetaObject {
        extra: serde_json::from_value(json!({"traceparent": "00-not-a-trace"})).unwrap(),
        ..Default::default()
    });
    let caller = tracing::info_span!("caller");
    let caller_trace = caller.context().span().span_context().trace_id();
    async { client.call_tool_with(params, CallOptions::default()).await.unwrap() }.instrument_in(&caller).await;
    drop(caller);
    let spans = exporter.get_finished_spans().unwrap();
    let server_span = the_span(&spans, "tools/call echo", SpanKind::Server);
    assert_eq!(server_span.parent_span_id, opentelemetry::trace::SpanId::INVALID);
    assert!(!server_span.parent_span_is_remote);
    assert_ne!(server_span.span_context.trace_id(), caller_trace);
    assert_eq!(attribute(server_span, "traceparent").as_deref(), Some("00-not-a-trace"));
    client.close().await.unwrap();
}

/// A tool's request to the client (sampling) carries the trace context of the server's span of
/// the `tools/call` it serves.
#[tokio::test]
async fn the_servers_request_to_the_client_carries_the_servers_span() {
    let url = serve().await;
    let (exporter, _guard) = traced();
    let seen = Arc::new(std::sync::Mutex::new(None::<Value>));
    let record = seen.clone();
    let client = ClientBuilder::new("traced-client", "1.0")
        .session_revisions_only()
        .on_sampling(move |params: CreateMessageRequestParams| {
            let meta = params.meta.map(|m| Value::Object(m.extra));
            *record.lock().unwrap() = meta;
            async { Ok::<_, ErrorObject>(CreateMessageResult::new(Role::Assistant, TextContent::new("ok"), "m")) }
        })
        .connect_http(&url)
        .await
        .unwrap();
    exporter.reset();
    let result = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(result.content, vec![ContentBlock::text("asked")]);
    let spans = exporter.get_finished_spans().unwrap();
    let server_span = the_span(&spans, "tools/call ask", SpanKind::Server);
    let expected = format!("00-{}-{}-01", server_span.span_context.trace_id(), server_span.span_context.span_id());
    let meta = seen.lock().unwrap().clone().expect("the sampling request has a _meta");
    assert_eq!(meta["traceparent"], expected.as_str(), "{meta}");
    client.close().await.unwrap();
}

/// A task's request to the client (sampling), made after the `tools/call` that created the
/// task was answered, carries the trace context of the task's span, a child of the server's
/// span of that `tools/call`.
#[tokio::test]
async fn a_tasks_request_to_the_client_continues_the_trace_of_the_call_that_made_it() {
    let url = serve().await;
    let (exporter, _guard) = traced();
    let seen = Arc::new(std::sync::Mutex::new(None::<Value>));
    let record = seen.clone();
    let client = ClientBuilder::new("traced-client", "1.0")
        .session_revisions_only()
        .on_sampling(move |params: CreateMessageRequestParams| {
            let meta = params.meta.map(|m| Value::Object(m.extra));
            *record.lock().unwrap() = meta;
            async { Ok::<_, ErrorObject>(CreateMessageResult::new(Role::Assistant, TextContent::new("ok"), "m")) }
        })
        .connect_http(&url)
        .await
        .unwrap();
    exporter.reset();
    let task = match client.call_tool_as_task("ask_task", json!({}), None).await.unwrap() {
        mcp_client::tasks::ToolTask::Running(task) => task,
        other => panic!("no task: {other:?}"),
    };
    let result = client.wait_for_task(&task.task_id).await.unwrap();
    assert_eq!(result.content, vec![ContentBlock::text("asked")]);
    let spans = exporter.get_finished_spans().unwrap();
    let server_span = the_span(&spans, "tools/call ask_task", SpanKind::Server);
    let task_span = the_span(&spans, "task ask_task", SpanKind::Internal);
    assert_eq!(task_span.span_context.trace_id(), server_span.span_context.trace_id());
    assert_eq!(task_span.parent_span_id, server_span.span_context.span_id(), "the request's span is its parent");
    assert_eq!(attribute(task_span, "mcp.task.id").as_deref(), Some(task.task_id.as_str()));
    let expected = format!("00-{}-{}-01", task_span.span_context.trace_id(), task_span.span_context.span_id());
    let meta = seen.lock().unwrap().clone().expect("the sampling request has a _meta");
    assert_eq!(meta["traceparent"], expected.as_str(), "{meta}");
    client.close().await.unwrap();
}
