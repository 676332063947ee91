//! Where SSE events are kept so that a client can resume a stream it lost.
//!
//! Every event a session sends on an SSE stream gets an id `STREAM-SEQ`: the stream (0 is the
//! standalone GET stream, then one per POST) and a counter unique within the session. When
//! a client comes back with `Last-Event-ID`, the server replays from the store what that
//! stream sent after the id, and only that stream's events.

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use bytes::Bytes;
use mcp_jsonrpc::BoxFuture;

/// One stored event: its sequence number and the JSON-RPC message it carried.
pub type StoredEvent = (u64, Bytes);

/// Keeps the events of SSE streams for replay.
///
/// Implementations may be remote (a shared cache, so that any instance can resume a stream);
/// the methods are asynchronous. The server holds the session's routing lock while it stores
/// an event or replays a stream, so an event is never both missed by a replay and skipped on
/// the resumed connection.
///
/// Only the events a client may ask for again are stored: those of a stream whose client may
/// hold an id of it (its priming event, or an earlier event, went out). The first event of a
/// stream without a priming event (clients before 2025-11-25) is not: a client that got it
/// resumes after it, one that did not has no id to resume from. In a shared session, nor is
/// a stream's response when it is the stream's only event and was ready before any byte of
/// the stream went out (it is then sent without a priming event: the client holds no id of
/// the stream until it has the response whole); the events of a stream held until then are
/// stored before its first byte goes out. So a store is asked to replay after an id it may
/// not hold; it then returns every event it holds of the stream.
pub trait EventStore: Send + Sync + 'static {
    /// Keeps `message`, sent as event `seq` of `stream` in `session`.
    fn append(&self, session: &str, stream: u64, seq: u64, message: Bytes) -> BoxFuture<()>;
    /// The events of `stream` in `session` after `after`, in order.
    fn replay(&self, session: &str, stream: u64, after: u64) -> BoxFuture<Vec<StoredEvent>>;
    /// Forgets everything about `session` (it ended).
    fn remove_session(&self, session: &str) -> BoxFuture<()>;
}

/// An [`EventStore`] in this process's memory, with bounds: per stream the newest
/// `events_per_stream` events, per session the `streams_per_session` most recently used
/// streams, and per session at most `bytes_per_session` bytes of messages (4 MiB unless set
/// with [`bytes_per_session`](Self::bytes_per_session); the oldest events of the least
/// recently used streams go first, and the newest event is always kept).
#[derive(Debug)]
pub struct InMemoryEventStore {
    events_per_stream: usize,
    streams_per_session: usize,
    bytes_per_session: usize,
    sessions: Mutex<HashMap<String, SessionEvents>>,
}

#[derive(Debug, Default)]
struct SessionEvents {
    /// Streams in order of last use, with their events.
    streams: VecDeque<(u64, VecDeque<StoredEvent>)>,
    /// The bytes of the messages held.
    bytes: usize,
}

impl SessionEvents {
    /// Drops the oldest event of the least recently used stream (and that stream, if it is
    /// left empty).
    fn drop_oldest(&mut self) {
        if let Some((_, events)) = self.streams.front_mut() {
            if let Some((_, message)) = events.pop_front() {
                self.bytes -= message.len();
            }
            if events.is_empty() {
                self.streams.pop_front();
            }
        }
    }

    /// Whether more than the newest event (the last of the last stream) is held.
    fn more_than_newest(&self) -> bool {
        self.streams.len() > 1 || self.streams.front().is_some_and(|(_, e)| e.len() > 1)
    }
}

impl Default for InMemoryEventStore {
    fn default() -> Self {
        InMemoryEventStore::new(256, 32)
    }
}

impl InMemoryEventStore {
    /// A store keeping at most `events_per_stream` events of each stream, and the
    /// `streams_per_session` most recently used streams of each session.
    pub fn new(events_per_stream: usize, streams_per_session: usize) -> Self {
        InMemoryEventStore {
            events_per_stream: events_per_stream.max(1),
            streams_per_session: streams_per_session.max(1),
            bytes_per_session: 4 << 20,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// Keeps at most `bytes` bytes of messages per session (besides its newest event, which is
    /// always kept).
    pub fn bytes_per_session(mut self, bytes: usize) -> Self {
        self.bytes_per_session = bytes;
        self
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionEvents>> {
        self.sessions.lock_unpoisoned()
    }

    /// The number of events held, over all sessions.
    pub fn len(&self) -> usize {
        self.sessions().values().flat_map(|s| s.streams.iter()).map(|(_, e)| e.len()).sum()
    }

    /// Whether no event is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl EventStore for InMemoryEventStore {
    fn append(&self, session: &str, stream: u64, seq: u64, message: Bytes) -> BoxFuture<()> {
        let mut sessions = self.sessions();
        // The session's entry exists after its first event: no key to allocate then.
        let events = match sessions.get_mut(session) {
            Some(events) => events,
            None => sessions.entry(session.to_owned()).or_default(),
        };
        let at = events.streams.iter().position(|(id, _)| *id == stream);
        let mut entry = match at {
            Some(i) => events.streams.remove(i).unwrap_or_default(),
            None => (stream, VecDeque::new()),
        };
        if entry.1.len() >= self.events_per_stream
            && let Some((_, old)) = entry.1.pop_front()
        {
            events.bytes -= old.len();
        }
        events.bytes += message.len();
        entry.1.push_back((seq, message));
        events.streams.push_back(entry);
        while events.streams.len() > self.streams_per_session {
            if let Some((_, gone)) = events.streams.pop_front() {
                events.bytes -= gone.iter().map(|(_, m)| m.len()).sum::<usize>();
            }
        }
        while events.bytes > self.bytes_per_session && events.more_than_newest() {
            events.drop_oldest();
        }
        Box::pin(std::future::ready(()))
    }

    fn replay(&self, session: &str, stream: u64, after: u64) -> BoxFuture<Vec<StoredEvent>> {
        let events = self
            .sessions()
            .get(session)
            .and_then(|s| s.streams.iter().find(|(id, _)| *id == stream))
            .map(|(_, events)| events.iter().filter(|(seq, _)| *seq > after).cloned().collect())
            .unwrap_or_default();
        Box::pin(std::future::ready(events))
    }

    fn remove_session(&self, session: &str) -> BoxFuture<()> {
        let mut sessions = self.sessions();
        sessions.remove(session);
        // After a flood of sessions, the table gives back what it grew to (amortized O(1)).
        let live = sessions.len();
        if sessions.capacity() > 1024 && live < sessions.capacity() / 4 {
            sessions.shrink_to(live * 2);
        }
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn replays_one_stream_after_an_id_within_bounds() {
        let store = InMemoryEventStore::new(3, 2);
        for seq in 1..=5 {
            store.append("s", 1, seq, Bytes::from(format!("a{seq}"))).await;
        }
        store.append("s", 2, 6, Bytes::from_static(b"b6")).await;
        let got: Vec<u64> = store.replay("s", 1, 3).await.into_iter().map(|(s, _)| s).collect();
        assert_eq!(got, vec![4, 5], "only stream 1, only after 3");
        assert_eq!(store.replay("s", 1, 0).await.len(), 3, "at most 3 events per stream");
        store.append("s", 3, 7, Bytes::from_static(b"c7")).await;
        assert!(store.replay("s", 1, 0).await.is_empty(), "the least recently used stream went");
        assert!(store.replay("other", 2, 0).await.is_empty());
        store.remove_session("s").await;
        assert!(store.is_empty());
    }

    #[tokio::test]
    async fn a_session_holds_at_most_its_bytes_oldest_first_newest_always() {
        let store = InMemoryEventStore::new(100, 10).bytes_per_session(100);
        let event = |c: u8| Bytes::from(vec![c; 40]);
        store.append("s", 1, 1, event(b'a')).await;
        store.append("s", 1, 2, event(b'b')).await;
        store.append("s", 2, 3, event(b'c')).await;
        // 120 bytes: the oldest event of the least recently used stream went.
        let seqs = |events: Vec<StoredEvent>| events.into_iter().map(|(s, _)| s).collect::<Vec<_>>();
        assert_eq!(seqs(store.replay("s", 1, 0).await), [2]);
        assert_eq!(seqs(store.replay("s", 2, 0).await), [3]);
        // One event over the budget by itself is kept, alone.
        store.append("s", 3, 4, Bytes::from(vec![b'd'; 500])).await;
        assert_eq!(store.len(), 1);
        assert_eq!(seqs(store.replay("s", 3, 0).await), [4]);
        // Other sessions have budgets of their own.
        store.append("t", 1, 1, event(b'e')).await;
        assert_eq!(store.len(), 2);
    }
}
