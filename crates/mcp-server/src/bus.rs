//! Change events and the bus that carries them: to the `subscriptions/listen` streams
//! (2026-07-28), to the sessions of every instance of a fleet (a bus that fans out), and to
//! the tasks running here that another instance cancelled.
//!
//! The lowest layer, with `schema`, `error` and `trace`: it uses nothing else of the crate.

use std::sync::Arc;

use mcp_types::{
    Notification, PromptListChangedNotification, ResourceListChangedNotification, ToolListChangedNotification,
};
use tokio::sync::broadcast;

/// A change that subscribers may want to hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeEvent {
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// A resource changed.
    ResourceUpdated(String),
    /// A task of the 2026-07-28 tasks extension changed (its status, or the input it waits
    /// for), by id.
    TaskChanged(String),
    /// Changes may have been missed (a bus shared by a fleet lost its connection for a
    /// while): anything may have changed. Listeners announce every list and resource they
    /// follow, as when they fall behind the bus.
    Resync,
}

/// The notifications that a list changed, each with its [`ChangeEvent`].
pub(crate) trait ListChanged: Notification<Params: Default> {
    /// The change announced.
    const EVENT: ChangeEvent;
}

impl ListChanged for ToolListChangedNotification {
    const EVENT: ChangeEvent = ChangeEvent::ToolsListChanged;
}

impl ListChanged for PromptListChangedNotification {
    const EVENT: ChangeEvent = ChangeEvent::PromptsListChanged;
}

impl ListChanged for ResourceListChangedNotification {
    const EVENT: ChangeEvent = ChangeEvent::ResourcesListChanged;
}

/// Carries change events to the `subscriptions/listen` streams. The in-memory one reaches the
/// streams of this process; a distributed one (over a message broker) would publish to and
/// feed every instance.
pub trait SubscriptionBus: Send + Sync + 'static {
    /// Announces a change.
    fn publish(&self, event: ChangeEvent);
    /// A receiver of every change announced from now on. A receiver that lagged is told that
    /// everything its stream follows may have changed; one whose channel closed ends its
    /// stream gracefully (the `subscriptions/listen` request is answered).
    fn subscribe(&self) -> broadcast::Receiver<ChangeEvent>;
    /// Whether the events other instances publish arrive here too (a bus a fleet shares, on
    /// Redis say). Then the server tells its own sessions of the session revisions of every
    /// change the bus brings (list changes, resource updates), its own and other instances',
    /// instead of telling them directly of its own only. Default: `false`.
    fn fans_out(&self) -> bool {
        false
    }
}

/// A [`SubscriptionBus`] within this process (a bounded broadcast channel: a listener that
/// falls behind by more than its capacity misses events, and is then told that every list and
/// resource it follows may have changed).
#[derive(Debug)]
pub struct InMemoryBus {
    tx: broadcast::Sender<ChangeEvent>,
}

impl InMemoryBus {
    /// A bus whose listeners may fall `capacity` events behind.
    pub fn new(capacity: usize) -> Self {
        InMemoryBus { tx: broadcast::channel(capacity.max(1)).0 }
    }
}

impl Default for InMemoryBus {
    fn default() -> Self {
        InMemoryBus::new(256)
    }
}

impl SubscriptionBus for InMemoryBus {
    fn publish(&self, event: ChangeEvent) {
        let _ = self.tx.send(event);
    }
    fn subscribe(&self) -> broadcast::Receiver<ChangeEvent> {
        self.tx.subscribe()
    }
}

/// The default bus.
pub(crate) fn default_bus() -> Arc<dyn SubscriptionBus> {
    Arc::new(InMemoryBus::default())
}
