//! The stdio transport over real OS pipes, both eras:
//!
//! - one `stdio_server` process per session revision, each also answering a 2026-07-28 request
//!   on the same pipe after its session started: every revision served, and both eras side by
//!   side on one connection;
//! - one running `Server` (one registry) serving five pipe connections at once, one client of
//!   each revision, every answer in the revision of its client;
//! - a 2026-07-28 `tools/call` cancelled by `notifications/cancelled`.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use mcp_sdk::jsonrpc::Peer;
use mcp_sdk::server::{Context, Server, ToolDef, ToolError};
use mcp_sdk::transport::stdio::{DEFAULT_MAX_LINE, StreamTransport};
use mcp_sdk::types::CallToolResult;
use mcp_test_support::validate;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::net::unix::pipe;
use tokio::sync::Notify;

fn server_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|d| d.parent()).unwrap().join("examples").join("stdio_server");
    assert!(bin.exists(), "{} is missing: build the examples (cargo test builds them)", bin.display());
    bin
}

struct Pipe {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Pipe {
    fn spawn() -> Pipe {
        let mut child = tokio::process::Command::new(server_bin())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Pipe { child, stdin, lines }
    }
    async fn send(&mut self, v: Value) {
        self.stdin.write_all(format!("{v}\n").as_bytes()).await.unwrap();
    }
    /// The response to `id` (notifications before it are skipped).
    async fn answer(&mut self, id: i64) -> Value {
        loop {
            let line = self.lines.next_line().await.unwrap().expect("the server answers");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

#[tokio::test]
async fn every_revision_on_stdio_and_both_eras_on_one_pipe() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut p = Pipe::spawn();
        p.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
            .await;
        assert_eq!(p.answer(1).await["result"]["protocolVersion"], version);
        p.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        p.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
        let old = p.answer(2).await;
        assert!(old["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{old}");
        assert!(old["result"].get("resultType").is_none(), "{version} has no resultType");
        // The same pipe, a 2026-07-28 request.
        p.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "add", "arguments": {"a": 1, "b": 2},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}}))
            .await;
        let new = p.answer(3).await;
        assert_eq!(new["result"]["resultType"], "complete", "{new}");
        assert_eq!(new["result"]["structuredContent"]["result"], 3.0);
        assert_eq!(new["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "showcase");
        // And the session goes on.
        p.send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"})).await;
        assert_eq!(p.answer(4).await["result"], json!({}));
        drop(p.stdin);
        assert!(p.child.wait().await.unwrap().success());
    }
}

/// A client's end of a connection made of two OS pipes (the server reads one and writes the
/// other, as it would its stdin and stdout), spoken to line by line.
struct PipeClient {
    write: pipe::Sender,
    lines: Lines<BufReader<pipe::Receiver>>,
    /// Responses read while waiting for another (requests sent together may be answered in
    /// any order).
    early: Vec<Value>,
    /// The server's handle of the connection.
    _peer: Peer,
}

impl PipeClient {
    fn connect(server: &Server) -> PipeClient {
        let (write, server_reads) = pipe::pipe().unwrap();
        let (server_writes, read) = pipe::pipe().unwrap();
        let peer = server.connect(StreamTransport::new(server_reads, server_writes, DEFAULT_MAX_LINE));
        PipeClient { write, lines: BufReader::new(read).lines(), early: Vec::new(), _peer: peer }
    }
    async fn send(&mut self, v: Value) {
        self.write.write_all(format!("{v}\n").as_bytes()).await.unwrap();
    }
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
            .await
            .expect("an answer within 30 s")
            .unwrap()
            .expect("the server answers");
        serde_json::from_str(&line).unwrap()
    }
    /// The response to `id` (notifications are skipped, other responses kept for later;
    /// requests from the server may not come).
    async fn answer(&mut self, id: i64) -> Value {
        if let Some(i) = self.early.iter().position(|v| v["id"] == id) {
            return self.early.remove(i);
        }
        loop {
            let v = self.next().await;
            if v["id"] == id {
                return v;
            }
            match v["method"].as_str() {
                Some(m) => assert!(m.starts_with("notifications/"), "{v}"),
                None => self.early.push(v),
            }
        }
    }
}

const SESSION_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

fn stateless_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "stateless", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_running_server_answers_clients_of_all_five_revisions_at_once() {
    let server = mcp_examples::showcase::server().unwrap();
    let mut sessions: Vec<(&str, PipeClient)> =
        SESSION_REVISIONS.iter().map(|v| (*v, PipeClient::connect(&server))).collect();
    let mut stateless = PipeClient::connect(&server);

    // Every client opens before any answer is read: five live connections at once.
    for (version, c) in &mut sessions {
        c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
            .await;
    }
    stateless
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": stateless_meta()}}))
        .await;
    for (version, c) in &mut sessions {
        let init = c.answer(1).await;
        assert_eq!(init["result"]["protocolVersion"], *version, "{init}");
        validate(version, "InitializeResult", &init["result"]);
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    }
    let discover = stateless.answer(1).await;
    validate("2026-07-28", "DiscoverResult", &discover["result"]);
    assert_eq!(discover["result"]["supportedVersions"][0], "2026-07-28");

    // The same two requests on every connection, all sent before any answer is read.
    for (_, c) in &mut sessions {
        c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
        c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}))
            .await;
    }
    stateless
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": stateless_meta()}}))
        .await;
    stateless
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": stateless_meta()}}))
        .await;
    let mut answers = Vec::new();
    for (version, c) in &mut sessions {
        answers.push((*version, c.answer(2).await["result"].clone(), c.answer(3).await["result"].clone()));
    }
    answers.push((
        "2026-07-28",
        stateless.answer(2).await["result"].clone(),
        stateless.answer(3).await["result"].clone(),
    ));
    for (version, list, call) in &answers {
        validate(version, "ListToolsResult", list);
        validate(version, "CallToolResult", call);
        let add = list["tools"].as_array().unwrap().iter().find(|t| t["name"] == "add").unwrap();
        let stateless = *version == "2026-07-28";
        // Each answer has what its revision has, and nothing newer.
        assert_eq!(list.get("resultType").is_some(), stateless, "{version}: {list}");
        assert_eq!(call.get("resultType").is_some(), stateless, "{version}: {call}");
        assert_eq!(list.get("ttlMs").is_some(), stateless, "{version}: {list}");
        assert_eq!(
            call["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].as_str(),
            stateless.then_some("showcase"),
            "{version}: {call}"
        );
        assert_eq!(add.get("annotations").is_some(), *version >= "2025-03-26", "{version}: {add}");
        assert_eq!(add.get("outputSchema").is_some(), *version >= "2025-06-18", "{version}: {add}");
        assert_eq!(call.get("structuredContent").is_some(), *version >= "2025-06-18", "{version}: {call}");
        assert_eq!(call["content"][0]["text"], r#"{"result":3.0}"#, "{version}: {call}");
    }
    // The sessions go on, and a session revision's request is still refused without a
    // session on the 2026-07-28 connection.
    for (_, c) in &mut sessions {
        c.send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"})).await;
        assert_eq!(c.answer(4).await["result"], json!({}));
    }
    stateless.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})).await;
    assert_eq!(stateless.answer(4).await["error"]["code"], -32600, "no session on this connection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_tools_call_is_cancelled_by_notifications_cancelled() {
    let started = Arc::new(Notify::new());
    let cancelled = Arc::new(Notify::new());
    let (s, c) = (started.clone(), cancelled.clone());
    let hang = ToolDef::new("hang", json!({"type": "object"}), move |_args, ctx: Context| {
        let (started, cancelled) = (s.clone(), c.clone());
        async move {
            // A cancelled handler's future is dropped (and its token fires): the guard tells.
            struct Signal(Arc<Notify>);
            impl Drop for Signal {
                fn drop(&mut self) {
                    self.0.notify_one();
                }
            }
            let _signal = Signal(cancelled);
            started.notify_one();
            ctx.cancellation().cancelled().await;
            Ok::<_, ToolError>(CallToolResult::success(vec![]))
        }
    })
    .unwrap();
    let server = Server::builder("cancel", "1").tool(hang).build().unwrap();
    let mut c = PipeClient::connect(&server);
    c.send(
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "hang", "_meta": stateless_meta()}}),
    )
    .await;
    tokio::time::timeout(Duration::from_secs(30), started.notified()).await.expect("the handler started");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "no"}}))
        .await;
    tokio::time::timeout(Duration::from_secs(30), cancelled.notified()).await.expect("the handler was cancelled");
    // No answer to the cancelled request: the next message answers the next request.
    c.send(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": stateless_meta()}})).await;
    let next = c.next().await;
    assert_eq!(next["id"], 8, "{next}");
    assert_eq!(next["result"]["tools"][0]["name"], "hang");
}
