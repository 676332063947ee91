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
//! Status notifications (`notifications/tasks` on `subscriptions/listen`) are optional and not
//! sent.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::BoxFuture;
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_jsonrpc::{CancellationToken, ErrorObject};
use mcp_types::{Task, TaskStatus};
use serde_json::Value;

pub use crate::tasks_ext::EXTENSION;

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

/// The most input requests one task may have outstanding at once (2026-07-28 extension).
pub const MAX_INPUT_REQUESTS: usize = 32;

/// A task as stored: its state, and once it is terminal its outcome.
#[derive(Debug, Clone)]
pub struct StoredTask {
    /// The task's state, as `tasks/get` answers it.
    pub task: Task,
    /// The outcome, once the task is terminal (a cancelled task has none).
    pub outcome: Option<TaskOutcome>,
    /// The 2026-07-28 extension: the input requests the task waits for, by key (what
    /// `tasks/get` shows as `inputRequests` while the task is `input_required`), each
    /// `{"method": .., "params": ..}`. At most [`MAX_INPUT_REQUESTS`].
    pub input_requests: BTreeMap<String, Value>,
    /// The 2026-07-28 extension: answers delivered by `tasks/update` and not yet taken by the
    /// task's handler, by key (only keys that were outstanding are accepted, so these are
    /// bounded as the requests are).
    pub input_responses: BTreeMap<String, Value>,
}

impl StoredTask {
    /// A task without outcome nor input.
    pub fn new(task: Task) -> Self {
        StoredTask { task, outcome: None, input_requests: BTreeMap::new(), input_responses: BTreeMap::new() }
    }
}

/// Why a task could not be created.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The store holds as many live tasks as it may.
    #[error("too many tasks ({0} live); try again later")]
    Full(usize),
    /// The store's backend failed.
    #[error("the task store failed: {0}")]
    Backend(String),
    /// The task has as many outstanding input requests as it may ([`MAX_INPUT_REQUESTS`]).
    #[error("too many outstanding input requests ({0})")]
    TooManyInputs(usize),
}

/// Where tasks live. Every operation names the owner (an opaque string: the principal, the
/// HTTP session or the connection): a task of another owner is as unknown as one that never
/// existed.
///
/// Status changes follow the specification's lifecycle: `working` and `input_required` move
/// to each other or to a terminal status (`completed`, `failed`, `cancelled`); a terminal
/// status never changes. Implementations enforce it in [`TaskStore::set_status`] and
/// [`TaskStore::finish`]: a change that would leave a terminal status does nothing and returns
/// the task as it is.
pub trait TaskStore: Send + Sync + 'static {
    /// Creates a `working` task of `owner` with a new unguessable id, kept for `ttl` after its
    /// creation; `poll_interval` is what clients are told to wait between polls.
    fn create(
        &self,
        owner: &str,
        ttl: Duration,
        poll_interval: Duration,
    ) -> BoxFuture<'_, Result<Task, TaskStoreError>>;
    /// The task `id` of `owner`, unless unknown or expired.
    fn get(&self, owner: &str, id: &str) -> BoxFuture<'_, Option<StoredTask>>;
    /// Moves a non-terminal task to `status` (`working` or `input_required`, or `cancelled`).
    fn set_status(
        &self,
        owner: &str,
        id: &str,
        status: TaskStatus,
        message: Option<String>,
    ) -> BoxFuture<'_, Option<Task>>;
    /// Ends a non-terminal task with `status` (`completed` or `failed`) and its outcome (an
    /// error's message becomes the status message; outstanding input is dropped).
    fn finish(&self, owner: &str, id: &str, status: TaskStatus, outcome: TaskOutcome) -> BoxFuture<'_, Option<Task>>;
    /// A page of `owner`'s tasks, oldest first, after `cursor`; the cursor of the next page.
    /// An unknown cursor is an error (-32602).
    fn list(&self, owner: &str, cursor: Option<&str>, limit: usize) -> BoxFuture<'_, Result<TaskPage, ErrorObject>>;
    /// The 2026-07-28 extension: records the outstanding input request `key` of a
    /// non-terminal task (`request` is `{"method": .., "params": ..}`) and moves the task to
    /// `input_required`. `Ok(None)` for an unknown task; a terminal task is returned as it is.
    /// At most [`MAX_INPUT_REQUESTS`] may be outstanding ([`TaskStoreError::TooManyInputs`]).
    fn request_input(
        &self,
        owner: &str,
        id: &str,
        key: &str,
        request: Value,
    ) -> BoxFuture<'_, Result<Option<Task>, TaskStoreError>>;
    /// The 2026-07-28 extension (`tasks/update`): delivers answers. Only those whose key is
    /// outstanding are kept (they stop being outstanding); the others are ignored. When none
    /// is outstanding any more, an `input_required` task goes back to `working`. `None` for
    /// an unknown task.
    fn answer_input(
        &self,
        owner: &str,
        id: &str,
        responses: serde_json::Map<String, Value>,
    ) -> BoxFuture<'_, Option<Task>>;
    /// The 2026-07-28 extension: takes (removes) the delivered answer to input `key`, if any.
    fn take_input(&self, owner: &str, id: &str, key: &str) -> BoxFuture<'_, Option<Value>>;
}

/// A page of tasks, as [`TaskStore::list`] returns it.
#[derive(Debug, Clone, Default)]
pub struct TaskPage {
    /// The tasks, oldest first.
    pub tasks: Vec<Task>,
    /// The cursor of the next page, if there is one.
    pub next_cursor: Option<String>,
}

/// Tasks in memory, for the life of the process: at most `max_tasks` live ones (default
/// 1,000), each forgotten when its ttl has passed (expired ones are swept as new ones are
/// created, so the memory stays bounded by the live tasks).
pub struct MemoryTaskStore {
    max_tasks: usize,
    inner: Mutex<MemoryInner>,
}

#[derive(Default)]
struct MemoryInner {
    tasks: HashMap<String, MemoryEntry>,
    /// Task ids in creation order (for listing and sweeping), by sequence number.
    order: BTreeMap<u64, String>,
    next: u64,
}

struct MemoryEntry {
    owner: String,
    expires: Instant,
    stored: StoredTask,
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let live = self.inner.lock_unpoisoned().tasks.len();
        f.debug_struct("MemoryTaskStore").field("max_tasks", &self.max_tasks).field("live", &live).finish()
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        MemoryTaskStore::new(1000)
    }
}

impl MemoryTaskStore {
    /// A store holding at most `max_tasks` live tasks.
    pub fn new(max_tasks: usize) -> Self {
        MemoryTaskStore { max_tasks: max_tasks.max(1), inner: Mutex::new(MemoryInner::default()) }
    }

    /// How many tasks it holds (expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.inner.lock_unpoisoned().tasks.len()
    }

    /// Whether it holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl MemoryInner {
    /// Forgets the expired tasks.
    fn sweep(&mut self, now: Instant) {
        let expired: Vec<(u64, String)> = self
            .order
            .iter()
            .filter(|(_, id)| self.tasks.get(*id).is_none_or(|e| e.expires <= now))
            .map(|(seq, id)| (*seq, id.clone()))
            .collect();
        for (seq, id) in expired {
            self.order.remove(&seq);
            self.tasks.remove(&id);
        }
    }

    /// The live task `id` of `owner`.
    fn entry(&mut self, owner: &str, id: &str) -> Option<&mut MemoryEntry> {
        let now = Instant::now();
        self.tasks.get_mut(id).filter(|e| e.owner == owner && e.expires > now)
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(
        &self,
        owner: &str,
        ttl: Duration,
        poll_interval: Duration,
    ) -> BoxFuture<'_, Result<Task, TaskStoreError>> {
        let now = Instant::now();
        let mut inner = self.inner.lock_unpoisoned();
        if inner.tasks.len() >= self.max_tasks {
            inner.sweep(now);
        }
        let result = if inner.tasks.len() >= self.max_tasks {
            Err(TaskStoreError::Full(inner.tasks.len()))
        } else {
            let id = new_task_id();
            let stamp = timestamp(SystemTime::now());
            let mut task = Task::new(stamp.clone(), stamp, TaskStatus::Working, id.clone());
            task.ttl = Some(millis(ttl));
            task.poll_interval = Some(millis(poll_interval));
            let seq = inner.next;
            inner.next += 1;
            inner.order.insert(seq, id.clone());
            let stored = StoredTask::new(task.clone());
            inner.tasks.insert(id, MemoryEntry { owner: owner.to_owned(), expires: now + ttl, stored });
            Ok(task)
        };
        Box::pin(std::future::ready(result))
    }

    fn get(&self, owner: &str, id: &str) -> BoxFuture<'_, Option<StoredTask>> {
        let found = self.inner.lock_unpoisoned().entry(owner, id).map(|e| e.stored.clone());
        Box::pin(std::future::ready(found))
    }

    fn set_status(
        &self,
        owner: &str,
        id: &str,
        status: TaskStatus,
        message: Option<String>,
    ) -> BoxFuture<'_, Option<Task>> {
        let mut inner = self.inner.lock_unpoisoned();
        let task = inner.entry(owner, id).map(|e| {
            if !is_terminal(&e.stored.task.status) {
                if is_terminal(&status) {
                    e.stored.input_requests.clear();
                    e.stored.input_responses.clear();
                }
                e.stored.task.status = status;
                e.stored.task.status_message = message;
                e.stored.task.last_updated_at = timestamp(SystemTime::now());
            }
            e.stored.task.clone()
        });
        Box::pin(std::future::ready(task))
    }

    fn finish(&self, owner: &str, id: &str, status: TaskStatus, outcome: TaskOutcome) -> BoxFuture<'_, Option<Task>> {
        let mut inner = self.inner.lock_unpoisoned();
        let task = inner.entry(owner, id).map(|e| {
            if !is_terminal(&e.stored.task.status) {
                e.stored.task.status = status;
                e.stored.task.last_updated_at = timestamp(SystemTime::now());
                // A failure's status message describes it; an earlier one (waiting for
                // input, say) no longer applies.
                e.stored.task.status_message = outcome.as_ref().err().map(|e| e.message.clone());
                e.stored.outcome = Some(outcome);
                e.stored.input_requests.clear();
                e.stored.input_responses.clear();
            }
            e.stored.task.clone()
        });
        Box::pin(std::future::ready(task))
    }

    fn list(&self, owner: &str, cursor: Option<&str>, limit: usize) -> BoxFuture<'_, Result<TaskPage, ErrorObject>> {
        let inner = self.inner.lock_unpoisoned();
        let start = match cursor {
            None => 0,
            Some(c) => match c.parse::<u64>() {
                Ok(seq) => seq + 1,
                Err(_) => return Box::pin(std::future::ready(Err(ErrorObject::invalid_params("invalid cursor")))),
            },
        };
        let now = Instant::now();
        let mut page = Vec::new();
        let mut next = None;
        for (seq, id) in inner.order.range(start..) {
            let Some(e) = inner.tasks.get(id).filter(|e| e.owner == owner && e.expires > now) else { continue };
            if page.len() == limit {
                next = Some((seq - 1).to_string());
                break;
            }
            page.push(e.stored.task.clone());
        }
        Box::pin(std::future::ready(Ok(TaskPage { tasks: page, next_cursor: next })))
    }

    fn request_input(
        &self,
        owner: &str,
        id: &str,
        key: &str,
        request: Value,
    ) -> BoxFuture<'_, Result<Option<Task>, TaskStoreError>> {
        let mut inner = self.inner.lock_unpoisoned();
        let result = match inner.entry(owner, id) {
            None => Ok(None),
            Some(e) if is_terminal(&e.stored.task.status) => Ok(Some(e.stored.task.clone())),
            Some(e) => {
                let outstanding = &mut e.stored.input_requests;
                if outstanding.len() >= MAX_INPUT_REQUESTS && !outstanding.contains_key(key) {
                    Err(TaskStoreError::TooManyInputs(outstanding.len()))
                } else {
                    outstanding.insert(key.to_owned(), request);
                    let task = &mut e.stored.task;
                    task.status = TaskStatus::InputRequired;
                    task.status_message = Some("waiting for the client's input".to_owned());
                    task.last_updated_at = timestamp(SystemTime::now());
                    Ok(Some(task.clone()))
                }
            }
        };
        Box::pin(std::future::ready(result))
    }

    fn answer_input(
        &self,
        owner: &str,
        id: &str,
        responses: serde_json::Map<String, Value>,
    ) -> BoxFuture<'_, Option<Task>> {
        let mut inner = self.inner.lock_unpoisoned();
        let task = inner.entry(owner, id).map(|e| {
            let stored = &mut e.stored;
            let mut answered = false;
            for (key, answer) in responses {
                if stored.input_requests.remove(&key).is_some() {
                    stored.input_responses.insert(key, answer);
                    answered = true;
                }
            }
            if answered && stored.input_requests.is_empty() && stored.task.status == TaskStatus::InputRequired {
                stored.task.status = TaskStatus::Working;
                stored.task.status_message = None;
            }
            if answered {
                stored.task.last_updated_at = timestamp(SystemTime::now());
            }
            stored.task.clone()
        });
        Box::pin(std::future::ready(task))
    }

    fn take_input(&self, owner: &str, id: &str, key: &str) -> BoxFuture<'_, Option<Value>> {
        let answer = self.inner.lock_unpoisoned().entry(owner, id).and_then(|e| e.stored.input_responses.remove(key));
        Box::pin(std::future::ready(answer))
    }
}

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

/// An RFC 3339 timestamp in UTC, to the millisecond.
fn timestamp(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// How the server runs tasks: where they live and for how long.
#[derive(Clone)]
pub struct TaskConfig {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) default_ttl: Duration,
    pub(crate) max_ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) page_size: usize,
}

impl std::fmt::Debug for TaskConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskConfig")
            .field("default_ttl", &self.default_ttl)
            .field("max_ttl", &self.max_ttl)
            .field("poll_interval", &self.poll_interval)
            .finish_non_exhaustive()
    }
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            store: Arc::new(MemoryTaskStore::default()),
            default_ttl: Duration::from_secs(300),
            max_ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_secs(1),
            page_size: 100,
        }
    }
}

impl TaskConfig {
    /// A [`MemoryTaskStore`] of 1,000 tasks; tasks kept 5 minutes unless the client asks for
    /// another ttl (at most an hour, at least a second); clients told to poll every second.
    pub fn new() -> Self {
        TaskConfig::default()
    }
    /// Keeps tasks in `store`.
    pub fn store(mut self, store: impl TaskStore) -> Self {
        self.store = Arc::new(store);
        self
    }
    /// The ttl of a task whose client names none (default 5 minutes).
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl;
        self
    }
    /// The longest ttl granted (default an hour): a longer one asked for is cut to it.
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl;
        self
    }
    /// The `pollInterval` clients are told (default 1 s).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// The ttl granted for a requested one (milliseconds): at least a second, at most
    /// [`max_ttl`](Self::max_ttl).
    pub(crate) fn ttl(&self, requested: Option<i64>) -> Duration {
        let ttl = match requested {
            Some(ms) => Duration::from_millis(u64::try_from(ms).unwrap_or(0)),
            None => self.default_ttl,
        };
        ttl.clamp(Duration::from_secs(1), self.max_ttl.max(Duration::from_secs(1)))
    }
}

/// The server's tasks: the store, and the tasks running in this process (to cancel them and
/// to wake those waiting for their result).
pub(crate) struct Tasks {
    pub(crate) config: TaskConfig,
    running: Arc<Mutex<HashMap<String, Running>>>,
    /// With a bus that fans out: the task that cancels a task running here when another
    /// instance cancelled it runs.
    watching: std::sync::atomic::AtomicBool,
    /// Where a task's status changes are announced (to `subscriptions/listen` streams that
    /// follow it, 2026-07-28).
    bus: Arc<dyn crate::bus::SubscriptionBus>,
}

struct Running {
    /// Whose task it is (to read it from the store).
    owner: String,
    cancel: CancellationToken,
    done: Arc<tokio::sync::Notify>,
    /// Woken when the client delivers input to the task (2026-07-28 `tasks/update`).
    input: Arc<tokio::sync::Notify>,
}

impl Tasks {
    pub(crate) fn new(config: TaskConfig, bus: Arc<dyn crate::bus::SubscriptionBus>) -> Self {
        Tasks { config, running: Arc::default(), watching: std::sync::atomic::AtomicBool::new(false), bus }
    }

    /// Announces that task `id` changed (its status, its outstanding input).
    pub(crate) fn changed(&self, id: &str) {
        self.bus.publish(crate::bus::ChangeEvent::TaskChanged(id.to_owned()));
    }

    /// Records a task of `owner` started here; its cancellation token.
    pub(crate) fn started(&self, id: &str, owner: &str) -> CancellationToken {
        let cancel = CancellationToken::new();
        self.started_with(id, owner, cancel.clone());
        cancel
    }

    /// Records a task of `owner` started here that `tasks/cancel` stops through `cancel`.
    pub(crate) fn started_with(&self, id: &str, owner: &str, cancel: CancellationToken) {
        let running = Running {
            owner: owner.to_owned(),
            cancel,
            done: Arc::new(tokio::sync::Notify::new()),
            input: Arc::new(tokio::sync::Notify::new()),
        };
        self.running.lock_unpoisoned().insert(id.to_owned(), running);
        if self.bus.fans_out() {
            self.watch();
        }
    }

    /// In a fleet (a bus that fans out), a task may be cancelled through another instance:
    /// the store says so, and the bus tells of the change. A task running here whose stored
    /// status turned terminal is cancelled here (once, in a runtime).
    fn watch(&self) {
        use std::sync::atomic::Ordering;
        if tokio::runtime::Handle::try_current().is_err() || self.watching.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut events = self.bus.subscribe();
        let running = Arc::downgrade(&self.running);
        let store = self.config.store.clone();
        tokio::spawn(async move {
            loop {
                let ids = match events.recv().await {
                    Ok(crate::bus::ChangeEvent::TaskChanged(id)) => vec![id],
                    // Changes may have been missed: every task running here is looked at.
                    Ok(crate::bus::ChangeEvent::Resync) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        let Some(running) = running.upgrade() else { return };
                        running.lock_unpoisoned().keys().cloned().collect()
                    }
                    Ok(_) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                let Some(running) = running.upgrade() else { return };
                for id in ids {
                    let owner = running.lock_unpoisoned().get(&id).map(|r| r.owner.clone());
                    let Some(owner) = owner else { continue };
                    if let Some(stored) = store.get(&owner, &id).await
                        && is_terminal(&stored.task.status)
                        && let Some(task) = running.lock_unpoisoned().get(&id)
                    {
                        task.cancel.cancel();
                    }
                }
            }
        });
    }

    /// The client delivered input to a task: wakes its handler if it runs here.
    pub(crate) fn input_arrived(&self, id: &str) {
        if let Some(running) = self.running.lock_unpoisoned().get(id) {
            running.input.notify_waiters();
        }
    }

    /// A task started here is over: wakes those waiting for it.
    pub(crate) fn ended(&self, id: &str) {
        if let Some(running) = self.running.lock_unpoisoned().remove(id) {
            running.done.notify_waiters();
        }
    }

    /// Stops a task running here (its handler sees its cancellation).
    pub(crate) fn cancel(&self, id: &str) {
        if let Some(running) = self.running.lock_unpoisoned().get(id) {
            running.cancel.cancel();
        }
    }

    /// Waits until the task is terminal: woken when it ends here, else polling the store at
    /// the poll interval (a task another process runs). `None` if it is unknown or expired.
    pub(crate) async fn wait_terminal(&self, owner: &str, id: &str) -> Option<StoredTask> {
        loop {
            let done = self.running.lock_unpoisoned().get(id).map(|r| r.done.clone());
            let notified = done.as_ref().map(|d| d.notified());
            let stored = self.config.store.get(owner, id).await?;
            if is_terminal(&stored.task.status) {
                return Some(stored);
            }
            match notified {
                Some(notified) => {
                    // Ended between the check and now, or later: either way look again.
                    tokio::select! {
                        () = notified => {}
                        () = tokio::time::sleep(self.config.poll_interval) => {}
                    }
                }
                None => tokio::time::sleep(self.config.poll_interval).await,
            }
        }
    }
}

/// What the context of a task's handler knows of its task.
pub(crate) struct TaskLink {
    pub(crate) id: String,
    pub(crate) owner: String,
    pub(crate) tasks: Arc<Tasks>,
    pub(crate) peer: mcp_jsonrpc::Peer,
    /// A task of the 2026-07-28 extension: input is asked through the task's `inputRequests`
    /// (answered by `tasks/update`), not by requests to the client.
    pub(crate) extension: bool,
    /// Counters for automatic input keys, per kind (extension tasks).
    pub(crate) counters: Mutex<BTreeMap<&'static str, usize>>,
}

impl TaskLink {
    /// The link of a new task.
    pub(crate) fn new(id: String, owner: String, tasks: Arc<Tasks>, peer: mcp_jsonrpc::Peer, extension: bool) -> Self {
        TaskLink { id, owner, tasks, peer, extension, counters: Mutex::new(BTreeMap::new()) }
    }

    /// The next automatic input key of a kind: `elicitation-1`, `sampling-1`, ...
    pub(crate) fn next_key(&self, kind: &'static str) -> String {
        let mut counters = self.counters.lock_unpoisoned();
        let n = counters.entry(kind).or_default();
        *n += 1;
        format!("{kind}-{n}")
    }

    /// The 2026-07-28 extension: asks the client for input `key` through the task (it shows
    /// `request` in `inputRequests` and is `input_required` until the client answers it with
    /// `tasks/update`), and waits for the answer. Woken by `tasks/update` when it reaches this
    /// process, else polling the store at the poll interval; `None` when the task is gone,
    /// terminal (cancelled) or `cancel` fired.
    pub(crate) async fn ask_input(
        &self,
        key: &str,
        request: Value,
        cancel: &CancellationToken,
    ) -> Result<Option<Value>, TaskStoreError> {
        let store = &self.tasks.config.store;
        match store.request_input(&self.owner, &self.id, key, request).await? {
            Some(task) if !is_terminal(&task.status) => self.tasks.changed(&self.id),
            _ => return Ok(None),
        }
        let input = self.tasks.running.lock_unpoisoned().get(&self.id).map(|r| r.input.clone());
        loop {
            // Registered before the store is read: an answer delivered in between still wakes.
            let notified = input.as_ref().map(|n| n.notified());
            if let Some(answer) = store.take_input(&self.owner, &self.id, key).await {
                return Ok(Some(answer));
            }
            match store.get(&self.owner, &self.id).await {
                Some(stored) if !is_terminal(&stored.task.status) => {}
                _ => return Ok(None),
            }
            let poll = tokio::time::sleep(self.tasks.config.poll_interval);
            match notified {
                Some(notified) => tokio::select! {
                    () = notified => {}
                    () = poll => {}
                    () = cancel.cancelled() => return Ok(None),
                },
                None => tokio::select! {
                    () = poll => {}
                    () = cancel.cancelled() => return Ok(None),
                },
            }
        }
    }
}

impl TaskLink {
    /// Runs `ask` (a request to the client the task needs) with the task in `input_required`,
    /// then moves it back to `working`; the client hears of both.
    pub(crate) async fn waiting_for_input<T>(&self, ask: impl std::future::Future<Output = T>) -> T {
        self.set_status(TaskStatus::InputRequired, Some("waiting for the client's input")).await;
        let answer = ask.await;
        self.set_status(TaskStatus::Working, None).await;
        answer
    }

    async fn set_status(&self, status: TaskStatus, message: Option<&str>) {
        let store = &self.tasks.config.store;
        if let Some(task) = store.set_status(&self.owner, &self.id, status, message.map(str::to_owned)).await {
            notify_status(&self.peer, &task).await;
        }
    }
}

/// `notifications/tasks/status` with the task's state.
pub(crate) async fn notify_status(peer: &mcp_jsonrpc::Peer, task: &Task) {
    let params = mcp_types::TaskStatusNotificationParams::from(task.clone());
    if let Err(e) = peer.notify::<mcp_types::TaskStatusNotification>(params).await {
        tracing::debug!(error = %e, "task status notification not sent");
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tasks_belong_to_their_owner_and_keep_a_terminal_status() {
        let store = MemoryTaskStore::new(10);
        let task = store.create("alice", Duration::from_secs(60), Duration::from_secs(1)).await.unwrap();
        assert_eq!(task.status, TaskStatus::Working);
        assert_eq!(task.ttl, Some(60_000));
        assert!(task.task_id.len() >= 22, "{}", task.task_id);
        assert!(store.get("bob", &task.task_id).await.is_none(), "another owner sees it");
        let done = store.finish("alice", &task.task_id, TaskStatus::Completed, Ok(serde_json::json!({}))).await;
        assert_eq!(done.unwrap().status, TaskStatus::Completed);
        let again = store.set_status("alice", &task.task_id, TaskStatus::Cancelled, None).await.unwrap();
        assert_eq!(again.status, TaskStatus::Completed, "a terminal status changed");
        assert!(store.finish("bob", &task.task_id, TaskStatus::Failed, Ok(Value::Null)).await.is_none());
        // A task past its ttl is unknown, even before it is swept.
        let gone = store.create("alice", Duration::ZERO, Duration::ZERO).await.unwrap();
        assert!(store.get("alice", &gone.task_id).await.is_none());
        assert!(store.set_status("alice", &gone.task_id, TaskStatus::Cancelled, None).await.is_none());
    }

    #[tokio::test]
    async fn a_full_store_refuses_new_tasks_but_sweeps_expired_ones_and_memory_stays_bounded() {
        // Tasks whose ttl has passed (here: none at all) make room for new ones.
        let store = MemoryTaskStore::new(3);
        for _ in 0..3000 {
            store.create("a", Duration::ZERO, Duration::ZERO).await.unwrap();
            assert!(store.len() <= 3, "{} tasks held", store.len());
        }
        // Live ones do not.
        let long = Duration::from_secs(60);
        let store = MemoryTaskStore::new(2);
        store.create("a", long, long).await.unwrap();
        store.create("a", long, long).await.unwrap();
        assert!(matches!(store.create("a", long, long).await, Err(TaskStoreError::Full(2))));
        assert_eq!(store.len(), 2);
    }

    #[tokio::test]
    async fn lists_page_by_creation_and_only_the_owners_tasks() {
        let store = MemoryTaskStore::new(100);
        let long = Duration::from_secs(60);
        let mut mine = Vec::new();
        for i in 0..5 {
            mine.push(store.create("a", long, long).await.unwrap().task_id);
            if i % 2 == 0 {
                store.create("b", long, long).await.unwrap();
            }
        }
        let TaskPage { tasks: first, next_cursor: next } = store.list("a", None, 2).await.unwrap();
        assert_eq!(first.iter().map(|t| &t.task_id).collect::<Vec<_>>(), [&mine[0], &mine[1]]);
        let TaskPage { tasks: second, next_cursor: next } = store.list("a", next.as_deref(), 2).await.unwrap();
        assert_eq!(second.iter().map(|t| &t.task_id).collect::<Vec<_>>(), [&mine[2], &mine[3]]);
        let TaskPage { tasks: third, next_cursor: next } = store.list("a", next.as_deref(), 2).await.unwrap();
        assert_eq!(third.iter().map(|t| &t.task_id).collect::<Vec<_>>(), [&mine[4]]);
        assert!(next.is_none());
        assert!(store.list("a", Some("not a cursor"), 2).await.is_err());
    }

    #[tokio::test]
    async fn input_requests_are_bounded_and_only_outstanding_keys_are_answered() {
        let store = MemoryTaskStore::new(10);
        let long = Duration::from_secs(60);
        let id = store.create("a", long, long).await.unwrap().task_id;
        let ask = |key: &str| serde_json::json!({"method": "elicitation/create", "params": {"message": key}});
        let task = store.request_input("a", &id, "k1", ask("k1")).await.unwrap().unwrap();
        assert_eq!(task.status, TaskStatus::InputRequired);
        assert!(store.request_input("b", &id, "k1", ask("k1")).await.unwrap().is_none(), "another owner");
        for i in 2..=MAX_INPUT_REQUESTS {
            store.request_input("a", &id, &format!("k{i}"), ask("k")).await.unwrap();
        }
        assert!(matches!(
            store.request_input("a", &id, "one-too-many", ask("k")).await,
            Err(TaskStoreError::TooManyInputs(MAX_INPUT_REQUESTS))
        ));
        // Unknown keys are ignored; answered ones stop being outstanding.
        let mut answers = serde_json::Map::new();
        answers.insert("k1".into(), serde_json::json!({"action": "accept"}));
        answers.insert("nope".into(), serde_json::json!(1));
        let task = store.answer_input("a", &id, answers).await.unwrap();
        assert_eq!(task.status, TaskStatus::InputRequired, "others are outstanding");
        let stored = store.get("a", &id).await.unwrap();
        assert_eq!(stored.input_requests.len(), MAX_INPUT_REQUESTS - 1);
        assert_eq!(stored.input_responses.keys().collect::<Vec<_>>(), ["k1"]);
        assert_eq!(store.take_input("a", &id, "k1").await, Some(serde_json::json!({"action": "accept"})));
        assert_eq!(store.take_input("a", &id, "k1").await, None, "taken once");
        let rest: serde_json::Map<String, Value> =
            (2..=MAX_INPUT_REQUESTS).map(|i| (format!("k{i}"), serde_json::json!({}))).collect();
        assert_eq!(store.answer_input("a", &id, rest).await.unwrap().status, TaskStatus::Working);
        // Cancelling drops what is outstanding and delivered.
        store.request_input("a", &id, "late", ask("late")).await.unwrap();
        store.set_status("a", &id, TaskStatus::Cancelled, None).await;
        let stored = store.get("a", &id).await.unwrap();
        assert!(stored.input_requests.is_empty() && stored.input_responses.is_empty());
        let after = store.request_input("a", &id, "x", ask("x")).await.unwrap().unwrap();
        assert_eq!(after.status, TaskStatus::Cancelled, "a terminal task asks nothing");
    }

    #[test]
    fn ttls_are_clamped() {
        let config = TaskConfig::new();
        assert_eq!(config.ttl(None), Duration::from_secs(300));
        assert_eq!(config.ttl(Some(0)), Duration::from_secs(1));
        assert_eq!(config.ttl(Some(-5)), Duration::from_secs(1));
        assert_eq!(config.ttl(Some(i64::MAX)), Duration::from_secs(3600));
        assert_eq!(config.ttl(Some(90_000)), Duration::from_secs(90));
    }

    #[test]
    fn timestamps_are_rfc3339() {
        let t = timestamp(SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_066_600_123));
        assert_eq!(t, "2025-11-25T10:30:00.123Z");
    }
}
