//! What the endpoint asks of the layer above it: a [`SessionFactory`] runs each session (a
//! driven peer per session), rebuilds the copies of sessions a fleet shares, and checks what
//! only it can (the headers of a request of the stateless revision, the scopes of a request).
//! It uses only `auth`'s types.

use std::sync::Arc;

use mcp_jsonrpc::{Dispatcher, ErrorObject, FrameSink, message};
use mcp_types::ProtocolVersion;

#[cfg(feature = "auth")]
use super::auth;
use super::shared::SessionRecord;
use super::stream::router::SharedRecord;

/// What runs the sessions of an HTTP endpoint: a driven peer
/// ([`Peer::driven`](mcp_jsonrpc::Peer::driven)) per session, whose frames go to `sink` (the
/// session's routing) and to which the endpoint hands each message POSTed to the session.
pub trait SessionFactory: Send + Sync + 'static {
    /// Starts a new session (its first message is `initialize`).
    fn connect(&self, sink: Arc<dyn FrameSink>) -> Dispatcher;
    /// Serves messages outside any session (stateless mode, or one 2026-07-28 request) as for
    /// a client that negotiated `version` earlier; the client's capabilities are unknown, so
    /// the server asks nothing of it.
    fn connect_stateless(&self, sink: Arc<dyn FrameSink>, version: ProtocolVersion) -> Dispatcher;
    /// Starts a session that the instances of a fleet share (see [`shared`]): a new one
    /// (`record` is `None`, its first message is initialize), or the copy here of one this or
    /// another instance started, rebuilt from the `record` kept of it (changed with
    /// [`RequestInfo::update_session`] from a request, or through `handle` from outside
    /// one). `None` when the factory cannot share sessions (the default): a new session is
    /// then started with [`connect`](Self::connect) and lives here only, and a record is not
    /// served.
    ///
    /// [`shared`]: crate::server::shared
    /// [`RequestInfo::update_session`]: crate::server::RequestInfo::update_session
    fn connect_shared(
        &self,
        sink: Arc<dyn FrameSink>,
        record: Option<&SessionRecord>,
        handle: SharedRecord,
    ) -> Option<SharedSession> {
        let _ = (sink, record, handle);
        None
    }
    /// Hands the factory the [`SessionLoader`] of an endpoint whose sessions a fleet shares,
    /// when the endpoint is built: how it makes this instance hold a copy of a session another
    /// instance serves, from outside any request. Default: not kept.
    fn fleet_loader(&self, loader: SessionLoader) {
        let _ = loader;
    }
    /// Checks a request of the stateless revision against the headers of its POST before it
    /// is served, for what the endpoint cannot check without knowing the request's meaning
    /// (the 2026-07-28 `Mcp-Name` and `Mcp-Param-*` headers, say). The endpoint has checked
    /// `MCP-Protocol-Version` and `Mcp-Method` already; a [`Rejection`] is the answer
    /// instead. Read the params through the request's index
    /// ([`Request::param`](message::Request::param)), which is built by then.
    /// Default: every request passes.
    fn check_request(&self, request: &message::Request, headers: &http::HeaderMap) -> Result<(), Rejection> {
        let _ = (request, headers);
        Ok(())
    }
    /// Whether `principal` (the verified token of the POST, feature `auth`) may make
    /// `request`: the scopes it needs otherwise, answered with 403 `insufficient_scope` before
    /// the request is served (the endpoint's required scopes are checked already). Asked of
    /// every request of an endpoint with an [`AuthConfig`](auth::AuthConfig). Default: every
    /// request passes.
    #[cfg(feature = "auth")]
    fn authorize(
        &self,
        request: &message::Request,
        principal: &auth::Principal,
    ) -> Result<(), auth::InsufficientScope> {
        let _ = (request, principal);
        Ok(())
    }
}

/// The copy in this instance of a session a fleet shares (see
/// [`SessionFactory::connect_shared`]).
pub struct SharedSession {
    /// The session's entry point.
    pub dispatcher: Dispatcher,
    /// Applies a record another instance changed (its log level, subscriptions, ...) to this
    /// copy, unless the copy holds as new a version already; whether it could be read.
    pub refresh: Refresh,
}

/// How a copy of a shared session takes a record another instance changed (see
/// [`SharedSession::refresh`]).
pub type Refresh = Box<dyn Fn(&SessionRecord) -> bool + Send + Sync>;

impl std::fmt::Debug for SharedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedSession").finish_non_exhaustive()
    }
}

/// A request refused before it is served: the HTTP status and the JSON-RPC error of the
/// answer (see [`SessionFactory::check_request`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// The answer's HTTP status.
    pub status: http::StatusCode,
    /// The JSON-RPC error the answer carries, for the request's id.
    pub error: ErrorObject,
}

impl Rejection {
    /// 400 with -32020 (`HeaderMismatch`): a header the request needs is missing, malformed,
    /// or disagrees with the body. `detail` follows "Header mismatch: " in the message.
    ///
    /// ```
    /// use mcp_transport_http::server::Rejection;
    ///
    /// let rejection = Rejection::header_mismatch("the Mcp-Name header is missing");
    /// assert_eq!(rejection.status, 400);
    /// assert_eq!(rejection.error.code, -32020);
    /// assert_eq!(rejection.error.message, "Header mismatch: the Mcp-Name header is missing");
    /// ```
    pub fn header_mismatch(detail: impl std::fmt::Display) -> Rejection {
        Rejection { status: http::StatusCode::BAD_REQUEST, error: ErrorObject::header_mismatch(detail) }
    }
}

/// An endpoint's way to load a session a fleet shares into this instance, from outside any
/// request (see [`SessionFactory::fleet_loader`]): an operator's change to a session another
/// instance serves. Holds the endpoint weakly.
#[derive(Clone)]
pub struct SessionLoader(pub(crate) std::sync::Weak<crate::server::endpoint::App>);

impl std::fmt::Debug for SessionLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionLoader").finish_non_exhaustive()
    }
}

impl SessionLoader {
    /// Makes this instance hold a copy of the shared session `id`, loaded from the fleet's
    /// store as a request of it would load it (two round trips to the store: the record read,
    /// then checked still there), whoever owns it; its copy is then connected through
    /// [`SessionFactory::connect_shared`]. Whether this instance holds a copy now (`false`:
    /// no such session, the endpoint is gone, or the store failed, which is logged).
    pub async fn load(&self, id: &str) -> bool {
        let Some(app) = self.0.upgrade() else { return false };
        app.load_for_operator(id).await
    }

    /// Whether the endpoint still serves.
    pub fn is_live(&self) -> bool {
        self.0.strong_count() > 0
    }
}
