//! The OAuth client against authorization metadata that breaks the rules: each flow stops
//! before anything is sent to an authorization server it should not trust, the call fails
//! with the server's 401, and `OAuthClient::last_error` says why. (The well-behaved flows are
//! the official conformance suite's `auth/` scenarios, run by `cargo xtask conformance`.)
#![cfg(feature = "oauth")]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mcp_client::ClientBuilder;
use mcp_client::http::HttpClientConfig;
use mcp_client::http::oauth::{AuthorizationAgent, OAuthClient, OAuthConfig, OAuthError};
use mcp_client::http::reqwest::Url;
use serde_json::json;

/// What the stand-in server answers for its metadata.
#[derive(Clone)]
enum Metadata {
    /// Not JSON.
    Garbage,
    /// Larger than the client reads.
    Huge,
    /// For another origin's resource.
    OtherResource,
    /// An authorization server that does not list S256.
    NoPkce,
    /// An authorization server whose metadata names another issuer.
    WrongIssuer,
    /// An authorization server whose metadata names its issuer with a `/` more: not the
    /// identical string RFC 8414 §3.3 asks for.
    TrailingSlash,
    /// An authorization server without a registration endpoint or Client ID Metadata
    /// Documents (and the client has no credentials).
    NoRegistration,
}

#[derive(Clone)]
struct Stand {
    metadata: Metadata,
    addr: SocketAddr,
    /// Every path the client asked for.
    seen: Arc<Mutex<Vec<String>>>,
}

/// A JSON answer (the dev build of axum has no `Json`).
fn json_body(value: serde_json::Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

async fn mcp(State(s): State<Stand>) -> Response {
    s.seen.lock().unwrap().push("/mcp".into());
    let challenge = format!("Bearer resource_metadata=\"http://{}/.well-known/oauth-protected-resource/mcp\"", s.addr);
    (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response()
}

async fn resource_metadata(State(s): State<Stand>) -> Response {
    s.seen.lock().unwrap().push("prm".into());
    let resource = format!("http://{}/mcp", s.addr);
    let issuer = format!("http://{}/as", s.addr);
    match s.metadata {
        Metadata::Garbage => "{not json".into_response(),
        Metadata::Huge => {
            let pad = "x".repeat(300 * 1024);
            json_body(json!({"resource": resource, "authorization_servers": [issuer], "pad": pad})).into_response()
        }
        Metadata::OtherResource => {
            json_body(json!({"resource": "http://evil.example/mcp", "authorization_servers": [issuer]})).into_response()
        }
        Metadata::NoPkce | Metadata::WrongIssuer | Metadata::TrailingSlash | Metadata::NoRegistration => {
            json_body(json!({"resource": resource, "authorization_servers": [issuer]})).into_response()
        }
    }
}

async fn server_metadata(State(s): State<Stand>, uri: Uri) -> Response {
    s.seen.lock().unwrap().push(uri.path().to_owned());
    let base = format!("http://{}", s.addr);
    let issuer = match s.metadata {
        Metadata::WrongIssuer => "http://evil.example".to_owned(),
        Metadata::TrailingSlash => format!("{base}/as/"),
        _ => format!("{base}/as"),
    };
    let pkce = match s.metadata {
        Metadata::NoPkce => json!(["plain"]),
        _ => json!(["S256"]),
    };
    let mut metadata = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "code_challenge_methods_supported": pkce,
    });
    if let Metadata::NoRegistration = s.metadata {
        metadata.as_object_mut().unwrap().remove("registration_endpoint");
    }
    json_body(metadata)
}

async fn register(State(s): State<Stand>) -> Response {
    s.seen.lock().unwrap().push("/register".into());
    (StatusCode::CREATED, json_body(json!({"client_id": "c"}))).into_response()
}

/// An agent that must never be reached: each case stops before the user is asked.
struct NeverAsked;

impl AuthorizationAgent for NeverAsked {
    fn redirect_uri(&self) -> &Url {
        static URI: std::sync::OnceLock<Url> = std::sync::OnceLock::new();
        URI.get_or_init(|| Url::parse("http://127.0.0.1:1/callback").unwrap())
    }

    fn authorize(&self, url: Url) -> futures_util::future::BoxFuture<'_, Result<Url, OAuthError>> {
        panic!("the user was asked to authorize at {url}")
    }
}

/// Runs one case: connecting fails with the 401, and the OAuth client's last error says why.
async fn refused(metadata: Metadata) -> (String, Vec<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stand = Stand { metadata, addr, seen: Arc::default() };
    let app = Router::new()
        .route("/mcp", post(mcp).get(mcp))
        .route("/.well-known/oauth-protected-resource/mcp", get(resource_metadata))
        .route("/.well-known/oauth-authorization-server/as", get(server_metadata))
        .route("/register", post(register))
        .with_state(stand.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{addr}/mcp");
    let oauth = OAuthClient::new(Url::parse(&url).unwrap(), OAuthConfig::new("hostile-test", NeverAsked));
    let config = HttpClientConfig::parse(&url).unwrap().auth(oauth.clone());
    let e = ClientBuilder::new("cli", "1").session_revisions_only().connect_http_with(config).await.unwrap_err();
    let status = e.http_error().and_then(|h| h.status()).map(|s| s.as_u16());
    assert_eq!(status, Some(401), "{e}");
    let why = oauth.last_error().await.expect("the flow failed and said why");
    let seen = stand.seen.lock().unwrap().clone();
    (why, seen)
}

#[tokio::test]
async fn metadata_that_is_not_json_stops_the_flow() {
    let (why, seen) = refused(Metadata::Garbage).await;
    assert!(why.contains("invalid answer"), "{why}");
    assert!(!seen.iter().any(|p| p.contains("oauth-authorization-server")), "{seen:?}");
}

#[tokio::test]
async fn metadata_past_the_size_bound_is_refused() {
    let (why, _) = refused(Metadata::Huge).await;
    assert!(why.contains("too large"), "{why}");
}

#[tokio::test]
async fn metadata_for_another_resource_is_refused() {
    let (why, seen) = refused(Metadata::OtherResource).await;
    assert!(why.contains("evil.example"), "{why}");
    assert!(!seen.iter().any(|p| p.contains("oauth-authorization-server")), "{seen:?}");
}

#[tokio::test]
async fn an_authorization_server_without_s256_is_refused_before_registering() {
    let (why, seen) = refused(Metadata::NoPkce).await;
    assert!(why.contains("S256"), "{why}");
    assert!(!seen.contains(&"/register".to_owned()), "{seen:?}");
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_refused() {
    let (why, seen) = refused(Metadata::WrongIssuer).await;
    assert!(why.contains("issuer"), "{why}");
    assert!(!seen.contains(&"/register".to_owned()), "{seen:?}");
}

#[tokio::test]
async fn metadata_naming_its_issuer_with_another_spelling_is_refused() {
    let (why, seen) = refused(Metadata::TrailingSlash).await;
    assert!(why.contains("names issuer") && why.contains("/as/`"), "{why}");
    assert!(!seen.contains(&"/register".to_owned()), "{seen:?}");
}

#[tokio::test]
async fn no_way_to_register_stops_the_flow() {
    let (why, seen) = refused(Metadata::NoRegistration).await;
    assert!(why.contains("no way to register"), "{why}");
    assert!(!seen.iter().any(|p| p == "/register" || p == "/authorize"), "{seen:?}");
}
