//! The handler's view of a request: the [`Context`] every handler gets (who the client is,
//! cancellation, progress, logging), and in its files what a handler does with it:
//! `client` (requests to the client: sampling, elicitation, roots, custom requests, asked in a
//! session, through input-required round trips or through a task), `elicit` (typed
//! elicitation, public), `extract` (context parameters), `progress`, and the state a context
//! reads: `session` (what the client declared), `rounds` (a 2026-07-28 request's round trips)
//! and `capability` (what an input request needs of the client).
//!
//! Layer 3: uses `tasks` (a task's link) and the foundations (`error`, `schema`, `trace`);
//! the definitions and the serving use it, never the reverse.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use mcp_jsonrpc::{CancellationToken, Peer};
use mcp_types::{
    ClientCapabilities, Implementation, LoggingLevel, LoggingMessageNotification, LoggingMessageNotificationParams,
    ProgressToken, ProtocolVersion, RequestId,
};

use self::progress::{Progress, ProgressReport};
use self::rounds::InputRounds;
use self::session::SessionState;
use crate::error::ToolError;
use crate::tasks::running::{Deferred, TaskLink};

mod capability;
mod client;
pub mod elicit;
pub(crate) mod extract;
pub(crate) mod progress;
pub(crate) mod rounds;
pub(crate) mod session;
pub(crate) mod visibility;

/// Values shared by every handler of a server, by type.
pub(crate) type StateMap = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

/// The context of one request, handed to tool, prompt, resource and completion handlers.
#[derive(Clone)]
pub struct Context {
    pub(crate) version: ProtocolVersion,
    /// For a request of the stateless revision (2026-07-28) that may ask for input: its
    /// input-required round trips (the answers it carries, the input it asks for).
    pub(crate) input_rounds: Option<Arc<InputRounds>>,
    pub(crate) peer: Peer,
    pub(crate) session: Arc<SessionState>,
    pub(crate) request_id: RequestId,
    pub(crate) cancel: CancellationToken,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) state: Arc<StateMap>,
    pub(crate) attachment: Option<mcp_jsonrpc::Attachment>,
    /// The task this request runs as (a task-augmented `tools/call`, 2025-11-25, or a task
    /// of the 2026-07-28 extension).
    pub(crate) task: Option<Arc<TaskLink>>,
    /// A 2026-07-28 call whose task begins where the handler awaits
    /// [`run_as_task`](Self::run_as_task).
    pub(crate) deferred: Option<Arc<Deferred>>,
    /// On a server that forwards tasks ([`ServerBuilder::forward_tasks`](crate::ServerBuilder::forward_tasks)):
    /// the `task` member of a 2025-11-25 `tools/call` (the client asked for a task).
    pub(crate) requested_task: Option<mcp_types::TaskMetadata>,
    /// The server's middleware, if it has any: what the handler sends goes through it.
    pub(crate) layers: Option<crate::middleware::outgoing::Layers>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("request_id", &self.request_id).finish_non_exhaustive()
    }
}

impl Context {
    /// The id of the request being handled.
    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }

    /// A number that tells this request's session apart from the others of this process: the
    /// same for every request of one connection (an HTTP session, a stdio connection), never
    /// reused; each request of the stateless revision (2026-07-28) is a session of its own.
    /// For state kept beside the server per session (`mcp-gateway` keys its upstream
    /// connections by it); [`peer`](Self::peer)'s `closed()` says when the session ended.
    pub fn session_id(&self) -> u64 {
        self.session.id
    }

    /// Fires when the client cancels the request (or the connection ends).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The task the messages of this request name in their `_meta`
    /// (`io.modelcontextprotocol/related-task`): a task of 2025-11-25 (the 2026-07-28 extension
    /// does not relate messages to tasks).
    fn related_task(&self) -> Option<&str> {
        self.task.as_deref().filter(|t| !t.extension).map(|t| t.id.as_str())
    }

    /// The id of the task this request runs as (a `tools/call` the client made a task, see
    /// [`tasks`](crate::tasks)); `None` for a plain request.
    pub fn task_id(&self) -> Option<&str> {
        self.current_task().map(|t| t.id.as_str())
    }

    /// On a server that forwards tasks ([`ServerBuilder::forward_tasks`](crate::ServerBuilder::forward_tasks)),
    /// in a 2025-11-25 session: the `task` member of the `tools/call` (the client asked for a
    /// task, which the handler passes on and answers with [`ToolError::Task`](crate::ToolError::Task)).
    /// `None` elsewhere (in 2026-07-28 the client declares the tasks extension in its
    /// [`client_capabilities`](Self::client_capabilities) instead).
    pub fn requested_task(&self) -> Option<&mcp_types::TaskMetadata> {
        self.requested_task.as_ref()
    }

    /// The task this request runs as, if any (a deferred one once it began).
    fn current_task(&self) -> Option<&TaskLink> {
        self.task.as_deref().or_else(|| self.deferred.as_ref()?.link.get().map(|l| &**l))
    }

    /// The task of the 2026-07-28 extension this request runs as, if any: input is asked
    /// through it.
    fn extension_task(&self) -> Option<&TaskLink> {
        self.current_task().filter(|t| t.extension)
    }

    /// Where the task begins, for a tool defined with
    /// [`ToolDef::deferred_task`](crate::ToolDef::deferred_task) called by a 2026-07-28 request
    /// that declares the tasks extension: the call is answered with the new task
    /// (`resultType: "task"`) and the rest of the handler runs as that task. What the handler
    /// did before (input-required round trips included) was synchronous. Everywhere else (a
    /// call already running as a task, a plain call, a session's call) this does nothing:
    /// the same handler serves every kind of call. See [`tasks`](crate::tasks).
    ///
    /// ```
    /// use mcp_server::{ClientRequestError, Context, ToolError};
    ///
    /// async fn handler(ctx: Context) -> Result<String, ToolError> {
    ///     // ... synchronous part: validate, ask for input with `ctx.elicit_as::<T>(..)` ...
    ///     ctx.run_as_task().await?;
    ///     // ... long-running part ...
    ///     Ok("done".into())
    /// }
    /// ```
    pub async fn run_as_task(&self) -> Result<(), ToolError> {
        match &self.deferred {
            Some(deferred) => deferred.begin(&self.peer, self.layers.as_ref()).await.map_err(ToolError::Protocol),
            None => Ok(()),
        }
    }

    /// The protocol revision this request is served in: the session's, or 2026-07-28 for a
    /// request of the stateless revision.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// The client's capabilities: declared at `initialize`, or in the `_meta` of a request of
    /// the stateless revision.
    pub fn client_capabilities(&self) -> ClientCapabilities {
        self.session.client_capabilities()
    }

    /// Whether the client renders MCP Apps (SEP-1865): it declared the extension
    /// `io.modelcontextprotocol/ui` with `text/html;profile=mcp-app` among its `mimeTypes`, at
    /// `initialize` (any revision: hosts declare it there) or in this request's `_meta`
    /// (2026-07-28). A tool linked to a view answers a client that does not in text alone.
    pub fn client_supports_apps(&self) -> bool {
        self.session.supports_apps()
    }

    /// The client's name and version, as it reported them.
    pub fn client_info(&self) -> Option<Implementation> {
        self.session.client_info()
    }

    /// This request's session, to hide items from it or show them again at run time (see
    /// [`SessionControl`](crate::SessionControl)): hidden from this session only, which is told
    /// with `list_changed`.
    ///
    /// ```
    /// use mcp_server::{Context, ToolError};
    ///
    /// async fn unlock(ctx: Context) -> Result<String, ToolError> {
    ///     ctx.session().show_tool("admin").await?;
    ///     ctx.session().hide_tool("unlock").await?;
    ///     Ok("unlocked".into())
    /// }
    /// ```
    pub fn session(&self) -> visibility::SessionControl {
        visibility::SessionControl {
            state: self.session.clone(),
            attachment: self.attachment.clone(),
            version: self.version,
            layers: self.layers.clone(),
        }
    }

    /// The connection to the client.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// This request's session outside of this request, for what is sent to it later (a
    /// mounted server's log messages and requests outside any call, in `mcp-gateway`): its
    /// messages are the session's, not the request's (over HTTP, on the session's own stream),
    /// its requests to the client are not ended by this request's end or cancellation, and the
    /// level the client set (`logging/setLevel`) still filters its log messages. `None` for a
    /// request of the stateless revision (2026-07-28), whose session ends with it, or a
    /// session with no connection of its own in this process.
    pub fn detached(&self) -> Option<Context> {
        if self.version.is_stateless() {
            return None;
        }
        let peer = self.session.peer.get()?.clone();
        Some(Context {
            version: self.version,
            input_rounds: None,
            peer,
            session: self.session.clone(),
            request_id: self.request_id.clone(),
            cancel: CancellationToken::new(),
            progress_token: None,
            state: self.state.clone(),
            attachment: self.attachment.clone(),
            task: None,
            requested_task: None,
            deferred: None,
            layers: self.layers.clone(),
        })
    }

    /// What the transport attached to the request (see
    /// [`mcp_jsonrpc::RequestContext::attachment`]).
    pub fn attachment(&self) -> Option<&mcp_jsonrpc::Attachment> {
        self.attachment.as_ref()
    }

    /// The HTTP request that carried this request, when served over HTTP: its headers and
    /// extensions (what middleware such as authentication put there). On an endpoint that
    /// checks tokens (feature `auth`), its `Authorization` header has been taken out: the
    /// handler has `principal`, never the token.
    #[cfg(feature = "http")]
    pub fn http_request(&self) -> Option<&mcp_transport_http::server::RequestInfo> {
        self.attachment.as_ref()?.downcast_ref()
    }

    /// Who the request's access token speaks for, when the HTTP endpoint checks tokens
    /// (feature `auth`, [`HttpServerConfig::auth`](mcp_transport_http::server::HttpServerConfig::auth));
    /// `None` over stdio and over HTTP without `auth`. Never pass the token itself on to
    /// other services: it was issued for this server only.
    #[cfg(feature = "auth")]
    pub fn principal(&self) -> Option<&mcp_transport_http::server::auth::Principal> {
        self.http_request()?.extensions().get()
    }

    /// Who the tasks this request makes belong to when the endpoint checks tokens: the HTTP
    /// principal (its issuer, subject and client) as an opaque key, as this server binds its
    /// own tasks to it; `None` over stdio, over HTTP without `auth` and for a token that names
    /// nobody. A server that keeps tasks elsewhere (a gateway forwarding them) binds them
    /// alike: two requests with equal keys are the same principal.
    pub fn principal_key(&self) -> Option<String> {
        principal_key(self.attachment.as_ref())
    }

    /// Over HTTP, closes the SSE connection carrying this request's response while the handler
    /// goes on (SSE polling): the client reconnects and resumes. Whether there was one.
    pub async fn close_sse_stream(&self) -> bool {
        #[cfg(feature = "http")]
        if let Some(info) = self.http_request() {
            return info.close_sse_stream().await;
        }
        false
    }

    /// The shared state of type `T` registered with
    /// [`ServerBuilder::state`](crate::ServerBuilder::state), if any.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.state.get(&std::any::TypeId::of::<T>()).cloned().and_then(|s| s.downcast::<T>().ok())
    }

    /// A handle that reports the progress of this request; it can outlive the context.
    pub fn progress_reporter(&self) -> Progress {
        Progress::new(
            self.peer.clone(),
            self.progress_token.clone(),
            self.related_task().map(Arc::from),
            self.layers.clone(),
        )
    }

    /// Reports progress, if the client asked for it (otherwise does nothing): `progress` so
    /// far, with an optional total and message, sent when awaited (as
    /// [`Progress::report`] does). Inside a task of the 2026-07-28 extension, whose call was
    /// answered with the task, it also becomes the task's `statusMessage` while the task is
    /// `working` (the message, else `progress/total`), which `tasks/get` and
    /// `notifications/tasks` show.
    ///
    /// ```
    /// async fn copy(ctx: mcp_server::Context) {
    ///     ctx.progress(3.0).total(10.0).message("copying").await;
    /// }
    /// ```
    pub fn progress(&self, progress: f64) -> ProgressReport<'_, impl Future<Output = ()> + Send + '_> {
        let link = self.extension_task();
        let layers = self.layers.as_ref();
        progress::progress_report(&self.peer, layers, self.progress_token.as_ref(), self.related_task(), link, progress)
    }

    /// Sends a log message to the client, if its level passes the level the client set (with
    /// `logging/setLevel`; a request of the stateless revision gets messages only if its `_meta`
    /// names a level). The message names no logger; [`logger`](Self::logger) gives one that
    /// does.
    ///
    /// ```
    /// use mcp_server::Context;
    /// use mcp_types::LoggingLevel;
    ///
    /// async fn copy(ctx: Context) {
    ///     ctx.log(LoggingLevel::Info, serde_json::json!("copying")).await;
    /// }
    /// ```
    pub async fn log(&self, level: LoggingLevel, data: serde_json::Value) {
        self.send_log(level, None, data).await;
    }

    /// A view of this context that sends log messages named `name` (the `logger` member of
    /// each message), with the same level filter as [`log`](Self::log).
    ///
    /// ```
    /// use mcp_server::Context;
    /// use mcp_types::LoggingLevel;
    ///
    /// async fn copy(ctx: Context) {
    ///     let log = ctx.logger("copy");
    ///     log.log(LoggingLevel::Info, serde_json::json!("started")).await;
    ///     log.log(LoggingLevel::Info, serde_json::json!("done")).await;
    /// }
    /// ```
    pub fn logger<'a>(&'a self, name: &'a str) -> Logger<'a> {
        Logger { ctx: self, name }
    }

    /// A `notifications/message` to the client, if `level` passes its filter.
    async fn send_log(&self, level: LoggingLevel, logger: Option<&str>, data: serde_json::Value) {
        if !self.session.log_enabled(&level) {
            return;
        }
        let mut params = LoggingMessageNotificationParams::new(data, level);
        params.logger = logger.map(str::to_owned);
        params.meta = self.related_task().map(crate::tasks::related_task_meta);
        let sent = crate::middleware::outgoing::notify::<LoggingMessageNotification>(
            self.layers.as_ref(),
            &self.peer,
            params,
            None,
        );
        if let Err(e) = sent.await {
            tracing::debug!(error = %e, "log notification not sent");
        }
    }
}

/// A [`Context`] that sends log messages under a logger name: made by [`Context::logger`].
#[derive(Clone, Copy, Debug)]
pub struct Logger<'a> {
    ctx: &'a Context,
    name: &'a str,
}

impl Logger<'_> {
    /// The logger name the messages carry.
    pub fn name(&self) -> &str {
        self.name
    }

    /// Sends a log message named after this logger, if its level passes the level the client
    /// set (as [`Context::log`] does).
    pub async fn log(&self, level: LoggingLevel, data: serde_json::Value) {
        self.ctx.send_log(level, Some(self.name), data).await;
    }
}

/// The HTTP principal of the request that carried `attachment`, as a task owner, when the
/// endpoint checks tokens and the token names someone: its issuer (the `iss` claim; one
/// subject of two issuers is two owners), subject and client.
pub(crate) fn principal_key(attachment: Option<&mcp_jsonrpc::Attachment>) -> Option<String> {
    let _ = attachment;
    #[cfg(feature = "auth")]
    if let Some(principal) = attachment
        .and_then(|a| a.downcast_ref::<mcp_transport_http::server::RequestInfo>())
        .and_then(|info| info.extensions().get::<mcp_transport_http::server::auth::Principal>())
        .filter(|p| p.subject.is_some() || p.client_id.is_some())
    {
        let issuer = principal.issuer.as_deref().unwrap_or("");
        return Some(format!(
            "principal:{issuer}\u{0}{}\u{0}{}",
            principal.subject.as_deref().unwrap_or(""),
            principal.client_id.as_deref().unwrap_or("")
        ));
    }
    None
}
