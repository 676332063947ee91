//! `JwtVerifier` against tokens signed here with a fixed P-256 test key: what it accepts, and
//! each thing it refuses.
#![cfg(feature = "auth")]

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_transport_http::server::auth::{JwtVerifier, StaticJwks, TokenError, TokenVerifier};
use serde_json::{Value, json};

mod support;
use support::{ISSUER, RESOURCE, TEST_JWKS, TEST_KEY, now};

fn verifier() -> JwtVerifier {
    JwtVerifier::new(ISSUER, RESOURCE, StaticJwks::from_json(TEST_JWKS).unwrap())
}

/// Claims that pass, changed by `edit`.
fn claims(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
    let mut claims = json!({
        "iss": ISSUER, "aud": RESOURCE, "sub": "alice", "client_id": "client-1",
        "scope": "mcp:read mcp:write", "exp": now() + 600, "iat": now(),
    });
    edit(claims.as_object_mut().unwrap());
    claims
}

/// An access token (RFC 9068: `typ` `at+jwt`) of the test key.
fn signed(claims: &Value) -> String {
    typed(Some("at+jwt"), claims)
}

/// A token of the test key with the header `typ`.
fn typed(typ: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.typ = typ.map(str::to_owned);
    header.kid = Some("test-key".to_owned());
    let key = EncodingKey::from_ec_pem(TEST_KEY.as_bytes()).unwrap();
    jsonwebtoken::encode(&header, claims, &key).unwrap()
}

async fn verify(token: &str) -> Result<mcp_transport_http::server::auth::Principal, TokenError> {
    verifier().verify(token).await
}

#[tokio::test]
async fn a_valid_token_gives_its_principal() {
    let principal = verify(&signed(&claims(|_| {}))).await.unwrap();
    assert_eq!(principal.subject.as_deref(), Some("alice"));
    assert_eq!(principal.client_id.as_deref(), Some("client-1"));
    assert_eq!(principal.scopes, ["mcp:read", "mcp:write"]);
    assert_eq!(principal.audience, [RESOURCE]);
    assert!(principal.expires_at.unwrap() > SystemTime::now());
    assert_eq!(principal.claims["iss"], ISSUER);
    assert_eq!(principal.issuer.as_deref(), Some(ISSUER));
    // An audience list that names the resource, and `scp` for the scopes, do too.
    let listed = claims(|c| {
        c.insert("aud".into(), json!(["https://other.example.com", RESOURCE]));
        c.remove("scope");
        c.insert("scp".into(), json!(["mcp:read"]));
    });
    assert_eq!(verify(&signed(&listed)).await.unwrap().scopes, ["mcp:read"]);
}

#[tokio::test]
async fn an_id_token_whose_audience_is_the_resource_is_refused() {
    // An OpenID provider's ID token (`typ` `JWT`, or none) for a client whose id is the
    // resource URI: signed by the same key, naming the issuer and the resource.
    let id_token = claims(|c| {
        c.insert("azp".into(), json!(RESOURCE));
        c.insert("nonce".into(), json!("n-0S6_WzA2Mj"));
    });
    for typ in [Some("JWT"), None, Some("id_token+jwt"), Some("at+jwt+other")] {
        assert!(matches!(verify(&typed(typ, &id_token)).await, Err(TokenError::Invalid(_))), "{typ:?}");
    }
    // RFC 9068's type, with or without its `application/` prefix, in any case.
    for typ in ["at+jwt", "application/at+jwt", "AT+JWT", "Application/At+JWT"] {
        assert!(verify(&typed(Some(typ), &claims(|_| {}))).await.is_ok(), "{typ}");
    }
    // Opted in, for providers whose access tokens are typed otherwise (weaker).
    let lenient = verifier().accept_typ(["JWT"]);
    assert!(lenient.verify(&typed(Some("jwt"), &id_token)).await.is_ok());
    assert!(lenient.verify(&typed(None, &id_token)).await.is_err());
    let untyped = verifier().accept_untyped(true);
    assert!(untyped.verify(&typed(None, &id_token)).await.is_ok());
    assert!(untyped.verify(&typed(Some("JWT"), &id_token)).await.is_err());
}

#[tokio::test]
async fn expired_and_not_yet_valid_tokens_are_refused() {
    let expired = claims(|c| {
        c.insert("exp".into(), json!(now() - 120));
    });
    assert!(matches!(verify(&signed(&expired)).await, Err(TokenError::Expired)));
    let early = claims(|c| {
        c.insert("nbf".into(), json!(now() + 120));
    });
    assert!(matches!(verify(&signed(&early)).await, Err(TokenError::Expired)));
    // Within the leeway, a token just past its expiry passes.
    let skewed = claims(|c| {
        c.insert("exp".into(), json!(now() - 5));
    });
    assert!(verify(&signed(&skewed)).await.is_ok());
    let strict = verifier().leeway(Duration::ZERO);
    assert!(strict.verify(&signed(&skewed)).await.is_err());
}

#[tokio::test]
async fn a_token_for_another_audience_or_of_another_issuer_is_refused() {
    let other_audience = claims(|c| {
        c.insert("aud".into(), json!("https://other.example.com/mcp"));
    });
    assert!(matches!(verify(&signed(&other_audience)).await, Err(TokenError::WrongAudience)));
    let no_audience = claims(|c| {
        c.remove("aud");
    });
    assert!(verify(&signed(&no_audience)).await.is_err());
    let other_issuer = claims(|c| {
        c.insert("iss".into(), json!("https://evil.example.com"));
    });
    assert!(matches!(verify(&signed(&other_issuer)).await, Err(TokenError::Invalid(_))));
}

#[tokio::test]
async fn unsigned_and_hmac_tokens_are_refused() {
    let claims = claims(|_| {});
    let part = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    let none = format!("{}.{}.", part(&json!({"alg": "none", "typ": "at+jwt", "kid": "test-key"})), part(&claims));
    assert!(matches!(verify(&none).await, Err(TokenError::Invalid(_))));
    // HS256 keyed with the public key's text (the algorithm confusion attack), and with any
    // other secret.
    for secret in [TEST_JWKS.as_bytes(), b"secret".as_slice()] {
        let mut header = Header::new(Algorithm::HS256);
        header.typ = Some("at+jwt".to_owned());
        header.kid = Some("test-key".to_owned());
        let token = jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(secret)).unwrap();
        assert!(matches!(verify(&token).await, Err(TokenError::Invalid(_))));
    }
}

#[tokio::test]
async fn a_token_of_an_unknown_key_or_tampered_with_is_refused() {
    let claims = claims(|_| {});
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("at+jwt".to_owned());
    header.kid = Some("another-key".to_owned());
    let key = EncodingKey::from_ec_pem(TEST_KEY.as_bytes()).unwrap();
    let unknown = jsonwebtoken::encode(&header, &claims, &key).unwrap();
    assert!(matches!(verify(&unknown).await, Err(TokenError::Invalid(_))));
    let token = signed(&claims);
    let (head, signature) = token.rsplit_once('.').unwrap();
    let (header_part, _) = head.split_once('.').unwrap();
    let forged = claims.clone().as_object().cloned().map(|mut c| {
        c.insert("sub".into(), json!("mallory"));
        c
    });
    let tampered = format!("{header_part}.{}.{signature}", URL_SAFE_NO_PAD.encode(Value::from(forged).to_string()));
    assert!(matches!(verify(&tampered).await, Err(TokenError::Invalid(_))));
    assert!(matches!(verify("not-a-jwt").await, Err(TokenError::Invalid(_))));
}

#[tokio::test]
async fn a_symmetric_key_in_the_set_verifies_nothing() {
    let jwks = r#"{"keys": [{"kty": "oct", "kid": "test-key", "k": "c2VjcmV0"}]}"#;
    let verifier = JwtVerifier::new(ISSUER, RESOURCE, StaticJwks::from_json(jwks).unwrap());
    let mut header = Header::new(Algorithm::HS256);
    header.typ = Some("at+jwt".to_owned());
    header.kid = Some("test-key".to_owned());
    let token = jsonwebtoken::encode(&header, &claims(|_| {}), &EncodingKey::from_secret(b"secret")).unwrap();
    assert!(matches!(verifier.verify(&token).await, Err(TokenError::Invalid(_))));
}
