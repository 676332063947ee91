//! The server's notifications as the client reports them: [`ServerEvent`], and the subscription
//! a notification belongs to.

use mcp_jsonrpc::message::{self, Notification};
use mcp_types::{
    ElicitationCompleteNotificationParams, LoggingMessageNotificationParams, RequestId,
    ResourceUpdatedNotificationParams,
};

/// A notification from the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// A log message (`notifications/message`).
    Log(LoggingMessageNotificationParams),
    /// The tool list changed.
    ToolListChanged,
    /// The prompt list changed.
    PromptListChanged,
    /// The resource list changed.
    ResourceListChanged,
    /// A subscribed resource changed.
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
    /// A URL-mode elicitation was completed out of band (2025-11-25).
    ElicitationComplete {
        /// The elicitation it completes.
        elicitation_id: String,
    },
    /// A task's status changed (`notifications/tasks/status`, 2025-11-25): its whole state.
    TaskStatus(mcp_types::Task),
    /// A notification the client does not model (a custom method, an extension's), as it
    /// came.
    Notification {
        /// Its method.
        method: String,
        /// Its params, if any.
        params: Option<serde_json::Value>,
    },
}

/// The event a notification is, if it is one the client reports.
pub(crate) fn event_of(n: &Notification) -> Option<ServerEvent> {
    let event = match n.method.as_str() {
        "notifications/message" => ServerEvent::Log(decode::<LoggingMessageNotificationParams>(n)?),
        "notifications/tools/list_changed" => ServerEvent::ToolListChanged,
        "notifications/prompts/list_changed" => ServerEvent::PromptListChanged,
        "notifications/resources/list_changed" => ServerEvent::ResourceListChanged,
        "notifications/resources/updated" => {
            ServerEvent::ResourceUpdated { uri: decode::<ResourceUpdatedNotificationParams>(n)?.uri }
        }
        "notifications/elicitation/complete" => ServerEvent::ElicitationComplete {
            elicitation_id: decode::<ElicitationCompleteNotificationParams>(n)?.elicitation_id,
        },
        // A task followed through `subscriptions/listen` (the 2026-07-28 tasks extension).
        "notifications/tasks" => {
            let task = decode::<serde_json::Value>(n)?;
            ServerEvent::TaskStatus(crate::wire::tasks::extension_task(&n.method, &task).ok()?)
        }
        "notifications/tasks/status" => ServerEvent::TaskStatus(decode::<mcp_types::Task>(n)?),
        // Any other: the user's to read (a custom method, an extension's).
        _ => ServerEvent::Notification {
            method: n.method.clone(),
            params: n.params.as_deref().and_then(|p| serde_json::from_str(p.get()).ok()),
        },
    };
    Some(event)
}

pub(crate) fn decode<T: serde::de::DeserializeOwned>(n: &Notification) -> Option<T> {
    match message::decode_params::<T>(n.params.as_deref()) {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::debug!(method = %n.method, error = %e, "malformed notification");
            None
        }
    }
}

/// The subscription a notification belongs to (`_meta["io.modelcontextprotocol/subscriptionId"]`).
pub(crate) fn subscription_of(n: &Notification) -> Option<RequestId> {
    let params = n.params.as_deref()?;
    if !params.get().contains(mcp_types::meta::SUBSCRIPTION_ID) {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct WithMeta {
        #[serde(rename = "_meta")]
        meta: Meta,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
        id: RequestId,
    }
    serde_json::from_str::<WithMeta>(params.get()).ok().map(|w| w.meta.id)
}
