//! The verifiers that ask over HTTP, against a real authorization server stand-in on a
//! socket: `HttpJwks` (fetched, cached, refreshed, bounded) and `IntrospectionVerifier`
//! (credentials, audience, cache).
#![cfg(all(feature = "auth", feature = "client"))]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_transport_http::server::auth::{HttpJwks, IntrospectionVerifier, JwtVerifier, TokenError, TokenVerifier};
use serde_json::json;
use tokio::net::TcpListener;

mod support;
use support::{ISSUER, RESOURCE, TEST_JWKS, TEST_KEY, now};

fn signed(kid: &str) -> String {
    let claims = json!({"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "exp": now() + 600});
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_pem(TEST_KEY.as_bytes()).unwrap()).unwrap()
}

/// Serves `router` on a port of its own; its base URL.
async fn serve(router: axum::Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    base
}

/// A key set endpoint counting its fetches, and a large one.
async fn jwks_server() -> (String, Arc<AtomicUsize>) {
    let fetches = Arc::new(AtomicUsize::new(0));
    let counter = fetches.clone();
    let router = axum::Router::new()
        .route(
            "/jwks",
            get(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                async { TEST_JWKS }
            }),
        )
        .route("/huge", get(|| async { format!(r#"{{"keys": [], "padding": "{}"}}"#, "x".repeat(1 << 20)) }));
    (serve(router).await, fetches)
}

#[tokio::test]
async fn a_fetched_key_set_is_cached_and_refreshed_for_unknown_keys_at_most_so_often() {
    let (base, fetches) = jwks_server().await;
    let verifier = JwtVerifier::new(ISSUER, RESOURCE, HttpJwks::new(format!("{base}/jwks")));
    assert_eq!(verifier.verify(&signed("test-key")).await.unwrap().subject.as_deref(), Some("alice"));
    assert!(verifier.verify(&signed("test-key")).await.is_ok());
    assert_eq!(fetches.load(Ordering::SeqCst), 1, "the set is cached");
    // An unknown key id right after a fetch: no new fetch.
    assert!(matches!(verifier.verify(&signed("rotated-key")).await, Err(TokenError::Invalid(_))));
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
    // Allowed to refresh at once, it fetches again for an unknown key.
    let eager = HttpJwks::new(format!("{base}/jwks")).min_refresh_interval(Duration::ZERO);
    let verifier = JwtVerifier::new(ISSUER, RESOURCE, eager);
    assert!(verifier.verify(&signed("test-key")).await.is_ok());
    assert!(verifier.verify(&signed("rotated-key")).await.is_err());
    assert_eq!(fetches.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_key_set_that_cannot_be_had_makes_tokens_unverifiable_not_invalid() {
    let (base, _) = jwks_server().await;
    let huge = JwtVerifier::new(ISSUER, RESOURCE, HttpJwks::new(format!("{base}/huge")).max_bytes(64 << 10));
    assert!(matches!(huge.verify(&signed("test-key")).await, Err(TokenError::Unavailable(_))));
    let missing = JwtVerifier::new(ISSUER, RESOURCE, HttpJwks::new(format!("{base}/nowhere")));
    assert!(matches!(missing.verify(&signed("test-key")).await, Err(TokenError::Unavailable(_))));
}

/// An introspection endpoint for the client `client-1` with secret `s=cret`, counting calls.
async fn introspection_server() -> (String, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let expected = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("client-1:s%3Dcret"));
    let handler = move |headers: HeaderMap, body: String| {
        counter.fetch_add(1, Ordering::SeqCst);
        let authorized = headers.get("authorization").is_some_and(|v| v == expected.as_str());
        let token = body.split('&').find_map(|pair| pair.strip_prefix("token=")).unwrap_or_default().to_owned();
        async move {
            if !authorized {
                return (StatusCode::UNAUTHORIZED, String::new());
            }
            let answer = match token.as_str() {
                "good" => json!({"active": true, "sub": "alice", "client_id": "app", "scope": "mcp:read",
                    "aud": [RESOURCE], "exp": now() + 600}),
                "other-audience" => json!({"active": true, "sub": "alice", "aud": "https://other.example.com"}),
                "no-audience" => json!({"active": true, "sub": "alice"}),
                _ => json!({"active": false}),
            };
            (StatusCode::OK, answer.to_string())
        }
    };
    (serve(axum::Router::new().route("/introspect", post(handler))).await, calls)
}

#[tokio::test]
async fn introspection_accepts_active_tokens_for_this_resource_and_caches_answers() {
    let (base, calls) = introspection_server().await;
    let verifier = IntrospectionVerifier::new(format!("{base}/introspect"), "client-1", "s=cret", RESOURCE);
    let principal = verifier.verify("good").await.unwrap();
    assert_eq!(principal.subject.as_deref(), Some("alice"));
    assert_eq!(principal.client_id.as_deref(), Some("app"));
    assert_eq!(principal.scopes, ["mcp:read"]);
    assert!(verifier.verify("good").await.is_ok());
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the answer is cached");
    assert!(matches!(verifier.verify("revoked").await, Err(TokenError::Invalid(_))));
    assert!(matches!(verifier.verify("other-audience").await, Err(TokenError::WrongAudience)));
    assert!(matches!(verifier.verify("no-audience").await, Err(TokenError::WrongAudience)));
    // Without a cache, every verification asks.
    let uncached = IntrospectionVerifier::new(format!("{base}/introspect"), "client-1", "s=cret", RESOURCE)
        .cache_ttl(Duration::ZERO);
    let before = calls.load(Ordering::SeqCst);
    assert!(uncached.verify("good").await.is_ok());
    assert!(uncached.verify("good").await.is_ok());
    assert_eq!(calls.load(Ordering::SeqCst), before + 2);
}

#[tokio::test]
async fn introspection_that_fails_makes_tokens_unverifiable_not_invalid() {
    let (base, _) = introspection_server().await;
    let wrong_secret = IntrospectionVerifier::new(format!("{base}/introspect"), "client-1", "guess", RESOURCE);
    assert!(matches!(wrong_secret.verify("good").await, Err(TokenError::Unavailable(_))));
}
