//! One client's session: the lifecycle (initialize, initialized), what the client declared,
//! its log level and subscriptions, and the dispatch of its requests.

use std::collections::{BTreeMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, OnceLock};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::FutureExt as _;
use mcp_jsonrpc::message::{self, decode_params};
use mcp_jsonrpc::{BoxFuture, ErrorObject, Peer, Reply, RequestContext, Service};
use mcp_types::{
    CallToolResult, ClientCapabilities, CompleteRequestParams, CompleteResult, CompletionReference, ContentBlock,
    ErrorCode, ForRevision, GetPromptRequestParams, Implementation, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResult, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams, WireSerialize,
};

use crate::completion::{Completion, CompletionRequest};
use crate::context::{Context, severity};
use crate::modern;
use crate::server::ServerShared;
use crate::tool::ToolError;

/// What the server knows about one connected client.
pub(crate) struct SessionState {
    pub(crate) peer: OnceLock<Peer>,
    inner: Mutex<SessionInner>,
}

#[derive(Default)]
struct SessionInner {
    initialized: bool,
    capabilities: ClientCapabilities,
    client_info: Option<Implementation>,
    /// A modern request's `clientInfo`, as JSON: decoded only if a handler asks for it.
    client_info_json: Option<Box<str>>,
    log_level: Option<LoggingLevel>,
    /// Modern requests get log messages only when they ask (`_meta` logLevel).
    quiet_by_default: bool,
    subscriptions: HashSet<String>,
}

impl SessionState {
    pub(crate) fn new() -> Self {
        SessionState { peer: OnceLock::new(), inner: Mutex::new(SessionInner::default()) }
    }
    /// A session that skips the handshake: served as initialized, the client's capabilities
    /// unknown (so nothing is asked of it).
    pub(crate) fn preinitialized() -> Self {
        let inner = SessionInner { initialized: true, ..SessionInner::default() };
        SessionState { peer: OnceLock::new(), inner: Mutex::new(inner) }
    }
    fn inner(&self) -> std::sync::MutexGuard<'_, SessionInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
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
            inner.client_info = modern::decode_raw(&json).ok();
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
    /// The state of one modern request: what its `_meta` declared.
    pub(crate) fn modern(envelope: modern::Envelope<'_>) -> Self {
        let inner = SessionInner {
            initialized: true,
            capabilities: envelope.capabilities,
            client_info: None,
            client_info_json: envelope.client_info.map(Box::from),
            log_level: envelope.log_level,
            quiet_by_default: true,
            subscriptions: HashSet::new(),
        };
        SessionState { peer: OnceLock::new(), inner: Mutex::new(inner) }
    }
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.inner().subscriptions.contains(uri)
    }
}

/// The `Service` of one connection.
pub(crate) struct Session {
    pub(crate) server: Arc<ServerShared>,
    pub(crate) state: Arc<SessionState>,
}

impl Service for Session {
    fn request(&self, request: message::Request, ctx: RequestContext) -> BoxFuture<Reply> {
        let server = self.server.clone();
        let state = self.state.clone();
        Box::pin(async move { handle(&server, &state, request, ctx).await })
    }

    fn notification(&self, notification: message::Notification, peer: &Peer) {
        match notification.method.as_str() {
            "notifications/initialized" => tracing::debug!("client initialized"),
            "notifications/roots/list_changed" => match &self.server.on_roots_changed {
                Some(f) => f(peer.clone()),
                None => tracing::debug!("client roots changed"),
            },
            other => tracing::debug!(method = other, "unhandled notification"),
        }
    }
}

/// How one request is answered: in which revision, and for modern (2026-07-28) requests with
/// which decoration and input state.
pub(crate) struct Era {
    pub(crate) version: ProtocolVersion,
    pub(crate) decoration: Option<modern::Decoration>,
    pub(crate) mrtr: Option<Arc<modern::Mrtr>>,
}

impl Era {
    fn legacy(version: ProtocolVersion) -> Self {
        Era { version, decoration: None, mrtr: None }
    }
}

fn respond<T: WireSerialize>(ctx: &RequestContext, result: &T, era: &Era) -> Reply {
    match &era.decoration {
        Some(decoration) => modern::respond_modern(ctx, result, era.version, decoration),
        None => ctx.encode_result(&ForRevision::new(result, era.version)),
    }
}

/// The most resources one session may subscribe to at once.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 4096;
/// The most bytes of URIs one session's subscriptions may hold.
pub(crate) const MAX_SUBSCRIPTION_BYTES: usize = 1 << 20;

/// Opaque, stable cursors: the offset of the next page, base64url-encoded.
fn page<T: Clone>(items: &[T], cursor: Option<&str>, size: usize) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(c) => URL_SAFE_NO_PAD
            .decode(c)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| s.strip_prefix("o:").and_then(|n| n.parse::<usize>().ok()))
            .filter(|n| *n <= items.len())
            .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor `{c}`")))?,
    };
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| URL_SAFE_NO_PAD.encode(format!("o:{end}")));
    Ok((items[start..end].to_vec(), next))
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

async fn handle(
    server: &ServerShared,
    state: &Arc<SessionState>,
    req: message::Request,
    rctx: RequestContext,
) -> Reply {
    // A request without the version key in its params is not read any further here.
    if let Some(envelope) = modern::envelope(&req)? {
        // Boxed, in a statement of its own: a temporary of the awaited expression would keep
        // its room in this future (which every request's is) across the await.
        let modern = Box::pin(handle_modern(server, &req, &rctx, envelope));
        return modern.await;
    }
    let method = req.method.as_str();
    if method == "initialize" {
        return initialize(server, state, &req, &rctx);
    }
    if !state.is_initialized() {
        return Err(ErrorObject::invalid_request(format!(
            "`{method}` before `initialize`: the session is not initialized"
        )));
    }
    let era = Era::legacy(rctx.peer().protocol_version());
    dispatch(server, state, &req, &rctx, &era).await
}

/// The members of `tools/call` params that a call needs (`CallToolRequestParams` has more):
/// `_meta` is read for its progress token only, and the rest of it (in 2026-07-28 the client's
/// info and capabilities) is skipped rather than built into JSON values.
#[derive(serde::Deserialize)]
struct ToolCallParams<'a> {
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
    #[serde(default)]
    arguments: Option<mcp_types::JsonObject>,
    #[serde(rename = "_meta", default)]
    meta: Option<CallMeta>,
}

#[derive(serde::Deserialize)]
struct CallMeta {
    #[serde(rename = "progressToken", default)]
    progress_token: Option<mcp_types::ProgressToken>,
}

/// What a `tools/call` needs of its params (the name borrowed from them where it has no
/// escapes).
struct ToolCall<'a> {
    name: std::borrow::Cow<'a, str>,
    arguments: Option<mcp_types::JsonObject>,
    progress: Option<mcp_types::ProgressToken>,
}

impl<'a> ToolCall<'a> {
    fn read(req: &'a message::Request, era: &Era) -> Result<ToolCall<'a>, ErrorObject> {
        // A modern request's params were indexed for its envelope: its members are read from
        // there, and its `_meta` is not scanned again. Other requests are decoded in one pass
        // (cheaper than indexing them).
        if era.decoration.is_some()
            && let Some(params) = req.params_object()
        {
            fn member<T: serde::de::DeserializeOwned>(text: Option<&str>) -> Result<Option<T>, ErrorObject> {
                text.map(serde_json::from_str::<Option<T>>)
                    .transpose()
                    .map(Option::flatten)
                    .map_err(ErrorObject::invalid_params)
            }
            let name = params.get("name").ok_or_else(|| ErrorObject::invalid_params("missing field `name`"))?;
            let name = match mcp_jsonrpc::raw::str_text(name) {
                Some(name) => name,
                // Not a string: serde_json's own words for it.
                None => serde_json::from_str::<String>(name).map(Into::into).map_err(ErrorObject::invalid_params)?,
            };
            return Ok(ToolCall {
                name,
                arguments: member(params.get("arguments"))?,
                progress: member(req.meta_object().and_then(|m| m.get(mcp_types::meta::PROGRESS_TOKEN)))?,
            });
        }
        let text = req.params.as_deref().map_or("{}", serde_json::value::RawValue::get);
        let ToolCallParams { name, arguments, meta } =
            serde_json::from_str(text).map_err(ErrorObject::invalid_params)?;
        Ok(ToolCall { name, arguments, progress: meta.and_then(|m| m.progress_token) })
    }
}

/// A 2026-07-28 request: served on its own, whatever the connection's session, with what its
/// `_meta` declares.
async fn handle_modern(
    server: &ServerShared,
    req: &message::Request,
    rctx: &RequestContext,
    envelope: modern::Envelope<'_>,
) -> Reply {
    let method = req.method.as_str();
    if modern::removed(method) {
        return Err(ErrorObject::method_not_found(method));
    }
    if method == "server/discover" {
        return modern::discover(server, rctx, envelope.version);
    }
    if method == "subscriptions/listen" {
        // Boxed: a long-lived stream, whose state the other requests need not carry.
        let listen = Box::pin(crate::subscriptions::listen(server, req.params.as_deref(), rctx));
        // Not kept across the await (the client's capabilities are large).
        drop(envelope);
        return listen.await;
    }
    let mrtr = match method {
        "tools/call" | "prompts/get" | "resources/read" => {
            Some(Arc::new(modern::Mrtr::from_request(server, req, envelope.capabilities.clone())?))
        }
        _ => None,
    };
    let decoration = modern::Decoration::new(server, server.cache_hints.for_method(method).cloned());
    let version = envelope.version;
    let state = Arc::new(SessionState::modern(envelope));
    let era = Era { version, decoration: Some(decoration), mrtr: mrtr.clone() };
    let reply = dispatch(server, &state, req, rctx, &era).await;
    match mrtr.and_then(|m| m.outcome(server, rctx, req)) {
        Some(outcome) => outcome,
        None => reply,
    }
}

/// Serves a request of an initialized session or a modern request, in `era`.
async fn dispatch(
    server: &ServerShared,
    state: &Arc<SessionState>,
    req: &message::Request,
    rctx: &RequestContext,
    era: &Era,
) -> Reply {
    let method = req.method.as_str();
    let version = era.version;
    let registry = server.registry();
    let ctx = |progress| Context {
        version,
        mrtr: era.mrtr.clone(),
        peer: rctx.peer().clone(),
        session: state.clone(),
        request_id: rctx.id().clone(),
        cancel: rctx.cancellation().clone(),
        progress_token: progress,
        state: server.state.clone(),
        attachment: rctx.attachment().cloned(),
    };
    let params = req.params.as_deref();
    match method {
        "tools/list" if server.capabilities.tools.is_some() => {
            let p: PaginatedRequestParams = decode_params(params)?;
            let (tools, next) = page(&registry.tool_list, p.cursor.as_deref(), server.page_size)?;
            let mut result = ListToolsResult::new(tools);
            result.next_cursor = next;
            respond(rctx, &result, era)
        }
        "tools/call" if server.capabilities.tools.is_some() => {
            // Only what the call needs is decoded, and kept across its await.
            let ToolCall { name, arguments, progress } = ToolCall::read(req, era)?;
            let Some(tool) = registry.tool(&name) else {
                return Err(ErrorObject::invalid_params(format!("unknown tool `{name}`")));
            };
            let (arguments, problem) = tool.check_arguments(arguments.unwrap_or_default());
            let mut result = match problem {
                Some(problem) => CallToolResult::error(problem),
                None => {
                    let call = tool.handler.call(arguments, ctx(progress));
                    match AssertUnwindSafe(call).catch_unwind().await {
                        Ok(Ok(result)) => result,
                        Ok(Err(ToolError::Tool(message))) => CallToolResult::error(message),
                        Ok(Err(ToolError::Protocol(e))) => return Err(e),
                        Err(panic) => {
                            let msg = mcp_jsonrpc::panic_message(panic.as_ref());
                            tracing::warn!(tool = %name, panic = %msg, "tool panicked");
                            CallToolResult::error(format!("tool `{name}` failed: {msg}"))
                        }
                    }
                }
            };
            downgrade_content(&mut result.content, version);
            respond(rctx, &result, era)
        }
        "prompts/list" if server.capabilities.prompts.is_some() => {
            let p: PaginatedRequestParams = decode_params(params)?;
            let (prompts, next) = page(&registry.prompt_list, p.cursor.as_deref(), server.page_size)?;
            let mut result = ListPromptsResult::new(prompts);
            result.next_cursor = next;
            respond(rctx, &result, era)
        }
        "prompts/get" if server.capabilities.prompts.is_some() => {
            let p: GetPromptRequestParams = decode_params(params)?;
            let Some(prompt) = registry.prompt(&p.name) else {
                return Err(ErrorObject::invalid_params(format!("unknown prompt `{}`", p.name)));
            };
            let arguments = p.arguments.unwrap_or_default();
            let missing = prompt.missing(&arguments);
            if !missing.is_empty() {
                return Err(ErrorObject::invalid_params(format!(
                    "prompt `{}` needs the argument(s): {}",
                    p.name,
                    missing.join(", ")
                )));
            }
            let progress = p.meta.and_then(|m| m.progress_token);
            let mut result = prompt.handler.get(arguments, ctx(progress)).await?;
            for m in &mut result.messages {
                downgrade_content(std::slice::from_mut(&mut m.content), version);
            }
            respond(rctx, &result, era)
        }
        "resources/list" if server.capabilities.resources.is_some() => {
            let p: PaginatedRequestParams = decode_params(params)?;
            let (resources, next) = page(&registry.resource_list, p.cursor.as_deref(), server.page_size)?;
            let mut result = ListResourcesResult::new(resources);
            result.next_cursor = next;
            respond(rctx, &result, era)
        }
        "resources/templates/list" if server.capabilities.resources.is_some() => {
            let p: PaginatedRequestParams = decode_params(params)?;
            let (templates, next) = page(&registry.template_list, p.cursor.as_deref(), server.page_size)?;
            let mut result = ListResourceTemplatesResult::new(templates);
            result.next_cursor = next;
            respond(rctx, &result, era)
        }
        "resources/read" if server.capabilities.resources.is_some() => {
            let p: ReadResourceRequestParams = decode_params(params)?;
            let progress = p.meta.and_then(|m| m.progress_token);
            let (handler, variables, cache) = match registry.resource(&p.uri) {
                Some(r) => (r.handler.clone(), BTreeMap::new(), r.cache.clone()),
                None => match registry.templates.iter().find_map(|t| t.pattern.matches(&p.uri).map(|v| (t, v))) {
                    Some((t, vars)) => (t.handler.clone(), vars, t.cache.clone()),
                    None => {
                        return Err(ErrorObject::with_data(
                            ErrorCode::resource_not_found(version),
                            format!("resource not found: {}", p.uri),
                            serde_json::json!({"uri": p.uri}),
                        ));
                    }
                },
            };
            let contents = handler.read(p.uri, variables, ctx(progress)).await?;
            let mut result = ReadResourceResult::new(contents);
            if let Some(hints) = cache {
                // The resource's own hints win over the server's (2026-07-28 only on the wire).
                result.ttl_ms = Some(hints.ttl_ms);
                result.cache_scope = Some(hints.scope);
            }
            respond(rctx, &result, era)
        }
        "resources/subscribe" if server.capabilities.resources.is_some() => {
            let p: SubscribeRequestParams = decode_params(params)?;
            {
                let mut inner = state.inner();
                let subscriptions = &mut inner.subscriptions;
                if !subscriptions.contains(&p.uri) {
                    // What a client may make the session hold is bounded.
                    let bytes: usize = subscriptions.iter().map(String::len).sum::<usize>() + p.uri.len();
                    if subscriptions.len() >= MAX_SUBSCRIPTIONS || bytes > MAX_SUBSCRIPTION_BYTES {
                        return Err(ErrorObject::invalid_params(format!(
                            "too many subscriptions: a session holds at most {MAX_SUBSCRIPTIONS} URIs of \
                             {MAX_SUBSCRIPTION_BYTES} bytes in all; unsubscribe first"
                        )));
                    }
                    subscriptions.insert(p.uri);
                }
            }
            respond(rctx, &mcp_types::EmptyResult::default(), era)
        }
        "resources/unsubscribe" if server.capabilities.resources.is_some() => {
            let p: UnsubscribeRequestParams = decode_params(params)?;
            state.inner().subscriptions.remove(&p.uri);
            respond(rctx, &mcp_types::EmptyResult::default(), era)
        }
        "completion/complete" if server.capabilities.completions.is_some() => {
            let p: CompleteRequestParams = decode_params(params)?;
            let completer = match &p.r#ref {
                CompletionReference::PromptReference(r) => match registry.prompt(&r.name) {
                    Some(prompt) => prompt.completer(&p.argument.name).cloned(),
                    None => {
                        return Err(ErrorObject::invalid_params(format!("unknown prompt `{}`", r.name)));
                    }
                },
                CompletionReference::ResourceTemplateReference(r) => {
                    match registry.templates.iter().find(|t| t.template.uri_template == r.uri) {
                        Some(t) => t.completer(&p.argument.name).cloned(),
                        None => {
                            return Err(ErrorObject::invalid_params(format!("unknown resource template `{}`", r.uri)));
                        }
                    }
                }
            };
            let completion = match completer {
                Some(c) => {
                    let request = CompletionRequest {
                        name: p.argument.name,
                        value: p.argument.value,
                        context: p.context.and_then(|c| c.arguments).unwrap_or_default(),
                    };
                    let progress = p.meta.and_then(|m| m.progress_token);
                    c.complete(request, ctx(progress)).await?
                }
                None => Completion::default(),
            };
            respond(rctx, &CompleteResult::new(completion.into_wire()), era)
        }
        "logging/setLevel" => {
            let p: SetLevelRequestParams = decode_params(params)?;
            // The level is one of the eight of RFC 5424; anything else is invalid params.
            if let mcp_types::LoggingLevel::Other(level) = &p.level {
                return Err(ErrorObject::invalid_params(format!("unknown logging level `{level}`")));
            }
            state.inner().log_level = Some(p.level);
            respond(rctx, &mcp_types::EmptyResult::default(), era)
        }
        other => Err(ErrorObject::method_not_found(other)),
    }
}

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
    respond(rctx, &result, &Era::legacy(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_of_any_size_and_forged_cursors_do_not_panic() {
        let items = [1, 2, 3];
        let (all, next) = page(&items, None, usize::MAX).unwrap();
        assert_eq!((all, next), (vec![1, 2, 3], None));
        // The offset 1, as a cursor: valid, whatever the page size.
        let cursor = URL_SAFE_NO_PAD.encode("o:1");
        assert_eq!(page(&items, Some(&cursor), usize::MAX).unwrap(), (vec![2, 3], None));
        let (two, next) = page(&items, None, 2).unwrap();
        assert_eq!(two, [1, 2]);
        assert_eq!(page(&items, next.as_deref(), 2).unwrap(), (vec![3], None));
        let beyond = URL_SAFE_NO_PAD.encode("o:4");
        assert_eq!(page(&items, Some(&beyond), 2).unwrap_err().code, -32602);
    }
}
