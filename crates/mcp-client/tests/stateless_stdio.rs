//! Era negotiation with a child server over stdio: a server of an earlier revision that exits
//! on the `server/discover` probe (as some do on any request before `initialize`) is started
//! once more and spoken to with `initialize`.

#![cfg(unix)]

use mcp_client::ClientBuilder;
use mcp_transport_stdio::ChildCommand;
use mcp_types::ProtocolVersion;

/// A shell "server": exits on `server/discover`; answers `initialize` (id 0: the first request
/// of a new connection) and then reads until its stdin closes.
const SCRIPT: &str = r#"
read -r line
case "$line" in
  *server/discover*) exit 0 ;;
esac
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}'
cat > /dev/null
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_on_the_probe_is_started_again_for_initialize() {
    let client = ClientBuilder::new("cli", "1").spawn(ChildCommand::new("sh").args(["-c", SCRIPT])).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_06_18);
    assert_eq!(client.server_info().name, "sh");
    client.close().await.unwrap();

    // Pinned to 2026-07-28, the same server is an error.
    let pinned = ClientBuilder::new("cli", "1")
        .protocol_version(ProtocolVersion::V2026_07_28)
        .spawn(ChildCommand::new("sh").args(["-c", SCRIPT]))
        .await;
    assert!(pinned.is_err());
}
