//! DPoP (RFC 9449, feature `dpop`): the client's key and the proofs it signs, and the nonces
//! servers hand out.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_jsonrpc::sync::MutexExt as _;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use sha2::{Digest as _, Sha256};
use url::Url;

use super::pkce::random_token;

/// How many servers' nonces a client keeps (an authorization server and a resource, in
/// practice); past it, the oldest are forgotten (a server asks again).
const MAX_NONCES: usize = 16;

/// A client's DPoP key: a P-256 key pair, made for the client ([`DpopKey::generate`], in
/// memory only) or given ([`DpopKey::from_pkcs8_pem`]), whose public half goes in each
/// proof's header and whose thumbprint the tokens issued to it are bound to (`cnf.jkt`).
/// Proofs are `ES256`.
#[derive(Clone)]
pub struct DpopKey {
    signing: SigningKey,
    /// The public key as a JWK (`kty`, `crv`, `x`, `y`).
    jwk: serde_json::Value,
    /// Its RFC 7638 SHA-256 thumbprint, base64url.
    thumbprint: String,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey").field("thumbprint", &self.thumbprint).finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new key, from the operating system's random number generator.
    pub fn generate() -> Self {
        let signing = loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).expect("the operating system's random number generator failed");
            // A scalar of zero or beyond the group order (odds about 2^-32) is drawn again.
            if let Ok(key) = SigningKey::from_slice(&bytes) {
                break key;
            }
        };
        Self::from_signing(signing)
    }

    /// The P-256 private key of a PKCS#8 PEM document (`-----BEGIN PRIVATE KEY-----`, as
    /// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256` writes it): a key that
    /// outlives the process, so that DPoP-bound tokens kept in a
    /// [`TokenStore`](super::TokenStore) stay usable after a restart.
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, super::OAuthError> {
        use p256::pkcs8::DecodePrivateKey as _;
        let signing = SigningKey::from_pkcs8_pem(pem)
            .map_err(|e| super::OAuthError::InvalidKey(format!("not a P-256 PKCS#8 PEM private key: {e}")))?;
        Ok(Self::from_signing(signing))
    }

    fn from_signing(signing: SigningKey) -> Self {
        let point = signing.verifying_key().to_encoded_point(false);
        let (x, y) = (
            URL_SAFE_NO_PAD.encode(point.x().expect("an uncompressed point has x")),
            URL_SAFE_NO_PAD.encode(point.y().expect("an uncompressed point has y")),
        );
        // RFC 7638: the required members, in lexicographic order, without whitespace.
        let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        let thumbprint = URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()));
        let jwk = serde_json::json!({"kty": "EC", "crv": "P-256", "x": x, "y": y});
        DpopKey { signing, jwk, thumbprint }
    }

    /// The RFC 7638 SHA-256 thumbprint of the public key (what a bound token's `cnf.jkt` is).
    pub fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// A proof for one HTTP request (RFC 9449 §4.2): `htm` the method, `htu` the URL without
    /// query and fragment, `iat` now, a random `jti`; `ath` (the access token's SHA-256) when
    /// the request carries one, `nonce` when the server gave one.
    pub fn proof(&self, method: &str, url: &Url, access_token: Option<&str>, nonce: Option<&str>) -> String {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        self.proof_at(method, url, access_token, nonce, now)
    }

    /// [`DpopKey::proof`] as if made at `iat` (seconds since the Unix epoch).
    pub fn proof_at(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
        nonce: Option<&str>,
        iat: u64,
    ) -> String {
        let header = serde_json::json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let mut claims = serde_json::json!({
            "jti": random_token(),
            "htm": method,
            "htu": htu(url),
            "iat": iat,
        });
        if let Some(token) = access_token {
            claims["ath"] = URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())).into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let signing_input =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signature: Signature = self.signing.sign(signing_input.as_bytes());
        format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }
}

/// A proof's `htu`: the URL without its query and fragment (RFC 9449 §4.2).
pub(crate) fn htu(url: &Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// Which kind of server gave a nonce. An authorization server and a resource may share an
/// origin, and RFC 9449 gives each its own nonces (§8 for the authorization server, §9 for the
/// resource): one's nonce is never sent to the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum NonceFrom {
    /// The authorization server (its token endpoint).
    AuthorizationServer,
    /// The protected resource (the MCP endpoint).
    Resource,
}

/// The client's DPoP state: its key and the last nonce of each server, by role and origin.
pub(crate) struct Dpop {
    pub(crate) key: DpopKey,
    nonces: Mutex<HashMap<(NonceFrom, String), String>>,
}

impl Dpop {
    pub(crate) fn new(key: DpopKey) -> Self {
        Dpop { key, nonces: Mutex::new(HashMap::new()) }
    }

    /// The nonce the server of role `from` at `url`'s origin gave last.
    pub(crate) fn nonce(&self, from: NonceFrom, url: &Url) -> Option<String> {
        self.nonces.lock_unpoisoned().get(&(from, url.origin().ascii_serialization())).cloned()
    }

    /// Keeps the nonce the server of role `from` at `url`'s origin gave (RFC 9449 §8, §9).
    pub(crate) fn set_nonce(&self, from: NonceFrom, url: &Url, nonce: &str) {
        let key = (from, url.origin().ascii_serialization());
        let mut nonces = self.nonces.lock_unpoisoned();
        if nonces.get(&key).is_some_and(|kept| kept == nonce) {
            return;
        }
        if nonces.len() >= MAX_NONCES && !nonces.contains_key(&key) {
            nonces.clear();
        }
        nonces.insert(key, nonce.to_owned());
    }

    /// A proof for a request to `url` (a server of role `to`), with that server's nonce.
    pub(crate) fn proof(&self, to: NonceFrom, method: &str, url: &Url, access_token: Option<&str>) -> String {
        self.key.proof(method, url, access_token, self.nonce(to, url).as_deref())
    }
}

/// Whether a `WWW-Authenticate` value is a DPoP challenge asking for a nonce
/// (`DPoP error="use_dpop_nonce"`, RFC 9449 §9).
pub(crate) fn asks_for_nonce(www_authenticate: &str) -> bool {
    super::challenge::BearerChallenge::parse_scheme(www_authenticate, "dpop")
        .is_some_and(|c| c.error.as_deref() == Some("use_dpop_nonce"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_verifies_with_the_key_in_its_header_and_binds_the_request() {
        let key = DpopKey::generate();
        let url = Url::parse("https://rs.example/mcp?x=1#f").unwrap();
        let proof = key.proof("POST", &url, Some("token"), Some("n-1"));
        let header = jsonwebtoken::decode_header(&proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = header.jwk.expect("the public key is in the header");
        assert_eq!(jwk.thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256).unwrap(), key.thumbprint());
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let decoding = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
        let claims = jsonwebtoken::decode::<serde_json::Value>(&proof, &decoding, &validation).unwrap().claims;
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://rs.example/mcp");
        assert_eq!(claims["nonce"], "n-1");
        assert_eq!(claims["ath"], URL_SAFE_NO_PAD.encode(Sha256::digest(b"token")));
        // Each proof is fresh.
        let again = jsonwebtoken::decode::<serde_json::Value>(
            &key.proof("POST", &url, Some("token"), None),
            &decoding,
            &validation,
        )
        .unwrap()
        .claims;
        assert_ne!(claims["jti"], again["jti"]);
        assert!(again.get("nonce").is_none());
        // Another key's proof does not verify with this key.
        let other = DpopKey::generate().proof("POST", &url, None, None);
        assert!(jsonwebtoken::decode::<serde_json::Value>(&other, &decoding, &validation).is_err());
    }

    #[test]
    fn a_key_is_read_from_pkcs8_pem_and_nothing_else() {
        let pem = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgs8g9hCYjWkFq36dF
u0UF63aMr3gXpU7ezOZzp2qkxJ+hRANCAAT5WxsYpOjDe6xLAdIcr1gjNf7vlPQk
Jyw7OSJfI+ZsYT9/c4mOJPKUsMCqM5EAo1uheWcYVPkBJ6OLZgK3YgS9
-----END PRIVATE KEY-----
";
        let key = DpopKey::from_pkcs8_pem(pem).unwrap();
        // The same key each time: the same thumbprint, proofs that verify with it.
        assert_eq!(DpopKey::from_pkcs8_pem(pem).unwrap().thumbprint(), key.thumbprint());
        let url = Url::parse("https://rs.example/mcp").unwrap();
        let proof = key.proof("GET", &url, None, None);
        let jwk = jsonwebtoken::decode_header(&proof).unwrap().jwk.unwrap();
        assert_eq!(jwk.thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256).unwrap(), key.thumbprint());
        for bad in ["", "not a key", &pem.replace("MIGH", "MIGG")] {
            assert!(matches!(DpopKey::from_pkcs8_pem(bad), Err(super::super::OAuthError::InvalidKey(_))), "{bad}");
        }
    }

    #[test]
    fn nonces_are_kept_per_role_and_origin_within_a_bound() {
        use NonceFrom::{AuthorizationServer as As, Resource as Rs};
        let dpop = Dpop::new(DpopKey::generate());
        let a = Url::parse("https://as.example/token").unwrap();
        dpop.set_nonce(As, &a, "n");
        assert_eq!(dpop.nonce(As, &Url::parse("https://as.example/other").unwrap()).as_deref(), Some("n"));
        assert_eq!(dpop.nonce(As, &Url::parse("https://rs.example/mcp").unwrap()), None);
        // An authorization server and a resource on one origin: each keeps its own nonce.
        let shared = Url::parse("https://one.example/mcp").unwrap();
        let token = Url::parse("https://one.example/token").unwrap();
        dpop.set_nonce(Rs, &shared, "resource's");
        dpop.set_nonce(As, &token, "authorization server's");
        assert_eq!(dpop.nonce(Rs, &shared).as_deref(), Some("resource's"));
        assert_eq!(dpop.nonce(As, &token).as_deref(), Some("authorization server's"));
        let proof = dpop.proof(Rs, "POST", &shared, Some("t"));
        let payload = URL_SAFE_NO_PAD.decode(proof.split('.').nth(1).unwrap()).unwrap();
        let claims: serde_json::Value = serde_json::from_slice(&payload).unwrap();
        assert_eq!(claims["nonce"], "resource's");
        for i in 0..(MAX_NONCES * 2) {
            dpop.set_nonce(Rs, &Url::parse(&format!("https://h{i}.example/")).unwrap(), "x");
        }
        assert!(dpop.nonces.lock_unpoisoned().len() <= MAX_NONCES);
        assert!(asks_for_nonce(r#"DPoP error="use_dpop_nonce", resource_metadata="x""#));
        assert!(!asks_for_nonce(r#"Bearer error="use_dpop_nonce""#));
        assert!(!asks_for_nonce(r#"DPoP error="invalid_token""#));
    }
}
