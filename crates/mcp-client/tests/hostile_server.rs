//! Our client facing a hostile server keeps its bounds, times out and reports clearly. The
//! servers are small and written here: raw TCP for HTTP (an endless SSE stream, a gigantic
//! result, a server that never answers), and for stdio an in-process pipe peer (or `sh`) that
//! writes whatever lines it likes: requests the client never declared, malformed frames, a
//! gigantic line, silence.

#![cfg(feature = "http")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_client::http::{HttpClientConfig, HttpErrorKind};
use mcp_client::{Client, ClientBuilder, ClientError};
use mcp_jsonrpc::{BoxFuture, PeerConfig};
use mcp_transport_stdio::{ChildCommand, StderrMode, StreamTransport};
use mcp_types::ProtocolVersion;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::net::{TcpListener, TcpStream};

/// A client whose calls (and `initialize`) time out after `timeout`, pinned to 2025-11-25.
fn builder(timeout: Duration) -> ClientBuilder {
    let config = PeerConfig { request_timeout: Some(timeout), ..PeerConfig::default() };
    ClientBuilder::new("hostile-test", "1").protocol_version(ProtocolVersion::V2025_11_25).peer_config(config)
}

/// Polls `done` until it holds, for at most `within`.
async fn eventually(within: Duration, what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "not within {within:?}: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// ---- raw HTTP ------------------------------------------------------------------------------

/// One HTTP request as the raw server read it.
struct Request {
    method: String,
    body: Value,
}

impl Request {
    fn rpc_method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
}

/// What a hostile HTTP server does with a request (after the ordinary answers to
/// `initialize`, notifications, GET and DELETE): write what it likes on the connection.
type Hostile = Arc<dyn Fn(Request, TcpStream) -> BoxFuture<()> + Send + Sync>;

/// Serves `hostile` on a local port; the endpoint's URL.
async fn http_server(hostile: Hostile) -> String {
    http_server_with(hostile, false).await
}

/// Serves `hostile` on a local port, GET and DELETE too if `all`; the endpoint's URL.
async fn http_server_with(hostile: Hostile, all: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(connection(stream, hostile.clone(), all));
        }
    });
    url
}

/// Reads requests from one connection and answers them.
async fn connection(mut stream: TcpStream, hostile: Hostile, all: bool) {
    while let Some(request) = read_request(&mut stream).await {
        let (status, body) = match (request.method.as_str(), request.rpc_method()) {
            ("GET" | "DELETE", _) if all => return hostile(request, stream).await,
            ("GET", _) => ("405 Method Not Allowed", String::new()),
            ("DELETE", _) => ("200 OK", String::new()),
            (_, "initialize") => ("200 OK", initialize_result(&request.body["id"]).to_string()),
            _ if request.body.get("id").is_none() || request.body.get("method").is_none() => {
                ("202 Accepted", String::new())
            }
            (_, "ping") => ("200 OK", json!({"jsonrpc": "2.0", "id": request.body["id"], "result": {}}).to_string()),
            _ => return hostile(request, stream).await,
        };
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        if stream.write_all(format!("{head}{body}").as_bytes()).await.is_err() {
            return;
        }
    }
}

fn initialize_result(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "hostile", "version": "0"},
    }})
}

/// Reads one request (head and `Content-Length` body); `None` at the end of the connection.
async fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let method = head.split(' ').next()?.to_owned();
    let length = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.ok()?;
    Some(Request { method, body: serde_json::from_slice(&body).unwrap_or(Value::Null) })
}

/// Writes `chunk` again and again until the client hangs up; counts the bytes in `written`
/// and sets `hung_up` when a write fails.
async fn write_forever(
    mut stream: TcpStream,
    head: &str,
    chunk: Vec<u8>,
    written: Arc<AtomicU64>,
    hung_up: Arc<AtomicBool>,
) {
    if stream.write_all(head.as_bytes()).await.is_ok() {
        while stream.write_all(&chunk).await.is_ok() {
            written.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        }
    }
    hung_up.store(true, Ordering::Relaxed);
}

const SSE_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: s1\r\n\r\n";

/// A server that answers `tools/call` with an SSE stream that never ends: `chunk` forever.
async fn endless_stream(chunk: &'static [u8]) -> (String, Arc<AtomicU64>, Arc<AtomicBool>) {
    let (written, hung_up) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
    let (w, h) = (written.clone(), hung_up.clone());
    let hostile: Hostile = Arc::new(move |_request, stream| {
        Box::pin(write_forever(stream, SSE_HEAD, chunk.to_vec(), w.clone(), h.clone()))
    });
    (http_server(hostile).await, written, hung_up)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_stream_of_comments_times_the_call_out_and_the_client_hangs_up() {
    let (url, _written, hung_up) = endless_stream(b": keep-alive\n\n").await;
    let client = builder(Duration::from_millis(500)).connect_http(&url).await.unwrap();
    let started = Instant::now();
    let e = client.call_tool("endless", json!({})).await.unwrap_err();
    assert!(matches!(e, ClientError::Timeout { ref method, .. } if method == "tools/call"), "{e:?}");
    assert!(e.to_string().contains("timed out"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    eventually(Duration::from_secs(10), "the client closes the endless stream", || hung_up.load(Ordering::Relaxed))
        .await;
    client.ping().await.expect("the connection goes on");
    client.close().await.unwrap();
}

/// This process's resident memory, in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next());
    kib.unwrap().parse::<u64>().unwrap() * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_that_never_ends_is_read_in_bounded_memory_and_the_call_times_out() {
    // One event whose data lines go on and on (96 MiB of them, then silence): the parser
    // drops the event's data past the size limit instead of buffering it.
    const SENT: u64 = 96 * 1024 * 1024;
    let (written, hung_up) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
    let (w, h) = (written.clone(), hung_up.clone());
    let hostile: Hostile = Arc::new(move |_request, mut stream| {
        let (w, h) = (w.clone(), h.clone());
        Box::pin(async move {
            let line = [b"data: ".as_slice(), &[b'x'; 64 * 1024 - 7], b"\n"].concat();
            let mut ok = stream.write_all(SSE_HEAD.as_bytes()).await.is_ok();
            while ok && w.load(Ordering::Relaxed) < SENT {
                ok = stream.write_all(&line).await.is_ok();
                w.fetch_add(line.len() as u64, Ordering::Relaxed);
            }
            // Then nothing, until the client hangs up.
            let _ = stream.read(&mut [0u8; 1]).await;
            h.store(true, Ordering::Relaxed);
        })
    });
    let url = http_server(hostile).await;
    let config = HttpClientConfig::parse(&url).unwrap().max_message_size(1024 * 1024);
    let client = builder(Duration::from_secs(20)).connect_http_with(config).await.unwrap();
    let before = rss();
    let e = client.call_tool("endless", json!({})).await.unwrap_err();
    let grown = rss().saturating_sub(before);
    assert!(matches!(e, ClientError::Timeout { ref method, .. } if method == "tools/call"), "{e:?}");
    assert!(written.load(Ordering::Relaxed) >= SENT, "only {} bytes were sent", written.load(Ordering::Relaxed));
    assert!(grown < SENT / 3, "resident memory grew {grown} bytes over a {SENT}-byte event");
    eventually(Duration::from_secs(10), "the client closes the stream", || hung_up.load(Ordering::Relaxed)).await;
    client.ping().await.expect("the connection goes on");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigantic_result_is_refused_past_the_size_limit_with_a_clear_error() {
    let (written, hung_up) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
    let (w, h) = (written.clone(), hung_up.clone());
    // A JSON body that announces a gigabyte and streams it.
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\ncontent-length: 1073741824\r\n\r\n";
    let hostile: Hostile = Arc::new(move |_request, stream| {
        let chunk = [b'{'; 1].into_iter().chain(std::iter::repeat_n(b' ', 64 * 1024 - 1)).collect::<Vec<u8>>();
        Box::pin(write_forever(stream, head, chunk, w.clone(), h.clone()))
    });
    let url = http_server(hostile).await;
    let config = HttpClientConfig::parse(&url).unwrap().max_message_size(1024 * 1024);
    let client = builder(Duration::from_secs(30)).connect_http_with(config).await.unwrap();
    let e = client.call_tool("gigantic", json!({})).await.unwrap_err();
    assert_eq!(e.http_error().map(|h| h.kind()), Some(HttpErrorKind::TooLarge), "{e:?}");
    assert!(e.to_string().contains("large") || e.to_string().contains("limit"), "not clear: {e}");
    eventually(Duration::from_secs(10), "the client hangs up", || hung_up.load(Ordering::Relaxed)).await;
    let sent = written.load(Ordering::Relaxed);
    assert!(sent < 32 * 1024 * 1024, "the client read {sent} bytes of a 1 MiB limit");
    client.ping().await.expect("the connection goes on");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_that_never_answers_initialize_times_the_connect_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    // Accepts and reads, never answers.
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let started = Instant::now();
    let e = builder(Duration::from_millis(500)).connect_http(&url).await.unwrap_err();
    assert!(matches!(e, ClientError::Timeout { ref method, .. } if method == "initialize"), "{e:?}");
    assert!(e.to_string().contains("`initialize` timed out"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_that_never_answers_initialize_times_the_spawn_out() {
    let command = ChildCommand::new("sh").args(["-c", "cat > /dev/null"]).stderr(StderrMode::Capture);
    let started = Instant::now();
    let e = builder(Duration::from_millis(500)).spawn(command).await.unwrap_err();
    assert!(e.to_string().contains("`initialize` timed out"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
}

// ---- a pipe peer over stdio framing --------------------------------------------------------

/// The server's end of a pipe: lines in, lines out.
struct Pipe {
    lines: tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
}

impl Pipe {
    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line()).await;
        let line = line.expect("the client writes").unwrap().expect("the pipe is open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    async fn write(&mut self, bytes: &[u8]) {
        self.write.write_all(bytes).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    /// Reads the next message that is not a notification.
    async fn read_message(&mut self) -> Value {
        loop {
            let message = self.read().await;
            if message.get("id").is_some() {
                return message;
            }
        }
    }
}

/// A client connected through a pipe to a peer that answers `initialize`; lines of at most
/// `max_line` bytes.
async fn pipe_client(max_line: usize) -> (Client, Pipe) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(ours);
    let (their_read, their_write) = tokio::io::split(theirs);
    let mut pipe = Pipe { lines: BufReader::new(their_read).lines(), write: their_write };
    let transport = StreamTransport::new(read, write, max_line);
    let connect = tokio::spawn(builder(Duration::from_secs(2)).connect(transport));
    let init = pipe.read().await;
    assert_eq!(init["method"], "initialize");
    pipe.write(initialize_result(&init["id"]).to_string().as_bytes()).await;
    assert_eq!(pipe.read().await["method"], "notifications/initialized");
    (connect.await.unwrap().unwrap(), pipe)
}

/// A ping through the pipe, answered: the connection still works.
async fn ping_goes_through(client: &Client, pipe: &mut Pipe) {
    let (answered, request) = tokio::join!(client.ping(), async {
        let request = pipe.read_message().await;
        assert_eq!(request["method"], "ping", "{request}");
        pipe.write(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}).to_string().as_bytes()).await;
        request
    });
    answered.unwrap_or_else(|e| panic!("ping {request}: {e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_the_client_never_declared_get_method_not_found_and_the_client_goes_on() {
    let (client, mut pipe) = pipe_client(1024 * 1024).await;
    // The client declared neither sampling nor roots nor elicitation, and no such method exists.
    let methods = ["sampling/createMessage", "roots/list", "elicitation/create", "vendor/unknown"];
    for (id, method) in methods.iter().enumerate() {
        pipe.write(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}).to_string().as_bytes()).await;
        let answer = pipe.read_message().await;
        assert_eq!(answer["id"], json!(id), "{answer}");
        assert_eq!(answer["error"]["code"], json!(-32601), "{method}: {answer}");
    }
    ping_goes_through(&client, &mut pipe).await;
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_frames_are_answered_and_the_connection_goes_on() {
    let (client, mut pipe) = pipe_client(1024 * 1024).await;
    // Not JSON: a parse error, with a null id (JSON-RPC 2.0, section 5).
    pipe.write(b"{not json").await;
    let answer = pipe.read_message().await;
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (Value::Null, json!(-32700)), "{answer}");
    // JSON, but no JSON-RPC message: an invalid request.
    pipe.write(br#"{"hello":"world"}"#).await;
    let answer = pipe.read_message().await;
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    // Not UTF-8: a parse error too.
    pipe.write(b"\xff\xfe{\"jsonrpc\":\"2.0\"}").await;
    let answer = pipe.read_message().await;
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (Value::Null, json!(-32700)), "{answer}");
    // An answer to a request never sent: nothing to answer (the ping's is the next message).
    pipe.write(br#"{"jsonrpc":"2.0","id":4242,"result":{}}"#).await;
    ping_goes_through(&client, &mut pipe).await;
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigantic_line_is_dropped_unbuffered_and_the_connection_goes_on() {
    let (client, mut pipe) = pipe_client(64 * 1024).await;
    let mut gigantic =
        br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""#.to_vec();
    gigantic.extend(std::iter::repeat_n(b'x', 8 * 1024 * 1024));
    gigantic.extend(br#""}}"#);
    pipe.write(&gigantic).await;
    // Reported as an invalid request (its id, if any, was in the bytes dropped).
    let answer = pipe.read_message().await;
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (Value::Null, json!(-32600)), "{answer}");
    ping_goes_through(&client, &mut pipe).await;
    client.close().await.unwrap();
}

// ---- a client dropped without close -------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_client_ends_its_get_stream_and_deletes_its_session() {
    // Before: a client dropped without `close` kept its GET stream, and so the server's
    // session, open for as long as the process lived (found by `cargo xtask soak`).
    let (stream_ended, deleted) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (ended, del) = (stream_ended.clone(), deleted.clone());
    let hostile: Hostile = Arc::new(move |request, mut stream| {
        let (ended, del) = (ended.clone(), del.clone());
        Box::pin(async move {
            if request.method == "DELETE" {
                del.store(true, Ordering::Relaxed);
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").await;
                return;
            }
            // The standalone GET stream: open until the client leaves.
            let _ = stream.write_all(SSE_HEAD.as_bytes()).await;
            let _ = stream.read(&mut [0u8; 1]).await;
            ended.store(true, Ordering::Relaxed);
        })
    });
    let url = http_server_with(hostile, true).await;
    let client = builder(Duration::from_secs(5)).connect_http(&url).await.unwrap();
    client.ping().await.unwrap();
    drop(client);
    eventually(Duration::from_secs(10), "the GET stream ends", || stream_ended.load(Ordering::Relaxed)).await;
    eventually(Duration::from_secs(10), "the session is deleted", || deleted.load(Ordering::Relaxed)).await;
}
