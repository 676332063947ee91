//! The `echo` server over HTTP, as the benchmarks run it: with sessions and SSE responses, and
//! stateless with JSON responses; our client talks to both.

use std::path::PathBuf;

use mcp_sdk::client::ClientBuilder;
use serde_json::json;
use tokio::io::AsyncBufReadExt as _;

fn echo_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|d| d.parent()).unwrap().join("examples").join("echo");
    assert!(bin.exists(), "{} is missing: build the examples (cargo test builds them)", bin.display());
    bin
}

/// Starts `echo --http 127.0.0.1:0 [extra]` and returns it with its endpoint URL.
async fn start(extra: &[&str]) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(echo_bin())
        .args(["--http", "127.0.0.1:0"])
        .args(extra)
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next_line().await.unwrap().expect("echo says where it listens");
        if let Some(url) = line.strip_prefix("listening on ") {
            break url.to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

#[tokio::test]
async fn echo_over_http_with_sessions_and_stateless() {
    for (extra, pinned) in [(&[][..], None), (&["--stateless"][..], Some(mcp_sdk::types::ProtocolVersion::V2025_06_18))]
    {
        let (_child, url) = start(extra).await;
        // Both eras: the default negotiates 2026-07-28; a pinned session revision uses
        // initialize (stateless mode then serves each POST on its own).
        let mut builders = vec![ClientBuilder::new("bench", "1")];
        if let Some(version) = pinned {
            builders.push(ClientBuilder::new("bench", "1").protocol_version(version));
        } else {
            builders.push(ClientBuilder::new("bench", "1").session_revisions_only());
        }
        for builder in builders {
            let client = builder.connect_http(&url).await.unwrap();
            let result = client.call_tool("echo", json!({"text": "héllo"})).await.unwrap();
            assert_eq!(result.content[0].as_text(), Some("héllo"), "{extra:?}");
            client.close().await.unwrap();
        }
    }
}
