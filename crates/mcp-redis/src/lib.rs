//! The state a fleet of MCP server instances shares, on Redis, so that any instance serves any
//! client behind a round-robin load balancer.
//!
//! A [`Redis`] handle (one multiplexed connection that reconnects by itself) gives the shared
//! version of each piece of state an `mcp-server` instance otherwise keeps in memory:
//!
//! | piece | type | replaces |
//! |---|---|---|
//! | SSE events kept for resumption (`Last-Event-ID` on any instance) | [`RedisEventStore`] ([`Redis::event_store`]) | `mcp_transport_http::server::InMemoryEventStore` |
//! | change events of `subscriptions/listen` and list-changed notifications, heard by every instance | [`RedisBus`] ([`Redis::subscription_bus`]) | `mcp_server::InMemoryBus` |
//! | the keys sealing `requestState` (2026-07-28), the same on every instance, rotated | [`Redis::request_state_keys`] | a random key per process |
//! | sessions of the session revisions, and messages between instances | [`Redis::sessions`] ([`RedisSessions`]) | sessions held by one process |
//! | tasks (2025-11-25 and the 2026-07-28 extension) | [`RedisTaskStore`] ([`Redis::task_store`]) | `mcp_server::tasks::MemoryTaskStore` |
//!
//! Every key lives under a prefix (`mcp:` unless set) and expires.
//!
//! # Deployments
//!
//! [`RedisConfig`] names one of three [`Deployment`]s, each tested with every store above
//! against real local servers (`tests/deployments.rs`):
//!
//! - one server: `redis://`, or `rediss://` for TLS (rustls; the system's trust store, or the
//!   CAs given with [`RedisConfig::tls_ca_pem`]);
//! - the primary that Sentinel names ([`RedisConfig::sentinel`]): a command that meets a former
//!   primary (`READONLY`) or none asks the sentinels again and is retried on the new primary,
//!   within [`RedisConfig::timeout`];
//! - a Redis Cluster ([`RedisConfig::cluster`]): what one script touches shares a hash tag (a
//!   session's keys `{SESSION}`, the task store's `{tasks}`), so it sits in one slot.
//!
//! The change bus is plain pub/sub on a RESP3 connection of its own that redis-rs reconnects
//! and resubscribes by itself; the fleet's messages between instances are Redis Streams, read
//! from where each reader was (see [`RedisSessions`]). redis-rs is built with the features
//! `tokio-rustls-comp`, `sentinel`, `cluster-async`, `connection-manager` and `script` only.
//!
//! When Redis is down or slow, what needs it fails with a clear error after
//! [`RedisConfig::timeout`], and works again by itself once Redis is back; nothing else of the
//! instance stops. After a few such failures in a row, the handle's circuit breaker opens and
//! its commands fail at once ([`Error::Unavailable`]) until a probe finds Redis answering
//! again ([`Redis::circuit`]); [`RedisSessions`] tells the transport's `/readyz` and new
//! sessions about it.

mod breaker;
mod bus;
mod conn;
mod event_store;
mod inbox;
mod keys;
mod live;
mod metrics;
mod pubsub;
mod sessions;
mod tasks;

pub use breaker::Circuit;
pub use bus::RedisBus;
pub use event_store::RedisEventStore;
pub use sessions::{DEFAULT_INBOX_BOUND, RedisSessions};
pub use tasks::RedisTaskStore;

use std::time::Duration;

pub(crate) use conn::Conn;

/// An error of the shared state.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Redis did not answer, or refused the command.
    #[error("redis: {0}")]
    Redis(#[source] redis::RedisError),
    /// Not sent: the handle's circuit breaker is open (Redis failed or hung on the last
    /// [`RedisConfig::breaker_threshold`] commands), for about `retry_after` more.
    #[error("redis unavailable (its circuit breaker is open); try again in {retry_after:?}")]
    Unavailable {
        /// How long until the breaker lets a probe through (zero: a probe is under way).
        retry_after: Duration,
    },
    /// What Redis holds could not be read back.
    #[error("corrupt shared state: {0}")]
    Corrupt(String),
    /// [`Redis::connect`] was called outside a tokio runtime (its connection's task needs one).
    #[error("Redis::connect needs a tokio runtime: call it from within one")]
    NoRuntime,
}

impl From<redis::RedisError> for Error {
    fn from(error: redis::RedisError) -> Self {
        if let Some(retry_after) = conn::shed_for(&error) {
            return Error::Unavailable { retry_after };
        }
        Error::Redis(error)
    }
}

/// Which Redis deployment to reach.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Deployment {
    /// One server (`redis://host:port/db`, `rediss://` for TLS, `redis+unix:///path`).
    Single(String),
    /// The primary that Sentinel names: the URLs of the sentinels (`redis://host:port`) and the
    /// name of the monitored service (`sentinel monitor NAME ...`). Each command goes to the
    /// primary the sentinels name; after a failover, a command refused by the former primary
    /// (`READONLY`, or a connection refused or dropped) asks them again and is tried again on the
    /// new one, within [`RedisConfig::timeout`].
    Sentinel {
        /// `redis://host:port` of each sentinel (one is enough; all are tried in turn).
        sentinels: Vec<String>,
        /// The service's name, as the sentinels monitor it.
        service: String,
    },
    /// A Redis Cluster: the URLs of some of its nodes (`redis://host:port`; the others are found
    /// from them). Commands go to the node that serves their key's slot, and follow the slots
    /// when they move (`MOVED`, `ASK`) or a primary fails over.
    Cluster(Vec<String>),
}

/// How to reach Redis, and the bounds of what is kept there.
#[derive(Clone)]
pub struct RedisConfig {
    /// Which deployment: one server, Sentinel or Cluster.
    pub deployment: Deployment,
    /// What every key starts with, so that several deployments share one Redis.
    pub prefix: String,
    /// How long a command may take before it fails (default 2 s). Under Sentinel, make it longer
    /// than a failover takes, so that a command waits for the new primary instead of failing.
    pub timeout: Duration,
    /// The certificates (PEM) of the authorities trusted for `rediss://` connections, instead of
    /// the system's (`None`: the system's trust store).
    pub tls_ca: Option<Vec<u8>>,
    /// How many consecutive failures (timeouts, connections refused or dropped) open the
    /// handle's circuit breaker (default 5; 0: never). See [`Redis::circuit`].
    pub breaker_threshold: u32,
    /// How long the circuit breaker stays open before a probe (default 5 s).
    pub breaker_open_for: Duration,
}

impl std::fmt::Debug for RedisConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisConfig")
            .field("deployment", &self.deployment)
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .field("tls_ca", &self.tls_ca.as_ref().map(|pem| format!("{} bytes of PEM", pem.len())))
            .field("breaker_threshold", &self.breaker_threshold)
            .field("breaker_open_for", &self.breaker_open_for)
            .finish()
    }
}

impl RedisConfig {
    /// The defaults, for one Redis server at `url` (`redis://`, `rediss://` for TLS,
    /// `redis+unix://`).
    pub fn new(url: impl Into<String>) -> Self {
        RedisConfig::of(Deployment::Single(url.into()))
    }

    /// The defaults, for the primary of `service` that the `sentinels` (their `redis://` URLs)
    /// name (see [`Deployment::Sentinel`]).
    pub fn sentinel(sentinels: impl IntoIterator<Item = impl Into<String>>, service: impl Into<String>) -> Self {
        let sentinels = sentinels.into_iter().map(Into::into).collect();
        RedisConfig::of(Deployment::Sentinel { sentinels, service: service.into() })
    }

    /// The defaults, for the Redis Cluster of which `nodes` (their `redis://` URLs) are some
    /// nodes (see [`Deployment::Cluster`]).
    pub fn cluster(nodes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        RedisConfig::of(Deployment::Cluster(nodes.into_iter().map(Into::into).collect()))
    }

    fn of(deployment: Deployment) -> Self {
        RedisConfig {
            deployment,
            prefix: "mcp".to_owned(),
            timeout: Duration::from_secs(2),
            tls_ca: None,
            breaker_threshold: 5,
            breaker_open_for: Duration::from_secs(5),
        }
    }

    /// Sets the key prefix (default `mcp`).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Sets how long a command may take (default 2 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the circuit breaker: `threshold` consecutive failures (0: never) open it for
    /// `open_for` (defaults 5 and 5 s). See [`Redis::circuit`].
    pub fn circuit_breaker(mut self, threshold: u32, open_for: Duration) -> Self {
        self.breaker_threshold = threshold;
        self.breaker_open_for = open_for;
        self
    }

    /// Trusts the certificate authorities in `pem` (one or more PEM certificates: a private CA,
    /// a cloud provider's) for `rediss://` connections, instead of the system's trust store.
    /// The server's certificate must name the host of the URL.
    pub fn tls_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls_ca = Some(pem.into());
        self
    }
}

/// A handle on the shared state in Redis; clones share one connection.
#[derive(Clone)]
pub struct Redis {
    conn: Conn,
    config: std::sync::Arc<RedisConfig>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Redis {
    /// Connects to one Redis server at `url` with the default settings (see [`RedisConfig`]),
    /// from within a tokio runtime ([`Error::NoRuntime`] otherwise). The connection is made
    /// when first used: an instance starts even while Redis is down.
    pub fn connect(url: &str) -> Result<Redis, Error> {
        Redis::connect_with(RedisConfig::new(url))
    }

    /// Connects with `config` (lazily, as [`connect`](Self::connect) does): one server,
    /// Sentinel or Cluster, and with TLS for `rediss://` URLs.
    pub fn connect_with(config: RedisConfig) -> Result<Redis, Error> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::NoRuntime);
        }
        let conn = Conn::new(&config)?;
        Ok(Redis { conn, config: std::sync::Arc::new(config) })
    }

    /// The settings.
    pub fn config(&self) -> &RedisConfig {
        &self.config
    }

    /// The state of the handle's circuit breaker (its clones share it), read without asking
    /// Redis.
    ///
    /// Each command is bounded by [`RedisConfig::timeout`]. After
    /// [`RedisConfig::breaker_threshold`] consecutive failures to reach Redis (timeouts,
    /// connections refused or dropped; an error reply is an answer), the breaker opens: for
    /// [`RedisConfig::breaker_open_for`], every command of the handle fails at once with
    /// [`Error::Unavailable`], without being sent, rather than each waiting its timeout. Then
    /// the next command is sent as a probe (the others still fail at once until it ends): its
    /// answer closes the breaker, its failure opens it again. Redis's subscriptions (the bus,
    /// the fleet channel) have connections of their own, outside the breaker.
    pub fn circuit(&self) -> Circuit {
        self.conn.guard().breaker.circuit()
    }

    /// Whether the handle sends commands now: `Err(retry_after)` while its circuit breaker is
    /// open (about `retry_after` left) or a probe is under way; `Ok` when closed or half-open
    /// (the next command probes). No round trip to Redis.
    pub fn readiness(&self) -> Result<(), Duration> {
        match self.circuit() {
            Circuit::Open { retry_after } => Err(retry_after),
            Circuit::Probing => Err(Duration::ZERO),
            _ => Ok(()),
        }
    }

    /// The multiplexed connection (cheap to clone).
    pub(crate) fn conn(&self) -> Conn {
        self.conn.clone()
    }

    /// The key `prefix:part:part...`.
    pub(crate) fn key(&self, parts: &[&str]) -> String {
        let mut key = self.config.prefix.clone();
        for part in parts {
            key.push(':');
            key.push_str(part);
        }
        key
    }
}
