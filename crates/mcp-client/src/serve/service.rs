//! What the client serves: the server's requests of the session revisions (sampling,
//! elicitation, roots) and its notifications, routed to subscriptions or reported as
//! [`ServerEvent`]s.

use std::sync::Arc;

use mcp_jsonrpc::{BoxFuture, Peer, Reply, RequestContext, Router, Service, message};
use mcp_types::{CreateMessageRequest, ElicitRequest, ListRootsRequest, ListRootsResult, ProtocolVersion};
use tokio::sync::broadcast;

use crate::cache::ListCache;
use crate::listen::Registry;
use crate::serve::custom::CustomHandlers;
use crate::serve::handlers::{InputHandlers, apply_elicitation_defaults, check_elicitation_mode, session_era};
use crate::serve::input_tasks;
use crate::wire::event::{self, ServerEvent};

/// The user's callback for every event.
pub(crate) type EventCallback = Arc<dyn Fn(ServerEvent) + Send + Sync>;

/// Reports an event (see [`emitter`]).
pub(crate) type Emit = Arc<dyn Fn(ServerEvent) + Send + Sync>;

/// Reports an event: drops the cached pages of a list that changed, calls the callback, feeds
/// the broadcast.
pub(crate) fn emitter(
    callback: Option<EventCallback>,
    events: broadcast::Sender<ServerEvent>,
    cache: Option<Arc<ListCache>>,
) -> Emit {
    Arc::new(move |event: ServerEvent| {
        if let Some(cache) = &cache {
            match &event {
                ServerEvent::ToolListChanged => cache.invalidate(&["tools/list"]),
                ServerEvent::PromptListChanged => cache.invalidate(&["prompts/list"]),
                ServerEvent::ResourceListChanged => cache.invalidate(&["resources/list", "resources/templates/list"]),
                _ => {}
            }
        }
        if let Some(cb) = &callback {
            cb(event.clone());
        }
        let _ = events.send(event);
    })
}

/// What the client serves: the server's requests (sessions of the session revisions) and its
/// notifications, routed to subscriptions or reported as events.
pub(crate) struct ClientService {
    pub(crate) router: Router,
    pub(crate) registry: Arc<Registry>,
    pub(crate) emit: Emit,
    /// The handlers of the server's custom requests and notifications.
    pub(crate) custom: CustomHandlers,
}

impl Service for ClientService {
    fn request(&self, request: message::Request, ctx: RequestContext) -> BoxFuture<Reply> {
        // A custom method's handler; else the router's (-32601 for a method it lacks).
        if !self.router.handles(&request.method)
            && let Some(answer) = self.custom.serve(&request, &ctx)
        {
            return answer;
        }
        Service::request(&self.router, request, ctx)
    }

    fn notification(&self, n: message::Notification, peer: &Peer) {
        if n.method == "notifications/cancelled" {
            if !self.registry.server_cancelled(&n) {
                tracing::debug!("cancellation of an unknown request");
            }
            return;
        }
        if let Some(id) = event::subscription_of(&n)
            && self.registry.deliver(&id, &n, &*self.emit)
        {
            return;
        }
        if self.custom.notify(&n, peer) {
            return;
        }
        match event::event_of(&n) {
            Some(event) => (self.emit)(event),
            None => tracing::debug!(method = %n.method, "unhandled notification"),
        }
    }
}

/// The handlers of the server's requests in a session (a 2026-07-28 server asks in its
/// results instead, and its requests of this kind get -32601).
pub(crate) fn router(handlers: &InputHandlers) -> Router {
    let mut router = Router::new();
    if let Some(h) = handlers.sampling.clone() {
        router = router.request::<CreateMessageRequest, _, _>(move |params, ctx| {
            let h = h.clone();
            async move {
                session_era::<CreateMessageRequest>(&ctx, ProtocolVersion::V2024_11_05)?;
                h.create_message(params).await
            }
        });
    }
    if let Some(h) = handlers.elicitation.clone() {
        let defaults = handlers.apply_defaults;
        let url_mode = handlers.elicitation_url;
        router = router.request::<ElicitRequest, _, _>(move |params, ctx| {
            let h = h.clone();
            async move {
                // Elicitation came with 2025-06-18.
                session_era::<ElicitRequest>(&ctx, ProtocolVersion::V2025_06_18)?;
                check_elicitation_mode(&params, url_mode)?;
                let mut result = h.elicit(params.clone()).await?;
                if defaults {
                    apply_elicitation_defaults(&params, &mut result);
                }
                Ok(result)
            }
        });
    }
    if let Some(h) = handlers.roots.clone() {
        router = router.request::<ListRootsRequest, _, _>(move |_params, ctx| {
            let h = h.clone();
            async move {
                session_era::<ListRootsRequest>(&ctx, ProtocolVersion::V2024_11_05)?;
                Ok(ListRootsResult::new(h.roots().await?))
            }
        });
    }
    if handlers.tasks {
        router = input_tasks::routes(router, handlers, Default::default());
    }
    router
}
