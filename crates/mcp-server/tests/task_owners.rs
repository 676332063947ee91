//! Whose 2025-11-25 tasks are whose over HTTP, with real sockets: two sessions of one process
//! keep their tasks apart; a stateless endpoint (every POST a session of its own) refuses a
//! task it could give back to nobody, unless the endpoint checks tokens: then the task is the
//! principal's (its issuer, subject and client), reachable by it on the next POST and by no
//! other principal, a namesake of another issuer included. (Between processes sharing a
//! Redis store: `mcp-redis`'s `tests/task_owners.rs`.)
#![cfg(feature = "http")]

use std::time::Duration;

use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::{Context, Server, TaskSupport, ToolDef, ToolError};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tokio::net::TcpListener;

const VERSION: &str = "2025-11-25";

/// `slow` runs until cancelled; `quick` answers at once; both may be tasks; `must` must be one.
fn test_server() -> Server {
    let slow = ToolDef::new("slow", json!({"type": "object"}), |_args, ctx: Context| async move {
        ctx.cancellation().cancelled().await;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("stopped")]))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let quick = ToolDef::new("quick", json!({"type": "object"}), |_args, _ctx: Context| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("quick")]))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let must = ToolDef::new("must", json!({"type": "object"}), |_args, _ctx: Context| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("must")]))
    })
    .unwrap()
    .task_support(TaskSupport::Required);
    Server::builder("owners", "1.0.0").tools([slow, quick, must]).build().unwrap()
}

/// The endpoint's URL, served with `config`.
async fn serve(config: HttpServerConfig) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let factory = std::sync::Arc::new(test_server());
    tokio::spawn(async move { server::serve_listener(factory, config, listener).await });
    url
}

/// A client: its token and session, if any.
struct Client {
    http: reqwest::Client,
    url: String,
    token: Option<&'static str>,
    session: Option<String>,
    next: i64,
}

impl Client {
    fn new(url: &str, token: Option<&'static str>) -> Client {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
        Client { http, url: url.to_owned(), token, session: None, next: 0 }
    }

    /// The same client with a session (the handshake).
    async fn connect(url: &str) -> Client {
        let mut client = Client::new(url, None);
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
        let response = client.post(init).await;
        assert_eq!(response.status(), 200);
        client.session = Some(response.headers()["mcp-session-id"].to_str().unwrap().to_owned());
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(client.post(initialized).await.status(), 202);
        client
    }

    async fn post(&self, body: Value) -> reqwest::Response {
        let mut post = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", VERSION)
            .body(body.to_string());
        if let Some(token) = self.token {
            post = post.bearer_auth(token);
        }
        if let Some(session) = &self.session {
            post = post.header("mcp-session-id", session);
        }
        post.send().await.unwrap()
    }

    /// The answer to `method` (a POST of its own).
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let response = self.post(json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})).await;
        let status = response.status();
        let text = response.text().await.unwrap();
        assert_eq!(status, 200, "{method}: {text}");
        serde_json::from_str(&text).unwrap()
    }

    /// Starts `tool` as a task; the whole answer.
    async fn task(&mut self, tool: &str) -> Value {
        self.call("tools/call", json!({"name": tool, "arguments": {}, "task": {"ttl": 60_000}})).await
    }
}

fn task_id(created: &Value) -> String {
    created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("no task: {created}")).to_owned()
}

/// `client` is told task `id` does not exist, whatever it asks, and lists no task.
async fn unknown_to(client: &mut Client, id: &str, who: &str) {
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let answer = client.call(method, json!({"taskId": id})).await;
        assert_eq!(answer["error"]["code"], -32602, "{method} by {who}: {answer}");
    }
    let listed = client.call("tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"], json!([]), "{who} lists: {listed}");
}

#[tokio::test]
async fn two_http_sessions_of_one_process_keep_their_tasks_apart() {
    let url = serve(HttpServerConfig::default().json_response(true)).await;
    let mut owner = Client::connect(&url).await;
    let mut other = Client::connect(&url).await;
    let id = task_id(&owner.task("slow").await);
    unknown_to(&mut other, &id, "another session").await;
    assert_eq!(owner.call("tasks/get", json!({"taskId": id})).await["result"]["status"], "working");
    assert_eq!(owner.call("tasks/list", json!({})).await["result"]["tasks"][0]["taskId"], id.as_str());
    assert_eq!(owner.call("tasks/cancel", json!({"taskId": id})).await["result"]["status"], "cancelled");
}

#[tokio::test]
async fn a_stateless_endpoint_refuses_tasks_it_could_give_back_to_nobody() {
    let url = serve(HttpServerConfig::default().stateless(true).json_response(true)).await;
    let mut client = Client::new(&url, None);
    let refused = client.task("quick").await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("stateless"), "{message}");
    // The tool is still served as a plain call; no task exists to be read.
    let plain = client.call("tools/call", json!({"name": "quick", "arguments": {}})).await;
    assert_eq!(plain["result"]["content"][0]["text"], "quick", "{plain}");
    // A tool that must be a task cannot be called here at all.
    for params in [json!({"name": "must", "arguments": {}}), json!({"name": "must", "arguments": {}, "task": {}})] {
        let refused = client.call("tools/call", params).await;
        assert_eq!(refused["error"]["code"], -32601, "{refused}");
    }
    unknown_to(&mut client, "a-task-id", "a stateless client").await;
}

#[cfg(feature = "auth")]
mod principals {
    use futures_util::future::BoxFuture;
    use mcp_server::mcp_transport_http::server::HttpServerConfig;
    use mcp_server::mcp_transport_http::server::auth::{AuthConfig, Principal, TokenError, TokenVerifier};
    use serde_json::json;

    use super::{Client, task_id, unknown_to};

    /// Tokens by their text: `subject.issuer`, all of one client, for the resource `audience`,
    /// valid for an hour.
    struct Tokens {
        audience: String,
    }

    impl TokenVerifier for Tokens {
        fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
            Box::pin(async move {
                let (subject, issuer) = token.split_once('.').ok_or_else(|| TokenError::Invalid("unknown".into()))?;
                let mut claims = serde_json::Map::new();
                claims.insert("iss".into(), json!(format!("https://{issuer}.example")));
                claims.insert("sub".into(), json!(subject));
                claims.insert("aud".into(), json!(self.audience));
                Ok(Principal {
                    issuer: Some(format!("https://{issuer}.example")),
                    subject: Some(subject.to_owned()),
                    client_id: Some("client-1".to_owned()),
                    audience: vec![self.audience.clone()],
                    expires_at: Some(std::time::SystemTime::now() + std::time::Duration::from_secs(3600)),
                    claims,
                    ..Principal::default()
                })
            })
        }
    }

    #[tokio::test]
    async fn on_a_stateless_endpoint_a_task_is_its_principals_from_one_post_to_the_next() {
        let url = serve_with_auth().await;
        let mut alice = Client::new(&url, Some("alice.one"));
        let id = task_id(&alice.task("slow").await);
        // The next POST (another session for the server) of the same principal: its task.
        assert_eq!(alice.call("tasks/get", json!({"taskId": id})).await["result"]["status"], "working");
        assert_eq!(alice.call("tasks/list", json!({})).await["result"]["tasks"][0]["taskId"], id.as_str());
        // Another subject, and the same subject of another issuer: no such task.
        unknown_to(&mut Client::new(&url, Some("bob.one")), &id, "another subject").await;
        unknown_to(&mut Client::new(&url, Some("alice.two")), &id, "a namesake of another issuer").await;
        let cancelled = alice.call("tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    }

    /// A stateless endpoint checking [`Tokens`].
    async fn serve_with_auth() -> String {
        // The resource's URL must be known before the listener: bind first.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let auth = AuthConfig::new(url.clone(), Tokens { audience: url.clone() })
            .unwrap()
            .authorization_server("https://one.example");
        let config = HttpServerConfig::default().stateless(true).json_response(true).auth(auth);
        let factory = std::sync::Arc::new(super::test_server());
        tokio::spawn(
            async move { mcp_server::mcp_transport_http::server::serve_listener(factory, config, listener).await },
        );
        url
    }
}
