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

/// A server whose tool `slow` (runnable as a task) answers "done" once `release` has a permit.
fn slow_server(release: &Arc<tokio::sync::Semaphore>) -> Server {
    let release = release.clone();
    let tool = ToolDef::new("slow", json!({"type": "object"}), move |_args, _ctx| {
        let release = release.clone();
        async move {
            release.acquire().await.unwrap().forget();
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
        }
    })
    .unwrap()
    .task_support(mcp_server::TaskSupport::Optional);
    Server::builder("slow", "1.0").tool(tool).build().unwrap()
}

/// A client of the gateway (over Streamable HTTP with `http`, else the in-memory pipe) makes a
/// mounted server's task through it and follows the task's id on a `subscriptions/listen`
/// stream: the task's end reaches the stream as a `notifications/tasks`, under the gateway's
/// id (before: the gateway honoured no task id, and the stream ended at once).
async fn a_mounted_task_reaches_a_listener(http: bool) {
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let gateway = Gateway::builder("gateway", "1.0").mount("up", slow_server(&release)).build().await.unwrap();
    let client = ClientBuilder::new("test", "1").protocol_version(ProtocolVersion::V2026_07_28);
    let client = if http {
        client.connect_http(&serve(gateway).await).await.unwrap()
    } else {
        let (ours, theirs) = mcp_jsonrpc::transport::memory(64);
        gateway.connect(theirs);
        client.connect(ours).await.unwrap()
    };
    let task = client.call_tool_as_task("up_slow", json!({}), None).await.unwrap().task().unwrap().clone();
    assert!(task.task_id.starts_with("up:"), "{}", task.task_id);
    let mut stream = within("the acknowledgement", client.follow_tasks(&[&task.task_id, "up:nope"])).await.unwrap();

    release.add_permits(1);
    loop {
        let ServerEvent::TaskStatus(status) = next(&mut stream).await else { continue };
        assert_eq!(status.task_id, task.task_id);
        if status.status == mcp_types::TaskStatus::Completed {
            break;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_task_reaches_a_listening_client_over_http() {
    a_mounted_task_reaches_a_listener(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_task_reaches_a_listening_client_in_memory() {
    a_mounted_task_reaches_a_listener(false).await;
}

/// On the wire: a `subscriptions/listen` naming tasks without declaring the tasks extension is
/// -32021, as on a server with tasks of its own; declaring it, only the tasks the mounted
/// server knows are acknowledged (an unknown id of the mount, an unknown mount: left out).
#[tokio::test]
async fn only_the_mounted_servers_known_tasks_are_acknowledged() {
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let gateway = Gateway::builder("gateway", "1.0").mount("up", slow_server(&release)).build().await.unwrap();
    let (ours, theirs) = mcp_jsonrpc::transport::memory(16);
    gateway.connect(theirs);
    let mut wire = mcp_test_support::memory::Wire::new(ours);
    let meta = |extension: bool| {
        let caps = if extension { json!({"extensions": {(mcp_server::tasks::EXTENSION): {}}}) } else { json!({}) };
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": caps,
        })
    };
    let request = |id: i64, method: &str, params: serde_json::Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    wire.send(request(1, "tools/call", json!({"name": "up_slow", "arguments": {}, "_meta": meta(true)}))).await;
    let created = wire.recv().await;
    let id = created["result"]["taskId"].as_str().unwrap_or_else(|| panic!("no task: {created}")).to_owned();

    let ids = json!([id, "up:nope", "other:x"]);
    let listen = |n: i64, extension: bool| {
        request(n, "subscriptions/listen", json!({"notifications": {"taskIds": ids}, "_meta": meta(extension)}))
    };
    wire.send(listen(2, false)).await;
    let refused = wire.recv().await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");

    wire.send(listen(3, true)).await;
    let ack = wire.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]), "{ack}");
}
