//! Client middleware: layers around every request the client sends ([`ClientMiddleware`]),
//! installed with [`ClientBuilder::layer`](crate::ClientBuilder::layer), outermost first, and
//! the ready ones: [`Retry`] (backoff on transport errors), [`Logging`] (timings through
//! `tracing`) and [`Metrics`] (counts and latencies through the `metrics` crate). With the
//! feature `tower`, any `tower` layer too (`tower::from_tower`).
//!
//! A layer sees each request as its method and its params as JSON, with its [`CallOptions`],
//! and gives back the result as JSON or the error: it may pass the request on
//! ([`Next::run`], as often as it likes), change its params or options first, or answer it
//! itself. The typed calls ([`Client::call_tool`](crate::Client::call_tool),
//! [`Client::list_tools`](crate::Client::list_tools), ...) encode their params for the layers
//! and decode what the layers give back; a client without layers does neither (its request
//! path has one branch more, and allocates nothing more).
//!
//! The layers run inside the request's `mcp.client.request` span, around what the
//! connection's revision adds (in 2026-07-28 the per-request `_meta` and the rounds of an
//! `input_required` result; in a session, the new session started when the server ended the
//! old one). They see the requests of the typed calls and of [`Client::send_request`](crate::Client::send_request)
//! and [`Client::request_raw`](crate::Client::request_raw); not the handshake (`initialize`,
//! the `server/discover` probe), nor `subscriptions/listen`, nor notifications. A list page
//! the 2026-07-28 cache answers passes the layers too (no request is sent for it then).

mod logging;
mod metrics;
mod retry;
#[cfg(feature = "tower")]
pub mod tower;

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use mcp_jsonrpc::CallOptions;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ClientError;

pub use logging::Logging;
pub use metrics::Metrics;
pub use retry::Retry;

/// A boxed future, as a layer returns it.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a layer gives back: the request's result as JSON, or why it failed.
pub type ClientResponse = Result<Value, ClientError>;

/// A layer around the requests a client sends (see the [module](self)).
///
/// ```
/// use mcp_client::middleware::{BoxFuture, ClientMiddleware, ClientRequest, ClientResponse, Next};
///
/// /// Answers `ping` without a round trip; passes every other request on.
/// struct LocalPing;
///
/// impl ClientMiddleware for LocalPing {
///     fn call<'a>(&'a self, request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
///         if request.method() == "ping" {
///             return Box::pin(async { Ok(serde_json::json!({})) });
///         }
///         next.run(request)
///     }
/// }
/// ```
pub trait ClientMiddleware: Send + Sync + 'static {
    /// Handles `request`: passes it on with [`Next::run`] (`next` is `Copy`: a layer may run
    /// it again, as [`Retry`] does), or answers it.
    fn call<'a>(&'a self, request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse>;
}

/// A shared layer: the same one installed on several clients, or kept by the application to
/// look at.
impl<M: ClientMiddleware> ClientMiddleware for Arc<M> {
    fn call<'a>(&'a self, request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
        (**self).call(request, next)
    }
}

/// A request on its way through the layers.
#[derive(Debug, Clone)]
pub struct ClientRequest<'a> {
    method: &'a str,
    /// The params, as JSON (`null` for none). A layer may change them; the call decodes them
    /// again as its params (a typed call fails with [`ClientError::Decode`] on params it
    /// cannot read).
    pub params: Value,
    /// The call's options (timeout, cancellation, progress).
    pub options: CallOptions,
}

impl<'a> ClientRequest<'a> {
    /// A request of `method` with `params`: what a layer's own tests hand it.
    pub fn new(method: &'a str, params: Value, options: CallOptions) -> Self {
        ClientRequest { method, params, options }
    }

    /// The method (`tools/call`, `resources/read`, a custom one, ...).
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The tool's name, for `tools/call`.
    pub fn tool_name(&self) -> Option<&str> {
        if self.method != "tools/call" {
            return None;
        }
        self.params.get("name").and_then(Value::as_str)
    }
}

/// The rest of the chain: the inner layers, then the connection.
#[derive(Clone, Copy)]
pub struct Next<'a> {
    layers: &'a [Arc<dyn ClientMiddleware>],
    endpoint: &'a (dyn Endpoint<'a> + 'a),
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").field("layers", &self.layers.len()).finish_non_exhaustive()
    }
}

impl<'a> Next<'a> {
    /// Passes `request` to the next layer, or sends it after the last.
    pub fn run(self, request: ClientRequest<'a>) -> BoxFuture<'a, ClientResponse> {
        match self.layers.split_first() {
            Some((layer, rest)) => layer.call(request, Next { layers: rest, endpoint: self.endpoint }),
            None => self.endpoint.send(request),
        }
    }
}

/// What is after the last layer: the call's own sending, which takes its params as JSON.
trait Endpoint<'a>: Send + Sync {
    fn send(&self, request: ClientRequest<'a>) -> BoxFuture<'a, ClientResponse>;
}

/// A typed sending (`send` with params `P`, answering `T`) as an [`Endpoint`].
struct Typed<S, P, T> {
    send: S,
    _types: PhantomData<fn(P) -> T>,
}

impl<'a, S, P, T, F> Endpoint<'a> for Typed<S, P, T>
where
    S: Fn(P, CallOptions) -> F + Send + Sync,
    P: DeserializeOwned,
    T: Serialize,
    F: Future<Output = Result<T, ClientError>> + Send + 'a,
{
    fn send(&self, request: ClientRequest<'a>) -> BoxFuture<'a, ClientResponse> {
        let method = request.method;
        let params = match serde_json::from_value::<P>(request.params) {
            Ok(params) => params,
            Err(e) => return Box::pin(std::future::ready(Err(ClientError::decode(method, e)))),
        };
        let sent = (self.send)(params, request.options);
        Box::pin(async move {
            let result = sent.await?;
            serde_json::to_value(result).map_err(ClientError::Encode)
        })
    }
}

/// Runs a typed call through `layers`: its params encoded as JSON for them, what they give
/// back decoded as its result.
pub(crate) async fn run<'a, S, P, T, F>(
    layers: &'a [Arc<dyn ClientMiddleware>],
    method: &'a str,
    params: P,
    options: CallOptions,
    send: S,
) -> Result<T, ClientError>
where
    S: Fn(P, CallOptions) -> F + Send + Sync + 'a,
    P: Serialize + DeserializeOwned + 'a,
    T: Serialize + DeserializeOwned + 'a,
    F: Future<Output = Result<T, ClientError>> + Send + 'a,
{
    let params = serde_json::to_value(&params).map_err(ClientError::Encode)?;
    let endpoint = Typed { send, _types: PhantomData::<fn(P) -> T> };
    let next = Next { layers, endpoint: &endpoint };
    let value = next.run(ClientRequest { method, params, options }).await?;
    serde_json::from_value(value).map_err(|e| ClientError::decode(method, e))
}

/// The kind of a call's outcome, a bounded set (the `outcome` of [`Metrics`], the logs of
/// [`Logging`]): `ok`, `error` (a JSON-RPC error answer), `timeout`, `cancelled`, `closed`,
/// `transport`, `protocol`, `other`.
pub(crate) fn outcome_kind(outcome: &ClientResponse) -> &'static str {
    match outcome {
        Ok(_) => "ok",
        Err(ClientError::Remote(_)) => "error",
        Err(ClientError::Timeout { .. }) => "timeout",
        Err(ClientError::Cancelled) => "cancelled",
        Err(ClientError::Closed(_)) => "closed",
        Err(ClientError::Transport(_)) => "transport",
        Err(ClientError::Decode { .. } | ClientError::Protocol { .. }) => "protocol",
        Err(_) => "other",
    }
}
