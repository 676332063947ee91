//! Regressions found by `cargo xtask hostile` (issue 22), over real sockets: a body declared
//! past the bound is refused at once, and the HTTP+SSE `/messages` endpoint answers an unknown
//! session and bodies that are no message as the MCP endpoint does.
#![cfg(feature = "http")]

use std::sync::Arc;
use std::time::Duration;

use mcp_server::Server;
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// Serves a server with no tools on a free port: its address.
async fn start() -> String {
    let server = Server::builder("hostile", "1.0.0").build().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(server::serve_listener(Arc::new(server), HttpServerConfig::default(), listener));
    addr
}

/// Sends `request` on a new connection: the answer's status line and body, read until the
/// server closes or the body is complete (within `limit`, or the test fails).
async fn exchange(addr: &str, request: &[u8], limit: Duration) -> (String, Value) {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&answer).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()));
                if length.and_then(|l| l.parse::<usize>().ok()).is_some_and(|l| body.len() >= l) {
                    break;
                }
            }
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(limit, read).await.expect("an answer in time");
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head.lines().next().unwrap_or_default().to_owned(), serde_json::from_str(body).unwrap_or(Value::Null))
}

fn post(target: &str, headers: &str, body: &str) -> Vec<u8> {
    format!(
        "POST {target} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\n{headers}content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[tokio::test]
async fn a_body_declared_past_the_bound_is_refused_at_once() {
    let addr = start().await;
    // Only the head: before the fix the server waited for the body, and answered 408 when
    // body_timeout (30 s) ran out.
    let head = |target: &str| {
        format!(
            "POST {target} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n",
            (4 << 20) + 1
        )
    };
    for target in ["/mcp", "/messages?sessionId=0123456789abcdef0123456789abcdef"] {
        let (status, body) = exchange(&addr, head(target).as_bytes(), Duration::from_secs(5)).await;
        if target == "/mcp" {
            assert_eq!(status, "HTTP/1.1 413 Payload Too Large", "{target}");
            assert_eq!(body["error"]["code"], -32600, "{target}");
        } else {
            // The session is looked up first: unknown, 404.
            assert_eq!(status, "HTTP/1.1 404 Not Found", "{target}");
        }
    }
    // Exactly at the bound the body is read (and found not JSON).
    let body = " ".repeat(4 << 20);
    let (status, answer) = exchange(&addr, &post("/mcp", "", &body), Duration::from_secs(30)).await;
    assert_eq!(status, "HTTP/1.1 400 Bad Request");
    assert_eq!(answer["error"]["code"], -32700);
}

/// Opens an HTTP+SSE session: the connection holding its stream, and its `/messages` target.
async fn open_sse(addr: &str) -> (TcpStream, String) {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /sse HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n").await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let endpoint = loop {
        let text = String::from_utf8_lossy(&seen).into_owned();
        if let Some(at) = text.find("/messages?sessionId=") {
            break text[at..].lines().next().unwrap().trim().to_owned();
        }
        let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf)).await.unwrap().unwrap();
        assert!(n > 0, "the /sse stream ended before its endpoint event");
        seen.extend_from_slice(&buf[..n]);
    };
    (tcp, endpoint)
}

#[tokio::test]
async fn the_messages_endpoint_answers_as_the_mcp_endpoint_does() {
    let addr = start().await;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    // An unknown session: 404 with -32001 (before: -32600), as at /mcp.
    let unknown = "/messages?sessionId=0123456789abcdef0123456789abcdef";
    let (status, body) = exchange(&addr, &post(unknown, "", ping), Duration::from_secs(5)).await;
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    assert_eq!(body["error"], json!({"code": -32001, "message": "session not found"}));

    // Bodies that are no message: 400 with the JSON-RPC error (before: 202, the error sent on
    // the stream, as if the message had been accepted).
    let (_stream, messages) = open_sse(&addr).await;
    let (status, body) = exchange(&addr, &post(&messages, "", "{"), Duration::from_secs(5)).await;
    assert_eq!(status, "HTTP/1.1 400 Bad Request");
    assert_eq!(body["error"]["code"], -32700);
    let (status, body) = exchange(&addr, &post(&messages, "", r#"{"jsonrpc":"2.0"}"#), Duration::from_secs(5)).await;
    assert_eq!(status, "HTTP/1.1 400 Bad Request");
    assert_eq!(body["error"]["code"], -32600);
    // The session goes on.
    let (status, _) = exchange(&addr, &post(&messages, "", ping), Duration::from_secs(5)).await;
    assert_eq!(status, "HTTP/1.1 202 Accepted");
}

#[tokio::test]
async fn every_host_and_origin_line_is_checked() {
    let addr = start().await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
    let with = |line: &str, host: &str, more: &str| {
        format!(
            "{line}\r\n{host}content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
             {more}content-length: {}\r\n\r\n{init}",
            init.len()
        )
        .into_bytes()
    };
    let limit = Duration::from_secs(5);
    // Before the fix each of these was served: only the first Host and Origin lines were
    // checked, and neither a missing Host nor an absolute-form target's authority was.
    let refused = [
        ("a second Host line", with("POST /mcp HTTP/1.1", "host: 127.0.0.1\r\nhost: evil.example.com\r\n", ""), 400),
        ("no Host", with("POST /mcp HTTP/1.1", "", ""), 400),
        ("an absolute-form target", with("POST http://evil.example.com/mcp HTTP/1.1", "host: 127.0.0.1\r\n", ""), 403),
        (
            "a second Origin line",
            with(
                "POST /mcp HTTP/1.1",
                "host: 127.0.0.1\r\n",
                "origin: http://localhost\r\norigin: http://evil.example.com\r\n",
            ),
            403,
        ),
    ];
    for (what, request, status) in refused {
        let (line, body) = exchange(&addr, &request, limit).await;
        assert!(line.starts_with(&format!("HTTP/1.1 {status} ")), "{what}: {line}");
        assert_eq!(body["error"]["code"], -32600, "{what}");
    }
    // Two session ids (an unknown one after a real one): 400, not served as the first.
    let mut tcp = TcpStream::connect(&addr).await.unwrap();
    tcp.write_all(&with("POST /mcp HTTP/1.1", "host: 127.0.0.1\r\n", "")).await.unwrap();
    let mut head = vec![0u8; 4096];
    let n = tokio::time::timeout(limit, tcp.read(&mut head)).await.unwrap().unwrap();
    let head = String::from_utf8_lossy(&head[..n]).to_ascii_lowercase();
    let id = head.split("mcp-session-id: ").nth(1).unwrap().lines().next().unwrap().trim().to_owned();
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let twice = format!("mcp-session-id: {id}\r\nmcp-session-id: 0123456789abcdef0123456789abcdef\r\n");
    let (line, body) = exchange(&addr, &post("/mcp", &twice, ping), limit).await;
    assert_eq!(line, "HTTP/1.1 400 Bad Request");
    assert_eq!(body["error"]["code"], -32600);
    // What is well formed is served: one allowed Host, an allowed absolute-form target, and
    // HTTP/1.0, where Host is optional.
    for (what, request) in [
        ("one Host", with("POST /mcp HTTP/1.1", "host: 127.0.0.1\r\n", "origin: http://localhost:5173\r\n")),
        ("an allowed absolute-form target", with("POST http://localhost/mcp HTTP/1.1", "host: localhost\r\n", "")),
        ("HTTP/1.0 without Host", with("POST /mcp HTTP/1.0", "", "")),
    ] {
        let mut tcp = TcpStream::connect(&addr).await.unwrap();
        tcp.write_all(&request).await.unwrap();
        let mut buf = [0u8; 64];
        let n = tokio::time::timeout(limit, tcp.read(&mut buf)).await.unwrap().unwrap();
        let line = String::from_utf8_lossy(&buf[..n]).into_owned();
        assert!(line.starts_with("HTTP/1.1 200") || line.starts_with("HTTP/1.0 200"), "{what}: {line}");
    }
}
