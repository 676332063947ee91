//! The stdio transport against real child processes: the `echo` example server, and shell
//! children that ignore stdin EOF or SIGTERM.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use mcp_sdk::jsonrpc::{CallOptions, Peer, PeerConfig, Router};
use mcp_sdk::transport::stdio::{ChildCommand, ChildProcess, ShutdownStep, StderrMode};
use mcp_sdk::types::{CallToolRequest, CallToolRequestParams, InitializeRequest, ListToolsRequest};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

/// The `echo` example, which `cargo test` builds next to this test.
fn echo_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).unwrap();
    let bin = dir.join("examples").join("echo");
    assert!(bin.exists(), "{} is missing: build the examples (cargo test builds them)", bin.display());
    bin
}

fn init_params() -> mcp_sdk::types::InitializeRequestParams {
    serde_json::from_value(json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}
    }))
    .unwrap()
}

#[tokio::test]
async fn a_client_talks_to_a_real_child_server_and_shuts_it_down() {
    let (transport, child) = ChildProcess::spawn(ChildCommand::new(echo_bin()).arg("--stdio")).unwrap();
    let pid = child.id().unwrap();
    let peer = Peer::spawn(transport, Arc::new(Router::new()), PeerConfig::default());
    let init = peer.request::<InitializeRequest>(init_params(), CallOptions::default()).await.unwrap();
    assert_eq!(init.protocol_version, "2025-06-18");
    assert_eq!(init.server_info.name, "echo");
    let tools = peer.request::<ListToolsRequest>(Default::default(), CallOptions::default()).await.unwrap();
    assert_eq!(tools.tools[0].name, "echo");
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = serde_json::from_value(json!({"text": "héllo\nworld"})).unwrap();
    let result = peer.request::<CallToolRequest>(params, CallOptions::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("héllo\nworld"));

    let ended = child.shutdown().await.unwrap();
    assert_eq!(ended.step, ShutdownStep::StdinClosed, "the server exits when its stdin closes");
    assert!(ended.status.success(), "{:?}", ended.status);
    assert!(!PathBuf::from(format!("/proc/{pid}")).exists(), "the child was reaped");
    // The connection notices the end.
    peer.closed().await;
}

#[tokio::test]
async fn a_child_that_ignores_stdin_eof_gets_sigterm() {
    let cmd = ChildCommand::new("sleep").arg("600").grace(Duration::from_millis(200));
    let (_transport, child) = ChildProcess::spawn(cmd).unwrap();
    let pid = child.id().unwrap();
    let ended = child.shutdown().await.unwrap();
    assert_eq!(ended.step, ShutdownStep::Terminated);
    assert!(!ended.status.success());
    assert!(!PathBuf::from(format!("/proc/{pid}")).exists(), "the child was reaped");
}

#[tokio::test]
async fn a_child_that_ignores_stdin_while_a_write_to_it_is_stuck_still_gets_sigterm() {
    use mcp_sdk::jsonrpc::transport::{Transport as _, TransportWrite as _};
    let cmd = ChildCommand::new("sleep").arg("600").grace(Duration::from_millis(200));
    let (transport, child) = ChildProcess::spawn(cmd).unwrap();
    let (_read, mut write) = transport.split();
    // 1 MiB to a child that never reads: the pipe fills, and the write waits (holding stdin).
    let frames = [bytes::Bytes::from(vec![b' '; 1 << 20]).into()];
    let mut stuck = Box::pin(write.write(&frames));
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(stuck.as_mut().poll(cx))).await;
    assert!(first.is_pending(), "the write is stuck on the full pipe");
    let ended = tokio::time::timeout(Duration::from_secs(60), child.shutdown()).await.expect("shutdown ends").unwrap();
    assert_eq!(ended.step, ShutdownStep::Terminated);
    drop(stuck);
}

#[tokio::test]
async fn a_childs_stderr_is_read_whole_whatever_its_bytes() {
    // Not UTF-8, then a line too long to keep whole, then a plain line: every line is read
    // (a reader that stopped would close the pipe under the child).
    let script = r#"printf '\377\376\n' >&2; head -c 100000 /dev/zero | tr '\0' x >&2; printf '\nhi\n' >&2"#;
    let cmd = ChildCommand::new("sh").args(["-c", script]).stderr(StderrMode::Capture);
    let (_transport, mut child) = ChildProcess::spawn(cmd).unwrap();
    let (status, _) = child.wait_with_report().await.unwrap();
    assert!(status.success(), "{status:?}");
    let tail = child.stderr_tail();
    assert_eq!(tail.len(), 3, "{:?}", tail.iter().map(|l| l.len()).collect::<Vec<_>>());
    assert_eq!(tail[0], "\u{FFFD}\u{FFFD}");
    assert_eq!(tail[1], "x".repeat(16 * 1024));
    assert_eq!(tail[2], "hi");
}

#[tokio::test]
async fn a_child_that_ignores_sigterm_gets_sigkill() {
    let cmd = ChildCommand::new("sh").args(["-c", "trap '' TERM; exec sleep 600"]).grace(Duration::from_millis(200));
    let (_transport, child) = ChildProcess::spawn(cmd).unwrap();
    let pid = child.id().unwrap();
    let ended = child.shutdown().await.unwrap();
    assert_eq!(ended.step, ShutdownStep::Killed);
    assert!(!PathBuf::from(format!("/proc/{pid}")).exists(), "the child was reaped");
}

#[tokio::test]
async fn a_child_that_dies_early_is_reported_with_its_status_and_stderr() {
    let cmd = ChildCommand::new("sh").args(["-c", "echo 'fatal: no config' >&2; exit 3"]).stderr(StderrMode::Capture);
    let (transport, mut child) = ChildProcess::spawn(cmd).unwrap();
    let peer = Peer::spawn(transport, Arc::new(Router::new()), PeerConfig::default());
    let err = peer.request::<InitializeRequest>(init_params(), CallOptions::default()).await.unwrap_err();
    assert!(err.to_string().contains("connection closed"), "{err}");
    let (status, report) = child.wait_with_report().await.unwrap();
    assert_eq!(status.code(), Some(3));
    assert!(report.contains("exit status: 3") && report.contains("fatal: no config"), "{report}");
}

#[tokio::test]
async fn spawning_a_missing_program_is_a_clear_error() {
    let err = ChildProcess::spawn(ChildCommand::new("/no/such/program")).unwrap_err();
    assert!(err.to_string().contains("cannot start `/no/such/program`"), "{err}");
}

/// A raw pipe to the echo server: we write bytes, it answers lines.
struct RawServer {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl RawServer {
    fn start(extra: &[&str]) -> RawServer {
        let mut child = tokio::process::Command::new(echo_bin())
            .arg("--stdio")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        RawServer { child, stdin, lines }
    }
    /// Starts the server and performs the handshake.
    async fn ready(extra: &[&str]) -> RawServer {
        let mut server = RawServer::start(extra);
        let init = json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}});
        server.send(format!("{init}\n").as_bytes()).await;
        assert_eq!(server.recv().await["result"]["protocolVersion"], "2025-06-18");
        server.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await;
        server
    }
    async fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).await.unwrap();
        self.stdin.flush().await.unwrap();
    }
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
            .await
            .expect("the server answered")
            .unwrap()
            .expect("the server is alive");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"))
    }
    async fn echo_roundtrip(&mut self, id: i64) {
        let req = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"echo","arguments":{"text":format!("still here {id}")}}});
        self.send(format!("{req}\n").as_bytes()).await;
        let answer = self.recv().await;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], format!("still here {id}"), "{answer}");
    }
}

#[tokio::test]
async fn malformed_input_never_kills_the_server() {
    let mut server = RawServer::ready(&["--max-line", "65536"]).await;
    let cases: Vec<(Vec<u8>, i64)> = vec![
        (b"this is not json\n".to_vec(), -32700),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n".to_vec(), -32700),
        (b"[1,2,3]\n".to_vec(), -32600),
        (
            format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":\"{}\"}}\n", "a".repeat(1 << 20))
                .into_bytes(),
            -32600,
        ),
        (b"\xff\xfe\xfd\n".to_vec(), -32700),
        // Nesting bombs, valid JSON but no message: a deep array (a batch, refused outside
        // 2025-03-26) and a deep object; an unclosed one is malformed JSON.
        (format!("{}{}\n", "[".repeat(30_000), "]".repeat(30_000)).into_bytes(), -32600),
        (format!("{}1{}\n", "{\"a\":".repeat(10_000), "}".repeat(10_000)).into_bytes(), -32600),
        (format!("{}\n", "{\"a\":".repeat(10_000)).into_bytes(), -32700),
        (b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"}\n".to_vec(), -32601),
    ];
    for (i, (bytes, code)) in cases.into_iter().enumerate() {
        server.send(&bytes).await;
        let answer = server.recv().await;
        assert_eq!(answer["error"]["code"], code, "case {i}: {answer}");
        server.echo_roundtrip(100 + i as i64).await;
    }
    // A partial line, completed later, is one message.
    server.send(b"{\"jsonrpc\":\"2.0\",\"id\":\"p\",").await;
    server.send(b"\"method\":\"ping\"}\n").await;
    assert_eq!(server.recv().await, json!({"jsonrpc":"2.0","id":"p","result":{}}));
    server.echo_roundtrip(200).await;
    server.child.kill().await.unwrap();
}

#[tokio::test]
async fn a_flood_beyond_the_concurrency_limit_is_refused_and_the_server_goes_on() {
    let mut server = RawServer::ready(&["--max-concurrent", "4"]).await;
    let mut flood = String::new();
    for id in 0..200 {
        let req =
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":200}}});
        flood.push_str(&format!("{req}\n"));
    }
    server.send(flood.as_bytes()).await;
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..200 {
        let answer = server.recv().await;
        if answer.get("result").is_some() {
            ok += 1;
        } else {
            assert_eq!(answer["error"]["code"], -32603, "{answer}");
            assert!(answer["error"]["message"].as_str().unwrap().contains("limit 4"));
            refused += 1;
        }
    }
    assert!(ok >= 4 && refused > 0, "ok {ok}, refused {refused}");
    server.echo_roundtrip(1000).await;
    server.child.kill().await.unwrap();
}

#[tokio::test]
async fn eof_on_stdin_ends_the_server_cleanly() {
    let mut server = RawServer::ready(&[]).await;
    server.echo_roundtrip(1).await;
    let RawServer { mut child, stdin, mut lines } = server;
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(lines.next_line().await.unwrap().is_none());
}
