//! The client in protocol revision 2026-07-28 over Streamable HTTP, against a server the test
//! plays exchange by exchange (axum on a local port): the request metadata headers
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), no session, no GET
//! stream, no DELETE, JSON-RPC errors in 4xx bodies, tools with invalid `x-mcp-header`
//! declarations left out, `subscriptions/listen` on a long SSE response, and cancellation by
//! closing the response stream.

#![cfg(feature = "http")]

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use mcp_client::{CallOptions, Client, ClientBuilder, ClientError, ServerEvent, Subscription, SubscriptionEnd};
use mcp_jsonrpc::CancellationToken;
use mcp_types::{
    CallToolRequestParams, ElicitAction, ElicitRequestParams, ElicitResult, ErrorObject, SubscriptionFilter,
};
use serde_json::{Value, json};
use tokio::sync::{Mutex, mpsc, oneshot};

/// One HTTP request the server got, waiting for the test to answer it.
struct Exchange {
    method: Method,
    headers: HeaderMap,
    body: Value,
    respond: oneshot::Sender<Response>,
}

impl Exchange {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn rpc_method(&self) -> &str {
        self.body["method"].as_str().unwrap_or_default()
    }

    fn json(self, body: Value) {
        self.json_status(StatusCode::OK, body);
    }

    fn json_status(self, status: StatusCode, body: Value) {
        let response = Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        let _ = self.respond.send(response);
    }

    fn result(self, result: Value) {
        let id = self.body["id"].clone();
        self.json(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn error(self, status: StatusCode, error: Value) {
        let id = self.body["id"].clone();
        self.json_status(status, json!({"jsonrpc": "2.0", "id": id, "error": error}));
    }

    /// Answers with an SSE stream; events are sent through the returned sender, and the
    /// stream ends when it is dropped.
    fn sse(self) -> Sse {
        let (tx, rx) = mpsc::channel::<Bytes>(16);
        let stream =
            futures_util::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx)) },
            );
        let response =
            Response::builder().header("content-type", "text/event-stream").body(Body::from_stream(stream)).unwrap();
        let _ = self.respond.send(response);
        Sse(tx)
    }
}

struct Sse(mpsc::Sender<Bytes>);

impl Sse {
    async fn send(&self, message: Value) {
        self.0.send(Bytes::from(format!("event: message\ndata: {message}\n\n"))).await.unwrap();
    }

    /// Waits until the client closed the stream.
    async fn closed(&self) {
        tokio::time::timeout(std::time::Duration::from_secs(10), self.0.closed())
            .await
            .expect("the client did not close the stream");
    }
}

/// The server: every request goes to the test.
struct Fixture {
    url: String,
    rx: Mutex<mpsc::UnboundedReceiver<Exchange>>,
}

impl Fixture {
    async fn start() -> Fixture {
        let (tx, rx) = mpsc::unbounded_channel();
        let app = axum::Router::new().route("/mcp", axum::routing::any(handle)).with_state(Arc::new(tx));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Fixture { url, rx: Mutex::new(rx) }
    }

    /// The next request (at most 10 s).
    async fn next(&self) -> Exchange {
        let mut rx = self.rx.lock().await;
        tokio::time::timeout(std::time::Duration::from_secs(10), rx.recv())
            .await
            .expect("no request within 10 s")
            .expect("the server stopped")
    }

    /// The next request, a POST of `method` with the 2026-07-28 headers and no session.
    async fn request(&self, method: &str) -> Exchange {
        let ex = self.next().await;
        assert_eq!(ex.method, Method::POST, "{method}");
        assert_eq!(ex.rpc_method(), method, "{}", ex.body);
        assert_eq!(ex.header("mcp-protocol-version"), Some("2026-07-28"), "{method}");
        assert_eq!(ex.header("mcp-method"), Some(method));
        assert_eq!(ex.header("mcp-session-id"), None, "no session in 2026-07-28");
        assert_eq!(ex.header("accept"), Some("application/json, text/event-stream"));
        assert_eq!(ex.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
        ex
    }

    /// Nothing more was requested.
    async fn quiet(&self) {
        let mut rx = self.rx.lock().await;
        tokio::task::yield_now().await;
        if let Ok(ex) = rx.try_recv() {
            panic!("unexpected {} {}", ex.method, ex.body);
        }
    }

    /// Answers the probe as a 2026-07-28 server (with a session id, which the client must
    /// ignore).
    async fn discover(&self, capabilities: Value) {
        let ex = self.request("server/discover").await;
        let body = json!({"jsonrpc": "2.0", "id": ex.body["id"], "result": {
            "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "supportedVersions": ["2026-07-28"], "capabilities": capabilities,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}}}});
        let response = Response::builder()
            .header("content-type", "application/json")
            .header("mcp-session-id", "must-be-ignored")
            .body(Body::from(body.to_string()))
            .unwrap();
        let _ = ex.respond.send(response);
    }
}

async fn handle(
    State(tx): State<Arc<mpsc::UnboundedSender<Exchange>>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (respond, answer) = oneshot::channel();
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if tx.send(Exchange { method, headers, body, respond }).is_err() {
        return Response::builder().status(StatusCode::SERVICE_UNAVAILABLE).body(Body::empty()).unwrap();
    }
    answer.await.unwrap_or_else(|_| Response::builder().status(StatusCode::GONE).body(Body::empty()).unwrap())
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("cli", "1")
}

/// Connects `builder` to the fixture in a task, for the test to play the server's part.
fn connect_in_task(fx: &Fixture, builder: ClientBuilder) -> tokio::task::JoinHandle<Result<Client, ClientError>> {
    let url = fx.url.clone();
    tokio::spawn(async move { builder.connect_http(&url).await })
}

async fn connect(fx: &Fixture, builder: ClientBuilder, capabilities: Value) -> Client {
    let client = connect_in_task(fx, builder);
    fx.discover(capabilities).await;
    client.await.unwrap().unwrap()
}

fn text_result(text: &str) -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": text}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_carry_the_metadata_headers_and_no_session() {
    let fx = Fixture::start().await;
    let client = Arc::new(connect(&fx, builder(), json!({"tools": {}, "prompts": {}, "resources": {}})).await);
    assert!(client.protocol_version().is_stateless());

    let c = client.clone();
    let listing = tokio::spawn(async move { c.list_all_tools().await });
    let ex = fx.request("tools/list").await;
    assert_eq!(ex.header("mcp-name"), None);
    ex.result(json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
        {"name": "sql", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "opts": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
            "query": {"type": "string"}}}},
        {"name": "bad", "inputSchema": {"type": "object", "properties": {
            "score": {"type": "number", "x-mcp-header": "Score"}}}},
        {"name": "dup", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}}},
        {"name": "héllo wörld", "inputSchema": {"type": "object"}}
    ]}));
    let tools = listing.await.unwrap().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["sql", "héllo wörld"], "tools with invalid x-mcp-header are left out");
    match client.call_tool("bad", json!({"score": 1.5})).await {
        Err(ClientError::RejectedTool { tool, reason }) => {
            assert!(tool == "bad" && reason.contains("number"), "{reason}")
        }
        other => panic!("{other:?}"),
    }

    let c = client.clone();
    let call = tokio::spawn(async move {
        c.call_tool(
            "sql",
            json!({"region": " us-west1", "priority": 42, "verbose": null,
            "opts": {"zone": "b"}, "query": "SELECT 1"}),
        )
        .await
    });
    let ex = fx.request("tools/call").await;
    assert_eq!(ex.header("mcp-name"), Some("sql"));
    assert_eq!(ex.header("mcp-param-region"), Some("=?base64?IHVzLXdlc3Qx?="));
    assert_eq!(ex.header("mcp-param-priority"), Some("42"));
    assert_eq!(ex.header("mcp-param-verbose"), None, "null: no header");
    assert_eq!(ex.header("mcp-param-zone"), Some("b"));
    assert_eq!(ex.header("mcp-param-query"), None);
    ex.result(text_result("ran"));
    assert_eq!(call.await.unwrap().unwrap().content[0].as_text(), Some("ran"));

    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("héllo wörld", json!({})).await });
    let ex = fx.request("tools/call").await;
    assert_eq!(ex.header("mcp-name"), Some("=?base64?aMOpbGxvIHfDtnJsZA==?="));
    ex.result(text_result("hi"));
    call.await.unwrap().unwrap();

    let c = client.clone();
    let read = tokio::spawn(async move { c.read_resource("file:///path/to/file%20name.txt").await });
    let ex = fx.request("resources/read").await;
    assert_eq!(ex.header("mcp-name"), Some("file:///path/to/file%20name.txt"));
    ex.result(json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "contents": []}));
    read.await.unwrap().unwrap();

    let c = client.clone();
    let get = tokio::spawn(async move { c.get_prompt("greet", Default::default()).await });
    let ex = fx.request("prompts/get").await;
    assert_eq!(ex.header("mcp-name"), Some("greet"));
    ex.result(json!({"resultType": "complete", "messages": []}));
    get.await.unwrap().unwrap();

    // No GET stream was opened, and closing sends no DELETE.
    client.close().await.unwrap();
    fx.quiet().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_in_4xx_bodies_reach_the_caller() {
    let fx = Fixture::start().await;
    let connecting = connect_in_task(&fx, builder());
    // The first request is refused with 400 and UnsupportedProtocolVersion listing our
    // revision: the client asks again (and does not fall back to `initialize`).
    let ex = fx.request("server/discover").await;
    ex.error(
        StatusCode::BAD_REQUEST,
        json!({"code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}),
    );
    fx.discover(json!({"tools": {}})).await;
    let client = Arc::new(connecting.await.unwrap().unwrap());

    for (status, code) in
        [(StatusCode::BAD_REQUEST, -32602), (StatusCode::NOT_FOUND, -32601), (StatusCode::BAD_REQUEST, -32020)]
    {
        let c = client.clone();
        let call = tokio::spawn(async move { c.call_tool("t", json!({})).await });
        let ex = fx.request("tools/call").await;
        ex.error(status, json!({"code": code, "message": "refused", "data": {"why": "test"}}));
        match call.await.unwrap() {
            Err(ClientError::Remote(e)) => {
                assert_eq!((e.code, e.message.as_str()), (code, "refused"));
                assert_eq!(e.data, Some(json!({"why": "test"})));
            }
            other => panic!("{other:?}"),
        }
    }
    // A 4xx without a JSON-RPC body is the transport's error.
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("t", json!({})).await });
    let ex = fx.request("tools/call").await;
    let _ = ex.respond.send(Response::builder().status(StatusCode::BAD_REQUEST).body(Body::from("nope")).unwrap());
    match call.await.unwrap() {
        Err(e @ ClientError::Transport(_)) => {
            let error = e.http_error().expect("the HTTP transport's error");
            assert_eq!(error.kind(), mcp_client::http::HttpErrorKind::Status);
            assert!(error.to_string().contains("nope"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_server_refusing_initialize_is_asked_with_discover() {
    // `initialize` first: a 2026-07-28-only server refuses its POST with 400 and a 2026-07-28
    // error naming what it speaks. No fallback to HTTP+SSE: `server/discover` instead.
    let fx = Fixture::start().await;
    let connecting = connect_in_task(&fx, builder().initialize_first());
    let ex = fx.next().await;
    assert_eq!((ex.method.clone(), ex.rpc_method()), (Method::POST, "initialize"));
    ex.error(
        StatusCode::BAD_REQUEST,
        json!({"code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}),
    );
    fx.discover(json!({"tools": {}})).await;
    let client = connecting.await.unwrap().unwrap();
    assert!(client.protocol_version().is_stateless());
    let call = tokio::spawn(async move { client.list_tools(None).await });
    fx.request("tools/list").await.result(json!({"resultType": "complete", "tools": []}));
    call.await.unwrap().unwrap();
    fx.quiet().await;

    // The default order: a probe refused by something that is not a 2026-07-28 server's
    // error (a proxy's 400), then `initialize` refused by the 2026-07-28 server itself.
    let fx = Fixture::start().await;
    let connecting = connect_in_task(&fx, builder());
    let ex = fx.request("server/discover").await;
    let _ = ex.respond.send(Response::builder().status(StatusCode::BAD_REQUEST).body(Body::from("busy")).unwrap());
    let ex = fx.next().await;
    assert_eq!(ex.rpc_method(), "initialize");
    ex.error(
        StatusCode::BAD_REQUEST,
        json!({"code": -32021, "message": "Missing required client capability", "data": {}}),
    );
    fx.discover(json!({})).await;
    assert!(connecting.await.unwrap().unwrap().protocol_version().is_stateless());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorization_refusal_of_the_probe_is_an_error_not_a_fallback() {
    let fx = Fixture::start().await;
    let connecting = connect_in_task(&fx, builder());
    let ex = fx.request("server/discover").await;
    let _ = ex.respond.send(Response::builder().status(StatusCode::FORBIDDEN).body(Body::from("go away")).unwrap());
    match connecting.await.unwrap() {
        Err(e @ ClientError::Transport(_)) => {
            let error = e.http_error().expect("the HTTP transport's error");
            assert_eq!(error.status().map(|s| s.as_u16()), Some(403), "{e}");
            assert!(e.to_string().contains("403"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    fx.quiet().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_required_over_http() {
    let fx = Fixture::start().await;
    let b = builder().on_elicitation(|_p: ElicitRequestParams| async move {
        Ok::<_, ErrorObject>(ElicitResult::new(ElicitAction::Decline))
    });
    let client = connect(&fx, b, json!({"tools": {}})).await;
    let call = tokio::spawn(async move { client.call_tool("ask", json!({})).await });
    let ex = fx.request("tools/call").await;
    let first_id = ex.body["id"].clone();
    // The answer on an SSE stream, after a progress-free notification.
    let sse = ex.sse();
    sse.send(json!({"jsonrpc": "2.0", "id": first_id, "result": {"resultType": "input_required",
        "inputRequests": {"ok": {"method": "elicitation/create", "params": {"mode": "form", "message": "Sure?",
            "requestedSchema": {"type": "object", "properties": {}}}}}, "requestState": "st"}}))
        .await;
    let ex = fx.request("tools/call").await;
    assert_eq!(ex.header("mcp-name"), Some("ask"));
    assert_ne!(ex.body["id"], first_id);
    assert_eq!(ex.body["params"]["inputResponses"]["ok"]["action"], "decline");
    assert_eq!(ex.body["params"]["requestState"], "st");
    ex.result(text_result("declined"));
    assert_eq!(call.await.unwrap().unwrap().content[0].as_text(), Some("declined"));
}

/// Opens a subscription to tool list changes, the server acknowledging `acknowledged`:
/// the request's id, the response stream, the subscription.
async fn listening(fx: &Fixture, client: &Arc<Client>, acknowledged: Value) -> (Value, Sse, Subscription) {
    let c = client.clone();
    let opening = tokio::spawn(async move {
        c.listen(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }).await
    });
    let ex = fx.request("subscriptions/listen").await;
    let id = ex.body["id"].clone();
    let sse = ex.sse();
    sse.send(json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": acknowledged, "_meta": {"io.modelcontextprotocol/subscriptionId": id}}}))
        .await;
    (id, sse, opening.await.unwrap().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_is_closed_to_end_the_subscription() {
    let fx = Fixture::start().await;
    let client = Arc::new(connect(&fx, builder(), json!({"tools": {"listChanged": true}})).await);
    let (id, sse, mut subscription) = listening(&fx, &client, json!({"toolsListChanged": true})).await;
    sse.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}}}))
        .await;
    assert_eq!(subscription.next().await, Some(ServerEvent::ToolListChanged));
    // Other requests go on meanwhile.
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool("t", json!({})).await });
    fx.request("tools/call").await.result(text_result("meanwhile"));
    call.await.unwrap().unwrap();
    // Dropping the subscription closes its stream; no notifications/cancelled is POSTed.
    drop(subscription);
    sse.closed().await;
    fx.quiet().await;

    // A stream the server ends without an answer ends the subscription (no resumption).
    let (_, sse, mut subscription) = listening(&fx, &client, json!({})).await;
    drop(sse);
    assert_eq!(subscription.next().await, None);
    assert!(matches!(subscription.ended(), Some(SubscriptionEnd::Failed(_))), "{:?}", subscription.ended());
    fx.quiet().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_closes_its_stream() {
    let fx = Fixture::start().await;
    let client = Arc::new(connect(&fx, builder(), json!({"tools": {}})).await);
    let token = CancellationToken::new();
    let c = client.clone();
    let t = token.clone();
    let call = tokio::spawn(async move {
        c.call_tool_with(CallToolRequestParams::new("slow"), CallOptions::default().cancel_on(t)).await
    });
    let ex = fx.request("tools/call").await;
    let sse = ex.sse();
    sse.send(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}))
        .await;
    token.cancel();
    assert!(matches!(call.await.unwrap(), Err(ClientError::Cancelled)));
    sse.closed().await;
    fx.quiet().await;
}
