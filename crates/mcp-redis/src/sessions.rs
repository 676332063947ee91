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
//! - the tags of instances (see `SharedSessions::claim_tag`): the counter `PREFIX:tags`, and
//!   `PREFIX:tag:{N}` naming the instance that holds tag N, expiring unless it renews it (a
//!   renewal that finds it held by none, Redis having lost it, tells the instance
//!   `Delivery::Reset`);
//! - messages between instances, in Redis Streams: each instance's inbox
//!   `PREFIX:inbox:{TAG}` (numbered by `PREFIX:inbox:{TAG}:seq`), for what is addressed to it
//!   (an answer to its request, a probe of its stream, a resumed stream's events), written
//!   only while the tag is held and expiring with it; and `PREFIX:{fleet}:bus` (numbered by
//!   `PREFIX:{fleet}:seq`) for what every instance hears (a record changed, a session ended,
//!   a cancellation, a GET stream message). Each keeps about [`DEFAULT_INBOX_BOUND`] entries.
//!   An instance reads both from where it was, on connections of its own: what is written
//!   while its connection is down is read when it is back; what was trimmed before it read it
//!   shows as a hole in the numbering (`Delivery::Missed`).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_transport_http::server::{Delivery, FieldChange, SessionRecord, SharedFuture, SharedSessions};
use tokio::sync::mpsc;

use crate::Redis;
use crate::inbox::Start;

/// How many messages read from Redis wait for the endpoint (then the readers wait: what
/// follows stays in Redis).
const SUBSCRIBER_QUEUE: usize = 256;

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

/// Claims tag `KEYS[1]` for instance `ARGV[1]` for `ARGV[2]` ms if no instance holds it, and
/// empties its inbox (`KEYS[2]`, numbered by `KEYS[3]`: the messages of a former holder): 1 if
/// claimed, 0 if held.
static CLAIM: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
redis.call('DEL', KEYS[2], KEYS[3])
return 1
",
    )
});

/// Keeps tag `KEYS[1]` for instance `ARGV[1]` another `ARGV[2]` ms (taken again if no instance
/// holds it: Redis lost it, or the lease ran out unrenewed), with its inbox (`KEYS[2]`,
/// `KEYS[3]`) twice as long: 0 if another instance holds it, 1 if this one did, 2 if none did.
static RENEW: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('PEXPIRE', KEYS[2], 2 * ARGV[2])
redis.call('PEXPIRE', KEYS[3], 2 * ARGV[2])
if holder then return 1 end
return 2
",
    )
});

/// How long (ms) the inbox of a tag nobody holds keeps a message sent to it, halved (the
/// inbox expires after twice this): long enough for an instance whose tag Redis lost when it
/// restarted empty to take it back at its next renewal, and read what was sent meanwhile.
const ORPHAN_LEASE_MS: u64 = 30_000;

/// How many tags a claim tries (each held by a live instance) before it gives up.
const CLAIM_TRIES: u32 = 1024;

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
    /// The stream every instance reads, and its numbering.
    bus: Arc<(String, String)>,
    /// About how many messages a stream keeps for a reader that fell behind.
    bound: usize,
    /// The fleet-wide bound on live sessions, and the key counting them (see `live.rs`).
    max_sessions: Option<usize>,
    live: Arc<str>,
    /// Where [`subscribe`](SharedSessions::subscribe) delivers: told [`Delivery::Reset`] when
    /// a renewal finds that Redis lost the tag.
    delivery: Arc<std::sync::Mutex<Option<mpsc::Sender<Delivery>>>>,
}

impl std::fmt::Debug for RedisSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessions").field("bus", &self.bus.0).field("bound", &self.bound).finish_non_exhaustive()
    }
}

/// About how many messages an instance's inbox (and the stream every instance reads) keeps
/// for it by default.
pub const DEFAULT_INBOX_BOUND: usize = 10_000;

impl Redis {
    /// The records of sessions and the message bus a fleet shares (see [`RedisSessions`]).
    pub fn sessions(&self) -> RedisSessions {
        RedisSessions {
            redis: self.clone(),
            bus: Arc::new((self.key(&["{fleet}", "bus"]), self.key(&["{fleet}", "seq"]))),
            bound: DEFAULT_INBOX_BOUND,
            max_sessions: None,
            live: self.key(&["sessions", "live"]).into(),
            delivery: Arc::default(),
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

    /// Keeps about `bound` messages (at least 1) in each instance's inbox and in the stream
    /// every instance reads ([`DEFAULT_INBOX_BOUND`] unless set): an instance that falls
    /// further behind misses the oldest, and is told so (it then reloads its sessions' records).
    #[must_use]
    pub fn inbox_bound(mut self, bound: usize) -> Self {
        self.bound = bound.max(1);
        self
    }

    fn key(&self, id: &str) -> String {
        self.redis.key(&["session", &format!("{{{id}}}")])
    }

    /// The keys of tag `tag`, in its own cluster slot: who holds it, its inbox, the inbox's
    /// numbering.
    fn tag_keys(&self, tag: u32) -> [String; 3] {
        let tag = format!("{{{tag}}}");
        [self.redis.key(&["tag", &tag]), self.redis.key(&["inbox", &tag]), self.redis.key(&["inbox", &tag, "seq"])]
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
        let mut invocation = crate::inbox::PUBLISH.key(&self.bus.0);
        invocation.key(&self.bus.1).arg(self.bound).arg(&message[..]);
        self.invoke::<()>(invocation)
    }

    fn readiness(&self) -> Result<(), Duration> {
        self.redis.readiness()
    }

    fn send(&self, to: u32, message: Bytes) -> SharedFuture<'_, ()> {
        let [held, inbox, seq] = self.tag_keys(to);
        let mut invocation = crate::inbox::SEND.key(held);
        invocation.key(inbox).key(seq).arg(self.bound).arg(&message[..]).arg(ORPHAN_LEASE_MS);
        let sent = self.invoke::<bool>(invocation);
        Box::pin(async move {
            if !sent.await? {
                tracing::debug!(to, "fleet bus: no instance holds the tag a message is for now: kept a minute");
            }
            Ok(())
        })
    }

    /// Reads the inbox of `tag` from its first message (claiming the tag emptied it) and the
    /// stream every instance reads from now, each on a connection of its own (see the module
    /// docs). A reader that meets an error reads again from where it was once Redis answers.
    fn subscribe(&self, tag: u32) -> mpsc::Receiver<Delivery> {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_QUEUE);
        *self.delivery.lock_unpoisoned() = Some(tx.clone());
        let [_, inbox, seq] = self.tag_keys(tag);
        tokio::spawn(crate::inbox::read(self.redis.clone(), inbox, seq, Start::First, tx.clone()));
        let (bus, seq) = (self.bus.0.clone(), self.bus.1.clone());
        tokio::spawn(crate::inbox::read(self.redis.clone(), bus, seq, Start::Now, tx));
        rx
    }

    /// Takes the next number of the counter `PREFIX:tags` (modulo 2^20 - 1, from 1) and claims
    /// it (`PREFIX:tag:{N}`, set if not held, expiring after `lease`), the next one while held;
    /// an error after 1,024 held in a row.
    fn claim_tag(&self, instance: &str, lease: Duration) -> SharedFuture<'_, u32> {
        let instance = instance.to_owned();
        Box::pin(async move {
            let span = (1u64 << mcp_transport_http::server::TAG_BITS) - 1;
            for _ in 0..CLAIM_TRIES {
                let mut incr = redis::cmd("INCR");
                incr.arg(self.redis.key(&["tags"]));
                let n: u64 = self.query(incr).await?;
                let tag = u32::try_from((n.saturating_sub(1) % span) + 1).expect("below 2^20");
                let [held, inbox, seq] = self.tag_keys(tag);
                let mut invocation = CLAIM.key(held);
                invocation.key(inbox).key(seq).arg(&instance).arg(millis(lease));
                if self.invoke::<bool>(invocation).await? {
                    return Ok(tag);
                }
                tracing::debug!(tag, "fleet: tag held by a live instance: the next one");
            }
            Err(format!("no free tag in {CLAIM_TRIES} tries").into())
        })
    }

    /// Keeps the tag another `lease`. When no instance held it (Redis lost it: it restarted
    /// empty, say, with the sessions' records), the instance is told ([`Delivery::Reset`]): it
    /// reloads its sessions' records, and a copy whose record is gone ends, its calls waiting
    /// for a client's answer failed, rather than waiting for an answer no instance can take.
    fn renew_tag(&self, tag: u32, instance: &str, lease: Duration) -> SharedFuture<'_, bool> {
        let [held, inbox, seq] = self.tag_keys(tag);
        let mut invocation = RENEW.key(held);
        invocation.key(inbox).key(seq).arg(instance).arg(millis(lease));
        let renewed = self.invoke::<u8>(invocation);
        Box::pin(async move {
            let renewed = renewed.await?;
            if renewed == 2 {
                tracing::warn!(tag, "fleet: Redis had lost this instance's tag (taken back): records reloaded");
                // Sent from a task: the endpoint renews from the loop that reads these.
                if let Some(tx) = self.delivery.lock_unpoisoned().clone() {
                    tokio::spawn(async move { tx.send(Delivery::Reset).await });
                }
            }
            Ok(renewed != 0)
        })
    }
}
