//! `mcp web` against the `everything` example (stdio), over plain HTTP (no browser; the page
//! itself is driven in headless Chromium by `cargo xtask web`): the token is required, the
//! `Host` must be the loopback, another origin is refused and no CORS header is ever sent; the
//! API answers the server's identity and tools, calls a tool, and streams the traffic and the
//! server's questions, whose answers go back to the server.

mod common;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::Duration;

use common::{Live, example};
use serde_json::{Value, json};

/// `mcp web` serving `everything`, and its URL's port and token.
struct Web {
    live: Option<Live>,
    port: u16,
    token: String,
}

fn start() -> Web {
    let everything = example("everything");
    let mut live = Live::start(&["web", "--no-open", "--port", "0", "--", everything.to_str().unwrap(), "--stdio"]);
    live.wait_for("mcp web: http://");
    let url = live.stderr.lines().find_map(|l| l.strip_prefix("mcp web: ")).unwrap().to_owned();
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
    let (port, query) = rest.split_once("/?token=").unwrap();
    assert_eq!(query.len(), 64, "a token of 32 random bytes, in hex: {url}");
    Web { live: Some(live), port: port.parse().unwrap(), token: query.to_owned() }
}

/// An HTTP answer: its status, headers (lower-case names) and body.
struct Answer {
    status: u16,
    headers: String,
    body: String,
}

/// Sends one request (`Connection: close`) with `host` and extra header lines.
fn request(port: u16, method: &str, path: &str, host: &str, extra: &[&str], body: &str) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for line in extra {
        head.push_str(line);
        head.push_str("\r\n");
    }
    if !body.is_empty() {
        head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Answer { status, headers: head.to_lowercase(), body: body.to_owned() }
}

impl Web {
    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn get(&self, path: &str) -> Answer {
        let token = format!("x-mcp-web-token: {}", self.token);
        request(self.port, "GET", path, &self.host(), &[&token], "")
    }

    fn post(&self, path: &str, body: &Value) -> Value {
        let token = format!("x-mcp-web-token: {}", self.token);
        let answer = request(self.port, "POST", path, &self.host(), &[&token], &body.to_string());
        assert_eq!(answer.status, 200, "{}", answer.body);
        serde_json::from_str(&answer.body).unwrap()
    }

    /// The events of `/api/events`, one JSON value each, sent on a channel by a thread.
    fn events(&self) -> mpsc::Receiver<Value> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let head = format!(
            "GET /api/events?token={} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n",
            self.token,
            self.host()
        );
        stream.write_all(head.as_bytes()).unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if let Some(data) = line.strip_prefix("data: ")
                    && let Ok(event) = serde_json::from_str::<Value>(data)
                    && tx.send(event).is_err()
                {
                    return;
                }
            }
        });
        rx
    }

    /// Ctrl-C: `mcp web` ends, with exit code 0.
    fn stop(mut self) {
        let live = self.live.take().unwrap();
        live.interrupt();
        live.finish().expect(0);
    }
}

impl Drop for Web {
    /// A test that failed leaves no `mcp web` (nor its server) behind.
    fn drop(&mut self) {
        if let Some(live) = &mut self.live {
            live.child.kill().ok();
            live.child.wait().ok();
        }
    }
}

/// Waits for the first event that `pick` accepts.
fn next_event(events: &mpsc::Receiver<Value>, pick: impl Fn(&Value) -> bool) -> Value {
    loop {
        let event = events.recv_timeout(Duration::from_secs(30)).expect("an event");
        if pick(&event) {
            return event;
        }
    }
}

#[test]
fn the_token_a_loopback_host_and_the_pages_own_origin_are_required() {
    let web = start();
    let host = web.host();
    let page = request(web.port, "GET", &format!("/?token={}", web.token), &host, &[], "");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<script nonce="), "the script is inlined, allowed by nonce");
    assert!(
        page.headers.contains("content-security-policy: default-src 'none'; script-src 'nonce-"),
        "{}",
        page.headers
    );
    assert!(!page.body.contains("innerHTML"), "the page never parses strings as HTML");

    assert_eq!(request(web.port, "GET", "/", &host, &[], "").status, 401, "no token");
    assert_eq!(request(web.port, "GET", "/?token=0000", &host, &[], "").status, 401, "a wrong token");
    let wrong = format!("/api/info?token={}", "0".repeat(64));
    assert_eq!(request(web.port, "GET", &wrong, &host, &[], "").status, 401, "a wrong token of the right length");
    let token = format!("x-mcp-web-token: {}", web.token);
    assert_eq!(request(web.port, "GET", "/api/info", &host, &[&token], "").status, 200, "the token as a header");

    // DNS rebinding: a name that resolved to 127.0.0.1, with the token stolen or not.
    let rebound = request(web.port, "GET", "/api/info", &format!("evil.example:{}", web.port), &[&token], "");
    assert_eq!(rebound.status, 403);
    assert_eq!(request(web.port, "GET", "/api/info", &format!("localhost:{}", web.port), &[&token], "").status, 200);

    // Another origin: refused, and never a CORS header (a preflight gets none either).
    let cross = request(web.port, "GET", "/api/info", &host, &[&token, "Origin: http://evil.example"], "");
    assert_eq!(cross.status, 403);
    let preflight = request(
        web.port,
        "OPTIONS",
        "/api/call",
        &host,
        &["Origin: http://evil.example", "Access-Control-Request-Method: POST"],
        "",
    );
    assert_ne!(preflight.status, 200);
    for answer in [&page, &cross, &preflight] {
        assert!(!answer.headers.contains("access-control-"), "{}", answer.headers);
    }
    let own = request(web.port, "GET", "/api/info", &host, &[&token, &format!("Origin: http://{host}")], "");
    assert_eq!(own.status, 200);
    web.stop();
}

#[test]
fn the_api_lists_calls_streams_the_traffic_and_passes_on_the_servers_questions() {
    let web = start();
    let events = web.events();
    let info: Value = serde_json::from_str(&web.get("/api/info").body).unwrap();
    assert_eq!(info["serverInfo"]["name"], "mcp-rust-everything");
    assert!(info["capabilities"]["tools"].is_object(), "{info}");
    let tools: Value = serde_json::from_str(&web.get("/api/tools").body).unwrap();
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"test_elicitation") && names.contains(&"test_simple_text"), "{names:?}");

    let answer = web.post("/api/call", &json!({"name": "test_simple_text", "arguments": {}, "call": 1}));
    assert_eq!(answer["result"]["content"][0]["text"], "This is a simple text response for testing.");
    // The traffic, both directions: the handshake (from the backlog) and the call.
    next_event(&events, |e| e["type"] == "traffic" && e["dir"] == "out" && e["message"]["method"] == "server/discover");
    next_event(&events, |e| e["type"] == "traffic" && e["dir"] == "out" && e["message"]["method"] == "tools/call");
    next_event(&events, |e| {
        e["type"] == "traffic" && e["dir"] == "in" && e["message"]["result"]["content"][0]["text"].is_string()
    });

    // Progress of a call, with the page's call id.
    web.post("/api/call", &json!({"name": "test_tool_with_progress", "arguments": {}, "call": 7}));
    let progress = next_event(&events, |e| e["type"] == "progress");
    assert_eq!(progress["call"], 7);

    // An elicitation: asked on the page, answered from it, back to the server.
    let call = {
        let (port, token) = (web.port, web.token.clone());
        std::thread::spawn(move || {
            let body = json!({"name": "test_elicitation", "arguments": {"message": "who?"}, "call": 2}).to_string();
            let token = format!("x-mcp-web-token: {token}");
            request(port, "POST", "/api/call", &format!("127.0.0.1:{port}"), &[&token], &body)
        })
    };
    let ask = next_event(&events, |e| e["type"] == "ask");
    assert_eq!(ask["kind"], "elicitation");
    assert_eq!(ask["params"]["message"], "who?");
    assert!(ask["params"]["requestedSchema"]["properties"]["username"].is_object(), "{ask}");
    let content = json!({"username": "<b>ada</b>", "email": "ada@example.com"});
    let answered =
        web.post("/api/answer", &json!({"id": ask["id"], "result": {"action": "accept", "content": content}}));
    assert_eq!(answered["ok"], true);
    let done = next_event(&events, |e| e["type"] == "asked");
    assert_eq!(done["id"], ask["id"]);
    let result: Value = serde_json::from_str(&call.join().unwrap().body).unwrap();
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("action=accept") && text.contains("<b>ada</b>"), "{text}");
    // Answered already: there is no such question any more.
    let token = format!("x-mcp-web-token: {}", web.token);
    let again = json!({"id": ask["id"], "result": {"action": "decline"}}).to_string();
    assert_eq!(request(web.port, "POST", "/api/answer", &web.host(), &[&token], &again).status, 404);

    // A sampling request, approved with the person's text.
    let call = {
        let (port, token) = (web.port, web.token.clone());
        std::thread::spawn(move || {
            let body = json!({"name": "test_sampling", "arguments": {"prompt": "2+2?"}, "call": 3}).to_string();
            let token = format!("x-mcp-web-token: {token}");
            request(port, "POST", "/api/call", &format!("127.0.0.1:{port}"), &[&token], &body)
        })
    };
    let ask = next_event(&events, |e| e["type"] == "ask");
    assert_eq!(ask["kind"], "sampling");
    let reply = json!({"role": "assistant", "content": {"type": "text", "text": "four"}, "model": "person", "stopReason": "endTurn"});
    web.post("/api/answer", &json!({"id": ask["id"], "result": reply}));
    let result: Value = serde_json::from_str(&call.join().unwrap().body).unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "LLM response: four");
    web.stop();
}

#[test]
fn a_server_at_a_url_is_inspected_too() {
    let server = common::Everything::start();
    let mut live = Live::start(&["web", "--no-open", "--port", "0", &server.url]);
    live.wait_for("mcp web: http://");
    let url = live.stderr.lines().find_map(|l| l.strip_prefix("mcp web: ")).unwrap().to_owned();
    let (port, token) = url.strip_prefix("http://127.0.0.1:").unwrap().split_once("/?token=").unwrap();
    let web = Web { live: Some(live), port: port.parse().unwrap(), token: token.to_owned() };
    let info: Value = serde_json::from_str(&web.get("/api/info").body).unwrap();
    assert_eq!(info["serverInfo"]["name"], "mcp-rust-everything");
    let events = web.events();
    let answer = web.post("/api/call", &json!({"name": "test_simple_text", "arguments": {}, "call": 1}));
    assert_eq!(answer["result"]["content"][0]["text"], "This is a simple text response for testing.");
    next_event(&events, |e| e["type"] == "traffic" && e["dir"] == "in" && e["message"]["result"]["content"].is_array());
    web.stop();
}
