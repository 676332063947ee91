//! Telling connected clients of changes: list changes and resource updates, sent to this
//! process's sessions directly, or (a fleet, with a bus that fans out) through the relay of
//! every change the bus brings, this instance's and the others'.

use mcp_jsonrpc::sync::MutexExt as _;
use std::sync::{Arc, Weak};

use mcp_types::{
    PromptListChangedNotification, ResourceListChangedNotification, ResourceUpdatedNotification,
    ResourceUpdatedNotificationParams, ToolListChangedNotification,
};

use super::Server;
use crate::bus::{ChangeEvent, ListChanged};
use crate::context::session::SessionState;
use crate::context::visibility::{ItemKind, SessionControl};
use crate::def::registry::Registry;

impl Server {
    /// The server's middleware, if it has any (what it sends goes through it).
    pub(crate) fn layers(&self) -> Option<crate::middleware::outgoing::Layers> {
        (!self.shared.outgoing.is_empty()).then(|| self.shared.outgoing.clone())
    }

    /// Connected, initialized sessions.
    pub(super) fn live_sessions(&self) -> Vec<Arc<SessionState>> {
        let sessions = self.shared.sessions.lock_unpoisoned();
        sessions.iter().filter_map(Weak::upgrade).filter(|s| s.is_initialized()).collect()
    }

    /// The session `id` (see [`SessionControl::id`](crate::SessionControl::id)) connected to
    /// this process, to hide items from it or show them again: only that session is told
    /// (`list_changed`). A session a fleet shares is changed in the fleet's record, so every
    /// instance hides the items. One this instance does not hold yet (served by another
    /// instance only) is loaded from the fleet's store, as a request of it would load it
    /// (two round trips to the store, on this call only); a session that is not shared costs
    /// no round trip. `None`: no such session.
    pub async fn session(&self, id: &str) -> Option<SessionControl> {
        if let Some(control) = self.held_session(id) {
            return Some(control);
        }
        #[cfg(feature = "http")]
        {
            let loaders = self.shared.loaders.lock_unpoisoned().clone();
            for loader in loaders {
                if loader.load(id).await
                    && let Some(control) = self.held_session(id)
                {
                    return Some(control);
                }
            }
        }
        None
    }

    /// The session `id`, if this process holds it (or a copy of it).
    fn held_session(&self, id: &str) -> Option<SessionControl> {
        let state = self.live_sessions().into_iter().find(|s| s.public_id() == id)?;
        let version = state.peer.get()?.protocol_version();
        Some(SessionControl { state, attachment: None, version, layers: self.layers() })
    }

    /// Tells the subscription bus and every connected session that a list changed.
    pub(super) async fn broadcast<N: ListChanged>(&self) {
        self.shared.bus.publish(N::EVENT);
        if self.shared.bus.fans_out() {
            // The relay tells the sessions, of this change as of other instances'.
            return self.start_relay();
        }
        let sends = self.live_sessions().into_iter().filter_map(|session| {
            let peer = session.peer.get()?.clone();
            Some(notify_within::<N>(self.layers(), peer, Default::default()))
        });
        futures_util::future::join_all(sends).await;
    }

    /// Tells connected clients that the tool list changed, though this server's did not: for a
    /// server whose tools mirror another's (`mcp-gateway`), when that one says its list
    /// changed and the mirror is the same. [`add_tool`](Self::add_tool) and
    /// [`remove_tool`](Self::remove_tool) tell them by themselves.
    pub async fn notify_tool_list_changed(&self) {
        self.broadcast::<ToolListChangedNotification>().await;
    }

    /// Tells connected clients that the prompt list changed (see
    /// [`notify_tool_list_changed`](Self::notify_tool_list_changed)).
    pub async fn notify_prompt_list_changed(&self) {
        self.broadcast::<PromptListChangedNotification>().await;
    }

    /// Tells connected clients that the resource list changed (see
    /// [`notify_tool_list_changed`](Self::notify_tool_list_changed)).
    pub async fn notify_resource_list_changed(&self) {
        self.broadcast::<ResourceListChangedNotification>().await;
    }

    /// Tells the clients subscribed to `uri` that it changed.
    pub async fn notify_resource_updated(&self, uri: &str) {
        self.shared.bus.publish(ChangeEvent::ResourceUpdated(uri.to_owned()));
        if self.shared.bus.fans_out() {
            return self.start_relay();
        }
        let registry = self.shared.registry();
        let sends = self.live_sessions().into_iter().filter(|s| follows(s, &registry, uri)).filter_map(|session| {
            let peer = session.peer.get()?.clone();
            let params = ResourceUpdatedNotificationParams::new(uri);
            Some(notify_within::<ResourceUpdatedNotification>(self.layers(), peer, params))
        });
        futures_util::future::join_all(sends).await;
    }
}

/// A fleet: the changes a bus that fans out brings (this instance's and the others'), told to
/// this process's sessions.
impl Server {
    /// Starts the relay (once, in a runtime).
    pub(super) fn start_relay(&self) {
        use std::sync::atomic::Ordering;
        if tokio::runtime::Handle::try_current().is_err() || self.shared.relay.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut events = self.shared.bus.subscribe();
        let server = Arc::downgrade(&self.shared);
        tokio::spawn(async move {
            loop {
                let event = match events.recv().await {
                    Ok(event) => Some(event),
                    // Missed some: every list may have changed.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => None,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                let Some(shared) = server.upgrade() else { return };
                Server { shared }.tell_sessions(event).await;
            }
        });
    }

    /// Tells this process's sessions of a change (`None`: of every list).
    async fn tell_sessions(&self, event: Option<ChangeEvent>) {
        let sessions = self.live_sessions();
        let peers = |filter: &dyn Fn(&SessionState) -> bool| {
            sessions.iter().filter(|s| filter(s)).filter_map(|s| s.peer.get().cloned()).collect::<Vec<_>>()
        };
        let all = peers(&|_| true);
        let layers = self.layers();
        let sends: Vec<futures_util::future::BoxFuture<'static, ()>> = match event {
            Some(ChangeEvent::ToolsListChanged) => {
                fanout::<ToolListChangedNotification>(&layers, all, Default::default)
            }
            Some(ChangeEvent::PromptsListChanged) => {
                fanout::<PromptListChangedNotification>(&layers, all, Default::default)
            }
            Some(ChangeEvent::ResourcesListChanged) => {
                fanout::<ResourceListChangedNotification>(&layers, all, Default::default)
            }
            Some(ChangeEvent::ResourceUpdated(uri)) => {
                let registry = self.shared.registry();
                let subscribed = peers(&|s| follows(s, &registry, &uri));
                fanout::<ResourceUpdatedNotification>(&layers, subscribed, || {
                    ResourceUpdatedNotificationParams::new(&uri)
                })
            }
            Some(ChangeEvent::TaskChanged(_)) => Vec::new(),
            Some(ChangeEvent::Resync) | None => {
                let mut sends = fanout::<ToolListChangedNotification>(&layers, all.clone(), Default::default);
                sends.extend(fanout::<PromptListChangedNotification>(&layers, all.clone(), Default::default));
                sends.extend(fanout::<ResourceListChangedNotification>(&layers, all, Default::default));
                sends
            }
        };
        futures_util::future::join_all(sends).await;
    }
}

/// Whether `session` is told of updates of `uri`: it subscribed to it, and does not hide what
/// serves it (the resource at `uri`, or a template that matches it; if nothing does, `uri`
/// itself). What the server's predicate hides from the session was not subscribed to.
fn follows(session: &SessionState, registry: &Registry, uri: &str) -> bool {
    session.is_subscribed(uri)
        && !(session.hides_any()
            && match registry.serves_visibly(uri, |item| !session.hides(item.kind(), item.key())) {
                Some(seen) => !seen,
                None => session.hides(ItemKind::Resource, uri),
            })
}

/// Notification `N` to each of `peers` (of a server whose capabilities declare it), hinted
/// [`Fanout`](mcp_transport_http::server::Fanout): of the copies of a session a fleet shares,
/// the one that holds its GET stream sends it.
fn fanout<N>(
    layers: &Option<crate::middleware::outgoing::Layers>,
    peers: Vec<mcp_jsonrpc::Peer>,
    params: impl Fn() -> N::Params,
) -> Vec<futures_util::future::BoxFuture<'static, ()>>
where
    N: mcp_types::Notification<Params: Send + Sync + 'static>,
{
    peers
        .into_iter()
        .map(|peer| {
            let params = params();
            let layers = layers.clone();
            Box::pin(async move {
                #[cfg(feature = "http")]
                let hints: Option<mcp_jsonrpc::FrameHints> = Some(Arc::new(mcp_transport_http::server::Fanout));
                #[cfg(not(feature = "http"))]
                let hints = None;
                let sent = crate::middleware::outgoing::notify::<N>(layers.as_ref(), &peer, params, hints);
                match tokio::time::timeout(NOTIFY_WAIT, sent).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::debug!(error = %e, method = N::METHOD, "notification not sent"),
                    Err(_) => tracing::warn!(method = N::METHOD, "a client reads nothing: notification not sent to it"),
                }
            }) as futures_util::future::BoxFuture<'static, ()>
        })
        .collect()
}

/// How long a notification to every client waits for room in one client's outgoing queue: a
/// client that reads nothing for that long misses it, and the others do not wait for it.
const NOTIFY_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Sends a notification to one client of many, waiting at most [`NOTIFY_WAIT`] for room.
async fn notify_within<N: mcp_types::Notification>(
    layers: Option<crate::middleware::outgoing::Layers>,
    peer: mcp_jsonrpc::Peer,
    params: N::Params,
) {
    let sent = crate::middleware::outgoing::notify::<N>(layers.as_ref(), &peer, params, None);
    match tokio::time::timeout(NOTIFY_WAIT, sent).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, method = N::METHOD, "notification not sent"),
        Err(_) => tracing::warn!(method = N::METHOD, "a client reads nothing: notification not sent to it"),
    }
}
