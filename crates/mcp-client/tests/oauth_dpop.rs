//! DPoP nonces (RFC 9449 §8, §9) over real sockets: an authorization server and a resource
//! server that each hand out a new `DPoP-Nonce` with every answer, a 200 included, and refuse
//! a proof that carries any but their current one. The client keeps each server's nonce apart
//! and takes the new one from every answer, so that after the first round trip with each
//! server no proof of it is refused. And the client against this SDK's own endpoint that
//! requires nonces (`DpopConfig::require_nonce`): its first 401 already carries the nonce, so
//! no proof is refused.
#![cfg(feature = "dpop")]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use futures_util::future::BoxFuture;
use mcp_client::ClientBuilder;
use mcp_client::http::HttpClientConfig;
use mcp_client::http::oauth::{DpopKey, FileTokenStore, OAuthClient, OAuthConfig};
use mcp_client::http::reqwest::Url;
use mcp_server::mcp_transport_http::server::HttpServerConfig;
use mcp_server::mcp_transport_http::server::auth::{AuthConfig, DpopConfig, Principal, TokenError, TokenVerifier};
use mcp_server::{Server, ToolDef};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tokio::net::TcpListener;

const STEP: Duration = Duration::from_secs(30);

/// One server's nonces: the current one, how many were handed out, and the proofs refused
/// for carrying another (or none).
#[derive(Default)]
struct Nonces {
    prefix: &'static str,
    issued: u64,
    refused: Vec<Option<String>>,
    /// The nonce of every proof received, in order.
    received: Vec<Option<String>>,
}

impl Nonces {
    fn current(&self) -> String {
        format!("{}-{}", self.prefix, self.issued)
    }

    /// Whether `proof` carries the current nonce; remembers what it carried.
    fn check(&mut self, proof: Option<&str>) -> bool {
        let nonce = proof.and_then(nonce_of);
        self.received.push(nonce.clone());
        let ok = self.issued > 0 && nonce.as_deref() == Some(self.current().as_str());
        if !ok {
            self.refused.push(nonce);
        }
        ok
    }

    /// A new nonce, the old one no longer accepted.
    fn rotate(&mut self) -> String {
        self.issued += 1;
        self.current()
    }
}

/// The `nonce` claim of a DPoP proof.
fn nonce_of(proof: &str) -> Option<String> {
    let claims = proof.split('.').nth(1)?;
    let claims: Value =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(claims).ok()?).ok()?;
    claims["nonce"].as_str().map(str::to_owned)
}

/// The RFC 7638 thumbprint of the key in a proof's header.
fn thumbprint(proof: &str) -> String {
    use sha2::Digest as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header: Value = serde_json::from_slice(&b64.decode(proof.split('.').next().unwrap()).unwrap()).unwrap();
    let jwk = &header["jwk"];
    let canonical = format!(
        r#"{{"crv":"{}","kty":"{}","x":"{}","y":"{}"}}"#,
        jwk["crv"].as_str().unwrap(),
        jwk["kty"].as_str().unwrap(),
        jwk["x"].as_str().unwrap(),
        jwk["y"].as_str().unwrap()
    );
    b64.encode(sha2::Sha256::digest(canonical.as_bytes()))
}

#[derive(Clone)]
struct World {
    as_base: String,
    rs_addr: SocketAddr,
    as_nonces: Arc<Mutex<Nonces>>,
    rs_nonces: Arc<Mutex<Nonces>>,
    /// The access tokens issued.
    tokens: Arc<Mutex<HashMap<String, ()>>>,
    /// The grant type of each token request.
    grants: Arc<Mutex<Vec<String>>>,
}

fn json_body(status: StatusCode, value: Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

async fn as_metadata(State(w): State<World>) -> Response {
    let base = &w.as_base;
    json_body(
        StatusCode::OK,
        json!({
            "issuer": base,
            "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"),
            "grant_types_supported": ["client_credentials", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "dpop_signing_alg_values_supported": ["ES256"],
        }),
    )
}

/// The token endpoint: `use_dpop_nonce` for a proof without the current nonce; a DPoP-bound
/// token and a new nonce otherwise.
async fn as_token(State(w): State<World>, headers: HeaderMap, body: Bytes) -> Response {
    let form = Url::parse(&format!("http://x/?{}", String::from_utf8_lossy(&body))).unwrap();
    let grant = form.query_pairs().find(|(k, _)| k == "grant_type").map(|(_, v)| v.into_owned());
    w.grants.lock().unwrap().push(grant.unwrap_or_default());
    let proof = headers.get("dpop").and_then(|v| v.to_str().ok());
    let mut nonces = w.as_nonces.lock().unwrap();
    if !nonces.check(proof) {
        let nonce = if nonces.issued == 0 { nonces.rotate() } else { nonces.current() };
        let mut response = json_body(StatusCode::BAD_REQUEST, json!({"error": "use_dpop_nonce"}));
        response.headers_mut().insert("dpop-nonce", nonce.parse().unwrap());
        return response;
    }
    let nonce = nonces.rotate();
    // Bound to the key of the proof (`bound.<jkt>.<n>`: what the endpoint's verifier reads).
    let access = format!("bound.{}.{}", thumbprint(proof.unwrap()), nonces.issued);
    w.tokens.lock().unwrap().insert(access.clone(), ());
    let mut response = json_body(
        StatusCode::OK,
        // Expiring at once: every use refreshes first, so every request of the client makes
        // a token request too.
        json!({"access_token": access, "token_type": "DPoP", "expires_in": 1, "refresh_token": format!("rt-{access}")}),
    );
    response.headers_mut().insert("dpop-nonce", nonce.parse().unwrap());
    response
}

/// The resource's gate: a DPoP token the authorization server issued, with a proof carrying
/// the resource's current nonce; each answer let through carries a new nonce. No GET stream
/// (405), so that the client's requests come one at a time.
async fn rs_gate(State(w): State<World>, request: Request, next: Next) -> Response {
    if request.method() == Method::GET {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("DPoP "))
        .map(str::to_owned);
    if !token.is_some_and(|t| w.tokens.lock().unwrap().contains_key(&t)) {
        let metadata = format!("http://{}/.well-known/oauth-protected-resource/mcp", w.rs_addr);
        let challenge = format!("Bearer resource_metadata=\"{metadata}\"");
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response();
    }
    let proof = request.headers().get("dpop").and_then(|v| v.to_str().ok());
    {
        let mut nonces = w.rs_nonces.lock().unwrap();
        if !nonces.check(proof) {
            let nonce = if nonces.issued == 0 { nonces.rotate() } else { nonces.current() };
            let challenge = "DPoP error=\"use_dpop_nonce\", error_description=\"a nonce is required\"";
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, challenge.to_owned()), ("dpop-nonce".parse().unwrap(), nonce)],
            )
                .into_response();
        }
    }
    let mut response = next.run(request).await;
    let nonce = w.rs_nonces.lock().unwrap().rotate();
    response.headers_mut().insert("dpop-nonce", nonce.parse().unwrap());
    response
}

async fn rs_metadata(State(w): State<World>) -> Response {
    json_body(
        StatusCode::OK,
        json!({"resource": format!("http://{}/mcp", w.rs_addr), "authorization_servers": [w.as_base]}),
    )
}

/// The world of an authorization server at `as_base` and a resource at `rs_addr`.
fn world(as_base: String, rs_addr: SocketAddr) -> World {
    World {
        as_base,
        rs_addr,
        as_nonces: Arc::new(Mutex::new(Nonces { prefix: "as", ..Nonces::default() })),
        rs_nonces: Arc::new(Mutex::new(Nonces { prefix: "rs", ..Nonces::default() })),
        tokens: Arc::default(),
        grants: Arc::default(),
    }
}

/// The authorization server's routes.
fn authorization_routes(w: &World) -> Router {
    Router::new()
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route("/token", post(as_token))
        .with_state(w.clone())
}

/// The authorization server alone, for a resource at `rs_addr`.
async fn start_as(rs_listener: &TcpListener) -> World {
    let as_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let w = world(format!("http://{}", as_listener.local_addr().unwrap()), rs_listener.local_addr().unwrap());
    let authorization = authorization_routes(&w);
    tokio::spawn(async move { axum::serve(as_listener, authorization).await });
    w
}

fn echo_server() -> Server {
    let echo = ToolDef::new("echo", json!({"type": "object"}), |_, _| async {
        Ok(CallToolResult::success(vec![ContentBlock::text("echoed")]))
    })
    .unwrap();
    Server::builder("protected", "1.0.0").tool(echo).build().unwrap()
}

async fn start() -> World {
    let rs_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let w = start_as(&rs_listener).await;
    serve_resource(&w, rs_listener, Router::new());
    w
}

/// The resource on `rs_listener`, beside `more` routes.
fn serve_resource(w: &World, rs_listener: TcpListener, more: Router) {
    let mcp = echo_server()
        .http_router(HttpServerConfig::new().json_response(true))
        .layer(axum::middleware::from_fn_with_state(w.clone(), rs_gate));
    let resource = Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(rs_metadata))
        .with_state(w.clone())
        .merge(mcp)
        .merge(more);
    tokio::spawn(async move { axum::serve(rs_listener, resource).await });
}

/// The authorization server and the resource on one origin (one listener).
async fn start_on_one_origin() -> World {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let w = world(format!("http://{addr}"), addr);
    serve_resource(&w, listener, authorization_routes(&w));
    w
}

#[tokio::test]
async fn a_nonce_on_any_answer_replaces_the_one_the_next_proofs_to_that_server_carry() {
    each_server_gets_its_own_nonces(start().await).await;
}

/// RFC 9449 gives the authorization server (§8) and the resource (§9) their own nonces: on one
/// origin, each still gets only its own (keyed by origin alone, each overwrote the other's).
#[tokio::test]
async fn an_authorization_server_and_a_resource_on_one_origin_keep_their_own_nonces() {
    let w = start_on_one_origin().await;
    assert_eq!(w.as_base, format!("http://{}", w.rs_addr));
    each_server_gets_its_own_nonces(w).await;
}

/// Three calls through the client (each refreshing its token first); then each server refused
/// one proof only, the first, and received only its own nonces.
async fn each_server_gets_its_own_nonces(w: World) {
    let url = format!("http://{}/mcp", w.rs_addr);
    let config = OAuthConfig::client_credentials("svc", "s3cret").issuer(&w.as_base).dpop();
    let oauth = OAuthClient::new(Url::parse(&url).unwrap(), config);
    let http = HttpClientConfig::parse(&url).unwrap().auth(oauth.clone());
    let client =
        tokio::time::timeout(STEP, ClientBuilder::new("dpop", "1").session_revisions_only().connect_http_with(http))
            .await
            .unwrap()
            .unwrap();
    for _ in 0..3 {
        let result = tokio::time::timeout(STEP, client.call_tool("echo", json!({}))).await.unwrap().unwrap();
        assert_ne!(result.is_error, Some(true));
    }
    assert!(oauth.tokens().unwrap().dpop_jkt.is_some(), "the tokens are DPoP-bound");
    let as_nonces = w.as_nonces.lock().unwrap();
    let rs_nonces = w.rs_nonces.lock().unwrap();
    // One refusal by each server: the first proof, which had no nonce to carry. Every later
    // proof carried the nonce of that server's last answer, a 200 or not.
    assert_eq!(as_nonces.refused, [None], "the authorization server's refusals (received {:?})", as_nonces.received);
    assert_eq!(rs_nonces.refused, [None], "the resource's refusals (received {:?})", rs_nonces.received);
    assert!(as_nonces.issued >= 4 && rs_nonces.issued >= 4, "both rotated on every answer");
    // Each server's proofs carried only its own nonces.
    assert!(as_nonces.received.iter().flatten().all(|n| n.starts_with("as-")));
    assert!(rs_nonces.received.iter().flatten().all(|n| n.starts_with("rs-")));
}

/// The endpoint's verifier of the tokens the authorization server issued: `bound.<jkt>.<n>`,
/// bound to the key of thumbprint `jkt`.
struct Bound {
    resource: String,
    tokens: Arc<Mutex<HashMap<String, ()>>>,
}

impl TokenVerifier for Bound {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
        Box::pin(async move {
            let issued = self.tokens.lock().unwrap().contains_key(token);
            let jkt = token.strip_prefix("bound.").and_then(|t| t.split('.').next()).filter(|_| issued);
            let jkt = jkt.ok_or_else(|| TokenError::Invalid("unknown token".into()))?;
            let mut principal = Principal {
                subject: Some("svc".to_owned()),
                audience: vec![self.resource.clone()],
                ..Principal::default()
            };
            principal.claims.insert("cnf".to_owned(), json!({"jkt": jkt}));
            Ok(principal)
        })
    }
}

#[tokio::test]
async fn the_client_meets_the_nonces_of_this_sdks_endpoint() {
    let rs_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let w = start_as(&rs_listener).await;
    let url = format!("http://{}/mcp", w.rs_addr);
    // A period in whose middle now falls (10.5 periods after the epoch): the endpoint's nonce
    // does not change while the test runs (a day's period ended at each midnight UTC).
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let dpop = DpopConfig::new().require_nonce(Duration::from_secs(now * 2 / 21));
    let auth = AuthConfig::new(&url, Bound { resource: url.clone(), tokens: w.tokens.clone() })
        .unwrap()
        .authorization_server(&w.as_base)
        .dpop(dpop.clone());
    // The endpoint's answers asking for a nonce, counted.
    let asked = Arc::new(Mutex::new(0usize));
    let count = {
        let asked = asked.clone();
        move |response: Response| {
            let asked = asked.clone();
            async move {
                let challenge = response.headers().get(header::WWW_AUTHENTICATE).and_then(|v| v.to_str().ok());
                if challenge.is_some_and(|c| c.contains("use_dpop_nonce")) {
                    *asked.lock().unwrap() += 1;
                }
                response
            }
        }
    };
    let app = echo_server()
        .http_router(HttpServerConfig::new().json_response(true).auth(auth))
        .layer(axum::middleware::map_response(count));
    tokio::spawn(async move { axum::serve(rs_listener, app).await });

    let config = OAuthConfig::client_credentials("svc", "s3cret").issuer(&w.as_base).dpop();
    let oauth = OAuthClient::new(Url::parse(&url).unwrap(), config);
    let http = HttpClientConfig::parse(&url).unwrap().auth(oauth.clone());
    let client =
        tokio::time::timeout(STEP, ClientBuilder::new("dpop", "1").session_revisions_only().connect_http_with(http))
            .await
            .unwrap()
            .unwrap();
    for _ in 0..3 {
        let result = tokio::time::timeout(STEP, client.call_tool("echo", json!({}))).await.unwrap().unwrap();
        assert_ne!(result.is_error, Some(true));
    }
    assert!(oauth.tokens().unwrap().dpop_jkt.is_some(), "the tokens are DPoP-bound");
    // Every answer carries the endpoint's nonce, the first 401 (no token yet) too: every
    // proof carried it, and none was refused for its nonce.
    assert_eq!(*asked.lock().unwrap(), 0);
    client.close().await.unwrap();
}

/// A P-256 key in PKCS#8 PEM, as `openssl genpkey` writes it.
const KEY_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgs8g9hCYjWkFq36dF
u0UF63aMr3gXpU7ezOZzp2qkxJ+hRANCAAT5WxsYpOjDe6xLAdIcr1gjNf7vlPQk
Jyw7OSJfI+ZsYT9/c4mOJPKUsMCqM5EAo1uheWcYVPkBJ6OLZgK3YgS9
-----END PRIVATE KEY-----
";

#[tokio::test]
async fn a_given_key_keeps_stored_dpop_tokens_usable_by_the_next_client() {
    let w = start().await;
    let url = format!("http://{}/mcp", w.rs_addr);
    let file = std::env::temp_dir().join(format!("mcp-oauth-dpop-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let run = |config: OAuthConfig| {
        let url = url.clone();
        let w = w.clone();
        async move {
            let before = w.grants.lock().unwrap().len();
            let oauth = OAuthClient::new(Url::parse(&url).unwrap(), config);
            let http = HttpClientConfig::parse(&url).unwrap().auth(oauth.clone());
            let connect = ClientBuilder::new("dpop", "1").session_revisions_only().connect_http_with(http);
            let client = tokio::time::timeout(STEP, connect).await.unwrap().unwrap();
            tokio::time::timeout(STEP, client.call_tool("echo", json!({}))).await.unwrap().unwrap();
            client.close().await.unwrap();
            let grants = w.grants.lock().unwrap()[before..].to_vec();
            (oauth, grants)
        }
    };
    let given = || {
        OAuthConfig::client_credentials("svc", "s3cret")
            .issuer(&w.as_base)
            .dpop_key(DpopKey::from_pkcs8_pem(KEY_PEM).unwrap())
            .store(FileTokenStore::new(&file))
    };
    let (first, grants) = run(given()).await;
    assert!(grants.iter().any(|g| g == "client_credentials"), "{grants:?}");
    let thumbprint = DpopKey::from_pkcs8_pem(KEY_PEM).unwrap().thumbprint().to_owned();
    assert_eq!(first.tokens().unwrap().dpop_jkt.as_deref(), Some(thumbprint.as_str()));
    // The next client with the key: the stored tokens serve (refreshed), no new grant.
    let (_, grants) = run(given()).await;
    assert!(!grants.is_empty() && grants.iter().all(|g| g == "refresh_token"), "{grants:?}");
    // A client with a key of its own cannot use them: a new grant.
    let generated =
        OAuthConfig::client_credentials("svc", "s3cret").issuer(&w.as_base).dpop().store(FileTokenStore::new(&file));
    let (_, grants) = run(generated).await;
    assert!(grants.iter().any(|g| g == "client_credentials"), "{grants:?}");
    let _ = std::fs::remove_file(&file);
}
