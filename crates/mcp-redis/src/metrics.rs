//! The metrics of Redis calls, recorded through the `metrics` facade (a no-op until the
//! application installs a recorder: `mcp-transport-http`'s feature `metrics`):
//!
//! - `mcp_redis_duration_seconds` (histogram, `op`): each command or pipeline the connection
//!   sent, until its answer (or error, or the end of its timeout);
//! - `mcp_redis_failures_total` (counter, `op`, `kind`): those that failed, `timeout` (no answer
//!   within `RedisConfig::timeout`), `error`, or `shed` (refused unsent by the circuit breaker).
//!
//! `op` is the Redis command, lowercase (`evalsha` for a script, `pipeline` for several
//! commands sent at once), from the bounded set this crate sends, else `other`.

use std::sync::LazyLock;
use std::time::Instant;

use metrics::{Key, Label, Level, Metadata};
use redis::{Arg, Cmd};

/// The duration of each Redis call (histogram, seconds).
const DURATION: &str = "mcp_redis_duration_seconds";
/// The Redis calls that failed (counter).
const FAILURES: &str = "mcp_redis_failures_total";

/// The commands counted by name, then a pipeline's and any other command's `op`.
const OPS: [&str; 25] = [
    "evalsha", "eval", "script", "publish", "spublish", "get", "set", "del", "pexpire", "expire", "hgetall", "hget",
    "hset", "lrange", "ping", "exists", "zrange", "zadd", "zrem", "incr", "mget", "xadd", "xread", "pipeline", "other",
];

/// The `op` of a pipeline (an index in [`OPS`]).
pub(crate) const PIPELINE: usize = OPS.len() - 2;
/// The `op` of a command not counted by name.
const OTHER: usize = OPS.len() - 1;

static METADATA: Metadata<'static> = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// The duration histogram's key of each op, built once: a call allocates no labels.
static DURATION_KEYS: LazyLock<Vec<Key>> = LazyLock::new(|| {
    OPS.iter().map(|op| Key::from_parts(DURATION, vec![Label::from_static_parts("op", op)])).collect()
});

/// The `op` of `cmd` (an index in [`OPS`]).
pub(crate) fn op(cmd: &Cmd) -> usize {
    let Some(Arg::Simple(name)) = cmd.args_iter().next() else { return OTHER };
    OPS[..PIPELINE].iter().position(|op| op.as_bytes().eq_ignore_ascii_case(name)).unwrap_or(OTHER)
}

/// Records a call of `op` begun at `started`, and its failure if any (whose key is made then).
pub(crate) fn record(op: usize, started: Instant, failure: Option<&'static str>) {
    let seconds = started.elapsed().as_secs_f64();
    metrics::with_recorder(|r| r.register_histogram(&DURATION_KEYS[op], &METADATA).record(seconds));
    if let Some(kind) = failure {
        failed(op, kind);
    }
}

/// Counts a failed call of `op`: `timeout`, `error`, or `shed` (refused by the breaker).
pub(crate) fn failed(op: usize, kind: &'static str) {
    metrics::counter!(FAILURES, "op" => OPS[op], "kind" => kind).increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_are_bounded() {
        assert_eq!(OPS[op(&redis::cmd("PUBLISH"))], "publish");
        assert_eq!(OPS[op(&redis::cmd("EvalSha"))], "evalsha");
        assert_eq!(OPS[op(&redis::cmd("FLUSHALL"))], "other");
        assert_eq!(OPS[op(&redis::cmd("pipeline"))], "other");
    }
}
