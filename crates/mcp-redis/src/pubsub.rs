//! Subscribing to one channel, on every deployment, with redis-rs's own reconnection and
//! resubscription: a RESP3 connection of the subscription's own (`ConnectionManager` with a push
//! sender and automatic resubscription on one server; the cluster connection, which
//! resubscribes by itself, on a Redis Cluster) whose pushes go straight to a callback.
//!
//! Plain `PUBLISH`/`SUBSCRIBE`, also on a cluster (a message reaches every node), not sharded
//! pub/sub: a channel here is heard by every instance, whichever node it is connected to.
//!
//! What redis-rs does not do: a first `SUBSCRIBE` that fails (Redis down at start) is tried
//! again here until it succeeds; and under Sentinel, where a connection manager keeps to one
//! address, a lost connection makes this ask the sentinels for the primary and subscribe there
//! if it moved.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::cluster_async::ClusterConnection;
use redis::{ProtocolVersion, PushInfo, PushKind, Value};
use tokio::sync::{Notify, oneshot};

use crate::conn::{SentinelPrimary, client, cluster, manager_config};
use crate::{Deployment, Redis, RedisConfig};

/// The longest wait between two attempts to subscribe.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// How often a subscription that is up checks that Redis still answers.
const HEALTH_CHECK: Duration = Duration::from_secs(10);

/// What the subscription hears.
#[derive(Debug)]
pub(crate) enum Push<'a> {
    /// A message on the channel.
    Message(&'a [u8]),
    /// The channel is subscribed (first, or again after a reconnection).
    Subscribed,
    /// The connection was lost: messages published until the next `Subscribed` are missed.
    Disconnected,
}

/// What a subscription calls with each push (from redis-rs's connection task: it must not
/// block).
pub(crate) type OnPush = Arc<dyn Fn(Push<'_>) + Send + Sync>;

/// A running subscription: ends when dropped.
pub(crate) struct Subscription {
    _stop: oneshot::Sender<()>,
}

impl Redis {
    /// Subscribes to `channel` (see the module docs) from within a tokio runtime; `on_push`
    /// hears its messages, and when it is subscribed and disconnected.
    pub(crate) fn subscribe(&self, channel: String, on_push: OnPush) -> Subscription {
        let (stop, stopped) = oneshot::channel();
        let config = self.config().clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = stopped => {}
                () = keep(config, channel, on_push) => {}
            }
        });
        Subscription { _stop: stop }
    }
}

/// Whether the subscription's connection is up, and a wake-up when it is lost; one per
/// connection (`live` until it is replaced: a replaced one's pushes are ignored).
struct State {
    lost: Notify,
    up: AtomicBool,
    live: AtomicBool,
}

/// A subscribed connection, kept while the subscription runs.
enum Subscribed {
    Manager(ConnectionManager),
    Cluster(ClusterConnection),
}

impl Subscribed {
    async fn ping(&mut self) -> redis::RedisResult<()> {
        let ping = redis::cmd("PING");
        match self {
            Subscribed::Manager(conn) => ping.exec_async(conn).await,
            Subscribed::Cluster(conn) => ping.exec_async(conn).await,
        }
    }
}

/// Keeps `channel` subscribed until cancelled.
async fn keep(config: RedisConfig, channel: String, on_push: OnPush) {
    let sentinel = match &config.deployment {
        Deployment::Sentinel { sentinels, service } => {
            match SentinelPrimary::new(sentinels, service, &config, ProtocolVersion::RESP3) {
                Ok(primary) => Some(primary),
                Err(error) => {
                    tracing::error!(%error, channel, "cannot subscribe: the Sentinel configuration is invalid");
                    return;
                }
            }
        }
        _ => None,
    };
    let mut backoff = Duration::from_millis(50);
    loop {
        let state = Arc::new(State { lost: Notify::new(), up: AtomicBool::new(false), live: AtomicBool::new(true) });
        let connected = connect(&config, sentinel.as_ref(), &channel, &on_push, &state).await;
        let (conn, address) = match connected {
            Ok(connected) => connected,
            Err(error) => {
                state.live.store(false, Ordering::Release);
                tracing::warn!(%error, channel, ?backoff, "cannot subscribe to Redis: retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        backoff = Duration::from_millis(50);
        state.up.store(true, Ordering::Release);
        // redis-rs reconnects and resubscribes when the connection drops; but a reconnection
        // that fails (Redis away longer than its retries) is tried again only when a command is
        // sent: a PING does it, each HEALTH_CHECK while up (which also finds a connection that
        // no longer answers), quickly while down.
        let mut conn = conn;
        loop {
            if state.up.load(Ordering::Acquire) {
                let _ = tokio::time::timeout(HEALTH_CHECK, state.lost.notified()).await;
            }
            tokio::time::sleep(backoff).await;
            let was_up = state.up.load(Ordering::Acquire);
            let pong = crate::keys::bounded(config.timeout, conn.ping()).await;
            if was_up && let Err(error) = &pong {
                // Up but not answering (redis-rs reconnects on a dropped connection, not on a
                // timeout): subscribe again on a new connection.
                tracing::warn!(%error, channel, "the subscription's connection does not answer: subscribing anew");
                state.up.store(false, Ordering::Release);
                on_push(Push::Disconnected);
                break;
            }
            if state.up.load(Ordering::Acquire) {
                backoff = Duration::from_millis(50);
                continue;
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
            tracing::debug!(?pong, channel, "the subscription's connection is down: reconnecting");
            // Under Sentinel the manager keeps to its address: resubscribe on the primary the
            // sentinels name, if it moved.
            let Some(primary) = &sentinel else { continue };
            match crate::keys::bounded(config.timeout, primary.primary()).await {
                Ok(client) if Some(client.get_connection_info().addr()) != address.as_ref() => {
                    tracing::info!(channel, "Redis Sentinel: the primary moved; subscribing on the new one");
                    break;
                }
                Ok(_) => {}
                Err(error) => tracing::debug!(%error, "Redis Sentinel: no primary named yet"),
            }
        }
        state.live.store(false, Ordering::Release);
        drop(conn);
    }
}

/// A RESP3 connection subscribed to `channel`, and the address it reaches (`None` on a
/// cluster).
async fn connect(
    config: &RedisConfig,
    sentinel: Option<&SentinelPrimary>,
    channel: &str,
    on_push: &OnPush,
    state: &Arc<State>,
) -> Result<(Subscribed, Option<redis::ConnectionAddr>), crate::Error> {
    let timeout = config.timeout;
    let (on_push, state) = (on_push.clone(), state.clone());
    let push = move |info: PushInfo| {
        if !state.live.load(Ordering::Acquire) {
            return;
        }
        match info.kind {
            PushKind::Disconnection => {
                state.up.store(false, Ordering::Release);
                state.lost.notify_one();
            }
            PushKind::Subscribe => state.up.store(true, Ordering::Release),
            _ => {}
        }
        deliver(&on_push, &info);
    };
    let client = match (&config.deployment, sentinel) {
        (Deployment::Cluster(nodes), _) => {
            let mut conn = cluster(nodes, config, ProtocolVersion::RESP3, Some(Box::new(push)))?;
            crate::keys::bounded(timeout, conn.subscribe(channel)).await?;
            return Ok((Subscribed::Cluster(conn), None));
        }
        (Deployment::Single(url), _) => client(url, config, ProtocolVersion::RESP3)?,
        (_, Some(primary)) => crate::keys::bounded(timeout, primary.primary()).await?,
        (_, None) => return Err(crate::Error::Corrupt("no deployment to subscribe to".to_owned())),
    };
    let address = Some(client.get_connection_info().addr().clone());
    let manager = manager_config(config)
        .set_push_sender(move |info: PushInfo| {
            push(info);
            Ok::<(), std::convert::Infallible>(())
        })
        .set_automatic_resubscription();
    let mut conn = ConnectionManager::new_lazy_with_config(client, manager)?;
    crate::keys::bounded(timeout, conn.subscribe(channel)).await?;
    Ok((Subscribed::Manager(conn), address))
}

/// Hands one push to `on_push`.
fn deliver(on_push: &OnPush, info: &PushInfo) {
    match info.kind {
        PushKind::Message => {
            if let [_, Value::BulkString(payload)] = info.data.as_slice() {
                on_push(Push::Message(payload));
            }
        }
        PushKind::Subscribe => on_push(Push::Subscribed),
        PushKind::Disconnection => on_push(Push::Disconnected),
        _ => {}
    }
}
