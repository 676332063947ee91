//! Whose 2025-11-25 tasks are whose, between server processes sharing one Redis: each test
//! runs this test binary again as two server processes (tasks, sessions and the change bus in
//! one Redis), each numbering its connections from 1, as two instances of a fleet or two stdio
//! servers would.
//!
//! - Over HTTP with shared sessions: a client's task made through one instance is its own
//!   through the other (read, listed, cancelled there, its handler stopped where it runs);
//!   another client, whose session is the first of its process as the owner's is of its own,
//!   gets "unknown task" (-32602) and an empty list.
//! - Over stdio: the first connection of one server process does not see, list or cancel the
//!   task of the first connection of the other.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_redis::Redis;
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::{Context, Server, SubscriptionBus as _, TaskConfig, TaskSupport, ToolDef, ToolError};
use mcp_test_support::redis::RedisServer;
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// Set in a server process: how it serves (`http` or `stdio`).
const CHILD: &str = "MCP_TASK_OWNERS_CHILD";
/// Set in a server process: the Redis of the test.
const REDIS: &str = "MCP_TASK_OWNERS_REDIS";
const VERSION: &str = "2025-11-25";

/// How many `slow` handlers run in this process.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Counts a running `slow` handler while it lives.
struct Running;

impl Running {
    fn new() -> Running {
        RUNNING.fetch_add(1, Ordering::SeqCst);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

fn ok(text: impl Into<String>) -> Result<CallToolResult, ToolError> {
    Ok(CallToolResult::success(vec![ContentBlock::text(text.into())]))
}

/// A server process's server: `slow` runs until cancelled, `running` says how many `slow`
/// handlers run here; tasks in `redis`, changes on `bus`.
fn instance(redis: &Redis, bus: mcp_redis::RedisBus) -> Server {
    let slow = ToolDef::new("slow", json!({"type": "object"}), |_args, ctx: Context| async move {
        let _running = Running::new();
        ctx.cancellation().cancelled().await;
        ok("stopped")
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let running = ToolDef::new("running", json!({"type": "object"}), |_args, _ctx: Context| async move {
        ok(RUNNING.load(Ordering::SeqCst).to_string())
    })
    .unwrap();
    let tasks = TaskConfig::new().store(redis.task_store()).poll_interval(Duration::from_millis(50));
    Server::builder("owners", "1.0.0")
        .tools([slow, running])
        .tasks(tasks)
        .subscription_bus(Arc::new(bus))
        .build()
        .unwrap()
}

/// A server process of the test: serves until its standard input closes (stdio: serves on it).
fn child(mode: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async move {
        let redis = Redis::connect(&std::env::var(REDIS).unwrap()).unwrap();
        let bus = redis.subscription_bus();
        if mode == "stdio" {
            return instance(&redis, bus).serve_stdio().await;
        }
        // The change bus listens before the endpoint serves (a cancel through the other
        // instance reaches the handler here through it).
        let _listening = bus.subscribe();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !bus.is_connected() {
            assert!(Instant::now() < deadline, "the bus did not connect to Redis");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let server = instance(&redis, bus);
        let config = HttpServerConfig::default().shared_sessions(Arc::new(redis.sessions())).json_response(true);
        let router = server.http_router(config.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("listening http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { server::serve_router(listener, router, &config).await });
        // Until the test closes our input (or dies).
        tokio::task::spawn_blocking(|| std::io::stdin().lines().for_each(drop)).await.unwrap();
    });
}

/// A server process: killed when dropped. Its output lines (those of the test harness too)
/// come on `lines`.
struct Process {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
}

impl Process {
    /// Runs `test` of this binary again as a server process serving as `mode`.
    fn start(test: &str, mode: &str, redis: &RedisServer) -> Process {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", test, "--nocapture"])
            .env(CHILD, mode)
            .env(REDIS, redis.url())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Process { child, lines }
    }

    /// The next line it prints that `pick` accepts (others skipped), within 10 s.
    fn line<T>(&self, what: &str, mut pick: impl FnMut(&str) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|e| panic!("{what}: nothing within 10 s ({e})"));
            if let Some(found) = pick(&line) {
                return found;
            }
        }
    }

    /// The URL of the endpoint it serves.
    fn url(&self) -> String {
        self.line("the server's URL", |l| l.strip_prefix("listening ").map(str::to_owned))
    }

    /// Sends a JSON-RPC message on its standard input (stdio).
    fn send(&mut self, message: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The answer to request `id` (stdio; notifications and the harness's lines skipped).
    fn answer(&self, id: i64) -> Value {
        self.line(&format!("the answer to {id}"), |l| {
            serde_json::from_str::<Value>(l).ok().filter(|m| m.get("id") == Some(&json!(id)))
        })
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How many connections listen on `channel` (`PUBSUB NUMSUB`).
fn numsub(redis: &RedisServer, channel: &str) -> i64 {
    use std::io::Read as _;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", redis.port())).unwrap();
    stream.write_all(format!("PUBSUB NUMSUB {channel}\r\n").as_bytes()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut reply = Vec::new();
    let mut buf = [0u8; 256];
    // *2 $N channel :N
    while !reply.ends_with(b"\r\n") || reply.iter().filter(|&&b| b == b'\n').count() < 4 {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "redis closed the connection");
        reply.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&reply);
    text.lines().last().and_then(|l| l.strip_prefix(':')).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

/// A client of an HTTP endpoint: its session, its requests numbered.
struct Http {
    http: reqwest::Client,
    session: String,
    next: i64,
}

impl Http {
    /// Opens a session at `url` (the handshake).
    async fn connect(url: &str) -> Http {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
        let response = http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(init.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let client = Http { http, session, next: 0 };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(client.post(url, initialized).await.status(), 202);
        client
    }

    fn post(&self, url: &str, body: Value) -> impl Future<Output = reqwest::Response> {
        let request = self
            .http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", VERSION)
            .body(body.to_string());
        async move { request.send().await.unwrap() }
    }

    /// The answer to `method` POSTed at `url` in the session (the endpoint may be another
    /// instance than the one that started it).
    async fn call(&mut self, url: &str, method: &str, params: Value) -> Value {
        self.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        let response = self.post(url, body).await;
        assert_eq!(response.status(), 200, "{method}");
        response.json().await.unwrap()
    }
}

#[test]
fn a_task_is_its_sessions_on_every_instance_and_no_other_sessions() {
    if let Ok(mode) = std::env::var(CHILD) {
        return child(&mode);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(across_instances("a_task_is_its_sessions_on_every_instance_and_no_other_sessions"));
}

async fn across_instances(test: &str) {
    let redis = RedisServer::start();
    let (one, two) = (Process::start(test, "http", &redis), Process::start(test, "http", &redis));
    let (a, b) = (one.url(), two.url());
    let deadline = Instant::now() + Duration::from_secs(10);
    // Each instance reads its inbox (a blocked read), and hears the
    // change bus.
    while redis.blocked_clients() < 2 || numsub(&redis, "mcp:bus") < 2 {
        assert!(Instant::now() < deadline, "the instances did not subscribe to Redis");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The first session of each process.
    let mut owner = Http::connect(&a).await;
    let mut other = Http::connect(&b).await;
    let created = owner.call(&a, "tools/call", json!({"name": "slow", "arguments": {}, "task": {"ttl": 60_000}})).await;
    let id = created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();

    // Another client on the other instance: the task does not exist for it.
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let answer = other.call(&b, method, json!({"taskId": id})).await;
        assert_eq!(answer["error"]["code"], -32602, "{method} by another session: {answer}");
    }
    let listed = other.call(&b, "tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"], json!([]), "another session lists: {listed}");

    let running = owner.call(&a, "tools/call", json!({"name": "running", "arguments": {}})).await;
    assert_eq!(running["result"]["content"][0]["text"], "1", "the handler runs on the first instance: {running}");

    // Its own client through the other instance: its task.
    let got = owner.call(&b, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    let listed = owner.call(&b, "tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"][0]["taskId"], id.as_str(), "{listed}");
    let cancelled = owner.call(&b, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let got = owner.call(&a, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    // The handler on the first instance stopped (the bus told it).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let running = owner.call(&a, "tools/call", json!({"name": "running", "arguments": {}})).await;
        if running["result"]["content"][0]["text"] == "0" {
            break;
        }
        assert!(Instant::now() < deadline, "the handler still runs: {running}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn two_stdio_servers_sharing_a_store_keep_their_connections_tasks_apart() {
    if let Ok(mode) = std::env::var(CHILD) {
        return child(&mode);
    }
    let redis = RedisServer::start();
    let test = "two_stdio_servers_sharing_a_store_keep_their_connections_tasks_apart";
    let mut servers = [Process::start(test, "stdio", &redis), Process::start(test, "stdio", &redis)];
    // The first (and only) connection of each process.
    for server in &mut servers {
        server.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}));
        assert_eq!(server.answer(0)["result"]["protocolVersion"], VERSION);
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
    let [one, two] = &mut servers;
    let call =
        |id: i64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    one.send(call(1, "tools/call", json!({"name": "slow", "arguments": {}, "task": {"ttl": 60_000}})));
    let created = one.answer(1);
    let id = created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();
    for (n, method) in [(1, "tasks/get"), (2, "tasks/cancel"), (3, "tasks/result")] {
        two.send(call(n, method, json!({"taskId": id})));
        let answer = two.answer(n);
        assert_eq!(answer["error"]["code"], -32602, "{method} through the other server: {answer}");
    }
    two.send(call(4, "tasks/list", json!({})));
    let listed = two.answer(4);
    assert_eq!(listed["result"]["tasks"], json!([]), "the other server lists: {listed}");
    one.send(call(2, "tasks/get", json!({"taskId": id})));
    assert_eq!(one.answer(2)["result"]["status"], "working");
    one.send(call(3, "tasks/cancel", json!({"taskId": id})));
    assert_eq!(one.answer(3)["result"]["status"], "cancelled");
}
