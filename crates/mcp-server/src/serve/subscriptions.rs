//! `subscriptions/listen` (2026-07-28): a long-lived request whose response stream carries the
//! change notifications a client opted in to, fanned out through a [`SubscriptionBus`](crate::SubscriptionBus).

use mcp_jsonrpc::message::decode_params;
use mcp_jsonrpc::{ErrorObject, Reply, RequestContext};
use mcp_types::{
    Notification, PromptListChangedNotification, ProtocolVersion, ResourceListChangedNotification,
    ResourceUpdatedNotification, ServerCapabilities, SubscriptionsAcknowledgedNotification,
    ToolListChangedNotification,
};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::bus::ChangeEvent;
use crate::context::session::SessionState;
use crate::context::visibility::Item;
use crate::serve::shared::ServerShared;

#[derive(serde::Deserialize, Default)]
struct Filter {
    #[serde(rename = "toolsListChanged", default)]
    tools: bool,
    #[serde(rename = "promptsListChanged", default)]
    prompts: bool,
    #[serde(rename = "resourcesListChanged", default)]
    resources: bool,
    #[serde(rename = "resourceSubscriptions", default)]
    uris: Vec<String>,
    /// Tasks of the 2026-07-28 tasks extension (SEP-2663), by id.
    #[serde(rename = "taskIds", default)]
    task_ids: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Params {
    notifications: Option<Filter>,
}

impl Filter {
    /// What of `asked` the server honours: the kinds of changes whose capability it declared
    /// (resource updates only if it declared `resources.subscribe`).
    fn honoured(asked: Filter, caps: &ServerCapabilities) -> Filter {
        Filter {
            tools: asked.tools && caps.tools.is_some(),
            prompts: asked.prompts && caps.prompts.is_some(),
            resources: asked.resources && caps.resources.is_some(),
            uris: if caps.resources.as_ref().is_some_and(|r| r.subscribe == Some(true)) {
                asked.uris
            } else {
                Vec::new()
            },
            // Checked against the store by `listen`.
            task_ids: asked.task_ids,
        }
    }

    fn is_empty(&self) -> bool {
        !(self.tools || self.prompts || self.resources || !self.uris.is_empty() || !self.task_ids.is_empty())
    }

    /// The `notifications` member of the acknowledgement: what is honoured.
    fn acknowledgement(&self) -> serde_json::Map<String, Value> {
        let mut ack = serde_json::Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                ack.insert(key.to_owned(), json!(true));
            }
        }
        if !self.uris.is_empty() {
            ack.insert("resourceSubscriptions".to_owned(), json!(self.uris));
        }
        if !self.task_ids.is_empty() {
            ack.insert("taskIds".to_owned(), json!(self.task_ids));
        }
        ack
    }

    /// Every change the listener may have missed: each list, each resource it follows.
    fn everything(&self) -> Vec<ChangeEvent> {
        let mut all =
            vec![ChangeEvent::ToolsListChanged, ChangeEvent::PromptsListChanged, ChangeEvent::ResourcesListChanged];
        all.extend(self.uris.iter().cloned().map(ChangeEvent::ResourceUpdated));
        all.extend(self.task_ids.iter().cloned().map(ChangeEvent::TaskChanged));
        all
    }

    /// The notification of a change, by its marker's method, if the listener asked for it
    /// (with the URI of an updated resource).
    fn notification<'e>(&self, event: &'e ChangeEvent) -> Option<(&'static str, Option<&'e str>)> {
        Some(match event {
            ChangeEvent::ToolsListChanged if self.tools => (ToolListChangedNotification::METHOD, None),
            ChangeEvent::PromptsListChanged if self.prompts => (PromptListChangedNotification::METHOD, None),
            ChangeEvent::ResourcesListChanged if self.resources => (ResourceListChangedNotification::METHOD, None),
            ChangeEvent::ResourceUpdated(uri) if self.uris.iter().any(|u| u == uri) => {
                (ResourceUpdatedNotification::METHOD, Some(uri.as_str()))
            }
            _ => return None,
        })
    }
}

/// The notification of a task's change (the tasks extension).
const TASKS_NOTIFICATION: &str = "notifications/tasks";

/// The most tasks one subscription follows.
const MAX_TASK_IDS: usize = 64;

/// Serves one `subscriptions/listen`: the acknowledgement with what is honoured, then the
/// matching changes, each tagged with the subscription id, until the client cancels (or the
/// bus closes: then the request is answered, a graceful end).
///
/// `taskIds` (the tasks extension) need the extension declared by the request (`tasks`:
/// else -32021); the tasks honoured are those the requester may read, and each change of one
/// is a `notifications/tasks` with the task as `tasks/get` details it.
///
/// On a server whose tasks run elsewhere, the forwarder follows them (`follower`: the
/// request's context, given on such a server): the ids it follows are honoured, and each
/// change it reports is sent as a `notifications/tasks`.
///
/// `viewer`: who listens (its revision and what its `_meta` declared), when the server may hide
/// items from it. A resource hidden from it is acknowledged as one that does not exist is, and
/// its updates are not sent while the server hides it (asked when each update comes: a resource
/// added later, hidden, is not told of either).
pub(crate) async fn listen(
    server: &ServerShared,
    params: Option<&serde_json::value::RawValue>,
    rctx: &RequestContext,
    tasks_declared: bool,
    viewer: Option<(ProtocolVersion, std::sync::Arc<SessionState>)>,
    follower: Option<crate::context::Context>,
) -> Reply {
    let Params { notifications } = decode_params(params)?;
    let Some(asked) = notifications else {
        return Err(ErrorObject::invalid_params("`notifications` is missing"));
    };
    let mut honoured = Filter::honoured(asked, &server.capabilities);
    let owner = super::owner::extension_owner(rctx);
    // The changes of the tasks the forwarder follows (none: no such task).
    let mut followed = None;
    if !honoured.task_ids.is_empty() {
        match &server.tasks {
            None if server.task_forwarder.is_none() => honoured.task_ids.clear(),
            _ if !tasks_declared => {
                return Err(super::tasks_ext::missing_extension("`subscriptions/listen` with `taskIds`"));
            }
            None => match (&server.task_forwarder, follower) {
                (Some(forwarder), Some(ctx)) => {
                    honoured.task_ids.truncate(MAX_TASK_IDS);
                    let tasks = forwarder.follow(std::mem::take(&mut honoured.task_ids), ctx).await;
                    honoured.task_ids = tasks.task_ids;
                    followed = Some(tasks.changes);
                }
                _ => honoured.task_ids.clear(),
            },
            Some(tasks) => {
                honoured.task_ids.truncate(MAX_TASK_IDS);
                let mut known = Vec::new();
                for id in std::mem::take(&mut honoured.task_ids) {
                    if tasks.config.store.get(&owner, &id).await.is_some() {
                        known.push(id);
                    }
                }
                honoured.task_ids = known;
            }
        }
    }
    let id = serde_json::to_value(rctx.id()).unwrap_or(Value::Null);
    let tag = json!({ mcp_types::meta::SUBSCRIPTION_ID: id });
    let peer = rctx.peer();
    let mut events = server.bus.subscribe();
    let params = json!({"notifications": honoured.acknowledgement(), "_meta": tag});
    send(server, peer, SubscriptionsAcknowledgedNotification::METHOD, &params).await?;
    if honoured.is_empty() {
        // Nothing to listen to: the stream ends at once.
        return complete(server, rctx, tag);
    }
    loop {
        // The connection is over (the client went away): no one to tell, nothing to answer;
        // the handler ends now rather than at the end of the connection's grace.
        let received = tokio::select! {
            received = events.recv() => received,
            mut task = next_followed(&mut followed) => {
                task.insert("_meta".to_owned(), tag.clone());
                send(server, peer, TASKS_NOTIFICATION, &Value::Object(task)).await?;
                continue;
            }
            () = peer.ended() => return Err(ErrorObject::internal_error("the connection ended")),
        };
        let events = match received {
            Ok(ChangeEvent::Resync) => honoured.everything(),
            Ok(event) => vec![event],
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                // Missed some: any list, and any resource, the listener follows may have
                // changed. Each is announced (notifications of the kinds it asked for only).
                tracing::debug!(missed, "a subscriptions/listen stream fell behind the bus");
                honoured.everything()
            }
            // The bus is gone (the server is shutting down): a graceful end, as the
            // specification's graceful closure has it.
            Err(broadcast::error::RecvError::Closed) => return complete(server, rctx, tag),
        };
        for event in &events {
            if let (ChangeEvent::TaskChanged(id), Some(tasks)) = (event, &server.tasks)
                && honoured.task_ids.contains(id)
            {
                // The task as `tasks/get` details it (gone: nothing to tell).
                let Ok(mut task) = super::tasks_ext::detailed(tasks.config.store.as_ref(), &owner, id).await else {
                    continue;
                };
                task.insert("_meta".to_owned(), tag.clone());
                send(server, peer, TASKS_NOTIFICATION, &Value::Object(task)).await?;
                continue;
            }
            let Some((method, uri)) = honoured.notification(event) else { continue };
            if let (Some(uri), Some((version, state))) = (uri, &viewer) {
                let shows = |item: Item<'_>| super::call::server_shows(server, state, rctx, *version, item);
                if server.registry().serves_visibly(uri, shows) == Some(false) {
                    continue;
                }
            }
            let mut params = json!({"_meta": tag});
            if let Some(uri) = uri {
                params["uri"] = json!(uri);
            }
            send(server, peer, method, &params).await?;
        }
    }
}

/// The next change of a task the forwarder follows; never, once it reports no more (or
/// follows none).
async fn next_followed(
    followed: &mut Option<tokio::sync::mpsc::Receiver<serde_json::Map<String, Value>>>,
) -> serde_json::Map<String, Value> {
    if let Some(changes) = followed {
        if let Some(task) = changes.recv().await {
            return task;
        }
        *followed = None;
    }
    std::future::pending().await
}

/// The result that ends a subscription gracefully: `resultType: "complete"` and the
/// subscription id (and `serverInfo`) in `_meta`.
fn complete(server: &ServerShared, rctx: &RequestContext, tag: Value) -> Reply {
    let mut result = json!({"_meta": tag});
    super::reply::decorate(&mut result, &super::reply::Decoration::new(server, None));
    rctx.encode_result(&result)
}

/// Sends a notification of the stream, through the server's middleware (a layer may change or
/// drop it).
async fn send(
    server: &ServerShared,
    peer: &mcp_jsonrpc::Peer,
    method: &str,
    params: &Value,
) -> Result<(), ErrorObject> {
    let layers = (!server.outgoing.is_empty()).then_some(&server.outgoing);
    let body = Some(params as &dyn mcp_jsonrpc::message::Body);
    crate::middleware::outgoing::notify_raw(layers, peer, method, body).await.map_err(ErrorObject::internal_error)
}
