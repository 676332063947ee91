//! One connection to a mounted server ([`Upstream`]) and what a call passed over it needs: its
//! options (progress passed back in order, cancellation passed on) and its failures told to
//! the gateway's client.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use mcp_client::{CallOptions, Client, ClientError};
use mcp_server::{Context, ToolError};
use mcp_types::{CallToolResult, ErrorObject};

use crate::link::Link;

/// The bound on the progress notifications of one call waiting to be passed on; more are
/// dropped (the next one says as much).
const PROGRESS_QUEUE: usize = 64;

/// One gateway session's connection to the mounted server (or one of the stateless requests'
/// pool), opened at its first call and again after it was lost.
#[derive(Default)]
pub(crate) struct Upstream {
    pub(crate) link: Arc<Link>,
    pub(crate) client: tokio::sync::Mutex<Option<Arc<Client>>>,
    /// Whether this connection listed the tools (see `Mount::call_tool`).
    pub(crate) listed: AtomicBool,
}

/// What a call's progress task is given.
pub(crate) enum Progressed {
    /// A notification of the mounted server, passed on.
    Report(mcp_types::ProgressNotificationParams),
    /// Answered once what came before is passed on.
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// Waits until the progress notifications queued on `progress` are passed on.
pub(crate) async fn flush(progress: Option<tokio::sync::mpsc::Sender<Progressed>>) {
    let Some(progress) = progress else { return };
    let (done, sent) = tokio::sync::oneshot::channel();
    if progress.send(Progressed::Flush(done)).await.is_ok() {
        let _ = sent.await;
    }
}

/// Why a call could not reach the mounted server.
pub(crate) struct Down(pub(crate) String);

/// Options of a call passed on for `ctx`: its progress passed back (in order, through one
/// task per call, whose queue the returned sender flushes), its cancellation passed on.
pub(crate) fn options(ctx: &Context) -> (CallOptions, Option<tokio::sync::mpsc::Sender<Progressed>>) {
    let mut options = CallOptions::default().cancel_on(ctx.cancellation().clone());
    let reporter = ctx.progress_reporter();
    if !reporter.is_requested() {
        return (options, None);
    }
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Progressed>(PROGRESS_QUEUE);
    tokio::spawn(async move {
        while let Some(progressed) = rx.recv().await {
            let p = match progressed {
                Progressed::Report(p) => p,
                Progressed::Flush(done) => {
                    let _ = done.send(());
                    continue;
                }
            };
            let mut report = reporter.report(p.progress);
            if let Some(total) = p.total {
                report = report.total(total);
            }
            if let Some(message) = p.message {
                report = report.message(message);
            }
            report.await;
        }
    });
    let queue = tx.clone();
    options.progress = Some(Arc::new(move |p| {
        if queue.try_send(Progressed::Report(p)).is_err() {
            tracing::debug!("a progress notification of a mounted server dropped: the client reads too slowly");
        }
    }));
    (options, Some(tx))
}

impl Upstream {
    /// A failure of this connection to the mount `prefix` as a JSON-RPC error for the
    /// gateway's client; a lost connection is forgotten, so that the next call opens another.
    pub(crate) fn error(&self, prefix: &str, e: ClientError) -> ErrorObject {
        match e {
            ClientError::Remote(error) => error,
            // The gateway's client answered the mounted server's input request (2026-07-28)
            // with input that is not valid: the error of the client's request, as the
            // mounted server alone would answer it (-32602).
            ClientError::Input { error, .. } if error.code == mcp_types::ErrorCode::INVALID_PARAMS.0 => error,
            other => {
                if let Ok(mut client) = self.client.try_lock()
                    && client.as_ref().is_some_and(|c| c.peer().is_closed())
                {
                    *client = None;
                }
                ErrorObject::internal_error(format!("mounted server `{prefix}` failed: {other}"))
            }
        }
    }
}

/// What a tool call that failed with `e` answers the gateway's client: the mounted server's
/// error as it is; the client's input that is not valid (2026-07-28) as its request's error
/// (-32602), not the model's; else the mounted server down ([`failed_call`]).
pub(crate) fn call_failed(prefix: &str, upstream: &Upstream, e: ClientError) -> Result<CallToolResult, ToolError> {
    match e {
        ClientError::Remote(error) => Err(ToolError::Protocol(error)),
        ClientError::Input { error, .. } if error.code == mcp_types::ErrorCode::INVALID_PARAMS.0 => {
            Err(ToolError::Protocol(error))
        }
        // The mounted server is down: an error for the model, the gateway goes on.
        e => Ok(failed_call(prefix, upstream, e)),
    }
}

/// A tool call that failed on its way to the mounted server `prefix` or back (the server
/// down, the connection lost): an error result for the model, naming the mount; the gateway
/// goes on. A warning only then: a call that waits for the client's input (2026-07-28: the
/// gateway's client is asked, and retries the call with the answer) is the normal flow,
/// logged at debug level.
pub(crate) fn failed_call(prefix: &str, upstream: &Upstream, e: ClientError) -> CallToolResult {
    let waits = awaits_input(&e);
    let message = upstream.error(prefix, e).message;
    if waits {
        tracing::debug!(mount = prefix, "{message}");
    } else {
        tracing::warn!(mount = prefix, "{message}");
    }
    CallToolResult::error(message)
}

/// Whether `e` says the gateway's client has yet to answer the mounted server's input request
/// (2026-07-28: the gateway's answer asks for it).
fn awaits_input(e: &ClientError) -> bool {
    matches!(e, ClientError::Input { error, .. } if *error == ErrorObject::from(mcp_server::ClientRequestError::InputRequired))
}
