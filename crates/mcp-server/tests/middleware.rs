//! Middleware (issue 32) over real transports: in-memory connections served as stdio's are
//! (sessions of 2025-11-25, and 2026-07-28 requests with no session), and Streamable HTTP on a
//! real socket. The chain: order, short-circuit, params rewritten, results transformed,
//! notifications dropped; the context a layer sees; and each ready layer (logging, rate limit,
//! per-tool concurrency and timeout, `tower` layers).
#![cfg(feature = "http")]

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_jsonrpc::transport::memory;
use mcp_jsonrpc::{ErrorObject, Reply};
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::middleware::limit::{ToolLimit, ToolLimits};
use mcp_server::middleware::log::RequestLog;
use mcp_server::middleware::{McpNotification, McpRequest, MethodKind, Middleware, Next, ToolCallView, result_of};
use mcp_server::{Server, ServerBuilder, ToolDef};
use mcp_test_support::{Session, Wire};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc};

const STATELESS: &str = "2026-07-28";

/// The `_meta` of a 2026-07-28 request.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// `echo`: answers its `text` argument.
fn echo() -> ToolDef {
    ToolDef::new("echo", json!({"type": "object"}), |args, _| async move {
        let text = args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
    .unwrap()
}

/// A session of 2025-11-25 over an in-memory connection (served as stdio's is).
async fn session(server: &Server) -> Session {
    let (a, b) = memory(64);
    let _peer = server.connect(a);
    let mut session = Session::new(Wire::new(b), "2025-11-25");
    session
        .result(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    session
}

/// A connection for 2026-07-28 requests (no handshake).
fn stateless(server: &Server) -> Session {
    let (a, b) = memory(64);
    let _peer = server.connect(a);
    Session::new(Wire::new(b), STATELESS)
}

/// The text of a tool result's first block.
fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {result}"))
}

// ---------------------------------------------------------------------------------------------
// The chain.

/// Logs its name on the way in and out.
struct Trace {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}

impl Middleware for Trace {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        Box::pin(async move {
            self.log.lock().unwrap().push(format!("{}>{}", self.name, req.method()));
            let reply = next.run(req).await;
            self.log.lock().unwrap().push(format!("<{}", self.name));
            reply
        })
    }
}

/// Answers a call of `secret` itself.
struct Guard;

impl Middleware for Guard {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        if let Some(Ok(call)) = req.tool_call()
            && call.name == "secret"
        {
            return Box::pin(std::future::ready(Err(ErrorObject::invalid_params("forbidden by the guard"))));
        }
        next.run(req)
    }
}

/// Upper-cases the `text` argument of `echo`.
struct Upper;

impl Middleware for Upper {
    fn request<'a>(&'a self, mut req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        if let Some(Ok(ToolCallView { name, arguments: Some(mut arguments) })) = req.tool_call()
            && name == "echo"
        {
            let upper = arguments.get("text").and_then(Value::as_str).map(str::to_uppercase);
            if let Some(upper) = upper {
                arguments.insert("text".into(), upper.into());
            }
            req.set_tool_call(ToolCallView { name, arguments: Some(arguments) }).unwrap();
        }
        next.run(req)
    }
}

/// Stamps `_meta.stamp` on every `tools/call` result.
struct Stamp;

impl Middleware for Stamp {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        let cx = req.cx();
        let is_call = req.tool_call().is_some();
        Box::pin(async move {
            let reply = next.run(req).await;
            let Some(result) = result_of(&reply).filter(|_| is_call) else { return reply };
            let mut result: Value = serde_json::from_str(result.get()).unwrap();
            result["_meta"]["stamp"] = json!("mw");
            cx.respond_json(&result)
        })
    }

    fn notification(&self, notification: &McpNotification<'_>) -> bool {
        notification.method != "acme/drop"
    }
}

/// A server with the chain Trace a, Trace b, Guard, Upper, Stamp; and a `secret` tool that
/// counts its calls.
fn chained(log: &Arc<Mutex<Vec<String>>>, secret_calls: &Arc<AtomicUsize>) -> Server {
    let calls = secret_calls.clone();
    let secret = ToolDef::new("secret", json!({"type": "object"}), move |_, _| {
        calls.fetch_add(1, Ordering::SeqCst);
        async { Ok(CallToolResult::success(vec![ContentBlock::text("the secret")])) }
    })
    .unwrap();
    Server::builder("mw", "1.0")
        .tools([echo(), secret])
        .middleware(Trace { name: "a", log: log.clone() })
        .middleware(Trace { name: "b", log: log.clone() })
        .middleware(Guard)
        .middleware(Upper)
        .middleware(Stamp)
        .build()
        .unwrap()
}

/// What the chain does to a request, in a session and in 2026-07-28: the layers in the order
/// they were added (the first outermost), the guard answering without the tool, the arguments
/// rewritten before the tool, the result stamped after it.
#[tokio::test]
async fn the_chain_runs_in_order_short_circuits_rewrites_and_transforms() {
    for revision in ["2025-11-25", STATELESS] {
        let log = Arc::new(Mutex::new(Vec::new()));
        let secret_calls = Arc::new(AtomicUsize::new(0));
        let server = chained(&log, &secret_calls);
        let mut client = if revision == STATELESS { stateless(&server) } else { session(&server).await };
        let with_meta = |mut params: Value| {
            if revision == STATELESS {
                params["_meta"] = meta();
            }
            params
        };
        log.lock().unwrap().clear();

        let result = client.result("tools/call", with_meta(json!({"name": "echo", "arguments": {"text": "hi"}}))).await;
        assert_eq!(text(&result), "HI", "{revision}: the arguments rewritten: {result}");
        assert_eq!(result["_meta"]["stamp"], "mw", "{revision}: the result transformed: {result}");
        if revision == STATELESS {
            // Still the revision's result: the server's info where the server put it.
            assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mw", "{result}");
        }
        assert_eq!(*log.lock().unwrap(), ["a>tools/call", "b>tools/call", "<b", "<a"], "{revision}");

        let error = client.error("tools/call", with_meta(json!({"name": "secret", "arguments": {}}))).await;
        assert_eq!(error["message"], "invalid params: forbidden by the guard", "{revision}");
        assert_eq!(secret_calls.load(Ordering::SeqCst), 0, "{revision}: the guard answered, not the tool");

        // Other methods pass through every layer untouched.
        log.lock().unwrap().clear();
        let tools = client.result("tools/list", with_meta(json!({}))).await;
        assert_eq!(tools["tools"].as_array().unwrap().len(), 2, "{revision}");
        assert!(tools["_meta"].get("stamp").is_none(), "{revision}");
        assert_eq!(*log.lock().unwrap(), ["a>tools/list", "b>tools/list", "<b", "<a"], "{revision}");
    }
}

/// A layer drops a notification before the server sees it; the others reach the server.
#[tokio::test]
async fn a_layer_drops_notifications() {
    let counts = Arc::new(Mutex::new(Vec::new()));
    let (drop_seen, keep_seen) = (counts.clone(), counts.clone());
    let server = Server::builder("mw", "1.0")
        .tool(echo())
        .raw_notification_handler("acme/drop", move |_, _| drop_seen.lock().unwrap().push("drop"))
        .raw_notification_handler("acme/keep", move |_, _| keep_seen.lock().unwrap().push("keep"))
        .middleware(Stamp)
        .build()
        .unwrap();
    let mut client = session(&server).await;
    client.send(json!({"jsonrpc": "2.0", "method": "acme/drop"})).await;
    client.send(json!({"jsonrpc": "2.0", "method": "acme/keep"})).await;
    // Notifications are handled in order on the reader, before the ping is answered.
    client.wire.expect_silence(99).await;
    assert_eq!(*counts.lock().unwrap(), ["keep"]);
}

// ---------------------------------------------------------------------------------------------
// Over HTTP.

/// What a layer saw of each request: session id, client address, revision, statelessness.
type Sighting = (Option<String>, Option<std::net::IpAddr>, String, bool);

#[derive(Default)]
struct Seen(Mutex<Vec<Sighting>>);

struct Record(Arc<Seen>);

impl Middleware for Record {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        let cx = req.cx();
        self.0.0.lock().unwrap().push((
            cx.session_id().map(str::to_owned),
            cx.client_address(),
            cx.revision().as_str().to_owned(),
            cx.is_stateless(),
        ));
        next.run(req)
    }
}

struct Http {
    url: String,
    http: reqwest::Client,
}

impl Http {
    async fn start(builder: ServerBuilder) -> Http {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://127.0.0.1:{}/mcp", listener.local_addr().unwrap().port());
        let config = HttpServerConfig::default().json_response(true);
        tokio::spawn(server::serve_listener(Arc::new(builder.build().unwrap()), config, listener));
        Http { url, http: reqwest::Client::new() }
    }

    /// POSTs `body`: the answer's session id and JSON body.
    async fn post(&self, session: Option<&str>, version: &str, body: Value) -> (Option<String>, Value) {
        let mut post = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", version);
        if let Some(session) = session {
            post = post.header("mcp-session-id", session);
        }
        if version == STATELESS {
            post = post.header("mcp-method", body["method"].as_str().unwrap());
            if let Some(name) = body["params"]["name"].as_str() {
                post = post.header("mcp-name", name);
            }
        }
        let response = post.body(body.to_string()).send().await.unwrap();
        let id = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
        let text = response.text().await.unwrap();
        (id, if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap() })
    }

    /// A new session of 2025-11-25: its id.
    async fn session(&self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
        let (id, _) = self.post(None, "2025-11-25", init).await;
        let id = id.expect("a session id");
        self.post(Some(&id), "2025-11-25", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        id
    }

    /// Calls `echo` in `session`, or as a 2026-07-28 request without one.
    async fn call(&self, session: Option<&str>) -> Value {
        match session {
            Some(id) => {
                let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "hi"}}});
                self.post(Some(id), "2025-11-25", call).await.1
            }
            None => {
                let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta()}});
                self.post(None, STATELESS, call).await.1
            }
        }
    }
}

/// Over Streamable HTTP the chain runs for a session's requests and for 2026-07-28 ones, and a
/// layer sees the session, the client's address and the revision.
#[tokio::test]
async fn over_http_a_layer_sees_the_session_address_and_revision() {
    let seen = Arc::new(Seen::default());
    let log = Arc::new(Mutex::new(Vec::new()));
    let http = Http::start(
        Server::builder("mw", "1.0")
            .tool(echo())
            .middleware(Record(seen.clone()))
            .middleware(Upper)
            .middleware(Trace { name: "t", log: log.clone() }),
    )
    .await;
    let id = http.session().await;
    let answer = http.call(Some(&id)).await;
    assert_eq!(text(&answer["result"]), "HI", "{answer}");
    let answer = http.call(None).await;
    assert_eq!(text(&answer["result"]), "HI", "{answer}");
    let localhost = Some("127.0.0.1".parse().unwrap());
    assert_eq!(
        *seen.0.lock().unwrap(),
        [
            // `initialize` passes the layers too.
            (Some(id.clone()), localhost, "2025-11-25".to_owned(), false),
            (Some(id), localhost, "2025-11-25".to_owned(), false),
            (None, localhost, STATELESS.to_owned(), true)
        ]
    );
    assert_eq!(*log.lock().unwrap(), ["t>initialize", "<t", "t>tools/call", "<t", "t>tools/call", "<t"]);
}

// ---------------------------------------------------------------------------------------------
// Logging.

/// One event per request, with its method, tool, duration and (for an error) code.
#[tokio::test]
async fn request_log_logs_each_request_with_its_duration() {
    let (spans, _guard) = mcp_test_support::spans::Spans::install();
    let server = Server::builder("mw", "1.0").tool(echo()).middleware(RequestLog::new()).build().unwrap();
    let mut client = session(&server).await;
    client.result("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}})).await;
    client.error("tools/call", json!({"name": "nope", "arguments": {}})).await;
    let mut client = stateless(&server);
    client.result("tools/list", json!({"_meta": meta()})).await;

    let served = spans.event_fields("request served");
    assert_eq!(served.len(), 3, "{served:?}");
    assert_eq!((served[0]["method"].as_str(), served[0]["tool"].as_str()), ("initialize", ""));
    assert_eq!((served[1]["method"].as_str(), served[1]["tool"].as_str()), ("tools/call", "echo"));
    assert!(served[1]["duration_ms"].parse::<f64>().unwrap() >= 0.0, "{served:?}");
    assert_eq!((served[2]["method"].as_str(), served[2]["tool"].as_str()), ("tools/list", ""));
    let failed = spans.event_fields("request failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!((failed[0]["tool"].as_str(), failed[0]["error_code"].as_str()), ("nope", "-32602"));
}

// ---------------------------------------------------------------------------------------------
// Per-tool limits.

/// A tool that reports each call's start and waits for a release; tells when a call's future
/// is dropped.
struct Gate {
    entered: mpsc::UnboundedReceiver<()>,
    release: Arc<Notify>,
    dropped: Arc<AtomicUsize>,
}

struct DropCount(Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn gated(name: &str) -> (ToolDef, Gate) {
    let (tx, entered) = mpsc::unbounded_channel();
    let (release, dropped) = (Arc::new(Notify::new()), Arc::new(AtomicUsize::new(0)));
    let (r, d) = (release.clone(), dropped.clone());
    let tool = ToolDef::new(name, json!({"type": "object"}), move |_, _| {
        let (tx, release, dropped) = (tx.clone(), r.clone(), d.clone());
        async move {
            let _count = DropCount(dropped);
            tx.send(()).unwrap();
            release.notified().await;
            Ok(CallToolResult::success(vec![ContentBlock::text("done")]))
        }
    })
    .unwrap();
    (tool, Gate { entered, release, dropped })
}

fn call(id: i64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {}}})
}

/// At most one call of `slow` at a time: the second waits for the first to finish, while
/// other tools are served meanwhile.
#[tokio::test]
async fn tool_limits_bound_the_calls_of_a_tool_at_once() {
    let (slow, mut gate) = gated("slow");
    let one = ToolLimit { max_concurrent: Some(1), timeout: None };
    let server = Server::builder("mw", "1.0")
        .tools([slow, echo()])
        .middleware(ToolLimits::new().tool("slow", one))
        .build()
        .unwrap();
    let mut client = session(&server).await;
    client.send(call(1, "slow")).await;
    client.send(call(2, "slow")).await;
    gate.entered.recv().await.unwrap();
    // Another tool is not held up; and the second call of `slow` is still waiting.
    client.send(call(3, "echo")).await;
    assert_eq!(client.recv().await["id"], 3);
    assert!(gate.entered.try_recv().is_err(), "the second call of `slow` started beside the first");
    gate.release.notify_one();
    assert_eq!(client.recv().await["id"], 1);
    gate.entered.recv().await.unwrap();
    gate.release.notify_one();
    let second = client.recv().await;
    assert_eq!((second["id"].as_i64(), text(&second["result"])), (Some(2), "done"));
}

/// A call of `slow` past its timeout: an error result, its handler's future dropped; other
/// tools are not bound by it.
#[tokio::test(start_paused = true)]
async fn tool_limits_time_a_call_out_with_an_error_result() {
    let (slow, mut gate) = gated("slow");
    let limits =
        ToolLimits::new().tool("slow", ToolLimit { max_concurrent: None, timeout: Some(Duration::from_secs(5)) });
    let server = Server::builder("mw", "1.0").tools([slow, echo()]).middleware(limits).build().unwrap();
    for revision in ["2025-11-25", STATELESS] {
        let mut client = if revision == STATELESS { stateless(&server) } else { session(&server).await };
        let mut params = json!({"name": "slow", "arguments": {}});
        if revision == STATELESS {
            params["_meta"] = meta();
        }
        let before = gate.dropped.load(Ordering::SeqCst);
        let result = client.result("tools/call", params).await;
        gate.entered.recv().await.unwrap();
        assert_eq!(result["isError"], true, "{revision}: {result}");
        assert_eq!(text(&result), "tool `slow` timed out after 5000 ms", "{revision}");
        assert_eq!(gate.dropped.load(Ordering::SeqCst), before + 1, "{revision}: the handler's future dropped");
    }
}

// ---------------------------------------------------------------------------------------------
// Rate limits.

#[cfg(feature = "rate-limit")]
mod rate {
    use super::*;
    use mcp_server::middleware::rate::{Quota, RATE_LIMITED, RateKey, RateLimit};

    fn nz(n: u32) -> NonZeroU32 {
        NonZeroU32::new(n).unwrap()
    }

    /// One call an hour, in bursts of `burst`.
    fn hourly(key: RateKey, burst: u32) -> RateLimit {
        RateLimit::with_quota(key, Quota::per_hour(nz(1)).allow_burst(nz(burst)))
    }

    fn assert_limited(error: &Value) {
        assert_eq!(error["code"], RATE_LIMITED, "{error}");
        let retry = error["data"]["retryAfterMs"].as_u64().unwrap_or_else(|| panic!("no retry hint: {error}"));
        // The next token is an hour away, less the moments the test took.
        assert!((3_000_000..=3_600_000).contains(&retry), "{error}");
    }

    /// Per session: the burst, then -32000 with a retry hint; another session has a bucket
    /// of its own.
    #[tokio::test]
    async fn a_session_over_its_rate_is_refused_with_a_retry_hint() {
        let server = Server::builder("mw", "1.0").tool(echo()).middleware(hourly(RateKey::Session, 2)).build().unwrap();
        let mut first = session(&server).await;
        let mut second = session(&server).await;
        for _ in 0..2 {
            first.result("tools/call", json!({"name": "echo", "arguments": {}})).await;
        }
        assert_limited(&first.error("tools/call", json!({"name": "echo", "arguments": {}})).await);
        // Every method the layers see, unless limited to tool calls.
        assert_limited(&first.error("tools/list", json!({})).await);
        second.result("tools/call", json!({"name": "echo", "arguments": {}})).await;
    }

    /// The keyed state is bounded: past `max_keys` active keys, new ones share one bucket.
    #[tokio::test]
    async fn the_keys_kept_are_bounded() {
        let limit = hourly(RateKey::Session, 1).max_keys(1).tool_calls_only();
        let server = Server::builder("mw", "1.0").tool(echo()).middleware(limit).build().unwrap();
        let mut a = session(&server).await;
        a.result("tools/call", json!({"name": "echo", "arguments": {}})).await;
        // Not a tool call: not limited.
        a.result("tools/list", json!({})).await;
        let mut b = session(&server).await;
        b.result("tools/call", json!({"name": "echo", "arguments": {}})).await;
        let mut c = session(&server).await;
        assert_limited(&c.error("tools/call", json!({"name": "echo", "arguments": {}})).await);
    }

    /// Per client address over HTTP: two sessions and a 2026-07-28 request of one address
    /// share its bucket.
    #[tokio::test]
    async fn over_http_one_address_shares_its_bucket() {
        let http =
            Http::start(Server::builder("mw", "1.0").tool(echo()).middleware(hourly(RateKey::ClientAddress, 2))).await;
        let (s1, s2) = (http.session().await, http.session().await);
        assert!(http.call(Some(&s1)).await.get("result").is_some());
        assert!(http.call(None).await.get("result").is_some());
        assert_limited(&http.call(Some(&s2)).await["error"]);
        assert_limited(&http.call(None).await["error"]);
    }
}

// ---------------------------------------------------------------------------------------------
// `tower` layers.

#[cfg(feature = "tower")]
mod tower_layers {
    use super::*;
    use mcp_server::middleware::tower::from_tower;

    /// `tower`'s timeout: -32001, the handler's future dropped.
    #[tokio::test(start_paused = true)]
    async fn a_tower_timeout_answers_request_timeout() {
        let (slow, mut gate) = gated("slow");
        let server = Server::builder("mw", "1.0")
            .tool(slow)
            .middleware(from_tower(tower::timeout::TimeoutLayer::new(Duration::from_secs(5))))
            .build()
            .unwrap();
        let mut client = session(&server).await;
        let error = client.error("tools/call", json!({"name": "slow", "arguments": {}})).await;
        gate.entered.recv().await.unwrap();
        assert_eq!(error["code"], -32001, "{error}");
        assert_eq!(gate.dropped.load(Ordering::SeqCst), 1);
    }

    /// `tower`'s concurrency limit, one stack for every request: the second request waits
    /// for the first.
    #[tokio::test]
    async fn a_tower_concurrency_limit_is_shared_by_the_requests() {
        let (slow, mut gate) = gated("slow");
        let server = Server::builder("mw", "1.0")
            .tool(slow)
            .middleware(from_tower(tower::limit::ConcurrencyLimitLayer::new(1)))
            .build()
            .unwrap();
        let mut client = session(&server).await;
        client.send(call(1, "slow")).await;
        client.send(call(2, "slow")).await;
        gate.entered.recv().await.unwrap();
        // `ping` is answered by the engine, past the layers: both calls were read before.
        client.wire.expect_silence(99).await;
        assert!(gate.entered.try_recv().is_err(), "the second request ran beside the first");
        gate.release.notify_one();
        assert_eq!(client.recv().await["id"], 1);
        gate.entered.recv().await.unwrap();
        gate.release.notify_one();
        assert_eq!(client.recv().await["id"], 2);
    }
}

// ---------------------------------------------------------------------------------------------
// The list cache.

/// Counts the requests that reach it.
struct Count(Arc<AtomicUsize>);

impl Middleware for Count {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        self.0.fetch_add(1, Ordering::SeqCst);
        next.run(req)
    }
}

/// A list asked for again is answered from the cache (the request does not reach the layers
/// inside it), by request id, in each revision apart; a tool added makes it stale.
#[tokio::test]
async fn the_list_cache_answers_until_the_lists_change() {
    use mcp_server::middleware::cache::ListCache;
    let inner = Arc::new(AtomicUsize::new(0));
    let server = Server::builder("mw", "1.0")
        .tool(echo())
        .page_size(1)
        .middleware(ListCache::new())
        .middleware(Count(inner.clone()))
        .build()
        .unwrap();
    let mut client = session(&server).await;
    // `initialize` passed the layers: counted from here.
    inner.store(0, Ordering::SeqCst);
    let first = client.result("tools/list", json!({})).await;
    assert_eq!(first, client.result("tools/list", json!({})).await);
    assert_eq!(inner.load(Ordering::SeqCst), 1, "the second list came from the cache");
    let mut fresh = stateless(&server);
    let listed = fresh.result("tools/list", json!({"_meta": meta()})).await;
    assert_eq!(listed["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mw", "{listed}");
    assert_eq!(inner.load(Ordering::SeqCst), 2, "2026-07-28's result is not the session's");

    server
        .add_tool(
            ToolDef::new("late", json!({"type": "object"}), |_, _| async { Ok(CallToolResult::success(vec![])) })
                .unwrap(),
        )
        .await
        .unwrap();
    let told = client.recv().await;
    assert_eq!(told["method"], "notifications/tools/list_changed", "{told}");
    // The list changed: asked again, then a second page (a cursor of its own).
    let first = client.result("tools/list", json!({})).await;
    assert_eq!(inner.load(Ordering::SeqCst), 3, "a stale list served");
    let cursor = first["nextCursor"].as_str().expect("two pages");
    let second = client.result("tools/list", json!({"cursor": cursor})).await;
    assert_eq!(second["tools"][0]["name"], "late", "{second}");
    assert_eq!(client.result("tools/list", json!({"cursor": cursor})).await, second);
    assert_eq!(inner.load(Ordering::SeqCst), 4);
    // Errors are not kept.
    client.error("tools/list", json!({"cursor": "forged"})).await;
    client.error("tools/list", json!({"cursor": "forged"})).await;
    assert_eq!(inner.load(Ordering::SeqCst), 6);
}

/// A session of 2025-11-25 whose client is called `name`.
async fn session_of(server: &Server, name: &str) -> Session {
    let (a, b) = memory(64);
    let _peer = server.connect(a);
    let mut session = Session::new(Wire::new(b), "2025-11-25");
    session
        .result(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": name, "version": "1"}}),
        )
        .await;
    session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    session
}

#[tokio::test]
async fn the_list_cache_never_hands_one_clients_list_to_another() {
    use mcp_server::middleware::cache::ListCache;
    let names = |listed: &Value| -> Vec<String> {
        listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    let hide = ToolDef::new("hide", json!({"type": "object"}), |_, ctx| async move {
        ctx.session().hide_tool("echo").await?;
        Ok(CallToolResult::success(vec![]))
    })
    .unwrap();
    // The predicate: `echo` is hidden from the client called `guest`.
    let server = Server::builder("mw", "1.0")
        .tool(echo())
        .tool(hide)
        .visibility(|item, who| item.name() != "echo" || who.client_info().is_none_or(|c| c.name != "guest"))
        .middleware(ListCache::new())
        .build()
        .unwrap();
    let mut host = session_of(&server, "host").await;
    let mut guest = session_of(&server, "guest").await;
    assert_eq!(names(&host.result("tools/list", json!({})).await), ["echo", "hide"]);
    assert_eq!(names(&guest.result("tools/list", json!({})).await), ["hide"], "the host's list, from the cache");

    // No predicate, but a session that hides a tool of its own: not kept, even under a scope.
    let hide = ToolDef::new("hide", json!({"type": "object"}), |_, ctx| async move {
        ctx.session().hide_tool("echo").await?;
        Ok(CallToolResult::success(vec![]))
    })
    .unwrap();
    let cache = ListCache::new().scope(|_| Some("everyone".into()));
    let server = Server::builder("mw", "1.0").tool(echo()).tool(hide).middleware(cache).build().unwrap();
    let mut one = session(&server).await;
    let mut other = session(&server).await;
    assert_eq!(names(&other.result("tools/list", json!({})).await), ["echo", "hide"]);
    one.send(json!({"jsonrpc": "2.0", "id": "h", "method": "tools/call", "params": {"name": "hide", "arguments": {}}}))
        .await;
    let (told, answered) = (one.recv().await, one.recv().await);
    assert_eq!(told["method"], "notifications/tools/list_changed", "{told}");
    assert_eq!(answered["id"], "h", "{answered}");
    assert_eq!(names(&one.result("tools/list", json!({})).await), ["hide"], "the other session's list, from the cache");
    assert_eq!(names(&other.result("tools/list", json!({})).await), ["echo", "hide"]);
}

// ---------------------------------------------------------------------------------------------
// The typed views of the other methods.

/// Records what it reads of prompts, resources and lists, and renames the prompt `old` to
/// `greet` with `set_params` (the rest of the params kept).
struct Views(Arc<Mutex<Vec<String>>>);

impl Middleware for Views {
    fn request<'a>(&'a self, mut req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        let seen = match req.kind() {
            MethodKind::GetPrompt => {
                let mut params = req.get_prompt().unwrap().unwrap();
                let seen = format!("prompt {}", params.name);
                if params.name == "old" {
                    params.name = "greet".into();
                    req.set_params(Some(&params)).unwrap();
                }
                seen
            }
            MethodKind::ReadResource => format!("read {}", req.read_resource().unwrap().unwrap().uri),
            MethodKind::List => format!("{} {:?}", req.method(), req.list_cursor().unwrap().unwrap()),
            _ => format!("other {}", req.method()),
        };
        assert!(req.tool_call().is_none() && req.tool_name().is_none());
        self.0.lock().unwrap().push(seen);
        next.run(req)
    }
}

#[tokio::test]
async fn a_layer_reads_prompts_resources_and_lists_typed() {
    use mcp_server::{PromptDef, ResourceDef};
    use mcp_types::{AnyResourceContents, GetPromptResult, PromptMessage, Role, TextResourceContents};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = Server::builder("mw", "1.0")
        .prompt(PromptDef::new("greet", |args, _ctx| async move {
            let who = args.get("who").cloned().unwrap_or_default();
            Ok::<_, ErrorObject>(GetPromptResult::new(vec![PromptMessage::new(Role::User, ContentBlock::text(who))]))
        }))
        .resource(ResourceDef::new("note", "mem://note", |uri: String, _vars, _ctx| async move {
            Ok::<_, ErrorObject>(vec![AnyResourceContents::TextResourceContents(TextResourceContents::new(uri, "hi"))])
        }))
        .middleware(Views(seen.clone()))
        .build()
        .unwrap();
    let mut client = session(&server).await;
    let prompt = client.result("prompts/get", json!({"name": "old", "arguments": {"who": "ada"}})).await;
    assert_eq!(prompt["messages"][0]["content"]["text"], "ada", "renamed, its arguments kept: {prompt}");
    client.result("resources/read", json!({"uri": "mem://note"})).await;
    client.result("prompts/list", json!({})).await;
    client.error("resources/list", json!({"cursor": "x"})).await;
    client
        .result(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "who", "value": "a"}}),
        )
        .await;
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "other initialize",
            "prompt old",
            "read mem://note",
            "prompts/list None",
            "resources/list Some(\"x\")",
            "other completion/complete"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Rate limits per principal, over HTTP with tokens.

#[cfg(all(feature = "auth", feature = "rate-limit"))]
mod per_principal {
    use super::*;
    use mcp_server::mcp_transport_http::server::auth::{AuthConfig, Principal, TokenError, TokenVerifier};
    use mcp_server::middleware::rate::{Quota, RATE_LIMITED, RateKey, RateLimit};

    /// A token is its subject's name; for the resource it holds.
    struct Names(String);

    impl TokenVerifier for Names {
        fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
            Box::pin(async move {
                Ok(Principal {
                    issuer: Some("https://auth.example.com".to_owned()),
                    subject: Some(token.to_owned()),
                    audience: vec![self.0.clone()],
                    ..Principal::default()
                })
            })
        }
    }

    async fn post(url: &str, token: &str, session: Option<&str>, body: Value) -> (Option<String>, Value) {
        let mut post = reqwest::Client::new()
            .post(url)
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(session) = session {
            post = post.header("mcp-session-id", session);
        }
        let response = post.body(body.to_string()).send().await.unwrap();
        let id = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
        let text = response.text().await.unwrap();
        (id, if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap() })
    }

    /// A call of `echo` by `token` in a new session of its own.
    async fn call_in_new_session(url: &str, token: &str) -> Value {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
        let id = post(url, token, None, init).await.0.expect("a session");
        post(url, token, Some(&id), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        let call =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {}}});
        post(url, token, Some(&id), call).await.1
    }

    /// The sessions of one principal share its bucket; another principal has its own.
    #[tokio::test]
    async fn a_principals_sessions_share_its_bucket() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let limit = RateLimit::with_quota(RateKey::Principal, Quota::per_hour(NonZeroU32::new(1).unwrap()));
        let server = Server::builder("mw", "1.0").tool(echo()).middleware(limit).build().unwrap();
        let config =
            HttpServerConfig::new().json_response(true).auth(AuthConfig::new(&url, Names(url.clone())).unwrap());
        tokio::spawn(server::serve_listener(Arc::new(server), config, listener));
        assert!(call_in_new_session(&url, "alice").await.get("result").is_some());
        let refused = call_in_new_session(&url, "alice").await;
        assert_eq!(refused["error"]["code"], RATE_LIMITED, "{refused}");
        assert!(call_in_new_session(&url, "bob").await.get("result").is_some());
    }
}

// ---------------------------------------------------------------------------------------------
// The methods served before the typed dispatch.

/// Records every method it sees, and refuses those of `refused` with an error of its own.
struct Gatekeeper {
    seen: Arc<Mutex<Vec<String>>>,
    refused: &'static [&'static str],
}

impl Middleware for Gatekeeper {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        self.seen.lock().unwrap().push(req.method().to_owned());
        if self.refused.contains(&req.method()) {
            let refusal = ErrorObject::new(-32001, format!("{} refused by the gatekeeper", req.method()));
            return Box::pin(std::future::ready(Err(refusal)));
        }
        next.run(req)
    }
}

/// A server with the tasks extension and a gatekeeper refusing `refused`.
fn gated_server(seen: &Arc<Mutex<Vec<String>>>, refused: &'static [&'static str]) -> Server {
    Server::builder("mw", "1.0")
        .tool(echo())
        .tasks(mcp_server::TaskConfig::default())
        .middleware(Gatekeeper { seen: seen.clone(), refused })
        .build()
        .unwrap()
}

/// The task methods of the 2026-07-28 extension, with the params each needs.
fn task_methods() -> Vec<(&'static str, Value)> {
    let id = json!("no-such-task");
    vec![
        ("tasks/get", json!({"taskId": id})),
        ("tasks/result", json!({"taskId": id})),
        ("tasks/cancel", json!({"taskId": id})),
        ("tasks/update", json!({"taskId": id, "inputResponses": {}})),
        ("tasks/list", json!({})),
    ]
}

/// `params` with the `_meta` of a 2026-07-28 request whose client declares the tasks extension.
fn with_meta(mut params: Value) -> Value {
    let mut meta = meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    params["_meta"] = meta;
    params
}

/// `initialize` passes the layers: they see it, and one may refuse it (the session is then not
/// initialized).
#[tokio::test]
async fn layers_see_and_may_refuse_initialize() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut session = session(&gated_server(&seen, &[])).await;
    session.result("tools/list", json!({})).await;
    assert_eq!(*seen.lock().unwrap(), ["initialize", "tools/list"]);

    let server = gated_server(&seen, &["initialize"]);
    let (a, b) = memory(64);
    let _peer = server.connect(a);
    let mut session = Session::new(Wire::new(b), "2025-11-25");
    let params =
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let error = session.error("initialize", params).await;
    assert_eq!(error["message"], "initialize refused by the gatekeeper", "{error}");
    let error = session.error("tools/list", json!({})).await;
    assert_eq!(error["code"], -32600, "still not initialized: {error}");
}

/// 2026-07-28 `server/discover`, `subscriptions/listen` and the methods of the tasks extension
/// pass the layers: a layer sees each, and may refuse each.
#[tokio::test]
async fn layers_see_and_may_refuse_discover_listen_and_task_methods() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut client = stateless(&gated_server(&seen, &[]));
    let discover = client.result("server/discover", with_meta(json!({}))).await;
    assert!(discover["capabilities"]["tools"].is_object(), "{discover}");
    for (method, params) in task_methods() {
        let answer = client.call(method, with_meta(params)).await;
        assert_ne!(answer["error"]["code"], -32001, "{method}: {answer}");
    }
    let listen = with_meta(json!({"notifications": {"toolsListChanged": true}}));
    client.send(json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": listen})).await;
    let ack = client.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "server/discover",
            "tasks/get",
            "tasks/result",
            "tasks/cancel",
            "tasks/update",
            "tasks/list",
            "subscriptions/listen"
        ]
    );

    let refused = &[
        "server/discover",
        "subscriptions/listen",
        "tasks/get",
        "tasks/result",
        "tasks/cancel",
        "tasks/update",
        "tasks/list",
    ];
    let mut client = stateless(&gated_server(&seen, refused));
    let mut calls = task_methods();
    calls.push(("server/discover", json!({})));
    calls.push(("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}})));
    for (method, params) in calls {
        let error = client.error(method, with_meta(params)).await;
        assert_eq!(error["message"], format!("{method} refused by the gatekeeper"), "{error}");
    }
}
