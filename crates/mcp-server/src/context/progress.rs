//! Progress of a request: the [`Progress`] reporter a handler keeps, and the report
//! ([`ProgressReport`]) it builds and sends by awaiting it.

use std::future::{Future, IntoFuture};
use std::sync::Arc;

use mcp_jsonrpc::Peer;
use mcp_types::{ProgressNotification, ProgressNotificationParams, ProgressToken};

use crate::tasks::running::TaskLink;

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
#[derive(Clone)]
pub struct Progress {
    peer: Peer,
    token: Option<ProgressToken>,
    /// The task the request runs as (2025-11-25), named in each notification's `_meta`.
    task: Option<Arc<str>>,
    /// The server's middleware, if any.
    layers: Option<crate::middleware::outgoing::Layers>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress").field("token", &self.token).field("task", &self.task).finish_non_exhaustive()
    }
}

impl Progress {
    pub(crate) fn new(
        peer: Peer,
        token: Option<ProgressToken>,
        task: Option<Arc<str>>,
        layers: Option<crate::middleware::outgoing::Layers>,
    ) -> Self {
        Progress { peer, token, task, layers }
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
        progress_report(&self.peer, self.layers.as_ref(), self.token.as_ref(), self.task.as_deref(), None, progress)
    }
}

/// A progress notification being built: made by [`Progress::report`] or
/// [`Context::progress`](crate::Context::progress), sent when awaited (if the client asked for progress; otherwise
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
    layers: Option<&'a crate::middleware::outgoing::Layers>,
    token: Option<&'a ProgressToken>,
    task: Option<&'a str>,
    /// An extension task, whose status message the report becomes.
    link: Option<&'a TaskLink>,
    progress: f64,
    total: Option<f64>,
    message: Option<String>,
}

/// A report of `progress` on the request whose progress token is `token` (none: the client
/// did not ask for progress).
pub(crate) fn progress_report<'a>(
    peer: &'a Peer,
    layers: Option<&'a crate::middleware::outgoing::Layers>,
    token: Option<&'a ProgressToken>,
    task: Option<&'a str>,
    link: Option<&'a TaskLink>,
    progress: f64,
) -> ProgressReport<'a, impl Future<Output = ()> + Send + 'a> {
    let parts = ReportParts { peer, layers, token, task, link, progress, total: None, message: None };
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
    if let Some(link) = parts.link {
        let text = match (&parts.message, parts.total) {
            (Some(message), _) => message.clone(),
            (None, Some(total)) => format!("{}/{total}", parts.progress),
            (None, None) => parts.progress.to_string(),
        };
        link.progressed(text).await;
    }
    let Some(token) = parts.token else {
        return;
    };
    let mut params = ProgressNotificationParams::new(parts.progress, token.clone());
    params.total = parts.total;
    params.message = parts.message;
    params.meta = parts.task.map(crate::tasks::related_task_meta);
    let sent = crate::middleware::outgoing::notify::<ProgressNotification>(parts.layers, parts.peer, params, None);
    if let Err(e) = sent.await {
        tracing::debug!(error = %e, "progress notification not sent");
    }
}
