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
