//! The tasks extension of protocol revision 2026-07-28 (`io.modelcontextprotocol/tasks`,
//! SEP-2663): the server side of [`tasks`](crate::tasks) for requests of the stateless
//! revision. A `tools/call` of a task-supporting tool from a request that declares the
//! extension becomes a task (`resultType: "task"`, flat); `tasks/get` shows it (with its
//! `inputRequests`, `result` or `error` inlined), `tasks/update` answers its input requests,
//! `tasks/cancel` stops it. Rare paths: every future here is boxed by its caller.

use std::sync::{Arc, Mutex, OnceLock};

use mcp_jsonrpc::message;
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_jsonrpc::{CancellationToken, ErrorObject, Reply, RequestContext};
use mcp_types::{ClientCapabilities, ErrorCode, JsonObject, ProgressToken, Task, TaskStatus};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::call::{Call, run_tool};
use super::owner::extension_owner;
use super::reply::{Decoration, decorate, downgrade_content, respond};
use crate::context::Context;
use crate::def::registry::Registry;
use crate::serve::shared::ServerShared;
use crate::tasks::running::{Deferred, Escalate, Ran, TaskLink, Tasks};
use crate::tasks::store::TaskStore;
use crate::tasks::{CANCEL, EXTENSION, GET, TaskOutcome, UPDATE, is_terminal};

/// Whether the client capabilities declare the extension.
pub(crate) fn declared(capabilities: &ClientCapabilities) -> bool {
    capabilities.extensions.as_ref().is_some_and(|e| e.contains_key(EXTENSION))
}

/// -32021: the request needs the extension and did not declare it.
pub(crate) fn missing_extension(why: &str) -> ErrorObject {
    ErrorObject::with_data(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: {why} needs the `{EXTENSION}` extension"),
        json!({"requiredCapabilities": {"extensions": {EXTENSION: {}}}}),
    )
}

fn unknown_task(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("unknown task `{id}`"))
}

/// The extension's `Task` members of a stored task (`ttlMs`, `pollIntervalMs`).
fn task_members(task: &Task) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("taskId".into(), json!(task.task_id));
    out.insert("status".into(), serde_json::to_value(&task.status).unwrap_or(Value::Null));
    if let Some(message) = &task.status_message {
        out.insert("statusMessage".into(), json!(message));
    }
    out.insert("createdAt".into(), json!(task.created_at));
    out.insert("lastUpdatedAt".into(), json!(task.last_updated_at));
    out.insert("ttlMs".into(), json!(task.ttl));
    if let Some(interval) = task.poll_interval.filter(|i| *i > 0) {
        out.insert("pollIntervalMs".into(), json!(interval));
    }
    out
}

/// Encodes a result built as JSON, decorated for the stateless revision.
fn answer(server: &ServerShared, rctx: &RequestContext, mut result: Map<String, Value>, kind: &str) -> Reply {
    result.insert("resultType".into(), json!(kind));
    let mut result = Value::Object(result);
    decorate(&mut result, &Decoration::new(server, None));
    rctx.encode_result(&result)
}

/// The `CreateTaskResult` of a new task.
fn created(server: &ServerShared, rctx: &RequestContext, task: &Task) -> Reply {
    answer(server, rctx, task_members(task), "task")
}

// ---------------------------------------------------------------------------------------------
// tools/call

/// A `tools/call` of a tool that supports tasks, in a request of the stateless revision: a
/// task if the request declares the extension (at once, or where the handler awaits
/// [`Context::run_as_task`] for a tool with [`ToolDef::deferred_task`](crate::ToolDef::deferred_task)),
/// else a plain call (a tool that requires a task: -32021).
pub(crate) async fn call_tool(
    call: Call<'_>,
    tasks: &Arc<Tasks>,
    registry: Arc<Registry>,
    name: String,
    arguments: Option<JsonObject>,
    progress: Option<ProgressToken>,
) -> Reply {
    let Some(tool) = registry.tool(&name) else {
        return Err(ErrorObject::invalid_params(format!("unknown tool `{name}`")));
    };
    let declared = declared(&call.state.client_capabilities());
    if !declared {
        if tool.task_support == crate::tasks::TaskSupport::Required {
            return Err(missing_extension(&format!("tool `{name}`")));
        }
        let mut result = run_tool(tool, &name, arguments, call.context(progress)).await?;
        downgrade_content(&mut result.content, call.era.version);
        return respond(call.rctx, &result, call.era);
    }
    let deferred = tool.deferred_task;
    let owner = extension_owner(call.rctx);
    let ttl = tasks.config.ttl(requested_ttl(call.req));
    let mut ctx = call.context(progress);
    let server = call.server;
    if !deferred {
        let config = &tasks.config;
        let task = config
            .store
            .create(&owner, ttl, config.poll_interval)
            .await
            .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        let cancel = CancellationToken::new();
        tasks.started_with(&task.task_id, &owner, cancel.clone());
        ctx.cancel = cancel.clone();
        ctx.input_rounds = None;
        let link =
            TaskLink::new(task.task_id.clone(), owner, tasks.clone(), ctx.peer.clone(), true, ctx.layers.clone());
        let link = Arc::new(link);
        ctx.task = Some(link.clone());
        // The work continues the request's trace.
        let span = crate::trace::task_span(&name);
        crate::trace::record_task(&span, &task.task_id);
        let work = run(registry, name, arguments, ctx, tasks.clone(), cancel, Arc::new(OnceLock::from(link)), None);
        tokio::spawn(tracing::Instrument::instrument(work, span));
        return created(server, call.rctx, &task);
    }
    // Deferred: the handler runs now, as a plain call (input-required round trips included),
    // until it asks for its task.
    let cancel = CancellationToken::new();
    ctx.cancel = cancel.clone();
    let (tx, rx) = oneshot::channel();
    let tx = Arc::new(Mutex::new(Some(tx)));
    let slot = Arc::new(OnceLock::new());
    let span = crate::trace::task_span(&name);
    ctx.deferred = Some(Arc::new(Deferred {
        tasks: tasks.clone(),
        owner,
        ttl,
        link: slot.clone(),
        escalate: tx.clone(),
        cancel: cancel.clone(),
        span: span.clone(),
    }));
    // The request gone before the task exists: the handler stops.
    let guard = cancel.clone().drop_guard();
    let work = run(registry, name, arguments, ctx, tasks.clone(), cancel, slot, Some(tx));
    tokio::spawn(tracing::Instrument::instrument(work, span));
    let request_cancel = call.rctx.cancellation().clone();
    let outcome = tokio::select! {
        outcome = rx => outcome,
        () = request_cancel.cancelled() => return Err(ErrorObject::internal_error("the request was cancelled")),
    };
    match outcome {
        Ok(Ran::Task(task)) => {
            guard.disarm();
            created(server, call.rctx, &task)
        }
        Ok(Ran::Done(result)) => {
            let mut result = result?;
            downgrade_content(&mut result.content, call.era.version);
            respond(call.rctx, &result, call.era)
        }
        Err(_) => Err(ErrorObject::internal_error("the tool's handler stopped")),
    }
}

/// The ttl a request asks for its task, in milliseconds: the extension defines no member for
/// it, so the 2025-11-25 one is read (`task: {"ttl": ..}`). Anything else asks nothing.
fn requested_ttl(req: &message::Request) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct TaskMember {
        ttl: Option<i64>,
    }
    serde_json::from_str::<TaskMember>(req.param("task")?).ok()?.ttl
}

/// Runs a task's handler (in the background) and records how it ended: a result (even one
/// with `isError`) completes the task, a protocol error fails it, `tasks/cancel` stops it.
/// A deferred call that ends before its task begins hands its result to the request.
#[allow(clippy::too_many_arguments)]
async fn run(
    registry: Arc<Registry>,
    name: String,
    arguments: Option<JsonObject>,
    ctx: Context,
    tasks: Arc<Tasks>,
    cancel: CancellationToken,
    link: Arc<OnceLock<Arc<TaskLink>>>,
    escalate: Option<Escalate>,
) {
    let version = ctx.version;
    let outcome = match registry.tool(&name) {
        Some(tool) => tokio::select! {
            outcome = run_tool(tool, &name, arguments, ctx) => Some(outcome),
            () = cancel.cancelled() => None,
        },
        None => Some(Err(ErrorObject::invalid_params(format!("unknown tool `{name}`")))),
    };
    let Some(link) = link.get() else {
        // No task: the request waits for the result.
        if let (Some(outcome), Some(tx)) = (outcome, escalate.and_then(|e| e.lock_unpoisoned().take())) {
            let _ = tx.send(Ran::Done(outcome));
        }
        return;
    };
    if let Some(outcome) = outcome {
        let outcome: TaskOutcome = outcome.and_then(|mut result| {
            downgrade_content(&mut result.content, version);
            serde_json::to_value(mcp_types::ForRevision::new(&result, version)).map_err(ErrorObject::internal_error)
        });
        let status = if outcome.is_ok() { TaskStatus::Completed } else { TaskStatus::Failed };
        tasks.config.store.finish(&link.owner, &link.id, status, outcome).await;
        tasks.changed(&link.id);
    }
    tasks.ended(&link.id);
}

// ---------------------------------------------------------------------------------------------
// tasks/get, tasks/update, tasks/cancel

/// The detailed task of `tasks/get` (and of `notifications/tasks`): the task's members, with
/// its `inputRequests`, `result` or `error` as its status has them.
pub(crate) async fn detailed(store: &dyn TaskStore, owner: &str, id: &str) -> Result<Map<String, Value>, ErrorObject> {
    let stored = store.get(owner, id).await.ok_or_else(|| unknown_task(id))?;
    let mut members = task_members(&stored.task);
    match (&stored.task.status, stored.outcome) {
        (TaskStatus::InputRequired, _) => {
            let requests: Map<String, Value> = stored.input_requests.into_iter().collect();
            members.insert("inputRequests".into(), Value::Object(requests));
        }
        (TaskStatus::Completed | TaskStatus::Failed, Some(Ok(result))) => {
            members.insert("result".into(), result);
        }
        (TaskStatus::Failed, Some(Err(error))) => {
            members.insert("error".into(), serde_json::to_value(&error).map_err(ErrorObject::internal_error)?);
        }
        _ => {}
    }
    Ok(members)
}

/// Whether a method of the stateless revision is one of the extension's.
pub(crate) fn is_task_method(method: &str) -> bool {
    matches!(method, GET | UPDATE | CANCEL)
}

#[derive(serde::Deserialize)]
struct TaskParams {
    #[serde(rename = "taskId")]
    task_id: String,
    #[serde(rename = "inputResponses", default)]
    input_responses: Option<Value>,
}

/// Serves `tasks/get`, `tasks/update` or `tasks/cancel`: -32021 from a request that does not
/// declare the extension (before the task is looked up), -32602 for an unknown task.
pub(crate) async fn serve(
    server: &ServerShared,
    tasks: &Arc<Tasks>,
    req: &message::Request,
    rctx: &RequestContext,
    declared: bool,
) -> Reply {
    let method = req.method.as_str();
    if !declared {
        return Err(missing_extension(&format!("`{method}`")));
    }
    let params: TaskParams = message::decode_params(req.params.as_deref())?;
    let owner = extension_owner(rctx);
    let store = &tasks.config.store;
    let id = &params.task_id;
    match method {
        GET => answer(server, rctx, detailed(store.as_ref(), &owner, id).await?, "complete"),
        UPDATE => {
            let responses = match params.input_responses {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(responses)) => responses,
                Some(_) => return Err(ErrorObject::invalid_params("`inputResponses` must be an object")),
            };
            store.answer_input(&owner, id, responses).await.ok_or_else(|| unknown_task(id))?;
            tasks.input_arrived(id);
            tasks.changed(id);
            answer(server, rctx, Map::new(), "complete")
        }
        _ => {
            let stored = store.get(&owner, id).await.ok_or_else(|| unknown_task(id))?;
            if !is_terminal(&stored.task.status) {
                let message = Some("The task was cancelled by request.".to_owned());
                store.set_status(&owner, id, TaskStatus::Cancelled, message).await;
                tasks.cancel(id);
                tasks.changed(id);
            }
            answer(server, rctx, Map::new(), "complete")
        }
    }
}
