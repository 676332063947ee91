//! A scripted MCP server over real HTTP (axum on a local port), for testing the HTTP client
//! transport: it behaves the way the specification lets servers behave (JSON or SSE answers,
//! streams closed early with a `retry`, sessions that expire, 401s, HTTP+SSE), records
//! every HTTP request it gets, and lets a test wait for what it expects without sleeping.

#![allow(dead_code)] // each test file uses part of it

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::{any, get, post};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc, oneshot, watch};

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct Options {
    /// Answer requests with one JSON body (otherwise: an SSE stream).
    pub json: bool,
    /// The revision to answer `initialize` with (otherwise: the one offered).
    pub protocol_version: Option<&'static str>,
    /// Require `Authorization: Bearer <token>`.
    pub token: Option<&'static str>,
    /// The `retry` of the stream that `drop_stream` closes.
    pub retry_ms: u64,
    /// Offer a GET stream (otherwise 405).
    pub get_stream: bool,
    /// End each GET stream right after its priming event.
    pub get_stream_ends_at_once: bool,
    /// Answer the first this many GETs with 409 (as a server does that still holds a stream
    /// the client lost).
    pub get_conflicts: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            json: false,
            protocol_version: None,
            token: None,
            retry_ms: 100,
            get_stream: true,
            get_stream_ends_at_once: false,
            get_conflicts: 0,
        }
    }
}

/// One HTTP request the server got.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Option<Value>,
    pub at: Instant,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The JSON-RPC method of the body, if any.
    pub fn rpc_method(&self) -> Option<&str> {
        self.body.as_ref()?.get("method")?.as_str()
    }
}

#[derive(Default)]
struct Inner {
    log: Vec<Seen>,
    sessions: Vec<String>,
    sessions_issued: u64,
    events_issued: u64,
    /// Answers waiting for a GET with `Last-Event-ID`: event id → response.
    resumable: HashMap<String, Value>,
    /// When `drop_stream` closed its stream.
    dropped_at: Option<Instant>,
    get_streams: Vec<mpsc::Sender<Bytes>>,
    /// The client's answers to our requests, by id.
    answers: HashMap<String, oneshot::Sender<Value>>,
    holding: usize,
    max_holding: usize,
    conflicts_given: u32,
    sse_streams: HashMap<String, mpsc::Sender<Bytes>>,
}

struct Shared {
    options: Options,
    inner: Mutex<Inner>,
    changed: watch::Sender<u64>,
    release: Semaphore,
}

/// The running server.
pub struct Fixture {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

impl Fixture {
    pub async fn start(options: Options) -> Fixture {
        let shared = Arc::new(Shared {
            options,
            inner: Mutex::new(Inner::default()),
            changed: watch::Sender::new(0),
            release: Semaphore::new(0),
        });
        let app = Router::new()
            .route("/mcp", any(mcp))
            .route("/sse", get(sse_stream))
            .route("/messages", post(sse_message))
            .route("/refusing/{status}", get(sse_stream).post(refuse))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Fixture { addr, shared }
    }

    /// The Streamable HTTP endpoint.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The HTTP+SSE endpoint.
    pub fn sse_url(&self) -> String {
        format!("http://{}/sse", self.addr)
    }

    /// An HTTP+SSE endpoint that answers POSTs with `status` (as old servers answer a POST
    /// on their SSE URL, each the way its framework does).
    pub fn refusing_sse_url(&self, status: u16) -> String {
        format!("http://{}/refusing/{status}", self.addr)
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.shared.inner()
    }

    /// Every request so far.
    pub fn log(&self) -> Vec<Seen> {
        self.inner().log.clone()
    }

    /// Waits until `pred` holds of the log (at most 10 s; the server wakes waiters on every
    /// change).
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&[Seen]) -> bool) -> Vec<Seen> {
        let mut changes = self.shared.changed.subscribe();
        let wait = async {
            loop {
                {
                    let inner = self.inner();
                    if pred(&inner.log) {
                        return inner.log.clone();
                    }
                }
                changes.changed().await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .unwrap_or_else(|_| panic!("no {what} within 10 s; log: {:#?}", self.log()))
    }

    /// Waits until `n` calls of `hold` are held at once.
    pub async fn wait_holding(&self, n: usize) {
        let mut changes = self.shared.changed.subscribe();
        let wait = async {
            while self.inner().holding < n {
                changes.changed().await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait).await.expect("calls of `hold` did not arrive");
    }

    /// Waits until a GET stream is open.
    pub async fn wait_get_stream(&self) {
        let mut changes = self.shared.changed.subscribe();
        let wait = async {
            while self.inner().get_streams.is_empty() {
                changes.changed().await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait).await.expect("no GET stream");
    }

    /// Lets `n` calls of `hold` answer.
    pub fn release(&self, n: usize) {
        self.shared.release.add_permits(n);
    }

    /// The most calls of `hold` held at once.
    pub fn max_holding(&self) -> usize {
        self.inner().max_holding
    }

    /// When `drop_stream` closed its stream.
    pub fn dropped_at(&self) -> Option<Instant> {
        self.inner().dropped_at
    }

    /// Forgets every session: requests with their ids get 404.
    pub fn expire_sessions(&self) {
        self.inner().sessions.clear();
    }

    /// Sends a notification on every open GET stream.
    pub async fn notify_get_streams(&self, notification: Value) -> usize {
        let streams = self.inner().get_streams.clone();
        let mut sent = 0;
        for s in streams {
            if s.send(sse_event(None, None, &notification)).await.is_ok() {
                sent += 1;
            }
        }
        sent
    }

    /// Ends every GET stream.
    pub fn end_get_streams(&self) {
        self.inner().get_streams.clear();
    }

    /// Ends every HTTP+SSE stream.
    pub fn end_sse_streams(&self) {
        self.inner().sse_streams.clear();
    }
}

impl Shared {
    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock_unpoisoned()
    }

    fn touch(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    fn record(&self, method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) {
        let seen = Seen {
            method: method.clone(),
            path: uri.path_and_query().map(|p| p.to_string()).unwrap_or_default(),
            headers: headers.clone(),
            body: serde_json::from_slice(body).ok(),
            at: Instant::now(),
        };
        self.inner().log.push(seen);
        self.touch();
    }

    fn next_event_id(&self) -> String {
        let mut inner = self.inner();
        inner.events_issued += 1;
        format!("e-{}", inner.events_issued)
    }

    fn authorized(&self, headers: &HeaderMap) -> Option<Response> {
        let token = self.options.token?;
        let expected = format!("Bearer {token}");
        if headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(expected.as_str()) {
            return None;
        }
        Some(
            Response::builder()
                .status(StatusCode::UNAUTHORIZED)
                .header("www-authenticate", r#"Bearer resource_metadata="http://example.com/prm""#)
                .body(Body::from("token required"))
                .unwrap(),
        )
    }
}

fn sse_event(id: Option<&str>, retry: Option<u64>, message: &Value) -> Bytes {
    let mut text = String::new();
    if let Some(id) = id {
        text.push_str(&format!("id: {id}\n"));
    }
    if let Some(r) = retry {
        text.push_str(&format!("retry: {r}\n"));
    }
    text.push_str(&format!("event: message\ndata: {message}\n\n"));
    Bytes::from(text)
}

fn sse_response(rx: mpsc::Receiver<Bytes>, session: Option<&str>) -> Response {
    let stream =
        futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx)) });
    let mut builder =
        Response::builder().header("content-type", "text/event-stream").header("cache-control", "no-cache");
    if let Some(s) = session {
        builder = builder.header("mcp-session-id", s);
    }
    builder.body(Body::from_stream(stream)).unwrap()
}

fn json_response(body: &Value, session: Option<&str>) -> Response {
    let mut builder = Response::builder().header("content-type", "application/json");
    if let Some(s) = session {
        builder = builder.header("mcp-session-id", s);
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

fn status(code: StatusCode, body: &str) -> Response {
    Response::builder().status(code).body(Body::from(body.to_owned())).unwrap()
}

fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn text_result(id: &Value, text: &str) -> Value {
    result(id, json!({"content": [{"type": "text", "text": text}]}))
}

fn tools() -> Value {
    let names = ["add", "batch", "elicit", "drop_stream", "drop_no_id", "fail500", "hold", "big", "notify_get"];
    let tools: Vec<Value> = names.iter().map(|n| json!({"name": n, "inputSchema": {"type": "object"}})).collect();
    json!({ "tools": tools })
}

fn initialize_result(options: &Options, request: &Value) -> Value {
    let offered = request["params"]["protocolVersion"].as_str().unwrap_or("2025-11-25");
    json!({
        "protocolVersion": options.protocol_version.unwrap_or(offered),
        "capabilities": {"tools": {}, "logging": {}},
        "serverInfo": {"name": "fixture", "version": "1.0"}
    })
}

/// The answer to a request that needs nothing but its params.
fn simple_answer(options: &Options, request: &Value) -> Option<Value> {
    let id = &request["id"];
    let params = &request["params"];
    Some(match request["method"].as_str()? {
        "initialize" => result(id, initialize_result(options, request)),
        "ping" => result(id, json!({})),
        "tools/list" => result(id, tools()),
        "tools/call" if params["name"] == "add" => {
            let sum =
                params["arguments"]["a"].as_f64().unwrap_or(0.0) + params["arguments"]["b"].as_f64().unwrap_or(0.0);
            text_result(id, &format!("sum: {sum}"))
        }
        "tools/call" if params["name"] == "big" => text_result(id, &"x".repeat(1000)),
        _ => return None,
    })
}

async fn mcp(State(shared): State<Arc<Shared>>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    shared.record(&method, &uri, &headers, &body);
    if let Some(refusal) = shared.authorized(&headers) {
        return refusal;
    }
    let session = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let known = session.as_ref().is_some_and(|s| shared.inner().sessions.contains(s));
    match method {
        Method::POST => post_message(shared, session, known, &body).await,
        Method::GET | Method::DELETE => {
            match (&session, known) {
                (None, _) => return status(StatusCode::BAD_REQUEST, "no session id"),
                (Some(_), false) => return status(StatusCode::NOT_FOUND, "no such session"),
                _ => {}
            }
            if method == Method::DELETE {
                let s = session.unwrap_or_default();
                shared.inner().sessions.retain(|x| *x != s);
                return status(StatusCode::OK, "");
            }
            get_stream(&shared, &headers, session.as_deref())
        }
        _ => status(StatusCode::METHOD_NOT_ALLOWED, ""),
    }
}

/// A POST: `initialize` opens a session; anything else needs one.
async fn post_message(shared: Arc<Shared>, session: Option<String>, known: bool, body: &Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(body) else {
        return status(StatusCode::BAD_REQUEST, "not JSON");
    };
    if request["method"] == "initialize" {
        let id = {
            let mut inner = shared.inner();
            inner.sessions_issued += 1;
            let id = format!("session-{}", inner.sessions_issued);
            inner.sessions.push(id.clone());
            id
        };
        let answer = simple_answer(&shared.options, &request).unwrap();
        return json_response(&answer, Some(&id));
    }
    match (&session, known) {
        (None, _) => return status(StatusCode::BAD_REQUEST, "no session id"),
        (Some(_), false) => return status(StatusCode::NOT_FOUND, "no such session"),
        _ => {}
    }
    let session = session.as_deref();
    if request.get("method").is_none() {
        // The client's answer to one of our requests.
        let key = request["id"].to_string();
        if let Some(tx) = shared.inner().answers.remove(&key) {
            let _ = tx.send(request);
        }
        return status(StatusCode::ACCEPTED, "");
    }
    if request.get("id").is_none() {
        return status(StatusCode::ACCEPTED, "");
    }
    let tool = request["params"]["name"].as_str().unwrap_or_default().to_owned();
    match (request["method"].as_str().unwrap_or_default(), tool.as_str()) {
        ("tools/call", tool) if TOOLS.contains(&tool) => call_tool(&shared, tool, request["id"].clone(), session).await,
        _ => match simple_answer(&shared.options, &request) {
            Some(a) => answer(&shared, &a, session),
            None => {
                let id = &request["id"];
                let error =
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}});
                answer(&shared, &error, session)
            }
        },
    }
}

/// The tools [`call_tool`] answers (the others are [`simple_answer`]'s).
const TOOLS: [&str; 8] = ["fail500", "accepted", "batch", "drop_stream", "drop_no_id", "elicit", "hold", "notify_get"];

/// A call of one of [`TOOLS`]: each answers in its own way (an error status, a batch, a stream
/// that drops, a request of the server's, ...).
async fn call_tool(shared: &Arc<Shared>, tool: &str, id: Value, session: Option<&str>) -> Response {
    match tool {
        "fail500" => status(StatusCode::INTERNAL_SERVER_ERROR, "boom"),
        // Wrong: a request is never answered 202.
        "accepted" => status(StatusCode::ACCEPTED, ""),
        "batch" => {
            let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "from a batch"}});
            json_response(&json!([log, text_result(&id, "batched")]), session)
        }
        "drop_stream" => {
            let (tx, rx) = mpsc::channel(4);
            let event_id = shared.next_event_id();
            shared.inner().resumable.insert(event_id.clone(), text_result(&id, "resumed"));
            let retry = shared.options.retry_ms;
            let shared = shared.clone();
            tokio::spawn(async move {
                let prime = format!("id: {event_id}\nretry: {retry}\ndata: \n\n");
                let _ = tx.send(Bytes::from(prime)).await;
                shared.inner().dropped_at = Some(Instant::now());
                shared.touch();
                drop(tx);
            });
            sse_response(rx, session)
        }
        "drop_no_id" => {
            let (tx, rx) = mpsc::channel(4);
            tokio::spawn(async move {
                let _ = tx.send(Bytes::from_static(b": nothing to resume from\n\n")).await;
            });
            sse_response(rx, session)
        }
        "elicit" => {
            let (tx, rx) = mpsc::channel(4);
            let (answer_tx, answer_rx) = oneshot::channel();
            let ask_id = json!("ask-1");
            shared.inner().answers.insert(ask_id.to_string(), answer_tx);
            tokio::spawn(async move {
                let ask = json!({"jsonrpc": "2.0", "id": ask_id, "method": "elicitation/create", "params": {
                    "message": "Your name?",
                    "requestedSchema": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "color": {"type": "string", "default": "green"}
                    }}
                }});
                let _ = tx.send(sse_event(Some("ask"), None, &ask)).await;
                let Ok(answer) = answer_rx.await else { return };
                let text = answer["result"]["content"].to_string();
                let _ = tx.send(sse_event(Some("answer"), None, &text_result(&id, &text))).await;
            });
            sse_response(rx, session)
        }
        "hold" => {
            {
                let mut inner = shared.inner();
                inner.holding += 1;
                inner.max_holding = inner.max_holding.max(inner.holding);
            }
            shared.touch();
            let permit = shared.release.acquire().await.unwrap();
            permit.forget();
            shared.inner().holding -= 1;
            shared.touch();
            answer(shared, &text_result(&id, "released"), session)
        }
        "notify_get" => {
            let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "on the GET stream"}});
            let streams = shared.inner().get_streams.clone();
            let mut sent = 0;
            for s in streams {
                if s.send(sse_event(None, None, &log)).await.is_ok() {
                    sent += 1;
                }
            }
            answer(shared, &text_result(&id, &format!("sent on {sent} streams")), session)
        }
        _ => status(StatusCode::INTERNAL_SERVER_ERROR, "not one of TOOLS"),
    }
}

/// A one-message answer: JSON, or an SSE stream with a priming event.
fn answer(shared: &Arc<Shared>, message: &Value, session: Option<&str>) -> Response {
    if shared.options.json {
        return json_response(message, session);
    }
    let (tx, rx) = mpsc::channel(4);
    let prime = Bytes::from(format!("id: {}\ndata: \n\n", shared.next_event_id()));
    let event = sse_event(Some(&shared.next_event_id()), None, message);
    tokio::spawn(async move {
        let _ = tx.send(prime).await;
        let _ = tx.send(event).await;
    });
    sse_response(rx, session)
}

/// GET: a resumption (with `Last-Event-ID`) or the standalone stream.
fn get_stream(shared: &Arc<Shared>, headers: &HeaderMap, session: Option<&str>) -> Response {
    let last = headers.get("last-event-id").and_then(|v| v.to_str().ok());
    if let Some(last) = last.filter(|id| !id.starts_with("get-")) {
        let Some(message) = shared.inner().resumable.remove(last) else {
            return status(StatusCode::NOT_FOUND, "unknown event id");
        };
        let (tx, rx) = mpsc::channel(4);
        let event = sse_event(Some(&shared.next_event_id()), None, &message);
        tokio::spawn(async move {
            let _ = tx.send(event).await;
        });
        return sse_response(rx, session);
    }
    if !shared.options.get_stream {
        return status(StatusCode::METHOD_NOT_ALLOWED, "");
    }
    {
        let mut inner = shared.inner();
        if inner.conflicts_given < shared.options.get_conflicts {
            inner.conflicts_given += 1;
            return status(StatusCode::CONFLICT, "a stream is open");
        }
    }
    // The standalone stream (or its continuation): it opens with an id and a `retry`.
    let (tx, rx) = mpsc::channel(16);
    let prime = format!("id: get-{}\nretry: {}\ndata: \n\n", shared.next_event_id(), shared.options.retry_ms);
    tx.try_send(Bytes::from(prime)).unwrap();
    if !shared.options.get_stream_ends_at_once {
        shared.inner().get_streams.push(tx);
    }
    shared.touch();
    sse_response(rx, session)
}

async fn sse_stream(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap) -> Response {
    shared.record(&Method::GET, &uri, &headers, b"");
    let (tx, rx) = mpsc::channel(16);
    let id = format!("sse-{}", shared.inner().sse_streams.len() + 1);
    let _ = tx.send(Bytes::from(format!("event: endpoint\ndata: /messages?sessionId={id}\n\n"))).await;
    shared.inner().sse_streams.insert(id, tx);
    sse_response(rx, None)
}

/// A POST to an HTTP+SSE endpoint: refused with the status in the path.
async fn refuse(
    State(shared): State<Arc<Shared>>,
    Path(code): Path<u16>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    shared.record(&Method::POST, &uri, &headers, &body);
    status(StatusCode::from_u16(code).unwrap(), "not here")
}

async fn sse_message(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    shared.record(&Method::POST, &uri, &headers, &body);
    let id = uri.query().and_then(|q| q.strip_prefix("sessionId=")).unwrap_or_default().to_owned();
    let Some(stream) = shared.inner().sse_streams.get(&id).cloned() else {
        return status(StatusCode::NOT_FOUND, "no such session");
    };
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return status(StatusCode::BAD_REQUEST, "not JSON");
    };
    if let Some(answer) = simple_answer(&shared.options, &request) {
        let _ = stream.send(sse_event(None, None, &answer)).await;
    }
    status(StatusCode::ACCEPTED, "Accepted")
}
