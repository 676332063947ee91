//! Sessions created and deleted in bulk over real sockets leave nothing held (issue 22): every
//! session's routing and events are freed, and a second flood reuses the memory of the first
//! instead of growing. (A process of its own: it reads its resident memory.)
#![cfg(feature = "http")]

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use mcp_jsonrpc::{Dispatcher, FrameSink};
use mcp_server::Server;
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig, InMemoryEventStore, SessionFactory};
use mcp_types::ProtocolVersion;
use serde_json::json;

/// The server, noting each session's routing (the sink its peer sends to) as it starts.
struct Watched {
    server: Server,
    sinks: Mutex<Vec<Weak<dyn FrameSink>>>,
}

impl Watched {
    /// How many of the sessions started are still held by anything.
    fn still_held(&self) -> usize {
        self.sinks.lock().unwrap().iter().filter(|sink| sink.strong_count() > 0).count()
    }
}

impl SessionFactory for Watched {
    fn connect(&self, sink: Arc<dyn FrameSink>) -> Dispatcher {
        self.sinks.lock().unwrap().push(Arc::downgrade(&sink));
        SessionFactory::connect(&self.server, sink)
    }
    fn connect_stateless(&self, sink: Arc<dyn FrameSink>, version: ProtocolVersion) -> Dispatcher {
        SessionFactory::connect_stateless(&self.server, sink, version)
    }
}

/// Resident memory, in KiB (Linux), or 0.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmRSS:"));
    line.and_then(|l| l.split_whitespace().nth(1)).and_then(|kib| kib.parse().ok()).unwrap_or(0)
}

/// Opens `n` Streamable HTTP sessions (four clients at once) and `n / 10` HTTP+SSE ones, then
/// deletes them, or closes their streams.
async fn flood(http: &reqwest::Client, base: &str, n: usize) {
    let mut workers = Vec::new();
    for _ in 0..4 {
        let (http, url) = (http.clone(), format!("{base}/mcp"));
        workers.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for _ in 0..n / 4 {
                let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "m", "version": "0"}}});
                let post = http.post(&url).header("accept", "application/json, text/event-stream");
                let answer =
                    post.header("content-type", "application/json").body(init.to_string()).send().await.unwrap();
                assert_eq!(answer.status(), 200);
                ids.push(answer.headers()["mcp-session-id"].to_str().unwrap().to_owned());
                answer.bytes().await.unwrap();
            }
            ids
        }));
    }
    let mut streams = Vec::new();
    for _ in 0..n / 10 {
        let get = http.get(format!("{base}/sse")).header("accept", "text/event-stream");
        let mut stream = get.send().await.unwrap();
        assert_eq!(stream.status(), 200);
        stream.chunk().await.unwrap().expect("the endpoint event");
        streams.push(stream);
    }
    for worker in workers {
        for id in worker.await.unwrap() {
            let delete = http.delete(format!("{base}/mcp")).header("mcp-session-id", id);
            assert_eq!(delete.send().await.unwrap().status(), 200);
        }
    }
    drop(streams);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_created_and_deleted_in_bulk_leave_nothing_held() {
    let store = Arc::new(InMemoryEventStore::default());
    let server = Server::builder("memory", "1.0.0").build().unwrap();
    let watched = Arc::new(Watched { server, sinks: Mutex::new(Vec::new()) });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    // A short keep-alive: a closed HTTP+SSE stream is noticed at the next comment written.
    let config = HttpServerConfig::default()
        .max_sessions_per_client(usize::MAX)
        .keep_alive(Some(Duration::from_millis(50)))
        .event_store(Some(store.clone()));
    tokio::spawn(server::serve_listener(watched.clone(), config, listener));
    let http = reqwest::Client::new();

    let n = 3000;
    let mut grew = Vec::new();
    for round in 0..2 {
        let before = rss_kib();
        flood(&http, &base, n).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let mut held = watched.still_held();
        while held > 0 {
            assert!(tokio::time::Instant::now() < deadline, "round {round}: {held} sessions still held");
            tokio::time::sleep(Duration::from_millis(50)).await;
            held = watched.still_held();
        }
        assert_eq!(watched.sinks.lock().unwrap().len(), n + n / 10, "round {round}: sessions started");
        // Forgotten (each `Weak` keeps its allocation).
        watched.sinks.lock().unwrap().clear();
        assert!(store.is_empty(), "round {round}: the events of ended sessions are kept");
        grew.push(rss_kib().saturating_sub(before));
    }
    // The allocator keeps what the first flood freed and gives it to the second: the second
    // grows resident memory by much less (sessions still held would grow it as much).
    if cfg!(target_os = "linux") {
        assert!(grew[1] < grew[0] / 2, "resident memory grew by {} KiB, then by {} KiB", grew[0], grew[1]);
    }
}
