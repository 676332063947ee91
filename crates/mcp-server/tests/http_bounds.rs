//! The HTTP server's bounds, tried over real sockets as a hostile client would (issue 22):
//! each transport's endpoints serve only their own sessions, the request head's bound is
//! exact, and live sessions are bounded per server and per client address (503 with
//! `Retry-After` at the bound, room again once one ends or expires).
#![cfg(feature = "http")]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::{Server, ToolDef};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// A served endpoint whose server has an `echo` tool.
struct Endpoint {
    base: String,
    http: reqwest::Client,
}

async fn start(config: HttpServerConfig) -> Endpoint {
    let echo = ToolDef::new("echo", json!({"type": "object"}), |args, _| async move {
        let text = args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
    .unwrap();
    let server = Server::builder("bounds", "1.0.0").tools([echo]).build().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    tokio::spawn(server::serve_listener(Arc::new(server), config, listener));
    Endpoint { base, http: client_from(Ipv4Addr::LOCALHOST) }
}

/// An HTTP client whose connections come from `address` (any of 127.0.0.0/8 on Linux).
fn client_from(address: Ipv4Addr) -> reqwest::Client {
    reqwest::Client::builder().local_address(IpAddr::V4(address)).build().unwrap()
}

fn initialize_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
}

impl Endpoint {
    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }
    fn authority(&self) -> &str {
        self.base.trim_start_matches("http://")
    }
    /// POSTs an initialize from `http`: the answer, its body read.
    async fn try_initialize(&self, http: &reqwest::Client) -> (reqwest::StatusCode, reqwest::header::HeaderMap) {
        let post = http
            .post(self.url())
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json")
            .body(initialize_body().to_string());
        let response = post.send().await.unwrap();
        let (status, headers) = (response.status(), response.headers().clone());
        response.bytes().await.unwrap();
        (status, headers)
    }
    /// A new Streamable HTTP session of a client at `http`: its id.
    async fn initialize(&self, http: &reqwest::Client) -> String {
        let (status, headers) = self.try_initialize(http).await;
        assert_eq!(status, 200);
        headers["mcp-session-id"].to_str().unwrap().to_owned()
    }
    async fn delete(&self, session: &str) -> reqwest::StatusCode {
        self.http.delete(self.url()).header("mcp-session-id", session).send().await.unwrap().status()
    }
    /// GET `/sse` from `http`.
    async fn open_sse(&self, http: &reqwest::Client) -> reqwest::Response {
        http.get(format!("{}/sse", self.base)).header("accept", "text/event-stream").send().await.unwrap()
    }
}

/// An HTTP+SSE session: its stream, and where it POSTs.
struct HttpSse {
    stream: reqwest::Response,
    buf: String,
    messages: String,
}

impl HttpSse {
    async fn open(endpoint: &Endpoint) -> HttpSse {
        let stream = endpoint.open_sse(&endpoint.http).await;
        assert_eq!(stream.status(), 200);
        let mut sse = HttpSse { stream, buf: String::new(), messages: String::new() };
        let endpoint_event = sse.next_data().await;
        sse.messages = format!("{}{endpoint_event}", endpoint.base);
        sse
    }
    /// The session id, from the `endpoint` event.
    fn session_id(&self) -> &str {
        self.messages.split_once("sessionId=").unwrap().1
    }
    /// The data of the next event.
    async fn next_data(&mut self) -> String {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let data: String = block.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
                if !data.is_empty() {
                    return data;
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.stream.chunk())
                .await
                .expect("an event in time")
                .unwrap()
                .expect("the stream goes on");
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}

#[tokio::test]
async fn a_session_is_served_only_through_its_own_transport() {
    let endpoint = start(HttpServerConfig::default()).await;
    let streamable = endpoint.initialize(&endpoint.http).await;
    let mut legacy = HttpSse::open(&endpoint).await;
    let legacy_id = legacy.session_id().to_owned();
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});

    // The legacy session's id at the MCP endpoint: 404 at once (not held until its stream ends).
    let post = endpoint
        .http
        .post(endpoint.url())
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json")
        .header("mcp-session-id", &legacy_id)
        .body(ping.to_string());
    let answer = tokio::time::timeout(Duration::from_secs(5), post.send()).await.expect("an answer in time").unwrap();
    assert_eq!(answer.status(), 404);
    assert_eq!(answer.json::<Value>().await.unwrap()["error"]["message"], "session not found");
    let get =
        endpoint.http.get(endpoint.url()).header("accept", "text/event-stream").header("mcp-session-id", &legacy_id);
    assert_eq!(get.send().await.unwrap().status(), 404, "GET with a legacy session id");
    assert_eq!(endpoint.delete(&legacy_id).await, 404, "DELETE with a legacy session id");

    // The Streamable session's id at the legacy endpoint: 404, nothing sent on its GET stream.
    let at_messages = format!("{}/messages?sessionId={streamable}", endpoint.base);
    let post = endpoint.http.post(&at_messages).header("content-type", "application/json").body(ping.to_string());
    assert_eq!(post.send().await.unwrap().status(), 404);

    // Both sessions live on, each through its own endpoint.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "0"}}});
    let post = endpoint.http.post(&legacy.messages).header("content-type", "application/json").body(init.to_string());
    assert_eq!(post.send().await.unwrap().status(), 202);
    let answer: Value = serde_json::from_str(&legacy.next_data().await).unwrap();
    assert_eq!(answer["result"]["protocolVersion"], "2024-11-05");
    let post = endpoint
        .http
        .post(endpoint.url())
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json")
        .header("mcp-session-id", &streamable)
        .header("mcp-protocol-version", "2025-11-25")
        .body(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    assert_eq!(post.send().await.unwrap().status(), 202);
    assert_eq!(endpoint.delete(&streamable).await, 200);
}

/// A POST of an initialize whose head is exactly `size` bytes (padded with a header).
fn head_of(size: usize) -> Vec<u8> {
    let body = initialize_body().to_string();
    let start = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: {ACCEPT_BOTH}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nx-padding: ",
        body.len()
    );
    let padding = size - start.len() - "\r\n\r\n".len();
    let mut request = format!("{start}{}\r\n\r\n", "a".repeat(padding)).into_bytes();
    assert_eq!(request.len(), size);
    request.extend_from_slice(body.as_bytes());
    request
}

/// The status line of the answer to `request`, sent on a new connection ("" when the server
/// closed it unanswered).
async fn status_line(endpoint: &Endpoint, request: &[u8]) -> String {
    let mut tcp = TcpStream::connect(endpoint.authority()).await.unwrap();
    // The server may stop reading (and close) before all of it is written.
    let _ = tcp.write_all(request).await;
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        while !answer.windows(2).any(|w| w == b"\r\n") {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read).await.expect("an answer in time");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    answer.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn the_request_head_bound_is_exact() {
    for (config, limit) in
        [(HttpServerConfig::default(), 64 << 10), (HttpServerConfig::default().max_header_bytes(16 << 10), 16 << 10)]
    {
        let endpoint = start(config).await;
        assert_eq!(status_line(&endpoint, &head_of(limit)).await, "HTTP/1.1 200 OK", "a head of {limit} bytes");
        assert_eq!(
            status_line(&endpoint, &head_of(limit + 1)).await,
            "HTTP/1.1 431 Request Header Fields Too Large",
            "a head of {limit} + 1 bytes"
        );
        // What the issue found served (a head of about 112 KiB with the default of 64 KiB).
        let status = status_line(&endpoint, &head_of(112 << 10)).await;
        assert!(status.is_empty() || status.starts_with("HTTP/1.1 431"), "{status}");
        // The server goes on.
        endpoint.initialize(&endpoint.http).await;
    }
}

/// Polls `attempt` until it gives 200 (each other answer must be 503), within 20 seconds.
async fn until_admitted<F: Future<Output = reqwest::StatusCode>>(what: &str, mut attempt: impl FnMut() -> F) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let status = attempt().await;
        if status == 200 {
            return;
        }
        assert_eq!(status, 503, "{what}");
        assert!(tokio::time::Instant::now() < deadline, "{what}: never admitted");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// 503 with `Retry-After`: a new session refused at a bound.
fn assert_full(status: reqwest::StatusCode, headers: &reqwest::header::HeaderMap, what: &str) {
    assert_eq!(status, 503, "{what}");
    assert_eq!(headers.get("retry-after").map(|v| v.to_str().unwrap()), Some("5"), "{what}");
}

#[tokio::test]
async fn sessions_are_bounded_per_client_address_and_per_server() {
    let endpoint = start(HttpServerConfig::default().max_sessions(5).max_sessions_per_client(3)).await;
    let here = &endpoint.http;
    let mut mine = Vec::new();
    for _ in 0..3 {
        mine.push(endpoint.initialize(here).await);
    }
    let (status, headers) = endpoint.try_initialize(here).await;
    assert_full(status, &headers, "a fourth session of one address");
    // The answer to the initialize, by its id.
    let post = here.post(endpoint.url()).header("accept", ACCEPT_BOTH).header("content-type", "application/json");
    let refused: Value = post.body(initialize_body().to_string()).send().await.unwrap().json().await.unwrap();
    assert_eq!(refused["id"], 0, "{refused}");
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    let sse = endpoint.open_sse(here).await;
    assert_full(sse.status(), sse.headers(), "a fourth session of one address, over HTTP+SSE");

    // Another address has room, until the server is full.
    let there = client_from(Ipv4Addr::new(127, 0, 0, 2));
    endpoint.initialize(&there).await;
    let theirs = HttpSse::open(&Endpoint { base: endpoint.base.clone(), http: there.clone() }).await;
    let (status, headers) = endpoint.try_initialize(&there).await;
    assert_full(status, &headers, "a sixth session of the server");
    let third = client_from(Ipv4Addr::new(127, 0, 0, 3));
    let (status, headers) = endpoint.try_initialize(&third).await;
    assert_full(status, &headers, "a new address when the server is full");

    // A session deleted makes room for its address again.
    assert_eq!(endpoint.delete(&mine.pop().unwrap()).await, 200);
    endpoint.initialize(here).await;
    // An HTTP+SSE session whose stream closes makes room for a new one.
    drop(theirs);
    until_admitted("room after the HTTP+SSE stream closed", || async {
        let response = endpoint.open_sse(&third).await;
        response.status()
    })
    .await;
}

#[tokio::test]
async fn an_expired_session_makes_room_for_its_address() {
    let config =
        HttpServerConfig::default().max_sessions_per_client(1).session_idle_timeout(Duration::from_millis(300));
    let endpoint = start(config).await;
    let first = endpoint.initialize(&endpoint.http).await;
    until_admitted("room after the idle session expired", || async { endpoint.try_initialize(&endpoint.http).await.0 })
        .await;
    assert_eq!(endpoint.delete(&first).await, 404, "the expired session is gone");
}

#[tokio::test]
async fn a_router_served_with_axum_counts_sessions_by_its_connect_info() {
    let server = Server::builder("bounds", "1.0.0").build().unwrap();
    let router = server.http_router(HttpServerConfig::default().max_sessions_per_client(1));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let app = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let endpoint = Endpoint { base, http: client_from(Ipv4Addr::LOCALHOST) };
    endpoint.initialize(&endpoint.http).await;
    let (status, headers) = endpoint.try_initialize(&endpoint.http).await;
    assert_full(status, &headers, "a second session of one address");
    endpoint.initialize(&client_from(Ipv4Addr::new(127, 0, 0, 2))).await;
}
