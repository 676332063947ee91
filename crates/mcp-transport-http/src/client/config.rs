//! The client transport's configuration.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};
use url::Url;

use super::auth::AuthProvider;
use super::error::HttpClientError;

/// How an SSE stream that ended early is reconnected.
///
/// A server's `retry` field, when it sent one on the stream, is the delay (but never less than
/// `min_delay`, so that a server sending `retry: 0` cannot make the client reconnect in a tight
/// loop); without one, the delay starts at `initial_delay` and doubles up to `max_delay`.
/// After `max_attempts` reconnections in a row that bring no message (events without data,
/// such as priming events, do not count), the stream is given up (for a request's stream, the
/// request fails).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// Reconnections in a row without any message before giving up.
    pub max_attempts: u32,
    /// The shortest delay, whatever the server's `retry`.
    pub min_delay: Duration,
    /// The first delay when the server gave no `retry`.
    pub initial_delay: Duration,
    /// The longest delay when the server gave no `retry`.
    pub max_delay: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            max_attempts: 5,
            min_delay: Duration::from_millis(100),
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl ReconnectPolicy {
    /// The delay before attempt `attempt` (1-based) when the server gave no `retry`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.saturating_sub(1).min(16)).unwrap_or(u32::MAX);
        self.initial_delay.saturating_mul(factor).min(self.max_delay)
    }
}

/// The default largest message a client accepts from a server: 32 MiB. The Skills extension
/// makes hosts accept a skill of 16 MiB, which one `resources/read` may carry as a base64
/// blob (21.3 MiB of JSON) or as JSON text, whose escapes grow it (a newline takes 2 bytes).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 32 * 1024 * 1024;

/// Configuration of the HTTP client transports ([`StreamableHttpTransport`],
/// [`HttpSseTransport`]).
///
/// [`StreamableHttpTransport`]: super::StreamableHttpTransport
/// [`HttpSseTransport`]: super::HttpSseTransport
///
/// ```
/// use std::time::Duration;
/// use mcp_transport_http::client::HttpClientConfig;
///
/// let config = HttpClientConfig::parse("http://127.0.0.1:8080/mcp")
///     .unwrap()
///     .header(http::HeaderName::from_static("x-tenant"), http::HeaderValue::from_static("acme"))
///     .http_timeout(Duration::from_secs(10))
///     .max_in_flight(16);
/// assert_eq!(config.url().path(), "/mcp");
/// ```
#[derive(Clone)]
pub struct HttpClientConfig {
    pub(crate) url: Url,
    pub(crate) headers: HeaderMap,
    pub(crate) auth: Option<Arc<dyn AuthProvider>>,
    pub(crate) client: Option<reqwest::Client>,
    pub(crate) connect_timeout: Duration,
    pub(crate) http_timeout: Duration,
    pub(crate) max_in_flight: usize,
    pub(crate) inbound_capacity: usize,
    pub(crate) max_message_size: usize,
    pub(crate) reconnect: ReconnectPolicy,
    pub(crate) http_sse_fallback: bool,
}

impl std::fmt::Debug for HttpClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientConfig")
            .field("url", &self.url.as_str())
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("auth", &self.auth.is_some())
            .field("connect_timeout", &self.connect_timeout)
            .field("http_timeout", &self.http_timeout)
            .field("max_in_flight", &self.max_in_flight)
            .field("inbound_capacity", &self.inbound_capacity)
            .field("max_message_size", &self.max_message_size)
            .field("reconnect", &self.reconnect)
            .field("http_sse_fallback", &self.http_sse_fallback)
            .finish_non_exhaustive()
    }
}

impl HttpClientConfig {
    /// The configuration for the MCP endpoint at `url` (for HTTP+SSE: its SSE
    /// URL), with the defaults.
    pub fn new(url: Url) -> Self {
        HttpClientConfig {
            url,
            headers: HeaderMap::new(),
            auth: None,
            client: None,
            connect_timeout: Duration::from_secs(10),
            http_timeout: Duration::from_secs(30),
            max_in_flight: 64,
            inbound_capacity: 256,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            reconnect: ReconnectPolicy::default(),
            http_sse_fallback: true,
        }
    }

    /// Parses `url` (`http` or `https`) and makes [`HttpClientConfig::new`] of it.
    pub fn parse(url: &str) -> Result<Self, HttpClientError> {
        let parsed = Url::parse(url).map_err(|e| HttpClientError::InvalidUrl(format!("{url}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(HttpClientError::InvalidUrl(format!("{url}: not an http or https URL")));
        }
        Ok(Self::new(parsed))
    }

    /// The endpoint URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Sends this header with every HTTP request (replacing an earlier value of it). The
    /// transport's own headers (`Accept`, `Content-Type`, `Mcp-Session-Id`,
    /// `MCP-Protocol-Version`, `Last-Event-ID`, the 2026-07-28 `Mcp-Method`, `Mcp-Name` and
    /// `Mcp-Param-*`, and `Authorization` from an [`AuthProvider`]) take precedence.
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// Sends these headers with every HTTP request (see [`HttpClientConfig::header`]).
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        for (name, value) in &headers {
            self.headers.insert(name.clone(), value.clone());
        }
        self
    }

    /// Asks `provider` for the `Authorization` header of every request, and tells it of
    /// `401 Unauthorized` answers.
    pub fn auth(mut self, provider: impl AuthProvider) -> Self {
        self.auth = Some(Arc::new(provider));
        self
    }

    /// Authorizes with OAuth 2.1 as the MCP specification says (feature `oauth`): on a 401
    /// the client discovers the authorization server, registers, lets the user authorize
    /// through the config's agent and sends the request again with the token (see
    /// [`oauth`](super::oauth)). Replaces an [`auth`](Self::auth) provider.
    ///
    /// The OAuth client makes its own HTTP client for metadata and the authorization server
    /// (no redirects across origins, time limits), not the transport's; give it another with
    /// [`OAuthConfig::http_client`](super::oauth::OAuthConfig::http_client).
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, config: super::oauth::OAuthConfig) -> Self {
        let client = super::oauth::OAuthClient::new(self.url.clone(), config);
        self.auth = Some(Arc::new(client));
        self
    }

    /// Uses this reqwest client (its proxy, TLS and pool settings) instead of building one;
    /// [`HttpClientConfig::connect_timeout`] then does not apply. Do not give it a total
    /// request timeout: SSE streams last as long as their requests.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The longest a TCP (and TLS) connection may take to open (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The longest an HTTP exchange that should be quick may take (default 30 s): POSTs of
    /// notifications and responses, the opening of SSE streams, the HTTP+SSE transport's
    /// `endpoint` event, DELETE. A request's POST is not limited by it: the connection's
    /// call timeout applies (and a timed-out call's POST is dropped).
    pub fn http_timeout(mut self, timeout: Duration) -> Self {
        self.http_timeout = timeout;
        self
    }

    /// Requests whose POST (and SSE stream) may be open at once (default 64); more wait.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// Incoming messages that may wait for the connection to take them (default 256);
    /// streams pause reading while the queue is full.
    pub fn inbound_capacity(mut self, n: usize) -> Self {
        self.inbound_capacity = n.max(1);
        self
    }

    /// The largest JSON body or SSE event accepted (default [`DEFAULT_MAX_MESSAGE_SIZE`],
    /// 32 MiB).
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes.max(1);
        self
    }

    /// How streams that end early are reconnected.
    pub fn reconnect(mut self, policy: ReconnectPolicy) -> Self {
        self.reconnect = policy;
        self
    }

    /// Whether [`StreamableHttpTransport`](super::StreamableHttpTransport) falls back to the
    /// HTTP+SSE transport when the POST of `initialize` gets a 4xx other than 401 and
    /// 403, which are about credentials rather than the transport (default: yes).
    pub fn http_sse_fallback(mut self, enabled: bool) -> Self {
        self.http_sse_fallback = enabled;
        self
    }

    /// The former name of [`HttpClientConfig::http_sse_fallback`].
    #[deprecated(note = "renamed `http_sse_fallback`")]
    pub fn legacy_fallback(self, enabled: bool) -> Self {
        self.http_sse_fallback(enabled)
    }

    pub(crate) fn build_client(&self) -> Result<reqwest::Client, HttpClientError> {
        if let Some(client) = &self.client {
            return Ok(client.clone());
        }
        // Redirects are followed within the endpoint's origin only: the session id and the
        // custom headers are not for other hosts.
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
            if attempt.previous().len() >= 10 || !same_origin { attempt.stop() } else { attempt.follow() }
        });
        reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .tcp_nodelay(true)
            // A server that vanished without closing is noticed on long-lived SSE streams.
            .tcp_keepalive(Duration::from_secs(60))
            .redirect(redirects)
            .build()
            .map_err(HttpClientError::Client)
    }
}
