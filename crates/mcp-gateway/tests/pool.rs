//! The connections the requests of the stateless revision (2026-07-28) share with a mounted
//! server (the gateway's pool): one whose call was cancelled is closed, not lent again, and
//! at most four idle ones are kept; the mounted server's side of each connection tells.

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{CallOptions, Client};
use mcp_jsonrpc::{CancellationToken, Peer};
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_types::{CallToolRequestParams, CallToolResult, ContentBlock, ProtocolVersion};
use serde_json::json;
use tokio::sync::{Barrier, mpsc};

/// How many calls of `together` are in flight at once; more than the pool keeps.
const AT_ONCE: usize = 6;

/// The most idle connections the gateway keeps for one set of capabilities.
const IDLE: usize = 4;

/// A bound on waiting for what should come: a failure, not a way to synchronize.
async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f).await.unwrap_or_else(|_| panic!("{what} never came"))
}

/// A server whose tools send the connection they are called on to `seen`: `together` waits
/// until [`AT_ONCE`] calls of it are in flight, `wait` until it is cancelled.
fn server(seen: mpsc::Sender<Peer>) -> Server {
    let barrier = Arc::new(Barrier::new(AT_ONCE));
    let sent = seen.clone();
    let together = ToolDef::new("together", json!({"type": "object"}), move |_args, ctx: Context| {
        let (barrier, sent) = (barrier.clone(), sent.clone());
        async move {
            sent.send(ctx.peer().clone()).await.unwrap();
            barrier.wait().await;
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
        }
    })
    .unwrap();
    let wait = ToolDef::new("wait", json!({"type": "object"}), move |_args, ctx: Context| {
        let seen = seen.clone();
        async move {
            seen.send(ctx.peer().clone()).await.unwrap();
            ctx.cancellation().cancelled().await;
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("cancelled")]))
        }
    })
    .unwrap();
    Server::builder("local", "1.0").tool(together).tool(wait).build().unwrap()
}

/// A gateway with `server` mounted unprefixed, and a 2026-07-28 client of it, both over the
/// in-memory transport.
async fn through_a_gateway(server: Server) -> Client {
    let gateway = mcp_gateway::Gateway::builder("gateway", "1.0").mount("", server).build().await.unwrap();
    let (ours, theirs) = mcp_jsonrpc::transport::memory(64);
    gateway.connect(theirs);
    mcp_client::ClientBuilder::new("test", "1")
        .protocol_version(ProtocolVersion::V2026_07_28)
        .connect(ours)
        .await
        .unwrap()
}

/// [`AT_ONCE`] calls of `together` at once: the connections they were served on.
async fn at_once(client: &Client, seen: &mut mpsc::Receiver<Peer>) -> Vec<Peer> {
    let calls = (0..AT_ONCE).map(|_| client.call_tool("together", json!({})));
    for result in within("the calls' answers", futures_util::future::join_all(calls)).await {
        assert_eq!(result.unwrap().content[0].as_text(), Some("done"));
    }
    (0..AT_ONCE).map(|_| seen.try_recv().unwrap()).collect()
}

/// Of more connections than the pool keeps, once their calls are answered, four stay open and
/// are lent to the next requests; the others are closed (before the pool, every stateless
/// request opened a connection of its own).
#[tokio::test]
async fn at_most_four_idle_connections_are_kept() {
    let (seen, mut served) = mpsc::channel(2 * AT_ONCE);
    let client = through_a_gateway(server(seen)).await;
    let first = at_once(&client, &mut served).await;
    for (i, peer) in first.iter().enumerate() {
        assert!(!first[..i].iter().any(|p| p.same_connection(peer)), "a connection each while in flight");
    }
    let second = at_once(&client, &mut served).await;
    let (kept, dropped): (Vec<&Peer>, Vec<&Peer>) =
        first.iter().partition(|p| second.iter().any(|s| s.same_connection(p)));
    assert_eq!(kept.len(), IDLE, "the connections the pool kept were lent again");
    for peer in dropped {
        within("the close of a connection the pool did not keep", peer.closed()).await;
    }
}

/// A stateless request cancelled while its mounted server serves it: the connection it held
/// is closed (the mounted server may still send for the cancelled call), not kept for the
/// next request, which gets another.
#[tokio::test]
async fn a_cancelled_requests_connection_is_not_lent_again() {
    let (seen, mut served) = mpsc::channel(2 * AT_ONCE);
    let client = through_a_gateway(server(seen)).await;
    let cancel = CancellationToken::new();
    let options = CallOptions::default().cancel_on(cancel.clone());
    let call = client.call_tool_with(CallToolRequestParams::new("wait"), options);
    let served_on = async {
        let peer = served.recv().await.unwrap();
        cancel.cancel();
        peer
    };
    let (result, cancelled) = tokio::join!(call, served_on);
    assert!(matches!(result, Err(mcp_client::ClientError::Cancelled)), "{result:?}");
    within("the close of the cancelled request's connection", cancelled.closed()).await;

    let next = at_once(&client, &mut served).await;
    assert!(next.iter().all(|p| !p.same_connection(&cancelled)), "the cancelled request's connection lent again");
}
