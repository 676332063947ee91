//! Revision 2026-07-28 over Streamable HTTP, against a real socket with raw HTTP requests: the
//! server's `Mcp-Name` checks for `prompts/get` (the name), `resources/read` (the URI) and the
//! task methods of the tasks extension (the task id), and
//! the cancellation of a handler whose client closed the POST before anything was answered,
//! and a session factory's own request checks.
#![cfg(feature = "http")]

use std::sync::Arc;
use std::time::Duration;

use axum::http;
use mcp_jsonrpc::message::Request;
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig, Rejection, SessionFactory};
use mcp_server::{Context, PromptDef, ResourceDef, Server, ToolDef, ToolError};
use mcp_types::{AnyResourceContents, CallToolResult, ErrorObject, GetPromptResult, TextResourceContents};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Notify;

struct Harness {
    url: String,
    http: reqwest::Client,
    /// Signalled by the `hang` tool when it starts, and when its future is dropped.
    started: Arc<Notify>,
    dropped: Arc<Notify>,
}

/// Signals a [`Notify`] when dropped (a cancelled handler's future is dropped).
struct Signal(Arc<Notify>);

impl Drop for Signal {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

fn server(hang: ToolDef) -> Server {
    Server::builder("stateless-http", "1.0.0")
        .tool(hang)
        .prompt(PromptDef::new("greet", |_args, _ctx| async { Ok::<_, ErrorObject>(GetPromptResult::new(vec![])) }))
        .resource(ResourceDef::new("note", "mem://notes/a b", |uri: String, _vars, _ctx| async move {
            Ok::<_, ErrorObject>(vec![AnyResourceContents::TextResourceContents(TextResourceContents::new(uri, "hi"))])
        }))
        .build()
        .unwrap()
}

async fn start() -> Harness {
    start_with(|server| Arc::new(server)).await
}

async fn start_with(factory: impl FnOnce(Server) -> Arc<dyn SessionFactory>) -> Harness {
    let (started, dropped) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (s, d) = (started.clone(), dropped.clone());
    let hang = ToolDef::new("hang", json!({"type": "object"}), move |_args, ctx: Context| {
        let (started, dropped) = (s.clone(), d.clone());
        async move {
            let _signal = Signal(dropped);
            started.notify_one();
            // Nothing is sent before the result: the response is still to be chosen (JSON).
            ctx.cancellation().cancelled().await;
            Ok::<_, ToolError>(CallToolResult::success(vec![]))
        }
    })
    .unwrap();
    let factory = factory(server(hang));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(server::serve_listener(factory, HttpServerConfig::default(), listener));
    Harness { url, http: reqwest::Client::new(), started, dropped }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

impl Harness {
    /// A 2026-07-28 POST of `method` with `params` (and `_meta`), the `Mcp-Name` header if given.
    fn post(&self, method: &str, name: Option<&str>, mut params: Value) -> reqwest::RequestBuilder {
        params["_meta"] = meta();
        let mut r = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string());
        if let Some(name) = name {
            r = r.header("mcp-name", name);
        }
        r
    }

    /// The status and JSON-RPC error code (0 for a result) of a POST.
    async fn outcome(&self, method: &str, name: Option<&str>, params: Value) -> (u16, i64) {
        let response = self.post(method, name, params).send().await.unwrap();
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap_or_else(|e| panic!("{method}: not JSON: {e}"));
        (status, body["error"]["code"].as_i64().unwrap_or(0))
    }
}

#[tokio::test]
async fn mcp_name_must_name_the_prompt_and_the_resource() {
    let h = start().await;
    let get = json!({"name": "greet"});
    assert_eq!(h.outcome("prompts/get", Some("greet"), get.clone()).await, (200, 0));
    assert_eq!(h.outcome("prompts/get", Some("=?base64?Z3JlZXQ=?="), get.clone()).await, (200, 0), "base64 form");
    assert_eq!(h.outcome("prompts/get", Some("farewell"), get.clone()).await, (400, -32020), "another name");
    assert_eq!(h.outcome("prompts/get", None, get).await, (400, -32020), "no Mcp-Name");

    let read = json!({"uri": "mem://notes/a b"});
    assert_eq!(h.outcome("resources/read", Some("mem://notes/a b"), read.clone()).await, (200, 0));
    assert_eq!(h.outcome("resources/read", Some("mem://notes/b"), read.clone()).await, (400, -32020), "another URI");
    assert_eq!(h.outcome("resources/read", Some("greet"), read.clone()).await, (400, -32020), "a name, not the URI");
    assert_eq!(h.outcome("resources/read", None, read).await, (400, -32020), "no Mcp-Name");
}

/// The tasks extension (SEP-2663): `tasks/get`, `tasks/update` and `tasks/cancel` name their
/// task in `Mcp-Name`; the removed `tasks/result` and `tasks/list` need none (and are -32601).
#[tokio::test]
async fn mcp_name_must_name_the_task_of_a_task_method() {
    let h = start().await;
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let params = json!({"taskId": "task-1", "inputResponses": {}});
        let (_, code) = h.outcome(method, Some("task-1"), params.clone()).await;
        assert_ne!(code, -32020, "{method}: the right task");
        assert_eq!(h.outcome(method, Some("task-2"), params.clone()).await, (400, -32020), "{method}: another task");
        assert_eq!(h.outcome(method, None, params).await, (400, -32020), "{method}: no Mcp-Name");
    }
    for removed in ["tasks/result", "tasks/list"] {
        let (_, code) = h.outcome(removed, None, json!({"taskId": "task-1"})).await;
        assert_eq!(code, -32601, "{removed}");
    }
}

#[tokio::test]
async fn closing_a_2026_post_before_its_first_frame_cancels_the_handler() {
    let h = start().await;
    let call = h.post("tools/call", Some("hang"), json!({"name": "hang"})).send();
    // The handler runs and has sent nothing: no status line yet (it would be JSON's).
    let pending = tokio::spawn(call);
    tokio::time::timeout(Duration::from_secs(30), h.started.notified()).await.expect("the handler started");
    assert!(!pending.is_finished(), "no answer yet");
    // The client gives up: the connection closes.
    pending.abort();
    tokio::time::timeout(Duration::from_secs(30), h.dropped.notified()).await.expect("the handler was cancelled");
}

/// A session factory that refuses the requests whose POST says `x-deny`, and leaves the rest to
/// the server.
struct Gate(Server);

impl SessionFactory for Gate {
    fn connect(&self, sink: Arc<dyn mcp_jsonrpc::FrameSink>) -> mcp_jsonrpc::Dispatcher {
        SessionFactory::connect(&self.0, sink)
    }
    fn connect_stateless(
        &self,
        sink: Arc<dyn mcp_jsonrpc::FrameSink>,
        version: mcp_types::ProtocolVersion,
    ) -> mcp_jsonrpc::Dispatcher {
        SessionFactory::connect_stateless(&self.0, sink, version)
    }
    fn check_request(&self, request: &Request, headers: &http::HeaderMap) -> Result<(), Rejection> {
        if headers.contains_key("x-deny") {
            let error = ErrorObject::new(-32003, format!("{} is denied", request.method));
            return Err(Rejection { status: http::StatusCode::FORBIDDEN, error });
        }
        SessionFactory::check_request(&self.0, request, headers)
    }
}

#[tokio::test]
async fn a_factory_may_refuse_a_request_with_its_own_status_and_error() {
    let h = start_with(|server| Arc::new(Gate(server))).await;
    let get = json!({"name": "greet"});
    let response = h.post("prompts/get", Some("greet"), get.clone()).header("x-deny", "1").send().await.unwrap();
    assert_eq!(response.status(), 403);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["id"], 1, "the answer is the request's");
    assert_eq!(body["error"], json!({"code": -32003, "message": "prompts/get is denied"}));
    // The endpoint's own checks come first.
    let wrong_method =
        h.post("prompts/get", Some("greet"), get.clone()).header("x-deny", "1").header("mcp-method", "x");
    let response = wrong_method.send().await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(response.json::<Value>().await.unwrap()["error"]["code"], -32020);
    // Without `x-deny`, the server's checks still hold.
    assert_eq!(h.outcome("prompts/get", Some("greet"), get.clone()).await, (200, 0));
    assert_eq!(h.outcome("prompts/get", Some("farewell"), get).await, (400, -32020));
}
