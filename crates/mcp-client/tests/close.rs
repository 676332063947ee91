//! `Client::close` writes what was sent before it: a `notifications/cancelled` queued by a call
//! dropped just before the close reaches a child server over its stdin pipe (it used to be lost
//! when the child's stdin was closed ahead of the writer's queue); a child that stopped reading
//! gets SIGTERM after its grace, however long the connection's own grace.

use std::time::Duration;

use mcp_client::{Client, ClientBuilder};
use mcp_jsonrpc::PeerConfig;
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

/// A fresh log file for a server script (its `$1`).
fn log_file(name: &str) -> std::path::PathBuf {
    let log = std::env::temp_dir().join(format!("mcp-client-close-{name}-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    log
}

/// Our client of the server `script` (in `sh`, told `log`), with the child's `grace` and the
/// connection's `config`.
async fn spawn(script: &str, log: &std::path::Path, grace: Duration, config: PeerConfig) -> Client {
    let command = ChildCommand::new("sh").args(["-c", script, "sh"]).arg(log).stderr(StderrMode::Capture).grace(grace);
    ClientBuilder::new("close-test", "0")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .peer_config(config)
        .spawn(command)
        .await
        .expect("the sh server answers initialize")
}

// A current-thread runtime: the writer task runs only when the test yields, so a close that
// does not wait for it closes stdin with the notification still queued.
#[tokio::test(flavor = "current_thread")]
async fn a_cancellation_sent_right_before_close_reaches_the_child() {
    let log = log_file("cancel");
    let client = spawn(SERVER, &log, Duration::from_secs(2), PeerConfig::default()).await;
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

/// A server in `sh` that answers `initialize` and then never reads its stdin again; SIGTERM
/// makes it write `terminated` to the file `$1` and exit.
const DEAF_SERVER: &str = r#"
trap 'echo terminated >> "$1"; kill $! 2>/dev/null; exit 0' TERM
IFS= read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sh","version":"0"}}}\n' "$id"
sleep 600 &
wait
"#;

/// A child whose stdin pipe is full (it stopped reading) gets SIGTERM once its grace is over,
/// not once the connection's far longer `shutdown_grace` is over too: with a grace of 1 s and
/// a `shutdown_grace` of 10 minutes, `close` returns within the minute (it used to wait the
/// 10 minutes for the write, then the grace again to close stdin, before the SIGTERM).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_stops_reading_is_terminated_after_its_grace() {
    let log = log_file("deaf");
    let config = PeerConfig { shutdown_grace: Duration::from_secs(600), ..Default::default() };
    let client = spawn(DEAF_SERVER, &log, Duration::from_secs(1), config).await;
    // 4 MiB queued: far more than a pipe holds.
    let big = serde_json::json!({"data": "x".repeat(4 << 20)});
    client.notify_raw("notifications/big", Some(big)).await.unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(60), client.close()).await;
    closed.expect("close waited for the connection's shutdown_grace").expect("the child was stopped");
    let seen = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    assert_eq!(seen, "terminated\n");
}
