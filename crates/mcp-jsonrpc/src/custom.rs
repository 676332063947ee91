//! Handlers of custom methods (requests and notifications outside the protocol), erased to one
//! shape that `mcp-server` and `mcp-client` both keep by method name: typed (a
//! [`CustomRequest`] or [`CustomNotification`] marker, its params decoded with
//! [`decode_custom_params`]) or raw (the params as JSON). A request handler takes a context of
//! its side's own type `C` (the server's `Context`, the client's [`RequestContext`](crate::RequestContext)).
//!
//! Internal to the SDK: not part of the public API; it may change in any release.

use std::future::{Future, ready};
use std::sync::Arc;

use mcp_types::{CustomNotification, CustomRequest, ErrorObject};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::message::decode_custom_params;
use crate::peer::handle::Peer;
use crate::peer::service::BoxFuture;

/// A custom request's handler, erased: the params as they came, the request's context.
pub type RequestFn<C> = Arc<dyn Fn(Option<&RawValue>, C) -> BoxFuture<Result<Value, ErrorObject>> + Send + Sync>;

/// A custom notification's handler, erased.
pub type NotificationFn = Arc<dyn Fn(Option<&RawValue>, &Peer) + Send + Sync>;

/// A typed request handler, erased: params that do not decode are -32602 (the handler does
/// not run), its result is encoded as JSON.
pub fn typed_request<R, C, F, Fut>(handler: F) -> RequestFn<C>
where
    R: CustomRequest,
    C: 'static,
    F: Fn(R::Params, C) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R::Result, ErrorObject>> + Send + 'static,
{
    Arc::new(move |params, ctx| match decode_custom_params::<R::Params>(params) {
        Ok(params) => {
            let answer = handler(params, ctx);
            Box::pin(async move { serde_json::to_value(answer.await?).map_err(ErrorObject::internal_error) })
        }
        Err(e) => Box::pin(ready(Err(e))),
    })
}

/// A raw request handler, erased: its params as JSON (`None`: the request had none).
pub fn raw_request<C, F, Fut>(handler: F) -> RequestFn<C>
where
    C: 'static,
    F: Fn(Option<Value>, C) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    Arc::new(move |params, ctx| match params.map(|p| serde_json::from_str::<Value>(p.get())).transpose() {
        Ok(params) => Box::pin(handler(params, ctx)),
        Err(e) => Box::pin(ready(Err(ErrorObject::invalid_params(e)))),
    })
}

/// A typed notification handler, erased: params that do not decode are logged and dropped.
pub fn typed_notification<N, F>(handler: F) -> NotificationFn
where
    N: CustomNotification,
    F: Fn(N::Params, &Peer) + Send + Sync + 'static,
{
    Arc::new(move |params, peer| match decode_custom_params::<N::Params>(params) {
        Ok(params) => handler(params, peer),
        Err(e) => tracing::debug!(method = N::METHOD, error = %e.message, "malformed custom notification dropped"),
    })
}

/// A raw notification handler, erased.
pub fn raw_notification<F>(handler: F) -> NotificationFn
where
    F: Fn(Option<Value>, &Peer) + Send + Sync + 'static,
{
    Arc::new(move |params, peer| match params.map(|p| serde_json::from_str::<Value>(p.get())).transpose() {
        Ok(params) => handler(params, peer),
        Err(e) => tracing::debug!(error = %e, "malformed custom notification dropped"),
    })
}
