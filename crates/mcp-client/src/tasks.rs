//! Tasks of protocol revision 2025-11-25, from the client: a tool called as a task answers at
//! once with the task; the client polls it, waits for its result, lists or cancels it, and
//! hears of its status changes ([`ServerEvent::TaskStatus`](crate::ServerEvent::TaskStatus)).
//!
//! ```no_run
//! # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
//! let task = client.call_tool_as_task("build", serde_json::json!({"target": "release"}), None).await?;
//! // ... the tool runs on the server; meanwhile:
//! let now = client.get_task(&task.task_id).await?;
//! println!("{:?}", now.status);
//! let result = client.wait_for_task(&task.task_id).await?;
//! # let _ = result; Ok(()) }
//! ```
//!
//! Input the server needs while the task runs (an elicitation, a sampling request) comes as a
//! request to the client's handlers, as for a plain call; [`Client::wait_for_task`] calls
//! `tasks/result` when the task says `input_required`, which is where a server may send it.

use std::time::Duration;

use mcp_jsonrpc::sync::MutexExt as _;
use mcp_jsonrpc::{CallOptions, ProgressRegistration};
use mcp_types::{
    CallToolRequestParams, CallToolResult, CancelTaskRequest, CancelTaskRequestParams, CreateTaskResult,
    GetTaskPayloadRequestParams, GetTaskRequest, GetTaskRequestParams, ListTasksRequest, ListTasksResult,
    PaginatedRequestParams, Revisions, Task, TaskMetadata, TaskStatus,
};

use crate::{Client, ClientError};

/// Request `R` answered with `T` instead of its own result: a task-augmented request is
/// answered with the task, `tasks/result` with the result of the request that made the task.
pub(crate) struct AnsweredWith<R, T>(std::marker::PhantomData<(R, T)>);

impl<R, T> mcp_types::Request for AnsweredWith<R, T>
where
    R: mcp_types::Request,
    T: serde::Serialize + mcp_types::WireSerialize + serde::de::DeserializeOwned + Send + 'static,
{
    const METHOD: &'static str = R::METHOD;
    const DIRECTION: mcp_types::Direction = R::DIRECTION;
    const REVISIONS: Revisions = R::REVISIONS;
    type Params = R::Params;
    type Result = T;
}

/// `tools/call` augmented with `task`: answered with the task.
type TaskToolCall = AnsweredWith<mcp_types::CallToolRequest, CreateTaskResult>;

/// `tasks/result` of a task made by a `tools/call`: its `CallToolResult`.
type ToolTaskResult = AnsweredWith<mcp_types::GetTaskPayloadRequest, CallToolResult>;

/// The longest wait between two polls of [`Client::wait_for_task`], whatever the server says.
const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);

/// The most tasks whose progress a client routes at once (the oldest route goes first).
const MAX_TASK_PROGRESS: usize = 256;

/// The progress routes of running tasks, by task id: a task's progress comes under the token
/// of the call that created it, long after that call was answered.
pub(crate) type TaskProgress = std::sync::Mutex<std::collections::VecDeque<(String, ProgressRegistration)>>;

impl Client {
    /// Whether the server runs tools as tasks (it declared `tasks.requests.tools.call`).
    pub fn supports_tool_tasks(&self) -> bool {
        self.server_capabilities()
            .tasks
            .as_ref()
            .and_then(|t| t.requests.as_ref())
            .and_then(|r| r.tools.as_ref())
            .is_some_and(|t| t.call.is_some())
    }

    /// Calls a tool as a task (2025-11-25): the server answers at once with the task, and
    /// runs the tool on. `ttl` asks how long the server keeps it (the server may grant
    /// another). Fails with [`ClientError::NotSupported`] if the server declared no task
    /// support for tools.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: serde_json::Value,
        ttl: Option<Duration>,
    ) -> Result<Task, ClientError> {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = crate::calls::arguments_object(name, arguments)?;
        let ttl = ttl.map(|t| i64::try_from(t.as_millis()).unwrap_or(i64::MAX));
        params.task = Some(TaskMetadata { ttl });
        self.call_tool_as_task_with(params, CallOptions::default()).await
    }

    /// [`call_tool_as_task`](Self::call_tool_as_task) with full params (their `task` member
    /// set, or set here to the default) and per-call options. A progress callback of
    /// `options` hears the task's progress for as long as it runs (until this client sees it
    /// over, through [`get_task`](Self::get_task), [`wait_for_task`](Self::wait_for_task) or
    /// [`cancel_task`](Self::cancel_task)).
    pub async fn call_tool_as_task_with(
        &self,
        mut params: CallToolRequestParams,
        mut options: CallOptions,
    ) -> Result<Task, ClientError> {
        use mcp_types::ParamsMeta as _;
        self.tasks_supported(self.supports_tool_tasks())?;
        params.task.get_or_insert_with(TaskMetadata::default);
        let route = options.progress.take().map(|callback| {
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let token = mcp_types::ProgressToken::String(format!("task-progress-{n}"));
            params.set_progress_token(token.clone());
            self.peer.route_progress(token, callback)
        });
        let task = self.send_request::<TaskToolCall>(params, options).await?.task;
        if let Some(route) = route {
            let mut routes = self.task_progress.lock_unpoisoned();
            if routes.len() == MAX_TASK_PROGRESS {
                routes.pop_front();
            }
            routes.push_back((task.task_id.clone(), route));
        }
        Ok(task)
    }

    /// Forgets the progress route of a task that is over.
    fn seen(&self, task: &Task) {
        if matches!(task.status, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled) {
            self.task_progress.lock_unpoisoned().retain(|(id, _)| *id != task.task_id);
        }
    }

    /// The task's state now (`tasks/get`).
    pub async fn get_task(&self, task_id: &str) -> Result<Task, ClientError> {
        self.tasks_supported(self.server_capabilities().tasks.is_some())?;
        let result = self.send_request::<GetTaskRequest>(GetTaskRequestParams::new(task_id), CallOptions::default());
        let task = Task::from(result.await?);
        self.seen(&task);
        Ok(task)
    }

    /// The result of a task made by [`call_tool_as_task`](Self::call_tool_as_task)
    /// (`tasks/result`): the server answers once the task is over, with what the call would
    /// have answered (a tool's failure is a result with `isError`; a protocol error is an
    /// error). Waits as long as the task runs: give `options` a timeout, or use
    /// [`wait_for_task`](Self::wait_for_task), which polls first.
    pub async fn task_result(&self, task_id: &str, options: CallOptions) -> Result<CallToolResult, ClientError> {
        self.tasks_supported(self.server_capabilities().tasks.is_some())?;
        self.send_request::<ToolTaskResult>(GetTaskPayloadRequestParams::new(task_id), options).await
    }

    /// Waits until the task is over and returns its result: polls `tasks/get` at the
    /// interval the server asks for (at most every 30 s), then asks `tasks/result`; when the
    /// task needs input, asks `tasks/result` at once (the server sends its requests then).
    pub async fn wait_for_task(&self, task_id: &str) -> Result<CallToolResult, ClientError> {
        loop {
            let task = self.get_task(task_id).await?;
            match task.status {
                TaskStatus::Working => {
                    let interval = task.poll_interval.and_then(|ms| u64::try_from(ms).ok()).unwrap_or(1000);
                    tokio::time::sleep(Duration::from_millis(interval).min(MAX_POLL_INTERVAL)).await;
                }
                _ => {
                    let unbounded = CallOptions { unbounded: true, ..CallOptions::default() };
                    let result = self.task_result(task_id, unbounded).await;
                    self.task_progress.lock_unpoisoned().retain(|(id, _)| id != task_id);
                    return result;
                }
            }
        }
    }

    /// One page of the tasks the server keeps for this client (`tasks/list`).
    pub async fn list_tasks(&self, cursor: Option<String>) -> Result<ListTasksResult, ClientError> {
        let listed = self.server_capabilities().tasks.as_ref().is_some_and(|t| t.list.is_some());
        self.tasks_supported(listed)?;
        let params = PaginatedRequestParams { cursor, ..Default::default() };
        self.send_request::<ListTasksRequest>(params, CallOptions::default()).await
    }

    /// Cancels a task (`tasks/cancel`): the task as it now is (`cancelled`). A task already
    /// over is an error (-32602).
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, ClientError> {
        let cancellable = self.server_capabilities().tasks.as_ref().is_some_and(|t| t.cancel.is_some());
        self.tasks_supported(cancellable)?;
        let params = CancelTaskRequestParams::new(task_id);
        let task = Task::from(self.send_request::<CancelTaskRequest>(params, CallOptions::default()).await?);
        self.seen(&task);
        Ok(task)
    }

    fn tasks_supported(&self, present: bool) -> Result<(), ClientError> {
        if present { Ok(()) } else { Err(ClientError::NotSupported("tasks")) }
    }
}
