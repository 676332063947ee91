//! Custom methods: requests and notifications outside the protocol (a method of the user's own,
//! or an extension's). The client sends them ([`Client::request`], [`Client::request_raw`],
//! [`Client::notify`], [`Client::notify_raw`]) and serves the server's with handlers set on the
//! [`ClientBuilder`](crate::ClientBuilder), typed ([`CustomRequest`], [`CustomNotification`]) or
//! raw. A custom notification without a handler reaches the user as
//! [`ServerEvent::Notification`](crate::ServerEvent::Notification).

use std::collections::HashMap;

use mcp_jsonrpc::message::{self, Body};
use mcp_jsonrpc::{BoxFuture, CallOptions, Peer, Reply, RequestContext};
use mcp_types::{CustomNotification, CustomRequest, JSONObject};
use serde_json::Value;

use crate::client::Connection;
use crate::trace::Target;
use crate::{Client, ClientError};

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

/// Params as JSON, `None` for a type that writes `null` (`()`, `None`).
fn params_value<T: serde::Serialize>(params: &T) -> Result<Option<Value>, ClientError> {
    match serde_json::to_value(params).map_err(ClientError::Encode)? {
        Value::Null => Ok(None),
        value => Ok(Some(value)),
    }
}

impl Client {
    /// Sends the custom request `R` (a method outside the protocol, see [`CustomRequest`]) and
    /// decodes its result. In 2026-07-28 it carries the per-request `_meta` as every request
    /// does (its params must then be a JSON object, or none). No capability is checked: look
    /// at [`server_extension`](Self::server_extension) or
    /// [`server_experimental`](Self::server_experimental) as your method needs.
    ///
    /// ```no_run
    /// # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
    /// use mcp_types::CustomRequest;
    ///
    /// enum Add {}
    /// impl CustomRequest for Add {
    ///     const METHOD: &'static str = "acme/add";
    ///     type Params = serde_json::Value;
    ///     type Result = i64;
    /// }
    ///
    /// let sum = client.request::<Add>(serde_json::json!({"a": 1, "b": 2})).await?;
    /// # Ok(()) }
    /// ```
    pub async fn request<R: CustomRequest>(&self, params: R::Params) -> Result<R::Result, ClientError> {
        let value = self.request_raw_with(R::METHOD, params_value(&params)?, CallOptions::default()).await?;
        serde_json::from_value(value).map_err(|e| ClientError::decode(R::METHOD, e))
    }

    /// Sends the request `method` with `params` as JSON, and returns its result as JSON (see
    /// [`request`](Self::request)).
    pub async fn request_raw(&self, method: &str, params: Option<Value>) -> Result<Value, ClientError> {
        self.request_raw_with(method, params, CallOptions::default()).await
    }

    /// [`request_raw`](Self::request_raw) with call options (a timeout, a cancellation token,
    /// progress).
    pub async fn request_raw_with(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<Value, ClientError> {
        self.traced(method, Target::None, options, |options| async move {
            match &self.connection {
                Connection::Session(s) => {
                    let body = params.as_ref().map(|p| p as &dyn Body);
                    let send = || self.peer.request_raw(method, body, options.clone());
                    let raw = s.renewing(&self.peer, method, send).await?;
                    serde_json::from_str(raw.get()).map_err(|e| ClientError::decode(method, e))
                }
                Connection::Stateless(s) => s.call_raw(&self.peer, method, params, options).await,
            }
        })
        .await
    }

    /// Sends the custom notification `N` (see [`CustomNotification`]).
    pub async fn notify<N: CustomNotification>(&self, params: N::Params) -> Result<(), ClientError> {
        self.notify_raw(N::METHOD, params_value(&params)?).await
    }

    /// Sends the notification `method` with `params` as JSON.
    pub async fn notify_raw(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        Ok(self.peer.notify_raw(method, params.as_ref().map(|p| p as &dyn Body)).await?)
    }

    /// The settings of an extension the server declared (`capabilities.extensions[name]`,
    /// 2026-07-28; servers of the session revisions declare none).
    pub fn server_extension(&self, name: &str) -> Option<&mcp_types::JsonObject> {
        entry(self.server.capabilities.extensions.as_ref(), name)
    }

    /// The settings of an experimental capability the server declared
    /// (`capabilities.experimental[name]`).
    pub fn server_experimental(&self, name: &str) -> Option<&mcp_types::JsonObject> {
        entry(self.server.capabilities.experimental.as_ref(), name)
    }
}

fn entry<'a>(
    map: Option<&'a std::collections::BTreeMap<String, JSONObject>>,
    name: &str,
) -> Option<&'a mcp_types::JsonObject> {
    map?.get(name).map(|o| &o.extra)
}
