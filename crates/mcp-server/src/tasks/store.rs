//! Where tasks live: the [`TaskStore`] trait every store implements (one of a fleet's, say)
//! and [`MemoryTaskStore`], the default.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use mcp_jsonrpc::ErrorObject;
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_types::{Task, TaskStatus};
use serde_json::Value;
use tokio::time::Instant;

use super::{TaskOutcome, is_terminal, new_task_id};

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
    /// The owner has as many live tasks as one owner may (a store's `max_per_owner`).
    #[error("too many tasks of this requestor ({0} live); try again later")]
    OwnerFull(usize),
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
    /// Creates a `working` task of `owner` with a new unguessable id; `poll_interval` is what
    /// clients are told to wait between polls. The task is kept while it runs (whatever its
    /// `ttl`: a long task's result is not lost) and for `ttl` once it is terminal, so that its
    /// result stays reachable that long after it exists.
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
    /// Ends a non-terminal task with `status` (`completed` or `failed`) and its outcome (its
    /// status message becomes [`outcome_message`](super::outcome_message)'s; outstanding input
    /// is dropped).
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

    /// The 2026-07-28 extension: sets the status message of a `working` task (what its
    /// handler's progress says, for `tasks/get` and `notifications/tasks`); the task as it now
    /// is, or `None` when it is unknown or not `working` (nothing changed). The default does
    /// nothing.
    fn set_message(&self, owner: &str, id: &str, message: String) -> BoxFuture<'_, Option<Task>> {
        let _ = (owner, id, message);
        Box::pin(std::future::ready(None))
    }

    /// How often the process running a task renews it with [`keep_alive`](Self::keep_alive),
    /// if this store needs it: a store a fleet shares keeps a running task for a lease only, so
    /// that the tasks of an instance that died do not stay forever. `None` (the default, a
    /// store that lives and dies with its process): never.
    fn keep_alive_interval(&self) -> Option<Duration> {
        None
    }

    /// Renews the lease of `owner`'s running task `id` (see
    /// [`keep_alive_interval`](Self::keep_alive_interval)); a terminal task keeps its expiry.
    /// The default does nothing.
    fn keep_alive(&self, owner: &str, id: &str) -> BoxFuture<'_, ()> {
        let _ = (owner, id);
        Box::pin(std::future::ready(()))
    }
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
/// 1,000), each kept while it runs and forgotten when its ttl has passed since it ended
/// (expired ones are swept as new ones are created, so the memory stays bounded by the live
/// tasks).
pub struct MemoryTaskStore {
    max_tasks: usize,
    max_per_owner: usize,
    inner: Mutex<MemoryInner>,
}

#[derive(Default)]
struct MemoryInner {
    tasks: HashMap<String, MemoryEntry>,
    /// Task ids in creation order (for listing and sweeping), by sequence number.
    order: BTreeMap<u64, String>,
    next: u64,
    /// How many tasks each owner has (expired ones not yet swept included).
    owners: HashMap<String, usize>,
}

struct MemoryEntry {
    owner: String,
    /// How long it is kept once terminal.
    ttl: Duration,
    /// When it is forgotten: none while it runs.
    expires: Option<Instant>,
    stored: StoredTask,
}

impl MemoryEntry {
    fn live(&self, now: Instant) -> bool {
        self.expires.is_none_or(|at| at > now)
    }

    /// The task turned terminal: kept `ttl` from now.
    fn ended(&mut self) {
        self.expires = Some(Instant::now() + self.ttl);
    }
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let live = self.inner.lock_unpoisoned().tasks.len();
        f.debug_struct("MemoryTaskStore")
            .field("max_tasks", &self.max_tasks)
            .field("max_per_owner", &self.max_per_owner)
            .field("live", &live)
            .finish()
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
        MemoryTaskStore {
            max_tasks: max_tasks.max(1),
            max_per_owner: usize::MAX,
            inner: Mutex::new(MemoryInner::default()),
        }
    }

    /// Sets how many live tasks one owner may have (default: as many as the store holds), so
    /// that one requestor cannot take them all; a new one beyond it is refused with
    /// [`TaskStoreError::OwnerFull`]. Extension tasks without an HTTP principal all have one
    /// owner (they are server-global), so this bounds them together.
    pub fn max_per_owner(mut self, max: usize) -> Self {
        self.max_per_owner = max.max(1);
        self
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
            .filter(|(_, id)| self.tasks.get(*id).is_none_or(|e| !e.live(now)))
            .map(|(seq, id)| (*seq, id.clone()))
            .collect();
        for (seq, id) in expired {
            self.order.remove(&seq);
            if let Some(entry) = self.tasks.remove(&id)
                && let Some(n) = self.owners.get_mut(&entry.owner)
            {
                *n -= 1;
                if *n == 0 {
                    self.owners.remove(&entry.owner);
                }
            }
        }
    }

    /// The live task `id` of `owner`.
    fn entry(&mut self, owner: &str, id: &str) -> Option<&mut MemoryEntry> {
        let now = Instant::now();
        self.tasks.get_mut(id).filter(|e| e.owner == owner && e.live(now))
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
        let of_owner = |inner: &MemoryInner| inner.owners.get(owner).copied().unwrap_or(0);
        if inner.tasks.len() >= self.max_tasks || of_owner(&inner) >= self.max_per_owner {
            inner.sweep(now);
        }
        let result = if inner.tasks.len() >= self.max_tasks {
            Err(TaskStoreError::Full(inner.tasks.len()))
        } else if of_owner(&inner) >= self.max_per_owner {
            Err(TaskStoreError::OwnerFull(of_owner(&inner)))
        } else {
            let id = new_task_id();
            let stamp = timestamp(SystemTime::now());
            let mut task = Task::new(stamp.clone(), stamp, TaskStatus::Working, id.clone());
            task.ttl = Some(millis(ttl));
            task.poll_interval = Some(millis(poll_interval));
            let seq = inner.next;
            inner.next += 1;
            inner.order.insert(seq, id.clone());
            *inner.owners.entry(owner.to_owned()).or_default() += 1;
            let stored = StoredTask::new(task.clone());
            inner.tasks.insert(id, MemoryEntry { owner: owner.to_owned(), ttl, expires: None, stored });
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
                    e.ended();
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
                // A failure's status message describes it; an earlier one (waiting for
                // input, say) no longer applies.
                e.stored.task.status_message = super::outcome_message(&status, &outcome);
                e.stored.task.status = status;
                e.stored.task.last_updated_at = timestamp(SystemTime::now());
                e.stored.outcome = Some(outcome);
                e.stored.input_requests.clear();
                e.stored.input_responses.clear();
                e.ended();
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
            let Some(e) = inner.tasks.get(id).filter(|e| e.owner == owner && e.live(now)) else { continue };
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

    fn set_message(&self, owner: &str, id: &str, message: String) -> BoxFuture<'_, Option<Task>> {
        let mut inner = self.inner.lock_unpoisoned();
        let task = inner.entry(owner, id).filter(|e| e.stored.task.status == TaskStatus::Working).map(|e| {
            e.stored.task.status_message = Some(message);
            e.stored.task.last_updated_at = timestamp(SystemTime::now());
            e.stored.task.clone()
        });
        Box::pin(std::future::ready(task))
    }
}

/// An RFC 3339 timestamp in UTC, to the millisecond.
fn timestamp(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
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
        // A task past its ttl (from its end) is unknown, even before it is swept.
        let gone = store.create("alice", Duration::ZERO, Duration::ZERO).await.unwrap();
        assert!(store.get("alice", &gone.task_id).await.is_some(), "a running task expired");
        store.finish("alice", &gone.task_id, TaskStatus::Completed, Ok(Value::Null)).await.unwrap();
        assert!(store.get("alice", &gone.task_id).await.is_none());
        assert!(store.set_status("alice", &gone.task_id, TaskStatus::Cancelled, None).await.is_none());
    }

    #[tokio::test]
    async fn a_full_store_refuses_new_tasks_but_sweeps_expired_ones_and_memory_stays_bounded() {
        // Ended tasks whose ttl has passed (here: none at all) make room for new ones.
        let store = MemoryTaskStore::new(3);
        for _ in 0..3000 {
            let id = store.create("a", Duration::ZERO, Duration::ZERO).await.unwrap().task_id;
            store.finish("a", &id, TaskStatus::Completed, Ok(Value::Null)).await.unwrap();
            assert!(store.len() <= 3, "{} tasks held", store.len());
        }
        // Live ones do not, nor running ones whatever their ttl.
        let store = MemoryTaskStore::new(1);
        store.create("a", Duration::ZERO, Duration::ZERO).await.unwrap();
        assert!(matches!(store.create("a", Duration::ZERO, Duration::ZERO).await, Err(TaskStoreError::Full(1))));
        let long = Duration::from_secs(60);
        let store = MemoryTaskStore::new(2);
        store.create("a", long, long).await.unwrap();
        store.create("a", long, long).await.unwrap();
        assert!(matches!(store.create("a", long, long).await, Err(TaskStoreError::Full(2))));
        assert_eq!(store.len(), 2);
    }

    #[tokio::test]
    async fn one_owner_cannot_take_every_task_of_the_store() {
        let long = Duration::from_secs(60);
        let store = MemoryTaskStore::new(10).max_per_owner(2);
        let first = store.create("greedy", long, long).await.unwrap().task_id;
        store.create("greedy", long, long).await.unwrap();
        assert!(matches!(store.create("greedy", long, long).await, Err(TaskStoreError::OwnerFull(2))));
        // Others still get theirs.
        for _ in 0..2 {
            store.create("modest", long, long).await.unwrap();
        }
        // An ended task counts until its ttl has passed; then it makes room for its owner.
        store.finish("greedy", &first, TaskStatus::Completed, Ok(Value::Null)).await.unwrap();
        assert!(matches!(store.create("greedy", long, long).await, Err(TaskStoreError::OwnerFull(2))));
        assert!(matches!(store.create("modest", long, long).await, Err(TaskStoreError::OwnerFull(2))));
        let store = MemoryTaskStore::new(10).max_per_owner(1);
        let id = store.create("a", Duration::ZERO, long).await.unwrap().task_id;
        store.finish("a", &id, TaskStatus::Completed, Ok(Value::Null)).await.unwrap();
        store.create("a", long, long).await.unwrap();
        assert_eq!(store.len(), 1, "the expired one was swept");
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

    #[tokio::test(start_paused = true)]
    async fn a_task_lives_while_it_runs_and_for_its_ttl_after_it_ends() {
        let store = MemoryTaskStore::new(10);
        let ttl = Duration::from_secs(60);
        let ask = serde_json::json!({"method": "elicitation/create", "params": {}});
        for end in [TaskStatus::Completed, TaskStatus::Cancelled] {
            let id = store.create("a", ttl, ttl).await.unwrap().task_id;
            // A 400-second task with a 60-second ttl: still there, working or waiting.
            tokio::time::advance(Duration::from_secs(200)).await;
            assert_eq!(store.get("a", &id).await.expect("a working task expired").task.status, TaskStatus::Working);
            store.request_input("a", &id, "k", ask.clone()).await.unwrap();
            tokio::time::advance(Duration::from_secs(200)).await;
            let waiting = store.get("a", &id).await.expect("a task waiting for input expired");
            assert_eq!(waiting.task.status, TaskStatus::InputRequired);
            if end == TaskStatus::Completed {
                store.finish("a", &id, end.clone(), Ok(serde_json::json!({"content": []}))).await.unwrap();
            } else {
                store.set_status("a", &id, end.clone(), None).await.unwrap();
            }
            // Then kept for its ttl from its end, not from its creation.
            tokio::time::advance(ttl - Duration::from_secs(1)).await;
            let ended = store.get("a", &id).await.expect("the result went before its ttl");
            assert_eq!(ended.task.status, end);
            assert_eq!(store.list("a", None, 10).await.unwrap().tasks.iter().filter(|t| t.task_id == id).count(), 1);
            tokio::time::advance(Duration::from_secs(2)).await;
            assert!(store.get("a", &id).await.is_none(), "kept past its ttl");
        }
    }

    #[test]
    fn timestamps_are_rfc3339() {
        let t = timestamp(SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_066_600_123));
        assert_eq!(t, "2025-11-25T10:30:00.123Z");
    }
}
