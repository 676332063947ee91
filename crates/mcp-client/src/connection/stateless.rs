//! A connection of the stateless revision (2026-07-28): every request with its `_meta`, the
//! input a server asks for answered and the request sent again, list pages from the cache, and
//! the subscriptions the client keeps.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use mcp_jsonrpc::{CallError, CallOptions, Peer};
use mcp_types::{DiscoverResult, JsonObject, PaginatedRequestParams, Request, ServerCapabilities, SubscriptionFilter};
use serde_json::Value;

use crate::cache::ListCache;
use crate::error::{ClientError, Violation};
use crate::listen::{self, Registry, Subscription};
use crate::serve::handlers::InputHandlers;
use crate::serve::input::input_responses;
use crate::wire::stateless::{
    Answer, Json, RequestMeta, STATELESS, decode_result, listen_params, page_params, params_object, supported_versions,
};
use crate::wire::tasks::declare_tasks;

/// The requests a server may answer with `input_required`.
pub(crate) const INPUT_METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// Sends a stateless request: `_meta` filled in, a rejected revision retried once when the
/// server lists ours, `input_required` answered (up to `max_rounds` retries). Returns the
/// complete result, as JSON.
///
/// With `tasks`, the request declares the tasks extension in its client capabilities, and a
/// task (`resultType: "task"`) is a result too.
pub(crate) async fn call<R: Request>(
    peer: &Peer,
    meta: &RequestMeta,
    handlers: &InputHandlers,
    max_rounds: usize,
    params: R::Params,
    mut options: CallOptions,
    tasks: bool,
) -> Result<Value, ClientError> {
    // A layer may send the call again: the input answered in earlier attempts is given again.
    crate::serve::input::new_attempt();
    let mut base = params_object(&params)?;
    meta.apply(&mut base, STATELESS.as_str());
    if tasks {
        declare_tasks(&mut base);
    }
    options.hints = meta.hints(R::METHOD, &base);
    let mut params = base.clone();
    let mut rounds = 0usize;
    let mut version_retried = false;
    loop {
        let result = match peer.request::<Json<R, Answer>>(params.clone(), options.clone()).await {
            Ok(result) => result,
            Err(CallError::Remote(e))
                if !version_retried
                    && supported_versions(&e).is_some_and(|v| v.iter().any(|v| v == STATELESS.as_str())) =>
            {
                // The server says it speaks our revision after all (a stale or overeager
                // check): once more, as the specification asks.
                tracing::debug!(method = R::METHOD, "the server rejected the revision but lists it; retrying once");
                version_retried = true;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        // No `resultType` means complete (servers of earlier revisions).
        match result.value.get("resultType").and_then(Value::as_str) {
            None | Some("complete") => return Ok(result.into_value()),
            Some("task") if tasks => return Ok(result.into_value()),
            Some("input_required") if INPUT_METHODS.contains(&R::METHOD) => {
                if rounds >= max_rounds {
                    return Err(ClientError::TooManyRounds { method: R::METHOD.to_owned(), rounds });
                }
                rounds += 1;
                params = base.clone();
                fulfil(R::METHOD, &result, handlers, &mut params).await?;
            }
            Some(other) => {
                return Err(ClientError::protocol(R::METHOD, Violation::UnknownResultType(other.to_owned())));
            }
        }
    }
}

/// Answers the input requests of an `input_required` result; puts `inputResponses` and the
/// exact `requestState` (if any) into the params of the retry.
async fn fulfil(
    method: &str,
    result: &Answer,
    handlers: &InputHandlers,
    params: &mut JsonObject,
) -> Result<(), ClientError> {
    let malformed = |field| ClientError::protocol(method, Violation::MalformedInputRequired(field));
    let responses = input_responses(method, result.input_requests.as_deref(), handlers, None).await?;
    if !responses.is_empty() {
        params.insert("inputResponses".to_owned(), Value::Object(responses));
    }
    match result.value.get("requestState") {
        Some(Value::String(state)) => {
            params.insert("requestState".to_owned(), Value::String(state.clone()));
        }
        Some(Value::Null) | None => {}
        Some(_) => return Err(malformed("requestState")),
    }
    Ok(())
}

/// The subscription the client keeps: the resources subscribed with `Client::subscribe` and
/// the list changes, delivered as events.
#[derive(Default)]
pub(crate) struct Background {
    uris: BTreeSet<String>,
    pub(crate) subscription: Option<listen::Opened>,
}

/// A connection of the stateless revision.
pub(crate) struct StatelessConnection {
    /// The server's answer to `server/discover`.
    pub(crate) discovered: DiscoverResult,
    pub(crate) meta: RequestMeta,
    pub(crate) handlers: InputHandlers,
    pub(crate) max_rounds: usize,
    /// List pages, while their `ttlMs` says they are fresh (`ClientBuilder::cache_lists`).
    pub(crate) cache: Option<Arc<ListCache>>,
    /// The open subscriptions, to which the server's notifications are routed.
    pub(crate) registry: Arc<Registry>,
    pub(crate) background: tokio::sync::Mutex<Background>,
    /// Whether the background subscription asks for list changes (`on_event` was set).
    pub(crate) watch_list_changes: bool,
    /// How long the server may take to acknowledge a subscription.
    pub(crate) ack_timeout: Duration,
    /// The bound of a subscription's queue.
    pub(crate) events_capacity: usize,
}

impl StatelessConnection {
    /// Sends a typed request (see [`call`]) and decodes its result.
    pub(crate) async fn call<R: Request>(
        &self,
        peer: &Peer,
        params: R::Params,
        options: CallOptions,
    ) -> Result<R::Result, ClientError> {
        let value = call::<R>(peer, &self.meta, &self.handlers, self.max_rounds, params, options, false).await?;
        decode_result::<R>(value)
    }

    /// Sends a custom request (a method outside the protocol) with the per-request `_meta`;
    /// its result as JSON. Custom methods have no input-required round trips: a result is
    /// returned as it came.
    pub(crate) async fn call_raw(
        &self,
        peer: &Peer,
        method: &str,
        params: Option<Value>,
        mut options: CallOptions,
    ) -> Result<Value, ClientError> {
        let mut params = match params {
            None => JsonObject::new(),
            Some(Value::Object(params)) => params,
            Some(other) => {
                let e = format!("params of a 2026-07-28 request must be a JSON object (for its `_meta`), not {other}");
                return Err(ClientError::Encode(serde::ser::Error::custom(e)));
            }
        };
        self.meta.apply(&mut params, STATELESS.as_str());
        options.hints = self.meta.hints(method, &params);
        let raw = peer.request_raw(method, Some(&params), options).await?;
        serde_json::from_str(raw.get()).map_err(|e| ClientError::decode(method, e))
    }

    /// Sends a request that declares the tasks extension; its result as JSON (a task, or the
    /// request's own result).
    pub(crate) async fn call_with_tasks<R: Request>(
        &self,
        peer: &Peer,
        params: R::Params,
        options: CallOptions,
    ) -> Result<Value, ClientError> {
        call::<R>(peer, &self.meta, &self.handlers, self.max_rounds, params, options, true).await
    }

    /// A list page, from the cache when it is fresh there.
    pub(crate) async fn list_page<R>(
        &self,
        peer: &Peer,
        cursor: Option<String>,
        options: CallOptions,
    ) -> Result<R::Result, ClientError>
    where
        R: Request<Params = PaginatedRequestParams>,
    {
        let Some(cache) = &self.cache else {
            return self.call::<R>(peer, page_params(cursor), options).await;
        };
        if let Some(page) = cache.get(R::METHOD, &cursor) {
            return decode_result::<R>(page);
        }
        let params = page_params(cursor.clone());
        let page = call::<R>(peer, &self.meta, &self.handlers, self.max_rounds, params, options, false).await?;
        cache.put(R::METHOD, cursor, &page);
        decode_result::<R>(page)
    }

    /// Opens the background subscription for the list changes the server declares, when
    /// `on_event` was set (at connection; a failure is only logged).
    pub(crate) async fn watch_list_changes(&self, peer: &Peer, caps: &ServerCapabilities) {
        if self.watch_list_changes {
            let mut background = self.background.lock().await;
            if let Err(e) = self.reopen_background(peer, caps, &mut background).await {
                tracing::warn!(error = %e, "cannot subscribe to the server's list changes");
            }
        }
    }

    /// Adds a resource to the background subscription (`subscribe`) or removes it, and opens
    /// the subscription anew if that changed it (a resource not added when that fails).
    pub(crate) async fn watch_resource(
        &self,
        peer: &Peer,
        caps: &ServerCapabilities,
        uri: &str,
        subscribe: bool,
    ) -> Result<(), ClientError> {
        let mut background = self.background.lock().await;
        let changed = if subscribe { background.uris.insert(uri.to_owned()) } else { background.uris.remove(uri) };
        if !changed {
            return Ok(());
        }
        let reopened = self.reopen_background(peer, caps, &mut background).await;
        if reopened.is_err() && subscribe {
            background.uris.remove(uri);
        }
        reopened
    }

    /// Replaces the background subscription by one for the current resources (and the list
    /// changes the server declares, when `on_event` was set); none when there is nothing to
    /// listen to.
    async fn reopen_background(
        &self,
        peer: &Peer,
        caps: &ServerCapabilities,
        background: &mut Background,
    ) -> Result<(), ClientError> {
        let mut filter = SubscriptionFilter::default();
        if self.watch_list_changes {
            let declared = |flag: Option<bool>| (flag == Some(true)).then_some(true);
            filter.tools_list_changed = caps.tools.as_ref().and_then(|t| declared(t.list_changed));
            filter.prompts_list_changed = caps.prompts.as_ref().and_then(|p| declared(p.list_changed));
            filter.resources_list_changed = caps.resources.as_ref().and_then(|r| declared(r.list_changed));
        }
        if !background.uris.is_empty() {
            filter.resource_subscriptions = Some(background.uris.iter().cloned().collect());
        }
        if filter == SubscriptionFilter::default() {
            background.subscription = None;
            return Ok(());
        }
        let opened = listen::open(
            peer,
            &self.meta,
            &self.registry,
            listen_params(&filter),
            false,
            listen::Sink::Events,
            self.ack_timeout,
        )
        .await?;
        // The new one is acknowledged: the old one can go (dropping it closes it).
        background.subscription = Some(opened);
        Ok(())
    }

    /// Opens a `subscriptions/listen` stream of its own for `filter`.
    pub(crate) async fn listen(&self, peer: &Peer, filter: &SubscriptionFilter) -> Result<Subscription, ClientError> {
        self.listen_with(peer, listen_params(filter), false).await
    }

    /// Opens a `subscriptions/listen` stream of its own with `params` (declaring the tasks
    /// extension with `tasks`).
    pub(crate) async fn listen_with(
        &self,
        peer: &Peer,
        params: JsonObject,
        tasks: bool,
    ) -> Result<Subscription, ClientError> {
        let (tx, rx) = tokio::sync::mpsc::channel(self.events_capacity);
        let missed = Arc::new(AtomicU64::new(0));
        let sink = listen::Sink::Channel { tx, missed: missed.clone() };
        let opened = listen::open(peer, &self.meta, &self.registry, params, tasks, sink, self.ack_timeout).await?;
        Ok(Subscription::new(opened, rx, missed))
    }
}
