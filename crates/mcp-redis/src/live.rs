//! The fleet-wide bound on sessions of [`RedisSessions::max_sessions`](crate::RedisSessions::max_sessions):
//! `PREFIX:sessions:live`, a sorted set of the live sessions' ids scored by when each expires
//! (Redis's clock, ms), expiring itself with its last entry.
//!
//! Its own key, apart from the records (`PREFIX:session:{ID}`, each in its session's cluster
//! slot): a script may touch only keys of one slot, so admission is a script of its own, run
//! before the record is made. It is atomic (prune, count, add), so the fleet never admits more
//! than the bound; what it leaves: an admitted session whose record is never made holds its
//! place until its ttl passes, and an entry is refreshed by a command sent beside the record's
//! (not in one script), so it may outlive the record by the time between the two.

use std::sync::LazyLock;

/// Prunes the entries of `KEYS[1]` whose time passed; then, unless `ARGV[1]` is there or
/// `ARGV[3]` entries are, adds it expiring `ARGV[2]` ms from now, and makes the set expire
/// with its last entry: 1 if it is there, 0 if refused.
pub(crate) static ADMIT: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
redis.call('PEXPIREAT', KEYS[1], redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2])
return 1
",
    )
});

/// Makes entry `ARGV[1]` of `KEYS[1]`, if there, expire `ARGV[2]` ms from now (and the set
/// with its last entry).
pub(crate) static REFRESH: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if redis.call('ZADD', KEYS[1], 'XX', 'CH', string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1]) == 1 then
  redis.call('PEXPIREAT', KEYS[1], redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2])
end
return 1
",
    )
});
