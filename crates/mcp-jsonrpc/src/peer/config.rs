//! The settings of a connection ([`PeerConfig`]) and of one outgoing call ([`CallOptions`],
//! with its progress and id callbacks). The bottom of the engine: it uses nothing of it.

use std::sync::Arc;
use std::time::Duration;

use mcp_types::{JsonObject, ProgressNotificationParams, RequestId};
use tokio_util::sync::CancellationToken;

use crate::transport::FrameHints;

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
    /// Sets a cancellation token. Once it fires, the call ends with
    /// [`CallError::Cancelled`](crate::CallError::Cancelled) and the peer is sent
    /// `notifications/cancelled`, even when the answer came in meanwhile but had not been
    /// taken yet (as when a progress callback cancels and the answer follows its
    /// notification): the sender of a cancellation ignores a later answer.
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
