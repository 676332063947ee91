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
//! When Redis is down or slow, what needs it fails with a clear error after
//! [`RedisConfig::timeout`], and works again by itself once Redis is back; nothing else of the
//! instance stops.

mod bus;
mod event_store;
mod keys;
mod sessions;
mod tasks;

pub use bus::RedisBus;
pub use event_store::RedisEventStore;
pub use sessions::RedisSessions;
pub use tasks::RedisTaskStore;

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

/// An error of the shared state.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Redis did not answer, or refused the command.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// What Redis holds could not be read back.
    #[error("corrupt shared state: {0}")]
    Corrupt(String),
    /// [`Redis::connect`] was called outside a tokio runtime (its connection's task needs one).
    #[error("Redis::connect needs a tokio runtime: call it from within one")]
    NoRuntime,
}

/// How to reach Redis, and the bounds of what is kept there.
#[derive(Debug, Clone)]
pub struct RedisConfig {
    /// `redis://host:port/db` (or `rediss://` for TLS, `redis+unix:///path`).
    pub url: String,
    /// What every key starts with, so that several deployments share one Redis.
    pub prefix: String,
    /// How long a command may take before it fails (default 2 s).
    pub timeout: Duration,
}

impl RedisConfig {
    /// The defaults, for Redis at `url`.
    pub fn new(url: impl Into<String>) -> Self {
        RedisConfig { url: url.into(), prefix: "mcp".to_owned(), timeout: Duration::from_secs(2) }
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
}

/// A handle on the shared state in Redis; clones share one connection.
#[derive(Clone)]
pub struct Redis {
    client: redis::Client,
    conn: ConnectionManager,
    config: std::sync::Arc<RedisConfig>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Redis {
    /// Connects to Redis at `url` with the default settings (see [`RedisConfig`]), from within
    /// a tokio runtime ([`Error::NoRuntime`] otherwise). The connection is made when first
    /// used: an instance starts even while Redis is down.
    pub fn connect(url: &str) -> Result<Redis, Error> {
        Redis::connect_with(RedisConfig::new(url))
    }

    /// Connects with `config` (lazily, as [`connect`](Self::connect) does).
    pub fn connect_with(config: RedisConfig) -> Result<Redis, Error> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::NoRuntime);
        }
        let client = redis::Client::open(config.url.as_str())?;
        let manager = ConnectionManagerConfig::new()
            .set_response_timeout(Some(config.timeout))
            .set_connection_timeout(Some(config.timeout))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let conn = ConnectionManager::new_lazy_with_config(client.clone(), manager)?;
        Ok(Redis { client, conn, config: std::sync::Arc::new(config) })
    }

    /// The settings.
    pub fn config(&self) -> &RedisConfig {
        &self.config
    }

    /// The multiplexed connection (cheap to clone).
    pub(crate) fn conn(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// The client, for connections of their own (pub/sub).
    pub(crate) fn client(&self) -> &redis::Client {
        &self.client
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
