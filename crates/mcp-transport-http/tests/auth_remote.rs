//! The verifiers that ask over HTTP, against a real authorization server stand-in on a
//! socket: `HttpJwks` (fetched, cached, refreshed, bounded) and `IntrospectionVerifier`
//! (credentials, audience, cache).
#![cfg(all(feature = "auth", feature = "client"))]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use base64::Engine as _;
use futures_util::FutureExt as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_transport_http::server::auth::{HttpJwks, IntrospectionVerifier, JwtVerifier, TokenError, TokenVerifier};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::Notify;

mod support;
use support::{ISSUER, RESOURCE, TEST_JWKS, TEST_KEY, now};

fn signed(kid: &str) -> String {
    signed_by(ISSUER, kid)
}

fn signed_by(issuer: &str, kid: &str) -> String {
    let claims = json!({"iss": issuer, "aud": RESOURCE, "sub": "alice", "exp": now() + 600});
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("at+jwt".to_owned());
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

/// What a key set endpoint does after its first answer.
enum Then {
    /// Answers the set again.
    Answer,
    /// Never answers (tells `entered` when a request is in).
    Hang(Arc<Notify>),
    /// Answers 500 while `failing` holds (the first fetch too), the set otherwise.
    Fail(Arc<AtomicBool>),
}

/// A key set endpoint that answers the test set, after its first fetch as `then` says (a
/// failing one fails the first fetch too); counts its fetches.
async fn flaky_jwks(then: Then) -> (String, Arc<AtomicUsize>) {
    let fetches = Arc::new(AtomicUsize::new(0));
    let counter = fetches.clone();
    let then = Arc::new(then);
    let handler = move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        let then = then.clone();
        async move {
            match &*then {
                Then::Hang(entered) if n > 0 => {
                    entered.notify_one();
                    std::future::pending::<()>().await;
                    unreachable!()
                }
                Then::Fail(failing) if failing.load(Ordering::SeqCst) => {
                    (StatusCode::INTERNAL_SERVER_ERROR, String::new())
                }
                _ => (StatusCode::OK, TEST_JWKS.to_owned()),
            }
        }
    };
    (serve(axum::Router::new().route("/jwks", get(handler))).await, fetches)
}

/// Moves the runtime's clock `by` ahead (paused only while it moves: the fetches after it
/// run on real sockets, which a paused clock would time out at once).
async fn advance_clock(by: Duration) {
    tokio::time::pause();
    tokio::time::advance(by).await;
    tokio::time::resume();
}

#[tokio::test]
async fn a_known_key_verifies_at_once_while_a_refresh_for_an_unknown_one_hangs() {
    let entered = Arc::new(Notify::new());
    let (base, fetches) = flaky_jwks(Then::Hang(entered.clone())).await;
    // Refreshing at once is allowed, and the set is stale at once: every verification may ask
    // for a fetch.
    let jwks =
        HttpJwks::new(format!("{base}/jwks")).min_refresh_interval(Duration::ZERO).refresh_interval(Duration::ZERO);
    let verifier = Arc::new(JwtVerifier::new(ISSUER, RESOURCE, jwks));
    assert!(verifier.verify(&signed("test-key")).await.is_ok());
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
    // A token naming a key the set lacks: its refresh never ends.
    let rotated = tokio::spawn({
        let verifier = verifier.clone();
        async move { verifier.verify(&signed("rotated-key")).await }
    });
    entered.notified().await;
    // Tokens of a known key are verified with the cached set, without waiting for it.
    for _ in 0..10 {
        let verified = verifier.verify(&signed("test-key")).now_or_never();
        assert!(verified.expect("verified without waiting for the refresh").is_ok());
    }
    assert!(!rotated.is_finished());
    assert_eq!(fetches.load(Ordering::SeqCst), 2, "one fetch in flight at a time");
}

#[tokio::test]
async fn concurrent_tokens_of_unknown_keys_share_one_fetch() {
    let (base, fetches) = flaky_jwks(Then::Answer).await;
    let jwks = HttpJwks::new(format!("{base}/jwks")).min_refresh_interval(Duration::ZERO);
    let verifier = JwtVerifier::new(ISSUER, RESOURCE, jwks);
    assert!(verifier.verify(&signed("test-key")).await.is_ok());
    let tokens: Vec<String> = (0..8).map(|i| signed(&format!("unknown-{i}"))).collect();
    let verdicts = futures_util::future::join_all(tokens.iter().map(|t| verifier.verify(t))).await;
    assert!(verdicts.iter().all(|v| matches!(v, Err(TokenError::Invalid(_)))));
    assert_eq!(fetches.load(Ordering::SeqCst), 2, "one fetch for all of them");
}

#[tokio::test]
async fn a_failed_refresh_is_not_tried_again_before_the_interval_and_the_cached_set_serves_on() {
    let failing = Arc::new(AtomicBool::new(false));
    let (base, fetches) = flaky_jwks(Then::Fail(failing.clone())).await;
    let verifier = JwtVerifier::new(ISSUER, RESOURCE, HttpJwks::new(format!("{base}/jwks")));
    assert!(verifier.verify(&signed("test-key")).await.is_ok());
    failing.store(true, Ordering::SeqCst);
    advance_clock(Duration::from_secs(31)).await;
    // Past the interval: tokens of unknown keys, at once, fetch once; it fails.
    let tokens: Vec<String> = (0..5).map(|i| signed(&format!("unknown-{i}"))).collect();
    let verdicts = futures_util::future::join_all(tokens.iter().map(|t| verifier.verify(t))).await;
    assert!(verdicts.iter().all(|v| matches!(v, Err(TokenError::Invalid(_)))), "{verdicts:?}");
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
    // More of them after the failure: no fetch until the interval has passed again.
    for token in &tokens {
        assert!(matches!(verifier.verify(token).await, Err(TokenError::Invalid(_))));
    }
    assert_eq!(fetches.load(Ordering::SeqCst), 2, "a failed fetch is not tried again at once");
    // The keys fetched before serve on.
    assert!(verifier.verify(&signed("test-key")).await.is_ok());
    failing.store(false, Ordering::SeqCst);
    advance_clock(Duration::from_secs(31)).await;
    assert!(verifier.verify(&tokens[0]).await.is_err());
    assert_eq!(fetches.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn without_any_key_set_a_failed_fetch_is_not_tried_again_before_the_interval() {
    let failing = Arc::new(AtomicBool::new(true));
    let (base, fetches) = flaky_jwks(Then::Fail(failing.clone())).await;
    let verifier = JwtVerifier::new(ISSUER, RESOURCE, HttpJwks::new(format!("{base}/jwks")));
    for _ in 0..5 {
        assert!(matches!(verifier.verify(&signed("test-key")).await, Err(TokenError::Unavailable(_))));
    }
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
    failing.store(false, Ordering::SeqCst);
    advance_clock(Duration::from_secs(31)).await;
    assert!(verifier.verify(&signed("test-key")).await.is_ok());
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
}

/// An authorization server whose metadata is at `metadata_path` (the others answer 404),
/// naming as issuer `named` (its base URL followed by `issuer_path` when `None`) and as
/// `jwks_uri` `jwks_uri` (its `/jwks` when `None`); its base URL and the requests it got,
/// by path.
async fn issuer_server(
    metadata_path: &'static str,
    issuer_path: &'static str,
    named: Option<&'static str>,
    jwks_uri: Option<&'static str>,
) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = requests.clone();
    let issuer = named.map_or(format!("{base}{issuer_path}"), str::to_owned);
    let jwks_uri = jwks_uri.map_or(format!("{base}/jwks"), str::to_owned);
    let handler = move |uri: axum::http::Uri| {
        seen.lock().unwrap().push(uri.path().to_owned());
        let answer = match uri.path() {
            "/jwks" => (StatusCode::OK, TEST_JWKS.to_owned()),
            path if path == metadata_path => {
                (StatusCode::OK, json!({"issuer": issuer, "jwks_uri": jwks_uri, "token_endpoint": "x"}).to_string())
            }
            _ => (StatusCode::NOT_FOUND, String::new()),
        };
        async move { answer }
    };
    tokio::spawn(async move { axum::serve(listener, axum::Router::new().fallback(handler)).await });
    (base, requests)
}

#[tokio::test]
async fn a_verifier_built_from_the_issuer_alone_finds_its_keys_through_rfc_8414_metadata() {
    let (base, requests) = issuer_server("/.well-known/oauth-authorization-server", "", None, None).await;
    let verifier = JwtVerifier::from_issuer(base.clone(), RESOURCE).unwrap();
    assert!(requests.lock().unwrap().is_empty(), "nothing is fetched before a token comes");
    let principal = verifier.verify(&signed_by(&base, "test-key")).await.unwrap();
    assert_eq!(principal.subject.as_deref(), Some("alice"));
    assert_eq!(*requests.lock().unwrap(), ["/.well-known/oauth-authorization-server", "/jwks"]);
    // Tokens of another issuer are refused as before.
    assert!(matches!(verifier.verify(&signed("test-key")).await, Err(TokenError::Invalid(_))));
}

#[tokio::test]
async fn an_issuer_with_a_path_is_discovered_in_the_specifications_order() {
    let (base, requests) = issuer_server("/tenant/.well-known/openid-configuration", "/tenant", None, None).await;
    let issuer = format!("{base}/tenant");
    let verifier = JwtVerifier::from_issuer(issuer.clone(), RESOURCE).unwrap();
    assert!(verifier.verify(&signed_by(&issuer, "test-key")).await.is_ok());
    assert_eq!(
        *requests.lock().unwrap(),
        [
            "/.well-known/oauth-authorization-server/tenant",
            "/.well-known/openid-configuration/tenant",
            "/tenant/.well-known/openid-configuration",
            "/jwks"
        ]
    );
    // OpenID Connect discovery at the root, for an issuer without a path.
    let (base, requests) = issuer_server("/.well-known/openid-configuration", "", None, None).await;
    let verifier = JwtVerifier::from_issuer(base.clone(), RESOURCE).unwrap();
    assert!(verifier.verify(&signed_by(&base, "test-key")).await.is_ok());
    assert_eq!(
        *requests.lock().unwrap(),
        ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/jwks"]
    );
}

#[tokio::test]
async fn discovered_metadata_must_name_the_issuer_exactly_and_an_https_jwks_uri() {
    // Metadata of another issuer (here, the same with a trailing slash): no keys are fetched.
    let (base, requests) = issuer_server("/.well-known/oauth-authorization-server", "/", None, None).await;
    let verifier = JwtVerifier::from_issuer(base.clone(), RESOURCE).unwrap();
    assert!(matches!(verifier.verify(&signed_by(&base, "test-key")).await, Err(TokenError::Unavailable(_))));
    assert_eq!(*requests.lock().unwrap(), ["/.well-known/oauth-authorization-server"]);
    let (base, requests) =
        issuer_server("/.well-known/oauth-authorization-server", "", Some("https://evil.example.com"), None).await;
    let verifier = JwtVerifier::from_issuer(base.clone(), RESOURCE).unwrap();
    assert!(matches!(verifier.verify(&signed_by(&base, "test-key")).await, Err(TokenError::Unavailable(_))));
    assert_eq!(*requests.lock().unwrap(), ["/.well-known/oauth-authorization-server"]);
    // A jwks_uri in plain HTTP off the loopback host is not fetched.
    let plain = Some("http://keys.example.com/jwks");
    let (base, requests) = issuer_server("/.well-known/oauth-authorization-server", "", None, plain).await;
    let verifier = JwtVerifier::from_issuer(base.clone(), RESOURCE).unwrap();
    assert!(matches!(verifier.verify(&signed_by(&base, "test-key")).await, Err(TokenError::Unavailable(_))));
    assert_eq!(*requests.lock().unwrap(), ["/.well-known/oauth-authorization-server"]);
    // An issuer in plain HTTP off the loopback host, or with a query, is refused at once.
    for issuer in ["http://auth.example.com", "https://auth.example.com?x=1", "https://auth.example.com#f", "/auth"] {
        assert!(JwtVerifier::from_issuer(issuer, RESOURCE).is_err(), "{issuer}");
    }
    for issuer in ["https://auth.example.com", "http://localhost:9000", "http://[::1]:9000/tenant"] {
        assert!(HttpJwks::discover(issuer).is_ok(), "{issuer}");
    }
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
                "good" => {
                    json!({"active": true, "iss": ISSUER, "sub": "alice", "client_id": "app", "scope": "mcp:read",
                    "aud": [RESOURCE], "exp": now() + 600})
                }
                "other-audience" => json!({"active": true, "sub": "alice", "aud": "https://other.example.com"}),
                "no-audience" => json!({"active": true, "sub": "alice"}),
                "not-yet-valid" => json!({"active": true, "sub": "alice", "aud": RESOURCE, "nbf": now() + 600}),
                "valid-in-a-moment" => json!({"active": true, "sub": "alice", "aud": RESOURCE, "nbf": now() + 5}),
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
    assert_eq!(principal.issuer.as_deref(), Some(ISSUER));
    assert!(verifier.verify("good").await.is_ok());
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the answer is cached");
    assert!(matches!(verifier.verify("revoked").await, Err(TokenError::Invalid(_))));
    assert!(matches!(verifier.verify("other-audience").await, Err(TokenError::WrongAudience)));
    assert!(matches!(verifier.verify("no-audience").await, Err(TokenError::WrongAudience)));
    // A token not valid yet (`nbf` ahead, past the clock skew tolerated) is refused.
    assert!(matches!(verifier.verify("not-yet-valid").await, Err(TokenError::Expired)));
    assert!(verifier.verify("valid-in-a-moment").await.is_ok());
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
