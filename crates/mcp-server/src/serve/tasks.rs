//! The task methods of protocol revision 2025-11-25 (`tasks/get`, `tasks/result`,
//! `tasks/list`, `tasks/cancel`) and the start of a task-augmented `tools/call`: the server
//! side of [`tasks`](crate::tasks).

// As in `dispatch`: futures as async blocks.
#![allow(clippy::manual_async_fn)]

use std::future::Future;
use std::sync::Arc;

use mcp_jsonrpc::{ErrorObject, Reply};
use mcp_types::{
    CancelTaskRequest, CancelTaskRequestParams, GetTaskPayloadRequest, GetTaskPayloadRequestParams, GetTaskRequest,
    GetTaskRequestParams, JsonObject, ListTasksRequest, ListTasksResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, TaskMetadata, TaskStatus,
};
use serde_json::Value;

use super::call::{Call, Serve, ToolCall, run_tool};
use super::owner::session_owner;
use super::reply::{downgrade_tool_result, respond};
use crate::context::Context;
use crate::def::registry::Registry;
use crate::tasks::TaskSupport;
use crate::tasks::running::{TaskLink, Tasks, notify_status};
use crate::tasks::{TaskOutcome, is_terminal, related_task};

/// The server's tasks, when this request may use them: the server declared the capability and
/// the request is of a session of revision 2025-11-25 (before it tasks do not exist; in
/// 2026-07-28 they are an extension of another shape).
pub(crate) fn offered<'a>(call: &Call<'a>) -> Option<&'a Arc<Tasks>> {
    let tasks = call.server.tasks.as_ref()?;
    (call.era.version == ProtocolVersion::V2025_11_25 && !call.era.is_stateless()).then_some(tasks)
}

/// The tasks of a request to a task method: -32601 where tasks are not offered.
fn tasks_of<'a, R: mcp_types::Request>(call: &Call<'a>) -> Result<&'a Arc<Tasks>, ErrorObject> {
    offered(call).ok_or_else(|| ErrorObject::method_not_found(R::METHOD))
}

fn unknown_task(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("unknown task `{id}`"))
}

/// The `task` member of a 2025-11-25 `tools/call` in a session (a client that asks for a
/// task), on a server that forwards tasks; `None` elsewhere. Rare: read only then.
#[cold]
pub(crate) fn requested(call: &Call<'_>) -> Result<Option<TaskMetadata>, ErrorObject> {
    if call.era.version != ProtocolVersion::V2025_11_25 || call.era.is_stateless() {
        return Ok(None);
    }
    #[derive(serde::Deserialize)]
    struct TaskMember {
        #[serde(default)]
        task: Option<TaskMetadata>,
    }
    let text = call.req.params.as_deref().map_or("{}", serde_json::value::RawValue::get);
    Ok(serde_json::from_str::<TaskMember>(text).map_err(ErrorObject::invalid_params)?.task)
}

/// A task method of a 2025-11-25 session on a server whose tasks run elsewhere: its params as
/// they came, given to the forwarder; `None` where the server forwards none.
fn forwarded<R: mcp_types::Request>(call: &Call<'_>) -> Option<futures_util::future::BoxFuture<'static, Reply>> {
    let forwarder = call.server.task_forwarder.as_ref()?;
    if call.era.version != ProtocolVersion::V2025_11_25 || call.era.is_stateless() {
        return None;
    }
    let params = match call.req.params.as_deref().map(|p| serde_json::from_str::<Value>(p.get())).transpose() {
        Ok(params) => params,
        Err(e) => return Some(Box::pin(std::future::ready(Err(ErrorObject::invalid_params(e))))),
    };
    let answer = forwarder.forward(R::METHOD.to_owned(), params, call.context(None));
    let rctx = call.rctx.clone();
    Some(Box::pin(async move { rctx.encode_result(&answer.await?) }))
}

/// Where a `tools/call` goes on a server with task tools: `Ok` with the (boxed) answer of a
/// call that is a task or is refused for not being one, `Err` with the input of a plain call.
///
/// - 2026-07-28 (the extension): a task-supporting tool is served by `tasks_ext`, which
///   decides by the request's declared capabilities;
/// - 2025-11-25: a task of a `forbidden` tool, or a plain call of a `required` one, is -32601;
///   a `task` member starts a task;
/// - otherwise (an unknown tool included) the plain call.
pub(crate) fn route<'a>(
    call: &Call<'a>,
    tasks: &'a Arc<Tasks>,
    input: ToolCall<'a>,
) -> Result<futures_util::future::BoxFuture<'a, Reply>, ToolCall<'a>> {
    use futures_util::FutureExt as _;
    // A session whose client did not offer tasks makes plain calls only: decided before the
    // registry is read (the plain path reads it).
    if !call.era.is_stateless() && offered(call).is_none() {
        return Err(input);
    }
    let registry = call.server.registry();
    // A tool hidden from the request takes the plain path, which answers it is unknown.
    let Some(tool) = registry.tool(&input.name).filter(|t| call.sees(t.item())) else { return Err(input) };
    let support = tool.task_support;
    if call.era.is_stateless() {
        if support == TaskSupport::Forbidden {
            return Err(input);
        }
        let ToolCall { name, arguments, progress, .. } = input;
        let future =
            super::tasks_ext::call_tool(*call, tasks, registry.clone(), name.into_owned(), arguments, progress);
        return Ok(future.boxed());
    }
    // The `task` member, read only here: a plain call's params decoding does not look for it.
    #[derive(serde::Deserialize)]
    struct TaskMember {
        #[serde(default)]
        task: Option<TaskMetadata>,
    }
    let text = call.req.params.as_deref().map_or("{}", serde_json::value::RawValue::get);
    let task = match serde_json::from_str::<TaskMember>(text) {
        Ok(member) => member.task,
        Err(e) => return Ok(std::future::ready(Err(ErrorObject::invalid_params(e))).boxed()),
    };
    let refuse = |message: String| {
        let error = ErrorObject::new(mcp_types::ErrorCode::METHOD_NOT_FOUND.code(), message);
        Ok(std::future::ready(Err(error)).boxed())
    };
    match (support, task) {
        (TaskSupport::Forbidden, Some(_)) => refuse(format!("tool `{}` cannot be called as a task", input.name)),
        (TaskSupport::Required, None) => refuse(format!("tool `{}` must be called as a task", input.name)),
        (_, Some(meta)) => {
            let Some(owner) = session_owner(call) else {
                return refuse(format!(
                    "tool `{}` cannot be called as a task here: the request is in no session (a stateless \
                     endpoint) and names no principal, so the task could be given back to nobody; call it \
                     without `task`",
                    input.name
                ));
            };
            let ToolCall { name, arguments, progress } = input;
            let ctx = call.context(progress);
            Ok(start(call, tasks, owner, registry.clone(), name.into_owned(), arguments, ctx, meta).boxed())
        }
        (_, None) => Err(input),
    }
}

/// Starts a task-augmented `tools/call`: creates the task, runs the tool in the background and
/// answers with the task at once (`CreateTaskResult`); the task is `owner`'s.
#[allow(clippy::too_many_arguments)]
pub(crate) fn start<'a>(
    call: &Call<'a>,
    tasks: &'a Arc<Tasks>,
    owner: String,
    registry: Arc<Registry>,
    name: String,
    arguments: Option<JsonObject>,
    mut ctx: Context,
    meta: TaskMetadata,
) -> impl Future<Output = Reply> + Send + 'a {
    let peer = call.rctx.peer().clone();
    let version = call.era.version;
    let era = call.era;
    let rctx = call.rctx;
    async move {
        let config = &tasks.config;
        let task = config
            .store
            .create(&owner, config.ttl(meta.ttl), config.poll_interval)
            .await
            .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        let id = task.task_id.clone();
        ctx.cancel = tasks.started(&id, &owner);
        let layers = ctx.layers.clone();
        let link = TaskLink::new(id.clone(), owner.clone(), tasks.clone(), peer.clone(), false, layers.clone());
        ctx.task = Some(Arc::new(link));
        let tasks = tasks.clone();
        // The work continues the request's trace.
        let span = crate::trace::task_span(&name);
        crate::trace::record_task(&span, &id);
        let cancel = ctx.cancel.clone();
        let work = async move {
            let outcome: TaskOutcome = match registry.tool(&name) {
                // `tasks/cancel` stops the handler (its future dropped, as a cancelled
                // request's is), whether or not it watches its cancellation token.
                Some(tool) => match tokio::select! {
                    outcome = run_tool(tool, &name, arguments, ctx) => outcome,
                    () = cancel.cancelled() => {
                        tasks.ended(&id);
                        return;
                    }
                } {
                    Ok(mut result) => {
                        downgrade_tool_result(&mut result, tool.wraps_output, version);
                        serde_json::to_value(mcp_types::ForRevision::new(&result, version))
                            .map_err(ErrorObject::internal_error)
                    }
                    Err(e) => Err(e),
                },
                None => Err(ErrorObject::invalid_params(format!("unknown tool `{name}`"))),
            };
            let status = match &outcome {
                Ok(result) if result.get("isError") == Some(&Value::Bool(true)) => TaskStatus::Failed,
                Ok(_) => TaskStatus::Completed,
                Err(_) => TaskStatus::Failed,
            };
            if let Some(task) = tasks.config.store.finish(&owner, &id, status.clone(), outcome).await
                && task.status == status
            {
                notify_status(layers.as_ref(), &peer, &task).await;
            }
            tasks.ended(&id);
        };
        tokio::spawn(tracing::Instrument::instrument(work, span));
        let mut created = serde_json::Map::new();
        created.insert(
            "task".to_owned(),
            serde_json::to_value(mcp_types::ForRevision::new(&task, version)).map_err(ErrorObject::internal_error)?,
        );
        respond(rctx, &Value::Object(created), era)
    }
}

impl Serve for GetTaskRequest {
    type Input<'a> = GetTaskRequestParams;
    fn offered(capabilities: &ServerCapabilities) -> bool {
        capabilities.tasks.is_some()
    }
    fn serve<'a>(call: &Call<'a>, input: GetTaskRequestParams) -> impl Future<Output = Reply> + Send {
        let forwarded = forwarded::<Self>(call);
        let owner = session_owner(call);
        let call = *call;
        Box::pin(async move {
            if let Some(forwarded) = forwarded {
                return forwarded.await;
            }
            let tasks = tasks_of::<Self>(&call)?;
            let owner = owner.ok_or_else(|| unknown_task(&input.task_id))?;
            let stored =
                tasks.config.store.get(&owner, &input.task_id).await.ok_or_else(|| unknown_task(&input.task_id))?;
            respond(call.rctx, &stored.task, call.era)
        })
    }
}

impl Serve for GetTaskPayloadRequest {
    type Input<'a> = GetTaskPayloadRequestParams;
    fn offered(capabilities: &ServerCapabilities) -> bool {
        capabilities.tasks.is_some()
    }
    /// Blocks until the task is terminal, then answers what the request would have: its
    /// result (with the related-task `_meta`) or its error.
    fn serve<'a>(call: &Call<'a>, input: GetTaskPayloadRequestParams) -> impl Future<Output = Reply> + Send {
        let forwarded = forwarded::<Self>(call);
        let owner = session_owner(call);
        let call = *call;
        Box::pin(async move {
            if let Some(forwarded) = forwarded {
                return forwarded.await;
            }
            let tasks = tasks_of::<Self>(&call)?;
            let id = &input.task_id;
            let owner = owner.ok_or_else(|| unknown_task(id))?;
            let stored = tasks.wait_terminal(&owner, id).await.ok_or_else(|| unknown_task(id))?;
            match stored.outcome {
                Some(Ok(mut result)) => {
                    if let Value::Object(members) = &mut result {
                        let meta = members.entry("_meta").or_insert_with(|| Value::Object(Default::default()));
                        if let Value::Object(meta) = meta {
                            meta.insert(mcp_types::meta::RELATED_TASK.to_owned(), related_task(id));
                        }
                    }
                    call.rctx.encode_result(&result)
                }
                Some(Err(error)) => Err(error),
                None => Err(ErrorObject::new(
                    mcp_types::ErrorCode::INTERNAL_ERROR.code(),
                    format!("task `{id}` was cancelled before it finished"),
                )),
            }
        })
    }
}

impl Serve for ListTasksRequest {
    type Input<'a> = Option<PaginatedRequestParams>;
    fn offered(capabilities: &ServerCapabilities) -> bool {
        capabilities.tasks.is_some()
    }
    fn serve<'a>(call: &Call<'a>, input: Option<PaginatedRequestParams>) -> impl Future<Output = Reply> + Send {
        let forwarded = forwarded::<Self>(call);
        let owner = session_owner(call);
        let call = *call;
        Box::pin(async move {
            if let Some(forwarded) = forwarded {
                return forwarded.await;
            }
            let tasks = tasks_of::<Self>(&call)?;
            // Nobody's tasks: none.
            let Some(owner) = owner else { return respond(call.rctx, &ListTasksResult::new(Vec::new()), call.era) };
            let cursor = input.and_then(|p| p.cursor);
            let page = tasks.config.store.list(&owner, cursor.as_deref(), tasks.config.page_size).await?;
            let mut result = ListTasksResult::new(page.tasks);
            result.next_cursor = page.next_cursor;
            respond(call.rctx, &result, call.era)
        })
    }
}

impl Serve for CancelTaskRequest {
    type Input<'a> = CancelTaskRequestParams;
    fn offered(capabilities: &ServerCapabilities) -> bool {
        capabilities.tasks.is_some()
    }
    /// Moves the task to `cancelled` (a terminal task is -32602) and stops its handler.
    fn serve<'a>(call: &Call<'a>, input: CancelTaskRequestParams) -> impl Future<Output = Reply> + Send {
        let forwarded = forwarded::<Self>(call);
        let owner = session_owner(call);
        let call = *call;
        Box::pin(async move {
            if let Some(forwarded) = forwarded {
                return forwarded.await;
            }
            let tasks = tasks_of::<Self>(&call)?;
            let id = &input.task_id;
            let owner = owner.ok_or_else(|| unknown_task(id))?;
            let store = &tasks.config.store;
            let stored = store.get(&owner, id).await.ok_or_else(|| unknown_task(id))?;
            if is_terminal(&stored.task.status) {
                return Err(ErrorObject::invalid_params(format!(
                    "task `{id}` is already {}",
                    serde_json::to_value(&stored.task.status)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                )));
            }
            let message = Some("The task was cancelled by request.".to_owned());
            let task =
                store.set_status(&owner, id, TaskStatus::Cancelled, message).await.ok_or_else(|| unknown_task(id))?;
            tasks.cancel(id);
            // In a fleet, the instance that runs it hears of it.
            tasks.changed(id);
            let layers = (!call.server.outgoing.is_empty()).then_some(&call.server.outgoing);
            notify_status(layers, call.rctx.peer(), &task).await;
            respond(call.rctx, &task, call.era)
        })
    }
}
