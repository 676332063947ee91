//! What a call of a shared session costs in Redis round trips (the commands clients send, as
//! `MONITOR` shows them on a Redis of the test's own), and that the events it does not store are never asked for: two
//! instances share sessions (`RedisSessions`) and events (`RedisEventStore`) through one Redis.
//!
//! - A call answered by one SSE event and no priming event (clients before 2025-11-25) costs
//!   no command: no client can resume a stream before it holds an id of it.
//! - With a priming event (2025-11-25), the client can resume from it: each response is stored
//!   first, one script (one round trip) per call.
//! - A stream cut after its first (unstored) event and resumed on the other instance gets every
//!   later event once, live and from a replay.

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

/// `echo` answers at once; `steps` logs "one", waits for [`RELEASE`], logs "two", answers "done".
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
    Server::builder("round-trips", "1.0.0").tool(echo).tool(steps).build().unwrap()
}

/// Two instances on `redis`, each with a handle of its own (as two processes have): their
/// base URLs.
async fn fleet(redis: &RedisServer) -> [String; 2] {
    let mut bases = Vec::new();
    for _ in 0..2 {
        let handle = Redis::connect_with(RedisConfig::new(redis.url()).timeout(Duration::from_secs(2))).unwrap();
        let config = HttpServerConfig::default()
            .shared_sessions(Arc::new(handle.sessions()) as Arc<dyn SharedSessions>)
            .event_store(Some(Arc::new(handle.event_store()) as Arc<dyn EventStore>));
        let router = instance().http_router(config.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        bases.push(format!("http://{}/mcp", listener.local_addr().unwrap()));
        tokio::spawn(async move { server::serve_router(listener, router, &config).await });
    }
    // Both read their inboxes (XREAD BLOCK) before the test begins.
    let deadline = Instant::now() + Duration::from_secs(10);
    while redis.blocked_clients() < 2 {
        assert!(Instant::now() < deadline, "the instances do not read the fleet's streams");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    bases.try_into().unwrap()
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

/// One SSE event: its id and data.
#[derive(Debug, Default)]
struct Event {
    id: Option<String>,
    data: String,
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
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut event = Event::default();
                for line in block.lines() {
                    let (k, v) = line.split_once(':').unwrap_or((line, ""));
                    let v = v.strip_prefix(' ').unwrap_or(v);
                    match k {
                        "id" => event.id = Some(v.to_owned()),
                        "data" => event.data.push_str(v),
                        _ => {}
                    }
                }
                if !event.data.is_empty() {
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
async fn with_a_priming_event_each_call_stores_its_response_in_one_round_trip() {
    let run = commands_of_calls("2025-11-25", 20).await;
    assert_eq!(run, vec!["EVALSHA"; 40], "one append script per call");
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
