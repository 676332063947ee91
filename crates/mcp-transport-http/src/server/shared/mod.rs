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
//!   its end (DELETE) ends them. A copy that finds the record gone (on a reload, a change, or
//!   the touch that keeps a record in use alive) ends too.
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
use tokio::sync::{broadcast, mpsc};

pub(crate) mod bus;
pub(crate) mod fleet;
pub(crate) mod link;

/// An error of a [`SharedSessions`] store (Redis unreachable, say).
pub type SharedError = Box<dyn std::error::Error + Send + Sync>;

/// The future of a [`SharedSessions`] operation.
pub type SharedFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, SharedError>> + Send + 'a>>;

/// The record of a shared session, as a [`SharedSessions`] store keeps it: named fields, each
/// written on its own (so that changes made on two instances at once both stay), and a
/// version that every change raises.
///
/// The transport's fields are `.owner` (the principal, feature `auth`), `.copy:{TAG}` for each
/// instance that holds a copy of the session ([`COPY_FIELD_PREFIX`]) and `.get`, the instance
/// that holds its GET stream ([`STANDALONE_FIELD`]); the factory's are what its
/// [`RequestInfo::update_session`](crate::server::RequestInfo::update_session) sets (names not
/// starting with `.`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionRecord {
    /// 1 when the record is created, one more with each change.
    pub version: u64,
    /// The fields, by name.
    pub fields: Vec<(String, Bytes)>,
}

impl SessionRecord {
    /// The value of field `name`.
    pub fn field(&self, name: &str) -> Option<&Bytes> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// The field of a [`SessionRecord`] that names the session's owner (the transport's).
pub(crate) const OWNER_FIELD: &str = ".owner";

/// A change of one field of a [`SessionRecord`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldChange {
    /// Sets field `.0` to `.1`.
    Set(String, Bytes),
    /// Removes field `.0`.
    Remove(String),
}

impl FieldChange {
    /// The field it changes.
    pub fn name(&self) -> &str {
        match self {
            FieldChange::Set(name, _) | FieldChange::Remove(name) => name,
        }
    }
}

/// The error of an update of a session whose record is gone (ended, or expired): the copy of
/// the session that asked ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the session ended")]
pub struct SessionEnded;

/// Where the instances of a fleet keep the records of their sessions, and how they send each
/// other messages. `mcp-redis` has one on Redis; [`InMemorySharedSessions`] serves the
/// endpoints of one process (tests).
///
/// A record ([`SessionRecord`]) is a set of fields, changed one by one, never written whole:
/// a change made by one instance does not undo another's. Only [`create`](Self::create) makes
/// a record; once removed or expired, a record is never made again by
/// [`update`](Self::update) or [`touch`](Self::touch), so that a copy of a session that
/// outlived its end cannot bring it back.
pub trait SharedSessions: Send + Sync + 'static {
    /// Creates the record of new session `id` with `fields`, at version 1, kept for `ttl`;
    /// `false` (and nothing written) if a record of `id` exists.
    fn create(&self, id: &str, fields: &[(String, Bytes)], ttl: Duration) -> SharedFuture<'_, bool>;
    /// Applies `changes` to the record of session `id`, in one step, raises its version and
    /// keeps it for `ttl` from now: the record as it is then, or `None` (and nothing written)
    /// if there is no record of `id` (the session ended or expired).
    fn update(&self, id: &str, changes: &[FieldChange], ttl: Duration) -> SharedFuture<'_, Option<SessionRecord>>;
    /// The record of session `id`, if it exists.
    fn load(&self, id: &str) -> SharedFuture<'_, Option<SessionRecord>>;
    /// Keeps session `id` for `ttl` from now (it is in use); whether its record exists (else
    /// nothing is written).
    fn touch(&self, id: &str, ttl: Duration) -> SharedFuture<'_, bool>;
    /// Forgets session `id`.
    fn remove(&self, id: &str) -> SharedFuture<'_, ()>;
    /// Forgets session `id` and sends `message` (its end) to the instances that hold a copy of
    /// it, as its record names them when it is removed (in one step: a copy loaded before is
    /// told, one loaded after finds no record), but the sender (tag `from`).
    fn end(&self, id: &str, from: u32, message: Bytes) -> SharedFuture<'_, ()>;
    /// Sends `message` to the instance of tag `to` only (the message names it too).
    fn send(&self, to: u32, message: Bytes) -> SharedFuture<'_, ()>;
    /// Sends `message` to the instances that hold a copy of session `id` now (as its record
    /// names them, see [`SessionRecord`]), or with [`Audience::Standalone`] to the one that
    /// holds its GET stream (to every copy when no holder is recorded), but the sender (tag
    /// `from`). A store shared by a fleet puts it in each one's inbox (`mcp-redis`'s does), so
    /// that an instance's work grows with its own sessions, not with the fleet's.
    fn send_to_copies(&self, id: &str, audience: Audience, from: u32, message: Bytes) -> SharedFuture<'_, ()>;
    /// What reaches the instance of tag `tag` from now on: the messages sent to it, in order,
    /// [`Delivery::Missed`] where some were lost (the endpoint then reloads the records of
    /// the sessions it holds), or [`Delivery::Reset`] when the store lost its state. Called from within a tokio runtime, once per instance; the
    /// receiver is bounded, and the store stops when it is dropped.
    fn subscribe(&self, tag: u32) -> mpsc::Receiver<Delivery>;

    /// The record of session `id` (as [`load`](Self::load)), and in the same step the copy
    /// `copy` recorded in it (the field `.copy:{TAG}`, see [`SessionRecord`]), so that what is
    /// sent to the session's copies from then on reaches it; `None` (and nothing written) if
    /// there is no record. Default: [`load`](Self::load).
    fn load_copy(&self, id: &str, copy: SessionCopy) -> SharedFuture<'_, Option<SessionRecord>> {
        let _ = copy;
        self.load(id)
    }
    /// Keeps session `id` for `ttl` from now (as [`touch`](Self::touch)) and, if its record no
    /// longer names copy `copy` (forgotten: its instance's tag was found held by none while it
    /// was cut off from the store), names it again, in one step: [`Touched::Renamed`] then
    /// carries the record, for the copy missed what was sent to the session's copies
    /// meanwhile. Default: [`touch`](Self::touch).
    fn touch_copy(&self, id: &str, copy: SessionCopy, ttl: Duration) -> SharedFuture<'_, Touched> {
        let _ = copy;
        let touched = self.touch(id, ttl);
        Box::pin(async move { Ok(if touched.await? { Touched::Named } else { Touched::Gone }) })
    }
    /// The copy `copy` of session `id` is gone (idle here, or ended): its field leaves the
    /// record (unless another copy of the same instance replaced it), and the GET stream's
    /// holder with it if it was this copy's instance. Default: nothing.
    fn drop_copy(&self, id: &str, copy: SessionCopy) -> SharedFuture<'_, ()> {
        let _ = (id, copy);
        Box::pin(std::future::ready(Ok(())))
    }
    /// The instance of tag `tag` holds the GET stream of session `id` now (the field `.get`),
    /// if the record exists. Default: nothing.
    fn hold_standalone(&self, id: &str, tag: u32) -> SharedFuture<'_, ()> {
        let _ = (id, tag);
        Box::pin(std::future::ready(Ok(())))
    }

    /// Counts new session `id` among the fleet's live sessions, for `ttl` unless
    /// [`touch`](Self::touch)ed: `false` (and nothing written) when the fleet already holds as
    /// many as its store allows. Asked before a new shared session is made (the session then
    /// gets 503 with `Retry-After`); [`remove`](Self::remove) uncounts it. Default: no bound,
    /// no call.
    fn admit(&self, id: &str, ttl: Duration) -> Option<SharedFuture<'_, bool>> {
        let _ = (id, ttl);
        None
    }
    /// Whether the store serves now, known without asking it (no round trip: a circuit
    /// breaker's state, the last health check): `Err(retry_after)` while its calls would fail
    /// (for about `retry_after` more). `/readyz` answers 503 then, and a new session, or one
    /// loaded from the store, gets 503 with `Retry-After`. Default: ready.
    fn readiness(&self) -> Result<(), Duration> {
        Ok(())
    }

    /// Claims a tag for the instance named `instance` (a random id of its own), held for `lease`
    /// unless [renewed](Self::renew_tag): a number from 1 to 2^20 - 1 that no other live
    /// instance holds. The tag numbers the instance's streams and outgoing request ids, so two
    /// instances with one tag would take each other's answers.
    ///
    /// The default draws it at random, without asking anyone (two instances of a fleet may draw
    /// the same one): a store shared by a fleet hands them out (`mcp-redis`'s does).
    fn claim_tag(&self, instance: &str, lease: Duration) -> SharedFuture<'_, u32> {
        let _ = (instance, lease);
        Box::pin(std::future::ready(Ok(random_tag())))
    }

    /// Keeps `tag` for `instance` another `lease`: `false` when another instance holds it now
    /// (this one lost it, and stops serving shared sessions rather than share its tag). The
    /// default keeps it (see [`claim_tag`](Self::claim_tag)).
    fn renew_tag(&self, tag: u32, instance: &str, lease: Duration) -> SharedFuture<'_, bool> {
        let _ = (tag, instance, lease);
        Box::pin(std::future::ready(Ok(true)))
    }
}

/// Who of a session's copies [`SharedSessions::send_to_copies`] reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// Every instance that holds a copy.
    Copies,
    /// The instance that holds the GET stream, or every copy when none is recorded.
    Standalone,
}

/// What [`SharedSessions::touch_copy`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touched {
    /// No record: the session ended or expired (nothing written).
    Gone,
    /// The record names the copy.
    Named,
    /// The record no longer named the copy, and names it again: the record as it is now.
    Renamed(SessionRecord),
}

/// A copy of a shared session, as its record names it: the instance's tag, and a number that
/// tells this copy from an earlier one of the same instance (so that dropping the earlier one
/// does not forget the later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionCopy {
    /// The tag of the instance that holds it.
    pub tag: u32,
    /// This copy's number, unique within the instance.
    pub nonce: u64,
}

impl SessionCopy {
    /// The record's field of copies of instance `tag`.
    pub fn field(tag: u32) -> String {
        format!("{COPY_FIELD_PREFIX}{tag}")
    }
}

/// The start of the name of a record's field that names an instance holding a copy
/// (`.copy:{TAG}`, its value the copy's nonce in decimal).
pub const COPY_FIELD_PREFIX: &str = ".copy:";

/// The name of a record's field that names the instance holding the GET stream (its tag in
/// decimal).
pub const STANDALONE_FIELD: &str = ".get";

/// What an instance's [`SharedSessions::subscribe`] receiver gets.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delivery {
    /// A message for this instance, or for all.
    Message(Bytes),
    /// At least this many messages for this instance were lost (it fell behind further than
    /// the store keeps, or the store lost them): what they carried is to be found again.
    Missed(u64),
    /// The store lost its state (Redis restarted empty, say: it had lost this instance's tag).
    /// The endpoint reloads the records of the sessions it holds: a copy whose record is gone
    /// ends, and its calls waiting for the client's answer fail (-32603); the calls of
    /// sessions whose record is there (made since) go on.
    Reset,
}

/// The number of bits of an instance's tag: stream numbers and outgoing request ids of a
/// shared session are `tag << 32 | n`, below 2^53 (JavaScript peers read ids as doubles).
pub const TAG_BITS: u32 = 20;

/// A tag drawn at random, from 1 to 2^20 - 1 (0 is a lone instance's numbering).
fn random_tag() -> u32 {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).expect("the OS random number generator failed");
    (u32::from_le_bytes(bytes) % ((1 << TAG_BITS) - 1)) + 1
}

/// A record in an [`InMemorySharedSessions`]: its fields, version and end of life.
#[derive(Debug)]
struct Stored {
    record: SessionRecord,
    until: Instant,
}

/// [`SharedSessions`] in this process's memory: for several endpoints in one process (tests,
/// and trying a fleet out). Records expire; the bus is a bounded broadcast channel that every
/// instance hears (a message sent to one is dropped by the others).
#[derive(Debug)]
pub struct InMemorySharedSessions {
    records: Mutex<std::collections::HashMap<String, Stored>>,
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
        self.records.lock_unpoisoned().values().filter(|s| s.until > now).count()
    }

    /// Whether no record is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sends `message` to every instance (each drops what is not its own: this store has no
    /// inboxes, nor records of copies).
    fn broadcast(&self, message: Bytes) -> SharedFuture<'_, ()> {
        let _ = self.bus.send(message);
        Box::pin(std::future::ready(Ok(())))
    }

    /// The live record of `id`, for a change (an expired one is dropped).
    fn live<'a>(records: &'a mut std::collections::HashMap<String, Stored>, id: &str) -> Option<&'a mut Stored> {
        if records.get(id).is_some_and(|s| s.until <= Instant::now()) {
            records.remove(id);
        }
        records.get_mut(id)
    }
}

impl SharedSessions for InMemorySharedSessions {
    fn create(&self, id: &str, fields: &[(String, Bytes)], ttl: Duration) -> SharedFuture<'_, bool> {
        let mut records = self.records.lock_unpoisoned();
        let created = InMemorySharedSessions::live(&mut records, id).is_none();
        if created {
            let record = SessionRecord { version: 1, fields: fields.to_vec() };
            records.insert(id.to_owned(), Stored { record, until: Instant::now() + ttl });
        }
        Box::pin(std::future::ready(Ok(created)))
    }
    fn update(&self, id: &str, changes: &[FieldChange], ttl: Duration) -> SharedFuture<'_, Option<SessionRecord>> {
        let mut records = self.records.lock_unpoisoned();
        let updated = InMemorySharedSessions::live(&mut records, id).map(|stored| {
            let fields = &mut stored.record.fields;
            for change in changes {
                fields.retain(|(name, _)| name != change.name());
                if let FieldChange::Set(name, value) = change {
                    fields.push((name.clone(), value.clone()));
                }
            }
            stored.record.version += 1;
            stored.until = Instant::now() + ttl;
            stored.record.clone()
        });
        Box::pin(std::future::ready(Ok(updated)))
    }
    fn load(&self, id: &str) -> SharedFuture<'_, Option<SessionRecord>> {
        let now = Instant::now();
        let record = self.records.lock_unpoisoned().get(id).filter(|s| s.until > now).map(|s| s.record.clone());
        Box::pin(std::future::ready(Ok(record)))
    }
    fn touch(&self, id: &str, ttl: Duration) -> SharedFuture<'_, bool> {
        let mut records = self.records.lock_unpoisoned();
        let live = InMemorySharedSessions::live(&mut records, id).map(|s| s.until = Instant::now() + ttl).is_some();
        Box::pin(std::future::ready(Ok(live)))
    }
    fn remove(&self, id: &str) -> SharedFuture<'_, ()> {
        self.records.lock_unpoisoned().remove(id);
        Box::pin(std::future::ready(Ok(())))
    }
    fn end(&self, id: &str, from: u32, message: Bytes) -> SharedFuture<'_, ()> {
        let _ = from;
        self.records.lock_unpoisoned().remove(id);
        self.broadcast(message)
    }
    fn send(&self, to: u32, message: Bytes) -> SharedFuture<'_, ()> {
        let _ = to;
        self.broadcast(message)
    }
    fn send_to_copies(&self, id: &str, audience: Audience, from: u32, message: Bytes) -> SharedFuture<'_, ()> {
        let _ = (id, audience, from);
        self.broadcast(message)
    }
    fn subscribe(&self, tag: u32) -> mpsc::Receiver<Delivery> {
        // Every message reaches every instance (each drops what is not its own); a receiver
        // that fell behind the channel's bound hears how many it missed.
        let _ = tag;
        let mut bus = self.bus.subscribe();
        let (tx, rx) = mpsc::channel(256);
        tokio::spawn(async move {
            loop {
                let delivery = tokio::select! {
                    () = tx.closed() => return,
                    received = bus.recv() => match received {
                        Ok(message) => Delivery::Message(message),
                        Err(broadcast::error::RecvError::Lagged(n)) => Delivery::Missed(n),
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                };
                if tx.send(delivery).await.is_err() {
                    return;
                }
            }
        });
        rx
    }
}

/// The hint of a notification that every copy of a session is given (a change announced on
/// the server's subscription bus): only the copy that holds the session's GET stream sends
/// it, the others drop it. Set it with
/// [`Peer::notify_with_hints`](mcp_jsonrpc::Peer::notify_with_hints).
#[derive(Debug, Clone, Copy, Default)]
pub struct Fanout;

#[cfg(test)]
mod tests {
    use super::*;

    fn set(name: &str, value: &'static [u8]) -> FieldChange {
        FieldChange::Set(name.to_owned(), Bytes::from_static(value))
    }

    /// Every instance hears every message; one that fell behind the channel's bound is told how
    /// many it missed.
    #[tokio::test]
    async fn in_memory_every_instance_hears_all_and_a_laggard_hears_what_it_missed() {
        let store = InMemorySharedSessions::new();
        let (mut one, mut two) = (store.subscribe(1), store.subscribe(2));
        store.send(2, Bytes::from_static(b"to 2")).await.unwrap();
        assert_eq!(one.recv().await, Some(Delivery::Message(Bytes::from_static(b"to 2"))), "dropped by the endpoint");
        assert_eq!(two.recv().await, Some(Delivery::Message(Bytes::from_static(b"to 2"))));
        // `two` does not read while 2,000 are published: its forwarder stops at its queue's
        // bound, the channel's runs over.
        for n in 0..2_000u32 {
            store.send_to_copies("s", Audience::Copies, 1, Bytes::from(n.to_string())).await.unwrap();
            while let Ok(Delivery::Message(_)) = one.try_recv() {}
            tokio::task::yield_now().await;
        }
        let (mut received, mut missed) = (0u64, 0u64);
        while received + missed < 2_000 {
            match two.recv().await.unwrap() {
                Delivery::Message(_) => received += 1,
                Delivery::Missed(n) => missed += n,
                Delivery::Reset => panic!("the store keeps its state"),
            }
        }
        assert!(missed > 0 && received + missed == 2_000, "{received} received, {missed} missed");
    }

    /// What every store does (`mcp-redis`'s tests check the same of Redis's).
    #[tokio::test]
    async fn changes_are_per_field_and_never_bring_a_record_back() {
        let store = InMemorySharedSessions::new();
        let ttl = Duration::from_secs(60);
        let fixed = [("session".to_owned(), Bytes::from_static(b"{}"))];
        assert!(store.update("s", &[set("level", b"1")], ttl).await.unwrap().is_none(), "no record: no write");
        assert!(!store.touch("s", ttl).await.unwrap());
        assert!(store.load("s").await.unwrap().is_none());
        assert!(store.create("s", &fixed, ttl).await.unwrap());
        assert!(!store.create("s", &fixed, ttl).await.unwrap(), "made once");
        // Two copies change a field each, neither knowing of the other's change.
        store.update("s", &[set("sub:a", b"")], ttl).await.unwrap().unwrap();
        let record = store.update("s", &[set("level", b"1")], ttl).await.unwrap().unwrap();
        assert_eq!(record.version, 3);
        assert_eq!(record.field("sub:a").map(|v| &v[..]), Some(&b""[..]));
        assert_eq!(record.field("level").map(|v| &v[..]), Some(&b"1"[..]));
        let record = store.update("s", &[FieldChange::Remove("sub:a".into())], ttl).await.unwrap().unwrap();
        assert!(record.field("sub:a").is_none() && record.field("session").is_some());
        assert_eq!(store.load("s").await.unwrap(), Some(record));
        assert!(store.touch("s", ttl).await.unwrap());
        store.remove("s").await.unwrap();
        assert!(store.update("s", &[set("level", b"2")], ttl).await.unwrap().is_none(), "not made again");
        assert!(!store.touch("s", ttl).await.unwrap());
        assert!(store.is_empty());
        // An expired record is gone as a removed one is.
        assert!(store.create("t", &fixed, Duration::from_millis(1)).await.unwrap());
        std::thread::sleep(Duration::from_millis(5));
        assert!(store.update("t", &[set("level", b"1")], ttl).await.unwrap().is_none());
        assert!(!store.touch("t", ttl).await.unwrap());
    }
}
