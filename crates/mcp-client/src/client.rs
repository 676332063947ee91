//! [`Client`]: what a connected client holds, which every call reads (the peer, the server's
//! description, the connection of its era, the event stream, the schema checks), the accessors,
//! [`Client::send_request`] and the span every request is sent in, and [`Client::close`]. The
//! calls are `impl Client` blocks of [`crate::calls`], above this module.

use std::sync::Arc;
use std::time::Duration;

use mcp_jsonrpc::{CallOptions, Peer, ProgressRegistration};
use mcp_transport_stdio::ChildProcess;
use mcp_types::{DiscoverResult, Implementation, InitializeResult, ProtocolVersion, ServerCapabilities};
use tokio::sync::broadcast;
use tracing::Instrument as _;

use crate::connection::stateless::StatelessConnection;
use crate::connection::{Connection, ServerDescription};
use crate::error::ClientError;
use crate::middleware::{self, ClientMiddleware};
use crate::trace::{self, Target};
use crate::validate::SchemaChecks;
use crate::wire::event::ServerEvent;

/// The progress routes of running tasks, by task id: a task's progress comes under the token
/// of the call that created it, long after that call was answered.
pub(crate) type TaskProgress = std::sync::Mutex<std::collections::VecDeque<(String, ProgressRegistration)>>;

/// A connected client.
///
/// Dropping it ends the connection as [`Client::close`] does, without waiting: reading stops,
/// what was queued is written, the transport closes (over HTTP its streams end and the session
/// is deleted; a child server is killed). Before, a dropped client's HTTP GET stream went on
/// forever, and with it the server's session.
pub struct Client {
    pub(crate) peer: Peer,
    pub(crate) server: ServerDescription,
    pub(crate) version: ProtocolVersion,
    pub(crate) connection: Connection,
    pub(crate) events: broadcast::Sender<ServerEvent>,
    pub(crate) child: tokio::sync::Mutex<Option<ChildProcess>>,
    pub(crate) checks: SchemaChecks,
    /// The progress routes of the tasks this client started with a progress callback.
    pub(crate) task_progress: TaskProgress,
    /// Where the spans of requests read the HTTP session id from.
    pub(crate) session_source: trace::SessionSource,
    /// The layers around each request, outermost first ([`ClientBuilder::layer`](crate::ClientBuilder::layer)).
    pub(crate) layers: Box<[Arc<dyn ClientMiddleware>]>,
}

impl Drop for Client {
    fn drop(&mut self) {
        self.peer.close();
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server.info)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// The server's name, version and other details (from `initialize`, or the `serverInfo`
    /// of `server/discover`).
    pub fn server_info(&self) -> &Implementation {
        &self.server.info
    }

    /// The server's capabilities.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.server.capabilities
    }

    /// The server's instructions, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.server.instructions.as_deref()
    }

    /// The negotiated protocol revision (2026-07-28: [`ProtocolVersion::is_stateless`]).
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// The server's answer to `server/discover` (2026-07-28: its supported revisions and
    /// caching hints), `None` for a session opened with `initialize`.
    pub fn discover_result(&self) -> Option<&DiscoverResult> {
        self.stateless().map(|s| &s.discovered)
    }

    /// The server's answer to `initialize`, `None` for a 2026-07-28 connection.
    pub fn initialize_result(&self) -> Option<&InitializeResult> {
        match &self.connection {
            Connection::Session(s) => Some(&s.init),
            Connection::Stateless(_) => None,
        }
    }

    /// The stateless connection, `None` in a session.
    pub(crate) fn stateless(&self) -> Option<&StatelessConnection> {
        match &self.connection {
            Connection::Stateless(s) => Some(s),
            Connection::Session(_) => None,
        }
    }

    /// The connection, for calls this API does not cover. Requests sent through it carry no
    /// 2026-07-28 `_meta`: prefer [`Client::send_request`].
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// A stream of the server's notifications (a bounded broadcast: a slow reader misses the
    /// oldest ones and is told so).
    pub fn events(&self) -> broadcast::Receiver<ServerEvent> {
        self.events.subscribe()
    }

    /// Sends a typed request this API does not cover, with what the connection's revision
    /// needs: in 2026-07-28 the per-request `_meta`, and the input a server asks for
    /// (`input_required`, for `tools/call`, `prompts/get`, `resources/read`); in a session, a
    /// new session when the server ended the old one. No capability is checked.
    ///
    /// Each request is sent in a `mcp.client.request` span (see `docs/tracing.md`); with the
    /// `opentelemetry` feature its `_meta` carries the span's W3C trace context, unless the
    /// params or [`CallOptions::meta`] set those members already.
    pub async fn send_request<R: mcp_types::Request>(
        &self,
        params: R::Params,
        options: CallOptions,
    ) -> Result<R::Result, ClientError>
    where
        R::Params: Clone,
    {
        self.send_request_about::<R>(params, options, Target::None).await
    }

    /// [`Client::send_request`] for a request about `target` (its span's name and attributes).
    pub(crate) async fn send_request_about<R: mcp_types::Request>(
        &self,
        params: R::Params,
        options: CallOptions,
        target: Target<'_>,
    ) -> Result<R::Result, ClientError>
    where
        R::Params: Clone,
    {
        self.traced(R::METHOD, target, params, options, |params, options| async move {
            match &self.connection {
                Connection::Session(s) => s.request::<R>(&self.peer, params, options).await,
                Connection::Stateless(s) => s.call::<R>(&self.peer, params, options).await,
            }
        })
        .await
    }

    /// Sends a request with `params` through `send` in its `mcp.client.request` span, and
    /// through the client's layers if it has any (its params encoded as JSON for them, what
    /// they give back decoded): every request the client makes goes through here (or through
    /// `initialize`'s and `server/discover`'s own spans), so each has its span, its id on it,
    /// and (feature `opentelemetry`) its trace context in `_meta`.
    pub(crate) async fn traced<P, T, F>(
        &self,
        method: &str,
        target: Target<'_>,
        params: P,
        mut options: CallOptions,
        send: impl Fn(P, CallOptions) -> F + Send + Sync,
    ) -> Result<T, ClientError>
    where
        P: serde::Serialize + serde::de::DeserializeOwned,
        T: serde::Serialize + serde::de::DeserializeOwned,
        F: Future<Output = Result<T, ClientError>> + Send,
    {
        let span = trace::request_span(method, self.version, target, &self.session_source);
        trace::prepare(&span, &mut options);
        // A clone of a disabled span is a copy of nothing.
        let outcome = if self.layers.is_empty() {
            send(params, options).instrument(span.clone()).await
        } else if self.stateless().is_some() && crate::connection::stateless::INPUT_METHODS.contains(&method) {
            // A layer may send it again: the input its rounds were given is kept for that.
            let run = middleware::run(&self.layers, method, params, options, send);
            crate::serve::input::remembering(run).instrument(span.clone()).await
        } else {
            middleware::run(&self.layers, method, params, options, send).instrument(span.clone()).await
        };
        trace::record_outcome(&span, &outcome);
        outcome
    }

    /// Drops every cached list page (see
    /// [`ClientBuilder::cache_lists`](crate::ClientBuilder::cache_lists)).
    pub fn clear_cache(&self) {
        if let Some(cache) = self.stateless().and_then(|s| s.cache.as_ref()) {
            cache.clear();
        }
    }

    /// [`ClientError::NotInRevision`] for `what`.
    pub(crate) fn not_in_revision(&self, what: &str) -> ClientError {
        ClientError::NotInRevision { what: what.to_owned(), version: self.version }
    }

    /// Performs the handshake again over the same connection: over HTTP, a new session (the
    /// server ended the old one, or to start afresh). Returns the server's new answer; the
    /// accessors ([`Client::server_info`], [`Client::server_capabilities`], ...) keep
    /// describing the first one. A 2026-07-28 connection has no handshake:
    /// [`ClientError::NotInRevision`].
    pub async fn reinitialize(&self) -> Result<InitializeResult, ClientError> {
        match &self.connection {
            Connection::Session(s) => s.reinitialize(&self.peer).await,
            Connection::Stateless(_) => Err(self.not_in_revision("initialize")),
        }
    }

    /// Closes the connection. What was sent before is written first (a
    /// `notifications/cancelled` of a call just dropped reaches the server), within the
    /// connection's `shutdown_grace`, or a child server's grace
    /// ([`ChildCommand::grace`](mcp_transport_stdio::ChildCommand::grace)). A child server is
    /// stopped the way the specification asks (its stdin closed, then SIGTERM, then SIGKILL)
    /// while its stdout is still read, so a server that is still writing is not cut off
    /// mid-message; one that no longer reads its stdin gets SIGTERM once its grace is over. It
    /// is always reaped.
    pub async fn close(&self) -> Result<(), ClientError> {
        if let Some(s) = self.stateless() {
            s.background.lock().await.subscription = None;
        }
        let child = self.child.lock().await.take();
        let stopped = match child {
            Some(child) => {
                // The queue goes out before the child's stdin closes (the writer closes it),
                // within the child's grace: a child that does not read its stdin gets SIGTERM
                // then, not after the connection's own grace too.
                let written = tokio::time::timeout(child.grace(), self.peer.close_writing()).await.is_ok();
                Some(if written { child.shutdown().await } else { child.terminate().await })
            }
            None => None,
        };
        self.peer.close();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.peer.closed()).await;
        if let Some(stopped) = stopped {
            stopped?;
        }
        Ok(())
    }
}
