//! `subscriptions/listen` (2026-07-28) through the gateway, over Streamable HTTP: a mounted
//! server's list changes and resource updates reach a client of the gateway that listens for
//! them, under the gateway's names.

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{ClientBuilder, ServerEvent, Subscription};
use mcp_gateway::{Gateway, Source};
use mcp_server::{ResourceDef, Server, ToolDef, ToolError};
use mcp_types::{CallToolResult, ContentBlock, ProtocolVersion, SubscriptionFilter};
use serde_json::json;

/// Serves `server` over Streamable HTTP on a local port; the endpoint's URL.
async fn serve(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = mcp_transport_http::server::HttpServerConfig::default();
    tokio::spawn(mcp_transport_http::server::serve_listener(Arc::new(server), config, listener));
    url
}

/// A bound on waiting for what should come at once: a failure, not a way to synchronize.
async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f).await.unwrap_or_else(|_| panic!("{what} never came"))
}

/// A tool `name` that answers its name.
fn tool(name: &'static str) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), move |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(name)]))
    })
    .unwrap()
}

/// The next event of `subscription`.
async fn next(subscription: &mut Subscription) -> ServerEvent {
    within("a notification on the stream", subscription.next()).await.expect("the stream ended")
}

/// A mounted server (spoken to at `upstream`) adds a tool and updates a resource: a client of
/// the gateway listening for tool list changes and for that resource (under its gateway URI)
/// hears both on its stream.
async fn changes_reach_a_listener(upstream: ProtocolVersion) {
    let readme = ResourceDef::new("readme", "file:///readme", |uri: String, _vars, _ctx| async move {
        let text = mcp_types::TextResourceContents::new(uri, "hello");
        Ok::<_, mcp_types::ErrorObject>(vec![mcp_types::AnyResourceContents::TextResourceContents(text)])
    });
    let mounted = Server::builder("up", "1.0").tool(tool("one")).resource(readme).build().unwrap();
    let source = Source::local(mounted.clone()).configure(move |b| b.protocol_version(upstream));
    let gateway = Gateway::builder("gateway", "1.0").mount("up", source).build().await.unwrap();
    let url = serve(gateway).await;
    let client = ClientBuilder::new("test", "1").protocol_version(ProtocolVersion::V2026_07_28).connect_http(&url);
    let client = client.await.unwrap();
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        resource_subscriptions: Some(vec!["up+file:///readme".to_owned()]),
        ..Default::default()
    };
    let mut stream = within("the acknowledgement", client.listen(filter)).await.unwrap();

    mounted.add_tool(tool("two")).await.unwrap();
    assert!(matches!(next(&mut stream).await, ServerEvent::ToolListChanged), "not the tool list change");
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["up_one", "up_two"]);

    mounted.notify_resource_updated("file:///readme").await;
    match next(&mut stream).await {
        ServerEvent::ResourceUpdated { uri } => assert_eq!(uri, "up+file:///readme"),
        other => panic!("not the resource update: {other:?}"),
    }
}

/// The mounted server at 2026-07-28 (the gateway listens to it in turn).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_mounted_servers_changes_reach_a_listening_client() {
    changes_reach_a_listener(ProtocolVersion::V2026_07_28).await;
}

/// The mounted server in a session (its notifications come unsolicited).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_mounted_servers_changes_reach_a_listening_client() {
    changes_reach_a_listener(ProtocolVersion::V2025_11_25).await;
}
