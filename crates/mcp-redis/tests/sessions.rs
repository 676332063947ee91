//! Sessions shared through a real Redis by two instances in this process: a session started on
//! one is served by the other, the answer to a server's request POSTed to the other reaches its
//! handler, DELETE ends it everywhere; with Redis down, a session the instance does not hold
//! gets 503 (and the instance goes on serving what needs no Redis), and service returns when
//! Redis does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_redis::{Redis, RedisConfig};
use mcp_server::mcp_transport_http::server::{self, EventStore, HttpServerConfig, InMemoryEventStore};
use mcp_server::{Server, ToolDef, ToolError};
use mcp_test_support::redis::RedisServer;
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tokio::net::TcpListener;

const VERSION: &str = "2025-06-18";

fn instance() -> Server {
    let roots = ToolDef::new("roots", json!({"type": "object"}), |_, ctx| async move {
        let roots = ctx.list_roots().await.map_err(ToolError::new)?;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(roots.roots[0].uri.clone())]))
    })
    .unwrap();
    Server::builder("redis-fleet", "1.0.0").tool(roots).build().unwrap()
}

/// Two instances on one Redis (each with a handle of its own, as two processes would have).
async fn fleet(redis: &RedisServer) -> Vec<String> {
    let events: Arc<dyn EventStore> = Arc::new(InMemoryEventStore::default());
    let mut bases = Vec::new();
    for _ in 0..2 {
        let handle = Redis::connect_with(RedisConfig::new(redis.url()).timeout(Duration::from_millis(500))).unwrap();
        let config =
            HttpServerConfig::default().shared_sessions(Arc::new(handle.sessions())).event_store(Some(events.clone()));
        let router = instance().http_router(config.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        bases.push(format!("http://{}/mcp", listener.local_addr().unwrap()));
        tokio::spawn(async move { server::serve_router(listener, router, &config).await });
    }
    // Both instances hear the fleet's channel before the test begins.
    let deadline = Instant::now() + Duration::from_secs(10);
    while numsub(redis) < 2 {
        assert!(Instant::now() < deadline, "the instances did not subscribe to mcp:fleet");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    bases
}

/// How many connections listen on `mcp:fleet` (`PUBSUB NUMSUB`'s second element).
fn numsub(redis: &RedisServer) -> i64 {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", redis.port())).unwrap();
    use std::io::{Read as _, Write as _};
    stream.write_all(b"PUBSUB NUMSUB mcp:fleet\r\n").unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut reply = Vec::new();
    let mut buf = [0u8; 256];
    // *2 $9 mcp:fleet :N
    while !reply.ends_with(b"\r\n") || reply.iter().filter(|&&b| b == b'\n').count() < 4 {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "redis closed the connection");
        reply.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&reply);
    text.lines().last().and_then(|l| l.strip_prefix(':')).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
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
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        if Messages(response, String::new()).next().await.get("result").is_some() {
            break session;
        }
        assert!(Instant::now() < deadline, "service did not return within 10 s of Redis");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(post(&bases[0], Some(&session), ping(3)).send().await.unwrap().status(), 200);
}
