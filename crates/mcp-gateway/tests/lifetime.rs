//! How long what a gateway opens lives: a mounted server's connection ends when its gateway
//! session ends, at once; the one stateless requests share, with the gateway; a dropped
//! gateway ends its mounts' connections.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_jsonrpc::Peer;
use mcp_server::{Server, ToolDef, ToolError};
use mcp_types::{CallToolResult, ContentBlock, ProtocolVersion};
use serde_json::json;

/// A server whose tool `hello` keeps the connection it was last called on in `seen`.
fn keeping(seen: &Arc<Mutex<Option<Peer>>>) -> Server {
    let keep = seen.clone();
    let tool = ToolDef::new("hello", json!({"type": "object"}), move |_args, ctx| {
        *keep.lock().unwrap() = Some(ctx.peer().clone());
        async { Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("hello")])) }
    })
    .unwrap();
    Server::builder("local", "1.0").tool(tool).build().unwrap()
}

/// A gateway with `server` mounted as `local`, and a client of it at `version`, both over
/// the in-memory transport.
async fn through_a_gateway(server: Server, version: ProtocolVersion) -> mcp_client::Client {
    let gateway = mcp_gateway::Gateway::builder("gateway", "1.0").mount("local", server).build().await.unwrap();
    let (ours, theirs) = mcp_jsonrpc::transport::memory(16);
    gateway.connect(theirs);
    mcp_client::ClientBuilder::new("test", "1").protocol_version(version).connect(ours).await.unwrap()
}

/// A gateway session's connection to a local mount ends when the session does, at once (the
/// clock is paused: a grace waited out shows as time passed).
#[tokio::test(start_paused = true)]
async fn a_sessions_upstream_connection_ends_at_once_with_the_session() {
    let seen = Arc::default();
    let client = through_a_gateway(keeping(&seen), ProtocolVersion::V2025_11_25).await;
    client.call_tool("local_hello", json!({})).await.unwrap();
    let upstream = seen.lock().unwrap().clone().unwrap();
    let start = tokio::time::Instant::now();
    client.close().await.unwrap();
    upstream.closed().await;
    assert!(start.elapsed() < Duration::from_secs(1), "closed after {:?}", start.elapsed());
}

/// A stateless request's connection to a local mount is kept for the next request (the pool
/// of `mcp_gateway`'s stateless requests), and ends at once with the gateway: the mounted
/// server's side of it, which the gateway's client listened on for changes
/// (`subscriptions/listen`), does not wait out the grace of its running handlers.
#[tokio::test(start_paused = true)]
async fn a_stateless_requests_upstream_connection_ends_at_once_with_the_gateway() {
    let seen = Arc::default();
    let client = through_a_gateway(keeping(&seen), ProtocolVersion::V2026_07_28).await;
    client.call_tool("local_hello", json!({})).await.unwrap();
    let upstream = seen.lock().unwrap().clone().unwrap();
    client.call_tool("local_hello", json!({})).await.unwrap();
    let again = seen.lock().unwrap().clone().unwrap();
    assert!(upstream.same_connection(&again), "the second request opened a connection of its own");
    assert!(!upstream.is_closed());
    // The gateway ends with the last connection it serves.
    let start = tokio::time::Instant::now();
    client.close().await.unwrap();
    upstream.closed().await;
    assert!(start.elapsed() < Duration::from_secs(1), "closed after {:?}", start.elapsed());
}

/// A dropped gateway ends its connections to the mounted servers (the catalog's included):
/// it does not live on, held by its own mounts, until the process ends.
#[tokio::test]
async fn a_dropped_gateway_ends_its_mounts_connections() {
    // Each connection's client holds a sender; all are dropped once every client is.
    let (alive, mut gone) = tokio::sync::mpsc::channel::<()>(1);
    let source = mcp_gateway::Source::local(keeping(&Arc::default())).configure(move |builder| {
        let alive = alive.clone();
        builder.on_event(move |_| {
            let _ = &alive;
        })
    });
    let gateway = mcp_gateway::Gateway::builder("gateway", "1.0").mount("local", source).build().await.unwrap();
    assert_eq!(gateway.tools().len(), 1);
    drop(gateway);
    tokio::time::timeout(Duration::from_secs(10), gone.recv()).await.expect("a mount's connection lives on");
}
