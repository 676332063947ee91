//! Reading an instance's inbox (`PREFIX:inbox:{TAG}`): a Redis Stream whose entries are
//! numbered one by one (`n`, from a counter beside it) and carry one message (`m`).
//!
//! A reader keeps the id of the last entry it read and asks for what follows (`XREAD BLOCK`, on
//! a connection of its own): what was added while its connection was down is read once it is
//! back, not lost. A stream keeps its newest entries only (`MAXLEN ~`): a reader that fell
//! further behind finds a hole in the numbering, and says how many it missed.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use mcp_transport_http::server::Delivery;
use redis::Value;
use tokio::sync::mpsc;

use crate::conn::Conn;
use crate::keys::bounded;
use crate::{Redis, RedisConfig};

/// The most entries one read takes.
const READ_COUNT: usize = 128;
/// How long one read waits for an entry.
const BLOCK: Duration = Duration::from_secs(5);
/// The longest wait between two attempts to read while Redis fails.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Adds message `ARGV[2]` to the inbox `KEYS[2]` (numbered by `KEYS[3]`, about `ARGV[1]`
/// entries kept) of the tag `KEYS[1]`: 1 if an instance holds the tag, 0 if none does now. A
/// new inbox lives as long as twice its tag's lease (renewed with it); one whose tag nobody
/// holds, twice `ARGV[3]` ms: its instance may take the tag back (Redis restarted empty and
/// lost the tag until its next renewal) and read it then; a new claimer empties it.
pub(crate) static SEND: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local lease = redis.call('PTTL', KEYS[1])
local held = 1
if lease < 0 then
  lease = tonumber(ARGV[3])
  held = 0
end
local n = redis.call('INCR', KEYS[3])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'n', n, 'm', ARGV[2])
if redis.call('PTTL', KEYS[2]) == -1 then
  redis.call('PEXPIRE', KEYS[2], 2 * lease)
  redis.call('PEXPIRE', KEYS[3], 2 * lease)
end
return held
",
    )
});

/// Reads the stream `key` from its first entry (an inbox, emptied when its tag was claimed)
/// into `tx`, until `tx` closes.
pub(crate) async fn read(redis: Redis, key: String, tx: mpsc::Sender<Delivery>) {
    let timeout = redis.config().timeout;
    // A connection of its own (a blocked read holds it), which waits for a blocked read's end.
    let config = RedisConfig { timeout: BLOCK + timeout, ..redis.config().clone() };
    let mut conn = match Conn::new(&config) {
        Ok(conn) => conn,
        Err(error) => {
            tracing::error!(%error, key, "fleet bus: cannot read the stream");
            return;
        }
    };
    let mut backoff = Duration::from_millis(50);
    let (mut last, mut last_n) = ("0-0".to_owned(), 0);
    let mut failing = false;
    loop {
        let mut xread = redis::cmd("XREAD");
        xread
            .arg("COUNT")
            .arg(READ_COUNT)
            .arg("BLOCK")
            .arg(BLOCK.as_millis() as u64)
            .arg("STREAMS")
            .arg(&key)
            .arg(&last);
        let reply = tokio::select! {
            () = tx.closed() => return,
            reply = bounded(BLOCK + timeout, xread.query_async::<Value>(&mut conn)) => reply,
        };
        let entries = match reply {
            Ok(reply) => {
                if std::mem::take(&mut failing) {
                    tracing::info!(key, "fleet bus: reading again");
                }
                backoff = Duration::from_millis(50);
                entries(reply)
            }
            Err(error) => {
                // What is added meanwhile is read once Redis answers again.
                if !std::mem::replace(&mut failing, true) {
                    tracing::warn!(%error, key, "fleet bus: cannot read the stream: retrying");
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        for (id, n, message) in entries {
            let missed = match n {
                n if n == last_n + 1 => 0,
                n if n > last_n => n - last_n - 1,
                // Numbered from 1 again: the stream was lost (Redis restarted empty, or its
                // keys expired), with whatever it held.
                n => n.saturating_sub(1).max(1),
            };
            last_n = n;
            metrics::histogram!("mcp_fleet_bus_lag_seconds").record(lag(&id));
            last = id;
            // The message first, then what was lost before it: the endpoint's resync fails the
            // calls still waiting, and this message may be the answer one of them waits for
            // (the first after Redis restarted empty, numbered 1 again).
            if let Some(message) = message
                && tx.send(Delivery::Message(message)).await.is_err()
            {
                return;
            }
            if missed > 0 {
                tracing::warn!(key, missed, "fleet bus: messages lost (trimmed before they were read)");
                if tx.send(Delivery::Missed(missed)).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The seconds since entry `id` was added (its milliseconds part is Redis's clock then).
fn lag(id: &str) -> f64 {
    let added = id.split_once('-').and_then(|(ms, _)| ms.parse::<u64>().ok()).unwrap_or(0);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64;
    now.saturating_sub(added) as f64 / 1000.0
}

/// The entries of an `XREAD` reply of one stream: id, number, message (`None` if it has none);
/// entries without a number are skipped.
fn entries(reply: Value) -> Vec<(String, u64, Option<Bytes>)> {
    let streams = match reply {
        Value::Array(streams) => streams,
        Value::Map(streams) => streams.into_iter().map(|(k, v)| Value::Array(vec![k, v])).collect(),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    for stream in streams {
        let Value::Array(mut parts) = stream else { continue };
        let Some(Value::Array(items)) = parts.pop() else { continue };
        for item in items {
            let Value::Array(item) = item else { continue };
            let [Value::BulkString(id), Value::Array(fields)] = <[Value; 2]>::try_from(item).unwrap_or_default() else {
                continue;
            };
            let (mut n, mut message) = (None, None);
            let mut fields = fields.into_iter();
            while let (Some(Value::BulkString(name)), Some(Value::BulkString(value))) = (fields.next(), fields.next()) {
                match &name[..] {
                    b"n" => n = std::str::from_utf8(&value).ok().and_then(|v| v.parse::<u64>().ok()),
                    b"m" => message = Some(Bytes::from(value)),
                    _ => {}
                }
            }
            if let (Ok(id), Some(n)) = (String::from_utf8(id), n) {
                out.push((id, n, message));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_xread_reply_gives_its_entries() {
        let bulk = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let entry = |id: &str, n: &str, m: &str| {
            Value::Array(vec![bulk(id), Value::Array(vec![bulk("n"), bulk(n), bulk("m"), bulk(m)])])
        };
        let reply = Value::Array(vec![Value::Array(vec![
            bulk("mcp:inbox:{1}"),
            Value::Array(vec![entry("5-0", "1", "a"), entry("6-1", "x", "b"), entry("7-0", "3", "c"), Value::Nil]),
        ])]);
        let got = entries(reply);
        assert_eq!(got.len(), 2, "the entry without a number skipped");
        assert_eq!((got[0].0.as_str(), got[0].1, got[0].2.as_deref()), ("5-0", 1, Some(&b"a"[..])));
        assert_eq!((got[1].0.as_str(), got[1].1), ("7-0", 3));
        assert!(entries(Value::Nil).is_empty());
        assert!(lag("0-0") > 1.0 && lag("99999999999999-0") == 0.0);
    }
}
