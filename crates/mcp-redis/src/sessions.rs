//! Sessions a fleet shares, on Redis: [`RedisSessions`], the transport's `SharedSessions`.
//!
//! - the record of session `ID`: a string at `PREFIX:session:{ID}`, with the session's idle
//!   timeout as its expiry (refreshed while the session is used); the hash tag `{ID}` puts it
//!   in the cluster slot of the session's SSE events (`PREFIX:events:{ID}...`);
//! - messages between instances: published on the channel `PREFIX:fleet`, read by one
//!   subscription per [`RedisSessions`] (and its clones), which redis-rs reconnects and
//!   resubscribes by itself when Redis comes back (see the crate's `pubsub` module).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_transport_http::server::{SharedFuture, SharedSessions};
use tokio::sync::broadcast;

use crate::Redis;
use crate::pubsub::{Push, Subscription};

/// How many messages of other instances a slow endpoint may fall behind by.
const BUS_CAPACITY: usize = 4096;

/// The records of a fleet's sessions and its message bus, on Redis (see the module docs).
/// Give it to every instance's `HttpServerConfig::shared_sessions`.
#[derive(Clone)]
pub struct RedisSessions {
    redis: Redis,
    channel: Arc<str>,
    bus: broadcast::Sender<Bytes>,
    /// The subscription to the channel (made by the first `subscribe` within a runtime; ends
    /// with the last clone).
    listening: Arc<Mutex<Option<Subscription>>>,
}

impl std::fmt::Debug for RedisSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessions").field("channel", &self.channel).finish_non_exhaustive()
    }
}

impl Redis {
    /// The records of sessions and the message bus a fleet shares (see [`RedisSessions`]).
    pub fn sessions(&self) -> RedisSessions {
        RedisSessions {
            redis: self.clone(),
            channel: self.key(&["fleet"]).into(),
            bus: broadcast::channel(BUS_CAPACITY).0,
            listening: Arc::new(Mutex::new(None)),
        }
    }
}

impl RedisSessions {
    fn key(&self, id: &str) -> String {
        self.redis.key(&["session", &format!("{{{id}}}")])
    }

    /// Runs `cmd` within the configured timeout. A command that meets a dropped connection
    /// (Redis restarted) is tried once more, on the connection the manager makes anew.
    fn query<T: redis::FromRedisValue + Send + 'static>(&self, cmd: redis::Cmd) -> SharedFuture<'static, T> {
        let mut conn = self.redis.conn();
        let timeout = self.redis.config().timeout;
        Box::pin(async move {
            let first = crate::keys::bounded(timeout, cmd.query_async::<T>(&mut conn)).await;
            match first {
                Err(crate::Error::Redis(e)) if e.is_io_error() || e.is_connection_dropped() => {
                    Ok(crate::keys::bounded(timeout, cmd.query_async::<T>(&mut conn)).await?)
                }
                other => Ok(other?),
            }
        })
    }
}

impl SharedSessions for RedisSessions {
    fn save(&self, id: &str, record: Bytes, ttl: Duration) -> SharedFuture<'_, ()> {
        let mut cmd = redis::cmd("SET");
        cmd.arg(self.key(id)).arg(&record[..]).arg("PX").arg(ttl.as_millis().max(1) as u64);
        self.query::<()>(cmd)
    }

    fn load(&self, id: &str) -> SharedFuture<'_, Option<Bytes>> {
        let mut cmd = redis::cmd("GET");
        cmd.arg(self.key(id));
        let record = self.query::<Option<Vec<u8>>>(cmd);
        Box::pin(async move { Ok(record.await?.map(Bytes::from)) })
    }

    fn touch(&self, id: &str, ttl: Duration) -> SharedFuture<'_, ()> {
        let mut cmd = redis::cmd("PEXPIRE");
        cmd.arg(self.key(id)).arg(ttl.as_millis().max(1) as u64);
        self.query::<()>(cmd)
    }

    fn remove(&self, id: &str) -> SharedFuture<'_, ()> {
        let mut cmd = redis::cmd("DEL");
        cmd.arg(self.key(id));
        self.query::<()>(cmd)
    }

    fn publish(&self, message: Bytes) -> SharedFuture<'_, ()> {
        let mut cmd = redis::cmd("PUBLISH");
        cmd.arg(&*self.channel).arg(&message[..]);
        self.query::<()>(cmd)
    }

    fn subscribe(&self) -> broadcast::Receiver<Bytes> {
        let receiver = self.bus.subscribe();
        let mut listening = self.listening.lock_unpoisoned();
        if listening.is_none() && tokio::runtime::Handle::try_current().is_ok() {
            let bus = self.bus.clone();
            let on_push = move |push: Push<'_>| match push {
                Push::Message(payload) => {
                    let _ = bus.send(Bytes::copy_from_slice(payload));
                }
                Push::Subscribed => tracing::debug!("fleet bus: subscribed"),
                Push::Disconnected => tracing::warn!("fleet bus: the connection to Redis ended; reconnecting"),
            };
            *listening = Some(self.redis.subscribe(self.channel.to_string(), Arc::new(on_push)));
        }
        receiver
    }
}
