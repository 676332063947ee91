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

use mcp_jsonrpc::sync::MutexExt as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{BufMut as _, Bytes, BytesMut};
use hashbrown::HashMap;
use tokio::sync::{broadcast, mpsc, oneshot};

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

/// What one instance says to the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A message POSTed by the client, for the copy that awaits or runs what it names.
    Incoming,
    /// A message for the standalone stream, for the copy that holds it.
    Standalone,
    /// An event of a stream (`stream`, `seq`, `last`) whose connection went away.
    Event,
    /// Does the owner of `stream` still run it?
    Probe,
    /// It does.
    Alive,
    /// The session's record changed: reload it.
    Changed,
    /// The session ended.
    Ended,
}

impl Kind {
    fn letter(self) -> u8 {
        match self {
            Kind::Incoming => b'i',
            Kind::Standalone => b'g',
            Kind::Event => b'e',
            Kind::Probe => b'p',
            Kind::Alive => b'a',
            Kind::Changed => b'c',
            Kind::Ended => b'x',
        }
    }
    fn of(letter: &str) -> Option<Kind> {
        Some(match letter {
            "i" => Kind::Incoming,
            "g" => Kind::Standalone,
            "e" => Kind::Event,
            "p" => Kind::Probe,
            "a" => Kind::Alive,
            "c" => Kind::Changed,
            "x" => Kind::Ended,
            _ => return None,
        })
    }
}

/// One message between instances: a header line (`origin kind session stream seq last`),
/// then the frame it carries.
#[derive(Debug, Clone)]
pub(crate) struct BusMessage {
    pub(crate) origin: u32,
    pub(crate) kind: Kind,
    pub(crate) session: Arc<str>,
    pub(crate) stream: u64,
    pub(crate) seq: u64,
    pub(crate) last: bool,
    pub(crate) frame: Bytes,
}

impl BusMessage {
    pub(crate) fn encode(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(self.frame.len() + self.session.len() + 48);
        let header = format!(
            "{} {} {} {} {} {}\n",
            self.origin,
            self.kind.letter() as char,
            self.session,
            self.stream,
            self.seq,
            u8::from(self.last)
        );
        out.put_slice(header.as_bytes());
        out.put_slice(&self.frame);
        out.freeze()
    }

    pub(crate) fn decode(bytes: &Bytes) -> Option<BusMessage> {
        let newline = bytes.iter().position(|&b| b == b'\n')?;
        let header = std::str::from_utf8(&bytes[..newline]).ok()?;
        let mut fields = header.split(' ');
        let message = BusMessage {
            origin: fields.next()?.parse().ok()?,
            kind: Kind::of(fields.next()?)?,
            session: fields.next()?.into(),
            stream: fields.next()?.parse().ok()?,
            seq: fields.next()?.parse().ok()?,
            last: fields.next()? == "1",
            frame: bytes.slice(newline + 1..),
        };
        fields.next().is_none().then_some(message)
    }
}

/// The number of bits of an instance's tag: stream numbers and outgoing request ids of a
/// shared session are `tag << 32 | n`, below 2^53 (JavaScript peers read ids as doubles).
const TAG_BITS: u32 = 20;

/// A stream of a session: the session's id and the stream's number.
type StreamKey = (Arc<str>, u64);

/// A resumed stream of another instance, fed from the bus.
struct Relay {
    tx: mpsc::Sender<Bytes>,
    /// The highest seq sent: later events only.
    after: u64,
    /// Events that came while the replay was read (`None` once it was).
    held: Option<Vec<BusMessage>>,
}

impl Relay {
    /// Sends `message` if it is new; whether the stream goes on.
    fn send(&mut self, message: &BusMessage) -> bool {
        if message.seq <= self.after {
            return true;
        }
        self.after = message.seq;
        let event = super::sse::sse_event(Some((message.stream, message.seq)), &message.frame);
        self.tx.try_send(event).is_ok() && !message.last
    }
}

/// An endpoint's part in a fleet: the store, its tag, the streams it relays and the owners it
/// waits to hear from.
pub(crate) struct Fleet {
    pub(crate) store: Arc<dyn SharedSessions>,
    pub(crate) tag: u32,
    relays: Mutex<HashMap<StreamKey, Relay>>,
    probes: Mutex<HashMap<StreamKey, oneshot::Sender<()>>>,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet").field("tag", &self.tag).finish_non_exhaustive()
    }
}

/// How long an instance that resumes another's stream waits to hear that its owner runs it.
const PROBE_WAIT: Duration = Duration::from_secs(2);

impl Fleet {
    pub(crate) fn new(store: Arc<dyn SharedSessions>) -> Fleet {
        let mut bytes = [0u8; 4];
        getrandom::fill(&mut bytes).expect("the OS random number generator failed");
        // Never 0: tag 0 is a lone instance's numbering.
        let tag = (u32::from_le_bytes(bytes) % ((1 << TAG_BITS) - 1)) + 1;
        Fleet { store, tag, relays: Mutex::default(), probes: Mutex::default() }
    }

    /// The first stream number, event seq and outgoing request id of this instance's copies.
    pub(crate) fn base(&self) -> u64 {
        u64::from(self.tag) << 32
    }

    /// Whether `stream` was opened by another instance.
    pub(crate) fn is_foreign(&self, stream: u64) -> bool {
        stream >> 32 != u64::from(self.tag)
    }

    /// A message of this instance about `session`.
    pub(crate) fn message(&self, kind: Kind, session: &Arc<str>, frame: Bytes) -> BusMessage {
        BusMessage { origin: self.tag, kind, session: session.clone(), stream: 0, seq: 0, last: false, frame }
    }

    /// Publishes `message`; a failure is logged (what it carried is lost).
    pub(crate) async fn publish(&self, message: BusMessage) {
        if let Err(e) = self.store.publish(message.encode()).await {
            tracing::warn!(session = %message.session, kind = ?message.kind, "fleet: message not published: {e}");
        }
    }

    /// Follows `stream` of `session`, opened by another instance, after the event `after`:
    /// asks its owner whether it still runs it (the owner then sends its events over the bus,
    /// for its client left its connection), and waits for the answer. The events the bus
    /// brings from then on are held until [`replayed`](Self::replayed), and then sent, until the
    /// stream's last. `None` when no instance answers (its owner went away, or finished it):
    /// there is only the replay.
    pub(crate) async fn follow(
        self: &Arc<Self>,
        session: &Arc<str>,
        stream: u64,
        after: u64,
        queue: usize,
    ) -> Option<mpsc::Receiver<Bytes>> {
        let (tx, rx) = mpsc::channel(queue);
        let key = (session.clone(), stream);
        self.relays.lock_unpoisoned().insert(key.clone(), Relay { tx, after, held: Some(Vec::new()) });
        let (alive_tx, alive_rx) = oneshot::channel();
        self.probes.lock_unpoisoned().insert(key.clone(), alive_tx);
        let mut probe = self.message(Kind::Probe, session, Bytes::new());
        probe.stream = stream;
        self.publish(probe).await;
        let alive = tokio::time::timeout(PROBE_WAIT, alive_rx).await.is_ok_and(|r| r.is_ok());
        self.probes.lock_unpoisoned().remove(&key);
        if !alive {
            tracing::debug!(session = %session, stream, "fleet: no instance runs the resumed stream: replay only");
            self.relays.lock_unpoisoned().remove(&key);
            return None;
        }
        Some(rx)
    }

    /// An event of a followed stream, from the bus.
    pub(crate) fn relay(&self, message: &BusMessage) {
        let key = (message.session.clone(), message.stream);
        let mut relays = self.relays.lock_unpoisoned();
        let Some(relay) = relays.get_mut(&key) else { return };
        let done = match &mut relay.held {
            // Bounded as the connection's queue is.
            Some(held) if held.len() < relay.tx.max_capacity() => {
                held.push(message.clone());
                false
            }
            Some(_) => true,
            None => !relay.send(message),
        };
        if done {
            relays.remove(&key);
        }
    }

    /// The replay of a followed stream was read, up to `last`: what came meanwhile after it
    /// follows.
    pub(crate) fn replayed(&self, session: &Arc<str>, stream: u64, last: u64) {
        let key = (session.clone(), stream);
        let mut relays = self.relays.lock_unpoisoned();
        let Some(relay) = relays.get_mut(&key) else { return };
        relay.after = relay.after.max(last);
        let held = relay.held.take().unwrap_or_default();
        if !held.iter().all(|message| relay.send(message)) {
            relays.remove(&key);
        }
    }

    /// The owner of a followed stream answered.
    pub(crate) fn alive(&self, message: &BusMessage) {
        if let Some(tx) = self.probes.lock_unpoisoned().remove(&(message.session.clone(), message.stream)) {
            let _ = tx.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bus_message_reads_back() {
        let message = BusMessage {
            origin: 7,
            kind: Kind::Event,
            session: "abc".into(),
            stream: (7 << 32) | 3,
            seq: 12,
            last: true,
            frame: Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"),
        };
        let back = BusMessage::decode(&message.encode()).expect("decodes");
        assert_eq!((back.origin, back.kind, &*back.session), (7, Kind::Event, "abc"));
        assert_eq!((back.stream, back.seq, back.last), (message.stream, 12, true));
        assert_eq!(back.frame, message.frame);
        assert!(BusMessage::decode(&Bytes::from_static(b"7 q abc 1 2 0\n{}")).is_none(), "unknown kind");
        assert!(BusMessage::decode(&Bytes::from_static(b"7 e abc 1 2\n{}")).is_none(), "a field missing");
        assert!(BusMessage::decode(&Bytes::from_static(b"no newline")).is_none());
    }

    #[test]
    fn tags_keep_ids_below_2_pow_53() {
        for _ in 0..100 {
            let fleet = Fleet::new(Arc::new(InMemorySharedSessions::new()));
            assert!(fleet.tag >= 1 && fleet.tag < 1 << TAG_BITS);
            assert!(fleet.base() + u64::from(u32::MAX) < 1 << 53);
            assert!(!fleet.is_foreign(fleet.base() + 5) && fleet.is_foreign(5));
        }
    }
}
