//! The keys that sign `requestState` (2026-07-28), shared by every instance of a fleet so that a
//! state one instance issued is accepted by another, rotated in Redis.
//!
//! Key: `prefix:request-state-keys` (sorted set: the 32-byte keys scored by their creation
//! time in ms, Redis's clock), expiring 2×rotation after the newest key was made.

use std::future::Future;
use std::time::Duration;

use crate::{Error, Redis};

/// The most keys kept, whatever the rotation.
const MAX_KEYS: usize = 8;

/// Adds `ARGV[2]` if there is no key or the newest is `ARGV[1]` ms old or more, prunes the keys
/// 2×`ARGV[1]` ms old or more (and all but the newest `ARGV[3]`), and returns them newest
/// first. One script, so instances that call it together get the same keys.
static ROTATE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local rotation, keep = tonumber(ARGV[1]), tonumber(ARGV[3])
local newest = redis.call('ZRANGE', KEYS[1], 0, 0, 'REV', 'WITHSCORES')
if #newest == 0 or now - tonumber(newest[2]) >= rotation then
  redis.call('ZADD', KEYS[1], now, ARGV[2])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - 2 * rotation + 1))
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -keep - 1)
local made = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'REV', 'WITHSCORES')[2])
redis.call('PEXPIRE', KEYS[1], math.max(made + 2 * rotation - now, 1))
return redis.call('ZRANGE', KEYS[1], 0, -1, 'REV')
",
    )
});

impl Redis {
    /// The keys that sign and check `requestState`, newest first, for
    /// [`ServerBuilder::request_state_keys`](mcp_server::ServerBuilder::request_state_keys):
    /// the same for every instance sharing this Redis (the first is made once, even by
    /// instances starting together). When the newest is `rotation` old (at least 1 s), a new
    /// one is made; the previous ones stay until they are 2×`rotation` old, so a state signed
    /// just before a rotation still checks. 32 random bytes each, at most 8.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), mcp_redis::Error> {
    /// let redis = mcp_redis::Redis::connect("redis://127.0.0.1/")?;
    /// let keys = redis.request_state_keys(std::time::Duration::from_secs(24 * 3600)).await?;
    /// let builder = mcp_server::Server::builder("example", "1.0").request_state_keys(keys);
    /// # let _ = builder;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn request_state_keys(&self, rotation: Duration) -> Result<Vec<Vec<u8>>, Error> {
        let rotation = u64::try_from(rotation.max(Duration::from_secs(1)).as_millis()).unwrap_or(u64::MAX / 4);
        let mut candidate = vec![0u8; 32];
        getrandom::fill(&mut candidate).map_err(|e| Error::Corrupt(format!("no random bytes for a key: {e}")))?;
        let mut invocation = ROTATE.key(self.key(&["request-state-keys"]));
        invocation.arg(rotation).arg(candidate).arg(MAX_KEYS);
        let mut conn = self.conn();
        let keys: Vec<Vec<u8>> = bounded(self.config().timeout, invocation.invoke_async(&mut conn)).await?;
        if keys.is_empty() || keys.iter().any(|k| k.len() != 32) {
            return Err(Error::Corrupt("the requestState keys in Redis are not 32-byte keys".to_owned()));
        }
        Ok(keys)
    }
}

/// `operation`, failing with a timeout error after twice `timeout`: each command of it is
/// bounded by `timeout` already (the connection's guard, which also counts its failures in the
/// circuit breaker); this bounds a script's two (`EVALSHA`, then `EVAL` when Redis does not
/// know it yet) and a command waiting for a reconnection.
pub(crate) async fn bounded<T>(
    timeout: Duration,
    operation: impl Future<Output = redis::RedisResult<T>>,
) -> Result<T, Error> {
    match tokio::time::timeout(timeout.saturating_mul(2), operation).await {
        Ok(result) => Ok(result?),
        Err(_) => Err(crate::conn::timed_out(timeout.saturating_mul(2)).into()),
    }
}
