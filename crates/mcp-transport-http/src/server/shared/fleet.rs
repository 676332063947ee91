//! An endpoint's part in a fleet ([`Fleet`]): the store, the instance's tag (which numbers its
//! streams and outgoing call ids, claimed from the store and renewed while the instance runs),
//! the messages it publishes, and the streams of other instances it resumes, fed from the bus.

use mcp_jsonrpc::sync::MutexExt as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use hashbrown::HashMap;
use tokio::sync::{OnceCell, mpsc, oneshot};

use super::bus::{BusMessage, Kind};
use super::{Audience, Delivery, SessionCopy, SharedError, SharedSessions};

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
    /// This instance's name when it claims its tag (random).
    instance: Box<str>,
    /// The tag, once claimed.
    tag: OnceCell<u32>,
    /// Another instance holds the tag now: this one serves no shared session any more.
    lost: AtomicBool,
    /// What reaches this instance, subscribed when the tag is claimed, until the endpoint's
    /// listener takes it.
    inbox: Mutex<Option<mpsc::Receiver<Delivery>>>,
    relays: Mutex<HashMap<StreamKey, Relay>>,
    probes: Mutex<HashMap<StreamKey, oneshot::Sender<()>>>,
    /// The copies of sessions made here so far (numbers them, see [`SessionCopy`]).
    copies: AtomicU64,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet").field("tag", &self.tag.get()).finish_non_exhaustive()
    }
}

/// How long a claimed tag is held without a renewal (renewed every third of it).
pub(crate) const TAG_LEASE: Duration = Duration::from_secs(30);

/// How long an instance that resumes another's stream waits to hear that its owner runs it.
const PROBE_WAIT: Duration = Duration::from_secs(2);

impl Fleet {
    pub(crate) fn new(store: Arc<dyn SharedSessions>) -> Fleet {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the OS random number generator failed");
        let instance = bytes.iter().map(|b| format!("{b:02x}")).collect::<String>().into();
        Fleet {
            store,
            instance,
            tag: OnceCell::new(),
            lost: AtomicBool::new(false),
            inbox: Mutex::default(),
            relays: Mutex::default(),
            probes: Mutex::default(),
            copies: AtomicU64::new(0),
        }
    }

    /// The instance's tag, claimed from the store the first time (see
    /// [`SharedSessions::claim_tag`]); an error when the store fails (the next call tries again).
    pub(crate) async fn ready(&self) -> Result<u32, SharedError> {
        let tag = self
            .tag
            .get_or_try_init(|| async {
                let tag = self.store.claim_tag(&self.instance, TAG_LEASE).await?;
                if tag == 0 || tag >= 1 << super::TAG_BITS {
                    return Err(SharedError::from(format!("the store gave tag {tag}, not one of 1 to 2^20 - 1")));
                }
                tracing::info!(tag, "fleet: this instance's tag claimed");
                // Subscribed before any session is served with the tag: what is sent to it
                // from now on reaches it.
                *self.inbox.lock_unpoisoned() = Some(self.store.subscribe(tag));
                Ok(tag)
            })
            .await?;
        Ok(*tag)
    }

    /// What reaches this instance (once, after [`ready`](Self::ready)).
    pub(crate) fn take_inbox(&self) -> Option<mpsc::Receiver<Delivery>> {
        self.inbox.lock_unpoisoned().take()
    }

    /// The instance's tag (0 until [claimed](Self::ready)).
    pub(crate) fn tag(&self) -> u32 {
        self.tag.get().copied().unwrap_or(0)
    }

    /// Keeps the tag another lease; once another instance holds it, the tag is lost for good.
    /// Whether it is still this instance's (a store that fails leaves it so: the lease runs on).
    pub(crate) async fn renew(&self) -> bool {
        let Some(&tag) = self.tag.get() else { return true };
        if self.is_lost() {
            return false;
        }
        match self.store.renew_tag(tag, &self.instance, TAG_LEASE).await {
            Ok(true) => true,
            Ok(false) => {
                tracing::error!(
                    tag,
                    "fleet: another instance holds this one's tag now: shared sessions are no longer served here"
                );
                self.lost.store(true, Ordering::Release);
                false
            }
            Err(e) => {
                tracing::warn!(tag, "fleet: the tag's lease not renewed: {e}");
                true
            }
        }
    }

    /// Whether the tag was lost to another instance (this one then serves no shared session).
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// The first stream number, event seq and outgoing request id of this instance's copies.
    pub(crate) fn base(&self) -> u64 {
        u64::from(self.tag()) << 32
    }

    /// Whether `stream` was opened by another instance.
    pub(crate) fn is_foreign(&self, stream: u64) -> bool {
        stream >> 32 != u64::from(self.tag())
    }

    /// A message of this instance about `session`.
    pub(crate) fn message(&self, kind: Kind, session: &Arc<str>, frame: Bytes) -> BusMessage {
        BusMessage { origin: self.tag(), kind, session: session.clone(), stream: 0, seq: 0, last: false, to: 0, frame }
    }

    /// Sends `message` to the instances that hold a copy of its session (or its GET stream:
    /// `audience`), this one's excepted (it drops its own); a failure is logged (what it carried
    /// is lost).
    pub(crate) async fn send_to_copies(&self, audience: Audience, message: BusMessage) {
        if let Err(e) = self.store.send_to_copies(&message.session, audience, self.tag(), message.encode()).await {
            tracing::warn!(session = %message.session, kind = ?message.kind, "fleet: message not sent: {e}");
        }
    }

    /// Removes the record of `session` and tells its copies it ended; a failure is logged.
    pub(crate) async fn end(&self, session: &Arc<str>) {
        let message = self.message(Kind::Ended, session, Bytes::new());
        if let Err(e) = self.store.end(session, self.tag(), message.encode()).await {
            tracing::warn!(session = %session, "fleet: the record of an ended session not removed: {e}");
        }
    }

    /// A new copy of a session on this instance, as its record is to name it.
    pub(crate) fn new_copy(&self) -> SessionCopy {
        SessionCopy { tag: self.tag(), nonce: self.copies.fetch_add(1, Ordering::Relaxed) + 1 }
    }

    /// Sends `message` to the instance of tag `to` only; a failure is logged (what it carried
    /// is lost).
    pub(crate) async fn send_to(&self, to: u32, mut message: BusMessage) {
        message.to = to;
        if let Err(e) = self.store.send(to, message.encode()).await {
            tracing::warn!(session = %message.session, kind = ?message.kind, to, "fleet: message not sent: {e}");
        }
    }

    /// Ends every stream followed from another instance (messages of the bus were lost: some of
    /// their events may be missing). Their clients resume them again, from the shared event
    /// store.
    pub(crate) fn end_relays(&self) -> usize {
        let mut relays = self.relays.lock_unpoisoned();
        let ended = relays.len();
        relays.clear();
        ended
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
        // The stream's number names the instance that opened it.
        self.send_to(tag_of(stream), probe).await;
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

/// The tag of the instance that numbered `id` (a stream number or an outgoing request id:
/// `tag << 32 | n`), or 0 (a lone instance's numbering, or not one of a fleet's).
pub(crate) fn tag_of(id: u64) -> u32 {
    u32::try_from(id >> 32).ok().filter(|&tag| tag < 1 << super::TAG_BITS).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::super::InMemorySharedSessions;
    use super::*;

    #[tokio::test]
    async fn tags_keep_ids_below_2_pow_53() {
        for _ in 0..100 {
            let fleet = Fleet::new(Arc::new(InMemorySharedSessions::new()));
            assert_eq!(fleet.tag(), 0, "not claimed yet");
            let tag = fleet.ready().await.unwrap();
            assert_eq!(fleet.ready().await.unwrap(), tag, "claimed once");
            assert!((1..1 << super::super::TAG_BITS).contains(&tag));
            assert!(fleet.base() + u64::from(u32::MAX) < 1 << 53);
            assert!(!fleet.is_foreign(fleet.base() + 5) && fleet.is_foreign(5));
            assert_eq!((tag_of(fleet.base() + 5), tag_of(5), tag_of(u64::MAX)), (tag, 0, 0));
            assert!(fleet.renew().await && !fleet.is_lost());
        }
    }
}
