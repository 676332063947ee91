//! The token check of each request of a protected endpoint: the bearer token read from the
//! one `Authorization` header, verified, checked again by the endpoint (expiry, audience,
//! required scopes), and its principal put in the request's extensions; the challenges made
//! readable by the request's browser origin.
// A failed check's `Response` is returned at once (see `checks`): boxing it would only allocate.
#![allow(clippy::result_large_err)]

use std::time::SystemTime;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts};
use axum::response::Response;
use sha2::{Digest as _, Sha256};

use super::config::AuthConfig;
use super::owner::TokenFingerprint;
use super::{Principal, TokenError};

/// Checks the bearer token of a request of the endpoint and puts its [`Principal`] in the
/// request's extensions, taking the `Authorization` header out of the request (handlers never
/// see the token); the challenge to answer with otherwise, readable by the request's browser
/// origin.
pub(crate) async fn authenticate(auth: &AuthConfig, parts: &mut Parts) -> Result<(), Response> {
    match check_token(auth, parts).await {
        Ok(()) => {
            parts.headers.remove(header::AUTHORIZATION);
            parts.headers.remove("dpop");
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
    let token = match bearer_token(&parts.headers, takes_dpop(auth)) {
        Ok(Some((token, _))) => token,
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
            let mut response = crate::server::response::error_response(StatusCode::SERVICE_UNAVAILABLE, None, &error);
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
    #[cfg(feature = "auth-dpop")]
    check_binding(auth, parts, token, &principal)?;
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

    /// 403 `insufficient_scope` naming `scopes`, readable by the browser origin of the request
    /// (of `headers`): the answer to a request the session factory refused (see
    /// [`SessionFactory::authorize`](crate::server::SessionFactory::authorize)).
    pub(crate) fn refuse_scopes(&self, scopes: &[String], headers: &HeaderMap) -> Response {
        readable_by_origin(self.insufficient_scope(scopes), headers)
    }
}

/// Makes an answer of the authorization checks (a challenge) readable by the browser origin of
/// the request, one the endpoint admits (the Origin check comes first): a browser client can
/// then read `WWW-Authenticate` and find the authorization server, and `DPoP-Nonce` to answer
/// a `use_dpop_nonce` challenge. Nothing for a request without `Origin`.
fn readable_by_origin(mut response: Response, request: &HeaderMap) -> Response {
    let mut origins = request.get_all(header::ORIGIN).iter();
    let (Some(origin), None) = (origins.next(), origins.next()) else { return response };
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("WWW-Authenticate, DPoP-Nonce"));
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    response
}

/// Seconds a client is asked to wait when the token verifier's backend failed (503).
const VERIFIER_RETRY_AFTER: &str = "5";

/// Whether the endpoint takes DPoP-bound tokens.
fn takes_dpop(auth: &AuthConfig) -> bool {
    #[cfg(feature = "auth-dpop")]
    return auth.dpop.is_some();
    #[cfg(not(feature = "auth-dpop"))]
    {
        let _ = auth;
        false
    }
}

/// A DPoP-bound token (its claims' `cnf.jkt`) only with the `DPoP` scheme and a valid proof of
/// its key for this request; a token that is not bound only as `Bearer` (RFC 9449 §7).
#[cfg(feature = "auth-dpop")]
fn check_binding(auth: &AuthConfig, parts: &Parts, token: &str, principal: &Principal) -> Result<(), Response> {
    let Some(dpop) = &auth.dpop else { return Ok(()) };
    let is_dpop = matches!(bearer_token(&parts.headers, true), Ok(Some((_, true))));
    let jkt = principal.claims.get("cnf").and_then(|c| c.get("jkt")).and_then(serde_json::Value::as_str);
    let refused = |refusal: super::dpop::Refusal| {
        let (error, description) = match refusal {
            super::dpop::Refusal::Proof(description) => ("invalid_dpop_proof", description),
            super::dpop::Refusal::Nonce(description) => ("use_dpop_nonce", description),
        };
        tracing::debug!(description, "DPoP-bound token refused");
        let mut response =
            auth.challenge_scheme("DPoP", StatusCode::UNAUTHORIZED, Some((error, description)), &auth.required_scopes);
        // RFC 9449 §9: the nonce to send the request again with.
        if let Some(nonce) = dpop.nonce().and_then(|n| HeaderValue::from_str(&n).ok()) {
            response.headers_mut().insert(DPOP_NONCE, nonce);
        }
        response
    };
    let proof = |why: &'static str| refused(super::dpop::Refusal::Proof(why));
    match (jkt, is_dpop) {
        (None, false) => Ok(()),
        (Some(_), false) => Err(proof("the access token is DPoP-bound: present it with the DPoP scheme and a proof")),
        (None, true) => Err(proof("the access token is not DPoP-bound")),
        (Some(jkt), true) => {
            let origin =
                url::Url::parse(&auth.metadata.resource).map(|u| u.origin().ascii_serialization()).unwrap_or_default();
            dpop.check(&parts.headers, &parts.method, &origin, parts.uri.path(), token, jkt).map_err(refused)
        }
    }
}

/// The header the endpoint hands its DPoP nonce in (RFC 9449 §9).
#[cfg(feature = "auth-dpop")]
pub(crate) const DPOP_NONCE: &str = "dpop-nonce";

/// The current DPoP nonce on an answer of the endpoint, when it requires nonces
/// ([`DpopConfig::require_nonce`](super::DpopConfig::require_nonce)): the client's next
/// proofs carry it.
#[cfg(feature = "auth-dpop")]
pub(crate) fn with_dpop_nonce(auth: &AuthConfig, mut response: Response) -> Response {
    if let Some(nonce) = auth.dpop.as_ref().and_then(super::DpopConfig::nonce)
        && let Ok(value) = HeaderValue::from_str(&nonce)
    {
        let headers = response.headers_mut();
        headers.insert(DPOP_NONCE, value);
        // An answer a browser origin may read (CORS) exposes the nonce too, or the browser
        // client could never send it.
        if headers.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN) {
            expose(headers, "DPoP-Nonce");
        }
    }
    response
}

/// Adds `name` to the `Access-Control-Expose-Headers` of `headers` unless it is there.
#[cfg(feature = "auth-dpop")]
fn expose(headers: &mut HeaderMap, name: &str) {
    let listed = headers.get_all(header::ACCESS_CONTROL_EXPOSE_HEADERS).iter().filter_map(|v| v.to_str().ok());
    let mut names: Vec<String> = listed.flat_map(|v| v.split(',')).map(|n| n.trim().to_owned()).collect();
    names.retain(|n| !n.is_empty());
    if names.iter().any(|n| n == "*" || n.eq_ignore_ascii_case(name)) {
        return;
    }
    names.push(name.to_owned());
    if let Ok(value) = HeaderValue::from_str(&names.join(", ")) {
        headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, value);
    }
}

/// Whether the endpoint hands out DPoP nonces.
#[cfg(feature = "auth-dpop")]
pub(crate) fn requires_dpop_nonce(auth: &AuthConfig) -> bool {
    auth.dpop.as_ref().is_some_and(|d| d.nonce().is_some())
}

/// The token of the `Authorization: Bearer` header (with `dpop`, of `Authorization: DPoP`
/// too), and whether it came as `DPoP` (`None` without one or with another scheme); what is
/// wrong with the header otherwise.
fn bearer_token(headers: &HeaderMap, dpop: bool) -> Result<Option<(&str, bool)>, &'static str> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err("more than one Authorization header");
    }
    let value = value.to_str().map_err(|_| "the Authorization header is not visible ASCII")?;
    let Some((scheme, token)) = value.split_once(' ') else { return Ok(None) };
    let is_dpop = dpop && scheme.eq_ignore_ascii_case("dpop");
    if !scheme.eq_ignore_ascii_case("bearer") && !is_dpop {
        return Ok(None);
    }
    let token = token.trim();
    // RFC 6750's b64token.
    let body = token.trim_end_matches('=');
    let valid = !body.is_empty()
        && body.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/'));
    if valid { Ok(Some((token, is_dpop))) } else { Err("the bearer token is malformed") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_read_from_the_header_only() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer_token(&headers, false), Ok(None));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer_token(&headers, false), Ok(None));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("bearer abc.DEF-_~+/=="));
        assert_eq!(bearer_token(&headers, false), Ok(Some(("abc.DEF-_~+/==", false))));
        // The DPoP scheme only where the endpoint takes DPoP-bound tokens.
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("DPoP abc"));
        assert_eq!(bearer_token(&headers, false), Ok(None));
        assert_eq!(bearer_token(&headers, true), Ok(Some(("abc", true))));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer a b"));
        assert!(bearer_token(&headers, false).is_err());
        headers.append(header::AUTHORIZATION, HeaderValue::from_static("Bearer abc"));
        assert!(bearer_token(&headers, false).is_err());
    }
}
