//! What arrives, dispatched: requests to the [`Service`] (polled in place, or spawned when they
//! wait; refused past the bound on running requests), responses to the calls that wait for
//! them, cancellations and progress to their requests, batches answered as one. Uses the
//! service, the handle and the connection's state.

use crate::sync::MutexExt as _;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::FutureExt as _;
use mcp_types::{
    CancelledNotification, CancelledNotificationParams, ErrorObject, InitializeRequest, Notification as _, PingRequest,
    ProgressNotification, ProgressNotificationParams, Request as _, RequestId,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use crate::message::{self, Message, Parsed};
use crate::transport::{Attachment, Inbound, Route};

use super::error::CallError;
use super::handle::Peer;
use super::service::{BoxFuture, Reply, RequestContext, Service};
use super::shared::{Out, Running, Shared, send};

fn response_route(id: Option<&RequestId>) -> Route {
    id.cloned().map_or(Route::Unrelated, Route::Response)
}

pub(super) async fn handle_frame(peer: &Peer, service: &Arc<dyn Service>, inbound: Inbound) {
    handle_parsed(peer, service, message::parse(&inbound.frame), inbound.attachment).await;
}

pub(super) async fn handle_parsed(
    peer: &Peer,
    service: &Arc<dyn Service>,
    parsed: Parsed,
    attachment: Option<Attachment>,
) {
    let shared = &peer.shared;
    match parsed {
        Parsed::Single(m) => handle_message(peer, service, m, None, attachment).await,
        Parsed::Invalid { id, error } => {
            debug!(code = error.code, "invalid message: {}", error.message);
            send(shared, message::encode_error(id.as_ref(), &error), response_route(id.as_ref())).await;
        }
        Parsed::Batch(items) => {
            let version = peer.protocol_version();
            if !version.allows_batches() {
                let error =
                    ErrorObject::invalid_request(format!("batches are not supported in protocol revision {version}"));
                send(shared, message::encode_error(None, &error), Route::Unrelated).await;
                return;
            }
            let requests = items.iter().filter(|m| matches!(m, Ok(Message::Request(_)) | Err(_))).count();
            let first = items.iter().find_map(|m| match m {
                Ok(Message::Request(r)) => Some(r.id.clone()),
                Err(e) => e.id.clone(),
                _ => None,
            });
            let collector = Arc::new(BatchCollector {
                frames: Mutex::new(Vec::new()),
                remaining: Mutex::new(requests),
                route: response_route(first.as_ref()),
            });
            for item in items {
                match item {
                    Ok(m) => handle_message(peer, service, m, Some(&collector), attachment.clone()).await,
                    Err(invalid) => {
                        let frame = message::encode_error(invalid.id.as_ref(), &invalid.error);
                        collector.finish(shared, Some(frame)).await;
                    }
                }
            }
        }
    }
}

/// Gathers the responses of a batch into one batch response.
struct BatchCollector {
    frames: Mutex<Vec<Bytes>>,
    remaining: Mutex<usize>,
    route: Route,
}

impl BatchCollector {
    async fn finish(&self, shared: &Shared, frame: Option<Bytes>) {
        let frames = {
            let mut frames = self.frames.lock_unpoisoned();
            if let Some(f) = frame {
                frames.push(f);
            }
            let mut remaining = self.remaining.lock_unpoisoned();
            *remaining = remaining.saturating_sub(1);
            if *remaining > 0 {
                return;
            }
            std::mem::take(&mut *frames)
        };
        // A batch whose requests all ended without a response (cancelled) gets the empty
        // frame that tells routing transports no response will come, as a single request does.
        let frame = if frames.is_empty() { Bytes::new() } else { message::encode_batch(&frames) };
        send(shared, frame, self.route.clone()).await;
    }
}

async fn deliver(shared: &Shared, batch: Option<&Arc<BatchCollector>>, id: &RequestId, frame: Option<Bytes>) {
    match batch {
        Some(c) => c.finish(shared, frame).await,
        None => {
            if let Some(f) = frame {
                send(shared, f, Route::Response(id.clone())).await;
            }
        }
    }
}

async fn handle_message(
    peer: &Peer,
    service: &Arc<dyn Service>,
    m: Message,
    batch: Option<&Arc<BatchCollector>>,
    attachment: Option<Attachment>,
) {
    let shared = &peer.shared;
    match m {
        Message::Request(req) => start_request(peer, service, req, batch, attachment).await,
        Message::Notification(n) => match n.method.as_str() {
            CancelledNotification::METHOD => {
                match message::decode_params::<CancelledNotificationParams>(n.params.as_deref()) {
                    Ok(CancelledNotificationParams { request_id: Some(id), .. }) => {
                        let running = shared.running.lock_unpoisoned();
                        match running.get(&id) {
                            Some(r) if !r.method_is_initialize => r.cancel.cancel(),
                            Some(_) => debug!(%id, "ignoring cancellation of initialize"),
                            None => {
                                // Not one of the requests we serve: perhaps one of our own calls
                                // the other side ends (a `subscriptions/listen` it tears down).
                                drop(running);
                                guarded("a notification handler", || service.notification(n, peer));
                            }
                        }
                    }
                    Ok(_) => debug!("cancellation without a request id"),
                    Err(e) => debug!(error = %e, "malformed cancellation"),
                }
            }
            ProgressNotification::METHOD => {
                match message::decode_params::<ProgressNotificationParams>(n.params.as_deref()) {
                    Ok(p) => {
                        let route = shared
                            .progress
                            .lock_unpoisoned()
                            .get(&p.progress_token)
                            .map(|r| (r.callback.clone(), r.activity.clone()));
                        match route {
                            Some((callback, activity)) => {
                                *activity.lock_unpoisoned() = Instant::now();
                                guarded("a progress callback", || callback(p));
                            }
                            None => {
                                debug!(token = %p.progress_token, "progress for an unknown or finished request")
                            }
                        }
                    }
                    Err(e) => debug!(error = %e, "malformed progress notification"),
                }
            }
            _ => guarded("a notification handler", || service.notification(n, peer)),
        },
        Message::Response(resp) => {
            let Some(id) = resp.id else {
                warn!("the other side could not read one of our messages: {:?}", resp.outcome.err());
                return;
            };
            match shared.pending.lock_unpoisoned().remove(&id) {
                Some(p) => {
                    let _ = p.tx.send(resp.outcome.map_err(CallError::Remote));
                }
                None => debug!(%id, "response for an unknown or finished request"),
            }
        }
    }
    let _ = batch;
}

async fn start_request(
    peer: &Peer,
    service: &Arc<dyn Service>,
    req: message::Request,
    batch: Option<&Arc<BatchCollector>>,
    attachment: Option<Attachment>,
) {
    let shared = &peer.shared;
    let id = req.id.clone();
    // 2026-07-28 has no ping: a request carrying that revision's `_meta` goes to the service,
    // which answers it as that revision says.
    if req.method == PingRequest::METHOD && !req.carries_protocol_version() {
        let frame = message::encode_result(&id, &serde_json::json!({})).ok();
        deliver(shared, batch, &id, frame).await;
        return;
    }
    let cancel = shared.handlers.child_token();
    let mut running =
        Some(Running { cancel: cancel.clone(), method_is_initialize: req.method == InitializeRequest::METHOD });
    match admit(shared, &id, &mut running) {
        Admit::Yes => {}
        Admit::Duplicate => {
            warn!(%id, method = %req.method, "ignoring a request whose id is already in use");
            deliver(shared, batch, &id, None).await;
            return;
        }
        Admit::Busy(limit) => {
            let error = ErrorObject::internal_error(format!("too many concurrent requests (limit {limit})"));
            deliver(shared, batch, &id, Some(message::encode_error(Some(&id), &error))).await;
            return;
        }
    }
    let ctx = RequestContext { id: id.clone(), cancel: cancel.clone(), peer: peer.related_to(id.clone()), attachment };
    let method = req.method.clone();
    if !shared.inline {
        let fut = start_handler(service, &method, req, ctx);
        spawn_request(shared.clone(), batch.cloned(), id, method, cancel, fut);
        return;
    }
    // On a current-thread runtime (or a driven peer, dispatched to from a task of its
    // transport) run the handler here at once, and spawn it only if it has to wait. Most
    // handlers answer without waiting, and then cost no task and no wake-up.
    let mut fut = start_handler(service, &method, req, ctx);
    // Counted apart while it has no entry in the running table.
    let unlisted = running.is_some();
    if unlisted {
        shared.inline_running.fetch_add(1, Ordering::Relaxed);
    }
    let polled = std::future::poll_fn(|cx| {
        std::task::Poll::Ready(std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))))
    })
    .await;
    if unlisted {
        shared.inline_running.fetch_sub(1, Ordering::Relaxed);
    }
    let outcome = match polled {
        Ok(std::task::Poll::Pending) => {
            if let Some(running) = running {
                shared.running.lock_unpoisoned().insert(id.clone(), running);
            }
            spawn_request(shared.clone(), batch.cloned(), id, method, cancel, fut);
            return;
        }
        Ok(std::task::Poll::Ready(reply)) => Ok(reply),
        Err(panic) => Err(panic),
    };
    drop(fut);
    if !unlisted {
        leave_running(shared, &id);
    }
    if let Some(frame) = response_frame(&id, &method, outcome) {
        deliver(shared, batch, &id, Some(frame)).await;
    }
}

/// Whether a request may run: its id is not in use and the running table has room.
enum Admit {
    Yes,
    Duplicate,
    Busy(usize),
}

/// Admits request `id`. The request enters the running table (`running` is taken) before its
/// handler first runs when the handler is spawned, or when messages are dispatched from several
/// tasks at once (a driven peer): a cancellation or a duplicate id arriving meanwhile on another
/// task must find it. Only a handler polled on the one reader task may run without an entry
/// (nothing else is read until it answers or is spawned).
fn admit(shared: &Shared, id: &RequestId, running: &mut Option<Running>) -> Admit {
    let enter_first = !shared.inline || matches!(shared.out, Out::Sink(_));
    let mut table = shared.running.lock_unpoisoned();
    let limit = shared.config.max_concurrent_requests;
    if table.contains_key(id) {
        Admit::Duplicate
    } else if table.len() >= limit {
        Admit::Busy(limit)
    } else {
        if enter_first {
            table.extend(running.take().map(|r| (id.clone(), r)));
        }
        Admit::Yes
    }
}

/// Takes a request out of the running table (waking [`wind_down`] when it was the last).
///
/// [`wind_down`]: super::shared::wind_down
fn leave_running(shared: &Shared, id: &RequestId) {
    let now_idle = {
        let mut running = shared.running.lock_unpoisoned();
        running.remove(id);
        running.is_empty()
    };
    if now_idle {
        shared.idle.notify_waiters();
    }
}

/// A spawned handler, from its spawning until its response is queued (see
/// [`Shared::answering`]).
struct Answering(Arc<Shared>);

impl Answering {
    pub(super) fn new(shared: Arc<Shared>) -> Answering {
        shared.answering.fetch_add(1, Ordering::AcqRel);
        Answering(shared)
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        if self.0.answering.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// Runs a request handler as its own task, until it answers or is cancelled.
fn spawn_request(
    shared: Arc<Shared>,
    batch: Option<Arc<BatchCollector>>,
    id: RequestId,
    method: String,
    cancel: CancellationToken,
    fut: BoxFuture<Reply>,
) {
    let answering = Answering::new(shared.clone());
    tokio::spawn(async move {
        let _answering = answering;
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            r = AssertUnwindSafe(fut).catch_unwind() => Some(r),
        };
        leave_running(&shared, &id);
        let frame = match outcome {
            None => {
                debug!(%id, %method, "request cancelled; no response");
                if batch.is_none() {
                    // Tell routing transports that no response will come (an empty frame,
                    // which byte-stream transports skip).
                    send(&shared, Bytes::new(), Route::Response(id)).await;
                    return;
                }
                None
            }
            Some(outcome) => response_frame(&id, &method, outcome),
        };
        deliver(&shared, batch.as_ref(), &id, frame).await;
    });
}

/// Runs user code on the reader task, where a panic would end the connection: a panic is
/// logged, and the connection goes on.
fn guarded(what: &str, f: impl FnOnce()) {
    if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(f)) {
        warn!(panic = %panic_message(panic.as_ref()), "{what} panicked; the connection goes on");
    }
}

/// The service's future for a request. Making it runs the handler's synchronous part on the
/// reader task: a panic there becomes the request's internal error, as one in the future does.
fn start_handler(
    service: &Arc<dyn Service>,
    method: &str,
    req: message::Request,
    ctx: RequestContext,
) -> BoxFuture<Reply> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| service.request(req, ctx))) {
        Ok(fut) => fut,
        Err(panic) => {
            let msg = panic_message(panic.as_ref());
            warn!(%method, panic = %msg, "request handler panicked");
            Box::pin(std::future::ready(Err(ErrorObject::internal_error(format!("handler panicked: {msg}")))))
        }
    }
}

/// The response frame of a handler that answered (or panicked).
fn response_frame(id: &RequestId, method: &str, outcome: std::thread::Result<Reply>) -> Option<Bytes> {
    match outcome {
        Ok(Ok(frame)) => Some(frame),
        Ok(Err(e)) => Some(message::encode_error(Some(id), &e)),
        Err(panic) => {
            let msg = panic_message(panic.as_ref());
            warn!(%id, %method, panic = %msg, "request handler panicked");
            Some(message::encode_error(Some(id), &ErrorObject::internal_error(format!("handler panicked: {msg}"))))
        }
    }
}

/// The message of a caught panic (`panic!("...")` payloads are `&str` or `String`).
#[doc(hidden)]
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
