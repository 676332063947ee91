//! The HTTP endpoint as an OAuth 2.1 resource server, over real sockets: the challenges of
//! each refusal, the protected resource metadata, sessions bound to their principal, the
//! scopes of tools, and the principal as handlers see it.
#![cfg(feature = "auth")]

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use mcp_server::mcp_transport_http::server::auth::{AuthConfig, Principal, TokenError, TokenVerifier};
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig, InMemorySharedSessions, SharedSessions};
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// The issuer of the tokens of the table (but `alice-elsewhere`'s).
const ISSUER: &str = "https://auth.example.com";

/// Tokens by their text: who they speak for and what they grant, for `resource`.
struct TokenTable {
    resource: String,
}

impl TokenVerifier for TokenTable {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
        Box::pin(async move {
            let for_us = Principal {
                issuer: Some(ISSUER.to_owned()),
                audience: vec![self.resource.clone()],
                ..Principal::default()
            };
            let (subject, scopes): (&str, &[&str]) = match token {
                "alice-read" => ("alice", &["mcp:read"]),
                "alice-write" => ("alice", &["mcp:read", "mcp:write"]),
                "alice-none" => ("alice", &[]),
                "bob-read" => ("bob", &["mcp:read"]),
                "backend-down" => return Err(TokenError::Unavailable("the introspection endpoint is down".into())),
                // Tokens that name neither a subject nor a client.
                "anonymous-1" | "anonymous-2" => {
                    return Ok(Principal { scopes: vec!["mcp:read".to_owned()], ..for_us });
                }
                // What a verifier that checks too little lets through.
                "alice-expired" | "alice-other-audience" | "alice-no-audience" | "alice-elsewhere" => {
                    let mut principal = Principal {
                        subject: Some("alice".to_owned()),
                        client_id: Some("client-1".to_owned()),
                        scopes: vec!["mcp:read".to_owned()],
                        ..for_us
                    };
                    match token {
                        "alice-expired" => {
                            principal.expires_at = Some(SystemTime::now() - Duration::from_secs(120));
                        }
                        "alice-other-audience" => principal.audience = vec!["https://other.example.com/mcp".to_owned()],
                        "alice-no-audience" => principal.audience.clear(),
                        // The same subject and client, named by another authorization server.
                        _ => principal.issuer = Some("https://other-issuer.example.com".to_owned()),
                    }
                    return Ok(principal);
                }
                _ => return Err(TokenError::Invalid("unknown token".into())),
            };
            Ok(Principal {
                subject: Some(subject.to_owned()),
                client_id: Some("client-1".to_owned()),
                scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
                expires_at: Some(SystemTime::now() + Duration::from_secs(600)),
                ..for_us
            })
        })
    }
}

fn tool(name: &str, f: impl Fn(Context) -> Result<CallToolResult, ToolError> + Send + Sync + 'static) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), move |_, ctx| {
        let result = f(ctx);
        async move { result }
    })
    .unwrap()
}

/// A server whose `whoami` tool tells the principal, and whose `write` tool needs `mcp:write`.
fn test_server() -> Server {
    let whoami = tool("whoami", |ctx| {
        let principal = ctx.principal().expect("a principal over HTTP with auth");
        let text = format!("{} {:?}", principal.subject.as_deref().unwrap_or("-"), principal.scopes);
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    });
    let write =
        tool("write", |_| Ok(CallToolResult::success(vec![ContentBlock::text("written")]))).scopes(["mcp:write"]);
    let admin = tool("admin", |_| Ok(CallToolResult::success(vec![]))).scopes(["mcp:admin", "mcp:write"]);
    // What the handler sees of the HTTP request: its header names, and whether any header
    // value or extension holds a token.
    let headers = tool("headers", |ctx| {
        let request = ctx.http_request().expect("an HTTP request");
        let mut names: Vec<&str> = request.headers().keys().map(|n| n.as_str()).collect();
        names.sort_unstable();
        let leaked = request.headers().values().any(|v| v.to_str().is_ok_and(|v| v.contains("alice-read")));
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("{} leaked={leaked}", names.join(",")))]))
    });
    Server::builder("auth-test", "1.0.0").tool(whoami).tool(write).tool(admin).tool(headers).build().unwrap()
}

struct Harness {
    base: String,
    http: reqwest::Client,
}

async fn start() -> Harness {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let auth = AuthConfig::new(format!("{base}/mcp"), TokenTable { resource: format!("{base}/mcp") })
        .unwrap()
        .authorization_server("https://auth.example.com")
        .scopes_supported(["mcp:read", "mcp:write"])
        .required_scopes(["mcp:read"])
        .resource_name("auth test");
    let config = HttpServerConfig::new().json_response(true).health_routes(true).auth(auth);
    let factory = Arc::new(test_server());
    tokio::spawn(async move { server::serve_listener(factory, config, listener).await });
    Harness { base, http: reqwest::Client::new() }
}

impl Harness {
    fn metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.base)
    }
    /// A POST of `body` to the endpoint, with `token` if any, in `session` if any.
    async fn post(&self, token: Option<&str>, session: Option<&str>, body: Value) -> reqwest::Response {
        let mut post = self
            .http
            .post(format!("{}/mcp", self.base))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(token) = token {
            post = post.bearer_auth(token);
        }
        if let Some(session) = session {
            post = post.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
        }
        post.send().await.unwrap()
    }
    /// A session initialized with `token`.
    async fn initialize(&self, token: &str) -> String {
        self.initialize_at(token, "2025-11-25").await
    }
    /// A session initialized with `token` at `version`.
    async fn initialize_at(&self, token: &str, version: &str) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
        let response = self.post(Some(token), None, init).await;
        assert_eq!(response.status(), 200);
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post(Some(token), Some(&session), note).await.status(), 202);
        session
    }
    async fn call(&self, token: &str, session: &str, tool: &str) -> reqwest::Response {
        let body =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {}}});
        self.post(Some(token), Some(session), body).await
    }
}

fn challenge(response: &reqwest::Response) -> &str {
    response.headers()["www-authenticate"].to_str().unwrap()
}

async fn text_of(response: reqwest::Response) -> String {
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{body}")).to_owned()
}

fn ping() -> Value {
    json!({"jsonrpc": "2.0", "id": 9, "method": "ping"})
}

#[tokio::test]
async fn a_request_without_a_token_is_challenged() {
    let h = start().await;
    let response = h.post(None, None, ping()).await;
    assert_eq!(response.status(), 401);
    let expected = format!(r#"Bearer scope="mcp:read", resource_metadata="{}""#, h.metadata_url());
    assert_eq!(challenge(&response), expected);
    // Another scheme is no bearer token either.
    let basic = h.http.get(format!("{}/mcp", h.base)).header("authorization", "Basic YTpi").send().await.unwrap();
    assert_eq!(basic.status(), 401);
    assert_eq!(challenge(&basic), expected);
    // Nor do the HTTP+SSE endpoints serve without one.
    let sse = h.http.get(format!("{}/sse", h.base)).header("accept", "text/event-stream").send().await.unwrap();
    assert_eq!(sse.status(), 401);
}

#[tokio::test]
async fn a_token_the_verifier_refuses_is_an_invalid_token() {
    let h = start().await;
    let response = h.post(Some("forged"), None, ping()).await;
    assert_eq!(response.status(), 401);
    let expected = format!(
        r#"Bearer error="invalid_token", scope="mcp:read", resource_metadata="{}", error_description="the access token is invalid""#,
        h.metadata_url()
    );
    assert_eq!(challenge(&response), expected);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "invalid_token");
}

#[tokio::test]
async fn a_token_in_the_query_string_is_refused_and_never_used() {
    let h = start().await;
    let url = format!("{}/mcp?access_token=alice-read", h.base);
    let post = |token: Option<&str>| {
        let request = h
            .http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(ping().to_string());
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    };
    for token in [None, Some("alice-read")] {
        let response = post(token).send().await.unwrap();
        assert_eq!(response.status(), 400, "{token:?}");
        assert!(challenge(&response).starts_with(r#"Bearer error="invalid_request""#), "{}", challenge(&response));
    }
}

#[tokio::test]
async fn a_token_without_the_required_scopes_gets_403() {
    let h = start().await;
    let response = h.post(Some("alice-none"), None, ping()).await;
    assert_eq!(response.status(), 403);
    let expected = format!(
        r#"Bearer error="insufficient_scope", scope="mcp:read", resource_metadata="{}", error_description="the access token lacks a scope this request needs""#,
        h.metadata_url()
    );
    assert_eq!(challenge(&response), expected);
}

#[tokio::test]
async fn a_failing_verifier_is_a_503_not_a_401() {
    let h = start().await;
    let response = h.post(Some("backend-down"), None, ping()).await;
    assert_eq!(response.status(), 503);
    assert_eq!(response.headers()["retry-after"], "5");
    assert!(response.headers().get("www-authenticate").is_none());
}

#[tokio::test]
async fn the_metadata_is_served_at_both_paths_without_a_token() {
    let h = start().await;
    let expected = json!({
        "resource": format!("{}/mcp", h.base),
        "authorization_servers": ["https://auth.example.com"],
        "scopes_supported": ["mcp:read", "mcp:write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "auth test",
    });
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let response = h.http.get(format!("{}{path}", h.base)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(response.json::<Value>().await.unwrap(), expected, "{path}");
    }
}

#[tokio::test]
async fn the_health_routes_answer_without_a_token_or_an_allowed_origin() {
    let h = start().await;
    for (path, body) in [("/healthz", "ok"), ("/readyz", "ready")] {
        let response = h.http.get(format!("{}{path}", h.base)).header("origin", "https://evil.example.com").send();
        let response = response.await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.text().await.unwrap(), body);
    }
    // The endpoint itself still wants a token.
    assert_eq!(h.http.get(format!("{}/mcp", h.base)).send().await.unwrap().status(), 401);
}

#[tokio::test]
async fn handlers_see_the_principal() {
    let h = start().await;
    let session = h.initialize("alice-read").await;
    assert_eq!(text_of(h.call("alice-read", &session, "whoami").await).await, r#"alice ["mcp:read"]"#);
}

#[tokio::test]
async fn a_session_of_one_principal_is_unknown_to_another() {
    let h = start().await;
    let session = h.initialize("alice-read").await;
    assert_eq!(h.call("bob-read", &session, "whoami").await.status(), 404);
    let get = h.http.get(format!("{}/mcp", h.base)).header("accept", "text/event-stream");
    let get = get.bearer_auth("bob-read").header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(get.status(), 404);
    let delete = h.http.delete(format!("{}/mcp", h.base)).bearer_auth("bob-read").header("mcp-session-id", &session);
    assert_eq!(delete.send().await.unwrap().status(), 404);
    // The owner's session lives on, with another token of the same subject and client.
    assert_eq!(text_of(h.call("alice-write", &session, "whoami").await).await, r#"alice ["mcp:read", "mcp:write"]"#);
}

#[tokio::test]
async fn tokens_naming_nobody_do_not_share_sessions() {
    let h = start().await;
    let session = h.initialize("anonymous-1").await;
    assert_eq!(text_of(h.call("anonymous-1", &session, "whoami").await).await, r#"- ["mcp:read"]"#);
    // Another token that names neither subject nor client is not the same principal.
    assert_eq!(h.call("anonymous-2", &session, "whoami").await.status(), 404);
    assert_eq!(h.call("alice-read", &session, "whoami").await.status(), 404);
    let theirs = h.initialize("alice-read").await;
    assert_eq!(h.call("anonymous-1", &theirs, "whoami").await.status(), 404);
}

#[tokio::test]
async fn a_tool_with_scopes_is_refused_without_them_and_runs_with_them() {
    let h = start().await;
    let session = h.initialize("alice-read").await;
    let refused = h.call("alice-read", &session, "write").await;
    assert_eq!(refused.status(), 403);
    let expected = format!(
        r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="{}", error_description="the access token lacks a scope this request needs""#,
        h.metadata_url()
    );
    assert_eq!(challenge(&refused), expected);
    assert_eq!(text_of(h.call("alice-write", &session, "write").await).await, "written");
}

#[tokio::test]
async fn an_http_sse_session_of_one_principal_is_unknown_to_another() {
    let h = start().await;
    let sse = h.http.get(format!("{}/sse", h.base)).header("accept", "text/event-stream").bearer_auth("alice-read");
    let mut stream = sse.send().await.unwrap();
    assert_eq!(stream.status(), 200);
    let mut events = String::new();
    while !events.contains("\n\n") {
        let chunk = stream.chunk().await.unwrap().expect("the endpoint event");
        events.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let endpoint = events.lines().find_map(|l| l.strip_prefix("data: ")).expect("the endpoint event").to_owned();
    let post = |token: &'static str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
        let request = h.http.post(format!("{}{endpoint}", h.base)).header("content-type", "application/json");
        request.bearer_auth(token).body(body).send()
    };
    assert_eq!(post("bob-read").await.unwrap().status(), 404);
    assert_eq!(post("alice-read").await.unwrap().status(), 202);
}

#[tokio::test]
async fn a_batch_is_refused_with_every_scope_it_needs_in_one_challenge() {
    let h = start().await;
    // Batches exist in 2025-03-26 only.
    let session = h.initialize_at("alice-read", "2025-03-26").await;
    let call =
        |id: i64, tool: &str| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool}});
    let batch = json!([call(1, "whoami"), call(2, "write"), call(3, "admin")]);
    let response = h.post(Some("alice-read"), Some(&session), batch).await;
    assert_eq!(response.status(), 403);
    let expected = format!(
        r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write mcp:admin", resource_metadata="{}", error_description="the access token lacks a scope this request needs""#,
        h.metadata_url()
    );
    assert_eq!(challenge(&response), expected);
}

#[tokio::test]
async fn an_oversized_authorization_header_is_refused_before_any_check_and_the_server_goes_on() {
    let h = start().await;
    // Past the 64 KiB the server reads of a request head.
    let huge = format!("alice-read{}", "a".repeat(128 << 10));
    let response = h
        .http
        .post(format!("{}/mcp", h.base))
        .bearer_auth(huge)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(ping().to_string())
        .send()
        .await;
    // 431, or the connection closed without an answer: refused either way.
    if let Ok(response) = response {
        assert_eq!(response.status(), 431);
    }
    let session = h.initialize("alice-read").await;
    assert_eq!(text_of(h.call("alice-read", &session, "whoami").await).await, r#"alice ["mcp:read"]"#);
}

#[tokio::test]
async fn what_a_custom_verifier_lets_through_expired_or_for_another_audience_is_refused() {
    let h = start().await;
    for (token, description) in [
        ("alice-expired", "the access token has expired"),
        ("alice-other-audience", "the access token is not for this resource"),
        // A verifier that says nothing of the audience: the token could be for anyone.
        ("alice-no-audience", "the access token is not for this resource"),
    ] {
        let response = h.post(Some(token), None, ping()).await;
        assert_eq!(response.status(), 401, "{token}");
        let expected = format!(
            r#"Bearer error="invalid_token", scope="mcp:read", resource_metadata="{}", error_description="{description}""#,
            h.metadata_url()
        );
        assert_eq!(challenge(&response), expected, "{token}");
    }
    // A good token of the same table passes.
    h.initialize("alice-read").await;
}

#[tokio::test]
async fn handlers_never_see_the_token() {
    let h = start().await;
    let session = h.initialize("alice-read").await;
    let seen = text_of(h.call("alice-read", &session, "headers").await).await;
    let (names, leaked) = seen.split_once(' ').unwrap();
    assert!(names.split(',').any(|n| n == "content-type"), "{seen}");
    assert!(!names.split(',').any(|n| n == "authorization"), "{seen}");
    assert_eq!(leaked, "leaked=false");
}

#[tokio::test]
async fn one_subject_named_by_two_issuers_is_two_principals() {
    let h = start().await;
    let session = h.initialize("alice-read").await;
    // The same `sub` and client id, from another authorization server.
    assert_eq!(h.call("alice-elsewhere", &session, "whoami").await.status(), 404);
    let theirs = h.initialize("alice-elsewhere").await;
    assert_eq!(h.call("alice-read", &theirs, "whoami").await.status(), 404);
    assert_eq!(text_of(h.call("alice-read", &session, "whoami").await).await, r#"alice ["mcp:read"]"#);
}

#[tokio::test]
async fn a_session_of_a_token_naming_nobody_is_known_to_every_instance_of_a_fleet() {
    // Two instances of one resource, sharing their sessions.
    let resource = "https://mcp.example.com/mcp";
    let store: Arc<dyn SharedSessions> = Arc::new(InMemorySharedSessions::new());
    let mut instances = Vec::new();
    for _ in 0..2 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let auth = AuthConfig::new(resource, TokenTable { resource: resource.to_owned() }).unwrap();
        let config = HttpServerConfig::new().json_response(true).shared_sessions(store.clone()).auth(auth);
        let server = test_server();
        let router = server.http_router(config.clone());
        tokio::spawn(async move { server::serve_router(listener, router, &config).await });
        instances.push(Harness { base, http: reqwest::Client::new() });
    }
    let session = instances[0].initialize("anonymous-1").await;
    assert_eq!(text_of(instances[1].call("anonymous-1", &session, "whoami").await).await, r#"- ["mcp:read"]"#);
    // Another token naming nobody is another principal there too.
    assert_eq!(instances[1].call("anonymous-2", &session, "whoami").await.status(), 404);
    assert_eq!(instances[0].call("anonymous-2", &session, "whoami").await.status(), 404);
}

#[tokio::test]
async fn the_metadata_is_readable_from_any_origin() {
    let h = start().await;
    let url = h.metadata_url();
    let response = h.http.get(&url).header("origin", "https://app.example.com").send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["access-control-allow-origin"], "*");
    // The preflight of a browser's GET with MCP-Protocol-Version.
    let preflight = h
        .http
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", "https://app.example.com")
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", "mcp-protocol-version")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 204);
    let headers = preflight.headers();
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert!(headers["access-control-allow-methods"].to_str().unwrap().contains("GET"));
    assert_eq!(headers["access-control-allow-headers"], "mcp-protocol-version");
}

#[tokio::test]
async fn a_challenge_is_readable_by_a_browser_origin_the_endpoint_admits() {
    let h = start().await;
    // Bound to loopback, the endpoint admits localhost origins.
    let origin = "http://localhost:5173";
    let post = |token: Option<&'static str>, body: Value| {
        let request = h
            .http
            .post(format!("{}/mcp", h.base))
            .header("origin", origin)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    };
    let exposes = |response: &reqwest::Response| {
        let headers = response.headers();
        assert_eq!(headers["access-control-allow-origin"], origin, "{headers:?}");
        let exposed = headers["access-control-expose-headers"].to_str().unwrap().to_ascii_lowercase();
        assert!(exposed.split(',').any(|h| h.trim() == "www-authenticate"), "{exposed}");
        assert!(headers.get_all("vary").iter().any(|v| v.to_str().unwrap().to_ascii_lowercase().contains("origin")));
    };
    let unauthorized = post(None, ping()).send().await.unwrap();
    assert_eq!(unauthorized.status(), 401);
    exposes(&unauthorized);
    let invalid = post(Some("forged"), ping()).send().await.unwrap();
    assert_eq!(invalid.status(), 401);
    exposes(&invalid);
    let insufficient = post(Some("alice-none"), ping()).send().await.unwrap();
    assert_eq!(insufficient.status(), 403);
    exposes(&insufficient);
    // A tool's scope, refused after the body is read.
    let session = h.initialize("alice-read").await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "write", "arguments": {}}});
    let request = post(Some("alice-read"), call).header("mcp-session-id", &session);
    let refused = request.header("mcp-protocol-version", "2025-11-25").send().await.unwrap();
    assert_eq!(refused.status(), 403);
    exposes(&refused);
    // An origin the endpoint does not admit gets no CORS headers (and no challenge).
    let foreign = h.http.post(format!("{}/mcp", h.base)).header("origin", "https://evil.example.com");
    let foreign = foreign.body(ping().to_string()).send().await.unwrap();
    assert_eq!(foreign.status(), 403);
    assert!(foreign.headers().get("access-control-allow-origin").is_none());
}
