//! The Streamable HTTP endpoint over real sockets, driven by raw HTTP requests: sessions,
//! streams and their routing, resumption, the HTTP+SSE transport, and abuse after which the
//! server still serves.
#![cfg(feature = "http")]

use std::sync::Arc;
use std::time::Duration;

use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_types::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, LoggingLevel, Role, SamplingContent, SamplingMessage,
    TextContent,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// What the `extension` tool reads: the user an authentication middleware put in the request's
/// extensions.
#[derive(Clone)]
struct User(String);

fn tool(
    name: &str,
    f: impl Fn(serde_json::Map<String, Value>, Context) -> mcp_jsonrpc::BoxFuture<Result<CallToolResult, ToolError>>
    + Send
    + Sync
    + 'static,
) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), f).unwrap()
}

/// `release` lets `poll` and `wait` answer; `cancelled` is signalled when a `hang` call ends
/// without answering (its future dropped).
fn test_server(release: Arc<Notify>, cancelled: Arc<Notify>) -> Server {
    Server::builder("http-test", "1.0.0")
        .tools(answering_tools())
        .tools(waiting_tools(release, cancelled))
        .tools(http_tools())
        .build()
        .unwrap()
}

/// Tools that answer without waiting for the test: `echo`, `ask` (logs, then asks the client's
/// model), `end_session`, `flood` (400 large log messages) and `steps` (two log messages).
fn answering_tools() -> Vec<ToolDef> {
    vec![
        tool("echo", |args, _| {
            Box::pin(async move {
                let text = args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
            })
        }),
        tool("ask", |_, ctx| {
            Box::pin(async move {
                ctx.log(LoggingLevel::Info, json!("asking the model")).await;
                let params = CreateMessageRequestParams::new(
                    16,
                    vec![SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new("hi")))],
                );
                let answer = ctx.create_message(params).await.map_err(ToolError::new)?;
                Ok(CallToolResult::success(vec![ContentBlock::text(format!("model said {:?}", answer.model))]))
            })
        }),
        tool("end_session", |_, ctx| {
            Box::pin(async move {
                ctx.peer().close();
                Ok(CallToolResult::success(vec![]))
            })
        }),
        tool("flood", |_, ctx| {
            Box::pin(async move {
                let big = "x".repeat(64 << 10);
                for _ in 0..400 {
                    ctx.log(LoggingLevel::Info, json!(big)).await;
                }
                Ok(CallToolResult::success(vec![ContentBlock::text("flooded")]))
            })
        }),
        tool("steps", |_, ctx| {
            Box::pin(async move {
                ctx.log(LoggingLevel::Info, json!("step 1")).await;
                ctx.log(LoggingLevel::Info, json!("step 2")).await;
                Ok(CallToolResult::success(vec![ContentBlock::text("stepped")]))
            })
        }),
    ]
}

/// Tools that wait for the test: `poll` (closes its SSE stream, then waits for `release`),
/// `wait` (waits for `release`), `release` (releases them) and `hang` (never answers, and
/// signals `cancelled` when its future is dropped).
fn waiting_tools(release: Arc<Notify>, cancelled: Arc<Notify>) -> Vec<ToolDef> {
    let (poll_release, wait_release, releaser) = (release.clone(), release.clone(), release);
    vec![
        tool("poll", move |_, ctx| {
            let release = poll_release.clone();
            Box::pin(async move {
                let closed = ctx.close_sse_stream().await;
                release.notified().await;
                Ok(CallToolResult::success(vec![ContentBlock::text(format!("closed: {closed}"))]))
            })
        }),
        tool("wait", move |_, _| {
            let release = wait_release.clone();
            Box::pin(async move {
                release.notified().await;
                Ok(CallToolResult::success(vec![ContentBlock::text("released")]))
            })
        }),
        tool("release", move |_, _| {
            let release = releaser.clone();
            Box::pin(async move {
                release.notify_waiters();
                Ok(CallToolResult::success(vec![]))
            })
        }),
        tool("hang", move |_, ctx| {
            let cancelled = cancelled.clone();
            Box::pin(async move {
                // A cancelled handler's future is dropped: the guard tells.
                struct Signal(Arc<Notify>);
                impl Drop for Signal {
                    fn drop(&mut self) {
                        self.0.notify_one();
                    }
                }
                let _signal = Signal(cancelled);
                ctx.log(LoggingLevel::Info, json!("started")).await;
                std::future::pending::<()>().await;
                Ok(CallToolResult::success(vec![]))
            })
        }),
    ]
}

/// Tools about HTTP: `regional` (arguments mirrored into `Mcp-Param-*` headers), `whoami` (the
/// `x-user` header) and `extension` (the `User` a middleware put in the request's extensions).
fn http_tools() -> Vec<ToolDef> {
    let regional = ToolDef::new(
        "regional",
        json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limits": {"type": "object", "properties": {"max": {"type": "integer", "x-mcp-header": "Max"}}}
        }}),
        |_, _| async { Ok(CallToolResult::success(vec![ContentBlock::text("ok")])) },
    )
    .unwrap();
    vec![
        regional,
        tool("whoami", |_, ctx| {
            Box::pin(async move {
                let agent = ctx
                    .http_request()
                    .and_then(|r| r.headers().get("x-user"))
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("nobody")
                    .to_owned();
                Ok(CallToolResult::success(vec![ContentBlock::text(agent)]))
            })
        }),
        tool("extension", |_, ctx| {
            Box::pin(async move {
                let user = ctx.http_request().and_then(|r| r.extensions().get::<User>()).map(|u| u.0.clone());
                Ok(CallToolResult::success(vec![ContentBlock::text(user.unwrap_or_else(|| "no extension".to_owned()))]))
            })
        }),
    ]
}

struct Harness {
    base: String,
    http: reqwest::Client,
    server: Server,
    release: Arc<Notify>,
    cancelled: Arc<Notify>,
}

impl Harness {
    /// A harness whose server is not served yet: `serve` it on a listener of your own.
    fn unserved() -> Harness {
        let (release, cancelled) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let server = test_server(release.clone(), cancelled.clone());
        Harness { base: String::new(), http: reqwest::Client::new(), server, release, cancelled }
    }
    /// Serves the endpoint on `listener`, reached at 127.0.0.1 and its port.
    fn serve(mut self, config: HttpServerConfig, listener: TcpListener) -> Harness {
        self.base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        tokio::spawn(server::serve_listener(Arc::new(self.server.clone()), config, listener));
        self
    }
    /// Host and port, for raw TCP.
    fn authority(&self) -> &str {
        self.base.trim_start_matches("http://")
    }
}

async fn start(config: HttpServerConfig) -> Harness {
    Harness::unserved().serve(config, TcpListener::bind("127.0.0.1:0").await.unwrap())
}

/// One parsed SSE event.
#[derive(Debug, Default)]
struct Event {
    id: Option<String>,
    retry: Option<u64>,
    event: Option<String>,
    data: String,
}

/// Reads SSE events off a response as they come.
struct Sse {
    response: reqwest::Response,
    buf: String,
}

impl Sse {
    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.headers()["content-type"], "text/event-stream", "{response:?}");
        Sse { response, buf: String::new() }
    }
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut ev = Event::default();
                let mut any = false;
                for line in block.lines() {
                    let (k, v) = line.split_once(':').unwrap_or((line, ""));
                    let v = v.strip_prefix(' ').unwrap_or(v);
                    match k {
                        "id" => ev.id = Some(v.to_owned()),
                        "retry" => ev.retry = v.parse().ok(),
                        "event" => ev.event = Some(v.to_owned()),
                        "data" => ev.data.push_str(v),
                        _ => continue, // comments (keep-alive)
                    }
                    any = true;
                }
                if any {
                    return Some(ev);
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.response.chunk())
                .await
                .expect("an SSE event in time")
                .expect("the stream reads")?;
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
    /// The next event that carries a message.
    async fn message(&mut self) -> Value {
        loop {
            let ev = self.next().await.expect("another event");
            if !ev.data.is_empty() {
                return serde_json::from_str(&ev.data).unwrap();
            }
        }
    }
}

impl Harness {
    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }
    fn post(&self, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
        match session {
            Some(s) => self.post_at("2025-11-25", s, body),
            None => self
                .http
                .post(self.url())
                .header("accept", ACCEPT_BOTH)
                .header("content-type", "application/json")
                .body(body.to_string()),
        }
    }
    /// A POST in `session`, negotiated at `version`.
    fn post_at(&self, version: &str, session: &str, body: Value) -> reqwest::RequestBuilder {
        self.post(None, body).header("mcp-session-id", session).header("mcp-protocol-version", version)
    }
    /// The GET stream of `session`.
    async fn get_stream(&self, session: &str) -> reqwest::Response {
        let get = self.http.get(self.url()).header("accept", "text/event-stream").header("mcp-session-id", session);
        get.send().await.unwrap()
    }
    /// GET with `Last-Event-ID`: resumes a stream of `session`.
    async fn resume(&self, session: &str, last_event_id: &str) -> reqwest::Response {
        self.http
            .get(self.url())
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .header("last-event-id", last_event_id)
            .send()
            .await
            .unwrap()
    }
    /// Initializes a session with sampling; returns its id.
    async fn initialize(&self) -> String {
        self.initialize_at("2025-11-25").await
    }
    /// Initializes a session at `version`; returns its id.
    async fn initialize_at(&self, version: &str) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {"sampling": {}},
            "clientInfo": {"name": "raw", "version": "0"}}});
        let resp = self.post(None, init).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        let session = resp.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        assert_eq!(session.len(), 32);
        assert!(session.bytes().all(|b| b.is_ascii_hexdigit()));
        let result = Sse::new(resp).message().await;
        assert_eq!(result["result"]["protocolVersion"], version);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post_at(version, &session, note).send().await.unwrap().status(), 202);
        session
    }
    async fn call(&self, session: &str, id: i64, name: &str) -> Sse {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {"text": "hi"}}});
        let resp = self.post(Some(session), body).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        Sse::new(resp)
    }
}

fn text_of(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{response}"))
}

#[tokio::test]
async fn a_session_from_initialize_to_delete() {
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let mut sse = h.call(&session, 1, "echo").await;
    let priming = sse.next().await.unwrap();
    assert!(priming.id.is_some() && priming.data.is_empty(), "priming event first: {priming:?}");
    assert_eq!(priming.retry, Some(1000));
    let ev = sse.next().await.unwrap();
    assert_eq!(ev.event.as_deref(), Some("message"));
    assert!(ev.id.is_some());
    let answer: Value = serde_json::from_str(&ev.data).unwrap();
    assert_eq!(answer["id"], 1);
    assert_eq!(text_of(&answer), "hi");
    assert!(sse.next().await.is_none(), "the stream ends with its response");

    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    assert_eq!(h.post(None, ping.clone()).send().await.unwrap().status(), 400, "no session id");
    let unknown = h.post(Some("0123456789abcdef0123456789abcdef"), ping.clone()).send().await.unwrap();
    assert_eq!(unknown.status(), 404, "unknown session");

    let del = h.http.delete(h.url()).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(del.status(), 200);
    assert_eq!(h.post(Some(&session), ping).send().await.unwrap().status(), 404, "deleted session");
}

#[tokio::test]
async fn the_2026_version_key_as_argument_text_is_no_2026_request() {
    // The key of the 2026-07-28 envelope, quoted in an argument of a session's call, in a
    // batch of 2025-03-26, and as a key of the arguments: none of it is a `_meta` member.
    let h = start(HttpServerConfig::default()).await;
    let key = "io.modelcontextprotocol/protocolVersion";
    let session = h.initialize().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": key}}});
    let resp = h.post(Some(&session), body).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(text_of(&Sse::new(resp).message().await), key);
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x", key: "2026-07-28"}}});
    let resp = h.post(Some(&session), body).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(text_of(&Sse::new(resp).message().await), "x");

    let old = h.initialize_at("2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": key}}},
        {"jsonrpc": "2.0", "id": 4, "method": "ping"},
    ]);
    let resp = h.post_at("2025-03-26", &old, batch).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let answers = Sse::new(resp).message().await;
    assert_eq!(text_of(&answers[0]), key, "{answers}");
}

#[tokio::test]
async fn a_json_request_whose_session_ends_meanwhile_gets_404() {
    let h = start(HttpServerConfig::default().json_response(true)).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let resp = h.post(None, init).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let session = resp.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(h.post(Some(&session), note).send().await.unwrap().status(), 202);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hang"}});
    let post = tokio::spawn(h.post(Some(&session), body).send());
    // The handler runs (the session's running request) before the session is deleted.
    let running = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}});
    assert_eq!(h.post(Some(&session), running).send().await.unwrap().status(), 200);
    let del = h.http.delete(h.url()).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(del.status(), 200);
    let answer = post.await.unwrap().unwrap();
    assert_eq!(answer.status(), 404, "a request is never answered 202");
}

#[tokio::test]
async fn requests_in_flight_are_bounded_over_all_posts() {
    let h = start(HttpServerConfig::default().stateless(true).json_response(true).max_requests_in_flight(1)).await;
    let call = |id: i64, name: &str| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {"text": "x"}}});
    // The one place is taken by a handler that waits.
    let waiting = tokio::spawn(h.post(None, call(1, "wait")).send());
    let busy = loop {
        let r = h.post(None, call(2, "echo")).send().await.unwrap();
        if r.status() == 503 {
            break r;
        }
        // The waiting POST was not admitted yet: this one took the place and was answered.
        assert_eq!(r.status(), 200);
    };
    assert_eq!(busy.headers()["retry-after"], "1");
    let error: Value = busy.json().await.unwrap();
    assert_eq!(error["id"], 2);
    assert!(error["error"]["message"].as_str().unwrap().contains("busy"), "{error}");
    // (notify_one: the handler may not wait yet, and then finds the permit when it does.)
    h.release.notify_one();
    assert_eq!(waiting.await.unwrap().unwrap().status(), 200);
    // The place is free again.
    assert_eq!(h.post(None, call(3, "echo")).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn bad_requests_get_the_right_status_and_the_server_goes_on() {
    let h = start(HttpServerConfig::default().max_body(1 << 16)).await;
    let session = h.initialize().await;
    let ping = json!({"jsonrpc": "2.0", "id": 5, "method": "ping"});
    let send = |r: reqwest::RequestBuilder| async move { r.send().await.unwrap() };

    let raw = |accept: &str, content_type: &str| {
        h.http
            .post(h.url())
            .header("accept", accept)
            .header("content-type", content_type)
            .header("mcp-session-id", &session)
            .body(ping.to_string())
    };
    assert_eq!(send(raw("text/html", "application/json")).await.status(), 406);
    assert_eq!(send(raw("application/json", "application/json")).await.status(), 406, "SSE must be acceptable");
    assert_eq!(send(raw("*/*", "application/json; charset=utf-8")).await.status(), 200);
    assert_eq!(send(raw(ACCEPT_BOTH, "text/plain")).await.status(), 415);
    let r = send(raw(ACCEPT_BOTH, "application/json").header("mcp-protocol-version", "1999-01-01")).await;
    assert_eq!(r.status(), 400);
    let r = send(raw(ACCEPT_BOTH, "application/json").header("mcp-protocol-version", "2025-03-26")).await;
    assert_eq!(r.status(), 200, "a revision we speak, though not the negotiated one");
    let r = send(h.post(Some(&session), ping.clone()).header("host", "evil.example.com")).await;
    assert_eq!(r.status(), 403, "DNS rebinding: foreign Host");
    let r = send(h.post(Some(&session), ping.clone()).header("origin", "http://evil.example.com")).await;
    assert_eq!(r.status(), 403, "DNS rebinding: foreign Origin");
    let r = send(h.post(Some(&session), ping.clone()).header("origin", "http://localhost:5173")).await;
    assert_eq!(r.status(), 200, "a localhost origin is fine");

    let huge = json!({"jsonrpc": "2.0", "id": 6, "method": "ping", "params": {"pad": "x".repeat(1 << 17)}});
    let r = send(h.post(Some(&session), huge)).await;
    assert_eq!(r.status(), 413);
    assert!(r.text().await.unwrap().contains("limit"));

    let r = send(
        h.http
            .post(h.url())
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json")
            .header("mcp-session-id", &session)
            .body("{oops"),
    )
    .await;
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.unwrap()["error"]["code"], -32700);
    let r = send(h.post(Some(&session), json!({"hello": "world"}))).await;
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.unwrap()["error"]["code"], -32600);
    let r = send(h.post(Some(&session), json!([ping.clone()]))).await;
    assert_eq!(r.status(), 400, "no batches in 2025-11-25");

    // Still serving.
    let mut sse = h.call(&session, 7, "echo").await;
    assert_eq!(text_of(&sse.message().await), "hi");
}

#[tokio::test]
async fn what_a_handler_sends_travels_on_its_post_stream() {
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let mut sse = h.call(&session, 1, "ask").await;
    let log = sse.message().await;
    assert_eq!(log["method"], "notifications/message");
    let sampling = sse.message().await;
    assert_eq!(sampling["method"], "sampling/createMessage");
    let reply = json!({"jsonrpc": "2.0", "id": sampling["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m1"}});
    assert_eq!(h.post(Some(&session), reply).send().await.unwrap().status(), 202);
    let answer = sse.message().await;
    assert_eq!(answer["id"], 1);
    assert_eq!(text_of(&answer), "model said \"m1\"");
    assert!(sse.next().await.is_none());
}

#[tokio::test]
async fn handlers_see_the_http_request() {
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami"}});
    let resp = h.post(Some(&session), body).header("x-user", "ada").send().await.unwrap();
    assert_eq!(text_of(&Sse::new(resp).message().await), "ada");
}

#[tokio::test]
async fn a_closed_stream_resumes_with_last_event_id() {
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let mut sse = h.call(&session, 1, "poll").await;
    let priming = sse.next().await.unwrap();
    let last = priming.id.expect("an event id to resume from");
    assert!(sse.next().await.is_none(), "the handler closed the connection");

    // The request goes on: release it, then resume.
    let mut release = h.call(&session, 2, "release").await;
    release.message().await;
    let resumed = h.resume(&session, &last).await;
    assert_eq!(resumed.status(), 200);
    let mut resumed = Sse::new(resumed);
    let answer = resumed.message().await;
    assert_eq!(answer["id"], 1, "only the resumed stream's events: {answer}");
    assert_eq!(text_of(&answer), "closed: true");
    assert!(resumed.next().await.is_none());

    let bogus = h.resume(&session, "99-99999").await;
    assert_eq!(bogus.status(), 400);
}

#[tokio::test]
async fn a_dropped_connection_does_not_cancel_and_the_stream_resumes() {
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let mut sse = h.call(&session, 1, "wait").await;
    let last = sse.next().await.unwrap().id.expect("a priming event id");
    drop(sse); // The client goes away mid-call.
    let mut release = h.call(&session, 2, "release").await;
    release.message().await;
    let resumed = h.resume(&session, &last).await;
    let answer = Sse::new(resumed).message().await;
    assert_eq!(answer["id"], 1);
    assert_eq!(text_of(&answer), "released", "the request ran to its end");
}

#[tokio::test]
async fn the_get_stream_carries_server_messages_and_is_unique() {
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let get = || h.http.get(h.url()).header("accept", "text/event-stream").header("mcp-session-id", &session).send();
    let mut stream = Sse::new(get().await.unwrap());
    assert!(stream.next().await.unwrap().data.is_empty(), "priming event");
    assert_eq!(get().await.unwrap().status(), 409, "one GET stream per session");
    h.server.remove_tool("echo").await;
    assert_eq!(stream.message().await["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn json_responses_and_stateless_mode() {
    let h = start(HttpServerConfig::default().stateless(true).json_response(true)).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "yo"}}});
    let resp = h.post(None, body).header("mcp-protocol-version", "2025-06-18").send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("mcp-session-id").is_none());
    assert_eq!(resp.headers()["content-type"], "application/json");
    assert_eq!(text_of(&resp.json::<Value>().await.unwrap()), "yo");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let resp = h.post(None, init).send().await.unwrap();
    assert!(resp.headers().get("mcp-session-id").is_none());
    assert_eq!(resp.json::<Value>().await.unwrap()["result"]["protocolVersion"], "2025-03-26");
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]);
    let resp = h.post(None, batch).header("mcp-protocol-version", "2025-03-26").send().await.unwrap();
    let answers = resp.json::<Value>().await.unwrap();
    assert_eq!(answers.as_array().map(Vec::len), Some(2), "a batch in 2025-03-26: {answers}");
    let get = h.http.get(h.url()).header("accept", "text/event-stream").send().await.unwrap();
    assert_eq!(get.status(), 405);
}

#[tokio::test]
async fn http_sse_clients_connect() {
    let h = start(HttpServerConfig::default()).await;
    let resp = h.http.get(format!("{}/sse", h.base)).header("accept", "text/event-stream").send().await.unwrap();
    let mut sse = Sse::new(resp);
    let endpoint = sse.next().await.unwrap();
    assert_eq!(endpoint.event.as_deref(), Some("endpoint"));
    assert!(endpoint.data.starts_with("/messages?sessionId="), "{endpoint:?}");
    let post = |body: Value| {
        h.http
            .post(format!("{}{}", h.base, endpoint.data))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "0"}}});
    assert_eq!(post(init).await.unwrap().status(), 202);
    assert_eq!(sse.message().await["result"]["protocolVersion"], "2024-11-05");
    post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await.unwrap();
    post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "old"}}}))
        .await
        .unwrap();
    assert_eq!(text_of(&sse.message().await), "old");
}

#[tokio::test]
async fn a_request_id_in_flight_cannot_be_reused() {
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let mut first = h.call(&session, 1, "poll").await;
    first.next().await.unwrap();
    let again = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let r = h.post(Some(&session), again).send().await.unwrap();
    assert_eq!(r.status(), 400);
    h.release.notify_waiters();
}

#[tokio::test]
async fn a_client_that_never_reads_does_not_stall_the_server() {
    let h = start(HttpServerConfig::default().stream_queue(8)).await;
    let session = h.initialize().await;
    // 400 messages of 64 KiB on a stream nobody reads: more than socket buffers and queue hold.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "flood"}});
    let unread = h.post(Some(&session), body).send().await.unwrap();
    let mut sse = h.call(&session, 2, "echo").await;
    assert_eq!(text_of(&sse.message().await), "hi");
    drop(unread);
}

#[tokio::test]
async fn slow_bodies_time_out_and_sessions_are_capped_and_expire() {
    let h = start(HttpServerConfig::default().body_timeout(Duration::from_millis(200))).await;
    // A body that never comes.
    let mut tcp = TcpStream::connect(h.base.trim_start_matches("http://")).await.unwrap();
    tcp.write_all(
        b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{",
    )
    .await
    .unwrap();
    let mut answer = vec![0u8; 64];
    let n = tcp.read(&mut answer).await.unwrap();
    assert!(
        String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&answer[..n])
    );
    // The same server still serves.
    let session = h.initialize().await;
    assert_eq!(text_of(&h.call(&session, 1, "echo").await.message().await), "hi");

    // The cap, with sessions that do not expire while it is being reached (however slow the
    // machine).
    let capped = start(HttpServerConfig::default().max_sessions(50)).await;
    for _ in 0..50 {
        capped.initialize().await;
    }
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    assert_eq!(capped.post(None, init.clone()).send().await.unwrap().status(), 503, "at the cap");

    // Idle sessions expire (initialize attempts touch no session): room again, and the
    // expired one answers 404.
    let expiring =
        start(HttpServerConfig::default().max_sessions(1).session_idle_timeout(Duration::from_millis(300))).await;
    let first = expiring.initialize().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let status = expiring.post(None, init.clone()).send().await.unwrap().status();
        if status == 200 {
            break;
        }
        assert_eq!(status, 503);
        assert!(tokio::time::Instant::now() < deadline, "idle sessions never expired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    assert_eq!(expiring.post(Some(&first), ping).send().await.unwrap().status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_sessions_are_held_and_each_still_answers() {
    // All from one address: past the default bound per client address (1,000).
    let h = Arc::new(start(HttpServerConfig::default().max_sessions_per_client(2000)).await);
    let mut workers = Vec::new();
    for _ in 0..8 {
        let h = h.clone();
        workers.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for _ in 0..250 {
                ids.push(h.initialize().await);
            }
            ids
        }));
    }
    let mut sessions = Vec::new();
    for w in workers {
        sessions.extend(w.await.unwrap());
    }
    assert_eq!(sessions.len(), 2000);
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), 2000, "session ids are unique");
    for (i, s) in sessions.iter().enumerate().step_by(97) {
        let mut sse = h.call(s, i as i64, "echo").await;
        assert_eq!(text_of(&sse.message().await), "hi");
    }
}

/// The `_meta` envelope of a 2026-07-28 request (asking for `info` logs if `log`).
fn envelope_meta(log: bool) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if log {
        meta["io.modelcontextprotocol/logLevel"] = json!("info");
    }
    meta
}

impl Harness {
    /// A 2026-07-28 POST of `method` with its headers (`Mcp-Name` if `name` is given).
    fn post_2026(&self, method: &str, name: Option<&str>, params: Value) -> reqwest::RequestBuilder {
        let id = 7;
        let mut r = self
            .http
            .post(self.url())
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        if let Some(name) = name {
            r = r.header("mcp-name", name);
        }
        r
    }
}

#[tokio::test]
async fn revision_2026_07_28_over_http_without_sessions() {
    let h = start(HttpServerConfig::default()).await;
    let call = |name: &str, log: bool| json!({"name": name, "arguments": {"text": "now"}, "_meta": envelope_meta(log)});

    let r = h.post_2026("tools/call", Some("echo"), call("echo", false)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("mcp-session-id").is_none());
    assert_eq!(r.headers()["content-type"], "application/json", "a lone response is JSON");
    let answer: Value = r.json().await.unwrap();
    assert_eq!(text_of(&answer), "now");
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "http-test");

    // Notifications before the response: an SSE stream.
    let r = h.post_2026("tools/call", Some("steps"), call("steps", true)).send().await.unwrap();
    let mut sse = Sse::new(r);
    assert_eq!(sse.message().await["method"], "notifications/message");
    assert_eq!(sse.message().await["method"], "notifications/message");
    assert_eq!(text_of(&sse.message().await), "stepped");
    assert!(sse.next().await.is_none());

    let status_and_code = |r: reqwest::Response| async move {
        let status = r.status().as_u16();
        let body: Value = r.json().await.unwrap();
        (status, body["error"]["code"].as_i64().unwrap_or(0))
    };
    let discover = json!({"_meta": envelope_meta(false)});
    let no_method = h
        .http
        .post(h.url())
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": discover}).to_string());
    assert_eq!(status_and_code(no_method.send().await.unwrap()).await, (400, -32020), "Mcp-Method missing");
    let wrong = h.post_2026("server/discover", None, discover.clone()).header("mcp-method", "tools/list");
    let r = wrong.send().await.unwrap();
    assert_eq!(r.status(), 400, "two Mcp-Method values, one wrong");
    let r = h.post_2026("tools/call", Some("nope"), call("echo", false)).send().await.unwrap();
    assert_eq!(status_and_code(r).await, (400, -32020), "Mcp-Name disagrees");
    let r = h.post_2026("tools/call", None, call("echo", false)).send().await.unwrap();
    assert_eq!(status_and_code(r).await, (400, -32020), "Mcp-Name missing");
    let r = h.post_2026("tools/call", Some("  echo  "), call("echo", false)).send().await.unwrap();
    assert_eq!(r.status(), 200, "Mcp-Name is trimmed");
    let r = h.post_2026("tools/call", Some("=?base64?ZWNobw==?="), call("echo", false)).send().await.unwrap();
    assert_eq!(r.status(), 200, "Mcp-Name in the base64 form");
    let mut bad = envelope_meta(false);
    bad["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let r = h.post_2026("server/discover", None, json!({"_meta": bad})).send().await.unwrap();
    assert_eq!(status_and_code(r).await, (400, -32020), "header and body disagree");
    let r = h
        .http
        .post(h.url())
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "v999.0.0")
        .header("mcp-method", "server/discover")
        .body(json!({"jsonrpc": "2.0", "id": 31, "method": "server/discover", "params": {"_meta": bad}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!((body["id"].clone(), body["error"]["code"].clone()), (json!(31), json!(-32022)), "{body}");
    assert_eq!(body["error"]["data"]["requested"], "v999.0.0");
    let r = h.post_2026("server/discover", None, json!({})).send().await.unwrap();
    assert_eq!(status_and_code(r).await, (400, -32602), "no _meta");
    let r = h.post_2026("ping", None, json!({"_meta": envelope_meta(false)})).send().await.unwrap();
    assert_eq!(status_and_code(r).await, (404, -32601), "no ping in 2026-07-28");
    let r = h.post_2026("server/discover", None, discover).send().await.unwrap();
    let d: Value = r.json().await.unwrap();
    assert_eq!(d["result"]["supportedVersions"][0], "2026-07-28");
}

#[tokio::test]
async fn closing_a_2026_response_stream_cancels_the_request() {
    let h = start(HttpServerConfig::default()).await;
    let params = json!({"name": "hang", "_meta": envelope_meta(true)});
    let r = h.post_2026("tools/call", Some("hang"), params).send().await.unwrap();
    let mut sse = Sse::new(r);
    assert_eq!(sse.message().await["method"], "notifications/message", "the handler is running");
    drop(sse);
    tokio::time::timeout(Duration::from_secs(30), h.cancelled.notified()).await.expect("the handler was cancelled");
}

#[tokio::test]
async fn one_endpoint_serves_all_five_revisions_at_once() {
    let h = start(HttpServerConfig::default()).await;
    // 2024-11-05 over the HTTP+SSE transport.
    let resp = h.http.get(format!("{}/sse", h.base)).header("accept", "text/event-stream").send().await.unwrap();
    let mut http_sse = Sse::new(resp);
    let endpoint = http_sse.next().await.unwrap().data;
    let init = |v: &str| {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "c", "version": "0"}}})
    };
    h.http
        .post(format!("{}{endpoint}", h.base))
        .header("content-type", "application/json")
        .body(init("2024-11-05").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(http_sse.message().await["result"]["protocolVersion"], "2024-11-05");
    // The three session revisions of Streamable HTTP.
    for v in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let resp = h.post(None, init(v)).send().await.unwrap();
        assert!(resp.headers().get("mcp-session-id").is_some());
        assert_eq!(Sse::new(resp).message().await["result"]["protocolVersion"], v);
    }
    // And 2026-07-28, no session.
    let r = h.post_2026("tools/list", None, json!({"_meta": envelope_meta(false)})).send().await.unwrap();
    let list: Value = r.json().await.unwrap();
    assert_eq!(list["result"]["resultType"], "complete");
    assert!(list["result"]["tools"].as_array().unwrap().len() > 3);
}

#[tokio::test]
async fn mcp_param_headers_must_agree_with_the_arguments() {
    let h = start(HttpServerConfig::default()).await;
    let params = json!({"name": "regional", "arguments": {"region": "Hello", "limits": {"max": 42}}, "_meta": envelope_meta(false)});
    let send = |region: Option<&str>, max: Option<&str>| {
        let mut r = h.post_2026("tools/call", Some("regional"), params.clone());
        if let Some(v) = region {
            r = r.header("mcp-param-region", v);
        }
        if let Some(v) = max {
            r = r.header("Mcp-Param-Max", v);
        }
        async move { r.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(send(Some("Hello"), Some("42")).await, 200);
    assert_eq!(send(Some("=?base64?SGVsbG8=?="), Some("42.0")).await, 200, "base64 form; integers compare as numbers");
    assert_eq!(send(Some("=?base64?SGVsbG8?="), Some("42")).await, 400, "bad padding");
    assert_eq!(send(Some("=?base64?SGVs!!!bG8=?="), Some("42")).await, 400, "bad characters");
    assert_eq!(send(Some("Bye"), Some("42")).await, 400, "disagrees");
    assert_eq!(send(None, Some("42")).await, 400, "missing while the body has the value");
    assert_eq!(send(Some("Hello"), Some("41")).await, 400, "a nested property disagrees");
}

/// Reads from `tcp` until the end of an HTTP response head (or of the stream); what was read.
async fn read_head(tcp: &mut (impl tokio::io::AsyncRead + Unpin)) -> String {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let read = async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read).await.expect("an answer or the end of the connection in time");
    String::from_utf8_lossy(&head).into_owned()
}

#[tokio::test]
async fn without_the_get_stream_get_is_405_and_allow_names_post_and_delete() {
    let h = start(HttpServerConfig::default().get_stream(false)).await;
    let session = h.initialize().await;
    let get = h.get_stream(&session).await;
    assert_eq!(get.status(), 405);
    assert_eq!(get.headers()["allow"], "POST, DELETE");
    // What `Allow` names is served.
    assert_eq!(text_of(&h.call(&session, 1, "echo").await.message().await), "hi");
    let del = h.http.delete(h.url()).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(del.status(), 200);
}

#[tokio::test]
async fn stateless_get_and_delete_are_405_and_allow_names_post_only() {
    let h = start(HttpServerConfig::default().stateless(true)).await;
    let get = h.http.get(h.url()).header("accept", "text/event-stream").send().await.unwrap();
    assert_eq!(get.status(), 405);
    assert_eq!(get.headers()["allow"], "POST");
    let del = h.http.delete(h.url()).header("mcp-session-id", "0123456789abcdef0123456789abcdef").send().await.unwrap();
    assert_eq!(del.status(), 405);
    assert_eq!(del.headers()["allow"], "POST");
    let del = h.http.delete(h.url()).send().await.unwrap();
    assert_eq!(del.status(), 405, "with or without a session id");
    assert_eq!(del.headers()["allow"], "POST");
}

#[tokio::test]
async fn a_stateless_post_without_mcp_protocol_version_is_taken_for_2025_03_26() {
    let h = start(HttpServerConfig::default().stateless(true).json_response(true)).await;
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]);
    // Only 2025-03-26 has batches: one without the header is served as a batch of that revision.
    let resp = h.post(None, batch.clone()).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let answers = resp.json::<Value>().await.unwrap();
    assert_eq!(answers.as_array().map(Vec::len), Some(2), "{answers}");
    assert!(answers.as_array().unwrap().iter().all(|a| a["result"] == json!({})), "{answers}");
    // The header, when there, decides.
    let resp = h.post(None, batch).header("mcp-protocol-version", "2025-06-18").send().await.unwrap();
    assert_eq!(resp.status(), 400, "no batches in 2025-06-18");
}

#[tokio::test]
async fn oversized_request_headers_are_refused_and_the_server_goes_on() {
    let h = start(HttpServerConfig::default().max_header_bytes(16 << 10)).await;
    let mut tcp = TcpStream::connect(h.authority()).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: {ACCEPT_BOTH}\r\ncontent-type: application/json\r\n\
         x-padding: {}\r\ncontent-length: 0\r\n\r\n",
        "a".repeat(64 << 10)
    );
    // The server may stop reading (and close) before all of it is written.
    let _ = tcp.write_all(head.as_bytes()).await;
    let answer = read_head(&mut tcp).await;
    // 431, or the connection closed without an answer: refused either way.
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 431"), "{answer}");
    let session = h.initialize().await;
    assert_eq!(text_of(&h.call(&session, 1, "echo").await.message().await), "hi");
}

#[tokio::test]
async fn a_body_of_8_mib_gets_413_and_the_server_goes_on() {
    let h = start(HttpServerConfig::default()).await; // 4 MiB at most
    let session = h.initialize().await;
    // A valid ping, padded to 8 MiB: without the limit it would be answered.
    let len = 8 << 20;
    let mut body = br#"{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"pad": ""#.to_vec();
    body.resize(len - 3, b'x');
    body.extend_from_slice(br#""}}"#);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: {ACCEPT_BOTH}\r\ncontent-type: application/json\r\n\
         mcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\ncontent-length: {len}\r\n\r\n"
    );
    let (mut rd, mut wr) = TcpStream::connect(h.authority()).await.unwrap().into_split();
    // Written while the answer is read: the server answers before it has read it all.
    let writer = tokio::spawn(async move {
        wr.write_all(head.as_bytes()).await?;
        wr.write_all(&body).await
    });
    let answer = read_head(&mut rd).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    writer.abort();
    assert_eq!(text_of(&h.call(&session, 1, "echo").await.message().await), "hi");
}

#[tokio::test]
async fn a_get_that_does_not_accept_sse_is_406() {
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let get =
        |accept: &'static str| h.http.get(h.url()).header("accept", accept).header("mcp-session-id", &session).send();
    assert_eq!(get("application/json").await.unwrap().status(), 406);
    assert_eq!(get("text/html, application/*").await.unwrap().status(), 406);
    let ok = get("text/*").await.unwrap();
    assert_eq!(ok.status(), 200, "a wildcard that admits text/event-stream");
}

#[tokio::test]
async fn notifications_cancelled_cancels_a_running_tool_in_a_2025_11_25_session() {
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let mut sse = h.call(&session, 1, "hang").await;
    assert_eq!(sse.message().await["method"], "notifications/message", "the handler is running");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "no longer needed"}});
    assert_eq!(h.post(Some(&session), cancel).send().await.unwrap().status(), 202);
    tokio::time::timeout(Duration::from_secs(30), h.cancelled.notified()).await.expect("the handler was cancelled");
    // No response to a cancelled request: its stream ends without one.
    let rest = async {
        while let Some(ev) = sse.next().await {
            assert!(ev.data.is_empty(), "a cancelled request is not answered: {ev:?}");
        }
    };
    tokio::time::timeout(Duration::from_secs(30), rest).await.expect("the stream of the cancelled request ends");
    // Its id is free again, and the session serves.
    assert_eq!(text_of(&h.call(&session, 1, "echo").await.message().await), "hi");
}

#[tokio::test]
async fn auto_policy_checks_host_and_origin_on_loopback_only() {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let foreign = |h: &Harness| {
        h.post(None, init.clone()).header("host", "mcp.example.com").header("origin", "https://app.example.com").send()
    };
    // Bound to every interface: a server reached by any name; `Auto` checks nothing.
    let anywhere =
        Harness::unserved().serve(HttpServerConfig::default(), TcpListener::bind("0.0.0.0:0").await.unwrap());
    let resp = foreign(&anywhere).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(Sse::new(resp).message().await["result"]["protocolVersion"], "2025-11-25");
    // Bound to loopback, the same request is DNS rebinding.
    let local = start(HttpServerConfig::default()).await;
    assert_eq!(foreign(&local).await.unwrap().status(), 403);
}

#[tokio::test]
async fn the_http_sse_endpoints_check_host_and_origin() {
    let h = start(HttpServerConfig::default()).await;
    let open = |origin: Option<&'static str>, host: Option<&'static str>| {
        let mut get = h.http.get(format!("{}/sse", h.base)).header("accept", "text/event-stream");
        if let Some(o) = origin {
            get = get.header("origin", o);
        }
        if let Some(host) = host {
            get = get.header("host", host);
        }
        get.send()
    };
    assert_eq!(open(Some("http://evil.example.com"), None).await.unwrap().status(), 403);
    assert_eq!(open(None, Some("evil.example.com")).await.unwrap().status(), 403);
    let mut sse = Sse::new(open(Some("http://localhost:5173"), None).await.unwrap());
    let endpoint = sse.next().await.unwrap().data;
    let post = |origin: &'static str, body: Value| {
        h.http
            .post(format!("{}{endpoint}", h.base))
            .header("content-type", "application/json")
            .header("origin", origin)
            .body(body.to_string())
            .send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "0"}}});
    let mut refused = init.clone();
    refused["id"] = json!(99);
    assert_eq!(post("http://evil.example.com", refused).await.unwrap().status(), 403);
    assert_eq!(post("http://127.0.0.1:5173", init).await.unwrap().status(), 202);
    assert_eq!(sse.message().await["id"], 0, "the refused message was not taken");
}

#[tokio::test]
async fn the_get_stream_resumes_with_last_event_id() {
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let mut stream = Sse::new(h.get_stream(&session).await);
    let priming = stream.next().await.unwrap();
    assert!(priming.data.is_empty(), "{priming:?}");
    let last = priming.id.expect("an id to resume from");
    drop(stream);
    // While it is gone: messages on a POST stream, then one for the GET stream.
    let mut steps = h.call(&session, 1, "steps").await;
    while steps.next().await.is_some() {}
    h.server.remove_tool("echo").await;
    let resumed = h.resume(&session, &last).await;
    assert_eq!(resumed.status(), 200);
    let mut resumed = Sse::new(resumed);
    let first = resumed.message().await;
    assert_eq!(first["method"], "notifications/tools/list_changed", "only the GET stream's messages: {first}");
}

#[tokio::test]
async fn resuming_the_get_stream_takes_over_a_connection_the_server_thinks_open() {
    // The client lost its GET connection, but the server has not noticed yet.
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let mut old = Sse::new(h.get_stream(&session).await);
    let last = old.next().await.unwrap().id.expect("an id to resume from");
    let resumed = h.resume(&session, &last).await;
    assert_eq!(resumed.status(), 200);
    let mut resumed = Sse::new(resumed);
    assert!(old.next().await.is_none(), "the old connection ends");
    h.server.remove_tool("echo").await;
    assert_eq!(resumed.message().await["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn a_session_whose_peer_a_handler_closed_ends_with_its_streams() {
    let h = start(HttpServerConfig::default()).await;
    let session = h.initialize().await;
    let mut get = Sse::new(h.get_stream(&session).await);
    assert!(get.next().await.unwrap().data.is_empty(), "the priming event");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "end_session"}});
    let _ = h.post(Some(&session), body).send().await.unwrap();
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    assert_eq!(h.post(Some(&session), ping).send().await.unwrap().status(), 404);
    // (Keep-alive comments would otherwise keep a stream that never ends alive.)
    let end = tokio::time::timeout(Duration::from_secs(30), get.next()).await.expect("the GET stream ends");
    assert!(end.is_none(), "the GET stream ends with the session");
}

#[tokio::test]
async fn streams_open_with_a_priming_event_from_2025_11_25_on() {
    let h = start(HttpServerConfig::default()).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "steps"}});
    let mut gets = Vec::new();
    for (version, primed) in [("2025-06-18", false), ("2025-11-25", true)] {
        let session = h.initialize_at(version).await;
        let mut post = Sse::new(h.post_at(version, &session, call.clone()).send().await.unwrap());
        let first = post.next().await.unwrap();
        assert!(first.id.is_some(), "{version}: resumable events have ids: {first:?}");
        if primed {
            assert!(first.data.is_empty() && first.retry == Some(1000), "{version}: a priming event: {first:?}");
        } else {
            assert!(first.retry.is_none(), "{version}: no priming event: {first:?}");
            assert_eq!(serde_json::from_str::<Value>(&first.data).unwrap()["method"], "notifications/message");
        }
        let get = h.http.get(h.url()).header("accept", "text/event-stream").header("mcp-session-id", &session);
        let get = get.header("mcp-protocol-version", version).send().await.unwrap();
        gets.push((version, primed, Sse::new(get)));
    }
    // Something for the GET streams to carry.
    h.server.remove_tool("echo").await;
    for (version, primed, mut get) in gets {
        let first = get.next().await.unwrap();
        assert_eq!(first.data.is_empty(), primed, "{version}: {first:?}");
        if primed {
            assert_eq!(get.message().await["method"], "notifications/tools/list_changed");
        } else {
            let message: Value = serde_json::from_str(&first.data).unwrap();
            assert_eq!(message["method"], "notifications/tools/list_changed", "{version}");
        }
    }
}

#[tokio::test]
async fn handlers_see_the_extensions_of_middleware() {
    let h = Harness::unserved();
    let config = HttpServerConfig::default();
    // An authentication middleware: the user named by a token, in the request's extensions.
    let authenticate = |mut request: axum::extract::Request| async move {
        let user = request.headers().get("authorization").and_then(|v| v.to_str().ok());
        if let Some(name) = user.and_then(|v| v.strip_prefix("Bearer token-of-")) {
            let user = User(name.to_owned());
            request.extensions_mut().insert(user);
        }
        request
    };
    let app = h.server.http_router(config.clone()).layer(axum::middleware::map_request(authenticate));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { server::serve_router(listener, app, &config).await });
    let h = Harness { base, ..h };
    let session = h.initialize().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "extension"}});
    let resp = h.post(Some(&session), body.clone()).header("authorization", "Bearer token-of-ada").send().await;
    assert_eq!(text_of(&Sse::new(resp.unwrap()).message().await), "ada");
    let mut again = body;
    again["id"] = json!(2);
    let resp = h.post(Some(&session), again).send().await.unwrap();
    assert_eq!(text_of(&Sse::new(resp).message().await), "no extension", "each request its own extensions");
}
