//! The body of an SSE response, and the count of a session's open SSE connections.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body::Frame;
use tokio::sync::mpsc;

use super::router::SessionRouter;

/// Counts an open SSE connection of a session while it lasts.
pub(crate) struct ConnGuard {
    router: Arc<SessionRouter>,
    on_drop: Option<Box<dyn FnOnce() + Send>>,
}

impl ConnGuard {
    /// Counts a connection of `router`'s session; `on_drop` runs when it closes.
    pub(crate) fn new(router: Arc<SessionRouter>, on_drop: Option<Box<dyn FnOnce() + Send>>) -> Self {
        router.connections.fetch_add(1, Ordering::Relaxed);
        ConnGuard { router, on_drop }
    }
}

impl Drop for ConnGuard {
    fn drop(&mut self) {
        self.router.connections.fetch_sub(1, Ordering::Relaxed);
        self.router.touch();
        if let Some(f) = self.on_drop.take() {
            f();
        }
    }
}

/// The body of an SSE response: queued events, written together when several are ready.
pub(crate) struct SseBody {
    pending: VecDeque<Bytes>,
    live: Option<mpsc::Receiver<Bytes>>,
    keep_alive: Option<Pin<Box<tokio::time::Interval>>>,
    _guard: ConnGuard,
}

/// Events gathered into one write at most.
const COALESCE: usize = 64;

impl SseBody {
    /// `first` events, then what `live` brings until it ends, with a comment every
    /// `keep_alive` while nothing else comes.
    pub(crate) fn new(
        first: Vec<Bytes>,
        live: Option<mpsc::Receiver<Bytes>>,
        keep_alive: Option<Duration>,
        guard: ConnGuard,
    ) -> Self {
        let keep_alive =
            keep_alive.map(|every| Box::pin(tokio::time::interval_at(tokio::time::Instant::now() + every, every)));
        SseBody { pending: first.into(), live, keep_alive, _guard: guard }
    }
}

impl http_body::Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        if let Some(first) = this.pending.pop_front() {
            if this.pending.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(first))));
            }
            let mut buf = BytesMut::from(&first[..]);
            while let Some(next) = this.pending.pop_front() {
                buf.extend_from_slice(&next);
            }
            return Poll::Ready(Some(Ok(Frame::data(buf.freeze()))));
        }
        let Some(rx) = this.live.as_mut() else {
            return Poll::Ready(None);
        };
        match rx.poll_recv(cx) {
            Poll::Ready(Some(first)) => Poll::Ready(Some(Ok(Frame::data(coalesce(first, rx))))),
            Poll::Ready(None) => {
                this.live = None;
                Poll::Ready(None)
            }
            Poll::Pending => {
                if let Some(tick) = this.keep_alive.as_mut()
                    && tick.as_mut().poll_tick(cx).is_ready()
                {
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b": keep-alive\n\n")))));
                }
                Poll::Pending
            }
        }
    }
}

/// `first` and the events ready after it (up to [`COALESCE`]), as one buffer.
fn coalesce(first: Bytes, rx: &mut mpsc::Receiver<Bytes>) -> Bytes {
    let mut more = Vec::new();
    while more.len() < COALESCE {
        match rx.try_recv() {
            Ok(next) => more.push(next),
            Err(_) => break,
        }
    }
    if more.is_empty() {
        return first;
    }
    let mut buf = BytesMut::with_capacity(first.len() + more.iter().map(Bytes::len).sum::<usize>());
    buf.extend_from_slice(&first);
    for b in more {
        buf.extend_from_slice(&b);
    }
    buf.freeze()
}
