//! Custom methods: requests and notifications outside the protocol (a method of the user's own,
//! or an extension's), with handlers registered on the [`ServerBuilder`](crate::ServerBuilder)
//! typed ([`CustomRequest`](mcp_types::CustomRequest),
//! [`CustomNotification`](mcp_types::CustomNotification)) or raw (method name and JSON
//! params): the registry of their handlers. Dispatch looks them up only where a method is not
//! the protocol's (`serve::custom`).

use hashbrown::HashMap;
use mcp_jsonrpc::Peer;
use serde_json::value::RawValue;

use crate::context::Context;
use crate::error::DefinitionError;

/// A custom request's handler, erased.
pub(crate) type RequestFn = mcp_jsonrpc::custom::RequestFn<Context>;
/// A custom notification's handler, erased.
type NotificationFn = mcp_jsonrpc::custom::NotificationFn;

/// The custom methods a server serves, by method name.
#[derive(Default, Clone)]
pub(crate) struct CustomMethods {
    requests: HashMap<String, RequestFn>,
    notifications: HashMap<String, NotificationFn>,
    /// A method registered twice or under a protocol name: refused by `build`.
    pub(crate) refused: Option<DefinitionError>,
}

impl CustomMethods {
    /// Registers the handler of a request of `method`.
    pub(crate) fn add_request(&mut self, method: String, handler: RequestFn) {
        if let Some(refused) = refusal(&method, self.requests.contains_key(&method), "custom request") {
            self.refused.get_or_insert(refused);
            return;
        }
        self.requests.insert(method, handler);
    }

    /// Registers the handler of a notification of `method`.
    pub(crate) fn add_notification(&mut self, method: String, handler: NotificationFn) {
        if let Some(refused) = refusal(&method, self.notifications.contains_key(&method), "custom notification") {
            self.refused.get_or_insert(refused);
            return;
        }
        self.notifications.insert(method, handler);
    }

    /// The handler of a custom request.
    pub(crate) fn request(&self, method: &str) -> Option<&RequestFn> {
        self.requests.get(method)
    }

    /// Hands a notification of a method outside the protocol to its handler; whether it had
    /// one. On the reader task, in order (a panic there is the engine's to catch and log).
    pub(crate) fn notify(&self, method: &str, params: Option<&RawValue>, peer: &Peer) -> bool {
        match self.notifications.get(method) {
            Some(handler) => {
                handler(params, peer);
                true
            }
            None => false,
        }
    }
}

/// Why a custom method cannot be registered under `method`, if it cannot: the protocol's
/// methods are not the user's to replace, and a method has one handler.
fn refusal(method: &str, taken: bool, kind: &'static str) -> Option<DefinitionError> {
    if mcp_types::is_reserved_method(method) {
        return Some(DefinitionError::ReservedMethod { method: method.to_owned() });
    }
    taken.then(|| DefinitionError::Duplicate { kind, name: method.to_owned() })
}
