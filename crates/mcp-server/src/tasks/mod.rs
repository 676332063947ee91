//! Tasks (protocol revision 2025-11-25): a `tools/call` the client augments with `task` is
//! answered at once with a task (`CreateTaskResult`); the tool runs on, and the client polls it
//! (`tasks/get`), waits for its result (`tasks/result`), lists (`tasks/list`) or cancels it
//! (`tasks/cancel`), and hears of its status changes (`notifications/tasks/status`).
//!
//! A tool opts in with [`ToolDef::task_support`](crate::ToolDef::task_support) (or
//! `#[tool(task = "optional")]`); its handler is the same code as for a plain call, and keeps
//! using [`Context`](crate::Context) for progress, logs, cancellation (`tasks/cancel` fires
//! it) and input (an elicitation or a sampling request moves the task to `input_required` and
//! carries the task's id in `_meta`).
//!
//! Tasks live in a [`TaskStore`]: [`MemoryTaskStore`] by default (bounded), or one of your own
//! ([`ServerBuilder::tasks`](crate::ServerBuilder::tasks)). A task belongs to whoever created
//! it: the HTTP principal (its issuer, subject and client) when the endpoint checks tokens,
//! else the HTTP session (by its `Mcp-Session-Id`, the same on every instance of a fleet), else
//! the connection (stdio: one client per pipe; tagged with a random id of the process, so that
//! servers sharing a store never mix their connections). Anyone else gets "unknown task"
//! (-32602) for it, and lists none of it; its id is 128 random bits besides. A stateless HTTP
//! endpoint without tokens has nothing to bind a task to (the next POST may be anyone's): there a
//! task-augmented call is refused with -32601, and the task methods know no task.
//!
//! # The 2026-07-28 extension (`io.modelcontextprotocol/tasks`, SEP-2663)
//!
//! In revision 2026-07-28 tasks are an extension ([`EXTENSION`]), which a server with a
//! task-supporting tool declares in `server/discover` (`capabilities.extensions`). The client
//! does not ask for a task: it declares the extension in the `_meta` client capabilities of a
//! request, and the server decides. The same definition and handler serve both revisions:
//!
//! - a `tools/call` of a tool of [`TaskSupport::Optional`] or [`TaskSupport::Required`] from a
//!   request that declares the extension is answered with a task at once (flat:
//!   `resultType: "task"`, `taskId`, `status`, `ttlMs`, `pollIntervalMs`), stored before the
//!   answer; without the extension an `Optional` tool runs as a plain call and a `Required`
//!   one is -32021 (`data.requiredCapabilities` naming the extension);
//! - `tasks/get` answers the task with what it came to inlined: `inputRequests` while it is
//!   `input_required`, `result` once `completed` (a result with `isError` completes it),
//!   `error` once `failed` (a protocol error); `tasks/update` delivers answers to its input
//!   requests (unknown keys ignored, a subset allowed) and `tasks/cancel` stops it, both with
//!   an empty acknowledgement (a terminal task's cancel too). From a request without the
//!   extension all three are -32021; an unknown task is -32602. `tasks/result` and
//!   `tasks/list` do not exist (-32601).
//! - Inside such a task, [`Context::elicit`](crate::Context::elicit),
//!   [`Context::elicit_as`](crate::Context::elicit_as), their `_raw` forms (and the sampling
//!   and roots calls) do not make round trips: the task moves to `input_required` with the request among its
//!   `inputRequests` (under the `_as` key, or `elicitation-1`, ...), and the call returns
//!   once `tasks/update` delivers the answer. Asks made together (`tokio::join!`) are
//!   outstanding together. The handler runs once.
//!
//! **Where the task begins.** By default the task exists before the handler runs. A tool
//! that must ask for input *synchronously* first (input-required round trips, the request
//! retried with the answers) and only then become a task is defined with
//! [`ToolDef::deferred_task`](crate::ToolDef::deferred_task); its handler awaits
//! [`Context::run_as_task`](crate::Context::run_as_task) where the task begins. Until then
//! the call is a plain call (a handler that returns before it answers a plain result); the
//! round that reaches it is answered with the new task, and the rest of the handler runs as
//! that task. Everywhere else `run_as_task` does nothing, so the handler also serves plain
//! calls and 2025-11-25 tasks:
//!
//! ```
//! use mcp_server::{Context, TaskSupport, ToolDef, ToolError};
//! use mcp_types::{CallToolResult, ContentBlock, ElicitRequestParams};
//!
//! # fn form() -> ElicitRequestParams { unimplemented!() }
//! let tool = ToolDef::new("deploy", serde_json::json!({"type": "object"}), |_args, ctx: Context| async move {
//!     let confirmed = ctx.elicit_raw_as("confirm", form()).await?; // a round trip, before the task
//!     ctx.run_as_task().await?; // the call is answered with the task here
//!     // ... the long part, polled with tasks/get ...
//!     Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(confirmed.action.to_string())]))
//! })
//! .unwrap()
//! .task_support(TaskSupport::Optional)
//! .deferred_task();
//! ```
//!
//! Extension tasks live in the same [`TaskStore`] (with their outstanding
//! [`StoredTask::input_requests`] and delivered [`StoredTask::input_responses`]). Without an
//! HTTP principal they are server-global, not bound to a connection: the extension lets a
//! client poll or cancel a task from any connection, and lets a server use the task id as the
//! bearer of the task's state provided it cannot be guessed ("Security Considerations" of the
//! extension), which 128 random bits are. With a principal they are the principal's.
//! Status notifications (`notifications/tasks`) are sent on the `subscriptions/listen` streams
//! that name the task in `notifications.taskIds` (from a request that declares the extension):
//! each change of the task (its status, its input requests, its end) carries the task as
//! `tasks/get` details it, announced on the server's bus so that a fleet's bus carries it too.

// Inside: this module holds what a task is (its support, its outcome, the extension's names)
// and the state of tasks: `store` (the `TaskStore` trait and `MemoryTaskStore`), `config`
// (`TaskConfig`) and `running` (the tasks running in this process, and the link a handler's
// context has to its task). Layer 2: it uses only `bus`; serving the task methods belongs to
// the serving layer (`serve::tasks` for 2025-11-25, `serve::tasks_ext` for the extension).

use mcp_jsonrpc::ErrorObject;
use mcp_types::TaskStatus;
use serde_json::Value;

pub(crate) mod config;
pub(crate) mod running;
pub(crate) mod store;

pub use config::TaskConfig;
pub use store::{MAX_INPUT_REQUESTS, MemoryTaskStore, StoredTask, TaskPage, TaskStore, TaskStoreError};

/// Whether a tool may be called as a task (`execution.taskSupport` of its definition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    /// Never as a task (the default): a task-augmented call is -32601.
    #[default]
    Forbidden,
    /// As a task or as a plain call.
    Optional,
    /// Only as a task: a plain call from a client that can make tasks is -32601.
    Required,
}

impl TaskSupport {
    /// The wire value.
    pub(crate) fn wire(self) -> mcp_types::ToolExecutionTaskSupport {
        match self {
            TaskSupport::Forbidden => mcp_types::ToolExecutionTaskSupport::Forbidden,
            TaskSupport::Optional => mcp_types::ToolExecutionTaskSupport::Optional,
            TaskSupport::Required => mcp_types::ToolExecutionTaskSupport::Required,
        }
    }
}

/// How a task ended, as `tasks/result` answers it: the result the request would have had (as
/// JSON, in the revision of the session that made the task), or its error.
pub type TaskOutcome = Result<Value, ErrorObject>;

/// The status message of a task that ends `status` with `outcome`, as the stores write it: a
/// protocol error's message; for a `failed` task whose result has `isError` (2025-11-25), the
/// text of the result's first text content, else a sentence saying so; none otherwise.
pub fn outcome_message(status: &TaskStatus, outcome: &TaskOutcome) -> Option<String> {
    match outcome {
        Err(error) => Some(error.message.clone()),
        Ok(result) if *status == TaskStatus::Failed => {
            let text = result.get("content").and_then(Value::as_array).and_then(|content| {
                content.iter().find_map(|block| match (block.get("type")?.as_str()?, block.get("text")?.as_str()?) {
                    ("text", text) => Some(text),
                    _ => None,
                })
            });
            Some(text.map_or_else(|| "the tool reported an error".to_owned(), |t| bounded_message(t).to_owned()))
        }
        Ok(_) => None,
    }
}

/// At most 1,024 bytes of `text`, cut at a character boundary: a status message says why, it
/// does not repeat the result.
fn bounded_message(text: &str) -> &str {
    let mut end = text.len().min(1024);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The extension's identifier: the key in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `tasks/get`, `tasks/update`, `tasks/cancel`: the methods of the extension.
pub(crate) const GET: &str = "tasks/get";
/// See [`GET`].
pub(crate) const UPDATE: &str = "tasks/update";
/// See [`GET`].
pub(crate) const CANCEL: &str = "tasks/cancel";

/// Whether a status is terminal.
pub(crate) fn is_terminal(status: &TaskStatus) -> bool {
    matches!(status, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
}

/// 128 random bits, base64url.
pub(crate) fn new_task_id() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random number generator failed");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A notification's `_meta` naming task `id` (`io.modelcontextprotocol/related-task`).
pub(crate) fn related_task_meta(id: &str) -> mcp_types::NotificationMetaObject {
    let mut meta = mcp_types::NotificationMetaObject::default();
    meta.extra.insert(mcp_types::meta::RELATED_TASK.to_owned(), related_task(id));
    meta
}

/// The `io.modelcontextprotocol/related-task` member naming task `id`.
pub(crate) fn related_task(id: &str) -> Value {
    serde_json::json!({ "taskId": id })
}
