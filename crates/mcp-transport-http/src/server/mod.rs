//! The Streamable HTTP server: one MCP endpoint as an axum router, sessions, SSE streams,
//! resumability, DNS-rebinding protection, and the HTTP+SSE endpoints of 2024-11-05.
//!
//! - [`router`] gives an [`axum::Router`] serving the endpoint (`/mcp` by default) that can be
//!   merged into an existing app beside other routes; [`serve`] binds an address and serves it
//!   (TCP_NODELAY on, header and body limits).
//! - [`serve_with_shutdown`] and [`serve_router_with_shutdown`] stop on a signal and drain
//!   gracefully; [`HttpServerConfig::health_routes`] adds `/healthz` and `/readyz`.
//! - What runs each session is a [`SessionFactory`]: `mcp-server`'s `Server` is one, so most
//!   users call `server.serve_http(addr)` or `server.http_router(config)` there.
//! - Handlers reach the HTTP request of their message through [`RequestInfo`], the attachment
//!   of the frame (`RequestContext::attachment`).
//!
//! Behaviour, per the 2025-11-25 transport text:
//! - POST carries one message (or a batch where the session's revision allows one).
//!   Notifications and responses get 202; requests get an SSE stream (or one JSON response with
//!   [`HttpServerConfig::json_response`]), and what their handlers send (progress, logs,
//!   sampling and elicitation requests) travels on that same stream.
//! - GET opens the standalone SSE stream for server-initiated messages (405 when disabled,
//!   409 when one is open); with `Last-Event-ID` it resumes a stream instead: what that stream
//!   sent after the id is replayed from the [`EventStore`], then the stream continues live.
//! - DELETE ends a session.
//! - `Mcp-Session-Id` is issued at initialize (128 random bits, hex); a request without it gets
//!   400, with an unknown or expired one 404. Idle sessions expire; live sessions are
//!   bounded per server and per client address (503 with `Retry-After` beyond). A session is
//!   served only through its own transport's endpoints (404 otherwise). A stateless mode
//!   serves every POST on its own.
//! - `MCP-Protocol-Version`, when present, must name a revision we speak (400 otherwise); the
//!   session's negotiated revision governs the encoding.
//! - A dropped connection is not a cancellation: the request runs on, and its events wait in
//!   the store for the client to resume. `notifications/cancelled` cancels.
//!
//! A POST of the stateless revision (2026-07-28) carries one request, served on its own: its
//! `MCP-Protocol-Version` and `Mcp-Method` headers must agree with its body (400 with -32020
//! otherwise); the headers whose meaning the endpoint does not know (`Mcp-Name`,
//! `Mcp-Param-*`) are the factory's to check ([`SessionFactory::check_request`]).
//!
//! With the feature `auth`, [`HttpServerConfig::auth`] makes the endpoint an OAuth 2.1
//! resource server (see [`auth`]).
//!
//! ```no_run
//! use std::sync::Arc;
//! use mcp_transport_http::server::{HttpServerConfig, SessionFactory, router};
//!
//! # fn app(factory: Arc<dyn SessionFactory>) {
//! let app = axum::Router::new()
//!     .route("/health", axum::routing::get(|| async { "ok" }))
//!     .merge(router(factory, HttpServerConfig::default()));
//! # let _ = app;
//! # }
//! ```

#[cfg(feature = "auth")]
pub mod auth;
mod checks;
mod config;
mod endpoint;
mod factory;
mod handlers;
#[cfg(feature = "metrics")]
pub mod metrics;
mod response;
mod routes;
mod session;
pub mod shared;
mod shutdown;
mod sse;
mod stream;

use std::sync::Arc;

pub use config::{HttpServerConfig, Policy};
pub use factory::{Refresh, Rejection, SessionFactory, SessionLoader, SharedSession};
pub use handlers::info::RequestInfo;
pub use shared::{
    Audience, COPY_FIELD_PREFIX, Delivery, Fanout, FieldChange, InMemorySharedSessions, STANDALONE_FIELD, SessionCopy,
    SessionEnded, SessionRecord, SharedError, SharedFuture, SharedSessions, TAG_BITS, Touched,
};
pub use shutdown::serve_router_with_shutdown;
pub use stream::event_store::{EventStore, InMemoryEventStore, StoredEvent};
pub use stream::router::SharedRecord;
use tokio::net::{TcpListener, ToSocketAddrs};

/// An axum router serving the MCP endpoint (and the HTTP+SSE endpoints if enabled) with
/// sessions run by `factory`.
///
/// [`Policy::Auto`] host and origin checks mean the localhost allow-list here (the bind
/// address is unknown); [`serve`] decides by the address it binds.
pub fn router(factory: Arc<dyn SessionFactory>, config: HttpServerConfig) -> axum::Router {
    routes::router(factory, config.resolve(true))
}

/// Binds `addr` and serves the endpoint.
///
/// It returns only if binding fails (or the bound address cannot be read): failures to
/// accept a connection are logged and retried, so otherwise it serves until its future is
/// dropped (the task aborted, or the runtime shut down). Connections already accepted run on
/// in their own tasks. [`serve_with_shutdown`] stops gracefully on a signal.
///
/// With [`Policy::Auto`], Host and Origin are checked against the localhost allow-list when
/// the address is a loopback one, and not checked otherwise.
pub async fn serve(
    factory: Arc<dyn SessionFactory>,
    config: HttpServerConfig,
    addr: impl ToSocketAddrs,
) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    serve_listener(factory, config, listener).await
}

/// Serves the endpoint on a bound listener (see [`serve`]).
pub async fn serve_listener(
    factory: Arc<dyn SessionFactory>,
    config: HttpServerConfig,
    listener: TcpListener,
) -> std::io::Result<()> {
    serve_listener_with_shutdown(factory, config, listener, std::future::pending()).await
}

/// Serves any axum router on `listener` the way [`serve`] does: HTTP/1.1, TCP_NODELAY, the
/// header limits and timeouts of `config`. Use it to serve your app with the MCP router merged
/// in; [`serve_router_with_shutdown`] stops on a signal.
///
/// It never returns an error, and returns only when its future is dropped (the task aborted,
/// or the runtime shut down): a failure to accept a connection (out of file descriptors, say)
/// is logged and retried after 20 ms. Connections already accepted run on in their own tasks.
pub async fn serve_router(
    listener: TcpListener,
    router: axum::Router,
    config: &HttpServerConfig,
) -> std::io::Result<()> {
    serve_router_with_shutdown(listener, router, config, std::future::pending()).await
}

/// Binds `addr` and serves the endpoint as [`serve`] does until `signal` completes, then
/// shuts down gracefully (see [`serve_router_with_shutdown`]) and returns `Ok`.
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_transport_http::server::{self, HttpServerConfig, SessionFactory};
///
/// # async fn run(factory: Arc<dyn SessionFactory>, signal: impl std::future::Future<Output = ()> + Send) -> std::io::Result<()> {
/// let config = HttpServerConfig::default().health_routes(true);
/// server::serve_with_shutdown(factory, config, "0.0.0.0:8080", signal).await
/// # }
/// ```
pub async fn serve_with_shutdown(
    factory: Arc<dyn SessionFactory>,
    config: HttpServerConfig,
    addr: impl ToSocketAddrs,
    signal: impl std::future::Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    serve_listener_with_shutdown(factory, config, listener, signal).await
}

/// Serves the endpoint on a bound listener until `signal` completes (see
/// [`serve_with_shutdown`]).
pub async fn serve_listener_with_shutdown(
    factory: Arc<dyn SessionFactory>,
    config: HttpServerConfig,
    listener: TcpListener,
    signal: impl std::future::Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let loopback = listener.local_addr()?.ip().is_loopback();
    let config = config.resolve(loopback);
    let limits = config.clone();
    serve_router_with_shutdown(listener, routes::router(factory, config), &limits, signal).await
}
