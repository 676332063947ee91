//! The client over HTTP, against a scripted MCP server on a local port (`http_fixture`):
//! Streamable HTTP (JSON and SSE answers, sessions, headers, the GET stream, resumption,
//! errors, expiry, authorization, bounds) and HTTP+SSE (explicit, and the fallback).

#![cfg(feature = "http")]

mod http_fixture;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use http_fixture::{Fixture, Options, Seen};
use mcp_client::http::{
    AuthProvider, HeaderName, HeaderValue, HttpClientConfig, HttpErrorKind, HttpRequestError, HttpSseTransport,
    StreamableHttpTransport, Unauthorized,
};
use mcp_client::{Client, ClientBuilder, ClientError, ServerEvent};
use mcp_types::{ContentBlock, ElicitAction, ElicitRequestParams, ElicitResult, ElicitResultContentValue, ErrorObject};
use serde_json::json;

fn builder() -> ClientBuilder {
    ClientBuilder::new("http-test", "1.0")
}

fn text(result: &mcp_types::CallToolResult) -> String {
    result.content.iter().filter_map(ContentBlock::as_text).collect::<Vec<_>>().join("")
}

fn posts<'a>(log: &'a [Seen], rpc_method: &str) -> Vec<&'a Seen> {
    log.iter().filter(|s| s.method == "POST" && s.rpc_method() == Some(rpc_method)).collect()
}

/// The HTTP transport's error a call failed with.
fn http(e: &ClientError) -> &HttpRequestError {
    match e.http_error() {
        Some(error) => error,
        None => panic!("expected an HTTP transport error, got {e:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_headers_go_with_every_request() {
    let fx = Fixture::start(Options { protocol_version: Some("2025-06-18"), ..Options::default() }).await;
    let config = HttpClientConfig::parse(&fx.url())
        .unwrap()
        .header(HeaderName::from_static("x-tenant"), HeaderValue::from_static("acme"));
    let transport = StreamableHttpTransport::new(config).unwrap();
    let handle = transport.handle();
    let client = builder().connect(transport).await.unwrap();
    assert_eq!(client.protocol_version().as_str(), "2025-06-18");
    assert_eq!(handle.session_id().as_deref(), Some("session-1"));
    assert_eq!(handle.protocol_version().as_deref(), Some("2025-06-18"));
    assert!(!handle.is_http_sse());

    let result = client.call_tool("add", json!({"a": 2, "b": 40})).await.unwrap();
    assert_eq!(text(&result), "sum: 42");
    fx.wait_for("the GET stream", |log| log.iter().any(|s| s.method == "GET")).await;
    client.close().await.unwrap();
    let log = fx.wait_for("DELETE", |log| log.iter().any(|s| s.method == "DELETE")).await;

    let init = posts(&log, "initialize")[0];
    assert_eq!(init.header("mcp-session-id"), None, "initialize goes without a session id");
    assert_eq!(init.header("mcp-protocol-version"), None);
    assert_eq!(init.header("accept"), Some("application/json, text/event-stream"));
    assert_eq!(init.header("content-type"), Some("application/json"));
    // The 2026-07-28 probe went first, stateless; the fixture's 400 sent the client to `initialize`.
    let probe = posts(&log, "server/discover")[0];
    assert_eq!(probe.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(probe.header("mcp-method"), Some("server/discover"));
    assert_eq!(probe.header("mcp-session-id"), None);
    let session = |s: &&Seen| !matches!(s.rpc_method(), Some("initialize" | "server/discover"));
    for seen in log.iter().filter(session) {
        assert_eq!(seen.header("mcp-session-id"), Some("session-1"), "{} {:?}", seen.method, seen.body);
        assert_eq!(seen.header("mcp-protocol-version"), Some("2025-06-18"), "{} {:?}", seen.method, seen.body);
    }
    assert!(log.iter().all(|s| s.header("x-tenant") == Some("acme")), "the custom header is on every request");
    // Order: initialized is accepted before the GET stream and the next request go out.
    let position = |pred: &dyn Fn(&Seen) -> bool| log.iter().position(pred).unwrap();
    let initialized = position(&|s| s.rpc_method() == Some("notifications/initialized"));
    assert!(initialized < position(&|s| s.method == "GET"));
    assert!(initialized < position(&|s| s.rpc_method() == Some("tools/call")));
    let get = log.iter().find(|s| s.method == "GET").unwrap();
    assert_eq!(get.header("accept"), Some("text/event-stream"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_answers_and_batches() {
    let fx = Fixture::start(Options { json: true, ..Options::default() }).await;
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let client = builder().on_event(move |e| drop(events_tx.send(e))).connect_http(&fx.url()).await.unwrap();
    assert_eq!(text(&client.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap()), "sum: 3");
    // A body with a batch: each message is read (a log message, then the answer).
    assert_eq!(text(&client.call_tool("batch", json!({})).await.unwrap()), "batched");
    match events.recv().await.unwrap() {
        ServerEvent::Log(log) => assert_eq!(log.data, json!("from a batch")),
        other => panic!("unexpected event {other:?}"),
    }
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_requests_on_a_post_stream_and_notifications_on_the_get_stream() {
    let fx = Fixture::start(Options::default()).await;
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let client = builder()
        .on_elicitation(|params: ElicitRequestParams| async move {
            let ElicitRequestParams::ElicitRequestForm(form) = params else { panic!("not a form") };
            assert_eq!(form.message, "Your name?");
            let mut result = ElicitResult::new(ElicitAction::Accept);
            result.content = Some([("name".to_owned(), ElicitResultContentValue::String("Ada".into()))].into());
            Ok::<_, ErrorObject>(result)
        })
        .apply_elicitation_defaults()
        .on_event(move |e| drop(events_tx.send(e)))
        .connect_http(&fx.url())
        .await
        .unwrap();
    // The server asks on the call's stream; our answer is POSTed; the result follows.
    let result = client.call_tool("elicit", json!({})).await.unwrap();
    let content: serde_json::Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(content, json!({"name": "Ada", "color": "green"}));

    fx.wait_get_stream().await;
    let result = client.call_tool("notify_get", json!({})).await.unwrap();
    assert_eq!(text(&result), "sent on 1 streams");
    match events.recv().await.unwrap() {
        ServerEvent::Log(log) => assert_eq!(log.data, json!("on the GET stream")),
        other => panic!("unexpected event {other:?}"),
    }
    let answer = fx.log().into_iter().find(|s| s.body.as_ref().is_some_and(|b| b["id"] == "ask-1")).unwrap();
    assert_eq!(answer.header("mcp-session-id"), Some("session-1"), "our answer goes in the session");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_closed_early_is_resumed_after_retry_with_last_event_id() {
    let fx = Fixture::start(Options { retry_ms: 150, get_stream: false, ..Options::default() }).await;
    let client = builder().connect_http(&fx.url()).await.unwrap();
    let result = client.call_tool("drop_stream", json!({})).await.unwrap();
    assert_eq!(text(&result), "resumed");

    let log = fx.log();
    let resume = log.iter().find(|s| s.method == "GET" && s.header("last-event-id").is_some()).unwrap();
    assert_eq!(resume.header("last-event-id"), Some("e-1"));
    assert_eq!(resume.header("mcp-session-id"), Some("session-1"));
    let waited = resume.at - fx.dropped_at().unwrap();
    assert!(waited >= Duration::from_millis(150), "reconnected after {waited:?}, before the retry of 150 ms");
    assert!(waited < Duration::from_secs(3), "reconnected after {waited:?}");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ends_every_stream_with_retry_0_gets_no_tight_loop() {
    // Every GET stream brings a priming event with `retry: 0` and ends: that is no progress,
    // and no reason to reconnect at once.
    let fx = Fixture::start(Options { retry_ms: 0, get_stream_ends_at_once: true, ..Options::default() }).await;
    let client = builder().connect_http(&fx.url()).await.unwrap();
    let gets = |log: &[Seen]| log.iter().filter(|s| s.method == "GET").map(|s| s.at).collect::<Vec<_>>();
    let log = fx.wait_for("six GET streams", |log| gets(log).len() >= 6).await;
    let at = gets(&log);
    for pair in at.windows(2) {
        let waited = pair[1] - pair[0];
        assert!(waited >= Duration::from_millis(100), "reconnected after {waited:?}");
    }
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_refused_with_409_is_tried_again() {
    // 409: the server still holds a stream it has not noticed the client lost.
    let fx = Fixture::start(Options { get_conflicts: 2, ..Options::default() }).await;
    let client = builder().connect_http(&fx.url()).await.unwrap();
    fx.wait_get_stream().await;
    let gets = fx.log().iter().filter(|s| s.method == "GET").count();
    assert_eq!(gets, 3, "two refusals, then the stream");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_get_stream_is_reopened_with_its_last_event_id() {
    let fx = Fixture::start(Options { retry_ms: 20, ..Options::default() }).await;
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let client = builder().on_event(move |e| drop(events_tx.send(e))).connect_http(&fx.url()).await.unwrap();
    fx.wait_get_stream().await;
    let first = fx.log().into_iter().find(|s| s.method == "GET").unwrap();
    assert_eq!(first.header("last-event-id"), None);
    fx.end_get_streams();
    let log = fx
        .wait_for("the GET stream reopened", |log| {
            log.iter().any(|s| s.method == "GET" && s.header("last-event-id").is_some())
        })
        .await;
    let again = log.iter().find(|s| s.method == "GET" && s.header("last-event-id").is_some()).unwrap();
    // The priming event of the first stream was the first event of the session.
    assert_eq!(again.header("last-event-id"), Some("get-e-1"));
    assert_eq!(again.header("mcp-session-id"), Some("session-1"));
    // Messages flow on the new stream.
    fx.wait_get_stream().await;
    let log_message = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "after reopening"}});
    assert_eq!(fx.notify_get_streams(log_message).await, 1);
    match events.recv().await.unwrap() {
        ServerEvent::Log(log) => assert_eq!(log.data, json!("after reopening")),
        other => panic!("unexpected event {other:?}"),
    }
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_ends_without_an_event_id_fails_the_call() {
    let fx = Fixture::start(Options::default()).await;
    let client = builder().connect_http(&fx.url()).await.unwrap();
    let e = client.call_tool("drop_no_id", json!({})).await.unwrap_err();
    assert_eq!(Some(http(&e).kind()), Some(HttpErrorKind::StreamEnded), "{e}");
    // The connection lives on.
    client.ping().await.unwrap();
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_error_fails_the_call_with_status_and_body() {
    let fx = Fixture::start(Options::default()).await;
    let client = builder().connect_http(&fx.url()).await.unwrap();
    let e = client.call_tool("fail500", json!({})).await.unwrap_err();
    let error = http(&e);
    assert_eq!(Some(error.kind()), Some(HttpErrorKind::Status));
    assert_eq!(error.status().map(|s| s.as_u16()), Some(500));
    assert!(error.to_string().contains("500") && error.to_string().contains("boom"), "{error}");
    client.ping().await.unwrap();
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_answered_202_without_a_get_stream_fails_at_once() {
    // No GET stream (405) could bring the answer of a request the server accepted with 202.
    let fx = Fixture::start(Options { get_stream: false, ..Options::default() }).await;
    let client = builder().connect_http(&fx.url()).await.unwrap();
    fx.wait_for("the GET stream refused", |log| log.iter().any(|s| s.method == "GET")).await;
    client.ping().await.unwrap();
    let call = client.call_tool("accepted", json!({}));
    let e = tokio::time::timeout(Duration::from_secs(30), call).await.expect("fails at once").unwrap_err();
    assert_eq!(Some(http(&e).kind()), Some(HttpErrorKind::BadResponse), "{e}");
    assert!(http(&e).to_string().contains("202"), "{e}");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_over_the_size_limit_fails_the_call() {
    let fx = Fixture::start(Options { json: true, ..Options::default() }).await;
    let config = HttpClientConfig::parse(&fx.url()).unwrap().max_message_size(512);
    let client = builder().connect_http_with(config).await.unwrap();
    let e = client.call_tool("big", json!({})).await.unwrap_err();
    assert_eq!(Some(http(&e).kind()), Some(HttpErrorKind::TooLarge), "{e}");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_is_renewed_and_the_call_sent_again() {
    let fx = Fixture::start(Options::default()).await;
    let client = builder().connect_http(&fx.url()).await.unwrap();
    client.ping().await.unwrap();
    fx.wait_get_stream().await;
    fx.expire_sessions();
    let result = client.call_tool("add", json!({"a": 1, "b": 1})).await.unwrap();
    assert_eq!(text(&result), "sum: 2");

    let log = fx.log();
    let inits = posts(&log, "initialize");
    assert_eq!(inits.len(), 2);
    assert_eq!(inits[1].header("mcp-session-id"), None, "a new session starts without the old id");
    let calls = posts(&log, "tools/call");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].header("mcp-session-id"), Some("session-1"));
    assert_eq!(calls[1].header("mcp-session-id"), Some("session-2"));
    let initialized = posts(&log, "notifications/initialized");
    assert_eq!(initialized.len(), 2);
    assert_eq!(initialized[1].header("mcp-session-id"), Some("session-2"));
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_renewal_an_expired_session_is_an_error_until_reinitialized() {
    let fx = Fixture::start(Options { get_stream: false, ..Options::default() }).await;
    let client = builder().reinitialize_on_session_expiry(false).connect_http(&fx.url()).await.unwrap();
    // The GET stream was refused (405) before the session ends.
    fx.wait_for("the GET stream", |log| log.iter().any(|s| s.method == "GET")).await;
    fx.expire_sessions();
    let e = client.ping().await.unwrap_err();
    assert!(e.is_session_expired(), "{e}");
    assert!(http(&e).to_string().contains("404"), "{e}");
    // Later calls fail at once, without a request.
    let before = fx.log().len();
    assert!(client.ping().await.unwrap_err().is_session_expired());
    assert_eq!(fx.log().len(), before);
    let init = client.reinitialize().await.unwrap();
    assert_eq!(init.server_info.name, "fixture");
    client.ping().await.unwrap();
    assert_eq!(fx.log().last().unwrap().header("mcp-session-id"), Some("session-2"));
    client.close().await.unwrap();
}

/// Gives a stale token first; when told of the 401, switches to the right one.
struct Refreshing {
    token: std::sync::Mutex<&'static str>,
    challenges: AtomicUsize,
}

impl AuthProvider for Refreshing {
    fn authorization(&self) -> BoxFuture<'_, Option<HeaderValue>> {
        let token = *self.token.lock().unwrap();
        Box::pin(async move { Some(HeaderValue::from_str(&format!("Bearer {token}")).unwrap()) })
    }

    fn on_unauthorized(&self, challenge: Unauthorized) -> BoxFuture<'_, bool> {
        assert_eq!(challenge.status, 401);
        let www = challenge.www_authenticate.unwrap();
        assert!(www.to_str().unwrap().contains("resource_metadata"), "{www:?}");
        self.challenges.fetch_add(1, Ordering::Relaxed);
        *self.token.lock().unwrap() = "right";
        Box::pin(async { true })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_comes_from_the_provider_and_a_401_is_an_authorization_error() {
    let fx = Fixture::start(Options { token: Some("right"), ..Options::default() }).await;
    let e = builder().connect_http(&fx.url()).await.unwrap_err();
    let error = http(&e);
    assert_eq!(Some(error.kind()), Some(HttpErrorKind::Unauthorized));
    assert!(error.to_string().contains("authorization") && error.to_string().contains("resource_metadata"), "{error}");

    let provider = Arc::new(Refreshing { token: std::sync::Mutex::new("stale"), challenges: AtomicUsize::new(0) });
    struct Shared(Arc<Refreshing>);
    impl AuthProvider for Shared {
        fn authorization(&self) -> BoxFuture<'_, Option<HeaderValue>> {
            self.0.authorization()
        }
        fn on_unauthorized(&self, challenge: Unauthorized) -> BoxFuture<'_, bool> {
            self.0.on_unauthorized(challenge)
        }
    }
    let config = HttpClientConfig::parse(&fx.url()).unwrap().auth(Shared(provider.clone()));
    let client = builder().connect_http_with(config).await.unwrap();
    client.ping().await.unwrap();
    assert_eq!(provider.challenges.load(Ordering::Relaxed), 1);
    client.close().await.unwrap();
    assert!(
        fx.log().iter().filter(|s| s.method == "DELETE").all(|s| s.header("authorization") == Some("Bearer right"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_run_concurrently_up_to_the_bound() {
    let fx = Fixture::start(Options { get_stream: false, ..Options::default() }).await;
    let config = HttpClientConfig::parse(&fx.url()).unwrap().max_in_flight(3);
    let client = Arc::new(builder().connect_http_with(config).await.unwrap());
    let call = |client: Arc<Client>| tokio::spawn(async move { client.call_tool("hold", json!({})).await });
    let calls: Vec<_> = (0..5).map(|_| call(client.clone())).collect();
    // Three are held by the server at once: they went out concurrently.
    fx.wait_holding(3).await;
    fx.release(5);
    for c in calls {
        assert_eq!(text(&c.await.unwrap().unwrap()), "released");
    }
    assert_eq!(fx.max_holding(), 3, "no more than max_in_flight requests at once");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_sse_transport() {
    let fx = Fixture::start(Options::default()).await;
    let transport = HttpSseTransport::connect(HttpClientConfig::parse(&fx.sse_url()).unwrap()).await.unwrap();
    assert_eq!(transport.endpoint().path(), "/messages");
    let handle = transport.handle();
    let client = builder().connect(transport).await.unwrap();
    assert!(handle.is_http_sse());
    assert_eq!(handle.session_id(), None);
    assert_eq!(text(&client.call_tool("add", json!({"a": 20, "b": 22})).await.unwrap()), "sum: 42");
    let log = fx.log();
    assert!(posts(&log, "tools/call").iter().all(|s| s.path == "/messages?sessionId=sse-1"));
    // The end of the SSE stream is the end of the connection.
    fx.end_sse_streams();
    tokio::time::timeout(Duration::from_secs(10), client.peer().closed()).await.unwrap();
    assert!(matches!(client.ping().await, Err(ClientError::Closed(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_sse_server_is_reached_through_the_fallback() {
    let fx = Fixture::start(Options::default()).await;
    // POST to /sse gets 405: the client opens the SSE stream there and goes on over HTTP+SSE.
    let client = builder().connect_http(&fx.sse_url()).await.unwrap();
    assert_eq!(client.server_info().name, "fixture");
    assert_eq!(text(&client.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap()), "sum: 3");
    let log = fx.log();
    let order: Vec<(String, String)> = log.iter().map(|s| (s.method.to_string(), s.path.clone())).collect();
    assert_eq!(order[0], ("GET".to_owned(), "/sse".to_owned()), "{order:?}");
    let inits = posts(&log, "initialize");
    assert_eq!(inits.len(), 1, "the refused POST is not recorded by /sse; {order:?}");
    assert_eq!(inits[0].path, "/messages?sessionId=sse-1");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_4xx_to_initialize_but_401_and_403_leads_to_the_fallback() {
    for code in [400, 404, 405, 406, 415, 422] {
        let fx = Fixture::start(Options::default()).await;
        let url = fx.refusing_sse_url(code);
        // Pinned to the session revisions: the POST of `initialize` is the first thing sent.
        let client =
            builder().session_revisions_only().connect_http(&url).await.unwrap_or_else(|e| panic!("{code}: {e}"));
        assert_eq!(text(&client.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap()), "sum: 3", "{code}");
        let log = fx.log();
        let order: Vec<(String, String)> = log.iter().map(|s| (s.method.to_string(), s.path.clone())).collect();
        let path = format!("/refusing/{code}");
        assert_eq!(order[0], ("POST".to_owned(), path.clone()), "{code}: {order:?}");
        assert_eq!(log[0].rpc_method(), Some("initialize"));
        assert_eq!(order[1], ("GET".to_owned(), path), "{code}: the fallback; {order:?}");
        let inits = posts(&log, "initialize");
        assert_eq!(inits.len(), 2, "{code}: {order:?}");
        assert_eq!(inits[1].path, "/messages?sessionId=sse-1", "{code}");
        client.close().await.unwrap();
    }
    // With the default builder, the `server/discover` probe is refused first, by the same rule.
    let fx = Fixture::start(Options::default()).await;
    let client = builder().connect_http(&fx.refusing_sse_url(415)).await.unwrap();
    assert_eq!(client.server_info().name, "fixture");
    assert!(fx.log().iter().any(|s| s.method == "GET"), "the fallback");
    client.close().await.unwrap();

    // 401 and 403 are about credentials: reported as they are, no fallback.
    for code in [401, 403] {
        let fx = Fixture::start(Options::default()).await;
        let e = builder().session_revisions_only().connect_http(&fx.refusing_sse_url(code)).await.unwrap_err();
        let error = http(&e);
        assert_eq!(error.status().map(|s| s.as_u16()), Some(code), "{e}");
        assert!(!error.to_string().contains("HTTP+SSE"), "{e}");
        let log = fx.log();
        assert!(log.iter().all(|s| s.method == "POST"), "{code}: no GET for the fallback: {log:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_fallback_when_disabled_and_a_clear_error_when_nothing_listens() {
    let fx = Fixture::start(Options::default()).await;
    let config = HttpClientConfig::parse(&fx.sse_url()).unwrap().http_sse_fallback(false);
    let e = builder().connect_http_with(config).await.unwrap_err();
    assert_eq!(http(&e).status().map(|s| s.as_u16()), Some(405), "{e}");

    // Neither transport there: the error names both attempts.
    let e = builder().connect_http(&format!("http://{}/nothing", fx.addr)).await.unwrap_err();
    let error = http(&e);
    assert_eq!(error.status().map(|s| s.as_u16()), Some(404), "{e}");
    assert!(error.to_string().contains("HTTP+SSE"), "{e}");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let e = builder().connect_http(&url).await.unwrap_err();
    assert_eq!(Some(http(&e).kind()), Some(HttpErrorKind::Connection), "{e}");

    let e = builder().connect_http("not a url").await.unwrap_err();
    assert!(matches!(e, ClientError::Transport(_)), "{e:?}");
}
