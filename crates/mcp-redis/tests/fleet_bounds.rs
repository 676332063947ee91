//! The fleet-wide bound on sessions (`RedisSessions::max_sessions`), over a real
//! `redis-server` and real HTTP: counted on Redis whichever instance makes a session, freed by
//! a DELETE on any instance and by expiry.

use std::sync::Arc;
use std::time::Duration;

use mcp_redis::{Redis, RedisConfig};
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig, SharedSessions};
use mcp_server::{Server, ToolDef, ToolError};
use mcp_test_support::redis::RedisServer;
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::json;

const VERSION: &str = "2025-06-18";
const TTL: Duration = Duration::from_secs(600);

fn handle(redis: &RedisServer) -> Redis {
    Redis::connect_with(RedisConfig::new(redis.url()).timeout(Duration::from_millis(500))).unwrap()
}

#[tokio::test]
async fn the_store_admits_up_to_its_bound_and_prunes_what_expired() {
    let redis = RedisServer::start();
    let store = handle(&redis).sessions().max_sessions(2);
    let admit = |id: &'static str| {
        let store = store.clone();
        async move { store.admit(id, TTL).expect("bounded: asked").await.unwrap() }
    };
    assert!(admit("a").await && admit("b").await);
    assert!(!admit("c").await, "the fleet holds 2");
    assert!(admit("a").await, "one counted already is admitted again");
    assert_eq!(redis.command("ZCARD mcp:sessions:live"), ":2", "c was not added");
    store.remove("a").await.unwrap();
    assert!(admit("c").await, "a DELETE frees a place");
    // b's time passed (as if its instance died and its record expired): pruned.
    assert_eq!(redis.command("ZADD mcp:sessions:live XX 1 b"), ":0");
    assert!(admit("d").await);
    assert_eq!(redis.command("ZCARD mcp:sessions:live"), ":2");
    assert_eq!(redis.command("ZSCORE mcp:sessions:live b"), "$-1", "b is gone");
    let ttl: i64 = redis.command("PTTL mcp:sessions:live").trim_start_matches(':').parse().unwrap();
    assert!(ttl > 0 && ttl <= TTL.as_millis() as i64, "the set expires with its last entry: {ttl}");
    // A touch keeps a session's place as it keeps its record.
    assert_eq!(redis.command("ZADD mcp:sessions:live XX CH 5 c"), ":1");
    let _ = store.touch("c", TTL).await.unwrap();
    let score: u64 = redis.query(&["ZSCORE", "mcp:sessions:live", "c"]).text().parse().unwrap();
    assert!(score > 5, "refreshed: {score}");
    // Unbounded: nothing asked of Redis.
    assert!(handle(&redis).sessions().admit("e", TTL).is_none());
}

fn instance() -> Server {
    let echo = ToolDef::new("echo", json!({"type": "object"}), |_, _| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("echo")]))
    })
    .unwrap();
    Server::builder("bounds", "1.0.0").tool(echo).build().unwrap()
}

fn request(method: reqwest::Method, base: &str, session: Option<&str>) -> reqwest::RequestBuilder {
    let request = reqwest::Client::new()
        .request(method, base)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    match session {
        Some(s) => request.header("mcp-session-id", s).header("mcp-protocol-version", VERSION),
        None => request,
    }
}

/// An initialize on `base`: the response.
async fn initialize(base: &str) -> reqwest::Response {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    request(reqwest::Method::POST, base, None).body(init.to_string()).send().await.unwrap()
}

/// The session an initialize on `base` made.
async fn session(base: &str) -> String {
    let response = initialize(base).await;
    assert_eq!(response.status(), 200);
    response.headers()["mcp-session-id"].to_str().unwrap().to_owned()
}

#[tokio::test]
async fn max_sessions_bounds_the_whole_fleet() {
    let redis = RedisServer::start();
    let mut bases = Vec::new();
    for _ in 0..2 {
        // Each instance with a handle of its own, as two processes; the same bound.
        let store: Arc<dyn SharedSessions> = Arc::new(handle(&redis).sessions().max_sessions(2));
        let config = HttpServerConfig::default().shared_sessions(store);
        let router = instance().http_router(config.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        bases.push(format!("http://{}/mcp", listener.local_addr().unwrap()));
        tokio::spawn(async move { server::serve_router(listener, router, &config).await });
    }
    let first = session(&bases[0]).await;
    let _second = session(&bases[1]).await;
    // Each instance holds one session, far below its own bound: the fleet's refuses.
    for base in &bases {
        let refused = initialize(base).await;
        assert_eq!(refused.status(), 503);
        assert_eq!(refused.headers()["retry-after"], "5");
        assert!(refused.headers().get("mcp-session-id").is_none());
        let body: serde_json::Value = refused.json().await.unwrap();
        assert_eq!((body["id"].as_i64(), body["error"]["code"].as_i64()), (Some(0), Some(-32603)));
        assert!(body["error"]["message"].as_str().unwrap().contains("fleet"), "{body}");
    }
    // A DELETE on the other instance frees a place for the whole fleet.
    let delete = request(reqwest::Method::DELETE, &bases[1], Some(&first)).send().await.unwrap();
    assert_eq!(delete.status(), 200);
    assert_eq!(redis.command("ZCARD mcp:sessions:live"), ":1");
    session(&bases[0]).await;
    assert_eq!(initialize(&bases[1]).await.status(), 503);
}

/// docs/deploy.md asks for `maxmemory-policy noeviction`: a full Redis then refuses writes
/// with a clear error, and keeps what it holds (an eviction policy would drop records unseen).
#[tokio::test]
async fn a_full_redis_under_noeviction_refuses_new_records_and_keeps_the_others() {
    let redis = RedisServer::start_with(&["--maxmemory-policy", "noeviction"]);
    let handle = handle(&redis);
    let store = handle.sessions();
    let fields = [("session".to_owned(), bytes::Bytes::from_static(b"{}"))];
    assert!(store.create("kept", &fields, TTL).await.unwrap());
    // Redis over its maxmemory.
    let filler = "f".repeat(4 << 20);
    assert_eq!(redis.query(&["SET", "filler", &filler]).text(), "OK");
    assert_eq!(redis.command("CONFIG SET maxmemory 1mb"), "+OK");
    let refused = store.create("new", &fields, TTL).await.unwrap_err().to_string();
    assert!(refused.contains("OOM"), "a clear error: {refused}");
    assert_eq!(redis.command("EXISTS mcp:session:{new}"), ":0");
    // What was there stays, readable and kept alive; the breaker stays closed (Redis answers).
    assert!(store.load("kept").await.unwrap().is_some());
    assert!(store.touch("kept", TTL).await.unwrap());
    assert_eq!(handle.circuit(), mcp_redis::Circuit::Closed);
}
