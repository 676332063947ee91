//! Serving a custom request (a method outside the protocol, whose handler the builder
//! registered in `def::custom`): its context like a tool's, its result for the request's
//! revision.
//!
//! Dispatch looks custom methods up only where a method is not the protocol's (the last arm of
//! `dispatch`'s `match`, the unknown notifications of a session): the protocol's methods pay
//! nothing for them. A custom request's future is boxed, out of the future every request has.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;
use mcp_jsonrpc::{ErrorObject, Reply};
use mcp_types::ProgressToken;

use super::call::Call;
use super::reply::respond;
use crate::def::custom::RequestFn;

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
