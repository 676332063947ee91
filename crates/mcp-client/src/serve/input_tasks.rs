//! The client as the receiver of tasks (2025-11-25): a server may make its `sampling/createMessage`
//! and `elicitation/create` requests tasks (`params.task`), when the client declared
//! `tasks.requests.sampling.createMessage` / `tasks.requests.elicitation.create`
//! ([`ClientBuilder::input_tasks`](crate::ClientBuilder::input_tasks)). The client then answers
//! at once with the task, runs the handler in the background, and serves the server's
//! `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`, telling it of the end with
//! `notifications/tasks/status`.
//!
//! The tasks live in memory, at most [`MAX_TASKS`] at once (expired ones are forgotten as new
//! ones come), each for the ttl the server asked (at most an hour).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use mcp_jsonrpc::sync::MutexExt as _;
use mcp_jsonrpc::{CancellationToken, ErrorObject, Peer, RequestContext, Router};
use mcp_types::{
    CancelTaskRequest, CancelTaskRequestParams, CancelTaskResult, CreateMessageRequestParams, ElicitRequestParams,
    GetTaskPayloadRequestParams, GetTaskRequest, GetTaskRequestParams, GetTaskResult, ListTasksRequest,
    ListTasksResult, PaginatedRequestParams, ProtocolVersion, Task, TaskMetadata, TaskStatus,
};
use serde_json::Value;

use crate::serve::handlers::{InputHandlers, apply_elicitation_defaults, check_elicitation_mode, session_era};
use crate::wire::tasks::AnsweredWith;

/// The most tasks the client keeps at once.
pub const MAX_TASKS: usize = 64;

/// The longest a task is kept, whatever the server asks.
const MAX_TTL: Duration = Duration::from_secs(3600);

/// How often the server is told to poll.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

struct Entry {
    task: Task,
    outcome: Option<Result<Value, ErrorObject>>,
    done: Arc<tokio::sync::Notify>,
    cancel: CancellationToken,
    expires: Instant,
}

/// The tasks of one connection, in creation order.
#[derive(Default)]
pub(crate) struct InputTasks {
    tasks: Mutex<(HashMap<String, Entry>, VecDeque<String>)>,
}

fn is_terminal(status: &TaskStatus) -> bool {
    matches!(status, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
}

fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn unknown(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("unknown task `{id}`"))
}

impl InputTasks {
    /// A new working task; its cancellation token.
    fn create(&self, meta: &TaskMetadata) -> Result<(Task, CancellationToken), ErrorObject> {
        let ttl = meta
            .ttl
            .map_or(MAX_TTL, |ms| Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
            .clamp(Duration::from_secs(1), MAX_TTL);
        let mut guard = self.tasks.lock_unpoisoned();
        let (tasks, order) = &mut *guard;
        let at = Instant::now();
        order.retain(|id| match tasks.get(id) {
            Some(e) if e.expires <= at => {
                tasks.remove(id);
                false
            }
            Some(_) => true,
            None => false,
        });
        if tasks.len() >= MAX_TASKS {
            return Err(ErrorObject::internal_error(format!("the client runs {MAX_TASKS} tasks already")));
        }
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let stamp = now();
        let mut task = Task::new(stamp.clone(), stamp, TaskStatus::Working, id.clone());
        task.ttl = Some(millis(ttl));
        task.poll_interval = Some(millis(POLL_INTERVAL));
        let cancel = CancellationToken::new();
        let entry = Entry {
            task: task.clone(),
            outcome: None,
            done: Arc::new(tokio::sync::Notify::new()),
            cancel: cancel.clone(),
            expires: at + ttl,
        };
        tasks.insert(id.clone(), entry);
        order.push_back(id);
        Ok((task, cancel))
    }

    /// Ends a task with its outcome (unless it was cancelled); the task as it now is.
    fn finish(&self, id: &str, outcome: Result<Value, ErrorObject>) -> Option<Task> {
        let mut guard = self.tasks.lock_unpoisoned();
        let entry = guard.0.get_mut(id)?;
        if !is_terminal(&entry.task.status) {
            entry.task.status = if outcome.is_ok() { TaskStatus::Completed } else { TaskStatus::Failed };
            entry.task.last_updated_at = now();
            entry.outcome = Some(outcome);
        }
        entry.done.notify_waiters();
        Some(entry.task.clone())
    }

    fn get(&self, id: &str) -> Result<Task, ErrorObject> {
        let guard = self.tasks.lock_unpoisoned();
        guard.0.get(id).filter(|e| e.expires > Instant::now()).map(|e| e.task.clone()).ok_or_else(|| unknown(id))
    }

    fn cancel(&self, id: &str) -> Result<Task, ErrorObject> {
        let mut guard = self.tasks.lock_unpoisoned();
        let entry = guard.0.get_mut(id).ok_or_else(|| unknown(id))?;
        if is_terminal(&entry.task.status) {
            return Err(ErrorObject::invalid_params(format!("task `{id}` is already over")));
        }
        entry.task.status = TaskStatus::Cancelled;
        entry.task.status_message = Some("The task was cancelled by request.".to_owned());
        entry.task.last_updated_at = now();
        entry.cancel.cancel();
        entry.done.notify_waiters();
        Ok(entry.task.clone())
    }

    fn list(&self) -> Vec<Task> {
        let guard = self.tasks.lock_unpoisoned();
        let at = Instant::now();
        guard.1.iter().filter_map(|id| guard.0.get(id)).filter(|e| e.expires > at).map(|e| e.task.clone()).collect()
    }

    /// Waits until the task is over; its outcome.
    async fn result(&self, id: &str) -> Result<Value, ErrorObject> {
        loop {
            let notified = {
                let guard = self.tasks.lock_unpoisoned();
                let entry = guard.0.get(id).ok_or_else(|| unknown(id))?;
                match (&entry.outcome, &entry.task.status) {
                    (Some(outcome), _) => return outcome.clone(),
                    (None, TaskStatus::Cancelled) => {
                        return Err(ErrorObject::internal_error(format!("task `{id}` was cancelled")));
                    }
                    _ => entry.done.clone(),
                }
            };
            let wait = notified.notified();
            // Ended between the look and the wait: look again after a short while at most.
            let _ = tokio::time::timeout(POLL_INTERVAL, wait).await;
        }
    }
}

/// A server request that may be a task: answered with its result, or with the task.
type MaybeTask<R> = AnsweredWith<R, Value>;

/// `tasks/result` answered with the result of the request that made the task.
type TaskPayload = AnsweredWith<mcp_types::GetTaskPayloadRequest, Value>;

/// Runs `work` (a handler's answer, encoded for the connection's revision) as the request's
/// answer, or as a task when the request asked for one.
async fn run<F>(tasks: Arc<InputTasks>, task: Option<TaskMetadata>, peer: Peer, work: F) -> Result<Value, ErrorObject>
where
    F: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    let Some(meta) = task.filter(|_| peer.protocol_version() >= ProtocolVersion::V2025_11_25) else {
        return work.await;
    };
    let (created, cancel) = tasks.create(&meta)?;
    let id = created.task_id.clone();
    tokio::spawn(async move {
        let outcome = tokio::select! {
            outcome = work => outcome,
            () = cancel.cancelled() => return,
        };
        if let Some(task) = tasks.finish(&id, outcome) {
            notify_status(&peer, &task).await;
        }
    });
    let task = mcp_types::to_value_for(&created, ProtocolVersion::V2025_11_25).map_err(ErrorObject::internal_error)?;
    Ok(serde_json::json!({ "task": task }))
}

async fn notify_status(peer: &Peer, task: &Task) {
    let params = mcp_types::TaskStatusNotificationParams::from(task.clone());
    if let Err(e) = peer.notify::<mcp_types::TaskStatusNotification>(params).await {
        tracing::debug!(error = %e, "task status notification not sent");
    }
}

/// The result of a handler, encoded for the connection's revision.
fn encode<T: mcp_types::WireSerialize>(result: &T, ctx: &RequestContext) -> Result<Value, ErrorObject> {
    mcp_types::to_value_for(result, ctx.peer().protocol_version()).map_err(ErrorObject::internal_error)
}

/// Adds the routes of a task-receiving client: sampling and elicitation that may be tasks
/// (replacing the plain ones), and the four task methods.
pub(crate) fn routes(mut router: Router, handlers: &InputHandlers, tasks: Arc<InputTasks>) -> Router {
    use mcp_types::{CreateMessageRequest, ElicitRequest};
    if let Some(h) = handlers.sampling.clone() {
        let tasks = tasks.clone();
        router =
            router.request::<MaybeTask<CreateMessageRequest>, _, _>(move |params: CreateMessageRequestParams, ctx| {
                let h = h.clone();
                let task = params.task.clone();
                let session = session_era::<CreateMessageRequest>(&ctx, ProtocolVersion::V2024_11_05);
                let work_ctx = ctx.clone();
                let work = async move {
                    session?;
                    encode(&h.create_message(params).await?, &work_ctx)
                };
                run(tasks.clone(), task, ctx.peer().clone(), work)
            });
    }
    if let Some(h) = handlers.elicitation.clone() {
        let tasks = tasks.clone();
        let (defaults, url_mode) = (handlers.apply_defaults, handlers.elicitation_url);
        router = router.request::<MaybeTask<ElicitRequest>, _, _>(move |params: ElicitRequestParams, ctx| {
            let h = h.clone();
            let task = match &params {
                ElicitRequestParams::ElicitRequestForm(p) => p.task.clone(),
                ElicitRequestParams::ElicitRequestURL(p) => p.task.clone(),
            };
            let checked = session_era::<ElicitRequest>(&ctx, ProtocolVersion::V2025_06_18)
                .and_then(|()| check_elicitation_mode(&params, url_mode));
            let work_ctx = ctx.clone();
            let work = async move {
                checked?;
                let mut result = h.elicit(params.clone()).await?;
                if defaults {
                    apply_elicitation_defaults(&params, &mut result);
                }
                encode(&result, &work_ctx)
            };
            run(tasks.clone(), task, ctx.peer().clone(), work)
        });
    }
    let get = tasks.clone();
    let payload = tasks.clone();
    let list = tasks.clone();
    router
        .request::<GetTaskRequest, _, _>(move |params: GetTaskRequestParams, _ctx| {
            let task = get.get(&params.task_id);
            async move { Ok::<GetTaskResult, _>(task?.into()) }
        })
        .request::<TaskPayload, _, _>(move |params: GetTaskPayloadRequestParams, _ctx| {
            let tasks = payload.clone();
            async move {
                let mut result = tasks.result(&params.task_id).await?;
                if let Value::Object(members) = &mut result {
                    let meta = members.entry("_meta").or_insert_with(|| Value::Object(Default::default()));
                    if let Value::Object(meta) = meta {
                        meta.insert(
                            mcp_types::meta::RELATED_TASK.to_owned(),
                            serde_json::json!({"taskId": params.task_id}),
                        );
                    }
                }
                Ok(result)
            }
        })
        .request::<ListTasksRequest, _, _>(move |_params: PaginatedRequestParams, _ctx| {
            // At most MAX_TASKS: one page.
            let result = ListTasksResult::new(list.list());
            async move { Ok(result) }
        })
        .request::<CancelTaskRequest, _, _>(move |params: CancelTaskRequestParams, ctx| {
            let cancelled = tasks.cancel(&params.task_id);
            let peer = ctx.peer().clone();
            async move {
                let task = cancelled?;
                notify_status(&peer, &task).await;
                Ok::<CancelTaskResult, _>(task.into())
            }
        })
}
