//! The peer engine: one for both server and client roles.
//!
//! [`Peer::spawn`] runs a connection over a [`Transport`]: a reader task parses frames and
//! dispatches them (requests to the [`Service`] concurrently, responses to the calls waiting
//! for them, cancellation and progress to their requests), and a writer task sends queued
//! frames in batches. The returned [`Peer`] handle makes calls and sends notifications.
//!
//! [`Peer::driven`] runs a connection with no tasks of its own, for transports that receive
//! each message in a task they already have (an HTTP request handler): the transport hands
//! every parsed message to [`Dispatcher::dispatch`], and the engine delivers what it sends to a
//! [`FrameSink`] directly. An idle driven connection costs memory only: no task, no queue.
//!
//! Rules it keeps:
//! - outgoing ids are integers from a counter: never reused within a connection;
//! - `ping` is answered by the engine (but for a 2026-07-28 request, which has no `ping`: it
//!   goes to the service);
//! - `notifications/cancelled` cancels the handler (its [`CancellationToken`] fires, its future
//!   is dropped) and no response is sent; `initialize` is never cancelled;
//! - dropping the future of an outgoing call, or its timeout, sends `notifications/cancelled`;
//! - progress notifications reach the caller's callback by token, reset the call's timeout, and
//!   are dropped once the call completed;
//! - at most [`PeerConfig::max_concurrent_requests`] incoming requests run at once (more are
//!   refused with an error), and at most [`PeerConfig::outgoing_capacity`] frames wait to be
//!   written (senders wait: backpressure);
//! - a panic in a handler becomes an internal-error response;
//! - when the connection ends, pending calls fail with [`CallError::Closed`] and running
//!   handlers get [`PeerConfig::shutdown_grace`] to finish before they are cancelled.

use crate::sync::MutexExt as _;
use hashbrown::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::FutureExt as _;
use mcp_types::{
    CancelledNotification, CancelledNotificationParams, ErrorObject, InitializeRequest, JsonObject, Notification as _,
    PingRequest, ProgressNotification, ProgressNotificationParams, ProgressToken, ProtocolVersion, Request as _,
    RequestId,
};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use crate::message::{self, Body, Message, Parsed};
use crate::transport::{
    Attachment, FrameHints, FrameKind, Inbound, Outbound, ReadError, Route, Transport, TransportError, TransportRead,
    TransportWrite,
};

/// A boxed future, as services return them.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a request handler answers: a complete response frame (see
/// [`RequestContext::encode_result`]) or an error.
pub type Reply = Result<Bytes, ErrorObject>;

/// Limits and timeouts of a connection.
#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// Incoming requests running at once; more are refused with an internal error.
    pub max_concurrent_requests: usize,
    /// Frames waiting to be written; senders wait when it is full.
    pub outgoing_capacity: usize,
    /// Default timeout of an outgoing call (`None`: only the hard maximum applies).
    pub request_timeout: Option<Duration>,
    /// Hard maximum of an outgoing call, even while progress keeps resetting its timeout.
    pub max_request_timeout: Duration,
    /// Time running handlers get to finish once the connection ends.
    pub shutdown_grace: Duration,
    /// Whether a request's handler is first polled on the reader task, and spawned as its own
    /// task only if it has to wait. `None` (the default): on a current-thread runtime, where it
    /// would run on that thread anyway. `Some(true)` also suits connections that carry one
    /// request (a stateless HTTP POST); on a multi-thread runtime it trades the parallelism
    /// of handlers that compute without waiting for a task spawn and a wake-up per request.
    pub inline_handlers: Option<bool>,
}

impl Default for PeerConfig {
    fn default() -> Self {
        PeerConfig {
            max_concurrent_requests: 512,
            outgoing_capacity: 1024,
            request_timeout: Some(Duration::from_secs(60)),
            max_request_timeout: Duration::from_secs(30 * 60),
            shutdown_grace: Duration::from_secs(5),
            inline_handlers: None,
        }
    }
}

/// Handles what the other side sends.
pub trait Service: Send + Sync + 'static {
    /// Handles a request. Runs concurrently with other requests; `ctx` carries the id, the
    /// cancellation token and the peer.
    fn request(&self, request: message::Request, ctx: RequestContext) -> BoxFuture<Reply>;
    /// Handles a notification (other than cancellation and progress, which the engine routes).
    /// Runs on the reader task, in order: spawn for long work.
    fn notification(&self, notification: message::Notification, peer: &Peer) {
        let _ = (notification, peer);
    }
}

/// A service that answers every request with "method not found".
#[derive(Debug, Clone, Copy, Default)]
pub struct NoService;

impl Service for NoService {
    fn request(&self, request: message::Request, _ctx: RequestContext) -> BoxFuture<Reply> {
        Box::pin(std::future::ready(Err(ErrorObject::method_not_found(&request.method))))
    }
}

/// A progress update of an outgoing call.
pub type ProgressCallback = Arc<dyn Fn(ProgressNotificationParams) + Send + Sync>;

/// Told the id an outgoing call is sent under (see [`CallOptions::on_id`]).
pub type IdCallback = Arc<dyn Fn(&RequestId) + Send + Sync>;

/// Options of one outgoing call.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Overrides [`PeerConfig::request_timeout`].
    pub timeout: Option<Duration>,
    /// Receives the call's progress notifications (a progress token is sent with it).
    pub progress: Option<ProgressCallback>,
    /// Cancels the call when it fires (sends `notifications/cancelled`).
    pub cancel: Option<CancellationToken>,
    /// Called with the request's id once it is assigned, before the request is sent: for
    /// long-lived requests whose notifications name it (`subscriptions/listen`).
    pub on_id: Option<IdCallback>,
    /// Waits for the answer with no timeout at all, not even
    /// [`PeerConfig::max_request_timeout`] (long-lived requests such as
    /// `subscriptions/listen`); the cancellation token or dropping the call ends it.
    pub unbounded: bool,
    /// Hints for the transport, carried with the request's frame (see [`FrameHints`]).
    pub hints: Option<FrameHints>,
    /// Members added to the request's `_meta`, where the params do not have a member of the
    /// same name already: what the layer above carries in every request of its own (the W3C
    /// trace context of `mcp-client`, `traceparent` and the like).
    pub meta: Option<JsonObject>,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            .field("on_id", &self.on_id.is_some())
            .field("unbounded", &self.unbounded)
            .field("hints", &self.hints.is_some())
            .field("meta", &self.meta)
            .finish()
    }
}

impl CallOptions {
    /// Sets the timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
    /// Sets the progress callback.
    pub fn on_progress(mut self, f: impl Fn(ProgressNotificationParams) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
    /// Sets a cancellation token.
    pub fn cancel_on(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
    /// Sets the callback told the request's id before it is sent.
    pub fn on_id(mut self, f: impl Fn(&RequestId) + Send + Sync + 'static) -> Self {
        self.on_id = Some(Arc::new(f));
        self
    }
    /// Waits for the answer with no timeout at all (see [`CallOptions::unbounded`]).
    pub fn unbounded(mut self) -> Self {
        self.unbounded = true;
        self
    }
    /// Sets the hints the transport gets with the request's frame (see [`FrameHints`]).
    pub fn hints(mut self, hints: FrameHints) -> Self {
        self.hints = Some(hints);
        self
    }
    /// Adds `value` under `key` to the request's `_meta`, unless its params have `key` there
    /// already (see [`CallOptions::meta`]).
    ///
    /// ```
    /// let options = mcp_jsonrpc::CallOptions::default()
    ///     .meta_member("traceparent", "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01".into());
    /// assert!(options.meta.unwrap().contains_key("traceparent"));
    /// ```
    pub fn meta_member(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.meta.get_or_insert_with(JsonObject::new).insert(key.into(), value);
        self
    }
}

/// Why an outgoing call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The other side answered with an error.
    #[error("{0}")]
    Remote(ErrorObject),
    /// No answer in time; a cancellation was sent.
    #[error("request `{method}` timed out after {elapsed:?}")]
    Timeout {
        /// The method called.
        method: String,
        /// How long it waited.
        elapsed: Duration,
    },
    /// The caller cancelled the call; a cancellation was sent.
    #[error("request cancelled")]
    Cancelled,
    /// The connection closed before an answer came.
    #[error("connection closed")]
    Closed,
    /// The transport could not deliver the request or its answer (over HTTP: an error
    /// status, a broken connection, an expired session); [`CallError::transport_error`]
    /// reaches the transport's own error.
    #[error(transparent)]
    Transport(TransportError),
    /// The method is not part of the connection's protocol revision.
    #[error("`{method}` is not part of protocol revision {version}")]
    NotInRevision {
        /// The method.
        method: &'static str,
        /// The connection's revision.
        version: ProtocolVersion,
    },
    /// The params could not be encoded.
    #[error("cannot encode the request's params")]
    Encode(#[source] serde_json::Error),
    /// The answer did not decode into the expected result type.
    #[error("cannot decode the result of `{method}`")]
    Decode {
        /// The method called.
        method: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
}

impl CallError {
    /// The transport's own error, for [`CallError::Transport`] (downcast it to the type the
    /// transport documents).
    pub fn transport_error(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        match self {
            CallError::Transport(e) => Some(&**e),
            _ => None,
        }
    }
}

/// What a request handler knows about its request.
#[derive(Clone)]
pub struct RequestContext {
    id: RequestId,
    cancel: CancellationToken,
    peer: Peer,
    attachment: Option<Attachment>,
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext").field("id", &self.id).finish_non_exhaustive()
    }
}

impl RequestContext {
    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }
    /// Fires when the request is cancelled (by the other side or by shutdown).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }
    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
    /// The connection, to call the other side or notify it. What is sent through it is
    /// related to this request (see [`Route::Related`]).
    pub fn peer(&self) -> &Peer {
        &self.peer
    }
    /// What the transport attached to the frame that carried the request (over HTTP: the
    /// request's headers and extensions).
    pub fn attachment(&self) -> Option<&Attachment> {
        self.attachment.as_ref()
    }
    /// Encodes the response frame of this request.
    pub fn encode_result(&self, result: &dyn Body) -> Reply {
        message::encode_result(&self.id, result).map_err(ErrorObject::internal_error)
    }
}

struct Pending {
    tx: oneshot::Sender<Result<Box<RawValue>, CallError>>,
}

struct ProgressRoute {
    callback: ProgressCallback,
    activity: Arc<Mutex<Instant>>,
}

struct Running {
    cancel: CancellationToken,
    method_is_initialize: bool,
}

/// Where a driven connection's frames go (see [`Peer::driven`]): its transport's routing.
pub trait FrameSink: Send + Sync + 'static {
    /// Delivers one frame. Frames of one sender arrive in the order sent; the sink must not
    /// wait on its reader (drop a connection that does not read rather than block).
    fn deliver(&self, frame: Outbound) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// How frames leave a connection.
enum Out {
    /// Queued for the writer task ([`Peer::spawn`]).
    Queue(mpsc::Sender<Outbound>),
    /// Handed to the transport directly ([`Peer::driven`]).
    Sink(Arc<dyn FrameSink>),
}

impl Out {
    async fn send(&self, frame: Outbound) -> Result<(), ()> {
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
    fn send_soon(&self, frame: Outbound) {
        let Err(frame) = self.try_queue(frame) else { return };
        let deferred = match self {
            Out::Queue(tx) => {
                let tx = tx.clone();
                Box::pin(async move {
                    let _ = tx.send(frame).await;
                }) as BoxFuture<()>
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

struct Shared {
    config: PeerConfig,
    out: Out,
    next_id: AtomicI64,
    version: AtomicU8,
    pending: Mutex<HashMap<RequestId, Pending>>,
    progress: Mutex<HashMap<ProgressToken, ProgressRoute>>,
    running: Mutex<HashMap<RequestId, Running>>,
    /// Fires to stop reading (local close, or the writer failed).
    shutdown: CancellationToken,
    /// Fires to cancel every running handler (after the shutdown grace).
    handlers: CancellationToken,
    /// Set once the connection is over: calls fail fast.
    closed: AtomicBool,
    /// Fires to write what is queued and close the writing half (reading goes on).
    drain: CancellationToken,
    /// Fires once the writer task is done (its transport half closed).
    written: CancellationToken,
    /// Fires once both tasks are done.
    done: CancellationToken,
    /// Woken when the last running handler finishes, and when the last spawned handler's
    /// response is queued.
    idle: tokio::sync::Notify,
    /// Spawned handlers whose response is not queued yet: they leave `running` before they
    /// queue it (so that the id is free once the answer is out), and the writer must not close
    /// before they have queued it.
    answering: AtomicUsize,
    /// Handlers are first polled on the reader task (a current-thread runtime).
    inline: bool,
    /// Handlers being polled on the reader task now (not in `running`).
    inline_running: AtomicUsize,
}

impl Shared {
    /// A connection's state, before anything was sent or received.
    fn new(config: PeerConfig, out: Out, inline: bool) -> Arc<Shared> {
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

/// A handle on a connection: make calls, send notifications, close. Cheap to clone.
#[derive(Clone)]
pub struct Peer {
    shared: Arc<Shared>,
    /// The incoming request on whose behalf this handle sends, if any.
    related: Option<RequestId>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer").field("closed", &self.is_closed()).finish_non_exhaustive()
    }
}

impl Peer {
    /// Runs a connection over `transport`, dispatching what arrives to `service`.
    ///
    /// Must be called within a tokio runtime. The connection runs until the transport ends or
    /// [`Peer::close`] is called; [`Peer::closed`] waits for that.
    pub fn spawn<T: Transport>(transport: T, service: Arc<dyn Service>, config: PeerConfig) -> Peer {
        let (reader, writer) = transport.split();
        let (out, rx) = mpsc::channel(config.outgoing_capacity.max(1));
        let inline = config.inline_handlers.unwrap_or_else(|| {
            tokio::runtime::Handle::current().runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread
        });
        let shared = Shared::new(config, Out::Queue(out), inline);
        let peer = Peer { shared: shared.clone(), related: None };
        // The writer finishes when the reader is done, or earlier on `close_writing`.
        let finish = shared.drain.child_token();
        let writer_task = tokio::spawn(write_loop(writer, rx, shared.clone(), finish.clone()));
        let reader_peer = peer.clone();
        tokio::spawn(async move {
            read_loop(reader, &reader_peer, service).await;
            finish.cancel();
            let _ = writer_task.await;
            reader_peer.shared.done.cancel();
        });
        peer
    }

    /// A connection with no tasks of its own: the transport hands each incoming message to
    /// the returned [`Dispatcher`], in a task it already runs, and what the connection sends
    /// goes straight to `sink`.
    ///
    /// Handlers are polled in the dispatching task and spawned only if they have to wait
    /// (unless [`PeerConfig::inline_handlers`] is `Some(false)`). The connection ends with
    /// [`Peer::close`]; dropping every handle ends it too, with no cleanup to wait for.
    pub fn driven(sink: Arc<dyn FrameSink>, service: Arc<dyn Service>, config: PeerConfig) -> Dispatcher {
        let inline = config.inline_handlers.unwrap_or(true);
        let shared = Shared::new(config, Out::Sink(sink), inline);
        Dispatcher { peer: Peer { shared, related: None }, service }
    }

    /// The protocol revision used to encode outgoing params and results (until negotiation
    /// sets it, the newest session revision).
    pub fn protocol_version(&self) -> ProtocolVersion {
        let v = self.shared.version.load(Ordering::Relaxed);
        ProtocolVersion::ALL.get(v as usize).copied().unwrap_or(ProtocolVersion::LATEST)
    }

    /// Sets the protocol revision (after negotiation). Batches are accepted only in revisions
    /// that have them.
    pub fn set_protocol_version(&self, version: ProtocolVersion) {
        self.shared.version.store(version as u8, Ordering::Relaxed);
    }

    /// Whether the connection is over.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }

    /// Stops reading; pending calls fail, running handlers get the shutdown grace, queued
    /// frames are written, and the transport is closed.
    pub fn close(&self) {
        if self.shared.shutdown.is_cancelled() {
            return;
        }
        self.shared.shutdown.cancel();
        if matches!(self.shared.out, Out::Sink(_)) {
            // No reader task to wind the connection down: do it here (and wait out the
            // handlers' grace in a task, if any are running).
            let shared = self.shared.clone();
            end_connection(&shared);
            if shared.running.lock_unpoisoned().is_empty() {
                shared.done.cancel();
            } else if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    wind_down(&shared).await;
                    shared.done.cancel();
                });
            } else {
                shared.handlers.cancel();
                shared.done.cancel();
            }
        }
    }

    /// Writes every frame queued so far (a `notifications/cancelled` of a call just dropped,
    /// say), then closes the transport's writing half (a child server's stdin: the first step
    /// of its shutdown) while the reading goes on; returns once that is done. Frames sent
    /// afterwards are not written (calls fail with [`CallError::Closed`]). A write the other
    /// side does not read gets [`PeerConfig::shutdown_grace`], and so does closing.
    ///
    /// [`Peer::close`] writes what is queued too, but only once reading has stopped; this is
    /// for a peer that must see everything before its input ends, while its output is still
    /// read. A driven connection ([`Peer::driven`]) queues nothing: this returns at once.
    pub async fn close_writing(&self) {
        if matches!(self.shared.out, Out::Sink(_)) {
            return;
        }
        self.shared.drain.cancel();
        self.shared.written.cancelled().await;
    }

    /// Cancels the incoming request `id` as a `notifications/cancelled` would (for
    /// transports where the client going away cancels, such as a 2026-07-28 POST). Whether
    /// it was running.
    pub fn cancel_incoming(&self, id: &RequestId) -> bool {
        match self.shared.running.lock_unpoisoned().get(id) {
            Some(r) if !r.method_is_initialize => {
                r.cancel.cancel();
                true
            }
            _ => false,
        }
    }

    /// Cancels every incoming request running now (but `initialize`), as
    /// [`Peer::cancel_incoming`] does each (a server shutting down once its grace is over, say).
    /// How many were cancelled.
    pub fn cancel_all_incoming(&self) -> usize {
        let running = self.shared.running.lock_unpoisoned();
        let cancelled = running.values().filter(|r| !r.method_is_initialize).inspect(|r| r.cancel.cancel());
        cancelled.count()
    }

    /// Waits until the connection is over and its tasks are done.
    pub async fn closed(&self) {
        self.shared.done.cancelled().await;
    }

    /// Routes the progress notifications of `token` to `callback` until the registration is
    /// dropped, whatever request the token was sent with: for progress that outlives its
    /// request (a task's, which the server reports under the token of the call that created
    /// it). The caller puts `token` in the request's params itself.
    pub fn route_progress(&self, token: ProgressToken, callback: ProgressCallback) -> ProgressRegistration {
        let route = ProgressRoute { callback, activity: Arc::new(Mutex::new(Instant::now())) };
        self.shared.progress.lock_unpoisoned().insert(token.clone(), route);
        ProgressRegistration { shared: self.shared.clone(), token }
    }

    /// Calls a typed method of the other side.
    pub async fn request<R: mcp_types::Request>(
        &self,
        mut params: R::Params,
        mut options: CallOptions,
    ) -> Result<R::Result, CallError> {
        use mcp_types::ParamsMeta as _;
        let version = self.protocol_version();
        if !R::REVISIONS.contains(version) {
            return Err(CallError::NotInRevision { method: R::METHOD, version });
        }
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        if options.progress.is_some() {
            params.set_progress_token(ProgressToken::Integer(id));
        }
        let body = mcp_types::ForRevision::new(&params, version);
        let rid = RequestId::Integer(id);
        let frame = encode_frame(&rid, R::METHOD, Some(&body), options.meta.take()).map_err(CallError::Encode)?;
        let raw = self.call(id, R::METHOD, frame, options).await?;
        message::decode_result(&raw).map_err(|source| CallError::Decode { method: R::METHOD.to_owned(), source })
    }

    /// Calls a method by name with untyped params; the answer is raw JSON.
    ///
    /// No progress token is added to raw params: use [`Peer::request`] for progress. The
    /// params are encoded when this is called: the future does not hold them, and is `Send`
    /// whatever they are.
    pub fn request_raw<'a, 'm>(
        &'a self,
        method: &'m str,
        params: Option<&dyn Body>,
        mut options: CallOptions,
    ) -> impl Future<Output = Result<Box<RawValue>, CallError>> + Send + use<'a, 'm> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let rid = RequestId::Integer(id);
        let frame = encode_frame(&rid, method, params, options.meta.take());
        async move {
            let frame = frame.map_err(CallError::Encode)?;
            self.call(id, method, frame, options).await
        }
    }

    /// Calls a custom method of the other side (one outside the protocol, see
    /// [`CustomRequest`](mcp_types::CustomRequest)): its params and result as they serialize,
    /// whatever the revision.
    pub fn request_custom<'a, R: mcp_types::CustomRequest>(
        &'a self,
        params: &R::Params,
        options: CallOptions,
    ) -> impl Future<Output = Result<R::Result, CallError>> + Send + use<'a, R> {
        let call = self.request_raw(R::METHOD, Some(params), options);
        async move {
            let raw = call.await?;
            message::decode_result(&raw).map_err(|source| CallError::Decode { method: R::METHOD.to_owned(), source })
        }
    }

    /// Sends a custom notification (one outside the protocol, see
    /// [`CustomNotification`](mcp_types::CustomNotification)).
    pub fn notify_custom<'a, N: mcp_types::CustomNotification>(
        &'a self,
        params: &N::Params,
    ) -> impl Future<Output = Result<(), CallError>> + Send + use<'a, N> {
        self.notify_raw(N::METHOD, Some(params))
    }

    async fn call(
        &self,
        id: i64,
        method: &str,
        frame: Bytes,
        mut options: CallOptions,
    ) -> Result<Box<RawValue>, CallError> {
        let shared = &self.shared;
        if self.is_closed() {
            return Err(CallError::Closed);
        }
        let rid = RequestId::Integer(id);
        if let Some(f) = &options.on_id {
            f(&rid);
        }
        let (tx, mut rx) = oneshot::channel();
        shared.pending.lock_unpoisoned().insert(rid.clone(), Pending { tx });
        // The connection may have ended between the check above and the insert, after its
        // pending calls were cleared: nothing would ever complete this one.
        if self.is_closed() {
            shared.pending.lock_unpoisoned().remove(&rid);
            return Err(CallError::Closed);
        }
        let started = Instant::now();
        let activity = Arc::new(Mutex::new(started));
        let token = options.progress.as_ref().map(|callback| {
            let token = ProgressToken::Integer(id);
            let route = ProgressRoute { callback: callback.clone(), activity: activity.clone() };
            shared.progress.lock_unpoisoned().insert(token.clone(), route);
            token
        });
        let mut guard = CallGuard {
            shared: shared.clone(),
            id: rid,
            progress: token,
            cancel_on_drop: method != "initialize",
            reason: "request dropped by the caller",
            route: self.route(),
        };
        let timeout = options.timeout.or(shared.config.request_timeout);
        let hard = started + shared.config.max_request_timeout;
        let cancel = options.cancel.unwrap_or_default();
        // The wait for room in the outgoing queue (a peer that stops reading fills it) counts
        // against the call's timeout and its cancellation too. Not sent: nothing to cancel.
        let first_deadline = timeout.map_or(hard, |t| (started + t).min(hard));
        let outbound =
            Outbound::new(frame, self.route()).with_kind(FrameKind::Request(id)).with_hints(options.hints.take());
        let sent = tokio::select! {
            sent = shared.out.send(outbound) => sent.map_err(|_| CallError::Closed),
            _ = tokio::time::sleep_until(first_deadline), if !options.unbounded => {
                Err(CallError::Timeout { method: method.to_owned(), elapsed: started.elapsed() })
            }
            _ = cancel.cancelled() => Err(CallError::Cancelled),
        };
        if let Err(e) = sent {
            guard.cancel_on_drop = false;
            return Err(e);
        }
        if options.unbounded {
            return tokio::select! {
                outcome = &mut rx => {
                    guard.disarm();
                    match outcome {
                        Ok(outcome) => outcome,
                        Err(_) => Err(CallError::Closed),
                    }
                }
                _ = cancel.cancelled() => {
                    guard.reason = "cancelled by the caller";
                    Err(CallError::Cancelled)
                }
            };
        }
        let deadlines = Deadlines { started, activity: &activity, timeout, hard };
        await_answer(&mut rx, &mut guard, &cancel, method, deadlines).await
    }

    /// Sends a typed notification.
    pub async fn notify<N: mcp_types::Notification>(&self, params: N::Params) -> Result<(), CallError> {
        self.notify_hinted::<N>(params, None).await
    }

    /// Sends a typed notification with hints for the transport (see [`FrameHints`]).
    pub async fn notify_with_hints<N: mcp_types::Notification>(
        &self,
        params: N::Params,
        hints: FrameHints,
    ) -> Result<(), CallError> {
        self.notify_hinted::<N>(params, Some(hints)).await
    }

    async fn notify_hinted<N: mcp_types::Notification>(
        &self,
        params: N::Params,
        hints: Option<FrameHints>,
    ) -> Result<(), CallError> {
        let version = self.protocol_version();
        if !N::REVISIONS.contains(version) {
            return Err(CallError::NotInRevision { method: N::METHOD, version });
        }
        let body = mcp_types::ForRevision::new(&params, version);
        let frame = message::encode_notification(N::METHOD, Some(&body)).map_err(CallError::Encode)?;
        self.send(Outbound::new(frame, self.route()).with_kind(FrameKind::Notification).with_hints(hints)).await
    }

    /// Sends a notification by name with untyped params.
    ///
    /// The params are encoded when this is called: the future holds neither them nor the
    /// method, and is `Send` whatever they are.
    pub fn notify_raw<'a>(
        &'a self,
        method: &str,
        params: Option<&dyn Body>,
    ) -> impl Future<Output = Result<(), CallError>> + Send + use<'a> {
        let frame = message::encode_notification(method, params);
        async move {
            let frame = frame.map_err(CallError::Encode)?;
            self.send(Outbound::new(frame, self.route()).with_kind(FrameKind::Notification)).await
        }
    }

    /// Queues a frame for writing, waiting while the queue is full.
    pub async fn send_frame(&self, frame: Bytes) -> Result<(), CallError> {
        self.send(Outbound::new(frame, self.route())).await
    }

    async fn send(&self, outbound: Outbound) -> Result<(), CallError> {
        if self.is_closed() {
            return Err(CallError::Closed);
        }
        self.shared.out.send(outbound).await.map_err(|_| CallError::Closed)
    }

    /// This handle, sending on behalf of the incoming request `id` (see [`Route::Related`]).
    pub fn related_to(&self, id: RequestId) -> Peer {
        Peer { shared: self.shared.clone(), related: Some(id) }
    }

    /// The incoming request this handle sends for, if any.
    pub fn related_request(&self) -> Option<&RequestId> {
        self.related.as_ref()
    }

    fn route(&self) -> Route {
        self.related.clone().map_or(Route::Unrelated, Route::Related)
    }

    /// The number of incoming requests running now.
    pub fn running_requests(&self) -> usize {
        self.shared.running.lock_unpoisoned().len() + self.shared.inline_running.load(Ordering::Relaxed)
    }

    /// The number of outgoing calls waiting for an answer.
    pub fn pending_calls(&self) -> usize {
        self.shared.pending.lock_unpoisoned().len()
    }

    /// Whether an outgoing call with this id waits for its answer here.
    pub fn awaits_response(&self, id: &RequestId) -> bool {
        self.shared.pending.lock_unpoisoned().contains_key(id)
    }

    /// Whether an incoming request with this id is running here.
    pub fn is_running(&self, id: &RequestId) -> bool {
        self.shared.running.lock_unpoisoned().contains_key(id)
    }

    /// Numbers this peer's next outgoing calls from `id` on (the ids are `id`, `id + 1`, ...).
    /// Peers that serve one session from several processes (a fleet sharing the session) take
    /// disjoint ranges, so that an answer names the one call it answers. Keep ids below 2^53:
    /// JavaScript peers read them as doubles.
    pub fn number_calls_from(&self, id: i64) {
        self.shared.next_id.store(id, Ordering::Relaxed);
    }
}

/// The message of a caught panic (`panic!("...")` payloads are `&str` or `String`).
#[doc(hidden)]
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// The answer to an outgoing call, as the reader task delivers it.
type Answer = oneshot::Receiver<Result<Box<RawValue>, CallError>>;

/// When a call that is not unbounded gives up.
struct Deadlines<'a> {
    started: Instant,
    /// The last progress (or the start).
    activity: &'a Mutex<Instant>,
    timeout: Option<Duration>,
    hard: Instant,
}

/// A request frame. With `meta` (the members of [`CallOptions::meta`]), its params' `_meta`
/// gets the members it lacks (no params become `{"_meta": meta}`; params that are not a JSON
/// object are sent as they are); without, the frame is written from the params directly.
/// Only `_meta` is decoded: the other members are kept as their text, so what they hold keeps
/// its order (a `serde_json::Value` would sort object members, such as an elicitation form's
/// fields).
fn encode_frame(
    id: &RequestId,
    method: &str,
    params: Option<&dyn Body>,
    meta: Option<JsonObject>,
) -> serde_json::Result<Bytes> {
    let Some(meta) = meta else { return message::encode_request(id, method, params) };
    let mut members: std::collections::BTreeMap<String, Box<RawValue>> = match params {
        Some(params) => {
            let mut json = Vec::new();
            params.write_json(&mut json)?;
            if json == b"null" {
                Default::default()
            } else if let Ok(members) = serde_json::from_slice(&json) {
                members
            } else {
                return message::encode_request(id, method, Some(params));
            }
        }
        None => Default::default(),
    };
    let existing = match members.get("_meta") {
        None => Some(JsonObject::new()),
        Some(raw) => serde_json::from_str::<JsonObject>(raw.get()).ok(),
    };
    if let Some(mut existing) = existing {
        for (key, value) in meta {
            existing.entry(key).or_insert(value);
        }
        members.insert("_meta".to_owned(), serde_json::value::to_raw_value(&existing)?);
    }
    message::encode_request(id, method, Some(&members))
}

/// Waits for a call's answer until its timeout (which progress resets, within the hard
/// maximum) or its cancellation.
async fn await_answer(
    rx: &mut Answer,
    guard: &mut CallGuard,
    cancel: &CancellationToken,
    method: &str,
    deadlines: Deadlines<'_>,
) -> Result<Box<RawValue>, CallError> {
    let Deadlines { started, activity, timeout, hard } = deadlines;
    loop {
        let last = *activity.lock_unpoisoned();
        let deadline = timeout.map_or(hard, |t| (last + t).min(hard));
        tokio::select! {
            outcome = &mut *rx => {
                guard.disarm();
                return match outcome {
                    Ok(outcome) => outcome,
                    Err(_) => Err(CallError::Closed),
                };
            }
            _ = tokio::time::sleep_until(deadline) => {
                let now = Instant::now();
                if now < hard && *activity.lock_unpoisoned() > last {
                    continue; // progress came in meanwhile: the timeout starts again
                }
                guard.reason = "timeout";
                return Err(CallError::Timeout { method: method.to_owned(), elapsed: now - started });
            }
            _ = cancel.cancelled() => {
                guard.reason = "cancelled by the caller";
                return Err(CallError::Cancelled);
            }
        }
    }
}

/// Progress notifications of one token routed to a callback, for as long as it lives: what
/// [`Peer::route_progress`] returns.
pub struct ProgressRegistration {
    shared: Arc<Shared>,
    token: ProgressToken,
}

impl std::fmt::Debug for ProgressRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressRegistration").field("token", &self.token).finish()
    }
}

impl Drop for ProgressRegistration {
    fn drop(&mut self) {
        self.shared.progress.lock_unpoisoned().remove(&self.token);
    }
}

/// Cleans up an outgoing call that ends without an answer, and tells the other side.
struct CallGuard {
    shared: Arc<Shared>,
    id: RequestId,
    progress: Option<ProgressToken>,
    cancel_on_drop: bool,
    reason: &'static str,
    route: Route,
}

impl CallGuard {
    fn disarm(&mut self) {
        self.cancel_on_drop = false;
        if let Some(t) = self.progress.take() {
            self.shared.progress.lock_unpoisoned().remove(&t);
        }
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if let Some(t) = self.progress.take() {
            self.shared.progress.lock_unpoisoned().remove(&t);
        }
        // Still pending: the answer never came. Forget it, and tell the other side.
        let was_pending = self.shared.pending.lock_unpoisoned().remove(&self.id).is_some();
        if !self.cancel_on_drop || !was_pending || self.shared.closed.load(Ordering::Acquire) {
            return;
        }
        let params = CancelledNotificationParams {
            request_id: Some(self.id.clone()),
            reason: Some(self.reason.to_owned()),
            ..Default::default()
        };
        let Ok(frame) = message::encode_notification(CancelledNotification::METHOD, Some(&params)) else {
            return;
        };
        let kind = match self.id {
            RequestId::Integer(id) => FrameKind::Cancellation(id),
            _ => FrameKind::Notification,
        };
        self.shared.out.send_soon(Outbound::new(frame, self.route.clone()).with_kind(kind));
    }
}

async fn write_loop<W: TransportWrite>(
    mut writer: W,
    mut rx: mpsc::Receiver<Outbound>,
    shared: Arc<Shared>,
    finish: CancellationToken,
) {
    // `close_writing` waits for this however the task ends (a transport that panics included).
    let _written = shared.written.clone().drop_guard();
    // Empty until the first frame: an idle connection (an HTTP session, say) holds no batch.
    let mut batch = Vec::new();
    let grace = shared.config.shutdown_grace;
    // Registered once, not once per frame.
    let finished = finish.cancelled();
    tokio::pin!(finished);
    loop {
        tokio::select! {
            biased;
            n = rx.recv_many(&mut batch, 256) => {
                if n == 0 {
                    break;
                }
            }
            _ = &mut finished => {
                // The reader is done: write what is queued (within the grace), then close.
                while let Ok(f) = rx.try_recv() {
                    batch.push(f);
                }
                if !batch.is_empty() {
                    let _ = tokio::time::timeout(grace, writer.write(&batch)).await;
                }
                break;
            }
        }
        // A write blocks while the other side reads nothing; once the reader is done, it gets
        // the grace and no more, so that the connection can end.
        let written = tokio::select! {
            biased;
            written = writer.write(&batch) => written,
            _ = give_up_after(&finish, grace) => {
                debug!("the other side reads nothing; closing without the rest");
                break;
            }
        };
        if let Err(e) = written {
            debug!(error = %e, "transport write failed; closing the connection");
            shared.shutdown.cancel();
            break;
        }
        batch.clear();
        // A burst's buffer is not kept for the idle time after it.
        if batch.capacity() > 32 {
            batch = Vec::new();
        }
    }
    rx.close();
    let _ = tokio::time::timeout(grace, writer.close()).await;
}

/// Ready `grace` after `token` fires.
async fn give_up_after(token: &CancellationToken, grace: Duration) {
    token.cancelled().await;
    tokio::time::sleep(grace).await;
}

async fn read_loop<R: TransportRead>(mut reader: R, peer: &Peer, service: Arc<dyn Service>) {
    let shared = &peer.shared;
    // Registered once, not once per message: each registration locks the token's waiters.
    let shutdown = shared.shutdown.cancelled();
    tokio::pin!(shutdown);
    loop {
        let item = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            item = reader.read() => item,
        };
        match item {
            None => break,
            Some(Ok(inbound)) => handle_frame(peer, &service, inbound).await,
            Some(Err(ReadError::RequestFailed { id, source })) => fail_call(shared, &id, source),
            Some(Err(e)) if e.is_recoverable() => {
                warn!(error = %e, "skipping an unreadable message");
                let error = match e {
                    ReadError::InvalidUtf8 => ErrorObject::parse_error(&e),
                    _ => ErrorObject::invalid_request(&e),
                };
                send(shared, message::encode_error(None, &error), Route::Unrelated).await;
            }
            Some(Err(e)) => {
                debug!(error = %e, "transport read failed");
                break;
            }
        }
    }
    end_connection(shared);
    wind_down(shared).await;
}

/// The transport failed our request `id`: its call fails with the transport's error.
fn fail_call(shared: &Shared, id: &RequestId, error: TransportError) {
    match shared.pending.lock_unpoisoned().remove(id) {
        Some(p) => {
            debug!(%id, %error, "request failed in the transport");
            let _ = p.tx.send(Err(CallError::Transport(error)));
        }
        None => debug!(%id, %error, "transport failure of an unknown or finished request"),
    }
}

/// The connection is over: calls fail fast, pending calls fail (their senders dropped).
fn end_connection(shared: &Shared) {
    shared.closed.store(true, Ordering::Release);
    shared.pending.lock_unpoisoned().clear();
    shared.progress.lock_unpoisoned().clear();
}

/// Lets running handlers finish within the grace period, then cancels the rest.
async fn wind_down(shared: &Shared) {
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

async fn send(shared: &Shared, frame: Bytes, route: Route) {
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

/// A driven connection's entry point (see [`Peer::driven`]): the transport hands it what
/// arrives.
pub struct Dispatcher {
    peer: Peer,
    service: Arc<dyn Service>,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher").field("peer", &self.peer).finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// The connection's handle.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Handles what arrived, already parsed (see [`message::parse`]): a request is answered
    /// through the sink (its handler polled here, and spawned only if it has to wait), a
    /// response completes the call waiting for it, a notification reaches the service.
    /// Ignored once the connection is closed.
    pub async fn dispatch(&self, parsed: Parsed, attachment: Option<Attachment>) {
        if self.peer.shared.shutdown.is_cancelled() {
            return;
        }
        handle_parsed(&self.peer, &self.service, parsed, attachment).await;
    }

    /// Parses a frame and handles it (see [`Dispatcher::dispatch`]).
    pub async fn dispatch_frame(&self, inbound: Inbound) {
        self.dispatch(message::parse(&inbound.frame), inbound.attachment).await;
    }
}

fn response_route(id: Option<&RequestId>) -> Route {
    id.cloned().map_or(Route::Unrelated, Route::Response)
}

async fn handle_frame(peer: &Peer, service: &Arc<dyn Service>, inbound: Inbound) {
    handle_parsed(peer, service, message::parse(&inbound.frame), inbound.attachment).await;
}

async fn handle_parsed(peer: &Peer, service: &Arc<dyn Service>, parsed: Parsed, attachment: Option<Attachment>) {
    let shared = &peer.shared;
    match parsed {
        Parsed::Single(m) => handle_message(peer, service, m, None, attachment).await,
        Parsed::Invalid { id, error } => {
            debug!(code = error.code, "invalid message: {}", error.message);
            send(shared, message::encode_error(id.as_ref(), &error), response_route(id.as_ref())).await;
        }
        Parsed::Batch(items) => {
            let version = peer.protocol_version();
            if !version.allows_batches() {
                let error =
                    ErrorObject::invalid_request(format!("batches are not supported in protocol revision {version}"));
                send(shared, message::encode_error(None, &error), Route::Unrelated).await;
                return;
            }
            let requests = items.iter().filter(|m| matches!(m, Ok(Message::Request(_)) | Err(_))).count();
            let first = items.iter().find_map(|m| match m {
                Ok(Message::Request(r)) => Some(r.id.clone()),
                Err(e) => e.id.clone(),
                _ => None,
            });
            let collector = Arc::new(BatchCollector {
                frames: Mutex::new(Vec::new()),
                remaining: Mutex::new(requests),
                route: response_route(first.as_ref()),
            });
            for item in items {
                match item {
                    Ok(m) => handle_message(peer, service, m, Some(&collector), attachment.clone()).await,
                    Err(invalid) => {
                        let frame = message::encode_error(invalid.id.as_ref(), &invalid.error);
                        collector.finish(shared, Some(frame)).await;
                    }
                }
            }
        }
    }
}

/// Gathers the responses of a batch into one batch response.
struct BatchCollector {
    frames: Mutex<Vec<Bytes>>,
    remaining: Mutex<usize>,
    route: Route,
}

impl BatchCollector {
    async fn finish(&self, shared: &Shared, frame: Option<Bytes>) {
        let frames = {
            let mut frames = self.frames.lock_unpoisoned();
            if let Some(f) = frame {
                frames.push(f);
            }
            let mut remaining = self.remaining.lock_unpoisoned();
            *remaining = remaining.saturating_sub(1);
            if *remaining > 0 {
                return;
            }
            std::mem::take(&mut *frames)
        };
        // A batch whose requests all ended without a response (cancelled) gets the empty
        // frame that tells routing transports no response will come, as a single request does.
        let frame = if frames.is_empty() { Bytes::new() } else { message::encode_batch(&frames) };
        send(shared, frame, self.route.clone()).await;
    }
}

async fn deliver(shared: &Shared, batch: Option<&Arc<BatchCollector>>, id: &RequestId, frame: Option<Bytes>) {
    match batch {
        Some(c) => c.finish(shared, frame).await,
        None => {
            if let Some(f) = frame {
                send(shared, f, Route::Response(id.clone())).await;
            }
        }
    }
}

async fn handle_message(
    peer: &Peer,
    service: &Arc<dyn Service>,
    m: Message,
    batch: Option<&Arc<BatchCollector>>,
    attachment: Option<Attachment>,
) {
    let shared = &peer.shared;
    match m {
        Message::Request(req) => start_request(peer, service, req, batch, attachment).await,
        Message::Notification(n) => match n.method.as_str() {
            CancelledNotification::METHOD => {
                match message::decode_params::<CancelledNotificationParams>(n.params.as_deref()) {
                    Ok(CancelledNotificationParams { request_id: Some(id), .. }) => {
                        let running = shared.running.lock_unpoisoned();
                        match running.get(&id) {
                            Some(r) if !r.method_is_initialize => r.cancel.cancel(),
                            Some(_) => debug!(%id, "ignoring cancellation of initialize"),
                            None => {
                                // Not one of the requests we serve: perhaps one of our own calls
                                // the other side ends (a `subscriptions/listen` it tears down).
                                drop(running);
                                guarded("a notification handler", || service.notification(n, peer));
                            }
                        }
                    }
                    Ok(_) => debug!("cancellation without a request id"),
                    Err(e) => debug!(error = %e, "malformed cancellation"),
                }
            }
            ProgressNotification::METHOD => {
                match message::decode_params::<ProgressNotificationParams>(n.params.as_deref()) {
                    Ok(p) => {
                        let route = shared
                            .progress
                            .lock_unpoisoned()
                            .get(&p.progress_token)
                            .map(|r| (r.callback.clone(), r.activity.clone()));
                        match route {
                            Some((callback, activity)) => {
                                *activity.lock_unpoisoned() = Instant::now();
                                guarded("a progress callback", || callback(p));
                            }
                            None => {
                                debug!(token = %p.progress_token, "progress for an unknown or finished request")
                            }
                        }
                    }
                    Err(e) => debug!(error = %e, "malformed progress notification"),
                }
            }
            _ => guarded("a notification handler", || service.notification(n, peer)),
        },
        Message::Response(resp) => {
            let Some(id) = resp.id else {
                warn!("the other side could not read one of our messages: {:?}", resp.outcome.err());
                return;
            };
            match shared.pending.lock_unpoisoned().remove(&id) {
                Some(p) => {
                    let _ = p.tx.send(resp.outcome.map_err(CallError::Remote));
                }
                None => debug!(%id, "response for an unknown or finished request"),
            }
        }
    }
    let _ = batch;
}

async fn start_request(
    peer: &Peer,
    service: &Arc<dyn Service>,
    req: message::Request,
    batch: Option<&Arc<BatchCollector>>,
    attachment: Option<Attachment>,
) {
    let shared = &peer.shared;
    let id = req.id.clone();
    // 2026-07-28 has no ping: a request carrying that revision's `_meta` goes to the service,
    // which answers it as that revision says.
    if req.method == PingRequest::METHOD && !req.carries_protocol_version() {
        let frame = message::encode_result(&id, &serde_json::json!({})).ok();
        deliver(shared, batch, &id, frame).await;
        return;
    }
    let cancel = shared.handlers.child_token();
    let mut running =
        Some(Running { cancel: cancel.clone(), method_is_initialize: req.method == InitializeRequest::METHOD });
    match admit(shared, &id, &mut running) {
        Admit::Yes => {}
        Admit::Duplicate => {
            warn!(%id, method = %req.method, "ignoring a request whose id is already in use");
            deliver(shared, batch, &id, None).await;
            return;
        }
        Admit::Busy(limit) => {
            let error = ErrorObject::internal_error(format!("too many concurrent requests (limit {limit})"));
            deliver(shared, batch, &id, Some(message::encode_error(Some(&id), &error))).await;
            return;
        }
    }
    let ctx = RequestContext { id: id.clone(), cancel: cancel.clone(), peer: peer.related_to(id.clone()), attachment };
    let method = req.method.clone();
    if !shared.inline {
        let fut = start_handler(service, &method, req, ctx);
        spawn_request(shared.clone(), batch.cloned(), id, method, cancel, fut);
        return;
    }
    // On a current-thread runtime (or a driven peer, dispatched to from a task of its
    // transport) run the handler here at once, and spawn it only if it has to wait. Most
    // handlers answer without waiting, and then cost no task and no wake-up.
    let mut fut = start_handler(service, &method, req, ctx);
    // Counted apart while it has no entry in the running table.
    let unlisted = running.is_some();
    if unlisted {
        shared.inline_running.fetch_add(1, Ordering::Relaxed);
    }
    let polled = std::future::poll_fn(|cx| {
        std::task::Poll::Ready(std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))))
    })
    .await;
    if unlisted {
        shared.inline_running.fetch_sub(1, Ordering::Relaxed);
    }
    let outcome = match polled {
        Ok(std::task::Poll::Pending) => {
            if let Some(running) = running {
                shared.running.lock_unpoisoned().insert(id.clone(), running);
            }
            spawn_request(shared.clone(), batch.cloned(), id, method, cancel, fut);
            return;
        }
        Ok(std::task::Poll::Ready(reply)) => Ok(reply),
        Err(panic) => Err(panic),
    };
    drop(fut);
    if !unlisted {
        leave_running(shared, &id);
    }
    if let Some(frame) = response_frame(&id, &method, outcome) {
        deliver(shared, batch, &id, Some(frame)).await;
    }
}

/// Whether a request may run: its id is not in use and the running table has room.
enum Admit {
    Yes,
    Duplicate,
    Busy(usize),
}

/// Admits request `id`. The request enters the running table (`running` is taken) before its
/// handler first runs when the handler is spawned, or when messages are dispatched from several
/// tasks at once (a driven peer): a cancellation or a duplicate id arriving meanwhile on another
/// task must find it. Only a handler polled on the one reader task may run without an entry
/// (nothing else is read until it answers or is spawned).
fn admit(shared: &Shared, id: &RequestId, running: &mut Option<Running>) -> Admit {
    let enter_first = !shared.inline || matches!(shared.out, Out::Sink(_));
    let mut table = shared.running.lock_unpoisoned();
    let limit = shared.config.max_concurrent_requests;
    if table.contains_key(id) {
        Admit::Duplicate
    } else if table.len() >= limit {
        Admit::Busy(limit)
    } else {
        if enter_first {
            table.extend(running.take().map(|r| (id.clone(), r)));
        }
        Admit::Yes
    }
}

/// Takes a request out of the running table (waking [`wind_down`] when it was the last).
fn leave_running(shared: &Shared, id: &RequestId) {
    let now_idle = {
        let mut running = shared.running.lock_unpoisoned();
        running.remove(id);
        running.is_empty()
    };
    if now_idle {
        shared.idle.notify_waiters();
    }
}

/// A spawned handler, from its spawning until its response is queued (see
/// [`Shared::answering`]).
struct Answering(Arc<Shared>);

impl Answering {
    fn new(shared: Arc<Shared>) -> Answering {
        shared.answering.fetch_add(1, Ordering::AcqRel);
        Answering(shared)
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        if self.0.answering.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// Runs a request handler as its own task, until it answers or is cancelled.
fn spawn_request(
    shared: Arc<Shared>,
    batch: Option<Arc<BatchCollector>>,
    id: RequestId,
    method: String,
    cancel: CancellationToken,
    fut: BoxFuture<Reply>,
) {
    let answering = Answering::new(shared.clone());
    tokio::spawn(async move {
        let _answering = answering;
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            r = AssertUnwindSafe(fut).catch_unwind() => Some(r),
        };
        leave_running(&shared, &id);
        let frame = match outcome {
            None => {
                debug!(%id, %method, "request cancelled; no response");
                if batch.is_none() {
                    // Tell routing transports that no response will come (an empty frame,
                    // which byte-stream transports skip).
                    send(&shared, Bytes::new(), Route::Response(id)).await;
                    return;
                }
                None
            }
            Some(outcome) => response_frame(&id, &method, outcome),
        };
        deliver(&shared, batch.as_ref(), &id, frame).await;
    });
}

/// Runs user code on the reader task, where a panic would end the connection: a panic is
/// logged, and the connection goes on.
fn guarded(what: &str, f: impl FnOnce()) {
    if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(f)) {
        warn!(panic = %panic_message(panic.as_ref()), "{what} panicked; the connection goes on");
    }
}

/// The service's future for a request. Making it runs the handler's synchronous part on the
/// reader task: a panic there becomes the request's internal error, as one in the future does.
fn start_handler(
    service: &Arc<dyn Service>,
    method: &str,
    req: message::Request,
    ctx: RequestContext,
) -> BoxFuture<Reply> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| service.request(req, ctx))) {
        Ok(fut) => fut,
        Err(panic) => {
            let msg = panic_message(panic.as_ref());
            warn!(%method, panic = %msg, "request handler panicked");
            Box::pin(std::future::ready(Err(ErrorObject::internal_error(format!("handler panicked: {msg}")))))
        }
    }
}

/// The response frame of a handler that answered (or panicked).
fn response_frame(id: &RequestId, method: &str, outcome: std::thread::Result<Reply>) -> Option<Bytes> {
    match outcome {
        Ok(Ok(frame)) => Some(frame),
        Ok(Err(e)) => Some(message::encode_error(Some(id), &e)),
        Err(panic) => {
            let msg = panic_message(panic.as_ref());
            warn!(%id, %method, panic = %msg, "request handler panicked");
            Some(message::encode_error(Some(id), &ErrorObject::internal_error(format!("handler panicked: {msg}"))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_merged_without_reordering_what_the_params_hold() {
        let params = RawValue::from_string(r#"{"form":{"z":1,"a":2,"m":3},"_meta":{"mine":true}}"#.to_owned()).unwrap();
        let mut meta = JsonObject::new();
        meta.insert("traceparent".to_owned(), "00-x".into());
        meta.insert("mine".to_owned(), false.into());
        let frame = encode_frame(&RequestId::Integer(1), "m", Some(&params), Some(meta)).unwrap();
        let text = std::str::from_utf8(&frame).unwrap();
        assert!(text.contains(r#""form":{"z":1,"a":2,"m":3}"#), "{text}");
        assert!(text.contains(r#""_meta":{"mine":true,"traceparent":"00-x"}"#), "{text}");
        let none = encode_frame(&RequestId::Integer(2), "m", None, Some(JsonObject::new())).unwrap();
        assert!(std::str::from_utf8(&none).unwrap().contains(r#""params":{"_meta":{}}"#));
        let list = RawValue::from_string("[1,2]".to_owned()).unwrap();
        let frame = encode_frame(&RequestId::Integer(3), "m", Some(&list), Some(JsonObject::new())).unwrap();
        assert!(std::str::from_utf8(&frame).unwrap().contains(r#""params":[1,2]"#));
    }
}
