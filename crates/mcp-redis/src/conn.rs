//! The connection of a [`Redis`](crate::Redis) handle to each kind of deployment: one server
//! (redis-rs's `ConnectionManager`), a Redis Cluster (redis-rs's cluster connection), or the
//! primary that Sentinel names ([`SentinelPrimary`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_jsonrpc::sync::MutexExt as _;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::sentinel::{SentinelClient, SentinelNodeConnectionInfo, SentinelServerType};
use redis::{
    Client, Cmd, ConnectionAddr, ErrorKind, IntoConnectionInfo as _, Pipeline, ProtocolVersion, RedisError,
    RedisFuture, RedisResult, ServerErrorKind, Value,
};

use crate::breaker::Breaker;
use crate::metrics;
use crate::{Deployment, Error, RedisConfig};

/// A multiplexed connection to the deployment (cheap to clone), each command bounded by
/// [`RedisConfig::timeout`], measured, and refused at once while the handle's circuit breaker
/// is open (see the `breaker` module).
#[derive(Clone)]
pub(crate) struct Conn {
    backend: Backend,
    guard: Arc<Guard>,
}

#[derive(Clone)]
enum Backend {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
    Sentinel(Arc<SentinelPrimary>),
}

/// What every command of a handle passes: its breaker and its timeout.
pub(crate) struct Guard {
    pub(crate) breaker: Breaker,
    timeout: Duration,
}

impl Conn {
    /// The connection `config` names, made lazily (when first used).
    pub(crate) fn new(config: &RedisConfig) -> Result<Conn, Error> {
        install_crypto_provider();
        let backend = match &config.deployment {
            Deployment::Single(url) => {
                let client = client(url, config, ProtocolVersion::RESP2)?;
                Backend::Single(ConnectionManager::new_lazy_with_config(client, manager_config(config))?)
            }
            Deployment::Cluster(nodes) => Backend::Cluster(cluster(nodes, config, ProtocolVersion::RESP2, None)?),
            Deployment::Sentinel { sentinels, service } => {
                Backend::Sentinel(Arc::new(SentinelPrimary::new(sentinels, service, config, ProtocolVersion::RESP2)?))
            }
        };
        let breaker = Breaker::new(config.breaker_threshold, config.breaker_open_for);
        Ok(Conn { backend, guard: Arc::new(Guard { breaker, timeout: config.timeout }) })
    }

    /// The breaker and timeout of this connection (and its clones).
    pub(crate) fn guard(&self) -> &Arc<Guard> {
        &self.guard
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let Conn { backend, guard } = self;
        let request = match backend {
            Backend::Single(conn) => conn.req_packed_command(cmd),
            Backend::Cluster(conn) => conn.req_packed_command(cmd),
            Backend::Sentinel(primary) => Box::pin(primary.command(cmd)),
        };
        Box::pin(guard.run(metrics::op(cmd), request))
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        let Conn { backend, guard } = self;
        let request = match backend {
            Backend::Single(conn) => conn.req_packed_commands(pipeline, offset, count),
            Backend::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
            Backend::Sentinel(primary) => Box::pin(primary.commands(pipeline, offset, count)),
        };
        Box::pin(guard.run(metrics::PIPELINE, request))
    }

    fn get_db(&self) -> i64 {
        match &self.backend {
            Backend::Single(conn) => conn.get_db(),
            Backend::Cluster(conn) => conn.get_db(),
            Backend::Sentinel(_) => 0,
        }
    }
}

impl Guard {
    /// Sends `request` (a command `op`) if the breaker lets it, within the timeout; records its
    /// duration (`mcp_redis_duration_seconds`), its failure (`mcp_redis_failures_total`) and
    /// its outcome in the breaker.
    async fn run<T>(&self, op: usize, request: RedisFuture<'_, T>) -> RedisResult<T> {
        let permit = match self.breaker.admit() {
            Ok(permit) => permit,
            Err(retry_after) => {
                metrics::failed(op, "shed");
                return Err(shed(retry_after));
            }
        };
        let started = Instant::now();
        let result = match tokio::time::timeout(self.timeout, request).await {
            Ok(result) => result,
            Err(_) => Err(timed_out(self.timeout)),
        };
        metrics::record(op, started, result.as_ref().err().map(|e| if e.is_timeout() { "timeout" } else { "error" }));
        match &result {
            Ok(_) => permit.done(true),
            Err(error) => permit.done(!unreachable(error)),
        }
        result
    }
}

/// How the detail of the error of a command the breaker refused starts (then the
/// milliseconds until a probe).
const SHED: &str = "mcp-redis: the circuit breaker is open; a probe in ms: ";

/// The error of a command the breaker refused (not sent), `retry_after` before a probe.
fn shed(retry_after: Duration) -> RedisError {
    RedisError::from((ErrorKind::Client, "Redis unavailable", format!("{SHED}{}", retry_after.as_millis())))
}

/// How long until a probe, if `error` is that of a command the breaker refused.
pub(crate) fn shed_for(error: &RedisError) -> Option<Duration> {
    if error.kind() != ErrorKind::Client {
        return None;
    }
    let millis = error.detail()?.strip_prefix(SHED)?.parse().ok()?;
    Some(Duration::from_millis(millis))
}

/// The error of a command not answered within `timeout`.
pub(crate) fn timed_out(timeout: Duration) -> RedisError {
    RedisError::from(std::io::Error::new(std::io::ErrorKind::TimedOut, format!("no answer within {timeout:?}")))
}

/// Whether `error` says Redis was not reached or did not answer (not an error reply).
fn unreachable(error: &RedisError) -> bool {
    error.is_io_error()
        || error.is_connection_dropped()
        || matches!(
            error.kind(),
            ErrorKind::ClusterConnectionNotFound
                | ErrorKind::MasterNameNotFoundBySentinel
                | ErrorKind::EmptySentinelList
                | ErrorKind::NoValidReplicasFoundBySentinel
                | ErrorKind::Server(ServerErrorKind::MasterDown | ServerErrorKind::ClusterDown)
        )
}

/// rustls needs a crypto provider chosen once per process: ring (unless the application
/// installed another first).
fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// A client of the server at `url`, speaking `protocol`, trusting [`RedisConfig::tls_ca`] for
/// `rediss://`.
pub(crate) fn client(url: &str, config: &RedisConfig, protocol: ProtocolVersion) -> RedisResult<Client> {
    let info = url.into_connection_info()?;
    let settings = info.redis_settings().clone().set_protocol(protocol);
    let info = info.set_redis_settings(settings);
    match (&config.tls_ca, info.addr()) {
        (Some(pem), ConnectionAddr::TcpTls { .. }) => {
            Client::build_with_tls(info, redis::TlsCertificates { client_tls: None, root_cert: Some(pem.clone()) })
        }
        _ => Client::open(info),
    }
}

/// How a `ConnectionManager` of `config` reconnects and waits.
pub(crate) fn manager_config(config: &RedisConfig) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_response_timeout(Some(config.timeout))
        .set_connection_timeout(Some(config.timeout))
        .set_number_of_retries(2)
        .set_max_delay(Duration::from_millis(500))
}

/// A connection to the cluster of which `nodes` are nodes, connecting in the background;
/// `push` hears the pushes of every node (RESP3).
pub(crate) fn cluster(
    nodes: &[String],
    config: &RedisConfig,
    protocol: ProtocolVersion,
    push: Option<Box<dyn Fn(redis::PushInfo) + Send + Sync>>,
) -> RedisResult<ClusterConnection> {
    let mut builder =
        redis::cluster::ClusterClientBuilder::new(nodes.iter().map(String::as_str)).use_protocol(protocol);
    if let Some(pem) = &config.tls_ca {
        builder = builder.certs(redis::TlsCertificates { client_tls: None, root_cert: Some(pem.clone()) });
    }
    let client = builder.build()?;
    let mut cluster_config = redis::cluster::ClusterConfig::new()
        .set_connection_timeout(config.timeout)
        .set_response_timeout(config.timeout);
    if let Some(push) = push {
        cluster_config = cluster_config.set_push_sender(move |info| {
            push(info);
            Ok::<(), std::convert::Infallible>(())
        });
    }
    Ok(client.get_pending_async_connection_with_config(cluster_config))
}

/// The primary that Sentinel names: a `ConnectionManager` on it, made anew (the sentinels asked
/// again) when a command meets a former primary (`READONLY`) or none (refused, dropped).
pub(crate) struct SentinelPrimary {
    sentinel: tokio::sync::Mutex<SentinelClient>,
    /// The connection to the primary last named, with its generation.
    current: std::sync::Mutex<Option<(u64, ConnectionManager)>>,
    generation: std::sync::atomic::AtomicU64,
    manager: ConnectionManagerConfig,
    timeout: Duration,
}

impl SentinelPrimary {
    pub(crate) fn new(
        sentinels: &[String],
        service: &str,
        config: &RedisConfig,
        protocol: ProtocolVersion,
    ) -> RedisResult<SentinelPrimary> {
        let settings = redis::RedisConnectionInfo::default().set_protocol(protocol);
        let node = SentinelNodeConnectionInfo::default().set_redis_connection_info(settings);
        let sentinel = SentinelClient::build(sentinels.to_vec(), service, Some(node), SentinelServerType::Master)?;
        Ok(SentinelPrimary {
            sentinel: tokio::sync::Mutex::new(sentinel),
            current: std::sync::Mutex::new(None),
            generation: std::sync::atomic::AtomicU64::new(0),
            manager: manager_config(config),
            timeout: config.timeout,
        })
    }

    /// A client of the primary the sentinels name now (they check its role).
    pub(crate) async fn primary(&self) -> RedisResult<Client> {
        self.sentinel.lock().await.async_get_client().await
    }

    /// The connection to the primary, asking the sentinels first if there is none.
    async fn connection(&self) -> RedisResult<(u64, ConnectionManager)> {
        if let Some(current) = self.current.lock_unpoisoned().clone() {
            return Ok(current);
        }
        let mut sentinel = self.sentinel.lock().await;
        if let Some(current) = self.current.lock_unpoisoned().clone() {
            return Ok(current);
        }
        let client = sentinel.async_get_client().await?;
        tracing::info!(primary = ?client.get_connection_info().addr(), "Redis Sentinel: connecting to the primary");
        let conn = ConnectionManager::new_lazy_with_config(client, self.manager.clone())?;
        let generation = self.generation.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        *self.current.lock_unpoisoned() = Some((generation, conn.clone()));
        Ok((generation, conn))
    }

    /// Forgets the connection of `generation` (not a newer one another caller made).
    fn forget(&self, generation: u64) {
        let mut current = self.current.lock_unpoisoned();
        if current.as_ref().is_some_and(|(g, _)| *g == generation) {
            *current = None;
        }
    }

    /// Runs `request` on the primary; when it meets a former primary or none, asks the sentinels
    /// again and retries (backing off up to 500 ms), until the configured timeout.
    async fn run<'a, T>(&'a self, request: impl Fn(ConnectionManager) -> RedisFuture<'a, T>) -> RedisResult<T> {
        let deadline = Instant::now() + self.timeout;
        let mut delay = Duration::from_millis(20);
        loop {
            let result = match self.connection().await {
                Ok((generation, conn)) => {
                    let result = request(conn).await;
                    if result.as_ref().is_err_and(moved) {
                        self.forget(generation);
                    }
                    result
                }
                // No primary named yet (a failover under way), or no sentinel answers.
                Err(error) => Err(error),
            };
            match result {
                Err(error) if retryable(&error) && Instant::now() + delay < deadline => {
                    tracing::debug!(%error, "Redis Sentinel: the primary moved or is away; asking the sentinels again");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_millis(500));
                }
                other => return other,
            }
        }
    }

    async fn command(&self, cmd: &Cmd) -> RedisResult<Value> {
        self.run(|mut conn| {
            Box::pin(async move {
                let value = conn.req_packed_command(cmd).await?;
                read_only(&value)?;
                Ok(value)
            })
        })
        .await
    }

    async fn commands(&self, pipeline: &Pipeline, offset: usize, count: usize) -> RedisResult<Vec<Value>> {
        self.run(|mut conn| {
            Box::pin(async move {
                let values = conn.req_packed_commands(pipeline, offset, count).await?;
                values.iter().try_for_each(read_only)?;
                Ok(values)
            })
        })
        .await
    }
}

/// A `READONLY` answer (a former primary's: redis-rs gives a server's errors as values) as an
/// error, so that [`SentinelPrimary::run`] retries it.
fn read_only(value: &Value) -> RedisResult<()> {
    match value {
        Value::ServerError(error) if error.kind() == Some(ServerErrorKind::ReadOnly) => Err(error.clone().into()),
        _ => Ok(()),
    }
}

/// Whether `error` says the connection no longer reaches the primary.
fn moved(error: &RedisError) -> bool {
    error.kind() == ErrorKind::Server(ServerErrorKind::ReadOnly)
        || error.is_io_error()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
}

/// Whether a command that failed with `error` was not run (or is safe to run again) and may
/// succeed on the primary the sentinels name next: refused as read-only by a former primary,
/// refused or dropped connections, no primary named yet.
fn retryable(error: &RedisError) -> bool {
    moved(error)
        || matches!(
            error.kind(),
            ErrorKind::MasterNameNotFoundBySentinel
                | ErrorKind::EmptySentinelList
                | ErrorKind::NoValidReplicasFoundBySentinel
        )
        || error.kind() == ErrorKind::Server(ServerErrorKind::MasterDown)
}
