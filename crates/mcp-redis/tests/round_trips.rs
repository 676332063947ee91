//! What a call of a shared session costs in Redis round trips (the commands clients send, as
//! `MONITOR` shows them on a Redis of the test's own), and that the events it does not store are never asked for: two
//! instances share sessions (`RedisSessions`) and events (`RedisEventStore`) through one Redis.
//!
//! - A call answered by one SSE event and no priming event (clients before 2025-11-25) costs
//!   no command: no client can resume a stream before it holds an id of it.
//! - In 2025-11-25 too, a call answered at once (its response ready before any byte of its
//!   stream went out) is one event without a priming event, and costs no command. A call
//!   answered later has a priming event, the client can resume from it: each event after it
//!   is stored first, one script (one round trip) each.
//! - A stream cut after its first (unstored) event and resumed on the other instance gets every
//!   later event once, live and from a replay.
//! - A 2025-11-25 stream whose instance dies (its runtime dropped: no task of it runs again)
//!   after the client got its priming event is resumed on the other instance with every event
//!   it sent, once, whether it answered at once or never.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_redis::{Redis, RedisConfig};
use mcp_server::mcp_transport_http::server::{self, EventStore, HttpServerConfig, SharedSessions};
use mcp_server::{Server, ToolDef, ToolError};
use mcp_test_support::redis::RedisServer;
use mcp_types::{CallToolResult, ContentBlock, LoggingLevel};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// Lets the tool `steps` go on past its first event.
static RELEASE: Notify = Notify::const_new();

/// `echo` answers at once; `steps` logs "one", waits for [`RELEASE`], logs "two", answers "done";
/// `later` waits for [`RELEASE`] and answers "later"; `quick` logs "one" and answers "quick" at
/// once; `burst` logs "one" and "two" at once, and never answers.
fn instance() -> Server {
    let echo = ToolDef::new("echo", json!({"type": "object"}), |_, _| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("echo")]))
    })
    .unwrap();
    let steps = ToolDef::new("steps", json!({"type": "object"}), |_, ctx| async move {
        ctx.log(LoggingLevel::Info, json!("one")).await;
        RELEASE.notified().await;
        ctx.log(LoggingLevel::Info, json!("two")).await;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
    })
    .unwrap();
    let later = ToolDef::new("later", json!({"type": "object"}), |_, _| async move {
        RELEASE.notified().await;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("later")]))
    })
    .unwrap();
    let quick = ToolDef::new("quick", json!({"type": "object"}), |_, ctx| async move {
        ctx.log(LoggingLevel::Info, json!("one")).await;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("quick")]))
    })
    .unwrap();
    let burst = ToolDef::new("burst", json!({"type": "object"}), |_, ctx| async move {
        ctx.log(LoggingLevel::Info, json!("one")).await;
        ctx.log(LoggingLevel::Info, json!("two")).await;
        std::future::pending::<Result<CallToolResult, ToolError>>().await
    })
    .unwrap();
    Server::builder("round-trips", "1.0.0").tool(echo).tool(steps).tool(later).tool(quick).tool(burst).build().unwrap()
}

/// Serves an instance on `redis` (a handle of its own, as a process has), on the runtime it is
/// called on: its base URL.
async fn serve(redis: &RedisServer) -> String {
    serve_url(redis.url()).await
}

/// [`serve`], on the Redis at `url`.
async fn serve_url(url: String) -> String {
    let handle = Redis::connect_with(RedisConfig::new(url).timeout(Duration::from_secs(2))).unwrap();
    let config = HttpServerConfig::default()
        .shared_sessions(Arc::new(handle.sessions()) as Arc<dyn SharedSessions>)
        .event_store(Some(Arc::new(handle.event_store()) as Arc<dyn EventStore>));
    let router = instance().http_router(config.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { server::serve_router(listener, router, &config).await });
    base
}

/// Waits until the instances read their inboxes (XREAD BLOCK, one
/// each).
async fn reading(redis: &RedisServer, instances: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while redis.blocked_clients() < instances {
        assert!(Instant::now() < deadline, "the instances do not read the fleet's streams");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Two instances on `redis`, each with a handle of its own (as two processes have): their
/// base URLs.
async fn fleet(redis: &RedisServer) -> [String; 2] {
    let bases = [serve(redis).await, serve(redis).await];
    // Both read their inboxes before the test begins.
    reading(redis, 2).await;
    bases
}

/// A client of one revision.
struct Client {
    http: reqwest::Client,
    version: &'static str,
}

impl Client {
    fn post(&self, base: &str, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
        let post = self
            .http
            .post(base)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        match session {
            Some(s) => post.header("mcp-session-id", s).header("mcp-protocol-version", self.version),
            None => post,
        }
    }

    async fn initialize(&self, base: &str) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": self.version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
        let response = self.post(base, None, init).send().await.unwrap();
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let answer = Sse::new(response).message().await;
        assert_eq!(answer["result"]["protocolVersion"], self.version, "{answer}");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post(base, Some(&session), initialized).send().await.unwrap().status(), 202);
        session
    }

    fn call(&self, base: &str, session: &str, id: u64, tool: &str) -> reqwest::RequestBuilder {
        let call =
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}});
        self.post(base, Some(session), call)
    }

    /// One `echo` call, its answer checked.
    async fn echo(&self, base: &str, session: &str, id: u64) {
        let answer = Sse::new(self.call(base, session, id, "echo").send().await.unwrap()).message().await;
        assert_eq!(answer["result"]["content"][0]["text"], "echo", "{answer}");
    }

    fn resume(&self, base: &str, session: &str, last_event_id: &str) -> reqwest::RequestBuilder {
        self.http
            .get(base)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", self.version)
            .header("last-event-id", last_event_id)
    }
}

/// One SSE event: its id, data and retry.
#[derive(Debug, Default)]
struct Event {
    id: Option<String>,
    data: String,
    retry: Option<String>,
}

/// Reads the SSE events of a response as they come.
struct Sse {
    response: reqwest::Response,
    buf: String,
}

impl Sse {
    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200, "{response:?}");
        Sse { response, buf: String::new() }
    }

    /// The next event that carries a message, or `None` when the stream ends.
    async fn next(&mut self) -> Option<Event> {
        loop {
            let event = self.event().await?;
            if !event.data.is_empty() {
                return Some(event);
            }
        }
    }

    /// The next event, a priming event too, or `None` when the stream ends.
    async fn event(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut event = Event::default();
                for line in block.lines() {
                    let (k, v) = line.split_once(':').unwrap_or((line, ""));
                    let v = v.strip_prefix(' ').unwrap_or(v);
                    match k {
                        "id" => event.id = Some(v.to_owned()),
                        "data" => event.data.push_str(v),
                        "retry" => event.retry = Some(v.to_owned()),
                        _ => {}
                    }
                }
                if event.id.is_some() || !event.data.is_empty() {
                    return Some(event);
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.response.chunk())
                .await
                .expect("an SSE event or the end in time")
                .ok()??;
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    async fn message(&mut self) -> Value {
        serde_json::from_str(&self.next().await.expect("another event").data).unwrap()
    }

    /// The messages left, up to the end of the stream.
    async fn rest(mut self) -> Vec<Value> {
        let mut messages = Vec::new();
        while let Some(event) = self.next().await {
            messages.push(serde_json::from_str(&event.data).unwrap());
        }
        messages
    }
}

/// The Redis commands (their names) that `calls` sequential echo calls on each instance send,
/// after a call on each (the second instance loads the session's record then).
async fn commands_of_calls(version: &'static str, calls: u64) -> Vec<String> {
    let redis = RedisServer::start();
    let bases = fleet(&redis).await;
    let client = Client { http: reqwest::Client::new(), version };
    let session = client.initialize(&bases[0]).await;
    client.echo(&bases[0], &session, 1).await;
    client.echo(&bases[1], &session, 2).await;
    let monitor = redis.monitor();
    for id in 0..calls {
        for base in &bases {
            client.echo(base, &session, 10 + id).await;
        }
    }
    let commands = monitor.commands();
    commands.iter().map(|c| c.split('"').nth(1).unwrap_or(c).to_ascii_uppercase()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_answered_by_one_event_without_priming_costs_no_redis_command() {
    let run = commands_of_calls("2025-06-18", 20).await;
    assert_eq!(run, Vec::<String>::new(), "40 calls of a shared session, on two instances");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_call_answered_at_once_is_its_response_alone_and_costs_no_redis_command() {
    let run = commands_of_calls("2025-11-25", 20).await;
    assert_eq!(run, Vec::<String>::new(), "40 calls of a shared session, on two instances");
    let redis = RedisServer::start();
    let bases = fleet(&redis).await;
    let client = Client { http: reqwest::Client::new(), version: "2025-11-25" };
    let session = client.initialize(&bases[0]).await;
    let mut call = Sse::new(client.call(&bases[1], &session, 1, "echo").send().await.unwrap());
    let first = call.event().await.unwrap();
    assert!(first.retry.is_none() && first.data.contains("\"echo\""), "no priming event: {first:?}");
    assert!(call.event().await.is_none(), "{first:?} alone");
    // Resumed from its id (the client has its response: a finished stream), on either
    // instance: nothing.
    for base in &bases {
        let id = first.id.as_deref().expect("an event id");
        assert!(Sse::new(client.resume(base, &session, id).send().await.unwrap()).rest().await.is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_call_answered_after_its_stream_started_stores_its_response_in_one_round_trip() {
    let redis = RedisServer::start();
    let bases = fleet(&redis).await;
    let client = Client { http: reqwest::Client::new(), version: "2025-11-25" };
    let session = client.initialize(&bases[0]).await;
    client.echo(&bases[1], &session, 1).await;
    // The second call as the first (which loads the append script into Redis).
    let mut monitor = None;
    for id in [2, 3] {
        if id == 3 {
            monitor = Some(redis.monitor());
        }
        let mut call = Sse::new(client.call(&bases[1], &session, id, "later").send().await.unwrap());
        let priming = call.event().await.unwrap();
        assert!(priming.data.is_empty() && priming.retry.is_some(), "a priming event first: {priming:?}");
        RELEASE.notify_one();
        assert_eq!(call.message().await["result"]["content"][0]["text"], "later");
        assert!(call.next().await.is_none());
    }
    let commands = monitor.unwrap().commands();
    let names: Vec<String> = commands.iter().map(|c| c.split('"').nth(1).unwrap_or(c).to_ascii_uppercase()).collect();
    assert_eq!(names, ["EVALSHA"], "the response stored before it was sent");
}

/// What `tool` sent on a 2025-11-25 stream: the stream is opened on an instance that then dies
/// (its runtime is dropped, as a process killed takes its tasks), and resumed on the other
/// instance from each id the client got: what each resume replays.
async fn resumed_after_the_instance_died(tool: &str) -> Vec<(String, Vec<Value>)> {
    let redis = RedisServer::start();
    let doomed = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let doomed_base = doomed.spawn(serve_url(redis.url())).await.unwrap();
    let survivor = serve(&redis).await;
    reading(&redis, 2).await;
    let client = Client { http: reqwest::Client::new(), version: "2025-11-25" };
    let session = client.initialize(&doomed_base).await;
    let mut call = Sse::new(client.call(&doomed_base, &session, 1, tool).send().await.unwrap());
    let priming = call.event().await.unwrap();
    assert!(priming.data.is_empty() && priming.retry.is_some(), "{tool}: a priming event first: {priming:?}");
    let mut ids = vec![priming.id.clone().expect("an id")];
    // The events sent at once came with it (the response, too, for `quick`).
    for _ in 0..2 {
        ids.push(call.next().await.expect("the events sent at once").id.expect("an id"));
    }
    doomed.shutdown_background();
    drop(call);
    let mut resumes = Vec::new();
    for id in ids {
        let replay = Sse::new(client.resume(&survivor, &session, &id).send().await.unwrap()).rest().await;
        resumes.push((id, replay));
    }
    resumes
}

/// The texts of `messages`: a log's data, a result's first text.
fn texts(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| if m["params"].is_null() { &m["result"]["content"][0]["text"] } else { &m["params"]["data"] })
        .map(|t| t.as_str().unwrap_or("?"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_stream_answered_at_once_is_resumed_whole_after_its_instance_died() {
    let resumes = resumed_after_the_instance_died("quick").await;
    let got: Vec<Vec<&str>> = resumes.iter().map(|(_, replay)| texts(replay)).collect();
    assert_eq!(
        got,
        [vec!["one", "quick"], vec!["quick"], vec![]],
        "from the priming event, from each event: {resumes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_stream_still_running_is_resumed_with_every_event_once_after_its_instance_died() {
    let resumes = resumed_after_the_instance_died("burst").await;
    let got: Vec<Vec<&str>> = resumes.iter().map(|(_, replay)| texts(replay)).collect();
    assert_eq!(got, [vec!["one", "two"], vec!["two"], vec![]], "from the priming event, from each event: {resumes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_after_its_unstored_first_event_is_resumed_elsewhere_once() {
    let redis = RedisServer::start();
    let bases = fleet(&redis).await;
    let client = Client { http: reqwest::Client::new(), version: "2025-06-18" };
    let session = client.initialize(&bases[0]).await;
    let mut call = Sse::new(client.call(&bases[0], &session, 1, "steps").send().await.unwrap());
    let one = call.next().await.unwrap();
    assert!(one.data.contains("\"one\""), "{one:?}");
    let one_id = one.id.expect("events have ids");
    let stream = one_id.split_once('-').unwrap().0;
    let list = format!("mcp:events:{{{session}}}:s:{stream}");
    assert_eq!(redis.command(&format!("LLEN {list}")), ":0", "the stream's first event is not stored");
    drop(call);
    // Resumed on the other instance while the call still runs on the first.
    let mut resumed = Sse::new(client.resume(&bases[1], &session, &one_id).send().await.unwrap());
    RELEASE.notify_one();
    let two = resumed.message().await;
    assert_eq!(two["params"]["data"], "two", "{two}");
    let done = resumed.message().await;
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
    assert!(resumed.next().await.is_none(), "the stream ends after its response, nothing twice");
    // Resumed again after it ended, on either instance: the replay from Redis, once each.
    for base in &bases {
        let replay = Sse::new(client.resume(base, &session, &one_id).send().await.unwrap()).rest().await;
        let texts: Vec<&Value> = replay
            .iter()
            .map(|m| if m["params"].is_null() { &m["result"]["content"][0]["text"] } else { &m["params"]["data"] })
            .collect();
        assert_eq!(texts, [&json!("two"), &json!("done")], "{replay:?}");
    }
}
