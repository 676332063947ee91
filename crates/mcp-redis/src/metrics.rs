//! The metrics of Redis calls, recorded through the `metrics` facade (a no-op until the
//! application installs a recorder: `mcp-transport-http`'s feature `metrics`):
//!
//! - `mcp_redis_duration_seconds` (histogram, `op`): each command or pipeline the connection
//!   ran, until its answer (or error);
//! - `mcp_redis_failures_total` (counter, `op`, `kind`): those that failed, `timeout` (no answer
//!   in time, or given up by its caller) or `error`.
//!
//! `op` is the Redis command, lowercase (`evalsha` for a script, `pipeline` for several
//! commands sent at once), from the bounded set this crate sends, else `other`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use std::sync::LazyLock;

use metrics::{Key, Label, Level, Metadata};
use redis::{Arg, Cmd, RedisResult};

/// The duration of each Redis call (histogram, seconds).
const DURATION: &str = "mcp_redis_duration_seconds";
/// The Redis calls that failed (counter).
const FAILURES: &str = "mcp_redis_failures_total";

/// The commands counted by name, then a pipeline's and any other command's `op`.
const OPS: [&str; 18] = [
    "evalsha", "eval", "script", "publish", "spublish", "get", "set", "del", "pexpire", "expire", "hgetall", "hget",
    "hset", "lrange", "ping", "exists", "pipeline", "other",
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

pin_project_lite::pin_project! {
    /// A Redis call, measured: its duration and failure (if any) recorded when it ends; given
    /// up before (dropped), a timeout.
    pub(crate) struct Timed<F> {
        #[pin]
        call: F,
        op: usize,
        started: Instant,
        done: bool,
    }

    impl<F> PinnedDrop for Timed<F> {
        fn drop(this: Pin<&mut Self>) {
            if !this.done {
                record(this.op, this.started, Some("timeout"));
            }
        }
    }
}

impl<F> Timed<F> {
    /// `call`, a call of `op` (see [`op`]), measured from now.
    pub(crate) fn new(op: usize, call: F) -> Self {
        Timed { call, op, started: Instant::now(), done: false }
    }
}

impl<T, F: Future<Output = RedisResult<T>>> Future for Timed<F> {
    type Output = RedisResult<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let result = ready!(this.call.poll(cx));
        *this.done = true;
        let failure = result.as_ref().err().map(|e| if e.is_timeout() { "timeout" } else { "error" });
        record(*this.op, *this.started, failure);
        Poll::Ready(result)
    }
}

/// Records a call of `op` begun at `started`, and its failure if any (whose key is made then).
fn record(op: usize, started: Instant, failure: Option<&'static str>) {
    let seconds = started.elapsed().as_secs_f64();
    metrics::with_recorder(|r| r.register_histogram(&DURATION_KEYS[op], &METADATA).record(seconds));
    if let Some(kind) = failure {
        metrics::counter!(FAILURES, "op" => OPS[op], "kind" => kind).increment(1);
    }
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
