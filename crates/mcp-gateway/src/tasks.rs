//! Tasks passed through: a mounted tool that the mounted server runs as a task is listed with
//! its `execution.taskSupport`, and a call of it that asks for a task (the `task` member in
//! 2025-11-25, the tasks extension declared in 2026-07-28) asks the mounted server for one and
//! answers the task it made ([`ToolError::Task`]); the gateway keeps no task of its own. Task
//! ids are namespaced by mount (`prefix:id`, `:id` for the unprefixed mount), so that the task
//! methods (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`; `tasks/update` of the
//! extension), which the gateway's server hands to [`forward`], reach the mount that owns the
//! task, over the connection of the request's gateway session (2025-11-25: a task belongs to
//! the session that made it) or one of its own (2026-07-28).
//!
//! A 2026-07-28 `subscriptions/listen` that names tasks (`notifications.taskIds`) has them
//! followed ([`Forwarder`]'s `follow`): for each mount it names tasks of, a subscription of
//! the catalog connection to the mounted server's tasks; each change it tells is read again
//! (`tasks/get`, as the gateway's client would) and sent on the gateway's stream under the
//! gateway's id. The ids followed are those the mounted server answers `tasks/get` for.

use std::sync::Arc;

use mcp_client::tasks::ToolTask;
use mcp_client::{CallOptions, Client, ClientError, ServerEvent, Subscription};
use mcp_jsonrpc::BoxFuture;
use mcp_server::{Context, FollowedTasks, TaskForwarder, ToolError};
use mcp_types::{
    CallToolRequestParams, CallToolResult, ErrorObject, JsonObject, ProtocolVersion, ServerCapabilities, Task,
    TaskMetadata,
};
use serde_json::{Value, json};

use crate::names::{EXTENSION, TASK_SEPARATOR as SEPARATOR, gateway_id};
use crate::upstream::{Upstream, flush};

/// Whether the client of `ctx` asks for a task: `Some` with the 2025-11-25 `task` member (its
/// ttl), or with an empty one for a 2026-07-28 request that declares the extension.
pub(crate) fn requested(ctx: &Context) -> Option<TaskMetadata> {
    if ctx.protocol_version().is_stateless() {
        let caps = ctx.client_capabilities();
        caps.extensions.as_ref().is_some_and(|e| e.contains_key(EXTENSION)).then(TaskMetadata::default)
    } else {
        ctx.requested_task().cloned()
    }
}

/// Whether a mounted server that declared `caps` runs tools as tasks (its `tasks` capability,
/// 2025-11-25, or the extension, 2026-07-28).
pub(crate) fn runs_tasks(caps: &ServerCapabilities) -> bool {
    caps.tasks.is_some() || caps.extensions.as_ref().is_some_and(|e| e.contains_key(EXTENSION))
}

/// A mount as the task methods see it.
pub(crate) trait TaskMount: Send + Sync + 'static {
    /// The mount's prefix.
    fn prefix(&self) -> &str;
    /// Whether the mounted server runs tools as tasks.
    fn runs_tasks(&self) -> bool;
    /// Passes the task method `method` on to the mounted server over the connection of
    /// `ctx`'s gateway session ([`pass`]).
    fn forward(
        self: Arc<Self>,
        method: &str,
        params: JsonObject,
        ctx: Context,
    ) -> impl Future<Output = Result<Value, ErrorObject>> + Send;
    /// A subscription to the changes of the mounted server's tasks `theirs` (its ids).
    fn follow(&self, theirs: &[&str]) -> impl Future<Output = Result<Subscription, ClientError>> + Send;
}

/// The bound on the changes of followed tasks waiting to be sent on one stream.
const FOLLOW_QUEUE: usize = 64;

/// The most tasks whose maker a mount remembers; past it, the oldest are forgotten (their
/// ids then reach the mounted server's own binding alone, as before the gateway kept any).
const MAX_OWNED: usize = 10_000;

/// Whose the tasks made through a mount are: the principal (`Context::principal_key`) of the
/// request that made each, by the mounted server's id. The mounted server cannot tell them
/// apart (at 2026-07-28 the gateway reaches it over connections of its own, shared by every
/// principal), so the gateway keeps each task to its maker, as a server keeps its own.
#[derive(Default)]
pub(crate) struct TaskOwners {
    owners: std::sync::Mutex<(std::collections::HashMap<String, String>, std::collections::VecDeque<String>)>,
}

impl TaskOwners {
    /// `theirs` (the mounted server's id) was made by the principal of `ctx`, if it has one.
    fn made(&self, theirs: &str, ctx: &Context) {
        let Some(owner) = ctx.principal_key() else { return };
        let mut guard = self.owners.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (owners, order) = &mut *guard;
        if owners.insert(theirs.to_owned(), owner).is_none() {
            order.push_back(theirs.to_owned());
        }
        while order.len() > MAX_OWNED {
            if let Some(oldest) = order.pop_front() {
                owners.remove(&oldest);
            }
        }
    }

    /// Whether the request of `ctx` may reach the task `theirs`: a task made by a principal
    /// is that principal's alone.
    pub(crate) fn permits(&self, theirs: &str, ctx: &Context) -> bool {
        let guard = self.owners.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match guard.0.get(theirs) {
            None => true,
            Some(owner) => ctx.principal_key().as_deref() == Some(owner.as_str()),
        }
    }

    /// Whether `task` (an entry of a mounted server's `tasks/list`, its own id) may be shown
    /// to the request of `ctx`.
    fn lists(&self, task: &Value, ctx: &Context) -> bool {
        task.get("taskId").and_then(Value::as_str).is_none_or(|theirs| self.permits(theirs, ctx))
    }
}

/// Calls a tool of the mount `prefix` as a task (`params.task` set: the gateway's client
/// asked for one), over `upstream`'s connection `client`: the task it made as the raw result
/// the gateway answers, or the result it gave at once (2026-07-28).
pub(crate) async fn call_as_task(
    prefix: &str,
    owners: &TaskOwners,
    upstream: &Upstream,
    client: &Client,
    params: CallToolRequestParams,
    ctx: &Context,
) -> Result<CallToolResult, ToolError> {
    let (options, progress) = crate::upstream::options(ctx);
    let result = client.call_tool_as_task_with(params, options).await;
    flush(progress).await;
    upstream.link.flushed().await;
    match result {
        Ok(ToolTask::Done(result)) => Ok(result),
        Ok(ToolTask::Running(mut task)) => {
            owners.made(&task.task_id, ctx);
            task.task_id = gateway_id(prefix, &task.task_id);
            Err(ToolError::Task(Box::new(created(&task, ctx.protocol_version()))))
        }
        Ok(_) => Err(ToolError::Protocol(ErrorObject::internal_error("an unknown answer to a task call"))),
        Err(e) => crate::upstream::call_failed(prefix, upstream, e),
    }
}

/// Passes the task method `method` on to the mount `prefix` over `upstream`'s connection
/// `client`, `params` naming its task.
pub(crate) async fn pass(
    prefix: &str,
    owners: &TaskOwners,
    upstream: &Upstream,
    client: &Client,
    method: &str,
    params: JsonObject,
    ctx: &Context,
) -> Result<Value, ErrorObject> {
    // Another principal's task is unknown here, as one that does not exist.
    if let Some(theirs) = params.get("taskId").and_then(Value::as_str)
        && !owners.permits(theirs, ctx)
    {
        return Err(unknown_task(&gateway_id(prefix, theirs)));
    }
    let _call = upstream.link.enter(ctx);
    let mut options = CallOptions::default().cancel_on(ctx.cancellation().clone());
    // `tasks/result` answers once the task is over.
    options.unbounded = method == "tasks/result";
    let result = client.request_raw_with(method, Some(Value::Object(params)), options).await;
    upstream.link.flushed().await;
    let mut value = result.map_err(|e| upstream.error(prefix, e))?;
    if let Some(Value::Array(tasks)) = value.get_mut("tasks") {
        tasks.retain(|task| owners.lists(task, ctx));
    }
    rename(prefix, &mut value);
    Ok(value)
}

/// The gateway's ids for the mounted server's task ids in a task method's result: the task's
/// (`taskId`, `task.taskId`, each of `tasks`) and the related task's of `_meta`.
fn rename(prefix: &str, value: &mut Value) {
    let rename = |object: &mut Value| {
        if let Some(Value::String(id)) = object.get_mut("taskId") {
            *id = gateway_id(prefix, id);
        }
    };
    rename(value);
    if let Some(task) = value.get_mut("task") {
        rename(task);
    }
    if let Some(Value::Array(tasks)) = value.get_mut("tasks") {
        tasks.iter_mut().for_each(rename);
    }
    if let Some(related) = value.get_mut("_meta").and_then(|m| m.get_mut(mcp_types::meta::RELATED_TASK)) {
        rename(related);
    }
}

/// The raw result of a call that made `task`, in `version`: 2025-11-25's `CreateTaskResult`,
/// or the extension's flat task (2026-07-28).
fn created(task: &Task, version: ProtocolVersion) -> Value {
    if !version.is_stateless() {
        let task = mcp_types::to_value_for(task, version).unwrap_or(Value::Null);
        return json!({ "task": task });
    }
    let mut flat = serde_json::Map::new();
    flat.insert("resultType".into(), json!("task"));
    flat.insert("taskId".into(), json!(task.task_id));
    flat.insert("status".into(), serde_json::to_value(&task.status).unwrap_or(Value::Null));
    if let Some(message) = &task.status_message {
        flat.insert("statusMessage".into(), json!(message));
    }
    flat.insert("createdAt".into(), json!(task.created_at));
    flat.insert("lastUpdatedAt".into(), json!(task.last_updated_at));
    if let Some(ttl) = task.ttl {
        flat.insert("ttlMs".into(), json!(ttl));
    }
    if let Some(interval) = task.poll_interval {
        flat.insert("pollIntervalMs".into(), json!(interval));
    }
    Value::Object(flat)
}

fn unknown_task(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("unknown task `{id}`"))
}

/// The gateway's server's [`TaskForwarder`]: the task methods ([`forward`]) and the tasks a
/// `subscriptions/listen` follows ([`follow`]), each to the mount its task id names.
pub(crate) struct Forwarder<M>(pub(crate) Arc<[Arc<M>]>);

impl<M: TaskMount> TaskForwarder for Forwarder<M> {
    fn forward(&self, method: String, params: Option<Value>, ctx: Context) -> BoxFuture<Result<Value, ErrorObject>> {
        Box::pin(forward(self.0.clone(), method, params, ctx))
    }

    fn follow(&self, task_ids: Vec<String>, ctx: Context) -> BoxFuture<FollowedTasks> {
        Box::pin(follow(self.0.clone(), task_ids, ctx))
    }
}

/// Follows the tasks `ids` (the gateway's) of a `subscriptions/listen` request (`ctx`): per
/// mount, its tasks among them followed over its catalog connection (subscribed before they
/// are read, so that no change after the read is missed), those it knows kept, their changes
/// passed on by a task of their own until the stream ends.
async fn follow<M: TaskMount>(mounts: Arc<[Arc<M>]>, ids: Vec<String>, ctx: Context) -> FollowedTasks {
    let (tx, rx) = tokio::sync::mpsc::channel(FOLLOW_QUEUE);
    let mut known = vec![false; ids.len()];
    for mount in mounts.iter().filter(|m| m.runs_tasks()) {
        let theirs: Vec<(usize, &str)> = ids
            .iter()
            .enumerate()
            .filter_map(|(i, id)| Some((i, id.split_once(SEPARATOR).filter(|(p, _)| *p == mount.prefix())?.1)))
            .collect();
        if theirs.is_empty() {
            continue;
        }
        let subscription = match mount.follow(&theirs.iter().map(|(_, t)| *t).collect::<Vec<_>>()).await {
            Ok(subscription) => subscription,
            Err(e) => {
                tracing::debug!(mount = mount.prefix(), error = %e, "the mounted server's tasks not followed");
                continue;
            }
        };
        let mut followed = Vec::new();
        for (i, theirs) in theirs {
            if detailed(mount, theirs, &ctx).await.is_ok() {
                known[i] = true;
                followed.push(theirs.to_owned());
            }
        }
        if !followed.is_empty() {
            tokio::spawn(pass_changes(mount.clone(), subscription, followed, ctx.clone(), tx.clone()));
        }
    }
    let ids = ids.into_iter().zip(known).filter_map(|(id, known)| known.then_some(id)).collect();
    FollowedTasks::new(ids, rx)
}

/// The mounted server's task `theirs` as `tasks/get` details it, under the gateway's id (the
/// result's own members, `resultType` and `_meta`, left out).
async fn detailed<M: TaskMount>(mount: &Arc<M>, theirs: &str, ctx: &Context) -> Result<JsonObject, ErrorObject> {
    let mut params = JsonObject::new();
    params.insert("taskId".to_owned(), Value::from(theirs));
    match mount.clone().forward("tasks/get", params, ctx.clone()).await? {
        Value::Object(mut task) => {
            task.remove("resultType");
            task.remove("_meta");
            Ok(task)
        }
        _ => Err(ErrorObject::internal_error("`tasks/get` answered no task")),
    }
}

/// Sends each change `subscription` tells of the tasks `followed` (the mounted server's ids)
/// on `tx`, the task read again as `tasks/get` details it; ends with the gateway's stream.
async fn pass_changes<M: TaskMount>(
    mount: Arc<M>,
    mut subscription: Subscription,
    followed: Vec<String>,
    ctx: Context,
    tx: tokio::sync::mpsc::Sender<JsonObject>,
) {
    loop {
        let event = tokio::select! {
            event = subscription.next() => event,
            () = tx.closed() => return,
        };
        let task = match event {
            Some(ServerEvent::TaskStatus(task)) if followed.contains(&task.task_id) => task,
            Some(_) => continue,
            None => {
                let end = subscription.ended();
                tracing::debug!(mount = mount.prefix(), ?end, "following the mounted server's tasks ended");
                return;
            }
        };
        // Gone since (its ttl over): nothing to tell, as for a task of the gateway's own.
        let Ok(detailed) = detailed(&mount, &task.task_id, &ctx).await else { continue };
        if tx.send(detailed).await.is_err() {
            return;
        }
    }
}

/// Serves a task method for the gateway's server ([`mcp_server::TaskForwarder`]): to the mount
/// its task id names; `tasks/list` (2025-11-25) pages through each mount that runs tasks.
pub(crate) async fn forward<M: TaskMount>(
    mounts: Arc<[Arc<M>]>,
    method: String,
    params: Option<Value>,
    ctx: Context,
) -> Result<Value, ErrorObject> {
    let mut params = match params {
        None => JsonObject::new(),
        Some(Value::Object(params)) => params,
        Some(_) => return Err(ErrorObject::invalid_params("params must be an object")),
    };
    if method == "tasks/list" {
        return list(&mounts, params, ctx).await;
    }
    let Some(Value::String(id)) = params.get("taskId") else {
        return Err(ErrorObject::invalid_params("`taskId` must be a string"));
    };
    let id = id.clone();
    let (prefix, theirs) = id.split_once(SEPARATOR).ok_or_else(|| unknown_task(&id))?;
    let mount =
        mounts.iter().find(|m| m.prefix() == prefix && m.runs_tasks()).ok_or_else(|| unknown_task(&id))?.clone();
    params.insert("taskId".to_owned(), Value::from(theirs));
    mount.forward(&method, params, ctx).await
}

/// `tasks/list` (2025-11-25): a page of one mount's tasks at a time, the cursor naming the
/// mount (its index) and its own cursor (`index:cursor`).
async fn list<M: TaskMount>(mounts: &[Arc<M>], mut params: JsonObject, ctx: Context) -> Result<Value, ErrorObject> {
    let cursor = match params.remove("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor),
        Some(_) => return Err(ErrorObject::invalid_params("`cursor` must be a string")),
    };
    let (index, theirs) = match &cursor {
        None => (0, None),
        Some(c) => {
            let invalid = || ErrorObject::invalid_params(format!("invalid cursor `{c}`"));
            let (index, theirs) = c.split_once(SEPARATOR).ok_or_else(invalid)?;
            let index: usize = index.parse().map_err(|_| invalid())?;
            (index, Some(theirs.to_owned()).filter(|t| !t.is_empty()))
        }
    };
    let next_mount = |from: usize| (from..mounts.len()).find(|&i| mounts[i].runs_tasks());
    let Some(index) = next_mount(index) else { return Ok(json!({ "tasks": [] })) };
    if let Some(theirs) = theirs {
        params.insert("cursor".to_owned(), Value::from(theirs));
    }
    let mount = mounts[index].clone();
    let mut page = mount.forward("tasks/list", params, ctx).await?;
    let next = match page.get("nextCursor").and_then(Value::as_str) {
        Some(theirs) => Some(format!("{index}{SEPARATOR}{theirs}")),
        None => next_mount(index + 1).map(|i| format!("{i}{SEPARATOR}")),
    };
    if let Value::Object(page) = &mut page {
        match next {
            Some(next) => page.insert("nextCursor".to_owned(), Value::from(next)),
            None => page.remove("nextCursor"),
        };
    }
    Ok(page)
}
