//! `Client::close` writes what was sent before it: a `notifications/cancelled` queued by a call
//! dropped just before the close reaches a child server over its stdin pipe (it used to be lost
//! when the child's stdin was closed ahead of the writer's queue).

use std::time::Duration;

use mcp_client::ClientBuilder;
use mcp_transport_stdio::{ChildCommand, StderrMode};
use mcp_types::ProtocolVersion;

/// A server in `sh`: answers `initialize`, answers nothing else, and appends every line it reads
/// to the file `$1`; it exits when its stdin ends.
const SERVER: &str = r#"
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$1"
  case "$line" in
    *'"method":"initialize"'*)
      id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sh","version":"0"}}}\n' "$id"
      ;;
  esac
done
"#;

// A current-thread runtime: the writer task runs only when the test yields, so a close that
// does not wait for it closes stdin with the notification still queued.
#[tokio::test(flavor = "current_thread")]
async fn a_cancellation_sent_right_before_close_reaches_the_child() {
    let log = std::env::temp_dir().join(format!("mcp-client-close-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let command = ChildCommand::new("sh")
        .args(["-c", SERVER, "sh"])
        .arg(&log)
        .stderr(StderrMode::Capture)
        .grace(Duration::from_secs(2));
    let client = ClientBuilder::new("close-test", "0")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .spawn(command)
        .await
        .expect("the sh server answers initialize");
    // The server never answers `ping`: the call is dropped at its timeout, which queues
    // `notifications/cancelled` for it.
    let unanswered = tokio::time::timeout(Duration::from_millis(200), client.ping()).await;
    assert!(unanswered.is_err(), "the sh server answered ping: {unanswered:?}");
    client.close().await.expect("the child exits when its stdin ends");

    let seen = std::fs::read_to_string(&log).expect("the server's log");
    let _ = std::fs::remove_file(&log);
    let lines: Vec<&str> = seen.lines().collect();
    assert!(lines.iter().any(|l| l.contains(r#""method":"ping""#)), "{seen}");
    let cancel = lines.iter().position(|l| l.contains(r#""method":"notifications/cancelled""#));
    let cancel = cancel.unwrap_or_else(|| panic!("the server never got notifications/cancelled:\n{seen}"));
    assert_eq!(cancel, lines.len() - 1, "the cancellation is the last line:\n{seen}");
}
