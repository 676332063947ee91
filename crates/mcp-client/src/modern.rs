//! The stateless revision (2026-07-28): the per-request `_meta`, era negotiation with
//! `server/discover`, result types and multi round-trip requests (MRTR).

use mcp_jsonrpc::sync::MutexExt as _;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use mcp_jsonrpc::{CallError, CallOptions, FrameHints, Peer};
use mcp_types::{
    ClientCapabilities, CreateMessageRequestParams, Direction, DiscoverResult, ElicitRequestParams, ErrorObject,
    Implementation, JsonObject, ListRootsResult, LoggingLevel, ProtocolVersion, Request, Revisions,
};
use serde_json::Value;

use crate::ClientError;
use crate::handlers::{ElicitationHandler, RootsHandler, SamplingHandler, apply_elicitation_defaults};
use crate::tool_headers::HeaderRules;

/// The stateless revision this client speaks.
pub(crate) const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;

/// `_meta` keys of the per-request protocol fields.
pub(crate) const META_PROTOCOL_VERSION: &str = mcp_types::meta::PROTOCOL_VERSION;
pub(crate) const META_CLIENT_INFO: &str = mcp_types::meta::CLIENT_INFO;
pub(crate) const META_CLIENT_CAPABILITIES: &str = mcp_types::meta::CLIENT_CAPABILITIES;
pub(crate) const META_LOG_LEVEL: &str = mcp_types::meta::LOG_LEVEL;
pub(crate) const META_SUBSCRIPTION_ID: &str = mcp_types::meta::SUBSCRIPTION_ID;

/// `UnsupportedProtocolVersion`: the server does not speak the revision of the request.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = mcp_types::ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.code();

/// The requests a server may answer with `input_required`.
const MRTR_METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// A request sent as JSON: the params encoded for 2026-07-28 with the `_meta` filled in, the
/// result read as JSON to look at its `resultType` before decoding it.
pub(crate) struct Json<R>(PhantomData<fn() -> R>);

impl<R: Request> Request for Json<R> {
    const METHOD: &'static str = R::METHOD;
    const DIRECTION: Direction = R::DIRECTION;
    const REVISIONS: Revisions = R::REVISIONS;
    type Params = JsonObject;
    type Result = Value;
}

/// The handlers that answer a server's input requests.
#[derive(Clone, Default)]
pub(crate) struct InputHandlers {
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) roots: Option<Arc<dyn RootsHandler>>,
    pub(crate) apply_defaults: bool,
    pub(crate) elicitation_url: bool,
}

/// The most input requests one `input_required` result may carry: each may prompt the user
/// or run a model, and a server's result must not make that unbounded.
const MAX_INPUT_REQUESTS: usize = 16;

/// What every stateless request carries in its `_meta`.
#[derive(Debug)]
pub(crate) struct RequestMeta {
    pub(crate) info: Implementation,
    pub(crate) capabilities: ClientCapabilities,
    /// Set by `set_logging_level`: the server logs for each request at this level.
    pub(crate) log_level: std::sync::Mutex<Option<LoggingLevel>>,
    /// Over HTTP: the headers of each request, handed to the transport.
    pub(crate) header_rules: Option<Arc<HeaderRules>>,
}

impl RequestMeta {
    /// The `_meta` protocol fields, merged into `params`.
    pub(crate) fn apply(&self, params: &mut JsonObject, version: &str) {
        let meta = params.entry("_meta").or_insert_with(|| Value::Object(JsonObject::new()));
        if !meta.is_object() {
            *meta = Value::Object(JsonObject::new());
        }
        let Value::Object(meta) = meta else { return };
        meta.insert(META_PROTOCOL_VERSION.to_owned(), Value::from(version));
        meta.insert(META_CLIENT_INFO.to_owned(), encode(&self.info));
        meta.insert(META_CLIENT_CAPABILITIES.to_owned(), encode(&self.capabilities));
        let level = self.log_level.lock_unpoisoned().clone();
        if let Some(level) = level {
            meta.insert(META_LOG_LEVEL.to_owned(), encode(&level));
        }
    }

    /// The transport's hints for a stateless request of `method` with `params` (over HTTP:
    /// its headers; `None` over other transports).
    pub(crate) fn hints(&self, method: &str, params: &JsonObject) -> Option<FrameHints> {
        self.header_rules.as_ref()?.hints(MODERN.as_str(), method, params)
    }
}

/// A value encoded for 2026-07-28 (`null` if it cannot be, which the generated types never do).
pub(crate) fn encode<T: mcp_types::WireSerialize + ?Sized>(value: &T) -> Value {
    mcp_types::to_value_for(value, MODERN).unwrap_or(Value::Null)
}

/// Params encoded for 2026-07-28, as an object.
pub(crate) fn params_object<T: mcp_types::WireSerialize>(params: &T) -> Result<JsonObject, ClientError> {
    match mcp_types::to_value_for(params, MODERN) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(Value::Null) => Ok(JsonObject::new()),
        Ok(other) => Err(ClientError::Local(format!("params must be a JSON object, not {other}"))),
        Err(e) => Err(ClientError::Local(format!("cannot encode the params: {e}"))),
    }
}

/// The `resultType` of a result; absent means complete (servers of earlier revisions).
fn result_type(result: &Value) -> Option<&str> {
    result.get("resultType").and_then(Value::as_str)
}

/// The versions of an `UnsupportedProtocolVersion` error, if it lists any.
pub(crate) fn supported_versions(error: &ErrorObject) -> Option<Vec<String>> {
    if error.code != UNSUPPORTED_PROTOCOL_VERSION {
        return None;
    }
    let list = error.data.as_ref()?.get("supported")?.as_array()?;
    let versions: Vec<String> = list.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect();
    (!versions.is_empty()).then_some(versions)
}

/// Sends a stateless request: `_meta` filled in, a rejected revision retried once when the
/// server lists ours, `input_required` answered (up to `max_rounds` retries). Returns the
/// complete result, as JSON.
pub(crate) async fn call<R: Request>(
    peer: &Peer,
    meta: &RequestMeta,
    handlers: &InputHandlers,
    max_rounds: usize,
    params: &R::Params,
    mut options: CallOptions,
) -> Result<Value, ClientError> {
    let mut base = params_object(params)?;
    meta.apply(&mut base, MODERN.as_str());
    options.hints = meta.hints(R::METHOD, &base);
    let mut params = base.clone();
    let mut rounds = 0usize;
    let mut version_retried = false;
    loop {
        let result = match peer.request::<Json<R>>(params.clone(), options.clone()).await {
            Ok(result) => result,
            Err(CallError::Remote(e))
                if !version_retried
                    && supported_versions(&e).is_some_and(|v| v.iter().any(|v| v == MODERN.as_str())) =>
            {
                // The server says it speaks our revision after all (a stale or overeager
                // check): once more, as the specification asks.
                tracing::debug!(method = R::METHOD, "the server rejected the revision but lists it; retrying once");
                version_retried = true;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        match result_type(&result) {
            None | Some("complete") => return Ok(result),
            Some("input_required") if MRTR_METHODS.contains(&R::METHOD) => {
                if rounds >= max_rounds {
                    return Err(ClientError::TooManyRounds { method: R::METHOD.to_owned(), rounds });
                }
                rounds += 1;
                params = base.clone();
                fulfil(&result, handlers, &mut params).await?;
            }
            Some(other) => {
                return Err(ClientError::Decode {
                    method: R::METHOD.to_owned(),
                    detail: format!("result type `{other}` is not one this client knows for `{}`", R::METHOD),
                });
            }
        }
    }
}

/// Answers the input requests of an `input_required` result; puts `inputResponses` and the
/// exact `requestState` (if any) into the params of the retry.
async fn fulfil(result: &Value, handlers: &InputHandlers, params: &mut JsonObject) -> Result<(), ClientError> {
    let requests = match result.get("inputRequests") {
        Some(Value::Object(m)) => m.clone(),
        Some(Value::Null) | None => JsonObject::new(),
        Some(other) => {
            return Err(ClientError::Decode {
                method: "input_required".to_owned(),
                detail: format!("`inputRequests` is not an object: {other}"),
            });
        }
    };
    if requests.len() > MAX_INPUT_REQUESTS {
        return Err(ClientError::Decode {
            method: "input_required".to_owned(),
            detail: format!(
                "{} input requests in one result; at most {MAX_INPUT_REQUESTS} are answered",
                requests.len()
            ),
        });
    }
    let mut responses = JsonObject::new();
    for (key, request) in requests {
        let method = request.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
        let raw_params = request.get("params").cloned().unwrap_or_else(|| Value::Object(JsonObject::new()));
        let response = answer(&method, raw_params, handlers).await?;
        responses.insert(key, response);
    }
    if !responses.is_empty() {
        params.insert("inputResponses".to_owned(), Value::Object(responses));
    }
    match result.get("requestState") {
        Some(Value::String(state)) => {
            params.insert("requestState".to_owned(), Value::String(state.clone()));
        }
        Some(Value::Null) | None => {}
        Some(other) => {
            return Err(ClientError::Decode {
                method: "input_required".to_owned(),
                detail: format!("`requestState` is not a string: {other}"),
            });
        }
    }
    Ok(())
}

/// Runs the handler for one input request; a handler that panics refuses it (-32603), as it
/// would in a session, instead of unwinding into the caller.
async fn answer(method: &str, params: Value, handlers: &InputHandlers) -> Result<Value, ClientError> {
    use futures_util::FutureExt as _;
    match std::panic::AssertUnwindSafe(run_handler(method, params, handlers)).catch_unwind().await {
        Ok(answered) => answered,
        Err(_) => Err(ClientError::Input {
            method: method.to_owned(),
            error: ErrorObject::internal_error(format!("the {method} handler panicked")),
        }),
    }
}

async fn run_handler(method: &str, params: Value, handlers: &InputHandlers) -> Result<Value, ClientError> {
    let bad = |e: serde_json::Error| ClientError::Decode { method: method.to_owned(), detail: e.to_string() };
    let refused = |error: ErrorObject| ClientError::Input { method: method.to_owned(), error };
    let missing = || ClientError::Input { method: method.to_owned(), error: ErrorObject::method_not_found(method) };
    match method {
        "elicitation/create" => {
            let h = handlers.elicitation.as_ref().ok_or_else(missing)?;
            let params: ElicitRequestParams = serde_json::from_value(params).map_err(bad)?;
            crate::client::check_elicitation_mode(&params, handlers.elicitation_url).map_err(refused)?;
            let mut result = h.elicit(params.clone()).await.map_err(refused)?;
            if handlers.apply_defaults {
                apply_elicitation_defaults(&params, &mut result);
            }
            Ok(encode(&result))
        }
        "sampling/createMessage" => {
            let h = handlers.sampling.as_ref().ok_or_else(missing)?;
            let params: CreateMessageRequestParams = serde_json::from_value(params).map_err(bad)?;
            Ok(encode(&h.create_message(params).await.map_err(refused)?))
        }
        "roots/list" => {
            let h = handlers.roots.as_ref().ok_or_else(missing)?;
            Ok(encode(&ListRootsResult::new(h.roots().await.map_err(refused)?)))
        }
        _ => Err(missing()),
    }
}

/// What `server/discover` told about the server.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    pub(crate) result: DiscoverResult,
    pub(crate) server_info: Implementation,
}

/// How the probe ended.
pub(crate) enum Probe {
    /// A 2026-07-28 server.
    Modern(Box<Discovered>),
    /// Not a 2026-07-28 server: use `initialize`.
    Legacy {
        /// What the probe got.
        why: String,
        /// Whether the server said it speaks only earlier revisions (a `DiscoverResult` or an
        /// `UnsupportedProtocolVersion` error without 2026-07-28), rather than failing in a
        /// way any server might (another error, no answer).
        conclusive: bool,
    },
}

/// Reads a `DiscoverResult` leniently: absent cache hints and result type take their defaults,
/// and `serverInfo` is read from `_meta` or, where some servers put it, the top level.
pub(crate) fn read_discover(value: Value) -> Option<Discovered> {
    let Value::Object(mut m) = value else { return None };
    m.entry("resultType").or_insert_with(|| Value::from("complete"));
    m.entry("cacheScope").or_insert_with(|| Value::from("private"));
    if !m.get("ttlMs").is_some_and(Value::is_i64) {
        m.insert("ttlMs".to_owned(), Value::from(0));
    }
    let top_info = m.get("serverInfo").cloned();
    let result: DiscoverResult = serde_json::from_value(Value::Object(m)).ok()?;
    let server_info = result
        .meta
        .as_ref()
        .and_then(|meta| meta.server_info.clone())
        .or_else(|| top_info.and_then(|v| serde_json::from_value(v).ok()))
        .unwrap_or_else(|| Implementation::new("unknown", "unknown"));
    Some(Discovered { result, server_info })
}

/// Whether a transport error is HTTP's refusal of the probe that a server of an earlier
/// revision gives (a status 4xx other than 401 and 403, without a JSON-RPC error body).
#[cfg(feature = "http")]
fn refused_by_earlier_server(e: &mcp_jsonrpc::TransportError) -> bool {
    use mcp_transport_http::client::{HttpErrorKind, HttpRequestError};
    let Some(e) = e.downcast_ref::<HttpRequestError>() else { return false };
    let status = e.status().map_or(0, |s| s.as_u16());
    e.kind() == HttpErrorKind::Status && (400..500).contains(&status) && status != 401 && status != 403
}

#[cfg(not(feature = "http"))]
fn refused_by_earlier_server(_: &mcp_jsonrpc::TransportError) -> bool {
    false
}

/// Probes the server with `server/discover` (the transport-specific rules of the
/// specification's backward compatibility): a `DiscoverResult` listing our revision is a
/// 2026-07-28 server; `UnsupportedProtocolVersion` listing it is one too (the probe is sent
/// once more); a 4xx without a 2026-07-28 error body (HTTP), any other JSON-RPC error, or
/// (on stdio) silence, is a server of an earlier revision. With `fallback` off, what is not a
/// 2026-07-28 server is an error.
pub(crate) async fn probe(
    peer: &Peer,
    meta: &RequestMeta,
    timeout: Option<Duration>,
    over_http: bool,
    fallback: bool,
) -> Result<Probe, ClientError> {
    let mut corrected = false;
    let outcome = |why: String, conclusive: bool| -> Result<Probe, ClientError> {
        if fallback { Ok(Probe::Legacy { why, conclusive }) } else { Err(ClientError::UnsupportedVersion(why)) }
    };
    let legacy = |why: String| outcome(why, false);
    let only_earlier = |why: String| outcome(why, true);
    loop {
        let mut params = JsonObject::new();
        meta.apply(&mut params, MODERN.as_str());
        let options = CallOptions { timeout, hints: meta.hints("server/discover", &params), ..Default::default() };
        let outcome = peer.request::<Json<mcp_types::DiscoverRequest>>(params, options).await;
        match outcome {
            Ok(value) => {
                let Some(discovered) = read_discover(value) else {
                    return legacy("the answer to server/discover is not a DiscoverResult".to_owned());
                };
                let versions = &discovered.result.supported_versions;
                if versions.iter().any(|v| v == MODERN.as_str()) {
                    return Ok(Probe::Modern(Box::new(discovered)));
                }
                return only_earlier(format!("the server supports {}", versions.join(", ")));
            }
            Err(CallError::Transport(e)) if refused_by_earlier_server(&e) => return legacy(e.to_string()),
            Err(CallError::Remote(e)) => {
                if let Some(versions) = supported_versions(&e) {
                    if versions.iter().any(|v| v == MODERN.as_str()) {
                        if corrected {
                            return Err(ClientError::Remote(e));
                        }
                        corrected = true;
                        continue;
                    }
                    let known: Vec<ProtocolVersion> =
                        versions.iter().filter_map(|v| ProtocolVersion::from_wire(v)).collect();
                    if !known.is_empty() && known.iter().all(|v| !v.is_stateless()) {
                        return only_earlier(format!("the server supports {}", versions.join(", ")));
                    }
                    return Err(ClientError::UnsupportedVersion(versions.join(", ")));
                }
                return legacy(format!("server/discover failed: {e}"));
            }
            Err(CallError::Timeout { elapsed, .. }) if !over_http => {
                return legacy(format!("no answer to server/discover within {elapsed:?}"));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The notification filter of a subscription, for the `_meta`-less params.
pub(crate) fn listen_params(filter: &mcp_types::SubscriptionFilter) -> JsonObject {
    let mut params = JsonObject::new();
    params.insert("notifications".to_owned(), encode(filter));
    params
}
