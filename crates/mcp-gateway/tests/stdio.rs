//! A mounted server run as a child process (`Source::stdio`, this crate's `stdio_child`
//! example): its tools listed and called through the gateway, in a session and at
//! 2026-07-28, where the requests one after the other share one child.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use mcp_client::Client;
use mcp_gateway::{Gateway, Source};
use mcp_transport_stdio::ChildCommand;
use mcp_types::ProtocolVersion;
use serde_json::json;

/// The `stdio_child` example, built once for the tests (with the features
/// `cargo nextest run -p mcp-gateway --all-features` builds them with, so that neither build
/// undoes the other's).
fn child() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
            let mut command = Command::new(cargo);
            // Without what cargo set for this test (`CARGO_PKG_NAME`, ...): build scripts that
            // read such variables would otherwise run again, in both builds, each time.
            for (key, _) in std::env::vars_os() {
                let key = key.to_string_lossy();
                if key.starts_with("CARGO_") && !matches!(&*key, "CARGO_HOME" | "CARGO_TARGET_DIR") {
                    command.env_remove(&*key);
                }
            }
            let status = command
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .args(["build", "-p", "mcp-gateway", "--all-features", "--example", "stdio_child"])
                .status()
                .expect("running cargo build for the example");
            assert!(status.success(), "cargo build -p mcp-gateway --all-features --example stdio_child failed");
            // target/debug/deps/<this test> -> target/debug/examples
            let exe = std::env::current_exe().unwrap();
            let bin = exe.parent().and_then(|deps| deps.parent()).unwrap().join("examples").join("stdio_child");
            assert!(bin.exists(), "{} is missing", bin.display());
            bin
        })
        .clone()
}

/// A gateway with the child mounted as `child`, and a client of it at `version`, over the
/// in-memory transport.
async fn through_a_gateway(version: ProtocolVersion) -> Client {
    let source = Source::stdio(ChildCommand::new(child()));
    let gateway = Gateway::builder("gateway", "1.0").mount("child", source).build().await.unwrap();
    let (ours, theirs) = mcp_jsonrpc::transport::memory(64);
    gateway.connect(theirs);
    mcp_client::ClientBuilder::new("test", "1").protocol_version(version).connect(ours).await.unwrap()
}

/// The text of a call's result.
async fn call(client: &Client, tool: &str, arguments: serde_json::Value) -> String {
    let result = client.call_tool(tool, arguments).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result.content[0].as_text().unwrap().to_owned()
}

/// Listed under the prefix and called, in a session and at 2026-07-28; the tools run in the
/// child (not this process), one child for the requests one after the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_process_is_listed_and_called_through_the_gateway() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = through_a_gateway(version).await;
        let mut names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        names.sort();
        assert_eq!(names, ["child_add", "child_pid"], "{version}");
        assert_eq!(call(&client, "child_add", json!({"a": 2, "b": 3})).await, "5", "{version}");
        let pid = call(&client, "child_pid", json!({})).await;
        assert_ne!(pid, std::process::id().to_string(), "{version}: not a child");
        assert_eq!(call(&client, "child_pid", json!({})).await, pid, "{version}: another child");
        client.close().await.unwrap();
    }
}
