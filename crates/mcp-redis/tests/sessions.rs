//! Sessions shared through a real Redis by two instances in this process: a session started on
//! one is served by the other, the answer to a server's request POSTed to the other reaches its
//! handler, DELETE ends it everywhere; with Redis down, a session the instance does not hold
//! gets 503 (and the instance goes on serving what needs no Redis), and service returns when
//! Redis does. The session's record takes changes made on two instances at once, a copy
//! loaded just before a DELETE cannot bring the session back, and a session with an open
//! stream keeps its record past the idle timeout. The fleet's messages go to the instance they
//! name (an answer, a probe, a resumed stream's events); an instance that missed messages
//! reloads its sessions and fails their waiting calls; one whose tag another holds serves no
//! shared session. After Redis restarted empty, an answer POSTed to another instance still
//! reaches the call that waits for it, and a call whose answer cannot come fails within a
//! renewal of the tag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_redis::{Redis, RedisConfig, RedisSessions};
use mcp_server::mcp_transport_http::server::{
    self, Audience, Delivery, EventStore, FieldChange, HttpServerConfig, InMemoryEventStore, SessionCopy,
    SessionRecord, SharedFuture, SharedSessions, Touched,
};
use mcp_server::{Server, ToolDef, ToolError};
use mcp_test_support::redis::{RedisServer, Reply};
use mcp_types::{CallToolResult, ContentBlock, LoggingLevel};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};

const VERSION: &str = "2025-06-18";

/// Ends the calls of the tool `wait`.
static RELEASE: tokio::sync::Notify = tokio::sync::Notify::const_new();

fn instance() -> Server {
    let roots = ToolDef::new("roots", json!({"type": "object"}), |_, ctx| async move {
        let roots = ctx.list_roots().await.map_err(ToolError::new)?;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(roots.roots[0].uri.clone())]))
    })
    .unwrap();
    // Asks the client for its roots, waits for the test's word, then answers with the first.
    let roots_later = ToolDef::new("roots_later", json!({"type": "object"}), |_, ctx| async move {
        let roots = ctx.list_roots().await.map_err(ToolError::new)?;
        RELEASE.notified().await;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(roots.roots[0].uri.clone())]))
    })
    .unwrap();
    // Logs "logged" at level info, then answers.
    let log = ToolDef::new("log", json!({"type": "object"}), |_, ctx| async move {
        ctx.log(LoggingLevel::Info, json!("logged")).await;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
    })
    .unwrap();
    // Waits for the test's word (a long call), then answers.
    let wait = ToolDef::new("wait", json!({"type": "object"}), |_, _| async move {
        RELEASE.notified().await;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
    })
    .unwrap();
    // Logs "one", waits for the test's word, logs "two", answers.
    let steps = ToolDef::new("steps", json!({"type": "object"}), |_, ctx| async move {
        ctx.log(LoggingLevel::Info, json!("one")).await;
        RELEASE.notified().await;
        ctx.log(LoggingLevel::Info, json!("two")).await;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
    })
    .unwrap();
    Server::builder("redis-fleet", "1.0.0")
        .tool(roots)
        .tool(roots_later)
        .tool(log)
        .tool(wait)
        .tool(steps)
        .enable_resources()
        .build()
        .unwrap()
}

/// A handle on `redis` of its own, as each process of a fleet has.
fn handle(redis: &RedisServer) -> Redis {
    Redis::connect_with(RedisConfig::new(redis.url()).timeout(Duration::from_millis(500))).unwrap()
}

/// Two instances on one Redis (each with a handle of its own, as two processes would have).
async fn fleet(redis: &RedisServer) -> Vec<String> {
    let stores: Vec<Arc<dyn SharedSessions>> =
        vec![Arc::new(handle(redis).sessions()), Arc::new(handle(redis).sessions())];
    fleet_of(redis, stores, HttpServerConfig::default()).await
}

/// An instance per store, with `config`, on one Redis.
async fn fleet_of(redis: &RedisServer, stores: Vec<Arc<dyn SharedSessions>>, config: HttpServerConfig) -> Vec<String> {
    let events: Arc<dyn EventStore> = Arc::new(InMemoryEventStore::default());
    let mut bases = Vec::new();
    let instances = stores.len() as i64;
    for store in stores {
        let config = config.clone().shared_sessions(store).event_store(Some(events.clone()));
        let router = instance().http_router(config.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        bases.push(format!("http://{}/mcp", listener.local_addr().unwrap()));
        tokio::spawn(async move { server::serve_router(listener, router, &config).await });
    }
    // Every instance claimed its tag and reads its inbox before the test begins.
    wait_for_readers(redis, instances).await;
    bases
}

/// Waits until `instances` instances claimed their tags and each blocks reading its inbox.
async fn wait_for_readers(redis: &RedisServer, instances: i64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let tags: i64 = redis.query(&["GET", "mcp:tags"]).text().parse().unwrap_or(0);
        if tags >= instances && redis.blocked_clients() >= instances as u64 {
            return;
        }
        assert!(Instant::now() < deadline, "the instances did not read the fleet's streams");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn post(base: &str, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
    let post = reqwest::Client::new()
        .post(base)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    match session {
        Some(s) => post.header("mcp-session-id", s).header("mcp-protocol-version", VERSION),
        None => post,
    }
}

/// The JSON-RPC messages of an SSE response, as they come.
struct Messages(reqwest::Response, String);

impl Messages {
    async fn next(&mut self) -> Value {
        loop {
            if let Some(end) = self.1.find("\n\n") {
                let block: String = self.1.drain(..end + 2).collect();
                let data: String = block.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
                if !data.is_empty() {
                    return serde_json::from_str(&data).unwrap();
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.0.chunk()).await.unwrap().unwrap();
            self.1.push_str(std::str::from_utf8(&chunk.expect("more events")).unwrap());
        }
    }
}

async fn initialize(base: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {"roots": {}}, "clientInfo": {"name": "t", "version": "0"}}});
    let response = post(base, None, init).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let result = Messages(response, String::new()).next().await;
    assert_eq!(result["result"]["protocolVersion"], VERSION);
    session
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_serve_one_session_through_redis() {
    let redis = RedisServer::start();
    let bases = fleet(&redis).await;
    let session = initialize(&bases[0]).await;
    assert!(redis.command(&format!("PTTL mcp:session:{{{session}}}")).starts_with(':'), "kept with an expiry");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "roots", "arguments": {}}});
    let mut answers = Messages(post(&bases[1], Some(&session), call).send().await.unwrap(), String::new());
    let asked = answers.next().await;
    assert_eq!(asked["method"], "roots/list", "{asked}");
    let reply = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": "file:///redis"}]}});
    assert_eq!(post(&bases[0], Some(&session), reply).send().await.unwrap().status(), 202);
    let result = answers.next().await;
    assert_eq!(result["result"]["content"][0]["text"], "file:///redis", "{result}");
    let delete = reqwest::Client::new().delete(&bases[1]).header("mcp-session-id", &session);
    assert_eq!(delete.send().await.unwrap().status(), 200);
    assert_eq!(redis.command(&format!("EXISTS mcp:session:{{{session}}}")), ":0");
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    assert_eq!(post(&bases[0], Some(&session), ping).send().await.unwrap().status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_down_a_session_elsewhere_is_503_and_service_returns_with_redis() {
    let mut redis = RedisServer::start();
    let bases = fleet(&redis).await;
    let held = initialize(&bases[0]).await;
    redis.kill();
    let ping = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    // Instance 1 does not hold the session and cannot load it: a clear 503, in bounded time.
    let started = Instant::now();
    let refused = post(&bases[1], Some(&held), ping(1)).send().await.unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "1");
    assert!(started.elapsed() < Duration::from_secs(5), "answered within the store's timeout");
    // Instance 0 holds it: a request that needs no Redis is served.
    assert_eq!(post(&bases[0], Some(&held), ping(2)).send().await.unwrap().status(), 200);
    // A new session needs Redis (its record is saved before the answer): an error, not a hang.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let mut failed = Messages(post(&bases[1], None, init).send().await.unwrap(), String::new());
    assert_eq!(failed.next().await["error"]["code"], -32603);
    redis.restart();
    // Redis came back (empty): new sessions work again on both instances, by themselves.
    let deadline = Instant::now() + Duration::from_secs(10);
    let session = loop {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
        let response = post(&bases[1], None, init).send().await.unwrap();
        // While the store's breaker is still open, the answer is a 503 with no session.
        let status = response.status();
        if let Some(session) = response.headers().get("mcp-session-id").map(|s| s.to_str().unwrap().to_owned())
            && Messages(response, String::new()).next().await.get("result").is_some()
        {
            break session;
        }
        assert!(Instant::now() < deadline, "service did not return within 10 s of Redis (last: {status})");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(post(&bases[0], Some(&session), ping(3)).send().await.unwrap().status(), 200);
}

/// The store of one instance, steered by the test: the instance hears the fleet's messages only
/// when the test passes them on, a load of the session it names waits for the test, and its
/// saves fail while it says so.
struct Steered {
    inner: RedisSessions,
    /// What Redis brings, not yet passed on (once the instance subscribed).
    heard: tokio::sync::Mutex<Option<mpsc::Receiver<Delivery>>>,
    /// What the instance hears (one message at a time: the next is taken once the instance
    /// handled the one before).
    passed: Mutex<Option<mpsc::Sender<Delivery>>>,
    /// A load to hold: the session, told when its record was read, then waits for the go.
    hold: Mutex<Option<Held>>,
    fail_saves: AtomicBool,
}

/// A load held: of which session, told when the record was read, waiting for the go.
type Held = (String, oneshot::Sender<()>, oneshot::Receiver<()>);

impl Steered {
    fn new(inner: RedisSessions) -> Arc<Steered> {
        let (heard, passed) = (tokio::sync::Mutex::new(None), Mutex::new(None));
        Arc::new(Steered { inner, heard, passed, hold: Mutex::new(None), fail_saves: AtomicBool::new(false) })
    }

    /// Holds the next load of `session` once its record was read: the first receiver says it
    /// was, the sender lets it go on.
    fn hold_load(&self, session: &str) -> (oneshot::Receiver<()>, oneshot::Sender<()>) {
        let (read_tx, read_rx) = oneshot::channel();
        let (go_tx, go_rx) = oneshot::channel();
        *self.hold.lock().unwrap() = Some((session.to_owned(), read_tx, go_rx));
        (read_rx, go_tx)
    }

    /// `load`, held after the record was read if a hold for session `id` was set.
    fn held<'a>(
        &self,
        id: &str,
        load: SharedFuture<'a, Option<SessionRecord>>,
    ) -> SharedFuture<'a, Option<SessionRecord>> {
        let hold = {
            let mut hold = self.hold.lock().unwrap();
            if hold.as_ref().is_some_and(|(held, _, _)| held == id) { hold.take() } else { None }
        };
        Box::pin(async move {
            let record = load.await?;
            if let Some((_, read, go)) = hold {
                read.send(()).unwrap();
                go.await.unwrap();
            }
            Ok(record)
        })
    }

    /// Passes on everything Redis brings from now on.
    async fn pass_all(self: &Arc<Self>) {
        let mut heard = self.heard.lock().await.take().expect("the instance subscribed");
        let passed = self.passed.lock().unwrap().clone().expect("the instance subscribed");
        tokio::spawn(async move {
            while let Some(delivery) = heard.recv().await {
                if passed.send(delivery).await.is_err() {
                    return;
                }
            }
        });
    }

    /// Passes on what Redis brought up to the message that ends `session`, and returns once
    /// the instance handled it (it took the next message, which no instance reads).
    async fn pass_until_ended(&self, session: &str) {
        let mut heard = self.heard.lock().await;
        let heard = heard.as_mut().expect("the instance subscribed");
        let passed = self.passed.lock().unwrap().clone().expect("the instance subscribed");
        loop {
            let delivery = tokio::time::timeout(Duration::from_secs(10), heard.recv()).await.unwrap().unwrap();
            let Delivery::Message(message) = &delivery else { panic!("nothing is lost here: {delivery:?}") };
            let header = String::from_utf8_lossy(&message[..message.iter().position(|&b| b == b'\n').unwrap()]);
            let ended = header.split(' ').nth(1) == Some("x") && header.split(' ').nth(2) == Some(session);
            passed.send(delivery).await.unwrap();
            if ended {
                break;
            }
        }
        passed.send(Delivery::Message(Bytes::from_static(b"not a message"))).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while passed.capacity() < passed.max_capacity() {
            assert!(Instant::now() < deadline, "the instance did not take its messages");
            tokio::task::yield_now().await;
        }
    }
}

impl SharedSessions for Steered {
    fn create(&self, id: &str, fields: &[(String, Bytes)], ttl: Duration) -> SharedFuture<'_, bool> {
        if self.fail_saves.load(Ordering::Relaxed) {
            return Box::pin(async { Err("saves fail (the test says so)".into()) });
        }
        self.inner.create(id, fields, ttl)
    }
    fn update(&self, id: &str, changes: &[FieldChange], ttl: Duration) -> SharedFuture<'_, Option<SessionRecord>> {
        if self.fail_saves.load(Ordering::Relaxed) {
            return Box::pin(async { Err("saves fail (the test says so)".into()) });
        }
        self.inner.update(id, changes, ttl)
    }
    fn load(&self, id: &str) -> SharedFuture<'_, Option<SessionRecord>> {
        self.held(id, self.inner.load(id))
    }
    fn load_copy(&self, id: &str, copy: SessionCopy) -> SharedFuture<'_, Option<SessionRecord>> {
        self.held(id, self.inner.load_copy(id, copy))
    }
    fn drop_copy(&self, id: &str, copy: SessionCopy) -> SharedFuture<'_, ()> {
        self.inner.drop_copy(id, copy)
    }
    fn touch_copy(&self, id: &str, copy: SessionCopy, ttl: Duration) -> SharedFuture<'_, Touched> {
        self.inner.touch_copy(id, copy, ttl)
    }
    fn hold_standalone(&self, id: &str, tag: u32) -> SharedFuture<'_, ()> {
        self.inner.hold_standalone(id, tag)
    }
    fn touch(&self, id: &str, ttl: Duration) -> SharedFuture<'_, bool> {
        self.inner.touch(id, ttl)
    }
    fn remove(&self, id: &str) -> SharedFuture<'_, ()> {
        self.inner.remove(id)
    }
    fn end(&self, id: &str, from: u32, message: Bytes) -> SharedFuture<'_, ()> {
        self.inner.end(id, from, message)
    }
    fn send_to_copies(&self, id: &str, audience: Audience, from: u32, message: Bytes) -> SharedFuture<'_, ()> {
        self.inner.send_to_copies(id, audience, from, message)
    }
    fn send(&self, to: u32, message: Bytes) -> SharedFuture<'_, ()> {
        self.inner.send(to, message)
    }
    fn subscribe(&self, tag: u32) -> mpsc::Receiver<Delivery> {
        let (passed, rx) = mpsc::channel(1);
        *self.passed.lock().unwrap() = Some(passed);
        *self.heard.try_lock().expect("subscribed once") = Some(self.inner.subscribe(tag));
        rx
    }
    fn claim_tag(&self, instance: &str, lease: Duration) -> SharedFuture<'_, u32> {
        self.inner.claim_tag(instance, lease)
    }
    fn renew_tag(&self, tag: u32, instance: &str, lease: Duration) -> SharedFuture<'_, bool> {
        self.inner.renew_tag(tag, instance, lease)
    }
}

/// All Redis holds of session `id`'s record, as text, whatever its layout.
fn record_text(redis: &RedisServer, id: &str) -> String {
    let mut conn = redis::Client::open(redis.url()).unwrap().get_connection().unwrap();
    let key = format!("mcp:session:{{{id}}}");
    let kind: String = redis::cmd("TYPE").arg(&key).query(&mut conn).unwrap();
    let parts: Vec<Vec<u8>> = match kind.as_str() {
        "string" => vec![redis::cmd("GET").arg(&key).query(&mut conn).unwrap()],
        "hash" => redis::cmd("HGETALL").arg(&key).query(&mut conn).unwrap(),
        "none" => Vec::new(),
        other => panic!("a record of type {other}"),
    };
    parts.iter().map(|p| String::from_utf8_lossy(p)).collect::<Vec<_>>().join(" ")
}

/// The JSON-RPC answer (the last message) of a POST.
async fn answer(response: reqwest::Response) -> Value {
    assert_eq!(response.status(), 200, "{response:?}");
    let mut messages = Messages(response, String::new());
    loop {
        let message = messages.next().await;
        if message.get("id").is_some() && message.get("method").is_none() {
            return message;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_on_one_instance_and_a_level_set_on_another_both_stay() {
    let redis = RedisServer::start();
    let steered = Steered::new(handle(&redis).sessions());
    let stores: Vec<Arc<dyn SharedSessions>> = vec![Arc::new(handle(&redis).sessions()), steered.clone()];
    let bases = fleet_of(&redis, stores, HttpServerConfig::default()).await;
    let session = initialize(&bases[0]).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    answer(post(&bases[1], Some(&session), ping).send().await.unwrap()).await;
    // Instance 1 holds a copy and has not heard of the subscription made on instance 0 when
    // it sets the level (its bus is held): each change is in the record all the same.
    let subscribe = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "test://x"}});
    assert!(answer(post(&bases[0], Some(&session), subscribe).send().await.unwrap()).await.get("result").is_some());
    let level = json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "error"}});
    assert!(answer(post(&bases[1], Some(&session), level).send().await.unwrap()).await.get("result").is_some());
    let record = record_text(&redis, &session);
    assert!(record.contains("test://x"), "the subscription was lost: {record}");
    assert!(record.contains("error"), "the level was lost: {record}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_the_store_refused_is_not_kept() {
    let redis = RedisServer::start();
    let steered = Steered::new(handle(&redis).sessions());
    let stores: Vec<Arc<dyn SharedSessions>> = vec![steered.clone()];
    let bases = fleet_of(&redis, stores, HttpServerConfig::default()).await;
    let session = initialize(&bases[0]).await;
    steered.fail_saves.store(true, Ordering::Relaxed);
    // An initialize the store refused leaves its session uninitialized.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let response = post(&bases[0], None, init).send().await.unwrap();
    let refused_session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert_eq!(answer(response).await["error"]["code"], -32603);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let listed = answer(post(&bases[0], Some(&refused_session), list).send().await.unwrap()).await;
    assert_eq!(listed["error"]["code"], -32600, "{listed}");
    let level = json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "error"}});
    let refused = answer(post(&bases[0], Some(&session), level).send().await.unwrap()).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    // The level the client was told was not set is not applied: info logs still come.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "log", "arguments": {}}});
    let mut messages = Messages(post(&bases[0], Some(&session), call).send().await.unwrap(), String::new());
    let first = messages.next().await;
    assert_eq!(first["method"], "notifications/message", "{first}");
    assert_eq!(first["params"]["data"], "logged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_loaded_just_before_a_delete_does_not_bring_the_session_back() {
    let redis = RedisServer::start();
    let steered = Steered::new(handle(&redis).sessions());
    let stores: Vec<Arc<dyn SharedSessions>> = vec![Arc::new(handle(&redis).sessions()), steered.clone()];
    let bases = fleet_of(&redis, stores, HttpServerConfig::default()).await;
    let session = initialize(&bases[0]).await;
    // Instance 1 reads the record for a request...
    let (read, go) = steered.hold_load(&session);
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let pinged = tokio::spawn(post(&bases[1], Some(&session), ping).send());
    read.await.unwrap();
    // ...the client ends the session on instance 0, and instance 1 handles the end (it holds
    // no copy yet)...
    let delete = reqwest::Client::new().delete(&bases[0]).header("mcp-session-id", &session);
    assert_eq!(delete.send().await.unwrap().status(), 200);
    steered.pass_until_ended(&session).await;
    // ...then instance 1 makes its copy from what it read: the session stays ended.
    go.send(()).unwrap();
    assert_eq!(pinged.await.unwrap().unwrap().status(), 404);
    let level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}});
    assert_eq!(post(&bases[1], Some(&session), level).send().await.unwrap().status(), 404);
    assert_eq!(redis.command(&format!("EXISTS mcp:session:{{{session}}}")), ":0");
    assert_eq!(
        post(&bases[0], Some(&session), json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_with_an_open_stream_keeps_its_record_past_the_idle_timeout() {
    let redis = RedisServer::start();
    let idle = Duration::from_millis(600);
    let config = HttpServerConfig::default().session_idle_timeout(idle);
    let stores: Vec<Arc<dyn SharedSessions>> =
        vec![Arc::new(handle(&redis).sessions()), Arc::new(handle(&redis).sessions())];
    let bases = fleet_of(&redis, stores, config).await;
    let session = initialize(&bases[0]).await;
    let get = reqwest::Client::new()
        .get(&bases[0])
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", VERSION);
    let stream = get.send().await.unwrap();
    assert_eq!(stream.status(), 200);
    // Redis's expiry has to really pass: three idle timeouts with nothing but the open stream.
    tokio::time::sleep(idle * 3).await;
    assert_eq!(redis.command(&format!("EXISTS mcp:session:{{{session}}}")), ":1", "the record expired while in use");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(answer(post(&bases[1], Some(&session), ping).send().await.unwrap()).await["id"], 1);
    drop(stream);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_record_changes_per_field_and_never_comes_back() {
    let redis = RedisServer::start();
    let store = handle(&redis).sessions();
    let ttl = Duration::from_secs(60);
    let set = |name: &str, value: &'static [u8]| FieldChange::Set(name.to_owned(), Bytes::from_static(value));
    let fixed = [("session".to_owned(), Bytes::from_static(b"{}"))];
    assert!(store.update("s", &[set("level", b"1")], ttl).await.unwrap().is_none(), "no record: no write");
    assert!(!store.touch("s", ttl).await.unwrap());
    assert!(store.load("s").await.unwrap().is_none());
    assert!(store.create("s", &fixed, ttl).await.unwrap());
    assert!(!store.create("s", &fixed, ttl).await.unwrap(), "made once");
    // Two instances change a field each, neither knowing of the other's change.
    let other = handle(&redis).sessions();
    store.update("s", &[set("sub:a", b"")], ttl).await.unwrap().unwrap();
    let record = other.update("s", &[set("level", b"1")], ttl).await.unwrap().unwrap();
    assert_eq!(record.version, 3);
    assert_eq!(record.field("sub:a").map(|v| &v[..]), Some(&b""[..]));
    assert_eq!(record.field("level").map(|v| &v[..]), Some(&b"1"[..]));
    let record = store.update("s", &[FieldChange::Remove("sub:a".into())], ttl).await.unwrap().unwrap();
    assert!(record.field("sub:a").is_none() && record.field("session").is_some());
    assert_eq!(store.load("s").await.unwrap(), Some(record));
    assert!(redis.command("PTTL mcp:session:{s}").trim_start_matches(':').parse::<i64>().unwrap() > 0);
    assert!(store.touch("s", ttl).await.unwrap());
    store.remove("s").await.unwrap();
    assert!(other.update("s", &[set("level", b"2")], ttl).await.unwrap().is_none(), "not made again");
    assert!(!other.touch("s", ttl).await.unwrap());
    assert_eq!(redis.command("EXISTS mcp:session:{s}"), ":0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_waiting_on_a_long_call_keeps_its_record_past_the_idle_timeout() {
    let redis = RedisServer::start();
    let idle = Duration::from_millis(600);
    // JSON responses: the call holds no SSE stream, only a request running.
    let config = HttpServerConfig::default().session_idle_timeout(idle).json_response(true);
    let stores: Vec<Arc<dyn SharedSessions>> =
        vec![Arc::new(handle(&redis).sessions()), Arc::new(handle(&redis).sessions())];
    let bases = fleet_of(&redis, stores, config).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let response = post(&bases[0], None, init).send().await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert!(response.json::<Value>().await.unwrap().get("result").is_some());
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wait", "arguments": {}}});
    let waiting = tokio::spawn(post(&bases[0], Some(&session), call).send());
    // Redis's expiry has to really pass: three idle timeouts with nothing but the call running.
    tokio::time::sleep(idle * 3).await;
    assert_eq!(redis.command(&format!("EXISTS mcp:session:{{{session}}}")), ":1", "the record expired while in use");
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let pinged = post(&bases[1], Some(&session), ping).send().await.unwrap();
    assert_eq!(pinged.json::<Value>().await.unwrap()["id"], 2);
    RELEASE.notify_one();
    let done = waiting.await.unwrap().unwrap().json::<Value>().await.unwrap();
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_whose_record_is_gone_ends() {
    let redis = RedisServer::start();
    let config = HttpServerConfig::default().session_idle_timeout(Duration::from_millis(600));
    let stores: Vec<Arc<dyn SharedSessions>> = vec![Arc::new(handle(&redis).sessions())];
    let bases = fleet_of(&redis, stores, config).await;
    let session = initialize(&bases[0]).await;
    let get = reqwest::Client::new()
        .get(&bases[0])
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", VERSION);
    let mut stream = get.send().await.unwrap();
    assert_eq!(stream.status(), 200);
    // The record goes (as when Redis evicts it): the instance that serves the stream finds
    // out when it keeps the record alive, and ends its copy, stream and all.
    assert_eq!(redis.command(&format!("DEL mcp:session:{{{session}}}")), ":1");
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.chunk()).await;
        if !matches!(chunk.expect("the stream of a session gone from Redis ends"), Ok(Some(_))) {
            break;
        }
    }
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(post(&bases[0], Some(&session), ping).send().await.unwrap().status(), 404);
    assert_eq!(redis.command(&format!("EXISTS mcp:session:{{{session}}}")), ":0", "not made again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_posted_elsewhere_goes_to_the_instance_that_asked_alone() {
    let redis = RedisServer::start();
    let stores: Vec<Arc<dyn SharedSessions>> =
        (0..3).map(|_| Arc::new(handle(&redis).sessions()) as Arc<dyn SharedSessions>).collect();
    let bases = fleet_of(&redis, stores, HttpServerConfig::default()).await;
    let session = initialize(&bases[0]).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "roots", "arguments": {}}});
    let mut answers = Messages(post(&bases[1], Some(&session), call).send().await.unwrap(), String::new());
    let asked = answers.next().await;
    assert_eq!(asked["method"], "roots/list", "{asked}");
    // The request's id names the instance that asked (its tag in the high bits).
    let asker = asked["id"].as_u64().unwrap() >> 32;
    let reply = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": "file:///3"}]}});
    assert_eq!(post(&bases[2], Some(&session), reply).send().await.unwrap().status(), 202);
    let result = answers.next().await;
    assert_eq!(result["result"]["content"][0]["text"], "file:///3", "{result}");
    // It went to the asker's inbox, not to the other instances.
    for tag in 1..=3 {
        let expected = if tag == asker { ":1" } else { ":0" };
        assert_eq!(redis.command(&format!("XLEN mcp:inbox:{{{tag}}}")), expected, "the inbox of tag {tag}");
    }
}

/// How many messages each of tags 1 to 3 was sent so far (its inbox's numbering).
fn inbox_counts(redis: &RedisServer) -> [u64; 3] {
    [1, 2, 3].map(|tag| redis.query(&["GET", &format!("mcp:inbox:{{{tag}}}:seq")]).text().parse().unwrap_or(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_a_cancellation_and_an_end_reach_the_instances_that_hold_a_copy_alone() {
    let redis = RedisServer::start();
    let stores: Vec<Arc<dyn SharedSessions>> =
        (0..3).map(|_| Arc::new(handle(&redis).sessions()) as Arc<dyn SharedSessions>).collect();
    let bases = fleet_of(&redis, stores, HttpServerConfig::default()).await;
    let session = initialize(&bases[0]).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    answer(post(&bases[1], Some(&session), ping).send().await.unwrap()).await;
    // The record names the two instances that hold a copy (the third holds none).
    let record = format!("mcp:session:{{{session}}}");
    let fields = redis.query(&["HKEYS", &record]);
    let mut copies: Vec<usize> =
        fields.items().iter().filter_map(|f| f.text().strip_prefix(".copy:")?.parse().ok()).collect();
    copies.sort_unstable();
    assert_eq!(copies.len(), 2, "two copies named: {:?}", fields.items());
    let idle = (1..=3).find(|t| !copies.contains(t)).unwrap();
    let delta = |before: [u64; 3]| {
        let after = inbox_counts(&redis);
        (0..3).map(|i| after[i] - before[i]).collect::<Vec<_>>()
    };
    // A change on instance 0 goes to the other copy alone.
    let before = inbox_counts(&redis);
    let level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}});
    assert!(answer(post(&bases[0], Some(&session), level).send().await.unwrap()).await.get("result").is_some());
    let sent = delta(before);
    assert_eq!(sent.iter().sum::<u64>(), 1, "one message: {sent:?}");
    assert_eq!(sent[idle - 1], 0, "none to the instance without a copy: {sent:?}");
    let other = sent.iter().position(|&n| n == 1).unwrap();
    let first = *copies.iter().find(|&&t| t != other + 1).unwrap();
    // A cancellation POSTed to instance 1 goes to instance 0's copy alone, and so does the end.
    let before = inbox_counts(&redis);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}});
    assert_eq!(post(&bases[1], Some(&session), cancel).send().await.unwrap().status(), 202);
    let delete = reqwest::Client::new().delete(&bases[1]).header("mcp-session-id", &session);
    assert_eq!(delete.send().await.unwrap().status(), 200);
    let sent = delta(before);
    let mut expected = vec![0; 3];
    expected[first - 1] = 2;
    assert_eq!(sent, expected, "both to the copy of instance 0 (tag {first}) alone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_the_record_forgot_is_named_again_and_reloaded_when_it_next_keeps_the_record_alive() {
    let redis = RedisServer::start();
    // A short idle timeout: a copy in use keeps its record alive every tenth of it.
    let config = HttpServerConfig::default().session_idle_timeout(Duration::from_secs(2));
    let stores: Vec<Arc<dyn SharedSessions>> =
        vec![Arc::new(handle(&redis).sessions()), Arc::new(handle(&redis).sessions())];
    let bases = fleet_of(&redis, stores, config).await;
    let session = initialize(&bases[0]).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    answer(post(&bases[1], Some(&session), ping).send().await.unwrap()).await;
    // The record forgets both copies (as when messages found their tags unheld while their
    // instances were cut off from Redis past their leases): instance 1 is not told of the
    // level set on instance 0.
    let record = format!("mcp:session:{{{session}}}");
    let named = |redis: &RedisServer| -> Vec<String> {
        let fields = redis.query(&["HKEYS", &record]);
        fields.items().iter().map(|f| f.text().to_owned()).filter(|f| f.starts_with(".copy:")).collect()
    };
    for copy in named(&redis) {
        assert_eq!(redis.query(&["HDEL", &record, &copy]), Reply::Int(1));
    }
    let level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}});
    assert!(answer(post(&bases[0], Some(&session), level).send().await.unwrap()).await.get("result").is_some());
    // Instance 1's copy, used, keeps the record alive: finds itself forgotten, is named again
    // and reloads the record, level and all.
    let deadline = Instant::now() + Duration::from_secs(10);
    for id in 3.. {
        let call =
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "log", "arguments": {}}});
        let mut messages = Messages(post(&bases[1], Some(&session), call).send().await.unwrap(), String::new());
        let first = messages.next().await;
        if first.get("result").is_some() {
            break;
        }
        assert_eq!(first["params"]["data"], "logged", "{first}");
        assert!(Instant::now() < deadline, "instance 1's copy never found it was forgotten");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(named(&redis).len(), 1, "instance 1's copy named again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_that_missed_messages_reloads_its_sessions_and_fails_their_waiting_calls() {
    let redis = RedisServer::start();
    let steered = Steered::new(handle(&redis).sessions());
    let stores: Vec<Arc<dyn SharedSessions>> = vec![Arc::new(handle(&redis).sessions()), steered.clone()];
    let bases = fleet_of(&redis, stores, HttpServerConfig::default()).await;
    let session = initialize(&bases[0]).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    answer(post(&bases[1], Some(&session), ping).send().await.unwrap()).await;
    // A call on instance 1 waits for the client's answer to its roots/list, which the client
    // never sends (as if it were among the messages lost).
    let call =
        json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": {"name": "roots", "arguments": {}}});
    let mut waiting = Messages(post(&bases[1], Some(&session), call).send().await.unwrap(), String::new());
    let asked = waiting.next().await;
    assert_eq!(asked["method"], "roots/list");
    // The record forgot instance 1's copy (as when a message found its tag unheld while it was
    // cut off from Redis past its lease): it is not told of the change below.
    let copy = format!(".copy:{}", asked["id"].as_u64().unwrap() >> 32);
    let record = format!("mcp:session:{{{session}}}");
    assert_eq!(redis.query(&["HDEL", &record, &copy]), Reply::Int(1), "{copy} named");
    // Instance 1 does not read its messages (held by the test) while 1,000 others are sent to
    // each instance (tags 1 and 2): its reader stops (its queue is full), the rest wait in
    // Redis...
    let flood = handle(&redis).sessions().inbox_bound(5);
    for n in 0..1_000 {
        for tag in 1..=2 {
            flood.send(tag, Bytes::from(format!("not a message {n}"))).await.unwrap();
        }
    }
    // ...then the level is set on instance 0 (the other copy is told to reload the record)...
    let level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}});
    assert!(answer(post(&bases[0], Some(&session), level).send().await.unwrap()).await.get("result").is_some());
    // ...and 1,000 more trim what instance 1 did not read, the change among them.
    for n in 1_000..2_000 {
        for tag in 1..=2 {
            flood.send(tag, Bytes::from(format!("not a message {n}"))).await.unwrap();
        }
    }
    steered.pass_all().await;
    // Instance 1 finds the hole: the call that waited for an answer fails at once, with an
    // error the client sees...
    let failed = waiting.next().await;
    assert_eq!(failed["id"], 100, "{failed}");
    assert!(failed.to_string().contains("may have been lost"), "{failed}");
    // ...and it reloads the record: its copy takes the level.
    let deadline = Instant::now() + Duration::from_secs(10);
    for id in 3.. {
        let call =
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "log", "arguments": {}}});
        let mut messages = Messages(post(&bases[1], Some(&session), call).send().await.unwrap(), String::new());
        let first = messages.next().await;
        if first.get("result").is_some() {
            break;
        }
        assert_eq!(first["params"]["data"], "logged", "{first}");
        assert!(Instant::now() < deadline, "instance 1 never reloaded the session's record");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The reload named the copy again: the session's next messages reach it.
    assert_eq!(redis.query(&["HEXISTS", &record, &copy]), Reply::Int(1), "{copy} named again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_whose_tag_another_holds_serves_no_shared_session() {
    let redis = RedisServer::start();
    // A short idle timeout: the tag's lease is renewed every quarter of it.
    let config = HttpServerConfig::default().session_idle_timeout(Duration::from_millis(400)).health_routes(true);
    let bases = fleet_of(&redis, vec![Arc::new(handle(&redis).sessions())], config).await;
    let session = initialize(&bases[0]).await;
    let ping = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    assert_eq!(post(&bases[0], Some(&session), ping(1)).send().await.unwrap().status(), 200);
    // Another instance holds tag 1 now (say its lease ran out while Redis was away).
    assert_eq!(redis.command("SET mcp:tag:{1} another"), "+OK");
    let deadline = Instant::now() + Duration::from_secs(10);
    for id in 2.. {
        let status = post(&bases[0], Some(&session), ping(id)).send().await.unwrap().status();
        if status == 503 {
            break;
        }
        assert_eq!(status, 200);
        assert!(Instant::now() < deadline, "the instance went on with a tag another holds");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let refused = post(&bases[0], None, init).send().await.unwrap();
    assert_eq!(refused.status(), 503, "no new shared session either");
    assert_eq!(refused.headers()["retry-after"], "1");
    let readyz = reqwest::get(bases[0].replace("/mcp", "/readyz")).await.unwrap();
    assert_eq!(readyz.status(), 503, "a balancer takes the instance out");
    assert_eq!(readyz.text().await.unwrap(), "instance tag lost");
    assert_eq!(redis.command("GET mcp:tag:{1}"), "$7", "the tag stays the other's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_resumed_on_another_instance_gets_the_rest_through_its_inbox() {
    let redis = RedisServer::start();
    let bases = fleet(&redis).await;
    let session = initialize(&bases[0]).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "steps", "arguments": {}}});
    let mut response = post(&bases[0], Some(&session), call).send().await.unwrap();
    // The first event, and its id; then the client leaves the stream.
    let mut text = String::new();
    let last_id = loop {
        let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk()).await.unwrap().unwrap();
        text.push_str(std::str::from_utf8(&chunk.expect("an event")).unwrap());
        if let Some(block) = text.split("\n\n").find(|b| b.contains("\"one\"")) {
            break block.lines().find_map(|l| l.strip_prefix("id: ")).expect("events have ids").to_owned();
        }
    };
    drop(response);
    // Resumed on instance 1, which asked instance 0 (named by the stream's number) whether it
    // still runs the stream before it answered.
    let opener = last_id.split('-').next().unwrap().parse::<u64>().unwrap() >> 32;
    let resumed = reqwest::Client::new()
        .get(&bases[1])
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", VERSION)
        .header("last-event-id", &last_id)
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    RELEASE.notify_one();
    let mut resumed = Messages(resumed, String::new());
    let two = resumed.next().await;
    assert_eq!(two["params"]["data"], "two", "{two}");
    let done = resumed.next().await;
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
    // The probe went to the opener's inbox alone; its answer and the stream's two events to
    // the resumer's.
    let resumer = if opener == 1 { 2 } else { 1 };
    assert_eq!(redis.command(&format!("XLEN mcp:inbox:{{{opener}}}")), ":1", "the probe");
    assert_eq!(redis.command(&format!("XLEN mcp:inbox:{{{resumer}}}")), ":3", "alive, then two events");
}

/// Calls the tool `tool` (`roots` or `roots_later`) on `base` (request `id`): the SSE
/// response, and its `roots/list`.
async fn ask_roots(base: &str, session: &str, tool: &str, id: i64) -> (Messages, Value) {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}});
    let mut messages = Messages(post(base, Some(session), call).send().await.unwrap(), String::new());
    let asked = messages.next().await;
    assert_eq!(asked["method"], "roots/list", "{asked}");
    (messages, asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_posted_elsewhere_after_redis_restarted_empty_reaches_the_call_that_waits() {
    let mut redis = RedisServer::start();
    let bases = fleet(&redis).await;
    let session = initialize(&bases[0]).await;
    // A first answer through instance 1: it holds a copy of the session (as behind a balancer),
    // and instance 0's inbox held a message (its numbering is under way).
    let (mut first, asked) = ask_roots(&bases[0], &session, "roots", 1).await;
    let reply = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": "file:///1"}]}});
    assert_eq!(post(&bases[1], Some(&session), reply).send().await.unwrap().status(), 202);
    assert_eq!(first.next().await["result"]["content"][0]["text"], "file:///1");
    // Instance 0 asks again; while its call waits, Redis restarts empty: the tags, the inboxes
    // and the session's record are gone.
    let (mut waiting, asked) = ask_roots(&bases[0], &session, "roots_later", 2).await;
    redis.restart();
    assert_eq!(redis.command("DBSIZE"), ":0");
    // The client answers through instance 1 (whose copy still serves): the answer is kept in
    // the asker's inbox although no instance holds its tag now, and instance 0 reads it.
    let reply = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": "file:///2"}]}});
    assert_eq!(post(&bases[1], Some(&session), reply).send().await.unwrap().status(), 202);
    // Its inbox is numbered from 1 again: instance 0 counts a loss after the answer, reloads
    // the session's record and finds it gone, so its copy takes no more requests...
    let deadline = Instant::now() + Duration::from_secs(10);
    for id in 3.. {
        let ping = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        if post(&bases[0], Some(&session), ping).send().await.unwrap().status() == 404 {
            break;
        }
        assert!(Instant::now() < deadline, "instance 0 never found the session gone");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // ...but the call that got its answer still finishes, and its result reaches the client.
    RELEASE.notify_one();
    let result = waiting.next().await;
    assert_eq!(result["id"], 2, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], "file:///2", "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_answer_cannot_come_after_redis_restarted_empty_fails_within_a_renewal() {
    let mut redis = RedisServer::start();
    let bases = fleet(&redis).await;
    let session = initialize(&bases[0]).await;
    let (mut waiting, asked) = ask_roots(&bases[0], &session, "roots", 1).await;
    redis.restart();
    // The session's record is gone with the rest: instance 1, which holds no copy, cannot
    // take the client's answer.
    let reply = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": "file:///1"}]}});
    assert_eq!(post(&bases[1], Some(&session), reply).send().await.unwrap().status(), 404);
    // A session made since, on the same instance, with a call waiting too.
    let fresh = wait_for_a_session(&bases[0]).await;
    let (mut fresh_waiting, fresh_asked) = ask_roots(&bases[0], &fresh, "roots", 1).await;
    // Instance 0 takes its tag back at its next renewal (within 10 s), so it knows Redis lost
    // what it held: it reloads its sessions' records; the call of the one whose record is gone
    // fails with -32603 and the client hears it, rather than waiting for the copy's
    // keep-alive (a minute) or for ever...
    let started = Instant::now();
    let failed = tokio::time::timeout(Duration::from_secs(15), waiting.next()).await.expect("the call fails");
    assert_eq!(failed["id"], 1, "{failed}");
    assert!(failed.to_string().contains("its record is gone"), "{failed}");
    assert!(failed.to_string().contains("-32603"), "{failed}");
    assert!(started.elapsed() < Duration::from_secs(11), "failed after {:?}", started.elapsed());
    // ...and the call of the session made since still gets its answer, through instance 1.
    let reply = json!({"jsonrpc": "2.0", "id": fresh_asked["id"], "result": {"roots": [{"uri": "file:///2"}]}});
    assert_eq!(post(&bases[1], Some(&fresh), reply).send().await.unwrap().status(), 202);
    let result = fresh_waiting.next().await;
    assert_eq!(result["result"]["content"][0]["text"], "file:///2", "{result}");
}

/// A new session on `base`, once the store takes one again (after Redis restarted).
async fn wait_for_a_session(base: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {"roots": {}}, "clientInfo": {"name": "t", "version": "0"}}});
        let response = post(base, None, init).send().await.unwrap();
        if let Some(session) = response.headers().get("mcp-session-id").map(|s| s.to_str().unwrap().to_owned())
            && Messages(response, String::new()).next().await.get("result").is_some()
        {
            return session;
        }
        assert!(Instant::now() < deadline, "no new session within 10 s of Redis");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
