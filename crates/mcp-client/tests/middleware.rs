//! The client's layers (`mcp_client::middleware`) over real transports: `Retry` against a real
//! HTTP server that refuses the first attempts (503, 429 with `Retry-After`, a connection cut
//! by a TCP proxy), and not for a JSON-RPC error nor a tool call that may not be repeated; its
//! delays under tokio's paused time (`Logging` and `Metrics`: `middleware_observe.rs`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::middleware::{BoxFuture, ClientMiddleware, ClientRequest, ClientResponse, Next, Retry};
use mcp_client::{ClientBuilder, ClientError};
use mcp_jsonrpc::transport::memory;
use mcp_server::{Server, ToolDef, ToolError};
use mcp_types::{CallToolResult, ContentBlock, ToolAnnotations};
use serde_json::json;
use tokio::time::Instant;

/// The granularity of tokio's timers: a sleep ends up to this long after it is due.
const TICK: Duration = Duration::from_millis(1);

/// `echo` (no hints: not to be repeated) and `lookup` (`idempotentHint: true`).
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

/// Fails requests before they reach the connection, as the test tells it: the first
/// `fail` attempts with a refused connection (an I/O error, as a transport gives it); records
/// when each attempt came.
#[derive(Default)]
struct Refuse {
    fail: AtomicU32,
    attempts: Mutex<Vec<Instant>>,
}

impl ClientMiddleware for Refuse {
    fn call<'a>(&'a self, request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
        self.attempts.lock().unwrap().push(Instant::now());
        let refuse = self.fail.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).is_ok();
        if refuse {
            let e = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
            return Box::pin(async move { Err(ClientError::Transport(Arc::new(e))) });
        }
        next.run(request)
    }
}

/// An in-memory client of [`server`] whose requests pass `layers`.
async fn memory_client(builder: ClientBuilder) -> mcp_client::Client {
    let (a, b) = memory(64);
    server().connect(a);
    builder.session_revisions_only().connect(b).await.unwrap()
}

/// The delays between attempts double from the first backoff, each between half of it and
/// all of it (tokio's paused time: the waits are measured, not slept).
#[tokio::test]
async fn retry_waits_a_doubling_jittered_backoff_between_attempts() {
    let refuse = Arc::new(Refuse::default());
    let retry = Retry::new().max_attempts(5).backoff(Duration::from_millis(100), Duration::from_secs(10));
    let client = memory_client(ClientBuilder::new("c", "1").layer(retry).layer(refuse.clone())).await;
    tokio::time::pause();
    refuse.fail.store(4, Ordering::Release);
    client.list_tools(None).await.unwrap();
    let attempts = refuse.attempts.lock().unwrap().clone();
    assert_eq!(attempts.len(), 5);
    for (i, pair) in attempts.windows(2).enumerate() {
        let waited = pair[1] - pair[0];
        let full = Duration::from_millis(100 << i);
        // Tokio's timers tick by the millisecond: a wait ends up to 1 ms after it is due.
        assert!(waited >= full / 2 && waited <= full + TICK, "wait {i}: {waited:?}, backoff {full:?}");
    }
}

/// The attempts stop at `max_attempts`, and no wait begins that would end after
/// `max_elapsed`.
#[tokio::test]
async fn retry_stops_at_its_attempts_and_its_total_time() {
    let refuse = Arc::new(Refuse::default());
    let retry = Retry::new().max_attempts(3).backoff(Duration::from_millis(10), Duration::from_millis(10));
    let client = memory_client(ClientBuilder::new("c", "1").layer(retry).layer(refuse.clone())).await;
    tokio::time::pause();
    refuse.fail.store(100, Ordering::Release);
    let error = client.list_tools(None).await.unwrap_err();
    assert!(matches!(error, ClientError::Transport(_)), "{error:?}");
    assert_eq!(refuse.attempts.lock().unwrap().len(), 3);

    let refuse = Arc::new(Refuse::default());
    let retry = Retry::new()
        .max_attempts(100)
        .backoff(Duration::from_millis(100), Duration::from_millis(100))
        .max_elapsed(Duration::from_millis(250));
    let client = memory_client(ClientBuilder::new("c", "1").layer(retry).layer(refuse.clone())).await;
    refuse.fail.store(100, Ordering::Release);
    let started = Instant::now();
    client.list_tools(None).await.unwrap_err();
    assert!(started.elapsed() <= Duration::from_millis(250) + TICK, "{:?}", started.elapsed());
    let attempts = refuse.attempts.lock().unwrap().len();
    // Waits of 50 to 100 ms each: at least 3 attempts fit, at most 6.
    assert!((3..=6).contains(&attempts), "{attempts} attempts");
}

/// A tool call is repeated only for a tool whose annotations say it is idempotent (learned
/// from the list that passed the layer), or one the user named.
#[tokio::test]
async fn retry_repeats_a_tool_call_only_when_the_tool_is_idempotent() {
    let refuse = Arc::new(Refuse::default());
    let client = memory_client(
        ClientBuilder::new("c", "1").layer(Retry::new().backoff(Duration::ZERO, Duration::ZERO)).layer(refuse.clone()),
    )
    .await;
    // Before a listing, no tool is known to be idempotent.
    refuse.fail.store(1, Ordering::Release);
    client.call_tool("lookup", json!({})).await.unwrap_err();
    assert_eq!(refuse.attempts.lock().unwrap().len(), 1);

    client.list_all_tools().await.unwrap();
    refuse.attempts.lock().unwrap().clear();
    refuse.fail.store(1, Ordering::Release);
    let result = client.call_tool("lookup", json!({})).await.unwrap();
    assert_eq!(result.content, vec![ContentBlock::text("found")]);
    assert_eq!(refuse.attempts.lock().unwrap().len(), 2);

    refuse.attempts.lock().unwrap().clear();
    refuse.fail.store(1, Ordering::Release);
    client.call_tool("echo", json!({})).await.unwrap_err();
    assert_eq!(refuse.attempts.lock().unwrap().len(), 1, "echo is not idempotent");

    // The user's word.
    let refuse = Arc::new(Refuse::default());
    let retry = Retry::new().backoff(Duration::ZERO, Duration::ZERO).idempotent_tool("echo");
    let client = memory_client(ClientBuilder::new("c", "1").layer(retry).layer(refuse.clone())).await;
    refuse.fail.store(1, Ordering::Release);
    client.call_tool("echo", json!({})).await.unwrap();
    assert_eq!(refuse.attempts.lock().unwrap().len(), 2);
}

/// Fails every attempt with the error `make` gives, counting them; cancels the call's token
/// first if asked.
struct FailWith {
    make: fn() -> ClientError,
    attempts: AtomicU32,
    cancel: bool,
}

impl FailWith {
    fn new(make: fn() -> ClientError) -> Arc<FailWith> {
        Arc::new(FailWith { make, attempts: AtomicU32::new(0), cancel: false })
    }
}

impl ClientMiddleware for FailWith {
    fn call<'a>(&'a self, request: ClientRequest<'a>, _next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
        self.attempts.fetch_add(1, Ordering::AcqRel);
        if let (true, Some(token)) = (self.cancel, &request.options.cancel) {
            token.cancel();
        }
        let error = (self.make)();
        Box::pin(async move { Err(error) })
    }
}

/// A timeout is retried only when asked; a closed connection never; a wait ends when the
/// call's cancellation token fires.
#[tokio::test]
async fn retry_takes_timeouts_only_when_asked_never_a_closed_connection_and_stops_on_cancel() {
    let timeout = || ClientError::Timeout { method: "tools/list".into(), elapsed: Duration::from_secs(1) };
    for (retry, expected) in [(Retry::new(), 1), (Retry::new().retry_timeouts(true), 3)] {
        let fail = FailWith::new(timeout);
        let client = memory_client(ClientBuilder::new("c", "1").layer(retry).layer(fail.clone())).await;
        tokio::time::pause();
        assert!(matches!(client.list_tools(None).await, Err(ClientError::Timeout { .. })));
        assert_eq!(fail.attempts.load(Ordering::Acquire), expected);
        tokio::time::resume();
    }

    let fail = FailWith::new(|| ClientError::Closed(None));
    let client = memory_client(ClientBuilder::new("c", "1").layer(Retry::new()).layer(fail.clone())).await;
    assert!(matches!(client.list_tools(None).await, Err(ClientError::Closed(_))));
    assert_eq!(fail.attempts.load(Ordering::Acquire), 1);

    let refused = || ClientError::Transport(Arc::new(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)));
    let fail = Arc::new(FailWith { make: refused, attempts: AtomicU32::new(0), cancel: true });
    let retry = Retry::new().backoff(Duration::from_secs(10), Duration::from_secs(10));
    let client = memory_client(ClientBuilder::new("c", "1").layer(retry).layer(fail.clone())).await;
    tokio::time::pause();
    let options = mcp_client::CallOptions { cancel: Some(Default::default()), ..Default::default() };
    let started = Instant::now();
    let outcome = client.send_request::<mcp_types::ListToolsRequest>(Default::default(), options).await;
    assert!(matches!(outcome, Err(ClientError::Cancelled)), "{outcome:?}");
    assert_eq!(fail.attempts.load(Ordering::Acquire), 1);
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

/// A layer answers a request itself, and changes the params of another: the typed calls
/// decode what it gives.
#[tokio::test]
async fn a_layer_answers_locally_and_rewrites_params() {
    struct Rewrite;
    impl ClientMiddleware for Rewrite {
        fn call<'a>(&'a self, mut request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
            if request.method() == "tools/list" {
                return Box::pin(async {
                    Ok(json!({"tools": [{"name": "local", "inputSchema": {"type": "object"}}]}))
                });
            }
            if request.tool_name() == Some("missing") {
                request.params["name"] = json!("lookup");
            }
            next.run(request)
        }
    }
    let client = memory_client(ClientBuilder::new("c", "1").layer(Rewrite)).await;
    let tools = client.list_tools(None).await.unwrap();
    assert_eq!(tools.tools.len(), 1);
    assert_eq!(tools.tools[0].name, "local");
    let result = client.call_tool("missing", json!({})).await.unwrap();
    assert_eq!(result.content, vec![ContentBlock::text("found")]);
}

#[cfg(feature = "http")]
mod http {
    use std::collections::VecDeque;

    use super::*;
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::response::{IntoResponse, Response};
    use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
    use mcp_test_support::redis::RedisProxy;
    use tokio::sync::{Notify, mpsc};

    /// What the test's HTTP server does to the POSTs of one JSON-RPC method: answers the
    /// next ones with the statuses planned (and a `Retry-After`), and counts them all.
    #[derive(Default)]
    struct Faults {
        method: Mutex<String>,
        plan: Mutex<VecDeque<(StatusCode, Option<&'static str>)>>,
        seen: AtomicU32,
    }

    impl Faults {
        fn plan(&self, method: &str, statuses: &[(StatusCode, Option<&'static str>)]) {
            *self.method.lock().unwrap() = method.to_owned();
            *self.plan.lock().unwrap() = statuses.iter().copied().collect();
            self.seen.store(0, Ordering::Release);
        }
        fn seen(&self) -> u32 {
            self.seen.load(Ordering::Acquire)
        }
    }

    async fn inject(faults: Arc<Faults>, request: Request<Body>, next: axum::middleware::Next) -> Response {
        let (parts, body) = request.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        let method = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v.get("method").and_then(|m| m.as_str()).map(str::to_owned));
        if method.is_some() && method.as_deref() == Some(faults.method.lock().unwrap().as_str()) {
            faults.seen.fetch_add(1, Ordering::AcqRel);
            let planned = faults.plan.lock().unwrap().pop_front();
            if let Some((status, retry_after)) = planned {
                let mut response = (status, "not now").into_response();
                if let Some(after) = retry_after {
                    response.headers_mut().insert("retry-after", after.parse().unwrap());
                }
                return response;
            }
        }
        next.run(Request::from_parts(parts, Body::from(bytes))).await
    }

    /// [`server`] over Streamable HTTP on a free port, behind [`Faults`]: its port.
    async fn serve(faults: Arc<Faults>) -> u16 {
        let router = server()
            .http_router(HttpServerConfig::default())
            .layer(axum::middleware::from_fn(move |r, n| inject(faults.clone(), r, n)));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { server::serve_router(listener, router, &HttpServerConfig::default()).await });
        port
    }

    fn quick_retry() -> Retry {
        Retry::new().backoff(Duration::from_millis(1), Duration::from_millis(5))
    }

    async fn connect(port: u16, builder: ClientBuilder) -> mcp_client::Client {
        builder.connect_http(&format!("http://127.0.0.1:{port}/mcp")).await.unwrap()
    }

    /// The builders of both eras: 2026-07-28 (our server speaks it) and a session.
    fn eras() -> [(ClientBuilder, bool); 2] {
        [(ClientBuilder::new("c", "1"), true), (ClientBuilder::new("c", "1").session_revisions_only(), false)]
    }

    #[tokio::test]
    async fn retry_resends_a_request_the_server_answered_with_503() {
        for (builder, stateless) in eras() {
            let faults = Arc::new(Faults::default());
            let port = serve(faults.clone()).await;
            let client = connect(port, builder.layer(quick_retry())).await;
            assert_eq!(client.protocol_version().is_stateless(), stateless);
            let unavailable = (StatusCode::SERVICE_UNAVAILABLE, None);
            faults.plan("tools/list", &[unavailable, unavailable]);
            let tools = client.list_tools(None).await.unwrap();
            assert_eq!(tools.tools.len(), 2);
            assert_eq!(faults.seen(), 3);

            // Three attempts at most, then the last error.
            faults.plan("tools/list", &[unavailable; 5]);
            let error = client.list_tools(None).await.unwrap_err();
            assert_eq!(error.http_error().and_then(|e| e.status()), Some(StatusCode::SERVICE_UNAVAILABLE));
            assert_eq!(faults.seen(), 3);
            client.close().await.unwrap();
        }
    }

    #[tokio::test]
    async fn retry_leaves_a_jsonrpc_error_and_a_non_idempotent_call_alone() {
        let faults = Arc::new(Faults::default());
        let port = serve(faults.clone()).await;
        let client = connect(port, ClientBuilder::new("c", "1").layer(quick_retry())).await;
        faults.plan("prompts/get", &[]);
        let error = client
            .send_request::<mcp_types::GetPromptRequest>(
                mcp_types::GetPromptRequestParams::new("none"),
                mcp_client::CallOptions::default(),
            )
            .await
            .unwrap_err();
        assert!(matches!(error, ClientError::Remote(_)), "{error:?}");
        assert_eq!(faults.seen(), 1);

        client.list_all_tools().await.unwrap();
        faults.plan("tools/call", &[(StatusCode::SERVICE_UNAVAILABLE, None)]);
        let error = client.call_tool("echo", json!({})).await.unwrap_err();
        assert_eq!(error.http_error().and_then(|e| e.status()), Some(StatusCode::SERVICE_UNAVAILABLE));
        assert_eq!(faults.seen(), 1, "echo is not idempotent: sent once");
        faults.plan("tools/call", &[(StatusCode::BAD_GATEWAY, None)]);
        client.call_tool("lookup", json!({})).await.unwrap();
        assert_eq!(faults.seen(), 2, "lookup is idempotent: sent again");
        client.close().await.unwrap();
    }

    /// A 429's `Retry-After` is waited; one beyond the total time ends the retries at once.
    #[tokio::test]
    async fn retry_honours_retry_after() {
        let faults = Arc::new(Faults::default());
        let port = serve(faults.clone()).await;
        let retry = quick_retry().max_elapsed(Duration::from_secs(5));
        let client = connect(port, ClientBuilder::new("c", "1").layer(retry)).await;
        faults.plan("tools/list", &[(StatusCode::TOO_MANY_REQUESTS, Some("1"))]);
        let started = std::time::Instant::now();
        client.list_tools(None).await.unwrap();
        assert!(started.elapsed() >= Duration::from_secs(1), "{:?}", started.elapsed());
        assert_eq!(faults.seen(), 2);

        faults.plan("tools/list", &[(StatusCode::TOO_MANY_REQUESTS, Some("3600"))]);
        let started = std::time::Instant::now();
        let error = tokio::time::timeout(Duration::from_secs(5), client.list_tools(None)).await.unwrap().unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        assert_eq!(error.http_error().and_then(|e| e.retry_after()), Some(Duration::from_secs(3600)));
        assert_eq!(faults.seen(), 1);
        client.close().await.unwrap();
    }

    /// Lets the test act between attempts: reports each failed attempt, and holds its error
    /// until the test says go.
    struct Gate {
        failed: mpsc::UnboundedSender<Option<mcp_client::http::HttpErrorKind>>,
        go: Arc<Notify>,
        /// Only the first failure is held.
        armed: std::sync::atomic::AtomicBool,
    }

    impl ClientMiddleware for Gate {
        fn call<'a>(&'a self, request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
            Box::pin(async move {
                let outcome = next.run(request).await;
                if let Err(e) = &outcome
                    && self.armed.swap(false, Ordering::AcqRel)
                {
                    let go = self.go.notified();
                    let _ = self.failed.send(e.http_error().map(|e| e.kind()));
                    go.await;
                }
                outcome
            })
        }
    }

    /// The connection to the server cut (a TCP proxy drops it, and closes new ones): the
    /// request fails on its way; the test restores the proxy, and the retry gets through.
    #[tokio::test]
    async fn retry_gets_through_once_a_cut_connection_is_back() {
        for (builder, stateless) in eras() {
            let faults = Arc::new(Faults::default());
            let port = serve(faults.clone()).await;
            let proxy = RedisProxy::to_port(port);
            let (failed, mut failures) = mpsc::unbounded_channel();
            let go = Arc::new(Notify::new());
            let gate = Gate { failed, go: go.clone(), armed: true.into() };
            let client = Arc::new(connect(proxy.port(), builder.layer(quick_retry()).layer(gate)).await);
            assert_eq!(client.protocol_version().is_stateless(), stateless);
            faults.plan("tools/list", &[]);
            proxy.cut();
            let call = tokio::spawn({
                let client = client.clone();
                async move { client.list_tools(None).await }
            });
            let failed = tokio::time::timeout(Duration::from_secs(10), failures.recv()).await;
            assert_eq!(failed.unwrap().unwrap(), Some(mcp_client::http::HttpErrorKind::Connection));
            proxy.restore();
            go.notify_one();
            let tools = tokio::time::timeout(Duration::from_secs(10), call).await.unwrap().unwrap().unwrap();
            assert_eq!(tools.tools.len(), 2);
            assert_eq!(faults.seen(), 1, "the first attempt never reached the server");
            assert!(failures.try_recv().is_err());
        }
    }
}

/// 2026-07-28: a call whose input round was answered, then whose next attempt's connection is
/// cut, is sent again by `Retry` with the answers already given: the user is not asked twice.
#[cfg(feature = "http")]
mod input_once {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use axum::response::Response;
    use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
    use mcp_types::{ElicitAction, ElicitRequestParams, ElicitResult, ErrorObject};

    /// Cuts the connection of the first POST that carries `inputResponses`: its answer's body
    /// fails mid-way, so hyper drops the connection; counts the `tools/call` POSTs.
    #[derive(Default)]
    struct Cut {
        cut: AtomicU32,
        calls: AtomicU32,
    }

    async fn cut(state: Arc<Cut>, request: Request<Body>, next: axum::middleware::Next) -> Response {
        let (parts, body) = request.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        let text = String::from_utf8_lossy(&bytes);
        if text.contains("\"tools/call\"") {
            state.calls.fetch_add(1, Ordering::AcqRel);
            if text.contains("inputResponses") && state.cut.fetch_add(1, Ordering::AcqRel) == 0 {
                let failing = futures_util::stream::once(async {
                    Err::<bytes::Bytes, _>(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "cut"))
                });
                return Response::builder()
                    .header("content-type", "application/json")
                    .body(Body::from_stream(failing))
                    .unwrap();
            }
        }
        next.run(Request::from_parts(parts, Body::from(bytes))).await
    }

    #[tokio::test]
    async fn a_retried_call_does_not_ask_the_user_again_for_input_it_gave() {
        let confirm = ToolDef::new("confirm", json!({"type": "object"}), |_args, ctx| async move {
            let params: ElicitRequestParams = serde_json::from_value(json!({"mode": "form", "message": "Sure?",
                "requestedSchema": {"type": "object", "properties": {}}}))
            .unwrap();
            let answer = ctx.elicit_raw(params).await.map_err(|e| ToolError::new(e.to_string()))?;
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!("{:?}", answer.action))]))
        })
        .unwrap();
        let state = Arc::new(Cut::default());
        let layer = state.clone();
        let router = Server::builder("asks", "1.0")
            .tool(confirm)
            .build()
            .unwrap()
            .http_router(HttpServerConfig::default())
            .layer(axum::middleware::from_fn(move |r, n| cut(layer.clone(), r, n)));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { server::serve_router(listener, router, &HttpServerConfig::default()).await });

        let asked = Arc::new(AtomicU32::new(0));
        let counter = asked.clone();
        let retry = Retry::new().backoff(Duration::from_millis(1), Duration::from_millis(5)).idempotent_tool("confirm");
        let client = ClientBuilder::new("c", "1")
            .layer(retry)
            .on_elicitation(move |_params: ElicitRequestParams| {
                counter.fetch_add(1, Ordering::AcqRel);
                async move { Ok::<_, ErrorObject>(ElicitResult::new(ElicitAction::Accept)) }
            })
            .connect_http(&url)
            .await
            .unwrap();
        assert!(client.protocol_version().is_stateless());

        let result = client.call_tool("confirm", json!({})).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("Accept"), "{result:?}");
        assert_eq!(state.cut.load(Ordering::Acquire), 2, "the answered round was cut once, then got through");
        assert_eq!(state.calls.load(Ordering::Acquire), 4, "two attempts of two rounds each");
        assert_eq!(asked.load(Ordering::Acquire), 1, "the user was asked once");

        // Another call asks again: the answers are the call's own.
        client.call_tool("confirm", json!({})).await.unwrap();
        assert_eq!(asked.load(Ordering::Acquire), 2);
        client.close().await.unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// `tower` layers.

#[cfg(feature = "tower")]
mod tower_layers {
    use std::future::Future as _;
    use std::sync::atomic::AtomicUsize;
    use std::task::Poll;

    use super::*;
    use mcp_client::middleware::tower::from_tower;
    use tokio::sync::{Notify, mpsc};

    /// A tool `slow` that says when it starts, answers once released and counts its futures
    /// dropped unfinished; its server, and a client of it in memory through `builder`.
    struct Slow {
        entered: mpsc::UnboundedReceiver<()>,
        release: Arc<Notify>,
        dropped: Arc<AtomicUsize>,
        client: mcp_client::Client,
    }

    async fn slow(builder: ClientBuilder) -> Slow {
        struct OnDrop(Arc<AtomicUsize>, bool);
        impl Drop for OnDrop {
            fn drop(&mut self) {
                if !self.1 {
                    self.0.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
        let (tx, entered) = mpsc::unbounded_channel();
        let (release, dropped) = (Arc::new(Notify::new()), Arc::new(AtomicUsize::new(0)));
        let (r, d) = (release.clone(), dropped.clone());
        let tool = ToolDef::new("slow", json!({"type": "object"}), move |_args, _ctx| {
            let (tx, r, d) = (tx.clone(), r.clone(), d.clone());
            async move {
                let mut guard = OnDrop(d, false);
                tx.send(()).unwrap();
                r.notified().await;
                guard.1 = true;
                Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
            }
        })
        .unwrap();
        let (a, b) = memory(64);
        Server::builder("tower", "1.0").tool(tool).build().unwrap().connect(a);
        let client = builder.session_revisions_only().connect(b).await.unwrap();
        Slow { entered, release, dropped, client }
    }

    /// Counts the requests that reach it.
    struct Count(Arc<AtomicUsize>);

    impl ClientMiddleware for Count {
        fn call<'a>(&'a self, request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
            self.0.fetch_add(1, Ordering::SeqCst);
            next.run(request)
        }
    }

    /// `tower`'s timeout: the call fails with `ClientError::Timeout` after its time (paused
    /// clock), and the request is cancelled at the server (its handler's future dropped).
    /// The chain's own errors come back as they were (a JSON-RPC error stays `Remote`).
    #[tokio::test(start_paused = true)]
    async fn a_tower_timeout_ends_the_call_and_cancels_it() {
        let layer = from_tower(tower::timeout::TimeoutLayer::new(Duration::from_secs(5)));
        let mut slow = slow(ClientBuilder::new("c", "1").layer(layer)).await;
        let started = Instant::now();
        let error = slow.client.call_tool("slow", json!({})).await.unwrap_err();
        match &error {
            ClientError::Timeout { method, elapsed } => {
                assert_eq!(method, "tools/call");
                assert!(*elapsed >= Duration::from_secs(5) && *elapsed <= Duration::from_secs(5) + TICK, "{elapsed:?}");
            }
            other => panic!("not a timeout: {other:?}"),
        }
        assert!(started.elapsed() <= Duration::from_secs(5) + TICK, "{:?}", started.elapsed());
        slow.entered.recv().await.unwrap();
        // The cancellation reaches the server: the next request is read after it.
        slow.client.ping().await.unwrap();
        assert_eq!(slow.dropped.load(Ordering::SeqCst), 1, "the handler was not cancelled");

        let error = slow.client.call_tool("absent", json!({})).await.unwrap_err();
        assert!(matches!(error, ClientError::Remote(_)), "{error:?}");
    }

    /// `tower`'s concurrency limit, one stack for every request of the client: a second call
    /// waits (it is not sent) until the first is answered.
    #[tokio::test]
    async fn a_tower_concurrency_limit_is_shared_by_the_calls() {
        let sent = Arc::new(AtomicUsize::new(0));
        let builder = ClientBuilder::new("c", "1")
            .layer(from_tower(tower::limit::ConcurrencyLimitLayer::new(1)))
            .layer(Count(sent.clone()));
        let mut slow = slow(builder).await;
        let client = &slow.client;
        let first = client.call_tool("slow", json!({}));
        let second = client.call_tool("slow", json!({}));
        tokio::pin!(first, second);
        // The first call sent and running at the server.
        tokio::select! {
            _ = &mut first => panic!("answered before it was released"),
            entered = slow.entered.recv() => entered.unwrap(),
        }
        assert_eq!(sent.load(Ordering::SeqCst), 1);
        // Polled, the second waits for the limit: it does not reach the inner layer.
        let polled = std::future::poll_fn(|cx| Poll::Ready(second.as_mut().poll(cx).is_pending())).await;
        assert!(polled, "the second call was answered");
        assert_eq!(sent.load(Ordering::SeqCst), 1, "the second call went past the limit");
        slow.release.notify_one();
        first.await.unwrap();
        let (second, entered) = tokio::join!(second, async {
            slow.entered.recv().await.unwrap();
            slow.release.notify_one();
        });
        let _: () = entered;
        assert_eq!(second.unwrap().content, vec![ContentBlock::text("done")]);
        assert_eq!(sent.load(Ordering::SeqCst), 2);
    }
}
