//! What the server sends to the client, as layers see it: requests made through a handler's
//! [`Context`](crate::Context) (sampling, elicitation, roots, custom requests: in a session a
//! request to the client, for a 2026-07-28 request an input of its input-required round trip,
//! inside a task of the 2026-07-28 extension an input request of the task) and notifications
//! (progress, log messages, list changes, resource updates, task status, custom ones).
//!
//! A server with no layer sends as it did without middleware: one branch on the empty list of
//! layers, no encoding beyond the frame's, no box. With layers, the params are encoded once
//! (for the connection's revision) so that a layer reads and changes them as JSON.

use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_jsonrpc::{CallError, CallOptions, ErrorObject, Peer, message};
use mcp_types::ProtocolVersion;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::error::ClientRequestError;

/// The hooks of a layer on what the server sends: the half of a
/// [`Middleware`](super::Middleware) that the senders below the serving call (a handler's
/// context, its tasks, a session's control), which know nothing of the requests a layer
/// serves. Every `Middleware` is one.
pub(crate) trait OutgoingLayer: Send + Sync + 'static {
    /// [`Middleware::outgoing_request`](super::Middleware::outgoing_request).
    fn outgoing_request<'a>(&'a self, req: OutgoingRequest<'a>, next: OutgoingNext<'a>)
    -> BoxFuture<'a, OutgoingReply>;

    /// [`Middleware::outgoing_notification`](super::Middleware::outgoing_notification).
    fn outgoing_notification(&self, notification: &mut OutgoingNotification<'_>) -> bool;
}

/// The layers of a server as its senders hold them, outermost first.
pub(crate) type Layers = Arc<[Arc<dyn OutgoingLayer>]>;

/// What a request to the client gives: the client's result as JSON, or why there is none.
pub type OutgoingReply = Result<Box<RawValue>, ClientRequestError>;

/// The way a request to the client travels, chosen by the request being served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutgoingRoute {
    /// A JSON-RPC request to the client (the session revisions).
    Request,
    /// An input of a 2026-07-28 request's input-required round trip: the request's result asks
    /// for it, and the client's retry carries the answer ([`OutgoingRequest::input_key`] names
    /// it). Until the answer comes, `next` answers [`ClientRequestError::InputRequired`].
    InputRequired,
    /// An input request of a task of the 2026-07-28 tasks extension: the client reads it with
    /// `tasks/get` and answers with `tasks/update`.
    TaskInput,
}

/// A request the server sends to the client, as a layer sees it: its method and params, which
/// a layer may change, and the connection it goes on.
pub struct OutgoingRequest<'a> {
    method: &'a str,
    params: Option<Box<RawValue>>,
    peer: &'a Peer,
    revision: ProtocolVersion,
    route: OutgoingRoute,
    key: Option<&'a str>,
}

impl std::fmt::Debug for OutgoingRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutgoingRequest")
            .field("method", &self.method)
            .field("route", &self.route)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl<'a> OutgoingRequest<'a> {
    /// The method (`sampling/createMessage`, `elicitation/create`, `roots/list`, or a custom
    /// one).
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The params as JSON, as the connection's revision writes them.
    pub fn raw_params(&self) -> Option<&RawValue> {
        self.params.as_deref()
    }

    /// The params decoded as `T` (-32602 if they do not decode; absent params read as `{}`).
    pub fn params<T: DeserializeOwned>(&self) -> Result<T, ErrorObject> {
        message::decode_params(self.raw_params())
    }

    /// Replaces the params (`None`: none).
    pub fn set_params<T: Serialize + ?Sized>(&mut self, params: Option<&T>) -> Result<(), ErrorObject> {
        self.params = params.map(serde_json::value::to_raw_value).transpose().map_err(ErrorObject::internal_error)?;
        Ok(())
    }

    /// The connection to the client.
    pub fn peer(&self) -> &'a Peer {
        self.peer
    }

    /// The revision of the request being served, whose handler sends this.
    pub fn revision(&self) -> ProtocolVersion {
        self.revision
    }

    /// How the request travels.
    pub fn route(&self) -> OutgoingRoute {
        self.route
    }

    /// The key the client's answer comes under, for an input of a round trip or of a task
    /// (`elicitation-1`, or the key the handler named); `None` for a request to the client.
    pub fn input_key(&self) -> Option<&'a str> {
        self.key
    }
}

/// How the last link of the chain sends a request.
pub(crate) enum Via<'a> {
    /// A JSON-RPC request on the peer.
    Peer(CallOptions),
    /// An input the request being served asks for: of a 2026-07-28 round trip, or an input
    /// request of an extension task.
    Input(&'a (dyn AskInput + Sync)),
}

/// Where the request being served asks for an input (its round trip, its task): the last link
/// of the chain for a request that is not sent to the client.
pub(crate) trait AskInput {
    /// The answer to `req` (its input key, method and params), or why there is none.
    fn ask<'a>(&'a self, req: OutgoingRequest<'a>) -> BoxFuture<'a, OutgoingReply>;
}

/// The rest of the chain for a request to the client: the layers after this one, then the
/// send.
pub struct OutgoingNext<'a> {
    rest: &'a [Arc<dyn OutgoingLayer>],
    via: Via<'a>,
}

impl std::fmt::Debug for OutgoingNext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutgoingNext").field("layers", &self.rest.len()).finish()
    }
}

impl<'a> OutgoingNext<'a> {
    /// Hands `req` to the next layer, or sends it after the last, and gives the client's
    /// answer.
    pub fn run(self, req: OutgoingRequest<'a>) -> BoxFuture<'a, OutgoingReply> {
        match self.rest.split_first() {
            Some((layer, rest)) => layer.outgoing_request(req, OutgoingNext { rest, via: self.via }),
            None => match self.via {
                Via::Peer(options) => Box::pin(send(req, options)),
                Via::Input(input) => input.ask(req),
            },
        }
    }
}

/// Sends `req` to the client, a JSON-RPC request on its peer.
async fn send(req: OutgoingRequest<'_>, options: CallOptions) -> OutgoingReply {
    let body = req.params.as_ref().map(|p| p as &dyn message::Body);
    Ok(req.peer.request_raw(req.method, body, options).await?)
}

/// An input's answer as the JSON a layer reads.
pub(crate) fn raw(value: &serde_json::Value) -> OutgoingReply {
    serde_json::value::to_raw_value(value).map_err(|e| ClientRequestError::InvalidInput(e.to_string()))
}

/// Sends the request `method` through `layers` (not empty): `params` encoded for `revision`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn request<T: DeserializeOwned>(
    layers: &Layers,
    peer: &Peer,
    revision: ProtocolVersion,
    route: OutgoingRoute,
    key: Option<&str>,
    method: &str,
    params: Option<Box<RawValue>>,
    via: Via<'_>,
) -> Result<T, ClientRequestError> {
    let req = OutgoingRequest { method, params, peer, revision, route, key };
    let answer = OutgoingNext { rest: layers, via }.run(req).await?;
    serde_json::from_str(answer.get()).map_err(|source| match route {
        OutgoingRoute::Request => ClientRequestError::Call(CallError::Decode { method: method.to_owned(), source }),
        _ => ClientRequestError::InvalidInput(format!("input `{}`: {source}", key.unwrap_or_default())),
    })
}

/// `params` for `revision`, as JSON text a layer reads.
pub(crate) fn encode<P: mcp_types::WireSerialize + ?Sized>(
    params: &P,
    revision: ProtocolVersion,
) -> Result<Box<RawValue>, ClientRequestError> {
    let text = mcp_types::to_string_for(params, revision)
        .map_err(|e| ClientRequestError::InvalidInput(format!("cannot encode the request: {e}")))?;
    RawValue::from_string(text).map_err(|e| ClientRequestError::InvalidInput(e.to_string()))
}

/// A notification the server sends to the client, as a layer sees it: its method and params,
/// which a layer may change, and the connection it goes on.
pub struct OutgoingNotification<'a> {
    method: &'a str,
    params: Option<Box<RawValue>>,
    peer: &'a Peer,
}

impl std::fmt::Debug for OutgoingNotification<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutgoingNotification").field("method", &self.method).finish_non_exhaustive()
    }
}

impl<'a> OutgoingNotification<'a> {
    /// The method (`notifications/progress`, `notifications/message`, ...).
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The params as JSON, as the connection's revision writes them.
    pub fn raw_params(&self) -> Option<&RawValue> {
        self.params.as_deref()
    }

    /// The params decoded as `T` (-32602 if they do not decode; absent params read as `{}`).
    pub fn params<T: DeserializeOwned>(&self) -> Result<T, ErrorObject> {
        message::decode_params(self.raw_params())
    }

    /// Replaces the params (`None`: none).
    pub fn set_params<T: Serialize + ?Sized>(&mut self, params: Option<&T>) -> Result<(), ErrorObject> {
        self.params = params.map(serde_json::value::to_raw_value).transpose().map_err(ErrorObject::internal_error)?;
        Ok(())
    }

    /// The connection to the client.
    pub fn peer(&self) -> &'a Peer {
        self.peer
    }
}

/// Sends notification `N` with `params` on `peer`, through `layers` if any.
pub(crate) async fn notify<N: mcp_types::Notification>(
    layers: Option<&Layers>,
    peer: &Peer,
    params: N::Params,
    hints: Option<mcp_jsonrpc::FrameHints>,
) -> Result<(), CallError> {
    let Some(layers) = layers.filter(|l| !l.is_empty()) else {
        return match hints {
            Some(hints) => peer.notify_with_hints::<N>(params, hints).await,
            None => peer.notify::<N>(params).await,
        };
    };
    let version = peer.protocol_version();
    if !N::REVISIONS.contains(version) {
        return Err(CallError::NotInRevision { method: N::METHOD, version });
    }
    let text = mcp_types::to_string_for(&params, version).map_err(CallError::Encode)?;
    drop(params);
    let raw = RawValue::from_string(text).map_err(CallError::Encode)?;
    send_notification(layers, peer, N::METHOD, Some(raw), hints).await
}

/// Sends the notification `method` (custom, its params as they serialize) through `layers`.
/// The params are encoded when this is called: the future does not hold them, and is `Send`
/// whatever they are (as [`Peer::notify_raw`]'s).
pub(crate) fn notify_raw<'a>(
    layers: Option<&'a Layers>,
    peer: &'a Peer,
    method: &'a str,
    params: Option<&dyn message::Body>,
) -> impl Future<Output = Result<(), CallError>> + Send + 'a {
    use futures_util::future::Either;
    let Some(layers) = layers.filter(|l| !l.is_empty()) else {
        return Either::Left(peer.notify_raw(method, params));
    };
    let raw = params
        .map(|body| {
            let mut out = Vec::new();
            body.write_json(&mut out)?;
            let text = String::from_utf8(out).map_err(serde::ser::Error::custom)?;
            RawValue::from_string(text)
        })
        .transpose()
        .map_err(CallError::Encode);
    Either::Right(async move { send_notification(layers, peer, method, raw?, None).await })
}

/// Runs `layers` over a notification and sends it, unless one drops it.
async fn send_notification(
    layers: &Layers,
    peer: &Peer,
    method: &str,
    params: Option<Box<RawValue>>,
    hints: Option<mcp_jsonrpc::FrameHints>,
) -> Result<(), CallError> {
    let mut n = OutgoingNotification { method, params, peer };
    if !layers.iter().all(|layer| layer.outgoing_notification(&mut n)) {
        return Ok(());
    }
    peer.notify_raw_hinted(method, n.params.as_ref().map(|p| p as &dyn message::Body), hints).await
}
