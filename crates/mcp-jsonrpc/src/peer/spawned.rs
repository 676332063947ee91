//! A connection over a [`Transport`] with a reader and a writer task ([`Peer::spawn`]): the
//! reader parses frames and dispatches them, the writer drains the bounded queue of outgoing
//! frames in batches. Uses the dispatch.

use crate::sync::MutexExt as _;
use std::sync::Arc;

use mcp_types::{ErrorObject, RequestId};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use crate::message;
use crate::transport::{Outbound, ReadError, Route, Transport, TransportError, TransportRead, TransportWrite};

use super::config::PeerConfig;
use super::dispatch::handle_frame;
use super::error::CallError;
use super::handle::Peer;
use super::service::Service;
use super::shared::{Out, Shared, end_connection, give_up_after, send, wind_down};

impl Peer {
    /// Runs a connection over `transport`, dispatching what arrives to `service`.
    ///
    /// Must be called within a tokio runtime. The connection runs until the transport ends or
    /// [`Peer::close`] is called; [`Peer::closed`] waits for that.
    pub fn spawn<T: Transport>(transport: T, service: Arc<dyn Service>, config: PeerConfig) -> Peer {
        let (reader, writer) = transport.split();
        let (out, rx) = mpsc::channel(config.outgoing_capacity.max(1));
        let inline = config.inline_handlers.unwrap_or_else(|| {
            tokio::runtime::Handle::current().runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread
        });
        let shared = Shared::new(config, Out::Queue(out), inline);
        let peer = Peer { shared: shared.clone(), related: None };
        // The writer finishes when the reader is done, or earlier on `close_writing`.
        let finish = shared.drain.child_token();
        let writer_task = tokio::spawn(write_loop(writer, rx, shared.clone(), finish.clone()));
        let reader_peer = peer.clone();
        tokio::spawn(async move {
            read_loop(reader, &reader_peer, service).await;
            finish.cancel();
            let _ = writer_task.await;
            reader_peer.shared.done.cancel();
        });
        peer
    }
}

async fn write_loop<W: TransportWrite>(
    mut writer: W,
    mut rx: mpsc::Receiver<Outbound>,
    shared: Arc<Shared>,
    finish: CancellationToken,
) {
    // `close_writing` waits for this however the task ends (a transport that panics included).
    let _written = shared.written.clone().drop_guard();
    // Empty until the first frame: an idle connection (an HTTP session, say) holds no batch.
    let mut batch = Vec::new();
    let grace = shared.config.shutdown_grace;
    // Registered once, not once per frame.
    let finished = finish.cancelled();
    tokio::pin!(finished);
    loop {
        tokio::select! {
            biased;
            n = rx.recv_many(&mut batch, 256) => {
                if n == 0 {
                    break;
                }
            }
            _ = &mut finished => {
                // The reader is done: write what is queued (within the grace), then close.
                while let Ok(f) = rx.try_recv() {
                    batch.push(f);
                }
                if !batch.is_empty() {
                    let _ = tokio::time::timeout(grace, writer.write(&batch)).await;
                }
                break;
            }
        }
        // A write blocks while the other side reads nothing; once the reader is done, it gets
        // the grace and no more, so that the connection can end.
        let written = tokio::select! {
            biased;
            written = writer.write(&batch) => written,
            _ = give_up_after(&finish, grace) => {
                debug!("the other side reads nothing; closing without the rest");
                break;
            }
        };
        if let Err(e) = written {
            debug!(error = %e, "transport write failed; closing the connection");
            shared.shutdown.cancel();
            break;
        }
        batch.clear();
        // A burst's buffer is not kept for the idle time after it.
        if batch.capacity() > 32 {
            batch = Vec::new();
        }
    }
    rx.close();
    let _ = tokio::time::timeout(grace, writer.close()).await;
}

async fn read_loop<R: TransportRead>(mut reader: R, peer: &Peer, service: Arc<dyn Service>) {
    let shared = &peer.shared;
    // Registered once, not once per message: each registration locks the token's waiters.
    let shutdown = shared.shutdown.cancelled();
    tokio::pin!(shutdown);
    loop {
        let item = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            item = reader.read() => item,
        };
        match item {
            None => break,
            Some(Ok(inbound)) => handle_frame(peer, &service, inbound).await,
            Some(Err(ReadError::RequestFailed { id, source })) => fail_call(shared, &id, source),
            Some(Err(e)) if e.is_recoverable() => {
                warn!(error = %e, "skipping an unreadable message");
                let error = match e {
                    ReadError::InvalidUtf8 => ErrorObject::parse_error(&e),
                    _ => ErrorObject::invalid_request(&e),
                };
                send(shared, message::encode_error(None, &error), Route::Unrelated).await;
            }
            Some(Err(e)) => {
                debug!(error = %e, "transport read failed");
                break;
            }
        }
    }
    end_connection(shared);
    wind_down(shared).await;
}

/// The transport failed our request `id`: its call fails with the transport's error.
fn fail_call(shared: &Shared, id: &RequestId, error: TransportError) {
    match shared.pending.lock_unpoisoned().remove(id) {
        Some(p) => {
            debug!(%id, %error, "request failed in the transport");
            let _ = p.tx.send(Err(CallError::Transport(error)));
        }
        None => debug!(%id, %error, "transport failure of an unknown or finished request"),
    }
}
