//! Requests to the client on behalf of a request: sampling, elicitation and roots (in a
//! session a request to the client, for a 2026-07-28 request an input-required round trip,
//! inside a task of the 2026-07-28 extension an input request of the task), custom requests
//! and notifications.

use mcp_jsonrpc::{CallError, CallOptions};
use mcp_types::{
    CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ListRootsRequest, ListRootsResult, Request as _,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::Context;
use super::capability::{elicitation_missing, input_missing, sampling_missing};
use super::rounds::{Asked, InputRounds};
use crate::error::ClientRequestError;
use crate::middleware::outgoing::{self, AskInput, OutgoingReply, OutgoingRequest, OutgoingRoute, Via};
use crate::tasks::running::TaskLink;
use crate::tasks::store::TaskStoreError;

impl Context {
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
        let Some(layers) = &self.layers else {
            return Some(task_input(task, self, &key, capability, method, params).await.and_then(|answer| {
                serde_json::from_value(answer)
                    .map_err(|e| ClientRequestError::InvalidInput(format!("input `{key}`: {e}")))
            }));
        };
        let raw = match serde_json::value::to_raw_value(&params) {
            Ok(raw) => raw,
            Err(e) => return Some(Err(ClientRequestError::InvalidInput(e.to_string()))),
        };
        let input = TaskInput(task, self, capability);
        let (route, via) = (OutgoingRoute::TaskInput, Via::Input(&input));
        Some(outgoing::request(layers, &self.peer, self.version, route, Some(&key), method, Some(raw), via).await)
    }

    /// Sends the request `R` to the client (through the server's middleware, if any).
    async fn call_client<R: mcp_types::Request>(&self, params: R::Params) -> Result<R::Result, ClientRequestError> {
        let Some(layers) = &self.layers else {
            return Ok(self.peer.request::<R>(params, self.options()).await?);
        };
        let version = self.peer.protocol_version();
        if !R::REVISIONS.contains(version) {
            return Err(CallError::NotInRevision { method: R::METHOD, version }.into());
        }
        let raw = outgoing::encode(&params, version)?;
        drop(params);
        let via = Via::Peer(self.options());
        outgoing::request(layers, &self.peer, self.version, OutgoingRoute::Request, None, R::METHOD, Some(raw), via)
            .await
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
            return self.ask(rounds, &key, "sampling", CreateMessageRequest::METHOD, &params).await;
        }
        self.refuse_without_rounds("sampling")?;
        let caps = self.client_capabilities();
        if let Some(missing) = sampling_missing(caps.sampling.as_ref(), params.tools.is_some()) {
            return Err(ClientRequestError::NotSupported(missing));
        }
        let mut params = params;
        let Some(task) = self.current_task() else {
            return self.call_client::<CreateMessageRequest>(params).await;
        };
        relate(&mut params.meta, &task.id);
        task.waiting_for_input(self.call_client::<CreateMessageRequest>(params)).await
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
            Some(rounds) => self.ask(rounds, key, "sampling", CreateMessageRequest::METHOD, &params).await,
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
            return self.ask(rounds, &key, "elicitation", ElicitRequest::METHOD, &params).await;
        }
        self.refuse_without_rounds("elicitation")?;
        let caps = self.client_capabilities();
        let url = matches!(params, ElicitRequestParams::ElicitRequestURL(_));
        if let Some(missing) = elicitation_missing(caps.elicitation.as_ref(), url) {
            return Err(ClientRequestError::NotSupported(missing));
        }
        let mut params = params;
        let Some(task) = self.current_task() else {
            return self.call_client::<ElicitRequest>(params).await;
        };
        match &mut params {
            ElicitRequestParams::ElicitRequestForm(p) => relate(&mut p.meta, &task.id),
            ElicitRequestParams::ElicitRequestURL(p) => relate(&mut p.meta, &task.id),
        }
        task.waiting_for_input(self.call_client::<ElicitRequest>(params)).await
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
            Some(rounds) => self.ask(rounds, key, "elicitation", ElicitRequest::METHOD, &params).await,
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
            return self.ask(rounds, &key, "roots", ListRootsRequest::METHOD, &serde_json::json!({})).await;
        }
        self.refuse_without_rounds("roots")?;
        if self.client_capabilities().roots.is_none() {
            return Err(ClientRequestError::NotSupported("roots"));
        }
        self.call_client::<ListRootsRequest>(Default::default()).await
    }

    /// [`list_roots`](Self::list_roots) whose input is named `key` in a 2026-07-28 round trip.
    pub async fn list_roots_as(&self, key: &str) -> Result<ListRootsResult, ClientRequestError> {
        let empty = serde_json::json!({});
        if let Some(answer) = self.ask_task(Some(key), "roots", "roots", ListRootsRequest::METHOD, &empty).await {
            return answer;
        }
        match &self.input_rounds {
            Some(rounds) => self.ask(rounds, key, "roots", ListRootsRequest::METHOD, &serde_json::json!({})).await,
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
        let Some(layers) = &self.layers else {
            return Ok(self.peer.request_custom::<R>(&params, self.options()).await?);
        };
        let raw = serde_json::value::to_raw_value(&params).map_err(CallError::Encode)?;
        drop(params);
        let (route, via) = (OutgoingRoute::Request, Via::Peer(self.options()));
        outgoing::request(layers, &self.peer, self.version, route, None, R::METHOD, Some(raw), via).await
    }

    /// Sends the custom request `method` with `params` as JSON, and returns its result as JSON.
    /// As [`request`](Self::request) otherwise.
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<serde_json::Value>,
    ) -> Result<serde_json::Value, ClientRequestError> {
        self.refuse_request(method)?;
        if let Some(layers) = &self.layers {
            let raw = params.as_ref().map(serde_json::value::to_raw_value).transpose().map_err(CallError::Encode)?;
            let (route, via) = (OutgoingRoute::Request, Via::Peer(self.options()));
            return outgoing::request(layers, &self.peer, self.version, route, None, method, raw, via).await;
        }
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
        Ok(outgoing::notify_raw(self.layers.as_ref(), &self.peer, N::METHOD, Some(&params)).await?)
    }

    /// Sends the notification `method` with `params` as JSON, as [`notify`](Self::notify).
    pub async fn notify_raw(&self, method: &str, params: Option<serde_json::Value>) -> Result<(), ClientRequestError> {
        let params = params.as_ref().map(|p| p as &dyn mcp_jsonrpc::message::Body);
        Ok(outgoing::notify_raw(self.layers.as_ref(), &self.peer, method, params).await?)
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
    async fn ask<P: mcp_types::WireSerialize, R: serde::de::DeserializeOwned>(
        &self,
        rounds: &InputRounds,
        key: &str,
        capability: &'static str,
        method: &str,
        params: &P,
    ) -> Result<R, ClientRequestError> {
        // As text: an elicitation form keeps its fields' order on the wire.
        let params = mcp_types::to_string_for(params, self.version)
            .map_err(|e| ClientRequestError::InvalidInput(format!("cannot encode the input request: {e}")))?;
        if let Some(layers) = &self.layers {
            let raw = RawValue::from_string(params).map_err(|e| ClientRequestError::InvalidInput(e.to_string()))?;
            let input = RoundInput(rounds, capability);
            let (route, via) = (OutgoingRoute::InputRequired, Via::Input(&input));
            return outgoing::request(layers, &self.peer, self.version, route, Some(key), method, Some(raw), via).await;
        }
        match rounds.ask(key, capability, method, &params) {
            Asked::Answer(answer) => serde_json::from_value(answer)
                .map_err(|e| ClientRequestError::InvalidInput(format!("input `{key}`: {e}"))),
            Asked::Pending => Err(ClientRequestError::InputRequired),
            Asked::Missing => Err(ClientRequestError::NotSupported(capability)),
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

/// Adds the `io.modelcontextprotocol/related-task` member naming task `id` to a request's
/// `_meta`: a request a task needs says so.
fn relate(meta: &mut Option<mcp_types::RequestMetaObject>, id: &str) {
    meta.get_or_insert_with(Default::default)
        .extra
        .insert(mcp_types::meta::RELATED_TASK.to_owned(), crate::tasks::related_task(id));
}

/// An input of a 2026-07-28 round trip (its rounds, the capability it needs), asked at the end
/// of the server's middleware.
struct RoundInput<'a>(&'a InputRounds, &'static str);

impl AskInput for RoundInput<'_> {
    fn ask<'a>(&'a self, req: OutgoingRequest<'a>) -> futures_util::future::BoxFuture<'a, OutgoingReply> {
        Box::pin(async move {
            let RoundInput(rounds, capability) = *self;
            let key = req.input_key().unwrap_or_default();
            match rounds.ask(key, capability, req.method(), req.raw_params().map_or("{}", RawValue::get)) {
                Asked::Answer(answer) => outgoing::raw(&answer),
                Asked::Pending => Err(ClientRequestError::InputRequired),
                Asked::Missing => Err(ClientRequestError::NotSupported(capability)),
            }
        })
    }
}

/// An input request of an extension task (its link, the handler's context, the capability it
/// needs), asked at the end of the server's middleware.
struct TaskInput<'a>(&'a TaskLink, &'a Context, &'static str);

impl AskInput for TaskInput<'_> {
    fn ask<'a>(&'a self, req: OutgoingRequest<'a>) -> futures_util::future::BoxFuture<'a, OutgoingReply> {
        Box::pin(async move {
            let TaskInput(link, ctx, capability) = *self;
            let value = match req.raw_params() {
                Some(p) => {
                    serde_json::from_str(p.get()).map_err(|e| ClientRequestError::InvalidInput(e.to_string()))?
                }
                None => json!({}),
            };
            let key = req.input_key().unwrap_or_default();
            outgoing::raw(&task_input(link, ctx, key, capability, req.method(), value).await?)
        })
    }
}

/// Asks the client for input through an extension task (see [`TaskLink::ask_input`]).
async fn task_input(
    link: &TaskLink,
    ctx: &Context,
    key: &str,
    capability: &'static str,
    method: &str,
    params: Value,
) -> Result<Value, ClientRequestError> {
    let caps = ctx.session.client_capabilities();
    if let Some(missing) = input_missing(&caps, capability, &params) {
        return Err(ClientRequestError::NotSupported(missing));
    }
    let mut request = json!({"method": method});
    if !params.as_object().is_some_and(Map::is_empty) {
        request["params"] = params;
    }
    match link.ask_input(key, request, &ctx.cancel).await {
        Ok(Some(answer)) => Ok(answer),
        Ok(None) => Err(ClientRequestError::Call(mcp_jsonrpc::CallError::Cancelled)),
        Err(TaskStoreError::TooManyInputs(n)) => {
            Err(ClientRequestError::InvalidInput(format!("too many outstanding input requests ({n})")))
        }
        Err(e) => Err(ClientRequestError::InvalidInput(e.to_string())),
    }
}
