//! What the write half does with each frame the engine hands it: requests are POSTed in tasks
//! of their own and their answers read (JSON, or an SSE stream), notifications and responses
//! POSTed in order; the first `initialize` may fall back to HTTP+SSE.

use mcp_jsonrpc::sync::MutexExt as _;
use std::io;
use std::sync::Arc;

use bytes::Bytes;
use http::StatusCode;
use mcp_jsonrpc::transport::{FrameKind, Outbound};
use mcp_types::RequestId;
use tracing::{debug, warn};

use super::exchange::{ERROR_BODY_LIMIT, ERROR_JSON_LIMIT, body_text_limited, jsonrpc_error, media_type, truncate};
use super::inbound::{Awaited, Failure};
use super::{Core, Mode, Snapshot};
use crate::client::error::{HttpErrorKind, HttpRequestError};
use crate::client::hints::{RequestHeaders, Role};
use crate::client::request::read_bounded;
use crate::headers::{APPLICATION_JSON, MCP_SESSION_ID, TEXT_EVENT_STREAM};

/// Whether a refusal of the POST of `initialize` sends the client to the HTTP+SSE
/// transport: any 4xx (the backwards-compatibility procedure of 2025-03-26 and 2025-06-18;
/// 2025-11-25 names 400, 404 and 405, which this includes) except 401 and 403. Those are about
/// credentials, not the transport: a 401 goes to the `AuthProvider`, and a 403 (insufficient
/// scope) must reach the caller as it is rather than hide behind a failed fallback. The same
/// rule as the `server/discover` probe of `mcp-client`.
fn falls_back_to_sse(status: StatusCode) -> bool {
    status.is_client_error() && !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
}

/// How a POST of requests is sent.
#[derive(Debug)]
pub(crate) enum Post {
    /// In the session (`initialize` begins it), with the JSON-RPC error codes that are final
    /// in a 4xx body.
    Session { initialize: bool, final_errors: &'static [i64] },
    /// A stateless request, with its headers.
    Stateless(Snapshot),
}

impl Core {
    /// Sends one outgoing frame, as the engine described it and with the client's headers.
    pub(crate) async fn send_frame(self: &Arc<Self>, out: &Outbound) -> io::Result<()> {
        if self.closing.is_cancelled() {
            return Err(io::Error::from(io::ErrorKind::BrokenPipe));
        }
        let headers = RequestHeaders::of(out.hints.as_ref());
        let role = headers.map_or(Role::Plain, |h| h.role);
        match role {
            Role::Initialize => self.begin_initialize(out.kind.request_id()),
            Role::Stateless => {}
            Role::Initialized | Role::Plain if self.is_expired() => {
                // Nothing reaches a session the server ended; requests fail at once.
                match out.kind {
                    FrameKind::Request(id) => {
                        let error = HttpRequestError::new(
                            HttpErrorKind::SessionExpired,
                            Some(StatusCode::NOT_FOUND),
                            "MCP session expired (the server answered HTTP 404 to its id); initialize a new session"
                                .to_owned(),
                        );
                        self.fail_ids(&[RequestId::Integer(id)], error.into()).await;
                    }
                    _ => debug!("a notification or response dropped: the session expired"),
                }
                return Ok(());
            }
            Role::Initialized | Role::Plain => {}
        }
        match out.kind {
            FrameKind::Request(id) => self.send_request(out.frame.clone(), RequestId::Integer(id), headers).await,
            FrameKind::Cancellation(id) => {
                if self.is_stateless() {
                    // 2026-07-28: closing the request's stream (below) is the cancellation; no
                    // `notifications/cancelled` goes over HTTP.
                    debug!(request = id, "cancelled: closing the stream of the request");
                } else {
                    self.post_message(out.frame.clone(), role).await;
                }
                self.settle(&RequestId::Integer(id));
            }
            _ => self.post_message(out.frame.clone(), role).await,
        }
        Ok(())
    }

    /// POSTs one of our requests and reads its answer, in a task of its own.
    async fn send_request(self: &Arc<Self>, frame: Bytes, id: RequestId, headers: Option<&RequestHeaders>) {
        let awaited = self.register(std::slice::from_ref(&id));
        let Some(headers) = headers else {
            return self.post_in_session(frame, awaited, false, &[]).await;
        };
        match headers.role {
            // A stateless request: its own POST and stream, with its metadata headers, whatever
            // the connection's mode (a fallback to HTTP+SSE is still possible until
            // `initialize`).
            Role::Stateless => {
                let snap = self.stateless_snapshot(headers);
                tokio::spawn(self.clone().run_request(frame, awaited, Post::Stateless(snap)));
            }
            role => self.post_in_session(frame, awaited, role == Role::Initialize, headers.final_errors).await,
        }
    }

    /// POSTs a request in the session (the first `initialize` may have to fall back).
    async fn post_in_session(
        self: &Arc<Self>,
        frame: Bytes,
        awaited: Arc<Awaited>,
        initialize: bool,
        final_errors: &'static [i64],
    ) {
        let mode = self.state.lock_unpoisoned().mode.clone();
        let post = Post::Session { initialize, final_errors };
        match mode {
            Mode::Detect if initialize => self.initialize_detecting(frame, awaited, final_errors).await,
            Mode::Detect => {
                self.set_mode(Mode::Streamable);
                tokio::spawn(self.clone().run_request(frame, awaited, post));
            }
            _ => {
                tokio::spawn(self.clone().run_request(frame, awaited, post));
            }
        }
    }

    /// POSTs a notification or response, waiting for it to be accepted: what follows (the
    /// next request after `notifications/initialized`) reaches the server after it.
    async fn post_message(self: &Arc<Self>, frame: Bytes, role: Role) {
        let snap = self.snapshot();
        let url = self.target();
        let response = tokio::select! {
            r = tokio::time::timeout(self.config.http_timeout, self.post(&url, &snap, &frame)) => r,
            _ = self.closing.cancelled() => return,
        };
        match response {
            Err(_) => {
                warn!(timeout = ?self.config.http_timeout, "POST of a notification or response got no answer in time")
            }
            Ok(Err(e)) => warn!(error = %e, "POST of a notification or response failed"),
            Ok(Ok(response)) if response.status().is_success() => {
                if role == Role::Initialized && !snap.sse {
                    self.start_get_stream();
                }
            }
            Ok(Ok(response)) => {
                let failure = self.status_error(response, &snap, "a notification or response").await;
                warn!("{failure}");
            }
        }
    }

    /// The first `initialize` of a transport that may have to fall back to HTTP+SSE: sent
    /// before anything else goes out. A refusal whose JSON-RPC error the client named final
    /// (a server of the stateless revision refusing `initialize`) is delivered instead.
    async fn initialize_detecting(self: &Arc<Self>, frame: Bytes, awaited: Arc<Awaited>, final_errors: &'static [i64]) {
        let snap = Snapshot { final_errors, ..self.snapshot() };
        let url = self.config.url.clone();
        let response = tokio::select! {
            r = tokio::time::timeout(self.config.http_timeout, self.post(&url, &snap, &frame)) => r,
            _ = awaited.done.cancelled() => return,
        };
        let response = match response {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                let error = HttpRequestError::connection(None, "HTTP request failed".to_owned(), e);
                return self.fail(&awaited, error).await;
            }
            Err(_) => {
                let msg = format!("no answer to initialize within {:?}", self.config.http_timeout);
                return self.fail(&awaited, HttpRequestError::new(HttpErrorKind::Connection, None, msg)).await;
            }
        };
        let status = response.status();
        if !(self.config.http_sse_fallback && falls_back_to_sse(status)) {
            self.set_mode(Mode::Streamable);
            tokio::spawn({
                let core = self.clone();
                async move { core.handle_response(response, snap, &awaited, true).await }
            });
            return;
        }
        let refusal = body_text_limited(response, self.config.http_timeout, ERROR_JSON_LIMIT).await;
        if let Some(error) = jsonrpc_error(&refusal).filter(|e| final_errors.contains(&e.code)) {
            // The server's own answer (a server of the stateless revision): not HTTP+SSE.
            debug!(%status, code = error.code, "initialize refused with an error the client named final");
            self.set_mode(Mode::Streamable);
            return self.fail(&awaited, Failure::Remote(error)).await;
        }
        self.fall_back_to_sse(frame, awaited, status, &refusal).await;
    }

    /// The POST of `initialize` was refused with `status`: try HTTP+SSE on the same URL, and
    /// re-send `initialize` there.
    async fn fall_back_to_sse(
        self: &Arc<Self>,
        frame: Bytes,
        awaited: Arc<Awaited>,
        status: StatusCode,
        refusal: &str,
    ) {
        debug!(%status, "POST of initialize refused; trying the HTTP+SSE transport");
        let refusal = truncate(refusal, ERROR_BODY_LIMIT);
        let refusal = if refusal.is_empty() { String::new() } else { format!(" ({refusal})") };
        match self.open_sse().await {
            Ok(endpoint) => {
                debug!(%endpoint, "HTTP+SSE transport");
                self.set_mode(Mode::Sse { endpoint });
                let post = Post::Session { initialize: true, final_errors: &[] };
                tokio::spawn(self.clone().run_request(frame, awaited, post));
            }
            Err(e) => {
                let msg = format!(
                    "HTTP {status} for initialize{refusal}, and the fallback to the HTTP+SSE transport \
                     failed: {e}"
                );
                self.fail(&awaited, HttpRequestError::new(HttpErrorKind::Status, Some(status), msg)).await;
            }
        }
    }

    /// POSTs a frame with requests and reads their answers.
    async fn run_request(self: Arc<Self>, frame: Bytes, awaited: Arc<Awaited>, post: Post) {
        let _permit = tokio::select! {
            p = self.permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => return,
            },
            _ = awaited.done.cancelled() => return,
        };
        let (snap, url, initialize) = match post {
            Post::Stateless(snap) => (snap, self.config.url.clone(), false),
            Post::Session { initialize, final_errors } => {
                (Snapshot { final_errors, ..self.snapshot() }, self.target(), initialize)
            }
        };
        let response = tokio::select! {
            r = self.post(&url, &snap, &frame) => r,
            _ = awaited.done.cancelled() => return,
        };
        match response {
            Ok(response) => self.handle_response(response, snap, &awaited, initialize).await,
            Err(e) => {
                let error = HttpRequestError::connection(None, "HTTP request failed".to_owned(), e);
                self.fail(&awaited, error).await;
            }
        }
    }

    /// Reads the answer to a POST of requests.
    async fn handle_response(&self, response: reqwest::Response, snap: Snapshot, awaited: &Awaited, initialize: bool) {
        let status = response.status();
        if !status.is_success() {
            let failure = self.status_error(response, &snap, "the request").await;
            return self.fail(awaited, failure).await;
        }
        if snap.sse {
            return; // the answer comes on the SSE stream
        }
        if initialize && let Some(id) = response.headers().get(MCP_SESSION_ID) {
            self.set_session_id(id.clone(), snap.generation);
        }
        if status == StatusCode::ACCEPTED {
            if !snap.stateless && self.state.lock_unpoisoned().get_stream.is_some() {
                debug!("a request was answered 202; its response may come on the GET stream");
                return;
            }
            // Nothing could bring its answer (2026-07-28 has no other stream): failing now
            // beats waiting for a timeout (or, for an unbounded call, forever).
            let msg = if snap.stateless {
                "the server answered the request with 202 Accepted and no response"
            } else {
                "the server answered the request with 202 Accepted, and there is no GET stream to bring its response"
            };
            let error = HttpRequestError::new(HttpErrorKind::BadResponse, Some(status), msg.to_owned());
            return self.fail(awaited, error).await;
        }
        match media_type(&response).as_deref() {
            Some(APPLICATION_JSON) => self.read_json_answer(response, awaited).await,
            Some(TEXT_EVENT_STREAM) => self.read_request_stream(response, awaited, snap.stateless).await,
            other => {
                let msg = format!(
                    "unexpected content type {:?} (expected {APPLICATION_JSON} or {TEXT_EVENT_STREAM})",
                    other.unwrap_or("none")
                );
                self.fail(awaited, HttpRequestError::new(HttpErrorKind::BadResponse, Some(status), msg)).await;
            }
        }
    }

    /// Reads a JSON answer (one message or a batch) within the size limit, and delivers it.
    async fn read_json_answer(&self, mut response: reqwest::Response, awaited: &Awaited) {
        let status = response.status();
        let limit = self.config.max_message_size;
        let read = read_bounded(&mut response, limit);
        let body = tokio::select! {
            b = read => b,
            _ = awaited.done.cancelled() => return,
        };
        let error = match body {
            Ok(Some(body)) => {
                if !self.deliver(body).await {
                    return;
                }
                let msg = "the JSON body did not answer the request".to_owned();
                HttpRequestError::new(HttpErrorKind::BadResponse, Some(status), msg)
            }
            Ok(None) => HttpRequestError::new(
                HttpErrorKind::TooLarge,
                Some(status),
                format!("the response is larger than {limit} bytes"),
            ),
            Err(e) => HttpRequestError::connection(Some(status), "reading the response failed".to_owned(), e),
        };
        if !awaited.pending.lock_unpoisoned().is_empty() {
            self.fail(awaited, error).await;
        }
    }
}
