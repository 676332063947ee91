//! What a handler can do besides computing its result: report progress, log to the client,
//! notice cancellation, and ask the client for a completion (sampling), for input
//! (elicitation) or for its roots.

use std::future::Future;
use std::sync::Arc;

use mcp_jsonrpc::{CallError, CallOptions, CancellationToken, Peer};
use mcp_types::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
    ElicitRequestParams, ElicitResult, Implementation, ListRootsRequest, ListRootsResult, LoggingLevel,
    LoggingMessageNotification, LoggingMessageNotificationParams, ProgressToken, ProtocolVersion, Request as _,
    RequestId,
};

use crate::error::{ClientRequestError, ToolError};
use crate::extract::{Progress, ProgressReport, StateMap};
use crate::session::SessionState;

/// The context of one request, handed to tool, prompt, resource and completion handlers.
#[derive(Clone)]
pub struct Context {
    pub(crate) version: ProtocolVersion,
    /// For a request of the stateless revision (2026-07-28) that may ask for input: its
    /// input-required round trips (the answers it carries, the input it asks for).
    pub(crate) input_rounds: Option<Arc<crate::stateless::InputRounds>>,
    pub(crate) peer: Peer,
    pub(crate) session: Arc<SessionState>,
    pub(crate) request_id: RequestId,
    pub(crate) cancel: CancellationToken,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) state: Arc<StateMap>,
    pub(crate) attachment: Option<mcp_jsonrpc::Attachment>,
    /// The task this request runs as (a task-augmented `tools/call`, 2025-11-25, or a task
    /// of the 2026-07-28 extension).
    pub(crate) task: Option<Arc<crate::tasks::TaskLink>>,
    /// A 2026-07-28 call whose task begins where the handler awaits
    /// [`run_as_task`](Self::run_as_task).
    pub(crate) deferred: Option<Arc<crate::tasks_ext::Deferred>>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("request_id", &self.request_id).finish_non_exhaustive()
    }
}

/// `level` is at least as severe as `threshold`.
pub(crate) fn severity(level: &LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
        LoggingLevel::Other(_) => 1,
    }
}

impl Context {
    /// The id of the request being handled.
    pub fn request_id(&self) -> &RequestId {
        &self.request_id
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

    /// The task this request runs as, if any (a deferred one once it began).
    fn current_task(&self) -> Option<&crate::tasks::TaskLink> {
        self.task.as_deref().or_else(|| self.deferred.as_ref()?.link.get().map(|l| &**l))
    }

    /// The task of the 2026-07-28 extension this request runs as, if any: input is asked
    /// through it.
    fn extension_task(&self) -> Option<&crate::tasks::TaskLink> {
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
            Some(deferred) => deferred.begin(self).await.map_err(ToolError::Protocol),
            None => Ok(()),
        }
    }

    /// Asks for input through an extension task: `Some` when this request runs as one.
    async fn ask_task<P: mcp_types::WireSerialize, R: serde::de::DeserializeOwned>(
        &self,
        key: Option<&str>,
        kind: &'static str,
        capability: &'static str,
        method: &str,
        params: &P,
    ) -> Option<Result<R, ClientRequestError>> {
        let task = self.extension_task()?;
        let key = match key {
            Some(key) => key.to_owned(),
            None => task.next_key(kind),
        };
        let params = match mcp_types::to_value_for(params, self.version) {
            Ok(params) => params,
            Err(e) => {
                return Some(Err(ClientRequestError::InvalidInput(format!("cannot encode the input request: {e}"))));
            }
        };
        Some(crate::tasks_ext::ask(task, self, &key, capability, method, params).await.and_then(|answer| {
            serde_json::from_value(answer).map_err(|e| ClientRequestError::InvalidInput(format!("input `{key}`: {e}")))
        }))
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

    /// The client's name and version, as it reported them.
    pub fn client_info(&self) -> Option<Implementation> {
        self.session.client_info()
    }

    /// The connection to the client.
    pub fn peer(&self) -> &Peer {
        &self.peer
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
        Progress::new(self.peer.clone(), self.progress_token.clone(), self.related_task().map(Arc::from))
    }

    /// Reports progress, if the client asked for it (otherwise does nothing): `progress` so
    /// far, with an optional total and message, sent when awaited (as
    /// [`Progress::report`] does).
    ///
    /// ```
    /// async fn copy(ctx: mcp_server::Context) {
    ///     ctx.progress(3.0).total(10.0).message("copying").await;
    /// }
    /// ```
    pub fn progress(&self, progress: f64) -> ProgressReport<'_, impl Future<Output = ()> + Send + '_> {
        crate::extract::progress_report(&self.peer, self.progress_token.as_ref(), self.related_task(), progress)
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
        if let Err(e) = self.peer.notify::<LoggingMessageNotification>(params).await {
            tracing::debug!(error = %e, "log notification not sent");
        }
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    ///
    /// In a session this is a request to the client. For a 2026-07-28 request it is an
    /// input-required round trip: the first time, it fails with
    /// [`ClientRequestError::InputRequired`] (pass it on with `?`) and the request answers an
    /// input-required result; the client retries with the answer, the handler runs again, and
    /// this call returns it. Calls are told apart by
    /// their order within the handler (`sampling-1`, `sampling-2`, ...); use
    /// [`create_message_as`](Self::create_message_as) to name the input yourself. Only
    /// `tools/call`, `prompts/get` and `resources/read` have round trips: serving another
    /// 2026-07-28 request (`completion/complete`, say), this call, like `elicit` and
    /// `list_roots`, fails with [`ClientRequestError::NotInThisRequest`].
    pub async fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ClientRequestError> {
        if let Some(answer) = self.ask_task(None, "sampling", "sampling", CreateMessageRequest::METHOD, &params).await {
            return answer;
        }
        if let Some(rounds) = &self.input_rounds {
            let key = rounds.next_key("sampling");
            return self.ask(rounds, &key, "sampling", CreateMessageRequest::METHOD, &params);
        }
        self.refuse_without_rounds("sampling")?;
        let caps = self.client_capabilities();
        if let Some(missing) = sampling_missing(caps.sampling.as_ref(), params.tools.is_some()) {
            return Err(ClientRequestError::NotSupported(missing));
        }
        let mut params = params;
        let Some(task) = self.current_task() else {
            return Ok(self.peer.request::<CreateMessageRequest>(params, self.options()).await?);
        };
        relate(&mut params.meta, &task.id);
        Ok(task.waiting_for_input(self.peer.request::<CreateMessageRequest>(params, self.options())).await?)
    }

    /// [`create_message`](Self::create_message) whose input is named `key` in a 2026-07-28
    /// round trip (in a session, the same as `create_message`).
    pub async fn create_message_as(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ClientRequestError> {
        if let Some(answer) =
            self.ask_task(Some(key), "sampling", "sampling", CreateMessageRequest::METHOD, &params).await
        {
            return answer;
        }
        match &self.input_rounds {
            Some(rounds) => self.ask(rounds, key, "sampling", CreateMessageRequest::METHOD, &params),
            None => self.create_message(params).await,
        }
    }

    /// Asks the client's user for input (`elicitation/create`, form or URL mode) with params
    /// built by hand; [`elicit`](Self::elicit) derives a form from a type, and
    /// [`elicit_url`](Self::elicit_url) asks for a URL visit. A round trip for 2026-07-28
    /// requests, like [`create_message`](Self::create_message) (keys `elicitation-1`, ...).
    pub async fn elicit_raw(&self, params: ElicitRequestParams) -> Result<ElicitResult, ClientRequestError> {
        if let Some(answer) = self.ask_task(None, "elicitation", "elicitation", ElicitRequest::METHOD, &params).await {
            return answer;
        }
        if let Some(rounds) = &self.input_rounds {
            let key = rounds.next_key("elicitation");
            return self.ask(rounds, &key, "elicitation", ElicitRequest::METHOD, &params);
        }
        self.refuse_without_rounds("elicitation")?;
        let caps = self.client_capabilities();
        let url = matches!(params, ElicitRequestParams::ElicitRequestURL(_));
        if let Some(missing) = elicitation_missing(caps.elicitation.as_ref(), url) {
            return Err(ClientRequestError::NotSupported(missing));
        }
        let mut params = params;
        let Some(task) = self.current_task() else {
            return Ok(self.peer.request::<ElicitRequest>(params, self.options()).await?);
        };
        match &mut params {
            ElicitRequestParams::ElicitRequestForm(p) => relate(&mut p.meta, &task.id),
            ElicitRequestParams::ElicitRequestURL(p) => relate(&mut p.meta, &task.id),
        }
        Ok(task.waiting_for_input(self.peer.request::<ElicitRequest>(params, self.options())).await?)
    }

    /// [`elicit_raw`](Self::elicit_raw) whose input is named `key` in a 2026-07-28 round trip.
    pub async fn elicit_raw_as(
        &self,
        key: &str,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, ClientRequestError> {
        if let Some(answer) =
            self.ask_task(Some(key), "elicitation", "elicitation", ElicitRequest::METHOD, &params).await
        {
            return answer;
        }
        match &self.input_rounds {
            Some(rounds) => self.ask(rounds, key, "elicitation", ElicitRequest::METHOD, &params),
            None => self.elicit_raw(params).await,
        }
    }

    /// Asks the client for its roots (`roots/list`). A round trip for 2026-07-28 requests
    /// (keys `roots-1`, ...).
    pub async fn list_roots(&self) -> Result<ListRootsResult, ClientRequestError> {
        let empty = serde_json::json!({});
        if let Some(answer) = self.ask_task(None, "roots", "roots", ListRootsRequest::METHOD, &empty).await {
            return answer;
        }
        if let Some(rounds) = &self.input_rounds {
            let key = rounds.next_key("roots");
            return self.ask(rounds, &key, "roots", ListRootsRequest::METHOD, &serde_json::json!({}));
        }
        self.refuse_without_rounds("roots")?;
        if self.client_capabilities().roots.is_none() {
            return Err(ClientRequestError::NotSupported("roots"));
        }
        Ok(self.peer.request::<ListRootsRequest>(Default::default(), self.options()).await?)
    }

    /// [`list_roots`](Self::list_roots) whose input is named `key` in a 2026-07-28 round trip.
    pub async fn list_roots_as(&self, key: &str) -> Result<ListRootsResult, ClientRequestError> {
        let empty = serde_json::json!({});
        if let Some(answer) = self.ask_task(Some(key), "roots", "roots", ListRootsRequest::METHOD, &empty).await {
            return answer;
        }
        match &self.input_rounds {
            Some(rounds) => self.ask(rounds, key, "roots", ListRootsRequest::METHOD, &serde_json::json!({})),
            None => self.list_roots().await,
        }
    }

    /// Sends the custom request `R` (a method outside the protocol, see
    /// [`CustomRequest`](mcp_types::CustomRequest)) to the client, on behalf of this request
    /// (ended if it is cancelled), and decodes its result. No capability is checked: declare
    /// and check the client's `experimental` or `extensions` entry as your method needs. A
    /// 2026-07-28 client gets no requests from the server:
    /// [`ClientRequestError::NoRequestsInRevision`].
    pub async fn request<R: mcp_types::CustomRequest>(
        &self,
        params: R::Params,
    ) -> Result<R::Result, ClientRequestError> {
        self.refuse_request(R::METHOD)?;
        Ok(self.peer.request_custom::<R>(&params, self.options()).await?)
    }

    /// Sends the custom request `method` with `params` as JSON, and returns its result as JSON.
    /// As [`request`](Self::request) otherwise.
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<serde_json::Value>,
    ) -> Result<serde_json::Value, ClientRequestError> {
        self.refuse_request(method)?;
        let call = self.peer.request_raw(
            method,
            params.as_ref().map(|p| p as &dyn mcp_jsonrpc::message::Body),
            self.options(),
        );
        let raw = call.await?;
        serde_json::from_str(raw.get()).map_err(|source| CallError::Decode { method: method.to_owned(), source }.into())
    }

    /// Sends the custom notification `N` to the client, on behalf of this request (in
    /// 2026-07-28 over HTTP, on its response stream).
    pub async fn notify<N: mcp_types::CustomNotification>(&self, params: N::Params) -> Result<(), ClientRequestError> {
        Ok(self.peer.notify_custom::<N>(&params).await?)
    }

    /// Sends the notification `method` with `params` as JSON, as [`notify`](Self::notify).
    pub async fn notify_raw(&self, method: &str, params: Option<serde_json::Value>) -> Result<(), ClientRequestError> {
        let send = self.peer.notify_raw(method, params.as_ref().map(|p| p as &dyn mcp_jsonrpc::message::Body));
        Ok(send.await?)
    }

    /// A request to the client of a revision that has none (2026-07-28) is refused.
    fn refuse_request(&self, method: &str) -> Result<(), ClientRequestError> {
        if self.version.is_stateless() {
            return Err(ClientRequestError::NoRequestsInRevision { method: method.to_owned(), version: self.version });
        }
        Ok(())
    }

    /// A 2026-07-28 request without round trips (see [`ClientRequestError::NotInThisRequest`])
    /// cannot fall through to a request to the client.
    fn refuse_without_rounds(&self, capability: &'static str) -> Result<(), ClientRequestError> {
        if self.version.is_stateless() {
            return Err(ClientRequestError::NotInThisRequest(capability));
        }
        Ok(())
    }

    /// One input of an input-required round trip: the client's answer, or why there is none.
    fn ask<P: mcp_types::WireSerialize, R: serde::de::DeserializeOwned>(
        &self,
        rounds: &crate::stateless::InputRounds,
        key: &str,
        capability: &'static str,
        method: &str,
        params: &P,
    ) -> Result<R, ClientRequestError> {
        // As text: an elicitation form keeps its fields' order on the wire.
        let params = mcp_types::to_string_for(params, self.version)
            .map_err(|e| ClientRequestError::InvalidInput(format!("cannot encode the input request: {e}")))?;
        match rounds.ask(key, capability, method, &params) {
            crate::stateless::Asked::Answer(answer) => serde_json::from_value(answer)
                .map_err(|e| ClientRequestError::InvalidInput(format!("input `{key}`: {e}"))),
            crate::stateless::Asked::Pending => Err(ClientRequestError::InputRequired),
            crate::stateless::Asked::Missing => Err(ClientRequestError::NotSupported(capability)),
        }
    }

    /// Requests to the client made on behalf of this request end when it is cancelled (and,
    /// feature `opentelemetry`, carry the trace context of the current span).
    fn options(&self) -> CallOptions {
        let options = CallOptions::default().cancel_on(self.cancel.clone());
        #[cfg(feature = "opentelemetry")]
        let options = crate::trace::with_trace_context(options);
        options
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

/// The client capability an input request of kind `capability` (`sampling`, `elicitation`,
/// `roots`) with these params needs and `caps` lacks: what both the input-required round trips
/// and the input requests of a 2026-07-28 task check before asking.
pub(crate) fn input_missing(
    caps: &ClientCapabilities,
    capability: &str,
    params: &serde_json::Value,
) -> Option<&'static str> {
    match capability {
        "sampling" => sampling_missing(caps.sampling.as_ref(), params.get("tools").is_some_and(|t| !t.is_null())),
        "elicitation" => elicitation_missing(
            caps.elicitation.as_ref(),
            params.get("mode").and_then(serde_json::Value::as_str) == Some("url"),
        ),
        "roots" => caps.roots.is_none().then_some("roots"),
        _ => None,
    }
}

/// The client capability a sampling request needs and the client did not declare: `sampling`,
/// or `sampling.tools` for a request that offers tools (2025-11-25: a server MUST NOT send
/// tools without it).
pub(crate) fn sampling_missing(
    sampling: Option<&mcp_types::ClientCapabilitiesSampling>,
    with_tools: bool,
) -> Option<&'static str> {
    match sampling {
        None => Some("sampling"),
        Some(s) if with_tools && s.tools.is_none() => Some("sampling.tools"),
        Some(_) => None,
    }
}

/// The client capability an elicitation needs and the client did not declare: `elicitation`,
/// `elicitation.url` for URL mode, or `elicitation.form` for form mode from a client that
/// declared URL mode only (an empty `elicitation` object means form mode, as it did before
/// modes existed).
pub(crate) fn elicitation_missing(
    elicitation: Option<&mcp_types::ClientCapabilitiesElicitation>,
    url: bool,
) -> Option<&'static str> {
    let Some(e) = elicitation else { return Some("elicitation") };
    if url {
        e.url.is_none().then_some("elicitation.url")
    } else {
        (e.form.is_none() && e.url.is_some()).then_some("elicitation.form")
    }
}

/// Adds the `io.modelcontextprotocol/related-task` member naming task `id` to a request's
/// `_meta`: a request a task needs says so.
fn relate(meta: &mut Option<mcp_types::RequestMetaObject>, id: &str) {
    meta.get_or_insert_with(Default::default)
        .extra
        .insert(mcp_types::meta::RELATED_TASK.to_owned(), crate::tasks::related_task(id));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(v: serde_json::Value) -> ClientCapabilities {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn sub_capabilities_are_checked() {
        let sampling = |v| caps(v).sampling;
        assert_eq!(sampling_missing(None, false), Some("sampling"));
        assert_eq!(sampling_missing(sampling(serde_json::json!({"sampling": {}})).as_ref(), false), None);
        assert_eq!(
            sampling_missing(sampling(serde_json::json!({"sampling": {}})).as_ref(), true),
            Some("sampling.tools")
        );
        assert_eq!(sampling_missing(sampling(serde_json::json!({"sampling": {"tools": {}}})).as_ref(), true), None);
        let elicitation = |v| caps(v).elicitation;
        assert_eq!(elicitation_missing(None, false), Some("elicitation"));
        let empty = elicitation(serde_json::json!({"elicitation": {}}));
        assert_eq!(elicitation_missing(empty.as_ref(), false), None, "empty means form mode");
        assert_eq!(elicitation_missing(empty.as_ref(), true), Some("elicitation.url"));
        let url = elicitation(serde_json::json!({"elicitation": {"url": {}}}));
        assert_eq!(elicitation_missing(url.as_ref(), false), Some("elicitation.form"));
        assert_eq!(elicitation_missing(url.as_ref(), true), None);
        let both = elicitation(serde_json::json!({"elicitation": {"form": {}, "url": {}}}));
        assert_eq!(elicitation_missing(both.as_ref(), false), None);
        let required = |c| mcp_types::ErrorObject::missing_required_client_capability(c).data.unwrap_or_default();
        assert_eq!(required("sampling.tools")["requiredCapabilities"], serde_json::json!({"sampling": {"tools": {}}}));
        assert_eq!(required("roots")["requiredCapabilities"], serde_json::json!({"roots": {}}));
    }
}
