//! DPoP-bound tokens at the HTTP endpoint (`AuthConfig::dpop`, RFC 9449 §7), over real
//! sockets, from an attacker's side: a replayed proof, a proof for another URL or method, for
//! another token or too old, and a token stolen without its key, are each refused. With
//! server nonces (`DpopConfig::require_nonce`, §9): a proof without a nonce, with a stale one,
//! one of another server's key or a forged one gets `use_dpop_nonce` and the current nonce.
#![cfg(feature = "auth-dpop")]

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use mcp_server::Server;
use mcp_server::mcp_transport_http::server::auth::{AuthConfig, DpopConfig, Principal, TokenError, TokenVerifier};
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_transport_http::client::oauth::DpopKey;
use reqwest::Url;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// `bound.<jkt>`: a token bound to the key of thumbprint `jkt` (`cnf.jkt`); `plain`: a bearer
/// token.
struct Tokens {
    resource: String,
}

impl TokenVerifier for Tokens {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
        Box::pin(async move {
            let mut principal = Principal {
                subject: Some("alice".to_owned()),
                audience: vec![self.resource.clone()],
                ..Principal::default()
            };
            if let Some(jkt) = token.strip_prefix("bound.") {
                principal.claims.insert("cnf".to_owned(), json!({"jkt": jkt}));
            } else if token != "plain" {
                return Err(TokenError::Invalid("unknown token".into()));
            }
            Ok(principal)
        })
    }
}

struct Harness {
    url: Url,
    http: reqwest::Client,
}

async fn start() -> Harness {
    start_with(DpopConfig::new()).await
}

async fn start_with(dpop: DpopConfig) -> Harness {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = Url::parse(&format!("http://{}/mcp", listener.local_addr().unwrap())).unwrap();
    let auth = AuthConfig::new(url.as_str(), Tokens { resource: url.to_string() }).unwrap().dpop(dpop);
    let config = HttpServerConfig::new().json_response(true).auth(auth);
    let factory = Arc::new(Server::builder("dpop-test", "1.0.0").build().unwrap());
    tokio::spawn(async move { server::serve_listener(factory, config, listener).await });
    Harness { url, http: reqwest::Client::new() }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
}

/// A nonce period in whose middle now falls (periods are counted from the epoch): now is
/// 10.5 periods after it, so no period ends within years of the test, and the nonces two
/// periods away are still after the epoch. (A period of a day ended at each midnight UTC,
/// which a test running then would straddle.)
fn period() -> Duration {
    Duration::from_secs(now() * 2 / 21)
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

impl Harness {
    /// A POST of `initialize` with `authorization` and the proof `proof`, if any.
    async fn post(&self, authorization: &str, proof: Option<&str>) -> reqwest::Response {
        let mut post = self
            .http
            .post(self.url.clone())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("authorization", authorization)
            .body(initialize().to_string());
        if let Some(proof) = proof {
            post = post.header("dpop", proof);
        }
        post.send().await.unwrap()
    }
}

/// The error of a refusal: 401 with a `DPoP` challenge of `invalid_dpop_proof`.
fn assert_refused(response: &reqwest::Response, why: &str) {
    assert_eq!(response.status(), 401, "{why}");
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with(r#"DPoP error="invalid_dpop_proof""#), "{why}: {challenge}");
}

#[tokio::test]
async fn a_bound_token_with_a_fresh_proof_per_request_is_served() {
    let h = start().await;
    let key = DpopKey::generate();
    let token = format!("bound.{}", key.thumbprint());
    for _ in 0..2 {
        let proof = key.proof("POST", &h.url, Some(&token), None);
        assert_eq!(h.post(&format!("DPoP {token}"), Some(&proof)).await.status(), 200);
    }
    // A bearer token is still a bearer token.
    assert_eq!(h.post("Bearer plain", None).await.status(), 200);
}

#[tokio::test]
async fn a_replayed_proof_is_refused() {
    let h = start().await;
    let key = DpopKey::generate();
    let token = format!("bound.{}", key.thumbprint());
    let proof = key.proof("POST", &h.url, Some(&token), None);
    assert_eq!(h.post(&format!("DPoP {token}"), Some(&proof)).await.status(), 200);
    assert_refused(&h.post(&format!("DPoP {token}"), Some(&proof)).await, "the same proof again");
}

#[tokio::test]
async fn a_proof_for_another_url_method_token_or_time_is_refused() {
    let h = start().await;
    let key = DpopKey::generate();
    let token = format!("bound.{}", key.thumbprint());
    let auth = format!("DPoP {token}");
    let other_path = h.url.join("/other").unwrap();
    let mut other_origin = h.url.clone();
    other_origin.set_host(Some("evil.example")).unwrap();
    let cases = [
        ("another path", key.proof("POST", &other_path, Some(&token), None)),
        ("another origin", key.proof("POST", &other_origin, Some(&token), None)),
        ("another method", key.proof("GET", &h.url, Some(&token), None)),
        ("another token", key.proof("POST", &h.url, Some("bound.someone-else"), None)),
        ("no token hash", key.proof("POST", &h.url, None, None)),
        ("ten minutes old", key.proof_at("POST", &h.url, Some(&token), None, now() - 600)),
        ("ten minutes ahead", key.proof_at("POST", &h.url, Some(&token), None, now() + 600)),
        ("not a JWT", "not.a.jwt".to_owned()),
    ];
    for (why, proof) in cases {
        assert_refused(&h.post(&auth, Some(&proof)).await, why);
    }
    // A proof signed by the key but with its payload changed (another method) does not verify.
    let good = key.proof("POST", &h.url, Some(&token), None);
    let mut parts: Vec<String> = good.split('.').map(str::to_owned).collect();
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut claims: Value = serde_json::from_slice(&b64.decode(&parts[1]).unwrap()).unwrap();
    claims["jti"] = json!("forged");
    parts[1] = b64.encode(claims.to_string());
    assert_refused(&h.post(&auth, Some(&parts.join("."))).await, "a tampered payload");
    // Two proofs at once are refused too.
    let response = h
        .http
        .post(h.url.clone())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("authorization", &auth)
        .header("dpop", key.proof("POST", &h.url, Some(&token), None))
        .header("dpop", key.proof("POST", &h.url, Some(&token), None))
        .body(initialize().to_string())
        .send()
        .await
        .unwrap();
    assert_refused(&response, "two proofs");
}

#[tokio::test]
async fn a_token_stolen_without_its_key_is_refused() {
    let h = start().await;
    let victim = DpopKey::generate();
    let token = format!("bound.{}", victim.thumbprint());
    let attacker = DpopKey::generate();
    // With a proof of the attacker's own key.
    let proof = attacker.proof("POST", &h.url, Some(&token), None);
    assert_refused(&h.post(&format!("DPoP {token}"), Some(&proof)).await, "the attacker's key");
    // As a bearer token, with or without a proof.
    assert_refused(&h.post(&format!("Bearer {token}"), None).await, "as a bearer token");
    assert_refused(&h.post(&format!("Bearer {token}"), Some(&proof)).await, "as a bearer token with a proof");
    // Without any proof.
    assert_refused(&h.post(&format!("DPoP {token}"), None).await, "no proof");
    // A bearer token is not made DPoP by the scheme.
    let proof = attacker.proof("POST", &h.url, Some("plain"), None);
    assert_refused(&h.post("DPoP plain", Some(&proof)).await, "a bearer token as DPoP");
}

/// The refusal of a proof for its nonce: 401 `use_dpop_nonce` with the current nonce.
fn assert_asks_for_nonce(response: &reqwest::Response, current: &str, why: &str) {
    assert_eq!(response.status(), 401, "{why}");
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with(r#"DPoP error="use_dpop_nonce""#), "{why}: {challenge}");
    assert_eq!(response.headers()["dpop-nonce"], current, "{why}");
}

#[tokio::test]
async fn with_server_nonces_a_proof_needs_the_current_nonce_and_every_answer_carries_it() {
    let period = period();
    let dpop = DpopConfig::new().require_nonce(period);
    let h = start_with(dpop.clone()).await;
    let key = DpopKey::generate();
    let token = format!("bound.{}", key.thumbprint());
    let auth = format!("DPoP {token}");
    // Without a nonce: asked for one.
    let response = h.post(&auth, Some(&key.proof("POST", &h.url, Some(&token), None))).await;
    let nonce = response.headers()["dpop-nonce"].to_str().unwrap().to_owned();
    assert_eq!(Some(nonce.as_str()), dpop.nonce().as_deref());
    assert_asks_for_nonce(&response, &nonce, "no nonce");
    // With it: served, and the answer carries the current nonce.
    let response = h.post(&auth, Some(&key.proof("POST", &h.url, Some(&token), Some(&nonce)))).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["dpop-nonce"], nonce.as_str());
    // A bearer token needs no proof, nor a nonce; its answers carry the nonce too.
    let response = h.post("Bearer plain", None).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["dpop-nonce"], nonce.as_str());
}

/// A browser client reads the nonce of a `use_dpop_nonce` challenge: the challenge of a
/// request from an origin the endpoint admits exposes `DPoP-Nonce` (CORS), not only
/// `WWW-Authenticate`.
#[tokio::test]
async fn a_browser_origin_can_read_the_nonce_it_is_asked_for() {
    let dpop = DpopConfig::new().require_nonce(period());
    let h = start_with(dpop.clone()).await;
    let key = DpopKey::generate();
    let token = format!("bound.{}", key.thumbprint());
    // Bound to loopback, the endpoint admits localhost origins.
    let origin = "http://localhost:5173";
    let response = h
        .http
        .post(h.url.clone())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("origin", origin)
        .header("authorization", format!("DPoP {token}"))
        .header("dpop", key.proof("POST", &h.url, Some(&token), None))
        .body(initialize().to_string())
        .send()
        .await
        .unwrap();
    assert_asks_for_nonce(&response, &dpop.nonce().unwrap(), "no nonce, from a browser");
    let headers = response.headers();
    assert_eq!(headers["access-control-allow-origin"], origin, "{headers:?}");
    let exposed = headers["access-control-expose-headers"].to_str().unwrap().to_ascii_lowercase();
    let exposed: Vec<&str> = exposed.split(',').map(str::trim).collect();
    assert!(exposed.contains(&"dpop-nonce") && exposed.contains(&"www-authenticate"), "{exposed:?}");
}

#[tokio::test]
async fn with_server_nonces_a_stale_foreign_or_forged_nonce_is_refused() {
    let period = period();
    let dpop = DpopConfig::new().require_nonce(period);
    let h = start_with(dpop.clone()).await;
    let key = DpopKey::generate();
    let token = format!("bound.{}", key.thumbprint());
    let auth = format!("DPoP {token}");
    let current = dpop.nonce().unwrap();
    let stale = dpop.nonce_at(SystemTime::now() - 2 * period).unwrap();
    let ahead = dpop.nonce_at(SystemTime::now() + 2 * period).unwrap();
    // Another server's nonce, current there: its key is not this server's.
    let foreign = DpopConfig::new().require_nonce(period).nonce().unwrap();
    let mut forged = current.clone();
    let last = if forged.ends_with('A') { 'B' } else { 'A' };
    forged.pop();
    forged.push(last);
    for (why, nonce) in [
        ("two periods old", stale.as_str()),
        ("two periods ahead", ahead.as_str()),
        ("another server's", foreign.as_str()),
        ("forged", forged.as_str()),
        ("empty", ""),
    ] {
        let proof = key.proof("POST", &h.url, Some(&token), Some(nonce));
        assert_asks_for_nonce(&h.post(&auth, Some(&proof)).await, &current, why);
    }
    // The nonce of the period before is still good (a nonce lives one to two periods).
    let previous = dpop.nonce_at(SystemTime::now() - period).unwrap();
    let proof = key.proof("POST", &h.url, Some(&token), Some(&previous));
    assert_eq!(h.post(&auth, Some(&proof)).await.status(), 200);
    // A good nonce does not make a replayed proof good.
    assert_refused(&h.post(&auth, Some(&proof)).await, "a replay with a good nonce");
    // Instances sharing a secret accept each other's nonces.
    let a = DpopConfig::new().require_nonce(period).nonce_secret([9; 32]);
    let b = DpopConfig::new().require_nonce(period).nonce_secret([9; 32]);
    let fleet = start_with(b).await;
    let shared = a.nonce().unwrap();
    let proof = key.proof("POST", &fleet.url, Some(&token), Some(&shared));
    assert_eq!(fleet.post(&auth, Some(&proof)).await.status(), 200);
}
