//! [`RedisBus`]: the change events of `subscriptions/listen` (and of the session revisions'
//! list-changed and resource-updated notifications) shared by every instance of a fleet, over
//! Redis pub/sub on the channel `prefix:bus`.
//!
//! A message is `ORIGIN EVENT`: the publishing bus's random id (so it ignores its own), a
//! space, and `tools`, `prompts`, `resources`, `resource:<uri>` or `task:<id>`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use mcp_jsonrpc::sync::MutexExt as _;
use mcp_server::{ChangeEvent, SubscriptionBus};
use tokio::sync::{broadcast, mpsc};

use crate::Redis;
use crate::keys::bounded;
use crate::pubsub::{Push, Subscription};

/// How many local receivers may fall behind, and how many events wait to be published.
const CAPACITY: usize = 256;

/// A [`SubscriptionBus`] that every instance of a fleet shares through Redis pub/sub
/// ([`fans_out`](SubscriptionBus::fans_out) is `true`).
///
/// [`publish`](SubscriptionBus::publish) delivers at once to this process's receivers, and
/// queues the event (at most 256 waiting) for a task that publishes it to Redis. A subscription
/// of its own (a RESP3 connection that redis-rs reconnects and resubscribes by itself) delivers
/// the events of the other instances. Both start with the first publish or subscribe made within
/// a tokio runtime, and stop when the bus is dropped.
///
/// While Redis is down, local delivery goes on and remote events are lost (each way); the
/// subscription comes back by itself, and then every local receiver is sent
/// [`ChangeEvent::Resync`], so `subscriptions/listen` streams announce that everything
/// they follow may have changed, and the sessions of the session revisions hear that every
/// list changed.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// let redis = mcp_redis::Redis::connect("redis://127.0.0.1/")?;
/// let server = mcp_server::Server::builder("example", "1.0")
///     .subscription_bus(Arc::new(redis.subscription_bus()))
///     .build()?;
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
pub struct RedisBus {
    local: broadcast::Sender<ChangeEvent>,
    redis: Redis,
    origin: String,
    running: Mutex<Option<Running>>,
    connected: Arc<AtomicBool>,
    /// Whether the last event could not be queued.
    dropping: AtomicBool,
}

/// The queue to the publisher, and the subscription (which ends when dropped).
struct Running {
    queue: mpsc::Sender<String>,
    _subscription: Subscription,
}

impl std::fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBus").field("origin", &self.origin).finish_non_exhaustive()
    }
}

impl Redis {
    /// The bus of change events every instance sharing this Redis hears (see [`RedisBus`]).
    pub fn subscription_bus(&self) -> RedisBus {
        let mut origin = [0u8; 8];
        // Without the system's randomness, the time and the process make a good-enough id.
        if getrandom::fill(&mut origin).is_err() {
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            origin = (nanos.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(40)).to_be_bytes();
        }
        RedisBus {
            local: broadcast::channel(CAPACITY).0,
            redis: self.clone(),
            origin: origin.iter().map(|b| format!("{b:02x}")).collect(),
            running: Mutex::new(None),
            connected: Arc::new(AtomicBool::new(false)),
            dropping: AtomicBool::new(false),
        }
    }
}

impl RedisBus {
    /// Whether the subscription to other instances' events is up (for a readiness probe).
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::Acquire)
    }

    /// The queue to the publisher, the tasks started first if need be (`None` outside a tokio
    /// runtime: then they start with a later call made within one).
    fn queue(&self) -> Option<mpsc::Sender<String>> {
        let mut running = self.running.lock_unpoisoned();
        if let Some(running) = running.as_ref() {
            return Some(running.queue.clone());
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let (queue, outbox) = mpsc::channel(CAPACITY);
        let channel = self.redis.key(&["bus"]);
        runtime.spawn(publisher(self.redis.clone(), channel.clone(), outbox));
        let subscriber = Subscriber {
            origin: self.origin.clone(),
            local: self.local.clone(),
            connected: self.connected.clone(),
            missed: AtomicBool::new(false),
        };
        let subscription = {
            let _entered = runtime.enter();
            self.redis.subscribe(channel, Arc::new(move |push| subscriber.on_push(push)))
        };
        *running = Some(Running { queue: queue.clone(), _subscription: subscription });
        Some(queue)
    }
}

impl SubscriptionBus for RedisBus {
    fn publish(&self, event: ChangeEvent) {
        let encoded = encode(&event);
        let _ = self.local.send(event);
        let (Some(queue), Some(encoded)) = (self.queue(), encoded) else { return };
        let queued = queue.try_send(format!("{} {encoded}", self.origin)).is_ok();
        // One warning per run of dropped events, not one per event.
        let was_dropping = self.dropping.swap(!queued, Ordering::Relaxed);
        if !queued && !was_dropping {
            tracing::warn!("the Redis bus's queue is full: changes are not told to the other instances");
        }
    }

    fn subscribe(&self) -> broadcast::Receiver<ChangeEvent> {
        let _ = self.queue();
        self.local.subscribe()
    }

    fn fans_out(&self) -> bool {
        true
    }
}

/// Publishes what is queued until the bus is dropped (the queue closes).
async fn publisher(redis: Redis, channel: String, mut outbox: mpsc::Receiver<String>) {
    let mut conn = redis.conn();
    let timeout = redis.config().timeout;
    let mut failing = false;
    while let Some(message) = outbox.recv().await {
        let mut command = redis::cmd("PUBLISH");
        command.arg(&channel).arg(message);
        match bounded(timeout, command.query_async::<i64>(&mut conn)).await {
            Ok(_) if failing => {
                failing = false;
                tracing::info!("the Redis bus publishes again");
            }
            Ok(_) => {}
            // One warning per outage, not one per event.
            Err(error) if !failing => {
                failing = true;
                tracing::warn!(%error, "changes are not told to the other instances (Redis)");
            }
            Err(error) => tracing::debug!(%error, "a change was not told to the other instances (Redis)"),
        }
    }
}

/// Delivers other instances' events to the local receivers, from the subscription's pushes.
struct Subscriber {
    origin: String,
    local: broadcast::Sender<ChangeEvent>,
    connected: Arc<AtomicBool>,
    /// The connection was lost since the last subscription: changes may have been missed.
    missed: AtomicBool,
}

impl Subscriber {
    fn on_push(&self, push: Push<'_>) {
        match push {
            Push::Message(payload) => self.receive(payload),
            Push::Subscribed => {
                if self.missed.swap(false, Ordering::AcqRel) {
                    tracing::info!("the Redis bus is back: listeners are told everything may have changed");
                    self.lag_receivers();
                }
                self.connected.store(true, Ordering::Release);
            }
            Push::Disconnected => {
                self.missed.store(true, Ordering::Release);
                if self.connected.swap(false, Ordering::AcqRel) {
                    tracing::warn!("the Redis bus lost its subscription: reconnecting");
                }
            }
        }
    }

    /// Delivers one message locally, unless this bus sent it or it cannot be read.
    fn receive(&self, payload: &[u8]) {
        let text = String::from_utf8_lossy(payload);
        let Some((origin, event)) = text.split_once(' ') else { return };
        if origin == self.origin {
            return;
        }
        match decode(event) {
            Some(event) => {
                let _ = self.local.send(event);
            }
            None => tracing::debug!(event, "an unknown change on the Redis bus, ignored"),
        }
    }

    /// Tells every local receiver that changes may have been missed (see [`RedisBus`]).
    fn lag_receivers(&self) {
        let _ = self.local.send(ChangeEvent::Resync);
    }
}

/// The wire form of an event (`None`: a kind this bus does not know, kept local).
fn encode(event: &ChangeEvent) -> Option<String> {
    Some(match event {
        ChangeEvent::ToolsListChanged => "tools".to_owned(),
        ChangeEvent::PromptsListChanged => "prompts".to_owned(),
        ChangeEvent::ResourcesListChanged => "resources".to_owned(),
        ChangeEvent::ResourceUpdated(uri) => format!("resource:{uri}"),
        ChangeEvent::TaskChanged(id) => format!("task:{id}"),
        _ => return None,
    })
}

fn decode(event: &str) -> Option<ChangeEvent> {
    Some(match event {
        "tools" => ChangeEvent::ToolsListChanged,
        "prompts" => ChangeEvent::PromptsListChanged,
        "resources" => ChangeEvent::ResourcesListChanged,
        _ => {
            if let Some(uri) = event.strip_prefix("resource:") {
                ChangeEvent::ResourceUpdated(uri.to_owned())
            } else {
                ChangeEvent::TaskChanged(event.strip_prefix("task:")?.to_owned())
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_through_their_wire_form() {
        for event in [
            ChangeEvent::ToolsListChanged,
            ChangeEvent::PromptsListChanged,
            ChangeEvent::ResourcesListChanged,
            ChangeEvent::ResourceUpdated("file:///a b:c".to_owned()),
            ChangeEvent::TaskChanged("t-1".to_owned()),
        ] {
            let wire = encode(&event).expect("a known kind");
            assert_eq!(decode(&wire), Some(event));
        }
        assert_eq!(decode("nonsense"), None);
    }
}
