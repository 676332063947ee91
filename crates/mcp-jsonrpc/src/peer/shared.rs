//! The state of one connection, which its handles, its reader and its writer share
//! ([`Shared`]): the calls waiting for answers, the progress routes, the running handlers, and
//! the way frames leave (the writer's queue, or a driven connection's [`FrameSink`]); the
//! engine's own sends, and the end of a connection. Uses the settings and `CallError`.

use crate::sync::MutexExt as _;
use hashbrown::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mcp_types::{ProgressToken, ProtocolVersion, RequestId};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::transport::{FrameKind, Outbound, Route};

use super::config::{PeerConfig, ProgressCallback};
use super::error::CallError;

pub(super) struct Pending {
    pub(super) tx: oneshot::Sender<Result<Box<RawValue>, CallError>>,
}

pub(super) struct ProgressRoute {
    pub(super) callback: ProgressCallback,
    pub(super) activity: Arc<Mutex<Instant>>,
}

pub(super) struct Running {
    pub(super) cancel: CancellationToken,
    pub(super) method_is_initialize: bool,
}

/// Where a driven connection's frames go (see [`Peer::driven`]): its transport's routing.
///
/// [`Peer::driven`]: super::Peer::driven
pub trait FrameSink: Send + Sync + 'static {
    /// Delivers one frame. Frames of one sender arrive in the order sent; the sink must not
    /// wait on its reader (drop a connection that does not read rather than block).
    fn deliver(&self, frame: Outbound) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// How frames leave a connection.
pub(super) enum Out {
    /// Queued for the writer task ([`Peer::spawn`](super::Peer::spawn)).
    Queue(mpsc::Sender<Outbound>),
    /// Handed to the transport directly ([`Peer::driven`](super::Peer::driven)).
    Sink(Arc<dyn FrameSink>),
}

impl Out {
    pub(super) async fn send(&self, frame: Outbound) -> Result<(), ()> {
        match self {
            Out::Queue(tx) => tx.send(frame).await.map_err(|_| ()),
            Out::Sink(sink) => {
                sink.deliver(frame).await;
                Ok(())
            }
        }
    }

    /// Queues `frame` if there is room now (done as well when the queue is closed: nothing
    /// will be written any more); gives it back when it has to wait, or for a sink.
    fn try_queue(&self, frame: Outbound) -> Result<(), Outbound> {
        match self {
            Out::Queue(tx) => match tx.try_send(frame) {
                Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => Ok(()),
                Err(mpsc::error::TrySendError::Full(frame)) => Err(frame),
            },
            Out::Sink(_) => Err(frame),
        }
    }

    /// Sends from synchronous code (a drop): at once if it can, else from a task.
    pub(super) fn send_soon(&self, frame: Outbound) {
        let Err(frame) = self.try_queue(frame) else { return };
        let deferred: Pin<Box<dyn Future<Output = ()> + Send>> = match self {
            Out::Queue(tx) => {
                let tx = tx.clone();
                Box::pin(async move {
                    let _ = tx.send(frame).await;
                })
            }
            Out::Sink(sink) => {
                let sink = sink.clone();
                Box::pin(async move { sink.deliver(frame).await })
            }
        };
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(deferred);
        }
    }
}

pub(super) struct Shared {
    pub(super) config: PeerConfig,
    pub(super) out: Out,
    pub(super) next_id: AtomicI64,
    pub(super) version: AtomicU8,
    pub(super) pending: Mutex<HashMap<RequestId, Pending>>,
    pub(super) progress: Mutex<HashMap<ProgressToken, ProgressRoute>>,
    pub(super) running: Mutex<HashMap<RequestId, Running>>,
    /// Fires to stop reading (local close, or the writer failed).
    pub(super) shutdown: CancellationToken,
    /// Fires to cancel every running handler (after the shutdown grace).
    pub(super) handlers: CancellationToken,
    /// Set once the connection is over: calls fail fast.
    pub(super) closed: AtomicBool,
    /// Fires when `closed` is set: for handlers that serve until the connection ends.
    pub(super) ended: CancellationToken,
    /// Fires to write what is queued and close the writing half (reading goes on).
    pub(super) drain: CancellationToken,
    /// Fires once the writer task is done (its transport half closed).
    pub(super) written: CancellationToken,
    /// Fires once both tasks are done.
    pub(super) done: CancellationToken,
    /// Woken when the last running handler finishes, and when the last spawned handler's
    /// response is queued.
    pub(super) idle: tokio::sync::Notify,
    /// Spawned handlers whose response is not queued yet: they leave `running` before they
    /// queue it (so that the id is free once the answer is out), and the writer must not close
    /// before they have queued it.
    pub(super) answering: AtomicUsize,
    /// Handlers are first polled on the reader task (a current-thread runtime).
    pub(super) inline: bool,
    /// Handlers being polled on the reader task now (not in `running`).
    pub(super) inline_running: AtomicUsize,
}

impl Shared {
    /// A connection's state, before anything was sent or received.
    pub(super) fn new(config: PeerConfig, out: Out, inline: bool) -> Arc<Shared> {
        Arc::new(Shared {
            config,
            out,
            next_id: AtomicI64::new(0),
            version: AtomicU8::new(ProtocolVersion::LATEST_SESSION as u8),
            pending: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            shutdown: CancellationToken::new(),
            handlers: CancellationToken::new(),
            closed: AtomicBool::new(false),
            ended: CancellationToken::new(),
            drain: CancellationToken::new(),
            written: CancellationToken::new(),
            done: CancellationToken::new(),
            idle: tokio::sync::Notify::new(),
            answering: AtomicUsize::new(0),
            inline,
            inline_running: AtomicUsize::new(0),
        })
    }
}

pub(super) async fn send(shared: &Shared, frame: Bytes, route: Route) {
    // Room in the queue, as there is but under backpressure: no wait to set up.
    let kind = if matches!(route, Route::Response(_)) { FrameKind::Response } else { FrameKind::Unknown };
    let Err(out) = shared.out.try_queue(Outbound::new(frame, route).with_kind(kind)) else { return };
    // A full queue (the other side reads nothing) must not keep the reader, or a handler, from
    // seeing that the connection is being closed: once it is, the wait gets the grace.
    tokio::select! {
        biased;
        _ = shared.out.send(out) => {}
        _ = give_up_after(&shared.shutdown, shared.config.shutdown_grace) => {
            debug!("the other side reads nothing; a frame was dropped at close");
        }
    }
}

/// Ready `grace` after `token` fires.
pub(super) async fn give_up_after(token: &CancellationToken, grace: Duration) {
    token.cancelled().await;
    tokio::time::sleep(grace).await;
}

/// The connection is over: calls fail fast, pending calls fail (their senders dropped).
pub(super) fn end_connection(shared: &Shared) {
    shared.closed.store(true, Ordering::Release);
    shared.ended.cancel();
    shared.pending.lock_unpoisoned().clear();
    shared.progress.lock_unpoisoned().clear();
}

/// Lets running handlers finish within the grace period, then cancels the rest.
pub(super) async fn wind_down(shared: &Shared) {
    let grace = tokio::time::sleep(shared.config.shutdown_grace);
    tokio::pin!(grace);
    loop {
        let idle = shared.idle.notified();
        tokio::pin!(idle);
        idle.as_mut().enable();
        if shared.running.lock_unpoisoned().is_empty() && shared.answering.load(Ordering::Acquire) == 0 {
            break;
        }
        tokio::select! {
            _ = &mut grace => {
                shared.handlers.cancel();
                break;
            }
            _ = idle => {}
        }
    }
}
