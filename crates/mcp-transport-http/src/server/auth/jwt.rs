//! [`JwtVerifier`]: access tokens that are JWTs, checked against a key set ([`JwksSource`]:
//! [`StaticJwks`], or `HttpJwks` with the `client` feature).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use super::{Principal, TokenError, TokenVerifier};

/// A set of JSON Web Keys (RFC 7517), as [`JwtVerifier`] reads them.
pub use jsonwebtoken::jwk::JwkSet;

/// Where a [`JwtVerifier`] gets the authorization server's public keys.
pub trait JwksSource: Send + Sync + 'static {
    /// The current key set. `refresh` asks for a newer one than the last (a token names a key
    /// the set lacks); a source may ignore it, or limit how often it honours it.
    fn keys(&self, refresh: bool) -> BoxFuture<'_, Result<Arc<JwkSet>, TokenError>>;
}

/// A key set given once (read from a file or configuration).
#[derive(Debug, Clone)]
pub struct StaticJwks(Arc<JwkSet>);

impl StaticJwks {
    /// The key set of a JWKS document (`{"keys": [...]}`).
    pub fn from_json(json: &str) -> Result<StaticJwks, serde_json::Error> {
        serde_json::from_str(json).map(|set| StaticJwks(Arc::new(set)))
    }
    /// A key set already read.
    pub fn new(set: JwkSet) -> StaticJwks {
        StaticJwks(Arc::new(set))
    }
}

impl JwksSource for StaticJwks {
    fn keys(&self, _refresh: bool) -> BoxFuture<'_, Result<Arc<JwkSet>, TokenError>> {
        let set = self.0.clone();
        Box::pin(async move { Ok(set) })
    }
}

/// Verifies JWT access tokens (RFC 9068) against the keys of a [`JwksSource`]: the header
/// `typ` `at+jwt` (or `application/at+jwt`, in any case; others only as
/// [`accept_typ`](JwtVerifier::accept_typ) allows), so that an ID token is no access token; the
/// signature by a key of the set, with an asymmetric algorithm that key allows (never `none`,
/// never an HMAC); `iss` the issuer; `aud` containing the resource; `exp` in the future and
/// `nbf` in the past, with a leeway (default 30 s). The [`Principal`] has `iss`, `sub`,
/// `client_id` (or `azp`), the scopes of `scope` (space-separated) or `scp`, `exp`, `aud` and
/// every claim.
pub struct JwtVerifier {
    issuer: String,
    audience: String,
    source: Box<dyn JwksSource>,
    leeway: Duration,
    /// Header `typ` values accepted besides RFC 9068's, normalized (see [`typ_name`]).
    extra_types: Vec<String>,
    /// Whether tokens without `typ` are accepted.
    untyped: bool,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("leeway", &self.leeway)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// Tokens of `issuer` for `audience` (the resource URI of [`AuthConfig::new`]), signed by
    /// a key of `source`.
    ///
    /// [`AuthConfig::new`]: super::AuthConfig::new
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>, source: impl JwksSource) -> JwtVerifier {
        JwtVerifier {
            issuer: issuer.into(),
            audience: audience.into(),
            source: Box::new(source),
            leeway: Duration::from_secs(30),
            extra_types: Vec::new(),
            untyped: false,
        }
    }
    /// The clock skew tolerated on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }
    /// Accepts tokens whose header `typ` is one of `types` (compared as `at+jwt` is: without
    /// an `application/` prefix, in any case) besides RFC 9068's `at+jwt`, for authorization
    /// servers whose JWT access tokens are typed otherwise (many say `JWT`). Weaker: the type
    /// is what tells an access token from an ID token of the same issuer, and an ID token
    /// whose `aud` is this resource (a client registered with the resource URI as its id)
    /// would then pass as an access token.
    pub fn accept_typ(mut self, types: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.extra_types.extend(types.into_iter().map(|t| typ_name(&t.into()).to_owned()));
        self
    }
    /// Accepts tokens without a header `typ` too (default: refused), for authorization servers
    /// that type nothing. Weaker, as [`accept_typ`](Self::accept_typ) is.
    pub fn accept_untyped(mut self, accept: bool) -> Self {
        self.untyped = accept;
        self
    }

    async fn verify_jwt(&self, token: &str) -> Result<Principal, TokenError> {
        use jsonwebtoken::errors::ErrorKind;
        let header = jsonwebtoken::decode_header(token).map_err(|e| TokenError::Invalid(e.to_string()))?;
        // RFC 9068 §4: an access token says so (an ID token of the same issuer must not pass).
        let typed = match &header.typ {
            Some(typ) => {
                let typ = typ_name(typ);
                typ == ACCESS_TOKEN_TYP || self.extra_types.contains(&typ)
            }
            None => self.untyped,
        };
        if !typed {
            return Err(TokenError::Invalid(format!("the token's type is {:?}, not \"at+jwt\"", header.typ)));
        }
        let mut set = self.source.keys(false).await?;
        if header.kid.as_ref().is_some_and(|kid| set.find(kid).is_none()) {
            set = self.source.keys(true).await?;
        }
        let candidates: Vec<&jsonwebtoken::jwk::Jwk> = match &header.kid {
            Some(kid) => set.find(kid).into_iter().collect(),
            None => set.keys.iter().collect(),
        };
        let mut last = TokenError::Invalid("no key of the set verifies the token".to_owned());
        for jwk in candidates.into_iter().filter(|jwk| allowed_algorithms(jwk).contains(&header.alg)) {
            let Ok(key) = jsonwebtoken::DecodingKey::from_jwk(jwk) else { continue };
            let mut validation = jsonwebtoken::Validation::new(header.alg);
            validation.leeway = self.leeway.as_secs();
            validation.validate_nbf = true;
            validation.set_audience(&[&self.audience]);
            validation.set_issuer(&[&self.issuer]);
            validation.set_required_spec_claims(&["exp", "iss", "aud"]);
            match jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation) {
                Ok(data) => return Ok(principal_of(data.claims)),
                Err(e) => {
                    last = match e.kind() {
                        ErrorKind::ExpiredSignature | ErrorKind::ImmatureSignature => TokenError::Expired,
                        ErrorKind::InvalidAudience => TokenError::WrongAudience,
                        _ => TokenError::Invalid(e.to_string()),
                    };
                    if !matches!(e.kind(), ErrorKind::InvalidSignature) {
                        // The signature held: the claims are what is wrong, whatever the key.
                        break;
                    }
                }
            }
        }
        Err(last)
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
        Box::pin(self.verify_jwt(token))
    }
    fn audience(&self) -> Option<&str> {
        Some(&self.audience)
    }
    fn expiry_leeway(&self) -> Duration {
        self.leeway
    }
}

/// The asymmetric algorithms a key may verify: the one it declares (`alg`), or those of its
/// type and curve. None for symmetric keys, and for keys meant for encryption.
fn allowed_algorithms(jwk: &jsonwebtoken::jwk::Jwk) -> Vec<jsonwebtoken::Algorithm> {
    use jsonwebtoken::Algorithm::*;
    use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, PublicKeyUse};
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return Vec::new();
    }
    let by_type: Vec<jsonwebtoken::Algorithm> = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => vec![RS256, RS384, RS512, PS256, PS384, PS512],
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => vec![ES256],
            EllipticCurve::P384 => vec![ES384],
            _ => Vec::new(),
        },
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => vec![EdDSA],
        _ => Vec::new(),
    };
    match jwk.common.key_algorithm.and_then(|a| jsonwebtoken::Algorithm::try_from(a).ok()) {
        Some(declared) => by_type.into_iter().filter(|a| *a == declared).collect(),
        None if jwk.common.key_algorithm.is_some() => Vec::new(),
        None => by_type,
    }
}

/// The `typ` of JWT access tokens (RFC 9068 §2.1), as [`typ_name`] gives it.
const ACCESS_TOKEN_TYP: &str = "at+jwt";

/// A `typ` as compared: lowercase, without the `application/` prefix (RFC 7515 §4.1.9).
fn typ_name(typ: &str) -> String {
    let typ = typ.trim().to_ascii_lowercase();
    match typ.strip_prefix("application/") {
        Some(rest) => rest.to_owned(),
        None => typ,
    }
}

/// The principal of verified claims.
pub(super) fn principal_of(claims: Map<String, Value>) -> Principal {
    let text = |key: &str| claims.get(key).and_then(Value::as_str).map(str::to_owned);
    let strings = |value: Option<&Value>| -> Vec<String> {
        match value {
            Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => Vec::new(),
        }
    };
    let scopes = strings(claims.get("scope").or_else(|| claims.get("scp")));
    let audience = match claims.get("aud") {
        Some(Value::String(s)) => vec![s.clone()],
        other => strings(other),
    };
    let expires_at = claims.get("exp").and_then(Value::as_u64).map(|s| SystemTime::UNIX_EPOCH + Duration::from_secs(s));
    Principal {
        issuer: text("iss"),
        subject: text("sub"),
        client_id: text("client_id").or_else(|| text("azp")),
        scopes,
        expires_at,
        audience,
        claims,
    }
}
