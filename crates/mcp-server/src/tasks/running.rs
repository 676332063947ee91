//! The tasks running in this process ([`Tasks`]: to cancel them, to wake those waiting for
//! their result or their input, to watch a fleet's cancellations), and what the context of a
//! task's handler knows of its task ([`TaskLink`]; [`Deferred`] for a 2026-07-28 call whose
//! task begins where its handler says).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use mcp_jsonrpc::sync::MutexExt as _;
use mcp_jsonrpc::{CancellationToken, ErrorObject, Peer};
use mcp_types::{CallToolResult, Task, TaskStatus};
use serde_json::Value;
use tokio::sync::oneshot;

use super::config::TaskConfig;
use super::is_terminal;
use super::store::{StoredTask, TaskStoreError};
use crate::bus::{ChangeEvent, SubscriptionBus};

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
    bus: Arc<dyn SubscriptionBus>,
}

struct Running {
    /// Whose task it is (to read it from the store).
    owner: String,
    cancel: CancellationToken,
    done: Arc<tokio::sync::Notify>,
    /// Woken when the client delivers input to the task (2026-07-28 `tasks/update`).
    input: Arc<tokio::sync::Notify>,
    /// With a store that leases running tasks: stops renewing the lease when dropped.
    _alive: Option<StopOnDrop>,
}

/// Cancels its token when dropped.
struct StopOnDrop(CancellationToken);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl Tasks {
    pub(crate) fn new(config: TaskConfig, bus: Arc<dyn SubscriptionBus>) -> Self {
        Tasks { config, running: Arc::default(), watching: std::sync::atomic::AtomicBool::new(false), bus }
    }

    /// Announces that task `id` changed (its status, its outstanding input).
    pub(crate) fn changed(&self, id: &str) {
        self.bus.publish(ChangeEvent::TaskChanged(id.to_owned()));
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
            _alive: self.keep_alive(id, owner),
        };
        self.running.lock_unpoisoned().insert(id.to_owned(), running);
        if self.bus.fans_out() {
            self.watch();
        }
    }

    /// With a store that leases running tasks ([`TaskStore::keep_alive_interval`]): renews
    /// the task's lease at that interval until the guard returned is dropped (when the task
    /// ends here). Nothing for a store that needs none.
    ///
    /// [`TaskStore::keep_alive_interval`]: super::store::TaskStore::keep_alive_interval
    fn keep_alive(&self, id: &str, owner: &str) -> Option<StopOnDrop> {
        let interval = self.config.store.keep_alive_interval()?;
        tokio::runtime::Handle::try_current().ok()?;
        let stop = CancellationToken::new();
        let (store, stopped) = (self.config.store.clone(), stop.clone());
        let (id, owner) = (id.to_owned(), owner.to_owned());
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(interval.max(std::time::Duration::from_millis(10)));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            loop {
                tokio::select! {
                    () = stopped.cancelled() => return,
                    _ = ticks.tick() => store.keep_alive(&owner, &id).await,
                }
            }
        });
        Some(StopOnDrop(stop))
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
                    Ok(ChangeEvent::TaskChanged(id)) => vec![id],
                    // Changes may have been missed: every task running here is looked at.
                    Ok(ChangeEvent::Resync) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
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
    /// The server's middleware, if any: the status notifications go through it.
    pub(crate) layers: Option<crate::middleware::outgoing::Layers>,
    /// Counters for automatic input keys, per kind (extension tasks).
    pub(crate) counters: Mutex<BTreeMap<&'static str, usize>>,
    /// How many requests to the client the task waits for (2025-11-25), held while the status
    /// they imply is written, so that writes follow the count.
    asking: tokio::sync::Mutex<usize>,
}

impl TaskLink {
    /// The link of a new task.
    pub(crate) fn new(
        id: String,
        owner: String,
        tasks: Arc<Tasks>,
        peer: mcp_jsonrpc::Peer,
        extension: bool,
        layers: Option<crate::middleware::outgoing::Layers>,
    ) -> Self {
        TaskLink {
            id,
            owner,
            tasks,
            peer,
            extension,
            layers,
            counters: Mutex::new(BTreeMap::new()),
            asking: tokio::sync::Mutex::new(0),
        }
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
    /// then moves it back to `working` once no other such request is open; the client hears of
    /// both. (An `ask` dropped before its answer leaves the task `input_required` until the
    /// next change.)
    pub(crate) async fn waiting_for_input<T>(&self, ask: impl std::future::Future<Output = T>) -> T {
        {
            let mut asking = self.asking.lock().await;
            *asking += 1;
            if *asking == 1 {
                self.set_status(TaskStatus::InputRequired, Some("waiting for the client's input")).await;
            }
        }
        let answer = ask.await;
        let mut asking = self.asking.lock().await;
        *asking = asking.saturating_sub(1);
        if *asking == 0 {
            self.set_status(TaskStatus::Working, None).await;
        }
        answer
    }

    /// The 2026-07-28 extension: the handler's progress, as the task's status message while it
    /// is `working` (announced, so `notifications/tasks` carries it): after the call was
    /// answered, the extension has no other channel for it.
    pub(crate) async fn progressed(&self, message: String) {
        if self.tasks.config.store.set_message(&self.owner, &self.id, message).await.is_some() {
            self.tasks.changed(&self.id);
        }
    }

    async fn set_status(&self, status: TaskStatus, message: Option<&str>) {
        let store = &self.tasks.config.store;
        if let Some(task) = store.set_status(&self.owner, &self.id, status, message.map(str::to_owned)).await {
            notify_status(self.layers.as_ref(), &self.peer, &task).await;
        }
    }
}

/// `notifications/tasks/status` with the task's state.
pub(crate) async fn notify_status(
    layers: Option<&crate::middleware::outgoing::Layers>,
    peer: &mcp_jsonrpc::Peer,
    task: &Task,
) {
    let params = mcp_types::TaskStatusNotificationParams::from(task.clone());
    let sent = crate::middleware::outgoing::notify::<mcp_types::TaskStatusNotification>(layers, peer, params, None);
    if let Err(e) = sent.await {
        tracing::debug!(error = %e, "task status notification not sent");
    }
}

/// What the handler of a deferred task tells the request waiting for it.
pub(crate) enum Ran {
    /// It became a task.
    Task(Task),
    /// It ended before becoming one: the call's result.
    Done(Result<CallToolResult, ErrorObject>),
}

pub(crate) type Escalate = Arc<Mutex<Option<oneshot::Sender<Ran>>>>;

/// A call whose task begins where its handler awaits [`Context::run_as_task`](crate::Context::run_as_task).
pub(crate) struct Deferred {
    pub(crate) tasks: Arc<Tasks>,
    pub(crate) owner: String,
    /// The ttl the task gets.
    pub(crate) ttl: std::time::Duration,
    /// The task, once created.
    pub(crate) link: Arc<OnceLock<Arc<TaskLink>>>,
    pub(crate) escalate: Escalate,
    pub(crate) cancel: CancellationToken,
    /// The span the handler runs in (`mcp.server.task`): it learns the task's id here.
    pub(crate) span: tracing::Span,
}

impl Deferred {
    /// Creates the task (once), answers the waiting request with it.
    pub(crate) async fn begin(
        &self,
        peer: &Peer,
        layers: Option<&crate::middleware::outgoing::Layers>,
    ) -> Result<(), ErrorObject> {
        if self.link.get().is_some() {
            return Ok(());
        }
        let config = &self.tasks.config;
        let task = config
            .store
            .create(&self.owner, self.ttl, config.poll_interval)
            .await
            .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        self.tasks.started_with(&task.task_id, &self.owner, self.cancel.clone());
        if !self.span.is_disabled() {
            self.span.record("mcp.task.id", task.task_id.as_str());
        }
        let (owner, tasks) = (self.owner.clone(), self.tasks.clone());
        let link = TaskLink::new(task.task_id.clone(), owner, tasks, peer.clone(), true, layers.cloned());
        let _ = self.link.set(Arc::new(link));
        if let Some(tx) = self.escalate.lock_unpoisoned().take() {
            let _ = tx.send(Ran::Task(task));
        }
        Ok(())
    }
}
