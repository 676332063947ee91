//! Our client against our server over real HTTP (`mcp-server`'s Streamable HTTP endpoint on a
//! local port): SSE and JSON answers, the server's requests and notifications on a request's
//! stream, a stream the handler closes (resumed after the server's `retry`), sessions ended
//! by DELETE (renewed), the stateless mode, HTTP+SSE through the fallback, and a
//! cancelled call, whose handler the server stops.

#![cfg(feature = "http")]

use std::sync::Arc;
use std::time::Duration;

use mcp_client::http::HttpClientConfig;
use mcp_client::{CallOptions, Client, ClientBuilder, ClientError, ServerEvent};
use mcp_jsonrpc::CancellationToken;
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_types::{
    CallToolRequestParams, CallToolResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult, ErrorObject,
    LoggingLevel, ProtocolVersion, Role, SamplingContent, SamplingMessage, TextContent,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

fn tool(
    name: &str,
    f: impl Fn(serde_json::Map<String, Value>, Context) -> mcp_jsonrpc::BoxFuture<Result<CallToolResult, ToolError>>
    + Send
    + Sync
    + 'static,
) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), f).unwrap()
}

fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

/// What the `hang` tool tells: it `started`, and its future was `dropped` (cancelled).
#[derive(Default, Clone)]
struct Hang {
    started: Arc<Notify>,
    dropped: Arc<Notify>,
}

/// `poll` closes its SSE connection, says so on `closed`, and answers once `release` is
/// called; `hang` never answers.
fn test_server(release: Arc<Notify>, closed: Arc<Notify>, hang: Hang) -> Server {
    let release2 = release.clone();
    Server::builder("our-http-server", "1.0.0")
        .tool(tool("echo", |args, _| {
            Box::pin(async move { Ok(text_result(args.get("text").and_then(Value::as_str).unwrap_or_default())) })
        }))
        .tool(tool("ask", |_, ctx| {
            Box::pin(async move {
                ctx.progress(1.0).total(2.0).message("asking").await;
                ctx.log(LoggingLevel::Info, json!("asking the model")).await;
                let params = CreateMessageRequestParams::new(
                    16,
                    vec![SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new("hi")))],
                );
                let answer = ctx.create_message(params).await.map_err(ToolError::new)?;
                Ok(text_result(format!("model {} answered", answer.model)))
            })
        }))
        .tool(tool("poll", move |_, ctx| {
            let release = release.clone();
            let closed = closed.clone();
            Box::pin(async move {
                let released = release.notified();
                let was_open = ctx.close_sse_stream().await;
                closed.notify_one();
                released.await;
                Ok(text_result(format!("closed: {was_open}")))
            })
        }))
        .tool(tool("release", move |_, _| {
            let release = release2.clone();
            Box::pin(async move {
                release.notify_waiters();
                Ok(text_result("released"))
            })
        }))
        .tool(tool("hang", move |_, _| {
            let hang = hang.clone();
            Box::pin(async move {
                struct Dropped(Arc<Notify>);
                impl Drop for Dropped {
                    fn drop(&mut self) {
                        self.0.notify_one();
                    }
                }
                let _dropped = Dropped(hang.dropped);
                hang.started.notify_one();
                std::future::pending::<()>().await;
                Ok(text_result("never"))
            })
        }))
        .build()
        .unwrap()
}

async fn serve(config: HttpServerConfig) -> String {
    serve_with(config, Arc::new(Notify::new())).await
}

async fn serve_with(config: HttpServerConfig, closed: Arc<Notify>) -> String {
    serve_full(config, closed, Hang::default()).await
}

async fn serve_full(config: HttpServerConfig, closed: Arc<Notify>, hang: Hang) -> String {
    let server = test_server(Arc::new(Notify::new()), closed, hang);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server::serve_listener(Arc::new(server), config, listener));
    format!("http://{addr}")
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("our-client", "1.0").session_revisions_only().on_sampling(
        |_params: CreateMessageRequestParams| async move {
            Ok::<_, ErrorObject>(CreateMessageResult::new(Role::Assistant, TextContent::new("42"), "test-model"))
        },
    )
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(ContentBlock::as_text).collect::<Vec<_>>().join("")
}

async fn exercise(client: &Client, events: &mut tokio::sync::mpsc::UnboundedReceiver<ServerEvent>) {
    assert_eq!(client.server_info().name, "our-http-server");
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 5);
    assert_eq!(text(&client.call_tool("echo", json!({"text": "hello"})).await.unwrap()), "hello");
    client.set_logging_level(LoggingLevel::Debug).await.unwrap();
    let progress = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = progress.clone();
    let options = CallOptions::default().on_progress(move |p| sink.lock().unwrap().push(p.progress));
    let mut params = mcp_types::CallToolRequestParams::new("ask");
    params.arguments = Some(Default::default());
    let result = client.call_tool_with(params, options).await.unwrap();
    assert_eq!(text(&result), "model test-model answered");
    assert_eq!(*progress.lock().unwrap(), vec![1.0]);
    match tokio::time::timeout(Duration::from_secs(10), events.recv()).await.unwrap().unwrap() {
        ServerEvent::Log(log) => assert_eq!(log.data, json!("asking the model")),
        other => panic!("unexpected event {other:?}"),
    }
}

fn event_sink(b: ClientBuilder) -> (ClientBuilder, tokio::sync::mpsc::UnboundedReceiver<ServerEvent>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (b.on_event(move |e| drop(tx.send(e))), rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_with_sse_answers() {
    let base = serve(HttpServerConfig::default()).await;
    let (b, mut events) = event_sink(builder());
    let client = b.connect_http(&format!("{base}/mcp")).await.unwrap();
    exercise(&client, &mut events).await;
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_with_json_answers() {
    let base = serve(HttpServerConfig::default().json_response(true)).await;
    let (b, mut events) = event_sink(builder());
    let client = b.connect_http(&format!("{base}/mcp")).await.unwrap();
    exercise(&client, &mut events).await;
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_the_handler_closes_is_resumed() {
    let closed = Arc::new(Notify::new());
    let base = serve_with(HttpServerConfig::default().retry(Duration::from_millis(50)), closed.clone()).await;
    let client = Arc::new(builder().connect_http(&format!("{base}/mcp")).await.unwrap());
    let poll = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("poll", json!({})).await }
    });
    // Its stream is closed before it answers: the answer comes on the resumed stream.
    closed.notified().await;
    assert_eq!(text(&client.call_tool("release", json!({})).await.unwrap()), "released");
    assert_eq!(text(&poll.await.unwrap().unwrap()), "closed: true");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ended_by_the_server_is_renewed() {
    let base = serve(HttpServerConfig::default()).await;
    let config = HttpClientConfig::parse(&format!("{base}/mcp")).unwrap();
    let transport = mcp_client::http::StreamableHttpTransport::new(config).unwrap();
    let handle = transport.handle();
    let client = builder().connect(transport).await.unwrap();
    let first = handle.session_id().unwrap();
    // Someone ends the session (as an idle timeout would).
    let status = mcp_client::http::reqwest::Client::new()
        .delete(format!("{base}/mcp"))
        .header("mcp-session-id", &first)
        .send()
        .await
        .unwrap()
        .status();
    assert!(status.is_success(), "{status}");
    assert_eq!(text(&client.call_tool("echo", json!({"text": "again"})).await.unwrap()), "again");
    let second = handle.session_id().unwrap();
    assert_ne!(first, second);
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server() {
    let base = serve(HttpServerConfig::default().stateless(true)).await;
    let client = builder().connect_http(&format!("{base}/mcp")).await.unwrap();
    assert_eq!(text(&client.call_tool("echo", json!({"text": "hi"})).await.unwrap()), "hi");
    client.ping().await.unwrap();
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sse_through_the_fallback() {
    let base = serve(HttpServerConfig::default()).await;
    let (b, mut events) = event_sink(builder());
    let client = b.connect_http(&format!("{base}/sse")).await.unwrap();
    exercise(&client, &mut events).await;
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_stops_its_handler_in_a_2025_11_25_session() {
    let hang = Hang::default();
    let base = serve_full(HttpServerConfig::default(), Arc::new(Notify::new()), hang.clone()).await;
    let pinned = builder().protocol_version(ProtocolVersion::V2025_11_25);
    let client = Arc::new(pinned.connect_http(&format!("{base}/mcp")).await.unwrap());
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    let token = CancellationToken::new();
    let call = tokio::spawn({
        let (client, token) = (client.clone(), token.clone());
        async move {
            let mut params = CallToolRequestParams::new("hang");
            params.arguments = Some(Default::default());
            client.call_tool_with(params, CallOptions::default().cancel_on(token)).await
        }
    });
    hang.started.notified().await;
    token.cancel();
    let result = call.await.unwrap();
    assert!(matches!(result, Err(ClientError::Cancelled)), "{result:?}");
    // A dropped connection is no cancellation in this revision: the handler stops because the
    // client sent `notifications/cancelled`.
    tokio::time::timeout(Duration::from_secs(30), hang.dropped.notified()).await.expect("the handler was cancelled");
    assert_eq!(text(&client.call_tool("echo", json!({"text": "still here"})).await.unwrap()), "still here");
    client.close().await.unwrap();
}
