//! Discovery: the protected resource metadata (RFC 9728) and the authorization server
//! metadata (RFC 8414, OpenID Connect Discovery), in the order the specification gives, and
//! the 2025-03-26 fallbacks.

use serde::{Deserialize, Serialize};
use url::Url;

use super::OAuthError;
use super::http::{OAuthHttp, require_https};
use crate::client::request::read_bounded;
pub use crate::protected_resource::ProtectedResourceMetadata;
use bytes::Bytes;

/// The most bytes of a metadata document read.
const MAX_METADATA: usize = 256 * 1024;

/// RFC 8414 authorization server metadata (the members a client uses).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// Where the user authorizes.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged.
    pub token_endpoint: String,
    /// Dynamic client registration (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// The scopes the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// `code`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// `authorization_code`, `refresh_token`, `client_credentials`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// PKCE methods; a client refuses a server that does not list `S256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// `client_secret_basic`, `client_secret_post`, `none`, `private_key_jwt`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Client ID Metadata Documents: a URL may be the client id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// RFC 9207: the redirect carries `iss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// RFC 9449 §5.1: the algorithms the server takes DPoP proofs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthorizationServerMetadata {
    /// The endpoints a 2025-03-26 server without metadata has at its origin: `/authorize`,
    /// `/token`, `/register`.
    pub fn default_endpoints(origin: &Url) -> Self {
        let at = |path: &str| origin.join(path).map(String::from).unwrap_or_default();
        AuthorizationServerMetadata {
            issuer: origin.as_str().trim_end_matches('/').to_owned(),
            authorization_endpoint: at("/authorize"),
            token_endpoint: at("/token"),
            registration_endpoint: Some(at("/register")),
            code_challenge_methods_supported: Some(vec!["S256".to_owned()]),
            ..Default::default()
        }
    }

    /// Refuses metadata whose endpoints are not HTTPS (or HTTP on loopback), or not URLs.
    pub(crate) fn check_endpoints(&self) -> Result<(), OAuthError> {
        let endpoints =
            [Some(&self.authorization_endpoint), Some(&self.token_endpoint), self.registration_endpoint.as_ref()];
        for endpoint in endpoints.into_iter().flatten().filter(|e| !e.is_empty()) {
            let url = Url::parse(endpoint).map_err(|_| OAuthError::InvalidUrl(endpoint.clone()))?;
            require_https(&url)?;
        }
        Ok(())
    }

    /// Whether the server supports PKCE with S256. A server that does not say (no
    /// `code_challenge_methods_supported`) is refused: the specification requires clients to
    /// check it.
    pub fn supports_s256(&self) -> bool {
        self.code_challenge_methods_supported.as_ref().is_some_and(|m| m.iter().any(|m| m == "S256"))
    }
}

/// The well-known URLs of the protected resource metadata of `server`, in order: the path
/// form, then the root (RFC 9728 §3.1).
pub(crate) fn resource_metadata_urls(server: &Url) -> Vec<Url> {
    let mut urls = Vec::new();
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        urls.extend(well_known(server, "oauth-protected-resource", path));
    }
    urls.extend(well_known(server, "oauth-protected-resource", ""));
    urls
}

/// The URLs of an authorization server's metadata, in the specification's order: with a path
/// component, RFC 8414 path insertion, OIDC path insertion, OIDC path appending; without one,
/// RFC 8414 then OIDC.
pub(crate) fn authorization_server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let mut urls = Vec::new();
    urls.extend(well_known(issuer, "oauth-authorization-server", path));
    urls.extend(well_known(issuer, "openid-configuration", path));
    if !path.is_empty() {
        let mut appended = issuer.clone();
        appended.set_path(&format!("{path}/.well-known/openid-configuration"));
        appended.set_query(None);
        appended.set_fragment(None);
        urls.push(appended);
    }
    urls
}

/// `{origin}/.well-known/{name}{path}`.
fn well_known(base: &Url, name: &str, path: &str) -> Option<Url> {
    let mut url = base.clone();
    url.set_path(&format!("/.well-known/{name}{path}"));
    url.set_query(None);
    url.set_fragment(None);
    Some(url)
}

/// GETs a JSON document: `Ok(None)` for a 4xx (not there), an error for anything else that
/// is not a JSON object of type `T`.
pub(crate) async fn fetch_json<T: serde::de::DeserializeOwned>(
    http: &OAuthHttp,
    url: &Url,
) -> Result<Option<T>, OAuthError> {
    let request = http.get(url)?.header(http::header::ACCEPT, "application/json");
    let response = http.send(request, url).await?;
    let status = response.status();
    if status.is_client_error() {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(OAuthError::Status { url: url.to_string(), status: status.as_u16() });
    }
    let body = read_limited(response, url).await?;
    serde_json::from_slice(&body).map(Some).map_err(|e| OAuthError::Metadata { url: url.to_string(), source: e })
}

/// A response body, at most [`MAX_METADATA`] bytes.
pub(crate) async fn read_limited(mut response: reqwest::Response, url: &Url) -> Result<Bytes, OAuthError> {
    match read_bounded(&mut response, MAX_METADATA).await {
        Ok(Some(body)) => Ok(body),
        Ok(None) => Err(OAuthError::TooLarge { url: url.to_string() }),
        Err(e) => Err(OAuthError::Http { url: url.to_string(), source: e }),
    }
}

/// Finds the protected resource metadata: at the challenge's `resource_metadata` when it is
/// on the server's origin (the resource's own metadata; a challenge cannot send the client to
/// fetch from another host), else at the well-known URLs of `server`. `None` when there is
/// none (a 2025-03-26 server).
pub(crate) async fn discover_resource(
    http: &OAuthHttp,
    server: &Url,
    from_challenge: Option<&str>,
) -> Result<Option<ProtectedResourceMetadata>, OAuthError> {
    if let Some(url) = from_challenge {
        let url = Url::parse(url).map_err(|_| OAuthError::InvalidUrl(url.to_owned()))?;
        if url.origin() != server.origin() {
            tracing::warn!(%url, "the challenge names resource metadata on another origin; not fetched");
        } else if let Some(metadata) = fetch_json::<ProtectedResourceMetadata>(http, &url).await? {
            return Ok(Some(metadata));
        }
    }
    for url in resource_metadata_urls(server) {
        if let Some(metadata) = fetch_json::<ProtectedResourceMetadata>(http, &url).await? {
            return Ok(Some(metadata));
        }
    }
    Ok(None)
}

/// Finds the metadata of the authorization server `issuer` (an HTTPS URL, or HTTP on
/// loopback); `None` when none of the well-known URLs has it. With `check_issuer` (an issuer
/// named by the protected resource metadata), the metadata's `issuer` must be `issuer`,
/// character for character (RFC 8414 §3.3); a 2025-03-26 server, whose metadata is found at
/// its own origin, is not held to it. Every endpoint the metadata names must be HTTPS too.
pub(crate) async fn discover_authorization_server(
    http: &OAuthHttp,
    issuer: &str,
    check_issuer: bool,
) -> Result<Option<AuthorizationServerMetadata>, OAuthError> {
    let url = Url::parse(issuer).map_err(|_| OAuthError::InvalidUrl(issuer.to_owned()))?;
    require_https(&url)?;
    for url in authorization_server_metadata_urls(&url) {
        if let Some(metadata) = fetch_json::<AuthorizationServerMetadata>(http, &url).await? {
            if check_issuer && metadata.issuer != issuer {
                return Err(OAuthError::IssuerMismatch { expected: issuer.to_owned(), found: metadata.issuer });
            }
            metadata.check_endpoints()?;
            return Ok(Some(metadata));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(v: Vec<Url>) -> Vec<String> {
        v.into_iter().map(String::from).collect()
    }

    #[test]
    fn resource_metadata_path_form_first() {
        let server = Url::parse("https://x.example/mcp?q=1").unwrap();
        assert_eq!(
            urls(resource_metadata_urls(&server)),
            [
                "https://x.example/.well-known/oauth-protected-resource/mcp",
                "https://x.example/.well-known/oauth-protected-resource"
            ]
        );
        let root = Url::parse("https://x.example/").unwrap();
        assert_eq!(urls(resource_metadata_urls(&root)), ["https://x.example/.well-known/oauth-protected-resource"]);
    }

    #[test]
    fn authorization_server_metadata_in_the_specs_order() {
        let with_path = Url::parse("https://as.example/tenant1").unwrap();
        assert_eq!(
            urls(authorization_server_metadata_urls(&with_path)),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
        let root = Url::parse("https://as.example").unwrap();
        assert_eq!(
            urls(authorization_server_metadata_urls(&root)),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration",
            ]
        );
    }
}
