//! A connection without tasks of its own ([`Peer::driven`]): the transport hands each message
//! to its [`Dispatcher`] in a task it already runs, and frames go straight to its
//! [`FrameSink`]. Uses the dispatch.

use std::sync::Arc;

use crate::message::{self, Parsed};
use crate::transport::{Attachment, Inbound};

use super::config::PeerConfig;
use super::dispatch::handle_parsed;
use super::handle::Peer;
use super::service::Service;
use super::shared::{FrameSink, Out, Shared};

impl Peer {
    /// A connection with no tasks of its own: the transport hands each incoming message to
    /// the returned [`Dispatcher`], in a task it already runs, and what the connection sends
    /// goes straight to `sink`.
    ///
    /// Handlers are polled in the dispatching task and spawned only if they have to wait
    /// (unless [`PeerConfig::inline_handlers`] is `Some(false)`). The connection ends with
    /// [`Peer::close`]; dropping every handle ends it too, with no cleanup to wait for.
    pub fn driven(sink: Arc<dyn FrameSink>, service: Arc<dyn Service>, config: PeerConfig) -> Dispatcher {
        let inline = config.inline_handlers.unwrap_or(true);
        let shared = Shared::new(config, Out::Sink(sink), inline);
        Dispatcher { peer: Peer { shared, related: None }, service }
    }
}

/// A driven connection's entry point (see [`Peer::driven`]): the transport hands it what
/// arrives.
pub struct Dispatcher {
    peer: Peer,
    service: Arc<dyn Service>,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher").field("peer", &self.peer).finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// The connection's handle.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Handles what arrived, already parsed (see [`message::parse`]): a request is answered
    /// through the sink (its handler polled here, and spawned only if it has to wait), a
    /// response completes the call waiting for it, a notification reaches the service.
    /// Ignored once the connection is closed.
    pub async fn dispatch(&self, parsed: Parsed, attachment: Option<Attachment>) {
        if self.peer.shared.shutdown.is_cancelled() {
            return;
        }
        handle_parsed(&self.peer, &self.service, parsed, attachment).await;
    }

    /// Parses a frame and handles it (see [`Dispatcher::dispatch`]).
    pub async fn dispatch_frame(&self, inbound: Inbound) {
        self.dispatch(message::parse(&inbound.frame), inbound.attachment).await;
    }
}
