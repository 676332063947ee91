//! The soak's mixed workload, run by several client tasks at once with our own client: each
//! session (over Streamable HTTP, or a child process over stdio) in one of the five revisions
//! pings, lists tools, calls, calls with progress, cancels a call while it runs, makes a
//! sampling round trip and subscribes to a resource; then half the HTTP sessions are closed
//! with `Client::close` and half dropped (which closes them too, without waiting). Beside
//! them, sessions are abandoned: an `initialize` POSTed and nothing after it, not even DELETE,
//! as a client that dies would; the server's idle expiry must reclaim them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_sdk::client::{CallOptions, Client, ClientBuilder, ClientError};
use mcp_sdk::jsonrpc::CancellationToken;
use mcp_sdk::types::{
    CallToolRequestParams, CreateMessageRequestParams, CreateMessageResult, ErrorObject, ProtocolVersion, Role,
    SamplingContent, TextContent,
};
use serde_json::json;

/// The five revisions, taken in turn.
pub const VERSIONS: [ProtocolVersion; 5] = [
    ProtocolVersion::V2024_11_05,
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2026_07_28,
];

/// The longest one operation may take before it counts as failed.
const OP_TIMEOUT: Duration = Duration::from_secs(30);
/// The error of an operation not answered within [`OP_TIMEOUT`].
const TIMED_OUT: &str = "timed out";
/// How the error of a call whose progress came twice or out of order begins.
const REPEATED: &str = "progress repeated";
/// The progress `test_tool_with_progress` reports, each once, in order.
const PROGRESS: [f64; 3] = [0.0, 50.0, 100.0];

/// Why an operation failed.
#[derive(Debug)]
pub enum Failure {
    /// No answer within [`OP_TIMEOUT`].
    Lost,
    /// The connection or the HTTP exchange broke under it (an instance killed while it ran,
    /// the balancer without a live instance, an expired session): what a kill explains.
    Broken(String),
    /// The server answered, wrongly: a cancelled call answered, an error result, a JSON-RPC
    /// error, progress missing, repeated or out of order, a broken protocol. No kill explains
    /// it.
    Wrong(String),
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::Transport(_) | ClientError::Closed(_) => Failure::Broken(e.to_string()),
            ClientError::Timeout { .. } => Failure::Lost,
            e => Failure::Wrong(e.to_string()),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Lost => f.write_str(TIMED_OUT),
            Failure::Broken(e) => f.write_str(e),
            Failure::Wrong(e) => write!(f, "wrong: {e}"),
        }
    }
}

/// What the workload did, shared by its tasks.
#[derive(Default)]
pub struct Counts {
    pub sessions: AtomicU64,
    pub abandoned: AtomicU64,
    pub calls: AtomicU64,
    pub progress: AtomicU64,
    pub cancelled: AtomicU64,
    pub sampling: AtomicU64,
    pub subscriptions: AtomicU64,
    /// Operations answered as expected.
    pub answered: AtomicU64,
    /// Operations that failed (each kind below included).
    pub failures: AtomicU64,
    /// Failures by no answer within [`OP_TIMEOUT`]: lost.
    pub timeouts: AtomicU64,
    /// Progress notifications of one call that came twice or out of order.
    pub duplicates: AtomicU64,
    /// Failures by a wrong answer ([`Failure::Wrong`], the calls with progress repeated left
    /// out): no kill explains them.
    pub wrong: AtomicU64,
    /// The first failures, for the report.
    pub first_failures: Mutex<Vec<String>>,
    /// The failures by operation and error (its first 60 characters), for the report.
    pub failure_kinds: Mutex<std::collections::BTreeMap<String, u64>>,
}

impl Counts {
    fn fail(&self, what: &str, version: ProtocolVersion, failure: Failure) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        match &failure {
            Failure::Lost => self.timeouts.fetch_add(1, Ordering::Relaxed),
            Failure::Wrong(e) if e.starts_with(REPEATED) => self.duplicates.fetch_add(1, Ordering::Relaxed),
            Failure::Wrong(_) => self.wrong.fetch_add(1, Ordering::Relaxed),
            Failure::Broken(_) => 0,
        };
        let error = failure.to_string();
        let kind: String = format!("{what}: {error}").chars().take(60).collect();
        *self.failure_kinds.lock().unwrap().entry(kind).or_default() += 1;
        let mut first = self.first_failures.lock().unwrap();
        if first.len() < 10 {
            first.push(format!("{what} ({version}): {error}"));
        }
    }

    pub fn summary(&self) -> String {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        format!(
            "{} sessions ({} abandoned), {} calls, {} progress reports, {} cancellations, {} sampling round trips, \
             {} subscriptions; {} operations answered, {} failures ({} not answered within {} s, {} with progress \
             repeated, {} answered wrongly)",
            n(&self.sessions),
            n(&self.abandoned),
            n(&self.calls),
            n(&self.progress),
            n(&self.cancelled),
            n(&self.sampling),
            n(&self.subscriptions),
            n(&self.answered),
            n(&self.failures),
            n(&self.timeouts),
            OP_TIMEOUT.as_secs(),
            n(&self.duplicates),
            n(&self.wrong)
        )
    }
}

/// A client that answers sampling requests.
pub fn builder(version: ProtocolVersion) -> ClientBuilder {
    ClientBuilder::new("mcp-soak", "1").protocol_version(version).on_sampling(
        |_params: CreateMessageRequestParams| async {
            let text = TextContent::new("soak answer");
            Ok::<_, ErrorObject>(CreateMessageResult::new(Role::Assistant, SamplingContent::Text(text), "soak-model"))
        },
    )
}

/// HTTP sessions, one after another until `until`: connect in the next revision, run the
/// operations, then close (even turns) or abandon (odd turns).
pub async fn http_task(url: String, first: usize, until: Instant, counts: Arc<Counts>) {
    let mut turn = first;
    while Instant::now() < until {
        let version = VERSIONS[turn % VERSIONS.len()];
        match tokio::time::timeout(OP_TIMEOUT, builder(version).connect_http(&url)).await {
            Ok(Ok(client)) => {
                counts.sessions.fetch_add(1, Ordering::Relaxed);
                session(&client, version, &counts, 3).await;
                if turn.is_multiple_of(2) {
                    if let Err(e) = client.close().await {
                        counts.fail("close", version, e.into());
                    }
                } else {
                    drop(client);
                }
            }
            Ok(Err(e)) => counts.fail("connect", version, e.into()),
            Err(_) => counts.fail("connect", version, Failure::Lost),
        }
        let version = VERSIONS[turn % (VERSIONS.len() - 1)];
        match tokio::time::timeout(OP_TIMEOUT, abandon(&url, version)).await {
            Ok(Ok(())) => {
                counts.abandoned.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Err(e)) => counts.fail("abandoned initialize", version, Failure::Broken(e)),
            Err(_) => counts.fail("abandoned initialize", version, Failure::Lost),
        }
        turn += 1;
    }
}

/// One long stdio session until `until`.
pub async fn stdio_task(client: Client, until: Instant, counts: Arc<Counts>) {
    let version = client.protocol_version();
    counts.sessions.fetch_add(1, Ordering::Relaxed);
    while Instant::now() < until {
        session(&client, version, &counts, 1).await;
    }
    if let Err(e) = client.close().await {
        counts.fail("close", version, e.into());
    }
}

/// The operations of a session, `rounds` times.
pub async fn session(client: &Client, version: ProtocolVersion, counts: &Counts, rounds: usize) {
    let timed = |what: &'static str, r: Result<Result<(), Failure>, tokio::time::error::Elapsed>| match r {
        Ok(Ok(())) => {
            counts.answered.fetch_add(1, Ordering::Relaxed);
            true
        }
        Ok(Err(e)) => {
            counts.fail(what, version, e);
            false
        }
        Err(_) => {
            counts.fail(what, version, Failure::Lost);
            false
        }
    };
    for _ in 0..rounds {
        let ok =
            timed("ping", tokio::time::timeout(OP_TIMEOUT, async { client.ping().await.map_err(Failure::from) }).await)
                && timed(
                    "tools/list",
                    tokio::time::timeout(OP_TIMEOUT, async {
                        client.list_all_tools().await.map(drop).map_err(Failure::from)
                    })
                    .await,
                )
                && timed(
                    "call",
                    tokio::time::timeout(OP_TIMEOUT, call(client, "test_simple_text", json!({}), counts)).await,
                )
                && timed("progress", tokio::time::timeout(OP_TIMEOUT, progress(client, counts)).await)
                && timed("cancel", tokio::time::timeout(OP_TIMEOUT, cancel(client, counts)).await)
                && timed("sampling", tokio::time::timeout(OP_TIMEOUT, sampling(client, counts)).await)
                && timed("subscribe", tokio::time::timeout(OP_TIMEOUT, subscribe(client, counts)).await);
        if !ok {
            return;
        }
    }
}

async fn call(client: &Client, name: &str, args: serde_json::Value, counts: &Counts) -> Result<(), Failure> {
    let result = client.call_tool(name, args).await?;
    counts.calls.fetch_add(1, Ordering::Relaxed);
    if result.is_error() {
        return Err(Failure::Wrong(format!("{name} answered an error result: {result:?}")));
    }
    Ok(())
}

/// A call with progress: its notifications must come once each, in order, all of them (a
/// stream resumed on another instance replays none twice, and loses none).
async fn progress(client: &Client, counts: &Counts) -> Result<(), Failure> {
    let reports: Arc<Mutex<Vec<f64>>> = Arc::default();
    let seen = reports.clone();
    let options = CallOptions::default().on_progress(move |p| {
        seen.lock().unwrap().push(p.progress);
    });
    let mut params = CallToolRequestParams::new("test_tool_with_progress");
    params.arguments = Some(Default::default());
    client.call_tool_with(params, options).await?;
    counts.calls.fetch_add(1, Ordering::Relaxed);
    let reports = reports.lock().unwrap().clone();
    counts.progress.fetch_add(reports.len() as u64, Ordering::Relaxed);
    if reports.windows(2).any(|w| w[1] <= w[0]) {
        return Err(Failure::Wrong(format!("{REPEATED} or out of order: {reports:?}")));
    }
    if reports != PROGRESS {
        return Err(Failure::Wrong(format!("progress missing: {reports:?} of {PROGRESS:?}")));
    }
    Ok(())
}

/// A call cancelled at its first progress report: the handler is running. It must end
/// cancelled: the client's engine ends a call whose token fired as cancelled even when the
/// answer came meanwhile (an answer is a wrong outcome, not a race to forgive).
async fn cancel(client: &Client, counts: &Counts) -> Result<(), Failure> {
    let token = CancellationToken::new();
    let trigger = token.clone();
    let options = CallOptions::default().cancel_on(token).on_progress(move |_| trigger.cancel());
    let mut params = CallToolRequestParams::new("test_tool_with_progress");
    params.arguments = Some(Default::default());
    match client.call_tool_with(params, options).await {
        Err(ClientError::Cancelled) => {
            counts.cancelled.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => Err(e.into()),
        Ok(_) => Err(Failure::Wrong("a cancelled call answered".into())),
    }
}

async fn sampling(client: &Client, counts: &Counts) -> Result<(), Failure> {
    call(client, "test_sampling", json!({"prompt": "soak"}), counts).await?;
    counts.sampling.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

async fn subscribe(client: &Client, counts: &Counts) -> Result<(), Failure> {
    let can = client.server_capabilities().resources.as_ref().and_then(|r| r.subscribe).unwrap_or(false);
    if !can {
        return Ok(());
    }
    client.subscribe("test://watched-resource").await?;
    client.unsubscribe("test://watched-resource").await?;
    counts.subscriptions.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// A session opened and abandoned: `initialize` POSTed over a connection of its own, its
/// answer read, the connection closed; no `notifications/initialized`, no DELETE.
async fn abandon(url: &str, version: ProtocolVersion) -> Result<(), String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").ok_or("not an http URL")?;
    let (host, path) = rest.split_once('/').ok_or("no path")?;
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": version.as_str(), "capabilities": {}, "clientInfo": {"name": "mcp-soak-abandoned", "version": "1"}},
    })
    .to_string();
    let request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(host).await.map_err(|e| e.to_string())?;
    stream.write_all(request.as_bytes()).await.map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.map_err(|e| e.to_string())?;
    let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
    if !answer.starts_with("http/1.1 200") || !answer.contains("mcp-session-id:") {
        return Err(format!("initialize answered {}", answer.lines().next().unwrap_or("nothing")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answered_cancellation_or_a_server_error_is_wrong_a_broken_connection_clean() {
        let counts = Counts::default();
        let version = ProtocolVersion::V2025_11_25;
        counts.fail("cancel", version, Failure::Wrong("a cancelled call answered".into()));
        counts.fail("call", version, ClientError::Remote(ErrorObject::internal_error("no")).into());
        counts.fail("call", version, ClientError::Closed(None).into());
        counts.fail("progress", version, Failure::Wrong(format!("{REPEATED} or out of order: [0.0]")));
        counts.fail("ping", version, Failure::Lost);
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        assert_eq!(n(&counts.failures), 5);
        assert_eq!((n(&counts.wrong), n(&counts.duplicates), n(&counts.timeouts)), (2, 1, 1));
        let kinds = counts.failure_kinds.lock().unwrap();
        assert!(kinds.contains_key("cancel: wrong: a cancelled call answered"), "{kinds:?}");
    }
}
