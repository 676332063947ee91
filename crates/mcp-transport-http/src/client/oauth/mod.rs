//! OAuth 2.1 for the client (feature `oauth`): the MCP authorization specification's client
//! side, as an [`AuthProvider`](super::AuthProvider) the HTTP transport asks on every 401 and
//! on a 403 `insufficient_scope`.
//!
//! A tour:
//! - [`OAuthConfig`]: who the client is (its name; pre-registered [`ClientCredentials`], bound
//!   to the authorization server that issued them, or a Client ID Metadata Document URL), the
//!   [`AuthorizationAgent`] that shows the user the authorization page ([`LoopbackRedirect`]
//!   for desktop apps and command-line tools, [`ExternalRedirect`] for applications that
//!   finish the flow themselves), the [`TokenStore`] ([`MemoryTokenStore`] by default,
//!   [`FileTokenStore`]). [`HttpClientConfig::oauth`](super::HttpClientConfig::oauth) turns it
//!   on.
//! - On a 401 the client finds the protected resource metadata (the challenge's
//!   `resource_metadata` when it is on the server's origin, else the well-known URLs, path form
//!   first), then the authorization server's metadata (RFC 8414, then OpenID Connect
//!   discovery, in the specification's order; its `issuer` identical to the one named); a
//!   server without either (2025-03-26) is its own authorization server, with the default
//!   endpoints when it has no metadata.
//! - It registers (pre-registered credentials, with their own authorization server only, else
//!   a Client ID Metadata Document when the server supports them, else Dynamic Client
//!   Registration, made again when the server no longer knows the client), runs the
//!   authorization code flow with PKCE S256 (a server that does not list S256 is refused),
//!   `state` (first, in constant time) and RFC 9207 `iss` checked, the RFC 8707 `resource` on
//!   both requests, and authenticates at the token endpoint as the registration says
//!   (`client_secret_basic`, `client_secret_post`, `none`). Only `Bearer` tokens are taken.
//! - Scopes: the challenge's `scope`, else the resource's `scopes_supported`, else none; a 403
//!   `insufficient_scope` re-authorizes with the union of the scopes asked so far and the
//!   challenge's (step-up), unless the token already has them; at most three flows a minute.
//! - Tokens are refreshed before they expire and on a 401, at the authorization server that
//!   issued them and no other, and kept in the store keyed by that server and the resource;
//!   other holders of the store (processes sharing a token file) are held off while one
//!   refreshes ([`TokenStore::lock`]).
//! - Its HTTP requests (metadata, registration, tokens) go through a client of its own: no
//!   redirect is followed to another origin, each request has a time limit
//!   ([`OAuthConfig::http_timeout`]), authorization server endpoints must be HTTPS (plain HTTP
//!   on loopback only), and, for a client hosted beside internal services, private addresses
//!   can be refused ([`OAuthConfig::deny_private_addresses`]).
//! - [`OAuthClient::begin_authorization`] and [`OAuthClient::finish_authorization`] run the
//!   code flow in two halves, for a web application or a tool whose user's round trip outlives
//!   one call.
//!
//! Why no OAuth crate: `oauth2` covers PKCE and the token requests, which are a few lines
//! here, and brings its own HTTP client abstraction; what MCP adds (RFC 9728 discovery, the
//! discovery order, Client ID Metadata Documents, `iss`, step-up, the 2025-03-26 fallbacks) is
//! most of this module either way. Requests go through `reqwest`, as the transport's do.
//!
//! ```no_run
//! use mcp_transport_http::client::HttpClientConfig;
//! use mcp_transport_http::client::oauth::{LoopbackRedirect, OAuthConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = LoopbackRedirect::bind(0).await?.open_browser();
//! let config = HttpClientConfig::parse("https://example.com/mcp")?.oauth(OAuthConfig::new("my-app", agent));
//! # let _ = config;
//! # Ok(()) }
//! ```

mod agent;
mod challenge;
#[cfg(feature = "dpop")]
mod dpop;
mod flow;
mod http;
mod metadata;
mod pending;
mod pkce;
mod store;

use std::sync::Arc;
use std::time::Duration;

pub use agent::{AuthorizationAgent, LoopbackRedirect};
pub use challenge::BearerChallenge;
#[cfg(feature = "dpop")]
pub use dpop::DpopKey;
pub use flow::OAuthClient;
pub use metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
pub use pending::{ExternalRedirect, PendingAuthorization};
pub use store::{
    ClientCredentials, FileTokenStore, MemoryTokenStore, StoredTokens, TokenEndpointAuthMethod, TokenKey, TokenLock,
    TokenStore,
};

/// Why an authorization flow failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A request to the authorization server or for metadata failed.
    #[error("request to {url} failed")]
    Http {
        /// The URL.
        url: String,
        /// Why.
        #[source]
        source: reqwest::Error,
    },
    /// An error status where a document or a token was expected.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
    },
    /// A metadata document or a token response is not what the specification says.
    #[error("invalid answer from {url}")]
    Metadata {
        /// The URL.
        url: String,
        /// Why it does not decode.
        #[source]
        source: serde_json::Error,
    },
    /// A document was larger than the client reads.
    #[error("the answer of {url} is too large")]
    TooLarge {
        /// The URL.
        url: String,
    },
    /// A URL in metadata or configuration does not parse.
    #[error("invalid URL `{0}`")]
    InvalidUrl(String),
    /// The authorization server's metadata names another issuer than the one it was
    /// discovered for (RFC 8414 §3.3).
    #[error("the authorization server metadata names issuer `{found}`, expected `{expected}`")]
    IssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The issuer it names.
        found: String,
    },
    /// The protected resource metadata is for another resource than the server.
    #[error("the protected resource metadata is for `{resource}`, not for `{server}`")]
    ResourceMismatch {
        /// The resource it names.
        resource: String,
        /// The MCP server.
        server: String,
    },
    /// The authorization server does not support PKCE with S256.
    #[error("the authorization server {0} does not support PKCE with S256")]
    NoPkce(String),
    /// The client cannot register: no pre-registered credentials, no Client ID Metadata
    /// Document support, no registration endpoint.
    #[error("no way to register with the authorization server {0}")]
    NoRegistration(String),
    /// The authorization server answered with an OAuth error (`error`, `error_description`).
    #[error("the authorization server refused: {error}{}", .description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Refused {
        /// The OAuth error code.
        error: String,
        /// Its description.
        description: Option<String>,
    },
    /// The redirect does not belong to this flow: its `state` or `iss` is wrong or missing.
    #[error("the authorization response is not valid: {0}")]
    InvalidResponse(&'static str),
    /// The user took longer than the agent waits.
    #[error("the authorization was not completed in time")]
    AuthorizationTimedOut,
    /// Too many authorization flows in a short time: the server keeps refusing the tokens.
    #[error("too many authorization attempts")]
    TooManyAttempts,
    /// A private key for JWT assertions that cannot be used.
    #[error("invalid private key: {0}")]
    InvalidKey(String),
    /// The client cannot sign its JWT assertion.
    #[error("cannot sign the client assertion")]
    Assertion(#[source] jsonwebtoken::errors::Error),
    /// The grant needs an agent it was not given (the authorization code flow of a client
    /// made with [`OAuthConfig::client_credentials`]), or credentials.
    #[error("the configuration cannot run this flow: {0}")]
    Configuration(&'static str),
    /// A local I/O error (the loopback listener).
    #[error("I/O error")]
    Io(#[source] std::io::Error),
    /// An authorization server endpoint that is not HTTPS (plain HTTP is accepted on loopback
    /// only), or a URL that is not HTTP at all.
    #[error("{0}: authorization server endpoints must use https (http only on loopback)")]
    InsecureUrl(String),
    /// A URL whose host is a private, loopback or link-local address, which the client was
    /// told to refuse ([`OAuthConfig::deny_private_addresses`]).
    #[error("{0}: the host is a private, loopback or link-local address")]
    PrivateAddress(String),
    /// The answer came from another origin than the URL asked (a redirect the HTTP client
    /// followed across origins).
    #[error("the request to {url} was redirected to another origin")]
    Redirected {
        /// The URL asked.
        url: String,
    },
    /// Pre-registered credentials that do not say which authorization server issued them
    /// ([`ClientCredentials::issuer`], [`OAuthConfig::issuer`]): they are never sent to one
    /// a server merely names.
    #[error("the pre-registered client `{client_id}` is not bound to an authorization server (set its issuer)")]
    UnboundCredentials {
        /// The client id.
        client_id: String,
    },
    /// The resource names another authorization server than the one the pre-registered
    /// credentials were issued by; they are not sent to it.
    #[error("the pre-registered client is for the authorization server `{bound}`, but the server names `{named}`")]
    CredentialsIssuerMismatch {
        /// The issuer the credentials are bound to.
        bound: String,
        /// The issuer the protected resource metadata names.
        named: String,
    },
    /// A token response of a type the client cannot use (`Bearer`, and `DPoP` when it sent a
    /// DPoP proof).
    #[error("the authorization server issued a token of type `{0}`, which the client did not ask for")]
    UnsupportedTokenType(String),
    /// The user must authorize, and the agent does not take part in the flow
    /// ([`ExternalRedirect`]): start it with [`OAuthClient::begin_authorization`].
    #[error("the user must authorize (begin_authorization, then finish_authorization)")]
    AuthorizationRequired,
    /// A pending authorization that is not this client's (another MCP server's resource).
    #[error("the pending authorization is for `{0}`, not for this server")]
    ForeignAuthorization(String),
}

/// What the client asks and how.
#[derive(Clone)]
pub struct OAuthConfig {
    pub(crate) client_name: String,
    pub(crate) grant: Grant,
    pub(crate) assertion: Option<AssertionKey>,
    pub(crate) credentials: Option<ClientCredentials>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) http: Option<reqwest::Client>,
    pub(crate) http_timeout: Duration,
    pub(crate) deny_private: bool,
    pub(crate) max_flows_per_minute: usize,
    /// DPoP-bound tokens wanted (feature `dpop`).
    #[cfg(feature = "dpop")]
    pub(crate) dpop: bool,
    /// The DPoP key given, if any (else one is generated).
    #[cfg(feature = "dpop")]
    pub(crate) dpop_key: Option<DpopKey>,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_name", &self.client_name)
            .field("client_id", &self.credentials.as_ref().map(|c| &c.client_id))
            .field("client_metadata_url", &self.client_metadata_url)
            .finish_non_exhaustive()
    }
}

/// How the client gets its tokens.
#[derive(Clone)]
pub(crate) enum Grant {
    /// The authorization code flow, the user authorizing through the agent.
    AuthorizationCode(Arc<dyn AuthorizationAgent>),
    /// Client credentials (machine to machine, the `io.modelcontextprotocol/oauth-client-credentials`
    /// extension): no user.
    ClientCredentials,
    /// The JWT bearer grant (RFC 7523 §2.1) with the platform's workload token, read from
    /// this file at each grant (workload identity federation, SEP-1933).
    #[cfg(feature = "wif")]
    JwtBearer(Arc<std::path::PathBuf>),
    /// Enterprise-managed authorization (SEP-990): the enterprise IdP's ID token exchanged
    /// there for an ID-JAG, itself exchanged for tokens with the JWT bearer grant.
    #[cfg(feature = "enterprise-managed")]
    IdJag(Arc<EnterpriseIdp>),
}

/// The enterprise identity provider of [`OAuthConfig::enterprise_managed`]: its token
/// endpoint, the client's registration there, and the user's ID token it issued (from the
/// user's single sign-on).
#[cfg(feature = "enterprise-managed")]
#[derive(Clone)]
pub struct EnterpriseIdp {
    pub(crate) token_endpoint: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) id_token: String,
}

#[cfg(feature = "enterprise-managed")]
impl std::fmt::Debug for EnterpriseIdp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterpriseIdp")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "enterprise-managed")]
impl EnterpriseIdp {
    /// The IdP whose token endpoint is `token_endpoint`, where the client is `client_id`, and
    /// the user's `id_token` it issued.
    pub fn new(token_endpoint: impl Into<String>, client_id: impl Into<String>, id_token: impl Into<String>) -> Self {
        EnterpriseIdp {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            id_token: id_token.into(),
        }
    }

    /// The client's secret at the IdP (`client_secret_basic`); without one the client is public
    /// there (`client_id` in the form).
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }
}

/// The key a client signs its JWT assertions with (`private_key_jwt`, RFC 7523).
#[derive(Clone)]
pub(crate) struct AssertionKey {
    pub(crate) key: Arc<jsonwebtoken::EncodingKey>,
    pub(crate) algorithm: jsonwebtoken::Algorithm,
}

impl OAuthConfig {
    /// A client named `client_name` (in dynamic registration) whose user authorizes through
    /// `agent`.
    pub fn new(client_name: impl Into<String>, agent: impl AuthorizationAgent) -> Self {
        Self::with_grant(client_name.into(), Grant::AuthorizationCode(Arc::new(agent)))
    }

    /// A machine client that gets its tokens with its own credentials (the client
    /// credentials grant of the `io.modelcontextprotocol/oauth-client-credentials`
    /// extension), authenticating with its secret (`client_secret_basic`, or
    /// `client_secret_post` when the server supports only that).
    pub fn client_credentials(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        let client_id = client_id.into();
        let mut config = Self::with_grant(client_id.clone(), Grant::ClientCredentials);
        config.credentials = Some(ClientCredentials::new(client_id, Some(client_secret.into())));
        config
    }

    /// A machine client that authenticates with a JWT it signs with its private key
    /// (`private_key_jwt`, RFC 7523): `private_key_pem` is a PKCS#8 PEM key, `algorithm` one of
    /// `ES256`, `ES384`, `RS256`, `PS256`, `EdDSA`, ...
    pub fn client_credentials_jwt(
        client_id: impl Into<String>,
        private_key_pem: &str,
        algorithm: &str,
    ) -> Result<Self, OAuthError> {
        let algorithm: jsonwebtoken::Algorithm =
            algorithm.parse().map_err(|_| OAuthError::InvalidKey(format!("unknown algorithm `{algorithm}`")))?;
        let pem = private_key_pem.as_bytes();
        let key = match algorithm {
            jsonwebtoken::Algorithm::ES256 | jsonwebtoken::Algorithm::ES384 => {
                jsonwebtoken::EncodingKey::from_ec_pem(pem)
            }
            jsonwebtoken::Algorithm::EdDSA => jsonwebtoken::EncodingKey::from_ed_pem(pem),
            jsonwebtoken::Algorithm::HS256 | jsonwebtoken::Algorithm::HS384 | jsonwebtoken::Algorithm::HS512 => {
                return Err(OAuthError::InvalidKey("a private key JWT is signed with an asymmetric key".to_owned()));
            }
            _ => jsonwebtoken::EncodingKey::from_rsa_pem(pem),
        }
        .map_err(|e| OAuthError::InvalidKey(e.to_string()))?;
        let client_id = client_id.into();
        let mut config = Self::with_grant(client_id.clone(), Grant::ClientCredentials);
        config.credentials = Some(ClientCredentials::new(client_id, None));
        config.assertion = Some(AssertionKey { key: Arc::new(key), algorithm });
        Ok(config)
    }

    /// A workload that gets its tokens for the JWT its platform issues it (workload identity
    /// federation, SEP-1933; feature `wif`): the JWT bearer grant (RFC 7523 §2.1,
    /// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`) with the JWT read from
    /// `token_file` (a Kubernetes projected service account token, a cloud's identity token
    /// file) anew at each grant, as `client_id` (public: no client authentication), at the
    /// authorization server bound with [`OAuthConfig::issuer`] only. A refusal (`invalid_grant`,
    /// `invalid_scope`, `unauthorized_client`) fails the request; no other grant is tried.
    #[cfg(feature = "wif")]
    pub fn workload_identity(client_id: impl Into<String>, token_file: impl Into<std::path::PathBuf>) -> Self {
        let client_id = client_id.into();
        let mut config = Self::with_grant(client_id.clone(), Grant::JwtBearer(Arc::new(token_file.into())));
        config.credentials = Some(ClientCredentials::new(client_id, None).auth_method(TokenEndpointAuthMethod::None));
        config
    }

    /// Enterprise-managed authorization (SEP-990, the `io.modelcontextprotocol/enterprise-managed-authorization`
    /// extension, cross-app access; feature `enterprise-managed`): no user interaction. The
    /// user's ID token is exchanged at the enterprise `idp` for an identity assertion
    /// authorization grant (RFC 8693 token exchange: `requested_token_type`
    /// `urn:ietf:params:oauth:token-type:id-jag`, `audience` the authorization server's
    /// issuer, `resource` the MCP server), which the client, authenticated with its
    /// `credentials` (bound to that authorization server with [`ClientCredentials::issuer`] or
    /// [`OAuthConfig::issuer`]), exchanges there for tokens with the JWT bearer grant.
    #[cfg(feature = "enterprise-managed")]
    pub fn enterprise_managed(credentials: ClientCredentials, idp: EnterpriseIdp) -> Self {
        let mut config = Self::with_grant(credentials.client_id.clone(), Grant::IdJag(Arc::new(idp)));
        config.credentials = Some(credentials);
        config
    }

    fn with_grant(client_name: String, grant: Grant) -> Self {
        OAuthConfig {
            client_name,
            grant,
            assertion: None,
            credentials: None,
            client_metadata_url: None,
            store: Arc::new(MemoryTokenStore::default()),
            http: None,
            http_timeout: Duration::from_secs(30),
            deny_private: false,
            max_flows_per_minute: 3,
            #[cfg(feature = "dpop")]
            dpop: false,
            #[cfg(feature = "dpop")]
            dpop_key: None,
        }
    }

    /// Pre-registered credentials, used with the authorization server they name
    /// ([`ClientCredentials::issuer`]) and with no other: a resource that names another gets
    /// [`OAuthError::CredentialsIssuerMismatch`], and credentials that name none are refused
    /// ([`OAuthError::UnboundCredentials`]).
    pub fn credentials(mut self, credentials: ClientCredentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// Binds the pre-registered credentials (of [`OAuthConfig::credentials`],
    /// [`OAuthConfig::client_credentials`], [`OAuthConfig::client_credentials_jwt`]) to the
    /// authorization server `issuer` (its issuer identifier, exactly as its metadata and the
    /// protected resource metadata name it).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        if let Some(credentials) = &mut self.credentials {
            credentials.issuer = Some(issuer.into());
        }
        self
    }

    /// The URL of the client's Client ID Metadata Document, used as its client id with an
    /// authorization server that supports them (`client_id_metadata_document_supported`).
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Where tokens are kept (default: in memory).
    pub fn store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// The HTTP client for metadata and the authorization server, instead of the one the
    /// OAuth client builds (which follows redirects within an origin only, and has the
    /// [`http_timeout`](Self::http_timeout)). Give it the same care: no redirects across
    /// origins (an answer from another origin is refused, but the request has left by then),
    /// and a connect timeout. The [`http_timeout`](Self::http_timeout) still limits each
    /// request; [`deny_private_addresses`](Self::deny_private_addresses) then checks only
    /// URLs whose host is an address.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// The longest a request for metadata or to the authorization server may take, answer
    /// included (default 30 s); the user's part of the flow has its own limit, the agent's.
    pub fn http_timeout(mut self, timeout: Duration) -> Self {
        self.http_timeout = timeout;
        self
    }

    /// Refuses metadata and authorization servers at private, loopback, link-local and other
    /// non-public addresses, whether a URL names one or a name resolves to one (default: off).
    /// For a client hosted beside internal services, where a server's `401` could otherwise
    /// make it fetch from them (server-side request forgery).
    pub fn deny_private_addresses(mut self, deny: bool) -> Self {
        self.deny_private = deny;
        self
    }

    /// Asks for DPoP-bound tokens (RFC 9449; feature `dpop`): the client makes a P-256 key
    /// (in memory only, for the life of its [`OAuthClient`]; see [`OAuthConfig::dpop_key`]
    /// to give one) and, with an authorization server
    /// whose metadata lists `ES256` in `dpop_signing_alg_values_supported`, sends a proof with
    /// each token request; a token issued as `DPoP` is then sent as `Authorization: DPoP`
    /// with a fresh proof (`htm`, `htu`, `iat`, `jti`, `ath`) on each request. A server's
    /// `use_dpop_nonce` (a 400 of the token endpoint, a 401 of the resource) is answered by
    /// sending the request again with the `DPoP-Nonce` it gave, which later proofs to that
    /// server carry too.
    #[cfg(feature = "dpop")]
    pub fn dpop(mut self) -> Self {
        self.dpop = true;
        self
    }

    /// [`OAuthConfig::dpop`] with the key `key` instead of one made in memory: tokens bound
    /// to it and kept in the [`store`](Self::store) are used again by the next process that
    /// has the key (a generated key dies with its client, and its tokens with it).
    #[cfg(feature = "dpop")]
    pub fn dpop_key(mut self, key: DpopKey) -> Self {
        self.dpop = true;
        self.dpop_key = Some(key);
        self
    }

    /// How many authorization flows may run within a minute before a challenge is answered
    /// with an error instead (default 3), so that a server that refuses every token does not
    /// loop the client.
    pub fn max_flows_per_minute(mut self, flows: usize) -> Self {
        self.max_flows_per_minute = flows.max(1);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jwt_assertion_key_must_be_an_asymmetric_private_key() {
        let refused = |pem: &str, alg: &str| match OAuthConfig::client_credentials_jwt("id", pem, alg) {
            Err(OAuthError::InvalidKey(why)) => why,
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("accepted {alg}"),
        };
        assert!(!refused("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n", "ES256").is_empty());
        assert!(refused("secret", "HS256").contains("asymmetric"));
        assert!(refused("secret", "XX999").contains("unknown algorithm"));
    }
}
