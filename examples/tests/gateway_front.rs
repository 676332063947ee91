//! The `gateway` example's front door (`mcp_examples::gateway::front`) over a real socket,
//! with real access tokens (JWTs of a test key, checked by `JwtVerifier`): the items of a
//! scoped mount are seen by the tokens that carry its scope alone, and unknown to the others
//! (the error of an absent tool); tool calls are limited per principal.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_sdk::client::http::HttpClientConfig;
use mcp_sdk::client::{Client, ClientBuilder, ClientError};
use mcp_sdk::gateway::{Gateway, Source};
use mcp_sdk::server::{Server, ToolDef, ToolError};
use mcp_sdk::transport::http::server::auth::{AuthConfig, JwtVerifier, StaticJwks};
use mcp_sdk::transport::http::server::{HttpServerConfig, serve_listener};
use mcp_sdk::types::{CallToolResult, ContentBlock};
use serde_json::json;

/// A P-256 key made for tests only (PKCS #8): the test issuer's.
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

/// A server of one tool `name`.
fn one_tool(server: &str, name: &str) -> Server {
    let tool = ToolDef::new(name, json!({"type": "object"}), |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
    })
    .unwrap();
    Server::builder(server, "1.0").tool(tool).build().unwrap()
}

/// A client of `url` with `token`.
async fn client(url: &str, token: &str) -> Client {
    let config = HttpClientConfig::parse(url)
        .unwrap()
        .header("authorization".parse().unwrap(), format!("Bearer {token}").parse().unwrap());
    ClientBuilder::new("front-test", "1.0").session_revisions_only().connect_http_with(config).await.unwrap()
}

async fn names(client: &Client) -> Vec<String> {
    client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_mount_is_seen_by_its_scope_alone_and_calls_are_limited_per_principal() {
    let rate = NonZeroU32::new(3).unwrap();
    let gateway = Gateway::builder("gateway", "1.0")
        .mount("open", Source::local(one_tool("open", "read")))
        .mount("admin", Source::local(one_tool("admin", "purge")))
        .server(|builder| mcp_examples::gateway::front(builder, vec!["admin".into()], Some(rate), true))
        .build()
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let verifier = JwtVerifier::new(ISSUER, url.clone(), StaticJwks::from_json(TEST_JWKS).unwrap());
    let config = HttpServerConfig::default().auth(AuthConfig::new(url.clone(), verifier).unwrap());
    tokio::spawn(serve_listener(Arc::new(gateway), config, listener));

    let alice = client(&url, &token(&url, "alice", "read")).await;
    let root = client(&url, &token(&url, "root", "read admin")).await;
    assert_eq!(names(&alice).await, ["open_read"], "the admin mount is hidden from alice");
    assert_eq!(names(&root).await, ["open_read", "admin_purge"]);

    // A hidden tool is unknown to alice: the error of a tool that does not exist.
    let hidden = alice.call_tool("admin_purge", json!({})).await.unwrap_err();
    let absent = alice.call_tool("admin_nothing", json!({})).await.unwrap_err();
    let (ClientError::Remote(hidden), ClientError::Remote(absent)) = (hidden, absent) else { panic!("not errors") };
    assert_eq!(hidden.code, absent.code);
    assert_eq!(hidden.message.replace("admin_purge", "X"), absent.message.replace("admin_nothing", "X"));
    assert_eq!(root.call_tool("admin_purge", json!({})).await.unwrap().content, vec![ContentBlock::text("done")]);

    // Three calls a minute per principal: root has made one; two more, then refused with a
    // hint. Alice's own bucket (two calls refused above: a hidden tool is still a call) has
    // one call left.
    root.call_tool("open_read", json!({})).await.unwrap();
    root.call_tool("open_read", json!({})).await.unwrap();
    let ClientError::Remote(limited) = root.call_tool("open_read", json!({})).await.unwrap_err() else {
        panic!("not a JSON-RPC error")
    };
    assert_eq!(limited.code, -32000, "{limited:?}");
    let retry_after = limited.data.as_ref().and_then(|d| d["retryAfterMs"].as_u64()).expect("a retry hint");
    assert!(retry_after > 0 && retry_after <= 60_000, "{retry_after}");
    assert_eq!(alice.call_tool("open_read", json!({})).await.unwrap().content, vec![ContentBlock::text("done")]);
}
