//! Context parameters: values a handler takes from the request it serves rather than from the
//! client's arguments (the [`Context`] itself, a [`Progress`] reporter, the cancellation token,
//! the client [`Peer`], and shared [`State`]).
//!
//! The `#[tool]`, `#[prompt]` and `#[resource]` macros of `mcp-macros` tell a context parameter
//! from an argument by this trait: a parameter whose type implements [`FromContext`] is filled
//! from the request, whatever the type is called at the use site.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::{Future, IntoFuture};
use std::sync::Arc;

use mcp_jsonrpc::{CancellationToken, Peer};
use mcp_types::{ErrorObject, ProgressNotification, ProgressNotificationParams, ProgressToken};

use crate::context::Context;

/// A value a handler takes from the request context instead of the arguments.
///
/// Implement it for your own types to make them context parameters of macro-defined tools,
/// prompts and resources:
///
/// ```
/// use mcp_server::{Context, FromContext};
/// use mcp_types::ErrorObject;
///
/// /// The name of the client, as it introduced itself.
/// struct ClientName(String);
///
/// impl FromContext for ClientName {
///     fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
///         Ok(ClientName(ctx.client_info().map(|i| i.name).unwrap_or_default()))
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a context parameter type",
    label = "not an argument and not taken from the request context",
    note = "context parameters are `Context`, `Progress`, `CancellationToken`, `Peer`, `State<T>`, \
            or types that implement `FromContext`"
)]
pub trait FromContext: Sized {
    /// Takes the value from the context of the request being handled. An error fails the
    /// request with a JSON-RPC error.
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject>;
}

impl FromContext for Context {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(ctx.clone())
    }
}

impl FromContext for CancellationToken {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(ctx.cancellation().clone())
    }
}

impl FromContext for Peer {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(ctx.peer().clone())
    }
}

impl FromContext for Progress {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(ctx.progress_reporter())
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        ctx.state::<T>().map(State).ok_or_else(|| {
            ErrorObject::internal_error(format!(
                "no shared state of type `{}`: register it with `ServerBuilder::state`",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// Reports the progress of one request, if the client asked for progress (otherwise reports
/// nothing).
///
/// ```
/// async fn work(progress: mcp_server::Progress) {
///     for step in 1..=3 {
///         progress.report(step as f64).total(3.0).message(format!("step {step}")).await;
///     }
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Progress {
    peer: Peer,
    token: Option<ProgressToken>,
    /// The task the request runs as (2025-11-25), named in each notification's `_meta`.
    task: Option<Arc<str>>,
}

impl Progress {
    pub(crate) fn new(peer: Peer, token: Option<ProgressToken>, task: Option<Arc<str>>) -> Self {
        Progress { peer, token, task }
    }

    /// Whether the client asked for progress on this request.
    pub fn is_requested(&self) -> bool {
        self.token.is_some()
    }

    /// A progress notification: `progress` so far. Add the total with
    /// [`total`](ProgressReport::total) and a message with
    /// [`message`](ProgressReport::message), then `.await` it to send it.
    ///
    /// ```
    /// async fn copy(progress: mcp_server::Progress) {
    ///     progress.report(3.0).await;
    ///     progress.report(3.0).total(10.0).message("copying").await;
    /// }
    /// ```
    pub fn report(&self, progress: f64) -> ProgressReport<'_, impl Future<Output = ()> + Send + '_> {
        progress_report(&self.peer, self.token.as_ref(), self.task.as_deref(), progress)
    }
}

/// A progress notification being built: made by [`Progress::report`] or
/// [`Context::progress`], sent when awaited (if the client asked for progress; otherwise
/// awaiting it does nothing).
///
/// `F` is the future that sends it; it is never named by users. Awaiting the report costs
/// what sending the notification costs: no allocation beyond the message, if any.
#[must_use = "a progress report is sent only when it is awaited"]
pub struct ProgressReport<'a, F> {
    parts: ReportParts<'a>,
    send: fn(ReportParts<'a>) -> F,
}

/// What a progress notification is made of, before it is sent.
struct ReportParts<'a> {
    peer: &'a Peer,
    token: Option<&'a ProgressToken>,
    task: Option<&'a str>,
    progress: f64,
    total: Option<f64>,
    message: Option<String>,
}

/// A report of `progress` on the request whose progress token is `token` (none: the client
/// did not ask for progress).
pub(crate) fn progress_report<'a>(
    peer: &'a Peer,
    token: Option<&'a ProgressToken>,
    task: Option<&'a str>,
    progress: f64,
) -> ProgressReport<'a, impl Future<Output = ()> + Send + 'a> {
    let parts = ReportParts { peer, token, task, progress, total: None, message: None };
    ProgressReport { parts, send: send_progress }
}

impl<F> ProgressReport<'_, F> {
    /// Sets the total the progress counts towards, if known.
    pub fn total(mut self, total: f64) -> Self {
        self.parts.total = Some(total);
        self
    }

    /// Sets a message saying what is being done.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.parts.message = Some(message.into());
        self
    }
}

impl<F> std::fmt::Debug for ProgressReport<'_, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressReport")
            .field("progress", &self.parts.progress)
            .field("total", &self.parts.total)
            .field("message", &self.parts.message)
            .finish_non_exhaustive()
    }
}

impl<F: Future<Output = ()>> IntoFuture for ProgressReport<'_, F> {
    type Output = ();
    type IntoFuture = F;

    fn into_future(self) -> F {
        (self.send)(self.parts)
    }
}

/// Sends the notification a report describes, if the client asked for progress.
async fn send_progress(parts: ReportParts<'_>) {
    let Some(token) = parts.token else {
        return;
    };
    let mut params = ProgressNotificationParams::new(parts.progress, token.clone());
    params.total = parts.total;
    params.message = parts.message;
    params.meta = parts.task.map(crate::tasks::related_task_meta);
    if let Err(e) = parts.peer.notify::<ProgressNotification>(params).await {
        tracing::debug!(error = %e, "progress notification not sent");
    }
}

/// Shared state of type `T`, registered once with
/// [`ServerBuilder::state`](crate::ServerBuilder::state) and handed to every handler that
/// asks for it.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use mcp_server::{Context, FromContext, Server, State};
///
/// #[derive(Default)]
/// struct Counter(AtomicU64);
///
/// fn bump(counter: State<Counter>) -> u64 {
///     counter.0.fetch_add(1, Ordering::Relaxed) + 1
/// }
///
/// let server = Server::builder("counter", "1.0").state(Counter::default()).build().unwrap();
/// # let _ = (server, bump);
/// ```
#[derive(Debug)]
pub struct State<T>(Arc<T>);

impl<T> State<T> {
    /// The shared value itself.
    pub fn into_arc(self) -> Arc<T> {
        self.0
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T> std::ops::Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Values shared by every handler of a server, by type.
pub(crate) type StateMap = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;
