//! Two instances of one server sharing their sessions (`HttpServerConfig::shared_sessions`),
//! an event store and a change bus, over real sockets: a session started on one is served by
//! the other; the answer to a request the server sent, POSTed to the other instance, reaches
//! the handler that asked; a stream resumed on the other instance gets every event once; a
//! tool added on one is announced once on the GET stream the other holds; DELETE on one ends
//! the session on both. (The same on Redis, with a load balancer, is `cargo xtask fleet`.)
#![cfg(feature = "http")]

use std::sync::Arc;
use std::time::Duration;

use mcp_server::mcp_transport_http::server::{
    self, EventStore, HttpServerConfig, InMemoryEventStore, InMemorySharedSessions, SharedSessions,
};
use mcp_server::{ChangeEvent, Context, InMemoryBus, Server, SubscriptionBus, ToolDef, ToolError};
use mcp_types::{CallToolResult, ContentBlock, LoggingLevel};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Notify, broadcast};

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const VERSION: &str = "2025-11-25";

/// A bus every instance of the test shares, which says it fans out.
struct FleetBus(InMemoryBus);

impl SubscriptionBus for FleetBus {
    fn publish(&self, event: ChangeEvent) {
        self.0.publish(event)
    }
    fn subscribe(&self) -> broadcast::Receiver<ChangeEvent> {
        self.0.subscribe()
    }
    fn fans_out(&self) -> bool {
        true
    }
}

fn tool(
    name: &str,
    f: impl Fn(Context) -> mcp_jsonrpc::BoxFuture<Result<CallToolResult, ToolError>> + Send + Sync + 'static,
) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), move |_, ctx| f(ctx)).unwrap()
}

fn text(s: impl Into<String>) -> Result<CallToolResult, ToolError> {
    Ok(CallToolResult::success(vec![ContentBlock::text(s)]))
}

/// `steps` logs "one", waits for `release`, logs "two", answers "done"; `roots` asks the
/// client for its roots and answers the first one's URI.
fn instance(release: Arc<Notify>, bus: Arc<dyn SubscriptionBus>) -> Server {
    let steps = tool("steps", move |ctx| {
        let release = release.clone();
        Box::pin(async move {
            ctx.log(LoggingLevel::Info, json!("one")).await;
            release.notified().await;
            ctx.log(LoggingLevel::Info, json!("two")).await;
            text("done")
        })
    });
    let roots = tool("roots", |ctx| {
        Box::pin(async move {
            let roots = ctx.list_roots().await.map_err(ToolError::new)?;
            text(roots.roots[0].uri.clone())
        })
    });
    Server::builder("fleet-test", "1.0.0")
        .tool(steps)
        .tool(roots)
        .enable_resources()
        .subscription_bus(bus)
        .build()
        .unwrap()
}

/// Two instances (their base URLs) of one server, sharing sessions, events and changes.
struct Fleet {
    bases: [String; 2],
    servers: [Server; 2],
    http: reqwest::Client,
    release: Arc<Notify>,
    store: Arc<InMemorySharedSessions>,
}

async fn start() -> Fleet {
    let store = Arc::new(InMemorySharedSessions::new());
    let events: Arc<dyn EventStore> = Arc::new(InMemoryEventStore::default());
    let bus: Arc<dyn SubscriptionBus> = Arc::new(FleetBus(InMemoryBus::default()));
    let release = Arc::new(Notify::new());
    let mut bases = Vec::new();
    let mut servers = Vec::new();
    for _ in 0..2 {
        let server = instance(release.clone(), bus.clone());
        let config = HttpServerConfig::default()
            .shared_sessions(store.clone() as Arc<dyn SharedSessions>)
            .event_store(Some(events.clone()));
        let router = server.http_router(config.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        bases.push(format!("http://{}", listener.local_addr().unwrap()));
        tokio::spawn(async move { server::serve_router(listener, router, &config).await });
        servers.push(server);
    }
    let bases = bases.try_into().unwrap();
    let servers = servers.try_into().unwrap_or_else(|_| unreachable!());
    Fleet { bases, servers, http: reqwest::Client::new(), release, store }
}

impl Fleet {
    fn post(&self, at: usize, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
        let post = self
            .http
            .post(format!("{}/mcp", self.bases[at]))
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json")
            .body(body.to_string());
        match session {
            Some(s) => post.header("mcp-session-id", s).header("mcp-protocol-version", VERSION),
            None => post,
        }
    }

    fn get(&self, at: usize, session: &str, last_event_id: Option<&str>) -> reqwest::RequestBuilder {
        let get = self
            .http
            .get(format!("{}/mcp", self.bases[at]))
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", VERSION);
        match last_event_id {
            Some(id) => get.header("last-event-id", id),
            None => get,
        }
    }

    /// A session initialized on instance `at` (the client declares roots).
    async fn initialize(&self, at: usize) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {"roots": {}},
            "clientInfo": {"name": "raw", "version": "0"}}});
        let resp = self.post(at, None, init).send().await.unwrap();
        let session = resp.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let result = Sse::new(resp).message().await;
        assert_eq!(result["result"]["protocolVersion"], VERSION);
        session
    }

    fn call(&self, at: usize, session: &str, id: i64, name: &str) -> reqwest::RequestBuilder {
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {}}});
        self.post(at, Some(session), body)
    }
}

/// One SSE event: its id and data.
#[derive(Debug, Default)]
struct Event {
    id: Option<String>,
    data: String,
}

/// Reads SSE events off a response as they come.
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
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.response.chunk())
                .await
                .expect("an SSE event or the end in time")
                .ok()??;
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
    async fn message(&mut self) -> Value {
        serde_json::from_str(&self.next().await.expect("another event").data).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_started_on_one_instance_is_served_and_ended_on_the_other() {
    let fleet = start().await;
    let session = fleet.initialize(0).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(fleet.post(1, Some(&session), note).send().await.unwrap().status(), 202);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let listed = Sse::new(fleet.post(1, Some(&session), list).send().await.unwrap()).message().await;
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 2, "{listed}");
    // The log level set on instance 1 is what instance 0 serves the session with, once its
    // copy reloaded the record (the bus tells it: soon, not at once).
    let level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}});
    Sse::new(fleet.post(1, Some(&session), level).send().await.unwrap()).message().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    for id in 3.. {
        let mut call = Sse::new(fleet.call(0, &session, id, "steps").send().await.unwrap());
        fleet.release.notify_one();
        let first = call.message().await;
        if first["result"]["content"][0]["text"] == "done" {
            break; // no info logs at level error
        }
        assert_eq!(first["method"], "notifications/message", "{first}");
        assert!(std::time::Instant::now() < deadline, "instance 0 never took the level set on instance 1");
        while call.message().await.get("result").is_none() {}
    }
    // DELETE on instance 0 ends it on instance 1 too: the record goes at once, and instance
    // 1's copy ends when its inbox tells it (soon, not at once: docs/deploy.md).
    let delete = fleet.http.delete(format!("{}/mcp", fleet.bases[0])).header("mcp-session-id", &session);
    assert_eq!(delete.send().await.unwrap().status(), 200);
    assert!(fleet.store.is_empty());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    for id in 1000.. {
        let ping = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let status = fleet.post(1, Some(&session), ping).send().await.unwrap().status();
        if status == 404 {
            break;
        }
        assert_eq!(status, 200, "a copy not yet told answers as before");
        assert!(std::time::Instant::now() < deadline, "instance 1 never ended its copy");
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_to_a_server_request_posted_to_the_other_instance_reaches_the_handler() {
    let fleet = start().await;
    let session = fleet.initialize(0).await;
    let mut call = Sse::new(fleet.call(0, &session, 1, "roots").send().await.unwrap());
    let request = call.message().await;
    assert_eq!(request["method"], "roots/list", "{request}");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": [{"uri": "file:///fleet"}]}});
    assert_eq!(fleet.post(1, Some(&session), answer).send().await.unwrap().status(), 202);
    let result = call.message().await;
    assert_eq!(result["result"]["content"][0]["text"], "file:///fleet", "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_resumed_on_the_other_instance_gets_every_event_once() {
    let fleet = start().await;
    let session = fleet.initialize(0).await;
    let mut call = Sse::new(fleet.call(0, &session, 1, "steps").send().await.unwrap());
    let one = call.next().await.unwrap();
    assert!(one.data.contains("\"one\""), "{one:?}");
    let last_id = one.id.expect("events have ids");
    drop(call);
    // Resumed on instance 1 while the request still runs on instance 0.
    let mut resumed = Sse::new(fleet.get(1, &session, Some(&last_id)).send().await.unwrap());
    fleet.release.notify_one();
    let two = resumed.message().await;
    assert_eq!(two["params"]["data"], "two", "{two}");
    let done = resumed.message().await;
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
    assert!(resumed.next().await.is_none(), "the stream ends after its response, nothing twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_added_on_one_instance_is_announced_once_on_the_get_stream_the_other_holds() {
    let fleet = start().await;
    let session = fleet.initialize(0).await;
    let mut standalone = Sse::new(fleet.get(1, &session, None).send().await.unwrap());
    let extra = tool("extra", |_| Box::pin(async { text("extra") }));
    fleet.servers[0].add_tool(extra).await.unwrap();
    let changed = standalone.message().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed", "{changed}");
    // The next message is the next change's (a subscribed resource updated, on instance 0),
    // not a second copy of the first.
    // The subscription made on instance 0 reaches the copy on instance 1 over the bus (soon,
    // not at once): updates are announced until one comes.
    let subscribe = json!({"jsonrpc": "2.0", "id": 9, "method": "resources/subscribe", "params": {"uri": "test://x"}});
    Sse::new(fleet.post(0, Some(&session), subscribe).send().await.unwrap()).message().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let updated = loop {
        fleet.servers[0].notify_resource_updated("test://x").await;
        if let Ok(next) = tokio::time::timeout(Duration::from_millis(200), standalone.message()).await {
            break next;
        }
        assert!(std::time::Instant::now() < deadline, "the update never reached the GET stream on instance 1");
    };
    assert_eq!(updated["method"], "notifications/resources/updated", "{updated}");
    assert_eq!(updated["params"]["uri"], "test://x");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_that_cannot_be_read_is_an_unknown_session() {
    let fleet = start().await;
    let ttl = Duration::from_secs(60);
    // No owner; an owner, then what the server cannot read as a session.
    let field = |name: &str, value: &'static [u8]| (name.to_owned(), bytes::Bytes::from_static(value));
    assert!(fleet.store.create("0badrecord", &[field("session", b"{}")], ttl).await.unwrap());
    let unreadable = [field(".owner", b""), field("session", b"{\"version\": 7}")];
    assert!(fleet.store.create("1badrecord", &unreadable, ttl).await.unwrap());
    for id in ["0badrecord", "1badrecord"] {
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let answer = fleet.post(0, Some(id), ping).send().await.unwrap();
        assert_eq!(answer.status(), 404, "{id}");
    }
    // A good session is still served beside them.
    let session = fleet.initialize(0).await;
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    assert_eq!(Sse::new(fleet.post(1, Some(&session), ping).send().await.unwrap()).message().await["id"], 2);
}
