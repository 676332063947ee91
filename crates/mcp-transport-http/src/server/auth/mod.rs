//! The server as an OAuth 2.1 resource server (feature `auth`): protected resource metadata
//! (RFC 9728), bearer tokens checked on every request of the endpoint, `WWW-Authenticate`
//! challenges (RFC 6750), sessions bound to the principal that created them, and a JWT
//! verifier.
//!
//! Attach an [`AuthConfig`] to the [`HttpServerConfig`](super::HttpServerConfig); every request
//! of the MCP endpoint (and of the HTTP+SSE endpoints) then needs `Authorization: Bearer`:
//!
//! | what | answer |
//! | --- | --- |
//! | no token | 401, `WWW-Authenticate: Bearer resource_metadata="…"` (and `scope="…"` when scopes are required) |
//! | a token the [`TokenVerifier`] refuses (invalid, expired, for another audience) | 401, `error="invalid_token"` |
//! | a token in the query string (`access_token=`), several `Authorization` headers | 400, `error="invalid_request"` |
//! | a valid token without the required scopes (the endpoint's, or a tool's) | 403, `error="insufficient_scope", scope="…"` |
//! | the verifier's backend failed ([`TokenError::Unavailable`]) | 503 with `Retry-After: 5`, no challenge |
//! | a session used with a token of another issuer, subject or client (or, for tokens naming neither subject nor client, another token) | 404, as for an unknown session |
//!
//! Whatever the verifier, the endpoint refuses a [`Principal`] past its expiry or whose
//! audience names neither this resource nor the verifier's (see [`TokenVerifier`]). A
//! challenge to a browser request (an `Origin` the endpoint admits) is readable by that
//! origin (`Access-Control-Allow-Origin`, `Access-Control-Expose-Headers: WWW-Authenticate`).
//!
//! Verifiers: [`JwtVerifier`] (JWTs, keys from a [`JwksSource`]: [`StaticJwks`], or with the
//! `client` feature `HttpJwks`, fetched and cached) and, with the `client` feature,
//! `IntrospectionVerifier` (RFC 7662); or a [`TokenVerifier`] of your own.
//!
//! The verified [`Principal`] goes into the request's [`http::Extensions`], where handlers find
//! it (`Context::principal` in `mcp-server`); the `Authorization` header is taken out of the
//! request, so handlers never see the token. The metadata is served without a token, to any
//! origin (`Access-Control-Allow-Origin: *`, and its CORS preflight answered), at
//! `/.well-known/oauth-protected-resource` and at the same followed by the endpoint's path
//! (`/.well-known/oauth-protected-resource/mcp`).
//!
//! ```
//! use mcp_transport_http::server::HttpServerConfig;
//! use mcp_transport_http::server::auth::{AuthConfig, JwtVerifier, StaticJwks};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let jwks = StaticJwks::from_json(r#"{"keys": []}"#)?;
//! let verifier = JwtVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp", jwks);
//! let auth = AuthConfig::new("https://mcp.example.com/mcp", verifier)?
//!     .authorization_server("https://auth.example.com")
//!     .scopes_supported(["files:read", "files:write"])
//!     .required_scopes(["files:read"]);
//! let config = HttpServerConfig::new().auth(auth);
//! # let _ = config;
//! # Ok(())
//! # }
//! ```
// A failed check's `Response` is returned at once (see `checks`): boxing it would only allocate.
#![allow(clippy::result_large_err)]

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts};
use axum::response::{IntoResponse, Response};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::headers::APPLICATION_JSON;
pub use crate::protected_resource::ProtectedResourceMetadata;

/// The well-known path of protected resource metadata (RFC 9728, section 3).
pub const WELL_KNOWN_PATH: &str = "/.well-known/oauth-protected-resource";

/// Who a verified token speaks for: what a [`TokenVerifier`] found, put in the request's
/// extensions for handlers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Principal {
    /// The authorization server that issued the token (the `iss` claim), if known.
    pub issuer: Option<String>,
    /// The resource owner (the `sub` claim), if the token names one.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id` or `azp`).
    pub client_id: Option<String>,
    /// The scopes the token grants.
    pub scopes: Vec<String>,
    /// When the token expires.
    pub expires_at: Option<SystemTime>,
    /// The audiences the token is for (this resource among them).
    pub audience: Vec<String>,
    /// Every claim of the token (or member of the introspection answer).
    pub claims: Map<String, Value>,
}

impl Principal {
    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Those of `required` the token does not grant.
    pub fn missing_scopes<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required.iter().filter(|s| !self.has_scope(s)).map(String::as_str).collect()
    }
}

/// Why a token was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// Malformed, badly signed, from another issuer, or revoked: 401 `invalid_token`.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// Past its expiry (or not valid yet): 401 `invalid_token`.
    #[error("the token has expired")]
    Expired,
    /// Issued for another resource: 401 `invalid_token` (never accepted, never passed on).
    #[error("the token is not for this resource")]
    WrongAudience,
    /// The verifier could not decide (its key set or introspection endpoint failed): 503,
    /// for the token may well be valid.
    #[error("the token cannot be verified now")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Checks access tokens: a token's signature, issuer, expiry and audience (this resource),
/// giving the [`Principal`] it speaks for. A verifier must refuse tokens issued for another
/// audience ([`TokenError::WrongAudience`]).
///
/// The endpoint checks again what the verifier gives, whatever verifier it is: a principal
/// past its [`expires_at`](Principal::expires_at) (beyond the verifier's
/// [`expiry_leeway`](TokenVerifier::expiry_leeway)) is refused as expired, and one whose
/// [`audience`](Principal::audience) names neither the resource URI of [`AuthConfig::new`] nor
/// the verifier's [`audience`](TokenVerifier::audience) as for another resource. An empty
/// audience is refused too: a verifier says which resource a token is for, so that a token
/// for another one cannot pass through a verifier that forgot to look.
///
/// ```
/// use mcp_transport_http::server::auth::{Principal, TokenError, TokenVerifier};
/// use futures_util::future::BoxFuture;
///
/// struct OneToken;
///
/// impl TokenVerifier for OneToken {
///     fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
///         Box::pin(async move {
///             match token {
///                 "let-me-in" => Ok(Principal {
///                     subject: Some("alice".into()),
///                     // The resource URI given to `AuthConfig::new`.
///                     audience: vec!["https://mcp.example.com/mcp".into()],
///                     ..Principal::default()
///                 }),
///                 _ => Err(TokenError::Invalid("unknown token".into())),
///             }
///         })
///     }
/// }
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the text after `Bearer `).
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>>;

    /// The audience this verifier holds tokens to when it is not the resource URI of
    /// [`AuthConfig::new`] (an API identifier such as `api://mcp`): the endpoint then admits
    /// principals whose [`audience`](Principal::audience) names either. Default: none, only
    /// the resource URI.
    fn audience(&self) -> Option<&str> {
        None
    }

    /// The clock skew this verifier tolerates past a token's expiry: the endpoint refuses a
    /// principal whose [`expires_at`](Principal::expires_at) is further in the past. Default:
    /// none.
    fn expiry_leeway(&self) -> Duration {
        Duration::ZERO
    }
}

/// The resource URI given to [`AuthConfig::new`] is no absolute `http(s)` URI without a
/// fragment.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the resource must be an absolute http or https URI without a fragment: {0:?}")]
pub struct InvalidResource(String);

/// A request a valid token does not grant enough for: the scopes it needs (answered with 403
/// `insufficient_scope`). What [`SessionFactory::authorize`](crate::server::SessionFactory::authorize) returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsufficientScope {
    /// The scopes the request needs (those the token has included).
    pub scopes: Vec<String>,
}

/// The authorization of an HTTP endpoint: the resource it is, the servers that grant its
/// tokens, the scopes every request needs, and the verifier of tokens. Attach it with
/// [`HttpServerConfig::auth`](super::HttpServerConfig::auth).
#[derive(Clone)]
pub struct AuthConfig {
    pub(crate) metadata: ProtectedResourceMetadata,
    /// The absolute URL of the metadata (the challenges' `resource_metadata`).
    metadata_url: String,
    /// The resource's path (`/mcp` of `https://host/mcp`), for the path form of the metadata.
    resource_path: String,
    required_scopes: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field("metadata", &self.metadata)
            .field("metadata_url", &self.metadata_url)
            .field("required_scopes", &self.required_scopes)
            .finish_non_exhaustive()
    }
}

impl AuthConfig {
    /// The authorization of the resource `resource` (the server's canonical URI, as clients
    /// name it in their token requests: `https://mcp.example.com/mcp`), whose tokens
    /// `verifier` checks. Tokens go in the `Authorization` header only
    /// (`bearer_methods_supported: ["header"]`).
    pub fn new(resource: impl Into<String>, verifier: impl TokenVerifier) -> Result<AuthConfig, InvalidResource> {
        let resource = resource.into();
        let uri: http::Uri = resource.parse().map_err(|_| InvalidResource(resource.clone()))?;
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return Err(InvalidResource(resource));
        };
        if !matches!(scheme, "http" | "https") || resource.contains('#') {
            return Err(InvalidResource(resource));
        }
        let path = uri.path().trim_end_matches('/').to_owned();
        let metadata_url = format!("{scheme}://{authority}{WELL_KNOWN_PATH}{path}");
        let metadata = ProtectedResourceMetadata {
            resource,
            bearer_methods_supported: vec!["header".to_owned()],
            ..ProtectedResourceMetadata::default()
        };
        Ok(AuthConfig {
            metadata,
            metadata_url,
            resource_path: path,
            required_scopes: Vec::new(),
            verifier: Arc::new(verifier),
        })
    }
    /// Adds an authorization server (its issuer URL) to the metadata.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.metadata.authorization_servers.push(issuer.into());
        self
    }
    /// The scopes tokens for this resource may carry (`scopes_supported`).
    pub fn scopes_supported(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.metadata.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }
    /// The scopes every request needs (default none): a token without them gets 403, and the
    /// 401 challenge names them (`scope="…"`).
    pub fn required_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
    /// The resource's human-readable name (`resource_name`).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.metadata.resource_name = Some(name.into());
        self
    }
    /// A page of documentation (`resource_documentation`).
    pub fn resource_documentation(mut self, url: impl Into<String>) -> Self {
        self.metadata.resource_documentation = Some(url.into());
        self
    }
    /// Changes the metadata served beyond what the other methods set.
    pub fn with_metadata(mut self, edit: impl FnOnce(&mut ProtectedResourceMetadata)) -> Self {
        edit(&mut self.metadata);
        self
    }
    /// The metadata served.
    pub fn metadata(&self) -> &ProtectedResourceMetadata {
        &self.metadata
    }
    /// The URL of the metadata named in challenges (`resource_metadata`): the well-known path
    /// followed by the resource's path, on the resource's origin.
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }
    /// The scopes every request needs.
    pub fn required(&self) -> &[String] {
        &self.required_scopes
    }

    /// The paths the metadata is served at, below the router's root: the well-known path, and
    /// it followed by the endpoint's path and by the resource's path.
    pub(crate) fn metadata_paths(&self, endpoint: &str) -> Vec<String> {
        let mut paths = vec![WELL_KNOWN_PATH.to_owned()];
        for path in [endpoint.trim_end_matches('/'), self.resource_path.as_str()] {
            let full = format!("{WELL_KNOWN_PATH}{path}");
            if !path.is_empty() && !paths.contains(&full) {
                paths.push(full);
            }
        }
        paths
    }

    /// The metadata document, as served.
    pub(crate) fn metadata_json(&self) -> bytes::Bytes {
        serde_json::to_vec(&self.metadata).unwrap_or_default().into()
    }

    /// The answer to a GET of the metadata: readable from any origin (it is public, and a
    /// browser client on another origin must read it to find the authorization server).
    pub(crate) fn metadata_response(body: bytes::Bytes) -> Response {
        let headers = [(header::CONTENT_TYPE, APPLICATION_JSON), (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")];
        (headers, body).into_response()
    }

    /// The answer to the CORS preflight of a GET of the metadata: any origin, with the
    /// headers it asks for (`MCP-Protocol-Version`, say), no credentials.
    pub(crate) fn metadata_preflight(request: &HeaderMap) -> Response {
        let mut response = StatusCode::NO_CONTENT.into_response();
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, OPTIONS"));
        if let Some(asked) = request.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
            headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
        }
        headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
        headers.insert(header::VARY, HeaderValue::from_static("Access-Control-Request-Headers"));
        response
    }

    /// A challenge: `status` with `WWW-Authenticate: Bearer` and, for an `error`, an OAuth
    /// error body.
    fn challenge(&self, status: StatusCode, error: Option<(&str, &str)>, scopes: &[String]) -> Response {
        let mut value = String::from("Bearer ");
        if let Some((code, _)) = error {
            value.push_str(&format!("error=\"{code}\", "));
        }
        if !scopes.is_empty() {
            value.push_str(&format!("scope=\"{}\", ", quoted(&scopes.join(" "))));
        }
        value.push_str(&format!("resource_metadata=\"{}\"", quoted(&self.metadata_url)));
        if let Some((_, description)) = error {
            value.push_str(&format!(", error_description=\"{}\"", quoted(description)));
        }
        let mut response = match error {
            Some((code, description)) => {
                let body = serde_json::json!({"error": code, "error_description": description}).to_string();
                (status, [(header::CONTENT_TYPE, APPLICATION_JSON)], body).into_response()
            }
            None => status.into_response(),
        };
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }

    /// 403 `insufficient_scope` naming `scopes`.
    fn insufficient_scope(&self, scopes: &[String]) -> Response {
        let description = "the access token lacks a scope this request needs";
        self.challenge(StatusCode::FORBIDDEN, Some(("insufficient_scope", description)), scopes)
    }

    /// 403 `insufficient_scope` naming `scopes`, readable by the browser origin of the request
    /// (of `headers`): the answer to a request the session factory refused (see
    /// [`SessionFactory::authorize`](crate::server::SessionFactory::authorize)).
    pub(crate) fn refuse_scopes(&self, scopes: &[String], headers: &HeaderMap) -> Response {
        readable_by_origin(self.insufficient_scope(scopes), headers)
    }
}

/// `text` as the content of a quoted-string: without quotes, backslashes, or controls.
fn quoted(text: &str) -> String {
    text.chars().filter(|c| *c != '"' && *c != '\\' && !c.is_control()).collect()
}

/// Checks the bearer token of a request of the endpoint and puts its [`Principal`] in the
/// request's extensions, taking the `Authorization` header out of the request (handlers never
/// see the token); the challenge to answer with otherwise, readable by the request's browser
/// origin.
pub(crate) async fn authenticate(auth: &AuthConfig, parts: &mut Parts) -> Result<(), Response> {
    match check_token(auth, parts).await {
        Ok(()) => {
            parts.headers.remove(header::AUTHORIZATION);
            Ok(())
        }
        Err(response) => Err(readable_by_origin(response, &parts.headers)),
    }
}

async fn check_token(auth: &AuthConfig, parts: &mut Parts) -> Result<(), Response> {
    if parts.uri.query().is_some_and(|q| q.split('&').any(|pair| pair.split('=').next() == Some("access_token"))) {
        let description = "access tokens are not accepted in the query string";
        return Err(auth.challenge(StatusCode::BAD_REQUEST, Some(("invalid_request", description)), &[]));
    }
    let token = match bearer_token(&parts.headers) {
        Ok(Some(token)) => token,
        Ok(None) => return Err(auth.challenge(StatusCode::UNAUTHORIZED, None, &auth.required_scopes)),
        Err(description) => {
            return Err(auth.challenge(StatusCode::BAD_REQUEST, Some(("invalid_request", description)), &[]));
        }
    };
    let verdict = auth.verifier.verify(token).await.and_then(|principal| auth.recheck(principal));
    let principal = match verdict {
        Ok(principal) => principal,
        Err(TokenError::Unavailable(error)) => {
            tracing::warn!(error = %error, "the token verifier failed");
            let error = mcp_jsonrpc::ErrorObject::internal_error("the access token cannot be verified now");
            let mut response = super::response::error_response(StatusCode::SERVICE_UNAVAILABLE, None, &error);
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static(VERIFIER_RETRY_AFTER));
            return Err(response);
        }
        Err(error) => {
            tracing::debug!(error = %error, "access token refused");
            let description = match error {
                TokenError::Expired => "the access token has expired",
                TokenError::WrongAudience => "the access token is not for this resource",
                _ => "the access token is invalid",
            };
            let error = Some(("invalid_token", description));
            return Err(auth.challenge(StatusCode::UNAUTHORIZED, error, &auth.required_scopes));
        }
    };
    if !principal.missing_scopes(&auth.required_scopes).is_empty() {
        return Err(auth.insufficient_scope(&auth.required_scopes));
    }
    if principal.subject.is_none() && principal.client_id.is_none() {
        // Nobody to bind a session to but the token itself.
        parts.extensions.insert(TokenFingerprint(Sha256::digest(token.as_bytes()).into()));
    }
    parts.extensions.insert(principal);
    Ok(())
}

impl AuthConfig {
    /// What the endpoint checks of a verified principal, whatever the verifier: not past its
    /// expiry, and for this resource.
    fn recheck(&self, principal: Principal) -> Result<Principal, TokenError> {
        let verifier = &self.verifier;
        let now = SystemTime::now();
        if principal.expires_at.is_some_and(|exp| exp + verifier.expiry_leeway() <= now) {
            return Err(TokenError::Expired);
        }
        let ours = |aud: &String| *aud == self.metadata.resource || verifier.audience() == Some(aud.as_str());
        if !principal.audience.iter().any(ours) {
            return Err(TokenError::WrongAudience);
        }
        Ok(principal)
    }
}

/// Makes an answer of the authorization checks (a challenge) readable by the browser origin of
/// the request, one the endpoint admits (the Origin check comes first): a browser client can
/// then read `WWW-Authenticate` and find the authorization server. Nothing for a request
/// without `Origin`.
fn readable_by_origin(mut response: Response, request: &HeaderMap) -> Response {
    let mut origins = request.get_all(header::ORIGIN).iter();
    let (Some(origin), None) = (origins.next(), origins.next()) else { return response };
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("WWW-Authenticate"));
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    response
}

/// Seconds a client is asked to wait when the token verifier's backend failed (503).
const VERIFIER_RETRY_AFTER: &str = "5";

/// The SHA-256 of a token that names neither a subject nor a client: the owner of the
/// sessions it creates, the same on every instance of a fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TokenFingerprint([u8; 32]);

/// The token of the `Authorization: Bearer` header (`None` without one or with another
/// scheme); what is wrong with the header otherwise.
fn bearer_token(headers: &HeaderMap) -> Result<Option<&str>, &'static str> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err("more than one Authorization header");
    }
    let value = value.to_str().map_err(|_| "the Authorization header is not visible ASCII")?;
    let Some((scheme, token)) = value.split_once(' ') else { return Ok(None) };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Ok(None);
    }
    let token = token.trim();
    // RFC 6750's b64token.
    let body = token.trim_end_matches('=');
    let valid = !body.is_empty()
        && body.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/'));
    if valid { Ok(Some(token)) } else { Err("the bearer token is malformed") }
}

/// Who a session belongs to: the issuer, subject and client of the token that created it, or
/// that token alone when it names neither subject nor client (a refreshed token then finds the
/// session unknown, and the client starts another; two anonymous tokens never share one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owner {
    issuer: Option<String>,
    subject: Option<String>,
    client_id: Option<String>,
    token: Option<TokenFingerprint>,
}

impl Owner {
    /// The owner of a session created by a request with these extensions.
    pub(crate) fn of(extensions: &http::Extensions) -> Option<Owner> {
        let principal = extensions.get::<Principal>()?;
        Some(Owner {
            issuer: principal.issuer.clone(),
            subject: principal.subject.clone(),
            client_id: principal.client_id.clone(),
            token: extensions.get::<TokenFingerprint>().copied(),
        })
    }

    /// Whether a request with these extensions comes from the owner.
    pub(crate) fn admits(&self, extensions: &http::Extensions) -> bool {
        Owner::of(extensions).is_some_and(|other| other == *self)
    }

    /// The owner as one line, for the record of a session a fleet shares: what every instance
    /// computes alike for the same token.
    pub(crate) fn record(&self) -> String {
        let token = self.token.map(|t| t.0.iter().map(|b| format!("{b:02x}")).collect::<String>());
        serde_json::json!([self.issuer, self.subject, self.client_id, token]).to_string()
    }
}

#[cfg(feature = "client")]
mod remote;
#[cfg(feature = "client")]
pub use remote::{HttpJwks, IntrospectionVerifier, InvalidIssuer};

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
fn principal_of(claims: Map<String, Value>) -> Principal {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_read_from_the_header_only() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer_token(&headers), Ok(None));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer_token(&headers), Ok(None));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("bearer abc.DEF-_~+/=="));
        assert_eq!(bearer_token(&headers), Ok(Some("abc.DEF-_~+/==")));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer a b"));
        assert!(bearer_token(&headers).is_err());
        headers.append(header::AUTHORIZATION, HeaderValue::from_static("Bearer abc"));
        assert!(bearer_token(&headers).is_err());
    }

    #[test]
    fn the_metadata_url_follows_the_resource() {
        struct Never;
        impl TokenVerifier for Never {
            fn verify<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
                Box::pin(async { Err(TokenError::Expired) })
            }
        }
        let auth = AuthConfig::new("https://example.com/public/mcp", Never).unwrap();
        assert_eq!(auth.metadata_url(), "https://example.com/.well-known/oauth-protected-resource/public/mcp");
        assert_eq!(
            auth.metadata_paths("/mcp"),
            [
                WELL_KNOWN_PATH,
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource/public/mcp"
            ]
        );
        let root = AuthConfig::new("https://example.com", Never).unwrap();
        assert_eq!(root.metadata_url(), "https://example.com/.well-known/oauth-protected-resource");
        assert!(AuthConfig::new("/mcp", Never).is_err());
        assert!(AuthConfig::new("ftp://example.com/mcp", Never).is_err());
    }
}
