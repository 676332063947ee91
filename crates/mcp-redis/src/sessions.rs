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
//!   (an answer to its request, a probe of its stream, a resumed stream's events, and what
//!   concerns a session it holds a copy of: a record changed, a session ended, a
//!   cancellation, a GET stream message), written only while the tag is held and expiring
//!   with it. It keeps about [`DEFAULT_INBOX_BOUND`] entries. An instance reads it from where
//!   it was, on a connection of its own: what is written while its connection is down is read
//!   when it is back; what was trimmed before it read it shows as a hole in the numbering
//!   (`Delivery::Missed`). No stream is read by every instance: an instance's work grows with
//!   the sessions it holds, not with the fleet's.
//! - the copies of a session, in its record: a field `.copy:{TAG}` per instance holding one
//!   (its value the copy's nonce), written in the script that creates the record or loads a
//!   copy, removed when the copy is dropped (or found to name a tag no instance holds), and
//!   `.get`, the tag of the instance holding the session's GET stream. A message for the
//!   session's copies reads them (one script in the record's slot), then goes to each inbox
//!   (one script per copy in its tag's slot, sent together: one more round trip).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_transport_http::server::{
    Audience, Delivery, FieldChange, SessionCopy, SessionRecord, SharedFuture, SharedSessions, Touched,
};
use tokio::sync::mpsc;

use crate::Redis;

/// How many messages read from Redis wait for the endpoint (then the readers wait: what
/// follows stays in Redis).
const SUBSCRIBER_QUEUE: usize = 256;

/// The counter of messages sent to a tag no instance holds (a copy or an instance that died
/// without cleaning up, or one that lost its tag).
const UNHELD: &str = "mcp_fleet_bus_unheld_total";

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

/// Names copy `ARGV[1]` (a field) with nonce `ARGV[2]` in the record `KEYS[1]` if it exists:
/// the record then (HGETALL), or empty (and nothing written).
static LOAD_COPY: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return redis.call('HGETALL', KEYS[1])
",
    )
});

/// Makes the record `KEYS[1]`, if it exists, expire in `ARGV[1]` ms and name copy `ARGV[2]`
/// (a field) with nonce `ARGV[3]`: nil if there is no record (nothing written), empty if it
/// named the copy, else the record (HGETALL) once it names it again.
static TOUCH_COPY: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then return false end
if redis.call('HGET', KEYS[1], ARGV[2]) == ARGV[3] then return {} end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return redis.call('HGETALL', KEYS[1])
",
    )
});

/// Forgets the copies `ARGV[1..]` (field, nonce, tag, ...) of the record `KEYS[1]`: each field
/// removed if it still holds that nonce (a later copy of the same instance keeps its own), and
/// `.get` with it if it names that tag.
static DROP_COPIES: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
for i = 1, #ARGV, 3 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    if redis.call('HGET', KEYS[1], '.get') == ARGV[i + 2] then redis.call('HDEL', KEYS[1], '.get') end
  end
end
return 1
",
    )
});

/// Names tag `ARGV[1]` the holder of the GET stream in the record `KEYS[1]`, if it exists.
static HOLD_GET: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], '.get', ARGV[1]) end
return 1
",
    )
});

/// The copies the record `KEYS[1]` names (tag, nonce, ...): with `ARGV[1]` = `get`, only the
/// GET stream's holder if it names one that holds a copy and is not the sender (`ARGV[3]`: it
/// no longer holds it), else every copy; with `ARGV[2]` = `end`, the record is removed.
static COPIES: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local record = redis.call('HGETALL', KEYS[1])
local get = ARGV[1] == 'get' and redis.call('HGET', KEYS[1], '.get')
local copies, holder = {}, false
for i = 1, #record, 2 do
  if string.sub(record[i], 1, 6) == '.copy:' then
    local tag = string.sub(record[i], 7)
    if tag == get and tag ~= ARGV[3] then holder = {tag, record[i + 1]} end
    copies[#copies + 1] = tag
    copies[#copies + 1] = record[i + 1]
  end
end
if ARGV[2] == 'end' then redis.call('DEL', KEYS[1]) end
return holder or copies
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
    /// About how many messages an inbox keeps for a reader that fell behind.
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
        f.debug_struct("RedisSessions").field("bound", &self.bound).finish_non_exhaustive()
    }
}

/// About how many messages an instance's inbox keeps for it by default.
pub const DEFAULT_INBOX_BOUND: usize = 10_000;

impl Redis {
    /// The records of sessions and the message bus a fleet shares (see [`RedisSessions`]).
    pub fn sessions(&self) -> RedisSessions {
        RedisSessions {
            redis: self.clone(),
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

    /// Keeps about `bound` messages (at least 1) in each instance's inbox
    /// ([`DEFAULT_INBOX_BOUND`] unless set): an instance that falls
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

    /// Puts `message` in the inbox of tag `to`: whether an instance holds the tag (one that
    /// none holds is counted, `mcp_fleet_bus_unheld_total`, and the message kept a minute).
    fn send_one(&self, to: u32, message: &Bytes) -> SharedFuture<'static, bool> {
        let [held, inbox, seq] = self.tag_keys(to);
        let mut invocation = crate::inbox::SEND.key(held);
        invocation.key(inbox).key(seq).arg(self.bound).arg(&message[..]).arg(ORPHAN_LEASE_MS);
        let sent = self.invoke::<bool>(invocation);
        Box::pin(async move {
            let held = sent.await?;
            if !held {
                metrics::counter!(UNHELD).increment(1);
                tracing::debug!(to, "fleet bus: no instance holds the tag a message is for now: kept a minute");
            }
            Ok(held)
        })
    }

    /// Puts `message` in the inbox of each of `copies` (tag, nonce) but `from`'s, all sent at
    /// once: the copies whose tag no instance holds (a failure is logged: what it carried is
    /// lost for that copy).
    async fn send_each(&self, copies: &[(u32, String)], from: u32, message: &Bytes) -> Vec<(u32, String)> {
        let to: Vec<&(u32, String)> = copies.iter().filter(|(tag, _)| *tag != from).collect();
        let sent = futures_util::future::join_all(to.iter().map(|(tag, _)| self.send_one(*tag, message))).await;
        let mut unheld = Vec::new();
        for ((tag, nonce), sent) in to.into_iter().zip(sent) {
            match sent {
                Ok(true) => {}
                Ok(false) => unheld.push((*tag, nonce.clone())),
                Err(e) => tracing::warn!(to = tag, "fleet bus: a message to a session's copy not sent: {e}"),
            }
        }
        unheld
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

    /// One script reads the copies and removes the record; then one per copy (sent together)
    /// puts the message in its inbox.
    fn end(&self, id: &str, from: u32, message: Bytes) -> SharedFuture<'_, ()> {
        let mut invocation = COPIES.key(self.key(id));
        invocation.arg("all").arg("end").arg(from);
        let copies = self.invoke::<Vec<(u32, String)>>(invocation);
        let uncounted = self.max_sessions.map(|_| {
            let mut cmd = redis::cmd("ZREM");
            cmd.arg(&*self.live).arg(id);
            self.query::<()>(cmd)
        });
        Box::pin(async move {
            let copies = copies.await?;
            let sent = self.send_each(&copies, from, &message);
            let (_, uncounted) = futures_util::future::join(sent, async {
                match uncounted {
                    Some(uncounted) => uncounted.await,
                    None => Ok(()),
                }
            })
            .await;
            uncounted
        })
    }

    /// One script reads the copies (or the GET stream's holder); then one per copy (sent
    /// together) puts the message in its inbox. A copy whose tag no instance holds is counted
    /// (`mcp_fleet_bus_unheld_total`) and then forgotten (a third script, only then).
    fn send_to_copies(&self, id: &str, audience: Audience, from: u32, message: Bytes) -> SharedFuture<'_, ()> {
        let key = self.key(id);
        let mut invocation = COPIES.key(&key);
        invocation.arg(if audience == Audience::Standalone { "get" } else { "all" }).arg("").arg(from);
        let copies = self.invoke::<Vec<(u32, String)>>(invocation);
        Box::pin(async move {
            let copies = copies.await?;
            let unheld = self.send_each(&copies, from, &message).await;
            if unheld.is_empty() {
                return Ok(());
            }
            tracing::debug!(?unheld, "fleet: copies of a session on tags no instance holds: forgotten");
            let mut invocation = DROP_COPIES.key(key);
            for (tag, nonce) in unheld {
                invocation.arg(SessionCopy::field(tag)).arg(nonce).arg(tag);
            }
            self.invoke::<()>(invocation).await
        })
    }

    fn load_copy(&self, id: &str, copy: SessionCopy) -> SharedFuture<'_, Option<SessionRecord>> {
        let mut invocation = LOAD_COPY.key(self.key(id));
        invocation.arg(SessionCopy::field(copy.tag)).arg(copy.nonce);
        let record = self.invoke::<Vec<Vec<u8>>>(invocation);
        Box::pin(async move { Ok(record_of(record.await?)?) })
    }

    /// One script (the `PEXPIRE` of [`touch`](SharedSessions::touch) and the copy's name), and
    /// beside it the refresh of the session's place in the fleet's count, as `touch`.
    fn touch_copy(&self, id: &str, copy: SessionCopy, ttl: Duration) -> SharedFuture<'_, Touched> {
        let mut invocation = TOUCH_COPY.key(self.key(id));
        invocation.arg(millis(ttl)).arg(SessionCopy::field(copy.tag)).arg(copy.nonce);
        let touched = self.invoke::<Option<Vec<Vec<u8>>>>(invocation);
        let refreshed = self.max_sessions.map(|_| {
            let mut refresh = crate::live::REFRESH.key(&*self.live);
            refresh.arg(id).arg(millis(ttl));
            self.invoke::<()>(refresh)
        });
        Box::pin(async move {
            let touched = async {
                Ok(match touched.await? {
                    None => Touched::Gone,
                    Some(flat) if flat.is_empty() => Touched::Named,
                    Some(flat) => record_of(flat)?.map_or(Touched::Gone, Touched::Renamed),
                })
            };
            let Some(refreshed) = refreshed else { return touched.await };
            let (touched, refreshed) = futures_util::future::join(touched, refreshed).await;
            if let Err(e) = refreshed {
                tracing::debug!("fleet: a session's place in the fleet's count not refreshed: {e}");
            }
            touched
        })
    }

    fn drop_copy(&self, id: &str, copy: SessionCopy) -> SharedFuture<'_, ()> {
        let mut invocation = DROP_COPIES.key(self.key(id));
        invocation.arg(SessionCopy::field(copy.tag)).arg(copy.nonce).arg(copy.tag);
        self.invoke::<()>(invocation)
    }

    fn hold_standalone(&self, id: &str, tag: u32) -> SharedFuture<'_, ()> {
        let mut invocation = HOLD_GET.key(self.key(id));
        invocation.arg(tag);
        self.invoke::<()>(invocation)
    }

    fn readiness(&self) -> Result<(), Duration> {
        self.redis.readiness()
    }

    /// A message to a tag no instance holds is kept a minute (see `ORPHAN_LEASE_MS`) and
    /// counted (`mcp_fleet_bus_unheld_total`).
    fn send(&self, to: u32, message: Bytes) -> SharedFuture<'_, ()> {
        let sent = self.send_one(to, &message);
        Box::pin(async move {
            sent.await?;
            Ok(())
        })
    }

    /// Reads the inbox of `tag` from its first message (claiming the tag emptied it), on a
    /// connection of its own (see the module docs). A reader that meets an error reads again
    /// from where it was once Redis answers.
    fn subscribe(&self, tag: u32) -> mpsc::Receiver<Delivery> {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_QUEUE);
        *self.delivery.lock_unpoisoned() = Some(tx.clone());
        let [_, inbox, _] = self.tag_keys(tag);
        tokio::spawn(crate::inbox::read(self.redis.clone(), inbox, tx));
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
