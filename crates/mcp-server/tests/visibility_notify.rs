//! A session's `list_changed` when its client reads nothing: a change of its visibility
//! (`SessionControl::hide_tool`) waits at most a second for room in the session's outgoing
//! queue, then goes on without telling it (paused time: the waits are measured, not slept).

use std::time::Duration;

use mcp_jsonrpc::PeerConfig;
use mcp_jsonrpc::transport::memory;
use mcp_server::{ItemKind, Server, ToolDef, ToolError};
use mcp_test_support::{Session, Wire};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::json;
use tokio::time::Instant;

/// How long a visibility change waits for room to tell its session.
const NOTIFY_WAIT: Duration = Duration::from_secs(1);

#[tokio::test(start_paused = true)]
async fn a_client_that_reads_nothing_delays_a_visibility_change_a_second_at_most() {
    // `whoami` answers the session's id.
    let whoami = ToolDef::new("whoami", json!({"type": "object"}), |_, ctx| async move {
        let id = ctx.session().id().unwrap_or_default();
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(id)]))
    })
    .unwrap();
    let config = PeerConfig { outgoing_capacity: 1, ..PeerConfig::default() };
    let server = Server::builder("notify", "1.0").tool(whoami).peer_config(config).build().unwrap();
    let (a, b) = memory(1);
    let _peer = server.connect(a);
    // Its `recv` waits longer than any timer of the server: the clock never runs out on it.
    let mut client = Session::new(Wire::new(b).with_timeout(Duration::from_secs(3600)), "2025-11-25");
    client
        .result(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let id = client.result("tools/call", json!({"name": "whoami", "arguments": {}})).await["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let control = server.session(&id).await.expect("the session is connected");

    // The client reads nothing from here: the first notifications fill the transport and the
    // outgoing queue, then each change waits its second for room, and goes on.
    let mut waits = Vec::new();
    for i in 0..6 {
        let started = Instant::now();
        assert!(control.hide_tool(&format!("t{i}")).await.unwrap(), "t{i} hidden");
        waits.push(started.elapsed());
    }
    let told = waits.iter().position(|w| *w > Duration::ZERO).expect("the queue filled");
    assert!(told >= 1, "{waits:?}");
    assert!(waits[..told].iter().all(|w| *w == Duration::ZERO), "{waits:?}");
    assert!(waits[told..].iter().all(|w| *w == NOTIFY_WAIT), "{waits:?}");
    // Every change was made, told or not.
    assert!((0..6).all(|i| control.is_hidden(ItemKind::Tool, &format!("t{i}"))));

    // Read again: the notifications that found room, and nothing of those that did not.
    for _ in 0..told {
        assert_eq!(client.recv().await["method"], "notifications/tools/list_changed");
    }
    client.wire.expect_silence(99).await;
}
