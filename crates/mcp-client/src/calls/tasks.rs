//! Tools called as tasks, from the client, in both forms: the tasks of protocol revision
//! 2025-11-25 (a `tools/call` with `task`; `tasks/get`, `tasks/result`, `tasks/list`,
//! `tasks/cancel`; status notifications as [`ServerEvent::TaskStatus`](crate::ServerEvent::TaskStatus))
//! and the tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`: the call declares
//! the extension and the server decides; `tasks/get` carries the result, or the input the
//! task waits for, which the client answers with `tasks/update`; `tasks/cancel`). The same
//! calls serve both.
//!
//! ```no_run
//! # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
//! use mcp_client::tasks::ToolTask;
//! match client.call_tool_as_task("build", serde_json::json!({"target": "release"}), None).await? {
//!     ToolTask::Running(task) => {
//!         // ... the tool runs on the server; meanwhile:
//!         println!("{:?}", client.get_task(&task.task_id).await?.status);
//!         let result = client.wait_for_task(&task.task_id).await?;
//! #       let _ = result;
//!     }
//!     // A 2026-07-28 server may answer at once.
//!     ToolTask::Done(result) => println!("{result:?}"),
//!     _ => {}
//! }
//! # Ok(()) }
//! ```
//!
//! Input the server needs while the task runs (an elicitation, a sampling request) is answered
//! by the builder's handlers: in 2025-11-25 it comes as a request to the client
//! ([`Client::wait_for_task`] calls `tasks/result` when the task says `input_required`, where a
//! server may send it); in 2026-07-28 `wait_for_task` finds it in the task's `inputRequests`
//! and sends the answers with `tasks/update`.

use std::time::Duration;

use mcp_jsonrpc::CallOptions;
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_types::{
    CallToolRequestParams, CallToolResult, CancelTaskRequest, CancelTaskRequestParams, CreateTaskResult,
    GetTaskPayloadRequestParams, GetTaskRequest, GetTaskRequestParams, ListTasksRequest, ListTasksResult,
    PaginatedRequestParams, Revisions, Task, TaskMetadata, TaskStatus,
};

use serde_json::Value;

use crate::client::Client;
use crate::connection::stateless::StatelessConnection;
use crate::error::{ClientError, Violation};
use crate::listen::Subscription;
use crate::serve::input::input_responses;
use crate::trace::Target;
use crate::wire::tasks::{AnsweredWith, TASKS_EXTENSION, extension_task};

/// What a tool called as a task answered.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolTask {
    /// The task the call became (always, in 2025-11-25).
    Running(Task),
    /// The call's result: a 2026-07-28 server may answer at once rather than make a task.
    Done(CallToolResult),
}

impl ToolTask {
    /// The task, if the call became one.
    pub fn task(&self) -> Option<&Task> {
        match self {
            ToolTask::Running(task) => Some(task),
            ToolTask::Done(_) => None,
        }
    }
}

/// A task method of the 2026-07-28 extension: its params and result as JSON (the core schema
/// of 2026-07-28 has no task types, so the generated ones would drop their members).
macro_rules! extension_method {
    ($($marker:ident = $method:literal),* $(,)?) => {$(
        struct $marker;
        impl mcp_types::Request for $marker {
            const METHOD: &'static str = $method;
            const DIRECTION: mcp_types::Direction = mcp_types::Direction::ClientToServer;
            const REVISIONS: Revisions = Revisions::ALL;
            type Params = mcp_types::JsonObject;
            type Result = Value;
        }
    )*};
}

extension_method!(
    ExtensionGet = "tasks/get",
    ExtensionUpdate = "tasks/update",
    ExtensionCancel = "tasks/cancel",
    ExtensionToolCall = "tools/call",
);

/// `{"taskId": id}`.
fn task_params(task_id: &str) -> mcp_types::JsonObject {
    let mut params = mcp_types::JsonObject::new();
    params.insert("taskId".to_owned(), Value::from(task_id));
    params
}

/// `tools/call` augmented with `task`: answered with the task.
type TaskToolCall = AnsweredWith<mcp_types::CallToolRequest, CreateTaskResult>;

/// `tasks/result` of a task made by a `tools/call`: its `CallToolResult`.
type ToolTaskResult = AnsweredWith<mcp_types::GetTaskPayloadRequest, CallToolResult>;

/// The longest wait between two polls of [`Client::wait_for_task`], whatever the server says.
const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);

/// The most tasks whose progress a client routes at once (the oldest route goes first).
const MAX_TASK_PROGRESS: usize = 256;

impl Client {
    /// Whether the server runs tools as tasks: it declared `tasks.requests.tools.call`
    /// (2025-11-25), or the tasks extension (2026-07-28).
    pub fn supports_tool_tasks(&self) -> bool {
        let caps = self.server_capabilities();
        match self.stateless() {
            Some(_) => caps.extensions.as_ref().is_some_and(|e| e.contains_key(TASKS_EXTENSION)),
            None => caps
                .tasks
                .as_ref()
                .and_then(|t| t.requests.as_ref())
                .and_then(|r| r.tools.as_ref())
                .is_some_and(|t| t.call.is_some()),
        }
    }

    /// Calls a tool as a task: in 2025-11-25 the server answers at once with the task and runs
    /// the tool on; in 2026-07-28 the call declares the tasks extension and the server decides
    /// (a task, or the result at once). `ttl` asks how long the server keeps the task once it
    /// has ended (the server may grant another; in 2026-07-28 it goes as the 2025-11-25
    /// `task.ttl` member, which the extension does not define: our server grants it, others
    /// may ignore it). Fails with [`ClientError::NotSupported`] if
    /// the server declared no task support for tools.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: serde_json::Value,
        ttl: Option<Duration>,
    ) -> Result<ToolTask, ClientError> {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = crate::calls::protocol::arguments_object(name, arguments)?;
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
    ) -> Result<ToolTask, ClientError> {
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
        let name = params.name.clone();
        let answer = match self.stateless() {
            None => {
                let target = Target::Tool(&name);
                ToolTask::Running(self.send_request_about::<TaskToolCall>(params, options, target).await?.task)
            }
            Some(s) => {
                let method = "tools/call";
                let target = Target::Tool(&name);
                // The extension defines no member for the ttl: the 2025-11-25 one, which the
                // revision's schema drops, is put back when a ttl is asked (our server reads it).
                let mut object = crate::wire::stateless::params_object(&params)?;
                if let Some(ttl) = params.task.as_ref().and_then(|t| t.ttl) {
                    object.insert("task".to_owned(), serde_json::json!({ "ttl": ttl }));
                }
                let value = self.extension_call::<ExtensionToolCall>(s, object, options, target).await?;
                if value.get("resultType").and_then(Value::as_str) == Some("task") {
                    ToolTask::Running(extension_task(method, &value)?)
                } else {
                    ToolTask::Done(serde_json::from_value(value).map_err(|e| ClientError::decode(method, e))?)
                }
            }
        };
        if let (Some(route), ToolTask::Running(task)) = (route, &answer) {
            let mut routes = self.task_progress.lock_unpoisoned();
            if routes.len() == MAX_TASK_PROGRESS {
                routes.pop_front();
            }
            routes.push_back((task.task_id.clone(), route));
        }
        Ok(answer)
    }

    /// Calls a tool as a task and waits for its result: the shape of
    /// [`call_tool`](Client::call_tool) for a task, with per-call options. `options`' progress
    /// callback hears the task's progress until it is over; its timeout bounds the call and
    /// then the wait, and its cancellation token stops either: a task the server made is then
    /// cancelled (`tasks/cancel`), as a plain call's timeout or cancellation sends
    /// `notifications/cancelled`. A 2026-07-28 server that answers at once gives its result.
    /// (Dropping the future stops the wait only; the task runs on.)
    ///
    /// ```no_run
    /// # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
    /// use mcp_client::CallOptions;
    /// let options = CallOptions::default().on_progress(|p| println!("{}/{:?}", p.progress, p.total));
    /// let result = client.call_tool_as_task_and_wait("build", serde_json::json!({"target": "release"}), options).await?;
    /// # let _ = result; Ok(()) }
    /// ```
    pub async fn call_tool_as_task_and_wait(
        &self,
        name: &str,
        arguments: serde_json::Value,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = crate::calls::protocol::arguments_object(name, arguments)?;
        let (timeout, cancel) = (options.timeout, options.cancel.clone());
        let task = match self.call_tool_as_task_with(params, options).await? {
            ToolTask::Running(task) => task,
            ToolTask::Done(result) => return Ok(result),
        };
        let waited = self.wait_for_task_with(&task.task_id, timeout, cancel.as_ref()).await;
        if let Err(ClientError::Cancelled | ClientError::Timeout { .. }) = &waited
            && let Err(e) = self.cancel_task(&task.task_id).await
        {
            tracing::debug!(error = %e, task = %task.task_id, "the task given up on was not cancelled");
        }
        waited
    }

    /// Forgets the progress route of a task that is over.
    fn seen(&self, task: &Task) {
        if matches!(task.status, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled) {
            self.task_progress.lock_unpoisoned().retain(|(id, _)| *id != task.task_id);
        }
    }

    /// The task's state now (`tasks/get`).
    pub async fn get_task(&self, task_id: &str) -> Result<Task, ClientError> {
        let task = match self.stateless() {
            None => {
                self.tasks_supported(self.server_capabilities().tasks.is_some())?;
                let params = GetTaskRequestParams::new(task_id);
                Task::from(self.send_request::<GetTaskRequest>(params, CallOptions::default()).await?)
            }
            Some(s) => extension_task("tasks/get", &self.extension_get(s, task_id).await?)?,
        };
        self.seen(&task);
        Ok(task)
    }

    /// A request of the stateless revision that declares the tasks extension (see
    /// [`StatelessConnection::call_with_tasks`]), in its span.
    async fn extension_call<R: mcp_types::Request>(
        &self,
        s: &StatelessConnection,
        params: R::Params,
        options: CallOptions,
        target: Target<'_>,
    ) -> Result<Value, ClientError> {
        let send = |params: R::Params, options| s.call_with_tasks::<R>(&self.peer, params, options);
        self.traced(R::METHOD, target, params, options, send).await
    }

    /// `tasks/get` of the extension: the detailed task, as JSON.
    async fn extension_get(&self, s: &StatelessConnection, task_id: &str) -> Result<Value, ClientError> {
        self.tasks_supported(self.supports_tool_tasks())?;
        self.extension_call::<ExtensionGet>(s, task_params(task_id), CallOptions::default(), Target::None).await
    }

    /// The result of a task made by [`call_tool_as_task`](Self::call_tool_as_task)
    /// (`tasks/result`, 2025-11-25): the server answers once the task is over, with what the
    /// call would have answered (a tool's failure is a result with `isError`; a protocol error
    /// is an error). Waits as long as the task runs: give `options` a timeout, or use
    /// [`wait_for_task`](Self::wait_for_task), which polls first. The 2026-07-28 extension has
    /// no such method ([`ClientError::NotSupported`]): use `wait_for_task`.
    pub async fn task_result(&self, task_id: &str, options: CallOptions) -> Result<CallToolResult, ClientError> {
        self.tasks_supported(self.stateless().is_none() && self.server_capabilities().tasks.is_some())?;
        self.send_request::<ToolTaskResult>(GetTaskPayloadRequestParams::new(task_id), options).await
    }

    /// Waits until the task is over and returns its result, polling `tasks/get` at the
    /// interval the server asks for (at most every 30 s). In 2025-11-25 it then asks
    /// `tasks/result` (and at once when the task needs input: the server sends its requests
    /// then). In 2026-07-28 the result comes with the task; input the task waits for is
    /// answered by the builder's handlers and sent with `tasks/update`; a task that failed
    /// is its error ([`ClientError::Remote`]), a cancelled one [`ClientError::Cancelled`].
    ///
    /// It waits as long as the task runs: [`wait_for_task_with`](Self::wait_for_task_with)
    /// gives up after a time or when a token fires.
    pub async fn wait_for_task(&self, task_id: &str) -> Result<CallToolResult, ClientError> {
        self.wait_for_task_with(task_id, None, None).await
    }

    /// [`wait_for_task`](Self::wait_for_task), giving up after `timeout`
    /// ([`ClientError::Timeout`]) or when `cancel` fires ([`ClientError::Cancelled`]). Giving
    /// up stops the wait (a `tasks/result` in flight is cancelled), not the task: the task
    /// runs on, and [`cancel_task`](Self::cancel_task) stops it.
    pub async fn wait_for_task_with(
        &self,
        task_id: &str,
        timeout: Option<Duration>,
        cancel: Option<&mcp_jsonrpc::CancellationToken>,
    ) -> Result<CallToolResult, ClientError> {
        let wait = self.wait_for_task_unbounded(task_id);
        let cancelled = async {
            match cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let expired = async {
            match timeout {
                Some(timeout) => tokio::time::sleep(timeout).await,
                None => std::future::pending().await,
            }
        };
        let method = if self.stateless().is_some() { "tasks/get" } else { "tasks/result" };
        tokio::select! {
            result = wait => result,
            () = cancelled => Err(ClientError::Cancelled),
            () = expired => Err(ClientError::Timeout { method: method.to_owned(), elapsed: timeout.unwrap_or_default() }),
        }
    }

    async fn wait_for_task_unbounded(&self, task_id: &str) -> Result<CallToolResult, ClientError> {
        if let Some(s) = self.stateless() {
            let result = self.wait_for_extension_task(s, task_id).await;
            self.task_progress.lock_unpoisoned().retain(|(id, _)| id != task_id);
            return result;
        }
        loop {
            let task = self.get_task(task_id).await?;
            match task.status {
                TaskStatus::Working => sleep_poll(task.poll_interval).await,
                _ => {
                    let unbounded = CallOptions { unbounded: true, ..CallOptions::default() };
                    let result = self.task_result(task_id, unbounded).await;
                    self.task_progress.lock_unpoisoned().retain(|(id, _)| id != task_id);
                    return result;
                }
            }
        }
    }

    async fn wait_for_extension_task(
        &self,
        s: &StatelessConnection,
        task_id: &str,
    ) -> Result<CallToolResult, ClientError> {
        const METHOD: &str = "tasks/get";
        loop {
            let detailed = self.extension_get(s, task_id).await?;
            let task = extension_task(METHOD, &detailed)?;
            match task.status {
                TaskStatus::Working => sleep_poll(task.poll_interval).await,
                TaskStatus::InputRequired => {
                    let requests = detailed.get("inputRequests").map(serde_json::value::to_raw_value).transpose();
                    let requests = requests.map_err(|e| ClientError::decode(METHOD, e))?;
                    let responses = input_responses(METHOD, requests.as_deref(), &s.handlers, Some(task_id)).await?;
                    if responses.is_empty() {
                        sleep_poll(task.poll_interval).await;
                        continue;
                    }
                    let mut params = task_params(task_id);
                    params.insert("inputResponses".to_owned(), Value::Object(responses));
                    self.extension_call::<ExtensionUpdate>(s, params, CallOptions::default(), Target::None).await?;
                }
                TaskStatus::Completed => {
                    let result = detailed
                        .get("result")
                        .cloned()
                        .ok_or_else(|| ClientError::protocol(METHOD, Violation::MalformedTask("result")))?;
                    return serde_json::from_value(result).map_err(|e| ClientError::decode(METHOD, e));
                }
                TaskStatus::Failed => {
                    let error = detailed.get("error").cloned().unwrap_or_default();
                    let error = serde_json::from_value(error)
                        .map_err(|_| ClientError::protocol(METHOD, Violation::MalformedTask("error")))?;
                    return Err(ClientError::Remote(error));
                }
                // The extension has no error for it: the task's request was cancelled.
                TaskStatus::Cancelled => return Err(ClientError::Cancelled),
                // A status of a later revision: poll on.
                _ => sleep_poll(task.poll_interval).await,
            }
        }
    }

    /// One page of the tasks the server keeps for this client (`tasks/list`, 2025-11-25; the
    /// 2026-07-28 extension has no such method: [`ClientError::NotSupported`]).
    pub async fn list_tasks(&self, cursor: Option<String>) -> Result<ListTasksResult, ClientError> {
        let listed = self.server_capabilities().tasks.as_ref().is_some_and(|t| t.list.is_some());
        self.tasks_supported(self.stateless().is_none() && listed)?;
        let params = PaginatedRequestParams { cursor, ..Default::default() };
        self.send_request::<ListTasksRequest>(params, CallOptions::default()).await
    }

    /// Cancels a task (`tasks/cancel`): the task as it now is. In 2025-11-25 it is
    /// `cancelled`, and a task already over is an error (-32602); in 2026-07-28 cancelling is
    /// acknowledged whatever the task's state, and the task is read again after it.
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, ClientError> {
        let task = match self.stateless() {
            None => {
                let cancellable = self.server_capabilities().tasks.as_ref().is_some_and(|t| t.cancel.is_some());
                self.tasks_supported(cancellable)?;
                let params = CancelTaskRequestParams::new(task_id);
                Task::from(self.send_request::<CancelTaskRequest>(params, CallOptions::default()).await?)
            }
            Some(s) => {
                self.tasks_supported(self.supports_tool_tasks())?;
                let params = task_params(task_id);
                self.extension_call::<ExtensionCancel>(s, params, CallOptions::default(), Target::None).await?;
                return self.get_task(task_id).await;
            }
        };
        self.seen(&task);
        Ok(task)
    }

    /// Follows tasks of the 2026-07-28 extension: a `subscriptions/listen` stream (declaring
    /// the extension) of `notifications/tasks`, each a [`ServerEvent::TaskStatus`](crate::ServerEvent::TaskStatus)
    /// with the task as it now is. The server honours the tasks this client may read. In
    /// 2025-11-25 status changes come as events of the connection instead
    /// ([`Client::events`]), and this fails with [`ClientError::NotSupported`].
    pub async fn follow_tasks(&self, task_ids: &[&str]) -> Result<Subscription, ClientError> {
        let Some(s) = self.stateless().filter(|_| self.supports_tool_tasks()) else {
            return Err(ClientError::NotSupported("tasks"));
        };
        let mut params = mcp_types::JsonObject::new();
        params.insert("notifications".to_owned(), serde_json::json!({ "taskIds": task_ids }));
        s.listen_with(&self.peer, params, true).await
    }

    fn tasks_supported(&self, present: bool) -> Result<(), ClientError> {
        if present { Ok(()) } else { Err(ClientError::NotSupported("tasks")) }
    }
}

/// Waits the poll interval the server asked for (1 s if none, at most 30 s).
async fn sleep_poll(interval_ms: Option<i64>) {
    let interval = interval_ms.and_then(|ms| u64::try_from(ms).ok()).unwrap_or(1000);
    tokio::time::sleep(Duration::from_millis(interval).min(MAX_POLL_INTERVAL)).await;
}
