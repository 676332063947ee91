//! The `Transport` trait every transport implements, and an in-memory transport for tests.
//!
//! A transport moves frames: one frame is one JSON-RPC message or batch, as bytes. It splits
//! into a reading half and a writing half so that the engine reads and writes concurrently.
//! The writing half takes every frame queued at the moment in one call, so a transport can
//! send them with one system call.
//!
//! ```
//! use bytes::Bytes;
//! use mcp_jsonrpc::transport::{Transport, TransportRead, TransportWrite, memory};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let (a, b) = memory(16);
//! let (_a_read, mut a_write) = a.split();
//! let (mut b_read, _b_write) = b.split();
//! a_write.write(&[Bytes::from_static(b"{}").into()]).await.unwrap();
//! assert_eq!(&b_read.read().await.unwrap().unwrap().frame[..], b"{}");
//! # });
//! ```

use std::any::Any;
use std::future::Future;
use std::io;
use std::sync::Arc;

use bytes::Bytes;
use mcp_types::RequestId;
use tokio::sync::mpsc;

/// Data a transport attaches to an incoming frame, which handlers can reach through
/// [`RequestContext::attachment`](crate::RequestContext::attachment): over HTTP, the request's
/// headers and extensions.
pub type Attachment = Arc<dyn Any + Send + Sync>;

/// A frame read from a transport.
#[derive(Clone)]
pub struct Inbound {
    /// One JSON-RPC message or batch.
    pub frame: Bytes,
    /// What the transport knows about where the frame came from.
    pub attachment: Option<Attachment>,
}

impl std::fmt::Debug for Inbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbound")
            .field("frame", &String::from_utf8_lossy(&self.frame))
            .field("attachment", &self.attachment.is_some())
            .finish()
    }
}

impl From<Bytes> for Inbound {
    fn from(frame: Bytes) -> Self {
        Inbound { frame, attachment: None }
    }
}

/// How an outgoing frame relates to the incoming requests, for transports that route frames
/// by request (Streamable HTTP answers each POST on its own stream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Not sent on behalf of any incoming request: server-initiated messages, own calls.
    Unrelated,
    /// Sent while handling the incoming request with this id: its progress, its logs, the
    /// requests its handler makes.
    Related(RequestId),
    /// The response to the incoming request with this id (for a batch: to the batch that
    /// holds it).
    Response(RequestId),
}

/// Per-frame hints from the layer above the engine (the MCP client) to the transport, opaque
/// to the engine: a transport downcasts them to the type it documents (the HTTP client
/// transport: its `RequestHeaders`) and ignores what it does not know. Set with
/// [`CallOptions::hints`](crate::CallOptions::hints) or
/// [`Peer::notify_with_hints`](crate::Peer::notify_with_hints); the counterpart of an
/// incoming frame's [`Attachment`].
pub type FrameHints = Arc<dyn Any + Send + Sync>;

/// What the engine knows of an outgoing frame when it encodes it, so that a transport need not
/// parse the frame to learn it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FrameKind {
    /// Not described: a frame sent with [`Peer::send_frame`](crate::Peer::send_frame), a
    /// batch response, an error answering an unreadable message.
    #[default]
    Unknown,
    /// One of the engine's own calls: a request with this id (outgoing ids are integers).
    Request(i64),
    /// A notification (other than a cancellation of our own call).
    Notification,
    /// `notifications/cancelled` of our own call with this id (its caller gave up).
    Cancellation(i64),
    /// The response to an incoming request (its id is in the [`Route`]), or the empty frame
    /// that says none will come.
    Response,
}

impl FrameKind {
    /// The id of the request the frame is, or cancels.
    pub fn request_id(self) -> Option<RequestId> {
        match self {
            FrameKind::Request(id) | FrameKind::Cancellation(id) => Some(RequestId::Integer(id)),
            _ => None,
        }
    }
}

/// A frame to write, with its route, what it is, and the hints of the layer above.
///
/// An empty frame routed as [`Route::Response`] says that the request was cancelled and no
/// response will come; transports that do not route skip it.
#[derive(Debug, Clone)]
pub struct Outbound {
    /// One JSON-RPC message or batch.
    pub frame: Bytes,
    /// Which incoming request it belongs to.
    pub route: Route,
    /// What the frame is, as the engine encoded it.
    pub kind: FrameKind,
    /// What the layer above told the transport about this frame (`None` for almost every
    /// frame: no allocation).
    pub hints: Option<FrameHints>,
}

impl Outbound {
    /// A frame with its route, of unknown kind, without hints.
    pub fn new(frame: Bytes, route: Route) -> Self {
        Outbound { frame, route, kind: FrameKind::Unknown, hints: None }
    }

    /// The same frame, described as `kind`.
    pub fn with_kind(mut self, kind: FrameKind) -> Self {
        self.kind = kind;
        self
    }

    /// The same frame, with the layer above's hints.
    pub fn with_hints(mut self, hints: Option<FrameHints>) -> Self {
        self.hints = hints;
        self
    }
}

impl From<Bytes> for Outbound {
    fn from(frame: Bytes) -> Self {
        Outbound::new(frame, Route::Unrelated)
    }
}

/// Why a transport failed a request it was sending, delivered to the waiting call as
/// [`CallError::Transport`](crate::CallError::Transport) (downcast it to the transport's own
/// error type, as `mcp-transport-http` documents).
pub type TransportError = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// What a transport can say about its streams and routing, for the layers above that adapt to
/// it (see [`Transport::KIND`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportKind {
    /// A byte stream (stdio, a child process, in memory): frames go out in order, and a request
    /// may go unanswered without the transport noticing.
    Stream,
    /// An HTTP client: every request gets an HTTP answer (an unanswered one fails), and it
    /// takes per-request HTTP headers as [`FrameHints`].
    HttpClient,
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// A frame longer than the transport's limit; it was skipped, the stream goes on.
    #[error("message of more than {limit} bytes skipped")]
    Oversized {
        /// The limit in bytes.
        limit: usize,
    },
    /// A frame that is not UTF-8; it was skipped, the stream goes on.
    #[error("message is not valid UTF-8")]
    InvalidUtf8,
    /// The stream failed; nothing more will be read.
    #[error("transport read failed: {0}")]
    Io(#[from] io::Error),
    /// The transport could not deliver one of our requests, or its answer (over HTTP: an
    /// error status, a broken connection): the call waiting for it fails with
    /// [`CallError::Transport`](crate::CallError::Transport). Reading goes on.
    #[error("request {id} failed in the transport: {source}")]
    RequestFailed {
        /// The request's id.
        id: RequestId,
        /// Why.
        #[source]
        source: TransportError,
    },
}

impl ReadError {
    /// Whether reading can go on after this error.
    pub fn is_recoverable(&self) -> bool {
        !matches!(self, ReadError::Io(_))
    }
}

/// The reading half of a transport.
pub trait TransportRead: Send + 'static {
    /// The next frame; `None` at the end of the stream.
    fn read(&mut self) -> impl Future<Output = Option<Result<Inbound, ReadError>>> + Send;
}

/// The writing half of a transport.
pub trait TransportWrite: Send + 'static {
    /// Sends frames in order, as few writes as the transport allows.
    fn write(&mut self, frames: &[Outbound]) -> impl Future<Output = io::Result<()>> + Send;
    /// Flushes and closes the stream; the peer sees its end.
    fn close(&mut self) -> impl Future<Output = io::Result<()>> + Send;
}

/// A bidirectional transport: send frames, receive the next, close.
pub trait Transport: Send + 'static {
    /// The reading half.
    type Read: TransportRead;
    /// The writing half.
    type Write: TransportWrite;
    /// What the transport is (the layers above adapt to it: an HTTP client transport takes
    /// request headers as hints, and always answers a request).
    const KIND: TransportKind = TransportKind::Stream;
    /// Splits into halves that work concurrently.
    fn split(self) -> (Self::Read, Self::Write);
}

/// One end of an in-memory transport, made by [`memory`].
#[derive(Debug)]
pub struct MemoryTransport {
    rx: mpsc::Receiver<Inbound>,
    tx: mpsc::Sender<Inbound>,
}

/// The reading half of a [`MemoryTransport`].
#[derive(Debug)]
pub struct MemoryRead(mpsc::Receiver<Inbound>);

/// The writing half of a [`MemoryTransport`].
#[derive(Debug)]
pub struct MemoryWrite(Option<mpsc::Sender<Inbound>>);

/// Two connected in-memory transport ends; each direction queues at most `capacity` frames.
pub fn memory(capacity: usize) -> (MemoryTransport, MemoryTransport) {
    let (a_tx, b_rx) = mpsc::channel(capacity.max(1));
    let (b_tx, a_rx) = mpsc::channel(capacity.max(1));
    (MemoryTransport { rx: a_rx, tx: a_tx }, MemoryTransport { rx: b_rx, tx: b_tx })
}

impl Transport for MemoryTransport {
    type Read = MemoryRead;
    type Write = MemoryWrite;
    fn split(self) -> (MemoryRead, MemoryWrite) {
        (MemoryRead(self.rx), MemoryWrite(Some(self.tx)))
    }
}

impl TransportRead for MemoryRead {
    async fn read(&mut self) -> Option<Result<Inbound, ReadError>> {
        self.0.recv().await.map(Ok)
    }
}

impl TransportWrite for MemoryWrite {
    async fn write(&mut self, frames: &[Outbound]) -> io::Result<()> {
        let tx = self.0.as_ref().ok_or_else(|| io::Error::from(io::ErrorKind::BrokenPipe))?;
        for f in frames.iter().filter(|f| !f.frame.is_empty()) {
            tx.send(Inbound::from(f.frame.clone())).await.map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        }
        Ok(())
    }
    async fn close(&mut self) -> io::Result<()> {
        self.0 = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outbound_frame_stays_small() {
        // Queued per frame on every transport: the kind is a copy, the hints one pointer.
        assert!(std::mem::size_of::<FrameKind>() <= 16);
        assert!(std::mem::size_of::<Outbound>() <= 96, "{}", std::mem::size_of::<Outbound>());
    }

    #[test]
    fn a_frame_kind_names_the_request() {
        assert_eq!(FrameKind::Request(7).request_id(), Some(RequestId::Integer(7)));
        assert_eq!(FrameKind::Cancellation(8).request_id(), Some(RequestId::Integer(8)));
        assert_eq!(FrameKind::Notification.request_id(), None);
        let out = Outbound::from(Bytes::from_static(b"{}"));
        assert!(out.kind == FrameKind::Unknown && out.hints.is_none() && out.route == Route::Unrelated);
    }
}
