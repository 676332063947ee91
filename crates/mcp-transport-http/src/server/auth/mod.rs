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

use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

pub use crate::protected_resource::ProtectedResourceMetadata;

// The folder, lowest first: here the vocabulary (`Principal`, `TokenError`, `TokenVerifier`,
// `InsufficientScope`); `config.rs` (`AuthConfig`: the metadata and the challenges);
// `owner.rs` (who a session belongs to); `check.rs` (the token check of each request);
// `jwt.rs` (`JwtVerifier` and its key sets); `remote.rs` (the verifiers that ask the
// authorization server over HTTP). It uses only the endpoint's error answers
// (`server/response.rs`) and, for `remote.rs`, the client's HTTP helpers.

pub(crate) mod check;
mod config;
#[cfg(feature = "auth-dpop")]
mod dpop;
mod jwt;
pub(crate) mod owner;
#[cfg(feature = "client")]
mod remote;

pub use config::AuthConfig;
#[cfg(feature = "auth-dpop")]
pub use dpop::DpopConfig;
pub use jwt::{JwkSet, JwksSource, JwtVerifier, StaticJwks};
#[cfg(feature = "client")]
pub use remote::{HttpJwks, IntrospectionVerifier, InvalidIssuer};

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
pub struct InvalidResource(pub(super) String);

/// A request a valid token does not grant enough for: the scopes it needs (answered with 403
/// `insufficient_scope`). What [`SessionFactory::authorize`] returns.
///
/// [`SessionFactory::authorize`]: crate::server::SessionFactory::authorize
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsufficientScope {
    /// The scopes the request needs (those the token has included).
    pub scopes: Vec<String>,
}
