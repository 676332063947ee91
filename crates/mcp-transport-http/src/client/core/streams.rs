//! SSE streams: a request's stream read until it is answered and resumed with
//! `Last-Event-ID` when it ends before (SEP-1699), and the standalone GET stream, reopened
//! when it ends.

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use mcp_jsonrpc::transport::ReadError;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use super::exchange::is_event_stream;
use super::inbound::{Awaited, Failure};
use super::{Core, Mode, Snapshot};
use crate::client::error::{HttpErrorKind, HttpRequestError};
use crate::client::sse::{SseEvent, SseParser};

/// Where a stream's events left off.
#[derive(Debug, Default)]
pub(super) struct Cursor {
    last_event_id: Option<String>,
    retry: Option<Duration>,
    /// Events that carried a message (what counts as progress for reconnecting).
    messages: u64,
}

/// How resuming a request's stream ended.
pub(super) enum Resumed {
    /// A new stream opened (boxed: resuming is rare, the body large).
    Opened(Box<SseBody>),
    /// The request was answered (or cancelled) meanwhile.
    Answered,
    /// The reconnection attempts ran out.
    OutOfAttempts,
    /// The server refused.
    Failed(Failure),
}

/// An SSE response body, event by event.
pub(super) struct SseBody {
    response: reqwest::Response,
    parser: SseParser,
    queue: VecDeque<SseEvent>,
}

impl SseBody {
    pub(super) fn new(response: reqwest::Response, limit: usize) -> Self {
        SseBody { response, parser: SseParser::new(limit), queue: VecDeque::new() }
    }

    /// The next event; `None` at the end of the stream.
    pub(super) async fn next(&mut self) -> Result<Option<SseEvent>, reqwest::Error> {
        loop {
            if let Some(e) = self.queue.pop_front() {
                return Ok(Some(e));
            }
            let Some(chunk) = self.response.chunk().await? else { return Ok(None) };
            let mut out = Vec::new();
            self.parser.feed(&chunk, &mut out);
            self.queue.extend(out);
        }
    }
}

impl Core {
    /// Handles one SSE event; `false` once the transport is closing.
    pub(super) async fn on_event(&self, event: SseEvent, cursor: &mut Cursor) -> bool {
        if let Some(id) = &event.id {
            cursor.last_event_id = (!id.is_empty()).then(|| id.clone());
        }
        if let Some(retry) = event.retry {
            cursor.retry = Some(retry);
            *self.server_retry.lock_unpoisoned() = Some(retry);
        }
        if event.oversized {
            warn!(limit = self.config.max_message_size, "skipped an SSE event over the size limit");
            return self.push(Err(ReadError::Oversized { limit: self.config.max_message_size })).await;
        }
        match event.message() {
            Some(data) => {
                cursor.messages += 1;
                self.deliver(data.clone()).await
            }
            None => true,
        }
    }

    /// How long to wait before reconnecting a stream: the server's `retry`, or the policy's
    /// backoff; never less than the policy's `min_delay`.
    fn reconnect_delay(&self, cursor: &Cursor, attempt: u32) -> Duration {
        let policy = &self.config.reconnect;
        cursor
            .retry
            .or(*self.server_retry.lock_unpoisoned())
            .unwrap_or_else(|| policy.backoff(attempt))
            .max(policy.min_delay)
    }

    /// Reads a request's SSE stream until its answers came; resumes it with GET and
    /// `Last-Event-ID` when it ends before (SEP-1699), unless the request is stateless (2026-07-28
    /// streams cannot be resumed).
    pub(super) async fn read_request_stream(&self, response: reqwest::Response, awaited: &Awaited, stateless: bool) {
        let mut body = SseBody::new(response, self.config.max_message_size);
        let mut cursor = Cursor::default();
        let mut failures = 0u32;
        loop {
            let seen = cursor.messages;
            let Some(ended) = self.read_events(&mut body, &mut cursor, awaited).await else { return };
            if cursor.messages > seen {
                failures = 0;
            }
            if stateless {
                let msg = format!("the SSE stream of the request {ended} before the answer");
                return self.fail(awaited, HttpRequestError::new(HttpErrorKind::StreamEnded, None, msg)).await;
            }
            let Some(last_event_id) = cursor.last_event_id.clone() else {
                let msg =
                    format!("the SSE stream of the request {ended} before the answer, with no event id to resume from");
                return self.fail(awaited, HttpRequestError::new(HttpErrorKind::StreamEnded, None, msg)).await;
            };
            debug!(%last_event_id, "the SSE stream of a request {ended} before its answer; resuming");
            match self.resume_request_stream(&cursor, &last_event_id, &mut failures, awaited).await {
                Resumed::Opened(resumed) => body = *resumed,
                Resumed::Answered => return,
                Resumed::OutOfAttempts => {
                    let msg = format!(
                        "the SSE stream of the request {ended} before the answer and could not be resumed \
                         ({} attempts)",
                        self.config.reconnect.max_attempts
                    );
                    return self.fail(awaited, HttpRequestError::new(HttpErrorKind::StreamEnded, None, msg)).await;
                }
                Resumed::Failed(failure) => return self.fail(awaited, failure).await,
            }
        }
    }

    /// Reads a request's stream until it ends (how, for messages) or its answers came (`None`).
    async fn read_events(&self, body: &mut SseBody, cursor: &mut Cursor, awaited: &Awaited) -> Option<String> {
        loop {
            let next = tokio::select! {
                biased;
                _ = awaited.done.cancelled() => return None,
                n = body.next() => n,
            };
            match next {
                Ok(Some(event)) => {
                    if !self.on_event(event, cursor).await || awaited.done.is_cancelled() {
                        return None;
                    }
                }
                Ok(None) => return Some("ended".to_owned()),
                Err(e) => return Some(format!("broke ({e})")),
            }
        }
    }

    /// Reconnects a request's stream after `last_event_id` until one opens, its answers came
    /// meanwhile, the attempts run out, or the server refuses.
    async fn resume_request_stream(
        &self,
        cursor: &Cursor,
        last_event_id: &str,
        failures: &mut u32,
        awaited: &Awaited,
    ) -> Resumed {
        loop {
            *failures += 1;
            if *failures > self.config.reconnect.max_attempts {
                return Resumed::OutOfAttempts;
            }
            let delay = self.reconnect_delay(cursor, *failures);
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = awaited.done.cancelled() => return Resumed::Answered,
            }
            let snap = self.snapshot();
            let response = tokio::select! {
                r = self.get(&self.config.url, &snap, Some(last_event_id)) => r,
                _ = awaited.done.cancelled() => return Resumed::Answered,
            };
            match response {
                Ok(r) if r.status().is_success() && is_event_stream(&r) => {
                    return Resumed::Opened(Box::new(SseBody::new(r, self.config.max_message_size)));
                }
                Ok(r) if r.status().is_success() => {
                    let msg = "resuming the SSE stream of the request: the answer is not an event stream";
                    let error = HttpRequestError::new(HttpErrorKind::BadResponse, Some(r.status()), msg.to_owned());
                    return Resumed::Failed(error.into());
                }
                Ok(r) if r.status().is_server_error() => {
                    debug!(status = %r.status(), "resuming an SSE stream failed; trying again");
                }
                Ok(r) => {
                    let what = "the resumption of the request's SSE stream";
                    return Resumed::Failed(self.status_error(r, &snap, what).await);
                }
                Err(e) => debug!(error = %e, "resuming an SSE stream failed; trying again"),
            }
        }
    }

    /// Opens the standalone GET stream (after `notifications/initialized` was accepted).
    pub(super) fn start_get_stream(self: &Arc<Self>) {
        let token = self.closing.child_token();
        let number = {
            let mut st = self.state.lock_unpoisoned();
            if st.get_stream.is_some() || st.expired || !matches!(st.mode, Mode::Streamable | Mode::Detect) {
                return;
            }
            st.get_streams_started += 1;
            st.get_stream = Some((st.get_streams_started, token.clone()));
            st.get_streams_started
        };
        tokio::spawn(self.clone().run_get_stream(number, token));
    }

    /// The standalone GET stream: server-initiated messages. Reopened (with its
    /// `Last-Event-ID`) when it ends; a 405 means the server offers none.
    async fn run_get_stream(self: Arc<Self>, number: u64, token: CancellationToken) {
        let mut cursor = Cursor::default();
        let mut failures = 0u32;
        loop {
            let snap = self.snapshot();
            let response = tokio::select! {
                r = self.get(&self.config.url, &snap, cursor.last_event_id.as_deref()) => r,
                _ = token.cancelled() => return,
            };
            let seen = cursor.messages;
            match response {
                Ok(r) if r.status().is_success() && is_event_stream(&r) => {
                    let body = SseBody::new(r, self.config.max_message_size);
                    if !self.read_get_stream(body, &mut cursor, &token).await {
                        return;
                    }
                }
                Ok(r) if r.status().is_server_error() => {
                    debug!(status = %r.status(), "opening the GET stream failed; trying again");
                }
                // The server still holds the stream this client lost (it has not noticed the
                // break yet): later, it will have.
                Ok(r) if r.status() == StatusCode::CONFLICT => {
                    debug!("the server holds the GET stream still (409); trying again");
                }
                Ok(r) => {
                    self.get_stream_refused(r, &snap).await;
                    return self.end_get_stream(number);
                }
                Err(e) => debug!(error = %e, "opening the GET stream failed; trying again"),
            }
            if cursor.messages > seen {
                failures = 0;
            } else {
                failures += 1;
            }
            if failures > self.config.reconnect.max_attempts {
                warn!(attempts = failures - 1, "giving up on the GET stream");
                return self.end_get_stream(number);
            }
            let delay = self.reconnect_delay(&cursor, failures.max(1));
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = token.cancelled() => return,
            }
        }
    }

    /// Reads the GET stream until it ends (`true`: reopen it) or the transport stops.
    async fn read_get_stream(&self, mut body: SseBody, cursor: &mut Cursor, token: &CancellationToken) -> bool {
        loop {
            let next = tokio::select! {
                biased;
                _ = token.cancelled() => return false,
                n = body.next() => n,
            };
            match next {
                Ok(Some(event)) => {
                    if !self.on_event(event, cursor).await {
                        return false;
                    }
                }
                Ok(None) => {
                    debug!("the GET stream ended; reopening it");
                    return true;
                }
                Err(e) => {
                    debug!(error = %e, "the GET stream broke; reopening it");
                    return true;
                }
            }
        }
    }

    /// Logs why the server offers no GET stream (405, another status, not an event stream).
    async fn get_stream_refused(&self, response: reqwest::Response, snap: &Snapshot) {
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            debug!("the server offers no GET stream (405)");
        } else if status.is_success() {
            debug!(%status, "the GET stream's answer is not an event stream; no GET stream");
        } else {
            let failure = self.status_error(response, snap, "the GET stream").await;
            debug!("no GET stream: {failure}");
        }
    }

    /// GET stream `number` gave up: the next `notifications/initialized` may open another.
    fn end_get_stream(&self, number: u64) {
        let mut st = self.state.lock_unpoisoned();
        if st.get_stream.as_ref().is_some_and(|(n, _)| *n == number) {
            st.get_stream = None;
        }
    }
}
