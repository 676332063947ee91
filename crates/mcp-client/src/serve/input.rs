//! The input a 2026-07-28 server asks for (the `inputRequests` of an `input_required` result,
//! or of a task waiting for input), answered by the builder's handlers.

use mcp_types::{CreateMessageRequestParams, ElicitRequestParams, ErrorObject, JsonObject, ListRootsResult};
use serde_json::Value;

use crate::error::{ClientError, Violation};
use crate::serve::handlers::{InputHandlers, apply_elicitation_defaults, check_elicitation_mode};
use crate::wire::stateless::encode;

/// One request of an `input_required` result, its params as the server wrote them.
#[derive(serde::Deserialize)]
struct InputRequest {
    #[serde(default)]
    method: String,
    #[serde(default)]
    params: Option<Box<serde_json::value::RawValue>>,
}

/// The most input requests one `input_required` result may carry: each may prompt the user
/// or run a model, and a server's result must not make that unbounded.
const MAX_INPUT_REQUESTS: usize = 16;

/// The answers to `inputRequests` (of an `input_required` result, or of a task waiting for
/// input), by key, from the builder's handlers, asked in the order the server wrote them. The
/// requests of a task (`task`) reach the handlers with the task's id in their params' `_meta`
/// (`io.modelcontextprotocol/related-task`), as a 2025-11-25 task's requests do.
pub(crate) async fn input_responses(
    method: &str,
    requests: Option<&serde_json::value::RawValue>,
    handlers: &InputHandlers,
    task: Option<&str>,
) -> Result<JsonObject, ClientError> {
    let malformed = |field| ClientError::protocol(method, Violation::MalformedInputRequired(field));
    let requests: indexmap::IndexMap<String, InputRequest> = match requests {
        None => indexmap::IndexMap::new(),
        Some(raw) => {
            serde_json::from_str::<Option<_>>(raw.get()).map_err(|_| malformed("inputRequests"))?.unwrap_or_default()
        }
    };
    if requests.len() > MAX_INPUT_REQUESTS {
        let violation = Violation::TooManyInputRequests { count: requests.len(), limit: MAX_INPUT_REQUESTS };
        return Err(ClientError::protocol(method, violation));
    }
    let mut responses = JsonObject::new();
    // Every request is asked even after one failed (the first failure is the result): a
    // handler that passes the requests on (a gateway) gathers them all in one round.
    let mut failed = None;
    for (key, request) in requests {
        let params = request.params.as_deref().map_or("{}", serde_json::value::RawValue::get);
        let related = task.and_then(|id| naming_task(params, id));
        let params = related.as_deref().unwrap_or(params);
        // An answer an earlier attempt of the call gave to the same request is given again.
        let asked = task.is_none().then(|| Asked::of(&key, &request.method, params)).flatten();
        if let Some(response) = asked.as_ref().and_then(Asked::answered_before) {
            responses.insert(key, response);
            continue;
        }
        match INPUT_KEY.scope(key.clone(), answer(&request.method, params, handlers)).await {
            Ok(response) => {
                if let Some(asked) = asked {
                    asked.remember(&response);
                }
                responses.insert(key, response);
            }
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(responses),
    }
}

tokio::task_local! {
    /// The key of the input request a handler is answering (see [`input_key`]).
    static INPUT_KEY: String;
    /// The answers given to the input requests of the call being sent (see [`remembering`]).
    static ANSWERED: std::cell::RefCell<Answered>;
}

/// The most answers a call keeps for its later attempts.
const MAX_ANSWERED: usize = 64;

/// The answers given to the input requests of one call (a 2026-07-28 `input_required` round),
/// kept across its attempts: a call a layer sends again ([`Retry`](crate::middleware::Retry))
/// does not ask the handlers again for input they answered in an earlier attempt.
#[derive(Default)]
pub(crate) struct Answered {
    /// The answers of earlier attempts this one has not given again yet.
    earlier: Vec<(Asked, Value)>,
    /// The answers of this attempt.
    now: Vec<(Asked, Value)>,
}

/// One input request as the server asked it: its key, method and params.
#[derive(PartialEq)]
struct Asked {
    key: String,
    method: String,
    params: Value,
}

impl Asked {
    /// The request, when a call keeps its answers (else `None`: nothing is read).
    fn of(key: &str, method: &str, params: &str) -> Option<Asked> {
        ANSWERED.try_with(|_| ()).ok()?;
        let params = serde_json::from_str(params).ok()?;
        Some(Asked { key: key.to_owned(), method: method.to_owned(), params })
    }

    /// The answer an earlier attempt gave to this same request (given once per attempt).
    fn answered_before(&self) -> Option<Value> {
        ANSWERED
            .try_with(|answered| {
                let mut answered = answered.borrow_mut();
                let at = answered.earlier.iter().position(|(asked, _)| asked == self)?;
                let (asked, response) = answered.earlier.swap_remove(at);
                answered.now.push((asked, response.clone()));
                Some(response)
            })
            .ok()
            .flatten()
    }

    /// Keeps the answer a handler gave, for the call's later attempts (within a bound).
    fn remember(self, response: &Value) {
        let _ = ANSWERED.try_with(|answered| {
            let mut answered = answered.borrow_mut();
            if answered.earlier.len() + answered.now.len() < MAX_ANSWERED {
                answered.now.push((self, response.clone()));
            }
        });
    }
}

/// Runs `call` keeping the answers of its input rounds across its attempts (see [`Answered`]).
pub(crate) async fn remembering<F: std::future::Future>(call: F) -> F::Output {
    ANSWERED.scope(std::cell::RefCell::default(), call).await
}

/// An attempt of the call begins: what the attempts before it answered may be given again.
pub(crate) fn new_attempt() {
    let _ = ANSWERED.try_with(|answered| {
        let mut answered = answered.borrow_mut();
        let now = std::mem::take(&mut answered.now);
        answered.earlier.extend(now);
    });
}

/// The key under which the server asked for the input a sampling, elicitation or roots
/// handler is answering now (the `inputRequests` key of a 2026-07-28 `input_required`
/// result, or of a task waiting for input); `None` for a request of the server (a session's
/// `elicitation/create`, say) or outside a handler. A handler that passes the request on to
/// a client of its own (a gateway) asks it under the same key.
pub fn input_key() -> Option<String> {
    INPUT_KEY.try_with(Clone::clone).ok()
}

/// `params` (an object) with `_meta` naming task `id`, unless they say which task already.
fn naming_task(params: &str, id: &str) -> Option<String> {
    let mut params: JsonObject = serde_json::from_str(params).ok()?;
    let meta = params.entry("_meta").or_insert_with(|| Value::Object(JsonObject::new()));
    let Value::Object(meta) = meta else { return None };
    if meta.contains_key(mcp_types::meta::RELATED_TASK) {
        return None;
    }
    meta.insert(mcp_types::meta::RELATED_TASK.to_owned(), serde_json::json!({ "taskId": id }));
    serde_json::to_string(&params).ok()
}

/// Runs the handler for one input request; a handler that panics refuses it (-32603), as it
/// would in a session, instead of unwinding into the caller.
async fn answer(method: &str, params: &str, handlers: &InputHandlers) -> Result<Value, ClientError> {
    use futures_util::FutureExt as _;
    match std::panic::AssertUnwindSafe(run_handler(method, params, handlers)).catch_unwind().await {
        Ok(answered) => answered,
        Err(_) => Err(ClientError::Input {
            method: method.to_owned(),
            error: ErrorObject::internal_error(format!("the {method} handler panicked")),
        }),
    }
}

async fn run_handler(method: &str, params: &str, handlers: &InputHandlers) -> Result<Value, ClientError> {
    let bad = |e: serde_json::Error| ClientError::decode(method, e);
    let refused = |error: ErrorObject| ClientError::Input { method: method.to_owned(), error };
    let missing = || ClientError::Input { method: method.to_owned(), error: ErrorObject::method_not_found(method) };
    match method {
        "elicitation/create" => {
            let h = handlers.elicitation.as_ref().ok_or_else(missing)?;
            let params: ElicitRequestParams = serde_json::from_str(params).map_err(bad)?;
            check_elicitation_mode(&params, handlers.elicitation_url).map_err(refused)?;
            let mut result = h.elicit(params.clone()).await.map_err(refused)?;
            if handlers.apply_defaults {
                apply_elicitation_defaults(&params, &mut result);
            }
            Ok(encode(&result))
        }
        "sampling/createMessage" => {
            let h = handlers.sampling.as_ref().ok_or_else(missing)?;
            let params: CreateMessageRequestParams = serde_json::from_str(params).map_err(bad)?;
            Ok(encode(&h.create_message(params).await.map_err(refused)?))
        }
        "roots/list" => {
            let h = handlers.roots.as_ref().ok_or_else(missing)?;
            Ok(encode(&ListRootsResult::new(h.roots().await.map_err(refused)?)))
        }
        _ => Err(missing()),
    }
}
