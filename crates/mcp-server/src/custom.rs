//! Custom methods: requests and notifications outside the protocol (a method of the user's own,
//! or an extension's), with handlers registered on the [`ServerBuilder`](crate::ServerBuilder)
//! typed ([`CustomRequest`], [`CustomNotification`]) or raw (method name and JSON params).
//!
//! Dispatch looks them up only where a method is not the protocol's (the last arm of
//! [`dispatch`](crate::dispatch)'s `match`, the unknown notifications of a session): the
//! protocol's methods pay nothing for them. A custom request's future is boxed, out of the
//! future every request has.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;
use hashbrown::HashMap;
use mcp_jsonrpc::{ErrorObject, Peer, Reply};
use mcp_types::ProgressToken;
use serde_json::value::RawValue;

use crate::context::Context;
use crate::dispatch::Call;
use crate::error::DefinitionError;
use crate::session::respond;

/// A custom request's handler, erased.
type RequestFn = mcp_jsonrpc::custom::RequestFn<Context>;
/// A custom notification's handler, erased.
type NotificationFn = mcp_jsonrpc::custom::NotificationFn;

/// The custom methods a server serves, by method name.
#[derive(Default, Clone)]
pub(crate) struct CustomMethods {
    requests: HashMap<String, RequestFn>,
    notifications: HashMap<String, NotificationFn>,
    /// A method registered twice or under a protocol name: refused by `build`.
    pub(crate) refused: Option<DefinitionError>,
}

impl CustomMethods {
    /// Registers the handler of a request of `method`.
    pub(crate) fn add_request(&mut self, method: String, handler: RequestFn) {
        if let Some(refused) = refusal(&method, self.requests.contains_key(&method), "custom request") {
            self.refused.get_or_insert(refused);
            return;
        }
        self.requests.insert(method, handler);
    }

    /// Registers the handler of a notification of `method`.
    pub(crate) fn add_notification(&mut self, method: String, handler: NotificationFn) {
        if let Some(refused) = refusal(&method, self.notifications.contains_key(&method), "custom notification") {
            self.refused.get_or_insert(refused);
            return;
        }
        self.notifications.insert(method, handler);
    }

    /// The handler of a custom request.
    pub(crate) fn request(&self, method: &str) -> Option<&RequestFn> {
        self.requests.get(method)
    }

    /// Hands a notification of a method outside the protocol to its handler; whether it had
    /// one. On the reader task, in order (a panic there is the engine's to catch and log).
    pub(crate) fn notify(&self, method: &str, params: Option<&RawValue>, peer: &Peer) -> bool {
        match self.notifications.get(method) {
            Some(handler) => {
                handler(params, peer);
                true
            }
            None => false,
        }
    }
}

/// Why a custom method cannot be registered under `method`, if it cannot: the protocol's
/// methods are not the user's to replace, and a method has one handler.
fn refusal(method: &str, taken: bool, kind: &'static str) -> Option<DefinitionError> {
    if mcp_types::is_reserved_method(method) {
        return Some(DefinitionError::ReservedMethod { method: method.to_owned() });
    }
    taken.then(|| DefinitionError::Duplicate { kind, name: method.to_owned() })
}

/// Serves a custom request with its handler: its context like a tool's (progress, logging,
/// cancellation, requests to the client), its result encoded for the request's revision
/// (decorated for the stateless one). The handler's error is the request's; a panic is an
/// internal error (-32603), and the connection lives on.
pub(crate) async fn serve(call: Call<'_>, handler: RequestFn) -> Reply {
    let ctx = call.context(progress_token(call.req));
    let method = call.req.method.as_str();
    let outcome = match std::panic::catch_unwind(AssertUnwindSafe(|| handler(call.req.params.as_deref(), ctx))) {
        Ok(answer) => AssertUnwindSafe(answer).catch_unwind().await,
        Err(panic) => Err(panic),
    };
    match outcome {
        Ok(Ok(result)) => respond(call.rctx, &result, call.era),
        Ok(Err(e)) => Err(e),
        Err(panic) => {
            let msg = mcp_jsonrpc::panic_message(panic.as_ref());
            tracing::warn!(%method, panic = %msg, "custom request handler panicked");
            Err(ErrorObject::internal_error(format!("`{method}` failed: {msg}")))
        }
    }
}

/// The progress token of a custom request's params (`_meta.progressToken`), if it has one,
/// read through the params' index as `tools/call` reads it.
fn progress_token(req: &mcp_jsonrpc::message::Request) -> Option<ProgressToken> {
    req.meta(mcp_types::meta::PROGRESS_TOKEN).and_then(|t| serde_json::from_str(t).ok())
}
