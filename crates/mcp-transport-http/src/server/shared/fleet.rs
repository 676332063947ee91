//! An endpoint's part in a fleet ([`Fleet`]): the store, the instance's tag (which numbers its
//! streams and outgoing call ids), the messages it publishes, and the streams of other
//! instances it resumes, fed from the bus.

use mcp_jsonrpc::sync::MutexExt as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use hashbrown::HashMap;
use tokio::sync::{mpsc, oneshot};

use super::SharedSessions;
use super::bus::{BusMessage, Kind};

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
        let event = crate::server::sse::sse_event(Some((message.stream, message.seq)), &message.frame);
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
    use super::super::InMemorySharedSessions;
    use super::*;

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
