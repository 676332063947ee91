//! The circuit breaker of a [`Redis`] handle, over a real `redis-server` made to hang (SIGSTOP):
//! consecutive timeouts open it, calls then fail at once without reaching Redis (checked in
//! Redis, not by timing them), `/readyz` and new sessions say so, and one probe closes it once
//! Redis answers again. The breaker's wait is skipped with tokio's paused clock, never slept.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_redis::{Circuit, Error, Redis, RedisConfig};
use mcp_server::mcp_transport_http::server::{self, EventStore, HttpServerConfig, SharedError, SharedSessions};
use mcp_server::{Server, ToolDef, ToolError};
use mcp_test_support::redis::RedisServer;
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::json;

const TTL: Duration = Duration::from_secs(600);
/// The breaker's wait: longer than any test runs, so that only the paused clock ends it.
const OPEN_FOR: Duration = Duration::from_secs(3600);

fn fields() -> Vec<(String, Bytes)> {
    vec![("session".to_owned(), Bytes::from_static(b"{}"))]
}

/// Each command's timeout: what a call to the hung Redis waits.
const TIMEOUT: Duration = Duration::from_millis(500);

fn handle(redis: &RedisServer, threshold: u32) -> Redis {
    let config = RedisConfig::new(redis.url()).timeout(TIMEOUT).circuit_breaker(threshold, OPEN_FOR);
    Redis::connect_with(config).unwrap()
}

/// Whether session `id`'s record is in Redis, asked on a connection of the test's own.
fn exists(redis: &RedisServer, id: &str) -> bool {
    redis.command(&format!("EXISTS mcp:session:{{{id}}}")) == ":1"
}

/// Polls (never sleeps on) `ready` for up to 10 s.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ready() {
        assert!(Instant::now() < deadline, "{what}: not within 10 s");
        std::thread::yield_now();
    }
}

/// The store's error as the crate's.
fn unavailable(error: &SharedError) -> Option<Duration> {
    match error.downcast_ref::<Error>() {
        Some(Error::Unavailable { retry_after }) => Some(*retry_after),
        _ => None,
    }
}

/// Skips the breaker's wait on tokio's clock (no I/O meanwhile).
async fn skip_the_wait() {
    tokio::time::pause();
    tokio::time::advance(OPEN_FOR).await;
    tokio::time::resume();
}

#[tokio::test]
async fn a_hung_redis_opens_the_breaker_and_calls_then_never_reach_it() {
    let redis = RedisServer::start();
    let handle = handle(&redis, 3);
    let sessions = handle.sessions();
    // Redis answers (and knows the create script).
    assert!(sessions.create("warm", &fields(), TTL).await.unwrap());
    assert_eq!(handle.circuit(), Circuit::Closed);
    redis.pause();
    // Three consecutive timeouts: sent, unanswered.
    for i in 0..3 {
        let error = sessions.create(&format!("timed-{i}"), &fields(), TTL).await.unwrap_err();
        assert!(unavailable(&error).is_none(), "timed out, not shed: {error}");
    }
    assert!(matches!(handle.circuit(), Circuit::Open { .. }));
    assert!(sessions.readiness().is_err());
    // The breaker is open: these fail at once, with their own error, without being sent.
    for i in 0..3 {
        let error = sessions.create(&format!("shed-{i}"), &fields(), TTL).await.unwrap_err();
        let retry_after = unavailable(&error).unwrap_or_else(|| panic!("not shed: {error}"));
        assert!(retry_after > Duration::from_secs(3000) && retry_after <= OPEN_FOR);
    }
    // An SSE event appended now (under its session's routing lock) is dropped at once too.
    let events = handle.event_store();
    events.append("streamed", 1, 1, Bytes::from_static(br#"{"jsonrpc":"2.0","method":"m"}"#)).await;
    redis.resume();
    // What was sent while Redis hung runs now; what was shed never reached it.
    wait_until("the creates sent before the breaker opened ran", || exists(&redis, "timed-2"));
    for i in 0..3 {
        assert!(!exists(&redis, &format!("shed-{i}")), "shed-{i} reached Redis: the breaker did not open");
    }
    assert_eq!(redis.command("EXISTS mcp:events:{streamed}:s:1"), ":0", "the event was not sent");
    // Redis answers, but the breaker waits its time: still shed.
    assert!(unavailable(&sessions.create("early", &fields(), TTL).await.unwrap_err()).is_some());
    skip_the_wait().await;
    assert_eq!(handle.circuit(), Circuit::HalfOpen);
    assert!(sessions.readiness().is_ok(), "half-open: ready, the next call probes");
    // The probe is answered: closed.
    assert!(sessions.create("after", &fields(), TTL).await.unwrap());
    assert_eq!(handle.circuit(), Circuit::Closed);
    assert!(exists(&redis, "after") && !exists(&redis, "early"));
}

#[tokio::test]
async fn one_probe_at_a_time_and_a_failed_probe_opens_the_breaker_again() {
    let redis = RedisServer::start();
    let handle = handle(&redis, 1);
    let sessions = handle.sessions();
    assert!(sessions.create("warm", &fields(), TTL).await.unwrap());
    redis.pause();
    assert!(sessions.load("a").await.is_err());
    assert!(matches!(handle.circuit(), Circuit::Open { .. }), "threshold 1: one failure opens it");
    skip_the_wait().await;
    // The probe goes to the hung Redis; meanwhile every other call is shed.
    let probe = tokio::spawn({
        let sessions = sessions.clone();
        async move { sessions.create("probe", &fields(), TTL).await.map_err(|e| e.to_string()) }
    });
    while handle.circuit() != Circuit::Probing {
        tokio::task::yield_now().await;
    }
    let error = sessions.create("beside", &fields(), TTL).await.unwrap_err();
    assert_eq!(unavailable(&error), Some(Duration::ZERO), "shed while the probe runs: {error}");
    assert!(probe.await.unwrap().is_err(), "the probe timed out");
    assert!(matches!(handle.circuit(), Circuit::Open { .. }), "a failed probe opens it again");
    redis.resume();
    skip_the_wait().await;
    assert!(sessions.load("a").await.unwrap().is_none());
    assert_eq!(handle.circuit(), Circuit::Closed);
    assert!(!exists(&redis, "beside"));
}

fn instance() -> Server {
    let echo = ToolDef::new("echo", json!({"type": "object"}), |_, _| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("echo")]))
    })
    .unwrap();
    Server::builder("breaker", "1.0.0").tool(echo).build().unwrap()
}

fn initialize(base: &str) -> reqwest::RequestBuilder {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    reqwest::Client::new()
        .post(base)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(init.to_string())
}

#[tokio::test]
async fn readyz_and_new_sessions_answer_503_while_the_breaker_is_open() {
    let redis = RedisServer::start();
    let handle = handle(&redis, 2);
    let store = handle.sessions();
    let config = HttpServerConfig::default().health_routes(true).shared_sessions(Arc::new(store.clone()));
    let router = instance().http_router(config.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { server::serve_router(listener, router, &config).await });
    let (base, readyz) = (format!("http://{address}/mcp"), format!("http://{address}/readyz"));
    let ready = || async { reqwest::get(&readyz).await.unwrap().status() };
    assert_eq!(ready().await, 200);
    assert_eq!(initialize(&base).send().await.unwrap().status(), 200);
    redis.pause();
    // Redis hangs: two calls time out, the breaker opens.
    assert!(store.load("a").await.is_err());
    assert!(store.load("b").await.is_err());
    let unready = reqwest::get(&readyz).await.unwrap();
    assert_eq!(unready.status(), 503);
    assert_eq!(unready.text().await.unwrap(), "shared session store unavailable");
    // A new session is refused at once, with when to come back.
    let refused = initialize(&base).send().await.unwrap();
    assert_eq!(refused.status(), 503);
    let retry_after: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(retry_after > 3000 && retry_after <= OPEN_FOR.as_secs(), "Retry-After: {retry_after}");
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32603);
    // A session this instance does not hold is not loaded.
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let elsewhere = reqwest::Client::new()
        .post(&base)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", "held-elsewhere")
        .header("mcp-protocol-version", "2025-06-18")
        .body(ping.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(elsewhere.status(), 503);
    assert!(elsewhere.headers()["retry-after"].to_str().unwrap().parse::<u64>().unwrap() > 3000);
    redis.resume();
    skip_the_wait().await;
    // Half-open: the next call probes and closes it (the endpoint's own background calls, the
    // tag's renewal, may be the probe: then it is waited for).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match handle.circuit() {
            Circuit::Closed => break,
            Circuit::HalfOpen => {
                let _ = store.load("c").await;
            }
            Circuit::Probing => tokio::time::sleep(Duration::from_millis(5)).await,
            open => panic!("the breaker did not close: {open:?}"),
        }
        assert!(std::time::Instant::now() < deadline, "no probe closed the breaker");
    }
    assert_eq!(ready().await, 200);
    assert_eq!(initialize(&base).send().await.unwrap().status(), 200);
}

/// Records every metric update as `name{label=value,...}` and its value.
#[derive(Clone, Default)]
struct Recorded(Arc<std::sync::Mutex<Vec<(String, f64)>>>);

struct Metric(String, Recorded);

impl metrics::CounterFn for Metric {
    fn increment(&self, value: u64) {
        self.1.0.lock().unwrap().push((self.0.clone(), value as f64));
    }
    fn absolute(&self, value: u64) {
        self.increment(value);
    }
}

impl metrics::GaugeFn for Metric {
    fn increment(&self, _: f64) {}
    fn decrement(&self, _: f64) {}
    fn set(&self, value: f64) {
        self.1.0.lock().unwrap().push((self.0.clone(), value));
    }
}

impl metrics::HistogramFn for Metric {
    fn record(&self, value: f64) {
        self.1.0.lock().unwrap().push((self.0.clone(), value));
    }
}

impl Recorded {
    fn metric(&self, key: &metrics::Key) -> Arc<Metric> {
        let labels: Vec<String> = key.labels().map(|l| format!("{}={}", l.key(), l.value())).collect();
        Arc::new(Metric(format!("{}{{{}}}", key.name(), labels.join(",")), self.clone()))
    }

    /// The values recorded for `name`.
    fn values(&self, name: &str) -> Vec<f64> {
        self.0.lock().unwrap().iter().filter(|(n, _)| n == name).map(|(_, v)| *v).collect()
    }
}

impl metrics::Recorder for Recorded {
    fn describe_counter(&self, _: metrics::KeyName, _: Option<metrics::Unit>, _: metrics::SharedString) {}
    fn describe_gauge(&self, _: metrics::KeyName, _: Option<metrics::Unit>, _: metrics::SharedString) {}
    fn describe_histogram(&self, _: metrics::KeyName, _: Option<metrics::Unit>, _: metrics::SharedString) {}
    fn register_counter(&self, key: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Counter {
        metrics::Counter::from_arc(self.metric(key))
    }
    fn register_gauge(&self, key: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Gauge {
        metrics::Gauge::from_arc(self.metric(key))
    }
    fn register_histogram(&self, key: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Histogram {
        metrics::Histogram::from_arc(self.metric(key))
    }
}

/// The metrics of the shared vocabulary (`mcp_redis_*`), recorded on this thread (a
/// current-thread runtime runs everything on it).
#[test]
fn the_breaker_and_each_command_are_measured() {
    let recorded = Recorded::default();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    metrics::with_local_recorder(&recorded, || {
        runtime.block_on(async {
            let redis = RedisServer::start();
            let handle = handle(&redis, 1);
            let sessions = handle.sessions();
            assert!(sessions.create("warm", &fields(), TTL).await.unwrap());
            redis.pause();
            assert!(sessions.create("timed", &fields(), TTL).await.is_err());
            assert!(sessions.create("shed", &fields(), TTL).await.is_err());
            redis.resume();
            skip_the_wait().await;
            assert!(sessions.create("after", &fields(), TTL).await.unwrap());
        })
    });
    assert_eq!(recorded.values("mcp_redis_circuit_open{}"), [1.0, 0.0], "opened, then closed");
    assert_eq!(recorded.values("mcp_redis_failures_total{op=evalsha,kind=timeout}"), [1.0]);
    assert_eq!(recorded.values("mcp_redis_failures_total{op=evalsha,kind=shed}"), [1.0]);
    let durations = recorded.values("mcp_redis_duration_seconds{op=evalsha}");
    // warm (twice: NOSCRIPT, then again once loaded), timed and after were sent; shed was not.
    assert_eq!(durations.len(), 4, "{durations:?}");
    // (A command answered took less than the timeout: it would have timed out otherwise.)
    let waited = durations.iter().filter(|d| **d >= TIMEOUT.as_secs_f64()).count();
    assert_eq!(waited, 1, "only timed waited its timeout: {durations:?}");
    assert_eq!(recorded.values("mcp_redis_duration_seconds{op=script}").len(), 1, "the script loaded once");
}
