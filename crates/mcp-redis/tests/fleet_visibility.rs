//! Per-session visibility in a fleet, through a real Redis: a tool one instance hides from a
//! session is in the session's record, so the other instance hides it too (a copy loaded
//! after the change, and a copy it held before, once reloaded); another session still sees
//! it. From outside a request (`Server::session`), on either instance, the same.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_redis::{Redis, RedisConfig};
use mcp_server::mcp_transport_http::server::{self, EventStore, HttpServerConfig, InMemoryEventStore, SharedSessions};
use mcp_server::{Server, ToolDef, ToolError};
use mcp_test_support::redis::RedisServer;
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tokio::net::TcpListener;

const VERSION: &str = "2025-11-25";

/// `echo`, and `hide_echo` and `show_echo`, which hide and show it in their session.
fn instance() -> Server {
    let text = |s: String| Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(s)]));
    let echo = ToolDef::new("echo", json!({"type": "object"}), move |_, _| async move { text("ok".into()) }).unwrap();
    let hide = ToolDef::new("hide_echo", json!({"type": "object"}), move |_, ctx| async move {
        text(format!("changed={}", ctx.session().hide_tool("echo").await?))
    })
    .unwrap();
    let show = ToolDef::new("show_echo", json!({"type": "object"}), move |_, ctx| async move {
        text(format!("changed={}", ctx.session().show_tool("echo").await?))
    })
    .unwrap();
    Server::builder("redis-visibility", "1.0.0").tool(echo).tool(hide).tool(show).build().unwrap()
}

/// Two instances on one Redis, each with a handle of its own (as two processes would have).
async fn fleet(redis: &RedisServer) -> (Vec<String>, Vec<Server>) {
    let events: Arc<dyn EventStore> = Arc::new(InMemoryEventStore::default());
    let (mut bases, mut servers) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let redis = Redis::connect_with(RedisConfig::new(redis.url()).timeout(Duration::from_millis(500))).unwrap();
        let store: Arc<dyn SharedSessions> = Arc::new(redis.sessions());
        let config =
            HttpServerConfig::default().json_response(true).shared_sessions(store).event_store(Some(events.clone()));
        let server = instance();
        let router = server.http_router(config.clone());
        servers.push(server);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        bases.push(format!("http://{}/mcp", listener.local_addr().unwrap()));
        tokio::spawn(async move { server::serve_router(listener, router, &config).await });
    }
    // Every instance claimed its tag and reads its inbox before the test begins.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let tags: i64 = redis.query(&["GET", "mcp:tags"]).text().parse().unwrap_or(0);
        if tags >= 2 && redis.blocked_clients() >= 2 {
            return (bases, servers);
        }
        assert!(Instant::now() < deadline, "the instances did not read the fleet's streams");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn post(base: &str, session: Option<&str>, body: Value) -> Value {
    let post = reqwest::Client::new()
        .post(base)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    let post = match session {
        Some(s) => post.header("mcp-session-id", s).header("mcp-protocol-version", VERSION),
        None => post,
    };
    let response = post.send().await.unwrap();
    assert_eq!(response.status(), 200, "{response:?}");
    response.json().await.unwrap()
}

async fn initialize(base: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let response = reqwest::Client::new()
        .post(base)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.headers()["mcp-session-id"].to_str().unwrap().to_owned()
}

async fn tools(base: &str, session: &str) -> Vec<String> {
    let list = post(base, Some(session), json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    let tools = list["result"]["tools"].as_array().unwrap_or_else(|| panic!("{list}"));
    tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

async fn call(base: &str, session: &str, name: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": {}}});
    post(base, Some(session), body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_hidden_on_one_instance_is_hidden_on_the_other() {
    let redis = RedisServer::start();
    let (bases, _servers) = fleet(&redis).await;
    let (hider, other) = (initialize(&bases[0]).await, initialize(&bases[0]).await);

    // Hidden through instance 0, before instance 1 holds a copy of the session.
    assert_eq!(call(&bases[0], &hider, "hide_echo").await["result"]["content"][0]["text"], "changed=true");
    let record = redis.command(&format!("HEXISTS mcp:session:{{{hider}}} hide:tool:echo"));
    assert_eq!(record, ":1", "the record holds the hidden tool");
    // Instance 1 loads the session's record: `echo` is hidden there too.
    assert_eq!(tools(&bases[1], &hider).await, ["hide_echo", "show_echo"]);
    let unknown = call(&bases[1], &hider, "echo").await;
    assert_eq!(unknown["error"]["message"], "invalid params: unknown tool `echo`", "{unknown}");
    // The other session sees it, on either instance.
    assert_eq!(tools(&bases[1], &other).await, ["echo", "hide_echo", "show_echo"]);
    assert_eq!(call(&bases[1], &other, "echo").await["result"]["content"][0]["text"], "ok");

    // Shown again through instance 0: instance 1's copy reloads the record it was told of.
    assert_eq!(call(&bases[0], &hider, "show_echo").await["result"]["content"][0]["text"], "changed=true");
    let deadline = Instant::now() + Duration::from_secs(15);
    while tools(&bases[1], &hider).await != ["echo", "hide_echo", "show_echo"] {
        assert!(Instant::now() < deadline, "instance 1's copy did not take the change");
        tokio::task::yield_now().await;
    }
    assert_eq!(call(&bases[1], &hider, "echo").await["result"]["content"][0]["text"], "ok");
    // And hidden through instance 1, which now holds a copy: instance 0's copy reloads it.
    assert_eq!(call(&bases[1], &hider, "hide_echo").await["result"]["content"][0]["text"], "changed=true");
    while tools(&bases[0], &hider).await != ["hide_echo", "show_echo"] {
        assert!(Instant::now() < deadline, "instance 0's copy did not take the change");
        tokio::task::yield_now().await;
    }
}

/// Until `bases[at]` lists `expected` to `session`: the copy there takes the record it was
/// told of (a change made through another copy).
async fn until_listed(base: &str, session: &str, expected: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while tools(base, session).await != expected {
        assert!(Instant::now() < deadline, "the copy at {base} did not take the change");
        tokio::task::yield_now().await;
    }
}

/// `Server::session(id)`, outside any request, changes a shared session's record: the
/// instance that changes it hides the tool at once, the other once its copy reloads; and
/// back, from the other instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_session_is_changed_from_outside_its_requests() {
    let redis = RedisServer::start();
    let (bases, servers) = fleet(&redis).await;
    let session = initialize(&bases[0]).await;
    // Instance 1 holds a copy too.
    assert_eq!(tools(&bases[1], &session).await, ["echo", "hide_echo", "show_echo"]);

    let control = servers[0].session(&session).await.expect("instance 0 holds the session");
    assert!(control.hide_tool("echo").await.unwrap());
    assert!(!control.hide_tool("echo").await.unwrap(), "hidden already");
    let record = redis.command(&format!("HEXISTS mcp:session:{{{session}}} hide:tool:echo"));
    assert_eq!(record, ":1", "the record holds the hidden tool");
    assert_eq!(tools(&bases[0], &session).await, ["hide_echo", "show_echo"]);
    until_listed(&bases[1], &session, &["hide_echo", "show_echo"]).await;
    let unknown = call(&bases[1], &session, "echo").await;
    assert_eq!(unknown["error"]["message"], "invalid params: unknown tool `echo`", "{unknown}");

    let control = servers[1].session(&session).await.expect("instance 1 holds a copy");
    assert!(control.show_tool("echo").await.unwrap());
    assert_eq!(tools(&bases[1], &session).await, ["echo", "hide_echo", "show_echo"]);
    until_listed(&bases[0], &session, &["echo", "hide_echo", "show_echo"]).await;
    assert_eq!(call(&bases[0], &session, "echo").await["result"]["content"][0]["text"], "ok");
}

/// `Server::session(id)` on an instance that never served the session (an operator's) finds
/// it in the fleet's store: it loads a copy, whose change goes to the record, and the instance
/// that serves the session hides the tool too (its copy reloads the record it is told of).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_session_another_instance_serves_is_found_in_the_store() {
    let redis = RedisServer::start();
    let (bases, servers) = fleet(&redis).await;
    let session = initialize(&bases[0]).await;
    assert_eq!(tools(&bases[0], &session).await, ["echo", "hide_echo", "show_echo"]);
    assert!(servers[1].session("no-such-session").await.is_none(), "not in the store either");

    // Instance 1 has served no request of the session.
    let control = servers[1].session(&session).await.expect("instance 1 loads the session from the store");
    assert_eq!(control.id().as_deref(), Some(session.as_str()));
    assert!(control.hide_tool("echo").await.unwrap());
    let record = redis.command(&format!("HEXISTS mcp:session:{{{session}}} hide:tool:echo"));
    assert_eq!(record, ":1", "the record holds the hidden tool");
    until_listed(&bases[0], &session, &["hide_echo", "show_echo"]).await;
    let unknown = call(&bases[0], &session, "echo").await;
    assert_eq!(unknown["error"]["message"], "invalid params: unknown tool `echo`", "{unknown}");
    // The copy instance 1 loaded serves the session's requests too.
    assert_eq!(tools(&bases[1], &session).await, ["hide_echo", "show_echo"]);
}
