//! Middleware: layers around the requests and notifications a server serves
//! ([`ServerBuilder::middleware`](crate::ServerBuilder::middleware)).
//!
//! A [`Middleware`] sees each request as an [`McpRequest`]: its method, a typed view of its
//! params ([`McpRequest::tool_call`], [`McpRequest::get_prompt`], [`McpRequest::read_resource`],
//! [`McpRequest::list_cursor`], or [`McpRequest::params`] for any method, custom ones included)
//! and its context ([`RequestCx`]: revision, session, principal, client address). It answers
//! itself (an error, a result of its own), changes the params ([`McpRequest::set_params`],
//! [`McpRequest::set_tool_call`]) or calls [`Next::run`] and sees, or transforms, the reply.
//!
//! What the server sends goes through the same layers ([`outgoing`]): the requests a handler
//! makes through its [`Context`](crate::Context) (sampling, elicitation, roots, custom ones)
//! as [`OutgoingRequest`]s ([`Middleware::outgoing_request`]), and the notifications the server
//! sends (progress, log messages, list changes, resource updates, task status, custom ones) as
//! [`OutgoingNotification`]s ([`Middleware::outgoing_notification`]). What a handler sends on
//! the raw [`Peer`] ([`Context::peer`](crate::Context::peer)) does not.
//!
//! Layers run in the order they were installed, the first outermost. They sit at the entry of
//! the typed dispatch, which every transport (stdio, Streamable HTTP, HTTP+SSE, in-memory) and
//! both kinds of revision (sessions after `initialize`, and 2026-07-28 requests) share: they see
//! every method a server serves except the handshake (`initialize`), `ping` (which the JSON-RPC
//! engine answers), 2026-07-28 `server/discover` and `subscriptions/listen`, and the methods of
//! the 2026-07-28 tasks extension.
//!
//! Our own trait rather than `tower::Service`: a server with no layer pays one branch on an
//! empty list per request (no boxing, no allocation; `cargo xtask bench --callgrind` shows the
//! same instructions per call), and a layer reads a request by method, typed. `tower` layers
//! still fit, through [`tower::from_tower`] (feature `tower`).
//!
//! Ready layers: [`log::RequestLog`] (a `tracing` event per request, with its duration),
//! [`metrics::ToolMetrics`] (per-tool counts and latency histograms), [`limit::ToolLimits`]
//! (concurrency and timeout per tool), [`cache::ListCache`] (list results kept until the lists
//! change), [`rate::RateLimit`] (token buckets per principal, session
//! or client address; feature `rate-limit`).

use std::borrow::Cow;
use std::sync::Arc;

/// The boxed future of a layer.
pub use futures_util::future::BoxFuture;
use mcp_jsonrpc::message;
use mcp_jsonrpc::{ErrorObject, Peer, Reply, RequestContext, RequestId};
use mcp_types::{
    CallToolRequest, GetPromptRequest, GetPromptRequestParams, JsonObject, ListPromptsRequest,
    ListResourceTemplatesRequest, ListResourcesRequest, ListToolsRequest, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequest, ReadResourceRequestParams, Request as _, WireSerialize,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

pub use self::outgoing::{OutgoingNext, OutgoingNotification, OutgoingReply, OutgoingRequest, OutgoingRoute};
use crate::serve::call::Call;

pub mod cache;
pub mod limit;
pub mod log;
pub mod metrics;
pub mod outgoing;
#[cfg(feature = "rate-limit")]
pub mod rate;
#[cfg(feature = "tower")]
pub mod tower;

/// A layer around the requests and notifications a server serves.
///
/// Object-safe: a layer's future is boxed ([`BoxFuture`]), which only servers with layers pay
/// for. The default methods pass everything on.
///
/// What the server sends: here a layer answers `roots/list` itself (the client is never
/// asked: here no input-required round trip of 2026-07-28) and drops progress notifications,
/// so the call's response is the first frame the client gets.
///
/// ```
/// use mcp_jsonrpc::{TransportRead as _, TransportWrite as _};
/// use mcp_server::middleware::{
///     BoxFuture, Middleware, OutgoingNext, OutgoingNotification, OutgoingReply, OutgoingRequest,
/// };
/// use mcp_server::{Context, Server, ToolDef};
/// use mcp_types::{CallToolResult, ContentBlock};
/// use serde_json::{Value, json};
///
/// /// The roots of this deployment, whatever the client would say; no progress reports.
/// struct FixedRoots;
///
/// impl Middleware for FixedRoots {
///     fn outgoing_request<'a>(
///         &'a self,
///         req: OutgoingRequest<'a>,
///         next: OutgoingNext<'a>,
///     ) -> BoxFuture<'a, OutgoingReply> {
///         if req.method() != "roots/list" {
///             return next.run(req);
///         }
///         let roots = json!({"roots": [{"uri": "file:///srv/data", "name": "data"}]});
///         Box::pin(async move { Ok(serde_json::value::to_raw_value(&roots).unwrap()) })
///     }
///
///     fn outgoing_notification(&self, notification: &mut OutgoingNotification<'_>) -> bool {
///         notification.method() != "notifications/progress"
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let first_root = ToolDef::new("first_root", json!({"type": "object"}), |_, ctx: Context| async move {
///     ctx.progress(0.5).await;
///     let roots = ctx.list_roots().await?;
///     Ok(CallToolResult::success(vec![ContentBlock::text(roots.roots[0].uri.clone())]))
/// })
/// .unwrap();
/// let server = Server::builder("roots", "1.0").tool(first_root).middleware(FixedRoots).build().unwrap();
///
/// // A 2026-07-28 client declaring roots, over an in-memory connection.
/// let (ours, theirs) = mcp_jsonrpc::transport::memory(16);
/// server.connect(theirs);
/// let (mut read, mut write) = mcp_jsonrpc::Transport::split(ours);
/// let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
///     "name": "first_root", "arguments": {}, "_meta": {
///         "progressToken": "p",
///         "io.modelcontextprotocol/protocolVersion": "2026-07-28",
///         "io.modelcontextprotocol/clientInfo": {"name": "doc", "version": "1"},
///         "io.modelcontextprotocol/clientCapabilities": {"roots": {}}}}});
/// write.write(&[bytes::Bytes::from(call.to_string()).into()]).await.unwrap();
/// let frame = read.read().await.unwrap().unwrap();
/// let response: Value = serde_json::from_slice(&frame.frame).unwrap();
/// assert_eq!(response["id"], 1, "the progress report was dropped: {response}");
/// assert_eq!(response["result"]["content"][0]["text"], "file:///srv/data");
/// # }
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Serves a request: answers it, or hands it (changed or not) to `next` and returns, or
    /// transforms, what `next` answers.
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        next.run(req)
    }

    /// Sees a notification from a client, before the server handles it; `false` drops it (the
    /// layers after this one and the server do not see it).
    fn notification(&self, notification: &McpNotification<'_>) -> bool {
        let _ = notification;
        true
    }

    /// Sees a request the server sends to the client (see [`outgoing`]): answers it itself,
    /// or hands it (its params changed or not) to `next` and returns, or transforms, the
    /// client's answer.
    fn outgoing_request<'a>(
        &'a self,
        req: OutgoingRequest<'a>,
        next: OutgoingNext<'a>,
    ) -> BoxFuture<'a, OutgoingReply> {
        next.run(req)
    }

    /// Sees a notification the server sends to the client, and may change its params; `false`
    /// drops it (the layers after this one do not see it, and it is not sent).
    fn outgoing_notification(&self, notification: &mut OutgoingNotification<'_>) -> bool {
        let _ = notification;
        true
    }
}

/// The layers of a server, outermost first.
pub(crate) type Layers = Arc<[Arc<dyn Middleware>]>;

/// What the senders below the serving call of a layer: its hooks on what the server sends.
impl<T: Middleware> outgoing::OutgoingLayer for T {
    fn outgoing_request<'a>(
        &'a self,
        req: OutgoingRequest<'a>,
        next: OutgoingNext<'a>,
    ) -> BoxFuture<'a, OutgoingReply> {
        Middleware::outgoing_request(self, req, next)
    }

    fn outgoing_notification(&self, notification: &mut OutgoingNotification<'_>) -> bool {
        Middleware::outgoing_notification(self, notification)
    }
}

/// The kind of a request's method, for a layer that reads requests by method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MethodKind {
    /// `tools/call`: [`McpRequest::tool_call`].
    CallTool,
    /// `prompts/get`: [`McpRequest::get_prompt`].
    GetPrompt,
    /// `resources/read`: [`McpRequest::read_resource`].
    ReadResource,
    /// `tools/list`, `prompts/list`, `resources/list` or `resources/templates/list`:
    /// [`McpRequest::list_cursor`].
    List,
    /// Any other method, custom ones included: [`McpRequest::params`].
    Other,
}

impl MethodKind {
    /// The kind of `method`.
    pub fn of(method: &str) -> MethodKind {
        match method {
            CallToolRequest::METHOD => MethodKind::CallTool,
            GetPromptRequest::METHOD => MethodKind::GetPrompt,
            ReadResourceRequest::METHOD => MethodKind::ReadResource,
            ListToolsRequest::METHOD
            | ListPromptsRequest::METHOD
            | ListResourcesRequest::METHOD
            | ListResourceTemplatesRequest::METHOD => MethodKind::List,
            _ => MethodKind::Other,
        }
    }
}

/// What a layer knows of a request besides its params: its id, revision, session, principal
/// and client address, and how to answer it. Copied freely (it borrows the request's).
#[derive(Clone, Copy)]
pub struct RequestCx<'a> {
    call: Call<'a>,
}

impl std::fmt::Debug for RequestCx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestCx")
            .field("id", self.id())
            .field("revision", &self.revision())
            .field("session_id", &self.session_id())
            .finish_non_exhaustive()
    }
}

impl<'a> RequestCx<'a> {
    /// The request's id.
    pub fn id(&self) -> &'a RequestId {
        self.call.rctx.id()
    }

    /// The revision the request is served in.
    pub fn revision(&self) -> ProtocolVersion {
        self.call.era.version
    }

    /// Whether the request is of the stateless revision (2026-07-28: no session).
    pub fn is_stateless(&self) -> bool {
        self.call.era.is_stateless()
    }

    /// The HTTP session the request came in (`Mcp-Session-Id`), if any; `None` over stdio and
    /// for a request of the stateless revision.
    pub fn session_id(&self) -> Option<&'a str> {
        #[cfg(feature = "http")]
        if let Some(info) = self.http_request() {
            return info.session_id();
        }
        None
    }

    /// The connection the request came on: unique in this process (an HTTP session, a stdio
    /// connection; each request of the stateless revision has one of its own).
    pub fn connection(&self) -> u64 {
        self.call.state.id
    }

    /// The HTTP request that carried this request, when served over HTTP.
    #[cfg(feature = "http")]
    pub fn http_request(&self) -> Option<&'a mcp_transport_http::server::RequestInfo> {
        self.call.rctx.attachment()?.downcast_ref()
    }

    /// Who the request's access token speaks for, when the HTTP endpoint checks tokens
    /// (feature `auth`).
    #[cfg(feature = "auth")]
    pub fn principal(&self) -> Option<&'a mcp_transport_http::server::auth::Principal> {
        self.http_request()?.extensions().get()
    }

    /// The address of the client, over HTTP when the endpoint knows it (served by
    /// [`Server::serve_http`](crate::Server::serve_http), or a router served with axum's
    /// `ConnectInfo<SocketAddr>`).
    #[cfg(feature = "http")]
    pub fn client_address(&self) -> Option<std::net::IpAddr> {
        self.http_request()?.client_address()
    }

    /// The transport's request context: the cancellation token, the peer.
    pub fn request_context(&self) -> &'a RequestContext {
        self.call.rctx
    }

    /// The connection to the client.
    pub fn peer(&self) -> &'a Peer {
        self.call.rctx.peer()
    }

    /// The names of the tools the server has now: a label or key bounded by the server's
    /// definitions, not by what clients send.
    pub fn has_tool(&self, name: &str) -> bool {
        self.call.server.registry().tool(name).is_some()
    }

    /// Whether the lists this request gets may differ from another client's: the server has a
    /// visibility predicate ([`ServerBuilder::visibility`](crate::ServerBuilder::visibility)),
    /// hides what a token's scopes do not grant, or the request's session hides items of its
    /// own ([`SessionControl`](crate::SessionControl)).
    pub fn lists_filtered(&self) -> bool {
        self.call.filters()
    }

    /// Whether the request's session hides items of its own (what no scope of a cache can
    /// name, as it changes with the session's [`SessionControl`](crate::SessionControl)).
    pub fn session_hides_items(&self) -> bool {
        self.call.state.hides_any()
    }

    /// A number that changes whenever a tool, prompt, resource or template is added or
    /// removed at runtime (what a cache of list results is checked against).
    pub fn list_generation(&self) -> u64 {
        self.call.server.lists_generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Answers the request with `result`, encoded for its revision (as the server encodes its
    /// own results: a 2026-07-28 result carries the server's info).
    pub fn respond<T: WireSerialize>(&self, result: &T) -> Reply {
        self.call.respond_with(result)
    }

    /// Answers the request with a result written as JSON as is (a result a layer transformed,
    /// see [`result_of`]).
    pub fn respond_json<T: Serialize + ?Sized>(&self, result: &T) -> Reply {
        self.call.rctx.encode_result(&result)
    }
}

/// The result member of a reply (`None` for an error, or a frame that has none), to read or
/// transform it and answer with [`RequestCx::respond_json`].
pub fn result_of(reply: &Reply) -> Option<Box<RawValue>> {
    #[derive(serde::Deserialize)]
    struct Frame {
        result: Option<Box<RawValue>>,
    }
    let frame = reply.as_ref().ok()?;
    serde_json::from_slice::<Frame>(frame).ok()?.result
}

/// A request a layer sees: its method and params, which it may change, and its context.
pub struct McpRequest<'a> {
    cx: RequestCx<'a>,
    /// The request, once a layer changed it (the request of `cx` until then).
    changed: Option<message::Request>,
}

impl std::fmt::Debug for McpRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRequest").field("method", &self.method()).field("cx", &self.cx).finish_non_exhaustive()
    }
}

/// The name and arguments of a `tools/call`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallView {
    /// The tool's name.
    pub name: String,
    /// Its arguments, if the request has any.
    pub arguments: Option<JsonObject>,
}

impl<'a> McpRequest<'a> {
    fn request(&self) -> &message::Request {
        self.changed.as_ref().unwrap_or(self.cx.call.req)
    }

    /// The request's context.
    pub fn cx(&self) -> RequestCx<'a> {
        self.cx
    }

    /// The method.
    pub fn method(&self) -> &str {
        &self.request().method
    }

    /// The kind of the method.
    pub fn kind(&self) -> MethodKind {
        MethodKind::of(self.method())
    }

    /// The raw params, if any.
    pub fn raw_params(&self) -> Option<&RawValue> {
        self.request().params.as_deref()
    }

    /// The params decoded as `T` (-32602 if they do not decode; absent params read as `{}`).
    pub fn params<T: DeserializeOwned>(&self) -> Result<T, ErrorObject> {
        message::decode_params(self.raw_params())
    }

    /// The name and arguments of a `tools/call` (`None` for another method).
    pub fn tool_call(&self) -> Option<Result<ToolCallView, ErrorObject>> {
        #[derive(serde::Deserialize)]
        struct Params<'p> {
            #[serde(borrow)]
            name: Cow<'p, str>,
            #[serde(default)]
            arguments: Option<JsonObject>,
        }
        (self.kind() == MethodKind::CallTool).then(|| {
            let text = self.raw_params().map_or("{}", RawValue::get);
            let p: Params<'_> = serde_json::from_str(text).map_err(ErrorObject::invalid_params)?;
            Ok(ToolCallView { name: p.name.into_owned(), arguments: p.arguments })
        })
    }

    /// The name of the tool a `tools/call` calls (`None` for another method, or params without
    /// a name): cheaper than [`tool_call`](Self::tool_call), which builds the arguments.
    pub fn tool_name(&self) -> Option<Cow<'_, str>> {
        #[derive(serde::Deserialize)]
        struct Params<'p> {
            #[serde(borrow)]
            name: Cow<'p, str>,
        }
        if self.kind() != MethodKind::CallTool {
            return None;
        }
        serde_json::from_str::<Params<'_>>(self.raw_params()?.get()).ok().map(|p| p.name)
    }

    /// The params of a `prompts/get` (`None` for another method).
    pub fn get_prompt(&self) -> Option<Result<GetPromptRequestParams, ErrorObject>> {
        (self.kind() == MethodKind::GetPrompt).then(|| self.params())
    }

    /// The params of a `resources/read` (`None` for another method).
    pub fn read_resource(&self) -> Option<Result<ReadResourceRequestParams, ErrorObject>> {
        (self.kind() == MethodKind::ReadResource).then(|| self.params())
    }

    /// The cursor of a list method (`None` for another method; `Some(Ok(None))` for the first
    /// page).
    pub fn list_cursor(&self) -> Option<Result<Option<String>, ErrorObject>> {
        (self.kind() == MethodKind::List).then(|| self.params::<PaginatedRequestParams>().map(|p| p.cursor))
    }

    /// Replaces the params (`None`: none). The request's `_meta` (its progress token, and for
    /// the stateless revision the client's declarations) goes with the old params unless the
    /// new ones carry it: use [`set_tool_call`](Self::set_tool_call) to change a tool call.
    pub fn set_params<T: Serialize + ?Sized>(&mut self, params: Option<&T>) -> Result<(), ErrorObject> {
        let params = params.map(serde_json::value::to_raw_value).transpose().map_err(ErrorObject::internal_error)?;
        let old = self.request();
        self.changed = Some(message::Request::new(old.id.clone(), old.method.clone(), params));
        Ok(())
    }

    /// Changes the name and arguments of a `tools/call`, keeping the rest of its params (its
    /// `_meta` with them). An error for another method.
    pub fn set_tool_call(&mut self, call: ToolCallView) -> Result<(), ErrorObject> {
        if self.kind() != MethodKind::CallTool {
            return Err(ErrorObject::internal_error("set_tool_call on a request that is not a tools/call"));
        }
        let mut params: serde_json::Map<String, serde_json::Value> =
            message::decode_params::<Option<_>>(self.raw_params())?.unwrap_or_default();
        params.insert("name".into(), call.name.into());
        match call.arguments {
            Some(arguments) => params.insert("arguments".into(), arguments.into()),
            None => params.remove("arguments"),
        };
        self.set_params(Some(&params))
    }
}

/// The rest of the chain: the layers after this one, then the server.
pub struct Next<'a> {
    rest: &'a [Arc<dyn Middleware>],
    /// What serves the request after the last layer: the typed dispatch, or (a method served
    /// before it: `initialize`, `server/discover`, ...) its own path.
    end: Option<End<'a>>,
}

/// The server's own path for a method the typed dispatch does not serve.
pub(crate) type End<'a> = Box<dyn FnOnce(Call<'_>) -> BoxFuture<'_, Reply> + Send + 'a>;

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").field("layers", &self.rest.len()).finish()
    }
}

impl<'a> Next<'a> {
    /// Hands `req` to the next layer, or to the server after the last.
    pub fn run(self, req: McpRequest<'a>) -> BoxFuture<'a, Reply> {
        match self.rest.split_first() {
            Some((layer, rest)) => layer.request(req, Next { rest, end: self.end }),
            None => {
                let McpRequest { cx, changed } = req;
                let end = self.end;
                Box::pin(async move {
                    let call = match &changed {
                        None => cx.call,
                        Some(req) => Call { req, ..cx.call },
                    };
                    match end {
                        None => crate::serve::dispatch::route(call).await,
                        Some(end) => end(call).await,
                    }
                })
            }
        }
    }
}

/// Serves `call` through `layers` (not empty).
pub(crate) fn run<'a>(layers: &'a [Arc<dyn Middleware>], call: Call<'a>) -> BoxFuture<'a, Reply> {
    Next { rest: layers, end: None }.run(McpRequest { cx: RequestCx { call }, changed: None })
}

/// Serves `call` through `layers` (not empty), then by `end`: a method served before the
/// typed dispatch (`initialize`, `server/discover`, `subscriptions/listen`, the methods of the
/// 2026-07-28 tasks extension).
pub(crate) fn run_to<'a>(layers: &'a [Arc<dyn Middleware>], call: Call<'a>, end: End<'a>) -> BoxFuture<'a, Reply> {
    Next { rest: layers, end: Some(end) }.run(McpRequest { cx: RequestCx { call }, changed: None })
}

/// A notification a layer sees.
#[derive(Debug, Clone, Copy)]
pub struct McpNotification<'a> {
    /// The method.
    pub method: &'a str,
    /// The raw params, if any.
    pub params: Option<&'a RawValue>,
    /// The connection it came on.
    pub peer: &'a Peer,
}

/// Whether every layer lets `notification` through.
pub(crate) fn notify(layers: &[Arc<dyn Middleware>], notification: &McpNotification<'_>) -> bool {
    layers.iter().all(|layer| layer.notification(notification))
}
