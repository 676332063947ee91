//! A [`Service`] that dispatches requests and notifications to typed handlers by method.
//!
//! Params are decoded straight from the raw frame into the method's params type (a failure is
//! -32602), the handler runs, and its result is encoded for the connection's protocol revision.
//! An unknown method is -32601. The table is built once; dispatch is one hash lookup.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use mcp_types::{ErrorObject, ForRevision, Notification, Request};

use crate::message::{self, decode_params};
use crate::peer::handle::Peer;
use crate::peer::service::{BoxFuture, Reply, RequestContext, Service};

type RequestHandler = Arc<dyn Fn(message::Request, RequestContext) -> BoxFuture<Reply> + Send + Sync>;
type NotificationHandler = Arc<dyn Fn(message::Notification, &Peer) + Send + Sync>;

/// Typed handlers by method name.
#[derive(Clone, Default)]
pub struct Router {
    requests: HashMap<&'static str, RequestHandler>,
    notifications: HashMap<&'static str, NotificationHandler>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut requests: Vec<_> = self.requests.keys().collect();
        requests.sort();
        let mut notifications: Vec<_> = self.notifications.keys().collect();
        notifications.sort();
        f.debug_struct("Router").field("requests", &requests).field("notifications", &notifications).finish()
    }
}

impl Router {
    /// An empty router: every request is "method not found".
    pub fn new() -> Self {
        Self::default()
    }

    /// Handles requests of method `R::METHOD`.
    pub fn request<R, F, Fut>(mut self, handler: F) -> Self
    where
        R: Request,
        F: Fn(R::Params, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R::Result, ErrorObject>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let erased: RequestHandler = Arc::new(move |req: message::Request, ctx: RequestContext| {
            let params = decode_params::<R::Params>(req.params.as_deref());
            let handler = handler.clone();
            Box::pin(async move {
                let result = handler(params?, ctx.clone()).await?;
                let version = ctx.peer().protocol_version();
                ctx.encode_result(&ForRevision::new(&result, version))
            })
        });
        self.requests.insert(R::METHOD, erased);
        self
    }

    /// Handles notifications of method `N::METHOD` (on the reader task, in order).
    pub fn notification<N, F>(mut self, handler: F) -> Self
    where
        N: Notification,
        F: Fn(N::Params, &Peer) + Send + Sync + 'static,
    {
        let erased: NotificationHandler = Arc::new(move |n: message::Notification, peer: &Peer| {
            match decode_params::<N::Params>(n.params.as_deref()) {
                Ok(params) => handler(params, peer),
                Err(e) => tracing::debug!(method = N::METHOD, error = %e, "malformed notification"),
            }
        });
        self.notifications.insert(N::METHOD, erased);
        self
    }

    /// Whether a request method has a handler.
    pub fn handles(&self, method: &str) -> bool {
        self.requests.contains_key(method)
    }
}

impl Service for Router {
    fn request(&self, request: message::Request, ctx: RequestContext) -> BoxFuture<Reply> {
        match self.requests.get(request.method.as_str()) {
            Some(h) => h(request, ctx),
            None => Box::pin(std::future::ready(Err(ErrorObject::method_not_found(&request.method)))),
        }
    }

    fn notification(&self, notification: message::Notification, peer: &Peer) {
        match self.notifications.get(notification.method.as_str()) {
            Some(h) => h(notification, peer),
            None => tracing::debug!(method = %notification.method, "unhandled notification"),
        }
    }
}
