//! The checks every handler of a route makes first, as axum extractors over the endpoint's
//! state whose rejection is the response to answer with: the handlers read as a list of
//! arguments and `?`s. The checks themselves are `checks`' functions.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::Response;

use crate::server::checks::{check_origin, post_media_types};
use crate::server::endpoint::App;

/// Host and Origin passed the DNS-rebinding checks (403 otherwise). Every handler takes it
/// first.
pub(crate) struct AllowedOrigin;

impl FromRequestParts<Arc<App>> for AllowedOrigin {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Response> {
        check_origin(app.config(), parts).map(|()| AllowedOrigin)
    }
}

/// The request's bearer token passed the checks of the endpoint's [`AuthConfig`] (feature
/// `auth`), and its principal is in the request's extensions: 401, 403, 400 or 503 otherwise
/// (see [`auth`](crate::server::auth)). Without an `AuthConfig`, every request passes at no
/// cost. Every handler takes it after [`AllowedOrigin`].
///
/// [`AuthConfig`]: crate::server::HttpServerConfig::auth
pub(crate) struct Authenticated;

impl FromRequestParts<Arc<App>> for Authenticated {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Response> {
        #[cfg(feature = "auth")]
        if let Some(auth) = app.config().auth.as_deref() {
            crate::server::auth::check::authenticate(auth, parts).await?;
        }
        #[cfg(not(feature = "auth"))]
        let _ = (parts, app);
        Ok(Authenticated)
    }
}

/// A POST to the MCP endpoint accepts what it may be answered with (406 otherwise) and
/// carries JSON (415 otherwise).
pub(crate) struct PostMediaTypes;

impl FromRequestParts<Arc<App>> for PostMediaTypes {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Response> {
        post_media_types(app.config(), &parts.headers).map(|()| PostMediaTypes)
    }
}
