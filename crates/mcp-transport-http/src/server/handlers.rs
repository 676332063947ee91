//! The axum handlers of the endpoint: POST, GET, DELETE, and the legacy `/sse` + `/messages`.
//!
//! Checks return the HTTP response to answer with as their error: it is the value the handler
//! returns at once, so boxing it would only add an allocation.
#![allow(clippy::result_large_err)]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::{Bytes, BytesMut};
use hashbrown::HashMap;
use http_body::Frame;
use http_body_util::BodyExt as _;
use mcp_jsonrpc::message::{self, Message, Parsed};
use mcp_jsonrpc::raw::{self as json, PROTOCOL_VERSION_KEY};
use mcp_jsonrpc::{Dispatcher, ErrorObject, Peer, RequestId};
use mcp_types::{ErrorCode, ProtocolVersion};
use tokio::sync::mpsc;

use super::config::HttpServerConfig;
use super::session::{Mode, OpenError, Output, STANDALONE, Session, SessionRouter, StreamOutput};
use super::{RequestInfo, SessionFactory};
use crate::headers::{APPLICATION_JSON, LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, TEXT_EVENT_STREAM};

pub(crate) struct App {
    factory: Arc<dyn SessionFactory>,
    config: HttpServerConfig,
    sessions: Mutex<HashMap<Arc<str>, Arc<Session>>>,
    reaper: AtomicBool,
    /// POSTs whose requests are being handled (at most `max_requests_in_flight`).
    in_flight: Arc<AtomicUsize>,
}

/// A POST's place among the requests in flight (see [`App::admit`]); freed on drop.
pub(crate) struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

pub(crate) fn router(factory: Arc<dyn SessionFactory>, config: HttpServerConfig) -> axum::Router {
    let path = config.path.clone();
    let legacy = config.legacy_sse.clone();
    let app = Arc::new(App {
        factory,
        config,
        sessions: Mutex::new(HashMap::new()),
        reaper: AtomicBool::new(false),
        in_flight: Arc::new(AtomicUsize::new(0)),
    });
    let mut router = axum::Router::new().route(&path, get(get_mcp).post(post_mcp).delete(delete_mcp));
    if let Some((sse, messages)) = legacy {
        router = router.route(&sse, get(legacy_sse)).route(&messages, post(legacy_post));
    }
    router.with_state(app)
}

/// A JSON-RPC error as an HTTP response.
fn error_response(status: StatusCode, id: Option<&RequestId>, error: &ErrorObject) -> Response {
    let body = message::encode_error(id, error);
    (status, [(header::CONTENT_TYPE, APPLICATION_JSON)], body).into_response()
}

/// -32022 (400): the revisions we serve, and the one asked for.
fn unsupported_version(requested: &str, id: Option<&RequestId>) -> Response {
    let error = ErrorObject::unsupported_protocol_version(requested, ProtocolVersion::ALL.into_iter().rev());
    error_response(StatusCode::BAD_REQUEST, id, &error)
}

/// -32020 (400): headers that are missing or disagree with the body.
fn header_mismatch(id: Option<&RequestId>, message: impl std::fmt::Display) -> Response {
    let error = ErrorObject::header_mismatch(message);
    error_response(StatusCode::BAD_REQUEST, id, &error)
}

fn invalid_request(status: StatusCode, message: impl std::fmt::Display) -> Response {
    error_response(status, None, &ErrorObject::invalid_request(message))
}

/// Whether an Accept header admits `media` (`type/subtype`), wildcards included. No header
/// admits everything.
fn accepts(headers: &HeaderMap, media: &str) -> bool {
    accepts_each(headers, [media]) == [true]
}

/// [`accepts`] for several media types, in one pass over the header.
fn accepts_each<const N: usize>(headers: &HeaderMap, media: [&str; N]) -> [bool; N] {
    let types = media.map(|m| m.split_once('/').map_or(m, |(ty, _)| ty));
    let mut admitted = [false; N];
    // Whether a readable Accept header was seen: none admits everything.
    let mut seen = false;
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        seen = true;
        for range in value.split(',') {
            let range = range.split_once(';').map_or(range, |(r, _)| r).trim();
            let wildcard = range.strip_suffix("/*");
            for i in 0..N {
                admitted[i] |= range == "*/*"
                    || range.eq_ignore_ascii_case(media[i])
                    || wildcard.is_some_and(|t| t.eq_ignore_ascii_case(types[i]));
            }
        }
    }
    if seen { admitted } else { [true; N] }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

impl App {
    /// DNS-rebinding protection: Host and Origin against the allow-lists.
    fn check_origin(&self, headers: &HeaderMap) -> Result<(), Response> {
        if let Some(host) = headers.get(header::HOST) {
            let ok = host.to_str().is_ok_and(|h| self.config.hosts.allows_host(h));
            if !ok {
                return Err(invalid_request(StatusCode::FORBIDDEN, "Host header not allowed"));
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let ok = origin.to_str().is_ok_and(|o| self.config.origins.allows_origin(o));
            if !ok {
                return Err(invalid_request(StatusCode::FORBIDDEN, "Origin not allowed"));
            }
        }
        Ok(())
    }

    /// The `MCP-Protocol-Version` header, when present; 400 for a revision we don't speak.
    fn protocol_version(
        &self,
        headers: &HeaderMap,
        id: Option<&RequestId>,
    ) -> Result<Option<ProtocolVersion>, Response> {
        match headers.get(MCP_PROTOCOL_VERSION) {
            None => Ok(None),
            Some(v) => match v.to_str().ok().and_then(|s| s.parse::<ProtocolVersion>().ok()) {
                Some(version) => Ok(Some(version)),
                None => Err(unsupported_version(&String::from_utf8_lossy(v.as_bytes()), id)),
            },
        }
    }

    /// The session a request names: 400 without `Mcp-Session-Id`, 404 for an unknown one.
    fn session(&self, headers: &HeaderMap) -> Result<Arc<Session>, Response> {
        let Some(id) = header_str(headers, MCP_SESSION_ID) else {
            return Err(invalid_request(StatusCode::BAD_REQUEST, "missing Mcp-Session-Id header"));
        };
        self.lookup(id).ok_or_else(|| {
            error_response(
                StatusCode::NOT_FOUND,
                None,
                &ErrorObject::new(mcp_types::ErrorCode::SESSION_NOT_FOUND.code(), "session not found"),
            )
        })
    }

    /// A place for a POST that carries requests, or the 503 that says there is none.
    fn admit(&self, id: Option<&RequestId>) -> Result<InFlight, Response> {
        let limit = self.config.max_requests_in_flight;
        let admitted =
            self.in_flight.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < limit).then_some(n + 1));
        admitted.map(|_| InFlight(self.in_flight.clone())).map_err(|_| {
            let error = ErrorObject::internal_error(format!("the server is busy: {limit} requests are in flight"));
            let mut response = error_response(StatusCode::SERVICE_UNAVAILABLE, id, &error);
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            response
        })
    }

    fn lookup(&self, id: &str) -> Option<Arc<Session>> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let session = sessions.get(id)?.clone();
        if session.peer().is_closed() {
            // Its peer was closed (by a handler, say): the session's streams end with it.
            if let Some(gone) = sessions.remove(id) {
                tokio::spawn(async move { gone.end().await });
            }
            return None;
        }
        session.router.touch();
        Some(session)
    }

    fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).remove(id)
    }

    /// Starts a session; 503 when at the cap even after expiring idle ones.
    async fn create_session(self: &Arc<Self>, mode: Mode) -> Result<Arc<Session>, Response> {
        self.start_reaper();
        if self.sessions.lock().unwrap_or_else(|e| e.into_inner()).len() >= self.config.max_sessions {
            self.reap().await;
        }
        let id: Arc<str> = new_session_id().into();
        let router = SessionRouter::new(
            id.clone(),
            mode,
            self.config.event_store.clone(),
            self.config.stream_queue,
            self.config.retry,
        );
        router.touch();
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if sessions.len() >= self.config.max_sessions {
            return Err(error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                &ErrorObject::internal_error("too many sessions; try again later"),
            ));
        }
        let dispatcher = self.factory.connect(router.clone());
        let session = Arc::new(Session { router, dispatcher });
        sessions.insert(id, session.clone());
        Ok(session)
    }

    /// The router of a session-less exchange (a stateless or 2026-07-28 POST): no id, no event
    /// store.
    fn ephemeral_router(&self) -> Arc<SessionRouter> {
        SessionRouter::new("".into(), Mode::Streamable, None, self.config.stream_queue, self.config.retry)
    }

    /// Ends the sessions idle for longer than the timeout.
    async fn reap(&self) {
        let timeout = self.config.session_idle_timeout;
        let expired: Vec<Arc<Session>> = {
            let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            let ids: Vec<Arc<str>> = sessions
                .iter()
                .filter(|(_, s)| {
                    s.peer().is_closed()
                        || (s.router.idle_for() >= timeout
                            && s.router.connections.load(Ordering::Relaxed) == 0
                            && s.peer().running_requests() == 0)
                })
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for session in expired {
            tracing::debug!(session = %session.router.session_id, "session expired");
            session.end().await;
        }
    }

    fn start_reaper(self: &Arc<Self>) {
        if self.reaper.swap(true, Ordering::Relaxed) {
            return;
        }
        let app = Arc::downgrade(self);
        let period = (self.config.session_idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(60));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(app) = app.upgrade() else { return };
                app.reap().await;
            }
        });
    }

    /// An SSE response: `first` events, then what `live` brings until it ends.
    fn sse(&self, first: Vec<Bytes>, live: Option<mpsc::Receiver<Bytes>>, guard: ConnGuard) -> Response {
        let body = SseBody {
            pending: first.into(),
            live,
            keep_alive: self
                .config
                .keep_alive
                .map(|every| Box::pin(tokio::time::interval_at(tokio::time::Instant::now() + every, every))),
            _guard: guard,
        };
        let mut response = Response::new(Body::new(body));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(TEXT_EVENT_STREAM));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        headers.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
        response
    }
}

/// Tells proxies (nginx) not to buffer an SSE response.
const X_ACCEL_BUFFERING: header::HeaderName = header::HeaderName::from_static("x-accel-buffering");

/// 128 bits from the OS's generator, as 32 hex digits (visible ASCII).
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random number generator failed");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads a body within the size and time limits.
async fn read_body(app: &App, body: Body) -> Result<Bytes, Response> {
    let limited = http_body_util::Limited::new(body, app.config.max_body);
    match tokio::time::timeout(app.config.body_timeout, limited.collect()).await {
        Err(_) => Err(invalid_request(StatusCode::REQUEST_TIMEOUT, "the request body took too long")),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(invalid_request(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the message is larger than the limit of {} bytes", app.config.max_body),
        )),
        Ok(Err(e)) => Err(invalid_request(StatusCode::BAD_REQUEST, format!("cannot read the request body: {e}"))),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

/// What a POST body holds.
struct Classified {
    requests: Vec<RequestId>,
    initialize: bool,
    batch: bool,
    /// The (single) message carries a 2026-07-28 request envelope in `_meta`.
    modern_meta: bool,
    /// The body as parsed (the 2026-07-28 path reads its request from it).
    parsed: Parsed,
}

fn classify(body: &[u8]) -> Result<Classified, Response> {
    let (mut requests, mut initialize, mut modern_meta) = (Vec::new(), false, false);
    let mut take = |m: &Message| {
        if let Message::Request(r) = m {
            initialize |= r.method == "initialize";
            modern_meta |= r.carries_protocol_version();
            requests.push(r.id.clone());
        }
    };
    let parsed = message::parse(body);
    let batch = match &parsed {
        Parsed::Invalid { id, error } => return Err(error_response(StatusCode::BAD_REQUEST, id.as_ref(), error)),
        Parsed::Single(m) => {
            take(m);
            false
        }
        Parsed::Batch(items) => {
            for item in items {
                match item {
                    Ok(m) => take(m),
                    Err(invalid) => {
                        return Err(error_response(StatusCode::BAD_REQUEST, invalid.id.as_ref(), &invalid.error));
                    }
                }
            }
            true
        }
    };
    if initialize && batch {
        return Err(invalid_request(StatusCode::BAD_REQUEST, "initialize must not be part of a batch"));
    }
    let out = Classified { requests, initialize, batch, modern_meta, parsed };
    Ok(out)
}

fn check_post_headers(app: &App, headers: &HeaderMap) -> Result<(), Response> {
    app.check_origin(headers)?;
    let sse_needed = !app.config.json_response;
    let admitted = if sse_needed {
        accepts_each(headers, [APPLICATION_JSON, TEXT_EVENT_STREAM]) == [true; 2]
    } else {
        accepts(headers, APPLICATION_JSON)
    };
    if !admitted {
        return Err(invalid_request(
            StatusCode::NOT_ACCEPTABLE,
            "the client must accept both application/json and text/event-stream",
        ));
    }
    let json = (headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()))
        .and_then(|ct| ct.split(';').next())
        .is_some_and(|ct| ct.trim().eq_ignore_ascii_case(APPLICATION_JSON));
    if !json {
        return Err(invalid_request(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json"));
    }
    Ok(())
}

async fn post_mcp(State(app): State<Arc<App>>, request: Request<Body>) -> Response {
    let (parts, body) = request.into_parts();
    if let Err(r) = check_post_headers(&app, &parts.headers) {
        return r;
    }
    let body = match read_body(&app, body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let what = match classify(&body) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let header_version = match app.protocol_version(&parts.headers, what.requests.first()) {
        Ok(v) => v,
        Err(r) => return r,
    };
    if header_version.is_some_and(ProtocolVersion::is_stateless) || what.modern_meta {
        return post_modern(&app, parts, what.parsed, header_version).await;
    }
    if app.config.stateless {
        return post_stateless(&app, parts, what, header_version).await;
    }
    let session = if what.initialize {
        match app.create_session(Mode::Streamable).await {
            Ok(s) => s,
            Err(r) => return r,
        }
    } else {
        match app.session(&parts.headers) {
            Ok(s) => s,
            Err(r) => return r,
        }
    };
    let version = session.peer().protocol_version();
    if what.batch && !version.allows_batches() {
        return invalid_request(
            StatusCode::BAD_REQUEST,
            format!("batches are not supported in protocol revision {version}"),
        );
    }
    let priming = !what.initialize && version >= ProtocolVersion::V2025_11_25;
    let mut response =
        dispatch(&app, &session.router, &session.dispatcher, parts, what.parsed, what.requests, priming, false).await;
    if what.initialize {
        if let Ok(v) = HeaderValue::from_str(&session.router.session_id) {
            response.headers_mut().insert(MCP_SESSION_ID, v);
        }
        if !response.status().is_success() {
            // The initialize failed before reaching the server: no session.
            if let Some(s) = app.remove(&session.router.session_id) {
                s.end().await;
            }
        }
    }
    response
}

/// Serves one POST outside any session.
async fn post_stateless(
    app: &Arc<App>,
    parts: http::request::Parts,
    what: Classified,
    header_version: Option<ProtocolVersion>,
) -> Response {
    let version = header_version.unwrap_or(ProtocolVersion::V2025_03_26);
    if what.batch && !version.allows_batches() {
        return invalid_request(
            StatusCode::BAD_REQUEST,
            format!("batches are not supported in protocol revision {version}"),
        );
    }
    let router = app.ephemeral_router();
    let dispatcher = if what.initialize {
        app.factory.connect(router.clone())
    } else {
        app.factory.connect_stateless(router.clone(), version)
    };
    dispatch(app, &router, &dispatcher, parts, what.parsed, what.requests, false, true).await
}

/// Hands a POSTed message to the session's peer (in this task) and answers with 202, its JSON
/// response, or its SSE stream.
#[allow(clippy::too_many_arguments)]
async fn dispatch(
    app: &App,
    router: &Arc<SessionRouter>,
    dispatcher: &Dispatcher,
    parts: http::request::Parts,
    parsed: Parsed,
    requests: Vec<RequestId>,
    priming: bool,
    ephemeral: bool,
) -> Response {
    let session_id = (!ephemeral).then(|| router.session_id.clone());
    if dispatcher.peer().is_closed() {
        return invalid_request(StatusCode::NOT_FOUND, "the session has ended");
    }
    if requests.is_empty() {
        let info = RequestInfo { parts, session_id, stream: None, _in_flight: None };
        dispatcher.dispatch(parsed, Some(Arc::new(info))).await;
        return StatusCode::ACCEPTED.into_response();
    }
    let permit = match app.admit(requests.first()) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let output = if app.config.json_response { Output::Json } else { Output::Sse };
    let (stream, output) = match router.open_stream(requests, output).await {
        Ok(opened) => opened,
        Err(OpenError::DuplicateId(id)) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                Some(&id),
                &ErrorObject::invalid_request(format!("request id {id} is already in use in this session")),
            );
        }
        Err(OpenError::Closed) => return invalid_request(StatusCode::NOT_FOUND, "the session has ended"),
    };
    // The priming event comes before anything the handler sends (it may send, or close the
    // stream, while it is polled here): its id is the point the client resumes from.
    let first = match output {
        StreamOutput::Sse(_) if priming && router.resumable() => vec![router.priming_event(stream).await],
        _ => Vec::new(),
    };
    let info =
        RequestInfo { parts, session_id, stream: Some((Arc::downgrade(router), stream)), _in_flight: Some(permit) };
    dispatcher.dispatch(parsed, Some(Arc::new(info))).await;
    match output {
        StreamOutput::Json(rx) => match rx.await {
            Ok(frame) if !frame.is_empty() => {
                ([(header::CONTENT_TYPE, HeaderValue::from_static(APPLICATION_JSON))], frame).into_response()
            }
            // Cancelled: there is no response.
            Ok(_) => StatusCode::ACCEPTED.into_response(),
            // The stream was dropped unanswered: the session ended (DELETE, expiry) meanwhile.
            Err(_) => invalid_request(StatusCode::NOT_FOUND, "the session has ended"),
        },
        StreamOutput::Sse(rx) => app.sse(first, Some(rx), ConnGuard::new(router.clone(), None)),
        StreamOutput::Raw(_) => unreachable!("raw streams are opened by the modern path only"),
    }
}

/// A header's value with the Base64 sentinel form (`=?base64?...?=`) decoded, trimmed.
fn header_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<Result<std::borrow::Cow<'a, str>, ()>> {
    let mut all = headers.get_all(name).iter();
    let raw = all.next()?;
    if all.next().is_some() {
        return Some(Err(()));
    }
    let Ok(text) = raw.to_str() else { return Some(Err(())) };
    let text = text.trim();
    Some(match text.strip_prefix("=?base64?").and_then(|t| t.strip_suffix("?=")) {
        Some(encoded) => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .map(std::borrow::Cow::Owned)
                .ok_or(())
        }
        None => Ok(std::borrow::Cow::Borrowed(text)),
    })
}

/// A 2026-07-28 POST: one request served on its own, its headers checked against its body,
/// answered as JSON when the response comes first and as SSE when notifications precede it.
/// Closing the response cancels the request.
async fn post_modern(
    app: &Arc<App>,
    parts: http::request::Parts,
    parsed: Parsed,
    header_version: Option<ProtocolVersion>,
) -> Response {
    let request = match parsed {
        Parsed::Single(Message::Request(r)) => r,
        Parsed::Single(Message::Notification(_)) => {
            // Nothing to do: 2026-07-28 defines no notifications from the client over HTTP
            // (closing the stream cancels); clients that send `notifications/cancelled` anyway
            // get 202.
            return StatusCode::ACCEPTED.into_response();
        }
        _ => return invalid_request(StatusCode::BAD_REQUEST, "a 2026-07-28 POST carries one request"),
    };
    let id_ref = Some(&request.id);
    let method = request.method.as_str();
    // Only what the headers are checked against is read of the params, through the request's
    // index, which the server and the handler then read too.
    let body_version = request.meta(PROTOCOL_VERSION_KEY).and_then(json::str_text);
    let Some(header_version_text) = header_str(&parts.headers, MCP_PROTOCOL_VERSION) else {
        return header_mismatch(id_ref, "the MCP-Protocol-Version header is missing");
    };
    let Some(body_version) = body_version.as_deref() else {
        let error = ErrorObject::missing_request_metadata(PROTOCOL_VERSION_KEY);
        return error_response(StatusCode::BAD_REQUEST, id_ref, &error);
    };
    match header_version {
        Some(v) if v.is_stateless() => {
            if body_version != v.as_str() {
                return header_mismatch(
                    id_ref,
                    format!("MCP-Protocol-Version {header_version_text} but the body says {body_version}"),
                );
            }
        }
        // A version we don't serve without a handshake (the header parsed, so it is a session
        // revision): the body must say the same, and it is not served this way.
        _ if body_version != header_version_text => {
            return header_mismatch(
                id_ref,
                format!("MCP-Protocol-Version {header_version_text} but the body says {body_version}"),
            );
        }
        _ => return unsupported_version(body_version, id_ref),
    }
    match header_value(&parts.headers, "mcp-method") {
        Some(Ok(m)) if m == method => {}
        Some(Ok(m)) => return header_mismatch(id_ref, format!("Mcp-Method {m:?} but the body's method is {method:?}")),
        Some(Err(())) => return header_mismatch(id_ref, "the Mcp-Method header is malformed"),
        None => return header_mismatch(id_ref, "the Mcp-Method header is missing"),
    }
    let name = request.param("name").and_then(json::str_text);
    let name_field = match method {
        "tools/call" | "prompts/get" => Some(("name", &name)),
        "resources/read" => Some(("uri", &request.param("uri").and_then(json::str_text))),
        _ => None,
    };
    if let Some((field, value)) = name_field {
        let expected = value.as_deref().unwrap_or_default();
        match header_value(&parts.headers, "mcp-name") {
            Some(Ok(n)) if n == expected => {}
            Some(Ok(n)) => {
                return header_mismatch(id_ref, format!("Mcp-Name {n:?} but the body's {field} is {expected:?}"));
            }
            Some(Err(())) => return header_mismatch(id_ref, "the Mcp-Name header is malformed"),
            None => return header_mismatch(id_ref, "the Mcp-Name header is missing"),
        }
    }
    if method == "tools/call"
        && let Some(tool) = name.as_deref()
    {
        let params = app.factory.header_params(tool);
        // The arguments are read only for a tool that mirrors some into headers.
        let arguments = match (params.is_empty(), request.param("arguments")) {
            (false, Some(raw)) => serde_json::from_str(raw).unwrap_or_default(),
            _ => serde_json::Value::Null,
        };
        for param in params {
            let value = param.path.iter().try_fold(&arguments, |v, key| v.get(key)).filter(|v| !v.is_null());
            let numeric = value.is_some_and(serde_json::Value::is_number);
            let expected = match value {
                Some(serde_json::Value::String(s)) => Some(s.clone()),
                Some(serde_json::Value::Bool(b)) => Some(b.to_string()),
                Some(serde_json::Value::Number(n)) => Some(n.to_string()),
                Some(_) | None => None,
            };
            let name = format!("mcp-param-{}", param.header.to_ascii_lowercase());
            let agrees = match (header_value(&parts.headers, &name), &expected) {
                (None, None) => true,
                // Integers compare as numbers (`42.0` and `42` agree).
                (Some(Ok(got)), Some(want)) => {
                    got == *want
                        || (numeric && matches!((got.parse::<f64>(), want.parse::<f64>()), (Ok(a), Ok(b)) if a == b))
                }
                _ => false,
            };
            if !agrees {
                return header_mismatch(
                    id_ref,
                    format!("Mcp-Param-{} does not agree with argument `{}`", param.header, param.path.join(".")),
                );
            }
        }
    }
    let id = request.id.clone();
    let permit = match app.admit(Some(&id)) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let router = app.ephemeral_router();
    let dispatcher = app.factory.connect_stateless(router.clone(), ProtocolVersion::V2026_07_28);
    let (_, output) = match router.open_stream(vec![id.clone()], Output::Raw).await {
        Ok(opened) => opened,
        Err(_) => return invalid_request(StatusCode::INTERNAL_SERVER_ERROR, "cannot serve the request"),
    };
    let StreamOutput::Raw(mut rx) = output else { unreachable!("asked for a raw stream") };
    let info = RequestInfo { parts, session_id: None, stream: None, _in_flight: Some(permit) };
    // Until the response is out, the client going away cancels the request.
    let mut cancel = CancelOnDrop { peer: Some(dispatcher.peer().clone()), id: id.clone() };
    dispatcher.dispatch(Parsed::Single(Message::Request(request)), Some(Arc::new(info))).await;
    drop(dispatcher);
    match rx.recv().await {
        None => StatusCode::ACCEPTED.into_response(),
        Some((frame, true)) => {
            cancel.peer = None;
            let status = modern_status(&frame);
            (status, [(header::CONTENT_TYPE, HeaderValue::from_static(APPLICATION_JSON))], frame).into_response()
        }
        Some((first, false)) => {
            let (tx, events) = mpsc::channel(app.config.stream_queue.max(1));
            let _ = tx.try_send(super::session::sse_event(None, &first));
            let cancel_later = CancelOnDrop { peer: cancel.peer.take(), id: cancel.id.clone() };
            tokio::spawn(forward_modern(rx, tx, cancel_later));
            app.sse(Vec::new(), Some(events), ConnGuard::new(router.clone(), None))
        }
    }
}

/// Streams the rest of a modern request's frames as SSE events; if the client goes away
/// first, the request is cancelled.
async fn forward_modern(mut rx: mpsc::Receiver<(Bytes, bool)>, tx: mpsc::Sender<Bytes>, mut cancel: CancelOnDrop) {
    loop {
        tokio::select! {
            item = rx.recv() => match item {
                Some((frame, last)) => {
                    if tx.send(super::session::sse_event(None, &frame)).await.is_err() {
                        return;
                    }
                    if last {
                        cancel.peer = None;
                        return;
                    }
                }
                None => {
                    cancel.peer = None;
                    return;
                }
            },
            _ = tx.closed() => return,
        }
    }
}

/// The HTTP status of a modern response frame: 404 for an unknown method, 400 for the
/// revision's request errors, 200 otherwise.
fn modern_status(frame: &[u8]) -> StatusCode {
    // An error response names its `error` member; most frames are results, read no further.
    if memchr::memmem::find(frame, br#""error""#).is_none() {
        return StatusCode::OK;
    }
    #[derive(serde::Deserialize)]
    struct Frame {
        error: Option<ErrorObject>,
    }
    let Ok(Frame { error: Some(error) }) = serde_json::from_slice::<Frame>(frame) else {
        return StatusCode::OK;
    };
    let envelope = error.data.as_ref().is_some_and(|d| d.get("envelope").is_some());
    match error.error_code() {
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        ErrorCode::INVALID_PARAMS if envelope => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// Cancels a modern request when dropped armed: the client closed the response stream.
struct CancelOnDrop {
    peer: Option<Peer>,
    id: RequestId,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(peer) = self.peer.take() {
            tracing::debug!(id = %self.id, "the client closed the response stream: request cancelled");
            peer.cancel_incoming(&self.id);
        }
    }
}

async fn get_mcp(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Err(r) = app.check_origin(&headers) {
        return r;
    }
    if app.config.stateless || !app.config.get_stream {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, if app.config.stateless { "POST" } else { "POST, DELETE" })],
        )
            .into_response();
    }
    if !accepts(&headers, TEXT_EVENT_STREAM) {
        return invalid_request(StatusCode::NOT_ACCEPTABLE, "the client must accept text/event-stream");
    }
    if let Err(r) = app.protocol_version(&headers, None) {
        return r;
    }
    let session = match app.session(&headers) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let router = &session.router;
    if let Some(last) = header_str(&headers, LAST_EVENT_ID) {
        return match router.resume(last).await {
            Some(resumed) => app.sse(resumed.replay, resumed.live, ConnGuard::new(router.clone(), None)),
            None => invalid_request(StatusCode::BAD_REQUEST, format!("unknown Last-Event-ID {last:?}")),
        };
    }
    match router.open_standalone().await {
        Some(rx) => {
            let priming = router.resumable() && session.peer().protocol_version() >= ProtocolVersion::V2025_11_25;
            let first = if priming { vec![router.priming_event(STANDALONE).await] } else { Vec::new() };
            app.sse(first, Some(rx), ConnGuard::new(router.clone(), None))
        }
        None => invalid_request(StatusCode::CONFLICT, "an SSE stream is already open for this session"),
    }
}

async fn delete_mcp(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Err(r) = app.check_origin(&headers) {
        return r;
    }
    if app.config.stateless {
        return (StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "POST")]).into_response();
    }
    let session = match app.session(&headers) {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Some(s) = app.remove(&session.router.session_id) {
        s.end().await;
    }
    StatusCode::OK.into_response()
}

/// Legacy HTTP+SSE: the stream, opened with the `endpoint` event that names where to POST.
async fn legacy_sse(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Err(r) = app.check_origin(&headers) {
        return r;
    }
    if !accepts(&headers, TEXT_EVENT_STREAM) {
        return invalid_request(StatusCode::NOT_ACCEPTABLE, "the client must accept text/event-stream");
    }
    let Some((_, messages)) = &app.config.legacy_sse else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let session = match app.create_session(Mode::Legacy).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let Some(rx) = session.router.open_standalone().await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let endpoint = format!("event: endpoint\ndata: {messages}?sessionId={}\n\n", session.router.session_id);
    // The legacy session lives as long as its stream.
    let id = session.router.session_id.clone();
    let weak = Arc::downgrade(&app);
    let on_drop: Box<dyn FnOnce() + Send> = Box::new(move || {
        if let Some(app) = weak.upgrade()
            && let Some(session) = app.remove(&id)
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            handle.spawn(async move { session.end().await });
        }
    });
    app.sse(vec![Bytes::from(endpoint)], Some(rx), ConnGuard::new(session.router.clone(), Some(on_drop)))
}

#[derive(serde::Deserialize)]
struct LegacyQuery {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
}

/// Legacy HTTP+SSE: a message for the session named in the query; answers go on its stream.
async fn legacy_post(State(app): State<Arc<App>>, Query(q): Query<LegacyQuery>, request: Request<Body>) -> Response {
    let (parts, body) = request.into_parts();
    if let Err(r) = app.check_origin(&parts.headers) {
        return r;
    }
    let Some(id) = q.session_id else {
        return invalid_request(StatusCode::BAD_REQUEST, "missing sessionId");
    };
    let Some(session) = app.lookup(&id) else {
        return invalid_request(StatusCode::NOT_FOUND, "session not found");
    };
    let body = match read_body(&app, body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let info =
        RequestInfo { parts, session_id: Some(session.router.session_id.clone()), stream: None, _in_flight: None };
    if session.peer().is_closed() {
        return invalid_request(StatusCode::NOT_FOUND, "the session has ended");
    }
    session.dispatcher.dispatch(message::parse(&body), Some(Arc::new(info))).await;
    (StatusCode::ACCEPTED, "Accepted").into_response()
}

/// Counts an open SSE connection of a session while it lasts.
struct ConnGuard {
    router: Arc<SessionRouter>,
    on_drop: Option<Box<dyn FnOnce() + Send>>,
}

impl ConnGuard {
    fn new(router: Arc<SessionRouter>, on_drop: Option<Box<dyn FnOnce() + Send>>) -> Self {
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
struct SseBody {
    pending: VecDeque<Bytes>,
    live: Option<mpsc::Receiver<Bytes>>,
    keep_alive: Option<Pin<Box<tokio::time::Interval>>>,
    _guard: ConnGuard,
}

/// Events gathered into one write at most.
const COALESCE: usize = 64;

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
            Poll::Ready(Some(first)) => {
                let mut more = Vec::new();
                while more.len() < COALESCE {
                    match rx.try_recv() {
                        Ok(next) => more.push(next),
                        Err(_) => break,
                    }
                }
                if more.is_empty() {
                    return Poll::Ready(Some(Ok(Frame::data(first))));
                }
                let mut buf = BytesMut::with_capacity(first.len() + more.iter().map(Bytes::len).sum::<usize>());
                buf.extend_from_slice(&first);
                for b in more {
                    buf.extend_from_slice(&b);
                }
                Poll::Ready(Some(Ok(Frame::data(buf.freeze()))))
            }
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
