//! One `stdio_server` process per session revision, over real pipes, each also answering a
//! 2026-07-28 request on the same pipe after its session started: every revision served, and
//! both eras side by side on one connection.

use std::path::PathBuf;
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

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
