//! Serving over Streamable HTTP (feature `http`): the [`Server`] as the session factory of
//! `mcp-transport-http`'s endpoint.

use std::sync::Arc;

use axum::http;
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_jsonrpc::{Dispatcher, FrameSink, Peer, message};
use mcp_transport_http::server::{self, HttpServerConfig, SessionFactory};
use mcp_types::ProtocolVersion;
use tokio::net::ToSocketAddrs;

use super::Server;
use crate::context::session::SessionState;

impl SessionFactory for Server {
    fn connect(&self, sink: Arc<dyn FrameSink>) -> Dispatcher {
        let (state, service) = self.new_session(SessionState::new(), true);
        let dispatcher = Peer::driven(sink, service, self.shared.peer_config.clone());
        self.register(&state, dispatcher.peer(), true);
        dispatcher
    }
    /// A session a fleet shares: new, or rebuilt from the record the fleet keeps (revision,
    /// client capabilities and info, log level, subscriptions), which the copy here reloads
    /// when another instance changes it.
    fn connect_shared(
        &self,
        sink: Arc<dyn FrameSink>,
        record: Option<&server::SessionRecord>,
        handle: server::SharedRecord,
    ) -> Option<server::SharedSession> {
        let (state, version) = match record {
            Some(record) => {
                let (state, version) = SessionState::from_record(record)?;
                (state, Some(version))
            }
            None => (SessionState::new(), None),
        };
        state.mark_shared(handle);
        let (state, service) = self.new_session(state, true);
        let dispatcher = Peer::driven(sink, service, self.shared.peer_config.clone());
        if let Some(version) = version {
            dispatcher.peer().set_protocol_version(version);
        }
        self.register(&state, dispatcher.peer(), true);
        let weak = Arc::downgrade(&state);
        let refresh = Box::new(move |record: &server::SessionRecord| {
            weak.upgrade().is_none_or(|s| s.apply_record(record).is_some())
        });
        Some(server::SharedSession { dispatcher, refresh })
    }
    /// One POST outside any session: its handler polled in the POST's task (unless the
    /// server's [`PeerConfig::inline_handlers`](mcp_jsonrpc::PeerConfig::inline_handlers) is
    /// `Some(false)`). It hears of no changes: it has no stream to carry them.
    fn connect_stateless(&self, sink: Arc<dyn FrameSink>, version: ProtocolVersion) -> Dispatcher {
        let (state, service) = self.new_session(SessionState::preinitialized(), false);
        let dispatcher = Peer::driven(sink, service, self.shared.peer_config.clone());
        dispatcher.peer().set_protocol_version(version);
        self.register(&state, dispatcher.peer(), false);
        dispatcher
    }
    /// Kept for [`Server::session`] (the endpoints that are gone dropped).
    fn fleet_loader(&self, loader: server::SessionLoader) {
        let mut loaders = self.shared.loaders.lock_unpoisoned();
        loaders.retain(server::SessionLoader::is_live);
        loaders.push(loader);
    }
    /// The 2026-07-28 `Mcp-Name` and `Mcp-Param-*` headers against the request's body (see
    /// `serve::param_headers`).
    fn check_request(&self, request: &message::Request, headers: &http::HeaderMap) -> Result<(), server::Rejection> {
        crate::serve::param_headers::check(&self.shared, request, headers)
    }
    /// The scopes of the tool, prompt or resource a request names (`ToolDef::scopes`) against
    /// the token's (see `serve::auth`).
    #[cfg(feature = "auth")]
    fn authorize(
        &self,
        request: &message::Request,
        principal: &server::auth::Principal,
    ) -> Result<(), server::auth::InsufficientScope> {
        crate::serve::auth::authorize(&self.shared, request, principal)
    }
}

impl Server {
    /// Serves Streamable HTTP at `http://addr/mcp` (and HTTP+SSE at `/sse`) with the default
    /// [`HttpServerConfig`].
    ///
    /// It returns only if binding `addr` fails: failures to accept a connection are logged and
    /// retried, so otherwise it serves until its future is dropped (the task aborted, or the
    /// runtime shut down); [`Server::serve_http_until`] stops gracefully on a signal. See
    /// [`mcp_transport_http::server::serve`].
    ///
    /// ```no_run
    /// # async fn run(server: mcp_server::Server) -> std::io::Result<()> {
    /// server.serve_http("127.0.0.1:8080").await
    /// # }
    /// ```
    pub async fn serve_http(&self, addr: impl ToSocketAddrs) -> std::io::Result<()> {
        self.serve_http_with(addr, HttpServerConfig::default()).await
    }

    /// Serves Streamable HTTP at `addr` with `config`; returns as
    /// [`Server::serve_http`] does.
    pub async fn serve_http_with(&self, addr: impl ToSocketAddrs, config: HttpServerConfig) -> std::io::Result<()> {
        server::serve(Arc::new(self.clone()), config, addr).await
    }

    /// Serves Streamable HTTP at `addr` with `config` until `signal` completes, then shuts
    /// down gracefully and returns `Ok`: new connections are refused, `/readyz` (with
    /// [`HttpServerConfig::health_routes`]) turns 503, GET streams end with a `retry` hint,
    /// requests in flight get [`HttpServerConfig::shutdown_grace`] to finish, and those still
    /// running then are answered with an error and cancelled (see
    /// [`mcp_transport_http::server::serve_router_with_shutdown`]).
    ///
    /// ```no_run
    /// # async fn run(server: mcp_server::Server) -> std::io::Result<()> {
    /// use mcp_transport_http::server::HttpServerConfig;
    /// let config = HttpServerConfig::default().health_routes(true);
    /// server.serve_http_until("0.0.0.0:8080", config, mcp_server::shutdown_signal()).await
    /// # }
    /// ```
    pub async fn serve_http_until(
        &self,
        addr: impl ToSocketAddrs,
        config: HttpServerConfig,
        signal: impl std::future::Future<Output = ()> + Send,
    ) -> std::io::Result<()> {
        server::serve_with_shutdown(Arc::new(self.clone()), config, addr, signal).await
    }

    /// The endpoint as an axum router, to merge into an app beside other routes. Serve the app
    /// with [`mcp_transport_http::server::serve_router`], which sets TCP_NODELAY and the header
    /// limits; `axum::serve` leaves Nagle's algorithm on (see `docs/http.md`).
    ///
    /// ```no_run
    /// # fn app(server: mcp_server::Server) -> axum::Router {
    /// use mcp_transport_http::server::HttpServerConfig;
    /// axum::Router::new()
    ///     .route("/health", axum::routing::get(|| async { "ok" }))
    ///     .merge(server.http_router(HttpServerConfig::default()))
    /// # }
    /// ```
    pub fn http_router(&self, config: HttpServerConfig) -> axum::Router {
        server::router(Arc::new(self.clone()), config)
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::Pin;

    use mcp_jsonrpc::transport::Outbound;

    use super::*;

    /// A sink that drops what it is given.
    struct Nowhere;

    impl FrameSink for Nowhere {
        fn deliver(&self, _: Outbound) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
            Box::pin(async {})
        }
    }

    #[tokio::test]
    async fn sessions_that_ended_leave_no_entry_behind() {
        let server = Server::builder("ended", "1").build().unwrap();
        let dispatchers: Vec<Dispatcher> =
            (0..1000).map(|_| SessionFactory::connect(&server, Arc::new(Nowhere))).collect();
        assert_eq!(server.shared.listed_sessions(), 1000);
        for dispatcher in dispatchers {
            dispatcher.peer().close();
        }
        // Each `Weak` left would keep its session's allocation: none is left once all ended.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while server.shared.listed_sessions() > 0 {
            assert!(tokio::time::Instant::now() < deadline, "{} entries left", server.shared.listed_sessions());
            tokio::task::yield_now().await;
        }
    }
}
