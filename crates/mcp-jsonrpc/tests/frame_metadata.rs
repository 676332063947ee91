//! What travels with a frame besides its bytes: the engine's [`FrameKind`], the layer above's
//! hints, and a transport's typed failure of a request.
//!
//! The test is the transport: it sees every [`Outbound`] the engine writes, and feeds what the
//! engine reads.

use std::io;
use std::sync::Arc;

use bytes::Bytes;
use mcp_jsonrpc::transport::ReadError;
use mcp_jsonrpc::{
    CallError, CallOptions, CancellationToken, FrameKind, Inbound, Outbound, Peer, PeerConfig, RequestId, Route,
    Router, Transport, TransportKind, TransportRead, TransportWrite,
};
use mcp_types::{EmptyResult, PingRequest, RootsListChangedNotification, SetLevelRequest};
use tokio::sync::mpsc;

/// A transport whose frames the test handles.
struct Tap {
    incoming: mpsc::Receiver<Result<Inbound, ReadError>>,
    outgoing: mpsc::UnboundedSender<Outbound>,
}

struct TapRead(mpsc::Receiver<Result<Inbound, ReadError>>);
struct TapWrite(mpsc::UnboundedSender<Outbound>);

impl Transport for Tap {
    type Read = TapRead;
    type Write = TapWrite;
    fn split(self) -> (TapRead, TapWrite) {
        (TapRead(self.incoming), TapWrite(self.outgoing))
    }
}

impl TransportRead for TapRead {
    async fn read(&mut self) -> Option<Result<Inbound, ReadError>> {
        self.0.recv().await
    }
}

impl TransportWrite for TapWrite {
    async fn write(&mut self, frames: &[Outbound]) -> io::Result<()> {
        for f in frames {
            self.0.send(f.clone()).map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        }
        Ok(())
    }
    async fn close(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The test's side: what to feed the engine, and what it wrote.
struct Other {
    feed: mpsc::Sender<Result<Inbound, ReadError>>,
    written: mpsc::UnboundedReceiver<Outbound>,
}

fn connect(router: Router) -> (Peer, Other) {
    let (feed, incoming) = mpsc::channel(16);
    let (outgoing, written) = mpsc::unbounded_channel();
    let peer = Peer::spawn(Tap { incoming, outgoing }, Arc::new(router), PeerConfig::default());
    (peer, Other { feed, written })
}

impl Other {
    async fn next(&mut self) -> Outbound {
        self.written.recv().await.expect("the engine wrote nothing more")
    }
    async fn send(&self, frame: &str) {
        self.feed.send(Ok(Bytes::copy_from_slice(frame.as_bytes()).into())).await.unwrap();
    }
}

/// The hints type of an imaginary transport.
#[derive(Debug, PartialEq)]
struct Hint(&'static str);

/// An imaginary transport's error.
#[derive(Debug, thiserror::Error)]
#[error("HTTP 503 for the request")]
struct Unavailable;

#[test]
fn transports_are_streams_unless_they_say_otherwise() {
    assert_eq!(Tap::KIND, TransportKind::Stream);
    assert_eq!(mcp_jsonrpc::transport::MemoryTransport::KIND, TransportKind::Stream);
}

#[tokio::test(flavor = "current_thread")]
async fn a_call_carries_its_id_and_hints_and_a_notification_its_kind() {
    let (peer, mut other) = connect(Router::new());
    let options = CallOptions::default().hints(Arc::new(Hint("initialize")));
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<PingRequest>(Default::default(), options).await }
    });
    let out = other.next().await;
    assert_eq!(out.kind, FrameKind::Request(0));
    assert_eq!(out.kind.request_id(), Some(RequestId::Integer(0)));
    assert_eq!(out.route, Route::Unrelated);
    let hint = out.hints.as_ref().and_then(|h| h.downcast_ref::<Hint>());
    assert_eq!(hint, Some(&Hint("initialize")));
    other.send(r#"{"jsonrpc":"2.0","id":0,"result":{}}"#).await;
    call.await.unwrap().unwrap();

    peer.notify::<RootsListChangedNotification>(Default::default()).await.unwrap();
    let out = other.next().await;
    assert!(out.kind == FrameKind::Notification && out.hints.is_none(), "{out:?}");
    peer.notify_with_hints::<RootsListChangedNotification>(Default::default(), Arc::new(Hint("initialized")))
        .await
        .unwrap();
    let out = other.next().await;
    assert_eq!(out.kind, FrameKind::Notification);
    assert_eq!(out.hints.as_ref().and_then(|h| h.downcast_ref::<Hint>()), Some(&Hint("initialized")));
}

#[tokio::test(flavor = "current_thread")]
async fn a_cancelled_call_is_a_cancellation_of_its_id_and_an_answer_a_response() {
    let router = Router::new().request::<SetLevelRequest, _, _>(|_, _| async { Ok(EmptyResult::default()) });
    let (peer, mut other) = connect(router);
    let cancel = CancellationToken::new();
    let call = tokio::spawn({
        let (peer, cancel) = (peer.clone(), cancel.clone());
        async move { peer.request::<PingRequest>(Default::default(), CallOptions::default().cancel_on(cancel)).await }
    });
    assert_eq!(other.next().await.kind, FrameKind::Request(0));
    cancel.cancel();
    assert!(matches!(call.await.unwrap(), Err(CallError::Cancelled)));
    let out = other.next().await;
    assert_eq!(out.kind, FrameKind::Cancellation(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.frame).contains("notifications/cancelled"));

    other.send(r#"{"jsonrpc":"2.0","id":"a","method":"logging/setLevel","params":{"level":"info"}}"#).await;
    let out = other.next().await;
    assert_eq!(out.kind, FrameKind::Response);
    assert_eq!(out.route, Route::Response(RequestId::String("a".into())));
}

#[tokio::test(flavor = "current_thread")]
async fn a_transport_fails_a_request_with_its_own_error() {
    let (peer, mut other) = connect(Router::new());
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<PingRequest>(Default::default(), CallOptions::default()).await }
    });
    let id = other.next().await.kind.request_id().expect("a request");
    let failed = ReadError::RequestFailed { id, source: Arc::new(Unavailable) };
    assert!(failed.is_recoverable());
    other.feed.send(Err(failed)).await.unwrap();
    let e = call.await.unwrap().unwrap_err();
    assert!(matches!(e, CallError::Transport(_)), "{e:?}");
    assert_eq!(e.to_string(), "HTTP 503 for the request");
    assert!(e.transport_error().and_then(|e| e.downcast_ref::<Unavailable>()).is_some());
    // The call's error is the transport's (transparent): its message once, not repeated as
    // a cause.
    assert!(std::error::Error::source(&e).is_none(), "{:?}", std::error::Error::source(&e));
    // The connection goes on, and nothing was sent to the other side for the failure.
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<PingRequest>(Default::default(), CallOptions::default()).await }
    });
    assert_eq!(other.next().await.kind, FrameKind::Request(1));
    other.send(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).await;
    call.await.unwrap().unwrap();
    assert!(other.written.try_recv().is_err());
}
