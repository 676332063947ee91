//! [`AuthConfig`]: the resource an endpoint is, the servers that grant its tokens, the scopes
//! every request needs and the verifier of tokens; its protected resource metadata and the
//! challenges it answers with.
// A failed check's `Response` is returned at once (see `checks`): boxing it would only allocate.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::headers::APPLICATION_JSON;

use super::{InvalidResource, ProtectedResourceMetadata, TokenVerifier, WELL_KNOWN_PATH};

/// The authorization of an HTTP endpoint: the resource it is, the servers that grant its
/// tokens, the scopes every request needs, and the verifier of tokens. Attach it with
/// [`HttpServerConfig::auth`](crate::server::HttpServerConfig::auth).
#[derive(Clone)]
pub struct AuthConfig {
    pub(crate) metadata: ProtectedResourceMetadata,
    /// The absolute URL of the metadata (the challenges' `resource_metadata`).
    metadata_url: String,
    /// The resource's path (`/mcp` of `https://host/mcp`), for the path form of the metadata.
    resource_path: String,
    pub(super) required_scopes: Vec<String>,
    pub(super) verifier: Arc<dyn TokenVerifier>,
    /// How DPoP-bound tokens are checked, if the endpoint takes them.
    #[cfg(feature = "auth-dpop")]
    pub(super) dpop: Option<super::DpopConfig>,
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
            #[cfg(feature = "auth-dpop")]
            dpop: None,
        })
    }

    /// Takes DPoP-bound tokens (RFC 9449 §7; feature `auth-dpop`), checked as `dpop` says:
    /// a token whose claims have `cnf.jkt` is accepted only as `Authorization: DPoP` with a
    /// valid proof of that key for the request, and never as a bearer token; bearer tokens
    /// (no `cnf`) are still taken as `Bearer`. The metadata lists `ES256` and the other
    /// asymmetric algorithms in `dpop_signing_alg_values_supported`.
    #[cfg(feature = "auth-dpop")]
    pub fn dpop(mut self, dpop: super::DpopConfig) -> Self {
        let algs = ["ES256", "ES384", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"];
        self.metadata.other.insert("dpop_signing_alg_values_supported".to_owned(), serde_json::json!(algs));
        self.dpop = Some(dpop);
        self
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
    pub(super) fn challenge(&self, status: StatusCode, error: Option<(&str, &str)>, scopes: &[String]) -> Response {
        self.challenge_scheme("Bearer", status, error, scopes)
    }

    /// [`AuthConfig::challenge`] in the auth scheme `scheme` (`DPoP` for a proof's errors).
    pub(super) fn challenge_scheme(
        &self,
        scheme: &str,
        status: StatusCode,
        error: Option<(&str, &str)>,
        scopes: &[String],
    ) -> Response {
        let mut value = format!("{scheme} ");
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
    pub(super) fn insufficient_scope(&self, scopes: &[String]) -> Response {
        let description = "the access token lacks a scope this request needs";
        self.challenge(StatusCode::FORBIDDEN, Some(("insufficient_scope", description)), scopes)
    }
}

/// `text` as the content of a quoted-string: without quotes, backslashes, or controls.
fn quoted(text: &str) -> String {
    text.chars().filter(|c| *c != '"' && *c != '\\' && !c.is_control()).collect()
}

#[cfg(test)]
mod tests {
    use futures_util::future::BoxFuture;

    use super::super::{Principal, TokenError};
    use super::*;

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
