//! The hook through which an application authorizes the transport's HTTP requests.

use std::future::Future;

use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use url::Url;

/// A `401 Unauthorized` answer, or a `403 Forbidden` whose `WWW-Authenticate` asks for more
/// scopes (`error="insufficient_scope"`, step-up), as the transport hands it to
/// [`AuthProvider::on_unauthorized`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Unauthorized {
    /// The URL that was requested.
    pub url: Url,
    /// The status (401, or 403 for a step-up).
    pub status: StatusCode,
    /// The `WWW-Authenticate` challenge, if the server sent one (it names the resource
    /// metadata and scopes an OAuth flow starts from).
    pub www_authenticate: Option<HeaderValue>,
    /// The `DPoP-Nonce` the server sent with it (RFC 9449 §9), if any.
    pub dpop_nonce: Option<HeaderValue>,
}

/// Gives the transport the `Authorization` header of each HTTP request.
///
/// A closure returning a future of `Option<HeaderValue>` is one; implement the trait to react
/// to `401 Unauthorized` as well (refresh a token, run an authorization flow).
///
/// ```
/// use mcp_transport_http::client::{HttpClientConfig, HeaderValue};
///
/// let config = HttpClientConfig::parse("https://example.com/mcp")
///     .unwrap()
///     .auth(|| async { Some(HeaderValue::from_static("Bearer secret-token")) });
/// # let _ = config;
/// ```
pub trait AuthProvider: Send + Sync + 'static {
    /// The `Authorization` value for the next request; `None` sends none.
    fn authorization(&self) -> BoxFuture<'_, Option<HeaderValue>>;

    /// The headers that authorize one request to `url` with `method`: by default
    /// `Authorization` from [`AuthProvider::authorization`]. A provider whose credentials are
    /// bound to each request (a DPoP proof, RFC 9449, signs its method and URL) adds them here.
    fn request_headers<'a>(&'a self, method: &'a Method, url: &'a Url) -> BoxFuture<'a, HeaderMap> {
        let _ = (method, url);
        Box::pin(async move {
            let mut headers = HeaderMap::new();
            if let Some(value) = self.authorization().await {
                headers.insert(http::header::AUTHORIZATION, value);
            }
            headers
        })
    }

    /// Every answer of the server to a request this provider authorized, before it is read:
    /// its URL and headers. Default: nothing. A DPoP provider takes the `DPoP-Nonce` a server
    /// may send with any answer, a 200 included, for its next proofs (RFC 9449 §8, §9).
    fn on_response(&self, url: &Url, headers: &HeaderMap) {
        let _ = (url, headers);
    }

    /// The server answered 401, or 403 `insufficient_scope`. Return `true` to send the
    /// request once more with a fresh [`AuthProvider::authorization`] (at most twice for one
    /// request); `false` (the default) fails it with an error that says authorization is
    /// required (or, for a 403, that the token lacks scopes).
    fn on_unauthorized(&self, challenge: Unauthorized) -> BoxFuture<'_, bool> {
        let _ = challenge;
        Box::pin(std::future::ready(false))
    }
}

impl<F, Fut> AuthProvider for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Option<HeaderValue>> + Send + 'static,
{
    fn authorization(&self) -> BoxFuture<'_, Option<HeaderValue>> {
        Box::pin(self())
    }
}
