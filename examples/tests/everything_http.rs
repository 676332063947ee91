//! Our client against the `everything` example's server over Streamable HTTP (on a local
//! port), pinned to the session revision 2025-11-25, where sessions, the GET stream,
//! resumption and `notifications/cancelled` are at work: every tool, resource, prompt
//! and completion (the checks of `everything_stdio.rs`, in `everything_checks`), elicitation
//! and sampling answered by client handlers, SSE polling (`test_reconnection`), subscriptions
//! with their updates, list changes, and a cancelled call.

mod everything_checks;

use std::sync::{Arc, Mutex};

use everything_checks::{Seen, builder, completions, custom_methods, prompts, resources, text, tools, wait_for_event};
use mcp_sdk::client::{CallOptions, Client, ClientError, ServerEvent};
use mcp_sdk::jsonrpc::CancellationToken;
use mcp_sdk::server::Server;
use mcp_sdk::transport::http::server::{HttpServerConfig, serve_listener};
use mcp_sdk::types::{CallToolRequestParams, ProtocolVersion};
use serde_json::json;

/// Serves a fresh `everything` server on a local port; the server, and its endpoint's URL.
async fn serve() -> (Server, String) {
    let server = mcp_examples::everything::server().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(serve_listener(Arc::new(server.clone()), HttpServerConfig::default(), listener));
    (server, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_item_of_everything_over_http_in_2025_11_25() {
    every_item_over_http(ProtocolVersion::V2025_11_25).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_item_of_everything_over_http_in_2025_06_18() {
    every_item_over_http(ProtocolVersion::V2025_06_18).await;
}

/// The custom method of `everything` in 2026-07-28 over HTTP: each request on a POST of its
/// own, its notification on that POST's stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_methods_of_everything_over_http_in_2026_07_28() {
    let (_server, url) = serve().await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen).connect_http(&url).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    custom_methods(&client, &seen).await;
    client.close().await.unwrap();
}

async fn every_item_over_http(version: ProtocolVersion) {
    let (server, url) = serve().await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen).protocol_version(version).connect_http(&url).await.unwrap();
    assert_eq!(client.protocol_version(), version);
    assert!(client.discover_result().is_none(), "the session handshake, no server/discover");
    assert_eq!(client.server_info().name, "mcp-rust-everything");
    assert_eq!(client.server_capabilities().resources.as_ref().unwrap().subscribe, Some(true));
    client.ping().await.unwrap();

    tools(&client, &seen).await;
    resources(&client).await;
    prompts(&client).await;
    completions(&client).await;
    custom_methods(&client, &seen).await;
    cancellation(&client).await;
    // Last: these change the server's lists.
    subscriptions_and_list_changes(&client, &server, &seen).await;
    client.close().await.unwrap();
}

/// A call cancelled while it runs: the client stops waiting at once (and tells the server,
/// with `notifications/cancelled`), and the session goes on.
async fn cancellation(client: &Client) {
    let token = CancellationToken::new();
    let cancel = token.clone();
    // Cancelled when the first progress report arrives: the handler is running.
    let options = CallOptions::default().cancel_on(token).on_progress(move |_| cancel.cancel());
    let mut params = CallToolRequestParams::new("test_tool_with_progress");
    params.arguments = Some(Default::default());
    let cancelled = client.call_tool_with(params, options).await;
    assert!(matches!(cancelled, Err(ClientError::Cancelled)), "{cancelled:?}");
    let simple = client.call_tool("test_simple_text", json!({})).await.unwrap();
    assert_eq!(text(&simple), "This is a simple text response for testing.");
}

/// `resources/updated` for a subscribed resource only, and the list-changed notifications of
/// prompts and resources, on the GET stream.
async fn subscriptions_and_list_changes(client: &Client, server: &Server, seen: &Arc<Mutex<Seen>>) {
    const WATCHED: &str = "test://watched-resource";
    let updates = || {
        let seen = seen.lock().unwrap();
        seen.events.iter().filter(|e| matches!(e, ServerEvent::ResourceUpdated { uri } if uri == WATCHED)).count()
    };
    client.subscribe(WATCHED).await.unwrap();
    server.notify_resource_updated(WATCHED).await;
    wait_for_event(seen, "notifications/resources/updated", |e| matches!(e, ServerEvent::ResourceUpdated { .. })).await;
    client.unsubscribe(WATCHED).await.unwrap();
    server.notify_resource_updated(WATCHED).await;
    // The prompt list changes next: its notification comes after any update on the same stream.
    assert!(server.remove_prompt("test_prompt_with_image").await);
    wait_for_event(seen, "notifications/prompts/list_changed", |e| matches!(e, ServerEvent::PromptListChanged)).await;
    assert_eq!(updates(), 1, "no update after unsubscribing");
    let prompts = client.list_all_prompts().await.unwrap();
    assert!(prompts.iter().all(|p| p.name != "test_prompt_with_image"));
    assert!(server.remove_resource("test://static-binary").await);
    wait_for_event(seen, "notifications/resources/list_changed", |e| matches!(e, ServerEvent::ResourceListChanged))
        .await;
    let resources = client.list_all_resources().await.unwrap();
    assert!(resources.iter().all(|r| r.uri != "test://static-binary"));
}
