//! `subscriptions/listen` (2026-07-28): a long-lived request whose response stream carries the
//! change notifications a client opted in to, fanned out through a [`SubscriptionBus`].

use std::sync::Arc;

use mcp_jsonrpc::message::decode_params;
use mcp_jsonrpc::{ErrorObject, Reply, RequestContext};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::server::ServerShared;

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
}

#[derive(serde::Deserialize)]
struct Params {
    notifications: Option<Filter>,
}

/// Serves one `subscriptions/listen`: the acknowledgement with what is honoured, then the
/// matching changes, each tagged with the subscription id, until the client cancels (or the
/// bus closes: then the request is answered, a graceful end).
pub(crate) async fn listen(
    server: &ServerShared,
    params: Option<&serde_json::value::RawValue>,
    rctx: &RequestContext,
) -> Reply {
    let Params { notifications } = decode_params(params)?;
    let Some(asked) = notifications else {
        return Err(ErrorObject::invalid_params("`notifications` is missing"));
    };
    let caps = &server.capabilities;
    let honoured = Filter {
        tools: asked.tools && caps.tools.is_some(),
        prompts: asked.prompts && caps.prompts.is_some(),
        resources: asked.resources && caps.resources.is_some(),
        uris: if caps.resources.as_ref().is_some_and(|r| r.subscribe == Some(true)) { asked.uris } else { Vec::new() },
    };
    let id = serde_json::to_value(rctx.id()).unwrap_or(Value::Null);
    let tag = json!({"io.modelcontextprotocol/subscriptionId": id});
    let mut ack = serde_json::Map::new();
    for (key, on) in [
        ("toolsListChanged", honoured.tools),
        ("promptsListChanged", honoured.prompts),
        ("resourcesListChanged", honoured.resources),
    ] {
        if on {
            ack.insert(key.to_owned(), json!(true));
        }
    }
    if !honoured.uris.is_empty() {
        ack.insert("resourceSubscriptions".to_owned(), json!(honoured.uris));
    }
    let peer = rctx.peer();
    let mut events = server.bus.subscribe();
    let params = json!({"notifications": ack, "_meta": tag});
    send(peer, "notifications/subscriptions/acknowledged", &params).await?;
    if !(honoured.tools || honoured.prompts || honoured.resources || !honoured.uris.is_empty()) {
        // Nothing to listen to: the stream ends at once.
        return complete(server, rctx, tag);
    }
    loop {
        let events = match events.recv().await {
            Ok(event) => vec![event],
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                // Missed some: any list, and any resource, the listener follows may have
                // changed. Each is announced (notifications of the kinds it asked for only).
                tracing::debug!(missed, "a subscriptions/listen stream fell behind the bus");
                let mut all = vec![
                    ChangeEvent::ToolsListChanged,
                    ChangeEvent::PromptsListChanged,
                    ChangeEvent::ResourcesListChanged,
                ];
                all.extend(honoured.uris.iter().cloned().map(ChangeEvent::ResourceUpdated));
                all
            }
            // The bus is gone (the server is shutting down): a graceful end, as the
            // specification's graceful closure has it.
            Err(broadcast::error::RecvError::Closed) => return complete(server, rctx, tag),
        };
        for event in events {
            let (method, extra) = match &event {
                ChangeEvent::ToolsListChanged if honoured.tools => ("notifications/tools/list_changed", None),
                ChangeEvent::PromptsListChanged if honoured.prompts => ("notifications/prompts/list_changed", None),
                ChangeEvent::ResourcesListChanged if honoured.resources => {
                    ("notifications/resources/list_changed", None)
                }
                ChangeEvent::ResourceUpdated(uri) if honoured.uris.iter().any(|u| u == uri) => {
                    ("notifications/resources/updated", Some(uri.clone()))
                }
                _ => continue,
            };
            let mut params = json!({"_meta": tag});
            if let Some(uri) = extra {
                params["uri"] = json!(uri);
            }
            send(peer, method, &params).await?;
        }
    }
}

/// The result that ends a subscription gracefully: `resultType: "complete"` and the
/// subscription id (and `serverInfo`) in `_meta`.
fn complete(server: &ServerShared, rctx: &RequestContext, tag: Value) -> Reply {
    let mut result = json!({"_meta": tag});
    crate::stateless::decorate(&mut result, &crate::stateless::Decoration::new(server, None));
    rctx.encode_result(&result)
}

async fn send(peer: &mcp_jsonrpc::Peer, method: &str, params: &Value) -> Result<(), ErrorObject> {
    let frame = mcp_jsonrpc::message::encode_notification(method, Some(params)).map_err(ErrorObject::internal_error)?;
    peer.send_frame(frame).await.map_err(ErrorObject::internal_error)
}

/// The default bus.
pub(crate) fn default_bus() -> Arc<dyn SubscriptionBus> {
    Arc::new(InMemoryBus::default())
}
