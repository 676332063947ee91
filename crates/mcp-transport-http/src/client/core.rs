//! What both client transports share: the session state, the HTTP exchanges, SSE streams and
//! their resumption, and the queue of incoming frames.

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderName, HeaderValue, Method, StatusCode};
use mcp_jsonrpc::message;
use mcp_jsonrpc::transport::{FrameKind, Inbound, Outbound, ReadError, TransportError};
use mcp_types::{ErrorObject, RequestId};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};
use url::Url;

use super::auth::Unauthorized;
use super::request::read_bounded;

/// How many times one request is sent again after the auth provider answered a challenge:
/// a 401, then a step-up 403, and once more.
const MAX_AUTH_TRIES: usize = 2;

/// Whether a `WWW-Authenticate` value is a `Bearer` challenge for more scopes.
fn is_insufficient_scope(value: &HeaderValue) -> bool {
    value.to_str().is_ok_and(|v| v.to_ascii_lowercase().contains("insufficient_scope"))
}
use super::config::HttpClientConfig;
use super::error::{HttpClientError, HttpErrorKind, HttpRequestError};
use super::hints::{RequestHeaders, Role};
use super::sse::{SseEvent, SseParser};
use crate::headers::{APPLICATION_JSON, LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, TEXT_EVENT_STREAM};

/// What a POST accepts back.
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// How much of an error body goes into an error message.
const ERROR_BODY_LIMIT: usize = 2048;
/// How much of an error body is read to find a JSON-RPC error in it.
const ERROR_JSON_LIMIT: usize = 64 * 1024;
/// Whether a refusal of the POST of `initialize` sends the client to the HTTP+SSE
/// transport: any 4xx (the backwards-compatibility procedure of 2025-03-26 and 2025-06-18;
/// 2025-11-25 names 400, 404 and 405, which this includes) except 401 and 403. Those are about
/// credentials, not the transport: a 401 goes to the `AuthProvider`, and a 403 (insufficient
/// scope) must reach the caller as it is rather than hide behind a failed fallback. The same
/// rule as the `server/discover` probe of `mcp-client`.
fn falls_back_to_sse(status: StatusCode) -> bool {
    status.is_client_error() && !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
}

/// The read half's end of the queue of incoming frames.
pub(crate) type InboundQueue = mpsc::Receiver<Result<Inbound, ReadError>>;

/// Which transport the connection speaks.
#[derive(Debug, Clone)]
pub(crate) enum Mode {
    /// Streamable HTTP, unless the POST of `initialize` says otherwise.
    Detect,
    /// Streamable HTTP (2025-03-26 and later).
    Streamable,
    /// HTTP+SSE (2024-11-05): messages are POSTed to `endpoint`, answers come on the one SSE
    /// stream.
    Sse { endpoint: Url },
}

#[derive(Debug)]
struct State {
    mode: Mode,
    session_id: Option<HeaderValue>,
    protocol_version: Option<HeaderValue>,
    /// The id of the `initialize` request whose answer (with the negotiated revision) is
    /// awaited.
    init_id: Option<RequestId>,
    /// Bumped by each `initialize`: answers about an older session do not touch this one.
    generation: u64,
    /// The server answered 404 to our session id; only `initialize` goes out until a new one.
    expired: bool,
    /// The standalone GET stream while it runs: its number and its stop token.
    get_stream: Option<(u64, CancellationToken)>,
    /// Numbers GET streams.
    get_streams_started: u64,
    /// The revision of the last stateless (2026-07-28) request: the connection is stateless.
    /// Cleared by `initialize`.
    stateless: Option<HeaderValue>,
}

/// The session headers as they were when a request was built.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    session_id: Option<HeaderValue>,
    protocol_version: Option<HeaderValue>,
    generation: u64,
    /// Over HTTP+SSE: no session id, answers on the one stream.
    sse: bool,
    /// A stateless (2026-07-28) request: no session, no resumption, its metadata headers.
    stateless: bool,
    /// `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` of a stateless request.
    extra: Vec<(HeaderName, HeaderValue)>,
    /// JSON-RPC error codes that, in a 4xx body, are the server's answer (from the client).
    final_errors: &'static [i64],
}

/// How a request failed: the server's JSON-RPC error (delivered as it sent it), or HTTP's.
#[derive(Debug)]
pub(crate) enum Failure {
    Remote(ErrorObject),
    Http(HttpRequestError),
}

impl From<HttpRequestError> for Failure {
    fn from(e: HttpRequestError) -> Self {
        Failure::Http(e)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Remote(e) => e.fmt(f),
            Failure::Http(e) => e.fmt(f),
        }
    }
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

/// The requests one POST waits to see answered.
struct Awaited {
    pending: Mutex<HashSet<RequestId>>,
    /// Fires once every one is answered (on any stream), cancelled, or failed, and on close.
    done: CancellationToken,
}

/// Where a stream's events left off.
#[derive(Debug, Default)]
struct Cursor {
    last_event_id: Option<String>,
    retry: Option<Duration>,
    /// Events that carried a message (what counts as progress for reconnecting).
    messages: u64,
}

/// How resuming a request's stream ended.
enum Resumed {
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
struct SseBody {
    response: reqwest::Response,
    parser: SseParser,
    queue: VecDeque<SseEvent>,
}

impl SseBody {
    fn new(response: reqwest::Response, limit: usize) -> Self {
        SseBody { response, parser: SseParser::new(limit), queue: VecDeque::new() }
    }

    /// The next event; `None` at the end of the stream.
    async fn next(&mut self) -> Result<Option<SseEvent>, reqwest::Error> {
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

fn media_type(response: &reqwest::Response) -> Option<String> {
    let value = response.headers().get(CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
}

fn is_event_stream(response: &reqwest::Response) -> bool {
    media_type(response).as_deref() == Some(TEXT_EVENT_STREAM)
}

/// The start of a body, as text, for error messages (never waits long).
async fn body_text(response: reqwest::Response, wait: Duration) -> String {
    body_text_limited(response, wait, ERROR_BODY_LIMIT).await
}

/// At most `limit` bytes of a body, as text (never waits long).
async fn body_text_limited(mut response: reqwest::Response, wait: Duration, limit: usize) -> String {
    let read = async {
        let mut buf = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            buf.extend_from_slice(&chunk);
            if buf.len() >= limit {
                break;
            }
        }
        buf
    };
    let buf = tokio::time::timeout(wait, read).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&buf[..buf.len().min(limit)]);
    text.trim().to_owned()
}

/// The first `limit` bytes of `text` (at a character boundary).
fn truncate(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The error of a body that is a JSON-RPC error response.
fn jsonrpc_error(body: &str) -> Option<ErrorObject> {
    #[derive(Deserialize)]
    struct ErrorResponse {
        error: ErrorObject,
    }
    serde_json::from_str::<ErrorResponse>(body).ok().map(|r| r.error)
}

/// The frames of a body: the elements of a batch, or the message itself.
fn split_batch(frame: Bytes) -> Vec<Bytes> {
    if frame.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'[') {
        return vec![frame];
    }
    match serde_json::from_slice::<Vec<&RawValue>>(&frame) {
        Ok(items) if !items.is_empty() => items.iter().map(|r| Bytes::copy_from_slice(r.get().as_bytes())).collect(),
        _ => vec![frame],
    }
}

/// Just enough of a message to route it: a response's id, and its result.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
    #[serde(borrow, default, deserialize_with = "mcp_jsonrpc::raw::present")]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// The revision in the answer to `initialize`.
#[derive(Deserialize)]
struct InitProbe {
    #[serde(rename = "protocolVersion")]
    protocol_version: String,
}

pub(crate) struct Core {
    pub(crate) config: HttpClientConfig,
    client: reqwest::Client,
    state: Mutex<State>,
    inbound: mpsc::Sender<Result<Inbound, ReadError>>,
    permits: Arc<Semaphore>,
    /// Fires on close: every task stops.
    pub(crate) closing: CancellationToken,
    /// Fires when nothing more will be read (close, or the HTTP+SSE stream ended).
    pub(crate) ended: CancellationToken,
    awaited: Mutex<HashMap<RequestId, Arc<Awaited>>>,
    /// The last `retry` the server sent on any stream.
    server_retry: Mutex<Option<Duration>>,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("url", &self.config.url.as_str())
            .field("state", &*self.state.lock_unpoisoned())
            .finish()
    }
}

impl Core {
    pub(crate) fn new(config: HttpClientConfig, mode: Mode) -> Result<(Arc<Core>, InboundQueue), HttpClientError> {
        let client = config.build_client()?;
        let (tx, rx) = mpsc::channel(config.inbound_capacity);
        let core = Core {
            client,
            state: Mutex::new(State {
                mode,
                session_id: None,
                protocol_version: None,
                init_id: None,
                generation: 0,
                expired: false,
                get_stream: None,
                get_streams_started: 0,
                stateless: None,
            }),
            inbound: tx,
            permits: Arc::new(Semaphore::new(config.max_in_flight)),
            closing: CancellationToken::new(),
            ended: CancellationToken::new(),
            awaited: Mutex::new(HashMap::new()),
            server_retry: Mutex::new(None),
            config,
        };
        Ok((Arc::new(core), rx))
    }

    // ---- state -------------------------------------------------------------------------

    pub(crate) fn session_id(&self) -> Option<String> {
        self.state.lock_unpoisoned().session_id.as_ref().and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    pub(crate) fn protocol_version(&self) -> Option<String> {
        let st = self.state.lock_unpoisoned();
        st.stateless.as_ref().or(st.protocol_version.as_ref()).and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    pub(crate) fn is_stateless(&self) -> bool {
        self.state.lock_unpoisoned().stateless.is_some()
    }

    pub(crate) fn is_sse(&self) -> bool {
        matches!(self.state.lock_unpoisoned().mode, Mode::Sse { .. })
    }

    pub(crate) fn is_expired(&self) -> bool {
        self.state.lock_unpoisoned().expired
    }

    pub(crate) fn set_mode(&self, mode: Mode) {
        self.state.lock_unpoisoned().mode = mode;
    }

    fn snapshot(&self) -> Snapshot {
        let st = self.state.lock_unpoisoned();
        Snapshot {
            session_id: st.session_id.clone(),
            protocol_version: st.stateless.clone().or_else(|| st.protocol_version.clone()),
            generation: st.generation,
            sse: matches!(st.mode, Mode::Sse { .. }),
            stateless: false,
            extra: Vec::new(),
            final_errors: &[],
        }
    }

    /// The headers of a stateless request, as the client handed them: its revision,
    /// `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`; no session id.
    fn stateless_snapshot(&self, headers: &RequestHeaders) -> Snapshot {
        let generation = {
            let mut st = self.state.lock_unpoisoned();
            if headers.version.is_some() {
                st.stateless = headers.version.clone();
            }
            st.generation
        };
        Snapshot {
            session_id: None,
            protocol_version: headers.version.clone(),
            generation,
            sse: false,
            stateless: true,
            extra: headers.headers.clone(),
            final_errors: headers.final_errors,
        }
    }

    /// Where messages are POSTed.
    fn target(&self) -> Url {
        match &self.state.lock_unpoisoned().mode {
            Mode::Sse { endpoint } => endpoint.clone(),
            _ => self.config.url.clone(),
        }
    }

    /// A new `initialize` goes out: a new session begins, without a session id.
    fn begin_initialize(&self, id: Option<RequestId>) {
        let mut st = self.state.lock_unpoisoned();
        st.init_id = id;
        st.generation += 1;
        st.session_id = None;
        st.protocol_version = None;
        st.stateless = None;
        st.expired = false;
        if let Some((_, get)) = st.get_stream.take() {
            get.cancel();
        }
    }

    fn set_session_id(&self, value: HeaderValue, generation: u64) {
        let mut st = self.state.lock_unpoisoned();
        if st.generation == generation {
            debug!(session = ?value, "session started");
            st.session_id = Some(value);
        }
    }

    /// The server answered 404 to the session id of `generation`.
    fn expire(&self, generation: u64) {
        let mut st = self.state.lock_unpoisoned();
        if st.generation != generation || st.expired {
            return;
        }
        warn!("the server ended the MCP session (HTTP 404); a new `initialize` starts a new one");
        st.expired = true;
        st.session_id = None;
        if let Some((_, get)) = st.get_stream.take() {
            get.cancel();
        }
    }

    // ---- incoming frames ---------------------------------------------------------------

    /// Queues an item for the read half; `false` once the transport is closing.
    async fn push(&self, item: Result<Inbound, ReadError>) -> bool {
        tokio::select! {
            sent = self.inbound.send(item) => sent.is_ok(),
            _ = self.closing.cancelled() => false,
        }
    }

    /// Hands the messages of a body or event to the read half, noting answers.
    async fn deliver(&self, body: Bytes) -> bool {
        for frame in split_batch(body) {
            let answered = self.inspect(&frame);
            if !self.push(Ok(Inbound::from(frame))).await {
                return false;
            }
            if let Some(id) = answered {
                self.settle(&id);
            }
        }
        true
    }

    /// The id of a response; from the answer to `initialize`, the negotiated revision (which
    /// goes as `MCP-Protocol-Version` from then on).
    fn inspect(&self, frame: &[u8]) -> Option<RequestId> {
        let probe: Probe<'_> = serde_json::from_slice(frame).ok()?;
        if probe.method.is_some() || (probe.result.is_none() && probe.error.is_none()) {
            return None;
        }
        let id = probe.id?;
        let mut st = self.state.lock_unpoisoned();
        if st.init_id.as_ref() == Some(&id) {
            st.init_id = None;
            let version = probe.result.and_then(|r| serde_json::from_str::<InitProbe>(r.get()).ok());
            if let Some(v) = version.and_then(|v| HeaderValue::from_str(&v.protocol_version).ok()) {
                debug!(version = ?v, "negotiated protocol revision");
                st.protocol_version = Some(v);
            }
        }
        Some(id)
    }

    fn register(&self, ids: &[RequestId]) -> Arc<Awaited> {
        let awaited =
            Arc::new(Awaited { pending: Mutex::new(ids.iter().cloned().collect()), done: self.closing.child_token() });
        let mut map = self.awaited.lock_unpoisoned();
        for id in ids {
            map.insert(id.clone(), awaited.clone());
        }
        awaited
    }

    /// Request `id` was answered or cancelled: whoever waits for it stops.
    fn settle(&self, id: &RequestId) {
        let Some(awaited) = self.awaited.lock_unpoisoned().remove(id) else { return };
        let mut pending = awaited.pending.lock_unpoisoned();
        pending.remove(id);
        if pending.is_empty() {
            awaited.done.cancel();
        }
    }

    /// Fails every request still pending in `awaited`: the server's JSON-RPC error goes to
    /// each as a response, HTTP's as the transport's error.
    async fn fail(&self, awaited: &Awaited, failure: impl Into<Failure>) {
        let failure = failure.into();
        let ids: Vec<RequestId> = awaited.pending.lock_unpoisoned().drain().collect();
        {
            let mut map = self.awaited.lock_unpoisoned();
            for id in &ids {
                if map.get(id).is_some_and(|a| std::ptr::eq(Arc::as_ptr(a), awaited)) {
                    map.remove(id);
                }
            }
        }
        awaited.done.cancel();
        self.fail_ids(&ids, failure).await;
    }

    /// Fails the requests `ids` with `failure`.
    async fn fail_ids(&self, ids: &[RequestId], failure: Failure) {
        debug!(requests = ?ids, error = %failure, "request failed in the transport");
        match failure {
            Failure::Remote(error) => {
                for id in ids {
                    let frame = message::encode_error(Some(id), &error);
                    if !self.push(Ok(Inbound::from(frame))).await {
                        return;
                    }
                }
            }
            Failure::Http(error) => {
                let error: TransportError = Arc::new(error);
                for id in ids {
                    let failed = ReadError::RequestFailed { id: id.clone(), source: error.clone() };
                    if !self.push(Err(failed)).await {
                        return;
                    }
                }
            }
        }
    }

    // ---- HTTP ---------------------------------------------------------------------------

    fn request(&self, method: Method, url: &Url, snap: &Snapshot) -> reqwest::RequestBuilder {
        let mut rb = self.client.request(method, url.clone()).headers(self.config.headers.clone());
        if !snap.sse
            && let Some(s) = &snap.session_id
        {
            rb = rb.header(MCP_SESSION_ID, s.clone());
        }
        if let Some(v) = &snap.protocol_version {
            rb = rb.header(MCP_PROTOCOL_VERSION, v.clone());
        }
        for (name, value) in &snap.extra {
            rb = rb.header(name.clone(), value.clone());
        }
        rb
    }

    /// Sends a request with the auth provider's `Authorization`; on a 401, or a 403 that asks
    /// for more scopes (`insufficient_scope`), the provider may ask for another try, at most
    /// [`MAX_AUTH_TRIES`] times.
    async fn send(&self, build: impl Fn() -> reqwest::RequestBuilder) -> Result<reqwest::Response, reqwest::Error> {
        self.send_answering(build, true).await
    }

    /// [`Self::send`], which with `answer_challenges` false sends the provider's current
    /// `Authorization` and takes a 401 as the answer: what ending a session sends must not
    /// start an authorization (after a logout, it would undo it).
    async fn send_answering(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
        answer_challenges: bool,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let mut tries = 0;
        loop {
            let mut rb = build();
            if let Some(auth) = &self.config.auth
                && let Some(value) = auth.authorization().await
            {
                rb = rb.header(AUTHORIZATION, value);
            }
            let response = rb.send().await?;
            let status = response.status();
            let challenge = response.headers().get(WWW_AUTHENTICATE).cloned();
            let asks = status == StatusCode::UNAUTHORIZED
                || (status == StatusCode::FORBIDDEN && challenge.as_ref().is_some_and(is_insufficient_scope));
            if asks
                && answer_challenges
                && tries < MAX_AUTH_TRIES
                && let Some(auth) = &self.config.auth
            {
                let challenge = Unauthorized { url: response.url().clone(), status, www_authenticate: challenge };
                if auth.on_unauthorized(challenge).await {
                    tries += 1;
                    continue;
                }
            }
            return Ok(response);
        }
    }

    async fn post(&self, url: &Url, snap: &Snapshot, frame: &Bytes) -> Result<reqwest::Response, reqwest::Error> {
        self.send(|| {
            self.request(Method::POST, url, snap)
                .header(ACCEPT, ACCEPT_BOTH)
                .header(CONTENT_TYPE, APPLICATION_JSON)
                .body(frame.clone())
        })
        .await
    }

    /// Opens an SSE stream with GET (resuming after `last_event_id`), waiting at most the
    /// HTTP timeout for its headers.
    async fn get(&self, url: &Url, snap: &Snapshot, last_event_id: Option<&str>) -> Result<reqwest::Response, String> {
        let last = last_event_id.and_then(|id| HeaderValue::from_str(id).ok());
        let send = self.send(|| {
            let rb = self.request(Method::GET, url, snap).header(ACCEPT, TEXT_EVENT_STREAM);
            match &last {
                Some(id) => rb.header(LAST_EVENT_ID, id.clone()),
                None => rb,
            }
        });
        match tokio::time::timeout(self.config.http_timeout, send).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(format!("HTTP request failed: {e}")),
            Err(_) => Err(format!("no answer within {:?}", self.config.http_timeout)),
        }
    }

    /// The failure for an error status: a JSON-RPC error in the body of a 4xx answer to a
    /// stateless request (or one whose code the client named final) as it came, else HTTP's,
    /// from the status and the body text.
    async fn status_error(&self, response: reqwest::Response, snap: &Snapshot, what: &str) -> Failure {
        let status = response.status();
        let challenge = response.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body = body_text_limited(response, self.config.http_timeout, ERROR_JSON_LIMIT).await;
        if status.is_client_error()
            && !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
            && let Some(error) = jsonrpc_error(&body)
            && (snap.stateless || snap.final_errors.contains(&error.code))
        {
            debug!(%status, code = error.code, "the server answered {what} with a JSON-RPC error");
            return Failure::Remote(error);
        }
        let body = truncate(&body, ERROR_BODY_LIMIT);
        let body = if body.is_empty() { String::new() } else { format!(": {body}") };
        let error = if status == StatusCode::NOT_FOUND && snap.session_id.is_some() && !snap.sse {
            self.expire(snap.generation);
            HttpRequestError::new(
                HttpErrorKind::SessionExpired,
                Some(status),
                format!(
                    "MCP session expired: the server answered {what} with HTTP {status}{body}; initialize a new session"
                ),
            )
        } else if status == StatusCode::UNAUTHORIZED {
            let challenge = challenge.map(|c| format!(" (WWW-Authenticate: {c})")).unwrap_or_default();
            HttpRequestError::new(
                HttpErrorKind::Unauthorized,
                Some(status),
                format!("HTTP {status}: the server requires authorization{challenge}{body}"),
            )
        } else {
            HttpRequestError::new(HttpErrorKind::Status, Some(status), format!("HTTP {status} for {what}{body}"))
        };
        Failure::Http(error)
    }

    // ---- writing ------------------------------------------------------------------------

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

    /// Handles one SSE event; `false` once the transport is closing.
    async fn on_event(&self, event: SseEvent, cursor: &mut Cursor) -> bool {
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
    async fn read_request_stream(&self, response: reqwest::Response, awaited: &Awaited, stateless: bool) {
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
    fn start_get_stream(self: &Arc<Self>) {
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

    // ---- HTTP+SSE -----------------------------------------------------------------------

    /// Opens the HTTP+SSE stream at the configured URL and waits for its `endpoint` event.
    pub(crate) async fn open_sse(self: &Arc<Self>) -> Result<Url, HttpClientError> {
        let snap = Snapshot {
            session_id: None,
            protocol_version: None,
            generation: 0,
            sse: true,
            stateless: false,
            extra: Vec::new(),
            final_errors: &[],
        };
        let timeout = self.config.http_timeout;
        let send = self.send(|| self.request(Method::GET, &self.config.url, &snap).header(ACCEPT, TEXT_EVENT_STREAM));
        let response = tokio::time::timeout(timeout, send)
            .await
            .map_err(|_| HttpClientError::Timeout(format!("opening the SSE stream took over {timeout:?}")))?
            .map_err(HttpClientError::Request)?;
        let status = response.status();
        if !status.is_success() {
            return Err(HttpClientError::Status { status, body: body_text(response, timeout).await });
        }
        if !is_event_stream(&response) {
            return Err(HttpClientError::Endpoint(format!(
                "the answer to GET is {:?}, not an event stream",
                media_type(&response).unwrap_or_default()
            )));
        }
        let (tx, rx) = oneshot::channel();
        tokio::spawn(self.clone().run_sse_stream(response, tx));
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(endpoint)) => endpoint,
            Ok(Err(_)) => Err(HttpClientError::Endpoint("the SSE stream ended before the `endpoint` event".to_owned())),
            Err(_) => Err(HttpClientError::Timeout(format!("no `endpoint` event within {timeout:?}"))),
        }
    }

    fn resolve_endpoint(&self, event: &SseEvent) -> Result<Url, HttpClientError> {
        let data = event.data.as_deref().unwrap_or_default();
        let text = String::from_utf8_lossy(data);
        let endpoint = self
            .config
            .url
            .join(text.trim())
            .map_err(|e| HttpClientError::Endpoint(format!("invalid endpoint {text:?}: {e}")))?;
        if endpoint.origin() != self.config.url.origin() {
            return Err(HttpClientError::Endpoint(format!(
                "the endpoint {endpoint} is not on the origin of {}",
                self.config.url
            )));
        }
        Ok(endpoint)
    }

    /// Reads the HTTP+SSE stream: the `endpoint` event, then messages. Its end ends the
    /// connection.
    async fn run_sse_stream(
        self: Arc<Self>,
        response: reqwest::Response,
        endpoint: oneshot::Sender<Result<Url, HttpClientError>>,
    ) {
        let mut body = SseBody::new(response, self.config.max_message_size);
        let mut endpoint = Some(endpoint);
        let mut cursor = Cursor::default();
        loop {
            let next = tokio::select! {
                biased;
                _ = self.closing.cancelled() => return,
                n = body.next() => n,
            };
            match next {
                Ok(Some(event)) if event.event.as_deref() == Some("endpoint") => {
                    if let Some(tx) = endpoint.take() {
                        let _ = tx.send(self.resolve_endpoint(&event));
                    }
                }
                Ok(Some(event)) => {
                    if endpoint.is_some() {
                        debug!("a message before the `endpoint` event");
                    }
                    if !self.on_event(event, &mut cursor).await {
                        return;
                    }
                }
                Ok(None) => {
                    debug!("the HTTP+SSE stream ended");
                    break;
                }
                Err(e) => {
                    warn!(error = %e, "the HTTP+SSE stream broke");
                    break;
                }
            }
        }
        if endpoint.is_none() {
            self.ended.cancel();
        }
    }

    // ---- closing ------------------------------------------------------------------------

    /// Stops every stream and ends the session (DELETE; a 405 is fine).
    pub(crate) async fn close(&self) {
        if self.closing.is_cancelled() {
            return;
        }
        self.closing.cancel();
        self.ended.cancel();
        let snap = self.snapshot();
        let Some(session) = snap.session_id.clone().filter(|_| !snap.sse) else { return };
        let send = self.send_answering(|| self.request(Method::DELETE, &self.config.url, &snap), false);
        match tokio::time::timeout(self.config.http_timeout, send).await {
            Ok(Ok(r)) if r.status().is_success() || r.status() == StatusCode::METHOD_NOT_ALLOWED => {
                debug!(?session, status = %r.status(), "session ended");
            }
            Ok(Ok(r)) => debug!(?session, status = %r.status(), "DELETE of the session refused"),
            Ok(Err(e)) => debug!(?session, error = %e, "DELETE of the session failed"),
            Err(_) => debug!(?session, "DELETE of the session got no answer in time"),
        }
    }
}
