//! The gateway (`mcp_sdk::gateway`) over real transports: the `everything` server mounted
//! through it over Streamable HTTP passes the checks it passes alone (sampling, elicitation,
//! progress, logging, resources, prompts, completions); a local mount and a stdio child under
//! prefixes side by side; a mounted server's list change reaching the gateway's client; a
//! mounted child killed failing only its own calls.

mod everything_checks;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use everything_checks::{Seen, builder, completions, prompts, resources, text, tools, wait_for_event};
use mcp_sdk::client::{CallOptions, Client, ServerEvent};
use mcp_sdk::gateway::{Gateway, Source};
use mcp_sdk::server::{Server, ToolDef, ToolError};
use mcp_sdk::transport::http::server::{HttpServerConfig, serve_listener};
use mcp_sdk::transport::stdio::ChildCommand;
use mcp_sdk::types::{CallToolRequestParams, CallToolResult, ContentBlock, ProtocolVersion};
use serde_json::json;

/// The `everything` example, which `cargo test` builds next to this test.
fn everything_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|d| d.parent()).unwrap().join("examples").join("everything");
    assert!(bin.exists(), "{} is missing: build the examples (cargo test builds them)", bin.display());
    bin
}

/// Serves `server` over Streamable HTTP on a local port; the endpoint's URL.
async fn serve(server: Server) -> String {
    serve_shared(server).await.1
}

/// Serves `server` over Streamable HTTP on a local port; the server, and the endpoint's URL.
async fn serve_shared(server: Server) -> (Server, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(serve_listener(Arc::new(server.clone()), HttpServerConfig::default(), listener));
    (server, url)
}

/// `everything` over HTTP, mounted without a prefix into a gateway served over HTTP: a
/// client of the gateway sees what a client of `everything` sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_through_the_gateway_over_http() {
    let (everything, upstream) = serve_shared(mcp_examples::everything::server().unwrap()).await;
    let gateway = Gateway::builder("gateway", "1.0").mount("", Source::http(&upstream).unwrap()).build().await.unwrap();
    let url = serve(gateway).await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen).protocol_version(ProtocolVersion::V2025_11_25).connect_http(&url).await.unwrap();
    assert_eq!(client.server_info().name, "gateway");
    tools(&client, &seen).await;
    resources(&client).await;
    prompts(&client).await;
    completions(&client).await;
    subscriptions_and_list_changes(&client, &everything, &seen).await;
    client.close().await.unwrap();
}

/// `everything_http.rs`'s check of subscriptions and list changes, through the gateway: an
/// update of `everything` reaches the gateway's subscriber (and not after it unsubscribed),
/// and its list changes reach the gateway's client.
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
    // The prompt list changes next: its notification comes after any update.
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

/// A tool `name` that answers `answer`.
fn answering(name: &str, answer: &'static str) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), move |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(answer)]))
    })
    .unwrap()
}

/// A local server and a stdio child under prefixes: both called, the child's sampling round
/// trip and the local one's progress reaching the gateway's client, resources rewritten.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_and_stdio_mounts_under_prefixes() {
    let local = Server::builder("local", "1.0").tool(answering("hello", "hello from local")).build().unwrap();
    let child = ChildCommand::new(everything_bin()).args(["--stdio"]);
    let gateway = Gateway::builder("gateway", "1.0")
        .mount("local", local)
        .mount("child", Source::stdio(child))
        .mount("mem", mcp_examples::everything::server().unwrap())
        .build()
        .await
        .unwrap();
    let url = serve(gateway).await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen).protocol_version(ProtocolVersion::V2025_11_25).connect_http(&url).await.unwrap();

    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names[0], "local_hello");
    assert_eq!(names[1], "child_test_simple_text");
    assert!(names.contains(&"mem_test_sampling".to_owned()), "{names:?}");
    assert_eq!(text(&client.call_tool("local_hello", json!({})).await.unwrap()), "hello from local");
    assert_eq!(
        text(&client.call_tool("child_test_simple_text", json!({})).await.unwrap()),
        "This is a simple text response for testing."
    );

    // The child's sampling request reaches our client through the gateway.
    let sampled = client.call_tool("child_test_sampling", json!({"prompt": "through"})).await.unwrap();
    assert_eq!(text(&sampled), "LLM response: This is a test response from the client");
    assert_eq!(seen.lock().unwrap().sampling.len(), 1);

    // The in-process mount's progress reaches our client, in order.
    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = progress.clone();
    let options = CallOptions::default().on_progress(move |p| sink.lock().unwrap().push((p.progress, p.total)));
    let reported =
        client.call_tool_with(CallToolRequestParams::new("mem_test_tool_with_progress"), options).await.unwrap();
    assert_eq!(text(&reported), "Progress reported: 0, 50, 100 of 100");
    assert_eq!(*progress.lock().unwrap(), [(0.0, Some(100.0)), (50.0, Some(100.0)), (100.0, Some(100.0))]);

    // Resources under `prefix+uri`, read back with the gateway's URI; prompts prefixed.
    let resources = client.list_all_resources().await.unwrap();
    assert!(resources.iter().any(|r| r.uri == "child+test://static-text"), "{resources:?}");
    let read = client.read_resource("child+test://static-text").await.unwrap();
    let contents = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(contents["uri"], "child+test://static-text");
    assert_eq!(contents["text"], "This is the content of the static text resource.");
    let templated = client.read_resource("mem+test://template/7/data").await.unwrap();
    assert_eq!(serde_json::to_value(&templated.contents[0]).unwrap()["uri"], "mem+test://template/7/data");
    let prompt = client.get_prompt("child_test_simple_prompt", Default::default()).await.unwrap();
    assert!(!prompt.messages.is_empty());
    client.close().await.unwrap();
}

/// A tool added to a mounted server at run time: the gateway's client hears
/// `tools/list_changed` and can call it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_list_change_reaches_the_gateways_client() {
    let local = Server::builder("local", "1.0").tool(answering("first", "1")).build().unwrap();
    let gateway = Gateway::builder("gateway", "1.0").mount("local", local.clone()).build().await.unwrap();
    let url = serve(gateway).await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen).protocol_version(ProtocolVersion::V2025_11_25).connect_http(&url).await.unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 1);

    local.add_tool(answering("second", "2")).await.unwrap();
    wait_for_event(&seen, "tools/list_changed", |e| matches!(e, ServerEvent::ToolListChanged)).await;
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["local_first", "local_second"]);
    assert_eq!(text(&client.call_tool("local_second", json!({})).await.unwrap()), "2");

    // Cleared before the change: its notification may arrive before `remove_tool` returns.
    seen.lock().unwrap().events.clear();
    assert!(local.remove_tool("first").await);
    wait_for_event(&seen, "tools/list_changed", |e| matches!(e, ServerEvent::ToolListChanged)).await;
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["local_second"]);
    client.close().await.unwrap();
}

/// A mounted child killed while its call waits on the client: that call answers an error
/// result naming the mount, the other mount serves on, and the next call starts the child
/// again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_server_that_dies_fails_only_its_own_calls() {
    let dir = std::env::temp_dir().join(format!("mcp-gateway-down-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pids = dir.join("pids");
    let _ = std::fs::remove_file(&pids);
    // The child writes its process id, then becomes `everything`.
    let script = format!("echo $$ >> '{}'; exec '{}' --stdio", pids.display(), everything_bin().display());
    // In a session revision the child's `tools/call` stays open while its elicitation
    // request waits on our client (in 2026-07-28 the call would have ended with an
    // input-required result, and nothing of it would wait on the child).
    let child = Source::stdio(ChildCommand::new("sh").args(["-c", &script]))
        .configure(|client| client.protocol_version(ProtocolVersion::V2025_11_25));
    let local = Server::builder("local", "1.0").tool(answering("hello", "still here")).build().unwrap();
    let gateway = Gateway::builder("gateway", "1.0").mount("child", child).mount("local", local).build().await.unwrap();
    let url = serve(gateway).await;

    // The client's elicitation handler says that the child's call is under way, and never
    // answers: the call waits until the child dies.
    let (asked_tx, mut asked) = tokio::sync::mpsc::channel::<()>(1);
    let client = mcp_sdk::client::ClientBuilder::new("t", "1")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .on_elicitation(move |_params| {
            let asked_tx = asked_tx.clone();
            async move {
                let _ = asked_tx.send(()).await;
                std::future::pending().await
            }
        })
        .connect_http(&url)
        .await
        .unwrap();
    let client = Arc::new(client);
    let call = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("child_test_elicitation", json!({"message": "wait"})).await })
    };
    tokio::time::timeout(Duration::from_secs(10), asked.recv()).await.unwrap().unwrap();
    for pid in std::fs::read_to_string(&pids).unwrap().lines() {
        assert!(std::process::Command::new("kill").args(["-9", pid]).status().unwrap().success());
    }
    let failed = tokio::time::timeout(Duration::from_secs(10), call).await.unwrap().unwrap().unwrap();
    assert!(failed.is_error(), "{failed:?}");
    let message = failed.content[0].as_text().unwrap();
    assert!(message.contains("mounted server `child`"), "{message}");

    assert_eq!(text(&client.call_tool("local_hello", json!({})).await.unwrap()), "still here");
    let again = client.call_tool("child_test_simple_text", json!({})).await.unwrap();
    assert_eq!(text(&again), "This is a simple text response for testing.");
    let _ = std::fs::remove_dir_all(&dir);
    // Dropped, not closed: closing would wait out the grace of the elicitation handler that
    // never answers.
    drop(client);
}

/// A 2026-07-28 client through the gateway to `everything` over HTTP: the gateway's
/// connection for the request sends the `Mcp-Param-Region` header that `test_region_header`
/// declares (`x-mcp-header`), which `everything` requires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_mirrors_an_argument_in_a_header_through_the_gateway() {
    let upstream = serve(mcp_examples::everything::server().unwrap()).await;
    let gateway = Gateway::builder("gateway", "1.0").mount("", Source::http(&upstream).unwrap()).build().await.unwrap();
    let url = serve(gateway).await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen).connect_http(&url).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    client.list_all_tools().await.unwrap();
    let result = client.call_tool("test_region_header", json!({"region": "eu-west-1"})).await.unwrap();
    assert!(text(&result).contains("eu-west-1"), "{result:?}");
    client.close().await.unwrap();
}

/// A gateway session's connection to a mounted server ends with the session: the connection
/// the mounted server served the session's call on closes when the client closes (HTTP
/// DELETE).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_upstream_connection_ends_with_the_session() {
    // The mounted server's tool keeps the connection it was called on.
    let seen_peer: Arc<Mutex<Option<mcp_sdk::jsonrpc::Peer>>> = Arc::default();
    let keep = seen_peer.clone();
    let tool = ToolDef::new("hello", json!({"type": "object"}), move |_args, ctx| {
        *keep.lock().unwrap() = Some(ctx.peer().clone());
        async { Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("hello")])) }
    })
    .unwrap();
    let local = Server::builder("local", "1.0").tool(tool).build().unwrap();
    let gateway = Gateway::builder("gateway", "1.0").mount("local", local).build().await.unwrap();
    let url = serve(gateway).await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen).protocol_version(ProtocolVersion::V2025_11_25).connect_http(&url).await.unwrap();
    assert_eq!(text(&client.call_tool("local_hello", json!({})).await.unwrap()), "hello");
    let upstream = seen_peer.lock().unwrap().clone().unwrap();
    assert!(!upstream.is_closed());
    client.close().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), upstream.closed()).await.expect("the upstream connection lives on");
}

/// Requests of the stateless revision (2026-07-28) share the gateway's connection to a
/// mounted server: the second request is served on the connection the first was (before,
/// each request opened one, closed once it was answered).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_requests_share_an_upstream_connection() {
    let seen_peer: Arc<Mutex<Option<mcp_sdk::jsonrpc::Peer>>> = Arc::default();
    let keep = seen_peer.clone();
    let tool = ToolDef::new("hello", json!({"type": "object"}), move |_args, ctx| {
        *keep.lock().unwrap() = Some(ctx.peer().clone());
        async { Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("hello")])) }
    })
    .unwrap();
    let local = Server::builder("local", "1.0").tool(tool).build().unwrap();
    let gateway = Gateway::builder("gateway", "1.0").mount("local", local).build().await.unwrap();
    let url = serve(gateway).await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen).connect_http(&url).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(text(&client.call_tool("local_hello", json!({})).await.unwrap()), "hello");
    let first = seen_peer.lock().unwrap().clone().unwrap();
    assert_eq!(text(&client.call_tool("local_hello", json!({})).await.unwrap()), "hello");
    let second = seen_peer.lock().unwrap().clone().unwrap();
    assert!(first.same_connection(&second), "the second request opened a connection of its own");
    assert!(!first.is_closed());
    client.close().await.unwrap();
}
