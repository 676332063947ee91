//! The handlers of the server's custom requests and notifications (methods outside the
//! protocol, a user's own or an extension's), set on the
//! [`ClientBuilder`](crate::ClientBuilder), typed or raw. A custom notification without a
//! handler reaches the user as [`ServerEvent::Notification`](crate::ServerEvent::Notification).

use std::collections::HashMap;

use mcp_jsonrpc::message;
use mcp_jsonrpc::{BoxFuture, Peer, Reply, RequestContext};

/// A custom request's handler, erased.
type RequestFn = mcp_jsonrpc::custom::RequestFn<RequestContext>;
/// A custom notification's handler, erased.
type NotificationFn = mcp_jsonrpc::custom::NotificationFn;

/// The handlers of the server's custom requests and notifications, by method.
#[derive(Clone, Default)]
pub(crate) struct CustomHandlers {
    requests: HashMap<String, RequestFn>,
    notifications: HashMap<String, NotificationFn>,
    /// A handler registered under a method of the protocol: refused when connecting.
    pub(crate) refused: Option<String>,
}

impl CustomHandlers {
    /// Sets the handler of requests of `method` (replacing any before).
    pub(crate) fn add_request(&mut self, method: String, handler: RequestFn) {
        if mcp_types::is_reserved_method(&method) {
            self.refused.get_or_insert(method);
        } else {
            self.requests.insert(method, handler);
        }
    }

    /// Sets the handler of notifications of `method` (replacing any before).
    pub(crate) fn add_notification(&mut self, method: String, handler: NotificationFn) {
        if mcp_types::is_reserved_method(&method) {
            self.refused.get_or_insert(method);
        } else {
            self.notifications.insert(method, handler);
        }
    }

    /// Serves a custom request, if it has a handler.
    pub(crate) fn serve(&self, request: &message::Request, ctx: &RequestContext) -> Option<BoxFuture<Reply>> {
        let handler = self.requests.get(request.method.as_str())?;
        let answer = handler(request.params.as_deref(), ctx.clone());
        let ctx = ctx.clone();
        Some(Box::pin(async move { ctx.encode_result(&answer.await?) }))
    }

    /// Hands a notification to its handler; whether it had one.
    pub(crate) fn notify(&self, n: &message::Notification, peer: &Peer) -> bool {
        if self.notifications.is_empty() {
            return false;
        }
        match self.notifications.get(n.method.as_str()) {
            Some(handler) => {
                handler(n.params.as_deref(), peer);
                true
            }
            None => false,
        }
    }
}
