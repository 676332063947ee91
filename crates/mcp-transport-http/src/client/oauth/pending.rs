//! The authorization code flow started and finished apart: [`PendingAuthorization`] (what
//! [`OAuthClient::begin_authorization`](super::OAuthClient::begin_authorization) returns and
//! [`OAuthClient::finish_authorization`](super::OAuthClient::finish_authorization) takes) and
//! [`ExternalRedirect`], the agent of a client whose user's round trip happens elsewhere (a
//! web application's own redirect route, another process).

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use url::Url;

use super::agent::AuthorizationAgent;
use super::{AuthorizationServerMetadata, ClientCredentials, OAuthError, TokenKey};

/// An authorization code flow waiting for the user: the URL to send them to, and what the
/// redirect back is checked against and exchanged with. Serializable, to be kept between the
/// two halves (in a server-side session, a file, a database), but a secret: it holds the PKCE
/// code verifier and the client's credentials, so never hand it to the user agent (not in a
/// cookie, not in a page). Its `Debug` shows neither.
#[derive(Clone, Serialize, Deserialize)]
pub struct PendingAuthorization {
    pub(crate) url: Url,
    pub(crate) state: String,
    pub(crate) code_verifier: String,
    pub(crate) redirect_uri: Url,
    pub(crate) key: TokenKey,
    pub(crate) server: AuthorizationServerMetadata,
    pub(crate) client: ClientCredentials,
    pub(crate) scopes: Vec<String>,
}

impl PendingAuthorization {
    /// Where to send the user: the authorization server's authorization endpoint with the
    /// request.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The `state` of the request, which the redirect back carries: to find the pending
    /// authorization a redirect belongs to.
    pub fn state(&self) -> &str {
        &self.state
    }

    /// The authorization server (its issuer) and resource the tokens will be for.
    pub fn key(&self) -> &TokenKey {
        &self.key
    }
}

impl std::fmt::Debug for PendingAuthorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingAuthorization")
            .field("url", &self.url.as_str())
            .field("key", &self.key)
            .field("redirect_uri", &self.redirect_uri.as_str())
            .field("client_id", &self.client.client_id)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// The agent of a client that does not wait for the user itself: a web application whose
/// redirect URI is one of its own routes, or a tool that finishes the flow in another
/// process. It names the redirect URI; when a request needs the user's authorization, the
/// request fails ([`OAuthError::AuthorizationRequired`], and the call's 401) and the
/// application runs [`OAuthClient::begin_authorization`](super::OAuthClient::begin_authorization)
/// and [`OAuthClient::finish_authorization`](super::OAuthClient::finish_authorization); the
/// tokens land in the store, where the next connection finds them.
#[derive(Debug, Clone)]
pub struct ExternalRedirect {
    redirect_uri: Url,
}

impl ExternalRedirect {
    /// An agent for the redirect URI `redirect_uri` (registered for the client; HTTPS, or a
    /// loopback address).
    pub fn new(redirect_uri: Url) -> Self {
        ExternalRedirect { redirect_uri }
    }
}

impl AuthorizationAgent for ExternalRedirect {
    fn redirect_uri(&self) -> &Url {
        &self.redirect_uri
    }

    fn authorize(&self, _url: Url) -> BoxFuture<'_, Result<Url, OAuthError>> {
        Box::pin(std::future::ready(Err(OAuthError::AuthorizationRequired)))
    }
}
