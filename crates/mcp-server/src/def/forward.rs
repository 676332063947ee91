//! Tasks run by another server: a server whose tools pass their task-augmented calls on (a
//! gateway, to the servers it mounts) answers the task methods through a [`TaskForwarder`]
//! ([`ServerBuilder::forward_tasks`](crate::ServerBuilder::forward_tasks)).

use std::future::Future;

use mcp_jsonrpc::{BoxFuture, ErrorObject};
use serde_json::Value;

use crate::context::Context;

/// Answers the task methods of a server whose tasks run elsewhere: `tasks/get`,
/// `tasks/result`, `tasks/list` and `tasks/cancel` (2025-11-25, in a session), and `tasks/get`,
/// `tasks/update` and `tasks/cancel` (the 2026-07-28 extension). It gets the method and its
/// params as they came, and a [`Context`] as a tool does (the request's client capabilities,
/// its session, its cancellation); what it answers is the request's result, sent as it is.
/// A 2026-07-28 request that does not declare the extension is -32021 before it is asked.
///
/// Implemented by closures `Fn(String, Option<Value>, Context) -> impl Future<Output =
/// Result<Value, ErrorObject>>`.
pub trait TaskForwarder: Send + Sync + 'static {
    /// Serves the task method `method` with `params`.
    fn forward(&self, method: String, params: Option<Value>, ctx: Context) -> BoxFuture<Result<Value, ErrorObject>>;

    /// Follows the tasks a 2026-07-28 `subscriptions/listen` names in `notifications.taskIds`
    /// (at most 64; the request declares the extension, `ctx` is the request's): the ids it
    /// follows, which the stream acknowledges, and their changes, each sent on the stream as a
    /// `notifications/tasks` while it lasts. By default it follows none (closures: none), so
    /// the ids are left out of the acknowledgement.
    fn follow(&self, task_ids: Vec<String>, ctx: Context) -> BoxFuture<FollowedTasks> {
        let _ = (task_ids, ctx);
        Box::pin(std::future::ready(FollowedTasks::none()))
    }
}

/// The tasks a [`TaskForwarder`] follows for one `subscriptions/listen` stream
/// ([`TaskForwarder::follow`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct FollowedTasks {
    /// The ids followed (those the forwarder knows and the requester may read).
    pub task_ids: Vec<String>,
    /// Each change of one of them: the params of a `notifications/tasks`, the task as
    /// `tasks/get` details it (its `_meta` is set by the stream). Dropped when the stream ends.
    pub changes: tokio::sync::mpsc::Receiver<serde_json::Map<String, Value>>,
}

impl FollowedTasks {
    /// The tasks `task_ids`, whose changes come on `changes`.
    pub fn new(task_ids: Vec<String>, changes: tokio::sync::mpsc::Receiver<serde_json::Map<String, Value>>) -> Self {
        FollowedTasks { task_ids, changes }
    }

    /// No task followed.
    pub fn none() -> Self {
        FollowedTasks::new(Vec::new(), tokio::sync::mpsc::channel(1).1)
    }
}

impl<F, Fut> TaskForwarder for F
where
    F: Fn(String, Option<Value>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    fn forward(&self, method: String, params: Option<Value>, ctx: Context) -> BoxFuture<Result<Value, ErrorObject>> {
        Box::pin(self(method, params, ctx))
    }
}
