//! Sessions a fleet shares, on Redis: [`RedisSessions`], the transport's `SharedSessions`.
//!
//! - the record of session `ID`: a hash at `PREFIX:session:{ID}`, a field per part of the
//!   record (the owner, the session's fixed part, its log level, one per subscription) and
//!   its version in `.version`, with the session's idle timeout as its expiry (refreshed
//!   while the session is used). Each change is one Lua script that writes only the fields
//!   it changes, and only while the record exists: a change never undoes another instance's,
//!   and never brings back a session that ended (DEL) or expired. The hash tag `{ID}` puts it
//!   in the cluster slot of the session's SSE events (`PREFIX:events:{ID}...`);
//! - the fleet-wide count of live sessions, when bounded ([`RedisSessions::max_sessions`]):
//!   `PREFIX:sessions:live` (see the crate's `live` module);
//! - messages between instances: published on the channel `PREFIX:fleet`, read by one
//!   subscription per [`RedisSessions`] (and its clones), which redis-rs reconnects and
//!   resubscribes by itself when Redis comes back (see the crate's `pubsub` module).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_transport_http::server::{FieldChange, SessionRecord, SharedFuture, SharedSessions};
use tokio::sync::broadcast;

use crate::Redis;
use crate::pubsub::{Push, Subscription};

/// How many messages of other instances a slow endpoint may fall behind by.
const BUS_CAPACITY: usize = 4096;

/// The field of a record's version.
const VERSION_FIELD: &str = ".version";

/// Creates the record `KEYS[1]` with the fields `ARGV[2..]` (name, value, ...) at version 1,
/// expiring in `ARGV[1]` ms, unless it exists: 1 if created, 0 if not.
static CREATE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[1], '.version', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
",
    )
});

/// Applies the changes `ARGV[2..]` (`s` name value: set; `d` name '': remove) to the record
/// `KEYS[1]` if it exists, raises its version and makes it expire in `ARGV[1]` ms: the record
/// then (HGETALL), or nil (and nothing written) if it does not exist.
static UPDATE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
for i = 2, #ARGV, 3 do
  if ARGV[i] == 's' then
    redis.call('HSET', KEYS[1], ARGV[i + 1], ARGV[i + 2])
  else
    redis.call('HDEL', KEYS[1], ARGV[i + 1])
  end
end
redis.call('HINCRBY', KEYS[1], '.version', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return redis.call('HGETALL', KEYS[1])
",
    )
});

/// A record as HGETALL gives it (name, value, ...): `None` if empty (no such key).
fn record_of(flat: Vec<Vec<u8>>) -> Result<Option<SessionRecord>, crate::Error> {
    if flat.is_empty() {
        return Ok(None);
    }
    let mut record = SessionRecord { version: 0, fields: Vec::with_capacity((flat.len() / 2).saturating_sub(1)) };
    let mut flat = flat.into_iter();
    while let (Some(name), Some(value)) = (flat.next(), flat.next()) {
        let name =
            String::from_utf8(name).map_err(|_| crate::Error::Corrupt("a session record's field name".into()))?;
        if name == VERSION_FIELD {
            let version = std::str::from_utf8(&value).ok().and_then(|v| v.parse().ok());
            record.version = version.ok_or_else(|| crate::Error::Corrupt("a session record's version".into()))?;
        } else {
            record.fields.push((name, Bytes::from(value)));
        }
    }
    if record.version == 0 {
        return Err(crate::Error::Corrupt("a session record without its version".into()));
    }
    Ok(Some(record))
}

/// A ttl as Redis takes it: whole milliseconds, at least 1.
fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// The records of a fleet's sessions and its message bus, on Redis (see the module docs).
/// Give it to every instance's `HttpServerConfig::shared_sessions`.
#[derive(Clone)]
pub struct RedisSessions {
    redis: Redis,
    channel: Arc<str>,
    bus: broadcast::Sender<Bytes>,
    /// The fleet-wide bound on live sessions, and the key counting them (see `live.rs`).
    max_sessions: Option<usize>,
    live: Arc<str>,
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
            max_sessions: None,
            live: self.key(&["sessions", "live"]).into(),
            listening: Arc::new(Mutex::new(None)),
        }
    }
}

impl RedisSessions {
    /// Bounds the live sessions of the whole fleet at `max` (unbounded unless set): a new
    /// session beyond gets 503 with `Retry-After`, on whichever instance it is made, until
    /// one ends (DELETE) or expires (its idle timeout). Counted in `PREFIX:sessions:live`, a
    /// sorted set of ids scored by expiry: one more round trip per new session, and one
    /// beside each touch of a record (sent at once, not awaited one after the other). The
    /// set is apart from the records (another cluster slot), so a session counted whose
    /// record is never made (its `initialize` failed) holds its place until its idle timeout.
    /// Sessions made before the bound was set are not counted. Give every instance the
    /// same bound.
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = Some(max);
        self
    }

    fn key(&self, id: &str) -> String {
        self.redis.key(&["session", &format!("{{{id}}}")])
    }

    /// Runs `cmd` within the configured timeout. A command that meets a dropped connection
    /// (Redis restarted) is tried once more, on the connection the manager makes anew (not
    /// one that timed out: Redis hangs, and the breaker counts it).
    fn query<T: redis::FromRedisValue + Send + 'static>(&self, cmd: redis::Cmd) -> SharedFuture<'static, T> {
        let mut conn = self.redis.conn();
        let timeout = self.redis.config().timeout;
        Box::pin(async move {
            let first = crate::keys::bounded(timeout, cmd.query_async::<T>(&mut conn)).await;
            match first {
                Err(crate::Error::Redis(e)) if !e.is_timeout() && (e.is_io_error() || e.is_connection_dropped()) => {
                    Ok(crate::keys::bounded(timeout, cmd.query_async::<T>(&mut conn)).await?)
                }
                other => Ok(other?),
            }
        })
    }

    /// Runs `invocation` of a script within the configured timeout, tried once more on a
    /// dropped connection (as [`query`](Self::query)). Every key it touches is in its KEYS.
    fn invoke<T: redis::FromRedisValue + Send + 'static>(
        &self,
        invocation: redis::ScriptInvocation<'static>,
    ) -> SharedFuture<'static, T> {
        let mut conn = self.redis.conn();
        let timeout = self.redis.config().timeout;
        Box::pin(async move {
            let first = crate::keys::bounded(timeout, invocation.invoke_async::<T>(&mut conn)).await;
            match first {
                Err(crate::Error::Redis(e)) if !e.is_timeout() && (e.is_io_error() || e.is_connection_dropped()) => {
                    Ok(crate::keys::bounded(timeout, invocation.invoke_async::<T>(&mut conn)).await?)
                }
                other => Ok(other?),
            }
        })
    }
}

impl SharedSessions for RedisSessions {
    fn create(&self, id: &str, fields: &[(String, Bytes)], ttl: Duration) -> SharedFuture<'_, bool> {
        let mut invocation = CREATE.key(self.key(id));
        invocation.arg(millis(ttl));
        for (name, value) in fields {
            invocation.arg(name.as_str()).arg(&value[..]);
        }
        self.invoke::<bool>(invocation)
    }

    fn update(&self, id: &str, changes: &[FieldChange], ttl: Duration) -> SharedFuture<'_, Option<SessionRecord>> {
        let mut invocation = UPDATE.key(self.key(id));
        invocation.arg(millis(ttl));
        for change in changes {
            match change {
                FieldChange::Set(name, value) => invocation.arg("s").arg(name.as_str()).arg(&value[..]),
                FieldChange::Remove(name) => invocation.arg("d").arg(name.as_str()).arg(""),
            };
        }
        let record = self.invoke::<Option<Vec<Vec<u8>>>>(invocation);
        Box::pin(async move {
            match record.await? {
                Some(flat) => Ok(record_of(flat)?),
                None => Ok(None),
            }
        })
    }

    fn load(&self, id: &str) -> SharedFuture<'_, Option<SessionRecord>> {
        let mut cmd = redis::cmd("HGETALL");
        cmd.arg(self.key(id));
        let record = self.query::<Vec<Vec<u8>>>(cmd);
        Box::pin(async move { Ok(record_of(record.await?)?) })
    }

    fn touch(&self, id: &str, ttl: Duration) -> SharedFuture<'_, bool> {
        let mut cmd = redis::cmd("PEXPIRE");
        cmd.arg(self.key(id)).arg(millis(ttl));
        let touched = self.query::<bool>(cmd);
        if self.max_sessions.is_none() {
            return touched;
        }
        let mut refresh = crate::live::REFRESH.key(&*self.live);
        refresh.arg(id).arg(millis(ttl));
        let refreshed = self.invoke::<()>(refresh);
        Box::pin(async move {
            let (touched, refreshed) = futures_util::future::join(touched, refreshed).await;
            if let Err(e) = refreshed {
                tracing::debug!("fleet: a session's place in the fleet's count not refreshed: {e}");
            }
            touched
        })
    }

    fn remove(&self, id: &str) -> SharedFuture<'_, ()> {
        let mut cmd = redis::cmd("DEL");
        cmd.arg(self.key(id));
        let removed = self.query::<()>(cmd);
        if self.max_sessions.is_none() {
            return removed;
        }
        let mut cmd = redis::cmd("ZREM");
        cmd.arg(&*self.live).arg(id);
        let uncounted = self.query::<()>(cmd);
        Box::pin(async move {
            let (removed, uncounted) = futures_util::future::join(removed, uncounted).await;
            removed.and(uncounted)
        })
    }

    fn admit(&self, id: &str, ttl: Duration) -> Option<SharedFuture<'_, bool>> {
        let max = self.max_sessions?;
        let mut invocation = crate::live::ADMIT.key(&*self.live);
        invocation.arg(id).arg(millis(ttl)).arg(max);
        Some(self.invoke::<bool>(invocation))
    }

    fn publish(&self, message: Bytes) -> SharedFuture<'_, ()> {
        let mut cmd = redis::cmd("PUBLISH");
        cmd.arg(&*self.channel).arg(&message[..]);
        self.query::<()>(cmd)
    }

    fn readiness(&self) -> Result<(), Duration> {
        self.redis.readiness()
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
