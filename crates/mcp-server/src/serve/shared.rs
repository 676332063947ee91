//! What every connection of a server shares ([`ServerShared`]): its identity, capabilities and
//! settings, the registry of its items, its custom methods, tasks and bus, and the list of its
//! live sessions. The builder makes it, the serving reads it, the server changes it at runtime.

use mcp_jsonrpc::sync::{MutexExt as _, RwLockExt as _};
use std::sync::{Arc, Mutex, RwLock, Weak};

use mcp_jsonrpc::{Peer, PeerConfig};
use mcp_types::{Implementation, ServerCapabilities};

use super::seal::StateKeys;
use crate::bus::SubscriptionBus;
use crate::context::StateMap;
use crate::context::session::SessionState;
use crate::def::cache::CachePolicy;
use crate::def::custom::CustomMethods;
use crate::def::registry::Registry;
use crate::tasks::running::Tasks;

/// Called when a client says its roots changed; the [`Peer`] reaches that client (to call
/// `roots/list` again, say).
pub type RootsChangedCallback = Arc<dyn Fn(Peer) + Send + Sync>;

pub(crate) struct ServerShared {
    pub(crate) info: Implementation,
    /// `info` as JSON, written once: 2026-07-28 results carry it in their `_meta`.
    pub(crate) info_json: Arc<serde_json::value::RawValue>,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) page_size: usize,
    /// Whether tools registered at runtime get their output schema compiled for the check of
    /// their structured content (see
    /// [`ServerBuilder::check_structured_content`](crate::ServerBuilder::check_structured_content)).
    pub(crate) check_structured_content: bool,
    pub(crate) peer_config: PeerConfig,
    pub(crate) state: Arc<StateMap>,
    pub(crate) on_roots_changed: Option<RootsChangedCallback>,
    /// Who sees which items ([`ServerBuilder::visibility`](crate::ServerBuilder::visibility)):
    /// `None`, every item is seen (and lists are pages of the registry's slices, unfiltered).
    pub(crate) visibility: Option<crate::context::visibility::VisibilityFn>,
    /// Items whose `scopes` a request's token lacks are hidden from it rather than refused
    /// with 403 ([`ServerBuilder::hide_out_of_scope`](crate::ServerBuilder::hide_out_of_scope)).
    pub(crate) hide_out_of_scope: bool,
    /// The URI of each file of the skills served (the Skills extension) to the URI of its
    /// skill's `SKILL.md`, whose visibility the file follows; empty without skills.
    pub(crate) skill_files: Arc<hashbrown::HashMap<String, String>>,
    /// The generated files of the dynamic skills served: what `resources/read` falls back to
    /// for a URI no resource or template serves; empty without them.
    pub(crate) skill_generated: Arc<crate::skills::GeneratedFiles>,
    pub(crate) cache_hints: CachePolicy,
    pub(crate) state_keys: StateKeys,
    pub(crate) bus: Arc<dyn SubscriptionBus>,
    /// The tasks (2025-11-25): present when the server declares the `tasks` capability.
    pub(crate) tasks: Option<Arc<Tasks>>,
    /// Where the task methods go when the server's tasks run elsewhere
    /// ([`ServerBuilder::forward_tasks`](crate::ServerBuilder::forward_tasks)); `None` when
    /// `tasks` is set.
    pub(crate) task_forwarder: Option<Arc<dyn crate::def::forward::TaskForwarder>>,
    /// The handlers of methods outside the protocol.
    pub(crate) custom: CustomMethods,
    /// The middleware's hooks on what the server sends, outermost first (empty: sent as is).
    /// Its requests pass the layers before the serving (`serve::session::Serving`).
    pub(crate) outgoing: crate::middleware::outgoing::Layers,
    pub(crate) registry: RwLock<Arc<Registry>>,
    /// Bumped whenever the registry is changed at runtime (under its write lock, before the
    /// swap): what the list cache of the middleware checks its results against.
    pub(crate) lists_generation: std::sync::atomic::AtomicU64,
    pub(crate) sessions: Mutex<Vec<Weak<SessionState>>>,
    /// Sessions ended since `sessions` was last swept (see [`ServerShared::session_ended`]).
    pub(crate) ended: std::sync::atomic::AtomicUsize,
    /// The task that tells this process's sessions of what a bus that fans out brings runs.
    pub(crate) relay: std::sync::atomic::AtomicBool,
    /// How the HTTP endpoints whose sessions a fleet shares load a session this instance does
    /// not hold (for `Server::session`); empty outside a fleet.
    #[cfg(feature = "http")]
    pub(crate) loaders: Mutex<Vec<mcp_transport_http::server::SessionLoader>>,
}

impl ServerShared {
    pub(crate) fn registry(&self) -> Arc<Registry> {
        self.registry.read_unpoisoned().clone()
    }

    /// A session's service is gone. Once as many have ended as half the list holds, the list
    /// is swept (amortized O(1) per session): a `Weak` keeps its session's allocation, so
    /// entries left after a burst of sessions ended would hold that memory (4 KiB a session,
    /// scattered over the heap) until as many new sessions came.
    pub(crate) fn session_ended(&self) {
        use std::sync::atomic::Ordering;
        let ended = self.ended.fetch_add(1, Ordering::Relaxed) + 1;
        let mut sessions = self.sessions.lock_unpoisoned();
        if ended * 2 >= sessions.len() {
            self.ended.store(0, Ordering::Relaxed);
            sessions.retain(|s| s.upgrade().is_some_and(|s| s.peer.get().is_some_and(|p| !p.is_closed())));
            let live = sessions.len();
            if sessions.capacity() > 64 && live < sessions.capacity() / 4 {
                sessions.shrink_to(live * 2);
            }
        }
    }

    /// How many sessions the list of live ones holds (ended ones not swept yet included).
    #[cfg(test)]
    pub(crate) fn listed_sessions(&self) -> usize {
        self.sessions.lock_unpoisoned().len()
    }
}
