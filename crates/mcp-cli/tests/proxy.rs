//! `mcp proxy`, the real binary, both ways, carrying our client (with the checks of the
//! `everything` example: every tool, with sampling, elicitation, logging and progress;
//! resources, prompts, completions) to the `everything` server over Streamable HTTP:
//!
//! - stdio -> HTTP: our client spawns `mcp proxy URL` as its stdio server;
//! - HTTP -> stdio -> HTTP: our client over HTTP to `mcp proxy --serve ADDR -- mcp proxy URL`,
//!   whose per-session child is the first direction.
//!
//! The official SDK clients through the proxy run in `cargo xtask interop`.

#[path = "../../../examples/tests/everything_checks/mod.rs"]
mod everything_checks;

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use everything_checks::{Seen, builder, completions, custom_methods, prompts, resources, tools};
use mcp_sdk::client::ClientError;
use mcp_sdk::server::Server;
use mcp_sdk::transport::http::server::{HttpServerConfig, serve_listener};
use mcp_sdk::transport::stdio::ChildCommand;
use mcp_sdk::types::{ErrorCode, ProtocolVersion};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// Serves a fresh `everything` server on a local port; the server, and its endpoint's URL.
async fn serve_everything() -> (Server, String) {
    let server = mcp_examples::everything::server().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(serve_listener(Arc::new(server.clone()), HttpServerConfig::default(), listener));
    (server, url)
}

/// `mcp proxy --serve 127.0.0.1:0 -- ARGS`: the process, and the URL it serves (from the line
/// it prints to stderr).
fn serve(args: &[&str]) -> (KillOnDrop, String) {
    serve_with(Command::new(MCP).args(["proxy", "--serve", "127.0.0.1:0", "--"]).args(args))
}

fn serve_with(command: &mut Command) -> (KillOnDrop, String) {
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("mcp proxy: serving ").unwrap_or_else(|| panic!("{line:?}")).to_owned();
    // Keep reading its stderr (the children's logs) so that it never blocks on it.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::stderr()));
    (KillOnDrop(child), url)
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_client_reaches_an_http_server_through_the_proxy() {
    let (_server, url) = serve_everything().await;
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18] {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let command = ChildCommand::new(MCP).args(["proxy", url.as_str()]);
        let client = builder(&seen).protocol_version(version).spawn(command).await.unwrap();
        assert_eq!(client.protocol_version(), version);
        assert_eq!(client.server_info().name, "mcp-rust-everything");
        client.ping().await.unwrap();
        tools(&client, &seen).await;
        resources(&client).await;
        prompts(&client).await;
        completions(&client).await;
        client.close().await.unwrap();
    }
}

/// The stateless revision through the proxy: each request its own POST, with its headers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_client_of_the_stateless_revision_reaches_an_http_server_through_the_proxy() {
    let (_server, url) = serve_everything().await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let command = ChildCommand::new(MCP).args(["proxy", url.as_str()]);
    let version = ProtocolVersion::V2026_07_28;
    let client = builder(&seen).protocol_version(version).spawn(command).await.unwrap();
    assert_eq!(client.protocol_version(), version);
    tools(&client, &seen).await;
    resources(&client).await;
    prompts(&client).await;
    custom_methods(&client, &seen).await;
    client.close().await.unwrap();
}

/// A tool that mirrors an argument in a header (`x-mcp-header`, SEP-2243): `everything`'s
/// `test_region_header` refuses a call whose `Mcp-Param-Region` does not agree with its
/// `region`. The proxy sends the header once it has seen the tool listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_sends_the_headers_a_tool_declares() {
    let (_server, url) = serve_everything().await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let command = ChildCommand::new(MCP).args(["proxy", url.as_str()]);
    let client = builder(&seen).protocol_version(ProtocolVersion::V2026_07_28).spawn(command).await.unwrap();
    let args = serde_json::json!({"region": "us-west1"});
    // Before any listing the proxy knows nothing of the tool: no header, and the server refuses.
    let refused = client.call_tool("test_region_header", args.clone()).await.unwrap_err();
    let ClientError::Remote(error) = &refused else { panic!("{refused:?}") };
    assert_eq!(error.error_code(), ErrorCode::HEADER_MISMATCH, "{error:?}");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "test_region_header"));
    let result = client.call_tool("test_region_header", args).await.unwrap();
    assert!(!result.is_error(), "{result:?}");
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("region=us-west1"), "{text}");
    // A value that is not plain ASCII goes Base64-encoded, and agrees too.
    let result = client.call_tool("test_region_header", serde_json::json!({"region": "Zürich"})).await.unwrap();
    assert!(serde_json::to_string(&result.content).unwrap().contains("region=Zürich"), "{result:?}");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_client_reaches_a_stdio_server_through_the_proxy() {
    let (_server, url) = serve_everything().await;
    let (_proxy, served) = serve(&[MCP, "proxy", &url]);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let version = ProtocolVersion::V2025_11_25;
    let client = builder(&seen).protocol_version(version).connect_http(&served).await.unwrap();
    assert_eq!(client.protocol_version(), version);
    assert_eq!(client.server_info().name, "mcp-rust-everything");
    client.ping().await.unwrap();
    tools(&client, &seen).await;
    resources(&client).await;
    prompts(&client).await;
    completions(&client).await;
    client.close().await.unwrap();
}

/// Requests of the stateless revision (no session) share one child.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_http_clients_share_one_child_through_the_proxy() {
    let (_server, url) = serve_everything().await;
    let (proxy, served) = serve(&[MCP, "proxy", &url]);
    let version = ProtocolVersion::V2026_07_28;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let a = builder(&seen).protocol_version(version).connect_http(&served).await.unwrap();
    let b = builder(&seen).protocol_version(version).connect_http(&served).await.unwrap();
    assert_eq!(a.protocol_version(), version);
    // Both clients count their ids from the same start: the proxy keeps them apart.
    let (x, y) = tokio::join!(a.list_all_tools(), b.list_all_tools());
    assert_eq!(x.unwrap().len(), y.unwrap().len());
    tools(&a, &seen).await;
    custom_methods(&b, &seen).await;
    let out = Command::new("pgrep").args(["-P", &proxy.0.id().to_string()]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1, "one child for all");
    a.close().await.unwrap();
    b.close().await.unwrap();
}

/// Each session has its own child, stopped when the session ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_session_gets_a_child_that_ends_with_it() {
    let (_server, url) = serve_everything().await;
    let (proxy, served) = serve(&[MCP, "proxy", &url]);
    let children = || {
        let out = Command::new("pgrep").args(["-P", &proxy.0.id().to_string()]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().count()
    };
    let seen = Arc::new(Mutex::new(Seen::default()));
    let version = ProtocolVersion::V2025_11_25;
    let a = builder(&seen).protocol_version(version).connect_http(&served).await.unwrap();
    let b = builder(&seen).protocol_version(version).connect_http(&served).await.unwrap();
    assert_eq!(children(), 2);
    a.close().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while children() != 1 {
        assert!(Instant::now() < deadline, "the child of the closed session still runs");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    b.ping().await.unwrap();
    b.close().await.unwrap();
}

/// Ctrl-C at a terminal (SIGINT to the proxy's process group) stops the proxy, which stops
/// each child through its stdin: the children, in process groups of their own, get no signal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_the_children_through_their_stdin() {
    use std::os::unix::process::CommandExt as _;
    let (_server, url) = serve_everything().await;
    let log = std::env::temp_dir().join(format!("mcp-cli-proxy-ctrl-c-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    // The child: `mcp proxy URL` under a shell that writes down a SIGINT and the exit status.
    let script = r#"trap 'echo signalled >> "$2"' INT; "$0" proxy "$1"; echo "exit $?" >> "$2""#;
    let (mut proxy, served) = serve_with(
        Command::new(MCP)
            .args(["proxy", "--serve", "127.0.0.1:0", "--", "sh", "-c", script, MCP, &url])
            .arg(&log)
            .process_group(0),
    );
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen).protocol_version(ProtocolVersion::V2025_11_25).connect_http(&served).await.unwrap();
    client.ping().await.unwrap();
    let group = proxy.0.id().to_string();
    assert!(Command::new("kill").args(["-INT", "--", &format!("-{group}")]).status().unwrap().success());
    let status = tokio::task::spawn_blocking(move || proxy.0.wait().unwrap()).await.unwrap();
    assert!(status.success(), "{status:?}");
    // The proxy waited for its child, so the log is complete.
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "exit 0\n");
    let _ = std::fs::remove_file(&log);
    drop(client);
}

#[test]
fn proxy_refuses_a_command_and_a_missing_server() {
    let out = Command::new(MCP).args(["proxy", "--", "cat"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "stdout carries protocol only");
    let out = Command::new(MCP).args(["proxy", "--serve", "127.0.0.1:0", "http://127.0.0.1:1/mcp"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// `--config FILE --server NAME` names the URL (and its headers) as a host's config would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_takes_its_url_from_a_config_entry() {
    let (_server, url) = serve_everything().await;
    let dir = std::env::temp_dir().join(format!("mcp-cli-proxy-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config.json");
    let config = serde_json::json!({"mcpServers": {
        "local": {"command": "elsewhere"},
        "remote": {"url": url, "headers": {"X-Test": "1"}}
    }});
    std::fs::write(&file, config.to_string()).unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let args = ["--config", file.to_str().unwrap(), "--server", "remote", "proxy"];
    let client = builder(&seen).spawn(ChildCommand::new(MCP).args(args)).await.unwrap();
    assert_eq!(client.server_info().name, "mcp-rust-everything");
    assert!(!client.list_all_tools().await.unwrap().is_empty());
    client.close().await.unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

/// `mcp proxy --serve ADDR --named-server NAME TARGET...`: two servers on one endpoint, a URL
/// and a command (here `mcp proxy URL`, a stdio server), each under its name, with the
/// command's sampling request reaching the client over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_servers_share_one_endpoint() {
    let (_server, url) = serve_everything().await;
    let pipe = format!("{MCP} proxy {url}");
    let (_proxy, served) = serve_with(Command::new(MCP).args([
        "proxy",
        "--serve",
        "127.0.0.1:0",
        "--named-server",
        "remote",
        &url,
        "--named-server",
        "pipe",
        &pipe,
    ]));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen).protocol_version(ProtocolVersion::V2025_11_25).connect_http(&served).await.unwrap();
    assert_eq!(client.server_info().name, "mcp-proxy");
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names[0], "remote_test_simple_text");
    assert!(names.contains(&"pipe_test_simple_text".to_owned()), "{names:?}");
    for tool in ["remote_test_simple_text", "pipe_test_simple_text"] {
        let result = client.call_tool(tool, serde_json::json!({})).await.unwrap();
        assert_eq!(everything_checks::text(&result), "This is a simple text response for testing.");
    }
    let sampled = client.call_tool("pipe_test_sampling", serde_json::json!({"prompt": "hi"})).await.unwrap();
    assert_eq!(everything_checks::text(&sampled), "LLM response: This is a test response from the client");
    client.close().await.unwrap();
}

/// `mcp proxy --named-server NAME TARGET URL`, served on stdio: the named server under its
/// name, the one given last unprefixed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_servers_on_stdio_beside_an_unnamed_one() {
    let (_server, url) = serve_everything().await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let command = ChildCommand::new(MCP).args(["proxy", "--named-server", "other", &url, &url]);
    let client = builder(&seen).spawn(command).await.unwrap();
    for tool in ["test_simple_text", "other_test_simple_text"] {
        let result = client.call_tool(tool, serde_json::json!({})).await.unwrap();
        assert_eq!(everything_checks::text(&result), "This is a simple text response for testing.");
    }
    let read = client.read_resource("other+test://static-text").await.unwrap();
    assert_eq!(serde_json::to_value(&read.contents[0]).unwrap()["uri"], "other+test://static-text");
    client.close().await.unwrap();
}
