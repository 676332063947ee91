//! The circuit breaker of a [`Redis`](crate::Redis) handle: when Redis hangs or cannot be
//! reached, commands fail at once instead of each waiting its timeout.
//!
//! Closed, every command goes to Redis. [`RedisConfig::breaker_threshold`](crate::RedisConfig)
//! consecutive failures (a timeout, a connection refused or dropped) open it: for
//! [`RedisConfig::breaker_open_for`](crate::RedisConfig), every command fails at once with
//! [`Error::Unavailable`](crate::Error::Unavailable), without being sent. Then it is half-open:
//! the next command is sent as a probe (the others still fail at once); its answer closes the
//! breaker, its failure opens it again for as long.
//!
//! An answer of Redis, an error reply included, counts as Redis being there.

use std::sync::Mutex;
use std::time::Duration;

use mcp_jsonrpc::sync::MutexExt as _;
use tokio::time::Instant;

/// The state of a handle's circuit breaker (see [`Redis::circuit`](crate::Redis::circuit)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Circuit {
    /// Commands go to Redis.
    Closed,
    /// Commands fail at once, for about `retry_after` more.
    Open {
        /// How long until the next command is sent as a probe.
        retry_after: Duration,
    },
    /// The next command is sent as a probe.
    HalfOpen,
    /// A probe is under way; other commands fail at once until it ends.
    Probing,
}

/// A circuit breaker (see the module docs).
#[derive(Debug)]
pub(crate) struct Breaker {
    threshold: u32,
    open_for: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Consecutive failures while closed.
    failures: u32,
    /// Open until then (`None`: closed).
    open_until: Option<Instant>,
    /// A probe is under way.
    probing: bool,
}

/// Leave to send one command; tell it how the command went ([`Permit::done`]). Dropped
/// without a word (the caller gave up), a probe lets the next command probe.
#[derive(Debug)]
pub(crate) struct Permit<'a> {
    breaker: &'a Breaker,
    probe: bool,
    done: bool,
}

impl Breaker {
    /// A breaker that opens after `threshold` consecutive failures (never if 0), for `open_for`.
    pub(crate) fn new(threshold: u32, open_for: Duration) -> Breaker {
        Breaker { threshold, open_for, state: Mutex::default() }
    }

    /// Leave to send a command, or how long until the next probe (`Err`: shed it).
    pub(crate) fn admit(&self) -> Result<Permit<'_>, Duration> {
        if self.threshold == 0 {
            return Ok(Permit { breaker: self, probe: false, done: false });
        }
        let mut state = self.state.lock_unpoisoned();
        let Some(until) = state.open_until else {
            return Ok(Permit { breaker: self, probe: false, done: false });
        };
        let now = Instant::now();
        if now < until {
            return Err(until - now);
        }
        if state.probing {
            return Err(Duration::ZERO);
        }
        state.probing = true;
        Ok(Permit { breaker: self, probe: true, done: false })
    }

    /// The state now.
    pub(crate) fn circuit(&self) -> Circuit {
        let state = self.state.lock_unpoisoned();
        match state.open_until {
            None => Circuit::Closed,
            Some(_) if state.probing => Circuit::Probing,
            Some(until) => match until.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => Circuit::Open { retry_after: left },
                _ => Circuit::HalfOpen,
            },
        }
    }
}

impl Permit<'_> {
    /// The command was answered (`true`), or failed to reach Redis (`false`).
    pub(crate) fn done(mut self, answered: bool) {
        self.done = true;
        let breaker = self.breaker;
        if breaker.threshold == 0 {
            return;
        }
        let mut state = breaker.state.lock_unpoisoned();
        if answered {
            if state.open_until.is_some() && !self.probe {
                // Sent before the breaker opened: the probe decides.
                return;
            }
            if state.open_until.take().is_some() {
                tracing::info!("Redis answers again: its circuit breaker closes");
                metrics::gauge!("mcp_redis_circuit_open").set(0.0);
            }
            state.failures = 0;
            state.probing = false;
            return;
        }
        if self.probe {
            state.probing = false;
            state.open_until = Some(Instant::now() + breaker.open_for);
            tracing::warn!(open_for = ?breaker.open_for, "Redis still fails: its circuit breaker opens again");
            return;
        }
        if state.open_until.is_some() {
            return;
        }
        state.failures += 1;
        if state.failures >= breaker.threshold {
            state.failures = 0;
            state.open_until = Some(Instant::now() + breaker.open_for);
            metrics::gauge!("mcp_redis_circuit_open").set(1.0);
            tracing::warn!(
                failures = breaker.threshold,
                open_for = ?breaker.open_for,
                "Redis fails: its circuit breaker opens (commands fail at once meanwhile)"
            );
        }
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if self.probe && !self.done {
            self.breaker.state.lock_unpoisoned().probing = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn opens_after_the_threshold_then_one_probe_decides() {
        let breaker = Breaker::new(3, Duration::from_secs(5));
        breaker.admit().unwrap().done(false);
        breaker.admit().unwrap().done(true);
        breaker.admit().unwrap().done(false);
        breaker.admit().unwrap().done(false);
        assert_eq!(breaker.circuit(), Circuit::Closed, "an answer resets the count");
        let late = breaker.admit().unwrap();
        breaker.admit().unwrap().done(false);
        assert_eq!(breaker.circuit(), Circuit::Open { retry_after: Duration::from_secs(5) });
        assert_eq!(breaker.admit().unwrap_err(), Duration::from_secs(5));
        late.done(true);
        assert!(matches!(breaker.circuit(), Circuit::Open { .. }), "an answer sent before does not close it");
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(breaker.circuit(), Circuit::HalfOpen);
        let probe = breaker.admit().unwrap();
        assert_eq!(breaker.circuit(), Circuit::Probing);
        assert!(breaker.admit().is_err(), "one probe at a time");
        drop(probe);
        assert_eq!(breaker.circuit(), Circuit::HalfOpen, "a probe given up lets another probe");
        breaker.admit().unwrap().done(false);
        assert_eq!(breaker.circuit(), Circuit::Open { retry_after: Duration::from_secs(5) }, "reopened");
        tokio::time::advance(Duration::from_secs(5)).await;
        breaker.admit().unwrap().done(true);
        assert_eq!(breaker.circuit(), Circuit::Closed);
        assert!(Breaker::new(0, Duration::from_secs(5)).admit().is_ok(), "0: never opens");
    }
}
