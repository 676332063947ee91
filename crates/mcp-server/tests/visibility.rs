//! Per-client visibility over real sockets, with real bearer tokens (JWTs of a test key,
//! checked by `JwtVerifier`): two principals see different lists, and an item hidden from one
//! is unknown to it, with exactly the error of an item that does not exist; a session that
//! hides a tool at run time is told so, and no other session is; a request of the stateless
//! revision is filtered per request.
#![cfg(feature = "auth")]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_server::mcp_transport_http::server::auth::{AuthConfig, JwtVerifier, StaticJwks};
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::{Completion, Item, PromptDef, ResourceDef, Server, TemplateDef, ToolDef, ToolError, Viewer};
use mcp_types::{CallToolResult, ContentBlock, GetPromptResult, PromptArgument, TextResourceContents};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// A P-256 key made for these tests only (PKCS #8): the test issuer's.
const TEST_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQghUFvbYOhF21dai8c
ZDUQa2ryO43NZ260Wm61J5j0ZgehRANCAAQ+0Vgh9G2skW6mmkkoJjiMvcL3jsvF
OHloBujxuf3XPIK/Gw289cdqa3wxYrRvr9hJFOyUl2sx9EqwryJAj/e1
-----END PRIVATE KEY-----
";
/// Its public half as a JWKS.
const TEST_JWKS: &str = r#"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "test-key", "use": "sig",
    "x": "PtFYIfRtrJFupppJKCY4jL3C947LxTh5aAbo8bn91zw",
    "y": "gr8bDbz1x2prfDFitG-v2EkU7JSXazH0SrCvIkCP97U"}]}"#;
const ISSUER: &str = "https://auth.example.com";
const VERSION: &str = "2025-11-25";

/// An access token of the test issuer for `resource`, of `subject` granting `scope`.
fn token(resource: &str, subject: &str, scope: &str) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let claims = json!({"iss": ISSUER, "aud": resource, "sub": subject, "client_id": "client-1",
        "scope": scope, "exp": now + 600, "iat": now});
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("at+jwt".to_owned());
    header.kid = Some("test-key".to_owned());
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_pem(TEST_KEY.as_bytes()).unwrap()).unwrap()
}

fn text(s: &str) -> Result<CallToolResult, ToolError> {
    Ok(CallToolResult::success(vec![ContentBlock::text(s)]))
}

/// Items whose name starts with `admin_` are seen by principals with `mcp:admin` only.
fn admins_see_admin_items(item: Item<'_>, who: &Viewer<'_>) -> bool {
    !item.name().starts_with("admin_") || who.principal().is_some_and(|p| p.has_scope("mcp:admin"))
}

/// `echo`, `admin_reset`, `hide_echo` and `show_echo` (which hide and show `echo` in their
/// session); the prompts `greet` and `admin_prompt`, the resource `admin_config` and the
/// template `admin_files` (both completed). Lists are pages of one item.
fn test_server(visibility: bool) -> Server {
    let tool = |name: &str| ToolDef::new(name, json!({"type": "object"}), |_, _| async { text("ok") }).unwrap();
    let hide = ToolDef::new("hide_echo", json!({"type": "object"}), |_, ctx| async move {
        let changed = ctx.session().hide_tool("echo").await?;
        text(&format!("changed={changed}"))
    })
    .unwrap();
    let show = ToolDef::new("show_echo", json!({"type": "object"}), |_, ctx| async move {
        let changed = ctx.session().show_tool("echo").await?;
        text(&format!("changed={changed}"))
    })
    .unwrap();
    let prompt = |name: &str| {
        PromptDef::new(name, |_, _| async { Ok(GetPromptResult::new(vec![])) })
            .argument(PromptArgument::new("x"))
            .complete("x", |_, _| async { Ok(Completion::matching("", ["one"])) })
    };
    let config = ResourceDef::new("admin_config", "admin://config", |uri: String, _, _| async move {
        Ok(vec![TextResourceContents::new(uri, "secret").into()])
    });
    let files = TemplateDef::new("admin_files", "admin://files/{path}", |uri: String, _, _| async move {
        Ok(vec![TextResourceContents::new(uri, "file").into()])
    })
    .unwrap()
    .complete("path", |_, _| async { Ok(Completion::matching("", ["a"])) });
    // Hides every admin item from its session.
    let hide_admin = ToolDef::new("hide_admin", json!({"type": "object"}), |_, ctx| async move {
        let session = ctx.session();
        session.hide_tool("admin_reset").await?;
        session.hide_prompt("admin_prompt").await?;
        session.hide_resource("admin://config").await?;
        session.hide_resource_template("admin://files/{path}").await?;
        text("hidden")
    })
    .unwrap();
    let builder = Server::builder("visibility-test", "1.0.0")
        .page_size(1)
        .tool(tool("echo"))
        .tool(tool("admin_reset"))
        .tool(hide)
        .tool(show)
        .tool(hide_admin)
        .prompt(prompt("greet"))
        .prompt(prompt("admin_prompt"))
        .resource(config)
        .resource_template(files);
    match visibility {
        true => builder.visibility(admins_see_admin_items),
        false => builder,
    }
    .build()
    .unwrap()
}

struct Harness {
    url: String,
    http: reqwest::Client,
    server: Server,
    /// `alice` (`mcp:read`) and `root` (`mcp:read mcp:admin`).
    alice: String,
    root: String,
}

async fn start(server: Server) -> Harness {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let verifier = JwtVerifier::new(ISSUER, url.clone(), StaticJwks::from_json(TEST_JWKS).unwrap());
    let auth = AuthConfig::new(url.clone(), verifier).unwrap().authorization_server(ISSUER);
    let config = HttpServerConfig::new().json_response(true).auth(auth);
    let router = server.http_router(config.clone());
    tokio::spawn(async move { server::serve_router(listener, router, &config).await });
    let (alice, root) = (token(&url, "alice", "mcp:read"), token(&url, "root", "mcp:read mcp:admin"));
    Harness { url, http: reqwest::Client::new(), server, alice, root }
}

impl Harness {
    fn post(&self, token: &str, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
        let post = self
            .http
            .post(&self.url)
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        match session {
            Some(s) => post.header("mcp-session-id", s).header("mcp-protocol-version", VERSION),
            None => post,
        }
    }
    /// A session of `token`'s principal.
    async fn initialize(&self, token: &str) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
        let response = self.post(token, None, init).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post(token, Some(&session), note).send().await.unwrap().status(), 202);
        session
    }
    /// The response body of request `method` with `params`, as text (its bytes).
    async fn raw(&self, token: &str, session: &str, method: &str, params: Value) -> String {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let response = self.post(token, Some(session), body).send().await.unwrap();
        assert_eq!(response.status(), 200, "{method}");
        response.text().await.unwrap()
    }
    async fn request(&self, token: &str, session: &str, method: &str, params: Value) -> Value {
        serde_json::from_str(&self.raw(token, session, method, params).await).unwrap()
    }
    /// Every page of list `method`, following the cursors: the names (URIs for resources).
    async fn list(&self, token: &str, session: &str, method: &str) -> Vec<String> {
        let (mut names, mut cursor) = (Vec::new(), None::<String>);
        loop {
            let params = cursor.map_or(json!({}), |c| json!({"cursor": c}));
            let page = self.request(token, session, method, params).await;
            let result = &page["result"];
            let items = ["tools", "prompts", "resources", "resourceTemplates"]
                .iter()
                .find_map(|k| result[k].as_array())
                .unwrap_or_else(|| panic!("{page}"));
            assert!(items.len() <= 1, "pages of one item: {page}");
            names.extend(items.iter().map(|i| i["name"].as_str().unwrap().to_owned()));
            match result["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => return names,
            }
        }
    }
}

/// The requests that name an admin item: a call, a get, a read (of the resource and of a URI
/// of the template) and completions of the prompt and the template.
fn requests_naming_admin_items() -> Vec<(&'static str, Value)> {
    vec![
        ("tools/call", json!({"name": "admin_reset", "arguments": {}})),
        ("prompts/get", json!({"name": "admin_prompt"})),
        ("resources/read", json!({"uri": "admin://config"})),
        ("resources/read", json!({"uri": "admin://files/a"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "admin_prompt"}, "argument": {"name": "x", "value": ""}}),
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "admin://files/{path}"},
                "argument": {"name": "path", "value": ""}}),
        ),
    ]
}

#[tokio::test]
async fn two_principals_see_different_lists_and_calls() {
    let h = start(test_server(true)).await;
    let (alice, root) = (h.initialize(&h.alice).await, h.initialize(&h.root).await);

    // Lists: filtered before paging (pages of one item, every cursor followed).
    assert_eq!(h.list(&h.alice, &alice, "tools/list").await, ["echo", "hide_echo", "show_echo", "hide_admin"]);
    assert_eq!(
        h.list(&h.root, &root, "tools/list").await,
        ["echo", "admin_reset", "hide_echo", "show_echo", "hide_admin"]
    );
    assert_eq!(h.list(&h.alice, &alice, "prompts/list").await, ["greet"]);
    assert_eq!(h.list(&h.root, &root, "prompts/list").await, ["greet", "admin_prompt"]);
    assert!(h.list(&h.alice, &alice, "resources/list").await.is_empty());
    assert_eq!(h.list(&h.root, &root, "resources/list").await, ["admin_config"]);
    assert!(h.list(&h.alice, &alice, "resources/templates/list").await.is_empty());
    assert_eq!(h.list(&h.root, &root, "resources/templates/list").await, ["admin_files"]);

    // Calls: root's succeed; alice's are answered as if the items did not exist.
    let mut hidden = Vec::new();
    for (method, params) in requests_naming_admin_items() {
        let seen = h.request(&h.root, &root, method, params.clone()).await;
        assert!(seen["result"].is_object(), "{method}: {seen}");
        let unseen = h.raw(&h.alice, &alice, method, params).await;
        assert!(unseen.contains("\"error\""), "{method}: {unseen}");
        hidden.push(unseen);
    }
    assert_eq!(
        h.request(&h.alice, &alice, "tools/call", json!({"name": "echo", "arguments": {}})).await["result"]["content"]
            [0]["text"],
        "ok"
    );

    // The same requests once the items are gone: the same bytes.
    assert!(h.server.remove_tool("admin_reset").await);
    assert!(h.server.remove_prompt("admin_prompt").await);
    assert!(h.server.remove_resource("admin://config").await);
    assert!(h.server.remove_resource_template("admin://files/{path}").await);
    for ((method, params), unseen) in requests_naming_admin_items().into_iter().zip(hidden) {
        assert_eq!(h.raw(&h.root, &root, method, params).await, unseen, "{method}: hidden is as absent");
    }
}

/// A request of the stateless revision has no session: the predicate is asked per request,
/// with the request's principal.
#[tokio::test]
async fn a_stateless_request_is_filtered_by_its_principal() {
    let h = start(test_server(true)).await;
    let post = |token: &str, method: &str, name: Option<&str>, mut params: Value| {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let mut post = h
            .http
            .post(&h.url)
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string());
        if let Some(name) = name {
            post = post.header("mcp-name", name);
        }
        async move {
            let response = post.send().await.unwrap();
            assert_eq!(response.status(), 200);
            response.json::<Value>().await.unwrap()
        }
    };
    let names = |page: Value| -> Vec<String> {
        // Pages of one item: the first page names the first item seen.
        page["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    let cursor = |page: &Value| page["result"]["nextCursor"].as_str().unwrap().to_owned();
    let alice_first = post(&h.alice, "tools/list", None, json!({})).await;
    let root_first = post(&h.root, "tools/list", None, json!({})).await;
    let alice_second = post(&h.alice, "tools/list", None, json!({"cursor": cursor(&alice_first)})).await;
    let root_second = post(&h.root, "tools/list", None, json!({"cursor": cursor(&root_first)})).await;
    assert_eq!((names(alice_first), names(alice_second)), (vec!["echo".to_owned()], vec!["hide_echo".to_owned()]));
    assert_eq!((names(root_first), names(root_second)), (vec!["echo".to_owned()], vec!["admin_reset".to_owned()]));

    let call = json!({"name": "admin_reset", "arguments": {}});
    let seen = post(&h.root, "tools/call", Some("admin_reset"), call.clone()).await;
    assert_eq!(seen["result"]["content"][0]["text"], "ok", "{seen}");
    let unseen = post(&h.alice, "tools/call", Some("admin_reset"), call).await;
    assert_eq!(unseen["error"]["message"], "invalid params: unknown tool `admin_reset`", "{unseen}");
    // A session's own hidden set does not apply: the stateless request has no session.
    let hide = post(&h.root, "tools/call", Some("hide_echo"), json!({"name": "hide_echo", "arguments": {}})).await;
    assert_eq!(hide["result"]["content"][0]["text"], "changed=false", "{hide}");
}

/// One SSE stream's messages, read as they come.
struct Sse {
    response: reqwest::Response,
    buf: String,
}

impl Sse {
    async fn open(h: &Harness, token: &str, session: &str) -> Sse {
        let response = h
            .http
            .get(&h.url)
            .bearer_auth(token)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", VERSION)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        Sse { response, buf: String::new() }
    }
    /// The next message's method (within 30 seconds: keep-alive comments do not extend it).
    async fn method(&mut self) -> String {
        self.message().await["method"].as_str().unwrap_or_default().to_owned()
    }
    /// The next message (within 30 seconds).
    async fn message(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(30), self.next_message()).await.expect("a message in time")
    }
    async fn next_message(&mut self) -> Value {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let data: String = block.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).collect();
                if !data.is_empty() {
                    return serde_json::from_str(&data).unwrap();
                }
                continue;
            }
            let chunk = self.response.chunk().await.unwrap().expect("the stream goes on");
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}

#[tokio::test]
async fn a_session_that_hides_a_tool_is_told_and_no_other_is() {
    let h = start(test_server(false)).await;
    let (one, two) = (h.initialize(&h.alice).await, h.initialize(&h.alice).await);
    let (mut one_events, mut two_events) = (Sse::open(&h, &h.alice, &one).await, Sse::open(&h, &h.alice, &two).await);

    let hide = json!({"name": "hide_echo", "arguments": {}});
    let hidden = h.request(&h.alice, &one, "tools/call", hide.clone()).await;
    assert_eq!(hidden["result"]["content"][0]["text"], "changed=true", "{hidden}");
    assert_eq!(one_events.method().await, "notifications/tools/list_changed");
    let again = h.request(&h.alice, &one, "tools/call", hide).await;
    assert_eq!(again["result"]["content"][0]["text"], "changed=false", "hidden already: {again}");

    // Session one no longer lists or calls `echo`; session two does.
    assert_eq!(h.list(&h.alice, &one, "tools/list").await, ["admin_reset", "hide_echo", "show_echo", "hide_admin"]);
    assert_eq!(
        h.list(&h.alice, &two, "tools/list").await,
        ["echo", "admin_reset", "hide_echo", "show_echo", "hide_admin"]
    );
    let echo = json!({"name": "echo", "arguments": {}});
    let unknown = h.request(&h.alice, &one, "tools/call", echo.clone()).await;
    assert_eq!(unknown["error"]["message"], "invalid params: unknown tool `echo`", "{unknown}");
    assert_eq!(h.request(&h.alice, &two, "tools/call", echo.clone()).await["result"]["content"][0]["text"], "ok");

    // A change every session hears of: session two's first message is that one (it heard
    // nothing of session one's hiding), session one's next too.
    h.server.add_prompt(PromptDef::new("later", |_, _| async { Ok(GetPromptResult::new(vec![])) })).await.unwrap();
    assert_eq!(two_events.method().await, "notifications/prompts/list_changed");
    assert_eq!(one_events.method().await, "notifications/prompts/list_changed");

    // Shown again, from the server, by the session's id: session one is told.
    let control = h.server.session(&one).await.expect("session one is connected here");
    assert_eq!(control.id().as_deref(), Some(one.as_str()));
    assert!(control.show_tool("echo").await.unwrap());
    assert_eq!(one_events.method().await, "notifications/tools/list_changed");
    assert_eq!(h.request(&h.alice, &one, "tools/call", echo).await["result"]["content"][0]["text"], "ok");
    assert!(h.server.session("no-such-session").await.is_none());
}

#[tokio::test]
async fn a_session_hides_prompts_resources_and_templates_as_if_absent() {
    let h = start(test_server(false)).await;
    let (one, two) = (h.initialize(&h.root).await, h.initialize(&h.root).await);
    let mut one_events = Sse::open(&h, &h.root, &one).await;
    let hidden = h.request(&h.root, &one, "tools/call", json!({"name": "hide_admin", "arguments": {}})).await;
    assert_eq!(hidden["result"]["content"][0]["text"], "hidden", "{hidden}");
    for expected in ["tools", "prompts", "resources", "resources"] {
        assert_eq!(one_events.method().await, format!("notifications/{expected}/list_changed"));
    }
    assert_eq!(h.list(&h.root, &one, "prompts/list").await, ["greet"]);
    assert!(h.list(&h.root, &one, "resources/list").await.is_empty());
    assert!(h.list(&h.root, &one, "resources/templates/list").await.is_empty());
    assert_eq!(h.list(&h.root, &two, "resources/templates/list").await, ["admin_files"]);
    let mut unseen = Vec::new();
    for (method, params) in requests_naming_admin_items() {
        let seen = h.request(&h.root, &two, method, params.clone()).await;
        assert!(seen["result"].is_object(), "{method}: {seen}");
        unseen.push(h.raw(&h.root, &one, method, params).await);
    }
    assert!(h.server.remove_tool("admin_reset").await);
    assert!(h.server.remove_prompt("admin_prompt").await);
    assert!(h.server.remove_resource("admin://config").await);
    assert!(h.server.remove_resource_template("admin://files/{path}").await);
    for ((method, params), unseen) in requests_naming_admin_items().into_iter().zip(unseen) {
        assert_eq!(h.raw(&h.root, &two, method, params).await, unseen, "{method}: hidden is as absent");
    }
}

/// With `hide_out_of_scope`, an item whose scopes a token lacks is unknown to it (not 403).
#[tokio::test]
async fn items_out_of_the_tokens_scopes_can_be_hidden_rather_than_refused() {
    let tool = |name: &str| ToolDef::new(name, json!({"type": "object"}), |_, _| async { text("ok") }).unwrap();
    let server = Server::builder("scoped", "1.0.0")
        .page_size(1)
        .tool(tool("read"))
        .tool(tool("purge").scopes(["mcp:admin"]))
        .prompt(PromptDef::new("audit", |_, _| async { Ok(GetPromptResult::new(vec![])) }).scopes(["mcp:admin"]))
        .hide_out_of_scope(true)
        .build()
        .unwrap();
    let h = start(server).await;
    let (alice, root) = (h.initialize(&h.alice).await, h.initialize(&h.root).await);
    assert_eq!(h.list(&h.alice, &alice, "tools/list").await, ["read"]);
    assert_eq!(h.list(&h.root, &root, "tools/list").await, ["read", "purge"]);
    assert!(h.list(&h.alice, &alice, "prompts/list").await.is_empty());
    assert_eq!(h.list(&h.root, &root, "prompts/list").await, ["audit"]);

    let purge = json!({"name": "purge", "arguments": {}});
    assert_eq!(h.request(&h.root, &root, "tools/call", purge.clone()).await["result"]["content"][0]["text"], "ok");
    // `raw` asserts 200: no 403 tells alice that `purge` exists.
    let unseen = h.raw(&h.alice, &alice, "tools/call", purge.clone()).await;
    let unseen_prompt = h.raw(&h.alice, &alice, "prompts/get", json!({"name": "audit"})).await;
    assert!(h.server.remove_tool("purge").await && h.server.remove_prompt("audit").await);
    assert_eq!(h.raw(&h.root, &root, "tools/call", purge).await, unseen, "hidden is as absent");
    assert_eq!(h.raw(&h.root, &root, "prompts/get", json!({"name": "audit"})).await, unseen_prompt);
}

/// `resources/subscribe` to a resource the predicate hides is answered as for one that does
/// not exist (the same bytes), and its updates never reach the session; nor do the updates of
/// a resource (or of a template's URI) a session hides itself, while another session is told.
#[tokio::test]
async fn updates_of_a_hidden_resource_reach_no_session_that_cannot_see_it() {
    let h = start(test_server(true)).await;
    let (alice, root, hider) = (h.initialize(&h.alice).await, h.initialize(&h.root).await, h.initialize(&h.root).await);
    let mut events = [
        Sse::open(&h, &h.alice, &alice).await,
        Sse::open(&h, &h.root, &root).await,
        Sse::open(&h, &h.root, &hider).await,
    ];
    let sessions = [(&h.alice, &alice), (&h.root, &root), (&h.root, &hider)];
    let uris = ["admin://config", "admin://files/a"];
    let mut unseen = Vec::new();
    for uri in uris {
        for (token, session) in sessions {
            let subscribed = h.raw(token, session, "resources/subscribe", json!({"uri": uri})).await;
            if *session == alice {
                unseen.push(subscribed);
            } else {
                assert!(subscribed.contains("\"result\""), "{uri}: {subscribed}");
            }
        }
    }
    let hidden = h.request(&h.root, &hider, "tools/call", json!({"name": "hide_admin", "arguments": {}})).await;
    assert_eq!(hidden["result"]["content"][0]["text"], "hidden", "{hidden}");
    for expected in ["tools", "prompts", "resources", "resources"] {
        assert_eq!(events[2].method().await, format!("notifications/{expected}/list_changed"));
    }

    for uri in uris {
        h.server.notify_resource_updated(uri).await;
    }
    // Then a change every session hears of: whoever was not told of the updates hears it next.
    h.server.add_prompt(PromptDef::new("later", |_, _| async { Ok(GetPromptResult::new(vec![])) })).await.unwrap();
    assert_eq!(events[1].method().await, "notifications/resources/updated");
    assert_eq!(events[1].method().await, "notifications/resources/updated");
    for events in &mut events {
        assert_eq!(events.method().await, "notifications/prompts/list_changed");
    }

    // Hidden is as absent: the same bytes as a subscription to what does not exist.
    assert!(h.server.remove_resource("admin://config").await);
    assert!(h.server.remove_resource_template("admin://files/{path}").await);
    for (uri, unseen) in uris.into_iter().zip(unseen) {
        assert_eq!(h.raw(&h.root, &root, "resources/subscribe", json!({"uri": uri})).await, unseen, "{uri}");
    }
}

/// 2026-07-28: a `subscriptions/listen` with `resourceSubscriptions` naming resources hidden
/// from its principal is acknowledged as one naming resources that do not exist is (the same
/// acknowledgement), and their updates (of the resource, of a template's URI) never reach it,
/// while a principal that sees them is told.
#[tokio::test]
async fn a_listen_stream_carries_no_updates_of_resources_hidden_from_its_principal() {
    let h = start(test_server(true)).await;
    let uris = ["admin://config", "admin://files/a", "other://absent"];
    let listen = |token: &str| {
        let params = json!({
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "notifications": {"promptsListChanged": true, "resourceSubscriptions": uris},
        });
        h.http
            .post(&h.url)
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "subscriptions/listen")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params}).to_string())
            .send()
    };
    let mut alice = Sse { response: listen(&h.alice).await.unwrap(), buf: String::new() };
    let mut root = Sse { response: listen(&h.root).await.unwrap(), buf: String::new() };
    let (alice_ack, root_ack) = (alice.message().await, root.message().await);
    assert_eq!(root_ack["method"], "notifications/subscriptions/acknowledged", "{root_ack}");
    assert_eq!(root_ack["params"]["notifications"]["resourceSubscriptions"], json!(uris), "{root_ack}");
    assert_eq!(alice_ack, root_ack, "hidden is acknowledged as absent is");

    for uri in uris {
        h.server.notify_resource_updated(uri).await;
    }
    // Then a change both hear of: alice, told of nothing hidden, hears it next.
    h.server.add_prompt(PromptDef::new("later", |_, _| async { Ok(GetPromptResult::new(vec![])) })).await.unwrap();
    for uri in uris {
        let updated = root.message().await;
        assert_eq!(
            (updated["method"].as_str(), updated["params"]["uri"].as_str()),
            (Some("notifications/resources/updated"), Some(uri))
        );
    }
    assert_eq!(root.method().await, "notifications/prompts/list_changed");
    let updated = alice.message().await;
    assert_eq!(updated["params"]["uri"], "other://absent", "{updated}");
    assert_eq!(alice.method().await, "notifications/prompts/list_changed");
}

/// A skill is named by its `SKILL.md` resource: hidden from a principal (here by its name, the
/// skill's), it is unknown to `skills/list`, `skills/get` and `resources/directory/read`, and
/// every file of it is unknown to `resources/list` and `resources/read`, with the bytes of what
/// does not exist; a session that hides a skill's `SKILL.md` hides the skill from itself.
#[tokio::test]
async fn a_skill_hidden_from_a_principal_is_unknown_to_it() {
    let md = |name: &str| format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody.\n");
    let (admin, greeting) = (md("admin-tools"), md("greeting"));
    let skills = mcp_server::skills::Skills::from_files([
        ("admin-tools/SKILL.md", admin.as_bytes()),
        ("admin-tools/scripts/run.sh", b"echo hi".as_slice()),
        ("greeting/SKILL.md", greeting.as_bytes()),
        ("greeting/references/TONE.md", b"Warm.".as_slice()),
    ])
    .unwrap();
    let hide = ToolDef::new("hide_greeting", json!({"type": "object"}), |_, ctx| async move {
        ctx.session().hide_resource("skill://greeting/SKILL.md").await?;
        text("hidden")
    })
    .unwrap();
    let server = Server::builder("skills-visibility", "1.0.0")
        .skills(skills)
        .tool(hide)
        .visibility(|item: Item<'_>, who: &Viewer<'_>| {
            !item.name().starts_with("admin") || who.principal().is_some_and(|p| p.has_scope("mcp:admin"))
        })
        .build()
        .unwrap();
    let h = start(server).await;
    let (alice, root) = (h.initialize(&h.alice).await, h.initialize(&h.root).await);
    let skill_names = |r: Value| -> Vec<String> {
        r["result"]["skills"]
            .as_array()
            .unwrap_or_else(|| panic!("{r}"))
            .iter()
            .map(|s| s["frontmatter"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let uris = |r: Value, member: &str| -> Vec<String> {
        r["result"][member]
            .as_array()
            .unwrap_or_else(|| panic!("{r}"))
            .iter()
            .map(|s| s["uri"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(skill_names(h.request(&h.alice, &alice, "skills/list", json!({})).await), ["greeting"]);
    assert_eq!(skill_names(h.request(&h.root, &root, "skills/list", json!({})).await), ["admin-tools", "greeting"]);
    let alice_files = uris(h.request(&h.alice, &alice, "resources/list", json!({})).await, "resources");
    assert_eq!(alice_files, ["skill://greeting/SKILL.md", "skill://greeting/references/TONE.md"]);
    let root_files = uris(h.request(&h.root, &root, "resources/list", json!({})).await, "resources");
    assert_eq!(root_files.len(), 4, "{root_files:?}");
    let dir = |uri: &str| json!({"uri": uri});
    let greeting_dir = h.request(&h.alice, &alice, "resources/directory/read", dir("skill://greeting")).await;
    assert_eq!(uris(greeting_dir, "resources"), ["skill://greeting/SKILL.md", "skill://greeting/references"]);

    // Named: answered to alice with the bytes of what does not exist (the URI aside).
    let named = [
        ("skills/get", "skill://admin-tools/SKILL.md", "skill://absent/SKILL.md"),
        ("resources/read", "skill://admin-tools/scripts/run.sh", "skill://absent/scripts/run.sh"),
        ("resources/read", "skill://admin-tools/SKILL.md", "skill://absent/SKILL.md"),
        ("resources/directory/read", "skill://admin-tools", "skill://absent"),
        ("resources/directory/read", "skill://admin-tools/scripts", "skill://absent/scripts"),
    ];
    for (method, uri, absent) in named {
        let seen = h.request(&h.root, &root, method, json!({"uri": uri})).await;
        assert!(seen["result"].is_object(), "{method} {uri}: {seen}");
        let unseen = h.raw(&h.alice, &alice, method, json!({"uri": uri})).await;
        let missing = h.raw(&h.root, &root, method, json!({"uri": absent})).await;
        assert_eq!(unseen, missing.replace(absent, uri), "{method} {uri}");
    }

    // A session hides the skill `greeting` from itself: its `SKILL.md` resource.
    let hidden = h.request(&h.root, &root, "tools/call", json!({"name": "hide_greeting", "arguments": {}})).await;
    assert_eq!(hidden["result"]["content"][0]["text"], "hidden", "{hidden}");
    assert_eq!(skill_names(h.request(&h.root, &root, "skills/list", json!({})).await), ["admin-tools"]);
    let read = h.raw(&h.root, &root, "resources/read", json!({"uri": "skill://greeting/references/TONE.md"})).await;
    assert!(read.contains("\"error\""), "{read}");
}

/// A skill nested in a visible one (a skill folder inside it) and hidden from a principal:
/// the outer skill's entry, in `skills/get` and in `skills/list`, does not list the nested
/// skill's files to that principal (they are unknown to it, as `resources/read` has them), nor
/// does `resources/directory/read` of the outer folder name the nested folder; a principal that
/// sees the nested skill gets every file.
#[tokio::test]
async fn a_nested_skill_hidden_from_a_principal_is_not_listed_in_its_outer_skill() {
    let md = |name: &str| format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody.\n");
    let (greeting, inner) = (md("greeting"), md("admin-notes"));
    let skills = mcp_server::skills::Skills::from_files([
        ("greeting/SKILL.md", greeting.as_bytes()),
        ("greeting/TONE.md", b"Warm.".as_slice()),
        ("greeting/admin-notes/SKILL.md", inner.as_bytes()),
        ("greeting/admin-notes/notes.md", b"secret".as_slice()),
    ])
    .unwrap();
    let server = Server::builder("nested-skills", "1.0.0")
        .skills(skills)
        .visibility(|item: Item<'_>, who: &Viewer<'_>| {
            !item.name().starts_with("admin") || who.principal().is_some_and(|p| p.has_scope("mcp:admin"))
        })
        .build()
        .unwrap();
    let h = start(server).await;
    let (alice, root) = (h.initialize(&h.alice).await, h.initialize(&h.root).await);
    let files = |skill: &Value| -> Vec<String> {
        skill["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("{skill}"))
            .iter()
            .map(|f| f["uri"].as_str().unwrap().to_owned())
            .collect()
    };
    let get = json!({"uri": "skill://greeting/SKILL.md"});
    let own = ["skill://greeting/SKILL.md", "skill://greeting/TONE.md"];
    let all = [
        "skill://greeting/SKILL.md",
        "skill://greeting/TONE.md",
        "skill://greeting/admin-notes/SKILL.md",
        "skill://greeting/admin-notes/notes.md",
    ];
    let alice_get = h.request(&h.alice, &alice, "skills/get", get.clone()).await;
    assert_eq!(files(&alice_get["result"]["skill"]), own, "{alice_get}");
    let root_get = h.request(&h.root, &root, "skills/get", get).await;
    assert_eq!(files(&root_get["result"]["skill"]), all, "{root_get}");

    let alice_list = h.request(&h.alice, &alice, "skills/list", json!({})).await;
    let alice_skills = alice_list["result"]["skills"].as_array().unwrap();
    assert_eq!(alice_skills.len(), 1, "{alice_list}");
    assert_eq!(files(&alice_skills[0]), own, "{alice_list}");
    let root_list = h.request(&h.root, &root, "skills/list", json!({})).await;
    assert_eq!(files(&root_list["result"]["skills"][0]), all, "{root_list}");

    let dir = json!({"uri": "skill://greeting"});
    let alice_dir = h.request(&h.alice, &alice, "resources/directory/read", dir.clone()).await;
    assert_eq!(files(&alice_dir["result"]), own, "{alice_dir}");
    let root_dir = h.request(&h.root, &root, "resources/directory/read", dir).await;
    let root_children = files(&root_dir["result"]);
    assert_eq!(root_children, [own[0], own[1], "skill://greeting/admin-notes"], "{root_dir}");
}
