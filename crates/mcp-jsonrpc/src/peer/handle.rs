//! The handle on a connection ([`Peer`]): its revision, closing it, cancelling what it
//! serves, sending notifications and frames, and what it has in flight. Uses the connection's
//! state.

use crate::sync::MutexExt as _;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use mcp_types::{ProtocolVersion, RequestId};

use crate::message::{self, Body};
use crate::transport::{FrameHints, FrameKind, Outbound, Route};

use super::error::CallError;
use super::shared::{Out, Shared, end_connection, wind_down};

/// A handle on a connection: make calls, send notifications, close. Cheap to clone.
#[derive(Clone)]
pub struct Peer {
    pub(super) shared: Arc<Shared>,
    /// The incoming request on whose behalf this handle sends, if any.
    pub(super) related: Option<RequestId>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer").field("closed", &self.is_closed()).finish_non_exhaustive()
    }
}

impl Peer {
    /// The protocol revision used to encode outgoing params and results (until negotiation
    /// sets it, the newest session revision).
    pub fn protocol_version(&self) -> ProtocolVersion {
        let v = self.shared.version.load(Ordering::Relaxed);
        ProtocolVersion::ALL.get(v as usize).copied().unwrap_or(ProtocolVersion::LATEST)
    }

    /// Sets the protocol revision (after negotiation). Batches are accepted only in revisions
    /// that have them.
    pub fn set_protocol_version(&self, version: ProtocolVersion) {
        self.shared.version.store(version as u8, Ordering::Relaxed);
    }

    /// Whether the connection is over.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }

    /// Waits until the connection is over ([`Peer::is_closed`]): the other side went away or
    /// it was closed. Running handlers still have their grace then; one that serves until the
    /// connection ends (a stream of notifications) stops at this, not at the grace's end.
    pub async fn ended(&self) {
        self.shared.ended.cancelled().await;
    }

    /// Stops reading; pending calls fail, running handlers get the shutdown grace, queued
    /// frames are written, and the transport is closed.
    pub fn close(&self) {
        if self.shared.shutdown.is_cancelled() {
            return;
        }
        self.shared.shutdown.cancel();
        if matches!(self.shared.out, Out::Sink(_)) {
            // No reader task to wind the connection down: do it here (and wait out the
            // handlers' grace in a task, if any are running).
            let shared = self.shared.clone();
            end_connection(&shared);
            if shared.running.lock_unpoisoned().is_empty() {
                shared.done.cancel();
            } else if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    wind_down(&shared).await;
                    shared.done.cancel();
                });
            } else {
                shared.handlers.cancel();
                shared.done.cancel();
            }
        }
    }

    /// Writes every frame queued so far (a `notifications/cancelled` of a call just dropped,
    /// say), then closes the transport's writing half (a child server's stdin: the first step
    /// of its shutdown) while the reading goes on; returns once that is done. Frames sent
    /// afterwards are not written (calls fail with [`CallError::Closed`]). A write the other
    /// side does not read gets [`PeerConfig::shutdown_grace`], and so does closing.
    ///
    /// [`Peer::close`] writes what is queued too, but only once reading has stopped; this is
    /// for a peer that must see everything before its input ends, while its output is still
    /// read. A driven connection ([`Peer::driven`]) queues nothing: this returns at once.
    ///
    /// [`PeerConfig::shutdown_grace`]: super::PeerConfig::shutdown_grace
    pub async fn close_writing(&self) {
        if matches!(self.shared.out, Out::Sink(_)) {
            return;
        }
        self.shared.drain.cancel();
        self.shared.written.cancelled().await;
    }

    /// Cancels the incoming request `id` as a `notifications/cancelled` would (for
    /// transports where the client going away cancels, such as a 2026-07-28 POST). Whether
    /// it was running.
    pub fn cancel_incoming(&self, id: &RequestId) -> bool {
        match self.shared.running.lock_unpoisoned().get(id) {
            Some(r) if !r.method_is_initialize => {
                r.cancel.cancel();
                true
            }
            _ => false,
        }
    }

    /// Cancels every incoming request running now (but `initialize`), as
    /// [`Peer::cancel_incoming`] does each (a server shutting down once its grace is over, say).
    /// How many were cancelled.
    pub fn cancel_all_incoming(&self) -> usize {
        let running = self.shared.running.lock_unpoisoned();
        let cancelled = running.values().filter(|r| !r.method_is_initialize).inspect(|r| r.cancel.cancel());
        cancelled.count()
    }

    /// Waits until the connection is over and its tasks are done.
    pub async fn closed(&self) {
        self.shared.done.cancelled().await;
    }

    /// Sends a typed notification.
    pub async fn notify<N: mcp_types::Notification>(&self, params: N::Params) -> Result<(), CallError> {
        self.notify_hinted::<N>(params, None).await
    }

    /// Sends a typed notification with hints for the transport (see [`FrameHints`]).
    pub async fn notify_with_hints<N: mcp_types::Notification>(
        &self,
        params: N::Params,
        hints: FrameHints,
    ) -> Result<(), CallError> {
        self.notify_hinted::<N>(params, Some(hints)).await
    }

    async fn notify_hinted<N: mcp_types::Notification>(
        &self,
        params: N::Params,
        hints: Option<FrameHints>,
    ) -> Result<(), CallError> {
        let version = self.protocol_version();
        if !N::REVISIONS.contains(version) {
            return Err(CallError::NotInRevision { method: N::METHOD, version });
        }
        let body = mcp_types::ForRevision::new(&params, version);
        let frame = message::encode_notification(N::METHOD, Some(&body)).map_err(CallError::Encode)?;
        self.send(Outbound::new(frame, self.route()).with_kind(FrameKind::Notification).with_hints(hints)).await
    }

    /// Sends a notification by name with untyped params.
    ///
    /// The params are encoded when this is called: the future holds neither them nor the
    /// method, and is `Send` whatever they are.
    pub fn notify_raw<'a>(
        &'a self,
        method: &str,
        params: Option<&dyn Body>,
    ) -> impl Future<Output = Result<(), CallError>> + Send + use<'a> {
        let frame = message::encode_notification(method, params);
        async move {
            let frame = frame.map_err(CallError::Encode)?;
            self.send(Outbound::new(frame, self.route()).with_kind(FrameKind::Notification)).await
        }
    }

    /// Sends a notification by name with untyped params and hints for the transport (see
    /// [`FrameHints`]), as [`notify_raw`](Self::notify_raw) does.
    pub fn notify_raw_hinted<'a>(
        &'a self,
        method: &str,
        params: Option<&dyn Body>,
        hints: Option<FrameHints>,
    ) -> impl Future<Output = Result<(), CallError>> + Send + use<'a> {
        let frame = message::encode_notification(method, params);
        async move {
            let frame = frame.map_err(CallError::Encode)?;
            self.send(Outbound::new(frame, self.route()).with_kind(FrameKind::Notification).with_hints(hints)).await
        }
    }

    /// Sends a custom notification (one outside the protocol, see
    /// [`CustomNotification`](mcp_types::CustomNotification)).
    pub fn notify_custom<'a, N: mcp_types::CustomNotification>(
        &'a self,
        params: &N::Params,
    ) -> impl Future<Output = Result<(), CallError>> + Send + use<'a, N> {
        self.notify_raw(N::METHOD, Some(params))
    }

    /// Queues a frame for writing, waiting while the queue is full.
    pub async fn send_frame(&self, frame: Bytes) -> Result<(), CallError> {
        self.send(Outbound::new(frame, self.route())).await
    }

    async fn send(&self, outbound: Outbound) -> Result<(), CallError> {
        if self.is_closed() {
            return Err(CallError::Closed);
        }
        self.shared.out.send(outbound).await.map_err(|_| CallError::Closed)
    }

    /// This handle, sending on behalf of the incoming request `id` (see [`Route::Related`]).
    pub fn related_to(&self, id: RequestId) -> Peer {
        Peer { shared: self.shared.clone(), related: Some(id) }
    }

    /// Whether `other` is a handle on the same connection (whatever request each sends for).
    pub fn same_connection(&self, other: &Peer) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// The incoming request this handle sends for, if any.
    pub fn related_request(&self) -> Option<&RequestId> {
        self.related.as_ref()
    }

    pub(super) fn route(&self) -> Route {
        self.related.clone().map_or(Route::Unrelated, Route::Related)
    }

    /// The number of incoming requests running now.
    pub fn running_requests(&self) -> usize {
        self.shared.running.lock_unpoisoned().len() + self.shared.inline_running.load(Ordering::Relaxed)
    }

    /// The number of outgoing calls waiting for an answer.
    pub fn pending_calls(&self) -> usize {
        self.shared.pending.lock_unpoisoned().len()
    }

    /// Fails every outgoing call waiting for its answer with `error`, as if the other side
    /// had answered so ([`CallError::Remote`]): for a transport that knows their answers are
    /// lost (a fleet's bus that lost messages), rather than let them wait for their timeout. A
    /// late answer is then ignored. How many calls it failed.
    pub fn fail_pending_calls(&self, error: &mcp_types::ErrorObject) -> usize {
        let failed: Vec<_> = self.shared.pending.lock_unpoisoned().drain().collect();
        let count = failed.len();
        for (_, pending) in failed {
            let _ = pending.tx.send(Err(CallError::Remote(error.clone())));
        }
        count
    }

    /// Whether an outgoing call with this id waits for its answer here.
    pub fn awaits_response(&self, id: &RequestId) -> bool {
        self.shared.pending.lock_unpoisoned().contains_key(id)
    }

    /// Whether an incoming request with this id is running here.
    pub fn is_running(&self, id: &RequestId) -> bool {
        self.shared.running.lock_unpoisoned().contains_key(id)
    }

    /// Numbers this peer's next outgoing calls from `id` on (the ids are `id`, `id + 1`, ...).
    /// Peers that serve one session from several processes (a fleet sharing the session) take
    /// disjoint ranges, so that an answer names the one call it answers. Keep ids below 2^53:
    /// JavaScript peers read them as doubles.
    pub fn number_calls_from(&self, id: i64) {
        self.shared.next_id.store(id, Ordering::Relaxed);
    }
}
