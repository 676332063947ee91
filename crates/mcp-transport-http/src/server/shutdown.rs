//! Graceful shutdown: the accept loop that stops on a signal, the draining of the endpoints
//! it serves (their streams end with a `retry` hint, requests in flight get a grace period,
//! then are cancelled), and the opt-in health routes.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::Poll;
use std::time::Duration;

use futures_util::task::AtomicWaker;
use mcp_jsonrpc::sync::MutexExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use super::config::HttpServerConfig;

/// How long connections get to end once the requests still running after the grace are
/// cancelled (their error answers written), before they are dropped.
const CANCEL_WAIT: Duration = Duration::from_secs(1);

/// Serves `router` on `listener` as [`serve_router`](super::serve_router) does, until
/// `signal` completes; then shuts down gracefully and returns `Ok`:
///
/// 0. with an [`HttpServerConfig::unready_delay`], `/readyz` answers 503 for that long while
///    everything else is served as before;
/// 1. the listener is closed (new connections are refused), `/readyz` answers 503, new
///    requests get 503 with `Connection: close`, idle keep-alive connections close, and the
///    standalone (GET) SSE streams end with a `retry` hint so that clients reconnect
///    elsewhere;
/// 2. requests in flight get [`HttpServerConfig::shutdown_grace`] to finish (their streams
///    go on meanwhile, and responses to the server's own requests are still accepted);
/// 3. those still running then are answered with a JSON-RPC error (-32603, on their stream,
///    which ends with a `retry` hint) and their handlers cancelled (`Context::cancellation`
///    fires); connections still open a second later are dropped.
///
/// The endpoints drained are those built from `config` or its clones (by
/// [`router`](super::router), or `Server::http_router`). A request outside any session
/// (the stateless mode) that outlives the grace is not answered: its connection is dropped.
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_transport_http::server::{self, HttpServerConfig, SessionFactory};
///
/// # async fn run(factory: Arc<dyn SessionFactory>) -> std::io::Result<()> {
/// let config = HttpServerConfig::default().health_routes(true);
/// let app = axum::Router::new().merge(server::router(factory, config.clone()));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// # drop(stop);
/// server::serve_router_with_shutdown(listener, app, &config, async {
///     let _ = stopped.await;
/// })
/// .await
/// # }
/// ```
pub async fn serve_router_with_shutdown(
    listener: TcpListener,
    router: axum::Router,
    config: &HttpServerConfig,
    signal: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let stop = StopAll::default();
    let mut tasks = Connections(JoinSet::new());
    let connections = &mut tasks.0;
    let accept = Accept { listener: &listener, router: &router, config, stop: &stop };
    accept.until(connections, signal).await;
    if !config.unready_delay.is_zero() {
        // Readiness turns false first, while everything is still served: a balancer probing
        // `/readyz` stops sending new clients before the listener closes.
        tracing::info!(delay = ?config.unready_delay, "shutting down: unready, still serving");
        config.drain.unready.store(true, Ordering::Relaxed);
        accept.until(connections, tokio::time::sleep(config.unready_delay)).await;
    }
    drop(listener);
    tracing::info!("shutting down: draining connections");
    config.drain.begin().await;
    stop.stop();
    let finished = tokio::time::timeout(config.shutdown_grace, join_all(connections)).await;
    if finished.is_err() {
        tracing::info!("shutdown grace over: cancelling the requests still running");
        config.drain.cancel().await;
        if tokio::time::timeout(CANCEL_WAIT, join_all(connections)).await.is_err() {
            connections.shutdown().await;
        }
    }
    Ok(())
}

/// What the accept loop serves connections with.
struct Accept<'a> {
    listener: &'a TcpListener,
    router: &'a axum::Router,
    config: &'a HttpServerConfig,
    stop: &'a StopAll,
}

impl Accept<'_> {
    /// Accepts connections, each served in a task of `connections`, until `until` completes.
    async fn until(&self, connections: &mut JoinSet<()>, until: impl Future<Output = ()>) {
        tokio::pin!(until);
        loop {
            tokio::select! {
                biased;
                () = &mut until => return,
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                accepted = self.listener.accept() => match accepted {
                    Ok((tcp, peer)) => {
                        let stop = self.stop.watch();
                        connections.spawn(serve_connection(tcp, peer, self.router.clone(), self.config, stop));
                    }
                    Err(e) => {
                        // Out of descriptors and the like: back off a little rather than spin.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                },
            }
        }
    }
}

/// The tasks of the connections being served. Should the serving future be dropped (its task
/// aborted) they run on, as connections did before graceful shutdown existed.
struct Connections(JoinSet<()>);

impl Drop for Connections {
    fn drop(&mut self) {
        self.0.detach_all();
    }
}

/// What tells the connections to shut down gracefully: a flag and a waker per connection.
/// A connection polls it on each of its wakes, so it is an atomic load and a waker check
/// (no lock, no channel).
#[derive(Default)]
struct StopAll {
    connections: Mutex<Sweep>,
}

/// The flags of the connections, swept of those gone whenever the list doubles past its
/// size after the last sweep (so each accept costs amortized O(1), however many stay open).
#[derive(Default)]
struct Sweep {
    flags: Vec<Weak<Stop>>,
    next: usize,
}

/// One connection's stop flag.
#[derive(Default)]
struct Stop {
    stopped: AtomicBool,
    waker: AtomicWaker,
}

impl StopAll {
    /// The flag of a new connection (forgetting, now and then, those of connections gone).
    fn watch(&self) -> Arc<Stop> {
        let stop = Arc::new(Stop::default());
        let mut all = self.connections.lock_unpoisoned();
        if all.flags.len() >= all.next {
            all.flags.retain(|s| s.strong_count() > 0);
            all.next = (2 * all.flags.len()).max(64);
        }
        all.flags.push(Arc::downgrade(&stop));
        stop
    }

    /// Tells every connection to stop.
    fn stop(&self) {
        for stop in self.connections.lock_unpoisoned().flags.iter().filter_map(Weak::upgrade) {
            stop.stopped.store(true, Ordering::Release);
            stop.waker.wake();
        }
    }
}

impl Stop {
    /// Completes once the connection is told to stop.
    async fn stopped(&self) {
        std::future::poll_fn(|cx| {
            if self.stopped.load(Ordering::Acquire) {
                return Poll::Ready(());
            }
            self.waker.register(cx.waker());
            if self.stopped.load(Ordering::Acquire) { Poll::Ready(()) } else { Poll::Pending }
        })
        .await
    }
}

async fn join_all(connections: &mut JoinSet<()>) {
    while connections.join_next().await.is_some() {}
}

/// One connection: HTTP/1.1 with TCP_NODELAY and the header limits, shut down gracefully
/// (the response under way finishes, keep-alive ends) once told to `stop`.
fn serve_connection(
    tcp: TcpStream,
    peer: SocketAddr,
    router: axum::Router,
    config: &HttpServerConfig,
    stop: Arc<Stop>,
) -> impl Future<Output = ()> + Send + 'static {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let _ = tcp.set_nodelay(true);
    let service = hyper_util::service::TowerToHyperService::new(router);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout)
        // The bound on the head, exact: hyper counts the bytes it parsed (431 past it). The
        // read buffer's bound stays as a backstop.
        .max_header_size(config.max_header_bytes)
        .max_buf_size(config.max_header_bytes.max(8192))
        .keep_alive(true);
    // The handlers of the connection's requests run in its task: there they find its client's
    // address (for the per-client bound on sessions) at no cost to each request.
    super::endpoint::CLIENT_ADDRESS.scope(peer.ip(), async move {
        let conn = builder.serve_connection(TokioIo::new(tcp), service);
        tokio::pin!(conn);
        let result = tokio::select! {
            biased;
            result = conn.as_mut() => result,
            () = stop.stopped() => {
                conn.as_mut().graceful_shutdown();
                conn.await
            }
        };
        if let Err(e) = result {
            tracing::debug!(peer = %peer, error = %e, "HTTP connection ended with an error");
        }
    })
}
