//! The settings of the HTTP server.

use std::sync::Arc;
use std::time::Duration;

use super::session::drain::Drain;
use super::shared::SharedSessions;
use super::stream::event_store::{EventStore, InMemoryEventStore};

/// Which values of a header (Host or Origin) are allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Policy {
    /// Localhost only when the server is bound to a loopback address; anything otherwise.
    Auto,
    /// `localhost`, `127.0.0.1` and `[::1]`, on any port.
    Localhost,
    /// Anything (the header is not checked).
    Any,
    /// These host names (compared without the port, case-insensitively), or for origins
    /// these exact origins (`https://app.example.com`) or host names.
    List(Vec<String>),
}

/// How the HTTP server behaves; [`Default`] is what most servers want.
#[derive(Clone)]
pub struct HttpServerConfig {
    pub(crate) path: String,
    pub(crate) stateless: bool,
    pub(crate) json_response: bool,
    pub(crate) get_stream: bool,
    pub(crate) http_sse: Option<(String, String)>,
    pub(crate) session_idle_timeout: Duration,
    pub(crate) max_sessions: usize,
    pub(crate) max_sessions_per_client: usize,
    pub(crate) max_requests_in_flight: usize,
    pub(crate) max_body: usize,
    pub(crate) body_timeout: Duration,
    pub(crate) header_timeout: Duration,
    pub(crate) max_header_bytes: usize,
    pub(crate) stream_queue: usize,
    pub(crate) keep_alive: Option<Duration>,
    pub(crate) retry: Duration,
    pub(crate) event_store: Option<Arc<dyn EventStore>>,
    pub(crate) shared_sessions: Option<Arc<dyn SharedSessions>>,
    pub(crate) hosts: Policy,
    pub(crate) origins: Policy,
    #[cfg(feature = "auth")]
    pub(crate) auth: Option<Arc<super::auth::AuthConfig>>,
    pub(crate) shutdown_grace: Duration,
    pub(crate) unready_delay: Duration,
    pub(crate) health_routes: bool,
    #[cfg(feature = "metrics")]
    pub(crate) metrics: Option<super::metrics::PrometheusHandle>,
    /// Whether the endpoints built from this configuration (and its clones) are draining.
    pub(crate) drain: Arc<Drain>,
}

impl std::fmt::Debug for HttpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut f = f.debug_struct("HttpServerConfig");
        f.field("path", &self.path)
            .field("stateless", &self.stateless)
            .field("json_response", &self.json_response)
            .field("get_stream", &self.get_stream)
            .field("http_sse", &self.http_sse)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("max_sessions", &self.max_sessions)
            .field("max_sessions_per_client", &self.max_sessions_per_client)
            .field("max_requests_in_flight", &self.max_requests_in_flight)
            .field("max_body", &self.max_body)
            .field("resumable", &self.event_store.is_some())
            .field("shared_sessions", &self.shared_sessions.is_some())
            .field("hosts", &self.hosts)
            .field("origins", &self.origins)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("unready_delay", &self.unready_delay)
            .field("health_routes", &self.health_routes);
        #[cfg(feature = "auth")]
        f.field("auth", &self.auth);
        #[cfg(feature = "metrics")]
        f.field("metrics", &self.metrics.is_some());
        f.finish_non_exhaustive()
    }
}

impl Default for HttpServerConfig {
    fn default() -> Self {
        HttpServerConfig {
            path: "/mcp".to_owned(),
            stateless: false,
            json_response: false,
            get_stream: true,
            http_sse: Some(("/sse".to_owned(), "/messages".to_owned())),
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 20_000,
            max_sessions_per_client: 1_000,
            max_requests_in_flight: 10_000,
            max_body: 4 << 20,
            body_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(30),
            max_header_bytes: 64 << 10,
            stream_queue: 256,
            keep_alive: Some(Duration::from_secs(15)),
            retry: Duration::from_secs(1),
            event_store: Some(Arc::new(InMemoryEventStore::default())),
            shared_sessions: None,
            hosts: Policy::Auto,
            origins: Policy::Auto,
            #[cfg(feature = "auth")]
            auth: None,
            shutdown_grace: Duration::from_secs(10),
            unready_delay: Duration::ZERO,
            health_routes: false,
            #[cfg(feature = "metrics")]
            metrics: None,
            drain: Arc::default(),
        }
    }
}

impl HttpServerConfig {
    /// The defaults: endpoint `/mcp`, sessions with SSE responses, the GET stream, the
    /// HTTP+SSE endpoints `/sse` + `/messages`, an in-memory event store, 30 minutes of idle
    /// expiry, at most 20,000 sessions (1,000 per client address), 4 MiB bodies, 64 KiB
    /// request heads, localhost-only Host and Origin on a loopback address. docs/reliability.md
    /// lists every bound.
    pub fn new() -> Self {
        Self::default()
    }
    /// The path of the MCP endpoint (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }
    /// No sessions: every POST is served on its own, GET and DELETE get 405, no
    /// `Mcp-Session-Id` is issued, and the server cannot call the client.
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }
    /// Answer requests with one `application/json` response instead of an SSE stream; what a
    /// handler sends besides its response then goes on the GET stream.
    pub fn json_response(mut self, json: bool) -> Self {
        self.json_response = json;
        self
    }
    /// Offer the standalone GET stream (default on; off answers GET with 405).
    pub fn get_stream(mut self, enabled: bool) -> Self {
        self.get_stream = enabled;
        self
    }
    /// Serve the HTTP+SSE transport of 2024-11-05 at these paths (default `/sse` and
    /// `/messages`), or not at all (`None`).
    pub fn http_sse(mut self, paths: Option<(&str, &str)>) -> Self {
        self.http_sse = paths.map(|(sse, messages)| (sse.to_owned(), messages.to_owned()));
        self
    }
    /// The former name of [`HttpServerConfig::http_sse`].
    #[deprecated(note = "renamed `http_sse`")]
    pub fn legacy_sse(self, paths: Option<(&str, &str)>) -> Self {
        self.http_sse(paths)
    }
    /// A session without requests or open streams for this long expires (404 afterwards).
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }
    /// At most this many live sessions (default 20,000), Streamable HTTP and HTTP+SSE
    /// together: a new one beyond (an initialize, or a GET of the HTTP+SSE stream) gets 503
    /// with `Retry-After` once the idle sessions are expired. In a fleet
    /// ([`shared_sessions`](Self::shared_sessions)) it bounds the copies this instance holds.
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max;
        self
    }
    /// At most this many live sessions created by one client address (default 1,000): a new
    /// one beyond gets 503 with `Retry-After`, as at [`max_sessions`](Self::max_sessions).
    /// The address is the TCP peer's as [`serve`](super::serve) sees it (or axum's
    /// `ConnectInfo<SocketAddr>`, for a router served otherwise; without it the bound does
    /// not apply). Behind a reverse proxy every client has the proxy's address: raise this
    /// to `max_sessions` there, and bound clients at the proxy.
    pub fn max_sessions_per_client(mut self, max: usize) -> Self {
        self.max_sessions_per_client = max;
        self
    }
    /// The most POSTs carrying requests whose handlers run at once, over all sessions and
    /// stateless requests (default 10,000): a request beyond gets 503. A POST holds its place
    /// until its handlers are done (a stateless request whose client went away included).
    pub fn max_requests_in_flight(mut self, max: usize) -> Self {
        self.max_requests_in_flight = max;
        self
    }
    /// The largest request body, in bytes (larger gets 413).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }
    /// How long a request body may take to arrive (slower gets 408).
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }
    /// How long request headers may take to arrive (used by [`serve`](super::serve)).
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }
    /// The most bytes of a request head (default 64 KiB; used by [`serve`](super::serve)):
    /// the request line, the header lines and the empty line that ends them, as received. A
    /// larger head gets 431 and its connection closes; so does one of more than 100 header
    /// lines.
    pub fn max_header_bytes(mut self, bytes: usize) -> Self {
        self.max_header_bytes = bytes;
        self
    }
    /// Events queued for one SSE connection; a client that lets more pile up is not reading,
    /// and its connection is dropped (the events stay in the store for it to resume).
    pub fn stream_queue(mut self, events: usize) -> Self {
        self.stream_queue = events;
        self
    }
    /// A comment line on idle SSE streams this often, to keep proxies from closing them
    /// (`None`: never).
    pub fn keep_alive(mut self, every: Option<Duration>) -> Self {
        self.keep_alive = every;
        self
    }
    /// The `retry` delay sent with the priming event of each stream (2025-11-25 and later).
    pub fn retry(mut self, retry: Duration) -> Self {
        self.retry = retry;
        self
    }
    /// Where SSE events are kept for resumption (`None`: streams are not resumable, no event
    /// ids are sent).
    pub fn event_store(mut self, store: Option<Arc<dyn EventStore>>) -> Self {
        self.event_store = store;
        self
    }

    /// Shares the sessions of the session revisions with the other instances of a fleet
    /// through `store`, so that any instance serves any session (see [`super::shared`]):
    /// a balancer in front need not be sticky. Use it with a shared [`event_store`](Self::event_store)
    /// (resumption on any instance) and a session factory that supports it (`mcp-server`'s
    /// `Server` does). `mcp-redis` has a store on Redis. Default: none, sessions live in this
    /// process.
    pub fn shared_sessions(mut self, store: Arc<dyn SharedSessions>) -> Self {
        self.shared_sessions = Some(store);
        self
    }
    /// Which Host headers are served (DNS-rebinding protection); others get 403.
    pub fn allowed_hosts(mut self, policy: Policy) -> Self {
        self.hosts = policy;
        self
    }
    /// Which Origin headers are served; others get 403. Requests without Origin (not from a
    /// browser) are served.
    pub fn allowed_origins(mut self, policy: Policy) -> Self {
        self.origins = policy;
        self
    }

    /// Protects the endpoint with OAuth 2.1 bearer tokens (feature `auth`): every request of
    /// the MCP and HTTP+SSE endpoints needs a token `auth`'s verifier accepts, and the
    /// protected resource metadata is served (see [`auth`](super::auth)).
    #[cfg(feature = "auth")]
    pub fn auth(mut self, auth: super::auth::AuthConfig) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// How long requests in flight may run on once a graceful shutdown starts (default 10
    /// seconds; see [`serve_router_with_shutdown`](super::serve_router_with_shutdown)). Those
    /// still running then are cancelled and answered with an error.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// How long a graceful shutdown keeps serving everything, `/readyz` answering 503, before
    /// it closes the listener and drains (default none). Behind a load balancer that probes
    /// `/readyz` (a Kubernetes readiness probe), a delay longer than the probe's period lets it
    /// stop sending new clients before this instance refuses connections.
    pub fn unready_delay(mut self, delay: Duration) -> Self {
        self.unready_delay = delay;
        self
    }

    /// Serve `/healthz` (liveness: 200 while the process serves) and `/readyz` (readiness:
    /// 200, and 503 from the moment a graceful shutdown starts, through its
    /// [`unready_delay`](Self::unready_delay)) beside the endpoint (default off). They answer
    /// anyone: no Host, Origin or token checks.
    pub fn health_routes(mut self, enabled: bool) -> Self {
        self.health_routes = enabled;
        self
    }

    /// Serve `GET /metrics` beside the endpoint (feature `metrics`): what `handle`'s recorder
    /// holds, in the Prometheus text format (see [`metrics`](super::metrics), whose
    /// [`install_prometheus`](super::metrics::install_prometheus) makes one). Like the health
    /// routes it answers anyone, without Host, Origin or token checks: bind the endpoint where
    /// only those who may read them reach it, or serve them elsewhere.
    #[cfg(feature = "metrics")]
    pub fn metrics(mut self, handle: super::metrics::PrometheusHandle) -> Self {
        self.metrics = Some(handle);
        self
    }

    /// Replaces [`Policy::Auto`] by what it means for a server bound (or not) to loopback.
    pub(crate) fn resolve(mut self, loopback: bool) -> Self {
        let auto = if loopback { Policy::Localhost } else { Policy::Any };
        if self.hosts == Policy::Auto {
            self.hosts = auto.clone();
        }
        if self.origins == Policy::Auto {
            self.origins = auto;
        }
        self
    }
}

/// The host part of a Host header or an origin's authority, without port or brackets' port.
fn host_name(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split_once(']').map_or(authority, |(h, _)| h);
    }
    match authority.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => authority,
    }
}

fn is_localhost(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host == "127.0.0.1" || host == "::1"
}

impl Policy {
    /// Whether a Host header value is allowed.
    pub(crate) fn allows_host(&self, value: &str) -> bool {
        let host = host_name(value.trim());
        match self {
            Policy::Any => true,
            Policy::Auto | Policy::Localhost => is_localhost(host),
            Policy::List(list) => list.iter().any(|h| host_name(h).eq_ignore_ascii_case(host)),
        }
    }

    /// Whether an Origin header value is allowed.
    pub(crate) fn allows_origin(&self, value: &str) -> bool {
        let value = value.trim();
        let authority = value.split_once("://").map_or(value, |(_, rest)| rest);
        let host = host_name(authority.trim_end_matches('/'));
        match self {
            Policy::Any => true,
            Policy::Auto | Policy::Localhost => is_localhost(host),
            Policy::List(list) => list.iter().any(|o| {
                if o.contains("://") {
                    o.trim_end_matches('/').eq_ignore_ascii_case(value.trim_end_matches('/'))
                } else {
                    host_name(o).eq_ignore_ascii_case(host)
                }
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_policy() {
        let p = Policy::Localhost;
        for ok in ["localhost", "localhost:3000", "127.0.0.1:1", "[::1]:8080", "[::1]", "LOCALHOST"] {
            assert!(p.allows_host(ok), "{ok}");
        }
        for bad in ["evil.example.com", "evil.example.com:80", "localhost.evil.com", "127.0.0.2", ""] {
            assert!(!p.allows_host(bad), "{bad}");
        }
        assert!(p.allows_origin("http://localhost:5173"));
        assert!(p.allows_origin("https://[::1]:1"));
        assert!(!p.allows_origin("http://evil.example.com"));
        assert!(!p.allows_origin("null"));
    }

    #[test]
    fn list_policy() {
        let p = Policy::List(vec!["api.example.com".into(), "https://app.example.com".into()]);
        assert!(p.allows_host("api.example.com:443"));
        assert!(!p.allows_host("app.example.com"));
        assert!(p.allows_origin("https://app.example.com"));
        assert!(!p.allows_origin("http://app.example.com"));
        assert!(p.allows_origin("https://api.example.com:8443"));
    }
}
