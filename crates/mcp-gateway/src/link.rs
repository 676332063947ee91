//! The gateway's side of one upstream connection, opened for one gateway session: the
//! session's calls in flight on it, to which the mounted server's requests (sampling,
//! elicitation, roots) and log messages are passed.
//!
//! A mounted server's request does not say which of our calls it serves (over stdio nothing
//! does), so each gateway session gets its own upstream connection: everything the mounted
//! server asks on it is for that session's client. Of that session's calls in flight on it,
//! the latest one carries the request (it reaches the same client either way; over HTTP it
//! goes on that call's response stream).

use std::sync::{Arc, Mutex, OnceLock};

use mcp_client::{ClientBuilder, ServerEvent};
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_server::Context;
use mcp_types::{ClientCapabilities, ErrorObject, LoggingMessageNotificationParams};
use tokio::sync::{mpsc, oneshot};

/// The bound on the log messages of a mounted server waiting to be passed on; more are
/// dropped.
const LOG_QUEUE: usize = 256;

/// The calls of one gateway session in flight on one upstream connection.
#[derive(Default)]
pub(crate) struct Link {
    calls: Mutex<Calls>,
    /// The gateway session outside its calls (see [`crate::session`]).
    pub(crate) home: OnceLock<Context>,
    /// Called when the last call in flight leaves, with whether it ended uncancelled (see
    /// [`crate::pool`]).
    pub(crate) idle: OnceLock<Box<dyn Fn(bool) + Send + Sync>>,
    /// The log messages passed on in the order they came, by one task (started at the first).
    logs: OnceLock<mpsc::Sender<Forward>>,
    /// The prefix of the mount this connection reaches, whose task ids it names (see
    /// [`Link::pass_task_status`]).
    pub(crate) mount: OnceLock<String>,
}

/// What the log task is given.
enum Forward {
    /// A message, for the call that carries it.
    Log(Box<(Context, LoggingMessageNotificationParams)>),
    /// A custom notification (its method and params), for the call that carries it.
    Notify(Box<(Context, String, Option<serde_json::Value>)>),
    /// A task's status, for the gateway session (2025-11-25).
    Status(Box<(Context, mcp_types::Task)>),
    /// Answered once what came before is sent.
    Flush(oneshot::Sender<()>),
}

#[derive(Default)]
struct Calls {
    next: u64,
    /// In the order they began; as many as the gateway serves at once for the session.
    running: Vec<(u64, Context)>,
}

/// A call in flight on a [`Link`]; it leaves when dropped.
pub(crate) struct InFlight {
    link: Arc<Link>,
    id: u64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut calls = self.link.calls.lock_unpoisoned();
        let Some(at) = calls.running.iter().position(|(id, _)| *id == self.id) else { return };
        let (_, ctx) = calls.running.remove(at);
        let idle = calls.running.is_empty();
        drop(calls);
        if idle && let Some(idle) = self.link.idle.get() {
            idle(!ctx.is_cancelled());
        }
    }
}

impl Link {
    /// Records a call of the gateway session in flight until the guard drops.
    pub(crate) fn enter(self: &Arc<Self>, ctx: &Context) -> InFlight {
        let mut calls = self.calls.lock_unpoisoned();
        calls.next += 1;
        let id = calls.next;
        calls.running.push((id, ctx.clone()));
        InFlight { link: self.clone(), id }
    }

    /// The log task's queue, the task started if it was not.
    fn logs(&self) -> &mpsc::Sender<Forward> {
        self.logs.get_or_init(|| {
            let (tx, mut rx) = mpsc::channel(LOG_QUEUE);
            tokio::spawn(async move {
                while let Some(forward) = rx.recv().await {
                    match forward {
                        Forward::Log(log) => {
                            let (ctx, message) = *log;
                            match &message.logger {
                                Some(logger) => ctx.logger(logger).log(message.level, message.data).await,
                                None => ctx.log(message.level, message.data).await,
                            }
                        }
                        Forward::Notify(notification) => {
                            let (ctx, method, params) = *notification;
                            if let Err(e) = ctx.notify_raw(&method, params).await {
                                tracing::debug!(error = %e, method, "a custom notification not passed on");
                            }
                        }
                        Forward::Status(status) => {
                            let (ctx, task) = *status;
                            let params = mcp_types::TaskStatusNotificationParams::from(task);
                            if let Err(e) = ctx.peer().notify::<mcp_types::TaskStatusNotification>(params).await {
                                tracing::debug!(error = %e, "a task status notification not passed on");
                            }
                        }
                        Forward::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            });
            tx
        })
    }

    /// Passes the mounted server's custom notification on to the gateway's client, in order
    /// with its log messages.
    pub(crate) fn pass_notification(&self, method: &str, params: Option<serde_json::Value>) {
        let Some(ctx) = self.current() else {
            tracing::debug!(
                method,
                "a mounted server's notification outside any call of a stateless request: not passed on"
            );
            return;
        };
        if self.logs().try_send(Forward::Notify(Box::new((ctx, method.to_owned(), params)))).is_err() {
            tracing::debug!(method, "a mounted server's notification dropped: the client reads too slowly");
        }
    }

    /// Passes the mounted server's `notifications/tasks/status` (2025-11-25) on to the gateway
    /// session this connection serves, which owns the task (a session's tasks are made over
    /// its own connection), under the gateway's id of the task, in order with the log
    /// messages.
    pub(crate) fn pass_task_status(&self, mut task: mcp_types::Task) {
        let (Some(mount), Some(home)) = (self.mount.get(), self.home.get()) else {
            tracing::debug!("a mounted server's task status outside a session: not passed on");
            return;
        };
        task.task_id = crate::names::gateway_id(mount, &task.task_id);
        if self.logs().try_send(Forward::Status(Box::new((home.clone(), task)))).is_err() {
            tracing::debug!("a mounted server's task status dropped: the client reads too slowly");
        }
    }

    /// Waits until the log messages that came so far are sent: a call's result goes after the
    /// messages its mounted server sent before it, as it came.
    pub(crate) async fn flushed(&self) {
        let Some(logs) = self.logs.get() else { return };
        let (done, sent) = oneshot::channel();
        if logs.send(Forward::Flush(done)).await.is_ok() {
            let _ = sent.await;
        }
    }

    /// The latest call in flight, which carries the mounted server's requests; with none,
    /// the gateway session itself (a session revision's).
    pub(crate) fn current(&self) -> Option<Context> {
        let latest = self.calls.lock_unpoisoned().running.last().map(|(_, ctx)| ctx.clone());
        latest.or_else(|| self.home.get().cloned())
    }

    /// `builder` with handlers that pass the mounted server's requests and log messages to
    /// the gateway's client, declaring to the mounted server what that client declared
    /// (`client`: the gateway session's client's capabilities).
    pub(crate) fn client(self: &Arc<Self>, mut builder: ClientBuilder, client: &ClientCapabilities) -> ClientBuilder {
        if let Some(sampling) = &client.sampling {
            let link = self.clone();
            builder = builder.on_sampling(move |params| {
                let ctx = link.current();
                let key = mcp_client::input_key();
                async move {
                    let ctx = ctx.ok_or_else(no_call)?;
                    match key {
                        Some(key) => ctx.create_message_as(&key, params).await,
                        None => ctx.create_message(params).await,
                    }
                    .map_err(ErrorObject::from)
                }
            });
            if sampling.tools.is_some() {
                builder = builder.sampling_tools();
            }
            if sampling.context.is_some() {
                builder = builder.sampling_context();
            }
        }
        if let Some(elicitation) = &client.elicitation {
            let link = self.clone();
            builder = builder.on_elicitation(move |params| {
                let ctx = link.current();
                let key = mcp_client::input_key();
                async move {
                    let ctx = ctx.ok_or_else(no_call)?;
                    match key {
                        Some(key) => ctx.elicit_raw_as(&key, params).await,
                        None => ctx.elicit_raw(params).await,
                    }
                    .map_err(ErrorObject::from)
                }
            });
            if elicitation.url.is_some() {
                builder = builder.elicitation_url_mode();
            }
        }
        if client.roots.is_some() {
            let link = self.clone();
            builder = builder.on_roots(move || {
                let ctx = link.current();
                let key = mcp_client::input_key();
                async move {
                    let ctx = ctx.ok_or_else(no_call)?;
                    let listed = match key {
                        Some(key) => ctx.list_roots_as(&key).await,
                        None => ctx.list_roots().await,
                    };
                    Ok(listed.map_err(ErrorObject::from)?.roots)
                }
            });
        }
        if client.extensions.as_ref().is_some_and(|e| e.contains_key(crate::names::EXTENSION)) {
            // Its tasks are passed on (2026-07-28).
            builder = builder.extension(crate::names::EXTENSION, Default::default());
        }
        if mcp_types::apps::supports_html(client) {
            // It renders MCP Apps: the mounted server answers it as such a client
            // (`Context::client_supports_apps`).
            builder = builder.apps();
        }
        let link = Arc::downgrade(self);
        builder.on_event(move |event| {
            let message = match event {
                ServerEvent::Log(message) => message,
                ServerEvent::TaskStatus(task) => {
                    if let Some(link) = link.upgrade() {
                        link.pass_task_status(task);
                    }
                    return;
                }
                _ => return,
            };
            let Some(link) = link.upgrade() else { return };
            let Some(ctx) = link.current() else {
                tracing::debug!(
                    "a mounted server's log message outside any call of a stateless request: not passed on"
                );
                return;
            };
            if link.logs().try_send(Forward::Log(Box::new((ctx, message)))).is_err() {
                tracing::debug!("a mounted server's log message dropped: the client reads too slowly");
            }
        })
    }
}

/// A mounted server asked something of the client while no call of the session was in
/// flight: there is no request to carry it.
fn no_call() -> ErrorObject {
    ErrorObject::internal_error("the gateway has no call in flight to carry this request to its client")
}
