//! Outgoing calls: the typed and raw requests of a [`Peer`], their correlation with the answer
//! (by id, in the connection's pending calls), their timeouts (which progress resets), and
//! their cancellation (a call dropped or timed out sends `notifications/cancelled`); progress
//! routed to a callback by token ([`ProgressRegistration`]). Uses the handle, the connection's
//! state, the settings and `CallError`.

use crate::sync::MutexExt as _;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mcp_types::{
    CancelledNotification, CancelledNotificationParams, JsonObject, Notification as _, ProgressToken, RequestId,
};
use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::message::{self, Body};
use crate::transport::{FrameKind, Outbound, Route};

use super::config::{CallOptions, ProgressCallback};
use super::error::CallError;
use super::handle::Peer;
use super::shared::{Pending, ProgressRoute, Shared};

impl Peer {
    /// Routes the progress notifications of `token` to `callback` until the registration is
    /// dropped, whatever request the token was sent with: for progress that outlives its
    /// request (a task's, which the server reports under the token of the call that created
    /// it). The caller puts `token` in the request's params itself.
    pub fn route_progress(&self, token: ProgressToken, callback: ProgressCallback) -> ProgressRegistration {
        let route = ProgressRoute { callback, activity: Arc::new(Mutex::new(Instant::now())) };
        self.shared.progress.lock_unpoisoned().insert(token.clone(), route);
        ProgressRegistration { shared: self.shared.clone(), token }
    }

    /// Calls a typed method of the other side.
    pub async fn request<R: mcp_types::Request>(
        &self,
        mut params: R::Params,
        mut options: CallOptions,
    ) -> Result<R::Result, CallError> {
        use mcp_types::ParamsMeta as _;
        let version = self.protocol_version();
        if !R::REVISIONS.contains(version) {
            return Err(CallError::NotInRevision { method: R::METHOD, version });
        }
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        if options.progress.is_some() {
            params.set_progress_token(ProgressToken::Integer(id));
        }
        let rid = RequestId::Integer(id);
        // The params are encoded before the wait, and not held across it: the future is `Send`
        // whatever they are (`Send` params need not be `Sync`).
        let frame = {
            let body = mcp_types::ForRevision::new(&params, version);
            encode_frame(&rid, R::METHOD, Some(&body), options.meta.take()).map_err(CallError::Encode)?
        };
        drop(params);
        let raw = self.call(id, R::METHOD, frame, options).await?;
        message::decode_result(&raw).map_err(|source| CallError::Decode { method: R::METHOD.to_owned(), source })
    }

    /// Calls a method by name with untyped params; the answer is raw JSON.
    ///
    /// No progress token is added to raw params: use [`Peer::request`] for progress. The
    /// params are encoded when this is called: the future does not hold them, and is `Send`
    /// whatever they are.
    pub fn request_raw<'a, 'm>(
        &'a self,
        method: &'m str,
        params: Option<&dyn Body>,
        mut options: CallOptions,
    ) -> impl Future<Output = Result<Box<RawValue>, CallError>> + Send + use<'a, 'm> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let rid = RequestId::Integer(id);
        let frame = encode_frame(&rid, method, params, options.meta.take());
        async move {
            let frame = frame.map_err(CallError::Encode)?;
            self.call(id, method, frame, options).await
        }
    }

    /// Calls a custom method of the other side (one outside the protocol, see
    /// [`CustomRequest`](mcp_types::CustomRequest)): its params and result as they serialize,
    /// whatever the revision.
    pub fn request_custom<'a, R: mcp_types::CustomRequest>(
        &'a self,
        params: &R::Params,
        options: CallOptions,
    ) -> impl Future<Output = Result<R::Result, CallError>> + Send + use<'a, R> {
        let call = self.request_raw(R::METHOD, Some(params), options);
        async move {
            let raw = call.await?;
            message::decode_result(&raw).map_err(|source| CallError::Decode { method: R::METHOD.to_owned(), source })
        }
    }

    async fn call(
        &self,
        id: i64,
        method: &str,
        frame: Bytes,
        mut options: CallOptions,
    ) -> Result<Box<RawValue>, CallError> {
        let shared = &self.shared;
        if self.is_closed() {
            return Err(CallError::Closed);
        }
        let rid = RequestId::Integer(id);
        if let Some(f) = &options.on_id {
            f(&rid);
        }
        let (tx, mut rx) = oneshot::channel();
        shared.pending.lock_unpoisoned().insert(rid.clone(), Pending { tx });
        // The connection may have ended between the check above and the insert, after its
        // pending calls were cleared: nothing would ever complete this one.
        if self.is_closed() {
            shared.pending.lock_unpoisoned().remove(&rid);
            return Err(CallError::Closed);
        }
        let started = Instant::now();
        let activity = Arc::new(Mutex::new(started));
        let token = options.progress.as_ref().map(|callback| {
            let token = ProgressToken::Integer(id);
            let route = ProgressRoute { callback: callback.clone(), activity: activity.clone() };
            shared.progress.lock_unpoisoned().insert(token.clone(), route);
            token
        });
        let mut guard = CallGuard {
            shared: shared.clone(),
            id: rid,
            progress: token,
            cancel_on_drop: method != "initialize",
            reason: "request dropped by the caller",
            route: self.route(),
        };
        let timeout = options.timeout.or(shared.config.request_timeout);
        let hard = started + shared.config.max_request_timeout;
        let cancel = options.cancel.unwrap_or_default();
        // The wait for room in the outgoing queue (a peer that stops reading fills it) counts
        // against the call's timeout and its cancellation too. Not sent: nothing to cancel.
        let first_deadline = timeout.map_or(hard, |t| (started + t).min(hard));
        let outbound =
            Outbound::new(frame, self.route()).with_kind(FrameKind::Request(id)).with_hints(options.hints.take());
        let sent = tokio::select! {
            sent = shared.out.send(outbound) => sent.map_err(|_| CallError::Closed),
            _ = tokio::time::sleep_until(first_deadline), if !options.unbounded => {
                Err(CallError::Timeout { method: method.to_owned(), elapsed: started.elapsed() })
            }
            _ = cancel.cancelled() => Err(CallError::Cancelled),
        };
        if let Err(e) = sent {
            guard.cancel_on_drop = false;
            return Err(e);
        }
        if options.unbounded {
            return tokio::select! {
                // Cancellation first: an answer that came in meanwhile is ignored.
                biased;
                _ = cancel.cancelled() => {
                    guard.reason = "cancelled by the caller";
                    Err(CallError::Cancelled)
                }
                outcome = &mut rx => {
                    guard.disarm();
                    match outcome {
                        Ok(outcome) => outcome,
                        Err(_) => Err(CallError::Closed),
                    }
                }
            };
        }
        let deadlines = Deadlines { started, activity: &activity, timeout, hard };
        await_answer(&mut rx, &mut guard, &cancel, method, deadlines).await
    }
}

/// The answer to an outgoing call, as the reader task delivers it.
type Answer = oneshot::Receiver<Result<Box<RawValue>, CallError>>;

/// When a call that is not unbounded gives up.
struct Deadlines<'a> {
    started: Instant,
    /// The last progress (or the start).
    activity: &'a Mutex<Instant>,
    timeout: Option<Duration>,
    hard: Instant,
}

/// A request frame. With `meta` (the members of [`CallOptions::meta`]), its params' `_meta`
/// gets the members it lacks (no params become `{"_meta": meta}`; params that are not a JSON
/// object are sent as they are); without, the frame is written from the params directly.
/// Only `_meta` is decoded: the other members are kept as their text, so what they hold keeps
/// its order (a `serde_json::Value` would sort object members, such as an elicitation form's
/// fields).
fn encode_frame(
    id: &RequestId,
    method: &str,
    params: Option<&dyn Body>,
    meta: Option<JsonObject>,
) -> serde_json::Result<Bytes> {
    let Some(meta) = meta else { return message::encode_request(id, method, params) };
    let mut members: std::collections::BTreeMap<String, Box<RawValue>> = match params {
        Some(params) => {
            let mut json = Vec::new();
            params.write_json(&mut json)?;
            if json == b"null" {
                Default::default()
            } else if let Ok(members) = serde_json::from_slice(&json) {
                members
            } else {
                return message::encode_request(id, method, Some(params));
            }
        }
        None => Default::default(),
    };
    let existing = match members.get("_meta") {
        None => Some(JsonObject::new()),
        Some(raw) => serde_json::from_str::<JsonObject>(raw.get()).ok(),
    };
    if let Some(mut existing) = existing {
        for (key, value) in meta {
            existing.entry(key).or_insert(value);
        }
        members.insert("_meta".to_owned(), serde_json::value::to_raw_value(&existing)?);
    }
    message::encode_request(id, method, Some(&members))
}

/// Waits for a call's answer until its timeout (which progress resets, within the hard
/// maximum) or its cancellation.
async fn await_answer(
    rx: &mut Answer,
    guard: &mut CallGuard,
    cancel: &CancellationToken,
    method: &str,
    deadlines: Deadlines<'_>,
) -> Result<Box<RawValue>, CallError> {
    let Deadlines { started, activity, timeout, hard } = deadlines;
    loop {
        let last = *activity.lock_unpoisoned();
        let deadline = timeout.map_or(hard, |t| (last + t).min(hard));
        tokio::select! {
            // Cancellation first: once the caller cancelled, an answer that came in meanwhile
            // (before this task ran again) is ignored, as the specification asks of the
            // sender of a cancellation.
            biased;
            _ = cancel.cancelled() => {
                guard.reason = "cancelled by the caller";
                return Err(CallError::Cancelled);
            }
            outcome = &mut *rx => {
                guard.disarm();
                return match outcome {
                    Ok(outcome) => outcome,
                    Err(_) => Err(CallError::Closed),
                };
            }
            _ = tokio::time::sleep_until(deadline) => {
                let now = Instant::now();
                if now < hard && *activity.lock_unpoisoned() > last {
                    continue; // progress came in meanwhile: the timeout starts again
                }
                guard.reason = "timeout";
                return Err(CallError::Timeout { method: method.to_owned(), elapsed: now - started });
            }
        }
    }
}

/// Progress notifications of one token routed to a callback, for as long as it lives: what
/// [`Peer::route_progress`] returns.
pub struct ProgressRegistration {
    shared: Arc<Shared>,
    token: ProgressToken,
}

impl std::fmt::Debug for ProgressRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressRegistration").field("token", &self.token).finish()
    }
}

impl Drop for ProgressRegistration {
    fn drop(&mut self) {
        self.shared.progress.lock_unpoisoned().remove(&self.token);
    }
}

/// Cleans up an outgoing call that ends without an answer, and tells the other side.
struct CallGuard {
    shared: Arc<Shared>,
    id: RequestId,
    progress: Option<ProgressToken>,
    cancel_on_drop: bool,
    reason: &'static str,
    route: Route,
}

impl CallGuard {
    fn disarm(&mut self) {
        self.cancel_on_drop = false;
        if let Some(t) = self.progress.take() {
            self.shared.progress.lock_unpoisoned().remove(&t);
        }
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if let Some(t) = self.progress.take() {
            self.shared.progress.lock_unpoisoned().remove(&t);
        }
        // Still pending: the answer never came. Forget it, and tell the other side.
        let was_pending = self.shared.pending.lock_unpoisoned().remove(&self.id).is_some();
        if !self.cancel_on_drop || !was_pending || self.shared.closed.load(Ordering::Acquire) {
            return;
        }
        let params = CancelledNotificationParams {
            request_id: Some(self.id.clone()),
            reason: Some(self.reason.to_owned()),
            ..Default::default()
        };
        let Ok(frame) = message::encode_notification(CancelledNotification::METHOD, Some(&params)) else {
            return;
        };
        let kind = match self.id {
            RequestId::Integer(id) => FrameKind::Cancellation(id),
            _ => FrameKind::Notification,
        };
        self.shared.out.send_soon(Outbound::new(frame, self.route.clone()).with_kind(kind));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_merged_without_reordering_what_the_params_hold() {
        let params = RawValue::from_string(r#"{"form":{"z":1,"a":2,"m":3},"_meta":{"mine":true}}"#.to_owned()).unwrap();
        let mut meta = JsonObject::new();
        meta.insert("traceparent".to_owned(), "00-x".into());
        meta.insert("mine".to_owned(), false.into());
        let frame = encode_frame(&RequestId::Integer(1), "m", Some(&params), Some(meta)).unwrap();
        let text = std::str::from_utf8(&frame).unwrap();
        assert!(text.contains(r#""form":{"z":1,"a":2,"m":3}"#), "{text}");
        assert!(text.contains(r#""_meta":{"mine":true,"traceparent":"00-x"}"#), "{text}");
        let none = encode_frame(&RequestId::Integer(2), "m", None, Some(JsonObject::new())).unwrap();
        assert!(std::str::from_utf8(&none).unwrap().contains(r#""params":{"_meta":{}}"#));
        let list = RawValue::from_string("[1,2]".to_owned()).unwrap();
        let frame = encode_frame(&RequestId::Integer(3), "m", Some(&list), Some(JsonObject::new())).unwrap();
        assert!(std::str::from_utf8(&frame).unwrap().contains(r#""params":[1,2]"#));
    }
}
