//! [`RedisEventStore`]: the events of resumable SSE streams, in Redis, so that a client resumes
//! a stream (`Last-Event-ID`) on whichever instance its reconnection lands.
//!
//! Keys of a session (the `{session}` hash tag keeps them in one cluster slot):
//!
//! - `prefix:events:{session}` (hash): `clock` (a counter of appends), `bytes` (the bytes held),
//!   `b:<stream>` (the bytes held per stream), `r` (when every list's expiry was last
//!   refreshed, in ms);
//! - `prefix:events:{session}:streams` (sorted set): the streams, scored by their last append;
//! - `prefix:events:{session}:s:<stream>` (list): the stream's events in order of storage, each
//!   the event's seq (8 bytes, big-endian) followed by the message.
//!
//! One append is one Lua script (one round trip) that pushes, enforces the bounds and
//! refreshes the expiries of the hash, the sorted set and the list it pushed to; those of the
//! session's other lists once a quarter of the TTL has passed since they last were.

use std::sync::LazyLock;
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::BoxFuture;
use mcp_transport_http::server::{EventStore, StoredEvent};

use crate::Redis;
use crate::keys::bounded;

/// An [`EventStore`] in Redis that every instance of a fleet shares.
///
/// Event ids are `STREAM-SEQ`, and in a fleet SEQ is numbered by whichever instance writes the
/// event: unique within the session, but not ordered across instances. So
/// [`replay`](EventStore::replay) returns the events stored after the one with seq `after`
/// **in order of storage**, and every event held for the stream when `after` is not found
/// (trimmed, or never stored).
///
/// Bounds, as [`InMemoryEventStore`](mcp_transport_http::server::InMemoryEventStore)'s: per
/// stream the newest [`events_per_stream`](Self::events_per_stream) events (256), per session
/// the [`streams_per_session`](Self::streams_per_session) streams appended to most recently
/// (32), and per session about [`bytes_per_session`](Self::bytes_per_session) bytes (4 MiB:
/// the bytes of the messages and their 8-byte seq, not Redis's own overhead; the oldest events
/// of the least recently used streams go first, the newest event is always kept). No event
/// larger than [`max_event_bytes`](Self::max_event_bytes) (the session's budget unless set) is
/// kept: a response becomes an error answering its request, anything else is dropped. Every
/// key expires after [`ttl`](Self::ttl) (30 min): a session's hash and sorted set and the list
/// of the stream appended to are refreshed on each append; the session's other lists at the
/// first append after a quarter of the TTL passed since they last were (one command per
/// stream, so not on every append), so each lives at least three quarters of the TTL after the
/// session's last append.
///
/// When Redis is down or slow, an append is dropped and a replay returns nothing, each with a
/// warning logged, after at most [`RedisConfig::timeout`](crate::RedisConfig::timeout); at
/// once while the handle's circuit breaker is open ([`Redis::circuit`](crate::Redis::circuit)).
///
/// ```no_run
/// # fn main() -> Result<(), mcp_redis::Error> {
/// use std::sync::Arc;
/// let redis = mcp_redis::Redis::connect("redis://127.0.0.1/")?;
/// let store = redis.event_store().events_per_stream(128).ttl(std::time::Duration::from_secs(600));
/// let config = mcp_transport_http::server::HttpServerConfig::default().event_store(Some(Arc::new(store)));
/// # let _ = config;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisEventStore {
    redis: Redis,
    events_per_stream: usize,
    streams_per_session: usize,
    bytes_per_session: usize,
    /// The largest event kept (`None`: `bytes_per_session`).
    max_event_bytes: Option<usize>,
    ttl: Duration,
}

impl std::fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEventStore")
            .field("events_per_stream", &self.events_per_stream)
            .field("streams_per_session", &self.streams_per_session)
            .field("bytes_per_session", &self.bytes_per_session)
            .field("max_event_bytes", &self.event_bound())
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// The store of resumable SSE streams' events in this Redis, with the default bounds (see
    /// [`RedisEventStore`]).
    pub fn event_store(&self) -> RedisEventStore {
        RedisEventStore {
            redis: self.clone(),
            events_per_stream: 256,
            streams_per_session: 32,
            bytes_per_session: 4 << 20,
            max_event_bytes: None,
            ttl: Duration::from_secs(30 * 60),
        }
    }
}

impl RedisEventStore {
    /// Keeps at most `events` events per stream (the newest; at least 1).
    pub fn events_per_stream(mut self, events: usize) -> Self {
        self.events_per_stream = events.max(1);
        self
    }

    /// Keeps at most `streams` streams per session (the ones appended to most recently; at
    /// least 1).
    pub fn streams_per_session(mut self, streams: usize) -> Self {
        self.streams_per_session = streams.max(1);
        self
    }

    /// Keeps about `bytes` bytes per session (besides its newest event, which is always kept,
    /// if it is not larger than [`max_event_bytes`](Self::max_event_bytes)).
    pub fn bytes_per_session(mut self, bytes: usize) -> Self {
        self.bytes_per_session = bytes;
        self
    }

    /// Keeps no event larger than `bytes` (its message; default: `bytes_per_session`, 4 MiB).
    /// A larger response is kept as an error answering the same request (-32603, "too large
    /// to keep for resumption"), so that a client resuming the stream gets an answer; a larger
    /// notification or request is not kept (a resumed stream goes on without it).
    pub fn max_event_bytes(mut self, bytes: usize) -> Self {
        self.max_event_bytes = Some(bytes);
        self
    }

    fn event_bound(&self) -> usize {
        self.max_event_bytes.unwrap_or(self.bytes_per_session)
    }

    /// Lets a session's events expire `ttl` after its last append (at least 1 s; the session
    /// TTL, say).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_secs(1));
        self
    }

    /// The keys of `session`: its hash, its sorted set of streams, and the prefix of its lists.
    fn keys(&self, session: &str) -> SessionKeys {
        let meta = self.redis.key(&["events", &format!("{{{session}}}")]);
        SessionKeys { streams: format!("{meta}:streams"), lists: format!("{meta}:s:"), meta }
    }
}

struct SessionKeys {
    meta: String,
    streams: String,
    lists: String,
}

/// Pushes one event (KEYS: hash, sorted set, the stream's list; ARGV: stream, entry, events
/// per stream, streams per session, bytes per session, ttl in ms, lists' prefix, the time in
/// ms), then drops what is over a bound and refreshes the expiries: of the hash, the sorted set
/// and the list on each append; of every list when a quarter of the TTL passed since they last
/// were (or the clock, that of whichever instance appends, went back).
static APPEND: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local meta, streams, list = KEYS[1], KEYS[2], KEYS[3]
local stream, entry = ARGV[1], ARGV[2]
local per_stream, per_session = tonumber(ARGV[3]), tonumber(ARGV[4])
local budget, ttl, lists, now = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7], tonumber(ARGV[8])
local function forget(s, len)
  redis.call('HINCRBY', meta, 'b:' .. s, 0 - len)
  return redis.call('HINCRBY', meta, 'bytes', 0 - len)
end
local function drop_stream(s)
  local rest = tonumber(redis.call('HGET', meta, 'b:' .. s) or '0')
  redis.call('HDEL', meta, 'b:' .. s)
  redis.call('DEL', lists .. s)
  redis.call('ZREM', streams, s)
  -- (0 - x: Lua writes -x of 0 as -0, which HINCRBY refuses)
  return redis.call('HINCRBY', meta, 'bytes', 0 - rest)
end
redis.call('RPUSH', list, entry)
redis.call('HINCRBY', meta, 'b:' .. stream, #entry)
local total = redis.call('HINCRBY', meta, 'bytes', #entry)
redis.call('ZADD', streams, redis.call('HINCRBY', meta, 'clock', 1), stream)
while redis.call('LLEN', list) > per_stream do
  total = forget(stream, #redis.call('LPOP', list))
end
local count = redis.call('ZCARD', streams)
if count > per_session then
  for _, s in ipairs(redis.call('ZRANGE', streams, 0, count - per_session - 1)) do
    total = drop_stream(s)
  end
end
while total > budget do
  local lru = redis.call('ZRANGE', streams, 0, 0)[1]
  if lru == nil or (lru == stream and redis.call('LLEN', list) <= 1) then break end
  local old = redis.call('LPOP', lists .. lru)
  if old then total = forget(lru, #old) end
  if redis.call('LLEN', lists .. lru) == 0 then total = drop_stream(lru) end
end
redis.call('PEXPIRE', meta, ttl)
redis.call('PEXPIRE', streams, ttl)
redis.call('PEXPIRE', list, ttl)
local refreshed = tonumber(redis.call('HGET', meta, 'r') or '0')
if now < refreshed or now - refreshed >= ttl / 4 then
  for _, s in ipairs(redis.call('ZRANGE', streams, 0, -1)) do
    redis.call('PEXPIRE', lists .. s, ttl)
  end
  redis.call('HSET', meta, 'r', now)
end
return total
",
    )
});

/// Deletes every key of a session (KEYS: hash, sorted set; ARGV: lists' prefix).
static REMOVE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
for _, s in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  redis.call('DEL', ARGV[1] .. s)
end
return redis.call('DEL', KEYS[1], KEYS[2])
",
    )
});

impl EventStore for RedisEventStore {
    fn append(&self, session: &str, stream: u64, seq: u64, message: Bytes) -> BoxFuture<()> {
        let max = self.event_bound();
        let message = if message.len() > max {
            let Some(stand_in) = too_large(&message, max) else {
                tracing::warn!(stream, seq, bytes = message.len(), max, "an SSE event too large to keep: not stored");
                return Box::pin(std::future::ready(()));
            };
            tracing::warn!(
                stream,
                seq,
                bytes = message.len(),
                max,
                "an SSE response too large to keep: an error kept instead"
            );
            stand_in
        } else {
            message
        };
        let keys = self.keys(session);
        let mut entry = Vec::with_capacity(8 + message.len());
        entry.extend_from_slice(&seq.to_be_bytes());
        entry.extend_from_slice(&message);
        let mut invocation = APPEND.key(&keys.meta);
        invocation.key(&keys.streams).key(format!("{}{stream}", keys.lists));
        invocation.arg(stream).arg(entry).arg(self.events_per_stream).arg(self.streams_per_session);
        invocation.arg(self.bytes_per_session).arg(millis(self.ttl)).arg(&keys.lists).arg(now_millis());
        let mut conn = self.redis.conn();
        let timeout = self.redis.config().timeout;
        Box::pin(async move {
            match bounded(timeout, invocation.invoke_async::<i64>(&mut conn)).await {
                Ok(_) => {}
                // The breaker is open (its opening was logged): not one warning per event.
                Err(error @ crate::Error::Unavailable { .. }) => {
                    tracing::debug!(%error, stream, seq, "an SSE event was not stored in Redis: it cannot be replayed");
                }
                Err(error) => {
                    tracing::warn!(%error, stream, seq, "an SSE event was not stored in Redis: it cannot be replayed");
                }
            }
        })
    }

    fn replay(&self, session: &str, stream: u64, after: u64) -> BoxFuture<Vec<StoredEvent>> {
        let list = format!("{}{stream}", self.keys(session).lists);
        let mut conn = self.redis.conn();
        let timeout = self.redis.config().timeout;
        Box::pin(async move {
            let mut command = redis::cmd("LRANGE");
            command.arg(&list).arg(0).arg(-1);
            match bounded(timeout, command.query_async::<Vec<Vec<u8>>>(&mut conn)).await {
                Ok(entries) => after_in_storage_order(entries, after),
                Err(error) => {
                    tracing::warn!(%error, stream, after, "SSE events could not be read from Redis: nothing replayed");
                    Vec::new()
                }
            }
        })
    }

    fn remove_session(&self, session: &str) -> BoxFuture<()> {
        let keys = self.keys(session);
        let mut invocation = REMOVE.key(&keys.meta);
        invocation.key(&keys.streams).arg(&keys.lists);
        let mut conn = self.redis.conn();
        let timeout = self.redis.config().timeout;
        Box::pin(async move {
            if let Err(error) = bounded(timeout, invocation.invoke_async::<i64>(&mut conn)).await {
                tracing::warn!(%error, "the SSE events of an ended session were not deleted from Redis (they expire)");
            }
        })
    }
}

/// What is kept of `message`, larger than `max` bytes: an error answering the same request if
/// it is a response, nothing otherwise.
fn too_large(message: &[u8], max: usize) -> Option<Bytes> {
    use mcp_jsonrpc::message::{Message, Parsed, Response, encode_error, parse};
    let Parsed::Single(Message::Response(Response { id: Some(id), .. })) = parse(message) else { return None };
    let detail = format!("the response ({} bytes) was too large to keep for resumption ({max} at most)", message.len());
    Some(encode_error(Some(&id), &mcp_jsonrpc::ErrorObject::internal_error(detail)))
}

/// The events stored after the one with seq `after`, or all of them if it is not there.
fn after_in_storage_order(entries: Vec<Vec<u8>>, after: u64) -> Vec<StoredEvent> {
    let events: Vec<StoredEvent> = entries
        .into_iter()
        .filter_map(|entry| {
            let (seq, message) = entry.split_first_chunk::<8>()?;
            Some((u64::from_be_bytes(*seq), Bytes::copy_from_slice(message)))
        })
        .collect();
    match events.iter().position(|(seq, _)| *seq == after) {
        Some(at) => events[at + 1..].to_vec(),
        None => events,
    }
}

/// The wall clock in ms since the Unix epoch (0 before it).
fn now_millis() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, millis)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seq: u64) -> Vec<u8> {
        let mut entry = seq.to_be_bytes().to_vec();
        entry.extend_from_slice(format!("m{seq}").as_bytes());
        entry
    }

    #[test]
    fn replays_after_the_seq_in_storage_order_or_everything() {
        let entries = || vec![entry(9), entry(3), entry(7), b"short".to_vec()];
        let seqs = |events: Vec<StoredEvent>| events.into_iter().map(|(s, _)| s).collect::<Vec<_>>();
        assert_eq!(
            seqs(after_in_storage_order(entries(), 3)),
            [7],
            "after 3 in storage order, a malformed entry skipped"
        );
        assert_eq!(seqs(after_in_storage_order(entries(), 9)), [3, 7]);
        assert_eq!(seqs(after_in_storage_order(entries(), 4)), [9, 3, 7], "not found: everything");
        assert_eq!(after_in_storage_order(entries(), 3)[0].1, Bytes::from_static(b"m7"));
    }
}
