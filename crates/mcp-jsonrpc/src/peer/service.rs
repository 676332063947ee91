//! What serves the other side's messages ([`Service`]), and what a request handler knows of
//! its request ([`RequestContext`]). Uses the handle, which handlers call the other side with.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use mcp_types::{ErrorObject, RequestId};
use tokio_util::sync::CancellationToken;

use crate::message::{self, Body};
use crate::transport::Attachment;

use super::handle::Peer;

/// A boxed future, as services return them.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a request handler answers: a complete response frame (see
/// [`RequestContext::encode_result`]) or an error.
pub type Reply = Result<Bytes, ErrorObject>;

/// Handles what the other side sends.
pub trait Service: Send + Sync + 'static {
    /// Handles a request. Runs concurrently with other requests; `ctx` carries the id, the
    /// cancellation token and the peer.
    fn request(&self, request: message::Request, ctx: RequestContext) -> BoxFuture<Reply>;
    /// Handles a notification (other than cancellation and progress, which the engine routes).
    /// Runs on the reader task, in order: spawn for long work.
    fn notification(&self, notification: message::Notification, peer: &Peer) {
        let _ = (notification, peer);
    }
}

/// A service that answers every request with "method not found".
#[derive(Debug, Clone, Copy, Default)]
pub struct NoService;

impl Service for NoService {
    fn request(&self, request: message::Request, _ctx: RequestContext) -> BoxFuture<Reply> {
        Box::pin(std::future::ready(Err(ErrorObject::method_not_found(&request.method))))
    }
}

/// What a request handler knows about its request.
#[derive(Clone)]
pub struct RequestContext {
    pub(super) id: RequestId,
    pub(super) cancel: CancellationToken,
    pub(super) peer: Peer,
    pub(super) attachment: Option<Attachment>,
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext").field("id", &self.id).finish_non_exhaustive()
    }
}

impl RequestContext {
    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }
    /// Fires when the request is cancelled (by the other side or by shutdown).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }
    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
    /// The connection, to call the other side or notify it. What is sent through it is
    /// related to this request (see [`Route::Related`](crate::transport::Route::Related)).
    pub fn peer(&self) -> &Peer {
        &self.peer
    }
    /// What the transport attached to the frame that carried the request (over HTTP: the
    /// request's headers and extensions).
    pub fn attachment(&self) -> Option<&Attachment> {
        self.attachment.as_ref()
    }
    /// Encodes the response frame of this request.
    pub fn encode_result(&self, result: &dyn Body) -> Reply {
        message::encode_result(&self.id, result).map_err(ErrorObject::internal_error)
    }
}
