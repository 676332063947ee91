//! One client's session: the lifecycle (initialize, initialized), what the client declared,
//! its log level and subscriptions, and the entry of its requests (handed to
//! [`dispatch`](crate::dispatch) once the revision they are served in is known).

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use mcp_jsonrpc::message::{self, decode_params};
use mcp_jsonrpc::{BoxFuture, ErrorObject, Peer, Reply, RequestContext, Service};
use mcp_types::{
    CallToolRequest, ClientCapabilities, ContentBlock, DiscoverRequest, ForRevision, GetPromptRequest, Implementation,
    InitializeRequest, InitializeRequestParams, InitializeResult, InitializedNotification, LoggingLevel, Notification,
    ProtocolVersion, ReadResourceRequest, Request, RootsListChangedNotification, SubscriptionsListenRequest,
    WireSerialize,
};

use crate::context::severity;
use crate::dispatch::{Call, MAX_SUBSCRIPTION_BYTES, MAX_SUBSCRIPTIONS, dispatch};
use crate::server::ServerShared;
use crate::stateless;

/// What the server knows about one connected client (for a request of the stateless revision:
/// what that request declared).
pub(crate) struct SessionState {
    pub(crate) peer: OnceLock<Peer>,
    /// Unique in this process (numbered from 1 in every process): with a random tag of the
    /// process, the owner of the tasks of a connection outside HTTP (see `tasks_dispatch`).
    pub(crate) id: u64,
    inner: Mutex<SessionInner>,
}

/// A new session's [`SessionState::id`].
fn next_session_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[derive(Default)]
struct SessionInner {
    initialized: bool,
    capabilities: ClientCapabilities,
    client_info: Option<Implementation>,
    /// The `clientInfo` of a request of the stateless revision, as JSON: decoded only if a
    /// handler asks for it.
    client_info_json: Option<Box<str>>,
    log_level: Option<LoggingLevel>,
    /// Requests of the stateless revision get log messages only when they ask (`_meta`
    /// logLevel).
    quiet_by_default: bool,
    subscriptions: HashSet<String>,
}

impl SessionState {
    pub(crate) fn new() -> Self {
        SessionState { peer: OnceLock::new(), id: next_session_id(), inner: Mutex::new(SessionInner::default()) }
    }
    /// A session that skips the handshake: served as initialized, the client's capabilities
    /// unknown (so nothing is asked of it).
    pub(crate) fn preinitialized() -> Self {
        let inner = SessionInner { initialized: true, ..SessionInner::default() };
        SessionState { peer: OnceLock::new(), id: next_session_id(), inner: Mutex::new(inner) }
    }
    fn inner(&self) -> std::sync::MutexGuard<'_, SessionInner> {
        self.inner.lock_unpoisoned()
    }
    pub(crate) fn is_initialized(&self) -> bool {
        self.inner().initialized
    }
    pub(crate) fn client_capabilities(&self) -> ClientCapabilities {
        self.inner().capabilities.clone()
    }
    pub(crate) fn client_info(&self) -> Option<Implementation> {
        let mut inner = self.inner();
        if let Some(json) = inner.client_info_json.take() {
            inner.client_info = stateless::decode_raw(&json).ok();
        }
        inner.client_info.clone()
    }
    pub(crate) fn log_enabled(&self, level: &LoggingLevel) -> bool {
        let inner = self.inner();
        match &inner.log_level {
            Some(min) => severity(level) >= severity(min),
            None => !inner.quiet_by_default,
        }
    }
    /// The state of one request of the stateless revision: what its `_meta` declared.
    pub(crate) fn stateless(envelope: stateless::Envelope<'_>) -> Self {
        let inner = SessionInner {
            initialized: true,
            capabilities: envelope.capabilities,
            client_info: None,
            client_info_json: envelope.client_info.map(Box::from),
            log_level: envelope.log_level,
            quiet_by_default: true,
            subscriptions: HashSet::new(),
        };
        SessionState { peer: OnceLock::new(), id: next_session_id(), inner: Mutex::new(inner) }
    }
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.inner().subscriptions.contains(uri)
    }
    /// Subscribes to `uri`: what a client may make the session hold is bounded.
    pub(crate) fn subscribe(&self, uri: String) -> Result<(), ErrorObject> {
        let mut inner = self.inner();
        let subscriptions = &mut inner.subscriptions;
        if !subscriptions.contains(&uri) {
            let bytes: usize = subscriptions.iter().map(String::len).sum::<usize>() + uri.len();
            if subscriptions.len() >= MAX_SUBSCRIPTIONS || bytes > MAX_SUBSCRIPTION_BYTES {
                return Err(ErrorObject::invalid_params(format!(
                    "too many subscriptions: a session holds at most {MAX_SUBSCRIPTIONS} URIs of \
                     {MAX_SUBSCRIPTION_BYTES} bytes in all; unsubscribe first"
                )));
            }
            subscriptions.insert(uri);
        }
        Ok(())
    }
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.inner().subscriptions.remove(uri);
    }
    /// The least severe level of log messages the client wants (`logging/setLevel`).
    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        self.inner().log_level = Some(level);
    }

    #[cfg(feature = "http")]
    /// What another instance of a fleet needs to serve this session (see
    /// `mcp_transport_http::server::shared`): the revision, what the client declared, its log
    /// level and subscriptions, as JSON.
    pub(crate) fn record(&self, version: ProtocolVersion) -> Vec<u8> {
        let inner = self.inner();
        let record = SessionRecord {
            version: version.as_str().to_owned(),
            capabilities: inner.capabilities.clone(),
            client_info: inner.client_info.clone(),
            log_level: inner.log_level.clone(),
            subscriptions: inner.subscriptions.iter().cloned().collect(),
        };
        serde_json::to_vec(&record).unwrap_or_default()
    }

    #[cfg(feature = "http")]
    /// A session rebuilt from its [`record`](Self::record), and its revision.
    pub(crate) fn from_record(record: &[u8]) -> Option<(Self, ProtocolVersion)> {
        let state = SessionState::new();
        let version = state.apply_record(record)?;
        state.inner().initialized = true;
        Some((state, version))
    }

    #[cfg(feature = "http")]
    /// Takes what a [`record`](Self::record) says; its revision, or `None` if unreadable.
    pub(crate) fn apply_record(&self, record: &[u8]) -> Option<ProtocolVersion> {
        let record: SessionRecord = serde_json::from_slice(record).ok()?;
        let version = ProtocolVersion::from_wire(&record.version)?;
        let mut inner = self.inner();
        inner.capabilities = record.capabilities;
        inner.client_info = record.client_info;
        inner.log_level = record.log_level;
        inner.subscriptions = record.subscriptions.into_iter().collect();
        Some(version)
    }
}

/// A session as a fleet's store keeps it.
#[cfg(feature = "http")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionRecord {
    version: String,
    capabilities: ClientCapabilities,
    client_info: Option<Implementation>,
    log_level: Option<LoggingLevel>,
    subscriptions: Vec<String>,
}

/// The `Service` of one connection.
pub(crate) struct Session {
    pub(crate) server: Arc<ServerShared>,
    pub(crate) state: Arc<SessionState>,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.server.session_ended();
    }
}

impl Service for Session {
    fn request(&self, request: message::Request, ctx: RequestContext) -> BoxFuture<Reply> {
        // `Span::none()` unless a subscriber wants it: then nothing of the request is read.
        let span = crate::trace::request_span(&request, &ctx);
        Box::pin(crate::trace::Traced::new(handle(self.server.clone(), self.state.clone(), request, ctx), span))
    }

    fn notification(&self, notification: message::Notification, peer: &Peer) {
        match notification.method.as_str() {
            InitializedNotification::METHOD => tracing::debug!("client initialized"),
            RootsListChangedNotification::METHOD => match &self.server.on_roots_changed {
                Some(f) => f(peer.clone()),
                None => tracing::debug!("client roots changed"),
            },
            other => {
                if !self.server.custom.notify(other, notification.params.as_deref(), peer) {
                    tracing::debug!(method = other, "unhandled notification");
                }
            }
        }
    }
}

/// How one request is answered: in which revision, and for a request of the stateless
/// revision (2026-07-28) with which result decoration and input-required round trips.
pub(crate) struct Era {
    pub(crate) version: ProtocolVersion,
    pub(crate) decoration: Option<stateless::Decoration>,
    /// The answers the request carries and the input it asks for (the methods that may answer
    /// with an input-required result).
    pub(crate) input_rounds: Option<Arc<stateless::InputRounds>>,
}

impl Era {
    /// A request of a session revision (after the handshake): no decoration, no round trips.
    fn session(version: ProtocolVersion) -> Self {
        Era { version, decoration: None, input_rounds: None }
    }
    /// Whether the request is of the stateless revision (its results are decorated).
    pub(crate) fn is_stateless(&self) -> bool {
        self.decoration.is_some()
    }
}

/// Encodes a result for the request's revision (decorated for the stateless revision).
pub(crate) fn respond<T: WireSerialize>(ctx: &RequestContext, result: &T, era: &Era) -> Reply {
    match &era.decoration {
        Some(decoration) => stateless::respond_stateless(ctx, result, era.version, decoration),
        None => ctx.encode_result(&ForRevision::new(result, era.version)),
    }
}

/// Content blocks a revision lacks, rewritten to ones it has (a link becomes text naming the
/// resource, audio before 2025-03-26 becomes a note), so that an older client can read the
/// result.
pub(crate) fn downgrade_content(content: &mut [ContentBlock], version: ProtocolVersion) {
    for block in content.iter_mut() {
        let replacement = match block {
            ContentBlock::ResourceLink(link) if version < ProtocolVersion::V2025_06_18 => {
                Some(format!("resource: {} ({})", link.name, link.uri))
            }
            ContentBlock::Audio(audio) if version < ProtocolVersion::V2025_03_26 => Some(format!(
                "[audio content of type {} omitted: this client's protocol revision has no audio]",
                audio.mime_type
            )),
            _ => None,
        };
        if let Some(text) = replacement {
            *block = ContentBlock::text(text);
        }
    }
}

/// A tool's result as a client of `version` can read it: its content downgraded (see
/// [`downgrade_content`]) and, for revisions before 2026-07-28 (whose schemas demand an object),
/// structured content that is not an object, or that answers to an output schema that is not
/// an object schema (`wraps_output`), wrapped as `{"result": ...}`, as the tool's listed schema is (see
/// [`legacy_output_schema`](crate::tool::legacy_output_schema)).
#[inline]
pub(crate) fn downgrade_tool_result(
    result: &mut mcp_types::CallToolResult,
    wraps_output: bool,
    version: ProtocolVersion,
) {
    downgrade_content(&mut result.content, version);
    if version < ProtocolVersion::V2026_07_28
        && let Some(structured) = &mut result.structured_content
        && (wraps_output || !structured.is_object())
    {
        let value = std::mem::take(structured);
        *structured = serde_json::Value::Object(std::iter::once(("result".to_owned(), value)).collect());
    }
}

/// One request of the connection: of the stateless revision if its params carry the envelope,
/// else of the connection's session (`initialize` first).
#[expect(clippy::manual_async_fn, reason = "an async fn's future holds its arguments twice")]
fn handle(
    server: Arc<ServerShared>,
    state: Arc<SessionState>,
    req: message::Request,
    rctx: RequestContext,
) -> impl Future<Output = Reply> + Send + 'static {
    async move {
        let (server, state) = (&*server, &state);
        // A request without the version key in its params is not read any further here.
        if stateless::may_have_envelope(&req) {
            // Boxed, in a statement of its own, the envelope's scope ended: a temporary or a
            // binding still in scope at the await would keep its room in this future (which
            // every request's is) across it.
            let stateless = stateless::envelope(&req)?.map(|e| Box::pin(handle_stateless(server, &req, &rctx, e)));
            if let Some(stateless) = stateless {
                return stateless.await;
            }
        }
        let method = req.method.as_str();
        if method == InitializeRequest::METHOD {
            let reply = initialize(server, state, &req, &rctx)?;
            // In a fleet, any instance may serve the next request: the session is saved first.
            save_shared(state, &rctx).await?;
            return Ok(reply);
        }
        if !state.is_initialized() {
            return Err(ErrorObject::invalid_request(format!(
                "`{method}` before `initialize`: the session is not initialized"
            )));
        }
        let era = Era::session(rctx.peer().protocol_version());
        dispatch(Call { server, state, req: &req, rctx: &rctx, era: &era }).await
    }
}

/// A request of the stateless revision (2026-07-28): served on its own, whatever the
/// connection's session, with what its `_meta` declares. A method the revision removed is
/// -32601 ([`dispatch`] checks each marker's revisions).
#[expect(clippy::manual_async_fn, reason = "an async fn's future holds its arguments twice")]
fn handle_stateless<'a>(
    server: &'a ServerShared,
    req: &'a message::Request,
    rctx: &'a RequestContext,
    envelope: stateless::Envelope<'a>,
) -> impl Future<Output = Reply> + Send + 'a {
    async move {
        let method = req.method.as_str();
        if method == DiscoverRequest::METHOD {
            return stateless::discover(server, rctx, envelope.version);
        }
        if method == SubscriptionsListenRequest::METHOD {
            // Boxed: a long-lived stream, whose state the other requests need not carry.
            let tasks_declared = crate::tasks_ext::declared(&envelope.capabilities);
            let listen = Box::pin(crate::subscriptions::listen(server, req.params.as_deref(), rctx, tasks_declared));
            // Not kept across the await (the client's capabilities are large).
            drop(envelope);
            return listen.await;
        }
        if crate::tasks_ext::is_task_method(method)
            && let Some(tasks) = &server.tasks
        {
            // The tasks extension (boxed: a rare path); the envelope not kept across the await.
            let declared = crate::tasks_ext::declared(&envelope.capabilities);
            drop(envelope);
            return Box::pin(crate::tasks_ext::serve(server, tasks, req, rctx, declared)).await;
        }
        // The methods that may answer with an input-required result.
        let input_rounds = match method {
            CallToolRequest::METHOD | GetPromptRequest::METHOD | ReadResourceRequest::METHOD => {
                Some(Arc::new(stateless::InputRounds::from_request(server, req, envelope.capabilities.clone())?))
            }
            _ => None,
        };
        let decoration = stateless::Decoration::new(server, server.cache_hints.for_method(method).cloned());
        let version = envelope.version;
        let state = Arc::new(SessionState::stateless(envelope));
        let era = Era { version, decoration: Some(decoration), input_rounds: input_rounds.clone() };
        let reply = dispatch(Call { server, state: &state, req, rctx, era: &era }).await;
        match input_rounds.and_then(|rounds| rounds.outcome(server, rctx, req)) {
            Some(outcome) => outcome,
            None => reply,
        }
    }
}

/// Saves the session for the other instances of a fleet, when it is shared (HTTP with
/// `HttpServerConfig::shared_sessions`); boxed, and only then.
pub(crate) async fn save_shared(state: &SessionState, rctx: &RequestContext) -> Result<(), ErrorObject> {
    #[cfg(feature = "http")]
    if let Some(info) = rctx.attachment().and_then(|a| a.downcast_ref::<mcp_transport_http::server::RequestInfo>())
        && info.shares_session()
    {
        let record = state.record(rctx.peer().protocol_version());
        return Box::pin(info.save_session(&record)).await.map_err(|e| {
            tracing::warn!("fleet: the session could not be saved: {e}");
            ErrorObject::internal_error("the shared session store is unavailable; try again later")
        });
    }
    let _ = (state, rctx);
    Ok(())
}

/// `initialize`: the handshake of the session revisions.
fn initialize(
    server: &ServerShared,
    state: &Arc<SessionState>,
    req: &message::Request,
    rctx: &RequestContext,
) -> Reply {
    let p: InitializeRequestParams = decode_params(req.params.as_deref())?;
    // The client's revision if we speak it (and it has the handshake), else our newest.
    let version = ProtocolVersion::from_wire(&p.protocol_version)
        .filter(|v| !v.is_stateless())
        .unwrap_or(ProtocolVersion::LATEST_SESSION);
    {
        let mut inner = state.inner();
        inner.capabilities = p.capabilities;
        inner.client_info = Some(p.client_info);
        inner.initialized = true;
    }
    rctx.peer().set_protocol_version(version);
    let mut result = InitializeResult::new(server.capabilities.clone(), version.as_str(), server.info.clone());
    result.instructions = server.instructions.clone();
    respond(rctx, &result, &Era::session(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size of the future a function returns, for arguments of these types.
    fn future_size<F, A, B, C, D, Fut>(_: F) -> usize
    where
        F: Fn(A, B, C, D) -> Fut,
    {
        std::mem::size_of::<Fut>()
    }

    /// Every request's future is as large as its largest branch: the stateless revision's
    /// branch is boxed (the envelope not kept across its await), no argument is held twice, and
    /// no method's future keeps its params (in an unoptimized build: 576 bytes for a request,
    /// 936 more for a request of the stateless revision, in November 2026).
    #[test]
    fn a_requests_future_stays_small() {
        let request =
            future_size::<_, Arc<ServerShared>, Arc<SessionState>, message::Request, RequestContext, _>(handle);
        assert!(request <= 768, "a request's future is {request} bytes");
        let stateless = future_size::<
            _,
            &'static ServerShared,
            &'static message::Request,
            &'static RequestContext,
            stateless::Envelope<'static>,
            _,
        >(handle_stateless);
        assert!(stateless <= 1280, "a stateless request's future is {stateless} bytes");
    }
}
