//! [`RequestInfo`]: the HTTP request that carried a message, as the message's handler sees it
//! (the attachment of its frame); built by the handlers of this folder.

use std::sync::{Arc, Weak};

use crate::server::endpoint::InFlight;
use crate::server::shared::{FieldChange, SessionRecord, SharedError};
use crate::server::stream::router::SessionRouter;

/// The HTTP request that carried a message, attached to it for its handler
/// (`RequestContext::attachment`, or `Context::http_request` in `mcp-server`).
pub struct RequestInfo {
    pub(super) parts: http::request::Parts,
    pub(super) session_id: Option<Arc<str>>,
    pub(super) stream: Option<(Weak<SessionRouter>, u64)>,
    /// The POST's place among the requests in flight, held while its handlers hold this.
    pub(super) _in_flight: Option<InFlight>,
    /// The client's address, when the endpoint knows it.
    pub(super) client: Option<std::net::IpAddr>,
}

impl std::fmt::Debug for RequestInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestInfo")
            .field("method", &self.parts.method)
            .field("uri", &self.parts.uri)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl RequestInfo {
    /// The request's method, URI, headers and extensions (what middleware put there, e.g. an
    /// authenticated user). On an endpoint that checks tokens (feature `auth`), the
    /// `Authorization` header is not among the headers: the token stays with the endpoint.
    pub fn parts(&self) -> &http::request::Parts {
        &self.parts
    }
    /// The request's headers (without `Authorization` on an endpoint that checks tokens).
    pub fn headers(&self) -> &http::HeaderMap {
        &self.parts.headers
    }
    /// The request's extensions.
    pub fn extensions(&self) -> &http::Extensions {
        &self.parts.extensions
    }
    /// The request's URI.
    pub fn uri(&self) -> &http::Uri {
        &self.parts.uri
    }
    /// The address of the client that sent the request, when the endpoint knows it: served by
    /// [`serve`](crate::server::serve), or by a router served with axum's
    /// `into_make_service_with_connect_info::<SocketAddr>` (an IPv4 client of a dual-stack
    /// listener as its IPv4 address).
    pub fn client_address(&self) -> Option<std::net::IpAddr> {
        self.client
    }
    /// The session, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }
    /// Whether this request's session is shared by a fleet
    /// ([`HttpServerConfig::shared_sessions`]): its factory then records what it knows of the
    /// session with [`update_session`](Self::update_session) whenever that changes.
    ///
    /// [`HttpServerConfig::shared_sessions`]: crate::server::HttpServerConfig::shared_sessions
    pub fn shares_session(&self) -> bool {
        self.router().is_some_and(|router| router.shared().is_some())
    }

    /// Applies `changes` to what the fleet records of this request's session (its factory's
    /// fields: revision, client capabilities, log level, ...), field by field, and tells the
    /// other instances' copies to reload it. The first change (at `initialize`) makes the
    /// record. The record as it is after the change, whatever other instances changed too
    /// (for the factory to take, rather than changing its copy before the record holds the
    /// change); `None` when the session is not shared. Fails when the store does (the request
    /// should then fail: another instance would serve the session without the change), with
    /// [`SessionEnded`](crate::server::SessionEnded) when the session ended meanwhile (this
    /// copy then ends too), or when a field's name starts with `.` (the transport's).
    pub async fn update_session(&self, changes: &[FieldChange]) -> Result<Option<SessionRecord>, SharedError> {
        match self.router() {
            Some(router) => router.update(changes).await,
            None => Ok(None),
        }
    }

    fn router(&self) -> Option<Arc<SessionRouter>> {
        self.stream.as_ref().and_then(|(router, _)| router.upgrade())
    }

    /// Closes the SSE connection that carries this request's response, without ending the
    /// request (SSE polling, SEP-1699): the client reconnects after the `retry` delay with
    /// `Last-Event-ID` and gets what was sent meanwhile. Whether there was a connection to
    /// close: JSON responses and HTTP+SSE sessions have none, and a stream of which the client
    /// holds no event id yet (before 2025-11-25 no priming event gives it one) is left open,
    /// for the client could not resume it.
    pub async fn close_sse_stream(&self) -> bool {
        match &self.stream {
            Some((router, stream)) => match router.upgrade() {
                Some(router) => router.close_connection(*stream).await,
                None => false,
            },
            None => false,
        }
    }
}
