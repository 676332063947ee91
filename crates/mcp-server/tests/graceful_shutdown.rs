//! Graceful shutdown over real sockets: requests in flight finish within the grace, those past
//! it are cancelled and answered with an error, new connections are refused, the GET stream
//! ends with a `retry` hint, `/readyz` turns 503 while `/healthz` stays 200; and stdio the
//! same with a request in flight.
#![cfg(all(feature = "http", feature = "stdio"))]

use std::sync::Arc;
use std::time::Duration;

use mcp_jsonrpc::CancellationToken;
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_types::{CallToolResult, ContentBlock, LoggingLevel};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc, oneshot};

const ACCEPT_BOTH: &str = "application/json, text/event-stream";

fn tool(
    name: &str,
    f: impl Fn(Context) -> mcp_jsonrpc::BoxFuture<Result<CallToolResult, ToolError>> + Send + Sync + 'static,
) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), move |_, ctx| f(ctx)).unwrap()
}

/// Reports, when a handler's future is dropped, whether its cancellation had fired.
struct Dropped(CancellationToken, mpsc::UnboundedSender<bool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        let _ = self.1.send(self.0.is_cancelled());
    }
}

/// `gated` logs "started", then answers "done" once `release` is notified; `stubborn` logs
/// "started" and never answers (its drop reports whether it saw its cancellation).
fn test_server(release: Arc<Notify>, dropped: mpsc::UnboundedSender<bool>) -> Server {
    let gated = tool("gated", move |ctx| {
        let release = release.clone();
        Box::pin(async move {
            ctx.log(LoggingLevel::Info, json!("started")).await;
            release.notified().await;
            Ok(CallToolResult::success(vec![ContentBlock::text("done")]))
        })
    });
    let stubborn = tool("stubborn", move |ctx| {
        let dropped = dropped.clone();
        Box::pin(async move {
            let _guard = Dropped(ctx.cancellation().clone(), dropped);
            ctx.log(LoggingLevel::Info, json!("started")).await;
            std::future::pending::<()>().await;
            Ok(CallToolResult::success(vec![]))
        })
    });
    Server::builder("shutdown-test", "1.0.0").tool(gated).tool(stubborn).build().unwrap()
}

/// One parsed SSE event.
#[derive(Debug, Default)]
struct Event {
    retry: Option<u64>,
    data: String,
}

/// Reads SSE events off a response as they come.
struct Sse {
    response: reqwest::Response,
    buf: String,
}

impl Sse {
    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream", "{response:?}");
        Sse { response, buf: String::new() }
    }
    /// The next event, or `None` when the stream ends.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut ev = Event::default();
                let mut any = false;
                for line in block.lines() {
                    let (k, v) = line.split_once(':').unwrap_or((line, ""));
                    let v = v.strip_prefix(' ').unwrap_or(v);
                    match k {
                        "retry" => ev.retry = v.parse().ok(),
                        "data" => ev.data.push_str(v),
                        "id" | "event" => {}
                        _ => continue, // comments (keep-alive)
                    }
                    any = true;
                }
                if any {
                    return Some(ev);
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.response.chunk())
                .await
                .expect("an SSE event or the end in time")
                .ok()??;
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
    /// The next event that carries a message.
    async fn message(&mut self) -> Value {
        loop {
            let ev = self.next().await.expect("another event");
            if !ev.data.is_empty() {
                return serde_json::from_str(&ev.data).unwrap();
            }
        }
    }
    /// What is left of the stream: the `retry` hints of its last events, until it ends.
    async fn rest(&mut self) -> Vec<u64> {
        let mut retries = Vec::new();
        while let Some(ev) = self.next().await {
            assert!(ev.data.is_empty(), "no message after the end: {ev:?}");
            retries.extend(ev.retry);
        }
        retries
    }
}

/// A server served on a listener that stops on a oneshot, and the same endpoint (router) on
/// a second listener that goes on: the health port of the tests.
struct Harness {
    base: String,
    health: String,
    http: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
    release: Arc<Notify>,
    dropped: mpsc::UnboundedReceiver<bool>,
}

async fn start(config: HttpServerConfig) -> Harness {
    let release = Arc::new(Notify::new());
    let (dropped_tx, dropped) = mpsc::unbounded_channel();
    let server = test_server(release.clone(), dropped_tx);
    let config = config.health_routes(true);
    let router = server.http_router(config.clone());
    let (main, health) =
        (TcpListener::bind("127.0.0.1:0").await.unwrap(), TcpListener::bind("127.0.0.1:0").await.unwrap());
    let base = format!("http://{}", main.local_addr().unwrap());
    let health_base = format!("http://{}", health.local_addr().unwrap());
    let health_config = config.clone();
    let health_router = router.clone();
    tokio::spawn(async move { server::serve_router(health, health_router, &health_config).await });
    let (stop, stopped) = oneshot::channel::<()>();
    let served = tokio::spawn(async move {
        server::serve_router_with_shutdown(main, router, &config, async {
            let _ = stopped.await;
        })
        .await
    });
    let http = reqwest::Client::new();
    Harness { base, health: health_base, http, stop: Some(stop), served, release, dropped }
}

impl Harness {
    fn post(&self, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
        self.post_to(&self.base, session, body)
    }
    fn post_to(&self, base: &str, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
        let post = self
            .http
            .post(format!("{base}/mcp"))
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json")
            .body(body.to_string());
        match session {
            Some(s) => post.header("mcp-session-id", s).header("mcp-protocol-version", "2025-11-25"),
            None => post,
        }
    }
    async fn initialize(&self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}});
        let resp = self.post(None, init).send().await.unwrap();
        let session = resp.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let json = resp.headers()["content-type"] == "application/json";
        let result = if json { resp.json().await.unwrap() } else { Sse::new(resp).message().await };
        assert_eq!(result["result"]["protocolVersion"], "2025-11-25");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post(Some(&session), note).send().await.unwrap().status(), 202);
        session
    }
    /// Calls `name` and returns its stream once the handler has logged "started".
    async fn call_started(&self, session: &str, id: i64, name: &str) -> Sse {
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {}}});
        let mut sse = Sse::new(self.post(Some(session), body).send().await.unwrap());
        let log = sse.message().await;
        assert_eq!(log["method"], "notifications/message", "{log}");
        assert_eq!(log["params"]["data"], "started");
        sse
    }
    async fn get_stream(&self, session: &str) -> Sse {
        let get = self
            .http
            .get(format!("{}/mcp", self.base))
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session);
        let mut sse = Sse::new(get.send().await.unwrap());
        assert!(sse.next().await.unwrap().data.is_empty(), "the priming event");
        sse
    }
    async fn health_status(&self, path: &str) -> u16 {
        self.http.get(format!("{}{path}", self.health)).send().await.unwrap().status().as_u16()
    }
    fn signal(&mut self) {
        self.stop.take().unwrap().send(()).unwrap();
    }
    async fn served(self) -> std::io::Result<()> {
        tokio::time::timeout(Duration::from_secs(30), self.served).await.expect("serve returns in time").unwrap()
    }
}

#[tokio::test]
async fn a_request_in_flight_finishes_new_connections_are_refused_and_the_get_stream_ends() {
    let mut h = start(HttpServerConfig::default().shutdown_grace(Duration::from_secs(60))).await;
    let session = h.initialize().await;
    let mut get = h.get_stream(&session).await;
    let mut call = h.call_started(&session, 1, "gated").await;
    assert_eq!((h.health_status("/healthz").await, h.health_status("/readyz").await), (200, 200));

    h.signal();
    // The GET stream ends with a retry hint (after the listener is closed).
    assert_eq!(get.rest().await, vec![1000]);
    assert!(TcpStream::connect(h.base.trim_start_matches("http://")).await.is_err(), "new connections are refused");
    assert_eq!(h.health_status("/readyz").await, 503, "not ready while draining");
    assert_eq!(h.health_status("/healthz").await, 200, "alive while draining");
    assert!(!h.served.is_finished(), "a request is in flight");
    // The endpoint, reached through the port that still serves, takes no new requests.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "gated", "arguments": {}}});
    let refused = h.post_to(&h.health, Some(&session), body).send();
    let refused = refused.await.unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["connection"], "close");
    assert_eq!(refused.headers()["retry-after"], "1");
    assert_eq!(refused.json::<Value>().await.unwrap()["id"], 2);
    // No new GET stream, and no new HTTP+SSE session, while draining.
    let get = h
        .http
        .get(format!("{}/mcp", h.health))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25");
    assert_eq!(get.send().await.unwrap().status(), 503, "a new GET stream while draining");
    let sse = h.http.get(format!("{}/sse", h.health)).header("accept", "text/event-stream");
    assert_eq!(sse.send().await.unwrap().status(), 503, "a new HTTP+SSE session while draining");

    h.release.notify_one();
    let response = call.message().await;
    assert_eq!(response["id"], 1);
    assert_eq!(response["result"]["content"][0]["text"], "done");
    h.served().await.unwrap();
}

#[tokio::test]
async fn with_an_unready_delay_readiness_turns_false_while_everything_is_still_served() {
    let mut h = start(HttpServerConfig::default().unready_delay(Duration::from_secs(3600))).await;
    let session = h.initialize().await;
    let (http, base) = (h.http.clone(), h.base.clone());
    let readyz = |base: String| {
        let http = http.clone();
        async move { http.get(format!("{base}/readyz")).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(readyz(base.clone()).await, 200);
    h.signal();
    // The signal reaches the accept loop: readiness turns false on the serving port itself.
    let mut seen = false;
    for _ in 0..10_000 {
        if readyz(base.clone()).await == 503 {
            seen = true;
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(seen, "/readyz never turned 503 after the signal");
    assert_eq!(h.health_status("/healthz").await, 200);
    // Meanwhile everything else is served: a new client, and a call of the session.
    let fresh = h.initialize().await;
    assert_ne!(fresh, session);
    let mut call = h.call_started(&session, 1, "gated").await;
    h.release.notify_one();
    assert_eq!(call.message().await["result"]["content"][0]["text"], "done");
    assert!(TcpStream::connect(h.base.trim_start_matches("http://")).await.is_ok(), "still accepting");
    assert!(!h.served.is_finished(), "the delay is not over");
    h.served.abort();
}

#[tokio::test]
async fn a_request_past_the_grace_is_cancelled_and_answered_with_an_error() {
    let mut h = start(HttpServerConfig::default().shutdown_grace(Duration::from_millis(200))).await;
    let session = h.initialize().await;
    let mut call = h.call_started(&session, 7, "stubborn").await;
    h.signal();
    let response = call.message().await;
    assert_eq!(response["id"], 7);
    assert_eq!(response["error"]["code"], -32603, "{response}");
    assert!(response["error"]["message"].as_str().unwrap().contains("shutting down"), "{response}");
    assert_eq!(call.rest().await, vec![1000], "the stream ends with a retry hint");
    let dropped = tokio::time::timeout(Duration::from_secs(30), h.dropped.recv()).await.expect("the handler ends");
    assert_eq!(dropped, Some(true), "the handler saw its cancellation");
    h.served().await.unwrap();
}

#[tokio::test]
async fn a_json_request_past_the_grace_gets_an_error_response() {
    let config = HttpServerConfig::default().json_response(true).shutdown_grace(Duration::from_millis(200));
    let mut h = start(config).await;
    let session = h.initialize().await;
    // With JSON responses what a handler sends besides its response goes on the GET stream.
    let mut get = h.get_stream(&session).await;
    let body =
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "stubborn", "arguments": {}}});
    let call = tokio::spawn(h.post(Some(&session), body).send());
    assert_eq!(get.message().await["params"]["data"], "started");
    h.signal();
    let response: Value = call.await.unwrap().unwrap().json().await.unwrap();
    assert_eq!(response["id"], 3);
    assert_eq!(response["error"]["code"], -32603, "{response}");
    let dropped = tokio::time::timeout(Duration::from_secs(30), h.dropped.recv()).await.expect("the handler ends");
    assert_eq!(dropped, Some(true), "the handler saw its cancellation");
    h.served().await.unwrap();
}

#[tokio::test]
async fn stdio_finishes_the_request_in_flight_on_the_signal_then_returns() {
    let release = Arc::new(Notify::new());
    let (dropped, _) = mpsc::unbounded_channel();
    let server = test_server(release.clone(), dropped);
    let (client, server_end) = tokio::io::duplex(64 << 10);
    let (server_read, server_write) = tokio::io::split(server_end);
    let transport = mcp_transport_stdio::StreamTransport::new(server_read, server_write, 1 << 20);
    let (stop, stopped) = oneshot::channel::<()>();
    let (signalled_tx, signalled) = oneshot::channel::<()>();
    // The test runs on one thread: once the signal future has completed, `serve_until` has
    // closed the connection (it does so in the same poll).
    let served = tokio::spawn(async move {
        server
            .serve_until(transport, async {
                let _ = stopped.await;
                let _ = signalled_tx.send(());
            })
            .await
    });
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    let mut send = async |v: Value| write.write_all(format!("{v}\n").as_bytes()).await.unwrap();
    send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
    .await;
    let mut next =
        async || -> Option<Value> { lines.next_line().await.unwrap().map(|l| serde_json::from_str(&l).unwrap()) };
    assert_eq!(next().await.unwrap()["id"], 0);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "gated", "arguments": {}}}))
        .await;
    assert_eq!(next().await.unwrap()["params"]["data"], "started");

    stop.send(()).unwrap();
    signalled.await.unwrap();
    assert!(!served.is_finished(), "a request is in flight");
    release.notify_one();
    let response = next().await.unwrap();
    assert_eq!(response["id"], 1);
    assert_eq!(response["result"]["content"][0]["text"], "done");
    tokio::time::timeout(Duration::from_secs(30), served).await.expect("serve_until returns").unwrap();
    assert!(next().await.is_none(), "the connection is closed");
}

#[tokio::test]
async fn an_http_sse_request_past_the_grace_is_cancelled_and_its_stream_ends() {
    let mut h = start(HttpServerConfig::default().shutdown_grace(Duration::from_millis(200))).await;
    let get = h.http.get(format!("{}/sse", h.base)).header("accept", "text/event-stream").send();
    let mut stream = Sse::new(get.await.unwrap());
    let endpoint = stream.next().await.unwrap().data;
    assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");
    let post = |body: Value| {
        let post = h.http.post(format!("{}{endpoint}", h.base)).header("content-type", "application/json");
        post.body(body.to_string()).send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    assert_eq!(post(init).await.unwrap().status(), 202);
    assert_eq!(stream.message().await["id"], 0);
    assert_eq!(post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await.unwrap().status(), 202);
    let call =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "stubborn", "arguments": {}}});
    assert_eq!(post(call).await.unwrap().status(), 202);
    assert_eq!(stream.message().await["params"]["data"], "started");

    h.signal();
    assert_eq!(stream.rest().await, vec![1000], "the stream ends with a retry hint");
    let dropped = tokio::time::timeout(Duration::from_secs(30), h.dropped.recv()).await.expect("the handler ends");
    assert_eq!(dropped, Some(true), "the handler saw its cancellation");
    h.served().await.unwrap();
}

#[tokio::test]
async fn a_stateless_request_past_the_grace_ends_with_its_connection() {
    let config = HttpServerConfig::default().stateless(true).shutdown_grace(Duration::from_millis(100));
    let mut h = start(config).await;
    let body =
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "stubborn", "arguments": {}}});
    let post = h.post(None, body).header("mcp-protocol-version", "2025-06-18");
    let mut call = Sse::new(post.send().await.unwrap());
    assert_eq!(call.message().await["params"]["data"], "started");
    h.signal();
    // No session to answer in: the connection is dropped, the client is not left hanging.
    assert_eq!(call.rest().await, Vec::<u64>::new());
    h.served().await.unwrap();
}
