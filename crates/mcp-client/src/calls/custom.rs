//! Custom methods: requests and notifications outside the protocol (a method of the user's own,
//! or an extension's), sent by the client ([`Client::request`], [`Client::request_raw`],
//! [`Client::notify`], [`Client::notify_raw`]), typed ([`CustomRequest`], [`CustomNotification`])
//! or raw. The handlers of the server's are in `serve::custom`.

use mcp_jsonrpc::CallOptions;
use mcp_jsonrpc::message::Body;
use mcp_types::{CustomNotification, CustomRequest, JSONObject};
use serde_json::Value;

use crate::client::Client;
use crate::connection::Connection;
use crate::error::ClientError;
use crate::trace::Target;

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
        self.traced(method, Target::None, params, options, |params: Option<Value>, options| async move {
            match &self.connection {
                Connection::Session(s) => {
                    let body = params.as_ref();
                    let send = || self.peer.request_raw(method, body.map(|p| p as &dyn Body), options.clone());
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
