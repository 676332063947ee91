//! Sessions a fleet of instances shares: any instance serves any session of the session
//! revisions (2024-11-05 to 2025-11-25) behind a balancer that is not sticky.
//!
//! With [`HttpServerConfig::shared_sessions`](super::HttpServerConfig::shared_sessions), an
//! instance that gets a request for a session it does not hold loads the session's record
//! from the [`SharedSessions`] store and serves it (the [`SessionFactory`](super::SessionFactory)
//! rebuilds the session from it, [`SessionFactory::connect_shared`](super::SessionFactory::connect_shared)).
//! Each instance then holds a *copy* of the session. What has to reach one particular copy
//! travels between instances over the store's message bus:
//!
//! - a response to a request the server sent (sampling, elicitation, roots), or a
//!   `notifications/cancelled`, POSTed to an instance whose copy did not send or does not run
//!   it, goes to the copy that did (outgoing request ids are numbered from a range of the
//!   instance's own);
//! - a message for the standalone (GET) stream from a copy that does not hold the stream goes
//!   to the copy that does;
//! - the events of a stream whose client went away go on the bus too, for the instance where the
//!   client resumes it with `Last-Event-ID` (the others are replayed from the shared
//!   [`EventStore`](super::EventStore)); an instance that resumes a stream asks whether its
//!   owner still runs it, and ends the stream after the replay when none answers;
//! - a change of the session's record (log level, subscriptions) refreshes the other copies;
//!   its end (DELETE) ends them.
//!
//! Change notifications (`list_changed`, resource updates) reach every instance through the
//! server's subscription bus; each copy of a session gets them, and only the one that holds
//! the session's GET stream sends them (frames hinted [`Fanout`]).
//!
//! Not shared: sessions of the legacy HTTP+SSE transport (their one stream is their session:
//! pin them to an instance by address).

// This folder is the fleet link: here the store's interface (public), `bus.rs` (the messages
// between instances), `fleet.rs` (an endpoint's part in the fleet: its tag, what it
// publishes, the streams it relays), `link.rs` (a session's part). It uses only the SSE wire
// format (`server/sse.rs`); the streams and the endpoint above use it.

use mcp_jsonrpc::sync::MutexExt as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::broadcast;

pub(crate) mod bus;
pub(crate) mod fleet;
pub(crate) mod link;

/// An error of a [`SharedSessions`] store (Redis unreachable, say).
pub type SharedError = Box<dyn std::error::Error + Send + Sync>;

/// The future of a [`SharedSessions`] operation.
pub type SharedFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, SharedError>> + Send + 'a>>;

/// Where the instances of a fleet keep the records of their sessions, and how they send each
/// other messages. `mcp-redis` has one on Redis; [`InMemorySharedSessions`] serves the
/// endpoints of one process (tests).
///
/// A record is opaque bytes: the transport's part (the owner, with feature `auth`) and the
/// session factory's (revision, client capabilities, log level, subscriptions).
pub trait SharedSessions: Send + Sync + 'static {
    /// Saves the record of session `id`, kept for `ttl` after this save or the last
    /// [`touch`](Self::touch).
    fn save(&self, id: &str, record: Bytes, ttl: Duration) -> SharedFuture<'_, ()>;
    /// The record of session `id`, if it exists.
    fn load(&self, id: &str) -> SharedFuture<'_, Option<Bytes>>;
    /// Keeps session `id` for `ttl` from now (it is in use).
    fn touch(&self, id: &str, ttl: Duration) -> SharedFuture<'_, ()>;
    /// Forgets session `id`.
    fn remove(&self, id: &str) -> SharedFuture<'_, ()>;
    /// Sends `message` to every instance (this one included: it recognizes its own).
    fn publish(&self, message: Bytes) -> SharedFuture<'_, ()>;
    /// The messages published from now on. A receiver that lagged misses some (a resumed stream
    /// may then end early; its client resumes it again).
    fn subscribe(&self) -> broadcast::Receiver<Bytes>;
}

/// [`SharedSessions`] in this process's memory: for several endpoints in one process (tests,
/// and trying a fleet out). Records expire; the bus is a bounded broadcast channel.
#[derive(Debug)]
pub struct InMemorySharedSessions {
    records: Mutex<std::collections::HashMap<String, (Bytes, Instant)>>,
    bus: broadcast::Sender<Bytes>,
}

impl Default for InMemorySharedSessions {
    fn default() -> Self {
        InMemorySharedSessions { records: Mutex::default(), bus: broadcast::channel(1024).0 }
    }
}

impl InMemorySharedSessions {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of live records.
    pub fn len(&self) -> usize {
        let now = Instant::now();
        self.records.lock_unpoisoned().values().filter(|(_, until)| *until > now).count()
    }

    /// Whether no record is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl SharedSessions for InMemorySharedSessions {
    fn save(&self, id: &str, record: Bytes, ttl: Duration) -> SharedFuture<'_, ()> {
        self.records.lock_unpoisoned().insert(id.to_owned(), (record, Instant::now() + ttl));
        Box::pin(std::future::ready(Ok(())))
    }
    fn load(&self, id: &str) -> SharedFuture<'_, Option<Bytes>> {
        let now = Instant::now();
        let record = self.records.lock_unpoisoned().get(id).filter(|(_, until)| *until > now).map(|(r, _)| r.clone());
        Box::pin(std::future::ready(Ok(record)))
    }
    fn touch(&self, id: &str, ttl: Duration) -> SharedFuture<'_, ()> {
        if let Some((_, until)) = self.records.lock_unpoisoned().get_mut(id) {
            *until = Instant::now() + ttl;
        }
        Box::pin(std::future::ready(Ok(())))
    }
    fn remove(&self, id: &str) -> SharedFuture<'_, ()> {
        self.records.lock_unpoisoned().remove(id);
        Box::pin(std::future::ready(Ok(())))
    }
    fn publish(&self, message: Bytes) -> SharedFuture<'_, ()> {
        let _ = self.bus.send(message);
        Box::pin(std::future::ready(Ok(())))
    }
    fn subscribe(&self) -> broadcast::Receiver<Bytes> {
        self.bus.subscribe()
    }
}

/// The hint of a notification that every copy of a session is given (a change announced on
/// the server's subscription bus): only the copy that holds the session's GET stream sends
/// it, the others drop it. Set it with
/// [`Peer::notify_with_hints`](mcp_jsonrpc::Peer::notify_with_hints).
#[derive(Debug, Clone, Copy, Default)]
pub struct Fanout;
